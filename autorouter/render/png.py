"""A Scene as a PNG, with NumPy alone: polygons are filled by a vectorised scanline (non-zero winding, so
overlapping shapes of one layer merge), drawn at twice the size and averaged down for smooth edges, and written with
zlib. No imaging library is needed for pictures of this kind.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np
import shapely

from ..board.geometry import row_crossings
from .scene import AIRWIRE, BACKGROUND, COPPER_OPACITY, EDGE, FAINT_OPACITY, HOLE, THROUGH_PAD, VIA, Scene, polygons

SUPERSAMPLE = 2


class Canvas:
    """Pixel space for a scene's view: millimetres -> pixels at a fixed scale."""

    def __init__(self, view, width: int):
        self.x0, self.y0, view_w, view_h = view
        self.scale = width * SUPERSAMPLE / view_w
        self.w = width * SUPERSAMPLE
        self.h = max(1, int(round(view_h * self.scale)))

    def coverage(self, shapes) -> np.ndarray:
        """A boolean mask of the pixels whose centres lie inside any of the shapes."""
        polys = polygons(shapes)
        mask = np.zeros((self.h, self.w + 1), dtype=np.int32)
        if not polys:
            return mask[:, :-1] != 0
        # in pixels, whose centres lie half a pixel past each integer
        origin = (self.x0, self.y0)
        in_pixels = shapely.transform(np.asarray(polys, dtype=object), lambda xy: (xy - origin) * self.scale)
        row, x, winding, _, _, _ = row_crossings(in_pixels, 0.5, 1.0, self.h)
        col = np.clip(np.ceil(x - 0.5).astype(np.int64), 0, self.w)
        flat = np.bincount(row * (self.w + 1) + col, weights=winding, minlength=self.h * (self.w + 1))
        return np.cumsum(flat.reshape(self.h, self.w + 1), axis=1)[:, :-1] != 0

    def lines(self, segments, width_px: float) -> list:
        """Segments (pairs of points in mm) as shapes a given number of output pixels wide."""
        half = width_px * SUPERSAMPLE / self.scale / 2
        return [shapely.LineString(s).buffer(half, quad_segs=2) for s in segments if s[0] != s[1]]


def paint(image: np.ndarray, mask: np.ndarray, colour, opacity: float = 1.0) -> None:
    """Blend a colour over the masked pixels only (most of a layer is empty)."""
    image[mask] = image[mask] * (1 - opacity) + np.asarray(colour, dtype=np.float32) * opacity


def draw(scene: Scene, width: int = 1600) -> np.ndarray:
    """The scene as an (h, w, 3) uint8 image."""
    canvas = Canvas(scene.view(), width)
    image = np.empty((canvas.h, canvas.w, 3), dtype=np.float32)
    image[:] = BACKGROUND
    for layer in scene.layers:
        paint(image, canvas.coverage(layer.faint), layer.colour, FAINT_OPACITY)
        paint(image, canvas.coverage(layer.shapes), layer.colour, COPPER_OPACITY)
    paint(image, canvas.coverage(scene.through_pads), THROUGH_PAD)
    paint(image, canvas.coverage(scene.vias), VIA)
    paint(image, canvas.coverage(scene.holes), HOLE)
    outline = [seg for line in shapely.get_parts(scene.outline) for seg in zip(line.coords[:-1], line.coords[1:])]
    paint(image, canvas.coverage(canvas.lines(outline, 2.0)), EDGE)
    paint(image, canvas.coverage(canvas.lines(scene.airwires, 1.5)), AIRWIRE, 0.9)
    h, w = canvas.h // SUPERSAMPLE * SUPERSAMPLE, canvas.w
    small = image[:h].reshape(h // SUPERSAMPLE, SUPERSAMPLE, w // SUPERSAMPLE, SUPERSAMPLE, 3).mean(axis=(1, 3))
    return np.clip(np.rint(small), 0, 255).astype(np.uint8)


def encode_png(rgb: np.ndarray) -> bytes:
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), dtype=np.uint8), rgb.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
