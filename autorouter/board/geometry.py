"""Shapely outlines of pads, tracks and board graphics, in board coordinates (mm)."""
from __future__ import annotations

import functools
import math

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon, box
from shapely.geometry.base import BaseGeometry

ARC_STEPS = 16   # segments per arc drawn on the board
QUAD_SEGS = 8    # segments per quarter circle of an offset or a disc
# shapely's discs and offsets are polygons inscribed in the true curve, so they fall short of it by up to
# r * (1 - cos(pi / (4 * QUAD_SEGS))); scaling the radius by ROUND_OUT makes them circumscribe it instead, so copper
# and clearances are never under-estimated
ROUND_OUT = 1 / math.cos(math.pi / (4 * QUAD_SEGS))
# mm: copper this near other copper of its net touches it. A track's end on a pad's rounded corner, rounded to the
# nanometre, may fall a few nanometres off our polygon of the corner, which KiCad (its exact arc) finds joined.
TOUCH = 1e-4


def grow(geom: BaseGeometry, distance: float) -> BaseGeometry:
    """Offset a shape by `distance` mm (negative shrinks), rounding to the safe side."""
    return geom.buffer(distance * ROUND_OUT, quad_segs=QUAD_SEGS)


def grow_all(geoms, distances) -> np.ndarray:
    """`grow` of many shapes at once, each by its own distance (mm): the same shapes, as an array."""
    distances = np.asarray(distances, dtype=np.float64) * ROUND_OUT
    return shapely.buffer(np.asarray(geoms, dtype=object), distances, quad_segs=QUAD_SEGS)


def made_once(build):
    """build(*values), kept for the next call with the same values: a board's pads repeat a few sizes, and shapely's
    shapes are immutable, so one shape serves them all. 0.0 and -0.0, equal as keys, are told apart (the shapes'
    coordinates carry the sign)."""
    @functools.lru_cache(maxsize=4096, typed=True)
    def kept(signs, *values):
        return build(*values)

    @functools.wraps(build)
    def made(*values):
        return kept(tuple(math.copysign(1.0, v) if isinstance(v, float) else 0.0 for v in values), *values)
    return made


def rotate_xy(px: float, py: float, angle_deg: float) -> tuple[float, float]:
    """KiCad rotation of a local offset (y down, positive angle turns counter-clockwise on screen)."""
    t = math.radians(angle_deg)
    return px * math.cos(t) + py * math.sin(t), -px * math.sin(t) + py * math.cos(t)


def place(local: BaseGeometry, x: float, y: float, angle_deg: float) -> BaseGeometry:
    """Move a shape drawn around the origin to (x, y), turned by KiCad's angle."""
    # shapely rotates counter-clockwise in a y-up frame; in KiCad's y-down frame that is the opposite sense
    turned = affinity.rotate(local, -angle_deg, origin=(0, 0)) if angle_deg else local
    return affinity.translate(turned, x, y)


def roundrect(w: float, h: float, radius: float) -> BaseGeometry:
    """A w x h rectangle with corners of the radius: its straight sides exact (a pin at fine pitch may be exactly
    the clearance from a track), its corners circumscribing the true arcs."""
    r = max(0.0, min(radius, w / 2, h / 2))
    if r <= 1e-9:
        return box(-w / 2, -h / 2, w / 2, h / 2)
    corners = [corner_disc(sx * (w / 2 - r), sy * (h / 2 - r), r) for sx in (-1, 1) for sy in (-1, 1)]
    return shapely.union_all([box(-w / 2, -h / 2 + r, w / 2, h / 2 - r), box(-w / 2 + r, -h / 2, w / 2 - r, h / 2)]
                             + corners)


def corner_disc(x: float, y: float, r: float) -> BaseGeometry:
    """A polygon circumscribing the circle whose edges, not vertices, touch it in the four axis directions: it
    reaches exactly r along x and y, and never less than r anywhere."""
    n = 4 * QUAD_SEGS
    t = (np.arange(n) + 0.5) * 2 * math.pi / n
    R = r / math.cos(math.pi / n)
    return Polygon(np.stack([x + R * np.cos(t), y + R * np.sin(t)], 1))


CORNERS = {"top_left": (-1, -1), "top_right": (1, -1), "bottom_left": (-1, 1), "bottom_right": (1, 1)}


def chamfered(shape: BaseGeometry, w: float, h: float, size: float, corners: set[str]) -> BaseGeometry:
    """A rectangle (rounded or not) of w x h with the named corners cut at 45 degrees, `size` along each side, as
    KiCad draws chamfered pads (a chamfered corner is not rounded)."""
    for name in sorted(corners & CORNERS.keys()) if size > 0 else []:
        sx, sy = CORNERS[name]
        cx, cy = sx * w / 2, sy * h / 2
        (x0, x1), (y0, y1) = sorted((cx, 0.0)), sorted((cy, 0.0))
        cut = Polygon([(cx, cy), (cx - sx * size, cy), (cx, cy - sy * size)])
        shape = shape.union(box(x0, y0, x1, y1)).difference(cut)       # the corner's quadrant, square, then cut
    return shape


