"""Thermal reliefs as KiCad 9 judges them: our DRC finds the spokes that new tracks starve, and the router's stub
feeds them where a free direction leads into the fill; KiCad agrees on both boards."""
from dataclasses import replace

import pytest
import shapely

import generated as g
from autorouter.board import load_board
from autorouter.board.connectivity import pad_groups
from autorouter.board.model import Track, Via
from autorouter.board.rules import load_rules
from autorouter.check import check
from autorouter.config import RouterConfig
from autorouter.writeback.writer import with_items
from autorouter.zones import (feed_starved, predict, relief_fill, relief_room, reliefs, spoke_guards, starved_keys,
                              stitch_islands)
from autorouter.zones.thermals import PAD_WAY
from conftest import JUDGE, corpus_board, judge, kicad_available, needs_corpus

# Short S1 tracks across three of the four spokes of J1.1 (a 1.7 mm square GND pad at (6, 4) in a GND zone): only
# the spoke upwards still reaches the fill. The diagonals are free.
CUTS = [Track((7.6, 3.5), (7.6, 4.5), 0.25, "F.Cu", 2), Track((4.4, 3.5), (4.4, 4.5), 0.25, "F.Cu", 2),
        Track((5.5, 5.6), (6.5, 5.6), 0.25, "F.Cu", 2)]


def thermal_board(tmp_path, minimums=None):
    path = g.write(g.thermal_zone(), tmp_path, minimums=minimums)
    board = load_board(path)
    assert board.net_name(2) == "S1"
    return path, board, load_rules(board, RouterConfig())


def with_tracks(path, tracks, out):
    items = "".join(f'\n\t(segment (start {t.start[0]} {t.start[1]}) (end {t.end[0]} {t.end[1]}) (width {t.width}) '
                    f'(layer "{t.layer}") (net {t.net}))' for t in tracks)
    text = path.read_text().rstrip()
    out.write_text(text[:-1] + items + "\n)\n")
    out.with_suffix(".kicad_pro").write_text(path.with_suffix(".kicad_pro").read_text())
    return out


def starved_pads(board, rules, tracks):
    return {(board.pads[r.pad].name, r.layer) for r in reliefs(board, rules, predict(board, rules, tracks), tracks)
            if r.starved}


def kicad_starved(path) -> int:
    return judge().drc(str(path), refill=True)["violations_by_type"].get("starved_thermal", 0)


def kicad_fill_gap(path, pad, folder) -> float:
    """How near KiCad's refilled zones come to a pad."""
    import subprocess
    from autorouter.board.sexpr import parse
    filled = folder / "filled.kicad_pcb"
    subprocess.run(["/usr/bin/python3", "-c", judge().REFILL, str(path), str(filled)], check=True, timeout=300)
    polygons = [node for zone in parse(filled.read_text())[1:] if isinstance(zone, list) and zone[0] == "zone"
                for node in zone if isinstance(node, list) and node[0] == "filled_polygon"]
    rings = [[(float(p[1]), float(p[2])) for p in next(n for n in poly if n[0] == "pts")[1:]] for poly in polygons]
    return min(shapely.Polygon(ring).distance(pad.outline) for ring in rings)


def test_cut_spokes_starve_the_relief_and_a_stub_feeds_it(tmp_path):
    path, board, rules = thermal_board(tmp_path)
    assert not starved_pads(board, rules, [])
    assert starved_pads(board, rules, CUTS) == {("J1.1", "F.Cu")}
    report = check(board, rules, CUTS, [], only_new=True)
    assert report.by_kind().get("starved_thermal") == 1
    before = starved_keys(reliefs(board, rules, predict(board, rules)))
    stubs = feed_starved(board, rules, predict(board, rules, CUTS), CUTS, (), 0.01, before)
    assert len(stubs) == 1 and stubs[0].net == board.pads[0].net and stubs[0].start == (6.0, 4.0)
    assert abs(stubs[0].end[0] - 6) == pytest.approx(abs(stubs[0].end[1] - 4), abs=1e-3)   # a diagonal
    assert not starved_pads(board, rules, CUTS + stubs)
    assert "starved_thermal" not in check(board, rules, CUTS + stubs, [], only_new=True).by_kind()
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, CUTS, tmp_path / "cut.kicad_pcb")) == 1
        assert kicad_starved(with_tracks(path, CUTS + stubs, tmp_path / "fed.kicad_pcb")) == 0


