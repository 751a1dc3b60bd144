"""Attempts side by side: the settings that the retries try one after another (pipeline.attempts), each routed at
once in a worker process of its own, and the best board kept.

One after another, a retry runs only where the attempts before it left the time for it: on the boards short of joins
the first attempt takes most of --time-limit (benchmarks/CORPUS.md), so they never meet a retry, and a board that only
a late retry makes whole waits for every attempt before it. Side by side, on a machine with the cores, every attempt
gets the whole limit and the run takes the time of the longest. Each worker is a whole `autorouter route` with
retries 0, so that a GPU engine has a CUDA context of its own and nothing is shared; it reports as --events does and
writes its board to the run's own folder, from which the best is copied to the output. The best is chosen as the
retries choose: fewest joins missing, then fewest thermal reliefs starved, then fewest errors, then the earliest.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .board.model import Board
from .board.rules import DesignRules
from .config import RouterConfig
from .escapes import candidates
from .pipeline import attempts, board_lattice, changed, same_lattice

POLL = 0.1      # s between looks at the workers


def variants(board: Board, rules: DesignRules, config: RouterConfig) -> list[tuple[RouterConfig, str]]:
    """The settings of each attempt (the user's first, then the retries', at most config.jobs), each with retries 0,
    and what it changes; as best_attempt does, a retry that would route the board as the first does is left out (the
    pins' lattice where no row asks for other lines, escapes where no row has room for them)."""
    first = board_lattice(board, rules, config)
    out = []
    for variant in attempts(config, first.pitch):
        if same_lattice(board, rules, variant, config, first):
            continue
        if variant.escape_length != config.escape_length and not candidates(board, rules, variant.escape_length):
            continue
        out.append((variant.replace(retries=0, jobs=1), changed(variant, config) or "the settings given"))
    return out[:config.jobs]


@dataclass
class Worker:
    """One attempt's process and folder; once it is done, its summary (None where it wrote none) and the last line
    it wrote to stderr (an error's message)."""
    index: int
    change: str
    folder: Path
    process: subprocess.Popen
    summary: dict | None = None
    reader: threading.Thread | None = None
    error: str = ""

    @property
    def done(self) -> bool:
        return self.process.poll() is not None and (self.reader is None or not self.reader.is_alive())

    def flaw(self) -> tuple:
        """The order the best is chosen by (None: no board written)."""
        s = self.summary
        if s is None or not s.get("output"):
            return None
        return (s["connections"] - s["connections_routed"], s["drc_by_kind"].get("starved_thermal", 0),
                s["drc_violations"], self.index)


def start(index: int, settings: RouterConfig, change: str, board_path: str, folder: Path, passed: list[str],
          on_event) -> Worker:
    """A worker routing the board with these settings (passed: the run's own options that the workers share, each
    "{folder}" in them the worker's folder)."""
    import yaml
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.yaml").write_text(yaml.safe_dump(asdict(settings), sort_keys=False))
    out = folder / Path(board_path).name
    command = [sys.executable, "-m", "autorouter", "route", board_path, "-o", str(out), "--config",
               str(folder / "settings.yaml"), "--events", *(p.replace("{folder}", str(folder)) for p in passed)]
    return launch(index, change, folder, command, on_event)


def launch(index: int, change: str, folder: Path, command: list[str], on_event) -> Worker:
    """The worker running the command, its events (one JSON object a line, the summary last) read as they come."""
    with open(folder / "stderr.txt", "w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                   start_new_session=True)    # a Ctrl-C at the terminal reaches the parent alone
    worker = Worker(index, change, folder, process)

    def read() -> None:
        for line in process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("stage") == "summary":
                worker.summary = {k: v for k, v in event.items() if k not in ("stage", "t")}
            else:
                on_event(index, event)
    worker.reader = threading.Thread(target=read, daemon=True)
    worker.reader.start()
    return worker


def route_side_by_side(board_path: str, settings: list[tuple[RouterConfig, str]], folder: Path, passed: list[str],
                       on_event, interrupted) -> tuple[Worker | None, list[Worker]]:
    """Routes the board with each of the settings at once; returns the best worker that wrote a board (None if
    none did) and all of them. Once an attempt is flawless and every attempt before it is done, the later ones are
    stopped: nothing they could give would be chosen. interrupted(): a signal asks the run to stop; the workers are
    asked too, and what they write is chosen from."""
    workers = [start(k, s, change, board_path, folder / f"attempt{k + 1}", passed, on_event)
               for k, (s, change) in enumerate(settings)]
    asked = False
    try:
        while not all(w.done for w in workers):
            if interrupted() and not asked:
                for w in workers:
                    if w.process.poll() is None:
                        os.killpg(w.process.pid, signal.SIGINT)
                asked = True
            for w in workers:
                flaw = w.flaw() if w.done else None
                if flaw is not None and flaw[:3] == (0, 0, 0) and all(v.done for v in workers[:w.index]):
                    for later in workers[w.index + 1:]:
                        if later.process.poll() is None:
                            os.killpg(later.process.pid, signal.SIGKILL)
                    break
            time.sleep(POLL)
    finally:
        for w in workers:           # whatever ended the wait (an error, a second Ctrl-C) leaves no worker behind
            if w.process.poll() is None:
                os.killpg(w.process.pid, signal.SIGKILL)
            w.process.wait()
            if w.reader is not None:
                w.reader.join()
            w.error = last_line(w.folder / "stderr.txt")
    written = [w for w in workers if w.flaw() is not None]
    return (min(written, key=Worker.flaw) if written else None), workers


def last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""
