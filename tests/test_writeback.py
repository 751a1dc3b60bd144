"""Write-back: merged segments, vias, and the input kept byte for byte around the inserted items."""
import re

import numpy as np
import pytest

from autorouter.lattice.grid import make_lattice
from autorouter.board.model import Track, Via
from autorouter.writeback import with_items, write_atomic
from autorouter.writeback.tracks import corners
from conftest import BOARDS, JUDGE, needs_shared


def judge_strip_text(text: str) -> str:
    """The judge's own strip (top-level segment/arc/via removed), applied to text."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("kicad_judge", JUDGE / "kicad_judge.py")
    judge = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(judge)
    out, last = [], 0
    for head, start, end in judge.top_level_items(text):
        if head in {"segment", "arc", "via"}:
            line_start = text.rfind("\n", 0, start) + 1
            cut = line_start if text[line_start:start].strip() == "" else start
            out.append(text[last:cut])
            last = end
    return "".join(out) + text[last:]


def test_collinear_steps_merge_into_one_segment():
    lat = make_lattice((0, 0, 1, 1), ["F.Cu", "B.Cu"], 0.1)
    row = [lat.index(0, 2, c) for c in range(1, 6)] + [lat.index(0, r, 5) for r in range(3, 6)]
    runs = corners(np.array(row + [lat.index(1, 5, 5)]), lat)
    assert [len(r) for r in runs] == [3, 1]            # start, corner, end on F.Cu; the via's landing on B.Cu


@needs_shared
@pytest.mark.parametrize("name", ["k9_atomic14_devboard_unrouted", "k7_tillitis_tk1", "k10_tastexx"])
def test_inserted_items_leave_every_other_byte(name, tmp_path):
    text = (BOARDS / f"{name}.kicad_pcb").read_text()
    tracks = [Track((1.0, 2.0), (3.5, 2.0), 0.25, "F.Cu", 1), Track((3.5, 2.0), (3.5, 4.0), 0.25, "B.Cu", 1)]
    vias = [Via(3.5, 2.0, 0.6, 0.3, ("F.Cu", "B.Cu"), 1)]
    out = with_items(text, int(re.search(r"\(version (\d+)\)", text).group(1)), {1: "GND"},
                     tracks, vias)
    assert out.count("(segment") == text.count("(segment") + 2 and out.count("(via") == text.count("(via") + 1
    assert judge_strip_text(out) == judge_strip_text(text)
    assert out.startswith(text[:1000])
    target = tmp_path / "out.kicad_pcb"
    write_atomic(target, out)
    assert target.read_text() == out and not list(tmp_path.glob(".*tmp"))


def test_kicad10_items_name_their_net():
    out = with_items("(kicad_pcb (version 20260206)\n)\n", 20260206, {3: "GND"},
                     [Track((0, 0), (1, 0), 0.2, "F.Cu", 3)], [])
    assert '(net "GND")' in out and "(uuid" in out
    old = with_items("(kicad_pcb (version 20221018)\n)\n", 20221018, {3: "GND"},
                     [Track((0, 0), (1, 0), 0.2, "F.Cu", 3)], [])
    assert "(net 3)" in old and "(tstamp" in old
