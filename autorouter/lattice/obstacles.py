"""Obstacles rasterised onto the lattice, once per net-class profile (track width, clearance, via size).

For each profile, `track_owner[l, r, c]` says who may put a track centre-line on that node:
FREE (-1) anyone, HARD (-2) nobody, n >= 0 only net n (the node is near net n's own copper). `via_owner[r, c]`
says the same for a through via at (r, c), which spans every layer. Inflation: clearance (the larger of the two
nets') plus half the track width or the via radius, plus config.clearance_margin. The board edge, keepouts, copper
text and graphics, holes and pads of no net are HARD. Solder-mask openings of other nets' pads keep tracks out on
the outer layers, and the thermal spokes that connect pads to zones keep other nets away.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry
from shapely.strtree import STRtree

from ..board.geometry import circle, grow
from ..board.model import Board
from ..board.rules import DesignRules, NetClassRules
from .grid import Lattice

FREE, HARD = -1, -2


@dataclass
class CopperItem:
    geom: BaseGeometry
    layers: tuple[int, ...]
    net: int                  # 0: no net (HARD for everybody)
    clearance: float | None = None     # its own clearance (a pad's), which overrides its net class's


@dataclass
class Profile:
    rules: NetClassRules
    track_owner: np.ndarray                      # (L, R, C) int32
    via_owner: np.ndarray                        # (R, C) int32
    stub_trees: dict[int, tuple[STRtree, np.ndarray]] = field(default_factory=dict)   # layer -> (tree, owners)


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
    for g in board.graphics:
        items.append(CopperItem(g.outline, (index[g.layer],), g.net, rules.graphic_clearance or None))
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


def stamp(owner: np.ndarray, lattice: Lattice, region: BaseGeometry, who: int) -> None:
    """Mark the nodes of the 2D `owner` plane that lie inside `region` as owned by `who` (merging owners)."""
    if region.is_empty:
        return
    rows, cols = lattice.window(*region.bounds)
    if rows.stop <= rows.start or cols.stop <= cols.start:
        return
    rr, cc = np.mgrid[rows, cols]
    x, y = lattice.xy(rr, cc)
    inside = shapely.contains_xy(region, x, y)
    if not inside.any():
        return
    block = owner[rows, cols]
    cur = block[inside]
    if who == HARD:
        merged = np.full_like(cur, HARD)
    else:
        merged = np.where((cur == FREE) | (cur == who), who, HARD)
    block[inside] = merged


def build_profile(board: Board, rules: DesignRules, cls: NetClassRules, lattice: Lattice, items, hole_list,
                  margin: float, guards=()) -> Profile:
    L, R, C = lattice.shape
    track = np.full((L, R, C), FREE, dtype=np.int32)
    via = np.full((R, C), FREE, dtype=np.int32)
    half_w, via_r = cls.track_width / 2, cls.via_diameter / 2
    per_layer: dict[int, list] = {l: [] for l in range(L)}
    for item in items:
        gap = max(cls.clearance, rules.clearance_of(item.net, item.clearance))
        who = item.net if item.net else HARD
        grown = grow(item.geom, gap + half_w + margin)
        for l in item.layers:
            stamp(track[l], lattice, grown, who)
            per_layer[l].append((grown, who))
        # a via keeps its copper `gap` from other copper, and its hole the board's hole clearance
        stamp(via, lattice, grow(item.geom, max(gap + via_r, rules.hole_clearance + cls.via_drill / 2) + margin), who)
    hole_gap_via = max(rules.hole_to_hole + cls.via_drill / 2, rules.hole_clearance + via_r) + margin
    for hole in hole_list:
        own = hole.clearance or 0.0          # KiCad holds a pad's own clearance to its hole too
        stamp(via, lattice, grow(hole.geom, max(hole_gap_via, own + via_r + margin)), HARD)
        # copper keeps the hole clearance from another net's hole, and its own clearance from an unplated one
        who = hole.net if hole.plated and hole.net else HARD
        grown = grow(hole.geom, max(rules.hole_clearance, own, 0.0 if hole.plated else cls.clearance) + half_w + margin)
        for l in range(L):
            stamp(track[l], lattice, grown, who)
            per_layer[l].append((grown, who))
    index = {name: i for i, name in enumerate(board.copper_layers)}
    for area, layer, net in guards:           # thermal spokes that must keep reaching their zone's fill
        grown = grow(area, half_w + margin)
        stamp(track[index[layer]], lattice, grown, net)
        per_layer[index[layer]].append((grown, net))
        stamp(via, lattice, grow(area, via_r + margin), net)
    for opening in board.mask_openings:       # copper bared beside another net's pad would bridge to it
        grown, who = grow(opening.outline, half_w + margin), opening.net or HARD
        stamp(track[index[opening.layer]], lattice, grown, who)
        per_layer[index[opening.layer]].append((grown, who))
        # a via's copper is on both sides, and a bare via's mask opening keeps the web from other openings
        reach = via_r + rules.bare_via_reach + rules.mask_web if opening.layer in board.bare_vias else via_r
        stamp(via, lattice, grow(opening.outline, reach + margin), who)
    for k in board.keepouts:
        layers = [board.copper_layers.index(n) for n in k.layers]
        if k.no_tracks:
            grown = grow(k.outline, half_w + margin)
            for l in layers:
                stamp(track[l], lattice, grown, HARD)
                per_layer[l].append((grown, HARD))
        if k.no_vias:
            stamp(via, lattice, grow(k.outline, via_r + margin), HARD)
    edge = max(rules.edge_clearance, cls.clearance)
    block_outside(track, lattice, grow(board.outline, -(edge + half_w + margin)))
    block_outside(via[None], lattice, grow(board.outline, -(edge + via_r + margin)))
    profile = Profile(cls, track, via)
    for l, entries in per_layer.items():
        if entries:
            profile.stub_trees[l] = (STRtree([g for g, _ in entries]), np.array([w for _, w in entries], dtype=np.int64))
    return profile


def block_outside(owner: np.ndarray, lattice: Lattice, allowed: BaseGeometry) -> None:
    rr, cc = np.mgrid[0:lattice.rows, 0:lattice.cols]
    x, y = lattice.xy(rr, cc)
    inside = shapely.contains_xy(allowed, x, y) if not allowed.is_empty else np.zeros(rr.shape, bool)
    owner[:, ~inside] = HARD


class Obstacles:
    """Profiles built on first use, one per set of class rules (a necked-down class gets its own)."""

    def __init__(self, board: Board, rules: DesignRules, lattice: Lattice, margin: float, guards=()):
        self.board, self.rules, self.lattice, self.margin, self.guards = board, rules, lattice, margin, list(guards)
        self.items, self.holes = copper_items(board, rules), holes(board)
        self.profiles: dict[NetClassRules, Profile] = {}

    def __getitem__(self, cls: NetClassRules) -> Profile:
        if cls not in self.profiles:
            self.profiles[cls] = build_profile(self.board, self.rules, cls, self.lattice, self.items, self.holes,
                                               self.margin, self.guards)
        return self.profiles[cls]


def build_obstacles(board: Board, rules: DesignRules, lattice: Lattice, margin: float, guards=()) -> Obstacles:
    """guards: (area, layer, net) that only that net may use (zones.spoke_guards)."""
    return Obstacles(board, rules, lattice, margin, guards)
