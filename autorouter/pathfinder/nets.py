"""What there is to route: per net, its pins (pads already joined by existing copper or a zone's fill form one pin),
their portals, and the order in which they join the net (breadth-first over the Borůvka tree)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import shapely

from ..board.connectivity import pad_groups
from ..board.model import Board, Pad, net_label, pad_names
from ..board.rules import DesignRules, NetClassRules
from ..lattice.grid import Lattice
from ..lattice.obstacles import FREE, HARD, Obstacles, Profile, via_sizes_of
from ..lattice.portals import (EMPTY, Portals, fill_nodes, keep_clear_of, mark_stub_conflicts, pins_portals,
                               search_reach, track_index)
from ..mst import complete_edges, connection_order, dense_tree


@dataclass
class Pin:
    pads: list[Pad]
    portals: Portals
    pieces: list = field(default_factory=list)                # the zone fill pieces that join its pads
    fill: np.ndarray = field(default_factory=lambda: EMPTY)   # nodes in them where a path may end (no stub)
    outside: bool = False                                     # every pad of it lies off the board outline
    # finishing's way in where the tracks made so far leave the pin no portal: the portals whose stubs cross the
    # tracks of the fewest other nets, and those nets (make_way asks them to move)
    through: Portals | None = None
    crossed: frozenset = frozenset()
    blocked_by: str = ""          # what leaves it no portal, for the report (nets.blocked_by)

    @property
    def names(self) -> str:
        return pad_names(self.pads)


@dataclass
class NetTask:
    net: int
    name: str
    rules: NetClassRules
    profile: Profile
    pins: list[Pin]                      # in connection order: pins[0] is the root
    blocked: list[str] = field(default_factory=list)     # pads with no portal
    notes: list[str] = field(default_factory=list)       # what the report should say about this net

    @property
    def connections(self) -> int:
        return max(0, len(self.pins) - 1)


VIA_ROOM_MM = 1.0      # a pad on one outer layer needs a via site this near (a BGA ball's dog-bone is at 0.57 mm)


def candidate_classes(cls: NetClassRules, rules: DesignRules, smallest: bool = False,
                      thinnest: float = 0.0) -> list[NetClassRules]:
    """The sizes reachable_pins tries, in its order: the class's, then necked to the narrowest class width in use,
    the board's minimum width and thinnest, each also with the smallest via the board allows (smallest: the other
    way round)."""
    widths = sorted({min(c.track_width for c in rules.classes.values()), rules.min_track_width, thinnest} - {0.0},
                    reverse=True)
    necked = [cls] + [replace(cls, name=f"{cls.name}, necked to {w:g}", track_width=w)
                      for w in widths if w < cls.track_width]
    candidates = []
    for c in necked:
        candidates.append(c)
        small = rules.small_via
        if small and small[0] < c.via_diameter:
            candidates.append(replace(c, name=f"{c.name}, vias {small[0]:g}/{small[1]:g}", via_diameter=small[0],
                                      via_drill=min(small[1], c.via_drill)))
    return candidates[::-1] if smallest else candidates


def first_sizes(cls: NetClassRules, rules: DesignRules, config, smallest: bool = False) -> NetClassRules:
    """The sizes a net of the class tries first (candidate_classes, as config.sizes prefers; smallest: the board's
    smallest whatever it prefers)."""
    return candidate_classes(cls, rules, smallest or prefers_smallest(cls, rules, config))[0]


def reachable_pins(clusters, cls: NetClassRules, rules: DesignRules, profiles, layer_index, lattice, config,
                   smallest: bool = False, thinnest: float = 0.0, first: list[Portals] | None = None):
    """Pins with portals at the net class's width and via size. Where a pad cannot be reached at that width (a wide
    power track into a fine-pitch pad), the narrowest class width in use, then the board's minimum width (and
    thinnest, if given); where a pad on one outer layer has no room for the class's via near it (an inner ball of a
    BGA), the smallest via the board allows (a dog-bone fan-out). KiCad's DRC checks the board's minimums, not the
    class's sizes, so necking a net down stays legal. smallest: the narrowest and smallest first. first: the pins'
    portals at the first of those sizes, where the caller found them already (build_tasks, for many nets at once).
    Returns (class used, pins, blocked pad names)."""
    tried, found = [], None
    for k, candidate in enumerate(candidate_classes(cls, rules, smallest, thinnest)):
        if (tried and min(len(t[2]) for t in tried) == 0
                and via_sizes_of(candidate) in {via_sizes_of(t[0]) for t in tried}):
            # sizes tried already reached every pad and only lacked room for a via: the same via plane lacks it
            # too, so these can neither be taken nor beat them (vme-wren: 69 of the 73 nets that tried a neck)
            continue
        # sizes past the first are tried on a profile made only around the pins, and made whole once kept (vme-wren's
        # neck: 2.4 s over the whole board for four small nets that do not keep it)
        profile = profiles[candidate] if k == 0 else profiles.near(candidate, around(clusters, lattice, config))
        pins, blocked, starved = pins_at(clusters, profile, layer_index, lattice, config, first if k == 0 else None)
        tried.append((candidate, pins, blocked, k))
        if not blocked and not starved:
            found = tried[-1]
            break
    # every pad reached if a candidate does, else the fewest pads left out (one pad blocked at every size must not
    # leave the net at a width that blocks its fine-pitch pads too)
    candidate, pins, blocked, k = found or min(tried, key=lambda t: len(t[2]))
    if k:
        pins = pins_at(clusters, profiles[candidate], layer_index, lattice, config)[0]
    return candidate, pins, blocked


def pins_at(clusters, profile, layer_index, lattice, config, portals: list[Portals] | None = None):
    """(pins, blocked pad names, whether some pin lacks room for a via) at the profile's sizes. portals: the pins'
    portals there, where the caller has them."""
    pins, blocked, starved = [], [], False
    for group, found in zip(clusters, portals or pins_portals(clusters, layer_index, profile, lattice,
                                                               config.portal_radius)):
        if found.nodes.size == 0:
            blocked.append(pad_names(group))
        starved = starved or not via_room(group, profile, lattice)
        pins.append(Pin(group, found))
    return pins, blocked, starved


def around(clusters, lattice, config) -> np.ndarray:
    """Boxes (rows of x0, y0, x1, y1 in mm) around the clusters' pads that hold every node pins_at reads: their
    portals' (portals.search_reach) and their via room, and a pitch more."""
    reach = max(search_reach(config.portal_radius, lattice), VIA_ROOM_MM)
    bounds = shapely.bounds(np.array([p.outline for group in clusters for p in group], dtype=object))
    return bounds + (reach + lattice.pitch) * np.array([-1, -1, 1, 1])


