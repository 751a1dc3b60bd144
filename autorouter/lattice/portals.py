"""Portals: the lattice nodes from which a legal stub reaches a pad, on every copper layer the pad has.

A node is a portal of pad P (net n) on layer l when the node is open to net n and a stub from the node to the pad,
a track of the net's width, keeps its clearance from every other net's copper (exact geometry, not the raster).
The stub is straight, to the pad's centre (or, where that passes too near another net, to the nearest point of the
pad); or, for a pad in a row at fine pitch whose neighbours leave no straight way in, it bends once: out of the pad
along one of its axes, past the ends of its neighbours, then to the node (an escape). Stubs become track segments at
write-back.

Two portals of different nets whose stubs would come too close cannot both be used: each portal lists the other
nets' portal nodes it rules out (`blocks`), and a route that uses it covers those nodes, so that negotiation keeps
such pairs apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.strtree import STRtree

from ..board.model import Pad
from .grid import Lattice
from .obstacles import FREE, Profile

MAX_PER_LAYER = 24         # straight stubs kept per pad and layer, shortest first
MAX_ESCAPES = 8            # bent stubs kept per pad and layer, shortest first
FEW_STRAIGHT = 8           # a pad with fewer straight stubs on a layer than this gets bent ones too
ESCAPE_STEPS = 5           # how far past its end, in lattice pitches, a stub may leave a pad before it bends


@dataclass
class Portals:
    nodes: np.ndarray          # flat lattice indices
    length: np.ndarray         # stub length, mm
    target: np.ndarray         # (n, 2) where each stub ends on the pad (the node itself when it is on the pad)
    pad: np.ndarray            # index of the pad (in the pin's pad list) each portal serves
    bend: np.ndarray = None    # (n, 2) where a bent stub turns; NaN for a straight one
    blocks: list = field(default_factory=list)   # per portal: other nets' portal nodes its stub rules out

    def __post_init__(self):
        if self.bend is None:
            self.bend = np.full((self.nodes.size, 2), np.nan)
        if not self.blocks:
            self.blocks = [EMPTY] * self.nodes.size

    def points(self, k: int, lattice: Lattice) -> tuple:
        """The stub of portal k as a polyline in mm: pad point, the bend if any, the node."""
        x, y = lattice.node_xy(int(self.nodes[k]))
        bend = () if np.isnan(self.bend[k, 0]) else ((float(self.bend[k, 0]), float(self.bend[k, 1])),)
        return ((float(self.target[k, 0]), float(self.target[k, 1])),) + bend + ((float(x), float(y)),)


EMPTY = np.zeros(0, np.int64)


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


def open_nodes(pad: Pad, l: int, profile: Profile, lattice: Lattice, box) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the nodes in the box (x0, y0, x1, y1) that net pad.net may use on layer l."""
    rows, cols = lattice.window(*box)
    rr, cc = np.mgrid[rows, cols]
    rr, cc = rr.ravel(), cc.ravel()
    owner = profile.track_owner[l, rr, cc]
    keep = (owner == FREE) | (owner == pad.net)
    return rr[keep], cc[keep]


def straight_portals(pad: Pad, l: int, profile: Profile, lattice: Lattice, radius: int):
    """(nodes, lengths, targets) of the straight stubs on layer l, shortest first."""
    x0, y0, x1, y1 = pad.outline.bounds
    reach = radius * lattice.pitch
    rr, cc = open_nodes(pad, l, profile, lattice, (x0 - reach, y0 - reach, x1 + reach, y1 + reach))
    x, y = lattice.xy(rr, cc)
    xy = np.stack([x, y], 1)
    on_pad = shapely.contains_xy(pad.outline, x, y)
    end = np.where(on_pad[:, None], xy, [pad.x, pad.y])
    legal = stub_legal(profile, l, pad.net, xy, end)
    if not legal.all():
        retry = np.flatnonzero(~legal)
        nearest = shapely.get_coordinates(shapely.shortest_line(shapely.points(xy[retry]), pad.outline))
        end[retry] = nearest[1::2] + 0.02 * (np.array([pad.x, pad.y]) - nearest[1::2])   # just inside the copper
        legal[retry] = stub_legal(profile, l, pad.net, xy[retry], end[retry])
    xy, end = xy[legal], end[legal]
    nodes = lattice.index(l, rr[legal], cc[legal])
    length = np.hypot(*(xy - end).T)
    keep = np.argsort(length, kind="stable")[:MAX_PER_LAYER]
    return nodes[keep], length[keep], end[keep]


