"""PathFinder's accounting: symmetric add and remove, and conflicts seen from both sides."""
import numpy as np
import pytest

from autorouter.board.rules import DesignRules, NetClassRules
from autorouter.lattice.grid import make_lattice
from autorouter.pathfinder.congestion import Stub, Connection, NetRoute, Occupancy, class_radii
from conftest import channel_set_up, corpus_board, free_steps, needs_corpus

NARROW = NetClassRules("Default", 0.2, 0.2, 0.6, 0.3)
WIDE = NetClassRules("POWER", 0.6, 0.2, 0.8, 0.4)
RULES = DesignRules({"Default": NARROW, "POWER": WIDE}, {}, 0.0, 0.25, 0.0, "test")


def straight(lat, layer, row, c0, c1):
    return Connection(lat.index(layer, row, np.arange(c0, c1)).astype(np.int64))


def test_add_then_remove_leaves_nothing():
    lat = make_lattice((0, 0, 10, 10), ["F.Cu", "B.Cu"], 0.2)
    occ = Occupancy(lat)
    route = NetRoute([straight(lat, 0, 10, 5, 30)])
    route.add(Connection(np.array([lat.index(0, 10, 30), lat.index(1, 10, 30)], dtype=np.int64),
                         [Stub(0, ((1.0, 2.0), (1.0, 2.2)), np.zeros(0, np.int64))]))
    occ.footprint(route, lambda size: class_radii(NARROW, RULES, 0.01))
    occ.add(route, +1)
    assert occ.track.max() == 1 and occ.via.max() == 1 and occ.conflicts(route) == 0
    assert (occ.track.reshape(2, -1)[1] > 0).any()           # the via covers the other layer too
    occ.add(route, -1)
    assert not occ.track.any() and not occ.via.any() and not occ.centres.any() and not occ.via_centres.any()


def test_neighbours_two_lines_apart_are_legal_one_line_is_not():
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], (0.2 + 0.2 + 0.01) / 2)
    rules = DesignRules({"Default": NARROW}, {}, 0.0, 0.25, 0.0, "test")
    radii = class_radii(NARROW, rules, 0.01)
    occ = Occupancy(lat)
    a = NetRoute([straight(lat, 0, 10, 2, 20)])
    occ.footprint(a, lambda size: radii)
    occ.add(a, +1)
    for gap, legal in ((2, True), (1, False)):
        b = NetRoute([straight(lat, 0, 10 + gap, 2, 20)])
        occ.footprint(b, lambda size: radii)
        assert occ.conflicts_with_others(b) != legal


def test_a_wide_net_sees_a_narrow_neighbour_the_narrow_cover_misses():
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], 0.2)
    occ = Occupancy(lat)
    narrow = NetRoute([straight(lat, 0, 10, 2, 20)])
    occ.footprint(narrow, lambda size: class_radii(NARROW, RULES, 0.01))
    occ.add(narrow, +1)
    wide = NetRoute([straight(lat, 0, 13, 2, 20)])      # 0.6 mm apart: needs 0.1 + 0.2 + 0.3 = 0.6 plus margin
    occ.footprint(wide, lambda size: class_radii(WIDE, RULES, 0.01))
    assert (occ.track[wide.nodes()] == 0).all()            # outside the narrow net's cover ...
    assert occ.conflicts_with_others(wide)                 # ... but the narrow net is inside the wide one's


def test_a_strict_search_is_kept_from_where_its_own_cover_would_reach_others():
    # where other nets are walls, the search sees only their covers; the nodes a wide net's own cover would reach a
    # narrow neighbour from (Occupancy.reached_by) are exactly those where a route would conflict with it
    lat = make_lattice((0, 0, 10, 10), ["F.Cu", "B.Cu"], 0.2)
    occ = Occupancy(lat)
    narrow = NetRoute([straight(lat, 0, 10, 2, 20)])
    occ.footprint(narrow, lambda size: class_radii(NARROW, RULES, 0.01))
    occ.add(narrow, +1)
    radii = class_radii(WIDE, RULES, 0.01)
    track, via = occ.reached_by(radii, np.flatnonzero(occ.centres), np.flatnonzero(occ.via_centres))
    assert track.size > (occ.track > 0).sum()              # farther than the narrow net's own cover
    for node in lat.index(0, np.arange(5, 16), 11).tolist() + lat.index(1, np.arange(5, 16), 11).tolist():
        probe = NetRoute([Connection(np.array([node], np.int64))])
        occ.footprint(probe, lambda size: radii)
        assert occ.conflicts_with_others(probe) == (node in track), node
    site = lat.index(0, 13, 11)
    hop = NetRoute([Connection(np.array([site, site + lat.plane], np.int64))])      # a via
    occ.footprint(hop, lambda size: radii)
    assert occ.conflicts_with_others(hop) and site in via


