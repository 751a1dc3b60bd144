"""Footprints, their pads, and drawings (of footprints or of the board) read from the parsed tree into the model.

Positions: a footprint's parts are drawn in its frame, turned by its angle; a pad's angle in the file is already
absolute. Pads keep their real copper: trapezoids with their delta, custom shapes with every primitive (arcs in
polygons included), the drill offset; and what KiCad's rules read from them (mask margin, local clearance, how they
connect to zones).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import shapely
from shapely.geometry import LineString, Point, Polygon, box
from shapely.ops import unary_union

from . import geometry as geo
from .model import CopperGraphic, MaskOpening, Net, Pad
from .tree import Malformed, atoms, filled, flag, node, nodes, number, point, points, position, stroke_width, word
from .versions import default_spoke_angle

ZONE_CONNECTION = {0: "none", 1: "thermal", 2: "solid", 3: "thru_hole_only"}


@dataclass(frozen=True)
class Frame:
    """Where a footprint's local drawing sits on the board, and the reference its texts may name."""
    x: float
    y: float
    angle: float
    reference: str = ""

    def place(self, p: tuple[float, float]) -> tuple[float, float]:
        dx, dy = geo.rotate_xy(p[0], p[1], self.angle)
        return self.x + dx, self.y + dy


class NetTable:
    """Net numbers of items: (net 3) or (net 3 "GND") by number; KiCad 10's (net "GND") by name, numbered in order of
    first appearance in the file (`named`)."""

    def __init__(self, table: list[tuple[int, str]], named: list[str]):
        self.numbered = bool(table)
        self.names = dict(table) if table else dict(enumerate(named))
        self.numbers = {name: n for n, name in self.names.items()}

    def of(self, item: list) -> int:
        values = atoms(node(item, "net"))
        if not values:
            return 0
        if isinstance(values[0], int):
            return values[0]
        if self.numbered:
            raise Malformed(f"(net {values[0]}) where a net number belongs")
        return self.numbers.get(str(values[0]), 0)

    def nets(self) -> list[Net]:
        return [Net(n, name) for n, name in sorted(self.names.items())]


def expand_layers(names, copper: list[str]) -> tuple[str, ...]:
    out = set()
    for name in names or ():
        if name in ("*.Cu", "*In.Cu"):
            out.update(copper if name == "*.Cu" else copper[1:-1])
        elif name == "F&B.Cu":
            out.update([copper[0], copper[-1]])
        elif name in copper:
            out.add(name)
    return tuple(l for l in copper if l in out)


def reference(fp: list) -> str:
    for prop in nodes(fp, "property"):
        if len(prop) > 2 and prop[1] == "Reference":
            return str(prop[2])
    for text in nodes(fp, "fp_text"):
        if len(text) > 2 and text[1] == "reference":
            return str(text[2])
    return "?"


MASKS = {"F.Mask": "F.Cu", "B.Mask": "B.Cu"}


def read_footprint(fp: list, copper, nets: NetTable, board_mask: float, pads: list, graphics: list, edges: list,
                   openings: list, warnings: list, version: int) -> None:
    ref = reference(fp)
    frame = Frame(*position(fp), ref)
    defaults = {"mask": number(fp, "solder_mask_margin"), "clearance": number(fp, "clearance"),
                "zone_connect": number(fp, "zone_connect"), "thermal_width": number(fp, "thermal_width"),
                "thermal_gap": number(fp, "thermal_gap")}
    # KiCad's DRC ignores the mask openings of a footprint that allows solder-mask bridges
    bridged = "allow_soldermask_bridges" in atoms(node(fp, "attr"))
    own_openings, own_pads, first_graphic = [], [], len(graphics)
    for p in nodes(fp, "pad"):
        pad, margin = read_pad(p, ref, frame, copper, nets, board_mask, defaults, warnings, version)
        own_pads.append(pad)
        own_openings.extend(pad_openings(p, pad, margin, copper))
    pads.extend(own_pads)
    for item in nodes(fp):
        if item[0].startswith("fp_") or item[0] == "property":
            drawing(item, frame, copper, nets, edges, graphics, own_openings)
    tie_graphics(fp, own_pads, graphics, first_graphic)
    if not bridged:
        openings.extend(own_openings)


