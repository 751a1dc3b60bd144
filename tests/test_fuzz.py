"""Fuzzing the reader and the router with mutated real boards: whatever the damage, `autorouter route` exits 0, 1 or
2 with no traceback (nor an "internal error"), never changes its input, writes nothing on exit 2, and otherwise
writes a board that is the mutated input plus tracks and vias, which our reader loads again, and which KiCad loads
(where KiCad is installed; KiCad 9 cannot open the KiCad 10 source at all).

Damage that kiutils would skip but KiCad's parser refuses (a line moved into another item, a layer table with an odd
number of copper layers) must be refused by our reader too (board/validate.py, board/grammar.py): a written board
that KiCad cannot open fails the test, whether or not KiCad could open the damaged input.

CI runs a time-boxed sample (AUTOROUTER_FUZZ_SECONDS, default 60). The dedicated run asks for a count:
    AUTOROUTER_FUZZ_COUNT=1000 python -m pytest tests/test_fuzz.py -q
Each run draws a fresh seed, printed on failure.
"""
import contextlib
import io
import os
import re
import shutil
import signal
import subprocess
import time

import numpy as np

from autorouter.board import load_board
from autorouter.cli import main
from conftest import BOARDS, assert_only_routing_added, kicad_available, needs_shared

SOURCES = ["k10_tastexx", "k9_atomic14_ch32v003_brains", "k8_atomic14_usb_tester"]
NUMBER = re.compile(r"(?<=[ (])-?\d+(?:\.\d+)?(?=[ )])")
GARBAGE = ["abc", "-", "1e999", "nan", "", "0x1F", "--3", "1.2.3", "99999999999999999999", '"', "("]


def mutate(text: str, rng) -> tuple[str, str]:
    """One random kind of damage; returns the damaged text and what was done."""
    kind = rng.choice(["truncate", "delete_paren", "duplicate_paren", "garbage_number", "drop_section",
                       "swap_lines", "several"])
    if kind == "several":
        for _ in range(int(rng.integers(2, 6))):
            text, _ = mutate(text, rng)
        return text, kind
    if kind == "truncate":
        return text[:int(rng.integers(0, len(text) + 1))], kind
    if kind in ("delete_paren", "duplicate_paren"):
        spots = [m.start() for m in re.finditer(r"[()]", text)]
        if not spots:
            return text, kind
        at = spots[int(rng.integers(len(spots)))]
        return (text[:at] + text[at + 1:] if kind == "delete_paren" else text[:at] + text[at] + text[at:]), kind
    if kind == "garbage_number":
        spots = [m.span() for m in NUMBER.finditer(text)]
        if not spots:
            return text, kind
        a, b = spots[int(rng.integers(len(spots)))]
        return text[:a] + str(rng.choice(GARBAGE)) + text[b:], kind
    if kind == "swap_lines":
        lines = text.split("\n")
        i, j = rng.integers(len(lines), size=2)
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines), kind
    # drop one s-expression nested one level below the root: a footprint, a net, an outline line, the layers...
    starts = [m.start() for m in re.finditer(r"\n\t?\s?\(", text)]
    if not starts:
        return text, kind
    at = starts[int(rng.integers(len(starts)))] + 1
    depth, end = 0, at
    while end < len(text):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
        if depth == 0 and text[end - 1] == ")":
            break
    return text[:at] + text[end:], kind


def route_in_process(src, out) -> tuple[int, str]:
    """`autorouter route` in this process (a thousand subprocesses would take most of the time): exit code, stderr."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["route", str(src), "-o", str(out), "-q", "--backend", "cpu", "--time-limit", "2"])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    return code, err.getvalue()


def kicad_loads(paths) -> list[str]:
    """The paths pcbnew (KiCad 9's own loader) cannot load, one process each: damaged input can hang it."""
    script = "import sys, pcbnew\nsys.exit(pcbnew.LoadBoard(sys.argv[1]) is None)\n"
    failed = []
    for path in map(str, paths):
        try:
            if subprocess.run(["/usr/bin/python3", "-c", script, path], capture_output=True, timeout=60).returncode:
                failed.append(path)
        except subprocess.TimeoutExpired:
            failed.append(path)
    return failed


@needs_shared
def test_mutated_boards_never_crash_and_never_write_a_bad_file(tmp_path):
    count = int(os.environ.get("AUTOROUTER_FUZZ_COUNT", "0"))
    seconds = float(os.environ.get("AUTOROUTER_FUZZ_SECONDS", "60"))
    seed = int.from_bytes(os.urandom(4), "little")
    rng = np.random.default_rng(seed)
    texts = {name: (BOARDS / f"{name}.kicad_pcb").read_text() for name in SOURCES}
    written, done, codes = [], 0, {}
    start = time.monotonic()
    while (done < count) if count else (time.monotonic() - start < seconds):
        name = SOURCES[done % len(SOURCES)]
        text, kind = mutate(texts[name], rng)
        case = tmp_path / f"{done}"
        case.mkdir()
        src, out = case / "board.kicad_pcb", case / "out.kicad_pcb"
        src.write_text(text)
        if (BOARDS / f"{name}.kicad_pro").exists():
            shutil.copy(BOARDS / f"{name}.kicad_pro", case / "board.kicad_pro")
        code, err = route_in_process(src, out)
        where = f"seed {seed}, mutation {done} ({kind} of {name})"
        assert code in (0, 1, 2), f"{where}: exit {code}: {err[-500:]}"
        assert "Traceback" not in err and "internal error" not in err, f"{where}: {err[-1500:]}"
        assert src.read_text() == text, f"{where}: the input was changed"
        if code == 2:
            assert not out.exists(), f"{where}: exit 2 but an output was written"
            assert len(err.strip().splitlines()) == 1, f"{where}: not one line: {err}"
        else:
            assert out.exists(), f"{where}: exit {code} without an output"
            assert_only_routing_added(text, out.read_text())
            load_board(out)
            if not name.startswith("k10"):         # KiCad 9 cannot load KiCad 10 files at all
                written.append(out)
        codes[code] = codes.get(code, 0) + 1
        done += 1
    assert done >= min(count, 1) if count else done > 0
    checked = kicad_available() and written
    if checked:
        bad_outputs = kicad_loads(written)
        assert not bad_outputs, f"seed {seed}: KiCad cannot load these outputs: {bad_outputs[:5]}"
    print(f"fuzz: {done} mutations, seed {seed}, exit codes {codes}, {len(written)} outputs "
          + ("loaded by KiCad" if checked else "(KiCad not installed: not checked with it)"))
