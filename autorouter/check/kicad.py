"""KiCad's own verdict on a board, beside ours: its DRC (errors only) and its count of missing connections, after
refilling every copper zone as a user pressing B would.

Both run as subprocesses on a copy in a temporary folder, so the user's file (and its folder) is never touched:
the refill in a Python that imports KiCad's `pcbnew` module (KiCad's own, or the system one on Linux, which is
rarely the interpreter running us), the DRC with `kicad-cli pcb drc`. When either is missing, or KiCad fails or
takes too long, the verdict is a one-line reason instead, for the caller to show as a note.
"""
from __future__ import annotations

import collections
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

KICAD_TIMEOUT_S = 600.0      # refill and DRC together; a large board's refill takes minutes, a demo board's seconds
PROJECT_FILES = (".kicad_pro", ".kicad_dru")    # the design rules KiCad checks against, found beside the board

# Refill on the copy, save it, and count from the saved file, as KiCad would after B, Ctrl-S and a reopen. The count
# comes from pcbnew because kicad-cli's report stops listing unconnected items at 499.
REFILL_AND_COUNT = """
import sys, pcbnew
path = sys.argv[1]
board = pcbnew.LoadBoard(path)
pcbnew.ZONE_FILLER(board).Fill(board.Zones())
pcbnew.SaveBoard(path, board)
board = pcbnew.LoadBoard(path)
board.BuildConnectivity()
print("unconnected", board.GetConnectivity().GetUnconnectedCount(False))
"""

PROBE = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pcbnew') is None)"


class KicadUnavailable(Exception):
    """KiCad's verdict could not be had; the message is one line, for a note."""


@dataclass(frozen=True)
class KicadVerdict:
    unconnected: int                     # KiCad's count of missing connections, zones refilled
    violations_by_type: dict[str, int]   # KiCad's DRC errors by its type name (clearance, shorting_items, ...)
    seconds: float

    @property
    def violations(self) -> int:
        return sum(self.violations_by_type.values())

    def as_json(self) -> dict:
        return {"unconnected": self.unconnected, "violations": self.violations,
                "violations_by_type": self.violations_by_type, "seconds": round(self.seconds, 2)}


def kicad_summary(board: str | Path | None, timeout: float = KICAD_TIMEOUT_S) -> dict:
    """What the CLI shows: the verdict as JSON, or {"note": why there is none}."""
    if board is None:
        return {"note": "KiCad's DRC not run: no output was written"}
    try:
        return kicad_verdict(board, timeout).as_json()
    except KicadUnavailable as e:
        return {"note": f"KiCad's DRC not run: {e}"}


def kicad_verdict(board: str | Path, timeout: float = KICAD_TIMEOUT_S) -> KicadVerdict:
    """KiCad's DRC errors and missing connections on `board` with its zones refilled (on a copy)."""
    started = time.monotonic()
    deadline = Deadline(timeout)
    kicad_cli = shutil.which("kicad-cli")
    if kicad_cli is None:
        raise KicadUnavailable("kicad-cli is not installed (or not on PATH)")
    python = pcbnew_python(kicad_cli)
    if python is None:
        raise KicadUnavailable("no Python with KiCad's pcbnew module was found (needed to refill the zones)")
    board = Path(board)
    with tempfile.TemporaryDirectory(prefix="autorouter-kicad-") as tmp:
        copy = Path(tmp) / "board.kicad_pcb"
        try:
            shutil.copyfile(board, copy)
            for suffix in PROJECT_FILES:
                if board.with_suffix(suffix).exists():
                    shutil.copyfile(board.with_suffix(suffix), copy.with_suffix(suffix))
        except OSError as e:
            raise KicadUnavailable(f"{board} could not be copied ({e.strerror})") from None
        unconnected = refill_and_count(python, copy, deadline)
        by_type = drc_errors(kicad_cli, copy, Path(tmp) / "drc.json", deadline)
    return KicadVerdict(unconnected, by_type, time.monotonic() - started)


def pcbnew_python(kicad_cli: str) -> str | None:
    """A Python that can import pcbnew: ours if it can (KiCad's own, or one given the path), else the one KiCad
    ships beside kicad-cli (Windows, macOS), else the system's (Linux packages install pcbnew there)."""
    if importlib.util.find_spec("pcbnew") is not None:
        return sys.executable
    bin_dir = Path(kicad_cli).resolve().parent
    candidates = [bin_dir / "python.exe", bin_dir / "python3", bin_dir / "python",
                  bin_dir.parent / "Frameworks/Python.framework/Versions/Current/bin/python3",
                  Path("/usr/bin/python3"), shutil.which("python3")]
    for python in candidates:
        if python and Path(python).is_file() and Path(python).resolve() != Path(sys.executable).resolve():
            try:
                probe = subprocess.run([str(python), "-c", PROBE], capture_output=True, timeout=30, env=foreign_env())
            except (OSError, subprocess.TimeoutExpired):
                continue
            if probe.returncode == 0:
                return str(python)
    return None


def foreign_env() -> dict:
    """Our PYTHONHOME and PYTHONPATH belong to our interpreter; another Python must not inherit them."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}


class Deadline:
    """One time limit shared by the refill and the DRC."""

    def __init__(self, seconds: float):
        self.seconds, self.end = seconds, time.monotonic() + seconds

    def left(self, what: str) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise self.expired(what)
        return left

    def expired(self, what: str) -> KicadUnavailable:
        return KicadUnavailable(f"KiCad took longer than {self.seconds:g} s (stopped while {what})")


def refill_and_count(python: str, board: Path, deadline: Deadline) -> int:
    env = os.environ.copy() if python == sys.executable else foreign_env()
    proc = run([python, "-c", REFILL_AND_COUNT, str(board)], deadline, "refilling the zones", env)
    counts = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("unconnected ")]
    if proc.returncode != 0 or not counts:
        raise KicadUnavailable(f"pcbnew could not refill the zones: {last_line(proc.stderr)}")
    return int(counts[-1])


def drc_errors(kicad_cli: str, board: Path, report: Path, deadline: Deadline) -> dict[str, int]:
    """kicad-cli's DRC, errors only (warnings are KiCad's advice, not a failure), counted by type."""
    proc = run([kicad_cli, "pcb", "drc", "--format", "json", "--severity-error", "--units", "mm", "-o", str(report),
                str(board)], deadline, "running its DRC")
    if proc.returncode != 0 or not report.exists():
        raise KicadUnavailable(f"kicad-cli could not check the board: {last_line(proc.stderr or proc.stdout)}")
    try:
        violations = json.loads(report.read_text(encoding="utf-8"))["violations"]
        return dict(collections.Counter(v["type"] for v in violations))
    except (ValueError, KeyError, TypeError) as e:
        raise KicadUnavailable(f"kicad-cli's DRC report could not be read ({type(e).__name__}: {e})")


def run(command: list[str], deadline: Deadline, what: str, env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=deadline.left(what),
                              env=env)
    except subprocess.TimeoutExpired:
        raise deadline.expired(what) from None
    except OSError as e:
        raise KicadUnavailable(f"{Path(command[0]).name} could not be started ({e.strerror})") from None


def last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no message"
