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
from .raster import window_nodes

MAX_PER_LAYER = 24         # straight stubs kept per pad and layer, shortest first
MAX_ESCAPES = 8            # bent stubs kept per pad and layer, shortest first
FEW_STRAIGHT = 8           # a pad with fewer straight stubs on a layer than this gets bent ones too
ESCAPE_STEPS = 5           # how far past its end, in lattice pitches, a stub may leave a pad before it bends
ESCAPE_NEAR = 1.5          # how far from its bend, in lattice pitches, a bent stub's node may lie
BARE_WIDER = 3             # a pad with no portal within the radius looks this many times as far
FIRST_CHECKED = 2 * MAX_PER_LAYER   # straight stubs of a pad and layer checked first, by their length's bound
NEAREST_INSIDE = 0.02      # a stub to a pad's nearest point ends this share of the way on toward its centre


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

    def subset(self, keep: np.ndarray) -> "Portals":
        """The portals where keep (a mask) is true."""
        return Portals(self.nodes[keep], self.length[keep], self.target[keep], self.pad[keep], self.bend[keep],
                       [b for b, k in zip(self.blocks, keep) if k])

    def points(self, k: int, lattice: Lattice) -> tuple:
        """The stub of portal k as a polyline in mm: pad point, the bend if any, the node."""
        x, y = lattice.node_xy(int(self.nodes[k]))
        bend = () if np.isnan(self.bend[k, 0]) else ((float(self.bend[k, 0]), float(self.bend[k, 1])),)
        return ((float(self.target[k, 0]), float(self.target[k, 1])),) + bend + ((float(x), float(y)),)


EMPTY = np.zeros(0, np.int64)
EXACT = 1e-7               # mm: what floating point may take off a distance that is exactly the clearance (KiCad
                           # counts in nm, and a stub exactly at the clearance is legal for it)


