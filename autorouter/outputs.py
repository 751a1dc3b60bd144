"""Where the command line writes: the routed board, its picture, the backup of --in-place and the project files
beside the output. Every path is settled here before any work starts, so a bad one costs the user nothing."""
from __future__ import annotations

import os
from pathlib import Path

PICTURE_SUFFIXES = (".png", ".svg")
DEFAULT_PICTURE_SUFFIX = ".png"
BESIDE = "beside the output"        # in the notes on the project files written beside the routed board


class OutputError(Exception):
    """An output path that cannot be written; the message is one line."""


def names_directory(name: str) -> bool:
    """A name that is an existing folder, or ends in a path separator (a folder meant, whether it exists or not)."""
    return name.endswith(("/", os.sep)) or Path(name).is_dir()


def board_output(board: str, output: str | None, in_place: bool) -> Path:
    """The routed board's path: the input itself with --in-place; -o DIR means DIR/<the board's file name>."""
    src = Path(board)
    if in_place:
        return src
    if not output:
        raise OutputError("no output file: give -o OUT.kicad_pcb (or --in-place to overwrite the input)")
    out = Path(output) / src.name if names_directory(output) else Path(output)
    if out.exists() and src.exists() and os.path.samefile(out, src):
        raise OutputError(f"output {out} is the input file; use --in-place to overwrite it")
    return in_writable_directory(out, "output")


def picture_output(name: str, board: str, svg: bool = False) -> Path:
    """A picture's path: .png or .svg; a folder means DIR/<the board's stem>.png (.svg when svg is asked)."""
    suffix = ".svg" if svg else DEFAULT_PICTURE_SUFFIX
    path = Path(name) / (Path(board).stem + suffix) if names_directory(name) else Path(name)
    if path.suffix.lower() not in PICTURE_SUFFIXES:
        raise OutputError(f"picture {path}: the name must end in .png or .svg (or name a folder)")
    return in_writable_directory(path, "picture")


def in_writable_directory(path: Path, what: str) -> Path:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"{what} directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{what} directory {parent} is not writable")
    if path.is_dir():
        raise OutputError(f"{what} {path} is a directory")
    return path


def backup_path(board: Path) -> Path:
    """Where --in-place keeps the original: BOARD.bak, or BOARD.bak.1, .2 ... when older backups are there (they
    are the user's, never overwritten)."""
    candidate = Path(f"{board}.bak")
    n = 0
    while candidate.exists():
        n += 1
        candidate = Path(f"{board}.bak.{n}")
    return candidate


def copy_project_files(project: Path, out: Path) -> list[str]:
    """The project (net classes, design rules) and its .kicad_dru (custom rules) beside the output, named as KiCad
    looks for them, so that KiCad opens it with the rules it was routed to; one already there is left alone, and
    said."""
    from .writeback import write_atomic
    notes = []
    for suffix in (".kicad_pro", ".kicad_dru"):
        src, dst = project.with_suffix(suffix), out.with_suffix(suffix)
        if not src.exists() or (dst.exists() and os.path.samefile(src, dst)):
            continue
        if dst.exists():
            if dst.read_bytes() != src.read_bytes():
                notes.append(f"{dst.name} {BESIDE} differs from {src.name} and was left as it is")
            continue
        write_atomic(dst, src.read_bytes())
        notes.append(f"{dst.name} written {BESIDE} (the rules it was routed to)")
    return notes
