"""The search engines against scipy's Dijkstra, and against each other: exact distances, identical paths."""
import numpy as np
import pytest

from autorouter.search import BLOCKED, ArrayCosts, RoiRequest, SearchStopped
from autorouter.search.cpu import CpuEngine
from autorouter.search.sweep import Reach
from search_cases import blocked_source_requests, random_request, reference

METHODS = ["sweep", "near_far"]


def random_batch(seed, count=24, noisy=False):
    rng = np.random.default_rng(seed)
    return [random_request(rng, (int(rng.integers(1, 4)), int(rng.integers(1, 30)), int(rng.integers(1, 30))),
                           blocked=0.15, n_src=int(rng.integers(1, 5)), n_sink=int(rng.integers(1, 5)), noisy=noisy)
            for _ in range(count)]


def path_cost(req: RoiRequest, path) -> int:
    L, R, C = req.shape
    total = int(req.source_cost[list(req.sources).index(path[0])])
    for a, b in zip(path[:-1], path[1:]):
        step = abs(int(b) - int(a))
        cost = req.cost_via if step == R * C else req.cost_row if step == C else req.cost_col
        assert step in (1, C, R * C)
        total += int(cost.ravel()[b])
    return total + int(req.sink_cost[list(req.sinks).index(path[-1])])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("noisy", [False, True])
def test_exact_against_dijkstra(method, noisy):
    batch = random_batch(7 + noisy, noisy=noisy)
    results = CpuEngine(delta=64, method=method).search(batch, keep_dist=True)
    for req, res in zip(batch, results):
        d = reference(req)
        totals = np.where(np.isfinite(d[req.sinks]), d[req.sinks] + req.sink_cost, np.inf)
        if np.isinf(totals.min()):
            assert res.path is None
            continue
        assert res.cost == totals.min()
        assert path_cost(req, res.path) == res.cost          # the path really costs what is claimed
        settled = (res.dist >= 0) & (res.dist <= totals.min())
        assert np.array_equal(res.dist[settled], d[settled])


@pytest.mark.parametrize("seed", range(4))
def test_a_search_for_paths_only_finds_the_exact_searchs_paths_in_fewer_sweeps(seed):
    """Asked for paths only, the sweeps let go of the nodes past the best sink found so far: the same best sink,
    total and path as with every distance settled."""
    batch = random_batch(200 + seed, count=40, noisy=seed % 2 == 1)
    engine = CpuEngine(64, "sweep")
    exact = [engine.search([req], keep_dist=True)[0] for req in batch]
    paths = [engine.search([req])[0] for req in batch]
    for x, y in zip(exact, paths):
        assert (x.path is None) == (y.path is None)
        if x.path is not None:
            assert np.array_equal(x.path, y.path) and x.cost == y.cost and x.sink == y.sink
    assert sum(y.rounds for y in paths) < sum(x.rounds for x in exact)


@pytest.mark.parametrize("seed", range(4))
def test_a_search_for_paths_only_keeps_to_the_box_its_best_sink_allows(seed):
    """Routing-like ROIs: sources and sinks close together in a large box. Once a sink is reached, the sweeps keep to
    the rows and columns a path at its total can pass (Reach): the same best sink, total and path as with every
    distance settled, and the box shrinks on these ROIs."""
    rng = np.random.default_rng(300 + seed)
    engine, shrunk = CpuEngine(64, "sweep"), 0
    for _ in range(12):
        shape = (int(rng.integers(1, 4)), 60, 80)
        req = random_request(rng, shape, blocked=0.3, noisy=seed % 2 == 1)
        r0, c0 = int(rng.integers(0, 48)), int(rng.integers(0, 68))
        near = [np.ravel_multi_index((rng.integers(0, shape[0], k), rng.integers(r0, r0 + 12, k),
                                      rng.integers(c0, c0 + 12, k)), shape) for k in (3, 2)]
        req = RoiRequest(shape, req.costs, near[0], req.source_cost[:3], near[1], req.sink_cost[:2])
        exact, paths = engine.search([req], keep_dist=True)[0], engine.search([req])[0]
        assert (exact.path is None) == (paths.path is None)
        if exact.path is not None:
            assert np.array_equal(exact.path, paths.path) and exact.cost == paths.cost and exact.sink == paths.sink
            full = (slice(None), slice(0, shape[1]), slice(0, shape[2]))
            shrunk += Reach(req).box(exact.cost, full) != full
    assert shrunk


@pytest.mark.parametrize("seed", range(4))
def test_methods_return_identical_paths(seed):
    batch = random_batch(100 + seed, noisy=seed % 2 == 1)
    a = CpuEngine(64, "sweep").search(batch)
    b = CpuEngine(64, "near_far").search(batch)
    for x, y in zip(a, b):
        assert (x.path is None) == (y.path is None)
        if x.path is not None:
            assert np.array_equal(x.path, y.path) and x.cost == y.cost and x.sink == y.sink


