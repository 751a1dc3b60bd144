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
    target: np.ndarray         # (n, 2) where each stub ends on the pad (the node itself when it is on the pad)
    pad: np.ndarray            # index of the pad (in the pin's pad list) each portal serves


def stub_legal(profile: Profile, layer: int, net: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which stubs (segments starts[i] -> ends[i], a track of the profile's width) keep clear of other nets."""
    legal = np.ones(len(starts), dtype=bool)
    tree = profile.stub_trees.get(layer)
    if tree is None or not len(starts):
        return legal
    stubs = shapely.linestrings(np.stack([starts, ends], 1))
    hit_stub, hit_geom = tree[0].query(stubs, predicate="intersects")
    legal[hit_stub[tree[1][hit_geom] != net]] = False
    return legal


def pad_portals(pad: Pad, layers: list[int], profile: Profile, lattice: Lattice, radius: int):
    """(nodes, stub lengths in mm, stub targets) of the pad's portals, nearest first, MAX_PER_LAYER per layer.

    A node on the pad's copper needs no stub. Other nodes reach for the pad's centre, or, where that stub would pass
    too near another net (interleaved solder-jumper pads, say), for the nearest point of the pad.
    """
    x0, y0, x1, y1 = pad.outline.bounds
    reach = radius * lattice.pitch
    rows, cols = lattice.window(x0 - reach, y0 - reach, x1 + reach, y1 + reach)
    rr, cc = np.mgrid[rows, cols]
    rr, cc = rr.ravel(), cc.ravel()
    x, y = lattice.xy(rr, cc)
    xy = np.stack([x, y], 1)
    on_pad = shapely.contains_xy(pad.outline, x, y)
    target = np.where(on_pad[:, None], xy, [pad.x, pad.y])
    out = []
    for l in layers:
        owner = profile.track_owner[l, rr, cc]
        idx = np.flatnonzero((owner == FREE) | (owner == pad.net))
        if idx.size == 0:
            continue
        end = target[idx].copy()
        legal = stub_legal(profile, l, pad.net, xy[idx], end)
        if not legal.all():
            retry = np.flatnonzero(~legal)
            nearest = shapely.get_coordinates(shapely.shortest_line(shapely.points(xy[idx[retry]]), pad.outline))
            end[retry] = nearest[1::2] + 0.02 * (np.array([pad.x, pad.y]) - nearest[1::2])   # just inside the copper
            legal[retry] = stub_legal(profile, l, pad.net, xy[idx[retry]], end[retry])
        idx, end = idx[legal], end[legal]
        length = np.hypot(*(xy[idx] - end).T)
        keep = np.argsort(length, kind="stable")[:MAX_PER_LAYER]
        out.append((lattice.index(l, rr[idx[keep]], cc[idx[keep]]), length[keep], end[keep]))
    if not out:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 2))
    return tuple(np.concatenate(parts) for parts in zip(*out))


def pin_portals(pads: list[Pad], layer_index: dict[str, int], profile: Profile, lattice: Lattice,
                radius: int) -> Portals:
    parts = []
    for i, pad in enumerate(pads):
        layers = [layer_index[l] for l in pad.layers]
        nodes, length, target = pad_portals(pad, layers, profile, lattice, radius)
        if nodes.size == 0:
            nodes, length, target = pad_portals(pad, layers, profile, lattice, radius * 3)
        parts.append((nodes.astype(np.int64), length, target.reshape(-1, 2), np.full(nodes.size, i)))
    nodes, length, target, which = (np.concatenate(p) for p in zip(*parts))
    return Portals(nodes, length, target, which)
