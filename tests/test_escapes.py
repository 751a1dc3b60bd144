"""Escapes: the pins of a fine-pitch row led straight out before routing (config escape_length)."""
import json
import math

from shapely.geometry import LineString

import generated as g
from autorouter.board import load_board
from autorouter.board.connectivity import pad_groups
from autorouter.board.model import Track, Via
from autorouter.board.rules import load_rules
from autorouter.config import RouterConfig
from autorouter.escapes import escaped, trimmed
from conftest import JUDGE, judge, kicad_available
from test_failure_classes import run_route

QFN = dict(classes=g.default_class(0.2, 0.2), minimums={"min_track_width": 0.1, "min_clearance": 0.1})


def qfn_board(tmp_path):
    path = g.write(g.qfn(), tmp_path, **QFN)
    board = load_board(path)
    return path, board, load_rules(board, RouterConfig())


def test_each_pin_of_the_row_is_led_straight_out_as_narrow_as_the_row_needs(tmp_path):
    _, board, rules = qfn_board(tmp_path)
    routing, escapes = escaped(board, rules, 0.5)
    assert len(escapes) == 24
    for e in escapes:
        pad = next(p for p in board.pads if p.footprint == "U1" and (p.x, p.y) == e.start)
        dx, dy = e.end[0] - e.start[0], e.end[1] - e.start[1]
        assert dx == 0 or dy == 0                                # straight out, away from the part's centre
        assert (dx * (pad.x - 12) + dy * (pad.y - 12)) > 0
        assert math.isclose(math.hypot(dx, dy), 0.35 + 0.5)      # the pad's half length, then 0.5 mm
        assert e.width <= 0.4 - 0.2                              # the row's pitch less the clearance
    # each escape's end is a pad of the pin's net for routing, joined to its pin by the escape
    assert len(routing.pads) == len(board.pads) + 24
    groups = pad_groups(routing)
    assert {net: len(g) for net, g in groups.items()} == {net: len(g) for net, g in pad_groups(board).items()}
    assert all(sorted(len(group) for group in g) == [1, 2] for g in groups.values())


def test_what_routing_does_not_reach_of_an_escape_is_cut_off():
    escape = Track((0.0, 0.0), (0.0, 1.5), 0.2, "F.Cu", 1)
    reaching = Track((0.0, 1.0), (2.0, 1.0), 0.2, "F.Cu", 1)            # crosses the axis at 1.0
    assert trimmed([escape], [reaching], []) == [Track((0.0, 0.0), (0.0, 1.0), 0.2, "F.Cu", 1)]
    # a track that ends inside the escape beside its axis is joined to the axis across it
    beside = Track((0.09, 1.2), (2.0, 1.2), 0.1, "F.Cu", 1)
    kept = trimmed([escape], [beside], [])
    assert kept[0].end == (0.0, 1.2) and kept[1] == Track((0.0, 1.2), (0.09, 1.2), 0.1, "F.Cu", 1)
    # a via on the axis; copper of other nets or layers, or none at all, keeps nothing
    assert trimmed([escape], [], [Via(0.0, 1.4, 0.6, 0.3, ("F.Cu", "B.Cu"), 1)])[0].end == (0.0, 1.4)
    assert trimmed([escape], [Track((0.0, 1.0), (2.0, 1.0), 0.2, "F.Cu", 2),
                              Track((0.0, 1.0), (2.0, 1.0), 0.2, "B.Cu", 1)], []) == []


def test_a_qfn_routed_through_its_escapes_is_complete_and_clean(tmp_path):
    src, board, _ = qfn_board(tmp_path)
    config = tmp_path / "escapes.yaml"
    config.write_text("escape_length: 0.5\n")
    out = tmp_path / "routed.kicad_pcb"
    proc = run_route(src, out, "--config", str(config))
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = json.loads(proc.stdout)
    assert info["connections_routed"] == info["connections"] == 24 and info["drc_violations"] == 0, info
    routed = load_board(out)
    pins = [p for p in routed.pads if p.footprint == "U1"]
    for pin in pins:         # every pin leaves by its escape, whole: the route joins it at its end
        assert any(t.start == (pin.x, pin.y) and math.isclose(LineString([t.start, t.end]).length, 0.85)
                   for t in routed.tracks), pin.name
    if kicad_available() and JUDGE.is_dir():
        verdict = judge().drc(str(out), refill=True)
        assert verdict["unconnected"] == 0 and verdict["violations"] == 0, verdict
