"""Which lists each item of a .kicad_pcb may hold, as KiCad's own board parser accepts them.

kiutils skips what it does not know, so a line moved into the wrong item (a pad's roundrect_rratio in a footprint
property, a layer inside the general section) would pass it; KiCad refuses such a file, and so must we, or we would
route a board the user cannot open. The tables are written from the token lists of KiCad's s-expression parser
(pcb_io_kicad_sexpr_parser.cpp), which reads every board format from KiCad 6 to 10, so no valid board is refused.
Items the parser reads leniently (stackups, plot parameters, generated items, embedded files) are not checked.
"""
from __future__ import annotations

TOP = {"version", "host", "generator", "generator_version", "general", "paper", "page", "title_block", "layers",
       "setup", "property", "variants", "net", "net_class", "gr_arc", "gr_curve", "gr_line", "gr_poly", "gr_circle",
       "gr_rect", "image", "barcode", "gr_text", "gr_text_box", "table", "dimension", "module", "footprint",
       "segment", "arc", "group", "generated", "via", "zone", "target", "point", "embedded_fonts", "embedded_files"}

SETUP = {"stackup", "last_trace_width", "user_trace_width", "trace_clearance", "zone_clearance", "zone_45_only",
         "clearance_min", "trace_min", "via_size", "via_drill", "via_min_annulus", "via_min_size", "through_hole_min",
         "via_min_drill", "hole_to_hole_min", "user_via", "uvia_size", "uvia_drill", "uvias_allowed",
         "blind_buried_vias_allowed", "uvia_min_size", "uvia_min_drill", "user_diff_pair", "segment_width",
         "edge_width", "mod_edge_width", "pcb_text_width", "mod_text_width", "pcb_text_size", "mod_text_size",
         "defaults", "pad_size", "pad_drill", "pad_to_mask_clearance", "solder_mask_min_width",
         "pad_to_paste_clearance", "pad_to_paste_clearance_ratio", "allow_soldermask_bridges_in_footprints",
         "tenting", "covering", "plugging", "capping", "filling", "aux_axis_origin", "grid_origin",
         "visible_elements", "max_error", "filled_areas_thickness", "pcbplotparams", "zone_defaults"}
TEXT_DIMS = {"size", "thickness", "italic", "keep_upright"}
DEFAULTS = {"edge_clearance", "copper_line_width", "copper_text_dims", "courtyard_line_width", "edge_cuts_line_width",
            "silk_line_width", "silk_text_dims", "fab_layers_line_width", "fab_layers_text_dims",
            "other_layers_line_width", "other_layers_text_dims", "dimension_units", "dimension_precision"}

# Drawn shapes: their geometry comes first, in this order; then any of SHAPE_TAIL.
SHAPE_LEAD = {"arc": ("start", "mid", "end"), "circle": ("center", "end"), "curve": ("pts",), "rect": ("start", "end"),
              "bbox": ("start", "end"), "line": ("start", "end"), "vector": ("start", "end"), "poly": ("pts",)}
SHAPES = {f"{prefix}_{kind}": lead for kind, lead in SHAPE_LEAD.items() for prefix in ("gr", "fp")
          if prefix == "gr" or kind not in ("bbox", "vector")}
SHAPE_TAIL = {"angle", "layer", "layers", "solder_mask_margin", "width", "radius", "stroke", "tstamp", "uuid", "fill",
              "status", "locked", "net"}

TEXT = {"at", "layer", "tstamp", "uuid", "hide", "locked", "unlocked", "effects", "render_cache"}
TEXTBOX = {"locked", "start", "end", "pts", "angle", "stroke", "border", "margins", "layer", "knockout", "span",
           "tstamp", "uuid", "effects", "render_cache"}
TRACK = {"start", "end", "width", "layer", "layers", "solder_mask_margin", "net", "tstamp", "uuid", "status", "locked"}
VIA = {"blind", "buried", "micro", "at", "size", "drill", "layers", "net", "remove_unused_layers", "keep_end_layers",
       "start_end_only", "zone_layer_connections", "padstack", "teardrops", "tenting", "covering", "plugging",
       "filling", "capping", "tstamp", "uuid", "status", "locked", "free", "backdrill", "tertiary_drill",
       "front_post_machining", "back_post_machining"}
FOOTPRINT = {"version", "generator", "generator_version", "locked", "placed", "layer", "stackup", "tedit", "tstamp",
             "uuid", "at", "descr", "tags", "property", "path", "sheetname", "sheetfile", "units", "autoplace_cost90",
             "autoplace_cost180", "private_layers", "net_tie_pad_groups", "duplicate_pad_numbers_are_jumpers",
             "jumper_pad_groups", "solder_mask_margin", "solder_paste_margin", "solder_paste_ratio",
             "solder_paste_margin_ratio", "clearance", "zone_connect", "thermal_width", "thermal_gap", "attr",
             "fp_text", "fp_text_box", "table", "image", "barcode", "dimension", "pad", "model", "zone", "group",
             "point", "embedded_fonts", "embedded_files", "component_classes", "variant",
             *(h for h in SHAPES if h.startswith("fp_"))}