@pytest.mark.parametrize("count", [3, 400, 4000])
def test_discs_around_nodes_are_every_node_within_the_radius(count):
    # a few nodes are spread disc by disc, many are marked and dilated by shifts: both give the disc's definition
    rng = np.random.default_rng(count)
    lat = make_lattice((0, 0, 9, 7), ["F.Cu", "In1.Cu", "B.Cu"], 0.1)
    occ = Occupancy(lat)
    nodes = rng.integers(0, lat.size, count)
    sites = rng.integers(0, lat.plane, count // 20 + 1)
    radii = (0.35, 0.42, 0.5, 0.27)
    track, via = occ.discs_around(nodes, sites, *radii)
    layer, row, col = lat.unravel(np.arange(lat.size))
    n_layer, n_row, n_col = lat.unravel(nodes)
    s_row, s_col = np.divmod(sites, lat.cols)

    def within(rows, cols, at_rows, at_cols, radius):
        d2 = (rows[:, None] - at_rows[None]) ** 2 + (cols[:, None] - at_cols[None]) ** 2
        return d2 * lat.pitch ** 2 < radius ** 2 - 1e-9

    same_layer = layer[:, None] == n_layer[None]
    expect_track = ((within(row, col, n_row, n_col, radii[0]) & same_layer).any(1)
                    | within(row, col, s_row, s_col, radii[1]).any(1))
    p_row, p_col = np.divmod(np.arange(lat.plane), lat.cols)
    expect_via = within(p_row, p_col, n_row, n_col, radii[2]).any(1) | within(p_row, p_col, s_row, s_col,
                                                                             radii[3]).any(1)
    assert np.array_equal(track, np.flatnonzero(expect_track))
    assert np.array_equal(via, np.flatnonzero(expect_via))


def random_changes(occ, rng, steps: int):
    """Bumps (some with an index twice, some larger than a copy), walls frozen and thawed, as PathFinder makes them."""
    from autorouter.pathfinder.finishing import FROZEN
    for k in range(steps):
        if k % 7 == 3:
            occ.scale(times=FROZEN)
        elif k % 7 == 5:
            occ.scale(over=FROZEN)
        else:
            n = int(rng.choice([5, 50, occ.track.size // 3]))
            nodes = rng.integers(0, occ.track.size, n)
            sites = np.unique(rng.integers(0, occ.via.size, n // 4 + 1))
            delta = int(rng.choice([1, 2, 5]))
            occ.bump(nodes, sites, delta)
            if rng.integers(2):
                occ.bump(nodes, sites, -delta)


def test_a_copy_that_follows_the_changes_equals_the_occupancy():
    # what the GPU's copy of the prices does (device_costs.follow), replayed here in NumPy
    from autorouter.pathfinder.congestion import Changes
    from autorouter.pathfinder.device_costs import follow
    rng = np.random.default_rng(7)
    occ = Occupancy(make_lattice((0, 0, 6, 5), ["F.Cu", "In1.Cu", "B.Cu"], 0.1))
    occ.changes = Changes(occ.track.size // 4)
    copy, copies = None, 0
    for _ in range(30):
        random_changes(occ, rng, int(rng.integers(1, 6)))
        if occ.changes.whole or copy is None:
            copy, copies = (occ.track.copy(), occ.via.copy()), copies + 1
        else:
            follow(copy, occ.changes.steps, np)
        occ.changes.taken()
        assert np.array_equal(copy[0], occ.track) and np.array_equal(copy[1], occ.via)
    assert 1 < copies < 30          # followed mostly, copied where the changes outgrew a copy


class AnyEngine:
    """A search engine known only by the search interface: CPU searches, under a name the pathfinder must not read
    (engine.name is for reports)."""
    xp = np

    def __init__(self):
        from autorouter.search.cpu import CpuEngine
        self.inner = CpuEngine(64)

    def search(self, requests, keep_dist=False, should_stop=None):
        return self.inner.search(requests, keep_dist, should_stop)

    @property
    def name(self):
        raise AssertionError("the pathfinder asked which engine it has")


def test_negotiation_never_asks_which_engine_it_has(tmp_path):
    from autorouter.pathfinder import build_tasks, negotiate
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path)
    outcomes = [negotiate(build_tasks(board, rules, profiles, lattice, config), lattice, rules, engine,
                          config) for engine in (CpuEngine(64), AnyEngine())]
    routes = [{net: [list(p) for p in r.paths] for net, r in o.routes.items()} for o in outcomes]
    assert routes[0] == routes[1] and len(routes[0]) == 3 and all(routes[0].values())


def test_a_step_outside_a_stubs_cover_keeps_its_clearance_from_the_stub():
    """A pad stub leaves the lattice: another net's step between two nodes its cover leaves free may not pass nearer
    the stub's off-lattice end than the two nets' clearance (a step is a chord of the cover's disc there)."""
    import shapely
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], 0.2)
    occ = Occupancy(lat)
    radii = class_radii(NARROW, RULES, 0.0)
    worst = np.inf
    for k in range(40):                               # stub ends at many offsets from the lattice
        end = (1.013 + 0.197 * k, 5.057 + 0.0047 * k)
        node = lat.index(0, 30, int(round((end[0] - lat.x0) / 0.2)))
        route = NetRoute([Connection(np.array([node], np.int64),
                                     [Stub(0, (end, tuple(map(float, lat.node_xy(node)))), np.zeros(0, np.int64))])])
        occ.footprint(route, lambda size: radii)
        free = np.ones(lat.size, bool)
        free[route.cover_track] = False
        stub = shapely.LineString(route.connections[0].stubs[0].points)
        worst = min(worst, shapely.distance(free_steps(lat, free.reshape(lat.rows, lat.cols)), stub).min())
    assert worst >= NARROW.track_width + NARROW.clearance - 1e-9, worst


def test_a_wall_blocks_the_nodes_whose_occupancy_reaches_it_and_prices_the_rest():
    # the final repair walls off every other net's cover (wall 1); a local negotiation walls off the frozen nets,
    # counted FROZEN times, and prices the moving ones
    from types import SimpleNamespace
    from autorouter.config import RouterConfig
    from autorouter.lattice.obstacles import FREE
    from autorouter.pathfinder.costs import roi_costs
    from autorouter.search.constants import BLOCKED, STEP
    lat = make_lattice((0, 0, 2, 2), ["F.Cu"], 0.5)
    occ = Occupancy(lat)
    occ.track[:3] = [0, 1, 3]
    task = SimpleNamespace(net=1, profile=SimpleNamespace(track_owner=np.full(lat.shape, FREE, np.int32),
                                                          via_owner=np.full(lat.shape[1:], FREE, np.int32)))
    whole = slice(0, lat.rows), slice(0, lat.cols)
    for wall, blocked in ((0, []), (1, [1, 2]), (3, [2])):
        cost = roi_costs(task, lat, occ, *whole, 1.0, RouterConfig(), wall=wall)[0].ravel()[:3]
        assert [i for i in range(3) if cost[i] == BLOCKED] == blocked
        assert all(cost[i] == STEP * (1 + occ.track[i]) for i in range(3) if i not in blocked)


def test_a_route_left_in_the_occupancy_is_no_price_to_its_own_net(tmp_path):
    """Nets searched together against one snapshot keep their routes in the occupancy (batch_overlap): the costs a
    net sees then equal those it sees with its route taken out, in the window and at its portals."""
    from autorouter.pathfinder import build_tasks, negotiate
    from autorouter.pathfinder.costs import CostSnapshot, node_penalty, own_cover, roi_costs
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path, nets=6)
    tasks = build_tasks(board, rules, profiles, lattice, config)
    outcome = negotiate(tasks, lattice, rules, CpuEngine(64), config)
    occ, task = outcome.context.occ, tasks[2]
    route = outcome.routes[task.net]
    occ.hist_track[:] = np.float32(0.4) * (occ.track > 1)
    rows, cols = slice(2, lattice.rows - 1), slice(1, lattice.cols - 3)
    portals = task.pins[0].portals.nodes
    kept = roi_costs(task, lattice, occ, rows, cols, 3.0, config, own=own_cover(lattice, route, rows, cols))
    kept_at_portals = node_penalty(occ, portals, 3.0, route)
    occ.add(route, -1)
    out = roi_costs(task, lattice, occ, rows, cols, 3.0, config)
    assert all(np.array_equal(a, b) for a, b in zip(kept, out))
    assert np.array_equal(kept_at_portals, node_penalty(occ, portals, 3.0))
    assert isinstance(CostSnapshot(lattice, occ, 3.0, config).window(task, rows, cols, None, 0.0, route).own_track,
                      np.ndarray)


def test_nets_searched_together_where_they_overlap_end_legal(tmp_path):
    """batch_overlap: the nets of an iteration go to the engine in batches whatever their regions; what negotiation
    ends with is legal and joins every pin of an easy channel, the same each time."""
    from dataclasses import replace
    from autorouter.pathfinder import build_tasks, negotiate
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path, nets=6)
    config = replace(config, batch_overlap=True)
    runs = []
    for _ in range(2):
        tasks = build_tasks(board, rules, profiles, lattice, config)
        outcome = negotiate(tasks, lattice, rules, CpuEngine(64), config)
        occ = outcome.context.occ
        assert all(occ.conflicts(r) == 0 for r in outcome.routes.values())
        assert all(len(outcome.routes[t.net].connections) == t.connections for t in tasks)
        assert outcome.context.rois > outcome.context.launches
        runs.append([np.concatenate(outcome.routes[t.net].paths) for t in tasks])
    assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_nets_in_conflict_with_each_other_never_share_a_batch(tmp_path):
    """Routed blind to each other, the channel's nets conflict; batch_overlap puts no two of them that conflict in
    one batch, and every net in one."""
    from dataclasses import replace
    from autorouter.pathfinder import build_tasks
    from autorouter.pathfinder.congestion import class_radii
    from autorouter.pathfinder.router import Context, batches, conflict_partners, route_batch
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path, nets=6)
    config = replace(config, batch_overlap=True, batch_size=4)
    tasks = build_tasks(board, rules, profiles, lattice, config)
    occ = Occupancy(lattice)
    ctx = Context(lattice, occ, CpuEngine(64), config, rules)
    routes = dict(zip([t.net for t in tasks], route_batch(tasks, ctx)))
    for t in tasks:
        occ.footprint(routes[t.net], lambda size: class_radii(size, rules, config.clearance_margin))
        occ.add(routes[t.net], +1)
    partners = conflict_partners([t.net for t in tasks], routes, occ)
    assert partners and all(a in partners[b] for a in partners for b in partners[a])
    groups = batches(tasks, lattice, ctx, routes)
    assert sorted(t.net for g in groups for t in g) == sorted(t.net for t in tasks)
    assert all(len(g) <= 4 and not any(b.net in partners.get(a.net, ()) for a in g for b in g) for g in groups)


def test_negotiation_cut_by_its_deadline_still_ends_legal(tmp_path):
    """until: past it no batch is routed again, but what was routed is settled (conflicts dropped, the nets that
    lost connections repaired) and what was not is named as cut by the time limit."""
    import time
    from autorouter.pathfinder import build_tasks, negotiate
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path, nets=6)
    tasks = build_tasks(board, rules, profiles, lattice, config)
    outcome = negotiate(tasks, lattice, rules, CpuEngine(64), config, until=time.monotonic() - 1)
    assert outcome.iterations == 1 and outcome.stopped_early == "time limit"
    occ = outcome.context.occ
    assert all(occ.conflicts(r) == 0 for r in outcome.routes.values())
    assert any(r.connections for r in outcome.routes.values())
    assert all(why.startswith("time limit") for r in outcome.routes.values() for why in r.failed)


