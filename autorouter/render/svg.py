"""A Scene as SVG: one group per copper layer (named, so it can be hidden in an editor), in board millimetres."""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

import shapely

from .scene import AIRWIRE, BACKGROUND, COPPER_OPACITY, EDGE, FAINT_OPACITY, HOLE, THROUGH_PAD, VIA, Scene, polygons


def hex_colour(rgb) -> str:
    return "#%02x%02x%02x" % tuple(rgb)


def path_data(shapes) -> str:
    parts = []
    for poly in polygons(shapes):
        for ring in shapely.get_rings(poly):
            xy = shapely.get_coordinates(ring)
            parts.append("M" + "L".join(f"{x:.4f},{y:.4f}" for x, y in xy[:-1]) + "Z")
    return "".join(parts)


def draw(scene: Scene, width: int = 1600) -> str:
    vx, vy, vw, vh = scene.view()
    px = vw / width                                 # one output pixel, in mm
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{round(width * vh / vw)}" '
           f'viewBox="{vx:.4f} {vy:.4f} {vw:.4f} {vh:.4f}">',
           f'<rect x="{vx:.4f}" y="{vy:.4f}" width="{vw:.4f}" height="{vh:.4f}" fill="{hex_colour(BACKGROUND)}"/>']
    for layer in scene.layers:
        out.append(f'<g id={quoteattr(layer.name)} fill="{hex_colour(layer.colour)}">'
                   f'<path fill-opacity="{FAINT_OPACITY}" d="{path_data(layer.faint)}"/>'
                   f'<path fill-opacity="{COPPER_OPACITY}" d="{path_data(layer.shapes)}"/></g>')
    out.append(f'<path id="through-hole pads" fill="{hex_colour(THROUGH_PAD)}" d="{path_data(scene.through_pads)}"/>')
    out.append(f'<path id="vias" fill="{hex_colour(VIA)}" d="{path_data(scene.vias)}"/>')
    out.append(f'<path id="holes" fill="{hex_colour(HOLE)}" d="{path_data(scene.holes)}"/>')
    edges = "".join("M" + "L".join(f"{x:.4f},{y:.4f}" for x, y in line.coords)
                    for line in shapely.get_parts(scene.outline))
    out.append(f'<path id="Edge.Cuts" fill="none" stroke="{hex_colour(EDGE)}" stroke-width="{2 * px:.4f}" d="{edges}"/>')
    wires = "".join(f"M{a[0]:.4f},{a[1]:.4f}L{b[0]:.4f},{b[1]:.4f}" for a, b in scene.airwires)
    out.append(f'<path id="airwires" fill="none" stroke="{hex_colour(AIRWIRE)}" stroke-width="{1.5 * px:.4f}" '
               f'd="{wires}"/>')
    out.append("</svg>\n")
    return "\n".join(out)
