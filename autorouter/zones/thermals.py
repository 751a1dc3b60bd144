"""Thermal reliefs as KiCad's DRC judges them (its starved_thermal check), and stubs that feed a starved one.

KiCad counts, per thermally relieved pad, zone and layer, the spokes that cross into an outline of the fill; an
outline joined to nothing but that one pad is an island whose spokes connect nothing. A track of the net on any of
the pad's layers (a via is one of length 0) whose copper touches the pad, with one end inside it (grown by half the
thermal gap) and the other in the relief's fill, what KiCad keeps of the spokes it adds included, counts as a spoke
too, and so does a spoke whose end lies inside a neighbouring pad's spoke, whose end lies inside it (KiCad's filler
keeps the pair). A pad with fewer spokes than the board asks (its min_resolved_spokes, 2 by default; 0 turns the
check off) is starved; the spokes into islands count only where there are no others. The spokes run from the pad's
centre and only its hole is knocked out of them, so an SMD pad's spokes join the pieces they end in into one outline
(outline_items). On 46 routed corpus boards and 28 stripped ones this verdict (`starved`) found 71 of the 86 reliefs
KiCad 9 found starved, and 26 it did not (2026-11-29); on the human routings of the 43 boards KiCad 9 opens, 60 of
its 66, and 18 it did not (2026-12-07, benchmarks/relief_agreement.py). The stubs go where the stricter count
(`short`: islands never count) falls short.

Routing keeps two spokes of each pad clear (spoke_guards), but other nets' tracks can still cut the fill around
them into islands. feed_starved then adds such a track: a short straight stub of the net from the pad's centre into
a piece of the fill that holds more than the pad, or to a via of the net beside it, where it keeps every clearance,
as a designer would. Where a starved pad's spokes reach an island, stitch_islands puts a via of the net in it, as a
designer stitches one; an SMD pad's island may then want a stub to that via too (on c2_teres_keyboard KiCad
counted the via alone in the island under a TQFP pin, and the pin's stub to it made two items).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry
from shapely.strtree import STRtree

from ..board.geometry import TOUCH
from ..board.model import Board, Track, Via
from .fill import (MARGIN, MEET, RELIEF_MARGIN, Copper, Piece, connection, known_spokes, landed_ends, meeting_bodies,
                   pour_keepouts, prune_thin, relief_gap, relief_width, spokes)


@dataclass
class Relief:
    pad: int                 # index into board.pads
    layer: str
    zone: int
    spokes: int              # into pieces joined to more than the pad, and tracks of the net from it into the fill
    island_spokes: int       # into pieces that hold nothing but the pad
    needed: int              # the fewest KiCad asks (the board's min_resolved_spokes; 0: not checked)

    @property
    def starved(self) -> bool:
        """Fewer spokes than KiCad asks, as its DRC counts them: those into islands only where there are no
        others (and some spoke at all)."""
        return 0 < (self.spokes or self.island_spokes) < self.needed

    @property
    def short(self) -> bool:
        """Fewer spokes into pieces that join more than the pad than KiCad asks (and some spoke at all)."""
        return self.spokes < self.needed and self.spokes + self.island_spokes > 0


def own_copper_per_layer(board: Board, tracks, vias) -> dict[tuple[int, str], list]:
    """(net, layer) -> the bodies of the net's tracks and vias there."""
    out: dict[tuple[int, str], list] = {}
    for t in list(board.tracks) + list(tracks):
        out.setdefault((t.net, t.layer), []).append(t.body())
    for v in list(board.vias) + list(vias):
        for layer in v.layers:
            out.setdefault((v.net, layer), []).append(v.body())
    return out


def joined_items(board: Board, pieces: list[Piece], own: dict, copper: Copper) -> list[int]:
    """Per piece, how many items it joins: its pads, and the tracks and vias of its net it touches, or that touch
    what KiCad's fill keeps of a spoke ending in it that joins no pad (other nets' clearances cut it over the pad):
    such a stub is part of the piece's outline (c2_teres_keyboard's U1.15, a TQFP pin with two tracks of its own
    onto its spoke's stub, whose piece KiCad then finds joined to two items)."""
    trees = {key: STRtree(bodies) for key, bodies in own.items()}
    counts = []
    for piece in pieces:
        tree = trees.get((piece.net, piece.layer))
        if tree is None:
            counts.append(len(piece.pads))
            continue
        stubs = [body for i, body, _ in piece.spokes if i not in piece.pads]
        shape = piece.shape
        if stubs:
            kept = kept_spokes(board, piece.zone, piece.layer, shapely.union_all(stubs), copper)
            shape = shape.union(shapely.union_all([part for part in getattr(kept, "geoms", [kept])
                                                   if part.intersects(piece.shape)] or [Point()]))
        counts.append(len(piece.pads) + len(tree.query(shape, predicate="intersects")))
    return counts