def test_the_best_iteration_comes_back_with_its_occupancy():
    from autorouter.pathfinder.router import Best
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], 0.2)
    radii = lambda size: class_radii(NARROW, RULES, 0.01)
    occ = Occupancy(lat)

    def placed(row):
        route = NetRoute([straight(lat, 0, row, 2, 20)])
        occ.footprint(route, radii)
        return route
    good = {1: placed(10), 2: placed(30)}
    for r in good.values():
        occ.add(r, +1)
    best = Best()
    best.offer(good, 0, 0)
    occ.add(good[2], -1)
    routes = {1: good[1], 2: placed(11)}                  # a worse iteration: net 2 on net 1's row
    occ.add(routes[2], +1)
    best.offer(routes, 2, 10)
    best.restore(routes, occ)
    assert routes == good
    expected = Occupancy(lat)
    for r in good.values():
        expected.add(r, +1)
    assert np.array_equal(occ.track, expected.track) and np.array_equal(occ.via, expected.via)


def test_the_best_moment_survives_routes_grown_in_place():
    """Finishing adds connections to a net's route in place: a way made and then undone (make_ways) must bring the
    routes and the occupancy back as they were, not as they grew."""
    from autorouter.pathfinder.router import Best
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], 0.2)
    radii = lambda size: class_radii(NARROW, RULES, 0.01)
    occ = Occupancy(lat)
    route = NetRoute([straight(lat, 0, 10, 2, 20)])
    occ.footprint(route, radii)
    occ.add(route, +1)
    expected = occ.track.copy()
    routes = {1: route}
    before = Best()
    assert before.offer(routes)
    occ.add(route, -1)
    route.add(straight(lat, 0, 30, 2, 20))            # the way made: grown in place
    occ.footprint(route, radii)
    occ.add(route, +1)
    before.restore(routes, occ)
    assert len(routes[1].connections) == 1
    assert np.array_equal(occ.track, expected)


