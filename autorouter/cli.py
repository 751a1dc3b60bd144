"""The command line: `autorouter route`, `check`, `info`, `render` and `plugin install`. Thin: it parses, reports with
rich and delegates.

Exit codes: 0 everything routed (or nothing to route), 1 routing partial (the output is still written and valid),
2 bad input or usage (one line on stderr, nothing written).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

from . import __version__

EXIT_OK, EXIT_PARTIAL, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad command-line usage; the message is one line."""


PROJECT_HELP = "the .kicad_pro to take the design rules from (default: the one beside the board)"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="autorouter", description="GPU-accelerated PCB autorouter for KiCad boards.")
    ap.add_argument("--version", action="version", version=f"autorouter {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("route", help="route a board's nets and write the routed board")
    r.add_argument("board", nargs="?", help="input .kicad_pcb (never modified unless --in-place)")
    r.add_argument("-o", "--output", help="routed board to write (a folder: the board's file name in it)")
    r.add_argument("--in-place", action="store_true", help="overwrite the input (atomically, keeping a .bak copy)")
    r.add_argument("--config", help="YAML file of settings (see config.yaml)")
    r.add_argument("--project", help=PROJECT_HELP)
    r.add_argument("--backend", choices=["auto", "cpu", "gpu"], help="search engine (default: auto)")
    r.add_argument("--nets", help="route only these nets (comma-separated names; case does not matter)")
    r.add_argument("--time-limit", type=float, help="stop after this many seconds and write the best result")
    r.add_argument("--jobs", type=int, help="route this many attempts side by side, each in a process of its own, "
                                            "and keep the best (default 1: one after another, as time allows)")
    r.add_argument("--pitch", type=float, help="lattice pitch in mm (default: from the design rules)")
    r.add_argument("--save-partial", action="store_true", help="on Ctrl-C, still write what is routed so far")
    r.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout, nothing else")
    r.add_argument("--events", action="store_true",
                   help="progress as one JSON object per line on stdout, the summary last (for the KiCad plugin "
                        "and scripts)")
    r.add_argument("--preview", metavar="PICTURE", help="also draw the routed board (.png, or .svg; a folder: "
                                                        "BOARD.png in it)")
    r.add_argument("-q", "--quiet", action="store_true", help="no live progress, only the summary")
    r.add_argument("--dump-config", action="store_true",
                   help="print the settings in force and exit (with a board: the pitch it would use)")
    r.add_argument("--kicad-drc", action="store_true",
                   help="also run KiCad's own DRC on the output, zones refilled (needs kicad-cli and pcbnew)")
    c = sub.add_parser("check", help="run our design-rule check on a board")
    c.add_argument("board")
    c.add_argument("--project", help=PROJECT_HELP)
    c.add_argument("--json", action="store_true")
    c.add_argument("--kicad", action="store_true",
                   help="also run KiCad's own DRC, zones refilled on a copy (needs kicad-cli and pcbnew)")
    i = sub.add_parser("info", help="layers, nets, pads, design rules and the lattice a board would need")
    i.add_argument("board")
    i.add_argument("--config", help="YAML file of settings (see config.yaml)")
    i.add_argument("--pitch", type=float, help="lattice pitch in mm (default: from the design rules)")
    i.add_argument("--project", help=PROJECT_HELP)
    i.add_argument("--nets", action="store_true", help="every net: its class, pads and connections to route")
    i.add_argument("--json", action="store_true")
    d = sub.add_parser("render", help="draw a board: copper per layer, pads, vias, outline and airwires")
    d.add_argument("board")
    d.add_argument("-o", "--output", required=True, help="picture to write (.png, or .svg; a folder: BOARD.png in it)")
    d.add_argument("--svg", action="store_true", help="write SVG whatever the file name")
    d.add_argument("--width", type=int, default=1600, help="width in pixels (default 1600)")
    p = sub.add_parser("plugin", help="install the KiCad plugin")
    p.add_argument("action", choices=["install"])
    p.add_argument("--kind", choices=["auto", "ipc", "swig"], default="auto",
                   help="IPC API plugin (KiCad 9, 10) or SWIG action plugin (KiCad 6-9); auto: the one that fits")
    p.add_argument("--dir", help="plugin folder to install into (default: KiCad's folder for that kind of plugin)")
    return ap


def main(argv=None) -> int:
    from rich.console import Console
    err = Console(stderr=True)
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return EXIT_BAD_INPUT if e.code not in (0, None) else EXIT_OK
    from .board.reader import BoardError
    from .config import ConfigError
    from .outputs import OutputError
    from .search import EngineUnavailable
    try:
        return COMMANDS[args.command](args, err)
    except (BoardError, ConfigError, UsageError, OutputError, EngineUnavailable) as e:
        err.print(f"autorouter: error: {e}", highlight=False, markup=False, soft_wrap=True)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.print("autorouter: interrupted; nothing written", highlight=False)
        return 130
    except MemoryError:
        err.print("autorouter: error: out of memory (try a coarser --pitch)", highlight=False)
        return EXIT_BAD_INPUT
    except Exception as e:  # never a traceback for the user: one line, and nothing written
        if os.environ.get("AUTOROUTER_DEBUG"):
            raise
        err.print(f"autorouter: internal error: {type(e).__name__}: {e} (nothing written; please report this board)",
                  highlight=False, markup=False, soft_wrap=True)
        return EXIT_BAD_INPUT


class StopFlag:
    """Ctrl-C and SIGTERM ask the router to stop between two searches (well within a second), once it is routing;
    before that, a signal aborts at once, as does a second one. (--time-limit is the pipeline's: it ends routing
    early enough for the check and the write to follow within the limit.)"""

    def __init__(self):
        self.signal = ""
        self.routing = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.handle)

    def handle(self, signum, frame):
        if self.signal or not self.routing:
            raise KeyboardInterrupt
        self.signal = signal.Signals(signum).name

    def __call__(self) -> str:
        return f"interrupted ({self.signal})" if self.signal else ""