def tie_graphics(fp: list, own_pads: list, graphics: list, first: int) -> None:
    """A net tie's copper drawings (graphics[first:], this footprint's) short the nets of its pad groups, as they
    are meant to: KiCad's DRC lets each touch the nets of the tied pads it touches (FOOTPRINT's net-tie cache). For
    KiCad's connectivity it joins nothing: its net stays none. A drawing that touches pads of several nets is cut
    where it is nearer one pad than the others (the bar of a 0.5 mm tie covers both pads): the first of a piece's
    tied nets is the one whose pad it is nearest, which the obstacles let come close."""
    tied = {number.strip() for group in atoms(node(fp, "net_tie_pad_groups")) for number in str(group).split(",")}
    tied_pads = [pad for pad in own_pads if pad.number in tied - {""} and pad.net]
    if not tied_pads:
        return
    pieces = []
    for g in graphics[first:]:
        touched = [pad for pad in tied_pads if g.layer in pad.layers and pad.outline.intersects(g.outline)]
        nets = tuple(dict.fromkeys(pad.net for pad in touched))
        if g.net or not nets:
            pieces.append(g)
            continue
        if len(nets) == 1:
            pieces.append(replace(g, tied=nets))
            continue
        cells = shapely.voronoi_polygons(shapely.MultiPoint([(pad.x, pad.y) for pad in touched]),
                                         extend_to=g.outline.envelope.buffer(1.0))
        for cell in shapely.get_parts(cells):
            pad = next(p for p in touched if cell.covers(Point(p.x, p.y)))
            piece = g.outline.intersection(cell)
            if not piece.is_empty:
                pieces.append(replace(g, outline=piece, tied=(pad.net,) + tuple(n for n in nets if n != pad.net)))
    graphics[first:] = pieces


def read_pad(p: list, ref: str, frame: Frame, copper, nets: NetTable, board_mask: float, defaults: dict,
             warnings: list, version: int) -> tuple[Pad, float]:
    """The pad, and its solder-mask margin."""
    number_, kind, shape = (str(a) for a in (atoms(p) + ["", "", ""])[:3])
    px, py, angle = position(p)
    x, y = frame.place((px, py))
    size = [float(v) for v in atoms(node(p, "size"))] or [0.0]
    w, h = size[0], size[-1]
    local = pad_shape(p, shape, w, h, warnings, ref, number_)
    drill = node(p, "drill")
    offset = node(drill, "offset")
    if offset is not None:          # the copper moves away from the hole, which stays at the pad's position
        local = shapely.affinity.translate(local, float(offset[1]), float(offset[2]))
    outline = geo.place(local, x, y, angle)
    diameter, hole = 0.0, None
    sizes = [float(v) for v in atoms(drill) if v != "oval"]
    if kind in ("thru_hole", "np_thru_hole") and sizes:
        dw, dh = sizes[0], sizes[-1] if "oval" in atoms(drill) else sizes[0]
        hole = geo.place(geo.oval(dw, dh), x, y, angle)
        diameter = max(dw, dh)
    layer_names = [str(n) for n in atoms(node(p, "layers"))]
    layers = () if kind == "np_thru_hole" else tuple(copper) if kind == "thru_hole" else expand_layers(layer_names,
                                                                                                           copper)
    unknown = [n for n in layer_names if n.endswith(".Cu") and n not in copper and n not in ("*.Cu", "F&B.Cu", "*In.Cu")]
    note = "pads name copper layers this board does not have (first: {}); that copper is ignored"
    if unknown and not any(w.startswith(note[:30]) for w in warnings):
        warnings.append(note.format(unknown[0]))
    mask = number(p, "solder_mask_margin", defaults["mask"])
    connect = number(p, "zone_connect", defaults["zone_connect"])
    pad = Pad(footprint=ref, number=number_, net=nets.of(p), x=x, y=y, angle=angle, shape=shape, layers=layers,
              outline=outline, drill=diameter, hole=hole, clearance=number(p, "clearance", defaults["clearance"]),
              zone_connection=None if connect is None else ZONE_CONNECTION.get(int(connect)),
              thermal_width=number(p, "thermal_bridge_width", number(p, "thermal_width", defaults["thermal_width"])),
              thermal_gap=number(p, "thermal_gap", defaults["thermal_gap"]),
              thermal_angle=number(p, "thermal_bridge_angle",
                                   default_spoke_angle(shape, word(node(p, "options"), "anchor"), version)))
    return pad, board_mask if mask is None else mask