def test_a_starved_relief_asks_for_room_where_its_spokes_reached_the_fill(tmp_path):
    # what the nets that cut J1.1's spokes are asked to leave, when no stub can feed it: the cuts at its sides lie
    # in it; the one below, beside J1.2 (S1's own pad, whose way in it keeps), does not, nor does any other pad
    path, board, rules = thermal_board(tmp_path)
    cut = predict(board, rules, CUTS)
    relief = next(r for r in reliefs(board, rules, cut, CUTS) if r.starved)
    room = relief_room(board, relief, predict(board, rules))
    assert [room.intersects(t.body()) for t in CUTS] == [True, True, False]
    assert not any(room.intersects(p.outline) for p in board.pads if p.net != board.pads[relief.pad].net)
    # it keeps a ring around J1.2 for S1's way in, and no more: a track of S1 outside the ring is asked to move
    j12 = next(p for p in board.pads if p.name == "J1.2")
    assert room.distance(j12.outline) == pytest.approx(board.zones[relief.zone].clearance + PAD_WAY, abs=0.01)
    assert room.contains(shapely.Point(6, 4 - 1.5))              # the fill above J1.1 that its one spoke reaches


def test_a_square_oval_pad_has_spokes_at_90_degrees_as_kicad_gives_it(tmp_path):
    path, board, rules = thermal_board(tmp_path)
    text = path.read_text().replace("thru_hole circle", "thru_hole oval")
    path.write_text(text)
    board = load_board(path)
    pad = next(p for p in board.pads if p.name == "J1.3")
    ends = [end for piece in predict(board, rules) for i, _, end in piece.spokes if board.pads[i] is pad]
    assert ends and all(abs(e.x - pad.x) < 1e-6 or abs(e.y - pad.y) < 1e-6 for e in ends)


