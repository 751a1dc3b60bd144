"""Read a .kicad_pcb into the typed Board model.

The text is parsed into nested lists (sexpr.py, the lists kiutils' parser gives, faster), checked against KiCad's
grammar (validate.py), and read item by item into the model: footprints and their pads and drawings (footprints.py),
zones and rule areas, tracks and vias, the board outline. KiCad 10 files name nets on items, (net "GND"), and carry
no net table: nets are then numbered in order of first appearance, 0 for the unnamed net. Every problem the user can
fix is raised as BoardError with one line naming it.
"""
from __future__ import annotations

import gc
import math
import re
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import shapely
from shapely.geometry import LineString, Polygon
from shapely.ops import polygonize, unary_union
from shapely.strtree import STRtree

from . import sexpr, versions
from .footprints import Frame, NetTable, drawing, expand_layers, read_footprint
from .model import Board, Keepout, MaskOpening, Track, Via, Zone
from .tree import Malformed, atoms, node, nodes, number, point, points, position, word
from .validate import BoardError, check_numbers, check_structure, check_text
from .versions import SUPPORTED, mend_writer_typos


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
    if version < versions.OLDEST:
        raise BoardError(f"{path}: file version {version} is too old; this router reads {SUPPORTED}")
    if version > versions.NEWEST:
        raise BoardError(f"{path}: file version {version} is newer than this router knows; it reads {SUPPORTED}")
    return version


# A zone's fill as KiCad saved it: its layer, whether it is an island, and its outline as plain points. The router
# predicts fills itself and never reads these, yet they are 40% of a large board's text (vme-wren: 25 of 64 MB).
# A fill's numbers: any plain decimal KiCad reads (leading zeros too, unlike sexpr.NUMBER, which is what JSON takes);
# possessive, so that a long fill is matched in one pass (0.5 s for vme-wren's 25 MB).
FILL_NUMBER = r"-?+\d++(?:\.\d++)?+"
PLAIN_FILL = re.compile(r'(\(filled_polygon\s++\(layer\s++"[^"\\]*+"\)\s*+(?:\(island\)\s*+)?\(pts)'
                        rf"(?:\s++\(xy\s++{FILL_NUMBER}\s++{FILL_NUMBER}\))*+\s*+\)(\s*+\))")


def without_fill_points(text: str) -> str:
    """The text that is checked and parsed: the points of every saved zone fill of the plain form (PLAIN_FILL)
    taken out, its (filled_polygon (layer ..) (pts)) left for the grammar to place. The pattern itself checks what
    was taken (finite numbers, balanced, no quote), so nothing KiCad would refuse passes unseen; a fill of any other
    form stays whole and is checked as before. The file we write back keeps every byte."""
    return PLAIN_FILL.sub(r"\1)\2", text)


# A file embedded in the board (a footprint's 3D model, a font), as KiCad writes it: (data |base64 lines|). The router
# never reads these, and no check looks at a (data ...) item's values, yet they can be 40% of a board's text
# (vme-wren: 15 of 38 MB once its fills are out). Each line taken must hold a character that no number and no
# nan or inf has (any but a digit, '+' and the letters of e, nan, inf, infinity), so that the text check, which
# would refuse a line such as 1e999 or inf, has nothing to see in them; a block with such a line stays whole.
DATA_LINE = r"[A-Za-z0-9+/=]*?[B-DG-HJ-MO-SU-XZb-dg-hj-mo-su-xz/=][A-Za-z0-9+/=]*+"
EMBEDDED_DATA = re.compile(rf"(\(data\s++)\|{DATA_LINE}(?:\s++{DATA_LINE})*+\|(\s*+\))")


def without_embedded_data(text: str) -> str:
    """The text that is checked and parsed: the contents of every embedded file's (data |...|) taken out, its
    (data) left for the grammar to place; the file we write back keeps every byte."""
    return EMBEDDED_DATA.sub(r"\1\2", text)


