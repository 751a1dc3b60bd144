import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BOARDS = Path(os.environ.get("AUTOROUTER_TEST_BOARDS", SHARED / "boards"))  # the device gets a carried copy
JUDGE = SHARED / "judge"
DEMOS = Path("/usr/share/kicad/demos")
sys.path.insert(0, str(Path(__file__).parent))


def kicad_available() -> bool:
    return shutil.which("kicad-cli") is not None and DEMOS.is_dir()


def demo(name: str) -> Path:
    return DEMOS / name


def shared_boards() -> list[Path]:
    return sorted(BOARDS.glob("*.kicad_pcb"))


needs_kicad = pytest.mark.skipif(not kicad_available(), reason="KiCad 9 (kicad-cli, demos) is not installed")
needs_shared = pytest.mark.skipif(not BOARDS.is_dir(), reason="../shared/boards is not present")