PAD = {"size", "at", "rect_delta", "drill", "backdrill", "tertiary_drill", "layers", "net", "pinfunction", "pintype",
       "die_length", "die_delay", "solder_mask_margin", "solder_paste_margin", "solder_paste_margin_ratio",
       "clearance", "teardrops", "zone_connect", "thermal_width", "thermal_bridge_width", "thermal_bridge_angle",
       "thermal_gap", "roundrect_rratio", "chamfer_ratio", "chamfer", "property", "options", "padstack",
       "primitives", "remove_unused_layers", "keep_end_layers", "tenting", "zone_layer_connections", "locked",
       "tstamp", "uuid", "front_post_machining", "back_post_machining"}
ZONE = {"net", "net_name", "layer", "layers", "property", "tstamp", "uuid", "hatch", "priority", "connect_pads",
        "min_thickness", "filled_areas_thickness", "fill", "placement", "keepout", "polygon", "filled_polygon",
        "fill_segments", "name", "attr", "locked"}
ZONE_FILL = {"mode", "hatch_thickness", "hatch_gap", "hatch_orientation", "hatch_smoothing_level",
             "hatch_smoothing_value", "hatch_border_algorithm", "hatch_min_hole_area", "arc_segments", "thermal_gap",
             "thermal_bridge_width", "smoothing", "radius", "island_removal_mode", "island_area_min"}
TEARDROPS = {"enabled", "allow_two_segments", "prefer_zone_connections", "best_length_ratio", "max_length",
             "best_width_ratio", "max_width", "curve_points", "curved_edges", "filter_ratio"}

# Items that hold no list at all: coordinates, names, flags and single values.
LEAVES = {"at", "xy", "xyz", "start", "mid", "end", "center", "size", "width", "uuid", "tstamp", "id", "layer",
          "layers", "net", "net_name", "descr", "tags", "path", "sheetname", "sheetfile", "roundrect_rratio",
          "chamfer_ratio", "chamfer", "rect_delta", "angle", "hide", "locked", "justify", "face", "thickness",
          "version", "generator", "generator_version", "paper", "page", "status", "pinfunction", "pintype",
          "die_length", "solder_mask_margin", "solder_paste_margin", "solder_paste_margin_ratio", "clearance",
          "zone_connect", "thermal_width", "thermal_gap", "thermal_bridge_width", "thermal_bridge_angle", "priority",
          "min_thickness", "hatch", "name", "members", "lib_id", "radius", "type", "color", "mode", "data",
          "line_spacing", "bold", "italic", "knockout", "margins", "span"}

CHILDREN: dict[str, set[str]] = {
    **{head: set() for head in LEAVES},
    "kicad_pcb": TOP, "setup": SETUP, "defaults": DEFAULTS, "zone_defaults": {"property"},
    **{f"{kind}_text_dims": TEXT_DIMS for kind in ("copper", "silk", "fab_layers", "other_layers")},
    "title_block": {"title", "date", "rev", "company", "comment"},
    "net_class": {"clearance", "trace_width", "via_dia", "via_drill", "uvia_dia", "uvia_drill", "diff_pair_width",
                  "diff_pair_gap", "add_net"},
    **{head: SHAPE_TAIL | set(lead) for head, lead in SHAPES.items()},
    "gr_text": TEXT, "fp_text": TEXT, "gr_text_box": TEXTBOX, "fp_text_box": TEXTBOX, "table_cell": TEXTBOX,
    "table": {"column_count", "uuid", "locked", "angle", "layer", "column_widths", "row_heights", "cells", "border",
              "separators"},
    "cells": {"table_cell"}, "separators": {"rows", "cols", "stroke"},
    "image": {"at", "layer", "scale", "data", "locked", "uuid"},
    "effects": {"font", "justify", "hide"},
    "font": {"face", "size", "line_spacing", "thickness", "bold", "italic"},
    "stroke": {"width", "type", "color"},
    "render_cache": {"polygon"},
    "pts": {"xy", "arc"},
    "segment": TRACK, "arc": TRACK | {"mid"}, "via": VIA,
    "footprint": FOOTPRINT, "module": FOOTPRINT, "attr": {"teardrop"}, "teardrop": {"type"},
    "model": {"at", "hide", "opacity", "offset", "scale", "rotate"},
    "offset": {"xyz"}, "scale": {"xyz"}, "rotate": {"xyz"},
    "pad": PAD, "drill": {"offset", "oval"}, "options": {"anchor", "clearance"}, "padstack": {"mode", "layer"},
    "primitives": {h for h in SHAPES if h.startswith("gr_")},
    "backdrill": {"size", "layers"}, "tertiary_drill": {"size", "layers"},
    "front_post_machining": {"size", "depth", "angle"}, "back_post_machining": {"size", "depth", "angle"},
    "teardrops": TEARDROPS, "tenting": {"front", "back"}, "covering": {"front", "back"}, "plugging": {"front", "back"},
    "group": {"id", "uuid", "lib_id", "locked", "members"},
    "zone": ZONE, "fill": ZONE_FILL, "connect_pads": {"clearance"},
    "keepout": {"tracks", "vias", "copperpour", "pads", "footprints"},
    "placement": {"sheetname", "component_class", "group", "enabled"},
    "polygon": {"pts"}, "filled_polygon": {"layer", "island", "pts"}, "fill_segments": {"pts"},
}

