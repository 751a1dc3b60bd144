"""Small generated boards, one per failure class that real boards showed, built on the example generator's Board:
a keep-out frame with a hole, a 0.4 mm QFN, a 0.8 mm BGA, a pad with a wide solder-mask opening, a ground zone with
thermal reliefs, a ground plane that pads join by vias, a congested through-hole channel."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from make_examples import Board, project, uid  # noqa: E402


class TestBoard(Board):
    """The example Board plus zones and rule areas, and a project with the board's minimums."""

    def __init__(self, name: str, layers: int, width: float, height: float):
        super().__init__(name, layers, width, height)
        self.extra: list[str] = []

    def zone(self, net: str | None, layers: list[str], outline: list[tuple], holes=(), keepout: bool = False,
             thermal=(0.3, 0.4), clearance: float = 0.3, priority: int = 0) -> None:
        polygons = "".join("\n\t\t(polygon\n\t\t\t(pts" + "".join(f" (xy {x:g} {y:g})" for x, y in ring) + ")\n\t\t)"
                           for ring in [outline, *holes])
        if net and net not in self.nets:
            self.nets.append(net)
        net_part = f'\n\t\t(net {self.nets.index(net) + 1 if net else 0})\n\t\t(net_name "{net or ""}")'
        rules = ("\n\t\t(keepout\n\t\t\t(tracks not_allowed)\n\t\t\t(vias not_allowed)\n\t\t\t(pads allowed)"
                 "\n\t\t\t(copperpour not_allowed)\n\t\t\t(footprints allowed)\n\t\t)") if keepout else ""
        ranked = f"\n\t\t(priority {priority})" if priority else ""
        fill = "" if keepout else (f"{ranked}\n\t\t(connect_pads\n\t\t\t(clearance {clearance:g})\n\t\t)"
                                   f"\n\t\t(min_thickness 0.25)"
                                   f"\n\t\t(fill yes\n\t\t\t(thermal_gap {thermal[0]:g})"
                                   f"\n\t\t\t(thermal_bridge_width {thermal[1]:g})\n\t\t)")
        names = " ".join(f'"{layer}"' for layer in layers)
        self.extra.append(f"\t(zone{net_part}\n\t\t(layers {names})\n\t\t(uuid \"{uid(self.name, 'zone', len(self.extra))}\")"
                          f"\n\t\t(hatch edge 0.5){fill}{rules}{polygons}\n\t)")

    def text(self) -> str:
        base = super().text()
        return base[:base.rindex(")")] + "".join(z + "\n" for z in self.extra) + ")\n"


def write(board: TestBoard, folder: Path, classes=None, minimums=None, settings=None) -> Path:
    """The board and its project (the example project, with other classes, minimums or design settings where
    given)."""
    path = folder / f"{board.name}.kicad_pcb"
    path.write_text(board.text())
    data = json.loads(project(board.name))
    if classes:
        data["net_settings"]["classes"] = classes
    if minimums:
        data["board"]["design_settings"]["rules"].update(minimums)
    if settings:
        data["board"]["design_settings"].update(settings)
    (folder / f"{board.name}.kicad_pro").write_text(json.dumps(data, indent=2))
    return path


def default_class(track=0.25, clearance=0.2, via=0.6, drill=0.3) -> list[dict]:
    return [{"name": "Default", "clearance": clearance, "track_width": track, "via_diameter": via, "via_drill": drill,
             "priority": 2147483647}]


def keepout_frame() -> TestBoard:
    """A keep-out over the whole board with a hole in the middle, where two resistors wait to be joined."""
    b = TestBoard("keepout", 2, 30, 20)
    b.two_pad("R1", "1k", 11, 10, ["A", "B"])
    b.two_pad("R2", "1k", 19, 10, ["A", "B"])
    b.zone(None, ["F.Cu", "B.Cu"], [(0, 0), (30, 0), (30, 20), (0, 20)], holes=[[(7, 5), (23, 5), (23, 15), (7, 15)]],
           keepout=True)
    return b


