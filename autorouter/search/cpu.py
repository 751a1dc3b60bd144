"""The CPU engine, by one of two methods with the same results:

- "sweep" (the default): min-plus line scans to the fixed point, then the path walked back from the best sink
  through canonical parents (sweep.py);
- "near_far": the round-by-round reference, batched near-far (two-bucket delta-stepping) in NumPy.

In near-far, the K ROIs lie in one flat index space and the state per node is one int64 key, (distance << 32) |
parent, lowered with np.minimum.at exactly as the GPU engine lowers it with a 64-bit atomicMin: distances are
integers, so every engine settles on the same distances and the same lowest-index parents. Each round relaxes the
near bucket (frontier nodes below the ROI's threshold) of every ROI at once; a ROI whose near bucket is empty either
finishes (all sinks settled, or nothing left to reach) or advances its threshold by delta.
"""
from __future__ import annotations

import numpy as np

from . import RoiRequest, RoiResult, stop_if_asked
from .constants import BLOCKED, NO_PARENT, UNREACHED
from .sweep import path_back, sweep_distances

KEY_NONE = np.int64(np.iinfo(np.int64).max)
LOW32 = np.int64(0xFFFFFFFF)


class CpuEngine:
    """method "sweep" (default): min-plus line scans to the fixed point (sweep.py); "near_far": the round-by-round
    reference. Both return the same distances and the same paths."""
    name = "cpu"
    xp = np

    def __init__(self, delta: int, method: str = "sweep"):
        self.delta = int(delta)
        self.method = method

    def search(self, requests: list[RoiRequest], keep_dist: bool = False, should_stop=None) -> list[RoiResult]:
        if not requests:
            return []
        if self.method == "near_far":
            batch = FlatBatch(requests)
            key, rounds = near_far(batch, self.delta, should_stop)
            return batch.results(key, rounds, keep_dist)
        return swept(requests, keep_dist, should_stop)


def swept(requests: list[RoiRequest], keep_dist: bool, should_stop=None) -> list[RoiResult]:
    """Each ROI by sweeps, its path walked back from its best sink (the lowest total, then the lowest position);
    rounds = the most sweeps any ROI took, as a batch of the GPU's."""
    found = [sweep_distances(req, should_stop, bounded=not keep_dist) for req in requests]
    rounds = max(sweeps for _, sweeps in found)
    out = []
    for req, (d, _) in zip(requests, found):
        at = d.ravel()[req.sinks]
        total = np.where(at < UNREACHED, at + req.sink_cost, KEY_NONE)
        dist = np.where(d >= UNREACHED, -1, d).ravel() if keep_dist else None
        if total.size == 0 or total.min() == KEY_NONE:
            out.append(RoiResult(None, -1, -1, rounds, dist))
            continue
        best = int(np.argmin(total))
        out.append(RoiResult(path_back(req, d, int(req.sinks[best])), int(total[best]), best, rounds, dist))
    return out


class FlatBatch:
    """K ROIs laid end to end: node g of the batch is local node g - offset[roi] of its ROI."""

    def __init__(self, requests: list[RoiRequest]):
        self.requests = requests
        sizes = np.array([int(np.prod(r.shape)) for r in requests], dtype=np.int64)
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.size = int(sizes.sum())
        self.k = len(requests)
        self.roi_of = np.repeat(np.arange(self.k, dtype=np.int64), sizes)
        self.plane = np.array([r.shape[1] * r.shape[2] for r in requests], dtype=np.int64)
        self.cols = np.array([r.shape[2] for r in requests], dtype=np.int64)
        self.rows = np.array([r.shape[1] for r in requests], dtype=np.int64)
        self.layers = np.array([r.shape[0] for r in requests], dtype=np.int64)
        self.cost_col = np.concatenate([r.cost_col.ravel() for r in requests]).astype(np.int64)
        self.cost_row = np.concatenate([r.cost_row.ravel() for r in requests]).astype(np.int64)
        self.cost_via = np.concatenate([r.cost_via.ravel() for r in requests]).astype(np.int64)
        sources = np.concatenate([r.sources + o for r, o in zip(requests, self.offset)]).astype(np.int64)
        source_cost = np.concatenate([r.source_cost for r in requests]).astype(np.int64)
        live = source_cost < BLOCKED          # a source at BLOCKED is no source (its key would overflow, too)
        self.sources, self.source_cost = sources[live], source_cost[live]
        self.sinks = np.concatenate([r.sinks + o for r, o in zip(requests, self.offset)]).astype(np.int64)
        self.sink_cost = np.concatenate([r.sink_cost for r in requests]).astype(np.int64)
        self.sink_roi = np.repeat(np.arange(self.k), [len(r.sinks) for r in requests])

    def results(self, key: np.ndarray, rounds: int, keep_dist: bool) -> list[RoiResult]:
        dist = np.where(key == KEY_NONE, -1, key >> 32)
        total = np.where(dist[self.sinks] >= 0, dist[self.sinks] + self.sink_cost, KEY_NONE)
        out, starts = [], np.concatenate([[0], np.cumsum([len(r.sinks) for r in self.requests])])
        for k, req in enumerate(self.requests):
            span = total[starts[k]:starts[k + 1]]
            d = dist[self.offset[k]:self.offset[k] + int(np.prod(req.shape))] if keep_dist else None
            if span.size == 0 or span.min() == KEY_NONE:
                out.append(RoiResult(None, -1, -1, rounds, d))
                continue
            best = int(np.argmin(span))             # lowest sink position among equal totals
            path = walk(key, int(self.sinks[starts[k] + best]), int(self.offset[k]))
            out.append(RoiResult(path, int(span[best]), best, rounds, d))
        return out