# How many numbers a part holds: (fewest, most), by name and, where one name means two things, by parent too.
COUNT = {"xy": (2, 2), "xyz": (3, 3), "start": (2, 2), "mid": (2, 2), "end": (2, 2), "center": (2, 2),
         "size": (2, 2), "at": (2, 3), "width": (1, 1), "thickness": (1, 1)}
# a pad's or a zone's settings of one number: KiCad refuses the board where one is empty
COUNT.update({head: (1, 1) for head in (
    "roundrect_rratio", "chamfer_ratio", "solder_mask_margin", "solder_paste_margin", "solder_paste_margin_ratio",
    "clearance", "zone_connect", "thermal_width", "thermal_gap", "thermal_bridge_width", "thermal_bridge_angle",
    "die_length")})
# ... and the board's settings of one number (the fuzz test's `(pad_to_mask_clearance )`: KiCad "expecting number")
COUNT.update({head: (1, 1) for head in (
    "pad_to_mask_clearance", "solder_mask_min_width", "pad_to_paste_clearance", "pad_to_paste_clearance_ratio",
    "trace_clearance", "zone_clearance", "clearance_min", "trace_min", "via_min_annulus", "via_min_size",
    "through_hole_min", "via_min_drill", "hole_to_hole_min", "max_error")})
SINGLE_SIZE = {"via", "backdrill", "tertiary_drill", "front_post_machining", "back_post_machining"}

# Parts an item has at most once: with a second one (KiCad keeps the last, kiutils may keep the first) we would route
# a board other than the one KiCad shows.
SINGULAR = ("at", "size", "drill", "layer", "layers", "net", "start", "mid", "end", "center", "width", "uuid", "tstamp")
MANY_OF = {"kicad_pcb", "padstack"}          # the net table; a padstack's (layer ...) entries

# The parts an item cannot lack (kiutils would leave them out and read on).
REQUIRED = {"segment": {"start", "end", "width", "net"}, "arc": {"start", "mid", "end", "width", "layer", "net"},
            "via": {"at", "size", "drill", "layers", "net"}, "pad": {"at", "size", "layers"},
            "footprint": {"at", "layer"}, "fp_text": {"at", "layer", "effects"}, "gr_text": {"at", "layer", "effects"},
            "stroke": {"width", "type"}, "effects": {"font"}, "font": {"size"},
            "polygon": {"pts"}, "filled_polygon": {"pts"}}

# Where one name means different items, the parent decides; None: read leniently by KiCad, not checked.
IN_CONTEXT: dict[tuple[str, str], set[str] | None] = {
    ("kicad_pcb", "layers"): None, ("padstack", "layer"): None, ("stackup", "layer"): None,
    ("kicad_pcb", "property"): set(), ("pad", "property"): set(),
    ("footprint", "property"): TEXT, ("module", "property"): TEXT,
    ("zone", "property"): {"layer", "hatch_position"}, ("zone_defaults", "property"): {"layer", "hatch_position"},
    ("pts", "arc"): {"start", "mid", "end"},
    ("model", "at"): {"xyz"},
    ("table", "border"): {"external", "header", "stroke"},
    **{(shape, "fill"): set() for shape in SHAPES},
}
# The general section skips what it does not know, as long as it holds no list.
ONLY_LEAVES_BELOW = {"general"}
# Read by their own lenient parsers, or holding arbitrary named properties: nothing below them is checked.
LENIENT = {"stackup", "pcbplotparams", "dimension", "variants", "variant", "units",
           "component_classes", "barcode", "target", "point"}


