"""Design rules: net classes from the .kicad_pro beside the board, and the board's own minimums.

Where a net class asks for less than the board's minimum, the minimum wins (KiCad's DRC checks both).
Supported project forms: KiCad 6 (`nets` lists inside each class), KiCad 7/8 (`netclass_assignments` as
"net": "class" and `netclass_patterns`), KiCad 9 (assignments as lists, `priority`, classes that omit keys).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from .model import Board
from .reader import BoardError


@dataclass(frozen=True)
class NetClassRules:
    name: str
    track_width: float
    clearance: float
    via_diameter: float
    via_drill: float


@dataclass
class DesignRules:
    classes: dict[str, NetClassRules]
    net_class: dict[int, str]            # net number -> class name (nets not listed use "Default")
    edge_clearance: float                # copper to board edge
    hole_to_hole: float
    hole_clearance: float                # copper to a hole of another net
    source: str                          # where the rules came from, for the report
    notes: list[str] = field(default_factory=list)

    def for_net(self, net: int) -> NetClassRules:
        return self.classes.get(self.net_class.get(net, "Default"), self.classes["Default"])

    @property
    def max_clearance(self) -> float:
        return max(c.clearance for c in self.classes.values())


KEYS = ("track_width", "clearance", "via_diameter", "via_drill")


def project_path(board_path: str | Path) -> Path:
    return Path(board_path).with_suffix(".kicad_pro")


def load_rules(board: Board, config) -> DesignRules:
    """Rules for `board` from its .kicad_pro if there is one, else the config's defaults (said in notes)."""
    pro = project_path(board.path)
    defaults = {"track_width": config.default_track_width, "clearance": config.default_clearance,
                "via_diameter": config.default_via_diameter, "via_drill": config.default_via_drill}
    if not pro.exists():
        rules = DesignRules({"Default": NetClassRules("Default", **defaults)}, {}, 0.0, 0.25, 0.0, "defaults",
                            [f"no {pro.name} beside the board: default rules (track {defaults['track_width']} mm, "
                             f"clearance {defaults['clearance']} mm, via {defaults['via_diameter']}/"
                             f"{defaults['via_drill']} mm)"])
        return rules
    try:
        data = json.loads(pro.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise BoardError(f"{pro}: cannot read the project file ({e})") from None
    except json.JSONDecodeError as e:
        raise BoardError(f"{pro}: the project file is not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(data, dict):
        raise BoardError(f"{pro}: the project file is not a JSON object")
    return rules_from_project(data, board, defaults, str(pro))


def number(value, fallback: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else fallback


def rules_from_project(data: dict, board: Board, defaults: dict, source: str) -> DesignRules:
    minimums = ((data.get("board") or {}).get("design_settings") or {}).get("rules") or {}
    min_track = number(minimums.get("min_track_width"), 0.0)
    min_clear = number(minimums.get("min_clearance"), 0.0)
    min_via = number(minimums.get("min_via_diameter"), 0.0)
    min_drill = number(minimums.get("min_through_hole_diameter"), 0.0)
    min_annulus = number(minimums.get("min_via_annular_width"), 0.0)
    settings = data.get("net_settings") or {}
    raw_classes = [c for c in settings.get("classes") or [] if isinstance(c, dict) and c.get("name")]
    default_raw = next((c for c in raw_classes if c["name"] == "Default"), {})
    base = {k: number(default_raw.get(k), defaults[k]) for k in KEYS}
    classes: dict[str, NetClassRules] = {}
    notes: list[str] = []
    for raw in raw_classes or [{"name": "Default"}]:
        values = {k: number(raw.get(k), base[k]) for k in KEYS}
        wanted = dict(values)
        values["track_width"] = max(values["track_width"], min_track)
        values["clearance"] = max(values["clearance"], min_clear)
        values["via_drill"] = max(values["via_drill"], min_drill)
        values["via_diameter"] = max(values["via_diameter"], min_via, values["via_drill"] + 2 * min_annulus)
        raised = [k for k in KEYS if values[k] > wanted[k] + 1e-9]
        if raised:
            notes.append(f"net class {raw['name']}: " + ", ".join(f"{k} raised to the board minimum {values[k]:g} mm"
                                                                  for k in raised))
        classes[raw["name"]] = NetClassRules(raw["name"], **values)
    if "Default" not in classes:
        classes["Default"] = NetClassRules("Default", **base)
    priority = {c["name"]: number(c.get("priority"), 0) for c in raw_classes}
    net_class = assign_classes(settings, board, classes, priority)
    return DesignRules(classes, net_class,
                       edge_clearance=number(minimums.get("min_copper_edge_clearance"), 0.0),
                       hole_to_hole=number(minimums.get("min_hole_to_hole"), 0.25),
                       hole_clearance=number(minimums.get("min_hole_clearance"), 0.0),
                       source=source, notes=notes)


def assign_classes(settings: dict, board: Board, classes: dict, priority: dict) -> dict[int, str]:
    by_name = {n.name: n.number for n in board.nets if n.number}
    chosen: dict[int, tuple] = {}        # net -> (priority, order, class)

    def offer(net_name: str, cls: str, order: int):
        if cls in classes and net_name in by_name:
            key = (priority.get(cls, 0), order, cls)
            num = by_name[net_name]
            if num not in chosen or key < chosen[num]:
                chosen[num] = key

    order = 0
    for raw in settings.get("classes") or []:           # KiCad 6: each class lists its nets
        for net_name in raw.get("nets") or [] if isinstance(raw, dict) else []:
            offer(net_name, raw.get("name"), order)
            order += 1
    assignments = settings.get("netclass_assignments") or {}
    if isinstance(assignments, dict):
        for net_name, value in assignments.items():      # KiCad 7/8: "net": "class"; KiCad 9: "net": [classes]
            for cls in value if isinstance(value, list) else [value]:
                offer(net_name, cls, order)
                order += 1
    patterns = [p for p in settings.get("netclass_patterns") or [] if isinstance(p, dict)]
    for p in patterns:
        pattern, cls = str(p.get("pattern", "")), p.get("netclass")
        for net_name in by_name:
            if fnmatchcase(net_name, pattern):
                offer(net_name, cls, order)
        order += 1
    return {num: key[2] for num, key in chosen.items()}
