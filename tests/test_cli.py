"""The command line: exit codes, one-line errors, nothing written on bad input, and a real route."""
import json
import subprocess
import sys

import pytest

from conftest import BOARDS, needs_shared


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autorouter", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def assert_one_line_error(proc, words):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and words in lines[0], proc.stderr


def test_version():
    proc = run("--version")
    assert proc.returncode == 0 and "autorouter" in proc.stdout


def test_missing_input(tmp_path):
    assert_one_line_error(run("route", tmp_path / "none.kicad_pcb", "-o", tmp_path / "o.kicad_pcb"), "no such file")
    assert not (tmp_path / "o.kicad_pcb").exists()


@needs_shared
def test_output_equal_to_input_needs_in_place(tmp_path):
    board = BOARDS / "k10_tastexx.kicad_pcb"
    assert_one_line_error(run("route", board, "-o", board), "--in-place")


@needs_shared
def test_missing_output_directory(tmp_path):
    proc = run("route", BOARDS / "k10_tastexx.kicad_pcb", "-o", tmp_path / "no" / "o.kicad_pcb")
    assert_one_line_error(proc, "does not exist")


@needs_shared
def test_bad_config_value(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("batch_size: -3\n")
    proc = run("route", BOARDS / "k10_tastexx.kicad_pcb", "-o", tmp_path / "o.kicad_pcb", "--config", cfg)
    assert_one_line_error(proc, "batch_size")


def test_truncated_board(tmp_path):
    bad = tmp_path / "bad.kicad_pcb"
    bad.write_text("(kicad_pcb (version 20241229) (generator pcbnew) (layers")
    assert_one_line_error(run("route", bad, "-o", tmp_path / "o.kicad_pcb"), "truncated")
    assert not (tmp_path / "o.kicad_pcb").exists()


@needs_shared
def test_routes_kicad10_board_and_reports_json(tmp_path):
    out = tmp_path / "routed.kicad_pcb"
    src = BOARDS / "k10_tastexx.kicad_pcb"
    before = src.read_bytes()
    proc = run("route", src, "-o", out, "--json", "--backend", "cpu")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["connections_routed"] == info["connections"] > 0 and info["drc_violations"] == 0
    assert src.read_bytes() == before                           # the input is never touched
    text = out.read_text()
    assert text.count("(segment") == info["tracks"] and text.count("(via") == info["vias"]
    check = run("check", out, "--json")
    assert check.returncode == 0 and json.loads(check.stdout) == {"violations": [], "unrouted": {}}


@needs_shared
def test_in_place_keeps_a_backup(tmp_path):
    board = tmp_path / "b.kicad_pcb"
    original = (BOARDS / "k10_tastexx.kicad_pcb").read_text()
    board.write_text(original)
    proc = run("route", board, "--in-place", "-q")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "b.kicad_pcb.bak").read_text() == original and "(segment" in board.read_text()


@needs_shared
def test_gpu_backend_without_a_gpu_is_a_usage_error(tmp_path):
    from autorouter.search.gpu import gpu_available
    if gpu_available()[0]:
        pytest.skip("this machine has a GPU")
    proc = run("route", BOARDS / "k10_tastexx.kicad_pcb", "-o", tmp_path / "o.kicad_pcb", "--backend", "gpu")
    assert_one_line_error(proc, "--backend gpu")
    assert not (tmp_path / "o.kicad_pcb").exists()


@needs_shared
def test_crlf_board_keeps_its_line_ends(tmp_path):
    """k7_tillitis_tk1 ends its lines with CRLF: the output keeps every one of them, and its new items use them. Its
    tracks and vias (one line each) are taken out first: with them, its fills already join GND and +3V3."""
    from conftest import assert_only_routing_added
    src, out = tmp_path / "stripped.kicad_pcb", tmp_path / "routed.kicad_pcb"
    lines = (BOARDS / "k7_tillitis_tk1.kicad_pcb").read_bytes().decode().split("\r\n")
    src.write_bytes("\r\n".join(l for l in lines if not l.startswith(("  (segment ", "  (via "))).encode())
    proc = run("route", src, "-o", out, "-q", "--backend", "cpu", "--nets", "GND,+3V3", "--time-limit", "60")
    assert proc.returncode in (0, 1), proc.stderr
    before, after = src.read_bytes().decode(), out.read_bytes().decode()
    assert "\r\n" in before and after.count("\n") == after.count("\r\n")
    assert assert_only_routing_added(before, after) > 0


def test_the_progress_bar_names_the_attempt_under_way():
    # a retry starts negotiation over: the bar says so, rather than iteration counts that seem to jump back
    from io import StringIO

    from rich.console import Console

    from autorouter.report import Progress
    console = Console(file=StringIO(), width=160, force_terminal=True)
    with Progress(console, 100, quiet=False) as progress:
        progress.update({"stage": "iteration", "iteration": 40, "nets": 9, "nets_total": 10, "conflicted": 1,
                         "shared": 3})
        progress.update({"stage": "retry", "attempt": 2, "missing": 1})
        task = progress.bar.tasks[0]
        assert task.description == "PathFinder, attempt 2" and task.completed == 0
        assert "1 joins missing" in task.fields["status"]
