"""The 3D routing lattice: layers x rows x cols at one pitch (mm). Node index = (layer * rows + row) * cols + col.

Node (row, col) sits at x = x0 + col * pitch, y = y0 + row * pitch (board coordinates, y down).
Layer 0 is F.Cu; even layers prefer horizontal steps, odd layers vertical ones.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

ON_EDGE = 1e-9      # in pitches: a node this near the edge of a box counts as inside it (rounding in the division)
STEPS = np.array([(0, 1), (1, 0), (0, -1), (-1, 0)], dtype=np.int64)     # a track's moves in a plane: (row, col)


@dataclass(frozen=True)
class Lattice:
    pitch: float
    x0: float
    y0: float
    rows: int
    cols: int
    layers: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.layers), self.rows, self.cols

    @property
    def size(self) -> int:
        return len(self.layers) * self.rows * self.cols

    @property
    def plane(self) -> int:
        return self.rows * self.cols

    def xy(self, rows, cols) -> tuple[np.ndarray, np.ndarray]:
        return self.x0 + np.asarray(cols) * self.pitch, self.y0 + np.asarray(rows) * self.pitch

    def node_xy(self, nodes) -> tuple[np.ndarray, np.ndarray]:
        _, r, c = self.unravel(nodes)
        return self.xy(r, c)

    def unravel(self, nodes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        nodes = np.asarray(nodes)
        layer, rest = np.divmod(nodes, self.plane)
        row, col = np.divmod(rest, self.cols)
        return layer, row, col

    def index(self, layer, row, col) -> np.ndarray:
        return (np.asarray(layer) * self.rows + np.asarray(row)) * self.cols + np.asarray(col)

    def inside(self, nodes, rows: slice, cols: slice) -> np.ndarray:
        """Which nodes (flat indices, or flat row/col indices of the plane) lie in the window of rows and cols."""
        _, r, c = self.unravel(nodes)
        return in_window(r, c, rows, cols)

    def window(self, x_min: float, y_min: float, x_max: float, y_max: float) -> tuple[slice, slice]:
        """Rows and columns whose nodes lie inside the box (clipped to the lattice)."""
        c0 = max(0, math.ceil((x_min - self.x0) / self.pitch - ON_EDGE))
        c1 = min(self.cols, math.floor((x_max - self.x0) / self.pitch + ON_EDGE) + 1)
        r0 = max(0, math.ceil((y_min - self.y0) / self.pitch - ON_EDGE))
        r1 = min(self.rows, math.floor((y_max - self.y0) / self.pitch + ON_EDGE) + 1)
        return slice(r0, max(r0, r1)), slice(c0, max(c0, c1))

    def windows(self, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`window` of many boxes at once: bounds (n, 4) as (x_min, y_min, x_max, y_max); returns the arrays
        (row start, row stop, col start, col stop), each stop at least its start. The same arithmetic as `window`,
        so the same nodes."""
        x_min, y_min, x_max, y_max = np.asarray(bounds, dtype=np.float64).T
        c0 = np.maximum(0, np.ceil((x_min - self.x0) / self.pitch - ON_EDGE)).astype(np.int64)
        c1 = np.minimum(self.cols, np.floor((x_max - self.x0) / self.pitch + ON_EDGE) + 1).astype(np.int64)
        r0 = np.maximum(0, np.ceil((y_min - self.y0) / self.pitch - ON_EDGE)).astype(np.int64)
        r1 = np.minimum(self.rows, np.floor((y_max - self.y0) / self.pitch + ON_EDGE) + 1).astype(np.int64)
        return r0, np.maximum(r0, r1), c0, np.maximum(c0, c1)


def in_window(r: np.ndarray, c: np.ndarray, rows: slice, cols: slice) -> np.ndarray:
    """Which of the nodes at rows r and columns c lie in the window of rows and cols."""
    return (r >= rows.start) & (r < rows.stop) & (c >= cols.start) & (c < cols.stop)


def choose_pitch(bounds, n_layers: int, wanted: float, config) -> float:
    """`wanted` (from the rules) unless the lattice would exceed config.max_lattice_nodes."""
    x0, y0, x1, y1 = bounds
    pitch = max(wanted, config.min_pitch)
    area = max((x1 - x0) * (y1 - y0), 1e-6)
    fits = math.sqrt(area * n_layers / config.max_lattice_nodes)
    return max(pitch, fits)


def make_lattice(bounds, layers, pitch: float, anchor: tuple[float, float] | None = None) -> Lattice:
    """The lattice over bounds: centred on them (equal margins at both edges), or with a node at anchor (x, y)."""
    x0, y0, x1, y1 = bounds
    if anchor is not None:
        x0 += (anchor[0] - x0) % pitch
        y0 += (anchor[1] - y0) % pitch
    cols = int(math.floor((x1 - x0) / pitch)) + 1
    rows = int(math.floor((y1 - y0) / pitch)) + 1
    if anchor is None:
        x0 += ((x1 - x0) - (cols - 1) * pitch) / 2
        y0 += ((y1 - y0) - (rows - 1) * pitch) / 2
    return Lattice(pitch, x0, y0, rows, cols, tuple(layers))


@functools.lru_cache(maxsize=None)
def disc_offsets(radius_mm: float, pitch: float) -> np.ndarray:
    """(drow, dcol) of every node strictly closer than radius_mm to the origin node, as an (n, 2) int array
    (shared between callers: read-only)."""
    reach = int(math.ceil(radius_mm / pitch))
    d = np.arange(-reach, reach + 1)
    dr, dc = np.meshgrid(d, d, indexing="ij")
    inside = (dr * dr + dc * dc) * pitch * pitch < radius_mm * radius_mm - 1e-9
    offsets = np.stack([dr[inside], dc[inside]], axis=1)
    offsets.flags.writeable = False
    return offsets
