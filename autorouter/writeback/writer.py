"""Insert new tracks and vias into the board's original text; every other byte stays as it was.

The items go right after the closing parenthesis of the file's last top-level item, each right after the one before:
whitespace between two items would stay behind when they are removed, so with nothing between them, removing them
(as KiCad's judge does, item by item) gives back the input byte for byte. Inside an item, its parts sit on lines of
their own, as KiCad writes them. The output is written to
a temporary file beside the target and renamed over it: a crash never leaves half a board.
"""
from __future__ import annotations

import os
import re
import tempfile
import uuid
from pathlib import Path

from ..board import versions
from ..board.model import Track, Via

NAMESPACE = uuid.UUID("6f1c1bd2-6ad1-4c55-9a41-3c0d1b5e7a10")


def mm(v: float) -> str:
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ItemFormatter:
    """Items as KiCad 8 and later write them: the head, then each part on a line of its own one level deeper, then
    the closing parenthesis on a line of its own, in the file's own indentation and line ends. KiCad refuses a line
    of over a million characters, so a board with many new items must not get them on one line."""

    def __init__(self, version: int, net_names: dict[int, str], indent: str = "\t", newline: str = "\n"):
        self.version = version
        self.net_names = net_names
        self.indent, self.newline = indent, newline
        self.count = 0

    def ident(self, text: str) -> str:
        self.count += 1
        value = uuid.uuid5(NAMESPACE, f"{self.count}:{text}")
        return f'(uuid "{value}")' if versions.uses_uuid(self.version) else f"(tstamp {value})"

    def net(self, number: int) -> str:
        if versions.names_nets(self.version):
            return f"(net {quote(self.net_names.get(number, ''))})"
        return f"(net {number})"

    def block(self, head: str, parts: list[str]) -> str:
        parts.append(self.ident(" ".join([head] + parts)))
        inner = self.newline + self.indent * 2
        return f"({head}{inner}{inner.join(parts)}{self.newline}{self.indent})"

    def segment(self, t: Track) -> str:
        return self.block("segment", [f"(start {mm(t.start[0])} {mm(t.start[1])})", f"(end {mm(t.end[0])} {mm(t.end[1])})",
                                      f"(width {mm(t.width)})", f"(layer {quote(t.layer)})", self.net(t.net)])

    def via(self, v: Via) -> str:
        return self.block("via", [f"(at {mm(v.x)} {mm(v.y)})", f"(size {mm(v.diameter)})", f"(drill {mm(v.drill)})",
                                  f"(layers {quote(v.layers[0])} {quote(v.layers[-1])})", self.net(v.net)])


def insertion_point(text: str) -> int:
    """Just after the last top-level item's closing parenthesis."""
    end = len(text.rstrip())
    if end == 0 or text[end - 1] != ")":
        raise ValueError("board text does not end with ')'")
    return len(text[:end - 1].rstrip())


def layout(text: str) -> tuple[str, str]:
    """The file's indentation of a top-level item (a tab since KiCad 8, two spaces before) and its line end."""
    m = re.search(r"\n([ \t]+)\(", text)
    return (m.group(1) if m else "\t"), ("\r\n" if "\r\n" in text[:10000] else "\n")


def with_items(text: str, version: int, net_names, tracks, vias) -> str:
    """The board text with the tracks and vias inserted (see the module docstring for where and why)."""
    fmt = ItemFormatter(version, net_names, *layout(text))
    items = "".join([fmt.segment(t) for t in tracks] + [fmt.via(v) for v in vias])
    at = insertion_point(text)
    return text[:at] + items + text[at:]


def write_atomic(path: str | Path, text: str | bytes) -> None:
    """Write beside the target and rename over it: a reader never sees a half-written file."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
