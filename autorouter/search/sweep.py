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
    ROI no longer settles its own detours); only the distances beyond the best total are not kept."""
    d = np.full(req.shape, UNREACHED, dtype=np.int64)
    np.minimum.at(d.reshape(-1), req.sources, req.source_cost)
    scans = line_scans(req)
    spare = np.empty_like(d)
    sweeps = 0
    while True:
        before = d.copy()
        for axis, reverse, prefix in scans:
            d, spare = scan(d, prefix, axis, reverse, spare), d
        if d.shape[0] > 1:
            layer_scan(d, req.cost_via)
        limit = farthest(d, req) if bounded else int(BLOCKED) - 1
        d[d > limit] = UNREACHED      # sums through a blocked move are no paths, nor (bounded) those past the limit
        sweeps += 1
        if np.array_equal(d, before):
            return d, sweeps
        stop_if_asked(should_stop)


def farthest(d: np.ndarray, req: RoiRequest) -> int:
    """The greatest distance a node on a path to the best sink so far can have: that sink's total (distance plus
    stub cost), or anything short of BLOCKED while no sink is reached."""
    at = d.ravel()[req.sinks]
    reached = at < BLOCKED
    if not reached.any():
        return int(BLOCKED) - 1
    return min(int(BLOCKED) - 1, int((at[reached] + req.sink_cost[reached]).min()))


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
