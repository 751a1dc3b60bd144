"""The GPU's copy of PathFinder's prices: occupancy, history and each class's owner maps live on the device, and
one launch of kernels/costs.cu builds a whole batch's padded cost arrays from them, instead of costs.roi_costs per
ROI on the host and an upload. The numbers are the same.

The occupancy is copied again only when it changed (Occupancy.version), which is once per batch of nets, not once
per search; the history once per iteration; owner maps once per net class.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from .costs import STEP, near_own_vias

THREADS = 256


@functools.lru_cache(maxsize=None)
def kernel(device: int):
    import cupy
    source = (Path(__file__).parent / "kernels" / "costs.cu").read_text()
    return cupy.RawModule(code=source, options=("--fmad=false",)).get_function("build_costs")


class DeviceCosts:
    def __init__(self, occ):
        self.occ = occ
        self.versions = (None, None)
        self.counts = self.history = None
        self.owner_maps: dict[int, tuple] = {}        # id(profile) -> (profile, track owner, via owner) on the device

    def occupancy(self):
        """(track, via, hist_track, hist_via) on the device, each pair copied again when the host's changed."""
        import cupy
        o = self.occ
        if self.versions[0] != o.version:
            self.counts = cupy.asarray(o.track), cupy.asarray(o.via)
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

    def fill(self, windows: list, shape: tuple[int, int, int, int]):
        """The padded int32 (col, row, via) cost arrays of a batch of WindowCosts, all of one CostSnapshot."""
        import cupy
        K, L, H, W = shape
        snap = windows[0].snapshot
        lat, config = snap.lattice, snap.config
        track, via, hist_track, hist_via = self.occupancy()
        roi = np.array([(w.rows.start, w.cols.start, w.rows.stop - w.rows.start, w.cols.stop - w.cols.start,
                         w.task.net, *self.owners(w.task.profile)) for w in windows], dtype=np.int64)
        total = K * L * H * W
        col, row, cvia = (cupy.empty(total, dtype=np.int32) for _ in range(3))
        kernel(cupy.cuda.Device().id)(
            ((total + THREADS - 1) // THREADS,), (THREADS,),
            (track, via, hist_track, hist_via, cupy.asarray(roi), np.int32(K), np.int32(L), np.int32(H),
             np.int32(W), np.int32(lat.rows), np.int32(lat.cols), np.float64(snap.pres), np.float64(STEP),
             np.float64(STEP * config.wrong_way_cost), np.float64(config.via_cost * STEP), np.int32(snap.strict),
             col, row, cvia))
        blocked = own_via_blocks(windows, lat, (L, H, W))
        if blocked.size:
            cvia[cupy.asarray(blocked)] = np.int32(0x7FFFFFFF)
        return col.reshape(shape), row.reshape(shape), cvia.reshape(shape)


def own_via_blocks(windows: list, lat, box) -> np.ndarray:
    """Flat indices of the padded batch where a new via would sit too close to one of its net's own vias."""
    L, H, W = box
    parts = []
    for k, w in enumerate(windows):
        if w.own_vias is None or not w.own_vias.size:
            continue
        r, c = np.nonzero(near_own_vias(lat, w.own_vias, w.rows, w.cols, w.via_gap))
        layers = np.arange(L)[:, None]
        parts.append(((k * L + layers) * H + r[None, :]) * W + c[None, :])
    return np.concatenate([p.ravel() for p in parts]) if parts else np.zeros(0, np.int64)
