"""PathFinder negotiated congestion over batches of connections.

Each iteration reroutes the nets that share resources (all nets in the first), in batches of nets whose regions do
not overlap: a batch is ripped up, its connections are searched together one pin at a time (each from the net's tree
so far to its next pin), and the new routes are added back (a large net may keep its branches that meet no one
and search only for the pins it lost: branches.py). Present congestion grows each iteration and history
accumulates on shared nodes, until nothing is shared, the iteration limit is reached, or the count of shared nodes
stalls. Then the connections still in conflict are dropped, most conflicted first, and the nets that lost some are
rerouted once with the other nets as walls: the result is always legal. What is still missing then is the
business of finishing.py.
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..board.geometry import ranges
from ..lattice.grid import in_window
from ..search import BLOCKED, RoiRequest, SearchStopped
from .branches import kept_branches
from .congestion import Connection, NetRoute, Occupancy, Stub, class_radii, in_sorted
from .costs import CostSnapshot, node_penalty, stub_cost, stub_prices
from .device_costs import prices_for
from .nets import NetTask, mark_conflicts


NO_PATH = "no path to pad "     # a failed search's reason, before the pads' names (pipeline's report adds its walls)
NECK_BY = 20    # iterations after which the nets still in conflict are offered smaller sizes, if they were not yet


@dataclass
class Negotiation:
    routes: dict[int, NetRoute]
    iterations: int
    converged: bool
    dropped: list[int] = field(default_factory=list)       # nets left unrouted because of congestion
    stopped_early: str = ""                                # why the loop ended before converging
    search_seconds: float = 0.0                            # of the whole, waiting for the search engine
    context: "Context | None" = field(default=None, repr=False)   # the prices and occupancy it ended with
    tasks: list = field(default_factory=list)              # the tasks it ended with (some necked)


@dataclass
class Context:
    lattice: object
    occ: Occupancy
    engine: object
    config: object
    rules: object
    pres: float = 0.0
    wall: int = 0                 # occupancy at which a node is a wall, not a cost: 1 in the final repair (every
                                  # other net's cover), FROZEN when a few nets negotiate again (finishing.py), 0
                                  # while negotiating
    device_costs: object = None   # the prices' copy in the engine's memory, when that is not the host's
    search_seconds: float = 0.0
    launches: int = 0             # engine calls, and the ROIs they searched
    rois: int = 0
    kept_in_part: int = 0         # nets routed again only where they met others (branches.kept_branches)
    price_stubs: bool = False     # whether a path's end pays for what its pad stub's cover holds (costs.stub_prices)
    should_stop: object = lambda: ""   # a reason to stop now (Ctrl-C, time limit), checked between searches
    roi_margin: dict = field(default_factory=dict)   # net -> ROI margin in mm, grown while the net stays in conflict
    radii: object = None              # size -> cover radii (ctx_radii)
    # where walls are kept (wall > 0): the nets that stay put, or None for every net the occupancy holds (the
    # searching net's own route taken out of it)
    fixed: "Fixed | None" = None

    def margin(self, net: int) -> float:
        return self.roi_margin.get(net, self.config.roi_margin)

    def snapshot(self) -> CostSnapshot:
        return CostSnapshot(self.lattice, self.occ, self.pres, self.config, self.wall, self.device_costs)


@dataclass
class Fixed:
    """The nets that stay put while a few others negotiate: their track node and via counts (as Occupancy.centres
    and via_centres), and each searching task's reach_walls against them, which stay the same while they do."""
    centres: np.ndarray
    vias: np.ndarray
    walls: dict = field(default_factory=dict)


def ctx_radii(rules, margin: float, classes: set):
    """size (a NetClassRules) -> its cover radii among the classes routed, remembered; a size not seen before (a
    necked variant made later) joins them."""
    known: dict = {}

    def radii(size):
        if size not in known:
            classes.add(size)
            known.clear()
            known.update({c: class_radii(c, rules, margin, classes) for c in classes})
        return known[size]
    return radii


def stop_by(should_stop, until: float | None):
    """should_stop, also saying "time limit" once time.monotonic() passes until (None: never)."""
    if until is None:
        return should_stop
    return lambda: should_stop() or ("time limit" if time.monotonic() > until else "")


