"""KiCad's own verdict beside ours (`check --kicad`, `route --kicad-drc`): the same numbers as the judge's
`drc BOARD --refill`, a one-line note where KiCad is missing or too slow, and the user's files left as they were."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import generated
from autorouter.check import kicad
from conftest import DEMOS, JUDGE, judge, needs_kicad

needs_judge = pytest.mark.skipif(not (JUDGE / "kicad_judge.py").exists(),
                                 reason="../shared/judge is not present: nothing to compare KiCad's numbers with")
KICAD_KEYS = ("unconnected", "violations", "violations_by_type")


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "autorouter", *map(str, args)], capture_output=True, text=True,
                          timeout=600, env=env)


def without_kicad_cli() -> dict:
    """Our environment with a PATH that holds our Python and nothing else, so kicad-cli is not found."""
    return {**os.environ, "PATH": str(Path(sys.executable).parent)}


def folder_state(folder: Path) -> dict:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


@needs_kicad
@needs_judge
@pytest.mark.kicad
@pytest.mark.parametrize("name, stripped", [
    ("multichannel_mixer", False),     # as shipped: KiCad finds clearance errors once its zones are refilled
    ("multichannel_mixer", True),      # tracks gone, zones kept: the refill joins pads (173 unconnected, not 177)
    ("pic_programmer", True),
])
def test_check_kicad_equals_the_judge(name, stripped, tmp_path):
    j = judge()
    _, board, _ = j.resolve(name, str(tmp_path))
    if stripped:
        j.strip(board, str(tmp_path / "board.kicad_pcb"), keep_zones=True)
        board = tmp_path / "board.kicad_pcb"
    proc = run("check", board, "--kicad", "--json")
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    ours = json.loads(proc.stdout)["kicad"]
    assert "note" not in ours, ours
    expected = j.drc(str(board), refill=True)
    assert {k: ours[k] for k in KICAD_KEYS} == {k: expected[k] for k in KICAD_KEYS}


@needs_kicad
@pytest.mark.kicad
def test_check_kicad_table_beside_ours(tmp_path):
    board = generated.write(generated.thermal_zone(), tmp_path, generated.default_class())
    proc = run("check", board, "--kicad")
    assert "ours beside KiCad's DRC" in proc.stdout and "unconnected" in proc.stdout, proc.stdout   # tables: stdout
    assert "note:" not in proc.stdout + proc.stderr


@needs_kicad
@pytest.mark.kicad
def test_kicad_drc_leaves_the_output_and_its_folder_as_they_were(tmp_path):
    board = generated.write(generated.thermal_zone(), tmp_path, generated.default_class())
    plain, checked = tmp_path / "plain", tmp_path / "checked"
    plain.mkdir()
    checked.mkdir()
    assert run("route", board, "-o", plain / "out.kicad_pcb", "--backend", "cpu", "-q").returncode == 0
    proc = run("route", board, "-o", checked / "out.kicad_pcb", "--backend", "cpu", "--json", "--kicad-drc")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["kicad"]["unconnected"] == info["unconnected"] == 0, info["kicad"]
    assert (checked / "out.kicad_pcb").read_bytes() == (plain / "out.kicad_pcb").read_bytes()
    before = folder_state(checked)                      # the zone is refilled on a copy, never in the output
    proc = run("check", checked / "out.kicad_pcb", "--kicad", "--json")
    assert "note" not in json.loads(proc.stdout)["kicad"]
    assert folder_state(checked) == before


def test_note_when_kicad_cli_is_missing(tmp_path):
    board = generated.write(generated.thermal_zone(), tmp_path, generated.default_class())
    env = without_kicad_cli()
    plain = run("check", board)
    proc = run("check", board, "--kicad", env=env)
    assert proc.returncode == plain.returncode and "Traceback" not in proc.stderr
    notes = [line for line in proc.stdout.splitlines() if "kicad-cli" in line]      # check's report is on stdout
    assert notes == ["note: KiCad's DRC not run: kicad-cli is not installed (or not on PATH)"], proc.stdout
    proc = run("check", board, "--kicad", "--json", env=env)
    assert json.loads(proc.stdout)["kicad"] == {"note": notes[0][len("note: "):]}
    out = tmp_path / "out.kicad_pcb"
    proc = run("route", board, "-o", out, "--backend", "cpu", "--kicad-drc", env=env)
    assert proc.returncode == 0 and out.exists(), proc.stderr
    assert notes[0] in proc.stderr.splitlines()


@needs_kicad
@pytest.mark.kicad
def test_a_timeout_is_a_note(tmp_path):
    board = DEMOS / "pic_programmer" / "pic_programmer.kicad_pcb"
    summary = kicad.kicad_summary(board, timeout=0.2)
    assert summary == {"note": "KiCad's DRC not run: KiCad took longer than 0.2 s (stopped while refilling the zones)"}


@needs_kicad
@pytest.mark.kicad
def test_note_when_no_python_has_pcbnew(monkeypatch):
    monkeypatch.setattr(kicad, "pcbnew_python", lambda kicad_cli: None)
    summary = kicad.kicad_summary(DEMOS / "pic_programmer" / "pic_programmer.kicad_pcb")
    assert summary == {"note": "KiCad's DRC not run: no Python with KiCad's pcbnew module was found "
                               "(needed to refill the zones)"}
