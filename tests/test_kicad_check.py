"""KiCad's own verdict (check/kicad.py): a one-line note where KiCad is missing or too slow."""
import pytest

from autorouter.check import kicad
from conftest import DEMOS, needs_kicad


@needs_kicad
@pytest.mark.kicad
def test_a_timeout_is_a_note(tmp_path):
    board = DEMOS / "pic_programmer" / "pic_programmer.kicad_pcb"
    summary = kicad.kicad_summary(board, timeout=0.2)
    assert summary == {"note": "KiCad's DRC not run: KiCad took longer than 0.2 s (stopped while refilling the zones)"}


@needs_kicad
def test_note_when_no_python_has_pcbnew(monkeypatch):
    monkeypatch.setattr(kicad, "pcbnew_python", lambda kicad_cli: None)
    summary = kicad.kicad_summary(DEMOS / "pic_programmer" / "pic_programmer.kicad_pcb")
    assert summary == {"note": "KiCad's DRC not run: no Python with KiCad's pcbnew module was found "
                               "(needed to refill the zones)"}
