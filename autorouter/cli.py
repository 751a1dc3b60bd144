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
import sys
import time
from pathlib import Path

from . import __version__

EXIT_OK, EXIT_PARTIAL, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad command-line usage; the message is one line."""


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="autorouter", description="GPU-accelerated PCB autorouter for KiCad boards.")
    ap.add_argument("--version", action="version", version=f"autorouter {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("route", help="route a board's nets and write the routed board")
    r.add_argument("board", help="input .kicad_pcb (never modified unless --in-place)")
    r.add_argument("-o", "--output", help="routed board to write")
    r.add_argument("--in-place", action="store_true", help="overwrite the input (atomically, keeping a .bak copy)")
    r.add_argument("--config", help="YAML file of settings (see config.yaml)")
    r.add_argument("--backend", choices=["auto", "cpu", "gpu"], help="search engine (default: auto)")
    r.add_argument("--nets", help="route only these nets (comma-separated names)")
    r.add_argument("--time-limit", type=float, help="stop after this many seconds and write the best result")
    r.add_argument("--pitch", type=float, help="lattice pitch in mm (default: from the design rules)")
    r.add_argument("--save-partial", action="store_true", help="on Ctrl-C, still write what is routed so far")
    r.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout, nothing else")
    r.add_argument("--events", action="store_true",
                   help="progress as one JSON object per line on stderr (for the KiCad plugin and scripts)")
    r.add_argument("--preview", metavar="PICTURE", help="also draw the routed board (.png, or .svg)")
    r.add_argument("-q", "--quiet", action="store_true", help="no live progress, only the summary")
    r.add_argument("--dump-config", action="store_true", help="print the settings in force and exit")
    r.add_argument("--kicad-drc", action="store_true",
                   help="also run KiCad's own DRC on the output, zones refilled (needs kicad-cli and pcbnew)")
    c = sub.add_parser("check", help="run our design-rule check on a board")
    c.add_argument("board")
    c.add_argument("--json", action="store_true")
    c.add_argument("--kicad", action="store_true",
                   help="also run KiCad's own DRC, zones refilled on a copy (needs kicad-cli and pcbnew)")
    i = sub.add_parser("info", help="layers, nets, pads, design rules and the lattice a board would need")
    i.add_argument("board")
    i.add_argument("--config", help="YAML file of settings (see config.yaml)")
    i.add_argument("--pitch", type=float, help="lattice pitch in mm (default: from the design rules)")
    i.add_argument("--json", action="store_true")
    d = sub.add_parser("render", help="draw a board: copper per layer, pads, vias, outline and airwires")
    d.add_argument("board")
    d.add_argument("-o", "--output", required=True, help="picture to write (.png, or .svg)")
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
    from .search import EngineUnavailable
    try:
        return COMMANDS[args.command](args, err)
    except (BoardError, ConfigError, UsageError, EngineUnavailable) as e:
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


def output_path(args) -> Path:
    src = Path(args.board)
    if args.in_place:
        return src
    if not args.output:
        raise UsageError("no output file: give -o OUT.kicad_pcb (or --in-place to overwrite the input)")
    out = Path(args.output)
    if out.exists() and src.exists() and os.path.samefile(out, src):
        raise UsageError(f"output {out} is the input file; use --in-place to overwrite it")
    return in_writable_directory(out, "output")


def in_writable_directory(path: Path, what: str) -> Path:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{what} directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{what} directory {parent} is not writable")
    return path


class StopFlag:
    """Ctrl-C, SIGTERM and --time-limit ask the router to stop between two searches (well within a second), once
    it is routing; before that, a signal aborts at once, as does a second one."""

    def __init__(self, time_limit: float):
        self.deadline = time.monotonic() + time_limit if time_limit else None
        self.signal = ""
        self.routing = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.handle)

    def handle(self, signum, frame):
        if self.signal or not self.routing:
            raise KeyboardInterrupt
        self.signal = signal.Signals(signum).name

    def __call__(self) -> str:
        if self.signal:
            return f"interrupted ({self.signal})"
        if self.deadline is not None and time.monotonic() > self.deadline:
            return "time limit"
        return ""


def run_route(args, err) -> int:
    from .board import load_board
    from .board.reader import read_text
    from .board.rules import load_rules
    from .check import check
    from .config import load_config
    from .pipeline import make_search_engine, route
    from .render import render
    from .report import Progress, render_summary, summary
    from .zones import predict as predict_fill
    from .writeback import with_items, write_atomic

    config = load_config(args.config, backend=args.backend, time_limit=args.time_limit, pitch=args.pitch)
    if args.dump_config:
        import dataclasses
        import yaml
        print(yaml.safe_dump(dataclasses.asdict(config), sort_keys=False), end="")
        return EXIT_OK
    out = output_path(args)
    preview = picture_path(args.preview) if args.preview else None
    engine = make_search_engine(config)          # a GPU asked for and missing is said before any work
    quiet = args.quiet or args.json or args.events
    started = time.monotonic()
    t0 = time.monotonic()
    board = load_board(args.board)
    rules = load_rules(board, config)
    read_time = time.monotonic() - t0
    only = {n.strip() for n in args.nets.split(",") if n.strip()} if args.nets else None
    if only:
        unknown = sorted(only - {n.name for n in board.nets})
        if unknown:
            raise UsageError(f"--nets: no net named {unknown[0]!r} on this board")
    stop = StopFlag(config.time_limit)
    with Progress(err, config.max_iterations, quiet) as progress:
        def on_progress(event: dict) -> None:
            stop.routing = stop.routing or event["stage"] == "tasks"      # negotiation starts: stop gracefully
            progress.update(event)
            if args.events:
                print(json.dumps(event, default=list), file=sys.stderr, flush=True)
        progress.update({"stage": "read", "nets": len(board.nets), "pads": len(board.pads),
                         "layers": len(board.copper_layers), "seconds": read_time, "backend": engine[0].name,
                         "device": getattr(engine[0], "device_name", "")})
        result = route(board, rules, config, on_progress, only, stop, engine)
    interrupted = stop.signal
    t0 = time.monotonic()
    report = check(board, rules, result.tracks, result.vias, only_new=True)
    check_time = time.monotonic() - t0
    result.timings = {"read": read_time, **result.timings, "check": check_time}
    text = read_text(args.board)                  # as bytes decode: CRLF line ends stay CRLF
    written = None
    if not interrupted or args.save_partial:
        t0 = time.monotonic()
        if args.in_place:
            write_atomic(str(out) + ".bak", text)
        write_atomic(out, with_items(text, board.version, board.net_names, result.tracks, result.vias))
        result.notes += copy_project_files(Path(args.board), Path(out))
        result.timings["write"] = time.monotonic() - t0
        written = str(out)
    if preview is not None and written:
        t0 = time.monotonic()
        render(board, preview, result.tracks, result.vias,
               pieces=predict_fill(board, rules, result.tracks, result.vias))
        result.timings["picture"] = time.monotonic() - t0
    info = summary(board, rules, result, report, written, time.monotonic() - started, interrupted)
    info["preview"] = str(preview) if preview is not None and written else None
    if args.kicad_drc:
        from .check.kicad import kicad_summary
        info["kicad"] = kicad_summary(written)
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        render_summary(err, info)
    if interrupted and not args.save_partial:
        return 130
    complete = result.routed_connections == result.connections and not report.violations
    return EXIT_OK if complete else EXIT_PARTIAL


def copy_project_files(board: Path, out: Path) -> list[str]:
    """The board's .kicad_pro (net classes, design rules) and .kicad_dru (custom rules) beside the output, so that
    KiCad opens it with the rules it was routed to; one already there is left alone, and said."""
    from .writeback import write_atomic
    notes = []
    for suffix in (".kicad_pro", ".kicad_dru"):
        src, dst = board.with_suffix(suffix), out.with_suffix(suffix)
        if not src.exists() or (dst.exists() and os.path.samefile(src, dst)):
            continue
        if dst.exists():
            if dst.read_bytes() != src.read_bytes():
                notes.append(f"{dst.name} beside the output differs from {src.name} and was left as it is")
            continue
        write_atomic(dst, src.read_bytes())
        notes.append(f"{dst.name} written beside the output (the rules it was routed to)")
    return notes


def picture_path(name: str) -> Path:
    path = Path(name)
    if path.suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"picture {path}: the name must end in .png or .svg")
    return in_writable_directory(path, "picture")


def run_render(args, err) -> int:
    from .board import load_board
    from .board.rules import load_rules
    from .config import RouterConfig
    from .render import render
    from .zones import predict as predict_fill

    if args.width < 16 or args.width > 20000:
        raise UsageError(f"--width {args.width}: must be between 16 and 20000 pixels")
    out = picture_path(args.output)
    board = load_board(args.board)
    pieces = predict_fill(board, load_rules(board, RouterConfig()))
    render(board, out, width=args.width, svg=True if args.svg else None, pieces=pieces)
    err.print(f"written: {out}", highlight=False)
    return EXIT_OK


def run_info(args, err) -> int:
    from .board import load_board
    from .board.rules import load_rules
    from .config import load_config
    from .info import board_info
    from .report import render_info

    config = load_config(args.config, pitch=args.pitch)
    board = load_board(args.board)
    info = board_info(board, load_rules(board, config), config)
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        render_info(err, info)
    return EXIT_OK


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
    rules = load_rules(board, RouterConfig())
    report = check(board, rules)
    kicad = None
    if args.kicad:
        from .check.kicad import kicad_summary
        kicad = kicad_summary(args.board)
    if args.json:
        print(json.dumps({"violations": [v.__dict__ for v in report.violations], "unrouted": report.unrouted,
                          **({"kicad": kicad} if kicad else {})}, indent=1))
    else:
        render_check(err, board, report, kicad)
    return EXIT_OK if not report.violations and not report.unrouted else EXIT_PARTIAL


COMMANDS = {"route": run_route, "check": run_check, "info": run_info, "render": run_render, "plugin": run_plugin}