def pad_openings(p: list, pad: Pad, margin: float, copper) -> list[MaskOpening]:
    """The pad's solder-mask openings: its shape grown by its margin, on each mask layer it has. An unplated hole
    whose pad is no larger than the drill, with no mask margin, opens nothing (KiCad's null aperture)."""
    names = {str(n) for n in atoms(node(p, "layers"))}
    layers = [cu for mask, cu in MASKS.items() if (mask in names or "*.Mask" in names or "F&B.Mask" in names)
              and cu in copper]
    if not layers or pad.hole is not None and not pad.layers and pad.outline.area <= pad.hole.area + 1e-9 \
            and margin <= 0:
        return []
    shape = geo.grow(pad.outline, margin) if margin else pad.outline
    return [MaskOpening(shape, layer, pad.net) for layer in layers]


def pad_shape(p: list, shape: str, w: float, h: float, warnings: list, ref: str, number_: str):
    """The pad's copper around its own origin, unrotated."""
    if shape in ("rect", "roundrect"):
        radius = number(p, "roundrect_rratio", 0.25) * min(w, h) if shape == "roundrect" else 0.0
        corners = frozenset(str(a) for a in atoms(node(p, "chamfer")))
        return rect_pad(w, h, radius, number(p, "chamfer_ratio", 0.0) * min(w, h), corners)
    if shape == "circle":
        return disc(w / 2)
    if shape == "oval":
        return geo.oval(w, h)
    if shape == "trapezoid":
        dx, dy = (float(v) / 2 for v in (atoms(node(p, "rect_delta")) or [0, 0])[:2])
        # KiCad's corners (PAD::BuildEffectiveShapes): the delta narrows one pair of sides and widens the other
        return Polygon([(-w / 2 - dy, h / 2 + dx), (w / 2 + dy, h / 2 - dx), (w / 2 - dy, -h / 2 + dx),
                        (-w / 2 + dy, -h / 2 - dx)]).buffer(0)
    if shape == "custom":
        anchor = disc(w / 2) if word(node(p, "options"), "anchor") == "circle" else box(-w / 2, -h / 2, w / 2, h / 2)
        # primitives are drawn in the pad's frame, unrotated, as KiCad stores them
        parts = [primitive(prim) for prim in nodes(node(p, "primitives"))]
        return unary_union([anchor] + [part for part in parts if part is not None])
    warnings.append(f"pad {ref}.{number_}: unknown pad shape {shape!r}; treated as its bounding rectangle")
    return box(-w / 2, -h / 2, w / 2, h / 2)


@geo.made_once
def rect_pad(w: float, h: float, radius: float, chamfer: float, corners: frozenset[str]):
    """A rectangular pad's copper around its origin: its corners rounded by the radius, those named cut by chamfer."""
    return geo.chamfered(geo.roundrect(w, h, radius), w, h, chamfer, corners)


@geo.made_once
def disc(r: float):
    """A round pad's copper (or a custom pad's round anchor) around its origin."""
    return geo.circle(0, 0, r)


def primitive(prim: list):
    """One primitive of a custom pad. Polygons in pads are always filled (KiCad fills them whatever they say)."""
    head, width = prim[0], stroke_width(prim)
    if head in ("gr_poly", "gr_bbox"):
        pts = points(node(prim, "pts"))
        return geo.filled_or_stroked(pts, width, True) if len(pts) >= 2 else None
    if head == "gr_line":
        return geo.stroke([point(prim, "start"), point(prim, "end")], width)
    if head == "gr_arc":
        return geo.stroke(geo.arc_points(point(prim, "start"), point(prim, "mid"), point(prim, "end")), width)
    if head == "gr_circle":
        (cx, cy), end = point(prim, "center"), point(prim, "end")
        r = math.hypot(end[0] - cx, end[1] - cy)
        disc = geo.circle(cx, cy, r + width / 2)
        return disc if filled(prim) or width == 0 else disc.difference(Point(cx, cy).buffer(max(r - width / 2, 0)))
    if head == "gr_rect":
        (x0, y0), (x1, y1) = point(prim, "start"), point(prim, "end")
        return geo.filled_or_stroked([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], width, filled(prim) or width == 0)
    return None


