"""The plugin's work, free of wx so it runs headless: save, route in a subprocess, copy the new items back."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


class ConsoleUI:
    """Progress and results as printed lines (headless use and tests); the dialog in dialog.py has the same face."""

    def progress(self, text: str) -> None:
        print(text, flush=True)

    def done(self, text: str) -> None:
        print(text, flush=True)

    def error(self, text: str) -> None:
        print(f"error: {text}", flush=True)


def autorouter_command() -> list[str]:
    """How to run the installed router: recorded by `autorouter plugin install`, else `autorouter` on the PATH."""
    recorded = HERE / "installed.json"
    if recorded.exists():
        return json.loads(recorded.read_text())["command"]
    found = shutil.which("autorouter")
    if found:
        return [found]
    raise RuntimeError("autorouter is not installed where KiCad can find it: run `autorouter plugin install` "
                       "from the Python environment where autorouter is installed")


def clean_env() -> dict:
    """KiCad sets PYTHONHOME and PYTHONPATH for its own Python; the router's interpreter must not inherit them."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}


def describe(event: dict) -> str:
    stage = event.get("stage")
    if stage == "lattice":
        return "lattice {} x {} x {}".format(*event["shape"])
    if stage == "tasks":
        return f"routing {event['nets']} nets, {event['connections']} connections"
    if stage == "iteration":
        return (f"iteration {event['iteration']}: {event['nets']} nets routed, {event['conflicted']} in conflict, "
                f"{event['shared']} shared nodes")
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


def route_board(board, ui=None) -> dict | None:
    """Route `board` (a pcbnew.BOARD) in place: its new tracks and vias are added to it. Returns the router's
    summary, or None when nothing was routed (the reason went to ui.error)."""
    import pcbnew
    ui = ui or ConsoleUI()
    source = Path(board.GetFileName()) if board.GetFileName() else None
    with tempfile.TemporaryDirectory(prefix="autorouter-") as tmp:
        stem = source.stem if source else "board"
        src, out = Path(tmp) / f"{stem}.kicad_pcb", Path(tmp) / f"{stem}-routed.kicad_pcb"
        pcbnew.PCB_IO_MGR.Save(pcbnew.PCB_IO_MGR.KICAD_SEXP, str(src), board)   # the editor's state, not the file
        if source and source.with_suffix(".kicad_pro").exists():
            shutil.copy(source.with_suffix(".kicad_pro"), src.with_suffix(".kicad_pro"))   # the design rules
        try:
            command = autorouter_command()
        except RuntimeError as e:
            ui.error(str(e))
            return None
        ui.progress("autorouter: reading the board")
        # --events: stdout holds one JSON event a line, the summary last; stderr only errors
        proc = subprocess.Popen([*command, "route", str(src), "-o", str(out), "--events"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
        info = None
        for line in proc.stdout:
            try:
                event = json.loads(line)
                if event.get("stage") == "summary":
                    info = event
                else:
                    ui.progress(describe(event))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        errors = [line.strip() for line in proc.stderr]
        code = proc.wait()
        if code not in (0, 1) or not out.exists() or info is None:
            ui.error("; ".join(e for e in errors if e) or f"autorouter exited with code {code}")
            return None
        added = copy_new_items(board, pcbnew.LoadBoard(str(out)))
        ui.done(summary_text(info) + f"\nadded to the board: {added} items")
        return info


def copy_new_items(board, routed) -> int:
    """Add to `board` the tracks and vias of `routed` that it lacks (by uuid: saving keeps every item's uuid)."""
    have = {t.m_Uuid.AsString() for t in board.GetTracks()}
    new = [t for t in routed.GetTracks() if t.m_Uuid.AsString() not in have]
    for item in new:
        copy = item.Duplicate()
        copy.SetParent(board)
        net = board.FindNet(item.GetNetname())
        if net is not None:
            copy.SetNet(net)
        board.Add(copy)
    return len(new)