def via_room(pads: list[Pad], profile, lattice) -> bool:
    """Whether some pad of the pin spans layers, or has a node within VIA_ROOM_MM where the net may place a via."""
    for pad in pads:
        if len(pad.layers) > 1:
            return True
        x0, y0, x1, y1 = pad.outline.bounds
        rows, cols = lattice.window(x0 - VIA_ROOM_MM, y0 - VIA_ROOM_MM, x1 + VIA_ROOM_MM, y1 + VIA_ROOM_MM)
        owner = profile.via_owner[rows, cols]
        if ((owner == FREE) | (owner == pad.net)).any():
            return True
    return False


def build_tasks(board: Board, rules: DesignRules, profiles: Obstacles, lattice: Lattice, config,
                only: set[str] | None = None, pieces=(), tracks=(), vias=(),
                smallest: bool = False) -> list[NetTask]:
    """One task per net whose pads are not yet one group: groups of pads that the board's tracks and vias (and the
    given new ones), or the zone fills KiCad will make (pieces), already join are one pin each. smallest: route at
    the board's smallest track and via, not the class's."""
    tasks = []
    names = board.net_names
    piece_of: dict[int, list[int]] = {}
    for k, piece in enumerate(pieces):
        for i in piece.pads:
            piece_of.setdefault(i, []).append(k)
    todo = []                   # (net, name, clusters in connection order, their fills, smallest)
    for net, groups in sorted(pad_groups(board, tracks, vias, pieces).items()):
        name = names.get(net, str(net))
        if only is not None and name not in only:
            continue
        clusters = [[board.pads[i] for i in group] for group in groups]
        if len(clusters) < 2:
            continue
        fills = [[pieces[k] for k in sorted({k for i in group for k in piece_of.get(i, ())})] for group in groups]
        points = np.array([(p.x, p.y) for group in clusters for p in group])
        labels = np.repeat(np.arange(len(clusters)), [len(g) for g in clusters])
        u, v, w = complete_edges(points, labels)
        order = connection_order(len(clusters), u, v, dense_tree(len(clusters), u, v, w))
        todo.append((net, name, [clusters[i] for i in order], [fills[i] for i in order],
                     smallest or prefers_smallest(rules.for_net(net), rules, config)))
    first = first_portals(todo, board, rules, profiles, lattice, config)
    for (net, name, clusters, fills, small), portals in zip(todo, first):
        tasks.append(make_task(net, name, clusters, board, rules, profiles, lattice, config, small, fills,
                               first=portals))
    gap = rules.max_clearance + config.clearance_margin
    if tracks:                  # joining what routing left apart: stubs must keep clear of the tracks made so far
        made = track_index(tracks, lattice)
        for t in tasks:
            for pin in t.pins:
                pin.portals, pin.through, pin.crossed = keep_clear_of(pin.portals, t.net, t.rules.track_width,
                                                                      lattice, made, gap)
            t.blocked = [pin.names for pin in t.pins if not pin.portals.nodes.size]
    mark_conflicts(tasks, lattice)
    for t in tasks:
        for pin in t.pins:
            if not pin.portals.nodes.size and not pin.blocked_by:
                pin.blocked_by = blocked_by(pin, t, lattice, config.portal_radius, names)
    return tasks


