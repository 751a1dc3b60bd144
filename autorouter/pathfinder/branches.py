"""Which branches of a large net to keep when negotiation routes it again.

PathFinder rips a net in conflict up whole and routes it again. For a net of a hundred pins (a ground, a supply)
that is a hundred searches, one after another, each iteration, to move the one or two branches that meet another
net; and the other branches, routed again against prices that changed, move too and meet new nets. So a net of
many connections keeps the branches that meet no other net: only those near a conflict, and the branches that hang
from them, are ripped up, and the pins they joined are joined again to what is left of the tree (the incremental
reroute of high-fanout nets in VPR's router does the same). Asked for by `partial_reroute_from`, off by default: on
the corpus it joined more on the boards bound by time but lost boards that were complete (benchmarks/CORPUS.md).
"""
from __future__ import annotations

import math

import numpy as np

from ..board.connectivity import Joins
from .congestion import NetRoute, Occupancy, in_sorted


def kept_branches(task, old: NetRoute, occ: Occupancy, reach_mm: float,
                  least: int) -> tuple[NetRoute, list[int]] | None:
    """The part of old (a route of task, counted in occ) to keep, and the pins it joins (sorted; pin 0 among them):
    old without its connections that come within reach_mm (in the plane) of a conflict, those that hang from them,
    and those no longer joined to pin 0 through what is left. None where the net is to be routed whole again: fewer
    than `least` connections, a connection that failed, or nothing to keep or to move."""
    conns = old.connections
    if (least <= 0 or task.connections < least or old.failed or len(conns) != task.connections
            or any(c.pin < 0 for c in conns)):
        return None
    spots = conflict_spots(old, occ)
    if not spots.size:
        return None
    near = near_spots(conns, spots, occ.lattice, reach_mm)
    gone: set[int] = set()
    for k, conn in enumerate(conns):            # in the order they were made: a parent comes before its children
        if near[k] or (conn.parent is not None and id(conn.parent) in gone):
            gone.add(id(conn))
    left = [c for c in conns if id(c) not in gone]
    joined = joined_to_root(left, len(task.pins))
    if joined is None:
        return None
    kept = [c for c in left if c.pin in joined]
    if not kept or len(kept) == len(conns):
        return None
    return NetRoute(connections=kept), sorted(joined)


def conflict_spots(route: NetRoute, occ: Occupancy) -> np.ndarray:
    """Flat (row, col) sites where the route meets another net: its track nodes and vias in another's cover, and
    other nets' track nodes and vias in its cover."""
    lat = occ.lattice
    nodes, sites = occ.shared_nodes(route)
    cover_t, cover_v = route.cover_track, route.cover_via
    others_t = cover_t[occ.centres[cover_t] > in_sorted(route.nodes(), cover_t)]
    others_v = cover_v[occ.via_centres[cover_v] > in_sorted(route.via_sites(lat), cover_v)]
    return np.unique(np.concatenate([nodes % lat.plane, sites, others_t % lat.plane, others_v]))


def near_spots(conns: list, spots: np.ndarray, lat, reach_mm: float) -> np.ndarray:
    """Per connection, whether its path or a stub of it comes within reach_mm of a spot (flat row/col), measured
    square in rows and columns (a little farther on the diagonal: a branch too many is ripped up, never one too
    few)."""
    reach = math.ceil(reach_mm / lat.pitch) + 1
    rows, cols, owner = [], [], []
    for k, conn in enumerate(conns):
        _, r, c = lat.unravel(conn.path)
        points = np.array([p for stub in conn.stubs for p in stub.points], dtype=float).reshape(-1, 2)
        rows += [r, np.rint((points[:, 1] - lat.y0) / lat.pitch).astype(np.int64)]
        cols += [c, np.rint((points[:, 0] - lat.x0) / lat.pitch).astype(np.int64)]
        owner.append(np.full(r.size + len(points), k))
    rows, cols, owner = np.concatenate(rows), np.concatenate(cols), np.concatenate(owner)
    sr, sc = np.divmod(spots, lat.cols)
    near = np.zeros(len(conns), bool)
    for lo in range(0, sr.size, 64):            # a few dozen spots at a time: nodes x spots stays small
        hit = ((np.abs(rows[:, None] - sr[None, lo:lo + 64]) <= reach)
               & (np.abs(cols[:, None] - sc[None, lo:lo + 64]) <= reach)).any(axis=1)
        near[owner[hit]] = True
    return near


def joined_to_root(conns: list, pins: int) -> set[int] | None:
    """The pins that these connections join to pin 0: each joins its pin to the pin it leaves from, or to the pin of
    the connection whose path it leaves from. None where a connection says neither."""
    joins = Joins(pins)
    for c in conns:
        other = c.from_pin if c.from_pin >= 0 else (c.parent.pin if c.parent is not None else -1)
        if other < 0:
            return None
        joins.join(c.pin, other)
    top = joins.root(0)
    return {p for p in range(pins) if joins.root(p) == top}
