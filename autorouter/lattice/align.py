"""Where the lattice's lines fall: through the channels of the board's largest ball grid (a BGA), else on the axes of
the pins of its finest row of pads (a QFN, a QFP, a fine-pitch connector).

Between the balls of a 0.8 mm BGA there is room for one narrow track, in a band a few hundredths of a millimetre
wide around the channel's centre line, and a dog-bone via fits only near the centre of four balls. A lattice laid
without regard to the balls puts a line in that band by chance. Where the narrowest track needs it, the pitch is made
to divide the ball pitch and the origin put on a channel, so that every channel between the balls, and every centre
of four of them, has its nodes.

A track leaving a 0.4 mm QFN's pin straight out keeps its clearance from the pins beside it only near the pin's axis
(0.073 mm either side for 0.2 mm tracks at 0.127 mm clearance); a coarser lattice has a line there by chance, and the
pin's way out jogs across its neighbours'. Asked for (pipeline's pins' lattice), the pitch is made to divide the pin
pitch and the origin put on a pin's axis, as for the balls.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

MIN_BALLS = 16          # pads of one footprint, on one layer, for a ball grid
MIN_LINES = 4           # distinct rows and columns of balls
MIN_FILL = 0.5          # of the grid's places, the share that holds a ball (a QFN's ring of pads holds fewer)
MIN_PITCH = 0.3         # mm: a finer spacing is no ball grid (pads of one row offset a little)
TOLERANCE = 1e-3        # mm: pad centres this near a grid line are on it
MAX_REFINE = 1.25       # the most the pitch may shrink by (nodes grow by its square)
MIN_ROW = 4             # pads in a row at one spacing, for a row of pins
MAX_ROW_PITCH = 0.65    # mm: a coarser row leaves room round its pins wherever the lines fall
# the most the pitch may shrink by for a row: k8_atomic14_usb_tester's USB-C receptacles (0.5 mm) take 0.2255 ->
# 0.1667 mm (1.35), on which it routes whole in 11 iterations, where its own pitch took eight attempts
# (benchmarks/CORPUS.md, 2026-11-29)
MAX_ROW_REFINE = 1.4


@dataclass(frozen=True)
class BallGrid:
    x: float            # a channel crossing: the centre of four balls
    y: float
    pitch: float        # ball pitch, the same along x and y
    ball: float         # the balls' width (the median: a few larger pads shut a few channels only)

    def needs_lines(self, width: float, clearance: float, pitch: float) -> bool:
        """Whether a lattice must be laid on the channels for a track this wide to pass between two balls: the band
        its centre line may take is open, but narrower than the pitch (a wider band holds a line by chance; a shut
        one none at all)."""
        band = self.pitch - self.ball - width - 2 * clearance
        return 0 < band < pitch


def ball_grid(pads) -> BallGrid | None:
    """The ball grid of the footprint with the most surface pads on a square grid, aligned with the board's axes;
    None when the board has none."""
    best, count = None, 0
    for balls in surface_parts(pads):
        if len(balls) < max(MIN_BALLS, count + 1):
            continue
        xy = np.array([(p.x, p.y) for p in balls])
        pitch = grid_pitch(xy[:, 0]), grid_pitch(xy[:, 1])
        if not (pitch[0] and pitch[1] and abs(pitch[0] - pitch[1]) < TOLERANCE):
            continue
        places = np.prod([np.ptp(xy[:, k]) / pitch[k] + 1 for k in (0, 1)])
        if len(balls) >= MIN_FILL * places:
            ball = np.median([max(b[2] - b[0], b[3] - b[1]) for b in (p.outline.bounds for p in balls)])
            best = BallGrid(float(xy[:, 0].min() + pitch[0] / 2), float(xy[:, 1].min() + pitch[1] / 2), pitch[0],
                            float(ball))
            count = len(balls)
    return best


def surface_parts(pads) -> list[list]:
    """The surface pads of each footprint, per layer."""
    by_part: dict[tuple[str, tuple], list] = defaultdict(list)
    for p in pads:
        if not p.drill and len(p.layers) == 1:
            by_part[(p.footprint, p.layers)].append(p)
    return list(by_part.values())


def grid_pitch(values: np.ndarray) -> float | None:
    """The spacing of values that all lie on lines at one spacing (MIN_LINES of them or more), else None."""
    lines = np.unique(np.round(values / TOLERANCE).astype(np.int64)) * TOLERANCE
    if lines.size < MIN_LINES:
        return None
    pitch = round(float(np.diff(lines).min()), 4)
    steps = (lines - lines[0]) / pitch
    if pitch < MIN_PITCH or np.abs(steps - np.round(steps)).max() * pitch > TOLERANCE:
        return None
    return pitch


def aligned_pitch(pitch: float, spacing: float, most: float = MAX_REFINE) -> float | None:
    """The largest pitch no larger than `pitch` that divides `spacing` (a ball or pin pitch); None where that would
    shrink it by more than `most` (a finer lattice is slower)."""
    finer = spacing / math.ceil(spacing / pitch - 1e-9)
    return finer if finer * most >= pitch else None


@dataclass(frozen=True)
class PinRow:
    x: float            # a pin's axes: the x of a pin of a row along x, the y of one of a row along y
    y: float
    pitch: float        # pin pitch
    pad: float          # the pads' width across their row (the median)

    def needs_lines(self, width: float, clearance: float, pitch: float) -> bool:
        """Whether a lattice must be laid on the pins' axes for a track this wide to leave each pin straight out: its
        centre line may stray from the axis by pitch - pad / 2 - width / 2 - clearance before it comes too near the
        pads beside it, and that band is open but narrower than the lattice's pitch."""
        band = 2 * (self.pitch - self.pad / 2 - width / 2 - clearance)
        return 0 < band < pitch


