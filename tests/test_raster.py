"""Rasterising many shapes at once gives the nodes, and the owners, that stamping them one at a time gives."""
import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon, box

from autorouter.board.geometry import circle, grow, grow_all
from autorouter.lattice import make_lattice
from autorouter.lattice import raster
from autorouter.lattice.raster import FREE, HARD, claim, nodes_inside


def one_at_a_time(lattice, shape):
    """The nodes inside one shape, as stamping did before: its window, then contains_xy (none in an empty one)."""
    if shape.is_empty:
        return np.zeros(0, np.int64)
    rows, cols = lattice.window(*shape.bounds)
    rr, cc = np.mgrid[rows, cols]
    x, y = lattice.xy(rr, cc)
    return np.sort((rr * lattice.cols + cc)[shapely.contains_xy(shape, x, y)])


def stamp_one(owner, nodes, who):
    """A claim as stamping merged it, one shape at a time."""
    cur = owner[nodes]
    owner[nodes] = HARD if who == HARD else np.where((cur == FREE) | (cur == who), who, HARD)


def shapes(rng, n):
    out = []
    for _ in range(n):
        x, y = rng.uniform(-3, 23, 2)          # some off the lattice, partly or wholly
        kind = rng.integers(4)
        if kind == 0:
            out.append(circle(x, y, rng.uniform(0.05, 2)))
        elif kind == 1:
            out.append(box(x, y, x + rng.uniform(0, 3), y + rng.uniform(0, 1)))
        elif kind == 2:
            out.append(Polygon(rng.uniform(-1, 1, (5, 2)) + (x, y)).buffer(0))
        else:
            out.append(Polygon())
    return out


@pytest.mark.parametrize("pairs_per_call", [1, 50, 1 << 22])
def test_nodes_inside_match_one_shape_at_a_time(monkeypatch, pairs_per_call):
    monkeypatch.setattr(raster, "PAIRS_PER_CALL", pairs_per_call)
    rng = np.random.default_rng(12)
    lattice = make_lattice((0, 0, 20, 10), ["F.Cu", "B.Cu"], 0.1)
    found = shapes(rng, 200) + [box(-5, -5, 30, 30)]          # one larger than the lattice
    which, nodes = nodes_inside(lattice, found)
    for k, shape in enumerate(found):
        assert np.array_equal(np.sort(nodes[which == k]), one_at_a_time(lattice, shape)), k


def test_windows_match_window():
    rng = np.random.default_rng(3)
    lattice = make_lattice((0, 0, 20, 10), ["F.Cu"], 0.13)
    bounds = np.sort(rng.uniform(-4, 24, (500, 2, 2)), axis=1).reshape(500, 4)[:, [0, 2, 1, 3]]
    bounds[:50] = np.round(bounds[:50] / 0.13) * 0.13          # on lattice lines, where rounding decides
    r0, r1, c0, c1 = lattice.windows(bounds)
    for k, b in enumerate(bounds):
        rows, cols = lattice.window(*b)
        assert (rows.start, rows.stop, cols.start, cols.stop) == (r0[k], r1[k], c0[k], c1[k])


def test_claims_in_any_order_give_what_stamping_in_order_gives():
    rng = np.random.default_rng(7)
    for trial in range(20):
        size = 30
        nodes = rng.integers(0, size, 200)
        who = rng.choice([HARD, 1, 2, 3], 200)
        start = np.where(rng.random(size) < 0.3, rng.choice([HARD, 1, 2], size), FREE).astype(np.int32)
        expected = start.copy()
        for node, w in zip(nodes, who):          # one claim at a time, in order
            stamp_one(expected, np.array([node]), w)
        got = start.copy()
        order = rng.permutation(200)
        claim(got, nodes[order], who[order])
        assert np.array_equal(got, expected), trial


def test_grow_all_is_grow_of_each():
    rng = np.random.default_rng(5)
    found = [s for s in shapes(rng, 60)]
    distances = rng.uniform(-0.2, 1.0, len(found))
    grown = grow_all(found, distances)
    for shape, d, g in zip(found, distances, grown):
        assert shapely.equals_exact(g, grow(shape, float(d)), tolerance=0.0)
