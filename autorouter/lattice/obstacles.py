"""Obstacles rasterised onto the lattice, once per net-class profile (track width, clearance, via size).

For each profile, `track_owner[l, r, c]` says who may put a track centre-line on that node:
FREE (-1) anyone, HARD (-2) nobody, n >= 0 only net n (the node is near net n's own copper). `via_owner[r, c]`
says the same for a through via at (r, c), which spans every layer. Inflation: clearance (the larger of the two
nets') plus half the track width or the via radius, plus config.clearance_margin. The board edge, keepouts, copper
text and graphics, holes and pads of no net are HARD.
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
    mask_margin: float = 0.0


@dataclass
class Profile:
    rules: NetClassRules
    track_owner: np.ndarray                      # (L, R, C) int32
    via_owner: np.ndarray                        # (R, C) int32
    stub_trees: dict[int, tuple[STRtree, np.ndarray]] = field(default_factory=dict)   # layer -> (tree, owners)


def copper_items(board: Board) -> list[CopperItem]:
    index = {name: i for i, name in enumerate(board.copper_layers)}
    items = []
    for pad in board.pads:
        if pad.layers:
            items.append(CopperItem(pad.outline, tuple(index[l] for l in pad.layers), pad.net, pad.mask_margin))
    for t in board.tracks:
        items.append(CopperItem(t.body(), (index[t.layer],), t.net))
    for v in board.vias:
        items.append(CopperItem(circle(v.x, v.y, v.diameter / 2), tuple(index[l] for l in v.layers), v.net))
    for g in board.graphics:
        items.append(CopperItem(g.outline, (index[g.layer],), 0))
    return items


def holes(board: Board) -> list[tuple[BaseGeometry, bool]]:
    """Every drilled hole, with whether it is plated (plated holes sit inside their own pad or via copper)."""
    out = [(pad.hole, bool(pad.layers)) for pad in board.pads if pad.hole is not None]
    out += [(circle(v.x, v.y, v.drill / 2), True) for v in board.vias]
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
                  margin: float) -> Profile:
    L, R, C = lattice.shape
    track = np.full((L, R, C), FREE, dtype=np.int32)
    via = np.full((R, C), FREE, dtype=np.int32)
    half_w, via_r = cls.track_width / 2, cls.via_diameter / 2
    outer = {0, L - 1}
    per_layer: dict[int, list] = {l: [] for l in range(L)}
    for item in items:
        other = rules.for_net(item.net).clearance if item.net else cls.clearance
        gap = max(cls.clearance, other)
        who = item.net if item.net else HARD
        grown: dict[float, BaseGeometry] = {}
        for l in item.layers:
            reach = max(gap, item.mask_margin if l in outer else 0.0) + half_w + margin
            if reach not in grown:
                grown[reach] = grow(item.geom, reach)
            stamp(track[l], lattice, grown[reach], who)
            per_layer[l].append((grown[reach], who))
        stamp(via, lattice, grow(item.geom, gap + via_r + margin), who)
    hole_gap_via = max(rules.hole_to_hole + cls.via_drill / 2, rules.hole_clearance + via_r) + margin
    hole_gap_track = max(rules.hole_clearance, cls.clearance) + half_w + margin
    for hole, plated in hole_list:
        stamp(via, lattice, grow(hole, hole_gap_via), HARD)
        if plated:
            continue        # copper clearance to the surrounding pad or via already keeps tracks away
        grown = grow(hole, hole_gap_track)
        for l in range(L):
            stamp(track[l], lattice, grown, HARD)
            per_layer[l].append((grown, HARD))
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

    def __init__(self, board: Board, rules: DesignRules, lattice: Lattice, margin: float):
        self.board, self.rules, self.lattice, self.margin = board, rules, lattice, margin
        self.items, self.holes = copper_items(board), holes(board)
        self.profiles: dict[NetClassRules, Profile] = {}

    def __getitem__(self, cls: NetClassRules) -> Profile:
        if cls not in self.profiles:
            self.profiles[cls] = build_profile(self.board, self.rules, cls, self.lattice, self.items, self.holes,
                                               self.margin)
        return self.profiles[cls]


def build_obstacles(board: Board, rules: DesignRules, lattice: Lattice, margin: float) -> Obstacles:
    return Obstacles(board, rules, lattice, margin)
