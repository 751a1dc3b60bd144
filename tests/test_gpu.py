"""The GPU engine returns exactly the CPU engine's distances and paths (fresh random batches each run; the seed is
printed on failure), and the router writes byte-identical boards with either backend. Skipped without a GPU."""
import os
import subprocess
import sys

import numpy as np
import pytest

from autorouter.search.cpu import CpuEngine
from conftest import BOARDS, needs_shared
from search_cases import blocked_source_requests, random_request

try:
    from autorouter.search.gpu import GpuEngine, gpu_available
    HAVE_GPU, WHY = gpu_available()
except ImportError as e:
    HAVE_GPU, WHY = False, str(e)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason=f"no GPU: {WHY}")]


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little")


def assert_same(cpu, gpu, seed):
    for i, (a, b) in enumerate(zip(cpu, gpu)):
        assert (a.path is None) == (b.path is None), (seed, i)
        if a.path is not None:
            assert a.cost == b.cost and a.sink == b.sink, (seed, i)
            assert np.array_equal(a.path, b.path), (seed, i)
        if a.dist is not None:
            assert np.array_equal(a.dist, b.dist), (seed, i)


SHAPES = [(1, (1, 1, 1)), (1, (1, 1, 7)), (3, (2, 5, 9)), (64, (4, 32, 32)), (512, (2, 12, 12)), (8, (8, 64, 64)),
          (1, (8, 128, 1000))]


@pytest.mark.parametrize("k, shape", SHAPES)
@pytest.mark.parametrize("noisy", [False, True])
@pytest.mark.parametrize("paths_only", [False, True])
def test_gpu_equals_cpu_on_random_batches(k, shape, noisy, paths_only):
    """paths_only: both engines cut their sweeps off past each ROI's best sink, and must still agree."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    batch = []
    for _ in range(k):
        dims = tuple(int(rng.integers(max(1, s // 2), s + 1)) for s in shape)   # ROIs of different sizes
        batch.append(random_request(rng, dims, blocked=float(rng.uniform(0, 0.3)), n_src=int(rng.integers(1, 6)),
                                    n_sink=int(rng.integers(1, 6)), noisy=noisy))
    keep = not paths_only and k * int(np.prod(shape)) <= 2_000_000
    assert_same(CpuEngine(64).search(batch, keep_dist=keep), GpuEngine(64).search(batch, keep_dist=keep), seed)


def failing_solve(engine, error, when):
    """engine.solve raising `error` for batches where when(K) holds."""
    solve = engine.solve
    def patched(batch, keep_dist=False):
        if when(len(batch.requests)):
            raise error
        return solve(batch, keep_dist)
    engine.solve = patched
    return engine


def test_out_of_memory_splits_then_falls_back_with_the_same_routes():
    import cupy
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    batch = [random_request(rng, (2, 12, 20)) for _ in range(9)]
    cpu = CpuEngine(64).search(batch)
    oom = cupy.cuda.memory.OutOfMemoryError(1 << 40, 0, 0)
    split = failing_solve(GpuEngine(64), oom, lambda k: k > 2)
    assert_same(cpu, split.search(batch), seed)
    assert split.splits > 0 and split.on_cpu == 0 and "split" in split.report()
    none_fit = failing_solve(GpuEngine(64), oom, lambda k: True)
    assert_same(cpu, none_fit.search(batch), seed)
    assert none_fit.on_cpu == len(batch)


def test_a_cuda_error_hands_the_rest_to_the_cpu():
    import cupy
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    batch = [random_request(rng, (2, 12, 20)) for _ in range(4)]
    error = cupy.cuda.runtime.CUDARuntimeError(700)          # cudaErrorIllegalAddress
    engine = failing_solve(GpuEngine(64), error, lambda k: True)
    assert_same(CpuEngine(64).search(batch), engine.search(batch), seed)
    assert_same(CpuEngine(64).search(batch[:1]), engine.search(batch[:1]), seed)
    assert engine.fault and engine.on_cpu == 5 and "GPU error" in engine.report()



class UploadsHostArrays:
    """A DeviceCostBuilder that pads and uploads the ROIs' own arrays, counting its tables."""

    def __init__(self):
        self.tables = 0

    def table(self, costs):
        self.tables += 1
        return np.array([len(costs)], np.int64)

    def fill(self, table, costs, shape):
        import cupy
        from types import SimpleNamespace
        from autorouter.search.gpu import padded_costs
        assert int(table[0]) == len(costs)                  # the table came up with the batch's small inputs
        inner = [SimpleNamespace(shape=c.inner.col.shape, costs=c.inner) for c in costs]
        return tuple(cupy.asarray(padded_costs(inner, i, shape)) for i in range(3))


