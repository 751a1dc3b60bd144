"""Running the installed router from a KiCad plugin: its command line, its progress, a cancel, its summary.

Shared by both plugins (the SWIG action in this package, and the IPC plugin, which gets a copy of this file when
`autorouter plugin install` installs it), so it imports nothing but the standard library: neither pcbnew, nor wx,
nor kipy. The router runs in a subprocess because neither KiCad's Python nor the IPC plugin's environment has its
dependencies (NumPy, shapely, CuPy).
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

ENGINES = ("auto", "cpu", "gpu")        # `autorouter route --backend`
INSTALLED = "installed.json"            # written by `autorouter plugin install`: how to run that installation
SETUP_HINT = ("in a terminal, run `autorouter plugin install` with the Python environment where autorouter is "
              "installed (for example `python -m autorouter plugin install`), then restart KiCad's PCB editor")


class Cancelled(Exception):
    """The user pressed Cancel: the router was stopped and wrote nothing."""


class RouterFailed(Exception):
    """The router refused the board or stopped with an error; the message is its own one-line explanation."""


@dataclass
class RouteOptions:
    """What the plugin's dialog asks for; each maps to one `autorouter route` flag."""
    nets: list[str] = field(default_factory=list)     # route only these nets; empty: every net
    time_limit: float | None = None                   # seconds; None: until done
    engine: str = "auto"                              # one of ENGINES

    def arguments(self) -> list[str]:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")
        args = ["--backend", self.engine]
        if self.nets:
            args += ["--nets", ",".join(self.nets)]
        if self.time_limit is not None:
            if not self.time_limit > 0:
                raise ValueError(f"the time limit must be a positive number of seconds, not {self.time_limit}")
            args += ["--time-limit", f"{self.time_limit:g}"]
        return args

    @classmethod
    def parse(cls, nets: str, time_limit: str, engine: str) -> "RouteOptions":
        """From the dialog's text fields: nets separated by commas, a time limit in seconds or blank."""
        names = [n.strip() for n in nets.split(",") if n.strip()]
        limit = None
        if time_limit.strip():
            try:
                limit = float(time_limit)
            except ValueError:
                raise ValueError(f"the time limit must be a number of seconds, not {time_limit.strip()!r}") from None
        options = cls(names, limit, engine)
        options.arguments()                   # refuse a bad value here, before anything runs
        return options


def autorouter_command(plugin_dir: Path) -> list[str]:
    """How to run the router: the installation recorded beside the plugin by `autorouter plugin install`, else
    `autorouter` on the PATH. Raises RouterFailed, saying what to run in a terminal, when neither is there."""
    recorded = plugin_dir / INSTALLED
    if recorded.exists():
        command = json.loads(recorded.read_text())["command"]
        if Path(command[0]).exists():
            return command
    found = shutil.which("autorouter")
    if found:
        return [found]
    raise RouterFailed(f"autorouter is not installed where KiCad can find it: {SETUP_HINT}")


def clean_env() -> dict:
    """KiCad sets PYTHONHOME and PYTHONPATH for its own Python, and a plugin's virtual environment sets VIRTUAL_ENV;
    the router's interpreter must inherit none of them."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV")}


def describe(event: dict) -> str:
    stage = event.get("stage")
    if stage == "lattice":
        return "lattice {} x {} x {}".format(*event["shape"])
    if stage == "tasks":
        return f"routing {event['nets']} nets, {event['connections']} connections"
    if stage == "iteration":
        return (f"iteration {event['iteration']}: {event['nets']} nets routed, {event['conflicted']} in conflict, "
                f"{event['shared']} shared nodes")
    if stage == "make room":
        return f"making room: net {event['net']} of {event['nets']} still short, {event['joined']} joined so far"
    if stage == "joining":
        return f"joining what the fills no longer join, round {event['round']}: {event['missing']} missing"
    return str(stage)


def summary_text(info: dict) -> str:
    lines = [f"connections routed: {info['connections_routed']} / {info['connections']}",
             f"nets routed: {info['nets_routed']} / {info['nets']}",
             f"tracks / vias added: {info['tracks']} / {info['vias']}",
             f"DRC violations (autorouter's check): {info['drc_violations']}",
             f"backend: {info['backend']}, {info['seconds']:.1f} s"]
    lines += [f"not routed: {net} ({why})" for net, why in list(info["failed"].items())[:10]]
    lines += [f"note: {note}" for note in info["notes"]]
    return "\n".join(lines)


class ConsoleUI:
    """Progress and results as printed lines (headless use and tests); the dialogs in dialog.py have the same face."""

    def progress(self, text: str) -> None:
        print(text, flush=True)

    def cancelled(self) -> bool:
        return False

    def done(self, text: str) -> None:
        print(text, flush=True)

    def error(self, text: str) -> None:
        print(f"error: {text}", flush=True)


def run_router(command: list[str], board: Path, out: Path, options: RouteOptions, ui, poll: float = 0.1) -> dict:
    """Route `board` into `out` with `autorouter route --events` (stdout: one JSON event a line, the summary last),
    relaying its progress to ui.progress and asking ui.cancelled() at least every `poll` seconds. Returns the
    router's summary (exit 0 or 1: complete or partial, the output written either way). Raises Cancelled when the
    user cancels (the router is stopped with SIGTERM, which makes it write nothing), RouterFailed when it fails."""
    errors_file = out.with_suffix(".errors.txt")
    with open(errors_file, "w") as stderr:   # a file, not a pipe: errors cannot fill a pipe and block the router
        proc = subprocess.Popen([*command, "route", str(board), "-o", str(out), *options.arguments(), "--events"],
                                stdout=subprocess.PIPE, stderr=stderr, text=True, env=clean_env())
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
    reader.start()                           # the dialog stays live (and Cancel works) between two events
    info = None
    while proc.poll() is None or reader.is_alive() or not lines.empty():
        if ui.cancelled():
            stop(proc)
            raise Cancelled("routing cancelled: nothing was changed")
        try:
            event = json.loads(lines.get(timeout=poll))
        except queue.Empty:
            continue
        except ValueError:
            continue
        if event.get("stage") == "summary":
            info = {k: v for k, v in event.items() if k != "stage"}
        else:
            try:
                ui.progress(describe(event))
            except (KeyError, TypeError):
                pass
    code = proc.wait()
    errors = errors_file.read_text(errors="replace").splitlines()
    errors_file.unlink(missing_ok=True)
    if code not in (0, 1) or not out.exists() or info is None:
        raise RouterFailed("; ".join(e.strip() for e in errors if e.strip()) or f"autorouter exited with code {code}")
    return info


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM (the router stops between two searches, within a second, and writes nothing), then a kill."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
