"""What differs between KiCad's board file versions, in one place. A board's `(version N)` is a date, YYYYMMDD."""
from __future__ import annotations

import re

OLDEST = 20211014              # KiCad 6.0: the oldest format read
NEWEST = 20269999              # KiCad 10.x: the newest format read
SUPPORTED = "KiCad 6, 7, 8, 9 and 10 boards (file versions 20211014 .. 2026xxxx)"

UUID_SINCE = 20240108          # KiCad 8 writes (uuid "...") where earlier versions wrote (tstamp ...)
BLOCK_ITEMS_SINCE = 20240108   # KiCad 8 writes each item's parts on lines of their own, indented by tabs
NET_NAMES_SINCE = 20250000     # KiCad 10 names nets on items, (net "GND"), and has no net table
ROUND_ANCHOR_SPOKES_SINCE = 20211015   # custom pads on a round anchor get 45-degree spokes after KiCad 6.0


def uses_uuid(version: int) -> bool:
    return version >= UUID_SINCE


def names_nets(version: int) -> bool:
    return version >= NET_NAMES_SINCE


def default_spoke_angle(shape: str, anchor: str, version: int) -> float:
    """The thermal spoke angle KiCad gives a pad whose file names none (its reader's default): 45 degrees for a
    circle, and for a custom pad on a round anchor after KiCad 6.0; 90 for every other shape, square ovals too."""
    if shape == "circle" or shape == "custom" and anchor == "circle" and version >= ROUND_ANCHOR_SPOKES_SINCE:
        return 45.0
    return 90.0


# KiCad 9's writer leaves out the '(' of a pad's teardrop filter ratio, "(curved_edges no)filter_ratio 0.9)", as in
# its own RoyalBlue54L-Feather demo; its reader takes a keyword there without its '(', so such boards load in KiCad.
TEARDROP_FILTER_TYPO = re.compile(r"(\(curved_edges\s+\w+\s*\))(\s*)(filter_ratio\s)")


def mend_writer_typos(text: str) -> str:
    """The text to parse, with the slips of KiCad's own writers mended as its reader reads them."""
    return TEARDROP_FILTER_TYPO.sub(r"\1\2(\3", text) if "curved_edges" in text else text
