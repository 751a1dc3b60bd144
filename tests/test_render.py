"""Pictures and board facts: `render` draws copper in each layer's colour, pads, vias and airwires (which disappear
once routed); `info` reports layers, nets, classes and the lattice."""
import json
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np

from autorouter.board import load_board
from autorouter.cli import main
from autorouter.render import build_scene, render
from autorouter.render.scene import BACK, FRONT, INNER, VIA
from test_examples import BOARDS


def read_png(path) -> np.ndarray:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert not rows[:, 0].any()                     # filter 0 on every row, as written
    return rows[:, 1:].reshape(h, w, 3)


def share(image: np.ndarray, colour) -> float:
    """The fraction of pixels within a few levels of a colour (edges are blended)."""
    return float((np.abs(image.astype(int) - colour).max(axis=2) <= 8).mean())


def airwire_pixels(image: np.ndarray) -> float:
    """Airwires are thin lines, blended at their edges: pixels clearly of their cyan."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return float(((r < 90) & (g > 140) & (b > 140) & (np.abs(g - b) < 40)).mean())


def routed(board_path, tmp_path):
    out = tmp_path / "routed.kicad_pcb"
    assert main(["route", str(board_path), "-o", str(out), "-q", "--backend", "cpu"]) == 0
    return out


def test_png_shows_layers_pads_vias_and_airwires_until_routed(tmp_path):
    qfp = BOARDS[1]
    before = read_png(render(load_board(qfp), tmp_path / "before.png"))
    assert before.shape[1] == 1600 and 0.6 < before.shape[0] / before.shape[1] < 1.0     # the board is 50 x 40 mm
    assert airwire_pixels(before) > 0.001 and share(before, VIA) == 0
    after = read_png(render(load_board(routed(qfp, tmp_path)), tmp_path / "after.png", width=800))
    assert after.shape[1] == 800
    assert airwire_pixels(after) < 0.0002                   # every connection made: no airwire left (a few
    #                                                         blended edge pixels may look alike)
    assert share(after, VIA) > 0                            # vias to the inner layers
    # copper on every layer, each in its colour (blended at 0.8 over the background)
    background = np.array([0, 16, 35])
    for colour in (FRONT, BACK, INNER[0], INNER[1]):
        assert share(after, np.rint(0.8 * np.array(colour) + 0.2 * background)) > 0.0002, colour   # ~6 mm of track


def test_svg_has_a_group_per_copper_layer(tmp_path):
    board = load_board(BOARDS[1])
    svg = ET.parse(render(board, tmp_path / "b.svg")).getroot()
    ids = {g.get("id") for g in svg.iter("{http://www.w3.org/2000/svg}g")}
    assert ids == set(board.copper_layers)
    assert len(build_scene(board).airwires) == 34           # one per connection still to make


def test_render_cli_and_its_errors(tmp_path, capsys):
    assert main(["render", str(BOARDS[0]), "-o", str(tmp_path / "b.png"), "--width", "400"]) == 0
    assert read_png(tmp_path / "b.png").shape[1] == 400
    assert main(["render", str(BOARDS[0]), "-o", str(tmp_path / "b.jpg")]) == 2
    assert main(["render", str(BOARDS[0]), "-o", str(tmp_path / "b.png"), "--width", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("written:") and "must end in .png or .svg" in err[1] and "--width" in err[2]


def test_info_reports_layers_nets_classes_and_lattice(capsys):
    assert main(["info", str(BOARDS[1]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["copper_layers"] == ["F.Cu", "In1.Cu", "In2.Cu", "B.Cu"]
    assert info["connections_to_route"] == 34 and info["nets_to_route"] == 20
    power = next(c for c in info["net_classes"] if c["name"] == "Power")
    assert power["nets"] == 2 and power["track_width"] == 0.4
    assert info["lattice"]["shape"][0] == 4 and info["memory_estimate_mb"] > 0
    assert main(["info", str(BOARDS[1])]) == 0
    assert "design rules" in capsys.readouterr().out          # tables are output: stdout
