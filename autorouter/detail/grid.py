"""A fine grid over a small window of the board, open where a track (or a via) of one net keeps its clearance from
everything else there, and the cheapest octilinear way across it.

Open points are found from the exact shapes: each obstacle grown by what the track's centre line must keep from it,
plus SLACK of a step (half its diagonal), so that every point of a step between two open points is clear too: the
distance to a shape changes no faster than the distance along the step. A path of such steps is legal as it stands;
its collinear steps merge into the segments of the tracks.
"""
from __future__ import annotations

import functools
import heapq
import math
from array import array
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import shapely

from ..board.geometry import first_index, grow_all, ranges, row_crossings
from ..mst import merge

SLACK = math.sqrt(2) / 2          # in steps: the farthest a point of a diagonal step lies from both its ends
MOVES = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc]
TURN = 0.25                       # in steps: the cost of a change of direction, so that runs stay straight
STOP_EVERY = 1 << 16              # points visited between two looks at the time limit
COARSE_FROM = 200_000             # points from which a grid is searched on cells first (cheapest_path)
COARSE = 3                        # points along a cell's side
CORRIDOR = 2                      # cells either side of the cells' path that the search point by point keeps to
GROWN_KEPT = 1 << 14              # grown shapes kept for the next masks (grown)


@dataclass
class FineGrid:
    x0: float
    y0: float
    step: float
    rows: int
    cols: int

    @classmethod
    def over(cls, box: tuple[float, float, float, float], step: float) -> "FineGrid":
        x0, y0, x1, y1 = box
        return cls(x0, y0, step, int((y1 - y0) / step) + 1, int((x1 - x0) / step) + 1)

    def area(self):
        """The window as a polygon."""
        return shapely.box(self.x0, self.y0, self.x0 + self.cols * self.step, self.y0 + self.rows * self.step)

    @cached_property
    def xy(self) -> tuple[np.ndarray, np.ndarray]:
        """The coordinates of every point, as (rows, cols) arrays (made once: every mask of a search tests them)."""
        ys, xs = np.mgrid[0:self.rows, 0:self.cols]
        return self.x0 + xs * self.step, self.y0 + ys * self.step

    def point(self, r: int, c: int) -> tuple[float, float]:
        """The point's coordinates, to the nanometre, as KiCad stores them: a path that ends on the edge of a pad
        stays on it (rounded to 0.1 um, a track end on a pad's rounded corner fell 5 nm off it, and the way it ended
        was trimmed as dangling)."""
        return round(self.x0 + c * self.step, 6), round(self.y0 + r * self.step, 6)

    def outside(self, shapes: list, reach: list[float]) -> np.ndarray:
        """Where the points lie farther than reach[i] + SLACK steps from every shapes[i] (boolean rows x cols)."""
        if not shapes:
            return np.ones((self.rows, self.cols), bool)
        return ~self.covered(grown(shapes, np.asarray(reach) + SLACK * self.step))

    def inside(self, shape) -> np.ndarray:
        """Where the points lie in the shape (boolean rows x cols)."""
        return self.covered([shape])

    def covered(self, shapes) -> np.ndarray:
        """Where the points lie in or on one of the polygons (boolean rows x cols), by a scanline fill: each row's
        crossings of every polygon's rings, paired in order along the row. Testing every point against the union of
        the polygons (shapely's union_all and intersects_xy) gave the same points in 3.5 times as long (400 masks of
        a c4_dxwifi_ar9271 detail stage, 39 million points), the detail stage's largest cost."""
        parts = shapely.get_parts(np.asarray(shapes, dtype=object))
        parts = parts[shapely.get_type_id(parts) == shapely.GeometryType.POLYGON]
        row, x, _, polygon, (x1, y1, x2, y2), xy = row_crossings(parts, self.y0, self.step, self.rows)
        # a polygon's crossings of one row (an even number: its rings are closed), in order, pair up as the spans
        # inside it, holes left out
        order = np.lexsort((x, row, polygon))
        x, row = x[order], row[order]
        span_row, low, high = row[0::2], x[0::2], x[1::2]
        # and the boundary the half-open rows leave out, which a row can hold exactly (a pad's top edge): the points
        # on a level edge, and the vertices
        level = y1 == y2
        on_y = np.concatenate([y1[level], xy[:, 1]])
        on_row = first_index(on_y, self.y0, self.step)
        on = (on_row >= 0) & (on_row < self.rows) & (self.y0 + on_row * self.step == on_y)
        on_low = np.concatenate([np.minimum(x1, x2)[level], xy[:, 0]])
        on_high = np.concatenate([np.maximum(x1, x2)[level], xy[:, 0]])
        span_row = np.concatenate([span_row, on_row[on]])
        low, high = np.concatenate([low, on_low[on]]), np.concatenate([high, on_high[on]])
        start = np.clip(first_index(low, self.x0, self.step), 0, self.cols)
        stop = np.clip(first_index(high, self.x0, self.step, past=True), 0, self.cols)
        # each span a +1 at its start and a -1 past its end, summed by bincount (np.add.at took five times as long)
        width, size = self.cols + 1, self.rows * (self.cols + 1)
        spans = (np.bincount(span_row * width + start, minlength=size)
                 - np.bincount(span_row * width + np.maximum(stop, start), minlength=size))
        return np.cumsum(spans.reshape(self.rows, width)[:, :-1], axis=1) > 0


