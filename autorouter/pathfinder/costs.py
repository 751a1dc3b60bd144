"""Integer move costs for one connection's region of interest, from PathFinder's state.

cost = (base + history) x (1 + present_factor x occupancy), per node entered, in units where one lattice step in a
layer's preferred direction costs STEP. Integers keep every engine's distances identical.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..lattice.grid import disc_offsets
from ..lattice.obstacles import FREE
from ..search.constants import BLOCKED, COST_CAP, STEP
from .congestion import in_sorted


@dataclass
class CostSnapshot:
    """PathFinder's prices at one moment, for every ROI searched against them together. device: their copy in the
    engine's memory (device_costs.DeviceCosts) when that is not the host's, so that it builds the batch's costs
    there."""
    lattice: object
    occ: object
    pres: float
    config: object
    wall: int = 0               # occupancy at which another net's cover is a wall, not a cost (0: never)
    device: object = None

    def window(self, task, rows: slice, cols: slice, own_vias: np.ndarray, via_gap: float,
               own=None) -> "WindowCosts":
        """own: the net's route as the occupancy still holds it (nets searched together against one snapshot), whose
        cover is no price to the net itself."""
        track, via = own_cover(self.lattice, own, rows, cols)
        return WindowCosts(self, task, rows, cols, own_vias, via_gap, track, via)


@dataclass
class WindowCosts:
    """The costs of one connection's ROI (a RoiCosts): built on the host only when an engine asks for arrays()."""
    snapshot: CostSnapshot
    task: object
    rows: slice
    cols: slice
    own_vias: np.ndarray              # the net's via sites so far (flat row/col)
    via_gap: float                    # how close a new via may come to one of them
    # the net's own cover in the window where the occupancy still counts it (sorted flat nodes, flat row/col
    # sites): no price to the net itself
    own_track: np.ndarray | None = None
    own_via: np.ndarray | None = None
    _arrays: tuple | None = field(default=None, repr=False)

    @property
    def device(self):
        """The snapshot's copy of the prices in the engine's memory (a DeviceCostBuilder), or None."""
        return self.snapshot.device

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._arrays is None:
            s = self.snapshot
            self._arrays = roi_costs(self.task, s.lattice, s.occ, self.rows, self.cols, s.pres, s.config,
                                     self.own_vias, self.via_gap, s.wall, (self.own_track, self.own_via))
        return self._arrays


def roi_costs(task, lattice, occ, rows: slice, cols: slice, pres: float, config, own_vias=None, via_gap: float = 0.0,
              wall: int = 0, own=(None, None)):
    """(cost_col, cost_row, cost_via) int64 arrays of shape (layers, rows, cols) for task's net in the window.

    own_vias (flat row/col indices) are the net's vias so far: a new via may reuse one, but not sit closer to it than
    via_gap (hole to hole applies within a net too). wall: a node whose occupancy reaches it is a wall, not a cost
    (1: every other net's cover; 0: none). own: (flat nodes, flat row/col sites) of the window where the occupancy
    counts the net's own cover once (own_cover), taken off."""
    L = len(lattice.layers)
    net, profile = task.net, task.profile
    owner = profile.track_owner[:, rows, cols]
    legal = (owner == FREE) | (owner == net)
    shape3 = (L, lattice.rows, lattice.cols)
    crowd = occ.track.reshape(shape3)[:, rows, cols]
    if own[0] is not None and own[0].size:
        crowd = crowd.copy()
        l, r, c = lattice.unravel(own[0])
        crowd[l, r - rows.start, c - cols.start] -= 1
    hist = occ.hist_track.reshape(shape3)[:, rows, cols]
    mult = (1.0 + hist) * (1.0 + pres * crowd)
    if wall:
        legal = legal & (crowd < wall)
    horizontal = (np.arange(L) % 2 == 0)[:, None, None]
    wrong = config.wrong_way_cost
    col_step = np.where(horizontal, STEP, STEP * wrong)
    row_step = np.where(horizontal, STEP * wrong, STEP)
    cost_col, cost_row = (priced(step, mult, ~legal) for step in (col_step, row_step))
    vowner = profile.via_owner[rows, cols]
    via_ok = (vowner == FREE) | (vowner == net)
    crowd_v = occ.via.reshape(lattice.rows, lattice.cols)[rows, cols]
    if own[1] is not None and own[1].size:
        crowd_v = crowd_v.copy()
        r, c = np.divmod(own[1], lattice.cols)
        crowd_v[r - rows.start, c - cols.start] -= 1
    hist_v = occ.hist_via.reshape(lattice.rows, lattice.cols)[rows, cols]
    vmult = (1.0 + hist_v) * (1.0 + pres * crowd_v)
    via = priced(config.via_cost * STEP, vmult)[None]
    if wall:
        via_ok &= crowd_v < wall
    if own_vias is not None and own_vias.size:
        via_ok &= ~near_own_vias(lattice, own_vias, rows, cols, via_gap)
    cost_via = np.where(legal & via_ok[None], via, BLOCKED)
    return cost_col, cost_row, cost_via


