"""Borůvka: the minimum spanning tree's weight, determinism under ties, and the connection order."""
import numpy as np
import pytest

from autorouter.mst import boruvka, complete_edges, connection_order, dense_tree


def prim_weight(n, u, v, w) -> int:
    full = np.full((n, n), np.iinfo(np.int64).max)
    full[u, v] = w
    full[v, u] = w
    seen = np.zeros(n, bool)
    seen[0] = True
    best = full[0].copy()
    total = 0
    for _ in range(n - 1):
        best[seen] = np.iinfo(np.int64).max
        k = int(np.argmin(best))
        total += int(best[k])
        seen[k] = True
        best = np.minimum(best, full[k])
    return total


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 200])
def test_tree_is_minimum(n):
    rng = np.random.default_rng(n)
    points = np.round(rng.random((n, 2)) * 30, 1)        # rounding makes many equal weights
    u, v, w = complete_edges(points)
    tree = boruvka(n, u, v, w)
    assert len(tree) == max(0, n - 1)
    if n > 1:
        assert w[tree].sum() == prim_weight(n, u, v, w)


def test_ties_break_by_edge_index():
    # a square: four equal sides; the tree must be the same every time, the lowest-index edges
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    u, v, w = complete_edges(points)
    first = boruvka(4, u, v, w)
    for _ in range(5):
        assert np.array_equal(boruvka(4, u, v, w), first)
    assert list(zip(u[first], v[first])) == [(0, 1), (0, 3), (1, 2)]


def test_pins_of_several_pads_use_their_nearest_pads():
    points = np.array([[0, 0], [10, 0], [11, 0], [30, 0]], float)
    labels = np.array([0, 1, 1, 2])
    u, v, w = complete_edges(points, labels)
    assert dict(zip(zip(u.tolist(), v.tolist()), w.tolist()))[(1, 2)] == 19000


def test_connection_order_is_breadth_first_from_root():
    u, v = np.array([0, 1, 1]), np.array([1, 2, 3])
    assert connection_order(4, u, v, np.arange(3)) == [0, 1, 2, 3]


@pytest.mark.parametrize("n", [2, 3, 7, 40, 300])
def test_dense_tree_is_boruvkas_tree(n):
    rng = np.random.default_rng(100 + n)
    for scale in (30, 3):                           # coarse coordinates: many equal weights, broken by edge index
        points = np.round(rng.random((2 * n, 2)) * scale, 1)
        labels = np.sort(rng.integers(0, n, 2 * n))
        labels = np.unique(labels, return_inverse=True)[1]       # pins of one or more pads
        m = int(labels.max()) + 1
        u, v, w = complete_edges(points, labels)
        assert np.array_equal(dense_tree(m, u, v, w), boruvka(m, u, v, w))


def test_dense_tree_of_a_graph_not_complete_is_boruvkas():
    u, v, w = np.array([0, 1]), np.array([1, 2]), np.array([5, 5])
    assert np.array_equal(dense_tree(4, u, v, w), boruvka(4, u, v, w))