def reliefs(board: Board, rules, pieces: list[Piece], tracks=(), vias=(), items: list[int] | None = None,
            copper: Copper | None = None, outline: list[int] | None = None) -> list[Relief]:
    """Every thermally relieved pad with a spoke into a piece of its zone's fill, or one that meets another pad's
    spoke, per zone and layer, with the spokes KiCad counts, and the fewest it asks (rules.min_spokes). pieces:
    zones.predict with the same tracks and vias; items: their joined_items, copper: Copper with them, and outline:
    their outline_items, if known."""
    copper = copper or Copper(board, rules, tracks, vias, RELIEF_MARGIN)
    if outline is None:
        if items is None:
            items = joined_items(board, pieces, own_copper_per_layer(board, tracks, vias), copper)
        outline = outline_items(board, pieces, items, copper)
    found: dict[tuple[int, str, int], Relief] = {}
    for piece, n in zip(pieces, outline):
        for i, _, _ in piece.spokes:
            r = found.setdefault((i, piece.layer, piece.zone), Relief(i, piece.layer, piece.zone, 0, 0,
                                                                         rules.min_spokes))
            if n > 1:
                r.spokes += 1
            else:
                r.island_spokes += 1
    landed = landed_ends(pieces)
    known: dict = {}                              # (pad, zone) -> spokes (known_spokes)
    meeting = {}                                  # (zone, layer) -> meeting_bodies, where the check is on
    for zi, zone in enumerate(board.zones) if rules.min_spokes > 0 else ():
        for layer in zone.layers if zone.net else ():
            meeting[zi, layer] = meeting_bodies(board, zi, layer, landed, known)
            # a pad none of whose spokes ends in the fill is relieved all the same where one meets another pad's
            # spoke: KiCad's filler keeps the pair, and its DRC counts it (the balls of c6_teres_a64's BGAs, whose
            # spokes meet at the centres of four balls where the other nets' clearances leave no fill: KiCad found
            # six of them starved with that one spoke, which this check did not see)
            for i, _ in meeting[zi, layer]:
                found.setdefault((i, layer, zi), Relief(i, layer, zi, 0, 0, rules.min_spokes))
    fills: dict[tuple[int, str], list] = {}
    added: dict[tuple[int, str], list] = {}       # (zone, layer) -> (pad, spoke) KiCad adds to its fill, every pad's
    for piece in pieces:
        fills.setdefault((piece.zone, piece.layer), []).append(piece.shape)
        for i, body, _ in piece.spokes:
            added.setdefault((piece.zone, piece.layer), []).append((i, body))
    spokes_of: dict[tuple[int, str], BaseGeometry] = {}     # their union, made for the reliefs short of spokes
    ends = connected_ends(board, tracks, vias)
    for r in found.values():
        if r.spokes < r.needed:
            pad = board.pads[r.pad]
            key = (r.zone, r.layer)
            if key not in spokes_of:
                bodies = added.get(key, []) + meeting[key]
                spokes_of[key] = kept_spokes(board, r.zone, r.layer,
                                             shapely.union_all([body if board.pads[i].hole is None
                                                                else body.difference(board.pads[i].hole)
                                                                for i, body in bodies]), copper)
            r.spokes += track_spokes(board, r, fills.get(key, []) + [spokes_of[key]], ends(pad))
        if r.spokes < r.needed:
            r.spokes += meeting_spokes(board, r, landed, copper, known)
    return list(found.values())


