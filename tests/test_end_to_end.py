"""End to end, judged by KiCad 9 itself: strip a demo board, route it with the CLI, run KiCad's DRC and connectivity.

The assertions are KiCad's verdict: 0 missing connections, no DRC error that routing added, and the routed file equal
to the input but for the added tracks and vias.
"""
import subprocess
import sys

import pytest

from autorouter.board import load_board
from conftest import assert_only_routing_added, judge, needs_judge, needs_kicad, needs_shared, shared_boards


def route(src, out, *extra):
    return subprocess.run([sys.executable, "-m", "autorouter", "route", str(src), "-o", str(out), "-q", *extra],
                          capture_output=True, text=True, timeout=1800)


@needs_kicad
@needs_judge
@pytest.mark.kicad
@pytest.mark.parametrize("name, chamfer", [("ecc83-pp", 0.5), ("sonde_xilinx", 0.5), ("complex_hierarchy", 0.5),
                                           ("sonde_xilinx", 0)])
def test_demo_board_is_routed_clean_by_kicads_verdict(name, chamfer, tmp_path):
    """chamfer: corners cut at 45 degrees (config.chamfer) must keep every clearance too."""
    j = judge()
    _, src, _ = j.resolve(name, str(tmp_path))
    unrouted, routed = tmp_path / "unrouted.kicad_pcb", tmp_path / "routed.kicad_pcb"
    j.strip(src, str(unrouted))
    before = j.drc(str(unrouted))
    assert before["unconnected"] > 0
    j.copy_project(str(unrouted), str(routed))         # KiCad checks the routed board with the project's rules
    config = tmp_path / "config.yaml"
    config.write_text(f"chamfer: {chamfer}\n")
    proc = route(unrouted, routed, "--backend", "cpu", "--config", str(config))
    assert proc.returncode == 0, proc.stderr[-2000:]
    after = j.drc(str(routed))
    added = {k: n - before["violations_by_type"].get(k, 0) for k, n in after["violations_by_type"].items()}
    assert after["unconnected"] == 0
    assert not {k: n for k, n in added.items() if n > 0}
    assert j.same_but_copper(str(unrouted), str(routed))
    assert assert_only_routing_added(unrouted.read_text(), routed.read_text()) > 0


@needs_kicad
@needs_judge
@pytest.mark.kicad
@pytest.mark.slow
@pytest.mark.parametrize("name", ["pic_programmer", "multichannel_mixer", "kit-dev-coldfire-xilinx_5213"])
def test_other_demo_boards_keep_every_byte(name, tmp_path):
    """The judge's other demo boards (the judge's bench scores them): the output is the input plus tracks and vias,
    byte for byte, and KiCad loads it. A minute at most each: kit-dev's partial result counts too."""
    j = judge()
    _, src, _ = j.resolve(name, str(tmp_path))
    unrouted, routed = tmp_path / "unrouted.kicad_pcb", tmp_path / "routed.kicad_pcb"
    j.strip(src, str(unrouted))
    proc = route(unrouted, routed, "--backend", "cpu", "--time-limit", "60")
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert assert_only_routing_added(unrouted.read_text(), routed.read_text()) > 0
    j.unconnected(str(routed))                     # pcbnew loads it (raises otherwise)


@needs_kicad
@needs_shared
@needs_judge
@pytest.mark.kicad
@pytest.mark.slow
@pytest.mark.parametrize("path", shared_boards(), ids=lambda p: p.stem)
def test_every_shared_board_routes_to_a_file_kicad_opens(path, tmp_path):
    j = judge()
    out = tmp_path / "routed.kicad_pcb"
    proc = route(path, out, "--backend", "cpu", "--time-limit", "60")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert j.same_but_copper(str(path), str(out))
    assert_only_routing_added(path.read_text(), out.read_text())
    try:
        j.unconnected(str(path))
    except RuntimeError:                           # KiCad 9 cannot open this input (a KiCad 10 file) either:
        load_board(out)                            # our reader, at least, must read what we wrote
        return
    j.unconnected(str(out))                        # pcbnew loads it (raises otherwise)
