"""Draw the plugins' toolbar icons (PNG, standard library only), so that they can be remade rather than edited:
two pads joined by a front-copper track (KiCad's red) that drops through a via to a back-copper one (blue).

    python plugins/make_icons.py      # writes autorouter_kicad/icon.png and autorouter_ipc/icon-{24,48}.png
"""
from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRONT, BACK, PAD, VIA, HOLE = (200, 52, 52), (77, 127, 196), (194, 160, 70), (227, 227, 227), (40, 40, 40)
SAMPLES = 4                                   # per pixel side: anti-aliased edges


def segment_distance(p, a, b) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def shapes():
    """In a 0..1 square, painted in order: back track, front track, pads, via ring, via hole."""
    def track(points, width):
        return lambda p: any(segment_distance(p, a, b) <= width / 2 for a, b in zip(points, points[1:]))

    def square(cx, cy, half):
        return lambda p: abs(p[0] - cx) <= half and abs(p[1] - cy) <= half

    def disc(cx, cy, r):
        return lambda p: math.hypot(p[0] - cx, p[1] - cy) <= r

    return [(BACK, track([(0.62, 0.42), (0.62, 0.62), (0.82, 0.82)], 0.12)),
            (FRONT, track([(0.18, 0.18), (0.38, 0.18), (0.62, 0.42)], 0.12)),
            (PAD, square(0.15, 0.18, 0.11)), (PAD, square(0.85, 0.85, 0.11)),
            (VIA, disc(0.62, 0.42, 0.15)), (HOLE, disc(0.62, 0.42, 0.065))]


def draw(size: int) -> bytes:
    rows = []
    layers = shapes()
    for y in range(size):
        row = bytearray([0])                  # PNG filter type 0 for the row
        for x in range(size):
            rgb, hits = [0, 0, 0], 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    p = ((x + (sx + 0.5) / SAMPLES) / size, (y + (sy + 0.5) / SAMPLES) / size)
                    colour = next((c for c, inside in reversed(layers) if inside(p)), None)
                    if colour:
                        hits += 1
                        rgb = [s + c for s, c in zip(rgb, colour)]
            alpha = round(255 * hits / SAMPLES ** 2)
            row += bytes([round(c / hits) for c in rgb] if hits else [0, 0, 0]) + bytes([alpha])
        rows.append(bytes(row))
    return png(size, b"".join(rows))


def png(size: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)          # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    (HERE / "autorouter_kicad" / "icon.png").write_bytes(draw(24))
    for size in (24, 48):
        (HERE / "autorouter_ipc" / f"icon-{size}.png").write_bytes(draw(size))