def priced(step, mult: np.ndarray, shut: np.ndarray | None = None) -> np.ndarray:
    """rint(step x mult), at most COST_CAP, as int64, and BLOCKED where shut: each pass in place (the CPU engine
    asks for these arrays on every search)."""
    out = np.multiply(step, mult)
    np.rint(out, out=out)
    np.minimum(out, COST_CAP, out=out)
    cost = out.astype(np.int64)
    if shut is not None:
        np.putmask(cost, shut, BLOCKED)
    return cost


def near_own_vias(lattice, sites: np.ndarray, rows: slice, cols: slice, gap: float) -> np.ndarray:
    """(rows, cols) mask of the window: closer than gap to one of the sites, but not a site itself."""
    r, c = np.divmod(sites, lattice.cols)
    off = disc_offsets(gap, lattice.pitch)
    rr = (r[:, None] + off[None, :, 0]).ravel() - rows.start
    cc = (c[:, None] + off[None, :, 1]).ravel() - cols.start
    h, w = rows.stop - rows.start, cols.stop - cols.start
    inside = (rr >= 0) & (rr < h) & (cc >= 0) & (cc < w)
    mask = np.zeros((h, w), bool)
    mask[rr[inside], cc[inside]] = True
    r0, c0 = r - rows.start, c - cols.start
    own = (r0 >= 0) & (r0 < h) & (c0 >= 0) & (c0 < w)
    mask[r0[own], c0[own]] = False
    return mask


def stub_prices(occ, portals, radii, pres: float, own=None) -> np.ndarray:
    """What ending at each portal costs for the other nets' copper its pad stub's cover would hold (their track
    nodes and vias), at the present factor: what a path pays where it enters another net's cover. A path's nodes and
    cover are priced alike both ways (equal radii), but a stub's cover is never searched: a net whose stub covers a
    neighbour's way in pays nothing for it, and the neighbour, with no other way in, stays in conflict with it
    (k7_tillitis_tk1's APP_ICE_SCK and APP_ICE_MISO). own: the net's route still in the occupancy, not counted."""
    lat = occ.lattice
    track, t_of, sites, s_of = occ.stub_covers(portals, radii)
    held_t, held_v = occ.centres[track].astype(np.int64), occ.via_centres[sites].astype(np.int64)
    if own is not None:
        held_t -= in_sorted(own.nodes(), track)
        held_v -= in_sorted(own.via_sites(lat), sites)
    held = (np.bincount(t_of, held_t, minlength=portals.nodes.size)
            + np.bincount(s_of, held_v, minlength=portals.nodes.size))
    return np.minimum(np.rint(STEP * pres * held), COST_CAP).astype(np.int64)


def stub_cost(length_mm: np.ndarray, pitch: float) -> np.ndarray:
    return np.rint(np.asarray(length_mm) / pitch * STEP).astype(np.int64)


def own_cover(lattice, route, rows: slice, cols: slice) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The route's cover inside the window: its track cover (sorted flat nodes) and via cover (flat row/col)."""
    if route is None:
        return None, None
    return (route.cover_track[lattice.inside(route.cover_track, rows, cols)],
            route.cover_via[lattice.inside(route.cover_via, rows, cols)])


def node_penalty(occ, nodes: np.ndarray, pres: float, own=None) -> np.ndarray:
    """What congestion adds to entering these nodes; charged to portal sources, which are never entered. own: the
    net's route still in the occupancy, whose cover is not counted."""
    crowd = occ.track[nodes]
    if own is not None:
        crowd = crowd - in_sorted(own.cover_track, nodes)
    mult = (1.0 + occ.hist_track[nodes]) * (1.0 + pres * crowd)
    return np.minimum(np.rint(STEP * (mult - 1.0)), COST_CAP).astype(np.int64)
