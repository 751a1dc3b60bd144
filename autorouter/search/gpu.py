"""The GPU engine: the sweep search of sweep.py as CUDA kernels (kernels/sweep.cu), K ROIs per launch.

The batch is padded into one (K, L, H, W) box and searched by one launch of a persistent cooperative kernel: it seeds
the sources, sweeps to the fixed point with grid-wide syncs between scan directions and the stop decided on the
device, then picks each ROI's best sink and walks its path back, taking at each node the lowest-index predecessor on
a shortest path. The host uploads the batch's small inputs in one copy and waits twice: for the path lengths, then
for the paths. Costs that can build themselves on the device (RoiCosts with a device_filler) never touch the host.
The distances and paths are exactly the CPU engine's. CuPy is imported lazily.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import BLOCKED, RoiRequest, RoiResult
from .sweep import UNREACHED

THREADS = 256


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
def search_kernel(device: int):
    """The persistent `search` kernel, compiled once per device, and the most blocks a cooperative launch of it may
    have: as many as the device runs at once."""
    import cupy
    source = (Path(__file__).parent / "kernels" / "sweep.cu").read_text()
    fn = cupy.RawModule(code=source, options=("-std=c++17",), enable_cooperative_groups=True).get_function("search")
    sms = cupy.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"]
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, THREADS, 0)
    return fn, sms * max(1, per_sm)


def blocks(n: int) -> tuple[int]:
    return ((int(n) + THREADS - 1) // THREADS,)


class GpuEngine:
    name = "gpu"

    def __init__(self, delta: int = 0):
        self.delta = delta

    def search(self, requests: list[RoiRequest], keep_dist: bool = False) -> list[RoiResult]:
        if not requests:
            return []
        import cupy
        try:
            return self.run(requests, keep_dist)
        except (cupy.cuda.memory.OutOfMemoryError, cupy.cuda.runtime.CUDARuntimeError):
            if len(requests) > 1:                # split the batch and try the halves
                half = len(requests) // 2
                return self.search(requests[:half], keep_dist) + self.search(requests[half:], keep_dist)
            from .cpu import CpuEngine
            return CpuEngine(self.delta).search(requests, keep_dist)

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
        filler = getattr(requests[0].costs, "device_filler", None)
        if filler is not None and all(getattr(r.costs, "device_filler", None) is filler for r in requests):
            costs = [r.costs for r in requests]
            table = filler.table(costs)
            dev = cupy.asarray(np.concatenate([inputs.packed, table]))
            col, row, via = filler.fill(dev[inputs.packed.size:], costs, (K,) + box)
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
        info = cupy.zeros(3 + 3 * K, dtype=np.int64)       # sweep flags and count, then each ROI's path summary
        kernel, most = search_kernel(cupy.cuda.Device().id)
        grid = min(most, blocks(32 * max(K * L * H, K * L * W, K * H * W))[0])     # a warp per line at most
        kernel((grid,), (THREADS,), (d, b.col, b.row, b.via, np.int32(K), np.int32(L), np.int32(H), np.int32(W),
                                     b.src, b.src_cost, np.int32(b.n_src), b.dims, b.sinks, b.sink_cost,
                                     b.sink_start, path, info))
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


BLOCKED32 = np.int32(0x7FFFFFFF)


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
