"""How far our starved-relief verdict agrees with KiCad's, on boards routed by corpus_bench.py.

    python benchmarks/relief_agreement.py --out DIR [--boards NAME,NAME] [--jobs N] [--human]

For each routed board in DIR (`NAME.routed.kicad_pcb` beside `NAME.unrouted.kicad_pcb`, as `corpus_bench.py
--route-only` leaves them; with --human, every board of the corpus and ../shared/boards is put there first with the
human's own routing as the routed board, which needs no router run: 3 minutes on 2 cores): the thermal reliefs our
check calls starved (zones.reliefs on our predicted fill) and those KiCad 9 finds starved once its zones are
refilled (`kicad-cli pcb drc`, by item: corpus_bench.item_errors), each as pad and layer. One table: how many KiCad
finds, how many both find, and the pads only one of them names. A relief KiCad finds and we do not is the costly
kind: routing does not mend what its check does not see (issue 11's "our DRC agrees with KiCad's"). Needs KiCad 9
(`bash ../shared/judge/install-kicad.sh`).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus_bench  # noqa: E402  (beside this script: the judge and KiCad's verdict by item)

# KiCad names the relieved pad: "Pad 1 [GND] of C9 on F.Cu", or a through-hole one "PTH pad 13 [GND] of J3"
KICAD_PAD = re.compile(r"(?:PTH )?[Pp]ad (\S+) \[.*\] of (\S+)")
# and a layer by the name the user gave it, where there is one: (1 "In1.Cu" power "In1_GND.Cu")
USER_NAME = re.compile(r'\(\d+\s+"([^"]+\.Cu)"\s+\w+\s+"([^"]+)"\)')


def ours(routed: Path) -> set[str]:
    """Our starved reliefs on the routed board, as 'REF.PAD@LAYER'."""
    from autorouter.board.reader import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import load_config
    from autorouter.zones import relief_fill, reliefs
    board = load_board(str(routed).replace(".routed.", ".unrouted."))
    new = load_board(str(routed))
    rules = load_rules(board, load_config(None))
    tracks, vias = list(new.tracks), list(new.vias)
    pieces = relief_fill(board, rules, tracks, vias)
    return {f"{board.pads[r.pad].name}@{r.layer}" for r in reliefs(board, rules, pieces, tracks, vias) if r.starved}


def kicads(routed: Path, judge) -> set[str] | None:
    """KiCad's starved reliefs on the routed board, zones refilled, as 'REF.PAD@LAYER'; None where KiCad 9 cannot
    open the board (a KiCad 10 file)."""
    found = set()
    try:
        errors = corpus_bench.item_errors(routed, judge)
    except subprocess.CalledProcessError:
        return None
    canonical = {user: name for name, user in USER_NAME.findall(routed.read_text(errors="replace"))}
    for kind, items, *layer in errors:
        if kind == "starved_thermal":
            found |= {f"{m[2]}.{m[1]}@{canonical.get(layer[0], layer[0])}" for m in map(KICAD_PAD.match, items) if m}
    return found


def human_routings(out: Path, judge, names: set[str] | None) -> None:
    """Each board (of names, or all) stripped into out as corpus_bench prepares it, with its original, the human's
    routing, as NAME.routed beside it."""
    out.mkdir(parents=True, exist_ok=True)
    for name, source in corpus_bench.all_boards().items():
        if names is not None and name not in names:
            continue
        corpus_bench.prepare(name, source, out, judge)
        for suffix in (".kicad_pcb", ".kicad_pro", ".kicad_dru"):
            original = out / f"{name}.original{suffix}"
            if original.exists():
                shutil.copyfile(original, out / f"{name}.routed{suffix}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="a corpus_bench.py --out folder with routed boards")
    ap.add_argument("--boards", help="comma-separated board names (default: every routed board there)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--human", action="store_true",
                    help="first put every board in DIR, the human's routing as the routed board")
    args = ap.parse_args()
    judge = corpus_bench.judge_module()
    if args.human:
        human_routings(args.out, judge, set(args.boards.split(",")) if args.boards else None)
    routed = sorted(args.out.glob("*.routed.kicad_pcb"))
    if args.boards:
        wanted = set(args.boards.split(","))
        routed = [p for p in routed if p.name.split(".")[0] in wanted]
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    print("| board | KiCad | both | KiCad only | ours only |\n|---|---|---|---|---|")
    totals = [0, 0, 0, 0]
    for path, mine, theirs in pool.map(lambda p: (p, ours(p), kicads(p, judge)), routed):
        if theirs is None:
            print(f"| {path.name.split('.')[0]} | KiCad 9 cannot open it | | | {', '.join(sorted(mine)) or '-'} |")
            continue
        row = [len(theirs), len(mine & theirs), len(theirs - mine), len(mine - theirs)]
        totals = [a + b for a, b in zip(totals, row)]
        print(f"| {path.name.split('.')[0]} | {row[0]} | {row[1]} | {', '.join(sorted(theirs - mine)) or '-'} | "
              f"{', '.join(sorted(mine - theirs)) or '-'} |", flush=True)
    print(f"\nKiCad {totals[0]}, both {totals[1]}, KiCad only {totals[2]}, ours only {totals[3]}")


if __name__ == "__main__":
    main()
