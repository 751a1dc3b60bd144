"""The numbers that the search's Python and its CUDA kernels must agree on, written once: the kernels get them at
compile time from cuda_defines(), never from a #define of their own.

Costs are integers in units where one lattice step in a layer's preferred direction costs STEP; every engine adds
them exactly, so every engine finds the same distances.
"""
from __future__ import annotations

import numpy as np

STEP = 16                          # the cost of one lattice step in a layer's preferred direction: the cost scale
COST_CAP = 1 << 22                 # the most one move may cost however crowded its node: far below BLOCKED32, so
                                   # that an int32 cost never reads as blocked
BLOCKED = np.int64(1 << 40)        # a move cost that means "no such move"; a source at this cost is no source
BLOCKED32 = np.int32(0x7FFFFFFF)   # BLOCKED in the GPU's int32 cost arrays (and their padding)
UNREACHED = np.int64(1 << 56)      # the distance of a node no path reaches
NO_PARENT = 0xFFFFFFFF             # the parent of a source (the low 32 bits of a packed (distance, parent) key)

# how each constant is spelled in C: 64-bit ones with LL, so that no kernel expression overflows an int
_IN_C = {"COST_CAP": str(COST_CAP), "BLOCKED": f"{int(BLOCKED)}LL",
         "BLOCKED32": str(int(BLOCKED32)), "UNREACHED": f"{int(UNREACHED)}LL", "NO_PARENT": f"{NO_PARENT}LL"}


def cuda_defines(*names: str, **more: int) -> tuple[str, ...]:
    """NVRTC -D options giving a kernel the named constants of this module, and `more` (name=int) of its caller's."""
    spelled = {name: _IN_C[name] for name in names} | {name: f"({int(v)})" for name, v in more.items()}
    return tuple(f"-D{name}={value}" for name, value in spelled.items())
