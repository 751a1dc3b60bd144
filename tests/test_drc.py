"""Our own DRC finds what it should: clearance, edge, hole to hole, unrouted."""
from shapely.geometry import box

from autorouter.board.geometry import circle
from autorouter.board.model import Board, Net, Pad
from autorouter.board.rules import DesignRules, NetClassRules
from autorouter.check import check
from autorouter.board.model import Track, Via

RULES = DesignRules({"Default": NetClassRules("Default", 0.2, 0.2, 0.6, 0.3)}, {}, 0.5, 0.25, 0.0, "test")


def pad(net, x, y):
    return Pad("U", str(net), net, x, y, 0, "circle", ("F.Cu", "B.Cu"), circle(x, y, 0.5))


def board():
    return Board("t", 20241229, ["F.Cu", "B.Cu"], box(0, 0, 20, 10), [Net(0, ""), Net(1, "A"), Net(2, "B")],
                 [pad(1, 2, 5), pad(1, 8, 5), pad(2, 5, 7)], [], [], [], [])


def test_clean_route_and_unrouted_count():
    assert check(board(), RULES).unrouted == {"A": 1}
    report = check(board(), RULES, [Track((2, 5), (8, 5), 0.2, "F.Cu", 1)], [], only_new=True)
    assert report.violations == [] and report.unrouted == {}


def test_clearance_to_another_nets_pad():
    report = check(board(), RULES, [Track((2, 5), (5, 6.3), 0.2, "F.Cu", 1)], [], only_new=True)
    assert report.by_kind() == {"clearance": 1, "track_dangling": 1}


def test_edge_and_holes():
    report = check(board(), RULES, [Track((2, 5), (2, 0.3), 0.2, "F.Cu", 1)],
                   [Via(12, 5, 0.6, 0.3, ("F.Cu", "B.Cu"), 1), Via(12.4, 5, 0.6, 0.3, ("F.Cu", "B.Cu"), 2)], only_new=True)
    kinds = report.by_kind()
    assert kinds["copper_edge_clearance"] == 1 and kinds["hole_to_hole"] == 1 and kinds["clearance"] == 2
    assert kinds["track_dangling"] == 1
