"""The GPU engine: the CPU engine's two methods as CUDA kernels, K ROIs per launch, with the same results.

- "sweep" (the default, kernels/sweep.cu): min-plus line scans to the fixed point, as sweep.py;
- "near_far" (kernels/near_far.cu): near-far rounds on (distance, parent) keys lowered by a 64-bit atomicMin.

A batch's ROIs of similar sizes are padded into one (K, L, H, W) box and searched by one launch of a persistent
cooperative kernel: its rounds, and the decision to stop, stay on the device, with grid-wide syncs between phases
(ROIs of very different sizes go to separate launches, or the small ones would be searched at the large one's size).
It ends by picking each ROI's best sink and walking its path back, taking at each node the lowest-index predecessor on
a shortest path. The host uploads the batch's small inputs in one copy and waits twice: for the path lengths, then
for the paths. Costs that can build themselves on the device (RoiCosts with a DeviceCostBuilder) never touch the
host. CuPy is imported lazily.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import RoiRequest, RoiResult
from .constants import BLOCKED, BLOCKED32, UNREACHED, cuda_defines

THREADS = 256
PADDING_WASTE = 2.0     # the most nodes a batch's padded box may hold per node of its ROIs (similar_sizes)


def gpu_available() -> tuple[bool, str]:
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed (pip install '.[gpu]')"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device"
    except Exception as e:  # the driver's own words
        return False, f"no usable CUDA device ({e})"
    return True, ""


@functools.lru_cache(maxsize=None)
def search_kernel(device: int, method: str):
    """The persistent kernel of a method ("sweep" or "near_far", each in kernels/<method>.cu), compiled once per
    device, and the most blocks a cooperative launch of it may have: as many as the device runs at once."""
    import cupy
    folder = Path(__file__).parent / "kernels"
    options = ("-std=c++17", f"-I{folder}") + cuda_defines("BLOCKED", "BLOCKED32", "UNREACHED", "NO_PARENT")
    module = cupy.RawModule(code=(folder / f"{method}.cu").read_text(), options=options,
                            enable_cooperative_groups=True)
    fn = module.get_function(method)
    sms = cupy.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"]
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, THREADS, 0)
    return fn, sms * max(1, per_sm)


def blocks(n: int) -> tuple[int]:
    return ((int(n) + THREADS - 1) // THREADS,)


class GpuEngine:
    name = "gpu"

    def __init__(self, delta: int = 0, method: str = "sweep"):
        self.delta = delta
        self.method = method
        self.splits = 0            # batches split in two because device memory ran out
        self.on_cpu = 0            # searches handed to the CPU engine
        self.fault = ""            # a CUDA error that ended the GPU's part: everything after runs on the CPU

    @property
    def xp(self):
        """CuPy: the engine searches in device memory, where the pathfinder may keep its prices."""
        import cupy
        return cupy

    @property
    def device_name(self) -> str:
        """The device, for the live report: 'NVIDIA H100 80GB HBM3 (device 0)'."""
        try:
            import cupy
            device = cupy.cuda.Device().id
            name = cupy.cuda.runtime.getDeviceProperties(device)["name"]
            return f"{name.decode() if isinstance(name, bytes) else name} (device {device})"
        except Exception:
            return "CUDA device"

    def search(self, requests: list[RoiRequest], keep_dist: bool = False, should_stop=None) -> list[RoiResult]:
        """The requests go to the device in groups of similar sizes (similar_sizes), each padded into one box. Out
        of device memory, a group is split in halves, and a single ROI that still does not fit goes to the CPU
        engine; any other CUDA error sends this group and every later one to the CPU. The routes are the same. A
        search on the device takes milliseconds: only one on the CPU looks at should_stop."""
        results: list = [None] * len(requests)
        for group in similar_sizes(requests):
            for k, result in zip(group, self.search_padded([requests[k] for k in group], keep_dist, should_stop)):
                results[k] = result
        return results

    def search_padded(self, requests: list[RoiRequest], keep_dist: bool = False, should_stop=None) -> list[RoiResult]:
        """search() of requests that share one padded box."""
        if not requests:
            return []
        import cupy
        if not self.fault:
            try:
                return self.run(requests, keep_dist)
            except cupy.cuda.memory.OutOfMemoryError:
                if len(requests) > 1:
                    self.splits += 1
                    half = len(requests) // 2
                    return (self.search_padded(requests[:half], keep_dist, should_stop)
                            + self.search_padded(requests[half:], keep_dist, should_stop))
            except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as e:
                self.fault = str(e).splitlines()[0] if str(e) else type(e).__name__
        from .cpu import CpuEngine
        self.on_cpu += len(requests)
        return CpuEngine(self.delta, self.method).search(requests, keep_dist, should_stop)

    def report(self) -> str | None:
        """One line for the user when the GPU could not do all the searching, else None."""
        if self.fault:
            return f"GPU error ({self.fault}): {self.on_cpu} searches finished on the CPU (same routes)"
        if self.splits or self.on_cpu:
            return (f"GPU memory ran short: {self.splits} batches split, {self.on_cpu} searches done on the CPU "
                    f"(same routes)")
        return None

    def run(self, requests: list[RoiRequest], keep_dist: bool) -> list[RoiResult]:
        return self.solve(self.upload(requests), keep_dist)

    def upload(self, requests: list[RoiRequest]) -> "DeviceBatch":
        """The batch on the device: its small inputs in one copy, and its costs padded into one (K, L, H, W) box
        as int32 arrays, built there when the requests' costs can do that (the table they need travels in the same
        copy), or else from their host arrays."""
        import cupy
        K = len(requests)
        box = tuple(max(r.shape[i] for r in requests) for i in range(3))
        inputs = SmallInputs(requests, box)
        builder = requests[0].costs.device
        if builder is not None and all(r.costs.device is builder for r in requests):
            costs = [r.costs for r in requests]
            table = builder.table(costs)
            dev = cupy.asarray(np.concatenate([inputs.packed, table]))
            col, row, via = builder.fill(dev[inputs.packed.size:], costs, (K,) + box)
        else:
            dev = cupy.asarray(inputs.packed)
            col, row, via = (cupy.asarray(padded_costs(requests, i, (K,) + box)) for i in range(3))
        return DeviceBatch(requests, box, col, row, via, len(inputs.src),
                           *(dev[a:b] for a, b in inputs.spans))

    def solve(self, batch: "DeviceBatch", keep_dist: bool = False) -> list[RoiResult]:
        """Search a batch that is on the device."""
        import cupy
        b = batch
        requests, (L, H, W) = b.requests, b.box
        K = len(requests)
        per = L * H * W
        total = K * per
        d = cupy.empty(total, dtype=np.int64)
        path = cupy.empty(total, dtype=np.int32)
        info = cupy.zeros(3 + 3 * K, dtype=np.int64)       # flags, rounds, then each ROI's path summary
        kernel, most = search_kernel(cupy.cuda.Device().id, self.method)
        args = (d, b.col, b.row, b.via, np.int32(K), np.int32(L), np.int32(H), np.int32(W), b.src, b.src_cost,
                np.int32(b.n_src), b.dims, b.sinks, b.sink_cost, b.sink_start, path, info)
        if self.method == "near_far":
            grid = min(most, blocks(total)[0])
            args += (cupy.empty(total, dtype=np.uint8), cupy.empty(total, dtype=np.uint8),
                     cupy.empty(6 * K + 4, dtype=np.int64), np.int64(self.delta))
        else:
            grid = min(most, blocks(32 * max(K * L * H, K * L * W, K * H * W))[0])     # a warp per line at most
            # each ROI's "changed" flags; each ROI's bound, lowered as sinks are reached where only paths are asked for
            args += (cupy.zeros(3 * K, dtype=np.int32), cupy.empty(K, dtype=np.int64),
                     np.int32(not keep_dist))
        kernel((grid,), (THREADS,), args)
        info_h = info.get()
        sweeps, (length, chosen, cost) = int(info_h[2]), info_h[3:].reshape(3, K)
        longest = int(length.max())
        paths = path.reshape(K, per)[:, :longest].get() if longest else None
        dist_h = d.get().reshape(K, L, H, W) if keep_dist else None
        results = []
        for k, r in enumerate(requests):
            dist = None
            if keep_dist:
                l, h, w = r.shape
                box = dist_h[k, :l, :h, :w].reshape(-1)
                dist = np.where(box >= UNREACHED, -1, box)
            if length[k] == 0:
                results.append(RoiResult(None, -1, -1, sweeps, dist))
                continue
            walk = paths[k, :length[k]].astype(np.int64)[::-1].copy()
            results.append(RoiResult(walk, int(cost[k]), int(chosen[k]), sweeps, dist))
        return results


def similar_sizes(requests: list[RoiRequest], waste: float = PADDING_WASTE) -> list[list[int]]:
    """The requests in groups (positions, largest ROIs first) whose padded box wastes no more than `waste` times
    the nodes their ROIs hold: one small ROI beside a large one would be searched at the large one's size."""
    volume = [int(np.prod(r.shape)) for r in requests]
    groups, box, held = [], None, 0
    for k in sorted(range(len(requests)), key=lambda k: -volume[k]):
        grown = tuple(max(a, b) for a, b in zip(box, requests[k].shape)) if box else requests[k].shape
        if box and int(np.prod(grown)) * (len(groups[-1]) + 1) <= waste * (held + volume[k]):
            groups[-1].append(k)
            box, held = grown, held + volume[k]
        else:
            groups.append([k])
            box, held = requests[k].shape, volume[k]
    return groups