QUOTE_OR_ESCAPE = re.compile(r'\\.|"', re.S)      # in KiCad's strings a quote or a backslash is escaped by a backslash


def without_dimensions(text: str) -> str:
    """The text that is parsed: dimension items removed. They are drawings on documentation layers, which the router
    never needs and whose contents the grammar does not check; the file we write back keeps them, as every byte."""
    out, at, find = [], 0, 0
    while True:
        start = text.find("(dimension", find)
        if start < 0:
            return "".join(out + [text[at:]]) if out else text     # one copy of a large text, or none
        find = start + 1
        # an item as KiCad writes it begins a line (its strings hold no line break: it writes "\\n"); elsewhere, the
        # quotes before it say whether it is in a string (a text that reads "(dimension ...)"), not an item
        line = text.rfind("\n", at, start) + 1 or at
        if text[line:start].strip() and sum(m == '"' for m in QUOTE_OR_ESCAPE.findall(text, at, start)) % 2:
            continue
        depth, i, quoted = 0, start, False
        while i < len(text):
            ch = text[i]
            if quoted:
                if ch == "\\":
                    i += 1      # an escaped character, a quote or a backslash
                else:
                    quoted = ch != '"'
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
        at = find = i + 1


def load_board(path: str | Path) -> Board:
    """Read and validate a board; raise BoardError with one line on any problem."""
    text = mend_writer_typos(read_text(path))
    version = file_version(text, path)
    parsed = without_embedded_data(without_fill_points(text))
    check_text(parsed, path)
    with collector_paused():
        try:
            tree = sexpr.parse(without_dimensions(parsed))
        except sexpr.SexprError as e:
            raise BoardError(f"{path}: malformed board: {e}") from None
        check_structure(tree, path)
        try:
            return check_numbers(build_board(tree, str(path), version, named_nets_in_order(text)))
        except BoardError:
            raise
        except Malformed as e:
            raise BoardError(f"{path}: malformed board: {e}") from None
        except Exception as e:      # a part of the wrong kind where KiCad would refuse the file too
            raise BoardError(f"{path}: malformed board: {type(e).__name__}: {str(e)[:160]}") from None


@contextmanager
def collector_paused():
    """The parsed tree is millions of small lists without a cycle among them: Python's cycle collector would walk
    them again and again while they are made (seconds on a large board) and free nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


NAMED_NET = re.compile(r'\(net "((?:[^"\\]|\\.)*)"\)')


def named_nets_in_order(text: str) -> list[str]:
    """KiCad 10's (net "name") items, by first appearance: the numbers its nets get."""
    seen: dict[str, None] = {"": None}
    for m in NAMED_NET.finditer(text):
        seen.setdefault(m.group(1).replace('\\"', '"'), None)
    return list(seen)


def copper_layer_names(tree) -> list[str]:
    """F.Cu, the inner layers in order, B.Cu: by name (KiCad 9 renumbered them)."""
    table = node(tree, "layers")
    names = [str(d[1]) for d in nodes(table) if len(d) > 2 and str(d[1]).endswith(".Cu")
             and d[2] in ("signal", "power", "mixed", "jumper")]
    inner = sorted((n for n in names if n not in ("F.Cu", "B.Cu")), key=lambda n: int("".join(filter(str.isdigit, n)) or 0))
    return [n for n in ["F.Cu"] if n in names] + inner + [n for n in ["B.Cu"] if n in names]


