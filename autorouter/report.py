"""What the user sees: the live progress during routing and the final tables, drawn with rich on stderr."""
from __future__ import annotations

import math
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn
from rich.table import Table


FAILED_ROWS = 20      # the failed-net table shows this many; --json lists them all


# what each stage after PathFinder's iterations shows while it runs (they can take minutes on a congested board)
AFTER_NEGOTIATION = {
    "repair": lambda e: f"{e['nets']} nets in conflict rerouted one by one",
    "make room": lambda e: f"net {e['net']} of {e['nets']} still short: its neighbours step aside "
                           f"({e['joined']} joined so far)",
    "joining": lambda e: f"round {e['round']}: {e['missing']} joins missing",
    "detail joins": lambda e: "the joins still missing, searched on a fine grid",
    "thermal reliefs": lambda e: "feeding the reliefs the new tracks starved",
    "clearing reliefs": lambda e: f"{e['reliefs']} reliefs short: the tracks crowding them move",
}


class Progress:
    """Renders the router's progress events; silent when quiet."""

    def __init__(self, console: Console, max_iterations: int, quiet: bool):
        self.console, self.quiet, self.max_iterations = console, quiet, max_iterations
        self.bar = None

    def __enter__(self):
        if not self.quiet:
            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                                    TimeElapsedColumn(), console=self.console, transient=False)
            self.bar.__enter__()
            self.task = self.bar.add_task("preparing", total=self.max_iterations, status="")
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            if exc[0] is None:
                self.bar.update(self.task, description="done")
            self.bar.__exit__(*exc)

    def update(self, event: dict) -> None:
        if self.bar is None:
            return
        stage = event["stage"]
        if stage == "read":
            self.console.print(f"read: {event['nets']} nets, {event['pads']} pads, {event['layers']} copper layers "
                               f"({event['seconds']:.2f} s); backend: {event['backend']}"
                               + (f" on {event['device']}" if event.get("device") else ""), highlight=False)
            self.bar.update(self.task, description="lattice")
        elif stage == "attempts":
            self.console.print(f"attempts: {event['count']} side by side, each in a process of its own (the first's "
                               f"progress below)", highlight=False)
        elif stage == "lattice":
            L, R, C = event["shape"]
            self.console.print(f"lattice: {L} x {R} x {C} at {event['pitch']:.3f} mm pitch", highlight=False)
            self.bar.update(self.task, description="pins and MST")
        elif stage == "tasks":
            self.console.print(f"pins and MST: {event['nets']} nets, {event['connections']} connections to route",
                               highlight=False)
            self.bar.update(self.task, description="PathFinder")
        elif stage == "iteration":
            self.bar.update(self.task, completed=event["iteration"], status=(
                f"iteration {event['iteration']}: {event['nets']} of {event['nets_total']} nets routed, "
                f"{event['conflicted']} in conflict, {event['shared']} shared nodes"))
        elif stage == "again":
            self.bar.update(self.task, description="PathFinder, again", completed=0,
                            status=f"{event['missing']} connections short: negotiating anew")
        elif stage == "retry":
            flaw = (f"{event['missing']} joins missing" if event["missing"]
                    else f"{event.get('starved', 0)} thermal reliefs starved")
            self.bar.update(self.task, description=f"PathFinder, attempt {event['attempt']}", completed=0,
                            status=f"{flaw}: routing again with other costs")
        elif stage in AFTER_NEGOTIATION:
            self.bar.update(self.task, description=stage, status=AFTER_NEGOTIATION[stage](event))
        elif stage == "check":      # the counts stay: the summary gives them
            self.bar.update(self.task, description="check")
        elif stage == "done":       # the counts the summary gives, once conflicts are dropped and gaps joined
            self.bar.update(self.task, completed=self.max_iterations, status=(
                f"{event['nets']} of {event['nets_total']} nets, {event['connections']} of "
                f"{event['connections_total']} connections routed"))


