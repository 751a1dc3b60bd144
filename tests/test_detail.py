"""The detail joins' parts: a net's copper grouped as pad_groups groups its pads, the fine grid's path as merged
octilinear runs, and a join made on a fine grid that is legal for our DRC (and for KiCad's, where it is installed)."""
import math

import numpy as np
import pytest
import shapely

import generated
from conftest import needs_kicad
from autorouter.board import load_board
from autorouter.board.connectivity import net_copper, pad_groups
from autorouter.board.model import Track
from autorouter.board.rules import load_rules
from autorouter.check.drc import check
from autorouter.check.kicad import kicad_verdict
from autorouter.config import load_config
from autorouter.detail import detail_join
from autorouter.detail.grid import FineGrid, cheapest_path, runs
from autorouter.writeback.writer import with_items
from autorouter.zones import predict
from autorouter.zones.fill import Copper
from autorouter.zones.thermals import legal


def test_a_nets_copper_groups_hold_the_pads_pad_groups_finds(tmp_path):
    board = load_board(generated.write(generated.thermal_zone(), tmp_path))
    rules = load_rules(board, load_config())
    tracks = [Track((p.x, p.y), (q.x, q.y), 0.2, "F.Cu", p.net) for p, q in zip(board.pads, board.pads[1:])
              if p.net and p.net == q.net and "F.Cu" in p.layers and "F.Cu" in q.layers][:5]
    pieces = predict(board, rules, tracks)
    expected = pad_groups(board, tracks, (), pieces)
    for net, groups in expected.items():
        found = [g.pads for g in net_copper(board, net, tracks, (), pieces) if g.pads]
        assert sorted(map(sorted, found)) == sorted(map(sorted, groups))


def test_the_cheapest_way_round_a_wall_is_octilinear_runs():
    open_ = np.ones((1, 9, 9), bool)
    open_[0, 2:9, 4] = False                      # a wall from row 2 down: the way goes over its top
    sources, targets = np.zeros_like(open_), np.zeros_like(open_)
    sources[0, 6, 1], targets[0, 6, 7] = True, True
    path = cheapest_path(open_, np.zeros((9, 9), bool), sources, targets, via_cost=10.0, aim=(6, 7))
    assert path[0] == (0, 6, 1) and path[-1] == (0, 6, 7)
    assert all(open_[p] for p in path)
    (layer, corners), = runs(path)[0]
    steps = np.diff(np.array(corners), axis=0)
    assert all(abs(dr) == abs(dc) or dr == 0 or dc == 0 for dr, dc in steps)      # 0, 45 or 90 degrees
    assert len(corners) <= 6                                                       # runs merged, not single steps


def test_a_long_search_gives_up_when_told_to():
    open_ = np.ones((1, 400, 400), bool)
    sources, targets = np.zeros_like(open_), np.zeros_like(open_)
    sources[0, 0, 0], targets[0, 399, 399] = True, True
    asked = []                                    # aimed at its start, the search spreads over every point
    assert cheapest_path(open_, np.zeros((400, 400), bool), sources, targets, 1.0, (0, 0),
                         lambda: asked.append(1) or "time limit") is None
    assert len(asked) == 1


def test_a_target_walled_off_is_answered_without_a_search():
    open_ = np.ones((1, 400, 400), bool)
    open_[0, 398, 397:] = open_[0, 397:, 398] = False     # a diagonal step still passes a corner: closed square
    sources, targets = np.zeros_like(open_), np.zeros_like(open_)
    sources[0, 0, 0], targets[0, 399, 399] = True, True
    asked = []
    assert cheapest_path(open_, np.zeros((400, 400), bool), sources, targets, 1.0, (399, 399),
                         lambda: asked.append(1) or "time limit") is None
    assert not asked