@made_once
def oval(w: float, h: float) -> BaseGeometry:
    if abs(w - h) < 1e-9:
        return grow(Point(0, 0), w / 2)
    if w > h:
        d = (w - h) / 2
        return grow(LineString([(-d, 0), (d, 0)]), h / 2)
    d = (h - w) / 2
    return grow(LineString([(0, -d), (0, d)]), w / 2)


def arc_points(start, mid, end, steps: int = ARC_STEPS) -> list[tuple[float, float]]:
    """Points along the circular arc through start, mid and end."""
    (x1, y1), (x2, y2), (x3, y3) = start, mid, end
    d = 2 * (x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2))
    if abs(d) < 1e-12:
        return [start, end]
    ux = ((x1 * x1 + y1 * y1) * (y2 - y3) + (x2 * x2 + y2 * y2) * (y3 - y1) + (x3 * x3 + y3 * y3) * (y1 - y2)) / d
    uy = ((x1 * x1 + y1 * y1) * (x3 - x2) + (x2 * x2 + y2 * y2) * (x1 - x3) + (x3 * x3 + y3 * y3) * (x2 - x1)) / d
    r = math.hypot(x1 - ux, y1 - uy)
    a1, a2, a3 = (math.atan2(p[1] - uy, p[0] - ux) for p in (start, mid, end))
    sweep = (a3 - a1) % (2 * math.pi)
    if not ((a2 - a1) % (2 * math.pi)) <= sweep:
        sweep -= 2 * math.pi
    n = max(2, int(abs(sweep) / (2 * math.pi) * 4 * steps))
    return [(ux + r * math.cos(a1 + sweep * i / n), uy + r * math.sin(a1 + sweep * i / n)) for i in range(n + 1)]


def centre_line(track) -> BaseGeometry:
    """A track's centre line: its arc as a polyline; a point where it has no length."""
    if track.mid is not None:
        return LineString(arc_points(track.start, track.mid, track.end))
    return Point(track.start) if track.start == track.end else LineString([track.start, track.end])


def track_body(track) -> BaseGeometry:
    return grow(centre_line(track), track.width / 2)


def via_body(via) -> BaseGeometry:
    return circle(via.x, via.y, via.diameter / 2)


def circle(x: float, y: float, r: float) -> BaseGeometry:
    return grow(Point(x, y), r)


def stroke(points, width: float) -> BaseGeometry:
    """A drawn line of the given width (0 width: a hairline, still copper of 0 area)."""
    return grow(LineString(points), max(width, 1e-3) / 2)


def filled_or_stroked(poly_points, width: float, filled: bool) -> BaseGeometry:
    ring = list(poly_points) + [poly_points[0]]
    body = stroke(ring, width)
    if filled and len(poly_points) >= 3:
        body = shapely.union(body, Polygon(poly_points).buffer(0))
    return body


def ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """start[k], start[k] + 1, ..., start[k] + count[k] - 1 for every k in turn, as one array (counts >= 0)."""
    return np.repeat(start - np.cumsum(count) + count, count) + np.arange(count.sum())


def first_index(v: np.ndarray, origin: float, step: float, past: bool = False) -> np.ndarray:
    """The first k with origin + k * step >= v (> v where past), for each v, with the lines' coordinates computed as
    origin + k * step: the division alone can put a value on a line on either side of it."""
    k = np.floor((v - origin) / step) + 1 if past else np.ceil((v - origin) / step)
    beyond = (lambda p: p > v) if past else (lambda p: p >= v)
    k += ~beyond(origin + k * step)
    k -= beyond(origin + (k - 1) * step)
    return k.astype(np.int64)


def row_crossings(polygons, y0: float, step: float, rows: int):
    """Where the polygons' rings cross the lines y = y0 + r * step, 0 <= r < rows, as a scanline fill meets them:
    (line r, x, +1 where the edge runs up and -1 where down, the polygon) of each crossing. An edge counts on the
    lines from its lower end up to, not including, its upper end, so that a line through a vertex meets one of its two
    edges; level edges meet none. Also the rings' (edges, points): (x1, y1, x2, y2) and (x, y) arrays."""
    rings, polygon = shapely.get_rings(np.asarray(polygons, dtype=object), return_index=True)
    xy, ring = shapely.get_coordinates(rings, return_index=True)
    edge = ring[1:] == ring[:-1]                   # consecutive points of one ring
    (x1, y1), (x2, y2) = xy[:-1][edge].T, xy[1:][edge].T
    r0 = np.clip(first_index(np.minimum(y1, y2), y0, step), 0, rows)
    r1 = np.clip(first_index(np.maximum(y1, y2), y0, step), 0, rows)
    count = np.maximum(r1 - r0, 0)
    e = np.repeat(np.arange(count.size), count)
    row = ranges(r0, count)
    y = y0 + row * step
    x = x1[e] + (y - y1[e]) * (x2[e] - x1[e]) / (y2[e] - y1[e])
    return row, x, np.where(y2[e] > y1[e], 1, -1), polygon[ring[:-1][edge]][e], (x1, y1, x2, y2), xy
