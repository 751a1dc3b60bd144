"""The command line's rough edges as a new user meets them (issue 13): output folders, where the rules come from,
failure labels and counts that agree, tables on stdout, --nets, bad project values, backups, --dump-config, --events,
and the benchmark on a machine without a GPU. Small boards only: the breakout example and generated ones."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import generated as g
from conftest import ROOT, SHARED, kicad_available
from test_cli import assert_one_line_error, run

BREAKOUT = ROOT / "examples" / "breakout-2layer" / "breakout.kicad_pcb"


def breakout(folder, project=True):
    """The breakout example (8 nets, routes in about a second) copied into folder, with its project or without."""
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / BREAKOUT.name
    shutil.copy(BREAKOUT, src)
    if project:
        shutil.copy(BREAKOUT.with_suffix(".kicad_pro"), src.with_suffix(".kicad_pro"))
    return src


def outside_board(folder):
    """Net A's third pad belongs to a part that lies beyond the board's right edge."""
    b = g.TestBoard("outside", 2, 20, 12)
    b.two_pad("R1", "1k", 5, 6, ["A", "B"])
    b.two_pad("R2", "1k", 12, 6, ["A", "B"])
    b.two_pad("R3", "1k", 30, 6, ["A", "C"])
    return g.write(b, folder, classes=g.default_class())


# 5. bad values in the .kicad_pro

@pytest.mark.parametrize("value", [0, -1, "wide"])
def test_a_bad_track_width_in_the_project_is_one_line(tmp_path, value):
    src = breakout(tmp_path)
    data = json.loads(src.with_suffix(".kicad_pro").read_text())
    data["net_settings"]["classes"][0]["track_width"] = value
    src.with_suffix(".kicad_pro").write_text(json.dumps(data))
    for args in (["route", src, "-o", tmp_path / "o.kicad_pcb"], ["info", src]):
        proc = run(*args)
        assert_one_line_error(proc, "breakout.kicad_pro")
        assert "track_width" in proc.stderr and json.dumps(value) in proc.stderr
    assert not (tmp_path / "o.kicad_pcb").exists()


def test_a_bad_board_minimum_in_the_project_is_one_line(tmp_path):
    src = breakout(tmp_path)
    data = json.loads(src.with_suffix(".kicad_pro").read_text())
    data["board"]["design_settings"]["rules"]["min_clearance"] = "tight"
    src.with_suffix(".kicad_pro").write_text(json.dumps(data))
    assert_one_line_error(run("info", src), "min_clearance is \"tight\"")