def test_a_task_splits_into_single_joins_from_its_root():
    from autorouter.pathfinder.finishing import single_joins
    from autorouter.pathfinder.nets import NetTask
    task = NetTask(3, "GND", NARROW, None, ["root", "a", "b"])
    assert [t.pins for t in single_joins(task)] == [["root", "a"], ["root", "b"]]
    two = NetTask(3, "GND", NARROW, None, ["root", "a"])
    assert single_joins(two) == [two]


@pytest.mark.parametrize("minimum, predefined", [(0.1, []), (0.0, [0.0, 0.1, 0.25])],
                         ids=["the board's minimum width", "the narrowest predefined width"])
def test_a_net_with_no_way_at_its_class_width_is_necked_in_the_first_iteration(tmp_path, minimum, predefined):
    """Its class's 0.8 mm track cannot pass the 0.7 mm slot out of its pad's pocket, so it finds no path even with
    every other net only a price: negotiation necks it at once (to the board's minimum width, or where the board
    sets none, to the narrowest of the project's predefined widths) and routes it, instead of ending with it
    unrouted for finishing to find."""
    from functools import partial
    import generated
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.pathfinder import negotiate
    from autorouter.pathfinder.nets import neck_tasks
    from autorouter.pipeline import set_up
    from autorouter.search.cpu import CpuEngine
    path = generated.write(generated.slot(), tmp_path, generated.default_class(0.8, 0.2),
                           {"min_track_width": minimum, "min_clearance": 0.1}, {"track_widths": predefined})
    board, config = load_board(path), RouterConfig(sizes="class")
    rules = load_rules(board, config)
    s = set_up(board, rules, config)
    assert [t.rules.track_width for t in s.tasks] == [0.8]
    neck = partial(neck_tasks, board=board, rules=rules, profiles=s.profiles, lattice=s.lattice, config=config)
    outcome = negotiate(s.tasks, s.lattice, rules, CpuEngine(64), config, neck=neck)
    assert outcome.converged and [t.rules.track_width for t in outcome.tasks] == [0.1]
    assert [(len(r.connections), r.failed) for r in outcome.routes.values()] == [(1, [])]