def escape_portals(pad: Pad, l: int, profile: Profile, lattice: Lattice):
    """(nodes, lengths, targets, bends) of the bent stubs on layer l: out of the pad's centre along one of its four
    axis directions to a point past its end, then to a nearby node; shortest first."""
    centre = np.array([pad.x, pad.y])
    t = np.radians(pad.angle)
    axes = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])      # the pad's x and y, KiCad's y down
    nodes, length, bends = [], [], []
    for axis in (axes[0], -axes[0], axes[1], -axes[1]):
        extent = float(np.max(shapely.get_coordinates(pad.outline) @ axis - centre @ axis))
        for k in range(1, ESCAPE_STEPS + 1):
            bend = centre + axis * (extent + k * lattice.pitch)
            if not stub_legal(profile, l, pad.net, bend[None], centre[None])[0]:
                continue
            r = 1.5 * lattice.pitch
            rr, cc = open_nodes(pad, l, profile, lattice, (bend[0] - r, bend[1] - r, bend[0] + r, bend[1] + r))
            if not rr.size:
                continue
            x, y = lattice.xy(rr, cc)
            xy = np.stack([x, y], 1)
            legal = stub_legal(profile, l, pad.net, xy, np.repeat(bend[None], len(xy), 0))
            if legal.any():
                nodes.append(lattice.index(l, rr[legal], cc[legal]))
                length.append(np.hypot(*(xy[legal] - bend).T) + extent + k * lattice.pitch)
                bends.append(np.repeat(bend[None], int(legal.sum()), 0))
                break                       # the nearest legal bend along this direction is enough
    if not nodes:
        return EMPTY, np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2))
    nodes, length, bends = np.concatenate(nodes), np.concatenate(length), np.concatenate(bends)
    keep = np.argsort(length, kind="stable")[:MAX_ESCAPES]
    return nodes[keep], length[keep], np.repeat(centre[None], keep.size, 0), bends[keep]


def pad_portals(pad: Pad, layers: list[int], profile: Profile, lattice: Lattice, radius: int):
    """(nodes, stub lengths in mm, stub targets, bends) of the pad's portals on its layers."""
    parts = []
    for l in layers:
        nodes, length, target = straight_portals(pad, l, profile, lattice, radius)
        parts.append((nodes, length, target, np.full((nodes.size, 2), np.nan)))
        if nodes.size < FEW_STRAIGHT:           # a pad hemmed in by its neighbours: bent stubs too
            parts.append(escape_portals(pad, l, profile, lattice))
    if not parts:
        return EMPTY, np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2))
    return tuple(np.concatenate(p) for p in zip(*parts))


def pin_portals(pads: list[Pad], layer_index: dict[str, int], profile: Profile, lattice: Lattice,
                radius: int) -> Portals:
    parts = []
    for i, pad in enumerate(pads):
        layers = [layer_index[l] for l in pad.layers]
        nodes, length, target, bend = pad_portals(pad, layers, profile, lattice, radius)
        if nodes.size == 0:
            nodes, length, target, bend = pad_portals(pad, layers, profile, lattice, radius * 3)
        parts.append((nodes.astype(np.int64), length, target.reshape(-1, 2), np.full(nodes.size, i),
                      bend.reshape(-1, 2)))
    nodes, length, target, which, bend = (np.concatenate(p) for p in zip(*parts))
    return Portals(nodes, length, target, which, bend)


