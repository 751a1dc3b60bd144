"""What KiCad's zone fill will connect, predicted with exact geometry, as the user gets it after pressing B.

Per zone and copper layer, as KiCad's ZONE_FILLER builds it: the zone's area within the board, less every other
net's copper grown by the clearance (the larger of the zone's and the item's), less unplated holes and pour
keep-outs and the fills of other nets' zones that outrank it, less a thermal gap around its own net's pads that
connect by thermal relief; then opened by the zone's minimum thickness (parts narrower vanish). Each remaining
piece joins the pads it touches: a solidly connected pad by overlap, a thermally relieved one by a spoke (KiCad's
four spokes from the pad's centre past the gap) whose end lies in the piece; and the tracks and vias of its net.

The prediction errs on the side of fewer connections (a little more is knocked out than KiCad knocks out), so a
connection it counts is one KiCad makes; a connection it misses is routed with a track.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry import Point, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.strtree import STRtree

from ..board.geometry import QUAD_SEGS, ROUND_OUT, grow, place
from ..board.model import Board, Pad, Zone
from ..board.rules import SPOKES_KEPT
from ..parallel import at_once

MARGIN = 0.02            # mm more knocked out than KiCad does, and less left of a spoke's end
# The fill on which thermal reliefs are judged lies closer to KiCad's: about its own arc error. At MARGIN the fill
# loses the webs between a connector's pads (0.11 mm wide on oresat_bp1u) that KiCad keeps, so reliefs that KiCad
# finds whole looked starved before routing, were taken for the design's own, and routing did not guard them.
RELIEF_MARGIN = 0.005
# A relief short of spokes at RELIEF_MARGIN may be whole for KiCad: its spokes are guarded as a fill a little larger
# than KiCad's (less knocked out, less eroded) lands them. On usb_gigabit, C12.2's right spoke ends in a strip of
# fill exactly the zone's minimum thickness wide (between its thermal gap and a pour keep-out), which KiCad keeps
# and RELIEF_MARGIN erodes; unguarded, a track cut it and KiCad found C12.2 starved. Guards cost room: those of
# five pads with one spoke or none (esp32p4 asks for one) cost esp32p4, bound by time, 9 connections.
GUARD_MARGIN = -RELIEF_MARGIN
MEET = 1e-3       # mm of slack when a spoke's end is tested inside another spoke (KiCad allows 1 nm)


@dataclass
class Piece:
    """One connected part of a zone's fill on one layer."""
    net: int
    layer: str
    shape: BaseGeometry
    pads: list[int] = field(default_factory=list)        # indices into board.pads joined through it
    spokes: list[tuple[int, Polygon, Point]] = field(default_factory=list)   # (pad, body, end): spokes ending in it
    zone: int = -1


class Prediction(list):
    """predict's pieces, with the fill of every zone and layer it made them from (zone_fill's, by (zone, layer)): a
    later prediction with `since` takes the fills that no changed item reaches from here instead of filling them
    again, where a zone below them in priority asks for them."""

    def __init__(self, pieces=(), fills: dict | None = None):
        super().__init__(pieces)
        self.fills = fills if fills is not None else {}


def connection(pad: Pad, zone: Zone) -> str:
    """none, thermal or solid: the pad's own setting (or its footprint's), else the zone's. KiCad's "thermal
    reliefs for through-hole pads only" connects the others solidly."""
    mode = pad.zone_connection or zone.pad_connection
    if mode == "thru_hole_only":
        return "thermal" if pad.drill > 0 else "solid"
    return mode


def relief_gap(pad: Pad, zone: Zone) -> float:
    """The thermal gap around a relieved pad: the pad's own, else the zone's."""
    return pad.thermal_gap if pad.thermal_gap is not None else zone.thermal_gap


def relief_width(pad: Pad, zone: Zone) -> float:
    """The width of a relieved pad's spokes: the pad's own, else the zone's."""
    return pad.thermal_width if pad.thermal_width is not None else zone.thermal_width


