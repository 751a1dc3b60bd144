"""The GPU engine: the sweep search of sweep.py as CUDA kernels (kernels/sweep.cu), K ROIs per launch.

The batch is padded into one (K, L, H, W) box. Each sweep is three launches (lines along columns, rows and layers,
each relaxed both ways by one thread); the host reads one flag per sweep, and a search takes 10 to 30 sweeps, not one
round per lattice step. Parents, the best sink and the path walk run on the device too, so a batch returns with one
small transfer per ROI. The distances and parents are exactly those of the CPU engine. CuPy is imported lazily.
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
def kernels(device: int):
    """The compiled module, once per device."""
    import cupy
    source = (Path(__file__).parent / "kernels" / "sweep.cu").read_text()
    return cupy.RawModule(code=source, options=("-std=c++14",))


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
        """The batch's costs, padded into one (K, L, H, W) box, as int32 device arrays."""
        import cupy
        K = len(requests)
        box = tuple(max(r.shape[i] for r in requests) for i in range(3))
        costs = [cupy.asarray(padded_costs(requests, f, (K,) + box)) for f in ("cost_col", "cost_row", "cost_via")]
        return DeviceBatch(requests, box, *costs)

    def solve(self, batch: "DeviceBatch", keep_dist: bool = False) -> list[RoiResult]:
        """Search a batch whose costs are on the device already."""
        import cupy
        requests, (L, H, W), col, row, via = batch.requests, batch.box, batch.col, batch.row, batch.via
        K = len(requests)
        per = L * H * W
        mod = kernels(cupy.cuda.Device().id)
        d = cupy.full(K * per, UNREACHED, dtype=np.int64)
        src = np.concatenate([k * per + to_padded(r.sources, r.shape, (L, H, W)) for k, r in enumerate(requests)])
        src_cost = np.concatenate([r.source_cost for r in requests]).astype(np.int64)
        mod.get_function("seed")(blocks(len(src)), (THREADS,), (d, cupy.asarray(src), cupy.asarray(src_cost),
                                                               np.int32(len(src))))
        sweeps = sweep(mod, d, col, row, via, K, L, H, W)
        dims = cupy.asarray(np.array([r.shape for r in requests], dtype=np.int32).reshape(-1))
        total = K * per
        key = cupy.empty(total, dtype=np.int64)
        mod.get_function("parents")(blocks(total), (THREADS,), (d, col, row, via, dims, np.int64(total),
                                                              np.int32(L), np.int32(H), np.int32(W), key))
        sinks = cupy.asarray(np.concatenate([r.sinks for r in requests]).astype(np.int64))
        sink_cost = cupy.asarray(np.concatenate([r.sink_cost for r in requests]).astype(np.int64))
        start = cupy.asarray(np.concatenate([[0], np.cumsum([len(r.sinks) for r in requests])]).astype(np.int32))
        path = cupy.empty(total, dtype=np.int32)
        length, chosen = cupy.zeros(K, dtype=np.int32), cupy.zeros(K, dtype=np.int32)
        cost = cupy.zeros(K, dtype=np.int64)
        mod.get_function("best_paths")(blocks(K), (THREADS,), (key, dims, sinks, sink_cost, start, np.int32(K),
                                                              np.int32(L), np.int32(H), np.int32(W),
                                                              np.int64(per), path, length, chosen, cost))
        length_h, chosen_h, cost_h = length.get(), chosen.get(), cost.get()
        dist_h = d.get().reshape(K, L, H, W) if keep_dist else None
        results = []
        for k, r in enumerate(requests):
            dist = None
            if keep_dist:
                l, h, w = r.shape
                box = dist_h[k, :l, :h, :w].reshape(-1)
                dist = np.where(box >= UNREACHED, -1, box)
            if length_h[k] == 0:
                results.append(RoiResult(None, -1, -1, sweeps, dist))
                continue
            walk = path[k * per:k * per + int(length_h[k])].get().astype(np.int64)[::-1].copy()
            results.append(RoiResult(walk, int(cost_h[k]), int(chosen_h[k]), sweeps, dist))
        return results


BLOCKED32 = np.int32(0x7FFFFFFF)


@dataclass
class DeviceBatch:
    requests: list[RoiRequest]
    box: tuple[int, int, int]           # the padded (L, H, W) every ROI sits in
    col: object                         # cupy int32 (K, L, H, W) cost arrays
    row: object
    via: object


def padded_costs(requests: list[RoiRequest], field: str, shape) -> np.ndarray:
    """One cost array of the batch as int32, each ROI in the corner of its padded box; padding is BLOCKED32."""
    out = np.full(shape, BLOCKED32, dtype=np.int32)
    for k, r in enumerate(requests):
        l, h, w = r.shape
        cost = getattr(r, field)
        out[k, :l, :h, :w] = np.where(cost >= BLOCKED, BLOCKED32, cost)
    return out


def to_padded(local: np.ndarray, shape, box) -> np.ndarray:
    """ROI-local flat indices to flat indices of the padded (L, H, W) box."""
    l, rest = np.divmod(np.asarray(local, dtype=np.int64), shape[1] * shape[2])
    r, c = np.divmod(rest, shape[2])
    return (l * box[1] + r) * box[2] + c


def sweep(mod, d, col, row, via, K, L, H, W) -> int:
    """Sweep until nothing changes; return the number of sweeps. One flag read per sweep."""
    import cupy
    changed = cupy.zeros(1, dtype=np.int32)
    scan_cols, scan_strided = mod.get_function("scan_cols"), mod.get_function("scan_strided")
    lines_c, lines_r, lines_l = K * L * H, K * L * W, K * H * W
    sweeps = 0
    while True:
        changed.fill(0)
        if W > 1:
            scan_cols(blocks(lines_c * 32), (THREADS,), (d, col, np.int64(lines_c), np.int32(W), changed))
        if H > 1:
            scan_strided(blocks(lines_r), (THREADS,), (d, row, np.int64(lines_r), np.int32(H), np.int64(W), changed))
        if L > 1:
            scan_strided(blocks(lines_l), (THREADS,), (d, via, np.int64(lines_l), np.int32(L), np.int64(H * W),
                                                      changed))
        sweeps += 1
        if int(changed.get()[0]) == 0:
            return sweeps
