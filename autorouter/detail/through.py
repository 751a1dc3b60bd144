"""A detail join through other nets' new copper, which then moves out of its way.

A pin can be walled in by its neighbours' escapes with no legal way out at all, even in exact geometry
(c4_icepi_zero's J2.1, GND, closed in on F.Cu by four other nets' tracks and vias). Its way is searched on the fine
grid again with the other nets' new tracks and vias a price (CROSS_COST a point), not a wall; the items in its way
are taken out, the nets they belonged to are joined again around it (detail_join), and the ends left dangling are
trimmed (a join that landed on one of them is made again). The caller keeps the result only where the board then
misses fewer joins.
"""
from __future__ import annotations

import numpy as np
import shapely
from shapely import STRtree

from ..board.connectivity import net_copper
from ..board.geometry import TOUCH
from ..board.model import Board, Track, Via
from ..zones.fill import Copper
from ..zones.thermals import legal, via_legal
from .joins import aparts, detail_join, search

REJOIN_ROUNDS = 3   # times a net that moved is joined again and trimmed
WAYS = 4            # ways tried, each with the nets that found no way back before as walls


def join_apart(board: Board, rules, net: int, tracks: list[Track], vias: list[Via], pieces, margin: float,
               should_stop=lambda: "", copper: Copper | None = None, keep: frozenset = frozenset(),
               deeper: int = 0) -> tuple[list[Track], list[Via]] | None:
    """All the tracks and vias once the net's smallest group of copper is joined to the rest: in free room
    (detail_join), else, where deeper >= 0, through other nets' copper (join_through, with keep and deeper); None
    where no way is found."""
    found = detail_join(board, rules, net, tracks, vias, pieces, margin, copper, should_stop)
    if found is not None:
        return tracks + found[0], vias + found[1]
    if deeper < 0:
        return None
    return join_through(board, rules, net, tracks, vias, pieces, margin, should_stop, copper, keep, deeper)


def join_through(board: Board, rules, net: int, tracks: list[Track], vias: list[Via], pieces, margin: float,
                 should_stop=lambda: "", copper: Copper | None = None, keep: frozenset = frozenset(),
                 deeper: int = 0) -> tuple[list[Track], list[Via]] | None:
    """All the new tracks and vias once the net's smallest group of copper is joined to the rest through other
    nets' new copper (tracks, vias) and those nets are joined again around it; None where no such way is found in
    WAYS tries, each with the nets that found no way back in the tries before as walls (and those in keep). The
    nets moved look for their way back in free room, else (deeper > 0) through a further net's copper in turn, up
    to `deeper` levels (c4_esp32c5's /USB_DN moves /GPIO4, which finds its way back only by moving /USB_DP). The way
    is searched in the first window of aparts only: the wider windows serve the nets that find their way back
    (detail_join), which costs less than a search through every net's copper over them (a second such pass took
    40 s of c4_pico_ice's /ICE_28 and joined nothing). copper: Copper(board, rules, tracks, vias), where the caller
    keeps one."""
    a = next(aparts(board, net, tracks, vias, pieces), None)
    if a is None:
        return None
    walls = (copper or Copper(board, rules, tracks, vias), list(vias))
    stay = {net} | set(keep)
    for _ in range(WAYS):
        outcome = way_through(board, rules, a, tracks, vias, pieces, margin, should_stop, stay, walls, deeper)
        if not isinstance(outcome, int):
            return outcome
        if outcome < 0 or should_stop():
            return None
        stay.add(outcome)
    return None


def way_through(board: Board, rules, a, tracks: list[Track], vias: list[Via], pieces, margin: float, should_stop,
                stay: set[int], walls: tuple[Copper, list[Via]], depth: int) -> tuple[list[Track], list[Via]] | int:
    """join_through's one try, the new copper of the nets in `stay` a wall (walls: all the copper, and the new
    vias), the nets moved allowed `depth` levels of ways through further nets' copper on their way back: the tracks
    and vias, else the net that found no way back (-1 where none was found for a.net)."""
    own_tracks = [t for t in tracks if t.net in stay]
    own_vias = [v for v in vias if v.net in stay]
    found = search(board, rules, Copper(board, rules, own_tracks, own_vias), a, margin, own_vias, should_stop, walls)
    if found is None:
        return -1
    new_tracks, new_vias = found
    out_tracks, out_vias = in_the_way(rules, new_tracks, new_vias, tracks, vias, margin)
    moved = sorted({tracks[i].net for i in out_tracks} | {vias[i].net for i in out_vias})
    if stay & set(moved):
        return -1
    tracks = [t for i, t in enumerate(tracks) if i not in out_tracks]
    vias = [v for i, v in enumerate(vias) if i not in out_vias]
    copper = Copper(board, rules, tracks, vias)
    if not (all(legal(board, rules, copper, t, margin, vias + new_vias) for t in new_tracks)
            and all(via_legal(board, rules, copper, v, vias + [o for o in new_vias if o is not v], margin,
                              on_own_pads=True) for v in new_vias)):
        return -1
    tracks, vias = tracks + new_tracks, vias + new_vias
    for other in moved:
        # joined again first to the ends its copper has left (the nearest points, where a join most often lands),
        # then trimmed of the ends left dangling; where the join landed on an end trimmed, once more
        for _ in range(REJOIN_ROUNDS):
            for _ in range(len(net_copper(board, other, tracks, vias, pieces))):
                if parts(board, other, tracks, vias, pieces) < 2:
                    break
                rejoined = join_apart(board, rules, other, tracks, vias, pieces, margin, should_stop, None,
                                      frozenset(stay | {a.net}), depth - 1)
                if rejoined is None:
                    return other
                tracks, vias = rejoined
            tracks, vias = trimmed(board, other, tracks, vias, pieces)
            if parts(board, other, tracks, vias, pieces) < 2:
                break
        else:
            return other
    return tracks, vias


