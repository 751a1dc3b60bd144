"""Random search batches and a reference answer (scipy's Dijkstra), shared by the CPU and GPU engine tests."""
from __future__ import annotations

import numpy as np

from autorouter.search import BLOCKED, ArrayCosts, RoiRequest


def random_request(rng, shape, blocked=0.1, n_src=3, n_sink=3, noisy=False, blocked_src=0.0) -> RoiRequest:
    """blocked_src: the share of sources that start at cost BLOCKED (portals strict repair walls off)."""
    L, R, C = shape
    size = L * R * C
    def costs(base):
        c = (rng.integers(1, 60, size) if noisy else np.full(size, base)).astype(np.int64)
        c[rng.random(size) < 0.05] *= 20
        return c.reshape(shape)
    col, row, via = costs(10), costs(14), costs(80)
    wall = rng.random(shape) < blocked
    for c in (col, row, via):
        c[wall] = BLOCKED
    via[:, rng.random((R, C)) < 0.3] = BLOCKED
    src = rng.choice(size, size=min(n_src, size), replace=False)
    snk = rng.choice(size, size=min(n_sink, size), replace=False)
    src_cost = rng.integers(0, 30, len(src)).astype(np.int64)
    sink_cost = rng.integers(0, 30, len(snk)).astype(np.int64)
    if blocked_src:
        src_cost[rng.random(len(src)) < blocked_src] = BLOCKED
    return RoiRequest(shape, ArrayCosts(col, row, via), src.astype(np.int64), src_cost, snk.astype(np.int64), sink_cost)


def blocked_source_requests():
    """Strict repair prices a portal inside another net's cover at BLOCKED: such a source must start no path, not
    even when it is the one nearest the sink, and a search whose only source it is finds none."""
    cost = np.full((1, 1, 6), 1, np.int64)
    costs = ArrayCosts(cost, cost.copy(), np.full((1, 1, 6), BLOCKED))
    beside = RoiRequest((1, 1, 6), costs, np.array([0, 4]), np.array([0, BLOCKED]), np.array([5]), np.array([0]))
    alone = RoiRequest((1, 1, 6), costs, np.array([4]), np.array([BLOCKED]), np.array([5]), np.array([0]))
    return beside, alone


def reference(req: RoiRequest):
    """Distances by scipy's Dijkstra from a virtual source (start costs as its edge weights, +1 to stay non-zero)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra
    L, R, C = req.shape
    n = L * R * C
    idx = np.arange(n).reshape(req.shape)
    rows, cols, w = [], [], []
    for axis, cost in ((2, req.cost_col), (1, req.cost_row), (0, req.cost_via)):
        for fwd in (True, False):
            a = np.take(idx, range(0, idx.shape[axis] - 1), axis=axis).ravel()
            b = np.take(idx, range(1, idx.shape[axis]), axis=axis).ravel()
            if not fwd:
                a, b = b, a
            wt = cost.ravel()[b]
            ok = wt < BLOCKED
            rows.append(a[ok]); cols.append(b[ok]); w.append(wt[ok].astype(float))
    live = req.source_cost < BLOCKED                     # a source at BLOCKED is no source
    rows.append(np.full(live.sum(), n)); cols.append(req.sources[live]); w.append(req.source_cost[live] + 1.0)
    g = sp.csr_matrix((np.concatenate(w), (np.concatenate(rows), np.concatenate(cols))), shape=(n + 1, n + 1))
    d = dijkstra(g, indices=n, min_only=True)[:n] - 1
    # duplicate (a, b) pairs are summed by csr_matrix; sources listed twice are impossible (chosen without replace)
    return d
