"""Our own design-rule check, with exact geometry (shapely), independent of the router's lattice model.

Checks tracks and vias (all of them, or only the new ones) as KiCad's DRC does, under KiCad's names for what it
finds: clearance to every other net's copper (the larger of the two items' clearances; a pad's own clearance
overrides its class), hole_clearance (copper to another net's hole), copper_edge_clearance, hole_to_hole,
solder_mask_bridge (outer-layer copper under another net's solder-mask opening), track_dangling (a new track
end that touches nothing of its net), starved_thermal (a thermal relief left with fewer spokes than KiCad asks).
And counts, per net, the pad groups that copper does not yet join (unrouted connections), with the zone fills
KiCad's refill will make (zones.predict) as copper.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import Point
from shapely.strtree import STRtree

from ..board.connectivity import pad_groups
from ..board.geometry import TOUCH, centre_line
from ..board.model import Board
from ..zones import predict, relief_fill, reliefs, starved_keys

TOLERANCE = 1e-4     # mm: below KiCad's own resolution of interest, above float noise


@dataclass
class Violation:
    kind: str            # KiCad's name: clearance, hole_clearance, copper_edge_clearance, hole_to_hole, ...
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
    kind: str              # pad, track, via, graphic, hole
    checked: bool          # tracks and vias under test
    hole: object = None
    clearance: float | None = None      # its own clearance, overriding its net class's (a pad's)
    floor: float = 0.0                  # what custom rules ask of it beyond its class (copper drawings)
    ends: tuple = ()                    # a track's two ends
    tied: tuple = ()                    # a net tie's drawing: the nets it may touch
    # round copper measured exactly: its centre line or centre (core) and radius (reach); geom, a polygon drawn
    # outside the true curve, would under-measure gaps by up to half a percent of the radius, where KiCad is exact
    core: object = None
    reach: float = 0.0
    hole_reach: float = 0.0             # the same for a via's hole: hole is then its centre

    def __post_init__(self):
        if self.core is None:
            self.core = self.geom

    def clearance_to(self, other: "Item", rules) -> float:
        return rules.clearance_between(rules.class_clearance(self.net, self.floor),
                                       rules.class_clearance(other.net, other.floor), self.clearance, other.clearance)

    def may_touch(self, other: "Item") -> bool:
        """Of one net, or one of them a net tie's drawing that may touch the other's net."""
        return bool(self.net and self.net == other.net) or other.net in self.tied or self.net in other.tied

    def gap(self, other: "Item") -> float:
        return shapely.distance(self.core, other.core) - self.reach - other.reach

    def hole_gap(self, other: "Item") -> float:
        return shapely.distance(self.hole, other.core) - self.hole_reach - other.reach


def board_items(board: Board, new_tracks=(), new_vias=(), only_new: bool = False, rules=None) -> list[Item]:
    items = []
    for p in board.pads:
        if p.layers:
            items.append(Item(p.outline, frozenset(p.layers), p.net, "pad", False, p.hole, p.clearance))
        elif p.hole is not None:
            items.append(Item(p.hole, frozenset(board.copper_layers), 0, "hole", False, p.hole, p.clearance))
    for g in board.graphics:
        items.append(Item(g.outline, frozenset([g.layer]), g.net, "graphic", False,
                          floor=rules.graphic_clearance if rules else 0.0, tied=g.tied))
    for tracks, checked in ((board.tracks, not only_new), (new_tracks, True)):
        for t in tracks:
            items.append(Item(t.body(), frozenset([t.layer]), t.net, "track", checked, ends=(t.start, t.end),
                              core=centre_line(t), reach=t.width / 2))
    for vias, checked in ((board.vias, not only_new), (new_vias, True)):
        for v in vias:
            items.append(Item(v.body(), frozenset(v.layers), v.net, "via", checked, Point(v.x, v.y),
                              core=Point(v.x, v.y), reach=v.diameter / 2, hole_reach=v.drill / 2))
    return items


def check(board: Board, rules, new_tracks=(), new_vias=(), only_new: bool = False, fills=None,
          fills_before=None, relief_fills=None) -> CheckReport:
    """fills: zones.predict with the new tracks and vias; relief_fills and fills_before: zones.relief_fill with
    them and without them (thermal reliefs are judged on those); each where the caller has it (the route's
    result), else predicted here."""
    items = board_items(board, new_tracks, new_vias, only_new, rules)
    report = CheckReport()
    clearance_violations(board, rules, items, report)
    hole_clearance_violations(board, rules, items, report)
    edge_violations(board, rules, items, report)
    hole_violations(rules, items, report)
    mask_violations(board, items, report)
    bare_via_violations(board, rules, items, report)
    pieces = predict(board, rules, new_tracks, new_vias) if fills is None else fills
    dangling_violations(board, items, report, pieces)
    thermal_violations(board, rules, new_tracks, new_vias, only_new, report, fills_before, relief_fills)
    report.unrouted = unrouted(board, new_tracks, new_vias, pieces)
    return report


def name(board, item) -> str:
    return f"{item.kind} of {board.net_name(item.net) or 'no net'}"


def clearance_violations(board, rules, items, report) -> None:
    reach = max([rules.max_clearance] + [max(it.clearance or 0.0, it.floor) for it in items])
    for layer in board.copper_layers:
        idx = [i for i, it in enumerate(items) if layer in it.layers and it.kind != "hole"]
        probe = [k for k, i in enumerate(idx) if items[i].checked]
        if not probe:
            continue
        geoms = [items[i].geom for i in idx]
        a, b = STRtree(geoms).query([geoms[k] for k in probe], predicate="dwithin", distance=reach)
        for ka, kb in zip(np.asarray(probe)[a].tolist(), b.tolist()):
            ia, ib = items[idx[ka]], items[idx[kb]]
            if ka == kb or (ib.checked and kb < ka) or ia.may_touch(ib):
                continue
            need = ia.clearance_to(ib, rules)
            gap = ia.gap(ib)
            if gap < need - TOLERANCE:
                where = shapely.shortest_line(ia.geom, ib.geom).coords[0]
                report.violations.append(Violation("clearance", layer, where[0], where[1],
                                                   f"{name(board, ia)} and {name(board, ib)}: {gap:.3f} mm < {need:.3f} mm"))


def hole_clearance_violations(board, rules, items, report) -> None:
    """A hole keeps rules.hole_clearance from the copper of every other net: new vias' holes from other copper, and
    new copper from other nets' holes (plated or not)."""
    need = rules.hole_clearance
    copper = [it for it in items if it.kind != "hole"]
    holes = [it for it in items if it.hole is not None]
    reach = max([need] + [h.clearance for h in holes if h.clearance]) + max([h.hole_reach for h in holes] + [0.0])
    pairs = []
    probe = [h for h in holes if h.checked]
    if probe and copper:
        a, b = STRtree([it.geom for it in copper]).query([h.hole for h in probe], predicate="dwithin", distance=reach)
        pairs += [(probe[i], copper[j]) for i, j in zip(a.tolist(), b.tolist())]
    probe = [it for it in copper if it.checked]
    if probe and holes:
        a, b = STRtree([h.hole for h in holes]).query([it.geom for it in probe], predicate="dwithin", distance=reach)
        pairs += [(holes[j], probe[i]) for i, j in zip(a.tolist(), b.tolist())]
    seen = set()
    for hole_item, other in pairs:
        if hole_item is other or hole_item.may_touch(other) or (id(hole_item), id(other)) in seen:
            continue
        seen.add((id(hole_item), id(other)))
        wanted = max(need, hole_item.clearance or 0.0) if hole_item.kind == "hole" else need
        gap = hole_item.hole_gap(other)
        if gap < wanted - TOLERANCE:
            x, y = hole_item.hole.centroid.coords[0]
            report.violations.append(Violation("hole_clearance", "*", x, y,
                                               f"hole of {name(board, hole_item)} and {name(board, other)}: "
                                               f"{gap:.3f} mm < {wanted:.3f} mm"))


