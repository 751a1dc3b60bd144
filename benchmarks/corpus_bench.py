"""Route every board of ../shared/corpus and ../shared/boards and judge each with KiCad: the corpus table.

    python benchmarks/corpus_bench.py [--boards NAME,NAME] [--jobs N] [--time-limit S] [--backend cpu|gpu|auto]
                                      [--out DIR] [--route-only | --judge-only]

For each board: unpack it (with its .kicad_pro and .kicad_dru), strip its tracks and vias keeping the zones
(`kicad_judge.py strip --keep-zones`), route the stripped board with `autorouter route --events` (its negotiation kept), then let KiCad judge
both (`kicad_judge.drc --refill`: zones refilled first, as the user presses B). One table: connections KiCad counts
before and after, the new DRC errors by type (starved reliefs and mask bridges by item: BY_ITEM), seconds, and our
track length and vias against the human routing's.

Routing and judging are separate phases, so that the routing can run where the GPU is (`--route-only`, then bring
DIR back) and the judging where KiCad is (`--judge-only`). Boards KiCad 9 cannot open (KiCad 10 files) are judged by
our own check instead, and say so.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout; a copy inside it (shared/, git-ignored) is what travels to the device machine
SHARED = next((p for p in (ROOT.parent / "shared", ROOT / "shared") if (p / "corpus").is_dir()), ROOT.parent / "shared")
CORPUS = SHARED / "corpus"
BOARDS = SHARED / "boards"
IGNORED = {"length_mismatch", "skew_out_of_range", "diff_pair_uncoupled_length_too_long", "diff_pair_gap_out_of_range"}
# Errors that routing both adds and takes away: the refilled stripped board starves reliefs that the human's tracks
# fed, and routing feeds some of them while it starves others. Counted after minus before (the judge's count), the
# new ones hide behind those fed (teres_a64: 78 starved before, 58 after, 5 of them new); they are counted by item:
# a relief by its zone and pad, a mask bridge by its opening (KiCad's first item, where it lies), since KiCad names
# one copper item per opening, the first it meets, which the new tracks change. So which bridges are named varies
# (solar_si: an unplated hole of the board's own PCB1 footprint is named through another of its openings once
# routed), and KiCad reports at most 199 errors of a type (dxwifi's 0402 parts, drawn with a mask frame joining
# both pads, reach that before routing). Bridges within one footprint are the design's (routing adds no footprint
# items), so the new mask bridges are also counted with them allowed (the board setting KiCad has for it), and the
# fewer of the two counts is taken: allowing them alone hides a footprint's own pad, so a track of that pad's net
# under its opening looks like a new net there (oresat_bp1u's R10, a 0-ohm link whose reference is drawn on F.Mask).
BY_ITEM = {"starved_thermal", "solder_mask_bridge"}


def judge_module():
    spec = importlib.util.spec_from_file_location("kicad_judge", SHARED / "judge" / "kicad_judge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_boards() -> dict[str, Path]:
    """name -> source (.kicad_pcb.gz of the corpus, .kicad_pcb of shared/boards)."""
    out = {p.name[:-len(".kicad_pcb.gz")]: p for p in sorted((CORPUS / "boards").glob("*.kicad_pcb.gz"))}
    out.update({p.stem: p for p in sorted(BOARDS.glob("*.kicad_pcb"))})
    return out


def prepare(name: str, src: Path, out: Path, judge) -> Path:
    """The stripped input, zones kept, beside its project files; and the original as DIR/name.original.kicad_pcb."""
    original = out / f"{name}.original.kicad_pcb"
    if src.suffix == ".gz":
        with gzip.open(src, "rb") as f, open(original, "wb") as g:
            shutil.copyfileobj(f, g)
        judge.copy_project(str(src)[:-len(".gz")], str(original))
    else:
        shutil.copyfile(src, original)
        judge.copy_project(str(src), str(original))
    unrouted = out / f"{name}.unrouted.kicad_pcb"
    judge.strip(str(original), str(unrouted), keep_zones=True)
    return unrouted


def route_one(name: str, unrouted: Path, out: Path, args, judge) -> dict:
    routed = out / f"{name}.routed.kicad_pcb"
    if routed.exists():
        routed.unlink()
    judge.copy_project(str(unrouted), str(routed))       # KiCad judges the output with the project's rules
    cmd = [sys.executable, "-m", "autorouter", "route", str(unrouted), "-o", str(routed), "--events",
           "--backend", args.backend, "--time-limit", str(args.time_limit)] + (["--config", args.config] if args.config else [])
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.time_limit * 2 + 600,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        code, stdout, stderr = "timeout", "", ""
    row = {"board": name, "exit": code, "seconds": round(time.monotonic() - t0, 1), "stderr": stderr[-2000:]}
    try:
        events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        summary = events[-1]
        row["negotiation"] = [{k: e.get(k) for k in ("iteration", "shared", "conflicted", "failed", "elapsed")}
                              for e in events if e.get("stage") == "iteration"]
        # when each stage began (seconds from the start): where a board bound by time spends it
        row["stages"] = [[e["stage"], e.get("t")] for k, e in enumerate(events)
                         if e.get("stage") != "summary" and (k == 0 or events[k - 1].get("stage") != e.get("stage"))]
        row["attempts"] = 1 + sum(e.get("stage") == "retry" for e in events)     # pipeline.best_attempt
        room = [e for e in events if e.get("stage") == "make room"]
        row["make_room"] = room[-1] if room else None       # its last word: nets tried, connections joined
        row.update(ours_routed=summary["connections_routed"], ours_connections=summary["connections"],
                   ours_violations=summary.get("drc_violations"), ours_by_kind=summary.get("drc_by_kind"),
                   failed=summary.get("failed", {}),
                   timings=summary.get("timings_s", {}), iterations=summary.get("iterations"),
                   engine_seconds=summary.get("search_engine_s"), rois_per_launch=summary.get("rois_per_launch"))
    except (json.JSONDecodeError, KeyError, TypeError, IndexError):
        pass
    (out / f"{name}.route.json").write_text(json.dumps(row, indent=1))
    return row


def human_numbers(name: str, out: Path, judge) -> tuple[float, int]:
    """Track length (segments and arcs, as the judge counts ours) and vias of the human routing."""
    original = (out / f"{name}.original.kicad_pcb").read_text(encoding="utf-8", errors="replace")
    unrouted = (out / f"{name}.unrouted.kicad_pcb").read_text(encoding="utf-8", errors="replace")
    return judge.track_length(original), judge.count_vias(original) - judge.count_vias(unrouted)


def judge_one(name: str, src: Path, out: Path, judge) -> dict:
    row = json.loads((out / f"{name}.route.json").read_text())
    unrouted, routed = out / f"{name}.unrouted.kicad_pcb", out / f"{name}.routed.kicad_pcb"
    if not unrouted.exists():          # routed elsewhere (the device machine): the same strip, made here
        prepare(name, src, out, judge)
    judge.copy_project(str(unrouted), str(routed))
    row["human_length_mm"], row["human_vias"] = human_numbers(name, out, judge)
    try:
        before = judge.drc(str(unrouted), True)
        original = judge.drc(str(out / f"{name}.original.kicad_pcb"), True)
    except RuntimeError:
        row["note"] = "KiCad 9 cannot open this board: judged by our own check"
        return row
    row["unconnected_before"] = before["unconnected"]
    row["human_unconnected"] = original["unconnected"]
    if row["exit"] not in (0, 1) or not routed.exists():
        row["note"] = f"router exit {row['exit']}: {row['stderr'].strip().splitlines()[-1] if row['stderr'].strip() else ''}"
        return row
    try:
        after = judge.drc(str(routed), True)
    except RuntimeError:
        row["note"] = "KiCad could not load the output"
        return row
    new = {k: after["violations_by_type"].get(k, 0) - before["violations_by_type"].get(k, 0)
           for k in set(after["violations_by_type"]) | set(before["violations_by_type"])}
    if BY_ITEM & set(new):
        added = item_errors(routed, judge) - item_errors(unrouted, judge)
        for kind in BY_ITEM & set(new):
            new[kind] = sum(1 for k in added if k[0] == kind)
        if new.get("solder_mask_bridge"):
            allowed = item_errors(routed, judge, True) - item_errors(unrouted, judge, True)
            new["solder_mask_bridge"] = min(new["solder_mask_bridge"],
                                            sum(1 for k in allowed if k[0] == "solder_mask_bridge"))
    row.update(unconnected_after=after["unconnected"],
               new_errors={k: v for k, v in sorted(new.items()) if v > 0},
               intact=judge.same_but_copper(str(unrouted), str(routed)),
               length_mm=after["segments_length_mm"],
               vias=after["vias"] - before["vias"])
    return row


def item_errors(path: Path, judge, footprint_bridges: bool = False) -> set[tuple]:
    """The key (BY_ITEM) of each BY_ITEM error KiCad finds on the board with its zones refilled (footprint_bridges:
    mask bridges within one footprint allowed)."""
    with tempfile.TemporaryDirectory() as tmp:
        board, filled, report = str(path), os.path.join(tmp, "filled.kicad_pcb"), os.path.join(tmp, "drc.json")
        if footprint_bridges:
            board = os.path.join(tmp, "board.kicad_pcb")
            Path(board).write_text(footprint_bridges_allowed(path.read_text()))
            judge.copy_project(str(path), board)
        judge.copy_project(str(path), filled)
        subprocess.run(["/usr/bin/python3", "-c", judge.REFILL, board, filled], capture_output=True, timeout=900,
                       check=True)
        subprocess.run(["kicad-cli", "pcb", "drc", "--format", "json", "--severity-error", "--units", "mm", "-o",
                        report, filled], capture_output=True, timeout=900)
        violations = json.loads(Path(report).read_text())["violations"]
    return {error_key(v) for v in violations if v["type"] in BY_ITEM}


def footprint_bridges_allowed(text: str) -> str:
    """The board with its setup's allow_soldermask_bridges_in_footprints on (KiCad 7 and later read it)."""
    text = re.sub(r"\(allow_soldermask_bridges_in_footprints \w+\)", "", text, count=1)
    return text.replace("(setup", "(setup (allow_soldermask_bridges_in_footprints yes)", 1)