def spokes(pad: Pad, zone: Zone) -> list[tuple[Polygon, Point]]:
    """KiCad's thermal spokes of a pad into a zone: (body, test point at its outer end), in board coordinates.
    Four spokes from the centre of the pad's shape to just past its bounding box grown by the thermal gap and half
    the zone's minimum thickness, in the pad's frame, turned by the pad's spoke angle."""
    gap = relief_gap(pad, zone)
    local = affinity.translate(affinity.rotate(pad.outline, pad.angle, origin=(pad.x, pad.y)), -pad.x, -pad.y)
    x0, y0, x1, y1 = local.bounds
    width = min(relief_width(pad, zone), x1 - x0, y1 - y0)
    if width < zone.min_thickness:
        return []
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    grow_by = gap + zone.min_thickness / 2
    hx, hy = (x1 - x0) / 2 + grow_by, (y1 - y0) / 2 + grow_by
    round_pad = pad.shape == "circle" or (pad.shape == "oval" and abs((x1 - x0) - (y1 - y0)) < 1e-6)
    out = []
    for k in range(4):
        a = math.radians(pad.thermal_angle + 90 * k)
        dx, dy = math.cos(a), -math.sin(a)             # KiCad's y points down
        reach = min(hx / abs(dx) if abs(dx) > 1e-9 else math.inf, hy / abs(dy) if abs(dy) > 1e-9 else math.inf)
        if round_pad:
            reach = hx
        ex, ey = cx + dx * reach, cy + dy * reach
        px, py = -dy * width / 2, dx * width / 2
        body = Polygon([(cx + px, cy + py), (cx - px, cy - py), (ex - px, ey - py), (ex + px, ey + py)])
        out.append((place(body, pad.x, pad.y, pad.angle), place(Point(ex, ey), pad.x, pad.y, pad.angle)))
    return out


class Copper:
    """Every copper item of the board (and the new tracks and vias) per layer, with its net and clearance, in an
    R-tree for the zones to query."""

    def __init__(self, board: Board, rules, tracks=(), vias=(), margin: float = MARGIN):
        self.margin = margin
        index = {name: i for i, name in enumerate(board.copper_layers)}
        geoms, nets, layers, clearances, kinds, overrides = [], [], [], [], [], []

        def add(geom, net, on, clearance, kind, override=0.0):
            for layer in on:
                geoms.append(geom)
                nets.append(net)
                layers.append(index[layer])
                clearances.append(clearance)
                kinds.append(kind)
                overrides.append(override)

        for i, p in enumerate(board.pads):
            if p.layers:
                add(p.outline, p.net, p.layers, rules.clearance_of(p.net, p.clearance), ("pad", i),
                    rules.clearance_between(0.0, 0.0, p.clearance) if p.clearance else 0.0)
            elif p.hole is not None:
                add(p.hole, 0, board.copper_layers, max(rules.hole_clearance, p.clearance or 0.0), ("hole", i))
        for t in list(board.tracks) + list(tracks):
            add(t.body(), t.net, (t.layer,), rules.clearance_of(t.net), ("track", -1))
        for v in list(board.vias) + list(vias):
            add(v.body(), v.net, v.layers, rules.clearance_of(v.net), ("via", -1))
        for g in board.graphics:
            add(g.outline, g.net, (g.layer,), rules.clearance_of(g.net, rules.graphic_clearance or None),
                ("graphic", -1))
        self.geoms = np.array(geoms, dtype=object)
        self.nets = np.array(nets, dtype=np.int64)
        self.layers = np.array(layers, dtype=np.int64)
        self.clearances = np.array(clearances, dtype=float)
        # a pad's own clearance (or its footprint's) overrides a zone's as it overrides classes and rules: KiCad
        # fills to 0.05 mm of teres_a64's pads that ask 0.0508 in a zone that asks 0.3048
        self.overrides = np.array(overrides, dtype=float)
        self.kinds = kinds
        self.tree = STRtree(self.geoms) if geoms else None
        self._grown: dict[float, dict[int, BaseGeometry]] = {}
        self.fills: dict[tuple[int, str], tuple[BaseGeometry, list]] = {}     # zone_fill's, by (zone, layer)
        self.zone_tree = STRtree([z.outline for z in board.zones]) if board.zones else None

    def grown(self, items: np.ndarray, clearance: float) -> list[BaseGeometry]:
        """The items grown by the larger of a zone's `clearance` and their own, or by their override where they
        have one, remembered: zones share their items."""
        cache = self._grown.setdefault(clearance, {})
        todo = np.array([h for h in items.tolist() if h not in cache], dtype=np.int64)
        if todo.size:
            own = self.overrides[todo]
            reach = (np.where(own > 0, own, np.maximum(self.clearances[todo], clearance)) + self.margin) * ROUND_OUT
            for h, g in zip(todo.tolist(), shapely.buffer(self.geoms[todo], reach, quad_segs=QUAD_SEGS)):
                cache[h] = g
        return [cache[h] for h in items.tolist()]

    def zones_near(self, area: BaseGeometry) -> list[int]:
        return self.zone_tree.query(area, predicate="dwithin", distance=1.0).tolist() if self.zone_tree else []

    def near(self, area: BaseGeometry, layer: int, reach: float) -> np.ndarray:
        """The items on the layer within reach of the area, in the tree's order. The boxes within reach are found
        first and the other layers' items dropped before any distance is measured (from the prepared area, as the
        tree measures): against a large zone's outline, measuring is what costs."""
        if self.tree is None:
            return np.zeros(0, np.int64)
        x0, y0, x1, y1 = area.bounds
        hits = self.tree.query(shapely.box(x0 - reach, y0 - reach, x1 + reach, y1 + reach))
        hits = hits[self.layers[hits] == layer]
        shapely.prepare(area)
        return hits[shapely.dwithin(area, self.geoms[hits], reach)]


