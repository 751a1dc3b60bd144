"""Every tunable of the router, in one frozen dataclass.

config.yaml (at the top of the repository) documents each field; CLI flags and the KiCad plugin override it. The
algorithm never reads the environment: whatever it needs arrives in a RouterConfig.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from pathlib import Path


class ConfigError(ValueError):
    """A configuration value is unknown or out of range (message names the key and the allowed range)."""


@dataclass(frozen=True)
class RouterConfig:
    # Lattice pitch in mm; 0 picks it from the design rules (half the sum of the narrowest track and the largest
    # clearance).
    pitch: float = 0.0
    # Lay the automatic lattice on the axes of the pins of the board's finest row of pads (a 0.4-0.5 mm QFN or
    # connector), its pitch made to divide theirs, where a track leaving a pin straight needs a line in a band
    # narrower than the pitch. Off for the first attempt: it is the first retry where joins are missing
    # (benchmarks/CORPUS.md, 2026-11-29).
    pin_lattice: bool = False
    # Upper bound on lattice nodes (layers x rows x cols); the automatic pitch grows until the lattice fits.
    max_lattice_nodes: int = 6_000_000
    # Smallest automatic pitch in mm (finer costs time without helping on the boards we know).
    min_pitch: float = 0.1
    # Extra margin in mm added to every clearance, so rounding never lands a track exactly on the limit.
    clearance_margin: float = 0.001
    # Margin in mm around a connection's pins that bounds its region of interest (ROI); larger finds detours.
    roi_margin: float = 4.0
    # Growth of a net's ROI margin after each PathFinder iteration that leaves it in conflict (1: never grows).
    roi_growth: float = 1.5
    # The most an ROI margin grows to, in mm (0: the whole board). Wider searches cost time that the boards bound by
    # time want for iterations (benchmarks/CORPUS.md, 2026-11-26).
    roi_margin_max: float = 16.0
    # Most nets searched together in one engine call.
    batch_size: int = 16
    # Nets whose regions overlap may share a batch, each searched against the prices at the batch's start (the others'
    # routes of the last iteration); off: a batch holds only nets whose regions do not meet (as one after another).
    batch_overlap: bool = False
    # A net of at least this many connections is routed again only where it meets other nets: its branches near a
    # conflict are ripped up and joined again, the rest stay (0: every net is ripped up whole). Off: fewer searches,
    # but near misses lost (benchmarks/CORPUS.md, 2026-11-28, late night).
    partial_reroute_from: int = 0
    # Track and via sizes: "class" (each net class's, smaller only where a pad or congestion needs it), "compact"
    # (classes no wider than Default at the board's minimum width and smallest via, wider ones at their own), or
    # "smallest" (every net at the board's minimums: the most room, the thinnest copper).
    sizes: str = "compact"
    # Let a pad that a zone's fill does not reach join the fill where it is nearest (a via into a plane) instead of
    # a track to another pad of the net. Experimental: on the corpus it left track ends in fill that other nets'
    # tracks later cut away, and routed fewer connections on some 2-layer boards.
    join_fills: bool = False
    # Pins of fine-pitch rows (0.5 mm and finer) led straight out this far past their pads' ends, side by side,
    # before routing, as a human escapes a QFN (0: none). What routing does not reach of them is cut off.
    # At 0.5 mm it joined more on the boards short of joins and fewer on some that were whole (benchmarks/CORPUS.md,
    # 2026-12-07, fifth session): so it is off at first and the last retry (pipeline.RETRIES).
    escape_length: float = 0.0
    # Corners cut at 45 degrees, this far along each leg in lattice pitches (0: square corners; 0.5, the most, turns a
    # staircase of single steps into one diagonal and shortens tracks by a few percent).
    chamfer: float = 0.5
    # Cost of a via, in lattice steps; higher gives fewer vias and longer tracks.
    via_cost: float = 8.0
    # Cost multiplier for a step against a layer's preferred direction (F.Cu horizontal, then alternating).
    wrong_way_cost: float = 1.5
    # Near-far bucket width in lattice steps: larger means fewer threshold advances, more re-relaxation.
    delta: float = 8.0
    # How far from a pad, in lattice steps, portal nodes are looked for.
    portal_radius: int = 4
    # PathFinder: iterations before giving up on shared resources.
    max_iterations: int = 100
    # PathFinder: give up sooner when this many iterations in a row did not lower the count of shared nodes.
    stall_iterations: int = 14
    # PathFinder: once this many iterations in a row did not lower the count of shared nodes, a path's end also pays
    # for the other nets' copper its pad stub's cover would hold (0: never).
    stub_prices_after: int = 0
    # PathFinder: present-congestion factor of the first iteration, and its growth per iteration.
    pres_fac_initial: float = 0.5
    pres_fac_mult: float = 1.6
    # PathFinder: the present-congestion factor stops growing here; history then does the rest.
    pres_fac_max: float = 1000.0
    # PathFinder: history cost added per iteration to every overused node.
    hist_fac: float = 0.4
    # PathFinder: where connections are still missing and the time left allows, negotiation starts over with this
    # history factor, and the outcome that joins more is kept (0: never).
    hist_fac_again: float = 1.0
    # Where joins are still missing once finished, or thermal reliefs starved, and the time limit allows, routing
    # starts over up to this many times, each with other costs (pipeline.RETRIES), and the attempt that joins the
    # most, then starves the fewest reliefs, is kept (0: never).
    retries: int = 9
    # Attempts routed side by side, each in a process of its own: the first this many of the user's settings and the
    # retries', each with the whole time limit, and the best kept (jobs.py); 1: one after another, as time allows.
    jobs: int = 1
    # Stop routing after this many seconds and write the best result (0: no limit).
    time_limit: float = 0.0
    # Search engine: auto (GPU when CuPy and a device are present), cpu or gpu.
    backend: str = "auto"
    # Design rules used when the board has no .kicad_pro (mm).
    default_track_width: float = 0.25
    default_clearance: float = 0.2
    default_via_diameter: float = 0.6
    default_via_drill: float = 0.3

    def __post_init__(self):
        checks = {
            "pitch": (self.pitch == 0 or 0.02 <= self.pitch <= 5, "0 (auto) or 0.02 .. 5 mm"),
            "max_lattice_nodes": (10_000 <= self.max_lattice_nodes <= 2_000_000_000, "10000 .. 2e9"),
            "min_pitch": (0.02 <= self.min_pitch <= 5, "0.02 .. 5 mm"),
            "clearance_margin": (0 <= self.clearance_margin <= 0.5, "0 .. 0.5 mm"),
            "roi_margin": (0 <= self.roi_margin <= 1000, "0 .. 1000 mm"),
            "roi_growth": (1 <= self.roi_growth <= 10, "1 .. 10"),
            "roi_margin_max": (0 <= self.roi_margin_max <= 1000, "0 .. 1000 mm"),
            "batch_size": (1 <= self.batch_size <= 4096, "1 .. 4096"),
            "partial_reroute_from": (0 <= self.partial_reroute_from <= 1_000_000, "0 .. 1000000"),
            "escape_length": (0 <= self.escape_length <= 10, "0 .. 10 mm"),
            "chamfer": (0 <= self.chamfer <= 0.5, "0 .. 0.5 pitches"),
            "via_cost": (0 < self.via_cost <= 1000, "> 0 and <= 1000"),
            "wrong_way_cost": (1 <= self.wrong_way_cost <= 100, "1 .. 100"),
            "delta": (0 < self.delta <= 1e6, "> 0"),
            "portal_radius": (1 <= self.portal_radius <= 50, "1 .. 50"),
            "max_iterations": (1 <= self.max_iterations <= 10_000, "1 .. 10000"),
            "stall_iterations": (1 <= self.stall_iterations <= 10_000, "1 .. 10000"),
            "stub_prices_after": (0 <= self.stub_prices_after <= 10_000, "0 .. 10000"),
            "pres_fac_initial": (0 <= self.pres_fac_initial <= 1e6, "0 .. 1e6"),
            "pres_fac_mult": (1 <= self.pres_fac_mult <= 100, "1 .. 100"),
            "pres_fac_max": (self.pres_fac_initial <= self.pres_fac_max <= 1e9, ">= pres_fac_initial, <= 1e9"),
            "hist_fac": (0 <= self.hist_fac <= 1e6, "0 .. 1e6"),
            "hist_fac_again": (0 <= self.hist_fac_again <= 1e6, "0 .. 1e6"),
            "retries": (0 <= self.retries <= 10, "0 .. 10"),
            "jobs": (1 <= self.jobs <= 64, "1 .. 64"),
            "time_limit": (self.time_limit >= 0, ">= 0 seconds"),
            "backend": (self.backend in ("auto", "cpu", "gpu"), "auto, cpu or gpu"),
            "sizes": (self.sizes in ("class", "compact", "smallest"), "class, compact or smallest"),
            "default_track_width": (0 < self.default_track_width <= 10, "> 0 and <= 10 mm"),
            "default_clearance": (0 < self.default_clearance <= 10, "> 0 and <= 10 mm"),
            "default_via_diameter": (0 < self.default_via_diameter <= 10, "> 0 and <= 10 mm"),
            "default_via_drill": (0 < self.default_via_drill < self.default_via_diameter,
                                  "> 0 and < default_via_diameter"),
        }
        for key, (ok, allowed) in checks.items():
            if not ok:
                raise ConfigError(f"config value {key}={getattr(self, key)!r} is out of range (allowed: {allowed})")

    def replace(self, **changes) -> "RouterConfig":
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


def load_config(path: str | Path | None = None, **overrides) -> RouterConfig:
    """Defaults, then the YAML file (if any), then the non-None overrides."""
    values: dict = {}
    if path is not None:
        import yaml

        try:
            data = yaml.safe_load(Path(path).read_text())
        except OSError as e:
            raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {path} is not valid YAML: {str(e).splitlines()[0]}") from None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must be a mapping of key: value")
        values.update(data)
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name: f for f in fields(RouterConfig)}
    typed = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown config key {key!r} (known: {', '.join(known)})")
        kind = type(getattr(RouterConfig(), key))
        if (kind is bool) != isinstance(value, bool):          # yes/no only where a switch is asked, and only there
            raise ConfigError(f"config value {key}={value!r} is not a {'yes/no' if kind is bool else kind.__name__}")
        try:
            typed[key] = value if kind is bool else float(value) if kind is float else int(value) if kind is int \
                else str(value)
        except (TypeError, ValueError):
            raise ConfigError(f"config value {key}={value!r} is not a {kind.__name__}") from None
        if kind is int and isinstance(value, float) and value != int(value):
            raise ConfigError(f"config value {key}={value!r} must be a whole number")
    return RouterConfig(**typed)