def mark_stub_conflicts(pins_by_net: list[tuple[int, float, list]], lattice: Lattice, gap: float) -> None:
    """Fill each portal's `blocks`: the portal nodes of other nets whose stubs come closer to its stub than the two
    half widths plus `gap` (the largest clearance and the margin). pins_by_net: (net, track width, portals list)."""
    rows, coords, line_of = [], [], []
    for n, (net, width, portals_list) in enumerate(pins_by_net):
        for p, portals in enumerate(portals_list):
            if not portals.nodes.size:
                continue
            x, y = lattice.node_xy(portals.nodes)
            bent = ~np.isnan(portals.bend[:, 0])
            for k in range(portals.nodes.size):
                points = [portals.target[k]] + ([portals.bend[k]] if bent[k] else []) + [(x[k], y[k])]
                coords += points
                line_of += [len(rows)] * len(points)
                rows.append((n, p, k, int(portals.nodes[k]) // lattice.plane, net, width, int(portals.nodes[k])))
    if not rows:
        return
    table = np.array(rows, dtype=np.float64)
    lines = shapely.linestrings(np.asarray(coords, dtype=np.float64), indices=np.asarray(line_of))
    a, b = STRtree(lines).query(lines, predicate="dwithin", distance=float(table[:, 5].max()) + gap)
    keep = (table[a, 4] != table[b, 4]) & (table[a, 3] == table[b, 3])
    a, b = a[keep], b[keep]
    close = shapely.distance(lines[a], lines[b]) < (table[a, 5] + table[b, 5]) / 2 + gap
    found: dict[tuple[int, int], list] = {}
    for i, j in zip(a[close].tolist(), b[close].tolist()):
        found.setdefault((int(table[i, 0]), int(table[i, 1])), []).append((int(table[i, 2]), int(table[j, 6])))
    for (n, p), pairs in found.items():
        portals = pins_by_net[n][2][p]
        blocks = [[] for _ in range(portals.nodes.size)]
        for k, node in pairs:
            blocks[k].append(node)
        portals.blocks = [np.unique(np.array(b, np.int64)) if b else EMPTY for b in blocks]


def keep_clear_of(portals: Portals, net: int, width: float, lattice: Lattice, tracks, gap: float) -> Portals:
    """The portals whose stubs keep clear of `tracks` (routed already) of other nets: the half widths plus `gap`."""
    others = [t for t in tracks if t.net != net]
    if not others or not portals.nodes.size:
        return portals
    bodies = [shapely.LineString([t.start, t.end]) for t in others]
    tree = STRtree(bodies)
    keep = np.ones(portals.nodes.size, bool)
    for k in range(portals.nodes.size):
        layer = lattice.layers[int(portals.nodes[k]) // lattice.plane]
        line = shapely.LineString(portals.points(k, lattice))
        for j in tree.query(line, predicate="dwithin", distance=gap + width / 2 + max(t.width for t in others) / 2):
            t = others[j]
            if t.layer == layer and line.distance(bodies[j]) < gap + (width + t.width) / 2:
                keep[k] = False
                break
    return Portals(portals.nodes[keep], portals.length[keep], portals.target[keep], portals.pad[keep],
                   portals.bend[keep], [b for b, k in zip(portals.blocks, keep) if k] if portals.blocks else [])


PLANE_SPACING_MM = 0.4     # spacing of the nodes a net may join its own zone fill at


def fill_nodes(pieces, net: int, layer_index: dict[str, int], profile: Profile, lattice: Lattice,
               inset: float) -> np.ndarray:
    """Lattice nodes inside the net's own zone fill pieces, at least `inset` (a via's radius and a margin) from the
    fill's edge, where the net may put a track and a via: a path that ends there joins the fill (a via into a plane),
    so a pad the fill does not reach needs no track to another pad. Every few nodes, not all: a plane is large."""
    stride = max(1, int(round(PLANE_SPACING_MM / lattice.pitch)))
    parts = []
    for piece in pieces:
        l = layer_index.get(piece.layer)
        inner = piece.shape.buffer(-inset) if l is not None else None
        if inner is None or inner.is_empty:
            continue
        rows, cols = lattice.window(*inner.bounds)
        r0, c0 = -(-rows.start // stride) * stride, -(-cols.start // stride) * stride     # one grid for all
        rr, cc = np.mgrid[r0:rows.stop:stride, c0:cols.stop:stride]
        rr, cc = rr.ravel(), cc.ravel()
        x, y = lattice.xy(rr, cc)
        inside = shapely.contains_xy(inner, x, y)
        rr, cc = rr[inside], cc[inside]
        track, via = profile.track_owner[l, rr, cc], profile.via_owner[rr, cc]
        ok = ((track == FREE) | (track == net)) & ((via == FREE) | (via == net))
        parts.append(lattice.index(l, rr[ok], cc[ok]).astype(np.int64))
    return np.unique(np.concatenate(parts)) if parts else EMPTY
