"""What differs between KiCad's board file versions, in one place. A board's `(version N)` is a date, YYYYMMDD."""
from __future__ import annotations

OLDEST = 20211014              # KiCad 6.0: the oldest format read
NEWEST = 20269999              # KiCad 10.x: the newest format read
SUPPORTED = "KiCad 6, 7, 8, 9 and 10 boards (file versions 20211014 .. 2026xxxx)"

UUID_SINCE = 20240108          # KiCad 8 writes (uuid "...") where earlier versions wrote (tstamp ...)
BLOCK_ITEMS_SINCE = 20240108   # KiCad 8 writes each item's parts on lines of their own, indented by tabs
NET_NAMES_SINCE = 20250000     # KiCad 10 names nets on items, (net "GND"), and has no net table


def uses_uuid(version: int) -> bool:
    return version >= UUID_SINCE


def names_nets(version: int) -> bool:
    return version >= NET_NAMES_SINCE