class BuiltOnTheDevice:
    """RoiCosts that a builder makes on the device; their host arrays must never be asked for."""

    def __init__(self, inner, device):
        self.inner, self.device = inner, device

    def arrays(self):
        raise AssertionError("the GPU engine read host arrays of costs its builder makes on the device")


@pytest.mark.parametrize("method", ["sweep", "near_far"])
def test_costs_with_a_device_builder_are_built_there(method):
    from dataclasses import replace
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    batch = [random_request(rng, (2, 12, 20), n_src=int(rng.integers(1, 6))) for _ in range(5)]
    builder = UploadsHostArrays()
    there = [replace(r, costs=BuiltOnTheDevice(r.costs, builder)) for r in batch]
    assert_same(CpuEngine(64).search(batch), GpuEngine(64, method).search(there), seed)
    assert builder.tables == 1


@pytest.mark.parametrize("wall", [0, 1, 3])
def test_costs_built_on_the_gpu_equal_the_hosts(wall):
    from types import SimpleNamespace
    from autorouter.config import RouterConfig
    from autorouter.lattice.grid import make_lattice
    from autorouter.pathfinder.congestion import Occupancy
    from autorouter.pathfinder.costs import CostSnapshot
    from autorouter.pathfinder.device_costs import DeviceCosts
    from autorouter.search.gpu import padded_costs
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    lat = make_lattice((0, 0, 16, 12), ["F.Cu", "In1.Cu", "In2.Cu", "B.Cu"], 0.2)
    occ = Occupancy(lat)
    occ.track[:] = rng.integers(0, 4, occ.track.size)
    occ.via[:] = rng.integers(0, 3, occ.via.size)
    for _ in range(5):                                 # history as PathFinder accumulates it, in float32
        occ.hist_track += np.float32(0.4) * rng.integers(0, 3, occ.track.size).astype(np.float32)
        occ.hist_via += np.float32(0.4) * rng.integers(0, 3, occ.via.size).astype(np.float32)
    occ.rewritten()
    profiles = [SimpleNamespace(track_owner=rng.choice([-1, -1, -1, -2, 3, 7], lat.shape).astype(np.int32),
                                via_owner=rng.choice([-1, -1, -2, 3, 7], (lat.rows, lat.cols)).astype(np.int32))
                for _ in range(2)]
    snap = CostSnapshot(lat, occ, 0.5 * 1.6 ** int(rng.integers(0, 12)), RouterConfig(), wall, DeviceCosts(occ))
    windows = []
    for k in range(9):
        r0, c0 = int(rng.integers(0, lat.rows - 5)), int(rng.integers(0, lat.cols - 5))
        rows = slice(r0, int(rng.integers(r0 + 1, lat.rows + 1)))
        cols = slice(c0, int(rng.integers(c0 + 1, lat.cols + 1)))
        task = SimpleNamespace(net=int(rng.choice([3, 7, 9])), profile=profiles[k % 2])
        own = rng.choice(lat.plane, int(rng.integers(0, 40)), replace=False).astype(np.int64)
        # every other window searches a net whose route the occupancy still holds (batch_overlap)
        route = SimpleNamespace(cover_track=np.unique(rng.choice(lat.size, 60)), cover_via=np.unique(
            rng.choice(lat.plane, 20))) if k % 2 else None
        windows.append(snap.window(task, rows, cols, own, float(rng.choice([0.6, 0.75, 0.8])), route))
    box = (len(lat.layers), max(w.rows.stop - w.rows.start for w in windows),
           max(w.cols.stop - w.cols.start for w in windows))
    requests = [SimpleNamespace(shape=(len(lat.layers), w.rows.stop - w.rows.start, w.cols.stop - w.cols.start),
                                costs=w) for w in windows]
    import cupy
    table = cupy.asarray(snap.device.table(windows))
    on_gpu = snap.device.fill(table, windows, (len(windows),) + box)
    for which in range(3):
        assert np.array_equal(on_gpu[which].get(), padded_costs(requests, which, (len(windows),) + box)), seed


