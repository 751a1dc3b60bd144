"""Row/column/layer sweeps: min-plus prefix scans along every lattice line, repeated until nothing improves.

Along a line with entering costs c, the forward scan d'[i] = min(d[i], d'[i-1] + c[i]) has the closed form
d' = P + cummin(d - P) with P the prefix sum of c, so one NumPy expression settles a whole line at once. Six scans
(both ways along columns, rows and layers) make one sweep; a path with k turns or layer changes is settled after at
most k + 1 sweeps, against one near-far round per lattice step. At the fixed point the distances are exact (integer
costs, no rounding), and each node's parent is then chosen as its lowest-index predecessor on a shortest path: the
same canonical tree the near-far engines build with their packed (distance, parent) minimum.
"""
from __future__ import annotations

import numpy as np

from . import RoiRequest, stop_if_asked
from .constants import BLOCKED, NO_PARENT, UNREACHED


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


def sweep_distances(req: RoiRequest, should_stop=None) -> tuple[np.ndarray, int]:
    """Exact distances over the ROI (UNREACHED where none), and the number of sweeps taken. should_stop: looked at
    after each sweep (one takes tens of milliseconds on a large ROI); a reason it gives raises SearchStopped."""
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
        d[d >= BLOCKED] = UNREACHED                  # sums through a blocked move are no paths
        sweeps += 1
        if np.array_equal(d, before):
            return d, sweeps
        stop_if_asked(should_stop)


def canonical_parents(req: RoiRequest, d: np.ndarray) -> np.ndarray:
    """Lowest-index neighbour u with d[u] + cost(u -> v) == d[v], per node (NO_PARENT for none)."""
    L, R, C = req.shape
    index = np.arange(L * R * C, dtype=np.int64).reshape(req.shape)
    parent = np.full(req.shape, NO_PARENT, dtype=np.int64)
    reached = d < UNREACHED
    for axis, enter in ((2, req.cost_col), (1, req.cost_row), (0, req.cost_via)):
        n = d.shape[axis]
        if n < 2:
            continue
        for shift in (1, -1):          # predecessor at position i - shift along the axis
            dst = [slice(None)] * 3
            src = [slice(None)] * 3
            dst[axis] = slice(1, n) if shift == 1 else slice(0, n - 1)
            src[axis] = slice(0, n - 1) if shift == 1 else slice(1, n)
            dst, src = tuple(dst), tuple(src)
            tight = reached[dst] & reached[src] & (d[src] + enter[dst] == d[dst]) & (enter[dst] < BLOCKED)
            candidate = np.where(tight, index[src], NO_PARENT)
            parent[dst] = np.minimum(parent[dst], candidate)
    return parent
