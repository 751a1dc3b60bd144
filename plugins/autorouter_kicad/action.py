"""The SWIG plugin's work, free of wx so it runs headless: save the editor's board, route it in a subprocess (see
runner.py), copy the new tracks and vias back into the open board."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .runner import Cancelled, ConsoleUI, RouteOptions, RouterFailed, autorouter_command, run_router, summary_text

HERE = Path(__file__).resolve().parent


def route_board(board, ui=None, options: RouteOptions | None = None) -> dict | None:
    """Route `board` (a pcbnew.BOARD) in place: its new tracks and vias are added to it. Returns the router's
    summary, or None when nothing was added (cancelled, or failed: the reason went to ui.error)."""
    import pcbnew
    ui = ui or ConsoleUI()
    source = Path(board.GetFileName()) if board.GetFileName() else None
    with tempfile.TemporaryDirectory(prefix="autorouter-") as tmp:
        stem = source.stem if source else "board"
        src, out = Path(tmp) / f"{stem}.kicad_pcb", Path(tmp) / f"{stem}-routed.kicad_pcb"
        pcbnew.PCB_IO_MGR.Save(pcbnew.PCB_IO_MGR.KICAD_SEXP, str(src), board)   # the editor's state, not the file
        for suffix in (".kicad_pro", ".kicad_dru"):                            # the design rules
            if source and source.with_suffix(suffix).exists():
                shutil.copy(source.with_suffix(suffix), src.with_suffix(suffix))
        try:
            ui.progress("autorouter: reading the board")
            info = run_router(autorouter_command(HERE), src, out, options or RouteOptions(), ui)
        except (Cancelled, RouterFailed) as e:
            ui.error(str(e))
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
