"""What there is to route: per net, its pins (pads already joined by existing copper or a zone's fill form one pin),
their portals, and the order in which they join the net (breadth-first over the Borůvka tree)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..board.connectivity import pad_groups
from ..board.model import Board, Pad
from ..board.rules import DesignRules, NetClassRules
from ..lattice.grid import Lattice
from ..lattice.obstacles import Obstacles, Profile
from ..lattice.portals import Portals, pin_portals
from ..mst import boruvka, complete_edges, connection_order


@dataclass
class Pin:
    pads: list[Pad]
    portals: Portals


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


def reachable_pins(clusters, cls: NetClassRules, rules: DesignRules, profiles, layer_index, lattice, config):
    """Pins with portals at the net class's width; where a pad cannot be reached at that width (a wide power track
    into a fine-pitch pad), the narrowest class in use instead: KiCad's DRC enforces the board's minimum width, not
    the class width, so necking a whole net down stays legal. Returns (class used, pins, blocked pad names)."""
    narrowest = min(c.track_width for c in rules.classes.values())
    necked = replace(cls, name=f"{cls.name}, necked", track_width=narrowest)
    for candidate in ([cls, necked] if narrowest < cls.track_width else [cls]):
        profile = profiles[candidate]
        pins, blocked = [], []
        for group in clusters:
            portals = pin_portals(group, layer_index, profile, lattice, config.portal_radius)
            if portals.nodes.size == 0:
                blocked.append("/".join(p.name for p in group))
            pins.append(Pin(group, portals))
        if not blocked:
            break
    return candidate, pins, blocked


GPU_TREE_PINS = 256     # nets with this many pins build their tree on the GPU (when routing on the GPU)


def spanning_tree(n: int, u, v, w, on_gpu: bool) -> np.ndarray:
    """Borůvka's tree of the pins, on the GPU for large nets when the GPU engine is in use (the same tree)."""
    if on_gpu and n >= GPU_TREE_PINS:
        import cupy
        return boruvka(n, cupy.asarray(u), cupy.asarray(v), cupy.asarray(w), xp=cupy).get()
    return boruvka(n, u, v, w)


def build_tasks(board: Board, rules: DesignRules, profiles: Obstacles, lattice: Lattice, config,
                only: set[str] | None = None, on_gpu: bool = False, pieces=(), tracks=(), vias=()) -> list[NetTask]:
    """One task per net whose pads are not yet one group: groups of pads that the board's tracks and vias (and the
    given new ones), or the zone fills KiCad will make (pieces), already join are one pin each."""
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    tasks = []
    names = board.net_names
    for net, groups in sorted(pad_groups(board, tracks, vias, pieces).items()):
        name = names.get(net, str(net))
        if only is not None and name not in only:
            continue
        clusters = [[board.pads[i] for i in group] for group in groups]
        if len(clusters) < 2:
            continue
        points = np.array([(p.x, p.y) for group in clusters for p in group])
        labels = np.repeat(np.arange(len(clusters)), [len(g) for g in clusters])
        u, v, w = complete_edges(points, labels)
        order = connection_order(len(clusters), u, v, spanning_tree(len(clusters), u, v, w, on_gpu))
        cls, pins, blocked = reachable_pins([clusters[i] for i in order], rules.for_net(net), rules, profiles,
                                            layer_index, lattice, config)
        notes = []
        if cls is not rules.for_net(net):
            notes.append(f"net {name}: routed {cls.track_width:g} mm wide (class {cls.name}): some of its pads are "
                         f"too close to their neighbours for {rules.for_net(net).track_width:g} mm")
        profile = profiles[cls]
        tasks.append(NetTask(net, name, cls, profile, pins, blocked, notes))
    return tasks