def test_a_neck_that_finds_no_way_either_is_undone(tmp_path):
    """The slot out of the pocket is too narrow for any track the board allows: necked in the first iteration, the
    net still finds no way in the second, so its width was not what blocked it. It goes back to its class's width
    (a power net must not end thin for nothing) and is never necked again."""
    import generated
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.pathfinder import negotiate
    from autorouter.pathfinder.nets import neck_tasks
    from autorouter.pipeline import set_up
    from autorouter.search.cpu import CpuEngine
    path = generated.write(generated.slot(gap=0.2), tmp_path, generated.default_class(0.8, 0.2),
                           {"min_track_width": 0.1, "min_clearance": 0.1})
    board, config = load_board(path), RouterConfig(sizes="class")
    rules = load_rules(board, config)
    s = set_up(board, rules, config)
    asked = []

    def neck(tasks, nets):
        asked.append(set(nets))
        return neck_tasks(tasks, nets, board=board, rules=rules, profiles=s.profiles, lattice=s.lattice,
                          config=config)
    outcome = negotiate(s.tasks, s.lattice, rules, CpuEngine(64), config, neck=neck)
    assert [t.rules.track_width for t in outcome.tasks] == [0.8]
    assert len(asked) == 1
    assert [(len(r.connections), len(r.failed)) for r in outcome.routes.values()] == [(0, 1)]


