"""Portals found for many pins at once are those found pin by pin, and stub conflicts are those a pair-by-pair
check finds."""
from dataclasses import replace

import numpy as np
import pytest
import shapely
from shapely.strtree import STRtree

import generated
from autorouter.board import load_board
from autorouter.board.connectivity import pad_groups
from autorouter.board.rules import load_rules
from autorouter.config import load_config
from autorouter.lattice import build_obstacles, make_lattice, portals
from autorouter.lattice.portals import mark_stub_conflicts, pin_portals, pins_portals, stub_lines
from autorouter.pathfinder.finishing import through_blocks, through_others
from autorouter.pathfinder.nets import NetTask, Pin
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


def test_stubs_checked_by_their_bound_are_those_of_checking_every_node(routed_setup, monkeypatch):
    """straight_portals checks the nodes nearest by a bound on their stub's length first, then only those that could
    still be kept: the same portals as checking every node of every window (a large enough first round)."""
    board, lattice, profile, pins, config = routed_setup
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    checked = []
    real = portals.stub_legal
    monkeypatch.setattr(portals, "stub_legal", lambda *a: checked.append(len(a[3])) or real(*a))
    found = pins_portals(pins, layer_index, profile, lattice, config.portal_radius)
    some = sum(checked)
    monkeypatch.setattr(portals, "FIRST_CHECKED", 1 << 30)
    checked.clear()
    every = pins_portals(pins, layer_index, profile, lattice, config.portal_radius)
    assert some < sum(checked)
    for a, b in zip(found, every):
        for name in ("nodes", "length", "target", "pad", "bend"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


def escapes_pad_by_pad(pad, l, profile, lattice):
    """A pad's bent stubs on layer l as the first version found them: direction by direction, step by step, until a
    step has a legal stub to an open node."""
    centre = np.array([pad.x, pad.y])
    t = np.radians(pad.angle)
    axes = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    nodes, length, bends = [], [], []
    for axis in (axes[0], -axes[0], axes[1], -axes[1]):
        extent = float(np.max(shapely.get_coordinates(pad.outline) @ axis - centre @ axis))
        for k in range(1, portals.ESCAPE_STEPS + 1):
            bend = centre + axis * (extent + k * lattice.pitch)
            if not portals.stub_legal(profile, l, pad.net, bend[None], centre[None])[0]:
                continue
            r = 1.5 * lattice.pitch
            rows, cols = lattice.window(bend[0] - r, bend[1] - r, bend[0] + r, bend[1] + r)
            rr, cc = (a.ravel() for a in np.mgrid[rows, cols])
            owner = profile.track_owner[l, rr, cc]
            rr, cc = rr[(owner == -1) | (owner == pad.net)], cc[(owner == -1) | (owner == pad.net)]
            xy = np.stack(lattice.xy(rr, cc), 1)
            legal = portals.stub_legal(profile, l, pad.net, xy, np.repeat(bend[None], len(xy), 0))
            if legal.any():
                nodes.append(lattice.index(l, rr[legal], cc[legal]))
                length.append(np.hypot(*(xy[legal] - bend).T) + extent + k * lattice.pitch)
                bends.append(np.repeat(bend[None], int(legal.sum()), 0))
                break
    if not nodes:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2))
    nodes, length, bends = np.concatenate(nodes), np.concatenate(length), np.concatenate(bends)
    keep = np.argsort(length, kind="stable")[:portals.MAX_ESCAPES]
    return nodes[keep], length[keep], np.repeat(centre[None], keep.size, 0), bends[keep]


def test_bent_stubs_found_at_once_are_those_found_pad_by_pad(routed_setup):
    board, lattice, profile, pins, config = routed_setup
    pairs = [(pad, board.copper_layers.index(layer)) for pin in pins for pad in pin for layer in pad.layers]
    together = portals.escape_portals([p for p, _ in pairs], np.array([l for _, l in pairs]), profile, lattice)
    assert sum(found[0].size for found in together) > 0
    for (pad, l), found in zip(pairs, together):
        for a, b in zip(found, escapes_pad_by_pad(pad, l, profile, lattice)):
            assert np.array_equal(a, b), pad.name


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


