"""What a picture of a board shows, in board millimetres: copper per layer (pads, tracks, graphics), vias, holes,
the outline, and airwires for the connections that copper does not yet make. The PNG and SVG writers draw a Scene.

Colours are KiCad 9's default theme, so a picture reads like the board in pcbnew.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from ..board.geometry import circle
from ..board.connectivity import pad_groups
from ..mst import boruvka, complete_edges

BACKGROUND = (0, 16, 35)
EDGE = (208, 210, 205)
VIA = (236, 236, 236)
THROUGH_PAD = (227, 183, 46)
HOLE = (20, 20, 20)
AIRWIRE = (0, 248, 255)
FRONT, BACK = (200, 52, 52), (77, 127, 196)
INNER = [(127, 200, 127), (206, 125, 44), (79, 203, 203), (219, 98, 139), (167, 165, 198), (40, 204, 217),
         (232, 178, 167), (242, 237, 161)]
COPPER_OPACITY = 0.8
FAINT_OPACITY = 0.3


def layer_colour(name: str, copper: list[str]) -> tuple[int, int, int]:
    if name == copper[0]:
        return FRONT
    if name == copper[-1]:
        return BACK
    return INNER[(copper.index(name) - 1) % len(INNER)]


@dataclass
class Layer:
    name: str
    colour: tuple[int, int, int]
    shapes: list[BaseGeometry] = field(default_factory=list)       # pads and tracks
    faint: list[BaseGeometry] = field(default_factory=list)        # copper text and drawings (bounding shapes)


@dataclass
class Scene:
    bounds: tuple[float, float, float, float]       # x0, y0, x1, y1 in mm
    layers: list[Layer]                             # drawn in this order: the back layer first, the front last
    through_pads: list[BaseGeometry]                # plated through-hole pads, drawn above every layer
    vias: list[BaseGeometry]
    holes: list[BaseGeometry]
    outline: BaseGeometry                           # the board edge, as lines
    airwires: list[tuple[tuple[float, float], tuple[float, float]]]

    def view(self, margin: float = 0.03) -> tuple[float, float, float, float]:
        """The area a picture shows, (x, y, width, height) in mm: the board and a margin around it."""
        x0, y0, x1, y1 = self.bounds
        pad = margin * max(x1 - x0, y1 - y0, 1e-6)
        return x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad


def build_scene(board, new_tracks=(), new_vias=(), pieces=()) -> Scene:
    """The board with its existing copper and the given new tracks and vias."""
    copper = board.copper_layers
    layers = {name: Layer(name, layer_colour(name, copper)) for name in copper}
    through = [p.outline for p in board.pads if p.drill and len(p.layers) > 1]
    for pad in board.pads:
        if not (pad.drill and len(pad.layers) > 1):
            for name in pad.layers:
                layers[name].shapes.append(pad.outline)
    for g in board.graphics:
        if g.layer in layers:
            layers[g.layer].faint.append(g.outline)
    for t in [*board.tracks, *new_tracks]:
        if t.layer in layers:
            layers[t.layer].shapes.append(t.body())
    vias = [*board.vias, *new_vias]
    holes = [p.hole for p in board.pads if p.hole is not None] + [circle(v.x, v.y, v.drill / 2) for v in vias]
    x0, y0, x1, y1 = board.outline.bounds
    return Scene(bounds=(x0, y0, x1, y1), layers=[layers[name] for name in reversed(copper)],
                 through_pads=through,                  vias=[v.body() for v in vias], holes=holes,
                 outline=board.outline.boundary, airwires=airwires(board, new_tracks, new_vias, pieces))


def airwires(board, new_tracks=(), new_vias=(), pieces=()) -> list:
    """For each net, the shortest lines that would join its still separate groups of pads (a spanning tree over
    the groups), drawn between the nearest pads of two groups, as pcbnew's ratsnest does. pieces: zone fills."""
    lines = []
    for groups in pad_groups(board, new_tracks, new_vias, pieces).values():
        if len(groups) < 2:
            continue
        points = np.array([(board.pads[i].x, board.pads[i].y) for group in groups for i in group])
        labels = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        u, v, w = complete_edges(points, labels)
        for e in np.asarray(boruvka(len(groups), u, v, w)).tolist():
            a, b = np.flatnonzero(labels == u[e]), np.flatnonzero(labels == v[e])
            d = np.hypot(*(points[a][:, None, :] - points[b][None, :, :]).transpose(2, 0, 1))
            i, j = np.unravel_index(int(np.argmin(d)), d.shape)
            lines.append((tuple(points[a[i]]), tuple(points[b[j]])))
    return lines


def polygons(shapes: list[BaseGeometry]) -> list:
    """Every polygon in the shapes, oriented (shells counter-clockwise, holes clockwise) for non-zero filling."""
    parts = shapely.get_parts(np.asarray([s for s in shapes if s is not None and not s.is_empty], dtype=object))
    parts = [p for p in parts if p.geom_type == "Polygon"]
    return list(shapely.orient_polygons(np.asarray(parts, dtype=object))) if parts else []