def slot(gap: float = 0.7, at: float = 10, outside: float = 24) -> TestBoard:
    """Test pad TP1 in a pocket walled by keep-outs on both layers, its one way out a slot `gap` wide centred on
    y = at; TP2, of the same net, outside at x = outside."""
    b = TestBoard("slot", 2, 30, 20)
    for ref, x in (("TP1", 6), ("TP2", outside)):
        b.footprint(ref, "TestPoint", x, 10, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    top, bottom = at - gap / 2, at + gap / 2
    for x0, y0, x1, y1 in ((3, 6, 10, 7), (3, 13, 10, 14), (3, 6, 4, 14), (9, 6, 10, top), (9, bottom, 10, 14)):
        b.zone(None, ["F.Cu", "B.Cu"], [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], keepout=True)
    return b


def walled_pad(wall: str) -> TestBoard:
    """Test pad TP1 of net A (0.3 mm square) with no legal way out, and TP2 and TP3 of A far from it: wall "keepout", a
    keep-out over it (one that allows pads); "pads", four through-hole pads of net B around it that
    overlap at their corners, 0.05 mm from its edge."""
    b = TestBoard("walled", 2, 30, 20)
    b.footprint("TP1", "TestPoint", 8, 10, [b.smd_pad("TP1", 1, 0, 0, 0.3, 0.3, "A")], True)
    for ref, y in (("TP2", 10), ("TP3", 14)):
        b.footprint(ref, "TestPoint", 22, y, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
    if wall == "keepout":
        b.zone(None, ["F.Cu", "B.Cu"], [(5, 7), (11, 7), (11, 13), (5, 13)], keepout=True)
    else:
        ring = ((-1.05, 0), (1.05, 0), (0, -1.05), (0, 1.05))
        b.footprint("J1", "Wall", 8, 10, [b.tht_pad("J1", n, dx, dy, "B", square=True)
                                          for n, (dx, dy) in enumerate(ring, 1)], False)
    return b


def fenced_pads() -> TestBoard:
    """TP1 and TP2 of net A, each fenced in by a square of net B's tracks on both layers (the board's own): no track
    or via of A gets out."""
    b = TestBoard("fenced", 2, 30, 20)
    b.net("B")
    for ref, x in (("TP1", 8), ("TP2", 22)):
        b.footprint(ref, "TestPoint", x, 10, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, "A")], True)
        corners = [(x - 2, 8), (x + 2, 8), (x + 2, 12), (x - 2, 12)]
        for layer in ("F.Cu", "B.Cu"):
            for k, ((xa, ya), (xb, yb)) in enumerate(zip(corners, corners[1:] + corners[:1])):
                b.extra.append(f'\t(segment (start {xa:g} {ya:g}) (end {xb:g} {yb:g}) (width 0.25) (layer "{layer}") '
                               f'(net {b.nets.index("B") + 1}) (uuid "{uid("fence", ref, layer, k)}"))')
    return b


def drawn_copper(in_footprint: bool = False) -> TestBoard:
    """Pad J2.1 of net A under a copper polygon of no net drawn on the board (an edge connector's ground: KiCad gives
    it A on load), or in J2's footprint (KiCad leaves it no net); TP1 of A to join, B's TP2 and TP3 either side."""
    b = TestBoard("drawn", 2, 30, 20)
    corners = [(-0.6, -0.6), (2.5, -0.6), (2.5, 0.6), (-0.6, 0.6)]
    pads = [b.smd_pad("J2", 1, 0, 0, 1.0, 1.0, "A")]
    if in_footprint:
        pads.append("\n\t\t" + copper_polygon("fp_poly", corners, 2))
    else:
        b.extra.append("\t" + copper_polygon("gr_poly", [(x + 10, y + 10) for x, y in corners], 1))
    b.footprint("J2", "Edge", 10, 10, pads, True)
    for ref, x, y, net in (("TP1", 22, 10, "A"), ("TP2", 16, 4, "B"), ("TP3", 16, 16, "B")):
        b.footprint(ref, "TestPoint", x, y, [b.smd_pad(ref, 1, 0, 0, 1.0, 1.0, net)], True)
    return b


def copper_polygon(tag: str, corners: list[tuple], depth: int) -> str:
    """A filled polygon on F.Cu, of no net (gr_poly on the board, fp_poly in a footprint), indented `depth` tabs."""
    i = "\t" * depth
    pts = " ".join(f"(xy {x:g} {y:g})" for x, y in corners)
    return (f"({tag}\n{i}\t(pts {pts})\n{i}\t(stroke (width 0) (type solid))\n{i}\t(fill solid)"
            f"\n{i}\t(layer \"F.Cu\")\n{i}\t(uuid \"{uid('drawn', tag)}\")\n{i})")


