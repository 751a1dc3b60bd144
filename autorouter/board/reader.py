"""Read a .kicad_pcb with kiutils into the typed Board model.

KiCad 6 to 9 files go straight to kiutils. KiCad 10 files carry no net table (pads name their net), which kiutils
cannot read; `kicad10.py` rewrites them in memory into the KiCad 9 form first. Every problem the user can fix is
raised as BoardError with one line naming it; validate.py holds the checks that kiutils does not make.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import polygonize, unary_union

from . import geometry as geo
from .kicad10 import to_kicad9_nets
from .model import Board, CopperGraphic, Keepout, Net, Pad, Track, Via
from .validate import BoardError, check_numbers, check_structure, check_text

OLDEST_VERSION = 20211014      # KiCad 6.0
NEWEST_VERSION = 20269999      # KiCad 10.x
SUPPORTED = "KiCad 6, 7, 8, 9 and 10 boards (file versions 20211014 .. 2026xxxx)"


def read_text(path: str | Path) -> str:
    p = Path(path)
    if not p.exists():
        raise BoardError(f"{p}: no such file")
    if p.is_dir():
        raise BoardError(f"{p}: is a directory, not a .kicad_pcb file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise BoardError(f"{p}: cannot read ({e.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BoardError(f"{p}: not a KiCad board (not UTF-8 text)") from None


def file_version(text: str, path) -> int:
    head = text.lstrip()[:300]
    if head.startswith("PCBNEW-BOARD"):
        raise BoardError(f"{path}: legacy KiCad 4/5 board; this router reads {SUPPORTED}: open and save it in a newer KiCad first")
    if not head.startswith("(kicad_pcb"):
        raise BoardError(f"{path}: not a KiCad board (no '(kicad_pcb' header)")
    m = re.search(r"\(version\s+(\d+)\)", head)
    if not m:
        raise BoardError(f"{path}: KiCad board without a version; this router reads {SUPPORTED}")
    version = int(m.group(1))
    if version < OLDEST_VERSION:
        raise BoardError(f"{path}: file version {version} is too old; this router reads {SUPPORTED}")
    if version > NEWEST_VERSION:
        raise BoardError(f"{path}: file version {version} is newer than this router knows; it reads {SUPPORTED}")
    return version


def without_dimensions(text: str) -> str:
    """The text kiutils is given: dimension items removed, which it cannot read (it raises NotImplementedError).
    They are drawings on documentation layers; the file we write back keeps them, as it keeps every byte."""
    out, at = [], 0
    while True:
        start = text.find("(dimension", at)
        if start < 0:
            return "".join(out) + text[at:]
        depth, i, quoted = 0, start, False
        while i < len(text):
            ch = text[i]
            if quoted:
                quoted = not (ch == '"' and text[i - 1] != "\\")
            elif ch == '"':
                quoted = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append(text[at:start])
        at = i + 1


def load_board(path: str | Path) -> Board:
    """Read and validate a board; raise BoardError with one line on any problem."""
    text = read_text(path)
    version = file_version(text, path)
    check_text(text, path)
    named_nets = version >= 20250000 and "\n\t(net 0 " not in text and "(net 0 \"\")" not in text
    if named_nets:
        text = to_kicad9_nets(text)
    try:
        from kiutils.board import Board as KiBoard
        from kiutils.utils import sexpr
        tree = sexpr.parse_sexp(without_dimensions(text))
        check_structure(tree, path, named_nets)
        kb = KiBoard().from_sexpr(tree)
    except BoardError:
        raise
    except Exception as e:  # kiutils raises anything from IndexError to ValueError on malformed files
        raise BoardError(f"{path}: malformed board: kiutils could not parse it ({type(e).__name__}: {str(e)[:120]})") from None
    try:
        return check_numbers(build_board(kb, str(path), version))
    except BoardError:
        raise
    except Exception as e:
        raise BoardError(f"{path}: malformed board: {type(e).__name__}: {str(e)[:160]}") from None


def copper_layer_names(kb) -> list[str]:
    names = [l.name for l in kb.layers if l.name.endswith(".Cu") and l.type in ("signal", "power", "mixed", "jumper")]
    inner = sorted((n for n in names if n not in ("F.Cu", "B.Cu")), key=lambda n: int("".join(filter(str.isdigit, n)) or 0))
    return [n for n in ["F.Cu"] if n in names] + inner + [n for n in ["B.Cu"] if n in names]


def expand_layers(names, copper: list[str]) -> tuple[str, ...]:
    out = []
    for name in names or ():
        if name in ("*.Cu", "*In.Cu"):
            out.extend(copper if name == "*.Cu" else copper[1:-1])
        elif name == "F&B.Cu":
            out.extend([copper[0], copper[-1]])
        elif name in copper:
            out.append(name)
    return tuple(l for l in copper if l in set(out))


def via_layers(names, copper: list[str]) -> tuple[str, ...]:
    ends = [copper.index(n) for n in names if n in copper]
    if len(ends) < 2:
        return tuple(copper)
    return tuple(copper[min(ends):max(ends) + 1])


def build_board(kb, path: str, version: int) -> Board:
    copper = copper_layer_names(kb)
    if not copper:
        raise BoardError(f"{path}: the board has no copper layers")
    if len(copper) % 2:         # KiCad refuses such a file: its stackups hold an even number of copper layers
        raise BoardError(f"{path}: malformed board: {len(copper)} copper layers (KiCad needs an even number)")
    warnings: list[str] = []
    mask_margin = float(getattr(kb.setup, "packToMaskClearance", None) or 0.0)
    nets = [Net(int(n.number), n.name) for n in kb.nets]
    pads = []
    graphics: list[CopperGraphic] = []
    edge_shapes = []
    keepouts = []
    for fp in kb.footprints:
        ref = footprint_reference(fp)
        fx, fy, fa = fp.position.X, fp.position.Y, fp.position.angle or 0.0
        for kp in fp.pads:
            pad = read_pad(kp, ref, fx, fy, fa, copper, mask_margin, fp, warnings)
            if pad is not None:
                pads.append(pad)
        collect_graphics(fp.graphicItems, (fx, fy, fa), copper, edge_shapes, graphics)
        for zone in fp.zones:
            keepouts.extend(read_keepout(zone, copper))
    collect_graphics(kb.graphicItems, (0.0, 0.0, 0.0), copper, edge_shapes, graphics)
    zone_count = 0
    for zone in kb.zones:
        k = read_keepout(zone, copper)
        keepouts.extend(k)
        zone_count += 0 if k else 1
    tracks, vias = read_copper(kb, copper)
    outline = board_outline(edge_shapes, path)
    return Board(path=path, version=version, copper_layers=copper, outline=outline, nets=nets, pads=pads,
                 tracks=tracks, vias=vias, keepouts=keepouts, graphics=graphics, zone_count=zone_count,
                 mask_margin=mask_margin, warnings=warnings)


def collect_graphics(items, frame, copper, edge_shapes: list, graphics: list) -> None:
    """Edge.Cuts drawings go to the outline, drawings and text on copper layers become copper of no net."""
    for item in items:
        layer = getattr(item, "layer", None)
        if layer == "Edge.Cuts":
            shape = graphic_outline(item, *frame, edge=True)
            if shape is not None:
                edge_shapes.append(shape)
        elif layer in copper:
            shape = graphic_outline(item, *frame, edge=False)
            if shape is not None and not shape.is_empty:
                graphics.append(CopperGraphic(shape, layer))


def footprint_reference(fp) -> str:
    props = getattr(fp, "properties", None)
    if isinstance(props, dict) and "Reference" in props:
        return str(props["Reference"])
    for item in fp.graphicItems:
        if type(item).__name__ == "FpText" and getattr(item, "type", "") == "reference":
            return item.text
    return "?"


def read_pad(kp, ref, fx, fy, fa, copper, board_mask, fp, warnings) -> Pad | None:
    px, py = geo.rotate_xy(kp.position.X, kp.position.Y, fa)
    x, y, angle = fx + px, fy + py, float(kp.position.angle or 0.0)
    w, h = float(kp.size.X), float(kp.size.Y if kp.size.Y is not None else kp.size.X)
    shape = kp.shape
    local = pad_shape(kp, shape, w, h, warnings, ref)
    # KiCad's drill offset moves the copper away from the hole: the hole stays at the pad position
    offset = kp.drill.offset if kp.drill is not None else None
    if offset is not None and (offset.X or offset.Y):
        local = shapely.affinity.translate(local, offset.X or 0.0, offset.Y or 0.0)
    outline = geo.place(local, x, y, angle)
    drill, hole = 0.0, None
    if kp.type in ("thru_hole", "np_thru_hole") and kp.drill is not None and isinstance(kp.drill.diameter, (int, float)):
        dw = float(kp.drill.diameter)
        dh = float(kp.drill.width) if kp.drill.oval and isinstance(kp.drill.width, (int, float)) else dw
        hole = geo.place(geo.oval(dw, dh), x, y, angle)
        drill = max(dw, dh)
    layers = () if kp.type == "np_thru_hole" else expand_layers(kp.layers, copper)
    if kp.type == "thru_hole":
        layers = tuple(copper)
    for name in kp.layers:
        if name.endswith(".Cu") and name not in copper and name not in ("*.Cu", "F&B.Cu", "*In.Cu"):
            note = "pads name copper layers this board does not have (first: {}); that copper is ignored"
            if not any(w.startswith(note[:30]) for w in warnings):
                warnings.append(note.format(name))
    net = int(kp.net.number) if kp.net is not None and kp.net.number is not None else 0
    margin = kp.solderMaskMargin if kp.solderMaskMargin is not None else fp.solderMaskMargin
    return Pad(footprint=ref, number=str(kp.number), net=net, x=x, y=y, angle=angle, shape=shape, layers=layers,
               outline=outline, drill=drill, hole=hole,
               mask_margin=float(margin if margin is not None else board_mask))


def pad_shape(kp, shape, w, h, warnings, ref):
    from shapely.geometry import box
    if shape == "rect":
        return box(-w / 2, -h / 2, w / 2, h / 2)
    if shape == "roundrect":
        return geo.roundrect(w, h, float(kp.roundrectRatio or 0.25) * min(w, h))
    if shape == "circle":
        return geo.circle(0, 0, w / 2)
    if shape == "oval":
        return geo.oval(w, h)
    if shape == "trapezoid":
        # kiutils drops rect_delta: take a rectangle a quarter larger, which holds any usual trapezoid
        return box(-w * 0.625, -h * 0.625, w * 0.625, h * 0.625)
    if shape == "custom":
        anchor = (geo.circle(0, 0, w / 2) if kp.customPadOptions and kp.customPadOptions.anchor == "circle"
                  else box(-w / 2, -h / 2, w / 2, h / 2))
        parts = [anchor] + [p for p in (primitive_shape(prim) for prim in kp.customPadPrimitives) if p is not None]
        # custom primitives are drawn in the pad frame but unrotated by the pad angle, as KiCad stores them
        return unary_union(parts)
    warnings.append(f"pad {ref}.{kp.number}: unknown pad shape {shape!r}; treated as its bounding rectangle")
    return box(-w / 2, -h / 2, w / 2, h / 2)


def primitive_shape(prim):
    kind = type(prim).__name__
    width = float(getattr(prim, "width", 0) or 0)
    if kind == "GrPoly":
        pts = [(p.X, p.Y) for p in prim.coordinates]
        return geo.filled_or_stroked(pts, width, prim.fill not in ("no", "none", None) or width == 0) if len(pts) >= 2 else None
    if kind == "GrLine":
        return geo.stroke([(prim.start.X, prim.start.Y), (prim.end.X, prim.end.Y)], width)
    if kind == "GrCircle":
        r = math.hypot(prim.end.X - prim.center.X, prim.end.Y - prim.center.Y)
        disc = geo.circle(prim.center.X, prim.center.Y, r + width / 2)
        return disc if prim.fill not in ("no", "none", None) else disc.difference(
            Point(prim.center.X, prim.center.Y).buffer(max(r - width / 2, 0), quad_segs=4))
    if kind == "GrArc":
        return geo.stroke(geo.arc_points((prim.start.X, prim.start.Y), (prim.mid.X, prim.mid.Y), (prim.end.X, prim.end.Y)), width)
    if kind == "GrRect":
        pts = [(prim.start.X, prim.start.Y), (prim.end.X, prim.start.Y), (prim.end.X, prim.end.Y), (prim.start.X, prim.end.Y)]
        return geo.filled_or_stroked(pts, width, prim.fill not in ("no", "none", None))
    return None


def graphic_outline(item, fx, fy, fa, edge: bool):
    """A graphic item as a line (edge=True, for the outline) or as copper (edge=False), in board coordinates."""
    kind = type(item).__name__[2:]           # GrLine / FpLine -> Line
    width = float(getattr(item, "width", None) or (item.stroke.width if getattr(item, "stroke", None) else 0) or 0)

    def pt(p):
        x, y = geo.rotate_xy(p.X, p.Y, fa)
        return fx + x, fy + y

    if kind == "Line":
        line = LineString([pt(item.start), pt(item.end)])
        return line if edge else geo.stroke(list(line.coords), width)
    if kind == "Arc":
        pts = geo.arc_points(pt(item.start), pt(item.mid), pt(item.end))
        return LineString(pts) if edge else geo.stroke(pts, width)
    if kind == "Circle":
        c, e = pt(item.center), pt(item.end)
        r = math.hypot(e[0] - c[0], e[1] - c[1])
        if edge:
            return Point(c).buffer(r, quad_segs=16).exterior
        disc = geo.circle(c[0], c[1], r + width / 2)
        filled = getattr(item, "fill", None) in ("yes", "solid")
        return disc if filled else disc.difference(Point(c).buffer(max(r - width / 2, 0), quad_segs=4))
    if kind in ("Rect", "Poly"):
        if kind == "Rect":
            (x0, y0), (x1, y1) = (item.start.X, item.start.Y), (item.end.X, item.end.Y)
            pts = [pt(type(item.start)(X=x, Y=y)) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        else:
            pts = [pt(p) for p in item.coordinates]
        if len(pts) < 2:
            return None
        if edge:
            return LineString(pts + [pts[0]])
        return geo.filled_or_stroked(pts, width, getattr(item, "fill", None) in ("yes", "solid"))
    if kind == "Text" and not edge:
        return text_box(item, pt, fa)
    return None


def text_box(item, pt, fa):
    """A generous rectangle around copper text (KiCad's stroke font, measured against KiCad's DRC: glyphs reach
    about 1.1 heights from the anchor line, and advance at most 1.2 widths per character)."""
    if getattr(item, "hide", False) or (item.effects is not None and item.effects.hide):
        return None
    font = item.effects.font if item.effects is not None else None
    fw, fh = (font.width or 1.0, font.height or 1.0) if font is not None else (1.0, 1.0)
    thick = (font.thickness if font is not None and font.thickness else 0.15 * fh)
    lines = str(item.text).split("\\n") if "\\n" in str(item.text) else str(item.text).split("\n")
    w = max(len(l) for l in lines) * fw * 1.2 + thick
    h = len(lines) * fh * 2.4 + thick
    justify = item.effects.justify if item.effects is not None else None
    halign = (justify.horizontally if justify is not None else None)
    # justified text extends to one side of its anchor: cover both sides
    width = 2 * w if halign in ("left", "right") else w
    from shapely.geometry import box
    local = box(-width / 2, -h / 2, width / 2, h / 2)
    x, y = pt(item.position)
    return geo.place(local, x, y, float(item.position.angle or 0.0))


def read_keepout(zone, copper) -> list[Keepout]:
    ks = zone.keepoutSettings
    if ks is None or not zone.polygons:
        return []
    pts = [(p.X, p.Y) for p in zone.polygons[0].coordinates]
    if len(pts) < 3:
        return []
    layers = expand_layers(zone.layers or ([zone.layer] if getattr(zone, "layer", None) else []), copper)
    return [Keepout(Polygon(pts).buffer(0), layers, ks.tracks == "not_allowed", ks.vias == "not_allowed")]


def read_copper(kb, copper) -> tuple[list[Track], list[Via]]:
    tracks, vias = [], []
    for item in kb.traceItems:
        kind = type(item).__name__
        if kind == "Segment" and item.layer in copper:
            tracks.append(Track((item.start.X, item.start.Y), (item.end.X, item.end.Y), float(item.width), item.layer,
                                int(item.net or 0)))
        elif kind == "Arc" and item.layer in copper:
            tracks.append(Track((item.start.X, item.start.Y), (item.end.X, item.end.Y), float(item.width), item.layer,
                                int(item.net or 0), mid=(item.mid.X, item.mid.Y)))
        elif kind == "Via":
            vias.append(Via(item.position.X, item.position.Y, float(item.size), float(item.drill),
                            via_layers(item.layers, copper), int(item.net or 0)))
    return tracks, vias


OUTLINE_GAP_MM = 0.01      # ends of Edge.Cuts lines this close are joined, as KiCad joins them


def bridge_gaps(shapes: list) -> list:
    """The shapes plus a short line across every gap in the outline: pairs of loose ends (an end no other line
    shares) within OUTLINE_GAP_MM of each other, nearest first."""
    ends = {}
    for s in shapes:
        if s.geom_type == "LineString" and not s.is_closed:
            for x, y in (s.coords[0], s.coords[-1]):
                key = (round(x, 4), round(y, 4))
                ends[key] = ends.get(key, 0) + 1
    loose = [k for k, n in ends.items() if n % 2]
    pairs = sorted((math.dist(a, b), i, j) for i, a in enumerate(loose) for j, b in enumerate(loose[:i])
                   if math.dist(a, b) <= OUTLINE_GAP_MM)
    joined, bridges = set(), []
    for _, i, j in pairs:
        if i not in joined and j not in joined:
            joined |= {i, j}
            bridges.append(LineString([loose[i], loose[j]]))
    return list(shapes) + bridges


def board_outline(edge_shapes, path):
    """The board area: faces of the Edge.Cuts drawing; a face nested an odd number of times is a cut-out."""
    if not edge_shapes:
        raise BoardError(f"{path}: the board has no outline (nothing on Edge.Cuts)")
    merged = unary_union([shapely.set_precision(s, 1e-4) for s in bridge_gaps(edge_shapes)])
    faces = [Polygon(p.exterior) for p in polygonize(merged)]
    if not faces:
        raise BoardError(f"{path}: the board outline on Edge.Cuts is not closed")
    result = Polygon()
    for face in faces:
        depth = sum(1 for other in faces if other is not face and other.contains(face.representative_point())
                    and other.area > face.area)
        result = result.union(face) if depth % 2 == 0 else result.difference(face)
    return result