def stub_legal(profile: Profile, layer, net, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which stubs (segments starts[i] -> ends[i], a track of the profile's width) keep clear of other nets' copper.
    layer and net: of each stub (arrays), or one for all."""
    legal = np.ones(len(starts), dtype=bool)
    if not len(starts):
        return legal
    layer, net = np.broadcast_to(layer, legal.shape), np.broadcast_to(net, legal.shape)
    for l in np.unique(layer).tolist():
        obstacles = profile.stub_trees.get(l)
        if obstacles is None:
            continue
        tree, shapes, owners, reach, bounds = obstacles
        which = np.flatnonzero(layer == l)
        stubs = shapely.linestrings(np.stack([starts[which], ends[which]], 1))
        # candidates by bounding box alone (within each shape's reach), of other nets (a net's own copper never
        # rules its stub out): the exact distance is taken once, for those only
        box = shapely.bounds(stubs)
        stub, geom = tree.query(stubs)
        a, b, r = box[stub], bounds[geom], reach[geom]
        near = ((owners[geom] != net[which[stub]]) & (a[:, 0] - b[:, 2] < r) & (b[:, 0] - a[:, 2] < r)
                & (a[:, 1] - b[:, 3] < r) & (b[:, 1] - a[:, 3] < r))
        stub, geom = stub[near], geom[near]
        hit = shapely.distance(shapes[geom], stubs[stub]) < reach[geom] - EXACT
        legal[which[stub[hit]]] = False
    return legal


def straight_portals(pads: list[Pad], layers: np.ndarray, profile: Profile, lattice: Lattice, radius: int):
    """The straight stubs of many (pad, layer) pairs at once, pads[i] on layers[i]: (pair, nodes, lengths, targets)
    of each pair's MAX_PER_LAYER shortest legal stubs, pair after pair, each pair's shortest first (ties in window
    order).

    Checking a stub exactly is the cost (vme-wren: 1.8 million), and most pairs keep a few of the nodes in their
    window: the nearest FIRST_CHECKED of each pair by a lower bound on their stub's length are checked first, then
    only the rest whose bound does not exceed their pair's longest kept stub (stub_bounds). The same stubs as checking
    every node."""
    outlines = np.array([pad.outline for pad in pads], dtype=object)
    shapely.prepare(outlines)
    nets = np.array([pad.net for pad in pads], dtype=np.int64)
    centres = np.array([(pad.x, pad.y) for pad in pads], dtype=np.float64).reshape(-1, 2)
    reach = radius * lattice.pitch
    pair, rr, cc = window_nodes(*lattice.windows(shapely.bounds(outlines).reshape(-1, 4)
                                                 + (-reach, -reach, reach, reach)))
    owner = profile.track_owner[layers[pair], rr, cc]
    keep = (owner == FREE) | (owner == nets[pair])
    pair, rr, cc = pair[keep], rr[keep], cc[keep]
    x, y = lattice.xy(rr, cc)
    xy = np.stack([x, y], 1)
    on_pad = shapely.contains_xy(outlines[pair], x, y)
    end = np.where(on_pad[:, None], xy, centres[pair])
    bound = stub_bounds(outlines, centres, pair, xy, on_pad)
    order, place = sorted_in_groups(pair, bound)
    first = np.zeros(pair.size, bool)
    first[order[place < FIRST_CHECKED]] = True
    legal = np.zeros(pair.size, bool)
    legal[first] = stubs_to_pads(profile, layers, nets, outlines, centres, pair, xy, end, first)
    length = np.hypot(*(xy - end).T)
    kept = shortest_legal(pair, length, legal, MAX_PER_LAYER)
    longest = np.zeros(len(pads))
    np.maximum.at(longest, pair[kept], length[kept])
    longest[np.bincount(pair[kept], minlength=len(pads)) < MAX_PER_LAYER] = np.inf   # any node may still be kept
    rest = ~first & (bound <= longest[pair])
    legal[rest] = stubs_to_pads(profile, layers, nets, outlines, centres, pair, xy, end, rest)
    length[rest] = np.hypot(*(xy[rest] - end[rest]).T)      # only their ends may have moved
    order = shortest_legal(pair, length, legal, MAX_PER_LAYER)
    nodes = lattice.index(layers[pair[order]], rr[order], cc[order])
    return pair[order], nodes, length[order], end[order]


def stubs_to_pads(profile: Profile, layers, nets, outlines, centres, pair, xy, end, which: np.ndarray) -> np.ndarray:
    """Whether the stubs of the candidates `which` (a mask) are legal: from the node to its end (on the pad, or the
    pad's centre), or else to just inside the pad's nearest point, where `end` is moved to."""
    at = np.flatnonzero(which)
    p = pair[at]
    legal = stub_legal(profile, layers[p], nets[p], xy[at], end[at])
    if not legal.all():                 # to the nearest point of the pad instead, just inside its copper
        retry = np.flatnonzero(~legal)
        nearest = shapely.get_coordinates(shapely.shortest_line(shapely.points(xy[at[retry]]), outlines[p[retry]]))
        end[at[retry]] = nearest[1::2] + NEAREST_INSIDE * (centres[p[retry]] - nearest[1::2])
        legal[retry] = stub_legal(profile, layers[p[retry]], nets[p[retry]], xy[at[retry]], end[at[retry]])
    return legal


def stub_bounds(outlines, centres, pair, xy, on_pad) -> np.ndarray:
    """A lower bound on the length of each candidate's stub, whichever end it takes: 0 on the pad; else no less
    than the way to the centre, or than the way to the pad's box less how far NEAREST_INSIDE moves a nearest point
    toward the centre (at most that share of the farthest corner of the box from the centre)."""
    box = shapely.bounds(outlines)[pair]
    dx = np.maximum(np.maximum(box[:, 0] - xy[:, 0], xy[:, 0] - box[:, 2]), 0)
    dy = np.maximum(np.maximum(box[:, 1] - xy[:, 1], xy[:, 1] - box[:, 3]), 0)
    c = centres[pair]
    corner = np.hypot(np.maximum(np.abs(box[:, 0] - c[:, 0]), np.abs(box[:, 2] - c[:, 0])),
                      np.maximum(np.abs(box[:, 1] - c[:, 1]), np.abs(box[:, 3] - c[:, 1])))
    bound = np.minimum(np.hypot(*(xy - c).T), np.hypot(dx, dy) - NEAREST_INSIDE * corner)
    return np.where(on_pad, 0.0, np.maximum(bound, 0.0))


def shortest_legal(pair, length, legal, most: int) -> np.ndarray:
    """The legal candidates among their pair's `most` shortest (ties in window order), by pair, shortest first."""
    pick = np.flatnonzero(legal)
    order, place = sorted_in_groups(pair[pick], length[pick])
    return pick[order[place < most]]


def sorted_in_groups(group: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts items by group (ascending already), then value, then position; and each sorted item's
    place in its group."""
    order = np.lexsort((np.arange(group.size), value, group))
    return order, np.arange(group.size) - np.searchsorted(group[order], group[order])


def escape_portals(pads: list[Pad], layers: np.ndarray, profile: Profile, lattice: Lattice) -> list[tuple]:
    """Per (pad, layer) pair, pads[i] on layers[i]: (nodes, lengths, targets, bends) of its bent stubs, shortest
    first, at most MAX_ESCAPES. Along each of the pad's four axis directions, out of its centre to the first of
    ESCAPE_STEPS points past its end (a lattice pitch apart) from which a straight stub reaches a node within 1.5
    pitches, then to those nodes. Every pair, direction and step is checked at once, in window order."""
    n = len(pads)
    if not n:
        return []
    centre = np.array([(p.x, p.y) for p in pads], dtype=np.float64).reshape(-1, 2)
    t = np.radians([p.angle for p in pads])
    x_axis, y_axis = np.stack([np.cos(t), -np.sin(t)], 1), np.stack([np.sin(t), np.cos(t)], 1)   # KiCad's y down
    direction = np.stack([x_axis, -x_axis, y_axis, -y_axis], 1)                                      # (n, 4, 2)
    coords, of_pad = shapely.get_coordinates(np.array([p.outline for p in pads], dtype=object), return_index=True)
    reach = np.full((n, 4), -np.inf)
    np.maximum.at(reach, of_pad, np.einsum("kj,kaj->ka", coords, direction[of_pad]))
    extent = reach - np.einsum("ij,iaj->ia", centre, direction)                                      # (n, 4)
    out = extent[:, :, None] + np.arange(1, ESCAPE_STEPS + 1) * lattice.pitch                        # (n, 4, steps)
    # every bend: pair after pair, direction after direction, step after step (bend // ESCAPE_STEPS: its direction)
    bend = (centre[:, None, None] + direction[:, :, None] * out[..., None]).reshape(-1, 2)
    pair = np.repeat(np.arange(n), 4 * ESCAPE_STEPS)
    nets = np.array([p.net for p in pads], dtype=np.int64)
    layers = np.asarray(layers, dtype=np.int64)
    open_bend = np.flatnonzero(stub_legal(profile, layers[pair], nets[pair], bend, centre[pair]))
    r = ESCAPE_NEAR * lattice.pitch
    k, rr, cc = window_nodes(*lattice.windows(np.concatenate([bend[open_bend] - r, bend[open_bend] + r], 1)))
    k = open_bend[k]                      # each candidate node's bend
    owner = profile.track_owner[layers[pair[k]], rr, cc]
    mine = (owner == FREE) | (owner == nets[pair[k]])
    k, rr, cc = k[mine], rr[mine], cc[mine]
    xy = np.stack(lattice.xy(rr, cc), 1)
    legal = stub_legal(profile, layers[pair[k]], nets[pair[k]], xy, bend[k])
    k, rr, cc, xy = k[legal], rr[legal], cc[legal], xy[legal]
    # of each direction, the nearest step with a legal node
    side = k // ESCAPE_STEPS
    first = np.full(n * 4, np.iinfo(np.int64).max)
    np.minimum.at(first, side, k)
    k, rr, cc, xy = (a[k == first[side]] for a in (k, rr, cc, xy))
    step = k % ESCAPE_STEPS + 1
    length = np.hypot(*(xy - bend[k]).T) + extent.reshape(-1)[k // ESCAPE_STEPS] + step * lattice.pitch
    nodes = lattice.index(layers[pair[k]], rr, cc)
    bounds = np.searchsorted(pair[k], np.arange(n + 1))
    found = []
    for i in range(n):
        got = slice(bounds[i], bounds[i + 1])
        keep = np.argsort(length[got], kind="stable")[:MAX_ESCAPES]
        found.append((nodes[got][keep], length[got][keep], np.repeat(centre[i][None], keep.size, 0),
                      bend[k[got]][keep]))
    return found


def pads_portals(pads: list[Pad], layer_index: dict[str, int], profile: Profile, lattice: Lattice, radius: int):
    """Per pad, (nodes, stub lengths in mm, stub targets, bends) of its portals on its layers: layer by layer, the
    straight stubs, then bent ones where there are few straight ones."""
    if not pads:
        return []
    pad_of = [i for i, pad in enumerate(pads) for _ in pad.layers]
    layers = np.array([layer_index[l] for pad in pads for l in pad.layers], dtype=np.int64)
    pair, nodes, length, target = straight_portals([pads[i] for i in pad_of], layers, profile, lattice, radius)
    bounds = np.searchsorted(pair, np.arange(len(pad_of) + 1))
    hemmed = np.flatnonzero(np.diff(bounds) < FEW_STRAIGHT)       # pads hemmed in by their neighbours: bent stubs too
    bent = dict(zip(hemmed.tolist(), escape_portals([pads[pad_of[k]] for k in hemmed], layers[hemmed], profile,
                                                    lattice)))
    parts: list[list] = [[] for _ in pads]
    for k, i in enumerate(pad_of):
        got = slice(bounds[k], bounds[k + 1])
        parts[i].append((nodes[got], length[got], target[got], np.full((got.stop - got.start, 2), np.nan)))
        if k in bent:
            parts[i].append(bent[k])
    return [tuple(np.concatenate(p) for p in zip(*found)) if found
            else (EMPTY, np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2))) for found in parts]


def pins_portals(pins: list[list[Pad]], layer_index: dict[str, int], profile: Profile, lattice: Lattice,
                 radius: int) -> list[Portals]:
    """The portals of each pin (a list of pads); a pad with none within `radius` nodes gets those within BARE_WIDER
    times that."""
    pads = [pad for pin in pins for pad in pin]
    found = pads_portals(pads, layer_index, profile, lattice, radius)
    bare = [i for i, f in enumerate(found) if f[0].size == 0]
    again = pads_portals([pads[i] for i in bare], layer_index, profile, lattice, radius * BARE_WIDER)
    for i, found_again in zip(bare, again):
        found[i] = found_again
    out, at = [], 0
    for pin in pins:
        parts = [(nodes.astype(np.int64), length, target.reshape(-1, 2), np.full(nodes.size, i), bend.reshape(-1, 2))
                 for i, (nodes, length, target, bend) in enumerate(found[at:at + len(pin)])]
        at += len(pin)
        out.append(Portals(*(np.concatenate(p) for p in zip(*parts))))
    return out


def search_reach(radius: int, lattice: Lattice) -> float:
    """How far past a pad's outline (mm) pins_portals reads the profile: its nodes, and the stubs from them to it."""
    return max(radius * BARE_WIDER, ESCAPE_STEPS + ESCAPE_NEAR) * lattice.pitch


def pin_portals(pads: list[Pad], layer_index: dict[str, int], profile: Profile, lattice: Lattice,
                radius: int) -> Portals:
    return pins_portals([pads], layer_index, profile, lattice, radius)[0]


ENVELOPE_SLACK = 1e-6      # mm: the boxes that find candidate stubs reach this much past what the exact test keeps


def stub_lines(portals: list[Portals], lattice: Lattice) -> np.ndarray:
    """The stubs of the portals (portal after portal) as linestrings in mm: pad point, the bend if any, the node."""
    target = np.concatenate([p.target for p in portals])
    bend = np.concatenate([p.bend for p in portals])
    x, y = lattice.node_xy(np.concatenate([p.nodes for p in portals]))
    bent = ~np.isnan(bend[:, 0])
    count = 2 + bent
    first = np.cumsum(count) - count
    coords = np.empty((int(count.sum()), 2))
    coords[first] = target
    coords[first[bent] + 1] = bend[bent]
    coords[first + count - 1, 0], coords[first + count - 1, 1] = x, y
    return shapely.linestrings(coords, indices=np.repeat(np.arange(count.size), count))


def mark_stub_conflicts(pins_by_net: list[tuple[int, float, float, list]], lattice: Lattice) -> None:
    """Fill each portal's `blocks`: the portal nodes of other nets whose stubs come closer to its stub than the two
    half widths plus the larger of the two nets' clearances. pins_by_net: (net, track width, clearance, portals
    list). Portals with no such neighbour keep what they had."""
    owners = [(net, width, clearance, portals) for net, width, clearance, portals_list in pins_by_net
              for portals in portals_list if portals.nodes.size]
    if not owners:
        return
    sizes = [portals.nodes.size for *_, portals in owners]
    nodes = np.concatenate([portals.nodes for *_, portals in owners])
    net = np.repeat([o[0] for o in owners], sizes)
    width = np.repeat(np.array([o[1] for o in owners], dtype=np.float64), sizes)
    clearance = np.repeat(np.array([o[2] for o in owners], dtype=np.float64), sizes)
    lines = stub_lines([portals for *_, portals in owners], lattice)
    layer = nodes // lattice.plane
    reach = float(width.max() + clearance.max())
    a, b = [], []
    for l in np.unique(layer).tolist():          # stubs on one layer at a time: only those can come close
        which = np.flatnonzero(layer == l)
        x0, y0, x1, y1 = shapely.bounds(lines[which]).T
        pad = reach + ENVELOPE_SLACK
        near, other = STRtree(lines[which]).query(shapely.box(x0 - pad, y0 - pad, x1 + pad, y1 + pad))
        apart = net[which[near]] != net[which[other]]
        a.append(which[near[apart]])
        b.append(which[other[apart]])
    a, b = np.concatenate(a), np.concatenate(b)
    # within `reach` as the prepared test has it (it counts a stub of no length, a node on its pad, as near nothing)
    shapely.prepare(lines)
    near = shapely.dwithin(lines[a], lines[b], reach)
    shapely.destroy_prepared(lines)
    a, b = a[near], b[near]
    close = (shapely.distance(lines[a], lines[b])
             < (width[a] + width[b]) / 2 + np.maximum(clearance[a], clearance[b]) - EXACT)
    row, node = a[close], nodes[b[close]]
    order = np.lexsort((node, row))
    row, node = row[order], node[order]
    fresh = np.ones(row.size, bool)
    fresh[1:] = (row[1:] != row[:-1]) | (node[1:] != node[:-1])
    row, node = row[fresh], node[fresh]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]]) if row.size else np.zeros(0, np.int64)
    first_row = np.cumsum(sizes) - sizes
    owner = np.searchsorted(first_row, row[starts], "right") - 1
    blocks: dict[int, list] = {}
    for o, k, found in zip(owner.tolist(), (row[starts] - first_row[owner]).tolist(), np.split(node, starts[1:])):
        if o not in blocks:
            blocks[o] = [EMPTY] * owners[o][3].nodes.size
        blocks[o][k] = found
    for o, found in blocks.items():
        owners[o][3].blocks = found


@dataclass
class TrackIndex:
    """Tracks made so far, each as its centre line in one STRtree: built once for the thousands of stubs that a
    round of finishing checks against them (a tree built for each pin cost vme-wren minutes: 21 million lines)."""
    lines: np.ndarray          # shapely LineStrings, start to end
    widths: np.ndarray
    layers: np.ndarray         # lattice layer index (-1: a layer the lattice does not route)
    nets: np.ndarray
    tree: STRtree


def track_index(tracks, lattice: Lattice) -> TrackIndex:
    """The index of these board tracks (arcs by their chords) on the lattice's layers."""
    layer_of = {name: i for i, name in enumerate(lattice.layers)}
    ends = np.array([(t.start, t.end) for t in tracks], np.float64).reshape(-1, 2, 2)
    lines = shapely.linestrings(ends) if len(ends) else np.zeros(0, object)
    return TrackIndex(lines, np.array([t.width for t in tracks], np.float64),
                      np.array([layer_of.get(t.layer, -1) for t in tracks], np.int64),
                      np.array([t.net for t in tracks], np.int64), STRtree(lines))


def keep_clear_of(portals: Portals, net: int, width: float, lattice: Lattice, tracks: TrackIndex,
                  gap: float) -> tuple[Portals, Portals, frozenset]:
    """The portals whose stubs keep clear of `tracks` (routed already) of other nets: the half widths plus `gap`.
    Where no stub does, also the pin's way in through the fewest of those nets: the portals whose stubs cross the
    tracks of the fewest nets, and those nets (finishing may ask them to move: make_way); else no portals, no nets."""
    crossed = stub_crossings(portals, net, width, lattice, tracks, gap)
    count = np.array([len(c) for c in crossed], np.int64)
    clear = count == 0
    fewest = count == count.min() if count.size and not clear.any() else np.zeros(count.size, bool)
    return (portals.subset(clear), portals.subset(fewest),
            frozenset().union(*(c for c, f in zip(crossed, fewest) if f)))


def stub_crossings(portals: Portals, net: int, width: float, lattice: Lattice, tracks: TrackIndex,
                   gap: float) -> list[set[int]]:
    """Per portal, the other nets whose tracks its stub comes nearer to than the half widths plus `gap`."""
    return crossings([portals.points(k, lattice) for k in range(portals.nodes.size)], portals.nodes // lattice.plane,
                     net, width, tracks, gap)


def crossings(polylines: list, layers, net: int, width, tracks: TrackIndex, gap: float) -> list[set[int]]:
    """Per polyline (points in mm, a track of `width` on lattice layer layers[i]), the other nets whose tracks come
    nearer to it than the half widths plus `gap`."""
    crossed: list[set[int]] = [set() for _ in polylines]
    if not tracks.lines.size or not polylines:
        return crossed
    lines = np.array([shapely.LineString(p) for p in polylines], dtype=object)
    width = np.broadcast_to(np.asarray(width, np.float64), (len(polylines),))
    k, j = tracks.tree.query(lines, predicate="dwithin", distance=gap + (width.max() + tracks.widths.max()) / 2)
    keep = (tracks.layers[j] == np.asarray(layers)[k]) & (tracks.nets[j] != net)
    k, j = k[keep], j[keep]
    near = shapely.distance(lines[k], tracks.lines[j]) < gap + (width[k] + tracks.widths[j]) / 2
    for a, b in zip(k[near].tolist(), tracks.nets[j[near]].tolist()):
        crossed[a].add(b)
    return crossed


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
