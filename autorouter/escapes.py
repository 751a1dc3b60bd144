"""Escapes: the pins of a fine-pitch row led straight out, side by side, before anything is routed.

A human routing a 0.4 mm QFN runs each pin's track straight away from the part for a millimetre or two, every pin of
a side at once, and only then turns or drops a via. The router searches one connection at a time on its lattice: the
first nets to leave put their vias and jogs just off their pads' ends, and the pins between them are walled in
(benchmarks/CORPUS.md: most joins missing on the near misses are such pins). Each escape is a track of the pin's net
from the pad's centre straight out past its outer end, as narrow as the row needs; the router sees it as copper
already there, which other nets keep clear of, with a pad of the pin at its outer end that routes may join instead
of the pin's own (`escaped`). What no route reaches of an escape is cut off afterwards (`trimmed`), so that no end is
left dangling.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

import numpy as np
import shapely
from shapely import STRtree
from shapely.geometry import LineString, Point

from .board.geometry import centre_line, circle
from .board.model import Board, Pad, Track
from .board.rules import DesignRules
from .lattice.align import TOLERANCE, pad_rows, surface_parts

MAX_PITCH = 0.5         # mm: rows no coarser than this get escapes (0.5 mm QFNs and finer)
SLACK = 1e-4            # mm: below KiCad's resolution of interest (the checker's own tolerance)
MARGIN = 0.002          # mm: added to each clearance an escape keeps
SHORTER = (1.0, 0.6, 0.3)   # of the length asked, the lengths tried where the full one is not legal


def escaped(board: Board, rules: DesignRules, length: float) -> tuple[Board, list[Track]]:
    """The board as routing sees it, with its escapes: each a track of its own and a pad at its outer end (the pin's
    end that routing joins; the track joins it to the real pad, so both are one pin), and the escapes."""
    pairs = escape_tracks(board, rules, length)
    if not pairs:
        return board, []
    ends = [Pad(pad.footprint, pad.number, pad.net, t.end[0], t.end[1], 0.0, "circle", pad.layers,
                circle(t.end[0], t.end[1], t.width / 2)) for pad, t in pairs]
    tracks = [t for _, t in pairs]
    return replace(board, pads=list(board.pads) + ends, tracks=list(board.tracks) + tracks), tracks


def escape_tracks(board: Board, rules: DesignRules, length: float) -> list[tuple[Pad, Track]]:
    """An escape for every pin of a fine-pitch row whose net has other pads to reach and no zone (teardrops aside)
    on the pin's layer: `length` mm past the pad's outer end where that is legal, shorter where only that is, none
    where neither is."""
    kept: list[tuple[Pad, Track]] = []
    pending = candidates(board, rules, length)
    index = {id(p): k for k, p in enumerate(board.pads)}
    for share in SHORTER:
        if not pending:
            break
        trial = [scaled(t, share, pad_end) for _, t, pad_end in pending]
        ok = legal(board, rules, [t for _, t in kept], trial, [index[id(p[0])] for p in pending])
        kept += [(p[0], t) for p, t, good in zip(pending, trial, ok) if good]
        pending = [p for p, good in zip(pending, ok) if not good]
    return kept


def candidates(board: Board, rules: DesignRules, length: float) -> list[tuple[Pad, Track, float]]:
    """(pad, track at full length, the pad's outer end's distance from its centre) for each pin of each row."""
    pads_of = board.pads_by_net()
    zoned = {(z.net, layer) for z in board.zones if not z.teardrop for layer in z.layers}
    out = []
    for part in surface_parts(board.pads):
        cx = float(np.mean([p.x for p in part]))
        cy = float(np.mean([p.y for p in part]))
        for row, along, pitch in rows(part):
            for k, pad in enumerate(row):
                if not pad.net or len(pads_of.get(pad.net, ())) < 2 or (pad.net, pad.layers[0]) in zoned:
                    continue
                d = pad.y - cy if along == 0 else pad.x - cx
                if abs(d) < TOLERANCE:
                    continue
                sign = 1.0 if d > 0 else -1.0
                b = pad.outline.bounds
                half = (b[3] - b[1]) / 2 if along == 0 else (b[2] - b[0]) / 2
                across = (b[2] - b[0]) if along == 0 else (b[3] - b[1])
                width = escape_width(rules, pad, row, k, pitch, across)
                if width is None:
                    continue
                reach = half + length
                end = (pad.x, pad.y + sign * reach) if along == 0 else (pad.x + sign * reach, pad.y)
                out.append((pad, Track((pad.x, pad.y), end, width, pad.layers[0], pad.net), half))
    return out


def escape_width(rules: DesignRules, pad: Pad, row: list[Pad], k: int, pitch: float, across: float) -> float | None:
    """As wide as the net's class asks, but narrow enough to pass the pads beside it and their own escapes; None
    where that is below the board's minimum."""
    beside = [n for n in row[max(k - 1, 0):k + 2] if n is not pad]
    own = rules.class_clearance(pad.net)
    to_track = max(rules.clearance_between(own, rules.class_clearance(n.net)) for n in beside) + MARGIN
    to_pad = max(rules.clearance_between(own, rules.class_clearance(n.net), None, n.clearance) for n in beside) + MARGIN
    room = min(pitch - to_track, 2 * (pitch - across / 2 - to_pad))
    width = min(rules.for_net(pad.net).track_width, room)
    floor = max(rules.min_track_width, 0.05)
    return round(width, 4) if width >= floor else None


