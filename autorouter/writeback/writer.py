"""Insert new tracks and vias into the board's original text; every other byte stays as it was.

The items go right after the closing parenthesis of the file's last top-level item, with nothing between them, so
that removing them (as KiCad's judge does, item by item) gives back the input byte for byte. The output is written to
a temporary file beside the target and renamed over it: a crash never leaves half a board.
"""
from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

from ..board.model import Track, Via

UUID_SINCE = 20240108          # KiCad 8 writes (uuid ...); earlier versions (tstamp ...)
NET_NAMES_SINCE = 20250000     # KiCad 10 names nets on items instead of numbering them
NAMESPACE = uuid.UUID("6f1c1bd2-6ad1-4c55-9a41-3c0d1b5e7a10")


def mm(v: float) -> str:
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ItemFormatter:
    def __init__(self, version: int, net_names: dict[int, str]):
        self.version = version
        self.net_names = net_names
        self.count = 0

    def ident(self, text: str) -> str:
        self.count += 1
        value = uuid.uuid5(NAMESPACE, f"{self.count}:{text}")
        return f'(uuid "{value}")' if self.version >= UUID_SINCE else f"(tstamp {value})"

    def net(self, number: int) -> str:
        if self.version >= NET_NAMES_SINCE:
            return f"(net {quote(self.net_names.get(number, ''))})"
        return f"(net {number})"

    def segment(self, t: Track) -> str:
        body = (f"(segment (start {mm(t.start[0])} {mm(t.start[1])}) (end {mm(t.end[0])} {mm(t.end[1])}) "
                f"(width {mm(t.width)}) (layer {quote(t.layer)}) {self.net(t.net)}")
        return f"{body} {self.ident(body)})"

    def via(self, v: Via) -> str:
        body = (f"(via (at {mm(v.x)} {mm(v.y)}) (size {mm(v.diameter)}) (drill {mm(v.drill)}) "
                f"(layers {quote(v.layers[0])} {quote(v.layers[-1])}) {self.net(v.net)}")
        return f"{body} {self.ident(body)})"


def insertion_point(text: str) -> int:
    """Just after the last top-level item's closing parenthesis."""
    end = len(text.rstrip())
    if end == 0 or text[end - 1] != ")":
        raise ValueError("board text does not end with ')'")
    return len(text[:end - 1].rstrip())


def with_items(text: str, version: int, net_names, tracks, vias) -> str:
    """The board text with the tracks and vias inserted (see the module docstring for where and why)."""
    fmt = ItemFormatter(version, net_names)
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
