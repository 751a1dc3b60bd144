"""Which pads copper already joins: per net, groups of pads connected through tracks, vias and zone fills that touch
on a shared layer. Pads are given by their index in board.pads."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from shapely.geometry.base import BaseGeometry
from shapely.strtree import STRtree

from .model import Board


class Joins:
    """Which of n items are joined (union-find): root(i) names i's group."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def root(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.root(i), self.root(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def pad_groups(board: Board, tracks=(), vias=(), pieces=()) -> dict[int, list[list[int]]]:
    """Per net with pads: its pads grouped by the copper that joins them. tracks and vias: besides the board's own;
    pieces: zone fills (zones.Piece), each joining the pads it lists and any copper of its net it touches."""
    geoms, nets, layers, pads = [], [], [], []
    for i, p in enumerate(board.pads):
        if p.net and p.layers:
            geoms.append(p.outline), nets.append(p.net), layers.append(frozenset(p.layers)), pads.append(i)
    first_other = len(geoms)
    for t in list(board.tracks) + list(tracks):
        if t.net:
            geoms.append(t.body()), nets.append(t.net), layers.append(frozenset([t.layer]))
    for v in list(board.vias) + list(vias):
        if v.net:
            geoms.append(v.body()), nets.append(v.net), layers.append(frozenset(v.layers))
    first_piece = len(geoms)
    for piece in pieces:
        geoms.append(piece.shape), nets.append(piece.net), layers.append(frozenset([piece.layer]))
    joins = Joins(len(geoms))
    root, join = joins.root, joins.join
    if first_piece:
        net_of = np.array(nets)
        small = STRtree(geoms[:first_piece])
        a, b = small.query(geoms[:first_piece], predicate="intersects")
        # a fill is the query, not the tree: shapely prepares a query's shape once, and fills have thousands of
        # vertices; it joins copper it touches, but pads only as it says
        if len(geoms) > first_piece:
            p, c = small.query(geoms[first_piece:], predicate="intersects")
            a, b = np.concatenate([a, c]), np.concatenate([b, p + first_piece])
        keep = (a < b) & (net_of[a] == net_of[b]) & ((b < first_piece) | (a >= first_other))
        for i, j in zip(a[keep].tolist(), b[keep].tolist()):
            if layers[i] & layers[j]:
                join(i, j)
    pad_row = {pad: k for k, pad in enumerate(pads)}
    for k, piece in enumerate(pieces):
        for pad in piece.pads:
            if pad in pad_row:
                join(first_piece + k, pad_row[pad])
    groups: dict[int, dict[int, list[int]]] = {}
    for k, pad in enumerate(pads):
        groups.setdefault(nets[k], {}).setdefault(root(k), []).append(pad)
    return {net: list(by_root.values()) for net, by_root in groups.items()}


@dataclass
class CopperGroup:
    """One net's copper that is joined: its pads (indices in board.pads) and every item's shape with its layers."""
    pads: list[int]
    shapes: list[tuple[BaseGeometry, frozenset]]

    def on(self, layer: str) -> list[BaseGeometry]:
        """Its shapes on one layer (they may overlap: a union of a ground's fills and tracks costs more than the
        uses of them, a fine grid's mask and the nearest point, which need none)."""
        return [g for g, layers in self.shapes if layer in layers]


def net_copper(board: Board, net: int, tracks=(), vias=(), pieces=()) -> list[CopperGroup]:
    """One net's copper in its joined groups, as pad_groups joins it (pieces join the pads they list and the copper
    of their net they touch); each group's pads in board order."""
    items: list[tuple[BaseGeometry, frozenset, int]] = [
        (p.outline, frozenset(p.layers), i) for i, p in enumerate(board.pads) if p.net == net and p.layers]
    items += [(t.body(), frozenset([t.layer]), -1) for t in list(board.tracks) + list(tracks) if t.net == net]
    items += [(v.body(), frozenset(v.layers), -1) for v in list(board.vias) + list(vias) if v.net == net]
    first_piece = len(items)
    items += [(p.shape, frozenset([p.layer]), -1) for p in pieces if p.net == net]
    joins = Joins(len(items))
    if items:
        geoms = [g for g, _, _ in items]
        a, b = STRtree(geoms).query(geoms, predicate="intersects")
        for i, j in zip(a.tolist(), b.tolist()):
            # a fill joins a pad only as it says (a thermal relief's gap lies between them)
            if i < j and items[i][1] & items[j][1] and not (j >= first_piece and items[i][2] >= 0):
                joins.join(i, j)
    row_of = {pad: k for k, (_, _, pad) in enumerate(items) if pad >= 0}
    for k, piece in enumerate(p for p in pieces if p.net == net):
        for pad in piece.pads:
            if pad in row_of:
                joins.join(first_piece + k, row_of[pad])
    groups: dict[int, CopperGroup] = {}
    for k, (geom, layers, pad) in enumerate(items):
        group = groups.setdefault(joins.root(k), CopperGroup([], []))
        group.shapes.append((geom, layers))
        if pad >= 0:
            group.pads.append(pad)
    return list(groups.values())
