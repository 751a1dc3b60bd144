"""The typed board model. Millimetres, KiCad's axes (x right, y down), angles in degrees.

Geometry that the lattice and the checker need (pad outlines, track bodies) is carried as shapely shapes in board
coordinates, built once by the reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shapely.geometry.base import BaseGeometry


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
    mask_margin: float = 0.0         # solder-mask opening beyond the copper

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
        return track_body(self)


@dataclass(frozen=True)
class Via:
    x: float
    y: float
    diameter: float
    drill: float
    layers: tuple[str, ...]          # every copper layer the via spans
    net: int


@dataclass(frozen=True)
class Keepout:
    outline: BaseGeometry = field(compare=False)
    layers: tuple[str, ...]
    no_tracks: bool
    no_vias: bool


@dataclass(frozen=True)
class CopperGraphic:
    """Copper that belongs to no net: text and drawings on a copper layer."""
    outline: BaseGeometry = field(compare=False)
    layer: str


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
    zone_count: int = 0                      # zones kept untouched: KiCad refills them after routing
    mask_margin: float = 0.0                 # board-wide solder-mask expansion
    warnings: list[str] = field(default_factory=list)

    def net_name(self, number: int) -> str:
        return self.net_names.get(number, "")

    @property
    def net_names(self) -> dict[int, str]:
        return {n.number: n.name for n in self.nets}

    def pads_by_net(self) -> dict[int, list[Pad]]:
        out: dict[int, list[Pad]] = {}
        for pad in self.pads:
            if pad.net:
                out.setdefault(pad.net, []).append(pad)
        return out
