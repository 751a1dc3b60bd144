"""Write the example boards: KiCad 9 files (.kicad_pcb and .kicad_pro) generated here, so they carry no one's
design and show what the router does on small, readable cases.

    python examples/make_examples.py [OUT_DIR]        (default: the examples/ folder itself)

breakout-2layer  a SOIC-8 EEPROM broken out to a 1x8 header, with two pull-up resistors, on 2 layers
qfp-4layer       a TQFP-32 (0.8 mm pitch) fanned out to a 2x10 connector, four decoupling capacitors, on 4 layers,
                 with a Power net class (0.4 mm tracks) for VCC and GND
"""
from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMESPACE = uuid.UUID("6f1c3f4e-8a52-4c1b-9d0e-2b7a5c0d9e11")

COPPER = {2: [(0, "F.Cu")], 4: [(0, "F.Cu"), (4, "In1.Cu"), (6, "In2.Cu")]}
TECHNICAL = [(2, "B.Cu", "signal"), (9, "F.Adhes", 'user "F.Adhesive"'), (11, "B.Adhes", 'user "B.Adhesive"'),
             (13, "F.Paste", "user"), (15, "B.Paste", "user"), (5, "F.SilkS", 'user "F.Silkscreen"'),
             (7, "B.SilkS", 'user "B.Silkscreen"'), (1, "F.Mask", "user"), (3, "B.Mask", "user"),
             (25, "Edge.Cuts", "user"), (31, "F.CrtYd", 'user "F.Courtyard"'), (29, "B.CrtYd", 'user "B.Courtyard"'),
             (35, "F.Fab", "user"), (33, "B.Fab", "user")]


def uid(*names) -> str:
    """Stable uuids, so that regenerating gives the same files."""
    return str(uuid.uuid5(NAMESPACE, "/".join(map(str, names))))


class Board:
    def __init__(self, name: str, layers: int, width: float, height: float):
        self.name, self.layers, self.width, self.height = name, layers, width, height
        self.nets: list[str] = []
        self.footprints: list[str] = []

    def net(self, name: str | None) -> str:
        if not name:
            return ""
        if name not in self.nets:
            self.nets.append(name)
        return f'\n\t\t\t(net {self.nets.index(name) + 1} "{name}")'

    def footprint(self, ref: str, value: str, x: float, y: float, pads: list[str], smd: bool) -> None:
        fields = "".join(
            f'\n\t\t(property "{key}" "{text}"\n\t\t\t(at 0 {dy})\n\t\t\t(layer "{layer}")\n\t\t\t(uuid "{uid(ref, key)}")'
            f'\n\t\t\t(effects\n\t\t\t\t(font\n\t\t\t\t\t(size 1 1)\n\t\t\t\t\t(thickness 0.15)\n\t\t\t\t)\n\t\t\t)\n\t\t)'
            for key, text, dy, layer in (("Reference", ref, -3, "F.SilkS"), ("Value", value, 3, "F.Fab")))
        self.footprints.append(
            f'\t(footprint "examples:{value}"\n\t\t(layer "F.Cu")\n\t\t(uuid "{uid(ref)}")\n\t\t(at {x} {y})'
            f'{fields}\n\t\t(attr {"smd" if smd else "through_hole"})' + "".join(pads) + "\n\t)")

    def smd_pad(self, ref, number, x, y, w, h, net) -> str:
        return (f'\n\t\t(pad "{number}" smd roundrect\n\t\t\t(at {x:g} {y:g})\n\t\t\t(size {w:g} {h:g})'
                f'\n\t\t\t(layers "F.Cu" "F.Mask" "F.Paste")\n\t\t\t(roundrect_rratio 0.25){self.net(net)}'
                f'\n\t\t\t(uuid "{uid(ref, number)}")\n\t\t)')

    def tht_pad(self, ref, number, x, y, net, square=False) -> str:
        return (f'\n\t\t(pad "{number}" thru_hole {"rect" if square else "circle"}\n\t\t\t(at {x:g} {y:g})'
                f'\n\t\t\t(size 1.7 1.7)\n\t\t\t(drill 1)\n\t\t\t(layers "*.Cu" "*.Mask"){self.net(net)}'
                f'\n\t\t\t(uuid "{uid(ref, number)}")\n\t\t)')

    def two_pad(self, ref, value, x, y, nets, vertical=False, size=(1.0, 1.3), gap=1.9) -> None:
        """An 0805-like (or smaller) resistor or capacitor."""
        (w, h), d = size, gap / 2
        spots = [(0, -d), (0, d)] if vertical else [(-d, 0), (d, 0)]
        dims = (h, w) if vertical else (w, h)
        self.footprint(ref, value, x, y, [self.smd_pad(ref, i + 1, *spots[i], *dims, nets[i]) for i in range(2)], True)

    def text(self) -> str:
        copper = COPPER[self.layers] + [(2, "B.Cu")]
        layers = "".join(f'\n\t\t({n} "{name}" signal)' for n, name in copper) + "".join(
            f'\n\t\t({n} "{name}" {kind})' for n, name, kind in TECHNICAL if name != "B.Cu")
        nets = '\t(net 0 "")\n' + "".join(f'\t(net {i + 1} "{n}")\n' for i, n in enumerate(self.nets))
        outline = (f'\t(gr_rect\n\t\t(start 0 0)\n\t\t(end {self.width} {self.height})\n\t\t(stroke\n\t\t\t(width 0.1)'
                   f'\n\t\t\t(type default)\n\t\t)\n\t\t(fill no)\n\t\t(layer "Edge.Cuts")\n\t\t(uuid "{uid("edge")}")\n\t)')
        return ('(kicad_pcb\n\t(version 20241229)\n\t(generator "autorouter-examples")\n\t(generator_version "9.0")'
                f'\n\t(general\n\t\t(thickness 1.6)\n\t\t(legacy_teardrops no)\n\t)\n\t(paper "A4")\n\t(layers{layers}\n\t)'
                '\n\t(setup\n\t\t(pad_to_mask_clearance 0)\n\t\t(allow_soldermask_bridges_in_footprints no)\n\t)\n'
                + nets + "\n".join(self.footprints) + "\n" + outline + "\n)\n")