def zone_fill(board: Board, rules, zone_index: int, layer: str, copper: Copper) -> tuple[BaseGeometry, list]:
    """The predicted fill of one zone on one layer, and the thermally relieved pads in it with their spokes;
    remembered in copper.fills, since the zones below it in priority knock it out."""
    key = (zone_index, layer)
    if key not in copper.fills:
        copper.fills[key] = fill_one(board, rules, zone_index, layer, copper)
    return copper.fills[key]


def fill_one(board: Board, rules, zone_index: int, layer: str, copper: Copper) -> tuple[BaseGeometry, list]:
    zone = board.zones[zone_index]
    li = board.copper_layers.index(layer)
    margin = copper.margin
    area = zone.outline.intersection(grow(board.outline, -max(rules.edge_clearance, zone.clearance, margin)))
    if area.is_empty:
        return area, []
    reach = max(zone.clearance, float(copper.clearances.max(initial=0.0)), zone.thermal_gap) + margin
    hits = copper.near(area, li, reach)
    cuts, rings, relieved, others = [], [], [], []
    for h in hits.tolist():
        net, (kind, i) = int(copper.nets[h]), copper.kinds[h]
        if net == zone.net and net:
            if kind != "pad":
                continue                                   # its own tracks and vias merge with the fill
            mode = connection(board.pads[i], zone)
            if mode == "thermal":
                pad = board.pads[i]
                gap = relief_gap(pad, zone)
                rings.append(grow(copper.geoms[h], gap + margin))
                # KiCad clips the fill, spokes included, to the zone's outline: a pad wholly outside it gets none
                if copper.geoms[h].intersects(area):
                    relieved.append((i, spokes(pad, zone)))
            elif mode == "none":
                others.append(h)
            continue
        others.append(h)
    cuts.extend(copper.grown(np.array(others, dtype=np.int64), zone.clearance))
    cuts.extend(pour_keepouts(board, zone, layer))
    for j in copper.zones_near(area):
        other = board.zones[j]
        if other.net != zone.net and layer in other.layers and other.outranks(zone):
            # KiCad fills it first and knocks out its fill (islands too: they are removed after every zone is
            # filled), by the larger of the two zones' clearances, as between any two items of different nets. A
            # zone of no net is not filled here: its outline. Where other copper bounds the predicted fill, it lies
            # up to 2 margin inside KiCad's: grown by as much, within the outline.
            gap = max(zone.clearance, other.clearance) + margin
            if not other.net:
                cuts.append(grow(other.outline, gap))
                continue
            # only the fill that comes within reach of this zone's area is grown (a large plane's costs seconds),
            # simplified first, by margin at most: grown by margin more it still holds the fill (or, where the
            # margin is negative, less lies within it)
            t = abs(margin)
            x0, y0, x1, y1 = area.bounds
            reach = gap + 4 * t + 0.01
            near = zone_fill(board, rules, j, layer, copper)[0].intersection(
                shapely.box(x0 - reach, y0 - reach, x1 + reach, y1 + reach))
            taken = grow(near.simplify(t), 2 * margin + t).intersection(other.outline)
            cuts.append(grow(taken.simplify(t), gap + math.copysign(t, margin)))
    blocked = shapely.union_all(cuts) if cuts else Polygon()
    fill = area.difference(shapely.union_all([blocked] + rings))
    fill = prune_thin(fill, zone.min_thickness, margin)
    # KiCad adds the spokes whose end lies in the fill, then cuts the other nets' clearances out again: a spoke
    # through one is a stub that its DRC still counts as a spoke, but no connection
    relieved = [(i, [(body, end, spoke_joins(board.pads[i].outline, body, end, blocked, zone.min_thickness))
                     for body, end in pad_spokes]) for i, pad_spokes in relieved]
    return fill, relieved