RELIEF_LAYER = re.compile(r"\(layer ([^;)]+)")     # a starved relief's layer, in its description


def error_key(violation: dict) -> tuple:
    """A BY_ITEM error of KiCad's DRC report: a mask bridge by its opening, a relief by its zone, pad and layer (the
    items name no layer where the zone has several and the pad goes through: "PTH pad 13 [GND] of J3")."""
    if violation["type"] == "solder_mask_bridge":
        opening = violation["items"][0]
        return violation["type"], opening["description"], round(opening["pos"]["x"], 3), round(opening["pos"]["y"], 3)
    layer = RELIEF_LAYER.search(violation.get("description", ""))
    return violation["type"], tuple(sorted(i["description"] for i in violation["items"])), layer[1] if layer else ""


def fully_routed(row: dict) -> bool:
    """KiCad counts no more missing connections than on the human's own board (0 on all but three)."""
    return row.get("unconnected_after") is not None and row["unconnected_after"] <= row.get("human_unconnected", 0)


def clean(row: dict) -> bool:
    return row.get("new_errors") is not None and not (set(row["new_errors"]) - IGNORED)


def table(rows: list[dict]) -> str:
    lines = ["| board | connections (KiCad, before -> after) | ours routed | new KiCad DRC errors | seconds | "
             "length / human | vias / human |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        errors = ", ".join(f"{k} {v}" for k, v in r.get("new_errors", {}).items()) or ("0" if "new_errors" in r else "-")
        ratio_len = (f"{r['length_mm'] / r['human_length_mm']:.2f}" if r.get("length_mm") and r["human_length_mm"]
                     else "-")
        ratio_via = f"{r['vias'] / r['human_vias']:.2f}" if r.get("vias") is not None and r["human_vias"] else "-"
        conn = (f"{r['unconnected_before']} -> {r['unconnected_after']}" if r.get("unconnected_after") is not None
                else r.get("note", "-"))
        ours = f"{r.get('ours_routed', '-')}/{r.get('ours_connections', '-')}"
        seconds = f"{r['seconds']} ({r['attempts']} attempts)" if r.get("attempts", 1) > 1 else r["seconds"]
        lines.append(f"| {r['board']} | {conn} | {ours} | {errors} | {seconds} | {ratio_len} | {ratio_via} |")
    judged = [r for r in rows if "unconnected_after" in r]
    full = [r for r in judged if fully_routed(r)]
    both = [r for r in full if clean(r)]
    totals: dict[str, int] = {}
    for r in judged:
        for k, v in r["new_errors"].items():
            totals[k] = totals.get(k, 0) + v
    lines.append("")
    lines.append(f"boards: {len(rows)}, judged by KiCad: {len(judged)}, fully routed: {len(full)}, "
                 f"no new DRC errors: {sum(clean(r) for r in judged)}, both: {len(both)} "
                 f"({100 * len(both) / max(len(rows), 1):.0f}%)")
    lines.append("new DRC errors, summed: " + (", ".join(f"{k} {v}" for k, v in sorted(totals.items(),
                                                                                       key=lambda kv: -kv[1])) or "0"))
    if full:
        lens = [r["length_mm"] / r["human_length_mm"] for r in full if r.get("length_mm") and r["human_length_mm"]]
        vias = [r["vias"] / r["human_vias"] for r in full if r["human_vias"]]
        lines.append(f"median over fully routed boards: length {statistics.median(lens):.2f}x human, "
                     f"vias {statistics.median(vias):.2f}x human" if lens and vias else "")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", help="comma-separated board names (default: every board)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--time-limit", type=float, default=300)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--config", help="a config.yaml for the router (settings to compare)")
    ap.add_argument("--out", type=Path, default=Path("corpus-out"))
    phase = ap.add_mutually_exclusive_group()
    phase.add_argument("--route-only", action="store_true", help="prepare and route; judge later with --judge-only")
    phase.add_argument("--judge-only", action="store_true", help="judge the routed boards already in --out")
    args = ap.parse_args()
    boards = all_boards()
    names = args.boards.split(",") if args.boards else list(boards)
    unknown = [n for n in names if n not in boards]
    if unknown:
        raise SystemExit(f"corpus_bench: unknown board {unknown[0]!r}")
    args.out.mkdir(parents=True, exist_ok=True)
    judge = judge_module()
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    if not args.judge_only:
        inputs = {n: prepare(n, boards[n], args.out, judge) for n in names}
        # longest first (by file size), so that the slow boards do not start last
        order = sorted(names, key=lambda n: -inputs[n].stat().st_size)
        for row in pool.map(lambda n: route_one(n, inputs[n], args.out, args, judge), order):
            print(f"routed {row['board']:32} exit {row['exit']}  {row['seconds']:7.1f} s  "
                  f"{row.get('ours_routed', '-')}/{row.get('ours_connections', '-')}  "
                  f"{row.get('ours_violations', '-')} violations", flush=True)
    if args.route_only:
        return
    names = [n for n in names if (args.out / f"{n}.route.json").exists()]
    rows = list(pool.map(lambda n: judge_one(n, boards[n], args.out, judge), names))
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    text = table(rows)
    (args.out / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
