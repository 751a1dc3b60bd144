"""Interruptions: Ctrl-C (SIGINT) and SIGTERM stop routing within a second and write nothing, unless --save-partial
asked for the result so far; --time-limit stops at the limit and writes the best result. The input is never
touched, and no temporary file is left behind."""
import json
import signal
import subprocess
import sys
import time

import pytest

from autorouter.board import load_board
from conftest import BOARDS, assert_only_routing_added, needs_shared

LARGE = "k9_orthoroute_backplane"          # 512 nets on 18 layers: minutes of routing on the CPU


def start(out, *extra):
    return subprocess.Popen([sys.executable, "-m", "autorouter", "route", str(BOARDS / f"{LARGE}.kicad_pcb"),
                             "-o", str(out), "-q", "--backend", "cpu", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def interrupt(proc, sig, after: float) -> tuple[float, str]:
    """Send sig once routing is under way; return how long the router took to exit, and what it said (stderr, and
    stdout where --events puts the summary)."""
    time.sleep(after)
    assert proc.poll() is None, "the router finished before it could be interrupted"
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return time.monotonic() - sent, err + (out or "")


@needs_shared
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_within_a_second_and_writes_nothing(sig, tmp_path):
    before = (BOARDS / f"{LARGE}.kicad_pcb").read_bytes()
    out = tmp_path / "routed.kicad_pcb"
    took, err = interrupt(start(out), sig, after=5)
    assert took < 1.5, f"took {took:.2f} s to stop"
    assert "Traceback" not in err and "nothing written" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert (BOARDS / f"{LARGE}.kicad_pcb").read_bytes() == before


def wait_for_routing(proc) -> None:
    """Read the router's --events until negotiation starts (how long that takes depends on the machine's load)."""
    for line in proc.stdout:
        if json.loads(line).get("stage") == "tasks":
            return
    raise AssertionError("the router stopped before routing")


@needs_shared
def test_save_partial_writes_the_routes_so_far(tmp_path):
    out = tmp_path / "routed.kicad_pcb"
    proc = start(out, "--save-partial", "--events")
    wait_for_routing(proc)
    took, err = interrupt(proc, signal.SIGINT, after=2)
    assert took < 1.5 and proc.returncode == 1, err[-2000:]
    assert "Traceback" not in err and "partial result written" in err
    assert assert_only_routing_added((BOARDS / f"{LARGE}.kicad_pcb").read_text(), out.read_text()) > 0
    load_board(out)
    # the board, and its project file (the rules it was routed to); no temporary file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["routed.kicad_pcb", "routed.kicad_pro"]


@needs_shared
@pytest.mark.parametrize("limit", [1, 12])
def test_time_limit_writes_the_best_result(limit, tmp_path):
    out = tmp_path / "routed.kicad_pcb"
    t0 = time.monotonic()
    proc = start(out, "--time-limit", str(limit))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in err, err[-2000:]
    assert time.monotonic() - t0 < limit + 15
    assert "stopped early: time limit" in err
    added = assert_only_routing_added((BOARDS / f"{LARGE}.kicad_pcb").read_text(), out.read_text())
    assert added > 0 or limit == 1                  # one second may end before the first route
    load_board(out)