def test_a_pad_just_outside_its_zones_outline_gets_no_spokes(tmp_path):
    """KiCad clips a zone's fill, thermal spokes included, to its outline: a relieved pad 0.05 mm beyond it is not
    joined, though its spoke would end in the fill, and is left for routing to join."""
    path = g.write(g.pad_past_zone(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    pieces = [sorted(board.pads[i].name for i in piece.pads) for piece in predict(board, rules)]
    assert pieces == [["J1.1"]]
    if kicad_available() and JUDGE.is_dir():
        assert judge().drc(str(path), refill=True)["unconnected"] == 1


def test_a_neck_of_fill_past_a_zone_of_higher_priority_keeps_that_zones_clearance(tmp_path):
    """KiCad knocks a zone out of another net's zone of higher priority by the larger of their two clearances: the
    neck that joins the two GND pads is then too thin to fill, and they are left for routing to join."""
    path = g.write(g.zone_neck(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    pieces = [sorted(board.pads[i].name for i in piece.pads) for piece in predict(board, rules)
              if board.net_name(piece.net) == "GND"]
    assert sorted(pieces) == [["J1.1"], ["J2.1"]]
    if kicad_available() and JUDGE.is_dir():
        assert judge().drc(str(path), refill=True)["unconnected"] == 1


def test_a_zone_of_higher_priority_knocks_out_its_fill_not_its_outline(tmp_path):
    """KiCad fills a zone of higher priority first and knocks the others out by its fill: a zone too thin to fill
    cuts nothing, and the GND fill across it joins both pads (knocked out by its outline, they were apart)."""
    path = g.write(g.thin_zone_across(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    pieces = [sorted(board.pads[i].name for i in piece.pads) for piece in predict(board, rules)
              if board.net_name(piece.net) == "GND"]
    assert pieces == [["J1.1", "J2.1"]]
    if kicad_available() and JUDGE.is_dir():
        assert judge().drc(str(path), refill=True)["unconnected"] == 0


def test_a_piece_of_fill_that_touches_only_vias_joins_them(tmp_path):
    """KiCad keeps a piece of fill that touches anything of its net, vias included (it removes only those that touch
    nothing), so a plane between two vias joins them. Left out, the board looked a join short where KiCad finds
    none (c4_esp32c5's GND, parted by the nets that moved for /USB_DN's way)."""
    path = g.write(g.plane_between_vias(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    gnd = next(n for n, name in board.net_names.items() if name == "GND")
    tracks = [Track((4, 8), (10, 8), 0.25, "F.Cu", gnd), Track((20, 8), (26, 8), 0.25, "F.Cu", gnd)]
    vias = [Via(10, 8, 0.6, 0.3, ("F.Cu", "B.Cu"), gnd), Via(20, 8, 0.6, 0.3, ("F.Cu", "B.Cu"), gnd)]
    pieces = predict(board, rules, tracks, vias)
    assert [p.pads for p in pieces] == [[]]
    assert len(pad_groups(board, tracks, vias, pieces)[gnd]) == 1
    if kicad_available() and JUDGE.is_dir():
        routed = tmp_path / "routed.kicad_pcb"
        routed.write_text(with_items(path.read_text(), board.version, board.net_names, tracks, vias))
        routed.with_suffix(".kicad_pro").write_text(path.with_suffix(".kicad_pro").read_text())
        assert judge().drc(str(routed), refill=True)["unconnected"] == 0


def test_a_spoke_another_nets_clearance_only_nicks_still_joins_its_pad(tmp_path):
    """S1 cuts J1.1's spokes left, down and right at their ends; a track of S1 ending beside the spoke up nicks it
    by 0.06 mm, leaving it wider than the zone's minimum thickness: the spoke still joins J1.1 to the fill, and so to
    J2.1, as KiCad finds (c2_teres_keyboard's TQFP: a corner pin's nicked spoke joins the fill under the chip to the
    pour). Cut across, it does not."""
    path = g.write(g.two_ground_pads(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    s1, gnd = (next(n for n, name in board.net_names.items() if name == net) for net in ("S1", "GND"))
    corners = [(9.075, 7.3), (9.075, 8.925), (10.925, 8.925), (10.925, 7.0)]
    cuts = [Track(a, b, 0.25, "F.Cu", s1) for a, b in zip(corners, corners[1:])]
    nick = cuts + [Track((10.925, 7.0), (10.56, 7.0), 0.25, "F.Cu", s1)]
    across = cuts + [Track((10.925, 7.0), (9.6, 7.0), 0.25, "F.Cu", s1)]
    variants = {"cuts": cuts, "nick": nick, "across": across}
    groups = {name: len(pad_groups(board, tracks, (), predict(board, rules, tracks))[gnd])
              for name, tracks in variants.items()}
    assert groups == {"cuts": 1, "nick": 1, "across": 2}
    if kicad_available() and JUDGE.is_dir():       # S1's tracks join none of its pads: as many apart in each
        apart = {}
        for name, tracks in variants.items():
            routed = tmp_path / f"{name}.kicad_pcb"
            routed.write_text(with_items(path.read_text(), board.version, board.net_names, tracks, ()))
            routed.with_suffix(".kicad_pro").write_text(path.with_suffix(".kicad_pro").read_text())
            apart[name] = judge().drc(str(routed), refill=True)["unconnected"]
        assert apart["nick"] == apart["cuts"] and apart["across"] == apart["cuts"] + 1


def test_a_teardrop_fills_through_a_pour_keepout_and_knocks_out_the_zones_below(tmp_path):
    """KiCad fills teardrops through pour keep-outs: a teardrop of S1 wholly inside one still cuts the neck of GND
    fill beside it, and the two GND pads are left for routing to join."""
    path = g.write(g.teardrop_in_keepout(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    assert [z.teardrop for z in board.zones] == [False, True]
    pieces = [sorted(board.pads[i].name for i in piece.pads) for piece in predict(board, rules)
              if board.net_name(piece.net) == "GND"]
    assert sorted(pieces) == [["J1.1"], ["J2.1"]]
    if kicad_available() and JUDGE.is_dir():
        assert judge().drc(str(path), refill=True)["unconnected"] == 1


@pytest.mark.parametrize("gnd_uuid, s1_uuid, apart", [
    ("00000000-0000-0000-0000-000000000001", "f0000000-0000-0000-0000-000000000001", True),
    ("f0000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000001", False)])
def test_of_two_zones_of_one_priority_the_greater_uuid_knocks_the_other_out(tmp_path, gnd_uuid, s1_uuid, apart):
    path = g.write(g.tied_zones(gnd_uuid, s1_uuid), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    pieces = [sorted(board.pads[i].name for i in piece.pads) for piece in predict(board, rules)
              if board.net_name(piece.net) == "GND"]
    assert sorted(pieces) == ([["J1.1"], ["J2.1"]] if apart else [["J1.1", "J2.1"]])
    if kicad_available() and JUDGE.is_dir():
        assert judge().drc(str(path), refill=True)["unconnected"] == int(apart)


def test_a_spoke_that_kicad_may_count_is_kept_clear(tmp_path):
    """TP1.1's right spoke ends in a strip of fill exactly the zone's minimum thickness wide, which KiCad keeps (its
    relief has two spokes) and our count, at its margin, erodes: routing keeps that spoke clear all the same."""
    path = g.write(g.relief_by_keepout(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    right_end = shapely.Point(10.925, 8.0)
    guards = spoke_guards(board, rules, relief_fill(board, rules))
    assert any(area.contains(right_end) and layer == "F.Cu" for area, layer, _ in guards)
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(path) == 0


def test_a_board_that_asks_for_one_spoke_is_content_with_one(tmp_path):
    """min_resolved_spokes 1 in the project (12 of the 44 corpus boards say so): one spoke left is no starved relief,
    for KiCad nor for us; and 0 turns the check off."""
    path, board, rules = thermal_board(tmp_path, {"min_resolved_spokes": 1})
    assert rules.min_spokes == 1
    assert "starved_thermal" not in check(board, rules, CUTS, [], only_new=True).by_kind()
    before = starved_keys(reliefs(board, rules, predict(board, rules)))
    assert feed_starved(board, rules, predict(board, rules, CUTS), CUTS, (), 0.01, before) == []
    unchecked = replace(rules, min_spokes=0)
    assert not [r for r in reliefs(board, unchecked, predict(board, rules, CUTS), CUTS) if r.starved or r.short]
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, CUTS, tmp_path / "cut.kicad_pcb")) == 0


def test_spokes_that_meet_a_neighbours_count(tmp_path):
    """S1 tracks above and below two GND pads cut their spokes up and down. Each keeps the spoke outwards into the
    fill and the one towards the other pad, which ends in no fill (their reliefs overlap) but inside the other
    pad's spoke: KiCad's filler keeps the pair and its DRC counts two spokes a pad, and so do we."""
    path = g.write(g.spoke_pair(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    s1 = next(n for n, name in board.net_names.items() if name == "S1")
    cuts = [Track((8.0, y), (12.0, y), 0.25, "F.Cu", s1) for y in (7.1, 8.9)]
    found = {board.pads[r.pad].name: r.spokes for r in reliefs(board, rules, predict(board, rules, cuts), cuts)}
    assert found == {"J1.1": 2, "J1.2": 2}
    assert "starved_thermal" not in check(board, rules, cuts, [], only_new=True).by_kind()
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, cuts, tmp_path / "cut.kicad_pcb")) == 0


def test_pads_whose_only_spokes_meet_each_other_are_starved(tmp_path):
    """S1 tracks all round the two GND pads cut every spoke but the pair that meets between them: no spoke ends in
    the fill, but KiCad's filler keeps the pair and its DRC counts one spoke a pad, so both are starved, for KiCad
    and for us (c6_teres_a64's BGA balls, whose spokes meet at the centres of four balls where the escapes leave no
    fill: KiCad found six of them starved that our check did not see)."""
    path = g.write(g.spoke_pair(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    s1 = next(n for n, name in board.net_names.items() if name == "S1")
    cuts = ([Track((8.0, y), (12.0, y), 0.25, "F.Cu", s1) for y in (7.1, 8.9)]
            + [Track((x, 7.1), (x, 8.9), 0.25, "F.Cu", s1) for x in (8.9, 11.1)])
    found = {board.pads[r.pad].name: r.spokes for r in reliefs(board, rules, relief_fill(board, rules, cuts), cuts)}
    assert found == {"J1.1": 1, "J1.2": 1}
    assert starved_pads(board, rules, cuts) == {("J1.1", "F.Cu"), ("J1.2", "F.Cu")}
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, cuts, tmp_path / "cut.kicad_pcb")) == 2


def test_spokes_that_meet_are_kept_clear_where_a_pad_needs_them(tmp_path):
    """U1.2 has one spoke into the fill, and the one down that meets C1.1's: routing keeps the pair clear (on
    c4_hdmi_mipi a track between an SOT-23's outer pins cut such a pair and KiCad found the middle pin starved)."""
    path = g.write(g.pin_over_pad(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    assert {board.pads[r.pad].name: r.spokes for r in reliefs(board, rules, relief_fill(board, rules))
            if board.pads[r.pad].name == "U1.2"} == {"U1.2": 2}
    between = shapely.Point(10.0, 8.0 + (0.35 + 1.1) / 2)
    guards = spoke_guards(board, rules, relief_fill(board, rules))
    assert any(area.contains(between) and layer == "F.Cu" for area, layer, _ in guards)
    s1 = next(n for n, name in board.net_names.items() if name == "S1")
    across = [Track((8.5, between.y), (11.5, between.y), 0.1, "F.Cu", s1)]
    assert starved_pads(board, rules, across) == {("U1.2", "F.Cu")}
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(path) == 0
        assert kicad_starved(with_tracks(path, across, tmp_path / "across.kicad_pcb")) == 1


def test_a_pour_keepout_across_a_pad_parts_its_spokes(tmp_path):
    """KiCad cuts pour keep-outs out of the fill after adding the spokes: the band across TP1 parts its spoke up,
    into a pocket that joins nothing else, from its spoke down into the zone's fill. The pocket is then an outline
    of TP1 alone, whose spoke does not count: one spoke, starved (c6_teres_a64's U11.20), for KiCad and for us."""
    path = g.write(g.spokes_parted_by_keepout(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    assert ("TP1.1", "F.Cu") in starved_pads(board, rules, [])
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(path) == 1


def test_a_track_onto_spokes_that_meet_ends_in_the_fill(tmp_path):
    """A board that asks for three spokes: J1.1 keeps two, outwards and the one that meets J1.2's. A GND track from
    inside J1.1 that ends on that pair, in the gap between the pads, is its third: KiCad's filler adds the pair to
    the fill, so the track's end lies in it (c4_usb_gigabit's R10.1). Starved without the track, not with it, for
    KiCad and for us."""
    path = g.write(g.spoke_pair(), tmp_path, minimums={"min_resolved_spokes": 3})
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    assert rules.min_spokes == 3
    s1 = next(n for n, name in board.net_names.items() if name == "S1")
    cuts = [Track((8.0, y), (12.0, y), 0.25, "F.Cu", s1) for y in (7.1, 8.9)]
    onto = [Track((9.6, 8.0), (9.95, 8.0), 0.2, "F.Cu", board.pads[0].net)]
    assert ("J1.1", "F.Cu") in starved_pads(board, rules, cuts)
    assert ("J1.1", "F.Cu") not in starved_pads(board, rules, cuts + onto)
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, cuts, tmp_path / "cut.kicad_pcb")) == 2
        assert kicad_starved(with_tracks(path, cuts + onto, tmp_path / "onto.kicad_pcb")) == 1


def test_a_spoke_into_a_web_between_two_pads_counts(tmp_path):
    """S1 tracks cut the upper GND pad's spokes up and to the left; it keeps the spoke to the right and the one down
    into the web of fill between the two pads, which KiCad keeps: two spokes, no starved relief. Reliefs are judged
    on relief_fill, whose margin keeps that web; the connection fill (predict) loses it, and took such reliefs for
    starved already in the design (80 on oresat_bp1u), so that routing did not guard their spokes."""
    path = g.write(g.spoke_web(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    s1 = next(n for n, name in board.net_names.items() if name == "S1")
    cuts = [Track((9.0, 5.9), (11.0, 5.9), 0.25, "F.Cu", s1), Track((8.9, 6.2), (8.9, 7.4), 0.25, "F.Cu", s1)]
    found = {board.pads[r.pad].name: r.spokes for r in reliefs(board, rules, relief_fill(board, rules, cuts), cuts)}
    assert found == {"J1.1": 2, "J1.2": 4}
    assert not [r for r in reliefs(board, rules, relief_fill(board, rules)) if r.short]
    assert "starved_thermal" not in check(board, rules, cuts, [], only_new=True).by_kind()
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, cuts, tmp_path / "cut.kicad_pcb")) == 0


def test_the_route_hands_the_check_the_relief_fill_of_its_own_copper(tmp_path):
    # finishing judges reliefs on the fill with the new copper: the check takes that one over, not predicting it
    # again, and must find what it would have found on its own
    from autorouter.pipeline import route
    path, board, rules = thermal_board(tmp_path)
    result = route(board, rules, RouterConfig(backend="cpu"))
    again = relief_fill(board, rules, result.tracks, result.vias)
    assert [(p.zone, p.layer, p.pads) for p in result.relief_fills] == [(p.zone, p.layer, p.pads) for p in again]
    assert all(p.shape.equals(q.shape) for p, q in zip(result.relief_fills, again))
    given = check(board, rules, result.tracks, result.vias, only_new=True, relief_fills=result.relief_fills)
    assert given.violations == check(board, rules, result.tracks, result.vias, only_new=True).violations


def test_a_through_hole_pads_spokes_do_not_join_what_its_hole_parts(tmp_path):
    """S1 tracks cut J1.1's spokes to the right and down, and box in the fill its left spoke reaches. KiCad's filler
    knocks the pad's hole out of the spokes, which run from its centre, so that pocket stays an island of its own:
    one spoke into the pour and one into an island, starved ("1 spokes connected to isolated island"). Through an
    SMD pad, with no hole, the spokes would join the pocket to the pour."""
    path, board, rules = thermal_board(tmp_path)
    pocket = [Track((3.5, 2.75), (5.3, 2.75), 0.25, "F.Cu", 2), Track((3.5, 5.25), (5.3, 5.25), 0.25, "F.Cu", 2),
              Track((3.5, 2.75), (3.5, 5.25), 0.25, "F.Cu", 2)]
    cuts = [CUTS[0], CUTS[2]] + pocket
    relief = next(r for r in reliefs(board, rules, relief_fill(board, rules, cuts), cuts)
                  if board.pads[r.pad].name == "J1.1" and r.layer == "F.Cu")
    assert (relief.spokes, relief.island_spokes) == (1, 1) and relief.starved
    assert check(board, rules, cuts, [], only_new=True).by_kind().get("starved_thermal") == 1
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, cuts, tmp_path / "pocket.kicad_pcb")) == 1


def test_a_via_on_a_spoke_inside_the_pad_counts_as_a_spoke(tmp_path):
    """KiCad's DRC takes a via for a track of length 0, and the fill it tests holds the spokes, which run from the
    pad's centre: with three of J1.1's spokes cut, a GND via on the spoke upwards, inside the pad, makes the second
    spoke (as on c4_hdmi_mipi's SOT-23 GND pins); one inside the pad but off the spokes does not."""
    path, board, rules = thermal_board(tmp_path)

    def relief_with(via):
        return next(r for r in reliefs(board, rules, relief_fill(board, rules, CUTS, [via]), CUTS, [via])
                    if board.pads[r.pad].name == "J1.1" and r.layer == "F.Cu")

    on_spoke, off_spoke = (Via(x, y, 0.4, 0.2, ("F.Cu", "B.Cu"), board.pads[0].net) for x, y in ((6.0, 3.3), (6.6, 4.6)))
    assert relief_with(on_spoke).spokes == 2 and not relief_with(on_spoke).starved
    assert relief_with(off_spoke).starved
    if kicad_available() and JUDGE.is_dir():
        for via, starved in ((on_spoke, 0), (off_spoke, 1)):
            out = with_tracks(path, CUTS, tmp_path / f"via{starved}.kicad_pcb")
            text = out.read_text().rstrip()
            out.write_text(text[:-1] + f'\n\t(via (at {via.x} {via.y}) (size 0.4) (drill 0.2) (layers "F.Cu" "B.Cu") '
                                       f'(net {via.net}))\n)\n')
            assert kicad_starved(out) == starved


@pytest.mark.parametrize("width, counts", [(0.25, True), (0.1, False)])
def test_a_track_counts_as_a_spoke_only_where_its_copper_touches_the_pad(tmp_path, width, counts):
    """KiCad counts the tracks connected to the pad (its GetConnectedTracks: their copper touches the pad's) with one
    end inside it, grown by half the thermal gap, and the other in the fill. With three of J1.1's spokes cut, a GND
    way from inside the pad diagonally into the fill, made of two tracks whose joint lies in the gap 0.1 mm off the
    pad's corner: the second is a spoke where its end's copper reaches the pad (0.25 mm wide), none where it does not
    (0.1 mm), and the first ends in the gap, not in the fill (c2_teres_keyboard's U1.15)."""
    path, board, rules = thermal_board(tmp_path)
    gnd = board.pads[0].net
    way = [Track((6.7, 4.7), (6.92, 4.92), width, "F.Cu", gnd), Track((6.92, 4.92), (7.6, 5.6), width, "F.Cu", gnd)]
    assert (("J1.1", "F.Cu") in starved_pads(board, rules, CUTS + way)) == (not counts)
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(with_tracks(path, CUTS + way, tmp_path / "way.kicad_pcb")) == (0 if counts else 1)


def test_a_track_that_ends_where_other_nets_cut_the_spoke_is_no_spoke(tmp_path):
    """U1.2's spoke down is cut at its end by S1; the one up reaches the fill past the pin's end, where the
    neighbours' clearances round off, though they leave too little of it over the pin. A GND track inside the pin
    ends over that spoke, where KiCad has cut it away again: no spoke, and the relief stays starved (as
    c2_teres_keyboard's U1.15 did, routed on its pins' lattice)."""
    path = g.write(g.pin_row(), tmp_path)
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    s1, gnd = (next(i for i in range(1, 10) if board.net_name(i) == name) for name in ("S1", "GND"))
    cut = Track((8.5, 9.6), (11.5, 9.6), 0.25, "F.Cu", s1)
    onto = Track((10.0, 8.0), (10.0, 7.4), 0.2, "F.Cu", gnd)
    assert not starved_pads(board, rules, [])
    assert starved_pads(board, rules, [cut]) == {("U1.2", "F.Cu")}
    assert starved_pads(board, rules, [cut, onto]) == {("U1.2", "F.Cu")}
    if kicad_available() and JUDGE.is_dir():
        assert kicad_starved(path) == 0
        assert kicad_starved(with_tracks(path, [cut], tmp_path / "cut.kicad_pcb")) == 1
        assert kicad_starved(with_tracks(path, [cut, onto], tmp_path / "onto.kicad_pcb")) == 1


def test_a_stitching_via_joins_an_island_that_a_spoke_reaches(tmp_path):
    """The pocket of the test above, fed the way a designer would: a GND via inside it, which the B.Cu pour joins,
    makes the pocket an outline of two items, whose spoke KiCad counts again."""
    path, board, rules = thermal_board(tmp_path)
    pocket = [Track((3.5, 2.75), (5.3, 2.75), 0.25, "F.Cu", 2), Track((3.5, 5.25), (5.3, 5.25), 0.25, "F.Cu", 2),
              Track((3.5, 2.75), (3.5, 5.25), 0.25, "F.Cu", 2)]
    cuts = [CUTS[0], CUTS[2]] + pocket
    before = starved_keys(reliefs(board, rules, relief_fill(board, rules)), strict=True)
    stitches = stitch_islands(board, rules, relief_fill(board, rules, cuts), cuts, (), 0.01, before)
    assert len(stitches) == 1 and stitches[0].net == board.pads[0].net
    assert shapely.box(3.5, 2.75, 5.3, 5.25).contains(stitches[0].body())
    relief = next(r for r in reliefs(board, rules, relief_fill(board, rules, cuts, stitches), cuts, stitches)
                  if board.pads[r.pad].name == "J1.1" and r.layer == "F.Cu")
    assert relief.spokes == 2 and not relief.starved
    assert "starved_thermal" not in check(board, rules, cuts, stitches, only_new=True).by_kind()
    if kicad_available() and JUDGE.is_dir():
        out = with_tracks(path, cuts, tmp_path / "stitched.kicad_pcb")
        v = stitches[0]
        text = out.read_text().rstrip()
        out.write_text(text[:-1] + f'\n\t(via (at {v.x} {v.y}) (size {v.diameter}) (drill {v.drill}) '
                                   f'(layers "F.Cu" "B.Cu") (net {v.net}))\n)\n')
        verdict = judge().drc(str(out), refill=True)["violations_by_type"]
        assert "starved_thermal" not in verdict and "clearance" not in verdict and "hole_clearance" not in verdict


def test_a_stitching_via_too_large_for_the_island_is_made_as_small_as_the_board_allows(tmp_path):
    """The same pocket where the net's class asks 1.6 mm vias, which do not fit in it: the board's smallest via
    (its minimums) does (framework_mcu's C4.2, whose island held no 0.8 mm via and held a 0.5 mm one)."""
    path = g.write(g.thermal_zone(), tmp_path, classes=g.default_class(via=1.6, drill=0.8),
                   minimums={"min_via_diameter": 0.5, "min_through_hole_diameter": 0.3, "min_via_annular_width": 0.1})
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    assert rules.small_via == (0.5, 0.3)
    pocket = [Track((3.5, 2.75), (5.3, 2.75), 0.25, "F.Cu", 2), Track((3.5, 5.25), (5.3, 5.25), 0.25, "F.Cu", 2),
              Track((3.5, 2.75), (3.5, 5.25), 0.25, "F.Cu", 2)]
    cuts = [CUTS[0], CUTS[2]] + pocket
    before = starved_keys(reliefs(board, rules, relief_fill(board, rules)), strict=True)
    stitches = stitch_islands(board, rules, relief_fill(board, rules, cuts), cuts, (), 0.01, before)
    assert [(v.diameter, v.drill) for v in stitches] == [(0.5, 0.3)]
    assert shapely.box(3.5, 2.75, 5.3, 5.25).contains(stitches[0].body())
    assert "starved_thermal" not in check(board, rules, cuts, stitches, only_new=True).by_kind()


@needs_corpus
def test_reliefs_are_fed_when_time_runs_out_before_finishing(tmp_path, monkeypatch):
    # time is up as finishing begins (a board bound by time): no more joins are searched, but the reliefs the new
    # copper starved are still fed, by stubs alone (stitching vias cost a prediction of every plane they cut)
    from autorouter import pipeline
    from autorouter.config import load_config
    board = load_board(corpus_board("c2_teres_keyboard", tmp_path))
    config = load_config(None, backend="cpu")
    rules = load_rules(board, config)
    fed = []

    def feed(board, rules, config, scope, before, joined, stitch=True):
        out = feed_reliefs(board, rules, config, scope, before, joined, stitch)
        fed.append((stitch, pipeline.starved_count(board, rules, joined, before),
                    pipeline.starved_count(board, rules, out, before)))
        return out

    feed_reliefs = pipeline.feed_reliefs
    monkeypatch.setattr(pipeline, "feed_reliefs", feed)
    stages = []
    pipeline.route(board, rules, config, on_progress=lambda event: stages.append(event["stage"]),
                   should_stop=lambda: "time limit" if "joining" in stages else "")
    assert "thermal reliefs" in stages[stages.index("joining"):]
    assert len(fed) == 1 and not fed[0][0] and 0 < fed[0][1] and fed[0][2] <= fed[0][1], fed


@needs_corpus
def test_join_rounds_stop_in_time_for_the_reliefs_stitching_vias(tmp_path, monkeypatch):
    # routing's deadline still ahead, but not the time of RELIEF_FILLS fill predictions (made huge here): the join
    # rounds stop at once, no detail join is searched, and the reliefs are fed with stitching vias too (c6_teres_a64's
    # rounds ran past the deadline, and its reliefs went without them)
    from autorouter import pipeline
    from autorouter.config import load_config
    board = load_board(corpus_board("c2_teres_keyboard", tmp_path))
    config = replace(load_config(None, backend="cpu", time_limit=10_000), retries=0)
    rules = load_rules(board, config)
    stitched = []
    feed_reliefs = pipeline.feed_reliefs
    monkeypatch.setattr(pipeline, "feed_reliefs", lambda *a: stitched.append(a[-1]) or feed_reliefs(*a))
    monkeypatch.setattr(pipeline, "RELIEF_FILLS", 1e9)
    stages = []
    pipeline.route(board, rules, config, on_progress=lambda event: stages.append(event["stage"]))
    first = stages.index("joining")
    assert stages[first:first + 2] == ["joining", "thermal reliefs"], stages
    assert stitched[0] is True


def test_a_fill_predicted_again_after_a_few_items_fills_only_the_zones_they_reach(tmp_path):
    # the fills with the cuts added, from the fills without them: as predicted afresh; with nothing changed, no
    # zone is filled again
    path, board, rules = thermal_board(tmp_path)
    without = predict(board, rules)
    again = predict(board, rules, CUTS, since=(without, CUTS))
    afresh = predict(board, rules, CUTS)
    assert [(p.zone, p.layer, p.pads) for p in again] == [(p.zone, p.layer, p.pads) for p in afresh]
    assert all(p.shape.symmetric_difference(q.shape).area < 1e-9 for p, q in zip(again, afresh))
    assert any(p.shape.area != q.shape.area for p, q in zip(again, without))
    untouched = predict(board, rules, since=(without, []))
    assert all(p is q for p, q in zip(untouched, without))


def test_a_zone_below_one_the_changes_miss_takes_that_zones_fill_as_it_was(tmp_path):
    # a GND track far from the S1 zone of higher priority: the GND fill is made again, knocked out by S1's fill as
    # the last prediction made it (not filled again), and comes out as predicted afresh
    board = load_board(g.write(g.zone_neck(), tmp_path))
    rules = load_rules(board, RouterConfig())
    gnd = next(n for n, name in board.net_names.items() if name == "GND")
    s1_zone = next(i for i, z in enumerate(board.zones) if z.priority)
    track = [Track((3.0, 3.0), (6.0, 3.0), 0.25, "F.Cu", gnd)]
    without = predict(board, rules)
    again = predict(board, rules, track, since=(without, track))
    afresh = predict(board, rules, track)
    assert again.fills[s1_zone, "F.Cu"] is without.fills[s1_zone, "F.Cu"]
    assert [(p.zone, p.layer, p.pads) for p in again] == [(p.zone, p.layer, p.pads) for p in afresh]
    assert all(p.shape.symmetric_difference(q.shape).area < 1e-9 for p, q in zip(again, afresh))


def test_a_pads_own_clearance_overrides_its_zones_in_the_fill(tmp_path):
    # TP1 (S1) asks 0.05 mm, the GND zone 0.3, the board's minimum 0.03: the fill comes to 0.05 mm of the pad (and
    # the margin), as KiCad's; no override goes below the board's minimum (0.15 in the example project)
    path = g.write(g.pad_clearance_in_zone(), tmp_path, minimums={"min_clearance": 0.03})
    board = load_board(path)
    rules = load_rules(board, RouterConfig())
    pad = next(p for p in board.pads if p.footprint == "TP1")
    gap = min(p.shape.distance(pad.outline) for p in relief_fill(board, rules))
    assert 0.05 <= gap < 0.08, gap
    if kicad_available() and JUDGE.is_dir():
        assert 0.049 < kicad_fill_gap(path, pad, tmp_path) < 0.06


def test_calls_run_at_once_hand_back_results_in_order_and_errors():
    from autorouter.parallel import at_once
    assert at_once(lambda: 1, lambda: [2], list) == [1, [2], []]
    with pytest.raises(ValueError):
        at_once(lambda: 1, lambda: int("x"))
