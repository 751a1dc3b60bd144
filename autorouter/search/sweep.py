"""Row/column/layer sweeps: min-plus prefix scans along every lattice line, repeated until nothing improves.

Along a line with entering costs c, the forward scan d'[i] = min(d[i], d'[i-1] + c[i]) has the closed form
d' = P + cummin(d - P) with P the prefix sum of c, so one NumPy expression settles a whole line at once. Six scans
(both ways along columns, rows and layers) make one sweep; a path with k turns or layer changes is settled after at
most k + 1 sweeps, against one near-far round per lattice step. At the fixed point the distances are exact (integer
costs, no rounding), and the path is walked back from the sink through each node's lowest-index predecessor on a
shortest path: the canonical tree the near-far engines build with their packed (distance, parent) minimum, found
only along the path.
"""
from __future__ import annotations

import numpy as np

from . import RoiRequest, stop_if_asked
from .constants import BLOCKED, UNREACHED

# the farthest a path may reach while no sink is: short of any sum through a blocked move
NO_LIMIT = int(BLOCKED) - 1


def line_scans(req: RoiRequest) -> list[tuple[int, bool, np.ndarray]]:
    """(axis, reversed, prefix sums of the entering costs) for both directions of every long axis. The costs do not
    change during a search, so their prefix sums are computed once."""
    scans = []
    for axis, enter in ((2, req.cost_col), (1, req.cost_row)):
        if req.shape[axis] > 1:
            scans.append((axis, False, np.cumsum(enter, axis=axis)))
            scans.append((axis, True, np.cumsum(np.flip(enter, axis), axis=axis)))
    return scans


def layer_scan(d: np.ndarray, enter: np.ndarray) -> None:
    """Both ways along the layer axis, in place: one vectorised step per plane beats accumulate on a short axis."""
    for l in range(1, d.shape[0]):
        np.minimum(d[l], d[l - 1] + enter[l], out=d[l])
    for l in range(d.shape[0] - 2, -1, -1):
        np.minimum(d[l], d[l + 1] + enter[l], out=d[l])


def scan(d: np.ndarray, prefix: np.ndarray, axis: int, reverse: bool, out: np.ndarray) -> np.ndarray:
    """One min-plus scan of d along axis: d'[i] = min(d[i], d'[i-1] + enter[i]) = P + cummin(d - P), into `out`
    (the running minimum includes j = i, so d'[i] <= d[i] needs no separate minimum)."""
    if reverse:
        d, out = np.flip(d, axis), np.flip(out, axis)
    np.subtract(d, prefix, out=out)
    np.minimum.accumulate(out, axis=axis, out=out)
    np.add(out, prefix, out=out)
    return np.flip(out, axis) if reverse else out


def sweep_distances(req: RoiRequest, should_stop=None, bounded: bool = False) -> tuple[np.ndarray, int]:
    """Exact distances over the ROI (UNREACHED where none), and the number of sweeps taken. should_stop: looked at
    after each sweep (one takes tens of milliseconds on a large ROI); a reason it gives raises SearchStopped.

    bounded: after each sweep, the nodes farther than the best sink found so far (its distance plus its stub cost)
    are let go (UNREACHED). Costs are not negative, so no path to a sink at that total passes them: the best sink's
    total, and the path walked back from it, are those of the exact distances, in fewer sweeps (the far side of an
    ROI no longer settles its own detours); only the distances beyond the best total are not kept. Once a sink is
    reached, the sweeps also keep to the box of rows and columns where a path at that total can pass (Reach), and
    the nodes outside it keep what they had: c4_hdmi_mipi routed on the CPU 37.4 -> 26.2 s, the same bytes."""
    d = np.full(req.shape, UNREACHED, dtype=np.int64)
    np.minimum.at(d.reshape(-1), req.sources, req.source_cost)
    scans = line_scans(req)
    reach = Reach(req) if bounded and req.sinks.size else None
    box = (slice(None), slice(0, req.shape[1]), slice(0, req.shape[2]))
    sweeps, shape = 0, None
    while True:
        part = d[box]                    # a view: an even number of scans ends in it (and spare in its buffer)
        if part.shape != shape:          # made again only when the box shrinks
            shape, before, spare = part.shape, np.empty_like(part), np.empty_like(part)
        np.copyto(before, part)
        for axis, reverse, prefix in scans:
            part, spare = scan(part, sliced(prefix, box, axis, reverse), axis, reverse, spare), part
        if part.shape[0] > 1:
            layer_scan(part, req.cost_via[box])
        limit = farthest(d, req) if bounded else NO_LIMIT
        part[part > limit] = UNREACHED   # sums through a blocked move are no paths, nor (bounded) those past the limit
        sweeps += 1
        if np.array_equal(part, before):
            return d, sweeps
        stop_if_asked(should_stop)
        if reach is not None and limit < NO_LIMIT:
            box = reach.box(limit, box)