def summary(board, rules, result, report, written, seconds, interrupted) -> dict:
    length = sum(math.dist(t.start, t.end) for t in result.tracks)
    failed = result.failed_nets()
    return {
        "board": board.path,
        "output": written,
        "backend": result.backend,
        "lattice": {"shape": list(result.lattice.shape), "pitch_mm": round(result.lattice.pitch, 4)},
        "nets": result.nets_to_route,
        "nets_routed": result.routed_nets,
        "nets_failed": len(failed),
        "connections": result.connections,
        "connections_routed": result.routed_connections,
        "unrouted": report.unrouted_total,      # on the whole board, as `autorouter check` counts on the output
        "iterations": result.iterations,
        "converged": result.converged,
        "tracks": len(result.tracks),
        "vias": len(result.vias),
        "track_length_mm": round(length, 2),
        "drc_violations": len(report.violations),
        "drc_by_kind": report.by_kind(),
        "unconnected": report.unrouted_total,
        "failed": failed,
        "seconds": round(seconds, 2),
        "timings_s": {k: round(v, 3) for k, v in result.timings.items()},
        "search_engine_s": round(result.search_seconds, 3),
        "rois_per_launch": round(result.rois_per_launch, 2),
        "notes": ([] if result.connections else ["nothing to route: every net is already connected or has one pad"])
                 + rules.notes + board.warnings + result.notes
                 + ([f"{board.zone_count} zones kept: refill them in KiCad (press B)"] if board.zone_count else [])
                 + ([f"stopped early: {result.stopped_early}"] if result.stopped_early else [])
                 + ([f"interrupted ({interrupted})" + ("; partial result written" if written else "; nothing written")]
                    if interrupted else []),
    }