def build_board(tree: list, path: str, version: int, named: list[str]) -> Board:
    copper = copper_layer_names(tree)
    if not copper:
        raise BoardError(f"{path}: the board has no copper layers")
    if len(copper) % 2:         # KiCad refuses such a file: its stackups hold an even number of copper layers
        raise BoardError(f"{path}: malformed board: {len(copper)} copper layers (KiCad needs an even number)")
    mask_margin = number(node(tree, "setup"), "pad_to_mask_clearance", 0.0)
    nets = NetTable([(int(a[0]), str(a[1])) for a in map(atoms, nodes(tree, "net")) if len(a) >= 2], named)
    warnings: list[str] = []
    pads, graphics, edges, keepouts, zones, openings = [], [], [], [], [], []
    for fp in nodes(tree, "footprint"):
        read_footprint(fp, copper, nets, mask_margin, pads, graphics, edges, openings, warnings, version)
        for z in nodes(fp, "zone"):
            read_zone(z, copper, nets, zones, keepouts)
    top = Frame(0.0, 0.0, 0.0)
    netless = []                # the board's drawings (not text) of no net on copper
    for item in nodes(tree):
        if item[0].startswith("gr_"):
            before = len(graphics)
            drawing(item, top, copper, nets, edges, graphics, openings)
            if len(graphics) > before and not graphics[-1].net and "text" not in item[0]:
                netless.append(before)
        elif item[0] == "zone":
            read_zone(item, copper, nets, zones, keepouts)
    tracks, vias = read_copper(tree, copper, nets)
    for i, net in zip(netless, touched_nets([graphics[i] for i in netless], pads, tracks, vias)):
        if net:
            graphics[i] = replace(graphics[i], net=net)
    openings = owned_openings(openings, pads)
    return Board(path=path, version=version, copper_layers=copper, outline=board_outline(edges, path),
                 nets=nets.nets(), pads=pads, tracks=tracks, vias=vias, keepouts=keepouts, graphics=graphics,
                 zones=zones, mask_openings=openings, bare_vias=bare_via_layers(tree, copper),
                 mask_margin=mask_margin, mask_web=number(node(tree, "setup"), "solder_mask_min_width", 0.0),
                 warnings=warnings)


def touched_nets(graphics: list, pads, tracks, vias) -> list[int]:
    """The net KiCad gives each board drawing of no net on copper when it loads the board (its connectivity passes a
    net on to the net-less copper it touches: a test fills a no-net polygon under a pad and reports it as the
    pad's net): the one net of the pads, tracks and vias that touch it on its layer; 0 where none or several do.
    Drawings inside footprints keep no net (KiCad reports them as shorting the pads they touch)."""
    items = ([(p.outline, p.net, p.layers) for p in pads if p.net]
             + [(t.body(), t.net, (t.layer,)) for t in tracks if t.net]
             + [(v.body(), v.net, v.layers) for v in vias if v.net])
    if not graphics or not items:
        return [0] * len(graphics)
    tree = STRtree([shape for shape, _, _ in items])
    found = []
    for g in graphics:
        touching = {items[k][1] for k in tree.query(g.outline, predicate="intersects").tolist()
                    if g.layer in items[k][2]}
        found.append(touching.pop() if len(touching) == 1 else 0)
    return found


def area(z: list) -> Polygon:
    """A zone's area: its first (polygon ...) is the outline, the others are holes in it (as KiCad reads them)."""
    rings = [points(node(p, "pts")) for p in nodes(z, "polygon")]
    rings = [r for r in rings if len(r) >= 3]
    if not rings:
        return Polygon()
    shape = Polygon(rings[0]).buffer(0)
    for hole in rings[1:]:
        shape = shape.difference(Polygon(hole).buffer(0))
    return shape


def zone_layers(z: list, copper: list[str]) -> tuple[str, ...]:
    names = atoms(node(z, "layers")) or atoms(node(z, "layer"))
    return expand_layers([str(n) for n in names], copper)


PAD_CONNECTION = {None: "thermal", "yes": "solid", "no": "none", "thru_hole_only": "thru_hole_only"}


