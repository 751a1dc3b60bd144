"""Lattice paths to board items: straight runs merged into segments, layer changes into vias, pad stubs kept."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NewTrack:
    start: tuple[float, float]
    end: tuple[float, float]
    width: float
    layer: str
    net: int


@dataclass(frozen=True)
class NewVia:
    x: float
    y: float
    diameter: float
    drill: float
    net: int


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


def routes_to_items(lattice, tasks, routes) -> tuple[list[NewTrack], list[NewVia]]:
    tracks: list[NewTrack] = []
    vias: list[NewVia] = []
    for task in tasks:
        route = routes.get(task.net)
        if route is None:
            continue
        width = task.rules.track_width
        seen: set = set()
        for path in route.paths:
            for run in corners(path, lattice):
                layer = lattice.layers[int(run[0] // lattice.plane)]
                x, y = lattice.node_xy(run)
                for i in range(len(run) - 1):
                    a, b = (float(x[i]), float(y[i])), (float(x[i + 1]), float(y[i + 1]))
                    key = (layer,) + tuple(sorted([a, b]))
                    if key not in seen:
                        seen.add(key)
                        tracks.append(NewTrack(a, b, width, layer, task.net))
        for layer, pad_xy, node_xy in route.stubs:
            if pad_xy != node_xy:
                tracks.append(NewTrack(pad_xy, node_xy, width, lattice.layers[layer], task.net))
        sites = route.via_sites(lattice)
        rows, cols = np.divmod(sites, lattice.cols)
        x, y = lattice.xy(rows, cols)
        for vx, vy in zip(x.tolist(), y.tolist()):
            vias.append(NewVia(vx, vy, task.rules.via_diameter, task.rules.via_drill, task.net))
    return tracks, vias