_grown: dict[tuple[bytes, float], object] = {}


def grown(shapes: list, distances: np.ndarray) -> list:
    """grow_all(shapes, distances), each shape grown by each distance once: a detail stage asks for the same few
    thousand again and again (c4_pico_ice's detail joins: 8,007 different of 267,000 in 830 masks), and growing them
    took a third of the masks' time. Shapes are told apart by their WKB, which costs a sixth of growing them."""
    keys = list(zip(shapely.to_wkb(np.asarray(shapes, dtype=object)).tolist(), distances.tolist()))
    first = {k: i for i, k in enumerate(keys)}
    if len(_grown) + len(first) > GROWN_KEPT:
        _grown.clear()
    new = [(k, i) for k, i in first.items() if k not in _grown]
    if new:
        _grown.update(zip((k for k, _ in new), grow_all([shapes[i] for _, i in new], [k[1] for k, _ in new])))
    return [_grown[k] for k in keys]


def cheapest_path(open_: np.ndarray, via_open: np.ndarray, sources: np.ndarray, targets: np.ndarray, via_cost: float,
                  aim: tuple[float, float], should_stop=lambda: "",
                  price: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[int, int, int]] | None:
    """The cheapest path of (layer, row, col) points from a source to a target, all open: steps to the eight
    neighbours on a layer (1, or sqrt 2 diagonally, plus TURN where the direction changes), and from one layer to any
    other where a via may stand (via_cost). open_, sources, targets: (layers, rows, cols) booleans; via_open (rows,
    cols); aim: the (row, col) the search heads for (the nearest target), which orders it without bounding it.
    price: what entering each point ((layers, rows, cols) floats) and standing a via on each site ((rows, cols)) cost
    on top of the step (a way through other nets' copper: detail.through). It asks should_stop every STOP_EVERY
    points and gives up (None) when told to.
    A grid of COARSE_FROM points or more is searched first on cells of COARSE x COARSE points (a_star), and then
    point by point only in a band of CORRIDOR cells round the cells' path, or on the whole grid where the band
    holds no path. A way through other nets' copper floods most of a large grid, where the band holds a tenth of
    it: the priced searches of a c4_pico_ice detail stage took 28.4 s, and 4.2 s so, all but two of their 20 paths
    the same and those 0.2% dearer. A cell is open where one of its points is, so where the cells hold no path
    the points hold none either."""
    if open_.size >= COARSE_FROM:
        found = corridor(open_, via_open, sources, targets, via_cost, aim, should_stop, price)
        if found is None:
            return None
        band, (rows, cols) = found
        path = a_star(open_[:, rows, cols] & band, via_open[rows, cols] & band, sources[:, rows, cols],
                      targets[:, rows, cols], via_cost, (aim[0] - rows.start, aim[1] - cols.start), should_stop,
                      price and (price[0][:, rows, cols], price[1][rows, cols]))
        if path is not None:
            return [(l, r + rows.start, c + cols.start) for l, r, c in path]
        if should_stop():
            return None
    return a_star(open_, via_open, sources, targets, via_cost, aim, should_stop, price)