@pytest.mark.parametrize("seed", range(3))
def test_reachable_says_what_the_search_finds(monkeypatch, seed):
    """reachable (by runs of open points) against the search itself, on random grids of one to three layers, with
    via sites open on every layer or anywhere."""
    import autorouter.detail.grid as grid
    rng = np.random.default_rng(seed)
    for _ in range(150):
        layers, rows, cols = int(rng.integers(1, 4)), int(rng.integers(1, 25)), int(rng.integers(1, 25))
        open_ = rng.random((layers, rows, cols)) < rng.uniform(0.3, 0.75)
        via_open = rng.random((rows, cols)) < 0.05
        if rng.random() < 0.7:
            via_open &= open_.all(0)
        ends = []
        for _ in range(2):
            end, k = np.zeros_like(open_), int(rng.integers(0, 4))
            end[rng.integers(0, layers, k), rng.integers(0, rows, k), rng.integers(0, cols, k)] = True
            ends.append(end)
        answer = grid.reachable(open_, via_open, *ends)
        monkeypatch.setattr(grid, "reachable", lambda *args: True)
        assert answer == (grid.cheapest_path(open_, via_open, *ends, 3.0, (0, 0)) is not None)
        monkeypatch.undo()


def path_cost(path, via_cost: float, price) -> float:
    """A path's cost as cheapest_path counts it."""
    from autorouter.detail.grid import TURN
    total, came = 0.0, None
    for a, b in zip(path, path[1:]):
        if a[0] != b[0]:
            total += via_cost + price[1][a[1:]] + price[0][b]
            came = None
            continue
        step = (b[1] - a[1], b[2] - a[2])
        total += (1.0 if 0 in step else math.sqrt(2)) + (TURN if came not in (None, step) else 0.0) + price[0][b]
        came = step
    return total


@pytest.mark.parametrize("seed", range(4))
def test_a_large_grid_searched_on_cells_first_finds_as_cheap_a_path(seed):
    """cheapest_path on a grid past COARSE_FROM (cells first, then a band round their path) against A* point by point
    on the whole grid: a path wherever there is one, all open, and as cheap within 1%; none where there is none.
    Walls of other nets' copper at a price, a few closed boxes, and vias."""
    import autorouter.detail.grid as grid
    rng = np.random.default_rng(seed)
    layers, rows, cols = 2, 330, 330
    assert layers * rows * cols >= grid.COARSE_FROM
    open_ = np.ones((layers, rows, cols), bool)
    priced = np.zeros((layers, rows, cols))
    for _ in range(40):
        l, r, c = rng.integers(0, layers), rng.integers(0, rows - 40), rng.integers(0, cols - 40)
        h, w = rng.integers(2, 40, 2)
        if rng.random() < 0.5:
            open_[l, r:r + h, c:c + w] = False
        else:
            priced[l, r:r + h, c:c + w] = 4.0
    if seed == 3:                                 # the targets walled off on both layers: no path
        open_[:, 280:, 280] = open_[:, 280, 280:] = False
    via_open = rng.random((rows, cols)) < 0.02
    sources, targets = np.zeros_like(open_), np.zeros_like(open_)
    sources[0, 5:8, 5:8], targets[1, 300:310, 300:310] = True, True
    price = (priced, np.where(via_open, 2.0, 0.0))
    found = grid.cheapest_path(open_, via_open, sources, targets, 20.0, (305, 305), price=price)
    best = grid.a_star(open_, via_open, sources, targets, 20.0, (305, 305), price=price)
    assert (found is None) == (best is None) == (seed == 3)
    if found is not None:
        assert sources[found[0]] and targets[found[-1]] and all(open_[p] for p in found)
        assert path_cost(found, 20.0, price) <= 1.01 * path_cost(best, 20.0, price)


def test_shapes_grown_once_are_grown_as_grow_all_grows_them(monkeypatch):
    """grown keeps each (shape, distance) it grew: equal shapes made apart share one, another distance is grown
    anew, and a full store is emptied first; every answer is grow_all's."""
    import autorouter.detail.grid as grid
    from autorouter.board.geometry import grow_all
    monkeypatch.setattr(grid, "_grown", {})
    monkeypatch.setattr(grid, "GROWN_KEPT", 4)
    shapes = [shapely.box(0, 0, 1, 1), shapely.Point(2, 2).buffer(0.3), shapely.box(0, 0, 1, 1)]
    for distances in ([0.1, 0.2, 0.1], [0.1, 0.2, 0.3], [0.5, 0.5, 0.5]):
        got = grid.grown(shapes, np.array(distances))
        assert all(shapely.equals_exact(a, b, 0) for a, b in zip(got, grow_all(shapes, distances)))
        assert len(grid._grown) <= 4
    assert got[0] is got[2]