def edge_violations(board, rules, items, report) -> None:
    edge = board.outline.boundary
    for it in items:
        if not it.checked:
            continue
        gap = shapely.distance(it.core, edge) - it.reach
        outside = not board.outline.contains(it.geom)
        if outside or gap < rules.edge_clearance - TOLERANCE:
            x, y = it.geom.centroid.coords[0]
            report.violations.append(Violation(
                "copper_edge_clearance", sorted(it.layers)[0], x, y,
                f"{name(board, it)}: " + ("outside the board" if outside else
                                          f"{gap:.3f} mm from the edge < {rules.edge_clearance:.3f} mm")))


def hole_violations(rules, items, report) -> None:
    holes = [it for it in items if it.hole is not None]
    probe = [k for k, h in enumerate(holes) if h.checked]
    if not probe:
        return
    a, b = STRtree([h.hole for h in holes]).query([holes[k].hole for k in probe], predicate="dwithin",
                                                   distance=rules.hole_to_hole + 2 * max(h.hole_reach for h in holes))
    for ka, kb in zip(np.asarray(probe)[a].tolist(), b.tolist()):
        if ka == kb or (holes[kb].checked and kb < ka):
            continue
        gap = shapely.distance(holes[ka].hole, holes[kb].hole) - holes[ka].hole_reach - holes[kb].hole_reach
        if gap < rules.hole_to_hole - TOLERANCE:
            x, y = holes[ka].hole.centroid.coords[0]
            report.violations.append(Violation("hole_to_hole", "*", x, y,
                                               f"holes {gap:.3f} mm apart < {rules.hole_to_hole:.3f} mm"))


