"""The lattice: obstacles around other nets' copper, the board edge, holes; portals on every layer of a pad."""
import numpy as np
import shapely
from shapely.geometry import box

from autorouter.board.geometry import circle
from autorouter.board.model import Board, CopperGraphic, Net, Pad
from autorouter.board.rules import DesignRules, NetClassRules
from autorouter.lattice import FREE, HARD, build_obstacles, disc_offsets, make_lattice
from autorouter.lattice.portals import pin_portals, stub_legal
from conftest import free_steps

RULES = DesignRules({"Default": NetClassRules("Default", 0.2, 0.2, 0.6, 0.3)}, {}, 0.5, 0.25, 0.0, "test")


def pad(net, x, y, size=1.0, layers=("F.Cu", "B.Cu"), drill=0.0):
    return Pad("U1", str(net), net, x, y, 0.0, "circle", layers, circle(x, y, size / 2), drill,
               circle(x, y, drill / 2) if drill else None)


def board(pads, graphics=()):
    return Board("t.kicad_pcb", 20241229, ["F.Cu", "B.Cu"], box(0, 0, 20, 10), [Net(0, ""), Net(1, "A"), Net(2, "B")],
                 pads, [], [], [], list(graphics))


def test_disc_offsets_strictly_inside():
    off = disc_offsets(1.0, 0.5)
    d = np.hypot(*off.T) * 0.5
    # radius 2 pitches, strictly: the 3x3 block; (2, 0) at exactly 1 mm is legal spacing, so not covered
    assert (d < 1.0).all() and len(off) == 9
    assert len(disc_offsets(1.01, 0.5)) == 13


def test_other_nets_copper_is_inflated_by_clearance_and_half_width():
    b = board([pad(1, 5, 5), pad(2, 15, 5, layers=("F.Cu",))])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    prof = build_obstacles(b, RULES, lat, 0.0)[RULES.classes["Default"]]
    reach = 0.5 + 0.2 + 0.1           # pad radius + clearance + half the track width
    for net_pad, layer in ((b.pads[0], 0), (b.pads[1], 0)):
        rr, cc = np.mgrid[0:lat.rows, 0:lat.cols]
        x, y = lat.xy(rr, cc)
        d = np.hypot(x - net_pad.x, y - net_pad.y)
        owner = prof.track_owner[layer]
        assert (owner[d < reach - 0.01] == net_pad.net).all()
        assert not np.isin(owner[(d > reach + 0.02) & (d < reach + 0.5)], [net_pad.net]).any()
    assert (prof.track_owner[1][np.hypot(*(np.array(lat.xy(*np.mgrid[0:lat.rows, 0:lat.cols])) -
                                          np.array([15, 5])[:, None, None])) < 0.5] == FREE).all()


def test_edge_and_graphics_are_hard():
    b = board([pad(1, 5, 5)], [CopperGraphic(box(9, 4, 11, 6), "F.Cu")])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    prof = build_obstacles(b, RULES, lat, 0.0)[RULES.classes["Default"]]
    assert (prof.track_owner[:, 0, :] == HARD).all()                       # on the edge
    r, c = int(round((5 - lat.y0) / 0.1)), int(round((10 - lat.x0) / 0.1))
    assert prof.track_owner[0, r, c] == HARD and prof.track_owner[1, r, c] == FREE


def test_vias_keep_hole_to_hole_from_any_hole():
    b = board([pad(1, 5, 5, size=1.6, drill=0.8)])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    prof = build_obstacles(b, RULES, lat, 0.0)[RULES.classes["Default"]]
    r, c = int(round((5 - lat.y0) / 0.1)), int(round((5 - lat.x0) / 0.1))
    assert prof.via_owner[r, c] == HARD                                   # not even net A's via in its own hole
    assert prof.track_owner[0, r, c] == 1                                 # but net A's track may end there


