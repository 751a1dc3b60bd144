"""The router as one call: route(board, rules, config, on_progress) -> RouteResult.

read (done by the caller) -> lattice and obstacles -> pins, portals and MST order -> PathFinder over the search engine
-> tracks and vias in mm. The library never prints; progress goes to on_progress(event: dict).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .board.model import Board, Track, Via
from .board.rules import DesignRules
from .config import RouterConfig
from .lattice import build_obstacles, choose_pitch, make_lattice
from .lattice.grid import Lattice
from .board.connectivity import pad_groups
from .pathfinder import NetRoute, NetTask, build_tasks, negotiate, reconnect
from .pathfinder.costs import STEP
from .search import make_engine
from .writeback.tracks import routes_to_items
from .zones import predict as predict_fill
from .zones import spoke_guards


@dataclass
class RouteResult:
    lattice: Lattice
    tasks: list[NetTask]
    routes: dict[int, NetRoute]
    tracks: list[Track]             # new items only
    vias: list[Via]
    iterations: int
    converged: bool
    backend: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stopped_early: str = ""
    search_seconds: float = 0.0     # of the "search and negotiation" stage, in the search engine

    def failed_nets(self) -> dict[str, str]:
        """Net name -> reason, for every net with a connection left unrouted."""
        out = {}
        for t in self.tasks:
            r = self.routes.get(t.net)
            if r is None:
                out[t.name] = "not routed (stopped before reaching it)"
            elif r.failed:
                out[t.name] = r.failed[0]
        return out

    @property
    def connections(self) -> int:
        return sum(t.connections for t in self.tasks)

    @property
    def routed_connections(self) -> int:
        """Connections routed; a net routed by more than one task (zones cut apart) counts its route once."""
        return sum(len(self.routes[net].paths) for net in {t.net for t in self.tasks} if net in self.routes)


def auto_pitch(rules: DesignRules, config: RouterConfig) -> float:
    """Half of the narrowest track plus the largest clearance: nets of the narrowest class can then run on every
    other lattice line."""
    narrowest = min(c.track_width for c in rules.classes.values())
    return (narrowest + rules.max_clearance + config.clearance_margin) / 2


ZONE_ROUNDS = 3      # rounds of predicting the fills and joining what the new tracks cut apart


def keep_zones_whole(board, rules, profiles, lattice, config, tasks, outcome, tracks, vias):
    """The routing relied on the zone fills the board had before it; its own tracks now cut them. Predict KiCad's
    refill with them, and join each fully routed net's pads that are no longer one group, with more tracks, a few
    rounds (new tracks cut again). Returns the tasks (the joining ones added), tracks and vias."""
    tasks = list(tasks)
    hole_gap = rules.hole_to_hole + config.clearance_margin
    for _ in range(ZONE_ROUNDS):
        routed = {t.net for t in tasks if t.net in outcome.routes and not outcome.routes[t.net].failed}
        routed |= {n.number for n in board.nets if n.number and n.number not in {t.net for t in tasks}}
        pieces = predict_fill(board, rules, tracks, vias)
        apart = [net for net, g in pad_groups(board, tracks, vias, pieces).items() if len(g) > 1 and net in routed]
        if not apart or outcome.context.should_stop():
            break
        extra = build_tasks(board, rules, profiles, lattice, config, {board.net_name(net) for net in apart},
                            tracks=tracks, vias=vias, pieces=pieces)
        reconnect(extra, outcome)
        tasks += extra
        tracks, vias = routes_to_items(lattice, tasks, outcome.routes, hole_gap)
    return tasks, tracks, vias


def make_search_engine(config: RouterConfig):
    """(engine, note): the engine config.backend asks for; raises EngineUnavailable for a GPU that is not there."""
    return make_engine(config.backend, int(config.delta * STEP))


def route(board: Board, rules: DesignRules, config: RouterConfig, on_progress=None, nets: set[str] | None = None,
          should_stop=lambda: "", engine=None) -> RouteResult:
    """engine: (engine, note) from make_search_engine, or None to make it here."""
    report = on_progress or (lambda event: None)
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    pitch = config.pitch or choose_pitch(board.outline.bounds, len(board.copper_layers), auto_pitch(rules, config), config)
    lattice = make_lattice(board.outline.bounds, board.copper_layers, pitch)
    report({"stage": "lattice", "shape": lattice.shape, "pitch": pitch})
    pieces = predict_fill(board, rules)
    profiles = build_obstacles(board, rules, lattice, config.clearance_margin, spoke_guards(board, pieces))
    for net in {rules.for_net(n.number) for n in board.nets if n.number}:
        profiles[net]                       # rasterise the classes in use now, so the lattice stage owns its time
    timings["lattice"] = time.monotonic() - t0
    engine, engine_note = engine or make_search_engine(config)
    t0 = time.monotonic()
    tasks = build_tasks(board, rules, profiles, lattice, config, nets, on_gpu=engine.name == "gpu", pieces=pieces)
    timings["pins and MST"] = time.monotonic() - t0
    report({"stage": "tasks", "nets": len(tasks), "connections": sum(t.connections for t in tasks)})
    t0 = time.monotonic()
    outcome = negotiate(tasks, lattice, rules, engine, config, report, should_stop)
    timings["search and negotiation"] = time.monotonic() - t0
    t0 = time.monotonic()
    tracks, vias = routes_to_items(lattice, tasks, outcome.routes, rules.hole_to_hole + config.clearance_margin)
    timings["tracks and vias"] = time.monotonic() - t0
    if board.zones:
        t0 = time.monotonic()
        tasks, tracks, vias = keep_zones_whole(board, rules, profiles, lattice, config, tasks, outcome, tracks, vias)
        timings["zone fills"] = time.monotonic() - t0
    engine_report = getattr(engine, "report", lambda: None)()
    notes = ([engine_note] if engine_note else []) + ([engine_report] if engine_report else []) \
        + [note for t in tasks for note in t.notes]
    return RouteResult(lattice, tasks, outcome.routes, tracks, vias, outcome.iterations, outcome.converged,
                       engine.name, timings, notes, outcome.stopped_early, outcome.search_seconds)
