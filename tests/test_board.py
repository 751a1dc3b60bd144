"""Board reading: every public board, pad placement, KiCad 10 nets, and one-line errors on bad files."""
import math

import pytest
from shapely.geometry import box

from autorouter.board import BoardError, load_board
from autorouter.board.geometry import rotate_xy
from conftest import BOARDS, needs_shared, shared_boards


@needs_shared
@pytest.mark.parametrize("path", shared_boards(), ids=lambda p: p.stem)
def test_every_shared_board_is_read(path):
    board = load_board(path)
    assert board.copper_layers[0] == "F.Cu" and board.copper_layers[-1] == "B.Cu"
    assert len(board.pads) > 10
    assert board.outline.area > 50
    assert any(p.net for p in board.pads)
    # every pad with copper lies on the board (to within its own size)
    off = [p for p in board.pads if p.layers and not board.outline.buffer(5).contains(p.outline)]
    assert not off


@needs_shared
def test_kicad10_nets_come_from_pads():
    board = load_board(BOARDS / "k10_tastexx.kicad_pcb")
    names = {n.name for n in board.nets}
    assert {"Row1", "LED5V", "Col0"} <= names
    by_name = {n.name: n.number for n in board.nets}
    assert any(p.net == by_name["Row1"] for p in board.pads)


@needs_shared
def test_layer_counts_by_name():
    assert len(load_board(BOARDS / "k9_antmicro_kmake_8layer.kicad_pcb").copper_layers) == 8
    assert len(load_board(BOARDS / "k9_orthoroute_backplane.kicad_pcb").copper_layers) == 18


def test_rotation_follows_kicad_convention():
    # KiCad's y axis points down: a footprint turned by 90 degrees moves a pad at local +x to board -y
    x, y = rotate_xy(1.0, 0.0, 90)
    assert math.isclose(x, 0, abs_tol=1e-12) and math.isclose(y, -1)


@needs_shared
def test_pad_positions_are_absolute():
    board = load_board(BOARDS / "k9_atomic14_ch32v003_brains.kicad_pcb")
    xs = sorted(round(p.x, 3) for p in board.pads)
    assert xs[0] > 0 and xs[-1] - xs[0] > 5          # spread over the board, not clustered at footprint origins