@pytest.mark.parametrize("seed", range(40))
def test_the_scanline_fill_covers_the_points_shapely_finds_in_the_shapes(seed):
    # discs, grown boxes, rings with holes and shapes past the window's edge, at random
    rng = np.random.default_rng(seed)
    grid = FineGrid.over((rng.uniform(-1, 1), rng.uniform(-1, 1), 6.0, 5.0), rng.uniform(0.02, 0.1))
    shapes = []
    for _ in range(rng.integers(0, 30)):
        x, y = rng.uniform(-1, 7, 2)
        kind = rng.integers(3)
        if kind == 0:
            shapes.append(shapely.Point(x, y).buffer(rng.uniform(0.01, 1.0), quad_segs=int(rng.integers(1, 9))))
        elif kind == 1:
            shapes.append(shapely.box(x, y, x + rng.uniform(0, 2), y + rng.uniform(0, 2)).buffer(rng.uniform(0, 0.3)))
        else:
            r = rng.uniform(0.2, 1.5)
            shapes.append(shapely.Point(x, y).buffer(r).difference(shapely.Point(x, y).buffer(r * rng.uniform(0.2, 0.9))))
    x, y = grid.xy
    expected = shapely.intersects_xy(shapely.union_all(shapes), x, y) if shapes else np.zeros(x.shape, bool)
    assert np.array_equal(grid.covered(shapes), expected)


def test_the_scanline_fill_covers_the_points_on_a_shapes_edges_and_corners():
    # a pad's box can lie on the grid's lines (the window is laid from pad coordinates): its edges and corners are
    # covered, as shapely's intersects says, top edge included
    grid = FineGrid.over((0.0, 0.0, 2.0, 2.0), 0.025)
    x, y = grid.xy
    shapes = [shapely.box(*grid.point(10, 12), *grid.point(30, 40)),
              shapely.Polygon([grid.point(50, 50), grid.point(60, 40), grid.point(70, 50), grid.point(60, 60)])]
    assert np.array_equal(grid.covered(shapes), shapely.intersects_xy(shapely.union_all(shapes), x, y))


def test_a_via_joins_two_layers_where_one_is_walled(tmp_path):
    open_ = np.ones((2, 5, 9), bool)
    open_[0, :, 4] = False                        # F.Cu walled across: the way drops to B.Cu and back
    sources, targets = np.zeros_like(open_), np.zeros_like(open_)
    sources[0, 2, 0], targets[0, 2, 8] = True, True
    path = cheapest_path(open_, np.ones((5, 9), bool), sources, targets, via_cost=2.0, aim=(2, 8))
    found_runs, vias = runs(path)
    assert [layer for layer, _ in found_runs] == [0, 1, 0] and len(vias) == 2


def legal_join(board, rules) -> tuple[list, list]:
    """The detail join of the first pad's net on the bare board, found, legal for our DRC and joining the net."""
    net = board.pads[0].net
    found = detail_join(board, rules, net, [], [], [], 0.001)
    assert found is not None
    tracks, vias = found
    assert check(board, rules, tracks, vias, only_new=True).violations == []
    assert len(pad_groups(board, tracks, vias)[net]) == 1
    return tracks, vias


@pytest.mark.parametrize("outside", [14, 24])
def test_a_join_through_a_slot_narrower_than_the_pitch_is_legal(outside, tmp_path):
    # outside=24: the pads 17 mm apart, and the slot still passed at the fine step (c4_buspirate6's U2.18, 14.8 mm
    # from its net, leaves between its neighbours' vias)
    board = load_board(generated.write(generated.slot(gap=0.7, at=10.5, outside=outside), tmp_path))
    rules = load_rules(board, load_config())
    tracks, vias = legal_join(board, rules)
    assert all(abs(math.remainder(math.degrees(math.atan2(t.end[1] - t.start[1], t.end[0] - t.start[0])), 45))
               < 1e-6 for t in tracks)