def parts(board: Board, net: int, tracks, vias, pieces) -> int:
    """How many groups the net's pads are in."""
    return sum(1 for g in net_copper(board, net, tracks, vias, pieces) if g.pads)


def in_the_way(rules, new_tracks: list[Track], new_vias: list[Via], tracks: list[Track], vias: list[Via],
               margin: float) -> tuple[set[int], set[int]]:
    """The indices of the tracks and vias of other nets that come nearer the new ones than they may: the larger of
    the two nets' clearances between copper, the hole clearance from a via's hole, and the hole-to-hole distance
    between two vias."""
    net = (new_tracks or new_vias)[0].net
    reach = max(rules.max_clearance, rules.hole_clearance, rules.hole_to_hole) + margin
    out = []
    for items in (tracks, vias):
        found = set()
        if items:
            bodies = np.array([item.body() for item in items], dtype=object)
            for new in list(new_tracks) + list(new_vias):
                body, on = new.body(), set(new.layers) if isinstance(new, Via) else {new.layer}
                for i in np.flatnonzero(shapely.dwithin(bodies, body, reach)).tolist():
                    other = items[i]
                    other_on = set(other.layers) if isinstance(other, Via) else {other.layer}
                    if other.net != net and on & other_on and too_near(rules, new, body, other, bodies[i], margin):
                        found.add(i)
        out.append(found)
    return out[0], out[1]


def too_near(rules, a: Track | Via, body_a, b: Track | Via, body_b, margin: float) -> bool:
    """Whether two items of different nets on a common layer break a clearance (see in_the_way)."""
    gap = body_a.distance(body_b)
    if gap < max(rules.clearance_of(a.net), rules.clearance_of(b.net)) + margin:
        return True
    if isinstance(a, Via) and isinstance(b, Via):
        return np.hypot(a.x - b.x, a.y - b.y) - (a.drill + b.drill) / 2 < rules.hole_to_hole + margin
    for via, other in ((a, body_b), (b, body_a)):
        if isinstance(via, Via) and shapely.Point(via.x, via.y).distance(other) - via.drill / 2 < \
                rules.hole_clearance + margin:
            return True
    return False


def trimmed(board: Board, net: int, tracks: list[Track], vias: list[Via], pieces) -> tuple[list, list]:
    """tracks and vias less the net's ends left dangling: its tracks with an end on nothing of the net (another
    track of the layer, a via, a pad, a fill; within TOUCH, as our DRC counts it), and its vias that join it on fewer
    than two layers (KiCad's via_dangling); then those that touched what is trimmed, until none is left."""
    mine = [t for t in tracks if t.net == net] + [v for v in vias if v.net == net]
    if not mine:
        return tracks, vias
    bodies = [item.body() for item in mine]
    tree = STRtree(bodies)
    fixed: dict[str, object] = {}

    def on_fixed(shape, layer: str) -> bool:
        if layer not in fixed:
            fixed[layer] = shapely.union_all([p.outline for p in board.pads if p.net == net and layer in p.layers]
                                             + [f.shape for f in pieces if f.net == net and f.layer == layer])
        return fixed[layer].distance(shape) < TOUCH

    def layers_of(item) -> tuple[str, ...]:
        return item.layers if isinstance(item, Via) else (item.layer,)

    gone: set[int] = set()

    def held(k: int, shape, layer: str) -> bool:
        """Whether the shape, on the layer, meets the net's pads or fills or another of its items left."""
        return on_fixed(shape, layer) or any(
            j != k and j not in gone and layer in layers_of(mine[j])
            for j in tree.query(shape, predicate="dwithin", distance=TOUCH).tolist())

    def dangling(k: int) -> bool:
        item = mine[k]
        if isinstance(item, Via):
            return sum(held(k, bodies[k], layer) for layer in item.layers) < 2
        return not all(held(k, shapely.Point(end), item.layer) for end in (item.start, item.end))

    todo = set(range(len(mine)))
    while todo:
        k = todo.pop()
        if k not in gone and dangling(k):
            gone.add(k)
            todo |= set(tree.query(bodies[k], predicate="dwithin", distance=TOUCH).tolist()) - gone
    dropped = {id(mine[k]) for k in gone}
    return [t for t in tracks if id(t) not in dropped], [v for v in vias if id(v) not in dropped]