def corridor(open_: np.ndarray, via_open: np.ndarray, sources: np.ndarray, targets: np.ndarray, via_cost: float,
             aim: tuple[float, float], should_stop, price) -> tuple[np.ndarray, tuple[slice, slice]] | None:
    """The points within CORRIDOR cells of the cheapest path over cells of COARSE x COARSE points, each open (a via
    site, a source, a target) where one of its points is, at the least price of its open points: as booleans over
    the (row, column) slices of the box that holds them, and those slices; None where the cells hold no path. A
    cell's step is COARSE points long, so a via's cost and price are a COARSE-th in cell steps, and a point's price
    stays as it is (a cell is crossed in a COARSE-th of the steps)."""
    k = COARSE
    cells_open = cells(open_, np.logical_or)
    cell_price = None
    if price is not None:
        point, site = (cells(np.where(o, p, np.inf), np.minimum, np.inf)
                       for o, p in ((open_, price[0]), (via_open, price[1])))
        cell_price = (np.where(cells_open, point, 0.0), np.where(np.isfinite(site), site / k, 0.0))
    path = a_star(cells_open, cells(via_open, np.logical_or), cells(sources & open_, np.logical_or),
                  cells(targets & open_, np.logical_or), via_cost / k, (aim[0] / k, aim[1] / k), should_stop,
                  cell_price)
    if path is None:
        return None
    at = np.array(path)[:, 1:]
    low = np.maximum(at.min(0) - CORRIDOR, 0)
    high = np.minimum(at.max(0) + CORRIDOR + 1, cells_open.shape[1:])
    band = np.zeros(high - low, bool)
    for r, c in (at - low).tolist():
        band[max(r - CORRIDOR, 0):r + CORRIDOR + 1, max(c - CORRIDOR, 0):c + CORRIDOR + 1] = True
    rows, cols = (slice(lo * k, min(hi * k, n)) for lo, hi, n in zip(low, high, open_.shape[1:]))
    return np.repeat(np.repeat(band, k, 0), k, 1)[:rows.stop - rows.start, :cols.stop - cols.start], (rows, cols)