def test_a_wall_on_one_layer_is_passed_under_by_two_vias(tmp_path):
    # a keep-out across F.Cu only: the join drops to B.Cu before it and comes back up after it
    b = generated.TestBoard("wall", 2, 20, 10)
    for ref, x in (("TP1", 4), ("TP2", 12)):
        b.footprint(ref, "TestPoint", x, 5, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    b.zone(None, ["F.Cu"], [(7, 0), (9, 0), (9, 10), (7, 10)], keepout=True)
    board = load_board(generated.write(b, tmp_path))
    rules = load_rules(board, load_config())
    tracks, vias = legal_join(board, rules)
    assert len(vias) == 2 and {t.layer for t in tracks} == {"F.Cu", "B.Cu"}


def ring_board(tmp_path):
    """Two pads of net A either side of net B's via, whose ring (0.1 mm) is thinner than the hole clearance (0.3 mm)
    less the clearance (0.1 mm)."""
    b = generated.TestBoard("ring", 2, 20, 10)
    for ref, x in (("TP1", 5), ("TP2", 11)):
        b.footprint(ref, "TestPoint", x, 5, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    b.nets.append("B")
    b.extra.append(f'\t(via\n\t\t(at 8 5)\n\t\t(size 0.5)\n\t\t(drill 0.3)\n\t\t(layers "F.Cu" "B.Cu")\n'
                   f'\t\t(net {b.nets.index("B") + 1})\n\t\t(uuid "{generated.uid("ring", "via", 0)}")\n\t)')
    board = load_board(generated.write(b, tmp_path, generated.default_class(0.2, 0.1),
                                       {"min_clearance": 0.1, "min_hole_clearance": 0.3}))
    return board, load_rules(board, load_config())


def test_new_copper_keeps_the_hole_clearance_where_a_ring_is_thin(tmp_path):
    # a track 0.1 mm from the ring is at the copper clearance but 0.2 mm from the hole: KiCad's hole_clearance
    board, rules = ring_board(tmp_path)
    assert rules.hole_clearance == 0.3 and len(board.vias) == 1
    copper = Copper(board, rules)
    net = board.pads[0].net
    near = Track((6, 5.45), (10, 5.45), 0.2, "F.Cu", net)
    apart = Track((6, 5.6), (10, 5.6), 0.2, "F.Cu", net)
    assert not legal(board, rules, copper, near, 0.001) and legal(board, rules, copper, apart, 0.001)


def test_a_join_keeps_the_hole_clearance_from_another_nets_via(tmp_path):
    board, rules = ring_board(tmp_path)
    found = detail_join(board, rules, board.pads[0].net, [], [], [], 0.001)
    assert found is not None
    tracks, vias = found
    assert check(board, rules, tracks, vias, only_new=True).violations == []
    assert min(t.body().distance(shapely.Point(8, 5)) for t in tracks) >= 0.15 + 0.3


def test_a_pin_walled_in_by_a_new_track_is_joined_through_it_and_the_track_moves(tmp_path):
    # net B's new track on F.Cu walls TP1 (net A, F.Cu only) in: a keep-out on B.Cu left of it forbids the via A would
    # need, and the board's edge is too near B's pads to pass round them. A crosses B's track, which joins its two
    # through-hole pads again on B.Cu.
    from autorouter.detail import join_through
    b = generated.TestBoard("through", 2, 20, 10)
    for ref, x in (("TP1", 4), ("TP2", 16)):
        b.footprint(ref, "TestPoint", x, 5, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    for ref, y in (("J1", 1.2), ("J2", 8.8)):
        b.footprint(ref, "Pin", 10, y, [b.tht_pad(ref, 1, 0, 0, "B", True)], False)
    b.zone(None, ["B.Cu"], [(0, 0), (9.6, 0), (9.6, 10), (0, 10)], keepout=True)
    board = load_board(generated.write(b, tmp_path))
    rules = load_rules(board, load_config())
    a, b_net = board.pads[0].net, board.pads[2].net
    wall = [Track((10, 1.2), (10, 8.8), 0.25, "F.Cu", b_net)]
    assert detail_join(board, rules, a, wall, [], [], 0.001) is None
    found = join_through(board, rules, a, wall, [], [], 0.001)
    assert found is not None
    tracks, vias = found
    assert wall[0] not in tracks
    assert check(board, rules, tracks, vias, only_new=True).violations == []
    groups = pad_groups(board, tracks, vias)
    assert len(groups[a]) == 1 and len(groups[b_net]) == 1


def test_a_net_moved_out_of_the_way_may_move_a_third_on_its_way_back(tmp_path):
    # no vias anywhere: A (TP1, TP2) and B (J1, J2) have pads on F.Cu only. B's track spans the board from edge to
    # edge, so A must cross it. B's way back round TP2 meets C's track, which walls it from TP2 down to the edge: B
    # crosses C, and C, whose through-hole pads reach B.Cu, joins again there. One level deep (deeper=0), B finds no
    # way back and nothing is joined.
    from autorouter.detail import join_through
    b = generated.TestBoard("deeper", 2, 12, 12)
    for ref, x, y, net in (("TP1", 0.9, 6, "A"), ("TP2", 7, 6, "A"), ("J1", 5, 0.9, "B"), ("J2", 5, 11.1, "B")):
        b.footprint(ref, "TestPoint", x, y, [b.smd_pad(ref, 1, 0, 0, 0.6, 0.6, net)], True)
    for ref, y in (("K1", 6.9), ("K2", 11.3)):
        pad = b.tht_pad(ref, 1, 0, 0, "C").replace("(size 1.7 1.7)", "(size 0.8 0.8)")
        pad = pad.replace("(drill 1)", "(drill 0.4)")
        b.footprint(ref, "Pin", 7, y, [pad], False)
    b.zone(None, ["F.Cu", "B.Cu"], [(0, 0), (12, 0), (12, 12), (0, 12)], keepout=True)
    b.extra[-1] = b.extra[-1].replace("(tracks not_allowed)", "(tracks allowed)")
    board = load_board(generated.write(b, tmp_path))
    rules = load_rules(board, load_config())
    a, b_net, c = (next(n for n, name in board.net_names.items() if name == want) for want in "ABC")
    walls = [Track((5, 0.9), (5, 11.1), 0.25, "F.Cu", b_net), Track((7, 6.9), (7, 11.3), 0.25, "F.Cu", c)]
    assert detail_join(board, rules, a, walls, [], [], 0.001) is None
    assert join_through(board, rules, a, walls, [], [], 0.001) is None
    found = join_through(board, rules, a, walls, [], [], 0.001, deeper=1)
    assert found is not None
    tracks, vias = found
    assert not vias and not set(walls) & set(tracks)
    assert check(board, rules, tracks, vias, only_new=True).violations == []
    groups = pad_groups(board, tracks, vias)
    assert all(len(groups[net]) == 1 for net in (a, b_net, c))


def test_a_wall_longer_than_the_first_window_is_gone_round_in_the_wider_one(tmp_path):
    # a keep-out on both layers between two pads 2 mm apart, reaching 2.5 mm either side of them: the first window
    # (a margin of 1 mm and a quarter of the gap) holds no way round it, the wider one does
    b = generated.TestBoard("long wall", 2, 20, 16)
    for ref, x in (("TP1", 8), ("TP2", 12)):
        b.footprint(ref, "TestPoint", x, 8, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    b.zone(None, ["F.Cu", "B.Cu"], [(9.7, 5.5), (10.3, 5.5), (10.3, 10.5), (9.7, 10.5)], keepout=True)
    board = load_board(generated.write(b, tmp_path))
    rules = load_rules(board, load_config())
    tracks, vias = legal_join(board, rules)
    assert min(min(t.start[1], t.end[1]) for t in tracks) < 5.5 or max(max(t.start[1], t.end[1]) for t in tracks) > 10.5


def test_a_fill_a_join_cuts_apart_is_joined_again(tmp_path):
    # S's new track crosses the GND strip on F.Cu that joins TP1 and TP2: the fill predicted again is in two, and
    # GND is joined again across the track (under it on B.Cu)
    from autorouter.pipeline import Joined, fills_mended, with_copper
    from autorouter.zones.fill import relief_fill
    b = generated.TestBoard("cut fill", 2, 30, 16)
    for ref, x, y, net in (("TP1", 4, 8, "GND"), ("TP2", 26, 8, "GND"), ("TP3", 15, 2, "S"), ("TP4", 15, 14, "S")):
        b.footprint(ref, "TestPoint", x, y, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, net)], True)
    b.zone("GND", ["F.Cu"], [(0.5, 6), (29.5, 6), (29.5, 10), (0.5, 10)])
    board = load_board(generated.write(b, tmp_path))
    config = load_config()
    rules = load_rules(board, config)
    gnd, s = (next(n for n, name in board.net_names.items() if name == want) for want in ("GND", "S"))
    pieces = predict(board, rules, [], [])
    before = Joined([], [], [], pieces, pad_groups(board, [], [], pieces), relief_fill(board, rules, [], []))
    trial = with_copper(board, rules, before, [Track((15, 2), (15, 14), 0.25, "F.Cu", s)], [])
    assert len(trial.groups[gnd]) == 2
    mended = fills_mended(board, rules, config, {gnd, s}, before, trial, lambda: "", s)
    assert len(mended.groups[gnd]) == 1 and len(mended.groups[s]) == 1
    assert check(board, rules, mended.tracks, mended.vias, only_new=True).violations == []


def fenced_pad(tmp_path):
    """TP1 (GND, F.Cu) in a ring of keep-out on F.Cu too tight for a via beside the pad, over a GND plane on B.Cu that
    joins J1: (the board's path, the board, its rules, GND, the fills predicted)."""
    b = generated.TestBoard("fenced", 2, 24, 10)
    b.footprint("TP1", "TestPoint", 10, 5, [b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.footprint("J1", "Pin", 18, 5, [b.tht_pad("J1", 1, 0, 0, "GND", True)], False)
    b.zone(None, ["F.Cu"], [(8.5, 3.5), (11.5, 3.5), (11.5, 6.5), (8.5, 6.5)],
           holes=[[(9.3, 4.3), (10.7, 4.3), (10.7, 5.7), (9.3, 5.7)]], keepout=True)
    b.zone("GND", ["B.Cu"], [(0.5, 0.5), (23.5, 0.5), (23.5, 9.5), (0.5, 9.5)])
    path = generated.write(b, tmp_path)
    board = load_board(path)
    rules = load_rules(board, load_config())
    return path, board, rules, board.pads[0].net, predict(board, rules, [], [])


def test_a_pad_fenced_in_on_its_layer_drops_to_its_plane_by_a_via_on_the_pad(tmp_path):
    # the via stands on the pad, into the plane, as the lattice's vias may (KiCad allows a via on its own net's pad)
    _, board, rules, gnd, pieces = fenced_pad(tmp_path)
    assert len(pad_groups(board, [], [], pieces)[gnd]) == 2
    found = detail_join(board, rules, gnd, [], [], pieces, 0.001)
    assert found is not None
    tracks, vias = found
    assert len(vias) == 1 and board.pads[0].outline.intersects(vias[0].body())
    assert check(board, rules, tracks, vias, only_new=True).violations == []
    assert len(pad_groups(board, tracks, vias, predict(board, rules, tracks, vias))[gnd]) == 1


@needs_kicad
def test_kicad_finds_the_pad_joined_by_a_via_on_it_and_no_error(tmp_path):
    path, board, rules, gnd, pieces = fenced_pad(tmp_path)
    tracks, vias = detail_join(board, rules, gnd, [], [], pieces, 0.001)
    before = kicad_verdict(path)
    path.write_text(with_items(path.read_text(), board.version, board.net_names, tracks, vias))
    after = kicad_verdict(path)
    assert before.unconnected == 1 and after.unconnected == 0
    assert after.violations_by_type == before.violations_by_type


def walled_pin(tmp_path):
    """A 0.4 mm QFN whose classes ask 0.16 mm tracks at 0.21 mm clearance: a pin may leave only in a band 0.01 mm either
    side of its axis, narrower than the slack every grid point keeps (k8_tinytapeout_demo's U6.36: 0.02 mm at 0.2 mm
    clearance). Its pin 3 first in the board's pads (legal_join's net)."""
    path = generated.write(generated.qfn(), tmp_path, classes=generated.default_class(track=0.16, clearance=0.21))
    board = load_board(path)
    pin = next(p for p in board.pads if p.footprint == "U1" and p.number == "3")
    board.pads.remove(pin)
    board.pads.insert(0, pin)
    return path, board, load_rules(board, load_config()), pin


def test_a_pin_with_no_open_point_between_its_neighbours_is_led_out_by_a_stub(tmp_path):
    _, board, rules, pin = walled_pin(tmp_path)
    tracks, _ = legal_join(board, rules)
    assert any(t.start == (pin.x, pin.y) for t in tracks)


@needs_kicad
def test_kicad_finds_the_pin_led_out_by_a_stub_joined_and_no_error(tmp_path):
    path, board, rules, _ = walled_pin(tmp_path)
    tracks, vias = legal_join(board, rules)
    before = kicad_verdict(path)
    path.write_text(with_items(path.read_text(), board.version, board.net_names, tracks, vias))
    after = kicad_verdict(path)
    assert after.unconnected == before.unconnected - 1
    assert after.violations_by_type == before.violations_by_type