class SmallInputs:
    """Everything but the costs, packed into one int64 array so that the batch needs one small upload: sources
    (flat indices of the padded batch) and their costs, sinks (ROI-local) and their costs, where each ROI's sinks
    start, and each ROI's (L, H, W)."""

    def __init__(self, requests: list[RoiRequest], box):
        per = box[0] * box[1] * box[2]
        self.src = np.concatenate([k * per + to_padded(r.sources, r.shape, box) for k, r in enumerate(requests)])
        parts = [self.src,
                 np.concatenate([r.source_cost for r in requests]),
                 np.concatenate([r.sinks for r in requests]),
                 np.concatenate([r.sink_cost for r in requests]),
                 np.concatenate([[0], np.cumsum([len(r.sinks) for r in requests])]),
                 np.array([r.shape for r in requests]).reshape(-1)]
        ends = np.cumsum([len(p) for p in parts])
        self.spans = list(zip(np.concatenate([[0], ends[:-1]]), ends))
        self.packed = np.concatenate(parts).astype(np.int64)


@dataclass
class DeviceBatch:
    requests: list[RoiRequest]
    box: tuple[int, int, int]           # the padded (L, H, W) every ROI sits in
    col: object                         # cupy int32 (K, L, H, W) cost arrays
    row: object
    via: object
    n_src: int
    src: object                         # SmallInputs' parts, on the device
    src_cost: object
    sinks: object
    sink_cost: object
    sink_start: object
    dims: object


def padded_costs(requests: list[RoiRequest], which: int, shape) -> np.ndarray:
    """One cost array of the batch (0 col, 1 row, 2 via) as int32, each ROI in the corner of its padded box;
    padding is BLOCKED32."""
    out = np.full(shape, BLOCKED32, dtype=np.int32)
    for k, r in enumerate(requests):
        l, h, w = r.shape
        cost = r.costs.arrays()[which]
        out[k, :l, :h, :w] = np.where(cost >= BLOCKED, BLOCKED32, cost)
    return out


def to_padded(local: np.ndarray, shape, box) -> np.ndarray:
    """ROI-local flat indices to flat indices of the padded (L, H, W) box."""
    l, rest = np.divmod(np.asarray(local, dtype=np.int64), shape[1] * shape[2])
    r, c = np.divmod(rest, shape[2])
    return (l * box[1] + r) * box[2] + c