def run_route(args, err) -> int:
    from .board import load_board
    from .board.reader import read_text
    from .board.rules import load_rules
    from .check import check
    from .config import load_config
    from .outputs import board_output, picture_output
    from .pipeline import make_search_engine, route
    from .render import render
    from .report import Progress, summary
    from .writeback import with_items

    config = load_config(args.config, backend=args.backend, time_limit=args.time_limit, pitch=args.pitch,
                         jobs=args.jobs)
    if args.dump_config:
        return dump_config(args, config)
    if not args.board:
        raise UsageError("route: give the board to route (autorouter route BOARD.kicad_pcb -o OUT.kicad_pcb)")
    out = board_output(args.board, args.output, args.in_place)
    preview = picture_output(args.preview, args.board) if args.preview else None
    engine = make_search_engine(config)          # a GPU asked for and missing is said before any work
    quiet = args.quiet or args.json or args.events
    started = time.monotonic()
    t0 = time.monotonic()
    board = load_board(args.board)
    rules = load_rules(board, config, args.project)
    read_time = time.monotonic() - t0
    only = nets_named(args.nets, board) if args.nets else None
    if rules.source == "defaults" and not quiet:      # said first: every width and clearance hangs on it
        err.print(f"note: {rules.notes[0]}", highlight=False, markup=False)
    if config.jobs > 1 and config.retries:
        return route_side_by_side(args, err, board, rules, config, out, preview, started, read_time, engine[0])
    stop = StopFlag()
    with Progress(err, config.max_iterations, quiet) as progress:
        say = reporter(args, progress, started)

        def on_progress(event: dict) -> None:
            stop.routing = stop.routing or event["stage"] == "tasks"      # negotiation starts: stop gracefully
            say(event)
        on_progress(read_event(board, rules, engine[0], read_time))
        result = route(board, rules, config, on_progress, only, stop, engine, started)
        on_progress({"stage": "check"})
        t0 = time.monotonic()
        report = check(board, rules, result.tracks, result.vias, only_new=True, fills=result.fills,
                       fills_before=result.fills_before, relief_fills=result.relief_fills)
        check_time = time.monotonic() - t0
    interrupted = stop.signal
    result.timings = {"read": read_time, **result.timings, "check": check_time}
    text = read_text(args.board)                  # as bytes decode: CRLF line ends stay CRLF
    written = None
    if not interrupted or args.save_partial:
        t0 = time.monotonic()
        result.notes += write_output(args, out, with_items(text, board.version, board.net_names, result.tracks,
                                                           result.vias), text)
        result.timings["write"] = time.monotonic() - t0
        written = str(out)
    if preview is not None and written:
        t0 = time.monotonic()
        render(board, preview, result.tracks, result.vias,
               pieces=result.fills)
        result.timings["picture"] = time.monotonic() - t0
    info = summary(board, rules, result, report, written, time.monotonic() - started, interrupted)
    info["preview"] = str(preview) if preview is not None and written else None
    return report_run(args, err, info, interrupted)


