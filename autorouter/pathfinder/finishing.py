"""What negotiation leaves: connections still missing, and pads that the zone fills no longer join once the tracks
are in.

make_room: a net still short of a connection negotiates again with the few nets in its way (those its search
crosses when the other nets are prices, not walls), every other net frozen as a wall; while that fails, the nets
nearest to where it still conflicts join in. PathFinder leaves such a net when history has priced every way to it
out, while a net in its way could have moved elsewhere and was never asked to.

reconnect: the joins that the fills no longer make are searched with every other net as a wall. make_way: one that
finds no legal way is joined through the nets in its way, which then negotiate among themselves (the caller, who
knows the zone fills, decides what to keep). Whatever is kept is legal, and kept only when it joins more.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..lattice.portals import mark_stub_conflicts
from .congestion import NetRoute, Occupancy, in_sorted
from .nets import NetTask
from .router import Context, Fixed, Negotiation, nets_in_conflict, route_batch, stop_by

# making room for a connection still missing once negotiation is over (make_room, make_way)
MAX_MOVED = 16         # most nets that negotiate again among themselves
LOCAL_ITERATIONS = 24  # PathFinder iterations of that negotiation
LOCAL_STALL = 6        # ... ended sooner after this many without fewer nets in conflict: it rarely settles later
GROWTH_ROUNDS = 5      # times the nets nearest to where it still conflicts join it
# Without a time limit, make_room stops once this many short nets in a row gained the board nothing: on a board that
# does not converge each costs a series of local negotiations (vme-wren: 250 short nets, 110-200 s each, none
# joined), and a limit given ends it by time instead.
ROOM_STALL = 3
FROZEN = 1 << 16       # the occupancy weight of a net that does not move in it: its cover is a wall


def reconnect(tasks: list[NetTask], outcome: Negotiation) -> list[NetTask]:
    """Join what is still apart in nets already routed (pads a zone's fill no longer joins once the other nets' tracks
    cut it): each task's connections are searched with every other net's cover as a wall, so whatever is found is
    legal, and added to the net's route. Returns the tasks of which nothing could be joined so (make_way's)."""
    ctx = outcome.context
    failed = []
    for t in tasks:
        if ctx.should_stop():
            break
        if not join(t, outcome.routes, ctx):
            failed.append(t)
    ctx.wall = 0
    return failed


def single_joins(t: NetTask) -> list[NetTask]:
    """t's joins one at a time, each from its root pin: the nets in the way of one join may step aside where those
    of all of them at once cannot (a plane net's pads cut off in several places)."""
    if t.connections <= 1:
        return [t]
    return [replace(t, pins=[t.pins[0], pin]) for pin in t.pins[1:]]


def join(t: NetTask, routes: dict[int, NetRoute], ctx: Context) -> int:
    """Search t's connections with every other net as a wall and add what is found to its net's route; returns how
    many were added."""
    ctx.wall = 1
    route = routes.setdefault(t.net, NetRoute())
    ctx.occ.add(route, -1)          # the net's own copper is no wall to it
    new = route_batch([t], ctx)[0]
    route.failed += new.failed
    if not new.connections:
        ctx.occ.add(route, +1)
        return 0
    added = 0
    for conn in new.connections:
        # the walls keep the new copper out of the others' covers; its own cover must not hold them either (a
        # larger via reaches farther than a smaller neighbour's cover)
        if conn.parent is not None and all(c is not conn.parent for c in route.connections):
            continue
        conn.late = True
        route.add(conn)
        ctx.occ.footprint(route, ctx.radii)
        if ctx.occ.conflicts_with_others(route):
            route.remove(len(route.connections) - 1)
            route.failed.append("no room left beside its neighbours")
        else:
            added += 1
    ctx.occ.footprint(route, ctx.radii)
    ctx.occ.add(route, +1)
    return added


def make_way(t: NetTask, outcome: Negotiation) -> bool:
    """Join t's connections through the few nets in their way (those its search crosses when other nets are prices,
    not walls, and those whose tracks cross the stubs of a pin with no other way in: through_others), then negotiate
    those nets again among themselves, everything else frozen (giving up the late joins of theirs that the new joins
    cross, for the caller to search again); undone unless the board ends with more connections. Returns whether it
    was kept. The lattice does not see stubs exactly: where t took a way through others' tracks, the caller checks
    its stubs against the tracks as they end (portals.crossings)."""
    routes, ctx = outcome.routes, outcome.context
    occ = ctx.occ
    own = routes[t.net]
    by_net = {task.net: task for task in outcome.tasks}
    t, crossed, through = through_others(t)
    in_way = in_the_way(t, routes, occ, ctx)
    in_way += [n for n in sorted(crossed) if n not in in_way]
    if crossed:
        through_blocks(t, through, [by_net[n] for n in in_way if n in by_net], ctx.lattice)
    if not in_way or len(in_way) >= MAX_MOVED or not all(n in by_net for n in in_way):
        ctx.wall = 0
        return False
    saved = NetRoute(list(own.connections), list(own.failed))
    for n in in_way:
        occ.add(routes[n], -1)
    added = join(t, routes, ctx)
    for n in in_way:
        occ.add(routes[n], +1)
    kept = bool(added) and negotiate_among([by_net[n] for n in in_way], routes, occ, ctx, credit=added,
                                            yield_late=True)[0]
    if added and not kept:
        occ.add(own, -1)
        occ.footprint(saved, ctx.radii)
        occ.add(saved, +1)
        routes[t.net] = saved
    ctx.wall = 0
    return kept


def through_others(t: NetTask) -> tuple[NetTask, frozenset, list]:
    """t with each pin that the tracks made so far leave no portal given its way in through the fewest other nets'
    tracks (copies of Pin.through, for through_blocks to mark: the pin's own stay as found), those nets (they must
    step aside for its stubs) and the copies."""
    pins, crossed, through = [], frozenset(), []
    for pin in t.pins:
        if not pin.portals.nodes.size and pin.through is not None and pin.through.nodes.size:
            crossed |= pin.crossed
            through.append(replace(pin.through))
            pin = replace(pin, portals=through[-1])
        pins.append(pin)
    return (replace(t, pins=pins) if crossed else t), crossed, through


def through_blocks(t: NetTask, through: list, others: list[NetTask], lattice) -> None:
    """The portal nodes of the other tasks that the stubs of t's ways in through them (through: the portals of t
    that through_others gave it) rule out (portals.blocks), so that t's route covers them and those nets must leave
    them: such a way was kept apart from the portals of the other nets when it was found. Theirs stay as they were
    (copies are marked)."""
    mark_stub_conflicts([(t.net, t.rules.track_width, t.rules.clearance, through)]
                        + [(o.net, o.rules.track_width, o.rules.clearance, [replace(pin.portals) for pin in o.pins])
                           for o in others], lattice)


def make_room(outcome: Negotiation, report=lambda event: None, until: float | None = None) -> None:
    """For each net still short of connections, negotiate again among it and the few nets in its way, with every
    other net frozen as a wall: PathFinder stops when history has priced every way to such a net out, while a net in
    its way could have moved elsewhere and was never asked to. The nets in its way are those that its route crosses
    when the others are only prices; while the negotiation fails, the nets nearest to where it still conflicts
    join it. The outcome is kept when it is legal and the board gains connections, and undone otherwise.
    until: a time.monotonic() after which it stops, as if told to, leaving the rest of the time to finishing."""
    ctx = outcome.context
    stop = ctx.should_stop
    ctx.should_stop = stop_by(stop, until)
    try:
        room_for_short_nets(outcome, report, until is None)
    finally:
        ctx.should_stop = stop


def room_for_short_nets(outcome: Negotiation, report, timeless: bool) -> None:
    """make_room's work; timeless: no time limit ends it (ROOM_STALL does)."""
    tasks, routes, ctx = outcome.tasks, outcome.routes, outcome.context
    occ = ctx.occ
    by_net = {t.net: t for t in tasks}

    def short(t) -> bool:
        return t.net in routes and len(routes[t.net].connections) < t.connections

    def joined() -> int:
        return sum(len(r.connections) for r in routes.values())
    total, done, fruitless = sum(map(short, tasks)), 0, 0
    start = joined()
    for t in tasks:
        if not short(t) or ctx.should_stop():
            continue
        if timeless and fruitless >= ROOM_STALL:
            break
        done += 1
        before = joined()
        report({"stage": "make room", "net": done, "nets": max(total, done), "joined": before - start})
        moving = [t.net]
        more = in_the_way(t, routes, occ, ctx)
        for _ in range(GROWTH_ROUNDS):
            more = [n for n in more if n not in moving][:MAX_MOVED - len(moving)]
            if not more or ctx.should_stop():
                break
            moving += more
            kept, where = negotiate_among([by_net[n] for n in moving], routes, occ, ctx)
            if kept or not where.size:
                break
            more = nearest_nets(where, routes, occ.lattice)
        fruitless = fruitless + 1 if joined() <= before else 0


def clear_areas(outcome: Negotiation, areas: list[tuple[np.ndarray, np.ndarray, int]]) -> int:
    """For each area (sorted flat track nodes, sorted via sites, the net it is kept for) that other nets' copper
    should leave (the room a thermal relief needs, say): the nets whose tracks or vias lie in it negotiate again
    among themselves with the area a wall, every other net frozen, and once more with the nets nearest to it when
    they find no other way; kept when it is legal and joins no less. Returns how many areas were cleared."""
    routes, ctx = outcome.routes, outcome.context
    occ = ctx.occ
    by_net = {t.net: t for t in outcome.tasks}
    cleared = 0
    for nodes, sites, owner in areas:
        inside = [n for n, r in routes.items() if n != owner and r.connections and (
            in_sorted(nodes, r.nodes()).any() or in_sorted(sites, r.via_sites(occ.lattice)).any())]
        if not inside or len(inside) > MAX_MOVED or not all(n in by_net for n in inside) or ctx.should_stop():
            continue
        occ.bump(nodes, sites, 1)         # a cover of no net: a wall once negotiate_among freezes it
        for _ in range(2):               # the nets in the area, then with the nets nearest to it
            kept, _ = negotiate_among([by_net[n] for n in inside], routes, occ, ctx, credit=1)
            if kept or ctx.should_stop():
                break
            more = [n for n in nearest_nets(nodes, routes, occ.lattice) if n not in inside and n != owner
                    and n in by_net][:MAX_MOVED - len(inside)]
            if not more:
                break
            inside += more
        occ.bump(nodes, sites, -1)
        cleared += kept
    return cleared


def in_the_way(t: NetTask, routes: dict[int, NetRoute], occ: Occupancy, ctx: Context) -> list[int]:
    """The nets that t's connections would cross if the other nets were prices (the highest), not walls."""
    own = routes[t.net]
    occ.add(own, -1)
    ctx.wall, ctx.pres = 0, ctx.config.pres_fac_max
    through = route_batch([t], ctx)[0]
    occ.footprint(through, ctx.radii)
    occ.add(own, +1)
    return blockers(through, routes, occ, t.net) if through.connections else []


def nearest_nets(nodes: np.ndarray, routes: dict[int, NetRoute], lat) -> list[int]:
    """The routed nets, nearest first to the nodes (in the plane, any layer)."""
    _, row, col = lat.unravel(nodes)
    r0, c0 = row.mean(), col.mean()
    gap = {}
    for net, r in routes.items():
        if r.connections:
            _, rr, cc = lat.unravel(r.nodes())
            gap[net] = float(np.min((rr - r0) ** 2 + (cc - c0) ** 2))
    return sorted(gap, key=gap.get)


def negotiate_among(moving: list[NetTask], routes: dict[int, NetRoute], occ: Occupancy, ctx: Context, credit: int = 0,
                    yield_late: bool = False) -> tuple[bool, np.ndarray]:
    """PathFinder among the moving nets alone, every other net's cover a wall; kept when the result is legal and
    joins more than they joined before, less credit (what was joined to make them move). Returns whether it was
    kept, and where it still conflicted (flat nodes). The frozen covers are told from the moving ones by weight:
    occupancy counts them FROZEN times, so a node at FROZEN or more is a wall and one below is a price. Its history
    priced a local problem: the board's is kept as it was.
    yield_late: a late join (finishing's) that now crosses a wall is given up and not counted against the move; the
    caller (make_way's) searches it again and judges the board's joins itself."""
    before = {t.net: routes[t.net] for t in moving}
    history = occ.hist_track.copy(), occ.hist_via.copy()
    for r in before.values():
        occ.add(r, -1)
    occ.scale(times=FROZEN)
    ctx.fixed = Fixed(occ.centres.copy(), occ.via_centres.copy())
    for r in before.values():
        occ.add(r, +1)
    ctx.wall, ctx.pres = FROZEN, ctx.config.pres_fac_initial
    pending, fewest, stalled = moving, len(moving), 0
    for _ in range(LOCAL_ITERATIONS):
        for t in pending:
            if ctx.should_stop():
                break
            occ.add(routes[t.net], -1)
            routes[t.net] = routed_again(t, routes[t.net], ctx, yield_late)
            occ.footprint(routes[t.net], ctx.radii)
            occ.add(routes[t.net], +1)
        occ.add_history([routes[t.net] for t in moving], ctx.config.hist_fac)
        pending = nets_in_conflict(moving, routes, occ)
        fewest, stalled = (len(pending), 0) if len(pending) < fewest else (fewest, stalled + 1)
        if not pending or stalled >= LOCAL_STALL or ctx.should_stop():
            break
        ctx.pres = min(ctx.pres * ctx.config.pres_fac_mult, ctx.config.pres_fac_max)
    # a via site (row, col) is the flat index of its node on the first layer
    where = np.unique(np.concatenate([np.concatenate(occ.shared_nodes(routes[t.net])) for t in moving]))
    for t in moving:
        occ.add(routes[t.net], -1)
    occ.scale(over=FROZEN)
    legal = not pending and not any(occ.conflicts_with_others(routes[t.net]) for t in moving)
    joined = sum(joins(routes[t.net], yield_late) - joins(before[t.net], yield_late) for t in moving)
    kept = legal and joined + credit > 0
    if not kept:
        routes.update(before)
    occ.hist_track[:], occ.hist_via[:] = history
    occ.hist_version += 1
    for t in moving:
        occ.add(routes[t.net], +1)
    ctx.wall, ctx.fixed = 0, None
    return kept, where


def routed_again(t: NetTask, route: NetRoute, ctx: Context, yield_late: bool = False) -> NetRoute:
    """t's net routed again by its task, keeping the joins made after negotiation (join): they join pads, zone fills
    cut apart, that the task does not, and the route would lose them. yield_late: but not those that cross a wall
    (a node or via site the occupancy holds at ctx.wall or more), nor the joins that start on one given up."""
    new = route_batch([t], ctx)[0]
    occ, given_up = ctx.occ, []
    for conn in (c for c in route.connections if c.late):
        if yield_late and (any(conn.parent is c for c in given_up) or (occ.track[conn.path] >= ctx.wall).any()
                           or (occ.via[conn.vias(occ.lattice)] >= ctx.wall).any()):
            given_up.append(conn)
        else:
            new.add(conn)
    return new


def joins(route: NetRoute, late_free: bool) -> int:
    """The connections a route counts: late joins aside when they are free to go."""
    return sum(1 for c in route.connections if not (late_free and c.late))


def blockers(route: NetRoute, routes: dict[int, NetRoute], occ: Occupancy, net: int) -> list[int]:
    """The nets that a route not added to the occupancy conflicts with, either way: its track nodes and vias in
    their covers, or theirs in its cover."""
    lat = occ.lattice
    nodes, sites = route.nodes(), route.via_sites(lat)
    nodes, sites = nodes[occ.track[nodes] > 0], sites[occ.via[sites] > 0]
    cover_t, cover_v = route.cover_track, route.cover_via
    cover_t, cover_v = cover_t[occ.centres[cover_t] > 0], cover_v[occ.via_centres[cover_v] > 0]
    return [n for n, r in routes.items() if n != net and r.connections and (
        in_sorted(r.cover_track, nodes).any() or in_sorted(r.cover_via, sites).any()
        or in_sorted(r.nodes(), cover_t).any() or in_sorted(r.via_sites(lat), cover_v).any())]