def sliced(prefix: np.ndarray, box: tuple, axis: int, reverse: bool) -> np.ndarray:
    """The box of a scan's prefix sums: a reversed scan's are laid out from the far end, so its slice is mirrored.
    Each line's sums then start from another total than the box's own would: the same scan, since P + cummin(d - P)
    does not change when P gains a constant."""
    if not reverse:
        return prefix[box]
    return np.flip(np.flip(prefix, axis)[box], axis)


def farthest(d: np.ndarray, req: RoiRequest) -> int:
    """The greatest distance a node on a path to the best sink so far can have: that sink's total (distance plus
    stub cost), or anything short of BLOCKED while no sink is reached."""
    at = d.ravel()[req.sinks]
    reached = at < BLOCKED
    if not reached.any():
        return NO_LIMIT
    return min(NO_LIMIT, int((at[reached] + req.sink_cost[reached]).min()))


class Reach:
    """Where a path whose total is at most a limit can pass: every step along a row or a column costs at least
    `step` (the least such cost in the ROI), so a node e rows or columns outside the box of the sources and sinks
    lies 2e steps farther from a source and a sink than they lie apart, and on no such path once those steps cost
    more than the limit leaves. The nodes on the shortest paths to the best sink, and the neighbours the walk back
    tests against them, lie inside the box: their distances are exact. For an ROI with sinks."""

    def __init__(self, req: RoiRequest):
        _, rows, cols = req.shape
        live = req.source_cost < BLOCKED
        self.sources = np.stack(np.divmod(req.sources[live] % (rows * cols), cols), 1)
        self.source_cost = req.source_cost[live]
        sinks = np.stack(np.divmod(req.sinks % (rows * cols), cols), 1)
        self.low, self.high = sinks.min(0), sinks.max(0)      # the sinks' box
        self.sink_cost = int(req.sink_cost.min())
        self.step = max(1, int(min(req.cost_col.min(), req.cost_row.min())))
        # each source's least cost to the sinks' box: its own and the steps to it
        self.least = self.source_cost + self.step * np.maximum(np.maximum(self.low - self.sources,
                                                                          self.sources - self.high), 0).sum(1)

    def box(self, limit: int, old: tuple) -> tuple:
        """The (layers, rows, cols) slices within old (rows and columns from start to stop) that a path at limit can
        reach."""
        low, high = self.low, self.high
        use = self.least + self.sink_cost <= limit     # the sources a path at the limit can leave from
        if not use.any():
            return old
        sources = self.sources[use]
        between = int(np.maximum(np.maximum(low - sources.max(0), sources.min(0) - high), 0).sum())
        spare = (limit - int(self.source_cost[use].min()) - self.sink_cost) // self.step - between
        e = max(0, spare // 2)
        low = np.minimum(sources.min(0), low) - e
        high = np.maximum(sources.max(0), high) + e + 1
        return (slice(None),) + tuple(slice(max(int(lo), was.start), min(int(hi), was.stop))
                                      for lo, hi, was in zip(low, high, old[1:]))


def path_back(req: RoiRequest, d: np.ndarray, node: int) -> np.ndarray:
    """The path from a source to node (ROI-local flat indices), walked back through each node's lowest-index
    neighbour u with d[u] + cost(u -> v) == d[v]: the canonical parents, found only along the path (the near-far
    engines keep them for every node, in their keys)."""
    L, R, C = req.shape
    dist = d.ravel()
    enter = [req.cost_col.ravel(), req.cost_row.ravel(), req.cost_via.ravel()]
    path = [node]
    while True:
        v = path[-1]
        l, rest = divmod(v, R * C)
        r, c = divmod(rest, C)
        dv, best = int(dist[v]), None
        for axis, (step, room) in enumerate(((1, (c > 0, c < C - 1)), (C, (r > 0, r < R - 1)),
                                             (R * C, (l > 0, l < L - 1)))):
            cost = int(enter[axis][v])
            if cost >= BLOCKED:
                continue
            for u, inside in ((v - step, room[0]), (v + step, room[1])):
                if inside and (best is None or u < best):
                    du = int(dist[u])
                    if du < UNREACHED and du + cost == dv:
                        best = u
        if best is None:
            return np.array(path[::-1], dtype=np.int64)
        path.append(best)
