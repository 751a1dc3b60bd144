"""Portals: the lattice nodes from which a legal straight stub reaches a pad, on every copper layer the pad has.

A node is a portal of pad P (net n) on layer l when the node is open to net n and the stub from the node to the pad's
centre, a track of the net's width, keeps its clearance from every other net's copper (exact geometry, not the
raster). Off-grid pads are reached this way; the stub becomes a track segment at write-back.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from ..board.model import Pad
from .grid import Lattice
from .obstacles import FREE, Profile

MAX_PER_LAYER = 24


@dataclass
class Portals:
    nodes: np.ndarray          # flat lattice indices
    length: np.ndarray         # stub length, mm
    pad: np.ndarray            # index of the pad (in the pin's pad list) each portal serves


def pad_portals(pad: Pad, layers: list[int], profile: Profile, lattice: Lattice, radius: int) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, stub lengths in mm) of the pad's portals, nearest first, at most MAX_PER_LAYER per layer."""
    x0, y0, x1, y1 = pad.outline.bounds
    reach = radius * lattice.pitch
    rows, cols = lattice.window(x0 - reach, y0 - reach, x1 + reach, y1 + reach)
    rr, cc = np.mgrid[rows, cols]
    rr, cc = rr.ravel(), cc.ravel()
    x, y = lattice.xy(rr, cc)
    length = np.hypot(x - pad.x, y - pad.y)
    out_nodes, out_len = [], []
    for l in layers:
        owner = profile.track_owner[l, rr, cc]
        open_ = (owner == FREE) | (owner == pad.net)
        idx = np.flatnonzero(open_)
        idx = idx[np.argsort(length[idx], kind="stable")][:4 * MAX_PER_LAYER]
        if idx.size == 0:
            continue
        stubs = shapely.linestrings(np.stack([np.stack([x[idx], y[idx]], 1),
                                              np.broadcast_to([pad.x, pad.y], (idx.size, 2))], 1))
        legal = np.ones(idx.size, dtype=bool)
        tree = profile.stub_trees.get(l)
        if tree is not None:
            hit_stub, hit_geom = tree[0].query(stubs, predicate="intersects")
            foreign = tree[1][hit_geom] != pad.net
            legal[hit_stub[foreign]] = False
        idx = idx[legal][:MAX_PER_LAYER]
        out_nodes.append(lattice.index(l, rr[idx], cc[idx]))
        out_len.append(length[idx])
    if not out_nodes:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(out_nodes).astype(np.int64), np.concatenate(out_len)


def pin_portals(pads: list[Pad], layer_index: dict[str, int], profile: Profile, lattice: Lattice,
                radius: int) -> Portals:
    nodes, length, which = [], [], []
    for i, pad in enumerate(pads):
        layers = [layer_index[l] for l in pad.layers]
        n, d = pad_portals(pad, layers, profile, lattice, radius)
        if n.size == 0:
            n, d = pad_portals(pad, layers, profile, lattice, radius * 3)
        nodes.append(n); length.append(d); which.append(np.full(n.size, i))
    return Portals(np.concatenate(nodes), np.concatenate(length), np.concatenate(which))