def split_halves() -> TestBoard:
    """Net A on two halves of a board that a keep-out strip parts (a split keyboard joined by a cable): two of its
    pads on each side."""
    b = TestBoard("halves", 2, 40, 16)
    for ref, x, y, other in (("R1", 6, 5, "X"), ("R2", 6, 11, "Y"), ("R3", 32, 5, "Z"), ("R4", 32, 11, "W")):
        b.two_pad(ref, "1k", x, y, ["A", other])
    b.zone(None, ["F.Cu", "B.Cu"], [(18, 0), (22, 0), (22, 16), (18, 16)], keepout=True)
    return b


def qfn(pitch: float = 0.4, per_side: int = 6, pad_width: float = 0.2,
        own_clearance: float | None = None) -> TestBoard:
    """A QFN at fine pitch, every pin to a test pad around it; own_clearance: the footprint's own clearance, which
    KiCad lets override the net classes'."""
    b = TestBoard("qfn", 2, 24, 24)
    pads, tests = [], []
    span = pitch * (per_side - 1) / 2
    for side in range(4):
        for k in range(per_side):
            t = -span + pitch * k
            n = side * per_side + k
            x, y, w, h = [(-1.9, t, 0.7, pad_width), (t, 1.9, pad_width, 0.7), (1.9, -t, 0.7, pad_width),
                          (-t, -1.9, pad_width, 0.7)][side]
            pads.append(b.smd_pad("U1", n + 1, x, y, w, h, f"S{n}"))
            # the test pads stand on a ring 7 mm out, spread over the side's length
            u = -6 + 12 * k / (per_side - 1)
            tests.append((f"S{n}", [(-7, u), (u, 7), (7, -u), (-u, -7)][side]))
    b.footprint("U1", "QFN-24_P0.4mm", 12, 12, pads, True)
    if own_clearance is not None:
        b.footprints[-1] = b.footprints[-1].replace("(attr smd)", f"(clearance {own_clearance:g})\n\t\t(attr smd)", 1)
    for i, (net, (x, y)) in enumerate(tests):
        b.footprint(f"TP{i + 1}", "TestPoint", 12 + x, 12 + y, [b.smd_pad(f"TP{i + 1}", 1, 0, 0, 0.8, 0.8, net)], True)
    return b


def bga(pitch: float = 0.8, n: int = 5) -> TestBoard:
    """A BGA at 0.8 mm on four layers: every ball to a test pad in a row below it; the inner balls can only leave by
    a via between the balls (a dog-bone)."""
    b = TestBoard("bga", 4, 24, 24)
    balls, k = [], 0
    half = pitch * (n - 1) / 2
    for i in range(n):
        for j in range(n):
            balls.append(b.smd_pad("U1", f"{'ABCDEFGH'[i]}{j + 1}", -half + pitch * j, -half + pitch * i, 0.4, 0.4,
                                   f"B{k}"))
            k += 1
    b.footprint("U1", "BGA-25_P0.8mm", 12, 9, balls, True)
    for t in range(k):
        x, y = 2 + (t % 13) * 1.6, 18 + (t // 13) * 2.5
        b.footprint(f"TP{t + 1}", "TestPoint", x, y, [b.smd_pad(f"TP{t + 1}", 1, 0, 0, 0.8, 0.8, f"B{t}")], True)
    return b


def net_tie() -> TestBoard:
    """KiCad's NetTie-2_SMD_Pad0.5mm between nets A and B (two 0.5 mm round pads 1 mm apart, a copper bar of no net
    between them), each pad to a test pad of its net: the bar covers both pads, and KiCad lets the tied nets touch
    it."""
    b = TestBoard("nettie", 2, 20, 10)
    pads = [b.smd_pad("NT1", n, x, 0, 0.5, 0.5, net).replace("\n\t\t\t(roundrect_rratio 0.25)", "").replace(
        "roundrect", "circle") for n, x, net in ((1, -0.5, "A"), (2, 0.5, "B"))]
    b.footprint("NT1", "NetTie-2_SMD_Pad0.5mm", 10, 5, pads, True)
    bar = ('\n\t\t(fp_poly\n\t\t\t(pts (xy -0.5 -0.25) (xy 0.5 -0.25) (xy 0.5 0.25) (xy -0.5 0.25))'
           '\n\t\t\t(stroke\n\t\t\t\t(width 0)\n\t\t\t\t(type solid)\n\t\t\t)\n\t\t\t(fill yes)'
           f'\n\t\t\t(layer "F.Cu")\n\t\t\t(uuid "{uid("NT1", "bar")}")\n\t\t)')
    b.footprints[-1] = b.footprints[-1].replace("(attr smd)", '(attr smd)\n\t\t(net_tie_pad_groups "1, 2")' + bar, 1)
    b.footprint("TP1", "TestPoint", 3, 5, [b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "A")], True)
    b.footprint("TP2", "TestPoint", 17, 5, [b.smd_pad("TP2", 1, 0, 0, 1.0, 1.0, "B")], True)
    return b