def rows(part: list[Pad]):
    """(pads in order, along: 0 for a row along x, pitch) for each row of pads (align.pad_rows) at one spacing no
    coarser than MAX_PITCH, whose pads are longer across the row than along it (pins, not a row of passives)."""
    for along in (0, 1):
        for row in pad_rows(part, along):
            at = np.array([(p.x, p.y)[along] for p in row])
            steps = np.diff(at)
            pitch = float(steps.min())
            if not 0 < pitch <= MAX_PITCH or np.abs(steps / pitch - np.round(steps / pitch)).max() * pitch > TOLERANCE:
                continue
            b = np.array([p.outline.bounds for p in row])
            long_across = np.median((b[:, 3] - b[:, 1]) if along == 0 else (b[:, 2] - b[:, 0]))
            long_along = np.median((b[:, 2] - b[:, 0]) if along == 0 else (b[:, 3] - b[:, 1]))
            if long_across > long_along:
                yield row, along, pitch


def scaled(track: Track, share: float, pad_end: float) -> Track:
    """The escape cut to `share` of its length past the pad's end."""
    (x0, y0), (x1, y1) = track.start, track.end
    full = math.hypot(x1 - x0, y1 - y0)
    reach = pad_end + share * (full - pad_end)
    f = reach / full
    return Track(track.start, (round(x0 + f * (x1 - x0), 6), round(y0 + f * (y1 - y0), 6)), track.width, track.layer,
                 track.net)


