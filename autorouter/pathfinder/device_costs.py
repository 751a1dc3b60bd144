"""The GPU's copy of PathFinder's prices: occupancy, history and each class's owner maps live on the device, and
one launch of kernels/costs.cu builds a whole batch's padded cost arrays from them, instead of costs.roi_costs per
ROI on the host and an upload. The numbers are the same.

The occupancy follows the host's by the same steps (Occupancy.changes: the covers added and taken away, the
scalings of a local negotiation), uploading only the indices that changed, and is copied whole only at first or
when the changes would move more than a copy; the history is copied once per iteration; owner maps once per net
class. What changes per ROI (its window, net, own vias) is a small table() that the search engine uploads with the
rest of the batch's small inputs.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..lattice.obstacles import FREE
from ..search.constants import STEP, cuda_defines
from .congestion import Changes, scale_counts

THREADS = 256


def prices_for(occ, xp) -> "DeviceCosts | None":
    """A copy of the prices in the memory of an engine whose array module is xp, for it to build a batch's costs
    there; None when that memory is the host's (the costs are then built per ROI on the host)."""
    return None if xp is np else DeviceCosts(occ)


@functools.lru_cache(maxsize=None)
def kernel(device: int):
    import cupy
    source = (Path(__file__).parent / "kernels" / "costs.cu").read_text()
    options = ("--fmad=false",) + cuda_defines("BLOCKED32", "COST_CAP", FREE=FREE)
    return cupy.RawModule(code=source, options=options).get_function("build_costs")


class DeviceCosts:
    """The search interface's DeviceCostBuilder for PathFinder's prices (WindowCosts), on the GPU."""

    def __init__(self, occ):
        self.occ = occ
        self.versions = (None, None)
        self.counts = self.history = None
        self.owner_maps: dict[int, tuple] = {}        # id(profile) -> (profile, track owner, via owner) on the device
        occ.changes = Changes(occ.track.size // 4)    # more indices than a quarter of the nodes: a copy is cheaper

    def occupancy(self):
        """(track, via, hist_track, hist_via) on the device: the counts brought up to the host's by its changes (or
        copied whole), the history copied again when the host's changed."""
        import cupy
        o = self.occ
        if self.versions[0] != o.version:
            if o.changes.whole or self.counts is None:
                self.counts = cupy.asarray(o.track), cupy.asarray(o.via)
            else:
                follow(self.counts, o.changes.steps, cupy)
            o.changes.taken()
        if self.versions[1] != o.hist_version:
            self.history = cupy.asarray(o.hist_track), cupy.asarray(o.hist_via)
        self.versions = (o.version, o.hist_version)
        return self.counts + self.history

    def owners(self, profile) -> tuple[int, int]:
        """Device pointers to the profile's track and via owner maps."""
        import cupy
        entry = self.owner_maps.get(id(profile))
        if entry is None:
            entry = (profile, cupy.asarray(profile.track_owner, dtype=np.int32),
                     cupy.asarray(profile.via_owner, dtype=np.int32))
            self.owner_maps[id(profile)] = entry
        return entry[1].data.ptr, entry[2].data.ptr

    def table(self, windows: list) -> np.ndarray:
        """What the kernel needs from the host for a batch of WindowCosts, as one int64 array: per ROI (first row,
        first col, rows, cols, net, track owner map, via owner map, then where its lists start and how long they
        are: the own via sites near enough to matter (with the via gap's float64 bits), the own track cover and the
        own via cover the occupancy still counts), then the lists."""
        rows, lists = [], []
        n = 0

        def listed(values) -> tuple[int, int]:
            nonlocal n
            values = np.zeros(0, np.int64) if values is None else values
            lists.append(values)
            n += values.size
            return n - values.size, values.size
        for w in windows:
            near = listed(near_window(self.occ.lattice, w))
            rows.append((w.rows.start, w.cols.start, w.rows.stop - w.rows.start, w.cols.stop - w.cols.start,
                         w.task.net, *self.owners(w.task.profile), *near, np.float64(w.via_gap).view(np.int64),
                         *listed(w.own_track), *listed(w.own_via)))
        return np.concatenate([np.array(rows, dtype=np.int64).ravel()] + lists).astype(np.int64)

    def fill(self, table, windows: list, shape: tuple[int, int, int, int]):
        """The padded int32 (col, row, via) cost arrays of a batch of WindowCosts of one CostSnapshot, whose
        table() is on the device already."""
        import cupy
        K, L, H, W = shape
        snapshot = windows[0].snapshot
        lat, config = snapshot.lattice, snapshot.config
        track, via, hist_track, hist_via = self.occupancy()
        total = K * L * H * W
        col, row, cvia = (cupy.empty(total, dtype=np.int32) for _ in range(3))
        kernel(cupy.cuda.Device().id)(
            ((total + THREADS - 1) // THREADS,), (THREADS,),
            (track, via, hist_track, hist_via, table, np.int32(K), np.int32(L), np.int32(H), np.int32(W),
             np.int32(lat.rows), np.int32(lat.cols), np.float64(lat.pitch), np.float64(snapshot.pres),
             np.float64(STEP), np.float64(STEP * config.wrong_way_cost), np.float64(config.via_cost * STEP),
             np.int32(snapshot.wall), col, row, cvia))
        return col.reshape(shape), row.reshape(shape), cvia.reshape(shape)


def follow(counts, steps: list, xp) -> None:
    """Apply the host's changes (Changes.steps) to a copy of its (track, via) counts in xp's memory, in order: every
    index of every bump uploaded at once, each bump applied as NumPy applied it (an index given twice in one bump
    counts once)."""
    bumps = [s for s in steps if s[0] == "bump"]
    if bumps:
        flat = xp.asarray(np.concatenate([part for _, nodes, sites, _ in bumps for part in (nodes, sites)]
                                         ).astype(np.int64, copy=False))
    at = 0
    for step in steps:
        if step[0] == "scale":
            scale_counts(counts, step[1], step[2])
            continue
        _, nodes, sites, delta = step
        for c, idx in zip(counts, (nodes, sites)):
            if idx.size:
                c[flat[at:at + idx.size]] += delta
            at += idx.size


def near_window(lat, w) -> np.ndarray:
    """The window's own via sites, and those outside it but within its via gap: the ones that can block a node."""
    if w.own_vias is None or not w.own_vias.size:
        return np.zeros(0, np.int64)
    reach = int(np.ceil(w.via_gap / lat.pitch))
    r, c = np.divmod(w.own_vias, lat.cols)
    keep = ((r >= w.rows.start - reach) & (r < w.rows.stop + reach)
            & (c >= w.cols.start - reach) & (c < w.cols.stop + reach))
    return w.own_vias[keep]