def project(name: str, power_nets=()) -> str:
    classes = [{"name": "Default", "clearance": 0.2, "track_width": 0.25, "via_diameter": 0.6, "via_drill": 0.3,
                "priority": 2147483647}]
    if power_nets:
        classes.append({"name": "Power", "clearance": 0.2, "track_width": 0.4, "via_diameter": 0.8, "via_drill": 0.4,
                        "priority": 0})
    rules = {"min_clearance": 0.15, "min_track_width": 0.15, "min_via_diameter": 0.5, "min_through_hole_diameter": 0.3,
             "min_hole_to_hole": 0.25, "min_copper_edge_clearance": 0.3}
    data = {"board": {"design_settings": {"rules": rules}}, "meta": {"filename": f"{name}.kicad_pro", "version": 3},
            "net_settings": {"classes": classes, "meta": {"version": 4},
                             "netclass_patterns": [{"netclass": "Power", "pattern": n} for n in power_nets]}}
    return json.dumps(data, indent=2) + "\n"


def breakout() -> Board:
    b = Board("breakout", 2, 40, 30)
    pins = ["A0", "A1", "A2", "GND", "SDA", "SCL", "WP", "VCC"]          # a 24C02-style EEPROM
    pads = [b.smd_pad("U1", i + 1, -2.7 if i < 4 else 2.7, (-1.905 + 1.27 * i) if i < 4 else (1.905 - 1.27 * (i - 4)),
                      1.55, 0.6, net) for i, net in enumerate(pins)]
    b.footprint("U1", "SOIC-8_EEPROM", 14, 15, pads, True)
    header = ["VCC", "SDA", "SCL", "A0", "A1", "A2", "WP", "GND"]
    b.footprint("J1", "PinHeader_1x08", 33, 6.11, [b.tht_pad("J1", i + 1, 0, 2.54 * i, net, i == 0)
                                                   for i, net in enumerate(header)], False)
    b.two_pad("R1", "4k7", 23, 9, ["SCL", "VCC"])
    b.two_pad("R2", "4k7", 23, 13, ["SDA", "VCC"])
    return b


def qfp() -> Board:
    b = Board("qfp", 4, 50, 40)
    signals = [f"D{i}" for i in range(18)]
    pins, s = [], iter(signals)
    for side in range(4):                 # 8 pins a side: one VCC, one GND, six signals (some left unconnected)
        for k in range(8):
            pins.append("VCC" if k == 2 else "GND" if k == 5 else (next(s, None) if k not in (0, 7) or side < 2
                                                                    else None))
    pads = []
    for i, net in enumerate(pins):
        side, k = divmod(i, 8)
        t = -2.8 + 0.8 * k
        x, y, w, h = [(-4.2, t, 1.5, 0.5), (t, 4.2, 0.5, 1.5), (4.2, -t, 1.5, 0.5), (-t, -4.2, 0.5, 1.5)][side]
        pads.append(b.smd_pad("U1", i + 1, x, y, w, h, net))
    b.footprint("U1", "TQFP-32_7x7mm_P0.8mm", 20, 20, pads, True)
    header = ["VCC", "GND"] + signals
    b.footprint("J1", "PinHeader_2x10", 42, 8.57, [b.tht_pad("J1", i + 1, 2.54 * (i % 2), 2.54 * (i // 2), net, i == 0)
                                                  for i, net in enumerate(header)], False)
    for n, (x, y, vertical) in enumerate([(13, 13, True), (20, 12, False), (27, 27, True), (20, 28, False)]):
        b.two_pad(f"C{n + 1}", "100n", x, y, ["VCC", "GND"], vertical, size=(0.9, 0.95), gap=1.6)
    return b


def write(out: Path) -> list[Path]:
    written = []
    for folder, board, power in (("breakout-2layer", breakout(), ()), ("qfp-4layer", qfp(), ("VCC", "GND"))):
        target = out / folder
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{board.name}.kicad_pcb").write_text(board.text())
        (target / f"{board.name}.kicad_pro").write_text(project(board.name, power))
        written.append(target / f"{board.name}.kicad_pcb")
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(path)
