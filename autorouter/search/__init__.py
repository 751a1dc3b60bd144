"""The search interface: a batch of K regions of interest (ROIs) in, one shortest path per ROI out.

Each ROI is a box of the lattice (layers x rows x cols) with three integer cost arrays: the cost of entering a node by
a step along its row (a column change), along its column (a row change), or from the layer above or below (a via).
BLOCKED marks a move that does not exist. The arrays come from the request's RoiCosts, asked for only by an engine
that needs them on the host: the GPU engine lets costs that know how build a whole batch on the device instead.
Sources carry start costs (portals on several layers, the net's tree so far at 0), and a source at BLOCKED is no
source; sinks carry the cost of their stub to the pad. The search is exact: it stops only when every sink is settled,
and each node's parent is the lowest-index predecessor on a shortest path, so every engine returns the same routes.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

import numpy as np

from .constants import BLOCKED, NO_PARENT  # noqa: F401  (part of the interface: engines and callers use them)


class DeviceCostBuilder(Protocol):
    """Builds a whole batch's costs in the engine's memory from prices kept there, so that they never touch the host:
    what an engine whose xp is not NumPy's uses instead of each ROI's arrays(), when all the ROIs of a batch share one
    builder."""

    def table(self, costs: list) -> np.ndarray:
        """What fill() needs from the host for these RoiCosts, as one int64 array (uploaded with the batch)."""
        ...

    def fill(self, table, costs: list, shape: tuple[int, int, int, int]) -> tuple:
        """The batch's (col, row, via) costs as int32 (K, L, H, W) arrays of the engine's xp, each ROI in the corner
        of its padded box; BLOCKED32 for no move and in the padding. table: table()'s array, in that memory."""
        ...


class RoiCosts(Protocol):
    """The move costs of one ROI."""
    device: DeviceCostBuilder | None      # builds a batch of these costs where the engine searches; None: only arrays()

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """int64 (L, R, C) arrays: enter by a column step, by a row step, from an adjacent layer."""
        ...


@dataclass
class ArrayCosts:
    """Costs given as arrays."""
    col: np.ndarray
    row: np.ndarray
    via: np.ndarray
    device = None                         # host arrays only (not a dataclass field: no annotation)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.col, self.row, self.via


@dataclass
class RoiRequest:
    shape: tuple[int, int, int]          # (layers, rows, cols) of the box
    costs: RoiCosts
    sources: np.ndarray                  # int64 local flat indices
    source_cost: np.ndarray              # int64
    sinks: np.ndarray                    # int64 local flat indices
    sink_cost: np.ndarray                # int64

    @property
    def cost_col(self) -> np.ndarray:
        return self.costs.arrays()[0]

    @property
    def cost_row(self) -> np.ndarray:
        return self.costs.arrays()[1]

    @property
    def cost_via(self) -> np.ndarray:
        return self.costs.arrays()[2]


@dataclass
class RoiResult:
    path: np.ndarray | None              # local flat indices, source first, sink last; None when unreachable
    cost: int                            # distance to the chosen sink plus its stub cost
    sink: int                            # position in the request's sink list (-1 when unreachable)
    rounds: int                          # relaxation rounds the search took
    dist: np.ndarray | None = None       # (L*R*C,) distances, only when asked for (tests)


class EngineUnavailable(RuntimeError):
    """The engine asked for cannot run here; the message is one line for the user."""


class SearchStopped(Exception):
    """A search given up part-way because should_stop gave a reason (Ctrl-C, the time limit): the reason."""


def stop_if_asked(should_stop) -> None:
    """Raise SearchStopped when should_stop (if any) gives a reason."""
    why = should_stop() if should_stop is not None else ""
    if why:
        raise SearchStopped(why)


class SearchEngine(Protocol):
    """What the pathfinder sees of an engine: it never asks which one it has."""
    name: str          # for reports only: "cpu" or "gpu"
    xp: ModuleType     # the array module of the memory it searches in (numpy, or cupy): the stages that feed it may
                       # keep their work there (prices as a DeviceCostBuilder, a large net's spanning tree)

    def search(self, requests: list[RoiRequest], keep_dist: bool = False, should_stop=None) -> list[RoiResult]:
        """should_stop: a reason to give up now, or "", looked at between rounds where a search takes long (the CPU
        engine's); raises SearchStopped with it."""
        ...


def make_engine(backend: str, delta: int):
    """The engine for `backend` ('cpu', 'gpu' or 'auto') and a note for the report (None when as asked)."""
    from .cpu import CpuEngine
    if backend == "cpu":
        return CpuEngine(delta), None
    try:
        from .gpu import GpuEngine, gpu_available
    except ImportError:
        GpuEngine, gpu_available = None, lambda: (False, "no GPU engine in this build")
    ok, why = gpu_available()
    if ok:
        return GpuEngine(delta), None
    if backend == "gpu":
        raise EngineUnavailable(f"--backend gpu: {why}")
    return CpuEngine(delta), f"GPU not used ({why}); searching on the CPU"