def mask_opening() -> TestBoard:
    """A pad with a wide solder-mask opening right between two pads of another net: the track must go around it."""
    b = TestBoard("mask", 2, 20, 12)
    b.two_pad("R1", "1k", 4, 6, ["A", "N1"])
    b.two_pad("R2", "1k", 16, 6, ["N2", "A"])
    pad = b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "B").replace('(roundrect_rratio 0.25)',
                                                            '(roundrect_rratio 0.25)\n\t\t\t(solder_mask_margin 0.8)')
    b.footprint("TP1", "TestPoint", 10, 6, [pad], True)
    b.footprint("TP2", "TestPoint", 10, 10.5, [b.smd_pad("TP2", 1, 0, 0, 1.0, 1.0, "B")], True)
    return b


def thermal_zone() -> TestBoard:
    """A GND zone on both layers with through-hole GND pads (thermal reliefs) and a signal that must pass them."""
    b = TestBoard("thermal", 2, 30, 16)
    b.footprint("J1", "PinHeader_1x04", 6, 4, [b.tht_pad("J1", i + 1, 0, 2.54 * i, net, i == 0)
                                               for i, net in enumerate(["GND", "S1", "GND", "S2"])], False)
    b.footprint("J2", "PinHeader_1x04", 24, 4, [b.tht_pad("J2", i + 1, 0, 2.54 * i, net, i == 0)
                                                for i, net in enumerate(["S2", "GND", "S1", "GND"])], False)
    b.zone("GND", ["F.Cu", "B.Cu"], [(0.5, 0.5), (29.5, 0.5), (29.5, 15.5), (0.5, 15.5)])
    return b