def read_event(board, rules, engine, read_time: float) -> dict:
    """The progress event that opens a route: what was read, and the engine that will search."""
    return {"stage": "read", "nets": len(board.nets), "pads": len(board.pads), "layers": len(board.copper_layers),
            "seconds": read_time, "backend": engine.name, "device": getattr(engine, "device_name", ""),
            "rules": rules.source}


def reporter(args, progress, started: float):
    """A progress event's handler: the live display, and with --events one JSON line on stdout (the seconds since
    the start as `t`); one event at a time, from whichever thread says it."""
    lock = threading.Lock()

    def say(event: dict) -> None:
        with lock:
            progress.update(event)
            if args.events:
                print(json.dumps({**event, "t": round(time.monotonic() - started, 3)}, default=list), flush=True)
    return say


def write_output(args, out: Path, data: str | bytes, original: str | bytes) -> list[str]:
    """The routed board written to out (with --in-place, the original kept first as a backup), and the project
    files beside it; returns the notes for the summary."""
    from .board.rules import project_path
    from .outputs import backup_path, copy_project_files
    from .writeback import write_atomic
    notes = []
    if args.in_place:
        backup = backup_path(out)
        write_atomic(backup, original)
        notes.append(f"the original board is kept as {backup}")
    write_atomic(out, data)
    return notes + copy_project_files(Path(args.project or project_path(args.board)), out)


def report_run(args, err, info: dict, interrupted: str) -> int:
    """The summary said (with KiCad's DRC beside it where asked) and the exit code."""
    from .report import render_summary
    if args.kicad_drc:
        from .check.kicad import kicad_summary
        info["kicad"] = kicad_summary(info["output"])
    if args.events:                               # stdout stays one JSON event a line: the summary is the last
        print(json.dumps({"stage": "summary", **info}), flush=True)
    elif args.json:
        print(json.dumps(info, indent=1))
    else:
        render_summary(err, info)
    if interrupted and not args.save_partial:
        return 130
    complete = info["connections_routed"] == info["connections"] and not info["drc_violations"]
    return EXIT_OK if complete else EXIT_PARTIAL


def route_side_by_side(args, err, board, rules, config, out, preview, started, read_time, engine) -> int:
    """run_route where config.jobs asks for attempts side by side (jobs.py): each worker routes, checks and writes
    in a folder of the run's own; the best worker's board is copied to the output, and its summary is the run's."""
    import tempfile
    from .jobs import route_side_by_side as at_once, variants
    from .outputs import BESIDE
    from .report import Progress
    from .writeback import write_atomic

    quiet = args.quiet or args.json or args.events
    settings = variants(board, rules, config)
    if config.time_limit:           # every worker ends within the run's limit, counted from the run's start
        left = max(1.0, config.time_limit - (time.monotonic() - started))
        settings = [(s.replace(time_limit=round(left, 3)), change) for s, change in settings]
    passed = ((["--project", args.project] if args.project else []) + (["--nets", args.nets] if args.nets else [])
              + (["--save-partial"] if args.save_partial else []))
    if preview is not None:
        passed += ["--preview", "{folder}/picture" + Path(preview).suffix]
    stop = StopFlag()
    stop.routing = True             # a signal is passed on to the workers, which stop gracefully
    with Progress(err, config.max_iterations, quiet) as progress, \
            tempfile.TemporaryDirectory(prefix="autorouter-") as folder:
        say = reporter(args, progress, started)
        say(read_event(board, rules, engine, read_time))
        say({"stage": "attempts", "count": len(settings)})
        # the first attempt's progress is the run's (the others' would interleave with it)
        best, workers = at_once(args.board, settings, Path(folder), passed,
                                lambda k, event: say(event) if k == 0 and event["stage"] != "read" else None,
                                lambda: stop.signal)
        if best is None:
            if stop.signal:
                err.print("autorouter: interrupted; nothing written", highlight=False)
                return 130
            raise RuntimeError(f"no attempt wrote a board ({workers[0].error or 'no message'})")
        # the worker's notes but where it copied the project files: beside its own board, not the output
        info = {**best.summary, "notes": [n for n in best.summary["notes"] if BESIDE not in n]}
        written = None
        if not stop.signal or args.save_partial:
            info["notes"] += write_output(args, out, Path(best.summary["output"]).read_bytes(),
                                          Path(args.board).read_bytes())
            written = str(out)
            if preview is not None and info.get("preview"):
                write_atomic(preview, Path(info["preview"]).read_bytes())
    info["output"] = written
    info["preview"] = str(preview) if preview is not None and written and info.get("preview") else None
    info["seconds"] = round(time.monotonic() - started, 2)
    info["notes"].append(f"{len(workers)} attempts routed side by side: attempt {best.index + 1} ({best.change}) kept")
    info["attempts"] = [{"changes": w.change, "connections_routed": (w.summary or {}).get("connections_routed"),
                         "drc_violations": (w.summary or {}).get("drc_violations"),
                         "seconds": (w.summary or {}).get("seconds")} for w in workers]
    return report_run(args, err, info, stop.signal)