def render_summary(console: Console, info: dict) -> None:
    table = Table(title="autorouter", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("nets routed", f"{info['nets_routed']} / {info['nets']}")
    table.add_row("connections routed", f"{info['connections_routed']} / {info['connections']}")
    if info["unrouted"] != info["connections"] - info["connections_routed"]:     # --nets: the others count too
        table.add_row("unrouted on the whole board", str(info["unrouted"]))
    table.add_row("PathFinder iterations", f"{info['iterations']}" + ("" if info["converged"] else " (not converged)"))
    table.add_row("tracks / vias", f"{info['tracks']} / {info['vias']}")
    table.add_row("track length", f"{info['track_length_mm'] / 1000:.3f} m")
    table.add_row("DRC violations (ours)", str(info["drc_violations"]))
    table.add_row("backend", info["backend"])
    for stage, seconds in info["timings_s"].items():
        table.add_row(f"time: {stage}", f"{seconds:.2f} s")
        if stage == "search and negotiation":
            table.add_row("  of which in the search engine", f"{info['search_engine_s']:.2f} s")
    table.add_row("total", f"{info['seconds']:.2f} s")
    console.print(table)
    if info["failed"]:
        failed = Table(title=f"{len(info['failed'])} nets not fully routed")
        failed.add_column("net")
        failed.add_column("reason")
        shown = list(info["failed"].items())
        for net, why in shown[:FAILED_ROWS]:
            failed.add_row(net, why)
        if len(shown) > FAILED_ROWS:
            failed.add_row(f"... and {len(shown) - FAILED_ROWS} more", "(all of them in --json)")
        console.print(failed)
    if info.get("kicad"):
        render_kicad(console, info["drc_by_kind"], info["unconnected"], info["kicad"])
    for note in info["notes"]:
        console.print(f"note: {note}", highlight=False, markup=False)
    console.print(f"written: {info['output']}" if info["output"] else "no output written", highlight=False)
    if info.get("preview"):
        console.print(f"picture: {info['preview']}", highlight=False)


def render_info(console: Console, info: dict) -> None:
    board = Table(title=f"info: {short_name(info['board'])}", show_header=False)
    board.add_column("what")
    board.add_column("value")
    w, h = info["size_mm"]
    board.add_row("file version", str(info["file_version"]))
    board.add_row("board size", f"{w:.2f} x {h:.2f} mm")
    board.add_row("copper layers", f"{len(info['copper_layers'])}: " + ", ".join(info["copper_layers"]))
    board.add_row("nets", f"{info['nets']} ({info['nets_to_route']} to route)")
    board.add_row("connections to route", str(info["connections_to_route"]))
    board.add_row("pads", f"{info['pads']} ({info['pads_on_nets']} on nets)")
    board.add_row("existing tracks / vias / zones",
                  f"{info['existing_tracks']} / {info['existing_vias']} / {info['zones']}")
    board.add_row("edge clearance / hole to hole", f"{info['edge_clearance']} / {info['hole_to_hole']} mm")
    board.add_row("thermal spokes needed", str(info["thermal_spokes"] or "not checked (the project's rules)"))
    L, R, C = info["lattice"]["shape"]
    board.add_row("lattice", f"{L} x {R} x {C} = {info['lattice']['nodes']:,} nodes at "
                             f"{info['lattice']['pitch_mm']} mm pitch")
    board.add_row("memory for routing state", f"about {info['memory_estimate_mb']} MB (host, and device with the GPU)")
    console.print(board)
    rules = Table(title=f"design rules ({info['rules_source']})")
    for column in ("net class", "nets", "track mm", "clearance mm", "via mm", "drill mm"):
        rules.add_column(column, justify="left" if column == "net class" else "right")
    for c in info["net_classes"]:
        rules.add_row(c["name"], str(c["nets"]), f"{c['track_width']}", f"{c['clearance']}", f"{c['via_diameter']}",
                      f"{c['via_drill']}")
    console.print(rules)
    for note in info["notes"]:
        console.print(f"note: {note}", highlight=False, markup=False)


def render_check(console: Console, board, report, kicad: dict | None = None) -> None:
    table = Table(title=f"check: {short_name(board.path)}")
    table.add_column("kind")
    table.add_column("layer")
    table.add_column("where (mm)")
    table.add_column("detail")
    for v in report.violations[:200]:
        table.add_row(v.kind, v.layer, f"{v.x:.3f}, {v.y:.3f}", v.detail)
    console.print(table)
    console.print(f"{board.path}: {len(report.violations)} violations, {report.unrouted_total} unrouted "
                  f"connections in {len(report.unrouted)} nets", highlight=False, soft_wrap=True)
    if kicad:
        render_kicad(console, report.by_kind(), report.unrouted_total, kicad)


def render_kicad(console: Console, ours_by_kind: dict, ours_unconnected: int, kicad: dict) -> None:
    """Our verdict beside KiCad's (check/kicad.py), kind by kind under KiCad's names; or why KiCad's is missing."""
    if "note" in kicad:
        console.print(f"note: {kicad['note']}", highlight=False, markup=False, soft_wrap=True)
        return
    table = Table(title="ours beside KiCad's DRC")
    table.add_column("")
    table.add_column("ours", justify="right")
    table.add_column("KiCad, zones refilled", justify="right")
    table.add_row("unconnected", str(ours_unconnected), str(kicad["unconnected"]))
    theirs = kicad["violations_by_type"]
    for kind in sorted(set(ours_by_kind) | set(theirs)):
        table.add_row(kind, str(ours_by_kind.get(kind, 0)), str(theirs.get(kind, 0)))
    table.add_row("DRC errors", str(sum(ours_by_kind.values())), str(kicad["violations"]))
    console.print(table)


TITLE_CHARS = 40       # a table's title wraps at the table's width: long board names are cut to this


def short_name(path) -> str:
    """A board's file name for a table title, cut short (the full path is printed below the table)."""
    name = Path(path).name
    return name if len(name) <= TITLE_CHARS else name[:TITLE_CHARS - 3] + "..."


PADS_SHOWN = 6         # the nets table lists this many pads a net; --json lists them all


def render_nets(console: Console, info: dict) -> None:
    table = Table(title=f"nets: {short_name(info['board'])}")
    for column in ("net", "class", "pads", "connections to route"):
        table.add_column(column, justify="right" if column == "connections to route" else "left")
    for n in info["nets"]:
        shown = ", ".join(n["pads"][:PADS_SHOWN]) + (f" (+{len(n['pads']) - PADS_SHOWN})"
                                                     if len(n["pads"]) > PADS_SHOWN else "")
        table.add_row(n["name"], n["net_class"], f"{len(n['pads'])}: {shown}" if n["pads"] else "0",
                      str(n["connections_to_route"]))
    console.print(table)
    console.print(f"{len(info['nets'])} nets, {sum(n['connections_to_route'] for n in info['nets'])} connections "
                  "to route", highlight=False)