def test_roi_margins_grow_no_further_than_the_cap(tmp_path):
    """A net in conflict searches a wider ROI each iteration, up to roi_margin_max where one is set: on a large
    board a margin grown to the whole lattice makes every late search a whole-board one."""
    from dataclasses import replace as with_
    from conftest import channel_set_up
    from autorouter.pathfinder import negotiate
    from autorouter.pathfinder.nets import build_tasks
    from autorouter.search.cpu import CpuEngine
    board, rules, config, lattice, profiles = channel_set_up(tmp_path, 4)
    margins = {}
    for cap in (0.0, 2.0):
        c = with_(config, roi_margin=1.0, roi_margin_max=cap)
        out = negotiate(build_tasks(board, rules, profiles, lattice, c), lattice, rules, CpuEngine(64), c)
        assert out.converged
        margins[cap] = max(out.context.roi_margin.values())
    assert margins == {0.0: 2.25, 2.0: 2.0}


@pytest.mark.parametrize("sizes", ["compact", "class"])
def test_smaller_sizes_are_said_once_where_asked_and_per_net_where_necked(tmp_path, sizes):
    """`sizes: compact` routes the nets of the Default class at the board's smallest sizes by choice: one note for
    the class, not one per net blaming a lack of room. With `sizes: class`, a net necked to the board's minimum
    width is said by name, with the reason."""
    import generated
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.pathfinder.nets import neck_tasks
    from autorouter.pipeline import set_up
    path = generated.write(generated.thermal_zone(), tmp_path, generated.default_class(0.8, 0.2),
                           {"min_track_width": 0.1, "min_clearance": 0.1})
    board, config = load_board(path), RouterConfig(sizes=sizes)
    rules = load_rules(board, config)
    s = set_up(board, rules, config)
    assert len(s.tasks) > 1
    notes = {note for t in s.tasks for note in t.notes}
    if sizes == "compact":
        (note,) = notes
        assert note.startswith("nets of class Default: routed at the board's smallest sizes (0.1 mm wide") and \
            "`sizes: compact`" in note
    else:
        assert not notes
        tasks, changed = neck_tasks(s.tasks, {s.tasks[0].net}, board=board, rules=rules, profiles=s.profiles,
                                    lattice=s.lattice, config=config)
        assert changed == {s.tasks[0].net}
        assert tasks[0].notes[0] == (f"net {tasks[0].name}: some of it routed 0.1 mm wide (class Default: 0.8 mm), "
                                     "where the class width found no room")