def test_the_devices_occupancy_follows_the_hosts():
    from autorouter.lattice.grid import make_lattice
    from autorouter.pathfinder.congestion import Occupancy
    from autorouter.pathfinder.device_costs import DeviceCosts
    from test_pathfinder import random_changes
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    occ = Occupancy(make_lattice((0, 0, 16, 12), ["F.Cu", "In1.Cu", "In2.Cu", "B.Cu"], 0.2))
    device = DeviceCosts(occ)
    for _ in range(20):
        random_changes(occ, rng, int(rng.integers(1, 6)))
        track, via = device.occupancy()[:2]
        assert np.array_equal(track.get(), occ.track) and np.array_equal(via.get(), occ.via), seed


@pytest.mark.parametrize("k, shape", SHAPES[:-1])
def test_gpu_near_far_equals_cpu(k, shape):
    """Near-far stops once every sink is settled: paths, sinks and costs match, and the distances of the nodes no
    farther than the chosen sink (settled by then)."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    batch = [random_request(rng, tuple(int(rng.integers(max(1, s // 2), s + 1)) for s in shape),
                            blocked=float(rng.uniform(0, 0.3)), n_src=int(rng.integers(1, 6)),
                            n_sink=int(rng.integers(1, 6)), noisy=bool(rng.integers(2))) for _ in range(k)]
    cpu = CpuEngine(64).search(batch, keep_dist=True)
    gpu = GpuEngine(64, "near_far").search(batch, keep_dist=True)
    for i, (a, b) in enumerate(zip(cpu, gpu)):
        assert (a.path is None) == (b.path is None), (seed, i)
        if a.path is not None:
            assert a.cost == b.cost and a.sink == b.sink and np.array_equal(a.path, b.path), (seed, i)
            reached = a.cost - batch[i].sink_cost[a.sink]                 # the chosen sink's distance
            settled = (a.dist >= 0) & (a.dist <= reached)
            assert np.array_equal(a.dist[settled], b.dist[settled]), (seed, i)



@pytest.mark.parametrize("method", ["sweep", "near_far"])
def test_gpu_discards_blocked_sources_as_the_cpu_does(method):
    """Strict repair prices a portal inside another net's cover at BLOCKED: the kernels must not seed it (the CPU
    engine drops it), or a search with no other way out finds a path the CPU does not."""
    seed = fresh_seed()
    rng = np.random.default_rng(seed)
    fixed = list(blocked_source_requests())
    batch = fixed + [random_request(rng, tuple(int(rng.integers(1, s + 1)) for s in (3, 24, 24)),
                                    blocked=float(rng.uniform(0, 0.3)), n_src=int(rng.integers(1, 6)),
                                    n_sink=int(rng.integers(1, 6)), noisy=bool(rng.integers(2)), blocked_src=0.5)
                     for _ in range(62)]
    exact = method == "sweep"             # near-far settles only the nodes up to the chosen sink
    cpu = CpuEngine(64).search(batch, keep_dist=exact)
    gpu = GpuEngine(64, method).search(batch, keep_dist=exact)
    assert list(gpu[0].path) == [0, 1, 2, 3, 4, 5] and gpu[0].cost == 5 and gpu[1].path is None
    assert_same(cpu, gpu, seed)


@needs_shared
@pytest.mark.parametrize("name", ["k10_tastexx", "k9_atomic14_devboard_unrouted"])
def test_route_output_identical_across_backends(name, tmp_path):
    outs = []
    for backend in ("cpu", "gpu"):
        out = tmp_path / f"{backend}.kicad_pcb"
        proc = subprocess.run([sys.executable, "-m", "autorouter", "route", str(BOARDS / f"{name}.kicad_pcb"),
                               "-o", str(out), "-q", "--backend", backend], capture_output=True, text=True)
        assert proc.returncode in (0, 1), proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
