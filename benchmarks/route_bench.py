"""`autorouter route` end to end with each backend: time per stage, the search stage's ratio against the CPU engine
measured in the same run, and whether both backends wrote the same bytes.

    python benchmarks/route_bench.py BOARD.kicad_pcb [...] [--backends cpu,gpu]

Without --backends, every engine this machine has (the CPU always; the GPU when CuPy finds a device), saying which
was skipped and why. Give unrouted boards (the judge's `strip` makes them from KiCad's demos).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def route(board: Path, backend: str, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "autorouter", "route", str(board), "-o", str(out), "--json",
                           "--backend", backend], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{board.name} ({backend}): exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)


def available_backends() -> list[str]:
    """The engines this machine can run, the CPU first; a skipped one is said on stderr, with the reason."""
    from autorouter.search.gpu import gpu_available
    ok, why = gpu_available()
    if not ok:
        print(f"gpu backend skipped: {why}", file=sys.stderr)
    return ["cpu", "gpu"] if ok else ["cpu"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("boards", nargs="+", type=Path)
    ap.add_argument("--backends", help="comma-separated, e.g. cpu,gpu (default: every engine available here)")
    args = ap.parse_args()
    backends = args.backends.split(",") if args.backends else available_backends()
    stage = "search and negotiation"
    with tempfile.TemporaryDirectory() as tmp:
        for board in args.boards:
            runs, outputs = {}, {}
            for backend in backends:
                out = Path(tmp) / f"{board.stem}.{backend}.kicad_pcb"
                runs[backend] = route(board, backend, out)
                outputs[backend] = out.read_bytes()
            base = runs[backends[0]]["timings_s"][stage]
            for backend, info in runs.items():
                t = info["timings_s"]
                stages = "  ".join(f"{k} {v:.2f}s" + (f" (engine {info['search_engine_s']:.2f}s)" if k == stage else "")
                                   for k, v in t.items())
                print(f"{board.stem:32} {backend:4} routed {info['connections_routed']}/{info['connections']} "
                      f"iterations {info['iterations']:3}  {stages}  total {info['seconds']:.1f}s  "
                      f"search x{base / max(t[stage], 1e-9):.2f} vs {backends[0]}")
            same = len({outputs[b] for b in backends}) == 1
            print(f"{board.stem:32} outputs byte-identical across backends: {same}", flush=True)


if __name__ == "__main__":
    main()