def test_portals_on_every_layer_of_a_through_hole_pad():
    b = board([pad(1, 5.03, 5.07), pad(2, 15, 5, layers=("F.Cu",))])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.25)
    profiles = build_obstacles(b, RULES, lat, 0.0)
    portals = pin_portals([b.pads[0]], {"F.Cu": 0, "B.Cu": 1}, profiles[RULES.classes["Default"]], lat, 4)
    layers = set((portals.nodes // lat.plane).tolist())
    assert layers == {0, 1}
    single = pin_portals([b.pads[1]], {"F.Cu": 0, "B.Cu": 1}, profiles[RULES.classes["Default"]], lat, 4)
    assert set((single.nodes // lat.plane).tolist()) == {0}
    x, y = lat.node_xy(portals.nodes)
    assert np.all(np.hypot(x - 5.03, y - 5.07) <= portals.length + 1e-9 + 0.5)


def test_classes_of_the_same_sizes_share_one_raster():
    rules = DesignRules({"Default": NetClassRules("Default", 0.2, 0.2, 0.6, 0.3),
                         "Fast": NetClassRules("Fast", 0.2, 0.2, 0.6, 0.3),
                         "Wide": NetClassRules("Wide", 0.4, 0.2, 0.6, 0.3)}, {2: "Fast"}, 0.5, 0.25, 0.0, "test")
    b = board([pad(1, 5, 5), pad(2, 15, 5, layers=("F.Cu",))])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    profiles = build_obstacles(b, rules, lat, 0.0)
    default, fast, wide = (profiles[rules.classes[n]] for n in ("Default", "Fast", "Wide"))
    assert fast.track_owner is default.track_owner and fast.stub_trees is default.stub_trees
    assert (fast.rules.name, default.rules.name) == ("Fast", "Default")
    assert wide.track_owner is not default.track_owner
    alone = build_obstacles(b, rules, lat, 0.0)[rules.classes["Fast"]]        # as if built for itself
    assert np.array_equal(alone.track_owner, fast.track_owner) and np.array_equal(alone.via_owner, fast.via_owner)
    together = build_obstacles(b, rules, lat, 0.0)           # both sizes rasterised at once, in threads
    together.prepare(rules.classes.values())
    assert len(together.by_sizes) == 2
    for name, one in (("Fast", fast), ("Wide", wide)):
        both = together[rules.classes[name]]
        assert np.array_equal(both.track_owner, one.track_owner) and np.array_equal(both.via_owner, one.via_owner)


def test_a_profile_made_near_some_boxes_is_the_whole_profile_within_them():
    pads = [pad(1 + k % 2, 1 + 2.2 * k, 3 + (k % 3), drill=0.3 if k % 4 == 0 else 0.0) for k in range(8)]
    b = board(pads, [CopperGraphic(box(9, 6, 9.4, 9.8), "F.Cu")])
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    profiles = build_obstacles(b, RULES, lat, 0.0)
    cls = NetClassRules("Thin", 0.1, 0.2, 0.4, 0.2)
    boxes = np.array([[4.0, 2.0, 6.0, 4.0], [8.0, 8.0, 11.0, 10.0]])
    near = profiles.near(cls, boxes)
    assert not profiles.by_sizes                # nothing rasterised over the whole board for it
    whole = profiles[cls]
    inside = np.zeros((lat.rows, lat.cols), bool)
    for x0, y0, x1, y1 in boxes:
        rows, cols = lat.window(x0, y0, x1, y1)
        inside[rows, cols] = True
    assert np.array_equal(near.track_owner[:, inside], whole.track_owner[:, inside])
    assert np.array_equal(near.via_owner[inside], whole.via_owner[inside])
    assert not np.array_equal(near.track_owner, whole.track_owner)      # farther, what it left out
    stubs = (np.array([[4.2, 2.5], [9.2, 8.5]]), np.array([[5.8, 3.9], [10.8, 9.6]]))
    for layer in (0, 1):
        for net in (1, 2):
            assert np.array_equal(stub_legal(near, layer, net, *stubs), stub_legal(whole, layer, net, *stubs))


def test_a_step_between_two_free_nodes_keeps_its_clearance():
    """A track runs from lattice node to lattice node: where both ends of a step are free, the whole step keeps its
    clearance from other nets' copper, round pads and the corners of square ones included (a step is a chord: it
    cuts across a curve nearer than its two ends)."""
    rng = np.random.default_rng(7)
    pads = []
    for k in range(24):
        x, y = 1 + (k % 8) * 2.3 + rng.random() * 0.1, 2 + (k // 8) * 2.7 + rng.random() * 0.1
        pads.append(pad(1, x, y, size=0.35, layers=("F.Cu",)) if k % 2 else
                    Pad("U2", str(k), 1, x, y, 0.0, "rect", ("F.Cu",), box(x - 0.2, y - 0.2, x + 0.2, y + 0.2)))
    b = board(pads)
    lat = make_lattice(b.outline.bounds, b.copper_layers, 0.1)
    cls = RULES.classes["Default"]
    free = build_obstacles(b, RULES, lat, 0.0)[cls].track_owner[0] == FREE
    copper = shapely.union_all([p.outline for p in pads])
    # the circles are polygons drawn outside the true curve, so measuring to them errs on the safe side
    gap = shapely.distance(free_steps(lat, free), copper)
    assert gap.min() >= cls.clearance + cls.track_width / 2 - 1e-9, gap.min()


def test_lattice_lines_run_through_the_channels_between_a_bgas_balls(tmp_path):
    # tracks of the board's minimum, 0.1 mm, with 0.12 mm clearance pass between 0.4 mm balls at 0.8 mm in a band
    # 0.06 mm wide, which the automatic pitch would hold by chance: the largest pitch below it that divides the ball
    # pitch, and a node at the centre of every four balls, where a dog-bone via fits. Where the narrowest track
    # cannot pass at all (0.15 mm with 0.2 mm clearance), the lattice stays as it was.
    import generated
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.lattice.align import ball_grid
    from autorouter.pipeline import auto_pitch, board_lattice
    config = RouterConfig()
    b = load_board(generated.write(generated.bga(), tmp_path, generated.default_class(track=0.12, clearance=0.12),
                                   {"min_track_width": 0.1, "min_clearance": 0.1}))
    grid = ball_grid(b.pads)
    assert grid is not None and abs(grid.pitch - 0.8) < 1e-9 and abs(grid.ball - 0.4) < 1e-9
    rules = load_rules(b, config)
    lat = board_lattice(b, rules, config)
    assert abs(lat.pitch - 0.1) < 1e-9 and lat.pitch < auto_pitch(rules, config)
    for p in b.pads:
        if p.footprint == "U1":
            for dx in (-0.4, 0.4):
                col, row = (p.x + dx - lat.x0) / lat.pitch, (p.y + dx - lat.y0) / lat.pitch
                assert abs(col - round(col)) < 1e-6 and abs(row - round(row)) < 1e-6
    assert ball_grid([p for p in b.pads if p.footprint != "U1"]) is None        # test pads in rows: no grid
    wide = tmp_path / "wide"
    wide.mkdir()
    b = load_board(generated.write(generated.bga(), wide, generated.default_class()))
    rules = load_rules(b, config)
    assert board_lattice(b, rules, config).pitch == auto_pitch(rules, config)


def test_asked_for_lattice_lines_run_on_the_axes_of_a_fine_rows_pins(tmp_path):
    # 0.2 mm tracks with 0.127 mm clearance leave a 0.4 mm QFN's pin straight only within 0.073 mm of its axis, a
    # band narrower than the automatic pitch (0.164 mm): asked for (pin_lattice), the largest pitch below it that
    # divides the pin pitch, with a line on every pin's axis, both ways. A coarser row, or no row, leaves the
    # lattice as it was; so does the default
    import generated
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.lattice.align import pin_row
    from autorouter.pipeline import auto_pitch, board_lattice
    config = RouterConfig(pin_lattice=True)
    b = load_board(generated.write(generated.qfn(), tmp_path, generated.default_class(track=0.2, clearance=0.127)))
    row = pin_row(b.pads)
    assert row is not None and abs(row.pitch - 0.4) < 1e-9 and abs(row.pad - 0.2) < 1e-9
    rules = load_rules(b, config)
    lat = board_lattice(b, rules, config)
    assert abs(lat.pitch - 0.4 / 3) < 1e-9 and lat.pitch < auto_pitch(rules, config)
    for p in b.pads:
        if p.footprint == "U1":
            along = (p.x - lat.x0) / lat.pitch if p.outline.bounds[3] - p.outline.bounds[1] > 0.5 else \
                (p.y - lat.y0) / lat.pitch
            assert abs(along - round(along)) < 1e-6
    assert board_lattice(b, rules, RouterConfig()).pitch == auto_pitch(rules, RouterConfig())
    assert pin_row([p for p in b.pads if p.footprint != "U1"]) is None          # test points: no row
    coarse = tmp_path / "coarse"
    coarse.mkdir()
    b = load_board(generated.write(generated.qfn(pitch=0.8, pad_width=0.4), coarse,
                                   generated.default_class(track=0.2, clearance=0.127)))
    rules = load_rules(b, config)
    assert pin_row(b.pads) is None and board_lattice(b, rules, config).pitch == auto_pitch(rules, config)