def negotiate(tasks: list[NetTask], lattice, rules, engine, config, on_progress=None,
              should_stop=lambda: "", neck=None, until: float | None = None) -> Negotiation:
    """neck(tasks, nets) -> (tasks, nets changed): the tasks with those nets at smaller sizes, asked for after the
    first iteration for the nets that found no way at all, and once for the nets in conflict when the shared nodes
    stop falling or NECK_BY iterations are spent; the nets it changes are ripped up and negotiation goes on.
    until: a time.monotonic() after which no batch is routed again, so that the repair (and what the caller does
    next) still has time before should_stop ends everything.

    The routes it ends with are those of the iteration that left the fewest nets in conflict (then the fewest
    shared nodes): late iterations of a board that does not converge can be worse than an earlier one."""
    occ = Occupancy(lattice)
    classes = {t.rules for t in tasks}
    radii = ctx_radii(rules, config.clearance_margin, classes)
    ctx = Context(lattice, occ, engine, config, rules, config.pres_fac_initial, should_stop=should_stop,
                  radii=radii)
    ctx.device_costs = prices_for(occ, engine.xp)
    routes: dict[int, NetRoute] = {}
    pending = [t for t in tasks if t.connections]
    iteration, converged, why, cut = 0, False, "", ""
    best_shared, since_best = None, 0
    best = Best()
    trial: dict = {}              # net necked in the first iteration -> (its task before, connections it failed)
    kept_wide: set[int] = set()   # nets whose trial neck did not help: never necked again
    start = time.monotonic()

    out_of_time = stop_by(should_stop, until)
    while iteration < config.max_iterations:
        iteration += 1
        iteration_began = time.monotonic()
        for batch in batches(pending, lattice, ctx, routes):
            # every net of a batch is searched against the same prices; where the batch's nets may meet
            # (batch_overlap), each net's route stays in the occupancy for the others to see, not counted against
            # itself, until the batch is committed
            overlap, olds = config.batch_overlap, [routes.get(t.net) for t in batch]
            seeds = [None if old is None else kept_branches(t, old, occ, ctx.radii(t.rules).reach,
                                                            config.partial_reroute_from)
                     for t, old in zip(batch, olds)]
            ctx.kept_in_part += sum(seed is not None for seed in seeds)
            for old in olds:
                if old is not None and not overlap:
                    occ.add(old, -1)
            for t, old, route in zip(batch, olds, route_batch(batch, ctx, olds if overlap else None, seeds)):
                if old is not None and overlap:
                    occ.add(old, -1)
                if old is not None and should_stop() and len(route.connections) < len(old.connections):
                    route = old             # stopped part-way: the last full attempt joins more pins
                else:
                    occ.footprint(route, radii)
                occ.add(route, +1)
                routes[t.net] = route
            why = cut = out_of_time()
            if why:
                break
        shared = occ.add_history(routes.values(), config.hist_fac)
        pending = nets_in_conflict(tasks, routes, occ)
        if not why:             # an iteration cut part-way is no candidate: its nets were not all rerouted
            best.offer(routes, len(pending), shared)
        if on_progress:
            failed = sum(1 for r in routes.values() if r.failed)
            on_progress({"stage": "iteration", "iteration": iteration, "nets": len(routes) - failed,
                         "nets_total": sum(1 for t in tasks if t.connections), "conflicted": len(pending),
                         "shared": shared, "elapsed": time.monotonic() - start, "failed": failed})
        if why:
            converged = not pending
            break
        best_shared, since_best = (shared, 0) if best_shared is None or shared < best_shared else (best_shared,
                                                                                                  since_best + 1)
        if trial:
            # a net necked in the first iteration that still fails as often is blocked by more than its width
            # (a pad nothing reaches): its own sizes back, and no neck later
            back = {net: task for net, (task, failed) in trial.items() if len(routes[net].failed) >= failed}
            trial = {}
            if back:
                tasks = [back.get(t.net, t) for t in tasks]
                mark_conflicts(tasks, lattice)
                pending = rip_up(set(back), tasks, routes, occ, pending)
                kept_wide |= set(back)
                best = Best()
        if iteration == 1:
            # the nets that found no way at all, where other nets are only prices, never will at their sizes (a
            # track too wide for the channels between a BGA's balls): narrower at once
            stuck, neck_now = {net for net, r in routes.items() if r.failed}, True
        else:
            stuck = {t.net for t in pending} - kept_wide
            neck_now = since_best >= config.stall_iterations or iteration >= min(NECK_BY, config.max_iterations // 2)
        if iteration > 1 and not time_for_another(iteration_began, until):
            # the nets necked now are ripped up: with no time left for an iteration as long as this one, most of
            # them would end with no route at all (vme-wren, necked at iteration 20: 1,129 joins missing, not 852)
            neck_now = False
        if neck is not None and neck_now and stuck:
            before = {t.net: t for t in tasks}
            tasks, changed = neck(tasks, stuck)
            if iteration == 1:
                trial = {net: (before[net], len(routes[net].failed)) for net in changed}
            pending = rip_up(changed, tasks, routes, occ, pending)     # they come back narrower, as new tasks
            if changed:
                best = Best()           # routes from before the neck are not the tasks' any more
            if iteration > 1:           # the nets in conflict are necked once
                neck = None
                best_shared, since_best = None, 0
                continue
        if not pending:
            converged = True
            break
        if since_best >= config.stall_iterations:
            why = f"no progress in {since_best} iterations"
            break
        ctx.pres = min(ctx.pres * config.pres_fac_mult, config.pres_fac_max)
        # a stall may be two pads' stubs each covering the other's way in: stubs pay once it lasts
        ctx.price_stubs = ctx.price_stubs or bool(config.stub_prices_after
                                                  and since_best >= config.stub_prices_after)
        reach = max(lattice.rows, lattice.cols) * lattice.pitch
        if config.roi_margin_max:
            reach = min(reach, max(config.roi_margin_max, config.roi_margin))
        for t in pending:           # a net that keeps meeting others may need a longer way round
            ctx.roi_margin[t.net] = min(ctx.margin(t.net) * config.roi_growth, reach)
    if not converged:
        best.restore(routes, occ)
    # cut short by the time limit or a signal, the conflicts left were never given the iterations to settle
    reason = f"{cut}: stopped before its conflicts were settled" if cut else \
        "congestion: no room left beside its neighbours"
    dropped = drop_conflicts(tasks, routes, occ, radii, reason)
    if dropped:
        if on_progress:
            on_progress({"stage": "repair", "nets": len(dropped)})
        repair([t for t in tasks if t.net in set(dropped)], routes, occ, radii, ctx)
    return Negotiation(routes, iteration, converged, dropped, why, ctx.search_seconds, ctx, tasks)


def time_for_another(began: float, until: float | None) -> bool:
    """Whether another run as long as the one that began at `began` (time.monotonic()) would still end by until
    (None: no limit): a negotiation's iteration, or settle's whole negotiation."""
    now = time.monotonic()
    return until is None or now + (now - began) <= until


def rip_up(nets: set[int], tasks: list[NetTask], routes, occ, pending: list[NetTask]) -> list[NetTask]:
    """Take the nets' routes out (their tasks have changed); returns the tasks that move next: theirs and those of
    the nets in conflict."""
    for net in nets:
        occ.add(routes.pop(net), -1)
    moving = nets | {t.net for t in pending}
    return [t for t in tasks if t.net in moving]


@dataclass
class Best:
    """The routes at the best moment so far by a score, lowest best (nets in conflict, then shared nodes, while
    negotiating). Kept as copies: finishing adds to a net's route in place."""
    routes: dict = field(default_factory=dict)
    score: tuple = ()

    def offer(self, routes: dict, *score) -> bool:
        """Keep a copy of these routes if they are the best so far; returns whether they were."""
        if self.score and score >= self.score:
            return False
        self.routes = {net: replace(r, connections=list(r.connections), failed=list(r.failed))
                       for net, r in routes.items()}
        self.score = score
        return True

    def restore(self, routes: dict, occ: Occupancy) -> None:
        """Put the best routes back in place of the last ones, in routes and in the occupancy."""
        if not self.routes:
            return
        for r in routes.values():
            occ.add(r, -1)
        routes.clear()
        routes.update(self.routes)
        for r in routes.values():
            occ.add(r, +1)


def repair(tasks: list[NetTask], routes: dict[int, NetRoute], occ: Occupancy, radii, ctx: Context) -> None:
    """Reroute each net that lost connections, one at a time, with every other net's cover as a wall: whatever it
    finds is legal. The new route is kept when it joins more pins than the old one."""
    ctx.wall = 1
    for t in tasks:
        if ctx.should_stop():
            break
        old = routes[t.net]
        occ.add(old, -1)
        new = route_batch([t], ctx)[0]
        occ.footprint(new, radii)
        if len(new.connections) > len(old.connections) and not occ.conflicts_with_others(new):
            routes[t.net] = new
        else:
            occ.footprint(old, radii)
        occ.add(routes[t.net], +1)
    ctx.wall = 0


def nets_in_conflict(tasks, routes, occ) -> list[NetTask]:
    """Nets with a node in another net's cover, and the nets whose cover it is: both sides of every conflict move,
    or a net whose stub blocks another's pad would never be asked to make room."""
    shared_t, shared_v = [], []
    for t in tasks:
        if t.net in routes:
            nodes, sites = occ.shared_nodes(routes[t.net])
            shared_t.append(nodes)
            shared_v.append(sites)
    shared_t = np.unique(np.concatenate(shared_t)) if shared_t else np.zeros(0, np.int64)
    shared_v = np.unique(np.concatenate(shared_v)) if shared_v else np.zeros(0, np.int64)
    if not shared_t.size and not shared_v.size:
        return []
    return [t for t in tasks if t.net in routes and (
        np.isin(shared_t, routes[t.net].cover_track, assume_unique=True).any()
        or np.isin(shared_v, routes[t.net].cover_via, assume_unique=True).any())]


def batches(tasks: list[NetTask], lattice, ctx, routes: dict[int, NetRoute]) -> list[list[NetTask]]:
    """The nets of an iteration in batches of config.batch_size, in the given order: where config.batch_overlap,
    wherever they lie (each is searched against the prices at its batch's start, as the parallel PathFinder variants
    do: many searches per engine launch), but no two nets in conflict now in one batch (each would move as if the
    other stayed, and both would come back); else disjoint_batches."""
    if not ctx.config.batch_overlap:
        return disjoint_batches(tasks, lattice, ctx)
    partners = conflict_partners([t.net for t in tasks], routes, ctx.occ)
    return first_fit(tasks, ctx.config.batch_size, lambda a, b: b.net in partners.get(a.net, ()))


def first_fit(tasks: list[NetTask], size: int, clash) -> list[list[NetTask]]:
    """Each task, in order, into the first batch with room that holds no task it clashes with (clash(a, b))."""
    out: list[list[NetTask]] = []
    for t in tasks:
        for members in out:
            if len(members) < size and not any(clash(t, m) for m in members):
                members.append(t)
                break
        else:
            out.append([t])
    return out


def conflict_partners(nets: list[int], routes: dict[int, NetRoute], occ) -> dict[int, set[int]]:
    """net -> the nets among these it conflicts with now (a track node or via of one in the other's cover)."""
    size = occ.lattice.size
    nets = [n for n in nets if n in routes]
    # track nodes and via sites as one key space: a site is keyed past the last node
    on = [np.concatenate([routes[n].nodes(), routes[n].via_sites(occ.lattice) + size]) for n in nets]
    crowd = np.concatenate([occ.track, occ.via])
    shared = np.unique(np.concatenate([k[crowd[k] > 1] for k in on])) if on else np.zeros(0, np.int64)
    if not shared.size:
        return {}
    at, by = [], []                # (shared key, net) where the key is on a net's route, and in a net's cover
    for i, n in enumerate(nets):
        cover = np.concatenate([routes[n].cover_track, routes[n].cover_via + size])
        at.append(np.flatnonzero(in_sorted(on[i], shared)))
        by.append(np.flatnonzero(in_sorted(cover, shared)))
    on_key, on_net = np.concatenate(at), np.repeat(np.arange(len(nets)), [a.size for a in at])
    cover_key, cover_net = np.concatenate(by), np.repeat(np.arange(len(nets)), [b.size for b in by])
    order = np.argsort(cover_key, kind="stable")
    cover_key, cover_net = cover_key[order], cover_net[order]
    lo, hi = np.searchsorted(cover_key, on_key, "left"), np.searchsorted(cover_key, on_key, "right")
    count = hi - lo
    first = np.repeat(on_net, count)
    second = cover_net[ranges(lo, count)]
    partners: dict[int, set[int]] = {}
    for a, b in zip(first.tolist(), second.tolist()):
        if a != b:
            partners.setdefault(nets[a], set()).add(nets[b])
            partners.setdefault(nets[b], set()).add(nets[a])
    return partners


def disjoint_batches(tasks: list[NetTask], lattice, ctx) -> list[list[NetTask]]:
    """Batches of nets whose regions (pins plus the ROI margin) do not overlap, in the given order: nets of one batch
    cannot meet, so searching them together against one cost snapshot routes them as one after another would."""
    boxes = {}
    for t in tasks:
        margin = ctx.margin(t.net) + lattice.pitch
        xs = [p.x for pin in t.pins for p in pin.pads]
        ys = [p.y for pin in t.pins for p in pin.pads]
        boxes[id(t)] = (min(xs) - margin, min(ys) - margin, max(xs) + margin, max(ys) + margin)
    return first_fit(tasks, ctx.config.batch_size, lambda a, b: overlap(boxes[id(a)], boxes[id(b)]))


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def drop_conflicts(tasks, routes, occ, radii, reason: str) -> list[int]:
    """Rip up connections, most conflicted first, until no route shares a node: what is left is legal. reason: what
    each connection dropped is labelled with."""
    dropped = []
    # Dropping a connection only shrinks covers, so no count ever rises: a count taken earlier bounds it from above,
    # and a heap of such bounds (then the order of tasks and connections, to break ties as a scan would) yields
    # the connection a full scan would pick, each count taken again only when it reaches the top, where a scan
    # after every drop cost vme-wren 2.7 million counts.
    heap = [(-n, k, t, conn) for k, (t, conn) in enumerate((t, c) for t in tasks
                                                         for c in routes.get(t.net, NetRoute()).connections)
            if (n := occ.connection_conflicts(conn))]
    heapq.heapify(heap)
    while heap:
        bound, k, t, conn = heapq.heappop(heap)
        route = routes[t.net]
        i = next((i for i, c in enumerate(route.connections) if c is conn), None)
        if i is None:                          # dropped with the connection it started on
            continue
        n = occ.connection_conflicts(conn)
        if n < -bound:
            if n:
                heapq.heappush(heap, (-n, k, t, conn))
            continue
        occ.add(route, -1)
        route.failed += [reason] * route.remove(i)
        occ.footprint(route, radii)
        occ.add(route, +1)
        dropped.append(t.net)
    return dropped


@dataclass
class Growing:
    """A net being routed: its tree so far and the pins already joined (or found unreachable from it: later pins
    may still join them)."""
    task: NetTask
    route: NetRoute
    joined: list[int]
    # the joined pins' sources (tree_sources), kept from one search to the next: a net of many pins would build
    # them again for every connection
    pin_sources: tuple = (np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 2), np.int64))
    pins_in_sources: int = 0
    own: NetRoute | None = None     # the net's route that the occupancy still holds: no price to the net itself
    kept: frozenset = frozenset()   # the pins joined before the search began (branches kept from the last route)


