"""The classes of failure that real boards showed, each on a small generated board: routed completely, clean under
our DRC and, where KiCad is installed, under KiCad's (zones refilled first, as the user presses B)."""
import json
import math
import subprocess
import sys
from functools import partial

import pytest
from shapely.geometry import box

import generated as g
from autorouter.board import load_board
from conftest import JUDGE, judge, kicad_available

BOARDS = {
    "keepout with a hole": (g.keepout_frame, {}),
    "0.4 mm QFN escape": (g.qfn, dict(classes=g.default_class(0.2, 0.2),
                                      minimums={"min_track_width": 0.1, "min_clearance": 0.1})),
    # a track between two pins of a 0.4 mm row is exactly the clearance from each: legal for KiCad, and our only way in
    "0.4 mm QFN at exactly the clearance": (g.qfn, dict(classes=g.default_class(0.2, 0.2),
                                                       minimums={"min_track_width": 0.2, "min_clearance": 0.2})),
    # 0.2 mm from a track to the next pin: less than the class's 0.22, but the footprint's own 0.15 overrides it
    "0.4 mm QFN with its own clearance": (partial(g.qfn, pad_width=0.25, own_clearance=0.15),
                                          dict(classes=g.default_class(0.15, 0.22),
                                               minimums={"min_track_width": 0.15, "min_clearance": 0.1})),
    "0.8 mm BGA escape": (g.bga, dict(classes=g.default_class(0.15, 0.15, 0.6, 0.3),
                                      minimums={"min_track_width": 0.1, "min_via_diameter": 0.4,
                                                "min_through_hole_diameter": 0.2, "min_via_annular_width": 0.05})),
    "solder-mask opening": (g.mask_opening, {}),
    # the tie's bar (copper of no net) covers both of its pads: a wall to every net, until the tied nets may touch it
    "net tie": (g.net_tie, {}),
    "thermal spokes": (g.thermal_zone, {}),
    "ground plane": (g.ground_plane, {}),
    "congested through-hole channel": (g.channel, {}),
}


def run_route(src, out, *options) -> subprocess.CompletedProcess:
    """`autorouter route SRC -o OUT --json` on the CPU engine."""
    return subprocess.run([sys.executable, "-m", "autorouter", "route", str(src), "-o", str(out), "--json",
                           "--backend", "cpu", *options], capture_output=True, text=True, timeout=600)


def route(name, tmp_path, *options):
    builder, project = BOARDS[name]
    src = g.write(builder(), tmp_path, **project)
    out = tmp_path / "routed.kicad_pcb"
    proc = run_route(src, out, *options)
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = json.loads(proc.stdout)
    assert info["connections_routed"] == info["connections"] > 0 and info["drc_violations"] == 0, info
    return out, info


def kicad_verdict(path):
    return judge().drc(str(path), refill=True)


@pytest.mark.parametrize("name", list(BOARDS))
def test_routed_completely_and_clean(name, tmp_path):
    out, _ = route(name, tmp_path)
    if kicad_available() and JUDGE.is_dir():
        verdict = kicad_verdict(out)
        assert verdict["unconnected"] == 0 and verdict["violations"] == 0, verdict


def test_keepout_hole_holds_every_track(tmp_path):
    out, _ = route("keepout with a hole", tmp_path)
    hole = box(7, 5, 23, 15)
    assert all(hole.contains(t.body()) for t in load_board(out).tracks)


def test_fine_pitch_pads_are_reached_by_necked_tracks(tmp_path):
    out, info = route("0.4 mm QFN escape", tmp_path)
    widths = {t.width for t in load_board(out).tracks}
    assert max(widths) <= 0.2 and info["connections"] == 24


def test_bga_inner_balls_leave_by_small_vias(tmp_path):
    out, _ = route("0.8 mm BGA escape", tmp_path)
    vias = load_board(out).vias
    assert vias and {v.diameter for v in vias} == {0.4}


def test_zone_joins_its_pads_and_keeps_their_spokes(tmp_path):
    out, info = route("thermal spokes", tmp_path)
    board = load_board(out)
    gnd = next(n.number for n in board.nets if n.name == "GND")
    assert info["connections"] == 2                          # S1 and S2: the zone joins the four GND pads
    assert not [t for t in board.tracks if t.net == gnd]


