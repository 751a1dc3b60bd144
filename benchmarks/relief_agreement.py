"""How far our starved-relief verdict agrees with KiCad's, on boards routed by corpus_bench.py.

    python benchmarks/relief_agreement.py --out DIR [--boards NAME,NAME] [--jobs N]

For each routed board in DIR (`NAME.routed.kicad_pcb` beside `NAME.unrouted.kicad_pcb`, as `corpus_bench.py
--route-only` leaves them): the thermal reliefs our check calls starved (zones.reliefs on our predicted fill) and
those KiCad 9 finds starved once its zones are refilled (`kicad-cli pcb drc`, by item: corpus_bench.item_errors),
each as pad and layer. One table: how many KiCad finds, how many both find, and the pads only one of them names. A
relief KiCad finds and we do not is the costly kind: routing does not mend what its check does not see (issue 11's
"our DRC agrees with KiCad's"). Needs KiCad 9 (`bash ../shared/judge/install-kicad.sh`).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="a corpus_bench.py --out folder with routed boards")
    ap.add_argument("--boards", help="comma-separated board names (default: every routed board there)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    routed = sorted(args.out.glob("*.routed.kicad_pcb"))
    if args.boards:
        wanted = set(args.boards.split(","))
        routed = [p for p in routed if p.name.split(".")[0] in wanted]
    judge = corpus_bench.judge_module()
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