@pytest.mark.parametrize("method", METHODS)
def test_stops_only_when_every_sink_is_settled(method):
    # a sink reached first by a short expensive edge must lose to a longer cheap path
    cost = np.full((1, 1, 5), 1, np.int64)
    cost[0, 0, 1] = 100
    req = RoiRequest((1, 1, 5), ArrayCosts(cost, cost.copy(), np.full((1, 1, 5), BLOCKED)), np.array([0]), np.array([0]),
                     np.array([1, 4]), np.array([0, 0]))
    res = CpuEngine(4, method).search([req])[0]
    # cheapest total: 0 -> 4 along the line costs 100 + 1 + 1 + 1 = 103, sink 1 costs 100: sink 1 wins
    assert res.sink == 0 and res.cost == 100 and list(res.path) == [0, 1]


@pytest.mark.parametrize("method", METHODS)
def test_unreachable_sink(method):
    cost = np.full((1, 1, 3), 1, np.int64)
    cost[0, 0, 1] = BLOCKED
    req = RoiRequest((1, 1, 3), ArrayCosts(cost, cost.copy(), cost.copy()), np.array([0]), np.array([0]), np.array([2]),
                     np.array([0]))
    assert CpuEngine(4, method).search([req])[0].path is None


def test_kernels_define_none_of_the_shared_constants():
    """The kernels get BLOCKED, COST_CAP and the rest from search/constants.py (cuda_defines), so that each value is
    written once: a #define of one in a .cu file would be a second copy that could drift."""
    import re
    from pathlib import Path
    from autorouter.search import constants
    shared = {name for name in vars(constants) if name.isupper()} | {"FREE"}
    package = Path(constants.__file__).parents[1]
    kernels = [*package.glob("**/*.cu"), *package.glob("**/*.cuh")]
    assert len(kernels) >= 4
    for path in kernels:
        defined = set(re.findall(r"^\s*#\s*define\s+(\w+)", path.read_text(), re.M))
        assert not defined & shared, (path.name, defined & shared)


def test_cuda_defines_spell_each_constant_once():
    from autorouter.search.constants import BLOCKED, cuda_defines
    assert cuda_defines("BLOCKED", "NO_PARENT", FREE=-1) == (f"-DBLOCKED={int(BLOCKED)}LL", "-DNO_PARENT=4294967295LL",
                                                            "-DFREE=(-1)")


@pytest.mark.parametrize("method", METHODS)
def test_a_blocked_source_is_no_source(method):
    beside, alone = CpuEngine(4, method).search(list(blocked_source_requests()), keep_dist=True)
    assert list(beside.path) == [0, 1, 2, 3, 4, 5] and beside.cost == 5 and beside.sink == 0
    assert list(beside.dist) == [0, 1, 2, 3, 4, 5]
    assert alone.path is None and (alone.dist == -1).all()


@pytest.mark.parametrize("method", METHODS)
def test_blocked_sources_exact_against_dijkstra(method):
    rng = np.random.default_rng(31)
    batch = [random_request(rng, (int(rng.integers(1, 4)), int(rng.integers(1, 20)), int(rng.integers(1, 20))),
                            n_src=int(rng.integers(1, 5)), blocked_src=0.5, noisy=True) for _ in range(32)]
    assert sum((r.source_cost >= BLOCKED).all() for r in batch) >= 3        # some searches have no live source
    for req, res in zip(batch, CpuEngine(64, method).search(batch, keep_dist=True)):
        d = reference(req)
        totals = np.where(np.isfinite(d[req.sinks]), d[req.sinks] + req.sink_cost, np.inf)
        if np.isinf(totals.min()):
            assert res.path is None
            continue
        assert res.cost == totals.min() and path_cost(req, res.path) == res.cost
        assert req.source_cost[list(req.sources).index(res.path[0])] < BLOCKED


@pytest.mark.parametrize("method", ["sweep", "near_far"])
def test_a_cpu_search_gives_up_between_rounds_when_told_to_stop(method):
    """A batch of a large board's ROIs takes the CPU a second: Ctrl-C must not wait for it (the GPU's take ms)."""
    req = random_request(np.random.default_rng(3), (2, 40, 40), blocked=0.2)
    calls = []

    def should_stop():
        calls.append(1)
        return "interrupted (SIGINT)" if len(calls) > 1 else ""

    with pytest.raises(SearchStopped, match="SIGINT"):
        CpuEngine(64, method).search([req], should_stop=should_stop)
    engine = CpuEngine(64, method)
    assert engine.search([req], should_stop=lambda: "")[0].cost == engine.search([req])[0].cost


def test_rois_of_very_different_sizes_are_searched_in_separate_boxes():
    """The GPU engine pads a launch's ROIs into one box: a small ROI beside a large one goes to a launch of its own,
    unless the box would still hold no more than twice the nodes its ROIs have."""
    from types import SimpleNamespace
    from autorouter.search.gpu import similar_sizes
    shapes = [(4, 100, 100), (4, 10, 10), (4, 90, 95), (2, 12, 9), (2, 10, 10)]
    groups = similar_sizes([SimpleNamespace(shape=s) for s in shapes])
    assert sorted(k for g in groups for k in g) == list(range(len(shapes)))
    for g in groups:
        box = np.max([shapes[k] for k in g], axis=0)
        assert np.prod(box) * len(g) <= 2 * sum(np.prod(shapes[k]) for k in g)
    assert groups[0][:2] == [0, 2] and [3, 4] in groups          # the large two together, the small two apart
