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
from .pathfinder import NetRoute, NetTask, build_tasks, negotiate
from .pathfinder.costs import STEP
from .search import make_engine
from .writeback.tracks import routes_to_items


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
        return sum(len(self.routes[t.net].paths) for t in self.tasks if t.net in self.routes)


def auto_pitch(rules: DesignRules, config: RouterConfig) -> float:
    """Half of the narrowest track plus the largest clearance: nets of the narrowest class can then run on every
    other lattice line."""
    narrowest = min(c.track_width for c in rules.classes.values())
    return (narrowest + rules.max_clearance + config.clearance_margin) / 2


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
    profiles = build_obstacles(board, rules, lattice, config.clearance_margin)
    for net in {rules.for_net(n.number) for n in board.nets if n.number}:
        profiles[net]                       # rasterise the classes in use now, so the lattice stage owns its time
    timings["lattice"] = time.monotonic() - t0
    engine, engine_note = engine or make_search_engine(config)
    t0 = time.monotonic()
    tasks = build_tasks(board, rules, profiles, lattice, config, nets, on_gpu=engine.name == "gpu")
    timings["pins and MST"] = time.monotonic() - t0
    report({"stage": "tasks", "nets": len(tasks), "connections": sum(t.connections for t in tasks)})
    t0 = time.monotonic()
    outcome = negotiate(tasks, lattice, rules, engine, config, report, should_stop)
    timings["search and negotiation"] = time.monotonic() - t0
    t0 = time.monotonic()
    tracks, vias = routes_to_items(lattice, tasks, outcome.routes, rules.hole_to_hole + config.clearance_margin)
    timings["tracks and vias"] = time.monotonic() - t0
    engine_report = getattr(engine, "report", lambda: None)()
    notes = ([engine_note] if engine_note else []) + ([engine_report] if engine_report else []) \
        + [note for t in tasks for note in t.notes]
    return RouteResult(lattice, tasks, outcome.routes, tracks, vias, outcome.iterations, outcome.converged,
                       engine.name, timings, notes, outcome.stopped_early, outcome.search_seconds)