def first_portals(todo: list, board: Board, rules: DesignRules, profiles: Obstacles, lattice: Lattice,
                  config) -> list[list[Portals]]:
    """Per net of build_tasks' todo, its pins' portals at the first sizes reachable_pins tries: one pins_portals
    call for all the nets that try the same sizes first, not one per net (a pad's portals do not depend on the
    other pads asked with it; vme-wren: 1,378 calls)."""
    layer_index = {layer: i for i, layer in enumerate(board.copper_layers)}
    by_sizes: dict[NetClassRules, list[int]] = {}
    for k, (net, _, _, _, small) in enumerate(todo):
        by_sizes.setdefault(first_sizes(rules.for_net(net), rules, config, small), []).append(k)
    out: list[list[Portals]] = [[] for _ in todo]
    for sizes, which in by_sizes.items():
        found = pins_portals([pin for k in which for pin in todo[k][2]], layer_index, profiles[sizes], lattice,
                             config.portal_radius)
        at = 0
        for k in which:
            out[k] = found[at:at + len(todo[k][2])]
            at += len(todo[k][2])
    return out


def blocked_by(pin: Pin, task: NetTask, lattice: Lattice, radius: int, names: dict[int, str]) -> str:
    """What leaves a pin with no portal, for the report: the other nets whose tracks every stub out of it would
    cross (the tracks made so far, in finishing), else what a stub would have to pass within the clearance near its
    pads (the profile's obstacles, Profile.stub_trees): other nets' copper, or a keep-out, a hole, the board edge or a
    pad of no net; where nothing is that near, the stubs of the pads beside it took its way."""
    if pin.crossed:
        return "the tracks of " + ", ".join(sorted(names.get(n, str(n)) for n in pin.crossed))
    reach = radius * lattice.pitch              # where pins_portals looks first
    owners: set[int] = set()
    for pad in pin.pads:
        for layer in pad.layers:
            entry = task.profile.stub_trees.get(lattice.layers.index(layer)) if layer in lattice.layers else None
            if entry is None:
                continue
            near = entry.tree.query(shapely.box(*(np.array(pad.outline.bounds) + reach * np.array([-1, -1, 1, 1]))))
            near = near[shapely.distance(entry.shapes[near], pad.outline) <= entry.reach[near] + reach]
            owners |= set(entry.owners[near].tolist())
    others = sorted(net_label(names.get(n, str(n))) for n in owners if n >= 0 and n != task.net)
    parts = ["the copper of " + ", ".join(others)] if others else []
    if HARD in owners:
        parts.append("a keep-out, a hole, the board edge or a pad of no net")
    return " and ".join(parts) or "the stubs of the pads beside it"


def mark_conflicts(tasks: list[NetTask], lattice) -> None:
    """The other nets' portals each task's stubs rule out (portals.mark_stub_conflicts). Stubs are exact segments:
    two may be exactly the clearance apart, as KiCad allows."""
    mark_stub_conflicts([(t.net, t.rules.track_width, t.rules.clearance, [pin.portals for pin in t.pins])
                         for t in tasks], lattice)