def connected_ends(board: Board, tracks=(), vias=()):
    """ends(pad): the (n, 2, 2) start and end points of the tracks and vias KiCad connects to the pad itself (its
    GetConnectedTracks): of its net, on one of its layers, whose copper touches the pad's. A via is a track of length
    0. A track that reaches the pad only through another track is not among them
    (c2_teres_keyboard's U1.15: a /GND track ending 0.24 mm off the pad, joined to it by a short one, is no spoke)."""
    tracks_at: dict[tuple[int, str], list] = {}
    for t in list(board.tracks) + list(tracks):
        tracks_at.setdefault((t.net, t.layer), []).append((*t.start, *t.end, t.width))
    for v in list(board.vias) + list(vias):
        for layer in v.layers:
            tracks_at.setdefault((v.net, layer), []).append((v.x, v.y, v.x, v.y, v.diameter))
    arrays = {key: np.array(rows, dtype=np.float64) for key, rows in tracks_at.items()}

    def ends(pad) -> np.ndarray:
        rows = [arrays[(pad.net, layer)] for layer in pad.layers if (pad.net, layer) in arrays]
        if not rows:
            return np.zeros((0, 2, 2))
        seg = np.concatenate(rows)
        # only those whose box reaches the pad's are measured: a ground net has thousands
        x0, y0, x1, y1 = pad.outline.bounds
        reach = seg[:, 4] / 2 + TOUCH
        seg = seg[(np.minimum(seg[:, 0], seg[:, 2]) - reach <= x1) & (np.maximum(seg[:, 0], seg[:, 2]) + reach >= x0)
                  & (np.minimum(seg[:, 1], seg[:, 3]) - reach <= y1) & (np.maximum(seg[:, 1], seg[:, 3]) + reach >= y0)]
        seg = np.unique(seg, axis=0)
        lines = shapely.linestrings(seg[:, :4].reshape(-1, 2, 2))
        on = shapely.distance(lines, pad.outline) <= seg[:, 4] / 2 + TOUCH
        return seg[on, :4].reshape(-1, 2, 2)
    return ends