def route_batch(batch: list[NetTask], ctx: Context, own: list | None = None,
                seeds: list | None = None) -> list[NetRoute]:
    """Route each net of the batch, all against the prices as they stand: from scratch, or from its seed (kept
    branches: (route, pins it joins), or None). own: each net's route where the occupancy still holds it (None: it
    was taken out), so that the net does not pay for itself. Where other nets are walls (ctx.wall), a net searched
    alone is also kept from where its own cover would hold their copper (reach_walls)."""
    if not (ctx.wall and len(batch) == 1):
        return grow_routes(batch, ctx, own, seeds)
    occ = ctx.occ
    track, via = reach_walls(batch[0], ctx)
    occ.bump(track, via, ctx.wall)
    try:
        return grow_routes(batch, ctx, own)
    finally:
        occ.bump(track, via, -ctx.wall)


def reach_walls(task: NetTask, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """The track nodes and via sites where the task's cover would hold the copper of a net that stays put (ctx.fixed),
    near its pins (within its ROI margin and one cover radius): its search sees the others' covers only, and a
    wider net's own cover reaches farther than a narrower neighbour's (Occupancy.reached_by)."""
    lat, occ, fixed, margin = ctx.lattice, ctx.occ, ctx.fixed, ctx.margin(task.net)
    key = (id(task), margin)             # the moving tasks live as long as fixed does: their ids stay theirs
    if fixed is not None and key in fixed.walls:
        return fixed.walls[key]
    nodes = np.concatenate([pin.portals.nodes for pin in task.pins])
    if not nodes.size:
        return nodes, nodes
    radii = ctx.radii(task.rules)
    _, node_rows, node_cols = lat.unravel(nodes)
    rows, cols = roi_window(lat, node_rows, node_cols, margin + radii.reach, False)
    centres, vias = (fixed.centres, fixed.vias) if fixed is not None else (occ.centres, occ.via_centres)
    layer, row, col = np.nonzero(centres.reshape(lat.shape)[:, rows, cols])   # only the window is scanned
    srow, scol = np.nonzero(vias.reshape(lat.rows, lat.cols)[rows, cols])
    walls = occ.reached_by(radii, lat.index(layer, row + rows.start, col + cols.start),
                           (srow + rows.start) * lat.cols + scol + cols.start)
    if fixed is not None:
        fixed.walls[key] = walls
    return walls


def grow_routes(batch: list[NetTask], ctx: Context, own: list | None = None,
                seeds: list | None = None) -> list[NetRoute]:
    """route_batch's search, one connection of every net at a time."""
    growing = []
    for t, o, seed in zip(batch, own or [None] * len(batch), seeds or [None] * len(batch)):
        if seed is None:
            growing.append(Growing(t, NetRoute(), [0], own=o))
            if t.pins[0].portals.nodes.size == 0:
                growing[-1].route.failed.append(unreachable(t.pins[0]))
        else:
            growing.append(Growing(t, seed[0], list(seed[1]), own=o, kept=frozenset(seed[1])))
    steps = max(t.connections for t in batch)
    for j in range(1, steps + 1):
        active = [g for g in growing if j < len(g.task.pins) and j not in g.kept]
        why = ctx.should_stop()
        if why:                                  # a large net can take many searches: stop between them
            for g in growing:
                left = sum(1 for k in range(j, len(g.task.pins)) if k not in g.kept)
                g.route.failed += [f"{why}: stopped before reaching it"] * left
            break
        ready = []
        for g in active:
            if g.task.pins[j].portals.nodes.size == 0:
                g.route.failed.append(unreachable(g.task.pins[j]))
            elif not g.route.connections and not any(g.task.pins[i].portals.nodes.size for i in g.joined):
                g.joined.append(j)      # no tree to reach (the pins before it have no way in): it starts one
            else:
                ready.append(g)
        retry = search_step(ready, j, ctx, full=False)
        search_step(retry, j, ctx, full=True)
    return [g.route for g in growing]


def unreachable(pin) -> str:
    """Why a pin without portals cannot be joined: it lies off the board, or nothing legal reaches it."""
    names = pin.names
    if pin.outside:
        return f"pad {names} lies outside the board outline"
    return f"pad {names} has no legal way in (blocked pad{': ' + pin.blocked_by if pin.blocked_by else ''})"


def tree_sources(g: Growing) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Sources of the next connection: the tree's nodes (stub length 0, no stub), then the joined pins' portals
    with their stub lengths and the nodes in their zone fills (no stub); which pin and portal each of the pins'
    sources is ((pin, -1) in a fill); and how many of the sources are tree nodes."""
    if g.pins_in_sources < len(g.joined):
        nodes, length, refs = ([a] for a in g.pin_sources)
        for i in g.joined[g.pins_in_sources:]:
            pin = g.task.pins[i]
            nodes += [pin.portals.nodes, pin.fill]
            length += [pin.portals.length, np.zeros(pin.fill.size)]
            refs += [np.stack([np.full(pin.portals.nodes.size, i), np.arange(pin.portals.nodes.size)], 1),
                     np.stack([np.full(pin.fill.size, i), np.full(pin.fill.size, -1)], 1)]
        g.pin_sources = np.concatenate(nodes), np.concatenate(length), np.concatenate(refs)
        g.pins_in_sources = len(g.joined)
    tree = g.route.nodes()
    nodes, length, refs = g.pin_sources
    return np.concatenate([tree, nodes]), np.concatenate([np.zeros(tree.size), length]), refs, tree.size


def search_step(ready: list[Growing], j: int, ctx: Context, full: bool) -> list[Growing]:
    """Search connection j of each net at once; return the nets that found no path in their ROI."""
    lat = ctx.lattice
    snapshot = ctx.snapshot()
    requests, windows, extras = [], [], []
    for g in ready:
        src, src_len, pin_refs, tree_size = tree_sources(g)
        sink = g.task.pins[j].portals
        src_at = lat.unravel(src)        # once: a large net's tree holds thousands of nodes
        _, sink_rows, sink_cols = lat.unravel(sink.nodes)
        near = nearest_sources(src_at, sink_rows, sink_cols)
        rows, cols = roi_window(lat, np.concatenate([src_at[1][near], sink_rows]),
                                np.concatenate([src_at[2][near], sink_cols]), ctx.margin(g.task.net), full)
        via_gap = g.task.rules.via_drill + ctx.rules.hole_to_hole + ctx.config.clearance_margin
        costs = snapshot.window(g.task, rows, cols, g.route.via_sites(lat), via_gap, g.own)
        # the sources inside the window, and what leaving from each costs: those of a large net's tree and pins
        # lie mostly outside, so they are priced only here
        inside = np.flatnonzero(in_window(src_at[1], src_at[2], rows, cols))
        first_pin = int(np.searchsorted(inside, tree_size))         # the tree's nodes come first
        src_refs = pin_refs[inside[first_pin:] - tree_size]          # of the pins' sources only
        src, src_cost, tree_size = src[inside], stub_cost(src_len[inside], lat.pitch), first_pin
        src_cost[tree_size:] += node_penalty(ctx.occ, src[tree_size:], ctx.pres, g.own)
        if ctx.price_stubs:
            src_cost[tree_size:] += source_stub_prices(g, src_refs, ctx)
        if ctx.wall:
            # a portal inside a wall is no way out either
            src_cost = np.where(ctx.occ.track[src] >= ctx.wall, BLOCKED, src_cost)
        shape = (len(lat.layers), rows.stop - rows.start, cols.stop - cols.start)
        fill = g.task.pins[j].fill
        fill = fill[lat.inside(fill, rows, cols)]       # the sink pin's fill, where the ROI reaches it
        sink_cost = stub_cost(sink.length, lat.pitch)
        if ctx.price_stubs:
            sink_cost += stub_prices(ctx.occ, sink, ctx.radii(g.task.rules), ctx.pres, g.own)
        requests.append(RoiRequest(shape, costs, local_index([a[inside] for a in src_at], rows, cols),
                                   src_cost, to_local(lat, np.concatenate([sink.nodes, fill]), rows, cols),
                                   np.concatenate([sink_cost, np.zeros(fill.size, np.int64)])))
        windows.append((rows, cols, shape))
        extras.append((src, src_cost, src_refs, tree_size))
    if not requests:
        return []
    t0 = time.perf_counter()
    try:
        results = ctx.engine.search(requests, should_stop=ctx.should_stop)
    except SearchStopped as stop:
        for g in ready:
            g.route.failed.append(f"{stop}: stopped before reaching it")
        return []
    finally:
        ctx.search_seconds += time.perf_counter() - t0
    ctx.launches += 1
    ctx.rois += len(requests)
    misses = []
    for g, req, res, (rows, cols, shape), (src, src_cost, src_refs, tree_size) in zip(
            ready, requests, results, windows, extras):
        if res.path is None:
            if full:
                names = g.task.pins[j].names
                g.route.failed.append(f"{NO_PATH}{names}")
                # it still starts a tree of its own that the pins after it may join: the two halves of a split
                # keyboard, joined by a cable, share their nets' names
                g.joined.append(j)
            else:
                misses.append(g)
            continue
        path = to_global(lat, res.path, rows, cols, shape)
        sink = g.task.pins[j].portals
        conn = Connection(path, size=g.task.rules, pin=j)
        if res.sink < sink.nodes.size:
            conn.stubs.append(stub(lat, sink, res.sink))
        else:
            conn.in_fill.append(int(path[-1]))           # it ends in the pin's zone fill
        start = np.flatnonzero(src == path[0])
        if start.size and start[0] >= tree_size:
            # the path leaves from a joined pin's portal, not from the tree: that pad needs its stub too (none
            # where it leaves from the pin's fill)
            pin, k = src_refs[start[np.argmin(src_cost[start])] - tree_size]
            conn.from_pin = int(pin)
            if k >= 0:
                conn.stubs.append(stub(lat, g.task.pins[pin].portals, k))
            else:
                conn.in_fill.append(int(path[0]))
        else:
            conn.parent = g.route.owner_of(int(path[0]))
        g.route.add(conn)
        g.joined.append(j)
    return misses


def source_stub_prices(g: Growing, refs: np.ndarray, ctx: Context) -> np.ndarray:
    """stub_prices of the joined pins' portals among the sources ((pin, portal) refs; a fill's, portal -1, has no
    stub)."""
    out = np.zeros(len(refs), np.int64)
    radii = ctx.radii(g.task.rules)
    for pin in np.unique(refs[:, 0]).tolist():
        at = np.flatnonzero((refs[:, 0] == pin) & (refs[:, 1] >= 0))
        if at.size:
            out[at] = stub_prices(ctx.occ, g.task.pins[pin].portals, radii, ctx.pres, g.own)[refs[at, 1]]
    return out


def stub(lat, portals, k: int) -> Stub:
    return Stub(int(portals.nodes[k]) // lat.plane, portals.points(int(k), lat), portals.blocks[int(k)])


def nearest_sources(src_at: tuple, sink_rows: np.ndarray, sink_cols: np.ndarray) -> np.ndarray:
    """Which sources (their layers, rows and columns) lie within 1.5 times the distance of the source nearest to the
    sink pin, plus one pitch: the ROI spans them and the sinks, not the whole tree of a large net. Distances on the
    board plane, in lattice steps, to the box around the sink pin's portals (one pass over the sources: a large
    net's tree has thousands of nodes)."""
    _, r, c = src_at
    dr = np.maximum(np.maximum(sink_rows.min() - r, r - sink_rows.max()), 0)
    dc = np.maximum(np.maximum(sink_cols.min() - c, c - sink_cols.max()), 0)
    gap2 = dr * dr + dc * dc
    reach = 1.5 * np.sqrt(gap2.min()) + 1
    return gap2 <= reach * reach