def prefers_smallest(cls: NetClassRules, rules: DesignRules, config) -> bool:
    """Whether nets of this class start at the board's smallest sizes (config.sizes): all of them ("smallest"), or
    those of classes no wider than KiCad's Default class, whose sizes say no more than "the usual" ("compact"); a
    wider class (power) keeps its own."""
    default = rules.classes.get("Default")
    return config.sizes == "smallest" or (config.sizes == "compact" and default is not None
                                          and cls.track_width <= default.track_width)


def make_task(net: int, name: str, clusters, board, rules, profiles, lattice, config, smallest: bool,
              fills=None, thinnest: float = 0.0, first: list[Portals] | None = None) -> NetTask:
    """The task of joining the clusters (in connection order), with the sizes that reach every pad. fills: per
    cluster, the zone fill pieces that join it, where a path may end without reaching a pad. thinnest: a width
    below the board's usual ones that it may take; first: the clusters' portals at the first sizes tried, where
    the caller has them (reachable_pins)."""
    layer_index = {layer: i for i, layer in enumerate(board.copper_layers)}
    wanted = rules.for_net(net)
    cls, pins, blocked = reachable_pins(clusters, wanted, rules, profiles, layer_index, lattice, config, smallest,
                                        thinnest, first)
    inset = cls.via_diameter / 2 + rules.max_clearance + config.clearance_margin
    for pin in pins:            # said apart from a blocked pad: the part, not the rules, needs moving
        pin.outside = not any(shapely.contains_xy(board.outline, p.x, p.y) for p in pin.pads)
    for pin, pieces in zip(pins, fills or ()):
        pin.pieces = pieces
        if config.join_fills:
            pin.fill = fill_nodes(pieces, net, layer_index, profiles[cls], lattice, inset)
    notes = []
    if prefers_smallest(wanted, rules, config):
        # the settings asked for the board's smallest sizes: said once per class, not as a lack of room per net
        if cls.track_width < wanted.track_width or cls.via_diameter < wanted.via_diameter:
            notes.append(f"nets of class {wanted.name}: routed at the board's smallest sizes ({cls.track_width:g} mm "
                         f"wide, vias {cls.via_diameter:g}/{cls.via_drill:g} mm), as `sizes: {config.sizes}` asks; "
                         f"`sizes: class` keeps the class's ({wanted.track_width:g} mm, vias "
                         f"{wanted.via_diameter:g}/{wanted.via_drill:g} mm)")
    else:
        if cls.track_width < wanted.track_width:
            notes.append(f"net {name}: some of it routed {cls.track_width:g} mm wide (class {wanted.name}: "
                         f"{wanted.track_width:g} mm), where the class width found no room")
        if cls.via_diameter < wanted.via_diameter:
            notes.append(f"net {name}: some of its vias {cls.via_diameter:g}/{cls.via_drill:g} mm (class "
                         f"{wanted.name}: {wanted.via_diameter:g}/{wanted.via_drill:g} mm), where the class's via "
                         f"found no room")
    return NetTask(net, name, cls, profiles[cls], pins, blocked, notes)


def necked(task: NetTask, board, rules, profiles, lattice, config) -> NetTask | None:
    """The task again at the board's smallest track (the narrowest the project predefines, where it is narrower)
    and via, or None when it already has them."""
    new = make_task(task.net, task.name, [pin.pads for pin in task.pins], board, rules, profiles, lattice, config,
                    smallest=True, fills=[pin.pieces for pin in task.pins], thinnest=rules.small_track)
    smaller = (new.rules.track_width < task.rules.track_width or new.rules.via_diameter < task.rules.via_diameter)
    return new if smaller and not new.blocked else None


def neck_tasks(tasks: list[NetTask], nets: set[int], board, rules, profiles, lattice, config):
    """The tasks with those of `nets` at the board's smallest sizes where they are larger; and the nets changed."""
    out, changed = [], set()
    for t in tasks:
        new = necked(t, board, rules, profiles, lattice, config) if t.net in nets else None
        out.append(new or t)
        if new is not None:
            changed.add(t.net)
    if changed:
        mark_conflicts(out, lattice)
    return out, changed
