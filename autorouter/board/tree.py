"""Small accessors for the parsed s-expression tree: a node is a list [head, item, item, ...], where an item is an
atom (str, int or float) or a node. KiCad writes optional parts in any order, so parts are found by their head."""
from __future__ import annotations

from .geometry import arc_points


class Malformed(ValueError):
    """A part that KiCad's parser would refuse; the message names it, for one line to the user."""


def nodes(node: list | None, head: str | None = None) -> list[list]:
    """The node's child nodes (those with this head); none of None."""
    if node is None:
        return []
    return [c for c in node[1:] if isinstance(c, list) and c and (head is None or c[0] == head)]


def node(parent: list | None, head: str) -> list | None:
    """The first child node with this head, or None."""
    if parent is None:
        return None
    for c in parent[1:]:
        if isinstance(c, list) and c and c[0] == head:
            return c
    return None


def atoms(n: list | None) -> list:
    return [] if n is None else [a for a in n[1:] if not isinstance(a, list)]


def number(parent: list | None, head: str, default: float | None = None) -> float | None:
    """The first number of (head N ...), or default when there is none."""
    values = atoms(node(parent, head))
    return float(values[0]) if values else default


def point(parent: list, head: str) -> tuple[float, float]:
    values = atoms(node(parent, head))
    return float(values[0]), float(values[1])


def position(parent: list) -> tuple[float, float, float]:
    """(x, y, angle) of (at x y [angle])."""
    values = [v for v in atoms(node(parent, "at")) if v != "unlocked"]
    return float(values[0]), float(values[1]), float(values[2]) if len(values) > 2 else 0.0


def word(parent: list | None, head: str, default: str | None = None) -> str | None:
    values = atoms(node(parent, head))
    return str(values[0]) if values else default


def flag(parent: list | None, head: str) -> bool:
    """A KiCad 6/7 bare word (`hide`), or KiCad 8's (hide yes)."""
    if parent is None:
        return False
    if head in parent[1:]:
        return True
    values = atoms(node(parent, head))
    return values == [] and node(parent, head) is not None or bool(values) and values[0] in ("yes", "true")


def points(pts: list | None) -> list[tuple[float, float]]:
    """The corners of a (pts ...) list, arcs in it (KiCad 7 and later) drawn as short segments."""
    out: list[tuple[float, float]] = []
    for item in nodes(pts):
        if item[0] == "xy":
            out.append((float(item[1]), float(item[2])))
        elif item[0] == "arc":
            arc = arc_points(point(item, "start"), point(item, "mid"), point(item, "end"))
            out.extend(arc[1:] if out and out[-1] == arc[0] else arc)
    return out


def stroke_width(n: list) -> float:
    """A drawing's line width: (stroke (width w)) since KiCad 7, (width w) before."""
    return number(node(n, "stroke"), "width", None) or number(n, "width", 0.0) or 0.0


def filled(n: list) -> bool:
    return word(n, "fill", "no") in ("yes", "solid")
