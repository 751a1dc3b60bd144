"""The example boards: examples/make_examples.py writes exactly the committed files, and each example routes
completely, clean under our DRC and, where KiCad is installed, under KiCad's; `render` and `--preview` draw it."""
import importlib.util
import json
import shutil
import subprocess
import sys

import pytest

from conftest import JUDGE, ROOT, kicad_available

EXAMPLES = ROOT / "examples"
BOARDS = [EXAMPLES / "breakout-2layer" / "breakout.kicad_pcb", EXAMPLES / "qfp-4layer" / "qfp.kicad_pcb"]


def make_examples():
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_writes_the_committed_examples(tmp_path):
    for path in make_examples().write(tmp_path):
        committed = EXAMPLES / path.relative_to(tmp_path)
        assert path.read_text() == committed.read_text(), f"{committed}: run examples/make_examples.py again"
        assert path.with_suffix(".kicad_pro").read_text() == committed.with_suffix(".kicad_pro").read_text()


@pytest.mark.parametrize("board", BOARDS, ids=lambda p: p.parent.name)
def test_example_routes_completely_and_cleanly(board, tmp_path):
    src = tmp_path / board.name
    shutil.copy(board, src)
    shutil.copy(board.with_suffix(".kicad_pro"), src.with_suffix(".kicad_pro"))
    out, picture = tmp_path / "routed.kicad_pcb", tmp_path / "routed.png"
    proc = subprocess.run([sys.executable, "-m", "autorouter", "route", str(src), "-o", str(out), "--json",
                           "--backend", "cpu", "--preview", str(picture)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = json.loads(proc.stdout)
    assert info["connections_routed"] == info["connections"] > 0 and info["drc_violations"] == 0
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and info["preview"] == str(picture)
    if kicad_available() and JUDGE.is_dir():          # KiCad's verdict too, where the judge is at hand
        from conftest import judge
        j = judge()
        j.copy_project(str(src), str(out))
        verdict = j.drc(str(out))
        assert verdict["unconnected"] == 0 and verdict["violations"] == 0, verdict