def roi_window(lat, r: np.ndarray, c: np.ndarray, margin_mm: float, full: bool) -> tuple[slice, slice]:
    """The rows and columns of the ROI around the nodes at rows r and columns c."""
    if full:
        return slice(0, lat.rows), slice(0, lat.cols)
    m = int(math.ceil(margin_mm / lat.pitch))
    return (slice(max(0, int(r.min()) - m), min(lat.rows, int(r.max()) + m + 1)),
            slice(max(0, int(c.min()) - m), min(lat.cols, int(c.max()) + m + 1)))


def to_local(lat, nodes, rows: slice, cols: slice) -> np.ndarray:
    return local_index(lat.unravel(nodes), rows, cols)


def local_index(at: tuple, rows: slice, cols: slice) -> np.ndarray:
    """Flat indices in the ROI of the nodes at (layers, rows, columns) of the lattice."""
    l, r, c = at
    h, w = rows.stop - rows.start, cols.stop - cols.start
    return ((l * h + (r - rows.start)) * w + (c - cols.start)).astype(np.int64)


def to_global(lat, local, rows: slice, cols: slice, shape) -> np.ndarray:
    _, h, w = shape
    l, rest = np.divmod(local, h * w)
    r, c = np.divmod(rest, w)
    return lat.index(l, r + rows.start, c + cols.start).astype(np.int64)
