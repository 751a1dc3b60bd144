"""The typed board model. Millimetres, KiCad's axes (x right, y down), angles in degrees.

Geometry that the lattice and the checker need (pad outlines, track bodies) is carried as shapely shapes in board
coordinates, built once by the reader.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from shapely.geometry.base import BaseGeometry


# KiCad (7 and later) gives each pad the schematic leaves unconnected a net of its own, "unconnected-(REF-PIN-PadN)"
# ("unconnected-(REF-PadN)" for a pin with no name).
UNCONNECTED_PAD = re.compile(r"unconnected-\(([^-()]+)-(?:.*-)?Pad([^()]+)\)")


def net_label(name: str) -> str:
    """A net's name as a report names it: a pad's own net of no connection is that pad."""
    pad = UNCONNECTED_PAD.fullmatch(name)
    return f"the unconnected pad {pad[1]}.{pad[2]}" if pad else name


def pad_names(pads) -> str:
    """A group of pads as a report names it: "U1.28/U1.29", each name once (a pad split into several shapes of one
    number, such as a QFN's exposed pad in 14 parts, is one pad to the user)."""
    return "/".join(dict.fromkeys(p.name for p in pads))


def built_once(item, build) -> BaseGeometry:
    """The item's copper outline, built on first use and kept: the checker, the fill prediction and connectivity all
    ask for the same tracks' and vias' bodies, and buffering them is most of their cost."""
    body = item.__dict__.get("_body")
    if body is None:
        body = item.__dict__["_body"] = build(item)      # items are frozen: their outline never changes
    return body


@dataclass(frozen=True)
class Net:
    number: int          # index used by the file's net table (KiCad 10 files: assigned by the reader)
    name: str


@dataclass(frozen=True)
class Pad:
    footprint: str                   # reference designator of the owning footprint
    number: str
    net: int                         # 0: no net
    x: float
    y: float
    angle: float                     # absolute pad angle
    shape: str                       # rect, roundrect, circle, oval, trapezoid, custom
    layers: tuple[str, ...]          # copper layers the pad has copper on
    outline: BaseGeometry = field(compare=False, repr=False)   # copper outline in board coordinates
    drill: float = 0.0               # largest hole dimension; 0 for SMD pads
    hole: BaseGeometry | None = field(default=None, compare=False, repr=False)
    clearance: float | None = None   # the pad's own clearance (or its footprint's), which overrides its net class
    zone_connection: str | None = None   # none, thermal, solid or thru_hole_only; None: as the zone says
    thermal_width: float | None = None   # spoke width and gap of a thermal relief; None: as the zone says
    thermal_gap: float | None = None
    thermal_angle: float = 90.0         # spoke angle (the reader gives KiCad's default where the file names none)

    @property
    def name(self) -> str:
        return f"{self.footprint}.{self.number}"


@dataclass(frozen=True)
class Track:
    start: tuple[float, float]
    end: tuple[float, float]
    width: float
    layer: str
    net: int
    mid: tuple[float, float] | None = None    # arcs: a point on the arc

    def body(self) -> BaseGeometry:
        from .geometry import track_body
        return built_once(self, track_body)


@dataclass(frozen=True)
class Via:
    x: float
    y: float
    diameter: float
    drill: float
    layers: tuple[str, ...]          # every copper layer the via spans
    net: int

    def body(self) -> BaseGeometry:
        from .geometry import via_body
        return built_once(self, via_body)


@dataclass(frozen=True)
class Keepout:
    outline: BaseGeometry = field(compare=False)
    layers: tuple[str, ...]
    no_tracks: bool
    no_vias: bool
    no_pour: bool = False            # zones are not filled inside it


@dataclass(frozen=True)
class Zone:
    """A copper zone: KiCad fills it (the user presses B) around every other net's copper, and pads of its net
    inside it connect through the fill."""
    net: int
    layers: tuple[str, ...]
    outline: BaseGeometry = field(compare=False)       # the outline with its holes
    clearance: float = 0.0
    min_thickness: float = 0.0
    pad_connection: str = "thermal"                     # none, thermal, solid or thru_hole_only
    thermal_gap: float = 0.5
    thermal_width: float = 0.5
    priority: int = 0
    teardrop: bool = False                              # KiCad's teardrops: pour keep-outs do not cut them
    uuid: str = ""

    def outranks(self, other: "Zone") -> bool:
        """KiCad's ZONE::HigherPriority: a teardrop above any other zone, then the higher priority, then the
        greater uuid (compared byte by byte, as the canonical text compares)."""
        return (self.teardrop, self.priority, self.uuid.lower()) > (other.teardrop, other.priority, other.uuid.lower())


@dataclass(frozen=True)
class MaskOpening:
    """An opening in the solder mask over an outer copper layer: a pad's, grown by its mask margin, or one drawn on a
    mask layer. Copper of another net under it would be bared beside the pad (KiCad's solder_mask_bridge)."""
    outline: BaseGeometry = field(compare=False)
    layer: str                      # the copper layer it bares: F.Cu or B.Cu
    net: int                        # the pad's net; 0 for a drawn opening or an unplated hole's


@dataclass(frozen=True)
class CopperGraphic:
    """Text and drawings on a copper layer: copper of no net, unless a drawing names one (KiCad 7 and later)."""
    outline: BaseGeometry = field(compare=False)
    layer: str
    net: int = 0
    tied: tuple[int, ...] = ()      # a net tie's drawing: the nets of the tied pads it touches, which it may touch


@dataclass
class Board:
    path: str
    version: int
    copper_layers: list[str]                 # in stack order, F.Cu first, B.Cu last
    outline: BaseGeometry                    # the board area (cut-outs removed)
    nets: list[Net]
    pads: list[Pad]
    tracks: list[Track]
    vias: list[Via]
    keepouts: list[Keepout]
    graphics: list[CopperGraphic]
    zones: list[Zone] = field(default_factory=list)    # kept untouched: KiCad refills them after routing
    mask_openings: list[MaskOpening] = field(default_factory=list)
    bare_vias: tuple[str, ...] = ()          # outer layers where vias are not tented: each opens the mask
    mask_margin: float = 0.0                 # the board's solder-mask expansion (of pads and bare vias)
    mask_web: float = 0.0                    # the narrowest solder-mask web between two openings
    warnings: list[str] = field(default_factory=list)

    @property
    def zone_count(self) -> int:
        return len(self.zones)

    def net_name(self, number: int) -> str:
        return self.net_names.get(number, "")

    @cached_property
    def net_names(self) -> dict[int, str]:
        """Built once: the reader gives the board its nets, and nothing changes them after (the checker asks a name
        per net and per violation)."""
        return {n.number: n.name for n in self.nets}

    def pads_by_net(self) -> dict[int, list[Pad]]:
        out: dict[int, list[Pad]] = {}
        for pad in self.pads:
            if pad.net:
                out.setdefault(pad.net, []).append(pad)
        return out