@pytest.mark.parametrize("text, message", [
    ("", "not a KiCad board"),
    ("hello world", "not a KiCad board"),
    ("PCBNEW-BOARD Version 1 date 2010", "legacy KiCad 4/5"),
    ("(kicad_pcb (version 20221018) (generator pcbnew)", "truncated or unbalanced"),
    ("(kicad_pcb (version 20221018) (generator pcbnew)))", "unbalanced"),
    ("(kicad_pcb (version 20101010) (generator pcbnew))", "too old"),
    ("(kicad_pcb (version 20991231) (generator pcbnew))", "newer than this router knows"),
    ("(kicad_pcb (version 20241229) (generator pcbnew))", "no copper layers"),
    ("(kicad_pcb (version 20241229) (generator pcbnew) (general (thickness 1.2.3)))", "'1.2.3' is not a number"),
    ("(kicad_pcb (version 20241229) (generator pcbnew) (general (thickness -)))", "'-' is not a number"),
    ('(kicad_pcb (version 20241229) (generator pcbnew) (layers (0 "F.Cu" signal) (2 "B.Cu" signal)))', "no outline"),
    ("(kicad_pcb (version 20241229) (generator pcbnew) (general (thickness nan)))", "'nan' is not a number"),
    ('(kicad_pcb (version 20241229) (layers (0 "F.Cu" signal) (4 "In1.Cu" signal) (2 "B.Cu" signal)))',
     "3 copper layers"),
    ('(kicad_pcb (version 20241229) (layers ("F.Cu" signal) (2 "B.Cu" signal)))', "layer definition"),
])
def test_bad_files_give_one_line(tmp_path, text, message):
    path = tmp_path / "bad.kicad_pcb"
    path.write_text(text)
    with pytest.raises(BoardError) as err:
        load_board(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(BoardError, match="no such file"):
        load_board(tmp_path / "nope.kicad_pcb")


def outline_board(tmp_path, gap: float, extra: str = ""):
    """A 2-layer board whose square outline has one corner open by `gap` mm."""
    lines = [((0, 0), (10, 0)), ((10, 0), (10, 10)), ((10, 10), (0, 10)), ((0, 10), (0, gap))]
    items = "".join(f'(gr_line (start {a[0]} {a[1]}) (end {b[0]} {b[1]}) (layer "Edge.Cuts") (width 0.1))'
                    for a, b in lines)
    path = tmp_path / "b.kicad_pcb"
    path.write_text(f'(kicad_pcb (version 20241229) (generator pcbnew) (layers (0 "F.Cu" signal) (2 "B.Cu" signal)) '
                    f'(net 0 "") {items}{extra})')
    return path


def test_a_text_that_reads_dimension_is_no_dimension(tmp_path):
    """Dimension items are left out before parsing; a text on one line with other items that holds "(dimension (" is
    part of a string, and the items after it are read."""
    text = '(gr_text "see (dimension (A" (at 1 1) (layer "F.SilkS") (effects (font (size 1 1) (thickness 0.15))))'
    dimension = ('(dimension (type aligned) (layer "Dwgs.User") (pts (xy 1 1) (xy 5 1)) (height 1) '
                 '(gr_text "4 mm" (at 3 0) (layer "Dwgs.User") (effects (font (size 1 1) (thickness 0.15)))))')
    pad = ('(footprint "R" (layer "F.Cu") (at 5 5) (pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu") '
           '(net 1 "A")))')
    board = load_board(outline_board(tmp_path, 0, '(net 1 "A")' + text + dimension + pad))
    assert len(board.pads) == 1 and board.pads[0].net == 1


def test_an_outline_open_by_a_micrometre_is_closed_as_kicad_does(tmp_path):
    assert load_board(outline_board(tmp_path, 0.001)).outline.area == pytest.approx(100, abs=0.01)
    with pytest.raises(BoardError, match="not closed"):
        load_board(outline_board(tmp_path, 0.5))


def test_kicad_9s_teardrop_filter_ratio_without_its_parenthesis_loads_as_in_kicad(tmp_path):
    """KiCad 9 writes a pad's teardrop settings as "(curved_edges no)filter_ratio 0.9)" (its RoyalBlue54L-Feather
    demo holds 349 of them) and reads them back; so do we, and the pad is there."""
    teardrops = ('(teardrops (best_length_ratio 0.5) (max_length 1) (best_width_ratio 1) (max_width 2) '
                 '(curved_edges no)filter_ratio 0.9) (enabled yes) (allow_two_segments yes))')
    pad = f'(pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu") {teardrops})'
    board = load_board(outline_board(tmp_path, 0, f'(footprint "X" (layer "F.Cu") (at 5 5) {pad})'))
    assert [p.number for p in board.pads] == ["1"]


def test_dimensions_are_skipped_not_refused(tmp_path):
    dim = ('(dimension (type aligned) (layer "Cmts.User") (pts (xy 0 0) (xy 10 0)) (height 2) '
           '(gr_text "10 mm" (at 5 -2 0) (layer "Cmts.User")))')
    path = outline_board(tmp_path, 0, f'{dim}(footprint "X" (layer "F.Cu") (at 5 5) {dim})')   # kiutils refuses both
    board = load_board(path)
    assert board.outline.area == pytest.approx(100)


# lpddr4's board title, moved to (1, 5): the edge of its R9.1 lies 18.725 mm to the right of the anchor
LPDDR4_TITLE = ('"LPDDR4 Testbed\\nRev. 1.2.0  12/2022" (at 1 5) (layer "{layer}") '
                '(effects (font (size 0.85 0.85) (thickness 0.18)) (justify left))')
# copper and mask text whose justification puts it to one side of its anchor, with KiCad 9's bounding box of it
# (pcbnew's GetBoundingBox, in board coordinates): the text of the tildagon board, moved to this board's corner
JUSTIFIED_TEXT = [
    ('"ELECTRO\\nMAGNETIC\\nFELINES" (at 12.5 9) (layer "{layer}") (effects (font (size 1.5 1.5) (thickness 0.3) '
     'bold) (justify right bottom))', (1.114285, 1.770168, 12.5, 9.408)),
    ('"204" (at 1 2 0) (layer "{layer}") (effects (font (size 2 2) (thickness 0.3)) (justify left top))',
     (1.0, 1.507, 7.214286, 4.9)),
    (LPDDR4_TITLE, (1.0, 3.502624, 14.929525, 6.497376)),
]


@pytest.mark.parametrize("text, kicad_box", JUSTIFIED_TEXT)
@pytest.mark.parametrize("layer", ["F.Cu", "F.Mask"])
def test_justified_text_is_covered_where_kicad_draws_it(tmp_path, text, kicad_box, layer):
    """Text justified left, right, top or bottom lies to that side of its anchor: the copper (or the mask opening)
    we keep other nets from must cover all of it, lines below or above the first included."""
    board = load_board(outline_board(tmp_path, 0, f"(gr_text {text.format(layer=layer)})"))
    shapes = [g.outline for g in board.graphics] + [o.outline for o in board.mask_openings]
    assert len(shapes) == 1 and shapes[0].contains(box(*kicad_box).buffer(-0.01))


def test_a_line_of_text_ends_near_its_last_glyph(tmp_path):
    """Lpddr4's title (19 characters at 0.85 mm, 13.9 mm long as KiCad draws it) walled in the pad beside its end,
    18.7 mm from the anchor, when each character counted 1.2 widths; the pad's stub, a 0.1 mm track at 0.1 mm
    clearance, must get past it."""
    board = load_board(outline_board(tmp_path, 0, f"(gr_text {LPDDR4_TITLE.format(layer='F.Cu')})"))
    assert board.graphics[0].outline.bounds[2] + 0.1 + 0.05 < 1 + 18.725


def test_a_footprints_text_that_names_its_reference_is_as_long_as_the_reference(tmp_path):
    """KiCad draws '${REFERENCE}' as the footprint's reference: a mask opening twelve characters wide round a
    three-character name would wall in the pads of a small part (dxwifi's 0402s)."""
    text = '(fp_text user "${REFERENCE}" (at 0 0) (layer "F.Mask") (effects (font (size 1 1) (thickness 0.15))))'
    board = load_board(outline_board(tmp_path, 0, f'(footprint "X" (layer "F.Cu") (at 5 5) '
                                                  f'(property "Reference" "R12" (at 0 -3) (layer "F.SilkS")) {text})'))
    [opening] = board.mask_openings
    kicad_box = box(3.422619, 4.15175, 6.577381, 5.84825)            # KiCad 9's bounding box of "R12" there
    assert opening.outline.contains(kicad_box) and opening.outline.area < 4 * kicad_box.area


@pytest.mark.parametrize("extra, message", [
    ('(footprint "X" (layer "F.Cu") (at 5 5) (property "Value" "X" (at 0 0) (roundrect_rratio 0.25)))',
     "a (property ...) holds a (roundrect_rratio ...)"),
    ('(gr_line (start 1 1) (end 2 2) (layer "F.SilkS") (sheetname "/"))', "a (gr_line ...) holds a (sheetname ...)"),
    ('(gr_line (end 2 2) (start 1 1) (layer "F.SilkS"))', "must begin with (start ...) (end ...)"),
    ('(segment (start 1 1) (end 2 2) (width 0.2) (layer "F.Cu") (net 1 "GND"))', "malformed (net ...)"),
    ('(footprint "X" (layer "F.Cu") (at 5 5 1e20))', "a rotation of"),
    ('(footprint "X" (layer "F.Cu") (at 5 5) (pad "1" smd rect (at 0 0) (size 1) (layers "F.Cu")))',
     "(size ...) needs 2 numbers"),
    ('(footprint "X" (layer "F.Cu") (at 5 5) (pad "1" smd roundrect (at 0 0) (size 1 1) (layers "F.Cu") '
     '(roundrect_rratio )))', "(roundrect_rratio ...) needs 1 number"),      # found by the fuzzer (seed 2414283250)
    ('(setup (pcbplotparams (scaleselection )))', "(scaleselection ...) needs a number"),     # seed 73702201
    ('(setup (pcbplotparams (mode 0x1F)))', "(mode ...) holds something that is not a number"),   # seed 1589086559
    # a line style KiCad does not know (two lines swapped: seed 3201240781)
    ('(gr_line (start 1 1) (end 2 2) (stroke (width 0.1) (type "Top Solder Paste")) (layer "F.SilkS"))',
     'a (stroke ...) has (type Top Solder Paste), not one of dash'),
    # an integer too large for a float: no number to KiCad, which reads it as a double (it raised OverflowError)
    ('(segment (start 1 1) (end 2 2) (width ' + "9" * 400 + ') (layer "F.Cu") (net 0))', "(width ...) needs 1 number"),
    # a zone's saved fill is checked in a faster way (reader.PLAIN_FILL), yet refused where KiCad refuses it
    ('(filled_polygon (layer "F.Cu") (pts (xy 1 1) (xy 2 1) (xy 2 2)))', "a (kicad_pcb ...) holds a (filled_polygon"),
    ('(zone (net 0) (net_name "") (layer "F.Cu") (polygon (pts (xy 1 1) (xy 2 1) (xy 2 2))) '
     '(filled_polygon (layer "F.Cu") (pts (xy 1 1) (xy 2.1.1 1) (xy 2 2))))', "'2.1.1' is not a number"),
    ('(zone (net 0) (net_name "") (layer "F.Cu") (polygon (pts (xy 1 1) (xy 2 1) (xy 2 2))) '
     '(filled_polygon (layer "F.Cu") (pts (xy 1 1) (xy 2 1) (xy 2 2)) (net 1)))',
     "a (filled_polygon ...) holds a (net ...)"),
])
def test_items_kicad_would_refuse_are_refused(tmp_path, extra, message):
    """Lines in the wrong item pass kiutils but not KiCad's parser (grammar.py): refused, so never routed."""
    with pytest.raises(BoardError) as err:
        load_board(outline_board(tmp_path, 0, extra))
    assert message in str(err.value)


@pytest.mark.parametrize("shape, anchor, version, angle", [
    ("circle", "", 20241229, 45.0),
    ("oval", "", 20241229, 90.0),          # a square oval looks round, yet KiCad gives it 90-degree spokes
    ("rect", "", 20241229, 90.0),
    ("custom", "circle", 20241229, 45.0),
    ("custom", "circle", 20211014, 90.0),  # KiCad 6.0 files: a round anchor did not change the default
    ("circle", "(thermal_bridge_angle 30)", 20241229, 30.0),
])
def test_thermal_spoke_angle_defaults_as_kicad_reads_them(tmp_path, shape, anchor, version, angle):
    extra = "(options (clearance outline) (anchor circle)) (primitives)" if anchor == "circle" else anchor
    pad = f'(pad "1" thru_hole {shape} (at 5 5) (size 1.7 1.7) (drill 1) (layers "*.Cu") {extra})'
    path = outline_board(tmp_path, 0.0, f'(footprint "J" (layer "F.Cu") (at 0 0) {pad})')
    text = path.read_text().replace("20241229", str(version))
    path.write_text(text)
    assert load_board(path).pads[0].thermal_angle == angle


@pytest.mark.parametrize("text, tree", [
    ('(a 1 -2 0.5 -1.25 -0 "s")', ["a", 1, -2, 0.5, -1.25, 0, "s"]),
    # not plain numbers: kept as words, as kiutils keeps them (the parser's slower, exact pass)
    ("(a 007 1. .5 +1 - 1e5 1.2.3 5E4E6E48)", ["a", "007", "1.", ".5", "+1", "-", "1e5", "1.2.3", "5E4E6E48"]),
    # tokens touching parentheses and strings, commas and brackets inside bare words, empty lists and strings
    ('((a)(b 1)"s"(c))', [["a"], ["b", 1], "s", ["c"]]),
    ('(a b,c [d] x"s"y 1"2" ( ) "")', ["a", "b,c", "[d]", "x", "s", "y", 1, "2", [], ""]),
    # quoted strings: escaped quotes lose their backslash, other backslashes stay; anything may be inside
    ('(a "x\\"y" "p\\\\q" "(" ")" "\\n")', ["a", 'x"y', "p\\\\q", "(", ")", "\\n"]),
    ("(a\n\t1\r\n  2 )", ["a", 1, 2]),
])
def test_sexpr_parse(text, tree):
    from autorouter.board.sexpr import parse
    assert parse(text) == tree


@pytest.mark.parametrize("text", ["(a", "(a))", "(a) (b)", '(a "x)', '"x"', ""])
def test_sexpr_parse_refuses(text):
    from autorouter.board.sexpr import SexprError, parse
    with pytest.raises(SexprError):
        parse(text)


@pytest.mark.parametrize("in_footprint, net", [(False, "A"), (True, "")])
def test_a_drawing_of_no_net_takes_the_net_of_the_pad_it_covers_as_kicad_gives_it(tmp_path, in_footprint, net):
    # KiCad passes a net on to a board drawing of no net that touches it (its DRC reports the polygon as the pad's
    # net); a footprint's own drawing keeps none (reported as shorting the pad)
    import generated as g
    board = load_board(g.write(g.drawn_copper(in_footprint), tmp_path))
    assert [board.net_name(d.net) for d in board.graphics] == [net]


@pytest.mark.parametrize("name, label", [
    ("unconnected-(FID4-FID*-PadFid1)", "the unconnected pad FID4.Fid1"),
    ("unconnected-(J1-Pad3)", "the unconnected pad J1.3"),
    ("unconnected-(U1-GPIO5-Pad12)", "the unconnected pad U1.12"),
    ("GND", "GND"),
    ("Net-(C1-Pad1)", "Net-(C1-Pad1)"),
])
def test_a_pads_own_net_of_no_connection_is_reported_as_the_pad(name, label):
    from autorouter.board.model import net_label
    assert net_label(name) == label


def test_a_group_of_pads_names_each_pad_once():
    # a QFN's exposed pad drawn as several shapes of one number is one pad to the user
    from types import SimpleNamespace
    from autorouter.board.model import pad_names
    pads = [SimpleNamespace(name=n) for n in ["U1.28", "U1.29", "U1.29", "U1.29", "ESP-PROG1.4", "U1.29"]]
    assert pad_names(pads) == "U1.28/U1.29/ESP-PROG1.4"
