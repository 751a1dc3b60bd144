"""Integer move costs for one connection's region of interest, from PathFinder's state.

cost = (base + history) x (1 + present_factor x occupancy), per node entered, in units where one lattice step in a
layer's preferred direction costs STEP. Integers keep every engine's distances identical.
"""
from __future__ import annotations

import numpy as np

from ..lattice.obstacles import FREE
from ..search import BLOCKED

STEP = 16
COST_CAP = 1 << 22


def roi_costs(task, lattice, occ, rows: slice, cols: slice, pres: float, config):
    """(cost_col, cost_row, cost_via) int64 arrays of shape (layers, rows, cols) for task's net in the window."""
    L = len(lattice.layers)
    net, profile = task.net, task.profile
    owner = profile.track_owner[:, rows, cols]
    legal = (owner == FREE) | (owner == net)
    shape3 = (L, lattice.rows, lattice.cols)
    crowd = occ.track.reshape(shape3)[:, rows, cols]
    hist = occ.hist_track.reshape(shape3)[:, rows, cols]
    mult = (1.0 + hist) * (1.0 + pres * crowd)
    horizontal = (np.arange(L) % 2 == 0)[:, None, None]
    wrong = config.wrong_way_cost
    col_step = np.where(horizontal, STEP, STEP * wrong)
    row_step = np.where(horizontal, STEP * wrong, STEP)
    cost_col = np.where(legal, np.minimum(np.rint(col_step * mult), COST_CAP), BLOCKED).astype(np.int64)
    cost_row = np.where(legal, np.minimum(np.rint(row_step * mult), COST_CAP), BLOCKED).astype(np.int64)
    vowner = profile.via_owner[rows, cols]
    via_ok = (vowner == FREE) | (vowner == net)
    crowd_v = occ.via.reshape(lattice.rows, lattice.cols)[rows, cols]
    hist_v = occ.hist_via.reshape(lattice.rows, lattice.cols)[rows, cols]
    vmult = (1.0 + hist_v) * (1.0 + pres * crowd_v)
    via = np.minimum(np.rint(config.via_cost * STEP * vmult), COST_CAP)[None] + np.zeros((L, 1, 1))
    cost_via = np.where(legal & via_ok[None], via, BLOCKED).astype(np.int64)
    return cost_col, cost_row, cost_via


def stub_cost(length_mm: np.ndarray, pitch: float) -> np.ndarray:
    return np.rint(np.asarray(length_mm) / pitch * STEP).astype(np.int64)


def node_penalty(occ, nodes: np.ndarray, pres: float) -> np.ndarray:
    """What congestion adds to entering these nodes; charged to portal sources, which are never entered."""
    mult = (1.0 + occ.hist_track[nodes]) * (1.0 + pres * occ.track[nodes])
    return np.minimum(np.rint(STEP * (mult - 1.0)), COST_CAP).astype(np.int64)
