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


# 3. failure labels and counts

def test_connections_cut_off_by_the_time_limit_say_so(tmp_path):
    src, out = breakout(tmp_path), tmp_path / "o.kicad_pcb"
    proc = run("route", src, "-o", out, "--json", "--backend", "cpu", "--time-limit", "0.001")
    assert proc.returncode == 1, proc.stderr
    info = json.loads(proc.stdout)
    assert info["failed"] and all(why.startswith("time limit") for why in info["failed"].values()), info["failed"]
    assert 0 <= info["connections_routed"] < info["connections"] and 0 <= info["nets_routed"] < info["nets"]
    check = json.loads(run("check", out, "--json").stdout)
    assert sum(check["unrouted"].values()) == info["unrouted"] == info["connections"] - info["connections_routed"]


def test_a_pad_off_the_board_is_said_to_be_outside_the_outline(tmp_path):
    out = tmp_path / "o.kicad_pcb"
    proc = run("route", outside_board(tmp_path), "-o", out, "--json", "--backend", "cpu")
    assert proc.returncode == 1, proc.stderr
    info = json.loads(proc.stdout)
    assert info["failed"] == {"A": "pad R3.1 lies outside the board outline"}
    assert sum(json.loads(run("check", out, "--json").stdout)["unrouted"].values()) == info["unrouted"] == 1


def test_live_progress_ends_with_the_summarys_counts(tmp_path):
    proc = run("route", outside_board(tmp_path), "-o", tmp_path / "o.kicad_pcb", "--backend", "cpu")
    assert proc.returncode == 1, proc.stderr
    live = re.search(r"(\d+) of (\d+) nets, (\d+) of (\d+) connections routed", proc.stderr)
    nets = re.search(r"nets routed\s*│\s*(\d+) / (\d+)", proc.stderr)
    connections = re.search(r"connections routed\s*│\s*(\d+) / (\d+)", proc.stderr)
    assert live and nets and connections, proc.stderr
    assert live.groups() == nets.groups() + connections.groups() == ("1", "2", "2", "3")


def test_too_many_closing_parentheses_give_no_negative_count(tmp_path):
    bad = tmp_path / "bad.kicad_pcb"
    bad.write_text("(kicad_pcb (version 20241229) (generator pcbnew)))))\n")
    proc = run("route", bad, "-o", tmp_path / "o.kicad_pcb")
    assert_one_line_error(proc, "3 more ')' than '('")
    assert not re.search(r"-\d", proc.stderr.replace(str(tmp_path), ""))


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