def pad_rows(pads, along: int) -> list[list]:
    """The pads on one line across `along` (0: side by side in x, at one y; 1: in y, at one x), MIN_ROW or more of
    them, each line in order along it."""
    lines: dict[int, list] = defaultdict(list)
    for p in pads:
        lines[round((p.y, p.x)[along] / TOLERANCE)].append(p)
    return [sorted(row, key=lambda p: (p.x, p.y)[along]) for row in lines.values() if len(row) >= MIN_ROW]


def pin_row(pads) -> PinRow | None:
    """The finest row of surface pads at one spacing (MIN_ROW of them or more, no coarser than MAX_ROW_PITCH), of
    the footprint with the most pads at that spacing: its pitch and pad width, and its pins' axes (those of its
    rows along the other direction too, where it has some: a QFN's four sides share one grid); None where the board
    has none."""
    best, key = None, None
    for pins in surface_parts(pads):
        if len(pins) < MIN_ROW:
            continue
        found = []
        for along in (0, 1):            # rows along x (pins side by side in x, one y), then along y
            for row in pad_rows(pins, along):
                at = np.array([(p.x, p.y)[along] for p in row])
                pitch = grid_pitch(at)
                if pitch is not None and pitch <= MAX_ROW_PITCH:
                    widths = [(b[2] - b[0], b[3] - b[1])[along] for b in (p.outline.bounds for p in row)]
                    found.append((pitch, along, float(at.min()), len(row), float(np.median(widths))))
        if not found:
            continue
        pitch = min(f[0] for f in found)
        rows = [f for f in found if abs(f[0] - pitch) < TOLERANCE]
        count = sum(f[3] for f in rows)
        if key is not None and (pitch, -count) >= key:
            continue
        x = next((f[2] for f in rows if f[1] == 0), None)
        y = next((f[2] for f in rows if f[1] == 1), None)
        first = pins[0]
        best = PinRow(first.x if x is None else x, first.y if y is None else y, pitch,
                      float(np.median([f[4] for f in rows])))
        key = (pitch, -count)
    return best

