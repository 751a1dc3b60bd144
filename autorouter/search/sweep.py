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

from . import BLOCKED, NO_PARENT, RoiRequest

UNREACHED = np.int64(1 << 56)


def scan(d: np.ndarray, enter: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """One min-plus scan of d along axis with per-node entering costs."""
    if reverse:
        d, enter = np.flip(d, axis), np.flip(enter, axis)
    prefix = np.cumsum(enter, axis=axis)
    out = np.minimum(d, prefix + np.minimum.accumulate(d - prefix, axis=axis))
    return np.flip(out, axis) if reverse else out


def sweep_distances(req: RoiRequest) -> tuple[np.ndarray, int]:
    """Exact distances over the ROI (UNREACHED where none), and the number of sweeps taken."""
    d = np.full(req.shape, UNREACHED, dtype=np.int64)
    np.minimum.at(d.reshape(-1), req.sources, req.source_cost)
    costs = ((2, req.cost_col), (1, req.cost_row), (0, req.cost_via))
    sweeps = 0
    while True:
        before = d
        for axis, enter in costs:
            if d.shape[axis] > 1:
                d = scan(d, enter, axis, False)
                d = scan(d, enter, axis, True)
        d = np.where(d >= BLOCKED, UNREACHED, d)     # sums through a blocked move are no paths
        sweeps += 1
        if np.array_equal(d, before):
            return d, sweeps


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
