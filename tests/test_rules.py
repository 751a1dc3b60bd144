"""Design rules from every .kicad_pro form, with the board's minimums winning."""
import json

from autorouter.board.model import Board, Net
from autorouter.board.rules import load_rules
from autorouter.config import RouterConfig
from shapely.geometry import box


def board_with_project(tmp_path, project: dict, nets=("GND", "VCC", "SIG1", "/bus/D0")) -> Board:
    path = tmp_path / "b.kicad_pcb"
    (tmp_path / "b.kicad_pro").write_text(json.dumps(project))
    return Board(str(path), 20241229, ["F.Cu", "B.Cu"], box(0, 0, 10, 10),
                 [Net(0, "")] + [Net(i + 1, n) for i, n in enumerate(nets)], [], [], [], [], [])


CLASSES = [{"name": "Default", "track_width": 0.2, "clearance": 0.15, "via_diameter": 0.6, "via_drill": 0.3},
           {"name": "POWER", "track_width": 0.5, "clearance": 0.2, "via_diameter": 0.8, "via_drill": 0.4}]


def test_kicad6_nets_inside_classes(tmp_path):
    classes = [dict(CLASSES[0], nets=[]), dict(CLASSES[1], nets=["GND", "VCC"])]
    rules = load_rules(board_with_project(tmp_path, {"net_settings": {"classes": classes}}), RouterConfig())
    assert rules.for_net(1).name == "POWER" and rules.for_net(2).name == "POWER" and rules.for_net(3).name == "Default"


def test_kicad8_assignments_and_wildcards(tmp_path):
    settings = {"classes": CLASSES, "netclass_assignments": {"GND": "POWER"},
                "netclass_patterns": [{"netclass": "POWER", "pattern": "/bus/*"}]}
    rules = load_rules(board_with_project(tmp_path, {"net_settings": settings}), RouterConfig())
    assert rules.for_net(1).track_width == 0.5 and rules.for_net(4).name == "POWER"
    assert rules.for_net(3).name == "Default"


def test_kicad9_lists_priority_and_missing_keys(tmp_path):
    classes = [CLASSES[0], {"name": "HV", "clearance": 0.6, "priority": 1}, dict(CLASSES[1], priority=0)]
    settings = {"classes": classes, "netclass_assignments": {"VCC": ["HV", "POWER"]}}
    rules = load_rules(board_with_project(tmp_path, {"net_settings": settings}), RouterConfig())
    assert rules.for_net(2).name == "POWER"                      # lower priority number wins
    assert rules.classes["HV"].track_width == 0.2                # omitted keys come from Default


def test_board_minimum_wins(tmp_path):
    project = {"board": {"design_settings": {"rules": {"min_track_width": 0.3, "min_clearance": 0.3,
                                                       "min_via_diameter": 1.5, "min_copper_edge_clearance": 0.5}}},
               "net_settings": {"classes": CLASSES}}
    rules = load_rules(board_with_project(tmp_path, project), RouterConfig())
    d = rules.classes["Default"]
    assert (d.track_width, d.clearance, d.via_diameter) == (0.3, 0.3, 1.5)
    assert rules.edge_clearance == 0.5
    assert any("raised to the board minimum" in n for n in rules.notes)


def test_the_narrowest_predefined_track_the_board_minimum_allows(tmp_path):
    # KiCad lists the predefined widths after a 0 (the net class's own); necked nets may take the narrowest
    settings = {"track_widths": [0.0, 0.1, 0.15, 0.3], "rules": {"min_track_width": 0.12}}
    project = {"board": {"design_settings": settings}, "net_settings": {"classes": CLASSES}}
    assert load_rules(board_with_project(tmp_path, project), RouterConfig()).small_track == 0.15
    settings["rules"]["min_track_width"] = 0.0
    assert load_rules(board_with_project(tmp_path, project), RouterConfig()).small_track == 0.1
    settings["track_widths"] = [0.0]
    assert load_rules(board_with_project(tmp_path, project), RouterConfig()).small_track == 0.0


def test_defaults_without_project(tmp_path):
    board = board_with_project(tmp_path, {})
    (tmp_path / "b.kicad_pro").unlink()
    rules = load_rules(board, RouterConfig(default_track_width=0.3))
    assert rules.classes["Default"].track_width == 0.3 and "default rules" in rules.notes[0]


def test_invalid_project_json(tmp_path):
    import pytest
    from autorouter.board import BoardError
    board = board_with_project(tmp_path, {})
    (tmp_path / "b.kicad_pro").write_text("{not json")
    with pytest.raises(BoardError, match="not valid JSON"):
        load_rules(board, RouterConfig())


def test_thermal_spoke_minimum(tmp_path):
    import pytest
    from autorouter.board import BoardError
    rules_of = lambda value: load_rules(board_with_project(tmp_path, {"board": {"design_settings": {"rules": {
        "min_resolved_spokes": value}}}, "net_settings": {"classes": CLASSES}}), RouterConfig())
    assert rules_of(1).min_spokes == 1 and rules_of(0).min_spokes == 0
    assert rules_of(None).min_spokes == 2                              # KiCad's default where the project has none
    for bad in (-1, 1.5, "two"):
        with pytest.raises(BoardError, match="min_resolved_spokes"):
            rules_of(bad)


def test_thermal_spokes_are_not_checked_where_the_project_ignores_starved_thermal(tmp_path):
    # KiCad's DRC reports no starved relief on c2_hexpansion, whose project sets the check's severity to ignore; a
    # warning is still reported (and still avoided)
    rules_of = lambda severity: load_rules(board_with_project(tmp_path, {"board": {"design_settings": {
        "rules": {"min_resolved_spokes": 2}, "rule_severities": {"starved_thermal": severity}}},
        "net_settings": {"classes": CLASSES}}), RouterConfig())
    assert rules_of("ignore").min_spokes == 0
    assert rules_of("warning").min_spokes == 2 and rules_of("error").min_spokes == 2


def test_a_pads_own_clearance_overrides_the_classes_down_to_the_board_minimum(tmp_path):
    project = {"net_settings": {"classes": CLASSES, "netclass_assignments": {"GND": "POWER"}},
               "board": {"design_settings": {"rules": {"min_clearance": 0.1}}}}
    rules = load_rules(board_with_project(tmp_path, project), RouterConfig())
    power, default = rules.for_net(1).clearance, rules.for_net(3).clearance
    assert rules.clearance_between(power, default) == 0.2                    # no own clearance: the larger class
    assert rules.clearance_between(power, default, own_b=0.12) == 0.12       # a QFN pad's own, as KiCad has it
    assert rules.clearance_between(power, default, 0.05, 0.08) == 0.1        # never below the board's minimum


def test_a_clearance_asked_of_drawings_is_not_one_to_the_board_edge(tmp_path):
    # k7_tillitis_tk1's rule: KiCad checks the edge against edge_clearance only, and passes the board's GND via
    # 0.34 mm from it
    (tmp_path / "b.kicad_dru").write_text('(version 1)\n(rule "edge_clearance_inner" (layer inner)\n'
                                          '  (constraint clearance (min 0.45mm)) (condition "A.Type == \'Graphic\'"))\n')
    project = {"board": {"design_settings": {"rules": {"min_copper_edge_clearance": 0.25}}}}
    rules = load_rules(board_with_project(tmp_path, project), RouterConfig())
    assert rules.graphic_clearance == 0.45 and rules.edge_clearance == 0.25
