"""The corpus benchmark's reading of KiCad's DRC report."""
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus_bench  # noqa: E402
import relief_agreement  # noqa: E402


def starved(layer, zone, pad):
    return {"type": "starved_thermal", "items": [{"description": zone}, {"description": pad}],
            "description": f"Thermal relief connection to zone incomplete (layer {layer}; 1 spokes connected to "
                           "isolated island)"}


def test_a_through_hole_pads_starved_reliefs_are_one_error_a_layer(monkeypatch, tmp_path):
    # KiCad names neither layer in the items where the zone has several and the pad goes through (c4_usb_gigabit's
    # LAN1.SH1 on four layers): the layer comes from the description
    zone, pad = "Zone [X] on F.Cu, B.Cu and 2 more, priority 3", "PTH pad SH1 [X] of LAN1"
    keys = {corpus_bench.error_key(starved(layer, zone, pad)) for layer in ("F.Cu", "B.Cu")}
    assert len(keys) == 2
    keys.add(corpus_bench.error_key(starved("F.Cu", "Zone [GND] on F.Cu and B.Cu, priority 0",
                                            "Pad 2 [GND] of C3 on F.Cu")))
    keys.add(corpus_bench.error_key(starved("In1_GND.Cu", zone, pad)))     # the name the user gave In1.Cu
    monkeypatch.setattr(corpus_bench, "item_errors", lambda path, judge: keys)
    routed = tmp_path / "x.routed.kicad_pcb"
    routed.write_text('(kicad_pcb (layers (0 "F.Cu" signal) (1 "In1.Cu" power "In1_GND.Cu") (31 "B.Cu" signal)))')
    assert relief_agreement.kicads(routed, None) == {"LAN1.SH1@F.Cu", "LAN1.SH1@B.Cu", "LAN1.SH1@In1.Cu",
                                                     "C3.2@F.Cu"}
