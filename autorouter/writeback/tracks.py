"""Lattice paths to board items: straight runs merged into segments, layer changes into vias, pad stubs kept; where
asked (config.chamfer), right-angle corners cut at 45 degrees, so that a staircase of single steps becomes one
diagonal.

A corner is cut by the same length along each leg. The cut moves copper only into the corner's inside, and no
farther than any copper the corner kept its clearance from allows: a point at least R (half the width plus the
clearance) from both legs is at least (2R - cut) / sqrt(2) from the cut, which is R or more while the cut is at most
(2 - sqrt(2)) R; at the automatic pitch (half the sum of the narrowest width and the clearance) half a pitch is within
that for every width at or above the narrowest.
"""
from __future__ import annotations

import math
import operator

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


def routes_to_items(lattice, tasks, routes, hole_to_hole: float = 0.0, memo: dict | None = None,
                    chamfer: float = 0.0) -> tuple[list[Track], list[Via]]:
    """The routes as board items: each connection's tracks at its width (its net class's, or necked), through vias
    of its size (the larger where two connections share a site). memo: a dict kept by a caller that asks again and
    again while a few nets change (finishing): a net whose task and connections are the same objects as last time
    gives the same items. chamfer: how far, in lattice pitches (at most half), corners are cut back along each leg
    (0: square corners)."""
    tracks: list[Track] = []
    vias: list[Via] = []
    done: set[int] = set()
    for task in tasks:
        route = routes.get(task.net)
        if route is None or task.net in done:      # a net may have two tasks (zones cut apart): one route
            continue
        done.add(task.net)
        known = memo.get(task.net) if memo is not None else None
        if not (known and known[0] is task and len(known[1]) == len(route.connections)
                and all(map(operator.is_, known[1], route.connections))):
            known = (task, list(route.connections), *net_items(lattice, task, route, hole_to_hole, chamfer))
            if memo is not None:
                memo[task.net] = known
        tracks += known[2]
        vias += known[3]
    return tracks, vias


def net_items(lattice, task, route, hole_to_hole: float, chamfer: float = 0.0) -> tuple[list[Track], list[Via]]:
    """One net's route as board items (routes_to_items)."""
    vias: list[Via] = []
    segments: dict[tuple, Track] = {}          # one segment per layer and ends, at the widest asked for

    def add(a, b, layer, width):
        key = (layer,) + tuple(sorted([a, b]))
        if a != b and (key not in segments or segments[key].width < width):
            segments[key] = Track(a, b, width, layer, task.net)

    sizes: dict[int, object] = {}
    # where another connection of the net starts or ends: a corner there stays, or the join would come apart
    ends = {int(n) for conn in route.connections for n in (conn.path[0], conn.path[-1])} if chamfer else set()
    for conn in route.connections:
        size = conn.size or task.rules
        for run in corners(conn.path, lattice):
            layer = lattice.layers[int(run[0] // lattice.plane)]
            points = np.stack(lattice.node_xy(run), axis=1)
            if chamfer:
                points = chamfered(points, np.array([n in ends for n in run.tolist()]), chamfer * lattice.pitch)
            for a, b in zip(points[:-1], points[1:]):
                add((float(a[0]), float(a[1])), (float(b[0]), float(b[1])), layer, size.track_width)
        for stub in conn.stubs:
            for a, b in zip(stub.points, stub.points[1:]):
                add(a, b, lattice.layers[stub.layer], size.track_width)
        for site in conn.vias(lattice).tolist():
            if site not in sizes or sizes[site].via_diameter < size.via_diameter:
                sizes[site] = size
    kept: list[tuple[float, float, float]] = []
    nodes = route.nodes()
    for site in sorted(sizes):
        size = sizes[site]
        x, y = (float(v) for v in lattice.xy(*divmod(site, lattice.cols)))
        twin = next((k for k in kept if math.dist(k[:2], (x, y)) < max(k[2], size.via_drill) + hole_to_hole), None)
        if twin is None:
            kept.append((x, y, size.via_drill))
            vias.append(Via(x, y, size.via_diameter, size.via_drill, lattice.layers, task.net))
            continue
        # two vias of one net closer than a hole apart (a path that hopped under something): keep one, and
        # join the other's tracks to it on each layer they reach (the stretch lies within both vias' footprint)
        for layer in np.unique(nodes[nodes % lattice.plane == site] // lattice.plane).tolist():
            add((x, y), twin[:2], lattice.layers[layer], size.track_width)
    pads = {(lattice.layers[stub.layer], stub.points[0]) for stub in route.stubs}
    for node in (n for c in route.connections for n in c.in_fill):     # ends joined to a fill hold too
        x, y = lattice.node_xy(node)
        pads.add((lattice.layers[node // lattice.plane], (float(x), float(y))))
    tracks = without_dangling(list(segments.values()), pads, {(v.x, v.y) for v in vias})
    return tracks, vias


def chamfered(points: np.ndarray, keep: np.ndarray, cut: float) -> np.ndarray:
    """A run's corner points (n, 2), each inner corner not kept replaced by the two points `cut` back along its legs
    (legs are whole lattice pitches, at least twice the cut), then every point between two steps of one direction
    dropped: a staircase of single steps becomes one diagonal segment."""
    if len(points) < 3:
        return points
    out = [points[0]]
    for i in range(1, len(points) - 1):
        if keep[i]:
            out.append(points[i])
            continue
        for other in (points[i - 1], points[i + 1]):
            leg = other - points[i]
            out.append(points[i] + leg * (cut / np.hypot(*leg)))
    out.append(points[-1])
    out = np.array(out)
    steps = np.diff(out, axis=0)
    length = np.hypot(steps[:, 0], steps[:, 1])
    out, steps, length = out[np.r_[True, length > 1e-9]], steps[length > 1e-9], length[length > 1e-9]
    direction = steps / length[:, None]
    turn = np.abs(direction[1:] - direction[:-1]).max(axis=1) > 1e-6
    return out[np.r_[True, turn, True]]


def without_dangling(tracks: list[Track], pad_ends: set, via_points: set) -> list[Track]:
    """One net's tracks less those with an end that touches nothing (no other track of the layer, no via, no pad):
    left over where two vias too close together were made one. Repeated until every end touches something."""
    while tracks:
        ends = np.array([[t.start, t.end] for t in tracks])                  # (n, 2 ends, 2)
        a, b = ends[:, 0], ends[:, 1]
        layer = np.array([t.layer for t in tracks])
        d = b - a
        free = []
        for k, t in enumerate(tracks):
            for end in (t.start, t.end):
                if end in via_points or (t.layer, end) in pad_ends:
                    continue
                p = np.asarray(end)
                u = np.clip(((p - a) * d).sum(1) / np.maximum((d * d).sum(1), 1e-18), 0, 1)
                dist = np.hypot(*(a + u[:, None] * d - p).T)
                dist[k] = np.inf
                if not ((dist < 1e-6) & (layer == t.layer)).any():
                    free.append(k)
                    break
        if not free:
            return tracks
        tracks = [t for k, t in enumerate(tracks) if k not in set(free)]
    return tracks