def cells(points: np.ndarray, combine, pad=False) -> np.ndarray:
    """The (..., rows, cols) points gathered in cells of COARSE x COARSE, combined over each by the ufunc `combine`
    (np.logical_or, np.minimum); the cells past the grid's last row and column padded with `pad`. Strided slices
    combined in turn: a tenth of the time of a reduction over a reshaped array's two inner axes."""
    k = COARSE
    *lead, rows, cols = points.shape
    padded = np.full((*lead, -(-rows // k) * k, -(-cols // k) * k), pad, points.dtype)
    padded[..., :rows, :cols] = points
    across = functools.reduce(combine, (padded[..., i::k] for i in range(k)))
    return functools.reduce(combine, (across[..., i::k, :] for i in range(k)))


def a_star(open_: np.ndarray, via_open: np.ndarray, sources: np.ndarray, targets: np.ndarray, via_cost: float,
           aim: tuple[float, float], should_stop=lambda: "",
           price: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[int, int, int]] | None:
    """cheapest_path point by point, by A*. A loop over points in Python: where no path exists it would visit every
    point it can reach (a million, seconds), so that case is answered first by reachable (milliseconds)."""
    if not reachable(open_, via_open, sources, targets):
        return None
    layers, rows, cols = open_.shape
    # a border of closed points round each layer, so that no step needs a bounds check; the points keep their order
    # among themselves (layer, row, column), so that equal costs are settled as without it
    rows, cols, border = rows + 2, cols + 2, ((0, 0), (1, 1), (1, 1))
    plane = rows * cols
    size = layers * plane
    # Python buffers, not NumPy arrays: the loop reads and writes single elements, which a NumPy array boxes and
    # unboxes at several times the cost (on 500 x 500 x 2 points: a search that finds its way 1.24 -> 0.78 s, one
    # that finds none 1.44 -> 1.03 s)
    flat_open, flat_via = flags(np.pad(open_, border)), flags(np.pad(via_open, 1))
    is_target = flags(np.pad(targets & open_, border))
    extra, via_extra = (None, None) if price is None else (doubles(np.pad(price[0], border)),
                                                          doubles(np.pad(price[1], 1)))
    # the octile distance to the aim of every point, as its two terms (far: the larger offset; near: sqrt 2 - 1 times
    # the smaller) and their sum, added in the order the search always added them: the same floats, the same ties
    down = np.abs(np.arange(-1, rows - 1)[:, None] - aim[0])
    across = np.abs(np.arange(-1, cols - 1)[None, :] - aim[1])
    far_terms, near_terms = np.maximum(down, across), (math.sqrt(2) - 1) * np.minimum(down, across)
    far, near, guess = [doubles(np.broadcast_to(terms, (layers, rows, cols)))
                        for terms in (far_terms, near_terms, far_terms + near_terms)]
    moves = [(k, dr * cols + dc, 1.0 if dr == 0 or dc == 0 else math.sqrt(2)) for k, (dr, dc) in enumerate(MOVES)]
    cost = array("d", [math.inf]) * size
    parent = array("q", [-1]) * size
    heading = array("b", [-1]) * size               # the move that reached the point (-1: a source or a via)
    closed = bytearray(size)                        # the guess is consistent: a point's first visit is its best
    heap = []
    for v in np.flatnonzero(np.pad(sources & open_, border).ravel()).tolist():
        cost[v] = 0.0
        heap.append((guess[v], v))
    heapq.heapify(heap)
    popped = 0
    while heap:
        _, v = heapq.heappop(heap)
        if closed[v]:
            continue
        closed[v] = 1
        popped += 1
        if popped % STOP_EVERY == 0 and should_stop():
            return None
        if is_target[v]:
            return [(l, r - 1, c - 1) for l, r, c in unwind(parent, v, rows, cols)]
        base = cost[v]
        came = heading[v]
        for k, offset, length in moves:
            u = v + offset
            if not flat_open[u] or closed[u]:
                continue
            g = base + length + (TURN if came >= 0 and came != k else 0.0)
            if extra is not None:
                g += extra[u]
            if g < cost[u]:
                cost[u], parent[u], heading[u] = g, v, k
                heapq.heappush(heap, (g + far[u] + near[u], u))
        l, rest = divmod(v, plane)
        if flat_via[rest]:
            for m in range(layers):
                u = m * plane + rest
                through = base + via_cost if extra is None else base + via_cost + via_extra[rest] + extra[u]
                if m != l and flat_open[u] and through < cost[u]:
                    cost[u], parent[u], heading[u] = through, v, -1
                    heapq.heappush(heap, (through + guess[u], u))
    return None


def reachable(open_: np.ndarray, via_open: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> bool:
    """Whether an open target joins an open source by cheapest_path's moves (to the eight neighbours on a layer, and
    between layers at a via site where both points are open), found by runs of open points along each row: two runs
    of one layer touch where their rows are adjacent and their columns come within one of each other."""
    layers, rows, cols = open_.shape
    lines = open_.reshape(layers * rows, cols)
    change = np.diff(np.pad(lines, ((0, 0), (1, 1))).view(np.int8), axis=1)
    line, start = np.nonzero(change == 1)        # each run: its line (layer * rows + row), first column, end (past)
    end = np.nonzero(change == -1)[1]
    if not line.size:
        return False
    width = cols + 2                             # runs keyed in (line, column) order, lines apart
    run_at = np.repeat(np.arange(line.size), end - start)         # each open point's run, in flat order
    # the runs of the row above that touch each run: a range of them, found by two binary searches
    below = np.flatnonzero(line % rows > 0)
    lo = np.searchsorted(line * width + end, (line[below] - 1) * width + start[below], "left")
    hi = np.searchsorted(line * width + start, (line[below] - 1) * width + end[below], "right")
    count = np.maximum(hi - lo, 0)
    a, b = np.repeat(below, count), ranges(lo, count)
    open_at = np.flatnonzero(lines.ravel())
    sites = np.flatnonzero(via_open.ravel())
    if sites.size and layers > 1:
        # a via site joins the runs of its open points on every layer to that on the first layer open there
        run_of = np.full(open_.size, -1)
        run_of[open_at] = run_at
        at = run_of[np.arange(layers)[:, None] * rows * cols + sites[None, :]]
        first = np.broadcast_to(at[np.argmax(at >= 0, axis=0), np.arange(sites.size)], at.shape)
        a, b = np.concatenate([a, at[at >= 0]]), np.concatenate([b, first[at >= 0]])
    group = merge(np.arange(line.size), a, b)
    src = run_at[np.searchsorted(open_at, np.flatnonzero((sources & open_).ravel()))]
    tgt = run_at[np.searchsorted(open_at, np.flatnonzero((targets & open_).ravel()))]
    return bool(np.isin(group[tgt], group[src]).any())


def flags(values: np.ndarray) -> bytearray:
    """The values, flat, as a buffer of bytes, 1 where true (see cheapest_path)."""
    return bytearray(np.ascontiguousarray(values, dtype=bool).tobytes())


def doubles(values: np.ndarray) -> array:
    """The values, flat, as a buffer of doubles (see cheapest_path)."""
    out = array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def unwind(parent, v: int, rows: int, cols: int) -> list[tuple[int, int, int]]:
    path = []
    while v >= 0:
        l, rest = divmod(v, rows * cols)
        path.append((l, *divmod(rest, cols)))
        v = int(parent[v])
    return path[::-1]


def runs(path: list[tuple[int, int, int]]) -> tuple[list[tuple[int, list[tuple[int, int]]]], list[tuple[int, int]]]:
    """The path as (layer, corner points) runs, its collinear steps merged, and the (row, col) of each via."""
    out, vias = [], []
    start = 0
    for k in range(1, len(path) + 1):
        if k == len(path) or path[k][0] != path[k - 1][0]:
            points = [p[1:] for p in path[start:k]]
            corners = [points[0]] + [points[i] for i in range(1, len(points) - 1)
                                     if np.subtract(points[i], points[i - 1]).tolist()
                                     != np.subtract(points[i + 1], points[i]).tolist()] + [points[-1]]
            out.append((path[start][0], corners if len(points) > 1 else [points[0]]))
            if k < len(path):
                vias.append(path[k][1:])
            start = k
    return out, vias