def test_pads_join_a_plane_by_a_via_beside_them(tmp_path):
    config = tmp_path / "join.yaml"
    config.write_text("join_fills: yes\n")
    out, info = route("ground plane", tmp_path, "--config", str(config))
    board = load_board(out)
    gnd = next(n.number for n in board.nets if n.name == "GND")
    gnd_tracks = [t for t in board.tracks if t.net == gnd]
    assert info["connections"] == 6                          # three GND pads to the plane, VCC to four pads
    assert len([v for v in board.vias if v.net == gnd]) == 3
    assert sum(math.dist(t.start, t.end) for t in gnd_tracks) < 3 * 2.0   # a short stub each, not tracks between


def test_a_way_narrower_than_the_lattice_pitch_is_found_in_exact_geometry(tmp_path):
    # the slot out of TP1's pocket lets a track's centre pass only between y 10.275 and 10.725, where the lattice
    # (a 1 mm pitch, lines at y 10 and 11) has no line: the detail join finds it on its fine grid
    src = g.write(g.slot(gap=0.7, at=10.5, outside=14), tmp_path)
    out = tmp_path / "routed.kicad_pcb"
    info = json.loads(run_route(src, out, "--pitch", "1.0").stdout)
    assert (info["connections"], info["connections_routed"], info["drc_violations"]) == (1, 1, 0), info
    tracks = load_board(out).tracks
    slot = box(9, 10.5 - 0.35, 10, 10.5 + 0.35)
    assert any(t.body().intersects(slot) for t in tracks)
    assert all(abs(math.remainder(math.degrees(math.atan2(t.end[1] - t.start[1], t.end[0] - t.start[0])), 45)) < 1e-6
               for t in tracks)                           # octilinear
    if kicad_available() and JUDGE.is_dir():
        verdict = kicad_verdict(out)
        assert verdict["unconnected"] == 0 and verdict["violations"] == 0, verdict


def test_pins_that_cannot_reach_the_tree_still_join_each_other(tmp_path):
    # the pads of net A on the far side of the keep-out find no path to the tree: they are joined to each other
    src = g.write(g.split_halves(), tmp_path)
    out = tmp_path / "routed.kicad_pcb"
    info = json.loads(run_route(src, out).stdout)
    assert (info["connections"], info["connections_routed"], info["drc_violations"]) == (3, 2, 0), info
    assert list(info["failed"]) == ["A"] and "no path to pad" in info["failed"]["A"]
    if kicad_available() and JUDGE.is_dir():
        verdict = kicad_verdict(out)
        assert verdict["unconnected"] == 1 and verdict["violations"] == 0, verdict


@pytest.mark.parametrize("wall, named", [("pads", "the copper of B"), ("keepout", "a keep-out")])
def test_a_pad_with_no_way_in_is_reported_with_what_walls_it_in(wall, named, tmp_path):
    src = g.write(g.walled_pad(wall), tmp_path)
    info = json.loads(run_route(src, tmp_path / "out.kicad_pcb").stdout)
    assert (info["connections"], info["connections_routed"]) == (2, 1), info
    reason = info["failed"]["A"]
    assert reason.startswith("pad TP1.1 has no legal way in (blocked pad: ") and named in reason, reason


def test_a_pad_under_a_board_drawing_of_no_net_is_reached_through_it(tmp_path):
    # an edge connector's ground pad under a drawn polygon: the polygon is the pad's net's (as KiCad loads it), not
    # a wall; the pad is joined and B's tracks keep their clearance from it
    src = g.write(g.drawn_copper(), tmp_path)
    out = tmp_path / "routed.kicad_pcb"
    info = json.loads(run_route(src, out).stdout)
    assert info["connections_routed"] == info["connections"] == 2 and info["drc_violations"] == 0, info
    if kicad_available() and JUDGE.is_dir():
        verdict = kicad_verdict(out)
        assert verdict["unconnected"] == 0 and verdict["violations"] == 0, verdict


def test_a_pad_fenced_in_by_another_nets_tracks_is_reported_with_them(tmp_path):
    src = g.write(g.fenced_pads(), tmp_path)
    info = json.loads(run_route(src, tmp_path / "out.kicad_pcb").stdout)
    assert info["connections_routed"] == 0, info
    assert info["failed"]["A"].startswith("no path to pad TP") and info["failed"]["A"].endswith(" (walled in by B)")


def test_a_pad_parted_by_a_keepout_is_not_said_to_be_walled_in_by_a_net(tmp_path):
    # the far pads of the split keyboard reach across half the board: nothing closes them in nearby
    src = g.write(g.split_halves(), tmp_path)
    assert "walled in" not in json.loads(run_route(src, tmp_path / "out.kicad_pcb").stdout)["failed"]["A"]
