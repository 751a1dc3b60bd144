"""Portals found for many pins at once are those found pin by pin, and stub conflicts are those a pair-by-pair
check finds."""
import numpy as np
import pytest
import shapely
from shapely.strtree import STRtree

import generated
from autorouter.board import load_board
from autorouter.board.connectivity import pad_groups
from autorouter.board.rules import load_rules
from autorouter.config import load_config
from autorouter.lattice import build_obstacles, make_lattice
from autorouter.lattice.portals import mark_stub_conflicts, pin_portals, pins_portals, stub_lines
from autorouter.pipeline import board_lattice


@pytest.fixture(scope="module", params=["qfn", "bga"])
def routed_setup(request, tmp_path_factory):
    make = {"qfn": generated.qfn, "bga": generated.bga}[request.param]
    path = generated.write(make(), tmp_path_factory.mktemp(request.param), generated.default_class())
    config = load_config()
    board = load_board(path)
    rules = load_rules(board, config)
    lattice = board_lattice(board, rules, config)
    profile = build_obstacles(board, rules, lattice, config.clearance_margin)[rules.classes["Default"]]
    pins = [[board.pads[i] for i in group] for groups in pad_groups(board).values() for group in groups]
    return board, lattice, profile, pins, config


def test_many_pins_at_once_are_pin_by_pin(routed_setup):
    board, lattice, profile, pins, config = routed_setup
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    together = pins_portals(pins, layer_index, profile, lattice, config.portal_radius)
    assert sum(p.nodes.size for p in together) > 0
    for pin, found in zip(pins, together):
        alone = pin_portals(pin, layer_index, profile, lattice, config.portal_radius)
        for name in ("nodes", "length", "target", "pad", "bend"):
            assert np.array_equal(getattr(found, name), getattr(alone, name), equal_nan=True), name


def conflicts_pair_by_pair(pins_by_net, lattice, gap):
    """Each portal's blocks as the first version found them: every stub against every stub, shapely's STRtree
    with its dwithin predicate, then the exact distance."""
    rows, stubs = [], []
    for net, width, portals_list in pins_by_net:
        for portals in portals_list:
            lines = stub_lines([portals], lattice) if portals.nodes.size else []
            for k, line in enumerate(lines):
                rows.append((portals, k, net, width, int(portals.nodes[k])))
                stubs.append(line)
    widths = max(r[3] for r in rows)
    a, b = STRtree(stubs).query(stubs, predicate="dwithin", distance=widths + gap)
    found = {}
    for i, j in zip(a.tolist(), b.tolist()):
        ri, rj = rows[i], rows[j]
        same_layer = ri[4] // lattice.plane == rj[4] // lattice.plane
        if ri[2] != rj[2] and same_layer and shapely.distance(stubs[i], stubs[j]) < (ri[3] + rj[3]) / 2 + gap:
            found.setdefault(id(ri[0]), {}).setdefault(ri[1], set()).add(rj[4])
    return found


def test_stub_conflicts_are_those_found_pair_by_pair(routed_setup):
    board, lattice, profile, pins, config = routed_setup
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    by_net = {}
    for pin, portals in zip(pins, pins_portals(pins, layer_index, profile, lattice, config.portal_radius)):
        by_net.setdefault(pin[0].net, []).append(portals)
    gap = 0.2 + config.clearance_margin
    pins_by_net = [(net, 0.25, gap, portals) for net, portals in sorted(by_net.items())]
    expected = conflicts_pair_by_pair([(net, w, p) for net, w, _, p in pins_by_net], lattice, gap)
    mark_stub_conflicts(pins_by_net, lattice)
    seen = 0
    for _, _, _, portals_list in pins_by_net:
        for portals in portals_list:
            for k, blocks in enumerate(portals.blocks):
                assert sorted(blocks.tolist()) == sorted(expected.get(id(portals), {}).get(k, ()))
                assert blocks.dtype == np.int64
                seen += len(blocks)
    assert seen > 0