def read_zone(z: list, copper: list[str], nets: "NetTable", zones: list, keepouts: list) -> None:
    shape, layers = area(z), zone_layers(z, copper)
    if shape.is_empty or not layers:
        return
    rules = node(z, "keepout")
    if rules is not None:
        keepouts.append(Keepout(shape, layers, word(rules, "tracks") == "not_allowed",
                                word(rules, "vias") == "not_allowed", word(rules, "copperpour") == "not_allowed"))
        return
    connect, fill = node(z, "connect_pads"), node(z, "fill")
    mode = next((a for a in atoms(connect) if isinstance(a, str)), None)
    zones.append(Zone(nets.of(z), layers, shape, clearance=number(connect, "clearance", 0.0),
                      min_thickness=number(z, "min_thickness", 0.0), pad_connection=PAD_CONNECTION.get(mode, "thermal"),
                      thermal_gap=number(fill, "thermal_gap", 0.5), thermal_width=number(fill, "thermal_bridge_width", 0.5),
                      priority=int(number(z, "priority", 0)),
                      teardrop=node(node(z, "attr"), "teardrop") is not None,
                      uuid=str(word(z, "uuid", None) or word(z, "tstamp", ""))))


def bare_via_layers(tree: list, copper: list[str]) -> tuple[str, ...]:
    """The outer layers whose vias are not tented. KiCad 9 lists the tented sides, (tenting front back), in the
    setup; earlier versions said (viasonmask yes) in the plot settings for vias that are bare on both sides."""
    setup = node(tree, "setup")
    tenting = node(setup, "tenting")
    if tenting is not None:
        sides = {str(a) for a in atoms(tenting)}
        return tuple(layer for side, layer in (("front", copper[0]), ("back", copper[-1])) if side not in sides)
    if word(node(setup, "pcbplotparams"), "viasonmask", "no") in ("yes", "true"):
        return copper[0], copper[-1]
    return ()


def owned_openings(openings: list[MaskOpening], pads: list) -> list[MaskOpening]:
    """A solder-mask opening of no net (drawn on a mask layer, or a pad with no copper) bares the copper under it:
    when that is pads of one net, it is that net's opening (KiCad counts a bridge once it bares a second net)."""
    loose = [i for i, o in enumerate(openings) if not o.net]
    copper = [p for p in pads if p.net and p.layers]
    if not loose or not copper:
        return openings
    tree = STRtree([p.outline for p in copper])
    out = list(openings)
    for i in loose:
        o = openings[i]
        nets = {copper[j].net for j in tree.query(o.outline, predicate="intersects").tolist() if o.layer in copper[j].layers}
        if len(nets) == 1:
            out[i] = MaskOpening(o.outline, o.layer, nets.pop())
    return out


def via_layers(names, copper: list[str]) -> tuple[str, ...]:
    ends = [copper.index(n) for n in names if n in copper]
    if len(ends) < 2:
        return tuple(copper)
    return tuple(copper[min(ends):max(ends) + 1])


def read_copper(tree, copper, nets: "NetTable") -> tuple[list[Track], list[Via]]:
    tracks, vias = [], []
    for item in nodes(tree):
        head = item[0]
        if head in ("segment", "arc"):
            # (layer "F.Cu"), or since KiCad 9 a track bare of solder mask: (layers "F.Cu" "F.Mask")
            layer = next((str(n) for n in atoms(node(item, "layer")) + atoms(node(item, "layers")) if n in copper), None)
            if layer is None:
                continue
            tracks.append(Track(point(item, "start"), point(item, "end"), number(item, "width"), layer, nets.of(item),
                                mid=point(item, "mid") if head == "arc" else None))
        elif head == "via":
            x, y, _ = position(item)
            vias.append(Via(x, y, number(item, "size"), number(item, "drill"),
                            via_layers([str(n) for n in atoms(node(item, "layers"))], copper), nets.of(item)))
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
    depth = [sum(1 for other in faces if other is not face and other.contains(face.representative_point())
                 and other.area > face.area) for face in faces]
    result = Polygon()
    for d, face in sorted(zip(depth, faces), key=lambda pair: pair[0]):     # outer faces before the holes in them
        result = result.union(face) if d % 2 == 0 else result.difference(face)
    return result
