"""Search speed: scipy's Dijkstra (per ROI, multi-source, min_only) vs the CPU engine vs the GPU engine, on the
same batches. Prints rounds (sweeps), ms per ROI, edge relaxations per second, and the ratios against scipy measured
in the same run.

    python benchmarks/search_bench.py [--k 8,64,256] [--shapes 4x64x64,8x128x128] [--cpu-rois 4]

The CPU baselines run on the first --cpu-rois ROIs of each batch (their per-ROI time does not depend on K); the GPU
engine runs the whole batch. "gpu ms/ROI" is the search with the batch already on the device (the engine's own
work: one persistent kernel, then the paths back to the host); "+upload" adds padding host cost arrays and copying
them over (the router avoids that: it builds its costs on the device). "near-far" is the GPU engine's round-by-round
method on the same batch (delta --delta), for its round count.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autorouter.search import ArrayCosts, RoiRequest  # noqa: E402
from autorouter.search.cpu import CpuEngine  # noqa: E402


def request(rng, shape, noisy: bool) -> RoiRequest:
    """Routing-like: step cost 1 with 5% of nodes at 100 (or PathFinder-like noise 1..100), vias cost 10x;
    a few sources at the left edge, a few sinks at the right edge."""
    L, R, C = shape
    base = rng.integers(1, 101, shape) if noisy else np.where(rng.random(shape) < 0.05, 100, 1)
    base = base.astype(np.int64)
    src = np.array([np.ravel_multi_index((rng.integers(L), rng.integers(R), 0), shape) for _ in range(3)])
    snk = np.array([np.ravel_multi_index((rng.integers(L), rng.integers(R), C - 1), shape) for _ in range(3)])
    src, snk = np.unique(src), np.unique(snk)
    return RoiRequest(shape, ArrayCosts(base, base.copy(), base * 10), src.astype(np.int64), np.zeros(len(src), np.int64),
                      snk.astype(np.int64), np.zeros(len(snk), np.int64))


def edges(shape) -> int:
    L, R, C = shape
    return 2 * (L * R * (C - 1) + L * (R - 1) * C + (L - 1) * R * C)


def scipy_graph(req: RoiRequest):
    import scipy.sparse as sp
    n = int(np.prod(req.shape))
    idx = np.arange(n).reshape(req.shape)
    rows, cols, w = [], [], []
    for axis, cost in ((2, req.cost_col), (1, req.cost_row), (0, req.cost_via)):
        a = np.take(idx, range(0, req.shape[axis] - 1), axis=axis).ravel()
        b = np.take(idx, range(1, req.shape[axis]), axis=axis).ravel()
        for x, y in ((a, b), (b, a)):
            rows.append(x); cols.append(y); w.append(cost.ravel()[y].astype(float))
    rows.append(np.full(len(req.sources), n)); cols.append(req.sources); w.append(req.source_cost + 1.0)
    return sp.csr_matrix((np.concatenate(w), (np.concatenate(rows), np.concatenate(cols))), shape=(n + 1, n + 1))


def timed(fn, repeat=1):
    fn()                                    # warm up (kernel compilation, caches)
    t = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    return (time.perf_counter() - t) / repeat, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", default="8,64,256")
    ap.add_argument("--shapes", default="4x64x64,8x128x128")
    ap.add_argument("--cpu-rois", type=int, default=4)
    ap.add_argument("--delta", type=int, default=8)
    args = ap.parse_args()
    from scipy.sparse.csgraph import dijkstra
    try:
        from autorouter.search.gpu import GpuEngine, gpu_available
        have_gpu = gpu_available()[0]
    except ImportError:
        have_gpu = False
    print(f"{'shape':>10} {'costs':>7} {'K':>4} | {'scipy ms/ROI':>12} | {'cpu ms/ROI':>10} {'sweeps':>6} "
          f"{'x scipy':>7} | {'gpu ms/ROI':>10} {'sweeps':>6} {'Grelax/s':>8} {'x scipy':>8} {'x cpu':>7} | "
          f"{'+upload ms':>10} {'x scipy':>7} | {'near-far ms':>11} {'rounds':>6} {'x scipy':>7}")
    for shape_text in args.shapes.split(","):
        shape = tuple(int(v) for v in shape_text.split("x"))
        for noisy in (False, True):
            for k in (int(v) for v in args.k.split(",")):
                rng = np.random.default_rng(k * 7 + noisy)
                batch = [request(rng, shape, noisy) for _ in range(k)]
                few = batch[:args.cpu_rois]
                graphs = [scipy_graph(r) for r in few]
                n = int(np.prod(shape))
                t_scipy, _ = timed(lambda: [dijkstra(g, indices=n, min_only=True) for g in graphs])
                t_scipy /= len(few)
                t_cpu, res = timed(lambda: CpuEngine(64).search(few))
                t_cpu /= len(few)
                line = (f"{shape_text:>10} {'noisy' if noisy else 'routing':>7} {k:>4} | {t_scipy * 1e3:12.2f} | "
                        f"{t_cpu * 1e3:10.2f} {res[0].rounds:6d} {t_scipy / t_cpu:7.2f} |")
                if have_gpu:
                    gpu = GpuEngine(64)
                    t_all, _ = timed(lambda: gpu.search(batch), repeat=3)
                    on_device = gpu.upload(batch)
                    t_gpu, gres = timed(lambda: gpu.solve(on_device), repeat=3)
                    t_gpu, t_all = t_gpu / k, t_all / k
                    for a, b in zip(res, gres):
                        assert a.cost == b.cost and np.array_equal(a.path, b.path), "GPU and CPU disagree"
                    relax = gres[0].rounds * edges(shape) / t_gpu / 1e9
                    near_far = GpuEngine(args.delta, "near_far")
                    t_nf, nres = timed(lambda: near_far.solve(on_device), repeat=3)
                    t_nf /= k
                    for a, b in zip(res, nres):
                        assert a.cost == b.cost and np.array_equal(a.path, b.path), "near-far and sweep disagree"
                    line += (f" {t_gpu * 1e3:10.3f} {gres[0].rounds:6d} {relax:8.2f} {t_scipy / t_gpu:8.1f} "
                             f"{t_cpu / t_gpu:7.1f} | {t_all * 1e3:10.3f} {t_scipy / t_all:7.1f} | "
                             f"{t_nf * 1e3:11.3f} {max(r.rounds for r in nres):6d} {t_scipy / t_nf:7.1f}")
                else:
                    line += " (no GPU)"
                print(line, flush=True)


if __name__ == "__main__":
    main()