def scan_drop(tasks, routes, occ, radii) -> list[int]:
    """drop_conflicts as it was written first: every connection counted again after each drop."""
    dropped = []
    while True:
        worst, where = 0, None
        for t in tasks:
            for i, conn in enumerate(routes[t.net].connections):
                n = occ.connection_conflicts(conn)
                if n > worst:
                    worst, where = n, (t, i)
        if where is None:
            return dropped
        t, i = where
        occ.add(routes[t.net], -1)
        routes[t.net].remove(i)
        occ.footprint(routes[t.net], radii)
        occ.add(routes[t.net], +1)
        dropped.append(t.net)


@pytest.mark.parametrize("seed", range(6))
def test_conflicts_are_dropped_in_the_order_a_full_scan_gives(seed):
    """drop_conflicts keeps counts as bounds in a heap; it must drop what counting every connection again after
    each drop would, down to the ties, and leave the same routes and occupancy."""
    from types import SimpleNamespace
    from autorouter.pathfinder.router import drop_conflicts
    lat = make_lattice((0, 0, 12, 12), ["F.Cu", "B.Cu"], 0.2)
    radii = lambda size: class_radii(NARROW, RULES, 0.01)      # noqa: E731

    def board():
        occ, routes, tasks, rng = Occupancy(lat), {}, [], np.random.default_rng(seed)
        for net in range(1, 9):
            route = NetRoute()
            for _ in range(rng.integers(1, 4)):
                layer, row, c0 = rng.integers(0, 2), rng.integers(5, 55), rng.integers(0, 30)
                conn = straight(lat, layer, row, c0, c0 + rng.integers(5, 25))
                if route.connections and rng.random() < 0.5:
                    conn.parent = route.connections[-1]
                route.add(conn)
            occ.footprint(route, radii)
            occ.add(route, +1)
            routes[net] = route
            tasks.append(SimpleNamespace(net=net))
        return occ, routes, tasks
    occ_a, routes_a, tasks_a = board()
    occ_b, routes_b, tasks_b = board()
    expected = scan_drop(tasks_a, routes_a, occ_a, radii)
    assert expected and drop_conflicts(tasks_b, routes_b, occ_b, radii, "dropped") == expected
    assert all(len(routes_a[n].connections) == len(routes_b[n].connections) for n in routes_a)
    assert (occ_a.track == occ_b.track).all() and (occ_a.via == occ_b.via).all()


def test_nets_are_necked_late_only_where_an_iteration_still_fits_the_time():
    # necking rips the nets in conflict up; an iteration cut by the time limit would leave them with no route at all
    import time
    from autorouter.pathfinder.router import time_for_another
    now = time.monotonic()
    assert time_for_another(now - 10, None)
    assert time_for_another(now - 1, now + 60)
    assert not time_for_another(now - 10, now + 5)


def test_a_large_net_keeps_the_branches_that_meet_no_one():
    """kept_branches: of a net routed as a comb (a trunk from pin 0 to pin 1, branches down to pins 2 and 3, and pin
    4 joined from pin 3's pad), another net crossing the branch to pin 3 rips up that branch and what hangs from it
    (pin 4, joined only through pin 3), and nothing else."""
    from types import SimpleNamespace
    from autorouter.pathfinder.branches import kept_branches
    lat = make_lattice((0, 0, 12, 5), ["F.Cu"], 0.2)
    occ = Occupancy(lat)
    radii = lambda size: class_radii(NARROW, RULES, 0.01)
    trunk = Connection(lat.index(0, 2, np.arange(2, 51)).astype(np.int64), pin=1, from_pin=0)
    to_2 = Connection(lat.index(0, np.arange(3, 23), 10).astype(np.int64), parent=trunk, pin=2)
    to_3 = Connection(lat.index(0, np.arange(3, 23), 40).astype(np.int64), parent=trunk, pin=3)
    to_4 = Connection(lat.index(0, 22, np.arange(41, 56)).astype(np.int64), pin=4, from_pin=3)
    comb = NetRoute([trunk, to_2, to_3, to_4])
    other = NetRoute([straight(lat, 0, 12, 36, 45)])
    for route in (comb, other):
        occ.footprint(route, radii)
        occ.add(route, +1)
    task = SimpleNamespace(connections=4, pins=[None] * 5)
    kept, joined = kept_branches(task, comb, occ, 0.5, least=2)
    assert kept.connections == [trunk, to_2] and joined == [0, 1, 2]
    assert kept_branches(task, comb, occ, 0.5, least=5) is None       # too few connections: routed whole
    occ.add(other, -1)
    assert kept_branches(task, comb, occ, 0.5, least=2) is None       # nothing in conflict: routed whole