def spoke_pair() -> TestBoard:
    """Two GND pads 1 mm apart in a GND zone, whose facing spokes meet in the gap between them, where their reliefs
    leave no fill (KiCad keeps such a pair of spokes); S1's pads lie off to the side, for tracks to cut spokes."""
    b = TestBoard("spokes", 2, 20, 16)
    b.footprint("J1", "Pads", 10, 8, [b.smd_pad("J1", i + 1, x, 0, 0.5, 0.5, "GND") for i, x in enumerate((-0.5, 0.5))],
                True)
    b.two_pad("R1", "1k", 4, 13, ["S1", "S1"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    return b


def pin_row() -> TestBoard:
    """Three pins of a 0.8 mm row, 0.4 x 2 mm (a TQFP's), the middle one GND, in a GND zone as c2_teres_keyboard
    has it (clearance 0.508, thermal gap 0.508, spokes 1.27 wide): the neighbours' clearances leave 0.18 mm of the
    spokes along the pin's axis over the pin, less than the zone's minimum thickness, and more past its end, where
    they round off. Two GND pins elsewhere for the fill to join; S1's pads off to the side, for a track to cut a
    spoke."""
    b = TestBoard("row", 2, 20, 16)
    b.footprint("U1", "Row", 10, 8, [b.smd_pad("U1", i + 1, x, 0, 0.4, 2.0, net)
                                     for i, (x, net) in enumerate(((-0.8, "S2"), (0, "GND"), (0.8, "S3")))], True)
    b.footprint("J1", "Pin", 3, 3, [b.tht_pad("J1", 1, 0, 0, "GND")], False)
    b.footprint("J2", "Pin", 17, 3, [b.tht_pad("J2", 1, 0, 0, "GND")], False)
    b.two_pad("R1", "1k", 4, 13, ["S1", "S1"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)], thermal=(0.508, 1.27),
           clearance=0.508)
    return b


def two_ground_pads() -> TestBoard:
    """Two 1 mm GND pads on F.Cu (thermal reliefs) in a GND zone, J1.1 at (10, 8) and J2.1 at (16, 8), joined by
    nothing but the fill; S1's pads lie off to the side, for tracks to cut spokes."""
    b = TestBoard("twognd", 2, 20, 16)
    b.footprint("J1", "Pad", 10, 8, [b.smd_pad("J1", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.footprint("J2", "Pad", 16, 8, [b.smd_pad("J2", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.two_pad("R1", "1k", 4, 13, ["S1", "S1"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    return b


def pin_over_pad() -> TestBoard:
    """Three pads of an SOT-23's row, 0.95 mm apart, the middle one GND, and below it a GND pad whose spoke up meets
    its spoke down (their reliefs leave no fill between them). The outer pads block the middle one's spokes to the
    sides: it has one spoke into the fill, up, and the pair. S1's pads lie off to the side."""
    b = TestBoard("sot", 2, 20, 16)
    b.footprint("U1", "SOT", 10, 8, [b.smd_pad("U1", i + 1, x, 0, 0.6, 0.7, net)
                                     for i, (x, net) in enumerate(((-0.95, "S2"), (0, "GND"), (0.95, "S3")))], True)
    b.footprint("C1", "Pad", 10, 9.4, [b.smd_pad("C1", 1, 0, 0, 0.6, 0.6, "GND")], True)
    b.two_pad("R1", "1k", 4, 13, ["S1", "S1"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    return b


def spoke_web() -> TestBoard:
    """Two 1 mm GND pads one above the other in a GND zone, 0.89 mm apart: between their reliefs (gap 0.3) a web of
    fill 0.29 mm wide, which KiCad keeps (minimum thickness 0.25), and into which the facing spokes of both reach;
    S1's pads lie off to the side, for tracks to cut the other spokes."""
    b = TestBoard("web", 2, 20, 16)
    b.footprint("J1", "Pads", 10, 8, [b.smd_pad("J1", i + 1, 0, y, 1.0, 1.0, "GND") for i, y in enumerate((-0.945, 0.945))],
                True)
    b.two_pad("R1", "1k", 4, 13, ["S1", "S1"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    return b


def pad_past_zone() -> TestBoard:
    """Two 1 mm GND pads (thermal reliefs) on F.Cu: J1.1 inside its zone, J2.1 0.05 mm beyond the zone's right edge,
    where the relief's spokes would reach the fill but KiCad clips the fill, spokes included, to the outline."""
    b = TestBoard("past", 2, 20, 16)
    b.footprint("J1", "Pad", 6, 8, [b.smd_pad("J1", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.footprint("J2", "Pad", 14, 8, [b.smd_pad("J2", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (13.45, 0.5), (13.45, 15.5), (0.5, 15.5)])
    return b


def pad_clearance_in_zone() -> TestBoard:
    """A GND zone (clearance 0.3) around a pad of net S1 whose own clearance is 0.05 mm: KiCad fills to 0.05 mm
    of it, the pad's clearance overriding the zone's as it overrides classes and rules."""
    b = TestBoard("padclear", 2, 20, 16)
    pad = b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "S1").replace('(roundrect_rratio 0.25)',
                                                            '(roundrect_rratio 0.25)\n\t\t\t(clearance 0.05)')
    b.footprint("TP1", "TestPoint", 10, 8, [pad], True)
    b.two_pad("R1", "1k", 4, 13, ["GND", "GND"])
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    return b


def zone_neck() -> TestBoard:
    """Two GND pads joined only by a neck of their zone's fill, along the board edge past a zone of higher priority
    (net S1, clearance 0.5): 0.35 mm wide at the GND zone's own clearance (0.3), 0.15 mm at S1's, so KiCad's fill,
    which keeps the larger of the two, drops it (its minimum thickness is 0.25)."""
    b = TestBoard("neck", 2, 30, 16)
    b.footprint("J1", "Pin", 4, 8, [b.tht_pad("J1", 1, 0, 0, "GND", True)], False)
    b.footprint("J2", "Pin", 26, 8, [b.tht_pad("J2", 1, 0, 0, "GND", True)], False)
    b.footprint("J3", "Pin", 15, 7, [b.tht_pad("J3", 1, 0, 0, "S1", True)], False)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (29.5, 0.5), (29.5, 15.5), (0.5, 15.5)])
    b.zone("S1", ["F.Cu"], [(14, 0.5), (16, 0.5), (16, 14.85), (14, 14.85)], clearance=0.5, priority=1)
    return b


def thin_zone_across() -> TestBoard:
    """Two GND pads in one GND zone, cut across by a zone of S1 of higher priority only 0.2 mm wide: thinner than its
    minimum thickness (0.25), so KiCad leaves it unfilled, and the GND fill, which it knocks out by its fill and not
    its outline, joins both pads."""
    b = TestBoard("thinzone", 2, 30, 16)
    b.footprint("J1", "Pin", 4, 8, [b.tht_pad("J1", 1, 0, 0, "GND", True)], False)
    b.footprint("J2", "Pin", 26, 8, [b.tht_pad("J2", 1, 0, 0, "GND", True)], False)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (29.5, 0.5), (29.5, 15.5), (0.5, 15.5)])
    b.zone("S1", ["F.Cu"], [(14.9, 0), (15.1, 0), (15.1, 16), (14.9, 16)], priority=1)
    return b


def plane_between_vias() -> TestBoard:
    """Two GND pads on F.Cu with no fill of their own, and a GND zone on B.Cu between them that reaches neither: once
    a track and a via from each pad drop into it, its fill joins them, touching nothing but the two vias."""
    b = TestBoard("planevias", 2, 30, 16)
    b.footprint("J1", "Pin", 4, 8, [b.smd_pad("J1", 1, 0, 0, 1.5, 1.5, "GND")], True)
    b.footprint("J2", "Pin", 26, 8, [b.smd_pad("J2", 1, 0, 0, 1.5, 1.5, "GND")], True)
    b.zone("GND", ["B.Cu"], [(8, 2), (22, 2), (22, 14), (8, 14)])
    return b


def relief_by_keepout() -> TestBoard:
    """A GND pad (1 mm, thermal gap 0.3) in a GND zone with pour keep-outs: left of it and below it from the edge
    of its gap (those spokes end in no fill), and right of it one minimum thickness (0.25) past the gap, so that
    the strip of fill where its right spoke ends is exactly as thin as KiCad keeps. Its spokes: up, and right."""
    b = TestBoard("reliefstrip", 2, 20, 16)
    b.footprint("TP1", "TestPoint", 10, 8, [b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.two_pad("R1", "1k", 10, 3, ["GND", "GND"], vertical=True)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    for x0, y0, x1, y1 in ((11.05, 0.5, 19.5, 15.5), (0.5, 0.5, 9.2, 15.5), (0.5, 8.8, 19.5, 15.5)):
        b.zone(None, ["F.Cu"], [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], keepout=True)
    return b


def spokes_parted_by_keepout() -> TestBoard:
    """A GND pad (1 mm, thermal gap 0.3) in a GND zone, a pour keep-out band across its middle (which also takes its
    spokes left and right), and keep-out walls that close the fill above it into a pocket: its spoke up ends in the
    pocket, its spoke down in the zone's fill, which R1's GND pads share."""
    b = TestBoard("partedspokes", 2, 20, 16)
    b.footprint("TP1", "TestPoint", 10, 8, [b.smd_pad("TP1", 1, 0, 0, 1.0, 1.0, "GND")], True)
    b.two_pad("R1", "1k", 10, 3, ["GND", "GND"], vertical=True)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (19.5, 0.5), (19.5, 15.5), (0.5, 15.5)])
    for x0, y0, x1, y1 in ((8.8, 7.9, 11.2, 8.1), (8.8, 5.6, 11.2, 6.0), (8.8, 5.6, 9.2, 8.1), (10.8, 5.6, 11.2, 8.1)):
        b.zone(None, ["F.Cu"], [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], keepout=True)
    return b


def teardrop_in_keepout() -> TestBoard:
    """Two GND pads joined by a neck of their zone's fill (0.6 mm) between two pour keep-outs; a teardrop zone of S1
    (clearance 0.5), wholly inside the lower keep-out, touches the neck. KiCad fills teardrops through pour
    keep-outs, and the teardrop's fill, grown by its clearance, cuts the neck."""
    b = TestBoard("teardrop", 2, 30, 16)
    b.footprint("J1", "Pin", 4, 8, [b.tht_pad("J1", 1, 0, 0, "GND", True)], False)
    b.footprint("J2", "Pin", 26, 8, [b.tht_pad("J2", 1, 0, 0, "GND", True)], False)
    b.zone("GND", ["F.Cu"], [(0.5, 0.5), (29.5, 0.5), (29.5, 15.5), (0.5, 15.5)])
    for y0, y1 in ((0.5, 7.9), (8.5, 15.5)):
        b.zone(None, ["F.Cu"], [(14, y0), (16, y0), (16, y1), (14, y1)], keepout=True)
    b.zone("S1", ["F.Cu"], [(14.5, 8.5), (15.5, 8.5), (15.5, 9.5), (14.5, 9.5)], clearance=0.5, priority=30000)
    b.extra[-1] = b.extra[-1].replace('\n\t\t(layers', '\n\t\t(attr\n\t\t\t(teardrop\n\t\t\t\t(type padvia)\n\t\t\t)\n\t\t)'
                                      '\n\t\t(layers', 1)
    return b


def tied_zones(gnd_uuid: str, s1_uuid: str) -> TestBoard:
    """Two GND pads in a GND zone crossed by a 2 mm bar of an S1 zone of the same priority: KiCad lets the zone of
    the greater uuid knock the other out (ZONE::HigherPriority), so the pads are apart only where S1's is greater."""
    b = TestBoard("tied", 2, 30, 16)
    b.footprint("J1", "Pin", 4, 8, [b.tht_pad("J1", 1, 0, 0, "GND", True)], False)
    b.footprint("J2", "Pin", 26, 8, [b.tht_pad("J2", 1, 0, 0, "GND", True)], False)
    for net, outline, uuid in (("GND", [(0.5, 0.5), (29.5, 0.5), (29.5, 15.5), (0.5, 15.5)], gnd_uuid),
                               ("S1", [(14, 0), (16, 0), (16, 16), (14, 16)], s1_uuid)):
        b.zone(net, ["F.Cu"], outline)
        b.extra[-1] = re.sub(r'\(uuid "[^"]*"\)', f'(uuid "{uuid}")', b.extra[-1], count=1)
    return b


def ground_plane() -> TestBoard:
    """Decoupling capacitors far apart on the top, a GND plane on the bottom joined to a through-hole GND pin: each
    capacitor's GND pad should drop a via into the plane beside it, not run a track to another GND pad."""
    b = TestBoard("plane", 2, 40, 20)
    b.footprint("J1", "PinHeader_1x02", 4, 8, [b.tht_pad("J1", i + 1, 0, 2.54 * i, net, i == 0)
                                               for i, net in enumerate(["GND", "VCC"])], False)
    for i, x in enumerate((14, 24, 34)):
        b.two_pad(f"C{i + 1}", "100n", x, 10, ["VCC", "GND"], vertical=True)
    b.zone("GND", ["B.Cu"], [(0.5, 0.5), (39.5, 0.5), (39.5, 19.5), (0.5, 19.5)])
    return b


def channel(nets: int = 4) -> TestBoard:
    """Two through-hole headers with a wall of unconnected through-hole pins between them: each gap of the wall
    lets one track a layer through, and every pin crosses to the pin opposite in reverse order, so the tracks must
    share the gaps out and swap layers: congestion that negotiation has to settle."""
    b = TestBoard("channel", 2, 26, 6 + 2.54 * nets)
    names = [f"N{i}" for i in range(nets)]
    b.footprint("J1", "PinHeader", 4, 4, [b.tht_pad("J1", i + 1, 0, 2.54 * i, net, i == 0)
                                          for i, net in enumerate(names)], False)
    b.footprint("J2", "PinHeader", 22, 4, [b.tht_pad("J2", i + 1, 0, 2.54 * i, net, i == 0)
                                           for i, net in enumerate(reversed(names))], False)
    b.footprint("W1", "Wall", 13, 4 - 2.54, [b.tht_pad("W1", i + 1, 0, 2.54 * i, None) for i in range(nets + 2)], False)
    return b
