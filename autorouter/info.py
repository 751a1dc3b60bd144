"""`autorouter info`: what the router would face on a board, without routing it: layers, nets and connections to
route, pads, the design rules in force per net class, the board's size, and the lattice and memory it would use."""
from __future__ import annotations

from .board.connectivity import pad_groups
from .pipeline import board_lattice
from .zones import predict

# Per lattice node while routing: occupancy and history (int32 + float32) and the routed-node count (int32), plus
# one owner map (int32) per net class; on the GPU the same arrays live on the device.
BYTES_PER_NODE = 12
BYTES_PER_NODE_PER_CLASS = 4


def board_info(board, rules, config) -> dict:
    x0, y0, x1, y1 = board.outline.bounds
    groups = pad_groups(board, pieces=predict(board, rules))
    pads_on_nets = sum(1 for p in board.pads if p.net)
    lattice = board_lattice(board, rules, config)
    classes_in_use = {rules.for_net(n.number).name for n in board.nets if n.number}
    lattice_bytes = lattice.size * (BYTES_PER_NODE + BYTES_PER_NODE_PER_CLASS * len(classes_in_use))
    return {
        "board": board.path,
        "file_version": board.version,
        "size_mm": [round(x1 - x0, 3), round(y1 - y0, 3)],
        "copper_layers": list(board.copper_layers),
        "nets": sum(1 for n in board.nets if n.number),
        "nets_to_route": sum(1 for g in groups.values() if len(g) > 1),
        "connections_to_route": sum(len(g) - 1 for g in groups.values()),
        "pads": len(board.pads),
        "pads_on_nets": pads_on_nets,
        "existing_tracks": len(board.tracks),
        "existing_vias": len(board.vias),
        "zones": board.zone_count,
        "rules_source": rules.source,
        "net_classes": [{"name": c.name, "track_width": c.track_width, "clearance": c.clearance,
                         "via_diameter": c.via_diameter, "via_drill": c.via_drill,
                         "nets": sum(1 for n in board.nets if n.number and rules.for_net(n.number).name == c.name)}
                        for c in rules.classes.values()],
        "edge_clearance": rules.edge_clearance,
        "hole_to_hole": rules.hole_to_hole,
        "thermal_spokes": rules.min_spokes,      # the fewest a thermal relief needs; 0: not checked
        "lattice": {"shape": list(lattice.shape), "pitch_mm": round(lattice.pitch, 4), "nodes": lattice.size},
        "memory_estimate_mb": round(lattice_bytes / 2 ** 20, 1),
        "notes": rules.notes + board.warnings,
    }


def net_rows(board, rules) -> list[dict]:
    """Per net, in the board's order: its class, its pads, and the connections to route (its pad groups that copper
    and the predicted zone fills do not join yet, less one: the edges of the tree the router joins them by)."""
    groups = pad_groups(board, pieces=predict(board, rules))
    pads: dict[int, list[str]] = {}
    for p in board.pads:
        if p.net:
            pads.setdefault(p.net, []).append(p.name)
    return [{"name": n.name, "net_class": rules.for_net(n.number).name, "pads": pads.get(n.number, []),
             "connections_to_route": max(0, len(groups.get(n.number, ())) - 1)}
            for n in board.nets if n.number]
