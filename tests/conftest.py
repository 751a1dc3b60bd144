import functools
import gzip
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import shapely

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BOARDS = Path(os.environ.get("AUTOROUTER_TEST_BOARDS", SHARED / "boards"))  # the device gets a carried copy
JUDGE = SHARED / "judge"
CORPUS = SHARED / "corpus" / "boards"
DEMOS = Path("/usr/share/kicad/demos")
sys.path.insert(0, str(Path(__file__).parent))


@functools.cache
def judge():
    """../shared/judge/kicad_judge.py as a module (strip, drc, bench), loaded once."""
    spec = importlib.util.spec_from_file_location("kicad_judge", JUDGE / "kicad_judge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_steps(lat, free):
    """Every step of a track between two free nodes of one plane (free: a rows x cols mask), as line segments."""
    rr, cc = np.mgrid[0:lat.rows, 0:lat.cols]
    steps = []
    for dr, dc in ((0, 1), (1, 0)):
        both = free[:lat.rows - dr, :lat.cols - dc] & free[dr:, dc:]
        r, c = rr[:lat.rows - dr, :lat.cols - dc][both], cc[:lat.rows - dr, :lat.cols - dc][both]
        steps.append(shapely.linestrings(np.stack([np.stack(lat.xy(r, c), 1), np.stack(lat.xy(r + dr, c + dc), 1)], 1)))
    return np.concatenate(steps)


def corpus_board(name: str, folder: Path) -> Path:
    """A board of ../shared/corpus (or of ../shared/boards) unpacked into folder with its project, tracks and vias
    stripped, zones kept: what the corpus benchmark routes."""
    src = CORPUS / f"{name}.kicad_pcb.gz"
    original = folder / f"{name}.original.kicad_pcb"
    if src.exists():
        with gzip.open(src, "rb") as f:
            original.write_bytes(f.read())
        judge().copy_project(str(src)[:-len(".gz")], str(original))
    else:
        src = BOARDS / f"{name}.kicad_pcb"
        original.write_bytes(src.read_bytes())
        judge().copy_project(str(src), str(original))
    stripped = folder / f"{name}.kicad_pcb"
    judge().strip(str(original), str(stripped), keep_zones=True)
    return stripped


def channel_set_up(folder: Path, nets: int = 3):
    """The generated channel board's stages before negotiation: (board, rules, config, lattice, obstacle profiles)."""
    from autorouter.board import load_board
    from autorouter.board.rules import load_rules
    from autorouter.config import RouterConfig
    from autorouter.lattice import build_obstacles
    from autorouter.lattice.grid import make_lattice
    from autorouter.pipeline import board_lattice
    from generated import channel, write
    config = RouterConfig()
    board = load_board(write(channel(nets), folder))
    rules = load_rules(board, config)
    lattice = board_lattice(board, rules, config)
    return board, rules, config, lattice, build_obstacles(board, rules, lattice, config.clearance_margin)


def kicad_available() -> bool:
    return shutil.which("kicad-cli") is not None and DEMOS.is_dir()


def demo(name: str) -> Path:
    return DEMOS / name


def shared_boards() -> list[Path]:
    return sorted(BOARDS.glob("*.kicad_pcb"))


needs_kicad = pytest.mark.skipif(not kicad_available(), reason="KiCad 9 (kicad-cli, demos) is not installed")
needs_shared = pytest.mark.skipif(not BOARDS.is_dir(), reason="../shared/boards is not present")
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir() or not (JUDGE / "kicad_judge.py").is_file(),
                                  reason="../shared/corpus and ../shared/judge are not present")
needs_judge = pytest.mark.skipif(not (JUDGE / "kicad_judge.py").is_file(),
                                 reason="../shared/judge (KiCad's verdict) is not present")


def top_level_heads(block: str) -> list[str]:
    """The head of every top-level s-expression in block (quoted strings, which may hold parentheses, skipped)."""
    heads, depth, i, quoted = [], 0, 0, False
    while i < len(block):
        ch = block[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "(":
            if depth == 0:
                heads.append(block[i + 1:i + 40].split(None, 1)[0].rstrip(")"))
            depth += 1
        elif ch == ")":
            depth -= 1
            assert depth >= 0, "unbalanced block"
        elif depth == 0:
            assert ch.isspace(), f"stray text between items: {block[i:i + 40]!r}"
        i += 1
    assert depth == 0 and not quoted, "unbalanced block"
    return heads


def assert_only_routing_added(before: str, after: str) -> int:
    """`after` is `before` with one contiguous run of top-level segment, arc and via items inserted, every other byte
    unchanged: removing what we added gives the input back byte for byte. Returns how many items were added."""
    extra = len(after) - len(before)
    if extra == 0:
        assert after == before
        return 0
    assert extra > 0, "the output is shorter than the input"
    lo, hi = 0, len(before)                      # the longest common prefix, by bisection on slices
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if after[:mid] == before[:mid]:
            lo = mid
        else:
            hi = mid - 1
    for start in range(lo, max(lo - 4096, -1), -1):   # the inserted run may repeat a few bytes that follow it
        if after[start] == "(" and after[start + extra:] == before[start:]:
            heads = top_level_heads(after[start:start + extra])
            assert heads and set(heads) <= {"segment", "arc", "via"}, f"inserted items: {sorted(set(heads))}"
            return len(heads)
    raise AssertionError("the output is not the input plus one run of inserted tracks and vias")
