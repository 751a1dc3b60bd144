"""Pin ordering: a Borůvka minimum spanning tree over each net's pins, vectorised with NumPy.

Edges are all pin pairs (i < j) weighted by the shortest distance between their pads, in micrometres (integers, so
ties are exact); ties are broken by edge index, which makes the tree deterministic (seed 001). `dense_tree` finds
that tree by Prim's steps on the weight matrix: Borůvka sorts every edge in each round, and a ground net of 2,000
pins has two million. The trees stay on the host with a GPU engine too: every tree of vme-wren (1,300 nets, the
largest of 1,319 pins) takes 0.13 s so, no less on the GPU, where CuPy's first compiles of its sorts cost 12-15 s
(benchmarks/CORPUS.md, 2026-11-28).
"""
from __future__ import annotations

import numpy as np


def complete_edges(points: np.ndarray, labels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pin-pair edges (u, v, weight_um) for pins made of points; labels[i] names the pin of point i."""
    n_points = len(points)
    labels = np.arange(n_points) if labels is None else np.asarray(labels)
    n = int(labels.max()) + 1 if n_points else 0
    d = np.hypot(points[:, None, 0] - points[None, :, 0], points[:, None, 1] - points[None, :, 1])
    pin = np.full((n, n), np.inf)
    np.minimum.at(pin, (labels[:, None], labels[None, :]), d)
    u, v = np.triu_indices(n, k=1)
    return u, v, np.rint(pin[u, v] * 1000).astype(np.int64)


def boruvka(n: int, u, v, w) -> np.ndarray:
    """Indices of the edges of a minimum spanning forest of n vertices (sorted)."""
    comp = np.arange(n)
    chosen = np.zeros(len(u), dtype=bool)
    edge_id = np.arange(len(u))
    while True:
        cu, cv = comp[u], comp[v]
        cross = cu != cv
        if not cross.any():
            break
        ends = np.concatenate([cu[cross], cv[cross]])
        ids = np.concatenate([edge_id[cross], edge_id[cross]])
        weights = w[ids]
        order = np.lexsort(np.stack([ids, weights, ends]))   # per component: cheapest, then lowest edge index
        first = np.unique(ends[order], return_index=True)[1]
        picked = np.unique(ids[order][first])
        chosen[picked] = True
        comp = merge(comp, u[picked], v[picked])
    return np.flatnonzero(chosen)


def dense_tree(n: int, u, v, w) -> np.ndarray:
    """boruvka(n, u, v, w) for a complete graph (every pin pair an edge, as complete_edges gives them): the same
    edges, sorted. With ties broken by edge index no two edges weigh the same, so the minimum tree is unique and
    Prim's algorithm finds it too: n - 1 steps of O(n) array work."""
    edges = len(u)
    if n < 2 or edges != n * (n - 1) // 2:
        return boruvka(n, u, v, w)
    if int(w.max(initial=0)) >= np.iinfo(np.int64).max // (edges + 1):
        return boruvka(n, u, v, w)           # (weight, edge index) would not fit one int64 key
    never = np.iinfo(np.int64).max
    key = np.full((n, n), never, np.int64)                # the order Borůvka picks edges in: weight, then index
    key[u, v] = key[v, u] = w * edges + np.arange(edges)
    done = np.zeros(n, bool)
    done[0] = True
    best = key[0].copy()
    best[0] = never
    chosen = np.empty(n - 1, np.int64)
    for step in range(n - 1):
        k = int(np.argmin(best))              # the cheapest edge from the tree to a pin outside it
        chosen[step] = best[k] % edges
        done[k] = True
        best = np.where(done, never, np.minimum(best, key[k]))
    return np.sort(chosen)


def merge(comp, a, b):
    """Union the components joined by edges (a, b); each new component takes its smallest label."""
    parent = np.arange(len(comp))                      # over component labels
    ra, rb = comp[a], comp[b]
    while True:
        low = np.minimum(parent[ra], parent[rb])
        hooked = parent.copy()
        np.minimum.at(hooked, parent[ra], low)
        np.minimum.at(hooked, parent[rb], low)
        while not np.array_equal(hooked, hooked[hooked]):
            hooked = hooked[hooked]                    # pointer jumping to the root
        if np.array_equal(hooked, parent):
            return parent[comp]
        parent = hooked


def connection_order(n: int, u: np.ndarray, v: np.ndarray, tree: np.ndarray, root: int = 0) -> list[int]:
    """Pins in breadth-first order of the tree from `root`: the order in which they join the routed net."""
    adjacency: dict[int, list[int]] = {i: [] for i in range(n)}
    for e in tree:
        adjacency[int(u[e])].append(int(v[e]))
        adjacency[int(v[e])].append(int(u[e]))
    order, seen = [root], {root}
    for pin in order:
        for nxt in sorted(adjacency[pin]):
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
    return order + [i for i in range(n) if i not in seen]