# Items whose values KiCad reads as numbers (as parseInt, parseDouble or parseBoardUnits do): every bare value must
# be a finite number, or one of the few words that item also takes.
NUMERIC = {
    "at", "xy", "xyz", "start", "mid", "end", "center", "size", "width", "thickness", "angle", "radius", "offset",
    "depth", "margins", "span", "column_count", "column_widths", "row_heights", "opacity", "drill", "hatch",
    # setup, its defaults and the legacy net classes
    "last_trace_width", "user_trace_width", "trace_clearance", "zone_clearance", "clearance_min", "trace_min",
    "via_size", "via_drill", "via_min_annulus", "via_min_size", "through_hole_min", "via_min_drill",
    "hole_to_hole_min", "user_via", "uvia_size", "uvia_drill", "uvia_min_size", "uvia_min_drill", "user_diff_pair",
    "segment_width", "edge_width", "mod_edge_width", "pcb_text_width", "mod_text_width", "pcb_text_size",
    "mod_text_size", "pad_size", "pad_drill", "pad_to_mask_clearance", "solder_mask_min_width",
    "pad_to_paste_clearance", "pad_to_paste_clearance_ratio", "aux_axis_origin", "grid_origin", "max_error",
    "edge_clearance", "copper_line_width", "courtyard_line_width", "edge_cuts_line_width", "silk_line_width",
    "fab_layers_line_width", "other_layers_line_width", "dimension_units", "dimension_precision",
    "trace_width", "via_dia", "uvia_dia", "diff_pair_width", "diff_pair_gap", "epsilon_r", "loss_tangent",
    # footprints, pads and zones
    "autoplace_cost90", "autoplace_cost180", "solder_paste_ratio", "solder_paste_margin_ratio", "rect_delta",
    "die_length", "solder_mask_margin", "solder_paste_margin", "clearance", "zone_connect", "thermal_width",
    "thermal_bridge_width", "thermal_bridge_angle", "thermal_gap", "roundrect_rratio", "chamfer_ratio", "priority",
    "min_thickness", "hatch_thickness", "hatch_gap", "hatch_orientation", "hatch_smoothing_level",
    "hatch_smoothing_value", "hatch_min_hole_area", "arc_segments", "island_removal_mode", "island_area_min",
    "best_length_ratio", "max_length", "best_width_ratio", "max_width", "curve_points", "filter_ratio",
    # plot parameters
    "hpglpennumber", "hpglpenspeed", "hpglpendiameter", "linewidth", "dashed_line_dash_ratio",
    "dashed_line_gap_ratio", "svgprecision", "outputformat", "scaleselection", "drillshape", "gerberprecision",
}
WORDS = {"at": {"unlocked"}, "drill": {"oval"}, "hatch": {"none", "edge", "full"}, "thickness": {"locked"}}
# Items KiCad reads as one keyword of a few: any other word and it refuses the file
CHOICES = {("stroke", "type"): {"solid", "dash", "dot", "dash_dot", "dash_dot_dot", "default"}}
NOT_NUMERIC_IN = {("options", "clearance")}          # a custom pad's (clearance outline)
NUMERIC_IN = {("pcbplotparams", "mode")}             # the plot mode, a number; a padstack's (mode custom) is a word
# Not read by KiCad's board parser as items at all (named properties, embedded data): nothing below is checked.
UNREAD = {"generated", "embedded_files"}


def holds_numbers(parent: str | None, head: str | None) -> bool:
    return (head in NUMERIC or (parent, head) in NUMERIC_IN) and (parent, head) not in NOT_NUMERIC_IN


def allowed_children(parent: str | None, head: str | None) -> set[str] | None:
    """The list heads `head` may hold inside `parent`; None when that is not checked."""
    if parent in ONLY_LEAVES_BELOW:
        return set()
    if (parent, head) in IN_CONTEXT:
        return IN_CONTEXT[(parent, head)]
    return CHILDREN.get(head)


def required_parts(parent: str | None, head: str | None) -> set[str]:
    """What (head ...) must hold; an arc in a point list is not a track arc."""
    return set() if (parent, head) == ("pts", "arc") else REQUIRED.get(head, set())


def number_count(parent: str | None, head: str | None) -> tuple[int, int] | None:
    if (parent, head) in NOT_NUMERIC_IN:
        return None
    if head == "size" and parent in SINGLE_SIZE:
        return 1, 1
    if head == "size" and parent == "layer":      # a padstack layer: a via's diameter or a pad's size
        return 1, 2
    if head == "at" and parent == "model":        # (at (xyz ...)), in inches, before KiCad 5
        return 0, 0
    if head == "at" and parent in ("via", "image"):      # no rotation there
        return 2, 2
    return COUNT.get(head)


def net_values(parent: str | None) -> tuple[int, int]:
    """The net table holds (net number name); a pad (net number name), or (net name) since KiCad 10; every other item
    (net number), or (net name) since KiCad 10."""
    return {"kicad_pcb": (2, 2), "pad": (1, 2)}.get(parent, (1, 1))
