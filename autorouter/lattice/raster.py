"""Many shapes onto the lattice at once: which nodes lie inside each, and who owns each node once all are stamped.

One call of shapely's contains_xy over every (shape, node of the shape's window) pair takes the place of one call per
shape: the same nodes as Lattice.window and contains_xy find shape by shape, without a Python loop over shapes.
"""
from __future__ import annotations

import numpy as np
import shapely

from ..board.geometry import ranges
from .grid import STEPS, Lattice

FREE, HARD = -1, -2
PAIRS_PER_CALL = 1 << 22     # (shape, node) pairs tested per call of contains_xy: bounds the memory (some 100 MB)


def nodes_inside(lattice: Lattice, shapes) -> tuple[np.ndarray, np.ndarray]:
    """(shape, node) for every node strictly inside shapes[shape], node = row * cols + col in the plane; empty
    shapes hold none. The shapes are prepared (shapely.prepare) on the way."""
    shapes = np.asarray(shapes, dtype=object)
    found_shape, found_node = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    solid = np.flatnonzero(~shapely.is_empty(shapes)) if shapes.size else np.zeros(0, np.int64)
    if not solid.size:
        return found_shape[0], found_node[0]
    shapely.prepare(shapes[solid])
    r0, r1, c0, c1 = lattice.windows(shapely.bounds(shapes[solid]))
    count = (r1 - r0) * (c1 - c0)
    ends = np.cumsum(count)
    start = 0
    while start < solid.size:           # shapes start..stop-1: some PAIRS_PER_CALL window nodes in all, or one shape
        before = ends[start] - count[start]
        stop = max(start + 1, int(np.searchsorted(ends, before + PAIRS_PER_CALL, "right")))
        k, row, col = window_nodes(r0[start:stop], r1[start:stop], c0[start:stop], c1[start:stop])
        k += start
        x, y = lattice.xy(row, col)
        inside = shapely.contains_xy(shapes[solid[k]], x, y)
        found_shape.append(solid[k[inside]])
        found_node.append(row[inside] * lattice.cols + col[inside])
        start = stop
    return np.concatenate(found_shape), np.concatenate(found_node)


def window_nodes(r0, r1, c0, c1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(window, row, col) of every node of the windows rows r0[k]:r1[k], columns c0[k]:c1[k], window after window,
    each row by row as np.mgrid orders them."""
    width = np.maximum(c1 - c0, 0)
    count = np.maximum(r1 - r0, 0) * width
    k = np.repeat(np.arange(len(count)), count)
    offset = ranges(np.zeros(len(count), np.int64), count)                         # of the node in its window
    return k, r0[k] + offset // np.maximum(width[k], 1), c0[k] + offset % np.maximum(width[k], 1)


def claim(owner: np.ndarray, nodes: np.ndarray, who: np.ndarray) -> None:
    """Stamp owners onto nodes of `owner` (flat indices into it), as if one at a time: a node that nobody held and
    that one owner claims gets that owner; a node two different owners claim, or that HARD claims, is HARD. The
    outcome does not depend on the order of the claims. who: net numbers or HARD, never FREE."""
    if not nodes.size:
        return
    flat = owner.reshape(-1)
    held_before = flat.astype(np.int64)
    big = np.iinfo(np.int64).max
    low = np.where(flat == FREE, big, held_before)
    high = np.where(flat == FREE, -big, held_before)
    np.minimum.at(low, nodes, who)
    np.maximum.at(high, nodes, who)
    held = low != big
    flat[held] = np.where(low[held] == high[held], low[held], HARD)


def chord_ends(lattice: Lattice, rows: np.ndarray, cols: np.ndarray, shapes: np.ndarray,
               reach: np.ndarray) -> np.ndarray:
    """Which of the nodes (rows[i], cols[i]), each at least reach[i] from shapes[i], must be blocked too so that no
    step between two free nodes passes nearer than reach[i] to shapes[i]. A step is a chord one pitch long: it can
    cut across a curve or a corner nearer than both its ends, by up to a chord's sagitta. Of each such step the end
    nearer the shape is blocked, so that the step goes and its other end stays free. Callers pass the nodes within
    sqrt(reach^2 + (pitch/2)^2) of the shape: no other node can end such a step."""
    near = shapely.distance(shapely.points(*lattice.xy(rows, cols)), shapes)
    blocked = np.zeros(rows.size, dtype=bool)
    for dr, dc in STEPS:
        r2, c2 = rows + dr, cols + dc
        m = np.flatnonzero((r2 >= 0) & (r2 < lattice.rows) & (c2 >= 0) & (c2 < lattice.cols) & ~blocked)
        ends = np.stack([np.stack(lattice.xy(rows[m], cols[m]), 1), np.stack(lattice.xy(r2[m], c2[m]), 1)], 1)
        other = shapely.distance(shapely.points(ends[:, 1]), shapes[m])
        cuts = (shapely.distance(shapely.linestrings(ends), shapes[m]) < reach[m]) & (other >= reach[m])
        blocked[m[cuts & (near[m] <= other)]] = True
    return blocked
