"""The set-up stages of `autorouter route`, the time before the first search: reading the board (and its rules),
the lattice and obstacles, and pins, portals and MST order. The same calls and the same stage names as
`route --json`'s timings_s, without routing.

    python benchmarks/setup_bench.py BOARD.kicad_pcb [...] [--repeat N] [--profile STAGE]

Give unrouted boards (the judge's `strip` makes them from KiCad's demos), e.g. vme-wren:
    python ../shared/judge/kicad_judge.py strip /usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb /tmp/vme.kicad_pcb
--repeat: the best of N runs of each stage. --profile read|set-up: cProfile reading, or the lattice and pins stages
(one call), and print the top 30 functions by cumulative time to stderr.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autorouter.board import load_board  # noqa: E402
from autorouter.board.rules import load_rules  # noqa: E402
from autorouter.config import load_config  # noqa: E402
from autorouter.pipeline import set_up  # noqa: E402


def run_once(path: Path, config, profile: str | None) -> dict[str, float]:
    profiler = cProfile.Profile()
    t0 = time.monotonic()
    with profiler if profile == "read" else nullcontext():
        board = load_board(path)
        rules = load_rules(board, config)
    read = time.monotonic() - t0
    with profiler if profile == "set-up" else nullcontext():
        ready = set_up(board, rules, config)
    if profile:
        print(f"--- {path.name}: profile of {profile}", file=sys.stderr)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
    return {"read": read, **ready.timings, "nets": len(ready.tasks), "connections": sum(ready.apart.values())
            - len(ready.apart), "pads": len(board.pads), "nodes": ready.lattice.size}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("boards", nargs="+", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", choices=["read", "set-up"])
    args = ap.parse_args()
    config = load_config()
    stages = ["read", "lattice", "pins and MST"]
    for path in args.boards:
        runs = [run_once(path, config, args.profile) for _ in range(args.repeat)]
        best = {k: min(r[k] for r in runs) for k in stages}
        info = runs[0]
        print(f"{path.stem:32} {info['pads']} pads, {info['nodes']:,} nodes, {info['nets']} nets, "
              f"{info['connections']} connections  " + "  ".join(f"{k} {best[k]:.2f}s" for k in stages)
              + f"  set-up {sum(best.values()):.2f}s", flush=True)


if __name__ == "__main__":
    main()