def walk(key: np.ndarray, node: int, offset: int) -> np.ndarray:
    """Follow parents from a sink back to a source (a path, not the lattice: its length is the route's)."""
    path = [node - offset]
    parent = int(key[node] & LOW32)
    while parent != NO_PARENT:
        path.append(parent)
        parent = int(key[parent + offset] & LOW32)
    return np.array(path[::-1], dtype=np.int64)


def near_far(b: FlatBatch, delta: int, should_stop=None) -> tuple[np.ndarray, int]:
    key = np.full(b.size, KEY_NONE, dtype=np.int64)
    np.minimum.at(key, b.sources, (b.source_cost << 32) | NO_PARENT)
    frontier = np.zeros(b.size, dtype=bool)
    frontier[b.sources] = True
    threshold = np.full(b.k, KEY_NONE, dtype=np.int64)
    np.minimum.at(threshold, b.roi_of[b.sources], b.source_cost)
    threshold = np.where(threshold == KEY_NONE, 0, threshold) + delta
    rounds = 0
    while True:
        fidx = np.flatnonzero(frontier)
        if fidx.size == 0:
            return key, rounds
        stop_if_asked(should_stop)      # a batch of a large board's ROIs takes a second on the CPU: no waiting
        fd, fr = key[fidx] >> 32, b.roi_of[fidx]
        is_near = fd < threshold[fr]
        has_near = np.bincount(fr[is_near], minlength=b.k) > 0
        has_frontier = np.bincount(fr, minlength=b.k) > 0
        idle = has_frontier & ~has_near
        if idle.any():
            sink_dist = np.where(key[b.sinks] == KEY_NONE, KEY_NONE, key[b.sinks] >> 32)
            unsettled = np.bincount(b.sink_roi[sink_dist >= threshold[b.sink_roi]], minlength=b.k) > 0
            done = idle & ~unsettled
            if done.any():
                frontier[fidx[done[fr]]] = False
            advance = idle & unsettled
            if advance.any():
                lowest = np.full(b.k, KEY_NONE, dtype=np.int64)
                np.minimum.at(lowest, fr, fd)
                threshold[advance] = np.maximum(threshold[advance], lowest[advance]) + delta
            if not has_near.any():
                continue
        near = fidx[is_near]
        frontier[near] = False
        relax(b, key, frontier, near)
        rounds += 1


def relax(b: FlatBatch, key: np.ndarray, frontier: np.ndarray, near: np.ndarray) -> None:
    roi = b.roi_of[near]
    local = near - b.offset[roi]
    plane, cols = b.plane[roi], b.cols[roi]
    layer, rest = np.divmod(local, plane)
    row, col = np.divmod(rest, cols)
    base = key[near] >> 32
    targets, keys = [], []
    moves = ((col > 0, -1, b.cost_col), (col < cols - 1, 1, b.cost_col),
             (row > 0, -cols, b.cost_row), (row < b.rows[roi] - 1, cols, b.cost_row),
             (layer > 0, -plane, b.cost_via), (layer < b.layers[roi] - 1, plane, b.cost_via))
    for ok, step, cost in moves:
        src = np.flatnonzero(ok)
        nb = near[src] + (step[src] if isinstance(step, np.ndarray) else step)
        w = cost[nb]
        legal = w < BLOCKED
        targets.append(nb[legal])
        keys.append(((base[src][legal] + w[legal]) << 32) | local[src][legal])
    tgt = np.concatenate(targets)
    new = np.concatenate(keys)
    before = key[tgt] >> 32
    np.minimum.at(key, tgt, new)
    better = (key[tgt] >> 32) < before
    frontier[tgt[better]] = True