def legal(board: Board, rules: DesignRules, kept: list[Track], trial: list[Track], pads: list[int]) -> list[bool]:
    """Whether each trial escape (leaving board.pads[pads[i]]) keeps its clearances from the board's copper
    (pads, tracks, vias, drawings, holes), from the escapes kept and from the other trials, from the board's edge,
    from keepouts and from other nets' solder-mask openings. Copper of its own net counts too, its pad aside: an
    escape that met another pad of its net would join the two for routing, which then need not reach it, and the
    escape would be cut off with the join. Nor may a zone of its net reach its end: the fills routing predicts would
    then hold the pad there, which the board written has not."""
    ok = np.ones(len(trial), dtype=bool)
    # measured as KiCad does, from centre lines and centres less their half widths (a body's polygon is drawn
    # outside its true curve)
    lines = [centre_line(t) for t in trial]
    n_pads = len(board.pads)
    others = ([(p.outline, set(p.layers), p.net, p.clearance, 0.0) for p in board.pads]
              + [(centre_line(t), {t.layer}, t.net, None, t.width / 2) for t in trial + list(board.tracks) + kept]
              + [(Point(v.x, v.y), set(v.layers), v.net, None, v.diameter / 2) for v in board.vias]
              + [(g.outline, {g.layer}, g.net, None, 0.0) for g in board.graphics])
    reach = rules.max_clearance + 1.0
    a, b = STRtree([o[0] for o in others]).query(lines, predicate="dwithin", distance=reach)
    for i, j in zip(a.tolist(), b.tolist()):
        geom, layers, net, own, half = others[j]
        t = trial[i]
        if not ok[i] or j == pads[i] or j == n_pads + i or t.layer not in layers:
            continue
        need = rules.clearance_between(rules.class_clearance(t.net), rules.class_clearance(net), None, own)
        if shapely.distance(lines[i], geom) - half - t.width / 2 < need - SLACK:
            ok[i] = False
    bodies = [t.body() for t in trial]
    holes = [p.hole for p in board.pads if p.hole is not None] + [circle(v.x, v.y, v.drill / 2) for v in board.vias]
    if holes:
        a, _ = STRtree(holes).query(bodies, predicate="dwithin", distance=rules.hole_clearance + MARGIN)
        ok[a] = False
    edge = board.outline.boundary
    zones_of = defaultdict(list)            # a zone of the escape's own net (a teardrop) must not take in its end's pad
    for z in board.zones:
        zones_of[z.net].append(z)
    for i, (t, body) in enumerate(zip(trial, bodies)):
        if not ok[i] or any(t.layer in z.layers and z.outline.intersects(circle(*t.end, t.width / 2 + MARGIN))
                            for z in zones_of.get(t.net, ())):
            ok[i] = False
            continue
        if not board.outline.contains(body) or shapely.distance(edge, body) < rules.edge_clearance + MARGIN:
            ok[i] = False
            continue
        for k in board.keepouts:
            if k.no_tracks and t.layer in k.layers and k.outline.intersects(body):
                ok[i] = False
                break
        else:
            for o in board.mask_openings:
                if o.layer == t.layer and (not o.net or o.net != t.net) and o.outline.intersects(body):
                    ok[i] = False
                    break
    return ok.tolist()


def trimmed(escapes: list[Track], tracks, vias) -> list[Track]:
    """Of each escape, the part from its pad to the farthest point where the net's new copper joins it, so that both
    its ends are joined; none where nothing joins it. An end of a new track inside the escape but off its axis is
    joined to the axis by a short track across it (else cutting the escape there would leave that end bare)."""
    out = []
    for e in escapes:
        axis = LineString([e.start, e.end])
        body = e.body()
        far, across = 0.0, None
        for t in tracks:
            if t.net != e.net or t.layer != e.layer:
                continue
            line = centre_line(t)
            near = line.intersection(axis.buffer(t.width / 2 - SLACK))   # the axis's point there lies in t's copper
            if not near.is_empty:
                far = max([far] + [axis.project(Point(c)) for c in shapely.get_coordinates(near)])
            for end in (t.start, t.end):
                at = axis.project(Point(end))
                if at > far and body.contains(Point(end)) and axis.distance(Point(end)) > SLACK:
                    far, across = at, (end, min(t.width, e.width))
        for v in vias:
            if v.net == e.net and e.layer in v.layers and axis.distance(Point(v.x, v.y)) < v.diameter / 2 - SLACK:
                far = max(far, axis.project(Point(v.x, v.y)))
        if far <= SLACK:
            continue
        cut = axis.interpolate(far)
        end = (round(cut.x, 6), round(cut.y, 6))
        out.append(Track(e.start, end, e.width, e.layer, e.net))
        if across is not None and far == axis.project(Point(across[0])):
            out.append(Track(end, across[0], across[1], e.layer, e.net))
    return out
