"""KiCad IPC API plugin (KiCad 9 and 10): PCB editor toolbar button "Autoroute (autorouter)".

KiCad runs this script with the plugin's own Python environment (built from requirements.txt: kicad-python) and the
address of its API server in KICAD_API_SOCKET and KICAD_API_TOKEN. The script asks for the options, has KiCad save
a copy of the open board (unsaved edits included) with its project to a temporary folder, runs the installed router
on it in a subprocess (runner.py: progress, Cancel), and adds the new tracks and vias to the open board in one
commit: one step for Edit > Undo.

Headless use, as the tests do it: `python autoroute.py --console [--nets A,B] [--time-limit S] [--engine E]`
prints progress instead of showing dialogs and takes the options from its arguments.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# runner.py and dialog.py come from the SWIG plugin's folder: copied beside this file at install, beside this
# folder in the source tree.
SHARED = HERE if (HERE / "runner.py").exists() else HERE.parent / "autorouter_kicad"
sys.path[:0] = [str(HERE), str(SHARED)]

from board_items import new_items, to_kipy  # noqa: E402
from runner import (ENGINES, Cancelled, ConsoleUI, RouteOptions, RouterFailed, autorouter_command,  # noqa: E402
                    run_router, summary_text)

COMMIT_MESSAGE = "Autoroute (autorouter)"


def route_open_board(board, ui, options: RouteOptions, command: list[str]) -> dict | None:
    """Route `board` (a kipy Board open in KiCad) and add the new items to it as one commit. Returns the router's
    summary, or None when nothing was added (cancelled or failed: the reason went to ui.error)."""
    with tempfile.TemporaryDirectory(prefix="autorouter-") as tmp:
        stem = Path(board.name).stem or "board"
        src, out = Path(tmp) / f"{stem}.kicad_pcb", Path(tmp) / f"{stem}-routed.kicad_pcb"
        board.save_as(str(src), overwrite=True, include_project=True)   # the editor's state, with the .kicad_pro
        copy_custom_rules(board, src)
        try:
            ui.progress("autorouter: reading the board")
            info = run_router(command, src, out, options, ui)
            nets = {net.name: net for net in board.get_nets()}
            items = to_kipy(new_items(read(src), read(out)), nets)
        except (Cancelled, RouterFailed, ValueError) as e:
            ui.error(str(e))
            return None
    try:
        add_as_one_commit(board, items)
    except Exception as e:             # kipy's ApiError and connection errors: KiCad closed, or refused an item
        ui.error(f"KiCad did not take the new tracks and vias ({e}); the board is as it was")
        return None
    ui.done(summary_text(info) + f"\nadded to the board: {len(items)} items")
    return info


def add_as_one_commit(board, items) -> None:
    commit = board.begin_commit()
    try:
        if items:
            board.create_items(items)
    except BaseException:
        board.drop_commit(commit)
        raise
    board.push_commit(commit, COMMIT_MESSAGE)


def copy_custom_rules(board, src: Path) -> None:
    """The project's .kicad_dru (custom design rules): saving a copy of the board brings the .kicad_pro only."""
    try:
        project = Path(board.get_project().path)
    except Exception:                  # a board without a project (or an API without the call): no custom rules
        return
    rules = project / f"{Path(board.name).stem}.kicad_dru"
    if rules.is_file() and not src.with_suffix(".kicad_dru").exists():
        shutil.copy(rules, src.with_suffix(".kicad_dru"))


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def arguments(argv) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Route the board open in KiCad's PCB editor with autorouter.")
    ap.add_argument("--console", action="store_true", help="no dialogs: options from these arguments, progress "
                                                           "printed")
    ap.add_argument("--nets", default="", help="route only these nets (comma-separated)")
    ap.add_argument("--time-limit", default="", help="seconds")
    ap.add_argument("--engine", default="auto", choices=ENGINES)
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = arguments(sys.argv[1:] if argv is None else argv)
    if args.console:
        return run_headless(args)
    import wx
    from dialog import WxUI, ask_options
    app = wx.App()                     # noqa: F841  (wx needs its App object alive while windows exist)
    try:
        board = open_board()
        command = autorouter_command(HERE)
    except (RouterFailed, ConnectionError, RuntimeError) as e:
        wx.MessageBox(str(e), "autorouter: error", wx.OK | wx.ICON_ERROR)
        return 1
    options = ask_options([n.name for n in board.get_nets() if n.name], RouteOptions.parse, ENGINES)
    if options is None:
        return 0
    ui = WxUI()
    try:
        return 0 if route_open_board(board, ui, options, command) is not None else 1
    finally:
        ui.close()


def run_headless(args) -> int:
    ui = ConsoleUI()
    try:
        options = RouteOptions.parse(args.nets, args.time_limit, args.engine)
        board, command = open_board(), autorouter_command(HERE)
    except (ValueError, RouterFailed, ConnectionError, RuntimeError) as e:
        ui.error(str(e))
        return 2
    return 0 if route_open_board(board, ui, options, command) is not None else 1


def open_board():
    """The board open in the PCB editor of the KiCad that launched us (or, run by hand, the one at the default
    socket). kipy's connection and API errors become RuntimeError with a sentence for the user."""
    from kipy import KiCad
    try:
        kicad = KiCad(client_name="autorouter")
        return kicad.get_board()
    except Exception as e:             # kipy raises ApiError or its own ConnectionError, which differ by version
        raise RuntimeError(f"cannot get the open board from KiCad's API ({e}): is a board open in the PCB editor, "
                           "and is Preferences > Plugins > Enable KiCad API on?") from None


if __name__ == "__main__":
    sys.exit(main())