def test_a_pin_whose_stubs_all_cross_tracks_keeps_its_way_through_the_fewest_nets(routed_setup):
    # finishing keeps stubs clear of the tracks made so far; where that leaves a pin no portal, its way in through
    # the fewest other nets' tracks is kept apart (Pin.through), with those nets, for make_way to move them
    from autorouter.board.model import Track
    from autorouter.lattice.portals import keep_clear_of, stub_crossings, track_index
    board, lattice, profile, pins, config = routed_setup
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    pin = pins[0]
    portals = pins_portals([pin], layer_index, profile, lattice, config.portal_radius)[0]
    net, width, gap = pin[0].net, 0.2, 0.2
    clear, through, crossed = keep_clear_of(portals, net, width, lattice, track_index([], lattice), gap)
    assert clear.nodes.size == portals.nodes.size and not through.nodes.size and not crossed
    # every stub's far end (its node) under a track of net A, and the first stub's also under net B's (stubs of
    # some length: a node on the pad is a path's own, which the lattice's covers judge)
    layer = lattice.layers[int(portals.nodes[0] // lattice.plane)]
    on_layer = (portals.nodes // lattice.plane == portals.nodes[0] // lattice.plane) & (portals.length > 0)
    x, y = lattice.node_xy(portals.nodes[on_layer])
    tracks = [Track((float(a), float(b)), (float(a) + 1e-3, float(b)), 0.1, layer, 1001) for a, b in zip(x, y)]
    tracks.append(Track((float(x[0]), float(y[0])), (float(x[0]), float(y[0]) + 1e-3), 0.1, layer, 1002))
    tracks.append(Track((float(x[0]), float(y[0])), (float(x[0]) + 1e-3, float(y[0])), 0.1, layer, net))  # its own
    others = portals.subset(on_layer)
    tracks = track_index(tracks, lattice)
    clear, through, crossed = keep_clear_of(others, net, width, lattice, tracks, gap)
    assert not clear.nodes.size
    each = stub_crossings(others, net, width, lattice, tracks, gap)
    fewest = min(map(len, each))
    assert 1001 in crossed and crossed == set().union(*(c for c in each if len(c) == fewest))
    assert through.nodes.tolist() == [n for n, c in zip(others.nodes.tolist(), each) if len(c) == fewest]
    assert {1001, 1002} == each[0] and others.nodes.size > 2


def test_a_way_in_through_other_nets_marks_copies_of_the_pins_portals(routed_setup):
    # make_way marks the stubs of a pin's way in through other nets' tracks against those nets' portals: on copies,
    # so that the blocks of one try never reach the next (each try's in-way nets differ)
    board, lattice, profile, pins, config = routed_setup
    layer_index = {name: i for i, name in enumerate(board.copper_layers)}
    found = pins_portals(pins, layer_index, profile, lattice, config.portal_radius)
    size = load_rules(board, config).classes["Default"]
    tasks = [NetTask(pin[0].net, str(pin[0].net), size, profile, [Pin(pin, portals)])
             for pin, portals in zip(pins, found)]
    stored = found[0].subset(np.ones(found[0].nodes.size, bool))
    before = [b.copy() for b in stored.blocks]
    waiting = replace(tasks[0], pins=[Pin(pins[0], found[0].subset(np.zeros(found[0].nodes.size, bool)),
                                          through=stored, crossed=frozenset({tasks[1].net}))])
    t, crossed, through = through_others(waiting)
    assert crossed == {tasks[1].net} and t.pins[0].portals is through[0] and through[0] is not stored
    neighbours = [o for o in tasks[1:] if o.net != t.net]
    through_blocks(t, through, neighbours, lattice)
    assert any(b.size for b in through[0].blocks)                  # some stub comes near a neighbour's
    assert all(np.array_equal(a, b) for a, b in zip(before, stored.blocks))