def outline_items(board: Board, pieces: list[Piece], items: list[int], copper: Copper) -> list[int]:
    """Per piece, the items joined by the whole outline of KiCad's fill it belongs to. KiCad adds the spokes to
    the fill and knocks out only the pad's hole: a pad's spokes run from its centre, so they join the pieces they
    end in into one outline (the copper under a QFP joined to the pour by the spokes of a ground pin) unless the
    hole, or the other nets' clearances and the pour keep-outs cut out after the spokes, part them. A piece is an
    island only if its whole outline joins a single item. items: joined_items."""
    landed: dict[tuple[int, int, str], list[int]] = {}      # (zone, pad, layer) -> the pieces its spokes end in
    for k, piece in enumerate(pieces):
        for i, _, _ in piece.spokes:
            landed.setdefault((piece.zone, i, piece.layer), []).append(k)
    parent = list(range(len(pieces)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    joining: dict[int, set[int]] = {}                       # piece -> the pads that join it to others
    for (zone_index, i, layer), ks in landed.items():
        ks = sorted(set(ks))
        if len(ks) < 2:
            continue
        pad, zone = board.pads[i], board.zones[zone_index]
        bodies = shapely.union_all([body for k in ks for j, body, _ in pieces[k].spokes if j == i])
        fill = shapely.union_all([pieces[k].shape for k in ks])
        for part in spoke_copper(board, pad, zone, board.copper_layers.index(layer), bodies, copper, fill):
            through = [k for k in ks if part.intersects(pieces[k].shape)]
            for k in through[1:]:
                parent[root(k)] = root(through[0])
            if len(through) > 1:
                for k in through:
                    if i not in pieces[k].pads:
                        joining.setdefault(k, set()).add(i)
    groups: dict[int, list[int]] = {}
    for k in range(len(pieces)):
        groups.setdefault(root(k), []).append(k)
    out = list(items)
    for members in groups.values():
        if len(members) > 1:
            pads = set().union(*(set(pieces[k].pads) | joining.get(k, set()) for k in members))
            total = len(pads) + sum(items[k] - len(pieces[k].pads) for k in members)
            for k in members:
                out[k] = total
    return out


def spoke_copper(board: Board, pad, zone, layer: int, body, copper: Copper, fill=None):
    """What KiCad's fill keeps of spoke bodies (with the fill around them, if given): less the pad's hole, other
    nets' clearances and the rule areas that keep pours out (it cuts them out after adding the spokes: c6_teres_a64's
    U11.20 has one across its middle, which parts its spokes up and down) and features thinner than the zone's
    minimum thickness."""
    if pad.hole is not None:
        body = body.difference(pad.hole)
    body = cut_spokes(board, zone, layer, body, copper)
    if fill is not None:
        body = body.union(fill.intersection(body.buffer(2 * zone.min_thickness)))
    body = prune_thin(body, zone.min_thickness)
    return list(getattr(body, "geoms", [body]))


def cut_spokes(board: Board, zone, layer: int, body, copper: Copper):
    """Spoke bodies of the zone's net less what KiCad cuts out of its fill after adding them: other nets'
    clearances and the rule areas that keep pours out."""
    near = copper.near(body, layer, zone.clearance + MARGIN)
    near = near[copper.nets[near] != zone.net]
    if near.size:
        body = body.difference(shapely.union_all(copper.grown(near, zone.clearance)))
    keepouts = pour_keepouts(board, zone, board.copper_layers[layer])
    return body.difference(shapely.union_all(keepouts)) if keepouts else body


def kept_spokes(board: Board, zone_index: int, layer: str, body, copper: Copper):
    """What KiCad's fill keeps of spoke bodies: cut_spokes' less what that leaves thinner than the zone's minimum
    thickness."""
    zone = board.zones[zone_index]
    return prune_thin(cut_spokes(board, zone, board.copper_layers.index(layer), body, copper), zone.min_thickness)


def meeting_spokes(board: Board, r: Relief, landed: set, copper: Copper, known: dict | None = None) -> int:
    """Of the relief's spokes whose end lies in no piece of the fill, those that meet a spoke of another relieved pad
    of the zone: each end inside the other spoke, which KiCad's filler keeps (its second test after the fill itself)
    and whose copper joins the two pads, so that its DRC counts the spoke; unless other nets' clearances (KiCad cuts
    them out of the spokes after adding them) or its minimum width leave nothing that joins them. landed:
    landed_ends of the fill; known: as for known_spokes."""
    pad, zone = board.pads[r.pad], board.zones[r.zone]
    loose = [(body, end) for body, end in known_spokes(board, r.pad, r.zone, known)
             if (r.pad, r.layer, r.zone, end.x, end.y) not in landed]
    if not loose:
        return 0
    reach = 2 * max(body.hausdorff_distance(end) for body, end in loose) + MEET
    others = [(other, body, end) for i, other in enumerate(board.pads) if i != r.pad and other.net == pad.net
              and r.layer in other.layers and abs(other.x - pad.x) < reach and abs(other.y - pad.y) < reach
              and connection(other, zone) == "thermal" for body, end in known_spokes(board, i, r.zone, known)]
    layer = board.copper_layers.index(r.layer)

    ring = pad.outline.buffer(relief_gap(pad, zone) / 2)

    def joins(body, other, other_body) -> bool:
        """Whether the pair, as the fill keeps it, still joins the other pad and crosses into the ring around
        this one, half its thermal gap wide, on which KiCad's DRC counts spokes."""
        return any(part.intersects(ring) and part.intersects(other.outline)
                   for part in spoke_copper(board, pad, zone, layer, body.union(other_body), copper))

    return sum(any(ob.buffer(MEET).contains(end) and body.buffer(MEET).contains(oe) and joins(body, other, ob)
                   for other, ob, oe in others) for body, end in loose)


def track_spokes(board: Board, r: Relief, fill: list, ends: np.ndarray) -> int:
    """Of the tracks (the pad's net's on any of the pad's layers, as (n, 2, 2) start and end points: KiCad takes the
    tracks connected to the pad), those from inside the pad (grown by half the gap) into the relief's fill: its
    pieces and the spokes KiCad adds to it from the relieved pads' centres, the pad's own and the others' (a track
    from c2_framework_mcu's C4.2 that ends on the spoke of U1.10 beside it counts), as KiCad keeps them
    (kept_spokes: c2_teres_keyboard's U1.15, a TQFP pin whose spokes along its axis the neighbours' clearances leave
    0.18 mm wide over it, so that a track ending over one inside the pad ends in no fill). So an F.Cu track from a
    through-hole pad that ends over its In2.Cu fill counts for the In2.Cu relief (c4_hackrf_one's P28.1, whose
    other spokes reach an island: one track spoke, and the island's no longer count). A via is a track of length 0,
    so one on a spoke inside the pad counts (on c4_hdmi_mipi KiCad finds an SOT-23 GND pin with one spoke and such a
    via content, and starved without the via)."""
    pad, zone = board.pads[r.pad], board.zones[r.zone]
    inside = pad.outline.buffer(relief_gap(pad, zone) / 2)
    start_in = shapely.contains_xy(inside, ends[:, 0, 0], ends[:, 0, 1])
    end_in = shapely.contains_xy(inside, ends[:, 1, 0], ends[:, 1, 1])
    other = np.where(start_in[:, None], ends[:, 1], ends[:, 0])[start_in | end_in]     # the end away from the pad
    if not other.size:
        return 0
    return int(np.any([shapely.intersects_xy(f, other[:, 0], other[:, 1]) for f in fill], axis=0).sum())


DIRECTIONS = 8                    # stub directions tried, every 45 degrees
SAME_WAY = math.radians(30)       # a stub closer than this to a connected spoke's direction runs along it


RELIEF_REACH = 1.5     # mm around the end of a relief's spoke where the fill it reached before routing is kept free
# mm beyond the clearance around other nets' pads left out of a relief's room for their own ways in. A wider ring
# lets such a pad's track cut the fill within it unasked: the sense pad inside c4_luna_rev0's U-shaped R1.4 did
PAD_WAY = 0.375


def relief_room(board: Board, relief: Relief, fills_before: list[Piece]):
    """Where other nets' copper should leave room for a relieved pad's fill to reach it again, once routing left
    it short and no stub could feed it: its spokes, and the fill each reached before routing within RELIEF_REACH
    of its end, grown by the zone's clearance, less the surroundings of other nets' pads (their own ways in,
    PAD_WAY beyond the clearance)."""
    pad, zone = board.pads[relief.pad], board.zones[relief.zone]
    before = [p.shape for p in fills_before if p.zone == relief.zone and p.layer == relief.layer]
    parts = []
    for body, end in spokes(pad, zone):
        reached = [shape for shape in before if shape.distance(end) < zone.min_thickness]
        parts.append(body.union(shapely.union_all(reached).intersection(end.buffer(RELIEF_REACH))) if reached
                     else body)
    room = shapely.union_all(parts).buffer(zone.clearance)
    near = [p.outline for p in board.pads if p.net != pad.net and relief.layer in p.layers
            and p.outline.distance(room) < zone.clearance + RELIEF_REACH]
    if near:
        room = room.difference(shapely.union_all(near).buffer(zone.clearance + PAD_WAY))
    return room


def starved_keys(reliefs_: list[Relief], strict: bool = False) -> set[tuple[int, str, int]]:
    return {(r.pad, r.layer, r.zone) for r in reliefs_ if (r.short if strict else r.starved)}


def feed_starved(board: Board, rules, pieces: list[Piece], tracks=(), vias=(), margin: float = 0.0,
                 before: set = frozenset()) -> list[Track]:
    """Stubs for the reliefs the new tracks and vias left short (those in `before`, starved_keys(..., strict=True) of
    the board as it came, are the design's own): per pad, as many as it lacks, each a straight track of the net
    from the pad's centre into a piece of its zone's fill joined to more than the pad (or to a track or via of the
    net alone), or to a via of the net in such a piece within RELIEF_REACH of the pad; clear of all other copper,
    holes, the board edge, rule areas and other nets' solder-mask openings."""
    copper = Copper(board, rules, tracks, vias, RELIEF_MARGIN)
    items = joined_items(board, pieces, own_copper_per_layer(board, tracks, vias), copper)
    starved = [r for r in reliefs(board, rules, pieces, tracks, vias, items, copper)
               if r.short and (r.pad, r.layer, r.zone) not in before]
    if not starved:
        return []
    stubs: list[Track] = []
    for r in starved:
        pad, zone = board.pads[r.pad], board.zones[r.zone]
        # a piece joined to more than the pad, or to one track or via of the net and not the pad: the stub makes
        # that one an outline of two items, whose spokes KiCad then counts (a GND via's own piece beside a pin)
        targets = [(p, n) for p, n in zip(pieces, items) if p.zone == r.zone and p.layer == r.layer
                   and (n > 1 or (n == 1 and not p.pads))]
        width = max(relief_width(pad, zone), rules.min_track_width)
        gap = relief_gap(pad, zone)
        # a stub along a spoke that already counts would add nothing but the count
        taken = [math.atan2(end.y - pad.y, end.x - pad.x) for piece, n in targets if n > 1
                 for i, _, end in piece.spokes if i == r.pad]
        found = []
        for k in range(DIRECTIONS):
            angle = math.radians(360 * k / DIRECTIONS)
            if any(abs(math.remainder(angle - t, 2 * math.pi)) < SAME_WAY for t in taken):
                continue
            stub = stub_into(pad, r.layer, angle, width, gap, targets, zone)
            if (stub is not None and legal(board, rules, copper, stub, margin, vias)
                    and clear_of(stub, stubs, rules, margin)):
                found.append(stub)
        # else straight to a via of the net standing in such a piece nearby
        near = sorted((pad.outline.distance(Point(v.x, v.y)), v.x, v.y) for v in list(board.vias) + list(vias)
                      if v.net == pad.net and r.layer in v.layers)
        widths = sorted({rules.for_net(pad.net).track_width, rules.min_track_width or width}, reverse=True)
        for d, x, y in near:
            if len(found) >= r.needed - r.spokes or d > RELIEF_REACH:
                break
            if not any(piece.shape.contains(Point(x, y)) for piece, _ in targets):
                continue
            for w in widths:                    # a track as the net's class has it, else as thin as the board allows
                stub = Track((pad.x, pad.y), (x, y), w, r.layer, pad.net)
                if legal(board, rules, copper, stub, margin, vias) and clear_of(stub, stubs + found, rules, margin):
                    found.append(stub)
                    break
        stubs += found[:r.needed - r.spokes]
    return stubs


def clear_of(stub: Track, others: list[Track], rules, margin: float) -> bool:
    """The stub keeps its clearance from the other nets' stubs already placed."""
    body = stub.body()
    return all(o.net == stub.net or o.layer != stub.layer
               or body.distance(o.body()) >= max(rules.clearance_of(stub.net), rules.clearance_of(o.net)) + margin
               for o in others)


def stub_into(pad, layer: str, angle: float, width: float, gap: float, targets, zone) -> Track | None:
    """The shortest stub from the pad's centre along the angle whose end (with its half width) lies in a target
    piece: past the pad's edge, across the gap, and at most a few widths into the fill."""
    dx, dy = math.cos(angle), math.sin(angle)
    far = 2 * math.hypot(*np.subtract(pad.outline.bounds[2:], pad.outline.bounds[:2])) + 1.0
    ray = LineString([(pad.x, pad.y), (pad.x + dx * far, pad.y + dy * far)])
    exit_ = ray.intersection(pad.outline).length
    step = max(width, zone.min_thickness) / 2
    for k in range(1, 6):
        reach = exit_ + gap + MARGIN + width / 2 + step * k
        end = (round(pad.x + dx * reach, 4), round(pad.y + dy * reach, 4))
        tip = Point(end).buffer(width / 2 + MARGIN)
        if any(piece.shape.contains(tip) for piece, _ in targets):
            return Track((pad.x, pad.y), end, width, layer, pad.net)
    return None


HOLE_REACH = 5.0         # mm: no hole is wider; a pad's centre farther than this from a box holds none inside it


def other_holes(board: Board, net: int, vias, box: tuple[float, float, float, float]) -> list:
    """The holes of other nets' vias (the board's and `vias`) and plated pads whose centres lie in the box (x0, y0,
    x1, y1), or near it for a pad. Copper keeps the hole clearance from them, which the clearance from their rings
    does not promise where a ring is thin (Copper holds the rings only)."""
    x0, y0, x1, y1 = box
    holes = [Point(v.x, v.y).buffer(v.drill / 2) for v in list(board.vias) + list(vias)
             if v.net != net and x0 <= v.x <= x1 and y0 <= v.y <= y1]
    return holes + [p.hole for p in board.pads if p.hole is not None and p.layers and p.net != net
                    and x0 - HOLE_REACH <= p.x <= x1 + HOLE_REACH and y0 - HOLE_REACH <= p.y <= y1 + HOLE_REACH]


def clear_of_holes(board: Board, rules, item, vias, margin: float) -> bool:
    """The track's or via's copper keeps the hole clearance from other nets' holes (other_holes)."""
    body = item.body()
    need = rules.hole_clearance + margin
    x0, y0, x1, y1 = body.bounds
    reach = need + HOLE_REACH
    holes = other_holes(board, item.net, vias, (x0 - reach, y0 - reach, x1 + reach, y1 + reach))
    return all(body.distance(h) >= need for h in holes)


def owed(rules, copper: Copper, hits: np.ndarray, net: int, margin: float) -> list[tuple[int, float]]:
    """(item, distance) for each of the copper items `hits` that new copper of the net must keep clear of (other
    nets' copper, and every unplated hole), with the distance it must keep: the larger clearance of the two, or the
    hole clearance, plus margin."""
    own = rules.clearance_of(net) + margin
    out = []
    for h in hits.tolist():
        kind = copper.kinds[h][0]
        if copper.nets[h] == net and net and kind != "hole":
            continue
        out.append((h, max(own, copper.clearances[h] + margin) if kind != "hole" else max(rules.hole_clearance, own)))
    return out


def legal(board: Board, rules, copper: Copper, stub: Track, margin: float, vias=()) -> bool:
    """The stub keeps its clearance from every other net's copper and every hole (the holes of the board's vias and
    `vias`, the new ones, included), the board edge, the rule areas that forbid tracks, and other nets' solder-mask
    openings."""
    body = stub.body()
    li = board.copper_layers.index(stub.layer)
    own = rules.clearance_of(stub.net) + margin
    hits = copper.near(body, li, own + float(copper.clearances.max(initial=0.0)))
    if any(body.distance(copper.geoms[h]) < need for h, need in owed(rules, copper, hits, stub.net, margin)):
        return False
    if not clear_of_holes(board, rules, stub, vias, margin):
        return False
    if not board.outline.contains(body) or body.distance(board.outline.boundary) < rules.edge_clearance + margin:
        return False
    if any(k.no_tracks and stub.layer in k.layers and body.intersects(k.outline) for k in board.keepouts):
        return False
    return not any(o.layer == stub.layer and o.net != stub.net and body.intersects(o.outline)
                   for o in board.mask_openings)


STITCH_STEP = 0.05       # mm between the via sites tried inside an island


def stitch_islands(board: Board, rules, pieces: list[Piece], tracks=(), vias=(), margin: float = 0.0,
                   before: set = frozenset()) -> list[Via]:
    """Stitching vias for the reliefs the new copper left starved (KiCad's verdict) with spokes into an island, a
    piece of the fill whose outline joins nothing but the pad: one via of the net (its class's size, else the
    smallest the board allows) inside each such island that also joins the net elsewhere, at an end of one of the
    net's tracks or where the net's fill on another layer joins more than one item. The island then joins two items
    and KiCad counts its spokes. `before` as for feed_starved: the design's own are left alone."""
    copper = Copper(board, rules, tracks, vias, RELIEF_MARGIN)
    items = joined_items(board, pieces, own_copper_per_layer(board, tracks, vias), copper)
    outline = outline_items(board, pieces, items, copper)
    starved = [r for r in reliefs(board, rules, pieces, tracks, vias, items, copper, outline)
               if r.starved and r.island_spokes and (r.pad, r.layer, r.zone) not in before]
    placed: list[Via] = []
    for r in starved:
        pad = board.pads[r.pad]
        cls = rules.for_net(pad.net)
        sizes = list(dict.fromkeys([(cls.via_diameter, cls.via_drill)] + [rules.small_via] * bool(rules.small_via)))
        # the net's well-joined fill on the other layers: whole planes, so only what of them lies under an island
        # is joined (a union of them all took 1 s a relief on c6_teres_a64)
        planes = np.array([p.shape for p, n in zip(pieces, outline) if p.net == pad.net and p.layer != r.layer
                           and n > 1], dtype=object)
        on_tracks = np.concatenate([points_along(t) for t in list(board.tracks) + list(tracks) if t.net == pad.net]
                                   or [np.zeros((0, 2))])
        for island, n in zip(pieces, outline):
            if ((island.zone, island.layer) != (r.zone, r.layer) or n > 1
                    or r.pad not in [i for i, _, _ in island.spokes]):
                continue
            under = planes[shapely.intersects(planes, island.shape)]
            elsewhere = shapely.union_all(shapely.intersection(under, island.shape))
            sites = via_sites(island.shape, elsewhere, on_tracks, (pad.x, pad.y))
            for (x, y), (diameter, drill) in ((site, size) for size in sizes for site in sites):
                via = Via(round(float(x), 4), round(float(y), 4), diameter, drill, tuple(board.copper_layers), pad.net)
                if via_legal(board, rules, copper, via, list(vias) + placed, margin):
                    placed.append(via)
                    break
    return placed


def points_along(track: Track) -> np.ndarray:
    """The track's centre line every STITCH_STEP, its ends included: a via there joins it (KiCad connects a via
    whose centre lies on a track)."""
    n = max(1, int(math.ceil(math.dist(track.start, track.end) / STITCH_STEP)))
    return np.linspace(track.start, track.end, n + 1)


def via_sites(island, elsewhere, on_tracks: np.ndarray, centre) -> np.ndarray:
    """Where a via in the island also joins the net: on the net's tracks inside it, then every STITCH_STEP where
    the island overlies the net's well-joined fill on another layer; each nearest the pad first."""
    inside = on_tracks[shapely.contains_xy(island, on_tracks[:, 0], on_tracks[:, 1])]
    inside = inside[np.argsort(np.hypot(*(inside - centre).T), kind="stable")]
    both = island.intersection(elsewhere) if not elsewhere.is_empty else elsewhere
    grid = np.zeros((0, 2))
    if not both.is_empty:
        x0, y0, x1, y1 = both.bounds
        xs, ys = np.meshgrid(np.arange(x0, x1 + STITCH_STEP, STITCH_STEP), np.arange(y0, y1 + STITCH_STEP, STITCH_STEP))
        grid = np.stack([xs.ravel(), ys.ravel()], 1)
        grid = grid[shapely.contains_xy(both, grid[:, 0], grid[:, 1])]
    grid = grid[np.argsort(np.hypot(*(grid - centre).T), kind="stable")]
    return np.concatenate([inside, grid])


def via_legal(board: Board, rules, copper: Copper, via: Via, others: list[Via], margin: float,
              on_own_pads: bool = False) -> bool:
    """The via keeps its clearance from every other net's copper on every layer and its hole the hole clearance,
    the hole-to-hole distance from every other hole, clear of pads (its own net's too, unless on_own_pads), the
    board edge, the rule areas that forbid vias and other nets' solder-mask openings."""
    body, centre = via.body(), Point(via.x, via.y)
    own = rules.clearance_of(via.net) + margin
    reach = own + float(copper.clearances.max(initial=0.0)) + rules.hole_clearance
    for li in range(len(board.copper_layers)):
        for h in copper.near(body, li, reach).tolist():
            kind, geom, net = copper.kinds[h][0], copper.geoms[h], copper.nets[h]
            if kind == "hole":
                need = max(rules.hole_clearance, own)
            elif net == via.net and (kind != "pad" or on_own_pads):    # its own net's copper: the via may join it
                continue
            else:                                       # and keeps off its own net's pads, as off any other
                need = max(own, copper.clearances[h] + margin)
                if net != via.net and centre.distance(geom) - via.drill / 2 < rules.hole_clearance + margin:
                    return False
            if body.distance(geom) < need:
                return False
    gap = rules.hole_to_hole + margin
    if any(p.hole is not None and centre.distance(p.hole) - via.drill / 2 < gap for p in board.pads):
        return False
    if not clear_of_holes(board, rules, via, others, margin):
        return False
    if any(math.hypot(v.x - via.x, v.y - via.y) - (v.drill + via.drill) / 2 < gap
           or (v.net != via.net and body.distance(v.body()) < own) for v in list(board.vias) + others):
        return False
    if not board.outline.contains(body) or body.distance(board.outline.boundary) < rules.edge_clearance + margin:
        return False
    if any(k.no_vias and body.intersects(k.outline) for k in board.keepouts):
        return False
    # inside another net's pad's mask opening its copper would lie bare beside the pad, tented or not
    if any(o.net != via.net and body.intersects(o.outline) for o in board.mask_openings):
        return False
    return not board.bare_vias or bare_opening_clear(board, rules, copper, via, others, margin)


def bare_opening_clear(board: Board, rules, copper: Copper, via: Via, others: list[Via], margin: float) -> bool:
    """Where vias are not tented, the via's own mask opening bares no other net's copper and keeps the board's
    minimum web from other nets' openings, vias' included (check.drc's bare_via_violations)."""
    opening = via.body().buffer(rules.bare_via_reach)
    web = rules.mask_web + margin
    for layer in board.bare_vias:
        li = board.copper_layers.index(layer)
        if any(copper.nets[h] != via.net and opening.intersects(copper.geoms[h])
               for h in copper.near(opening, li, margin).tolist()):
            return False
        if any(o.layer == layer and o.net != via.net and opening.distance(o.outline) < web
               for o in board.mask_openings):
            return False
        if any(v.net != via.net and layer in v.layers
               and opening.distance(v.body().buffer(rules.bare_via_reach)) < web for v in list(board.vias) + others):
            return False
    return True