def mask_violations(board, items, report) -> None:
    """Copper on an outer layer (a track, or a via's) under a solder-mask opening of another net (or a drawn one) is
    bared beside it."""
    for layer in {o.layer for o in board.mask_openings}:
        openings = [o for o in board.mask_openings if o.layer == layer]
        probe = [it for it in items if it.checked and it.kind in ("track", "via") and layer in it.layers]
        if not probe:
            continue
        a, b = STRtree([o.outline for o in openings]).query([it.geom for it in probe], predicate="intersects")
        for i, j in zip(a.tolist(), b.tolist()):
            track, opening = probe[i], openings[j]
            if opening.net and opening.net == track.net:
                continue
            x, y = shapely.intersection(track.geom, opening.outline).centroid.coords[0]
            report.violations.append(Violation("solder_mask_bridge", layer, x, y,
                                               f"{name(board, track)} under the solder-mask opening of "
                                               f"{board.net_name(opening.net) or 'no net'}"))


def bare_via_violations(board, rules, items, report) -> None:
    """Where vias are not tented, each opens the solder mask: its opening (copper grown by the board's expansion)
    bares nothing of another net, and keeps the minimum web from another net's opening."""
    for layer in board.bare_vias:
        vias = [it for it in items if it.checked and it.kind == "via" and layer in it.layers]
        if not vias:
            continue
        holes = [shapely.buffer(it.geom, rules.bare_via_reach) for it in vias]
        others = [(o.outline, o.net, rules.mask_web) for o in board.mask_openings if o.layer == layer]
        others += [(it.geom, it.net, 0.0) for it in items if layer in it.layers and it.kind != "hole"]
        others += [(h, v.net, rules.mask_web) for h, v in zip(holes, vias)]
        tree = STRtree([g for g, _, _ in others])
        for via, opening in zip(vias, holes):
            for j in tree.query(opening, predicate="dwithin", distance=rules.mask_web).tolist():
                geom, net, web = others[j]
                if net == via.net or geom is opening or geom is via.geom:
                    continue
                if shapely.distance(opening, geom) < web - TOLERANCE or (not web and opening.intersects(geom)):
                    x, y = via.geom.centroid.coords[0]
                    report.violations.append(Violation("solder_mask_bridge", layer, x, y,
                                                       f"the mask opening of {name(board, via)} bridges to "
                                                       f"{board.net_name(net) or 'no net'}"))
                    break


def dangling_violations(board, items, report, pieces=()) -> None:
    """A new track end that touches no other copper of its net on its layer (a zone's fill counts)."""
    copper = [it for it in items if it.kind in ("pad", "track", "via") and it.net]
    copper += [Item(p.shape, frozenset([p.layer]), p.net, "fill", False) for p in pieces]
    ends = [(k, end) for k, it in enumerate(copper) if it.checked and it.kind == "track" for end in it.ends]
    if not ends:
        return
    # the copper is the query and the ends the tree: shapely prepares each query shape once (a fill has thousands
    # of vertices), where a query per end point would test the whole fill again each time
    # within TOUCH: an end on the edge of a pad, rounded to the nanometre, may fall a hair outside our polygon
    c, e = STRtree(shapely.points([end for _, end in ends])).query([it.geom for it in copper], predicate="dwithin",
                                                                    distance=TOUCH)
    touched = set()
    for j, n in zip(c.tolist(), e.tolist()):
        k = ends[n][0]
        it, other = copper[k], copper[j]
        if j != k and other.net == it.net and other.layers & it.layers:
            touched.add(n)
    for n, (k, end) in enumerate(ends):
        if n not in touched:
            it = copper[k]
            report.violations.append(Violation("track_dangling", next(iter(it.layers)), end[0], end[1],
                                               f"{name(board, it)}: an end touches nothing of its net"))


def thermal_violations(board, rules, new_tracks, new_vias, only_new, report, fills_before=None,
                       fills_after=None) -> None:
    """Thermal reliefs with some spokes but fewer than KiCad asks (zones.reliefs, on zones.relief_fill: fills_after
    where the caller has it); with only_new, those that were not starved before the new tracks and vias
    (fills_before: relief_fill without them)."""
    if not board.zones:
        return
    if fills_after is None:
        fills_after = relief_fill(board, rules, new_tracks, new_vias)
    starved = [r for r in reliefs(board, rules, fills_after, new_tracks, new_vias) if r.starved]
    if starved and only_new:
        if fills_before is None:
            fills_before = relief_fill(board, rules)
        before = starved_keys(reliefs(board, rules, fills_before))
        starved = [r for r in starved if (r.pad, r.layer, r.zone) not in before]
    for r in starved:
        pad = board.pads[r.pad]
        report.violations.append(Violation("starved_thermal", r.layer, pad.x, pad.y,
                                           f"pad {pad.name}: {r.spokes} spoke(s) into the fill of "
                                           f"{board.net_name(pad.net)}; KiCad asks for {r.needed}"))


def unrouted(board: Board, new_tracks=(), new_vias=(), pieces=()) -> dict[str, int]:
    """Per net: pad groups that its copper, and the zone fills KiCad will make around it (pieces), do not join,
    minus one."""
    return {board.net_name(net): len(groups) - 1
            for net, groups in pad_groups(board, new_tracks, new_vias, pieces).items() if len(groups) > 1}