def drawing(item: list, frame: Frame, copper, nets: NetTable, edges: list, graphics: list, openings: list) -> None:
    """A drawing on Edge.Cuts joins the outline; one on a copper layer is copper (of no net, unless it names one);
    one on a solder-mask layer opens the mask."""
    layer = word(item, "layer")
    if layer in MASKS and MASKS[layer] in copper:
        shape = outline_shape(item, frame, edge=False)
        if shape is not None and not shape.is_empty:
            openings.append(MaskOpening(shape, MASKS[layer], 0))
        return
    if layer == "Edge.Cuts":
        shape = outline_shape(item, frame, edge=True)
        if shape is not None:
            edges.append(shape)
    elif layer in copper:
        shape = outline_shape(item, frame, edge=False)
        if shape is not None and not shape.is_empty:
            graphics.append(CopperGraphic(shape, layer, nets.of(item)))


def outline_shape(item: list, frame: Frame, edge: bool):
    """A drawing as a line (edge=True, for the outline) or as copper (edge=False), in board coordinates."""
    kind = item[0].split("_", 1)[1] if "_" in item[0] else item[0]       # gr_line, fp_line -> line
    width = stroke_width(item)
    pt = frame.place
    if kind == "line":
        pts = [pt(point(item, "start")), pt(point(item, "end"))]
        return LineString(pts) if edge else geo.stroke(pts, width)
    if kind == "arc":
        pts = geo.arc_points(pt(point(item, "start")), pt(point(item, "mid")), pt(point(item, "end")))
        return LineString(pts) if edge else geo.stroke(pts, width)
    if kind == "circle":
        c, e = pt(point(item, "center")), pt(point(item, "end"))
        r = math.hypot(e[0] - c[0], e[1] - c[1])
        if edge:
            return Point(c).buffer(r, quad_segs=16).exterior
        disc = geo.circle(c[0], c[1], r + width / 2)
        return disc if filled(item) else disc.difference(Point(c).buffer(max(r - width / 2, 0), quad_segs=4))
    if kind in ("rect", "poly"):
        if kind == "rect":
            (x0, y0), (x1, y1) = point(item, "start"), point(item, "end")
            pts = [pt(p) for p in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        else:
            pts = [pt(p) for p in points(node(item, "pts"))]
        if len(pts) < 2:
            return None
        if edge:
            return LineString(pts + [pts[0]])
        return geo.filled_or_stroked(pts, width, filled(item))
    if kind in ("text", "property") and not edge:
        return text_box(item, frame)
    if kind == "text_box" and not edge:
        corners = [pt(p) for p in points(node(item, "pts"))] or [pt(point(item, "start")), pt(point(item, "end"))]
        return shapely.MultiPoint(corners).envelope.buffer(width / 2)
    return None


def text_box(item: list, frame: Frame):
    """A generous rectangle around copper text, on the side of its anchor that its justification names. KiCad's
    stroke font, measured on KiCad 9's bounding boxes of the 10,218 upright texts of the 63 real boards: a line of n
    characters is at most 0.74 + 1.05 n widths long (plus the stroke), a line reaches about 1.1 heights from its
    anchor line, and lines are 1.62 heights apart."""
    effects = node(item, "effects")
    if flag(item, "hide") or flag(effects, "hide"):
        return None
    text = str(item[2] if item[0] in ("fp_text", "property") else item[1]) if len(item) > 2 else ""
    font = node(effects, "font")
    size = [float(v) for v in atoms(node(font, "size"))] or [1.0, 1.0]
    fh, fw = size[0], size[-1]
    thick = number(font, "thickness", 0.15 * fh)
    if frame.reference:                 # KiCad draws the footprint's reference in its place
        text = text.replace("${REFERENCE}", frame.reference)
    lines = text.split("\\n") if "\\n" in text else text.split("\n")
    w = (0.75 + 1.05 * max(len(l) for l in lines)) * fw + thick
    h = (len(lines) - 1) * fh * 1.62 + fh * 2.4 + thick
    justify = atoms(node(effects, "justify"))
    x0, x1 = (0.0, w) if "left" in justify else (-w, 0.0) if "right" in justify else (-w / 2, w / 2)
    if "mirror" in justify:
        x0, x1 = -x1, -x0
    y0, y1 = (0.0, h) if "top" in justify else (-h, 0.0) if "bottom" in justify else (-h / 2, h / 2)
    pad = fh * 0.3 + thick         # round the anchor: strokes stand out of the line they start on
    x, y, angle = position(item)
    cx, cy = frame.place((x, y))
    return geo.place(box(x0 - pad, y0 - pad, x1 + pad, y1 + pad), cx, cy, angle)
