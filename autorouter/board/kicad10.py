"""KiCad 10 boards name nets on pads and tracks (`(net "GND")`) and have no net table; kiutils needs the table.

The rewrite happens only in memory, for reading: numbers are assigned in order of first appearance, with 0 for
the unnamed net, exactly as the write-back later refers to nets by name in such files.
"""
from __future__ import annotations

import re

NAMED_NET = re.compile(r'\(net "((?:[^"\\]|\\.)*)"\)')


def net_names_in_order(text: str) -> list[str]:
    seen: dict[str, None] = {"": None}
    for m in NAMED_NET.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def to_kicad9_nets(text: str) -> str:
    names = net_names_in_order(text)
    number = {name: i for i, name in enumerate(names)}
    body = NAMED_NET.sub(lambda m: f'(net {number[m.group(1)]} "{m.group(1)}")', text)
    table = "".join(f'\t(net {i} "{name}")\n' for i, name in enumerate(names))
    at = body.find("\n\t(footprint")
    if at < 0:
        at = body.rfind(")")
        return body[:at] + table + body[at:]
    return body[:at + 1] + table + body[at + 1:]
