"""Our own design-rule check, with exact geometry (shapely), independent of the router's lattice model.

Checks tracks and vias (all of them, or only the new ones) against every other net's copper (clearance), the board
edge (copper-to-edge clearance), other holes (hole to hole); and counts, per net, the pad groups that copper does
not yet join (unrouted connections). Zone fills are not copper here: KiCad refills zones after routing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.strtree import STRtree

from ..board.geometry import circle, track_body
from ..board.model import Board

TOLERANCE = 1e-4     # mm: below KiCad's own resolution of interest, above float noise


@dataclass
class Violation:
    kind: str            # clearance, edge_clearance, hole_to_hole
    layer: str
    x: float
    y: float
    detail: str


@dataclass
class CheckReport:
    violations: list[Violation] = field(default_factory=list)
    unrouted: dict[str, int] = field(default_factory=dict)     # net name -> missing connections

    @property
    def unrouted_total(self) -> int:
        return sum(self.unrouted.values())

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.kind] = out.get(v.kind, 0) + 1
        return out


@dataclass
class Item:
    geom: object
    layers: frozenset
    net: int
    kind: str              # pad, track, via, graphic
    checked: bool          # tracks and vias under test
    hole: object = None


def board_items(board: Board, new_tracks=(), new_vias=(), only_new: bool = False) -> list[Item]:
    items = []
    for p in board.pads:
        if p.layers:
            items.append(Item(p.outline, frozenset(p.layers), p.net, "pad", False, p.hole))
        elif p.hole is not None:
            items.append(Item(p.hole, frozenset(board.copper_layers), 0, "hole", False, p.hole))
    for g in board.graphics:
        items.append(Item(g.outline, frozenset([g.layer]), 0, "graphic", False))
    for t in board.tracks:
        items.append(Item(track_body(t), frozenset([t.layer]), t.net, "track", not only_new))
    for v in board.vias:
        items.append(Item(circle(v.x, v.y, v.diameter / 2), frozenset(v.layers), v.net, "via", not only_new,
                          circle(v.x, v.y, v.drill / 2)))
    for t in new_tracks:
        items.append(Item(track_body(t), frozenset([t.layer]), t.net, "track", True))
    for v in new_vias:
        items.append(Item(circle(v.x, v.y, v.diameter / 2), frozenset(v.layers), v.net, "via", True,
                          circle(v.x, v.y, v.drill / 2)))
    return items


def check(board: Board, rules, new_tracks=(), new_vias=(), only_new: bool = False) -> CheckReport:
    items = board_items(board, new_tracks, new_vias, only_new)
    report = CheckReport()
    clearance_violations(board, rules, items, report)
    edge_violations(board, rules, items, report)
    hole_violations(rules, items, report)
    report.unrouted = unrouted(board, items)
    return report


def clearance_violations(board, rules, items, report) -> None:
    reach = rules.max_clearance
    for layer in board.copper_layers:
        idx = [i for i, it in enumerate(items) if layer in it.layers and it.kind != "hole"]
        if not idx:
            continue
        geoms = [items[i].geom for i in idx]
        tree = STRtree(geoms)
        probe = [k for k, i in enumerate(idx) if items[i].checked]
        if not probe:
            continue
        a, b = tree.query([geoms[k] for k in probe], predicate="dwithin", distance=reach)
        a = np.asarray(probe)[a]
        for ka, kb in zip(a.tolist(), b.tolist()):
            ia, ib = items[idx[ka]], items[idx[kb]]
            if ka == kb or (ib.checked and kb < ka):
                continue
            if ia.net and ia.net == ib.net:
                continue
            need = max(rules.for_net(ia.net).clearance if ia.net else 0, rules.for_net(ib.net).clearance if ib.net else 0)
            if not ia.net or not ib.net:
                need = max(need, rules.for_net(ia.net or ib.net).clearance)
            gap = shapely.distance(ia.geom, ib.geom)
            if gap < need - TOLERANCE:
                where = shapely.shortest_line(ia.geom, ib.geom).coords[0]
                report.violations.append(Violation(
                    "clearance", layer, where[0], where[1],
                    f"{ia.kind} of {board.net_name(ia.net) or 'no net'} and {ib.kind} of "
                    f"{board.net_name(ib.net) or 'no net'}: {gap:.3f} mm < {need:.3f} mm"))


def edge_violations(board, rules, items, report) -> None:
    edge = board.outline.boundary
    for it in items:
        if not it.checked:
            continue
        gap = shapely.distance(it.geom, edge)
        outside = not board.outline.contains(it.geom)
        if outside or gap < rules.edge_clearance - TOLERANCE:
            x, y = it.geom.centroid.coords[0]
            report.violations.append(Violation(
                "edge_clearance", sorted(it.layers)[0], x, y,
                f"{it.kind} of {board.net_name(it.net)}: " + ("outside the board" if outside else
                                                              f"{gap:.3f} mm from the edge < {rules.edge_clearance:.3f} mm")))


def hole_violations(rules, items, report) -> None:
    holes = [it for it in items if it.hole is not None]
    if not holes:
        return
    tree = STRtree([h.hole for h in holes])
    probe = [k for k, h in enumerate(holes) if h.checked]
    if not probe:
        return
    a, b = tree.query([holes[k].hole for k in probe], predicate="dwithin", distance=rules.hole_to_hole)
    for ka, kb in zip(np.asarray(probe)[a].tolist(), b.tolist()):
        if ka == kb or (holes[kb].checked and kb < ka):
            continue
        gap = shapely.distance(holes[ka].hole, holes[kb].hole)
        if gap < rules.hole_to_hole - TOLERANCE:
            x, y = holes[ka].hole.centroid.coords[0]
            report.violations.append(Violation("hole_to_hole", "*", x, y,
                                               f"holes {gap:.3f} mm apart < {rules.hole_to_hole:.3f} mm"))


def unrouted(board: Board, items: list[Item]) -> dict[str, int]:
    """Per net: pad groups that the net's copper does not join, minus one."""
    return {board.net_name(net): len(groups) - 1 for net, groups in connected_groups(items).items() if len(groups) > 1}


def connected_groups(items: list[Item]) -> dict[int, list[list[int]]]:
    """Per net with two or more pads: its pads (item indices) grouped by the copper that joins them."""
    out = {}
    by_net: dict[int, list[int]] = {}
    for i, it in enumerate(items):
        if it.net and it.kind in ("pad", "track", "via"):
            by_net.setdefault(it.net, []).append(i)
    for net, members in by_net.items():
        pads = [i for i in members if items[i].kind == "pad"]
        if len(pads) < 2:
            continue
        parent = {i: i for i in members}

        def root(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        geoms = [items[i].geom for i in members]
        a, b = STRtree(geoms).query(geoms, predicate="intersects")
        for ka, kb in zip(a.tolist(), b.tolist()):
            ia, ib = members[ka], members[kb]
            if ka < kb and items[ia].layers & items[ib].layers:
                parent[root(ia)] = root(ib)
        groups: dict[int, list[int]] = {}
        for i in pads:
            groups.setdefault(root(i), []).append(i)
        out[net] = list(groups.values())
    return out
