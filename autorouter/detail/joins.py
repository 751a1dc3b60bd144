"""Detail joins: a join the lattice could not make, searched in exact geometry on a fine grid around it.

The lattice's lines fall where they fall. Between a fine-pitch pin and the pads beside it a track may fit in a band
narrower than the pitch, which no line crosses (c4_dxwifi_ar9271's U1.67, a QFN pin 0.4 mm from its neighbours,
walled in under a test pad it joins 1.4 mm away: the human's track leaves the pin and turns 45 degrees between the
pads). Once the lattice has done what it can, a net whose copper is still apart is searched here: from its smallest
group to the rest, on a grid of about MIN_STEP over a window around the nearest points of the two (a wider one where
that finds nothing), open where the track's centre keeps its clearance from every other net's copper (FineGrid), with
vias where one fits. The path becomes tracks at 0, 45 and 90 degrees, and each track and via is checked exactly
(zones.thermals.legal, via_legal) before it is offered; the caller keeps it only where the board then misses fewer
joins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import shapely

from ..board.connectivity import CopperGroup, net_copper
from ..board.geometry import grow
from ..board.model import Board, Track, Via
from ..zones.fill import Copper
from ..zones.thermals import legal, other_holes, owed, via_legal
from .grid import FineGrid, cheapest_path, runs

# mm: groups farther apart are the lattice's to join (a fine grid that large is slow). Pins the lattice left walled in
# at a fine-pitch part lie farther than 20 mm from their nets as often as nearer (k8_tinytapeout_demo: all five of
# an attempt's, 21-27 mm; c4_dxwifi_ar9271's U1.14, 23 mm)
REACH = 30.0
FINEST_REACH = 20.0     # mm: the longest join searched at MIN_STEP (longer ones on a coarser grid: MAX_POINTS)
# mm around the two nearest points, plus a quarter of their distance: room to go round. The wider window is searched
# where the narrower finds no way: c4_buspirate6's SPI_CLK (a pad of an FPC connector walled in by GND and +3V3) is
# joined through BUFIO7 and SPI_CDO, which find their way back only in the wider one
WINDOW_MARGINS = (1.0, 5.0)
MIN_STEP = 0.025        # mm between grid points
# grid points along a window's longer side: MIN_STEP up to FINEST_REACH in the narrower window. A coarser step does
# not pass where a walled-in pin's way out does (c4_buspirate6's U2.18, 14.8 mm from its net: between its neighbours'
# vias, 0.5 mm apart)
MAX_POINTS = int((FINEST_REACH + 2 * (WINDOW_MARGINS[0] + FINEST_REACH / 4)) / MIN_STEP)
VIA_COST = 1.0          # mm of track a via costs
CROSS_COST = 4.0        # steps a grid point in another net's new copper costs (detail.through): a way that crosses
                        # few of its items, which must then move
VIA_RETRIES = 4         # searches again with a via site the exact check refused taken out
STUB_REACH = 1.0        # mm past a shut pad's edge that a stub may run to the grid's open points (pin_stubs)
STUB_TRIES = 4          # open points tried along each of its directions


@dataclass
class Apart:
    """A join to search: the grid around the nearest points of a net's smallest group of copper and the rest of it,
    where each lies on it ((layers, rows, cols) booleans), the (row, col) of the rest's nearest point, and the pads
    of each (indices in board.pads)."""
    net: int
    grid: FineGrid
    sources: np.ndarray
    targets: np.ndarray
    aim: tuple[float, float]
    pads: tuple[list[int], list[int]]


def aparts(board: Board, net: int, tracks, vias, pieces) -> Iterator[Apart]:
    """The net's smallest group of copper (the fewest pads) and the rest, where they lie within REACH: on a grid over
    each of WINDOW_MARGINS in turn (the next made only where the caller asks for it)."""
    groups = sorted((g for g in net_copper(board, net, tracks, vias, pieces) if g.pads),
                    key=lambda g: (len(g.pads), g.pads[0]))
    if len(groups) < 2:
        return
    source, rest = groups[0], CopperGroup([], [s for g in groups[1:] for s in g.shapes])
    near = nearest_line([s for s, _ in source.shapes], [s for s, _ in rest.shapes])
    if near is None or near.length > REACH:
        return
    (ax, ay), (bx, by) = shapely.get_coordinates(near).tolist()
    x0, y0, x1, y1 = board.outline.bounds
    layers = board.copper_layers
    for margin in WINDOW_MARGINS:
        m = margin + near.length / 4
        box = (max(min(ax, bx) - m, x0), max(min(ay, by) - m, y0), min(max(ax, bx) + m, x1),
               min(max(ay, by) + m, y1))
        grid = FineGrid.over(box, max(MIN_STEP, max(box[2] - box[0], box[3] - box[1]) / MAX_POINTS))
        yield Apart(net, grid, np.stack([grid.covered(source.on(l)) for l in layers]),
                    np.stack([grid.covered(rest.on(l)) for l in layers]),
                    ((by - grid.y0) / grid.step, (bx - grid.x0) / grid.step),
                    (source.pads, [p for g in groups[1:] for p in g.pads]))


def nearest_line(a: list, b: list):
    """The shortest line from the shapes a to the shapes b (None where either is empty), as shapely.shortest_line of
    their unions gives it, found between the nearest pair (a tree of b's): a ground's union of fills and tracks was
    built for every window (k8_tinytapeout_demo's detail stage: aparts 28 -> 7 s of 195)."""
    if not a or not b:
        return None
    (i, j), d = shapely.STRtree(b).query_nearest(a, return_distance=True, all_matches=False)
    k = int(np.argmin(d))
    return shapely.shortest_line(a[i[k]], b[j[k]])


def detail_join(board: Board, rules, net: int, tracks, vias, pieces, margin: float,
                copper: Copper | None = None, should_stop=lambda: "") -> tuple[list, list] | None:
    """Tracks and vias that join the net's smallest group of copper (the fewest pads) to the rest, legal with
    tracks, vias (the new ones) and the fills predicted with them (pieces), searched in each window of aparts in
    turn; None where no way is found (or should_stop() said so first). copper: Copper(board, rules, tracks, vias),
    where the caller keeps one for several joins."""
    for a in aparts(board, net, tracks, vias, pieces):
        copper = copper or Copper(board, rules, tracks, vias)
        found = search(board, rules, copper, a, margin, list(vias), should_stop)
        if found is not None or should_stop():
            return found
    return None


def search(board: Board, rules, copper: Copper, a: Apart, margin: float, vias: list[Via], should_stop,
           walls: tuple[Copper, list[Via]] | None = None):
    """The tracks and vias of the cheapest way across the grid, legal with copper; None where there is none. The
    net's class sizes are tried first, then the smallest the board allows. walls: the copper and new vias of every
    net, where copper and vias leave some out (detail.through): the way may pass where only those are, at CROSS_COST
    a point."""
    layers = board.copper_layers
    found_sizes = sizes(rules, a.net)
    size = max(max(w, d) for w, (d, _) in found_sizes)
    near = surroundings(board, rules, copper, a, margin, vias, size)
    walled = walls and surroundings(board, rules, walls[0], a, margin, walls[1], size)
    for width, (diameter, drill) in found_sizes:
        edge = within_board(board, rules, a.grid, a.grid.area(), width / 2 + margin)    # the same on every layer
        open_ = np.stack([track_open(board, rules, a.grid, a.net, li, width, margin, near)
                          for li in range(len(layers))]) & edge
        via_open = (via_sites(board, rules, a.grid, a.net, diameter, drill, margin, vias, near) & open_.all(0))
        starts, ends = (pin_stubs(board, rules, copper, a.grid, open_, pads, a.net, width, margin, vias)
                        for pads in a.pads)
        sources, targets = a.sources | points(starts, open_.shape), a.targets | points(ends, open_.shape)
        price = None
        if walled:
            shut = ~np.stack([track_open(board, rules, a.grid, a.net, li, width, margin, walled)
                              for li in range(len(layers))])          # within the edge: open_ says so already
            via_shut = ~via_sites(board, rules, a.grid, a.net, diameter, drill, margin, walls[1], walled)
            price = (CROSS_COST * (open_ & shut), CROSS_COST * len(layers) * (via_open & via_shut))
        for _ in range(VIA_RETRIES + 1):
            path = cheapest_path(open_, via_open, sources, targets, VIA_COST / a.grid.step, a.aim,
                                 should_stop, price)
            if path is None:
                break
            found_tracks, found_vias, sites = tracks_and_vias(a.grid, path, layers, a.net, width, diameter, drill)
            found_tracks += [stubs[end] for stubs, end, own in ((starts, path[0], a.sources),
                                                                  (ends, path[-1], a.targets))
                             if end in stubs and not own[end]]
            refused = [site for site, v in zip(sites, found_vias)
                       if not via_legal(board, rules, copper, v, vias + [o for o in found_vias if o is not v], margin,
                                        on_own_pads=True)]
            if refused:
                for r, c in refused:
                    via_open[r, c] = False
                continue
            if all(legal(board, rules, copper, t, margin, vias) for t in found_tracks):
                return found_tracks, found_vias
            break
    return None


def pin_stubs(board: Board, rules, copper: Copper, grid: FineGrid, open_: np.ndarray, pads: list[int], net: int,
              width: float, margin: float, vias: list[Via]) -> dict[tuple[int, int, int], Track]:
    """Straight tracks of the net, this wide, from the centre of each of `pads` whose points on the grid are all shut
    to an open point (layer, row, col) within STUB_REACH of its edge, checked exactly (zones.thermals.legal), in each
    of the eight directions of the pad's axes. The grid keeps SLACK of a step more than each clearance, and the band
    a track may leave a 0.4 mm QFN's pin in is narrower than that (k8_tinytapeout_demo's U6.36: 0.02 mm either side
    of the pin's axis for 0.16 mm tracks at 0.2 mm clearance, against a slack of 0.022 mm), so that such a pin has
    no open point of its own: the stub leads it out to where the grid's way begins."""
    layers = board.copper_layers
    stubs: dict[tuple[int, int, int], Track] = {}
    for i in pads:
        p = board.pads[i]
        x0, y0, x1, y1 = p.outline.bounds
        r0, c0 = (int(np.floor((v - o) / grid.step)) for v, o in ((y0, grid.y0), (x0, grid.x0)))
        r1, c1 = (int(np.ceil((v - o) / grid.step)) + 1 for v, o in ((y1, grid.y0), (x1, grid.x0)))
        if r1 <= 0 or c1 <= 0 or r0 >= grid.rows or c0 >= grid.cols:
            continue
        rows, cols = slice(max(r0, 0), r1), slice(max(c0, 0), c1)
        along = np.arange(grid.step, np.hypot(x1 - x0, y1 - y0) / 2 + STUB_REACH, grid.step)
        for layer in p.layers:
            li = layers.index(layer)
            if open_[li, rows, cols].any():
                continue
            for k in range(8):
                turn = np.radians(p.angle) + k * np.pi / 4
                r = np.rint((p.y - np.sin(turn) * along - grid.y0) / grid.step).astype(int)
                c = np.rint((p.x + np.cos(turn) * along - grid.x0) / grid.step).astype(int)
                inside = (r >= 0) & (r < grid.rows) & (c >= 0) & (c < grid.cols)
                r, c = r[inside], c[inside]
                at = np.flatnonzero(open_[li, r, c])
                for j in list(dict.fromkeys(zip(r[at].tolist(), c[at].tolist())))[:STUB_TRIES]:
                    stub = Track((p.x, p.y), grid.point(*j), width, layer, net)
                    if legal(board, rules, copper, stub, margin, vias):
                        stubs.setdefault((li, *j), stub)
                        break
    return stubs


def points(stubs: dict[tuple[int, int, int], Track], shape: tuple[int, int, int]) -> np.ndarray:
    """The stubs' grid points as (layers, rows, cols) booleans."""
    out = np.zeros(shape, bool)
    if stubs:
        out[tuple(np.array(list(stubs)).T)] = True
    return out


def sizes(rules, net: int) -> list[tuple[float, tuple[float, float]]]:
    """(track width, (via diameter, drill)): the net's class's, then the smallest the board allows."""
    cls = rules.for_net(net)
    out = [(cls.track_width, (cls.via_diameter, cls.via_drill))]
    small = (min(cls.track_width, rules.min_track_width or cls.track_width, rules.small_track or cls.track_width),
             rules.small_via or (cls.via_diameter, cls.via_drill))
    return out + [small] * (small != out[0])


@dataclass
class Surroundings:
    """What the window holds that a net's new copper keeps clear of, gathered once for every size searched: per layer
    the other nets' copper and unplated holes with the distance each is owed (zones.thermals.owed), and other nets'
    via and pad holes (zones.thermals.other_holes)."""
    owed: list[tuple[list, list[float]]]
    holes: list


def surroundings(board: Board, rules, copper: Copper, a: Apart, margin: float, vias: list[Via],
                 size: float) -> Surroundings:
    """The window's Surroundings, for copper up to `size` wide (a track's width or a via's diameter)."""
    area = a.grid.area()
    reach = rules.clearance_of(a.net) + margin + float(copper.clearances.max(initial=0.0)) + rules.hole_clearance + size
    owed_by_layer = []
    for li in range(len(board.copper_layers)):
        pairs = owed(rules, copper, copper.near(area, li, reach), a.net, margin)
        owed_by_layer.append(([copper.geoms[h] for h, _ in pairs], [need for _, need in pairs]))
    return Surroundings(owed_by_layer, other_holes(board, a.net, vias, area.buffer(WINDOW_MARGINS[0]).bounds))


def track_open(board: Board, rules, grid: FineGrid, net: int, li: int, width: float, margin: float,
               near: Surroundings) -> np.ndarray:
    """Where the centre line of a track of the net, this wide, may pass on layer li (rows x cols booleans), as far as
    the copper, holes, mask openings and rule areas near it say: the board's edge is within_board's."""
    layer = board.copper_layers[li]
    area = grid.area()
    shapes, need = near.owed[li]
    shapes = shapes + near.holes
    reaches = [n + width / 2 for n in need] + [rules.hole_clearance + margin + width / 2] * len(near.holes)
    reach = area.buffer(width)
    for o in board.mask_openings:           # another net's pad's mask opening: no copper of ours under it
        if o.layer == layer and o.net != net and o.outline.intersects(reach):
            shapes.append(o.outline)
            reaches.append(width / 2)
    for k in board.keepouts:
        if k.no_tracks and layer in k.layers and k.outline.intersects(reach):
            shapes.append(k.outline)
            reaches.append(width / 2)
    return grid.outside(shapes, reaches)


def within_board(board: Board, rules, grid: FineGrid, area, half: float) -> np.ndarray:
    """Where copper reaching `half` from a point keeps the edge clearance inside the board outline."""
    inset = rules.edge_clearance + half + grid.step * 0.75
    return grid.inside(grow(board.outline.intersection(area.buffer(inset + 1.0)), -inset))


def via_sites(board: Board, rules, grid: FineGrid, net: int, diameter: float, drill: float, margin: float,
              vias: list[Via], near: Surroundings) -> np.ndarray:
    """Where a via of the net may stand, as near as a raster tells (via_legal has the last word): clear of other
    nets' copper on every layer, of holes by the hole-to-hole distance, of the rule areas that forbid vias and of
    other nets' mask openings. On its own net's pads too, as the lattice's vias may stand (KiCad allows it): a pad
    fenced in on its layer drops to its plane so (the last three GND joins of a c4_icepi_zero routing, three of
    c4_pico_ice's)."""
    area = grid.area()
    shapes, reaches = [], []
    for found, need in near.owed:
        shapes += found
        reaches += [n + diameter / 2 for n in need]
    shapes += near.holes
    reaches += [rules.hole_clearance + margin + diameter / 2] * len(near.holes)
    gap = rules.hole_to_hole + margin
    for p in board.pads:
        if p.hole is not None and p.hole.distance(area) < gap + drill:
            shapes.append(p.hole)
            reaches.append(gap + drill / 2)
    for v in list(board.vias) + vias:
        if shapely.Point(v.x, v.y).distance(area) < gap + drill + v.drill:
            shapes.append(shapely.Point(v.x, v.y))
            reaches.append(gap + (drill + v.drill) / 2)
    shapes += [o.outline for o in board.mask_openings if o.net != net and o.outline.intersects(area)]
    shapes += [k.outline for k in board.keepouts if k.no_vias and k.outline.intersects(area)]
    reaches += [diameter / 2] * (len(shapes) - len(reaches))
    return grid.outside(shapes, reaches) & within_board(board, rules, grid, area, diameter / 2 + margin)


def tracks_and_vias(grid: FineGrid, path, layers: list[str], net: int, width: float, diameter: float, drill: float):
    """The path as tracks (its collinear steps merged) and vias, and the grid (row, col) of each via."""
    found_runs, sites = runs(path)
    tracks = [Track(grid.point(*a), grid.point(*b), width, layers[l], net)
              for l, corners in found_runs for a, b in zip(corners, corners[1:])]
    vias = [Via(*grid.point(r, c), diameter, drill, tuple(layers), net) for r, c in sites]
    return tracks, vias, sites