def spoke_joins(pad_outline: BaseGeometry, body: Polygon, end: Point, blocked: BaseGeometry,
                min_thickness: float) -> bool:
    """Whether a spoke still joins its pad to the fill at its end once KiCad has cut the other nets' clearances
    out of it and pruned what is thinner than the zone's minimum thickness: a spoke another net's clearance only
    nicks still joins (the GND pins of c2_teres_keyboard's TQFP, whose inward spokes pass their neighbours'
    clearances by less than their width). The end lies half the minimum thickness inside the fill: copper that
    comes that near it reaches the fill, though the pruning rounds a nicked tip."""
    if not body.intersects(blocked):
        return True
    rest = prune_thin(body.difference(blocked), min_thickness)
    return any(part.intersects(pad_outline) and part.distance(end) < min_thickness / 2
               for part in getattr(rest, "geoms", [rest]))


def pour_keepouts(board: Board, zone: Zone, layer: str) -> list:
    """The outlines of the rule areas that keep the zone's fill out on the layer (KiCad fills teardrops through
    them)."""
    return [] if zone.teardrop else [k.outline for k in board.keepouts if k.no_pour and layer in k.layers]


def prune_thin(fill: BaseGeometry, min_thickness: float, margin: float = 0.0) -> BaseGeometry:
    """The fill less its features thinner than the zone's minimum thickness, as KiCad prunes them: shrunk by half
    of it (and margin more), the parts that lie closer than the minimum thickness to each other bridged (KiCad joins
    them with zero-width strands, so that a web pinched at one point survives), grown back, and kept inside the
    fill it came from."""
    half = min_thickness / 2
    if half <= 0 or fill.is_empty:
        return fill
    core = fill.buffer(-(half + margin), quad_segs=4)
    parts = np.asarray([g for g in getattr(core, "geoms", [core]) if not g.is_empty], dtype=object)
    grown = core.buffer(half, quad_segs=4)
    if len(parts) < 2:
        return grown
    pairs = near_pairs(parts, min_thickness)
    if not pairs.size:
        return grown
    strands = shapely.shortest_line(parts[pairs[0]], parts[pairs[1]])
    bands = shapely.buffer(strands, half, quad_segs=4)
    return shapely.union_all([grown, *bands]).intersection(fill)


def near_pairs(parts: np.ndarray, distance: float) -> np.ndarray:
    """The pairs (i < j, as a 2 x n array) of the geometries that lie within distance of each other, in the order
    STRtree.query gives them. Each pair's distance is measured from the one with more vertices, prepared (its edges
    indexed once): measured from the other, a plane's outline of 200,000 vertices is walked again for every small
    part near it (13 s of vme-wren's 29 s fill)."""
    tree = STRtree(parts)
    x0, y0, x1, y1 = shapely.bounds(parts).T
    a, b = tree.query(shapely.box(x0 - distance, y0 - distance, x1 + distance, y1 + distance))
    a, b = a[a < b], b[a < b]
    vertices = shapely.get_num_coordinates(parts)
    first = vertices[a] >= vertices[b]
    shapely.prepare(parts)
    near = shapely.dwithin(parts[np.where(first, a, b)], parts[np.where(first, b, a)], distance)
    return np.stack([a[near], b[near]])


