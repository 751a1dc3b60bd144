"""Obstacles rasterised onto the lattice, once per net-class profile (track width, clearance, via size).

For each profile, `track_owner[l, r, c]` says who may put a track centre-line on that node:
FREE (-1) anyone, HARD (-2) nobody, n >= 0 only net n (the node is near net n's own copper). `via_owner[r, c]`
says the same for a through via at (r, c), which spans every layer. Inflation: clearance (the larger of the two
nets', or a pad's own where it has one: DesignRules.clearance_between) plus half the track width or the via radius,
plus config.clearance_margin. The board edge, keepouts, copper text and graphics, holes and pads of no net are HARD.
Solder-mask openings of other nets' pads keep tracks out on the outer layers, and the thermal spokes that connect
pads to zones keep other nets away.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import NamedTuple

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry
from shapely.strtree import STRtree

from ..board.geometry import circle, grow, grow_all
from ..board.model import Board
from ..board.rules import DesignRules, NetClassRules
from ..parallel import at_once
from .grid import Lattice
from .raster import FREE, HARD, chord_ends, claim, nodes_inside


@dataclass
class CopperItem:
    geom: BaseGeometry
    layers: tuple[int, ...]
    net: int                  # 0: no net (HARD for everybody)
    clearance: float | None = None     # its own clearance (a pad's), which overrides its net class's
    floor: float = 0.0                 # what custom rules ask of it beyond its class (copper drawings)


class StubObstacles(NamedTuple):
    """A layer's stamped shapes as they are, for exact tests of stubs: a stub is an exact segment, tested against
    each shape's exact distance without the margin (KiCad allows a track exactly at the clearance), not against the
    grown outline, which circumscribes the curves and so also pushes straight sides out."""
    tree: STRtree           # of each shape's bounding box grown by its reach: a query by a stub's own box finds
                            # every shape it may come within reach of, with no box made per stub
    shapes: np.ndarray
    owners: np.ndarray
    reach: np.ndarray       # how near a stub's centre line may not come (mm)
    bounds: np.ndarray      # (n, 4) each shape's bounding box


@dataclass
class Profile:
    rules: NetClassRules
    track_owner: np.ndarray                      # (L, R, C) int32
    via_owner: np.ndarray                        # (R, C) int32
    stub_trees: dict[int, StubObstacles] = field(default_factory=dict)      # by layer


def copper_items(board: Board, rules: DesignRules) -> list[CopperItem]:
    index = {name: i for i, name in enumerate(board.copper_layers)}
    items = []
    for pad in board.pads:
        if pad.layers:
            items.append(CopperItem(pad.outline, tuple(index[l] for l in pad.layers), pad.net, pad.clearance))
    for t in board.tracks:
        items.append(CopperItem(t.body(), (index[t.layer],), t.net))
    for v in board.vias:
        items.append(CopperItem(v.body(), tuple(index[l] for l in v.layers), v.net))
    for g in board.graphics:        # a net tie's drawing: the first tied net may reach its pad across it
        items.append(CopperItem(g.outline, (index[g.layer],), g.tied[0] if g.tied else g.net,
                                floor=rules.graphic_clearance))
    return items


@dataclass
class Hole:
    geom: BaseGeometry
    plated: bool              # plated holes sit inside their own pad or via copper
    net: int
    clearance: float | None = None     # its pad's own clearance


def holes(board: Board) -> list[Hole]:
    """Every drilled hole."""
    out = [Hole(pad.hole, bool(pad.layers), pad.net, pad.clearance) for pad in board.pads if pad.hole is not None]
    out += [Hole(circle(v.x, v.y, v.drill / 2), True, v.net) for v in board.vias]
    return out


@dataclass
class Stamps:
    """Shapes to stamp onto a profile's planes, collected in order and grown in one call: what grows (mm), by how
    much (mm), who owns its nodes, and on which layers (None: the via plane)."""
    geoms: list = field(default_factory=list)
    distances: list = field(default_factory=list)
    owners: list = field(default_factory=list)
    layers: list = field(default_factory=list)

    def add(self, geom: BaseGeometry, distance: float, who: int, layers: tuple[int, ...] | None) -> None:
        self.geoms.append(geom)
        self.distances.append(distance)
        self.owners.append(who)
        self.layers.append(layers)

    def near(self, boxes: np.ndarray, slack: float) -> "Stamps":
        """The stamps whose shape, grown by its distance and `slack` more, may reach one of the boxes (rows of x0, y0,
        x1, y1 in mm), in their order."""
        geoms = np.asarray(self.geoms, dtype=object)
        some = np.flatnonzero(~shapely.is_empty(geoms))
        reach = np.asarray(self.distances, dtype=np.float64)[some] + slack
        grown = shapely.box(*(shapely.bounds(geoms[some]) + reach[:, None] * np.array([-1, -1, 1, 1])).T)
        hit, _ = STRtree(shapely.box(*np.asarray(boxes, dtype=np.float64).T)).query(grown, predicate="intersects")
        out = Stamps()
        for k in some[np.unique(hit)].tolist():
            out.add(self.geoms[k], self.distances[k], self.owners[k], self.layers[k])
        return out


def collect_stamps(board: Board, rules: DesignRules, cls: NetClassRules, lattice: Lattice, items, hole_list,
                   margin: float, guards) -> Stamps:
    """Every shape the class's profile stamps: copper, holes, spoke guards, mask openings and keepouts, each grown
    by the clearance it needs from a track centre-line (on its layers) or a via centre (the via plane)."""
    L = len(lattice.layers)
    half_w, via_r = cls.track_width / 2, cls.via_diameter / 2
    out = Stamps()
    for item in items:
        gap = rules.clearance_between(cls.clearance, rules.class_clearance(item.net, item.floor), own_b=item.clearance)
        who = item.net if item.net else HARD
        out.add(item.geom, gap + half_w + margin, who, item.layers)
        # a via keeps its copper `gap` from other copper, and its hole the board's hole clearance
        out.add(item.geom, max(gap + via_r, rules.hole_clearance + cls.via_drill / 2) + margin, who, None)
    hole_gap_via = max(rules.hole_to_hole + cls.via_drill / 2, rules.hole_clearance + via_r) + margin
    for hole in hole_list:
        own = hole.clearance or 0.0          # KiCad holds a pad's own clearance to its hole too
        out.add(hole.geom, max(hole_gap_via, own + via_r + margin), HARD, None)
        # copper keeps the hole clearance from another net's hole, and its own clearance from an unplated one
        who = hole.net if hole.plated and hole.net else HARD
        out.add(hole.geom, max(rules.hole_clearance, own, 0.0 if hole.plated else cls.clearance) + half_w + margin,
                who, tuple(range(L)))
    index = {name: i for i, name in enumerate(board.copper_layers)}
    for area, layer, net in guards:           # thermal spokes that must keep reaching their zone's fill
        out.add(area, half_w + margin, net, (index[layer],))
        out.add(area, via_r + margin, net, None)
    for opening in board.mask_openings:       # copper bared beside another net's pad would bridge to it
        who = opening.net or HARD
        out.add(opening.outline, half_w + margin, who, (index[opening.layer],))
        # a via's copper is on both sides, and a bare via's mask opening keeps the web from other openings
        reach = via_r + rules.bare_via_reach + rules.mask_web if opening.layer in board.bare_vias else via_r
        out.add(opening.outline, reach + margin, who, None)
    for k in board.keepouts:
        layers = tuple(board.copper_layers.index(n) for n in k.layers)
        if k.no_tracks:
            out.add(k.outline, half_w + margin, HARD, layers)
        if k.no_vias:
            out.add(k.outline, via_r + margin, HARD, None)
    return out


def build_profile(board: Board, rules: DesignRules, cls: NetClassRules, lattice: Lattice, items, hole_list,
                  margin: float, guards=(), near: np.ndarray | None = None) -> Profile:
    """near: boxes (rows of x0, y0, x1, y1 in mm) within which alone the profile is to be right: only what reaches
    them is stamped."""
    L, R, C = lattice.shape
    track = np.full((L, R, C), FREE, dtype=np.int32)
    via = np.full((R, C), FREE, dtype=np.int32)
    stamps = collect_stamps(board, rules, cls, lattice, items, hole_list, margin, guards)
    if near is not None:            # a chord cut reaches at most half a pitch past its shape's grown distance
        stamps = stamps.near(near, lattice.pitch)
    grown = grow_all(stamps.geoms, stamps.distances)
    owners = np.array(stamps.owners, dtype=np.int64)
    on_via = np.array([layers is None for layers in stamps.layers], dtype=bool)
    shape, node = nodes_inside(lattice, grown)
    cut_shape, cut_node = chord_cuts(stamps, grown, lattice)
    shape, node = np.concatenate([shape, cut_shape]), np.concatenate([node, cut_node])
    # a track stamp's nodes on each of its layers: flat (layer * plane + node)
    n_layers = np.array([0 if layers is None else len(layers) for layers in stamps.layers], dtype=np.int64)
    layer_list = np.array([l for layers in stamps.layers if layers is not None for l in layers], dtype=np.int64)
    first_layer = np.cumsum(n_layers) - n_layers
    hits = n_layers[shape]
    pair = np.repeat(np.arange(shape.size), hits)
    nth = np.arange(pair.size) - np.repeat(np.cumsum(hits) - hits, hits)
    layer = layer_list[first_layer[shape[pair]] + nth]
    claim(track, layer * lattice.plane + node[pair], owners[shape[pair]])
    via_hit = on_via[shape]
    claim(via, node[via_hit], owners[shape[via_hit]])
    edge = max(rules.edge_clearance, cls.clearance)
    block_outside(track, lattice, grow(board.outline, -(edge + cls.track_width / 2 + margin)))
    block_outside(via[None], lattice, grow(board.outline, -(edge + cls.via_diameter / 2 + margin)))
    profile = Profile(cls, track, via)
    geoms, distances = np.asarray(stamps.geoms, dtype=object), np.asarray(stamps.distances, dtype=np.float64)
    per_layer: dict[int, list[int]] = {}
    for k, layers in enumerate(stamps.layers):      # in stamping order, as the stub trees always held them
        for l in layers or ():
            per_layer.setdefault(l, []).append(k)
    for l in sorted(per_layer):
        entries = per_layer[l]
        bounds, reach = shapely.bounds(geoms[entries]), distances[entries] - margin
        grown = shapely.box(*(bounds + reach[:, None] * np.array([-1, -1, 1, 1])).T)
        grown[shapely.is_empty(geoms[entries])] = None           # no box, as the tree of the shapes had none
        profile.stub_trees[l] = StubObstacles(STRtree(grown), geoms[entries], owners[entries], reach, bounds)
    return profile


def chord_cuts(stamps: Stamps, grown: np.ndarray, lattice: Lattice) -> tuple[np.ndarray, np.ndarray]:
    """(track stamp, node) pairs that stamp also blocks: chord_ends of the nodes just outside its grown shape (a
    step between two of them can pass the shape nearer than its grown distance d)."""
    track = np.flatnonzero([layers is not None for layers in stamps.layers])
    if not track.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    d = np.asarray(stamps.distances, dtype=np.float64)[track]
    shapes = np.asarray(stamps.geoms, dtype=object)[track]
    band = shapely.difference(grow_all(shapes, np.hypot(d, lattice.pitch / 2)), grown[track])
    k, node = nodes_inside(lattice, band)
    blocked = chord_ends(lattice, *np.divmod(node, lattice.cols), shapes[k], d[k])
    return track[k[blocked]], node[blocked]


def block_outside(owner: np.ndarray, lattice: Lattice, allowed: BaseGeometry) -> None:
    rr, cc = np.mgrid[0:lattice.rows, 0:lattice.cols]
    x, y = lattice.xy(rr, cc)
    inside = shapely.contains_xy(allowed, x, y) if not allowed.is_empty else np.zeros(rr.shape, bool)
    owner[:, ~inside] = HARD


class Obstacles:
    """Profiles built on first use, one per set of class rules (a necked-down class gets its own). Classes of the
    same sizes (many boards have several, named apart for length or impedance rules) share one raster: their
    profiles differ only in the class they name."""

    def __init__(self, board: Board, rules: DesignRules, lattice: Lattice, margin: float, guards=()):
        self.board, self.rules, self.lattice, self.margin, self.guards = board, rules, lattice, margin, list(guards)
        self.items, self.holes = copper_items(board, rules), holes(board)
        self.profiles: dict[NetClassRules, Profile] = {}
        self.by_sizes: dict[tuple[float, ...], Profile] = {}

    def __getitem__(self, cls: NetClassRules) -> Profile:
        if cls not in self.profiles:
            self.prepare([cls])
            self.profiles[cls] = replace(self.by_sizes[sizes_of(cls)], rules=cls)
        return self.profiles[cls]

    def near(self, cls: NetClassRules, boxes: np.ndarray) -> Profile:
        """cls's profile, right within the boxes (rows of x0, y0, x1, y1 in mm) only: for sizes a net only tries
        around its pads, which need not be rasterised over the whole board unless it keeps them. The whole profile
        where it is made already."""
        if sizes_of(cls) in self.by_sizes:
            return self[cls]
        return build_profile(self.board, self.rules, cls, self.lattice, self.items, self.holes, self.margin,
                             self.guards, near=boxes)

    def prepare(self, classes) -> None:
        """Rasterise the profiles of these classes that are not yet, those of different sizes at once (their
        geometry runs in shapely, outside Python's lock: vme-wren's two sizes, 2 s each)."""
        todo: dict[tuple[float, ...], NetClassRules] = {}
        for cls in classes:
            if sizes_of(cls) not in self.by_sizes:
                todo.setdefault(sizes_of(cls), cls)
        built = at_once(*(partial(build_profile, self.board, self.rules, cls, self.lattice, self.items, self.holes,
                                  self.margin, self.guards) for cls in todo.values()))
        self.by_sizes.update(zip(todo, built))


def sizes_of(cls: NetClassRules) -> tuple[float, ...]:
    """All a profile's raster depends on."""
    return cls.track_width, cls.clearance, cls.via_diameter, cls.via_drill


def via_sizes_of(cls: NetClassRules) -> tuple[float, ...]:
    """All a profile's via plane depends on (collect_stamps: no track width in it)."""
    return cls.clearance, cls.via_diameter, cls.via_drill


def build_obstacles(board: Board, rules: DesignRules, lattice: Lattice, margin: float, guards=()) -> Obstacles:
    """guards: (area, layer, net) that only that net may use (zones.spoke_guards)."""
    return Obstacles(board, rules, lattice, margin, guards)
