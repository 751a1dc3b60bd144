"""Why a join found no path, for the report: the nets whose routes wall in the pad it had to reach.

From the pad's portals, the lattice nodes its net's tracks could reach are followed (steps in a layer between open
nodes, vias where one may stand), with the obstacles and every other net's cover as walls. Where that region closes
within REACH_MM of the pad and holds no portal of the net's other pins, the pad is walled in, and the nets whose
copper or cover bounds the region are what walls it in.
"""
from __future__ import annotations

import numpy as np
import shapely

from ..lattice.obstacles import FREE

REACH_MM = 6.0      # how far the region is followed: a pad walled in by its neighbours is walled in near them
MOST_NAMED = 6      # nets named at most, in net order


def walled_in_by(task, pin_index: int, routes: dict, lattice) -> list[int]:
    """The nets that wall in task.pins[pin_index] (see the module), or [] where its region is not closed nearby."""
    pin = task.pins[pin_index]
    if not pin.portals.nodes.size:
        return []
    bounds = shapely.total_bounds([p.outline for p in pin.pads]) + np.array([-1, -1, 1, 1]) * REACH_MM
    rows, cols = lattice.window(*bounds.tolist())
    L, H, W = len(lattice.layers), rows.stop - rows.start, cols.stop - cols.start

    def local(nodes: np.ndarray):
        """The nodes (flat, or flat row/col of the plane) that lie in the window, as indices into it."""
        l, r, c = lattice.unravel(nodes[lattice.inside(nodes, rows, cols)])
        return l, r - rows.start, c - cols.start

    owner = task.profile.track_owner[:, rows, cols]
    open_ = (owner == FREE) | (owner == task.net)
    via_owner = task.profile.via_owner[rows, cols]
    via_open = (via_owner == FREE) | (via_owner == task.net)
    cover = np.full((L, H, W), -1, np.int64)
    for net, route in routes.items():
        if net != task.net:
            cover[local(route.cover_track)] = net
            via_open[local(route.cover_via)[1:]] = False
    open_ &= cover < 0
    region = np.zeros((L, H, W), bool)
    region[local(pin.portals.nodes)] = True
    region &= open_
    while True:
        if region[:, [0, -1], :].any() or region[:, :, [0, -1]].any():
            return []               # it reaches the edge of the window: not closed nearby
        grown = region | neighbours(region)
        grown |= (region.any(0) & via_open & open_.all(0))[None]
        grown &= open_
        if (grown == region).all():
            break
        region = grown
    others = [p.portals.nodes for i, p in enumerate(task.pins) if i != pin_index]
    if others and region[local(np.concatenate(others))].any():
        return []                   # another pin lies inside it: not walled off from the net
    rim = neighbours(region) & ~region
    nets = set(cover[rim].tolist()) | set(owner[rim].tolist())
    return sorted(n for n in nets if n > 0 and n != task.net)


def neighbours(region: np.ndarray) -> np.ndarray:
    """The nodes one step in a layer from the region's (layers, rows, cols)."""
    out = np.zeros_like(region)
    out[:, 1:, :] |= region[:, :-1, :]
    out[:, :-1, :] |= region[:, 1:, :]
    out[:, :, 1:] |= region[:, :, :-1]
    out[:, :, :-1] |= region[:, :, 1:]
    return out