def predict(board: Board, rules, tracks=(), vias=(), margin: float = MARGIN,
            since: tuple[list[Piece], list] | None = None) -> Prediction:
    """The pieces of every zone's fill that KiCad keeps (it removes those that touch nothing of the zone's net): those
    that join a pad, with the pads they join, and those that touch only tracks or vias of the net, which carry a join
    between them (a piece of a 2-layer board's GND plane between two vias: c4_esp32c5's /USB_DN, joined through other
    nets' copper, then found to part GND, which KiCad's refill joins that way).
    margin: how much more than KiCad is knocked out (MARGIN for connections, RELIEF_MARGIN for thermal reliefs).
    since: (pieces, changed): what predict gave, with the same margin, for copper that differs from this
    only by the changed tracks and vias (added or taken away); a zone's fill on a layer that none of them comes
    within reach of is taken from those pieces, not filled again (a few stubs change a few fills, and on a large
    board each fill costs seconds). Where the pieces are a Prediction, so is such a fill where a changed zone below
    it in priority asks for it (esp32_evb: a plane below hundreds of small zones)."""
    copper = Copper(board, rules, tracks, vias, margin)
    stale = stale_fills(board, copper, since[1]) if since is not None else None
    if stale is not None:
        copper.fills.update((key, fill) for key, fill in getattr(since[0], "fills", {}).items() if key not in stale)
    before: dict[tuple[int, str], list[Piece]] = {}
    for piece in since[0] if since is not None else ():
        before.setdefault((piece.zone, piece.layer), []).append(piece)
    pieces: list[Piece] = []
    for zi, zone in enumerate(board.zones):
        if not zone.net:
            continue
        for layer in zone.layers:
            if stale is not None and (zi, layer) not in stale:
                pieces.extend(before.get((zi, layer), []))
                continue
            fill, relieved = zone_fill(board, rules, zi, layer, copper)
            parts = np.asarray([g for g in getattr(fill, "geoms", [fill]) if not g.is_empty and g.area > 0],
                               dtype=object)
            if not parts.size:
                continue
            tree = STRtree(parts)
            shapely.prepare(parts)
            joined: dict[int, set[int]] = {}
            joined_by: dict[int, list] = {}
            for i, pad_spokes in relieved:
                for body, end, whole in pad_spokes:
                    p = piece_at(parts, tree, end, margin)
                    if p is not None:
                        joined_by.setdefault(p, []).append((i, body, end))
                        if whole:
                            joined.setdefault(p, set()).add(i)
            li = board.copper_layers.index(layer)
            solid = [h for h in copper.near(fill, li, 0.0).tolist()
                     if copper.nets[h] == zone.net and copper.kinds[h][0] == "pad"
                     and connection(board.pads[copper.kinds[h][1]], zone) == "solid"]
            for k, p in zip(*touching(tree, parts, copper.geoms[solid])):
                joined.setdefault(int(p), set()).add(copper.kinds[solid[k]][1])
            own = [h for h in copper.near(fill, li, 0.0).tolist()
                   if copper.nets[h] == zone.net and copper.kinds[h][0] in ("track", "via")]
            touched = set(touching(tree, parts, copper.geoms[own])[1].tolist())
            for p in sorted(set(joined) | set(joined_by) | touched):
                pieces.append(Piece(zone.net, layer, parts[p], sorted(joined.get(p, ())), joined_by.get(p, []), zi))
    return Prediction(pieces, copper.fills)


