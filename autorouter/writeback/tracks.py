"""Lattice paths to board items: straight runs merged into segments, layer changes into vias, pad stubs kept."""
from __future__ import annotations

import math

import numpy as np


from ..board.model import Track, Via


def corners(path: np.ndarray, lattice) -> list[np.ndarray]:
    """Split a path into same-layer runs, each reduced to the nodes where its direction changes."""
    runs = []
    layer = path // lattice.plane
    breaks = np.flatnonzero(np.diff(layer) != 0) + 1
    for run in np.split(path, breaks):
        if run.size == 1:
            runs.append(run)
            continue
        step = np.diff(run)
        turn = np.flatnonzero(step[1:] != step[:-1]) + 1
        keep = np.concatenate([[0], turn, [run.size - 1]])
        runs.append(run[keep])
    return runs


def routes_to_items(lattice, tasks, routes, hole_to_hole: float = 0.0) -> tuple[list[Track], list[Via]]:
    """The routes as board items: tracks of the net class width, through vias of the net class size."""
    tracks: list[Track] = []
    vias: list[Via] = []
    done: set[int] = set()
    for task in tasks:
        route = routes.get(task.net)
        if route is None or task.net in done:      # a net may have two tasks (zones cut apart): one route
            continue
        done.add(task.net)
        width = task.rules.track_width
        seen: set = set()

        def add(a, b, layer):
            key = (layer,) + tuple(sorted([a, b]))
            if a != b and key not in seen:
                seen.add(key)
                tracks.append(Track(a, b, width, layer, task.net))

        for path in route.paths:
            for run in corners(path, lattice):
                layer = lattice.layers[int(run[0] // lattice.plane)]
                x, y = lattice.node_xy(run)
                for i in range(len(run) - 1):
                    add((float(x[i]), float(y[i])), (float(x[i + 1]), float(y[i + 1])), layer)
        for layer, pad_xy, node_xy in route.stubs:
            add(pad_xy, node_xy, lattice.layers[layer])
        gap = task.rules.via_drill + hole_to_hole
        kept: list[tuple[float, float]] = []
        nodes = route.nodes()
        for site in route.via_sites(lattice).tolist():
            x, y = (float(v) for v in lattice.xy(*divmod(site, lattice.cols)))
            twin = next((k for k in kept if math.dist(k, (x, y)) < gap), None)
            if twin is None:
                kept.append((x, y))
                vias.append(Via(x, y, task.rules.via_diameter, task.rules.via_drill, lattice.layers, task.net))
                continue
            # two vias of one net closer than a hole apart (a path that hopped under something): keep one, and
            # join the other's tracks to it on each layer they reach (the stretch lies within both vias' footprint)
            for layer in np.unique(nodes[nodes % lattice.plane == site] // lattice.plane).tolist():
                add((x, y), twin, lattice.layers[layer])
    return tracks, vias