def nets_named(spec: str, board) -> set[str]:
    from .net_selection import NetSelectionError, select_nets
    try:
        return select_nets(spec, board.net_names.values())
    except NetSelectionError as e:
        raise UsageError(f"--nets: {e}") from None


def dump_config(args, config) -> int:
    """The settings in force as YAML; the pitch as routing would use it on the board given, else where it comes
    from."""
    import dataclasses
    import yaml
    values = dataclasses.asdict(config)
    if args.board:
        from .board import load_board
        from .board.rules import load_rules
        from .pipeline import board_lattice
        board = load_board(args.board)
        values["pitch"] = round(board_lattice(board, load_rules(board, config, args.project), config).pitch, 4)
    elif not config.pitch:
        values["pitch"] = "from the board's design rules"
    print(yaml.safe_dump(values, sort_keys=False), end="")
    return EXIT_OK


def run_render(args, err) -> int:
    from .board import load_board
    from .board.rules import load_rules
    from .config import RouterConfig
    from .outputs import picture_output
    from .render import render
    from .zones import predict as predict_fill

    if args.width < 16 or args.width > 20000:
        raise UsageError(f"--width {args.width}: must be between 16 and 20000 pixels")
    out = picture_output(args.output, args.board, svg=args.svg)
    board = load_board(args.board)
    pieces = predict_fill(board, load_rules(board, RouterConfig()))
    render(board, out, width=args.width, svg=True if args.svg else None, pieces=pieces)
    err.print(f"written: {out}", highlight=False)
    return EXIT_OK


def run_info(args, err) -> int:
    from .board import load_board
    from .board.rules import load_rules
    from .config import load_config
    from .info import board_info, net_rows
    from .report import render_info, render_nets

    config = load_config(args.config, pitch=args.pitch)
    board = load_board(args.board)
    rules = load_rules(board, config, args.project)
    info = {"board": board.path, "nets": net_rows(board, rules)} if args.nets else board_info(board, rules, config)
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        (render_nets if args.nets else render_info)(stdout_console(), info)     # tables are output: stdout
    return EXIT_OK


def stdout_console():
    from rich.console import Console
    return Console()


def run_plugin(args, err) -> int:
    from .plugin_install import install
    done = install(args.dir, args.kind)
    err.print(f"KiCad {done.kind.upper()} plugin installed in {done.path}", *done.notes, sep="\n", highlight=False)
    return EXIT_OK


def run_check(args, err) -> int:
    from .board import load_board
    from .board.rules import load_rules
    from .check import check
    from .config import RouterConfig
    from .report import render_check

    board = load_board(args.board)
    rules = load_rules(board, RouterConfig(), args.project)
    report = check(board, rules)
    kicad = None
    if args.kicad:
        from .check.kicad import kicad_summary
        kicad = kicad_summary(args.board)
    if args.json:
        print(json.dumps({"violations": [v.__dict__ for v in report.violations], "unrouted": report.unrouted,
                          **({"kicad": kicad} if kicad else {})}, indent=1))
    else:
        render_check(stdout_console(), board, report, kicad)
    return EXIT_OK if not report.violations and not report.unrouted else EXIT_PARTIAL


COMMANDS = {"route": run_route, "check": run_check, "info": run_info, "render": run_render, "plugin": run_plugin}