def touching(tree: STRtree, parts: np.ndarray, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (geometry, part) index pairs that intersect, parts prepared: the boxes from the tree, then each pair
    measured from its part (a plane's fill indexed once, not walked again for every pad on it)."""
    i, p = tree.query(geoms)
    hit = shapely.intersects(parts[p], geoms[i])
    return i[hit], p[hit]


def relief_fill(board: Board, rules, tracks=(), vias=(), since: tuple[list[Piece], list] | None = None) -> Prediction:
    """The fill on which thermal reliefs are judged: predict with KiCad's own tolerance (RELIEF_MARGIN). Its pieces
    that join only tracks and vias count too: there a track's far end counts as a spoke (c4_scalenode's shield pad:
    an F.Cu track from it to a via whose own piece of the In1.Cu fill holds nothing else). since: as predict's."""
    return predict(board, rules, tracks, vias, RELIEF_MARGIN, since=since)


def stale_fills(board: Board, copper: Copper, changed: list) -> set[tuple[int, str]]:
    """The (zone, layer) fills that a changed track or via comes within reach of: any clearance or thermal gap
    that zone_fill knocks out around an item, and the margin, reach no farther."""
    if not changed or copper.zone_tree is None:
        return set()
    reach = max(max((max(z.clearance, z.thermal_gap) for z in board.zones), default=0.0),
                float(copper.clearances.max(initial=0.0))) + copper.margin
    bodies = [item.body() for item in changed]
    item, zone = copper.zone_tree.query(bodies, predicate="dwithin", distance=reach)
    stale = set()
    for i, zi in zip(item.tolist(), zone.tolist()):
        on = getattr(changed[i], "layers", None) or (changed[i].layer,)
        stale.update((zi, layer) for layer in on if layer in board.zones[zi].layers)
    return stale


def piece_at(parts: np.ndarray, tree: STRtree, end: Point, margin: float) -> int | None:
    """The piece a spoke's end lies in, as KiCad fills it. Every edge of the predicted fill lies about 2 margin
    inside KiCad's (margin more knocked out, margin more eroded), and a spoke's end only half the zone's minimum
    thickness past the gap: an end up to margin outside the predicted piece lies margin inside KiCad's (or may,
    where the margin is negative: GUARD_MARGIN)."""
    reach = abs(margin)
    best, depth = None, -reach
    for p in tree.query(end, predicate="dwithin", distance=reach).tolist():
        d = parts[p].boundary.distance(end) if parts[p].contains(end) else -parts[p].distance(end)
        if d > depth:
            best, depth = p, d
    return best


def starting_fills(board: Board, rules) -> tuple[list[Piece], list[Piece], list[tuple[BaseGeometry, str, int]]]:
    """What routing starts from: the fills that join pads (predict), those the thermal reliefs are judged on
    (relief_fill) and the spoke guards of the latter (spoke_guards). The three predictions are independent passes
    over every zone, each at its own margin (vme-wren: 15 s apiece, most of it in its planes' overlays), and shapely
    runs its geometry outside Python's lock: they run at once, to the same results."""
    if not board.zones:
        return [], [], []
    calls = [partial(predict, board, rules), partial(relief_fill, board, rules)]
    if rules.min_spokes > 1:                  # spoke_guards then asks for the fill at GUARD_MARGIN too
        calls.append(partial(predict, board, rules, margin=GUARD_MARGIN))
    joins, relief_fills, *wider = at_once(*calls)
    return joins, relief_fills, spoke_guards(board, rules, relief_fills, *wider)


def spoke_guards(board: Board, rules, pieces: list[Piece],
                 wider: list[Piece] | None = None) -> list[tuple[BaseGeometry, str, int]]:
    """(area, layer, net): where other nets' copper must not come, so that the spokes that connect a pad to a fill
    today still connect it once routed: up to SPOKES_KEPT spokes a pad and layer in each piece of pieces (the
    relief fill), those farthest from other nets' pads (the others are left to routing). A relief whose spokes there
    fall short of the board's fewest (rules.min_spokes), but not on a fill a little larger than KiCad's
    (GUARD_MARGIN), keeps those instead: KiCad may find it whole. The area holds the spoke past the pad and the fill
    it lands in (half the zone's minimum thickness around its end), grown by the zone's clearance. wider: that
    fill at GUARD_MARGIN, where it was predicted already."""
    chosen = spokes_by_pad(pieces)
    if board.zones and rules.min_spokes > 1:
        if wider is None:
            wider = predict(board, rules, margin=GUARD_MARGIN)
        for key, groups in spokes_by_pad(wider).items():
            if 0 < sum(len(g) for _, g in chosen.get(key, [])) < rules.min_spokes <= sum(len(g) for _, g in groups):
                chosen[key] = groups
    pads = [p for p in board.pads if p.layers]
    tree = STRtree([p.outline for p in pads]) if pads else None
    guards = meeting_guards(board, rules, pieces, chosen)
    for (i, layer), groups in chosen.items():
        pad = board.pads[i]

        def room(spoke):
            near = tree.query(spoke[1], predicate="dwithin", distance=2.0) if tree else []
            return min([pads[j].outline.distance(spoke[1]) for j in near if pads[j].net != pad.net] + [2.0])

        for zi, group in groups:
            zone = board.zones[zi]
            for body, end in sorted(group, key=room, reverse=True)[:SPOKES_KEPT]:
                keep = body.difference(pad.outline).union(end.buffer(zone.min_thickness / 2 + MARGIN))
                guards.append((grow(keep, zone.clearance + MARGIN), layer, pad.net))
    return guards


def landed_ends(pieces: list[Piece]) -> set[tuple[int, str, int, float, float]]:
    """(pad, layer, zone, end x, end y) of every spoke that ends in a piece of the fill."""
    return {(i, piece.layer, piece.zone, end.x, end.y) for piece in pieces for i, _, end in piece.spokes}


def known_spokes(board: Board, pad_index: int, zone_index: int, known: dict | None) -> list[tuple[Polygon, Point]]:
    """spokes() of a pad into a zone, remembered in known, a dict the caller keeps for one board (None: none kept):
    a BGA's balls are each other's neighbours, and a zone's reliefs are the same on each of its layers."""
    if known is None:
        return spokes(board.pads[pad_index], board.zones[zone_index])
    if (pad_index, zone_index) not in known:
        known[pad_index, zone_index] = spokes(board.pads[pad_index], board.zones[zone_index])
    return known[pad_index, zone_index]


def meeting_bodies(board: Board, zone_index: int, layer: str, landed: set, known: dict | None = None) -> list:
    """(pad, spoke) of the zone's relieved pads on the layer whose spoke ends in no piece of the fill but meets
    another pad's spoke (each end inside the other), which KiCad's filler adds too (its second test): a track of the
    net that ends on such a spoke ends in the fill (c4_usb_gigabit's R10.1, whose spoke up meets R14.2's down, and
    whose track up ends on R14.2's). landed: landed_ends of the fill."""
    zone = board.zones[zone_index]
    own = [(i, body, end) for i, pad in enumerate(board.pads)
           if pad.net == zone.net and layer in pad.layers and connection(pad, zone) == "thermal"
           and pad.outline.intersects(zone.outline) for body, end in known_spokes(board, i, zone_index, known)]
    if not own:
        return []
    tree = STRtree([body.buffer(MEET) for _, body, _ in own])
    out = []
    for i, body, end in own:
        if (i, layer, zone_index, end.x, end.y) in landed:
            continue
        grown = body.buffer(MEET)
        if any(own[m][0] != i and grown.contains(own[m][2]) for m in tree.query(end, predicate="intersects").tolist()):
            out.append((i, body))
    return out


def meeting_guards(board: Board, rules, pieces: list[Piece], chosen: dict) -> list[tuple[BaseGeometry, str, int]]:
    """spoke_guards' areas for the spokes that meet another pad's (meeting_bodies), of the pads whose spokes into
    the fill fall short of the board's fewest (chosen: spokes_by_pad's), and of the spokes they meet: KiCad counts
    such a pair, and a track between the two pads cuts it (c4_hdmi_mipi's IC3.2, an SOT-23 pin whose spoke down
    meets a capacitor's: the track between the SOT's outer pins left it one spoke)."""
    if rules.min_spokes < 2:
        return []
    landed = landed_ends(pieces)
    count = {key: sum(len(g) for _, g in groups) for key, groups in chosen.items()}
    guards = []
    for zi, zone in enumerate(board.zones):
        for layer in zone.layers if zone.net else ():
            meeting = meeting_bodies(board, zi, layer, landed)
            short = [body for i, body in meeting if count.get((i, layer), 0) < rules.min_spokes]
            if not short:
                continue
            for i, body in meeting:
                if any(body.intersects(s) for s in short):
                    keep = body.difference(board.pads[i].outline)
                    guards.append((grow(keep, zone.clearance + MARGIN), layer, zone.net))
    return guards


def spokes_by_pad(pieces: list[Piece]) -> dict[tuple[int, str], list[tuple[int, list]]]:
    """(pad, layer) -> per piece its spokes land in: the piece's zone (index) and those spokes (body, end)."""
    out: dict[tuple[int, str], list] = {}
    for piece in pieces:
        by_pad: dict[int, list] = {}
        for i, body, end in piece.spokes:
            by_pad.setdefault(i, []).append((body, end))
        for i, group in by_pad.items():
            out.setdefault((i, piece.layer), []).append((piece.zone, group))
    return out