def negotiated(name: str, folder, neck: bool = False, **settings):
    """A corpus board's negotiation on the CPU with these settings (and the pipeline's neck, where asked)."""
    from dataclasses import replace
    from functools import partial
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.pathfinder import negotiate
    from autorouter.pathfinder.nets import neck_tasks
    from autorouter.pipeline import set_up
    from autorouter.search.cpu import CpuEngine
    config = replace(RouterConfig(), **settings)
    board = load_board(corpus_board(name, folder))
    rules = load_rules(board, config)
    ready = set_up(board, rules, config)
    narrower = partial(neck_tasks, board=board, rules=rules, profiles=ready.profiles, lattice=ready.lattice,
                       config=config) if neck else None
    return negotiate(ready.tasks, ready.lattice, rules, CpuEngine(64), config, neck=narrower)


@needs_corpus
def test_nets_routed_again_in_part_end_legal_and_whole(tmp_path):
    """partial_reroute_from: the nets in conflict keep their branches that meet no one; negotiation still ends
    with every pin joined and nothing shared, on a real two-layer board."""
    outcome = negotiated("c2_teres_io", tmp_path, partial_reroute_from=2)
    occ = outcome.context.occ
    assert outcome.converged and outcome.context.kept_in_part > 0
    assert all(occ.conflicts(r) == 0 for r in outcome.routes.values())
    assert all(len(outcome.routes[t.net].connections) == t.connections for t in outcome.tasks)


def test_a_portal_pays_for_the_copper_its_stub_would_cover():
    """stub_prices: of two portals of a pad, the one whose stub runs over another net's track pays for each of its
    nodes the stub's cover holds, at the present factor; the net's own copper there is free."""
    from autorouter.lattice.portals import Portals
    from autorouter.pathfinder.costs import stub_prices
    from autorouter.search.constants import STEP
    lat = make_lattice((0, 0, 10, 10), ["F.Cu"], 0.2)
    occ = Occupancy(lat)
    radii = class_radii(NARROW, RULES, 0.01)
    other = NetRoute([Connection(lat.index(0, np.arange(20, 31), 25).astype(np.int64))])   # a track down x = 5
    occ.footprint(other, lambda size: radii)
    occ.add(other, +1)
    pad = (5.0, 3.0)                                 # stubs from here: down to near the track's end, or left
    nodes = np.array([lat.index(0, 18, 25), lat.index(0, 15, 21)], dtype=np.int64)
    portals = Portals(nodes, np.array([0.4, 0.8]), np.array([pad, pad]), np.zeros(2, np.int64))
    prices = stub_prices(occ, portals, radii, pres=2.0)
    covered = occ.stub_cover(0, pad, (5.0, 3.6), radii.track_track, steps=True)
    assert prices[0] == STEP * 2 * occ.centres[covered].sum() > 0 and prices[1] == 0
    assert stub_prices(occ, portals, radii, pres=2.0, own=other).tolist() == [0, 0]


@needs_corpus
def test_stubs_that_pay_settle_two_pads_whose_stubs_cover_each_others_way_in(tmp_path):
    """k7_tillitis_tk1: APP_ICE_SCK's and APP_ICE_MISO's stubs each cover the other's way in, and negotiation
    stalls on them; with stubs priced once it stalls (stub_prices_after), it settles with every pin joined."""
    outcome = negotiated("k7_tillitis_tk1", tmp_path, neck=True, stub_prices_after=7)
    assert outcome.converged
    assert all(len(outcome.routes[t.net].connections) == t.connections for t in outcome.tasks)
