"""Design rules: net classes from the .kicad_pro beside the board (or the one named), and the board's own minimums.

Where a net class asks for less than the board's minimum, the minimum wins (KiCad's DRC checks both).
Supported project forms: KiCad 6 (`nets` lists inside each class), KiCad 7/8 (`netclass_assignments` as
"net": "class" and `netclass_patterns`), KiCad 9 (assignments as lists, `priority`, classes that omit keys).
Custom rules in the .kicad_dru beside the board raise, per net, the clearance, width and via size of its class
where they may apply (custom_rules.py); a net so raised gets a class of its own, "<class> + rules".
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from . import custom_rules
from .model import Board
from .reader import BoardError


@dataclass(frozen=True)
class NetClassRules:
    name: str
    track_width: float
    clearance: float
    via_diameter: float
    via_drill: float


SPOKES_KEPT = 2      # KiCad's default of the fewest spokes a thermal relief needs (min_resolved_spokes)


@dataclass
class DesignRules:
    classes: dict[str, NetClassRules]
    net_class: dict[int, str]            # net number -> class name (nets not listed use "Default")
    edge_clearance: float                # copper to board edge
    hole_to_hole: float
    hole_clearance: float                # copper to a hole of another net
    source: str                          # where the rules came from, for the report
    notes: list[str] = field(default_factory=list)
    graphic_clearance: float = 0.0       # what custom rules ask between copper drawings and other copper
    min_track_width: float = 0.0         # the board's minimum (KiCad's DRC checks it, not the class widths)
    small_via: tuple[float, float] | None = None   # (diameter, drill) of the smallest via the board allows
    small_track: float = 0.0             # the narrowest of the project's predefined track widths (0: none)
    bare_vias: bool = False              # vias are not tented: each opens the solder mask
    bare_via_reach: float = 0.0          # how far a bare via's mask opening reaches past its copper
    mask_web: float = 0.0                # the narrowest solder-mask web between two openings
    min_spokes: int = SPOKES_KEPT        # the fewest spokes a thermal relief needs (0: KiCad does not check them)
    min_clearance: float = 0.0           # the board's minimum clearance, which no local override goes below

    def for_net(self, net: int) -> NetClassRules:
        return self.classes.get(self.net_class.get(net, "Default"), self.classes["Default"])

    def clearance_of(self, net: int, own: float | None = None) -> float:
        """An item's clearance on its own, where the other side is not known (the zone fill's knock-outs, stubs):
        the larger of its own (a pad's) and its class's, which is never less than KiCad asks of any pair."""
        return max(own or 0.0, self.for_net(net).clearance)

    def class_clearance(self, net: int, floor: float = 0.0) -> float:
        """The clearance the net's class asks, raised to what custom rules ask of the item beyond it (floor)."""
        return max(self.for_net(net).clearance, floor)

    def clearance_between(self, class_a: float, class_b: float, own_a: float | None = None,
                          own_b: float | None = None) -> float:
        """KiCad's clearance between two copper items of different nets, given their classes' clearances (custom
        rules included) and their own (a pad's, or its footprint's). An own clearance on either side overrides
        classes and custom rules: the larger of the two, no less than the board's minimum (DRC_ENGINE::EvalRules).
        A QFN's footprint may so ask 0.18 mm where the power class asks 0.23: its pins escape between each other."""
        if own_a or own_b:
            return max(own_a or 0.0, own_b or 0.0, self.min_clearance)
        return max(class_a, class_b)

    @property
    def max_clearance(self) -> float:
        return max(c.clearance for c in self.classes.values())


KEYS = ("track_width", "clearance", "via_diameter", "via_drill")


def project_path(board_path: str | Path) -> Path:
    return Path(board_path).with_suffix(".kicad_pro")


def custom_rules_path(board_path: str | Path) -> Path:
    return Path(board_path).with_suffix(".kicad_dru")


def read_beside(path: Path, what: str) -> str:
    """The text of a file beside the board (project, custom rules), or a BoardError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BoardError(f"{path}: cannot read {what} ({e})") from None


def load_rules(board: Board, config, project: str | Path | None = None) -> DesignRules:
    """Rules for `board` from its .kicad_pro if there is one, else the config's defaults (said in notes). project:
    the project file to read instead (a BoardError if it is missing); its .kicad_dru holds the custom rules, as KiCad
    names them after the project."""
    if project is not None and not Path(project).is_file():
        raise BoardError(f"project file {project} does not exist")
    pro = Path(project) if project is not None else project_path(board.path)
    defaults = {"track_width": config.default_track_width, "clearance": config.default_clearance,
                "via_diameter": config.default_via_diameter, "via_drill": config.default_via_drill}
    if not pro.exists():
        rules = DesignRules({"Default": NetClassRules("Default", **defaults)}, {}, 0.0, 0.25, 0.0, "defaults",
                            [f"no {pro.name} beside the board: default rules (track {defaults['track_width']} mm, "
                             f"clearance {defaults['clearance']} mm, via {defaults['via_diameter']}/"
                             f"{defaults['via_drill']} mm)"])
        return with_custom_rules(with_mask(rules, board), board, pro)
    text = read_beside(pro, "the project file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BoardError(f"{pro}: the project file is not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(data, dict):
        raise BoardError(f"{pro}: the project file is not a JSON object")
    return with_custom_rules(with_mask(rules_from_project(data, board, defaults, str(pro)), board), board, pro)


def with_mask(rules: DesignRules, board: Board) -> DesignRules:
    """The board's solder-mask facts that bound vias: a bare (untented) via opens the mask by the board's expansion,
    and two openings of different nets keep the minimum web apart."""
    rules.mask_web = board.mask_web
    rules.bare_vias = bool(board.bare_vias)
    rules.bare_via_reach = max(board.mask_margin, 0.0) if board.bare_vias else 0.0
    return rules


def with_custom_rules(rules: DesignRules, board: Board, project: Path) -> DesignRules:
    """The rules raised by the project's .kicad_dru, if there is one."""
    path = custom_rules_path(project)
    if not path.exists():
        return rules
    text = read_beside(path, "the custom rules")
    try:
        parsed = custom_rules.parse_rules(text)
    except custom_rules.RuleError as e:
        raise BoardError(f"{path}: malformed custom rules: {e}") from None
    rules.source += f" + {path.name}"
    skipped = custom_rules.not_applied(parsed)
    if skipped:
        rules.notes.append(f"{path.name}: rules the router does not meet: " + "; ".join(skipped))
    anything = {}
    floor = lambda kind, a=anything: custom_rules.applicable(parsed, kind, a) or 0.0
    rules.hole_clearance = max(rules.hole_clearance, floor("hole_clearance"))
    rules.hole_to_hole = max(rules.hole_to_hole, floor("hole_to_hole"))
    # a clearance asked of drawings is not one to the board edge: KiCad checks the edge against edge_clearance
    # rules only (k7_tillitis_tk1's "edge_clearance_inner" asks 0.45 mm of graphics, and KiCad passes its GND via
    # 0.34 mm from the edge)
    rules.edge_clearance = max(rules.edge_clearance, floor("edge_clearance"))
    rules.graphic_clearance = floor("clearance", {"Type": "Graphic"})
    if any({"via_diameter", "hole_size"} & set(r.constraints) for r in parsed):
        rules.small_via = None          # which nets may take a smaller via is the custom rules' to say
    if any("track_width" in r.constraints for r in parsed):
        rules.small_track = 0.0         # and a narrower track
    derived: dict[tuple, NetClassRules] = {}
    for net in board.nets:
        cls = rules.for_net(net.number)
        values = {k: getattr(cls, k) for k in KEYS}
        for kind in ("Track", "Via", "Pad"):
            a = {"NetName": net.name, "NetClass": cls.name, "Type": kind}
            values["clearance"] = max(values["clearance"], floor("clearance", a))
            if kind == "Track":
                values["track_width"] = max(values["track_width"], floor("track_width", a))
            if kind == "Via":
                values["via_diameter"] = max(values["via_diameter"], floor("via_diameter", a))
                values["via_drill"] = max(values["via_drill"], floor("hole_size", a))
        if values != {k: getattr(cls, k) for k in KEYS}:
            key = (cls.name, *values.values())
            if key not in derived:
                derived[key] = NetClassRules(f"{cls.name} + rules", **values)
                if len({k[0] for k in derived}) < len(derived):          # two variants of one class: number them
                    derived[key] = NetClassRules(f"{cls.name} + rules {len(derived)}", **values)
            rules.classes[derived[key].name] = derived[key]
            rules.net_class[net.number] = derived[key].name
    return rules


def smallest_via(data: dict, min_via: float, min_drill: float, min_annulus: float) -> tuple[float, float] | None:
    """The smallest of the project's predefined via sizes that the board's minimums allow, else the minimums
    themselves; None when the project sets no minimum via."""
    sizes = ((data.get("board") or {}).get("design_settings") or {}).get("via_dimensions") or []
    fits = sorted((number(v.get("diameter"), 0.0), number(v.get("drill"), 0.0)) for v in sizes if isinstance(v, dict))
    fits = [(d, h) for d, h in fits if h > 0 and d >= min_via and h >= min_drill and d - h >= 2 * min_annulus - 1e-9]
    if fits:
        return fits[0]
    if min_via > 0 and min_drill > 0:
        return max(min_via, min_drill + 2 * min_annulus), min_drill
    return None


def smallest_track(data: dict, min_track: float) -> float:
    """The narrowest of the project's predefined track widths that the board's minimum allows (0.0: none)."""
    widths = ((data.get("board") or {}).get("design_settings") or {}).get("track_widths") or []
    fits = [number(w, 0.0) for w in widths]
    return min((w for w in fits if w > 0 and w >= min_track), default=0.0)


def spoke_count(value, source: str, severities=None) -> int:
    """The board's minimum of thermal spokes (design_settings.rules.min_resolved_spokes): KiCad's default where it
    is absent, and 0 (not checked) where the project's rule_severities ignore starved_thermal, as KiCad's DRC then
    reports none (c2_hexpansion, c2_tildagon_top); a count that is no whole non-negative number is refused naming the
    file and the value."""
    if isinstance(severities, dict) and severities.get("starved_thermal") == "ignore":
        return 0
    if value is None:
        return SPOKES_KEPT
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        raise BoardError(f"{source}: board.design_settings.rules.min_resolved_spokes is {json.dumps(value)}: it must "
                         f"be a whole number of spokes, 0 or more")
    return int(value)


def number(value, fallback: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else fallback


def size(value, fallback: float, source: str, setting: str, positive: bool) -> float:
    """A size in mm from the project: the fallback where it is absent (missing or null, as KiCad 9 writes for keys
    a class leaves to Default); anything else that is no finite number, or not positive (negative, for a minimum),
    is refused naming the file, the setting and the value."""
    if value is None:
        return fallback
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise BoardError(f"{source}: {setting} is {json.dumps(value)}: it must be a "
                         f"{'positive' if positive else 'non-negative'} number of mm")
    return float(value)


# The board minimums read from the project's design_settings.rules, and whether KiCad allows them to be 0.
MINIMUMS = ("min_track_width", "min_clearance", "min_via_diameter", "min_through_hole_diameter",
            "min_via_annular_width", "min_copper_edge_clearance", "min_hole_to_hole", "min_hole_clearance")
# A net class's sizes must be positive to route with; its clearance may be 0.
POSITIVE = {"track_width": True, "clearance": False, "via_diameter": True, "via_drill": True}


def rules_from_project(data: dict, board: Board, defaults: dict, source: str) -> DesignRules:
    design = (data.get("board") or {}).get("design_settings") or {}
    raw_minimums = design.get("rules") or {}
    minimum = {k: size(raw_minimums.get(k), 0.25 if k == "min_hole_to_hole" else 0.0, source,
                       f"board.design_settings.rules.{k}", positive=False) for k in MINIMUMS}
    min_track, min_clear = minimum["min_track_width"], minimum["min_clearance"]
    min_via, min_drill = minimum["min_via_diameter"], minimum["min_through_hole_diameter"]
    min_annulus = minimum["min_via_annular_width"]
    settings = data.get("net_settings") or {}
    raw_classes = [c for c in settings.get("classes") or [] if isinstance(c, dict) and c.get("name")]
    default_raw = next((c for c in raw_classes if c["name"] == "Default"), {})
    where = lambda raw, k: f"net class {raw['name']!r}: {k}"
    base = {k: size(default_raw.get(k), defaults[k], source, where({"name": "Default"}, k), POSITIVE[k])
            for k in KEYS}
    classes: dict[str, NetClassRules] = {}
    notes: list[str] = []
    for raw in raw_classes or [{"name": "Default"}]:
        values = {k: size(raw.get(k), base[k], source, where(raw, k), POSITIVE[k]) for k in KEYS}
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
                       edge_clearance=minimum["min_copper_edge_clearance"],
                       hole_to_hole=minimum["min_hole_to_hole"],
                       hole_clearance=minimum["min_hole_clearance"],
                       source=source, notes=notes, min_track_width=min_track,
                       small_via=smallest_via(data, min_via, min_drill, min_annulus),
                       small_track=smallest_track(data, min_track),
                       min_spokes=spoke_count(raw_minimums.get("min_resolved_spokes"), source,
                                              design.get("rule_severities")),
                       min_clearance=min_clear)


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
