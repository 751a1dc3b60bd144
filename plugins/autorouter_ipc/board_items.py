"""The router's new tracks and vias, from its output file to kipy objects for the open board.

The router writes the board it was given plus one run of `(segment ...)` and `(via ...)` items, every other byte
unchanged; so the new items are what lies between the longest common start and end of the two texts, and no
general board parser is needed here. Coordinates in the file are millimetres, kipy's are integer nanometres.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

NM_PER_MM = 1_000_000
TOKEN = re.compile(r'\(|\)|"(?:\\.|[^"\\])*"|[^\s()"]+')
NET_DECLARATION = re.compile(r'\(net (\d+) "((?:\\.|[^"\\])*)"\)')    # KiCad 9 and older: nets by number


@dataclass(frozen=True)
class NewTrack:
    start: tuple[float, float]          # mm, KiCad's board coordinates (y down)
    end: tuple[float, float]
    width: float                        # mm
    layer: str                          # KiCad's name: F.Cu, In1.Cu, B.Cu
    net: str


@dataclass(frozen=True)
class NewVia:
    at: tuple[float, float]             # mm
    diameter: float                     # mm
    drill: float                        # mm
    layers: tuple[str, str]             # the outermost copper it joins (the router's vias are through vias)
    net: str


def added_text(original: str, routed: str) -> str:
    """What the router inserted into `original` to make `routed`. Raises ValueError if `routed` is not `original`
    with one insertion (it was not written from this board)."""
    limit = min(len(original), len(routed))
    start = 0
    while start < limit and original[start] == routed[start]:
        start += 1
    end = 0                             # matched from the end, never back past `start` in either text
    while end < limit - start and original[-1 - end] == routed[-1 - end]:
        end += 1
    if start + end != len(original):
        raise ValueError("the routed board is not the board sent to the router plus new items")
    return routed[start:len(routed) - end]


class Quoted(str):
    """A string that was quoted in the file: `(net "3")` names a net, `(net 3)` numbers one."""


def parse(text: str) -> list:
    """S-expressions as nested lists of strings (quoted ones unquoted, as Quoted)."""
    stack: list[list] = [[]]
    for token in TOKEN.findall(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced ')' in the router's items")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(Quoted(unquote(token)) if token.startswith('"') else token)
    if len(stack) != 1:
        raise ValueError("unbalanced '(' in the router's items")
    return stack[0]


def unquote(token: str) -> str:
    return re.sub(r'\\(.)', r'\1', token[1:-1])


def net_names(board_text: str) -> dict[str, str]:
    """Net number -> name, from the board's `(net N "name")` forms (pads carry the same pairs as the header)."""
    return {number: unquote(f'"{name}"') for number, name in NET_DECLARATION.findall(board_text)}


def new_items(original: str, routed: str) -> list[NewTrack | NewVia]:
    """The tracks and vias the router added to `original`, in the order it wrote them."""
    names = net_names(original)
    items = []
    for form in parse(added_text(original, routed)):
        if not isinstance(form, list) or not form or form[0] not in ("segment", "via"):
            raise ValueError(f"unexpected item in the router's output: {str(form)[:60]}")
        parts = {p[0]: p[1:] for p in form[1:] if isinstance(p, list) and p}
        net = parts["net"][0]                       # KiCad 10 names the net, older versions number it
        net = str(net) if isinstance(net, Quoted) else names.get(net, "")
        if form[0] == "segment":
            items.append(NewTrack(point(parts["start"]), point(parts["end"]), float(parts["width"][0]),
                                  parts["layer"][0], net))
        else:
            items.append(NewVia(point(parts["at"]), float(parts["size"][0]), float(parts["drill"][0]),
                                (parts["layers"][0], parts["layers"][-1]), net))
    return items


def point(values) -> tuple[float, float]:
    return float(values[0]), float(values[1])


def nm(mm: float) -> int:
    return round(mm * NM_PER_MM)


def layer_id(name: str):
    """KiCad's layer name (F.Cu, In2.Cu, B.Cu) as kipy's BoardLayer value (BL_F_Cu, ...)."""
    from kipy.util.board_layer import BoardLayer
    return BoardLayer.Value("BL_" + name.replace(".", "_"))


def to_kipy(items, nets: dict) -> list:
    """kipy Track and Via objects for `items`, on the board's own Net objects (`nets`: name -> kipy Net, from
    board.get_nets(): KiCad 9 matches a net by its number, KiCad 10 by its name, and those carry both)."""
    from kipy.board_types import Track, Via
    from kipy.geometry import Vector2

    made = []
    for item in items:
        if isinstance(item, NewTrack):
            track = Track()
            track.start = Vector2.from_xy(nm(item.start[0]), nm(item.start[1]))
            track.end = Vector2.from_xy(nm(item.end[0]), nm(item.end[1]))
            track.width = nm(item.width)
            track.layer = layer_id(item.layer)
            track.net = board_net(nets, item.net)
            made.append(track)
        else:
            via = Via()                                     # a through via, F.Cu to B.Cu, by default
            via.position = Vector2.from_xy(nm(item.at[0]), nm(item.at[1]))
            via.diameter = nm(item.diameter)
            via.drill_diameter = nm(item.drill)
            via.net = board_net(nets, item.net)
            made.append(via)
    return made


def board_net(nets: dict, name: str):
    if name not in nets:
        raise ValueError(f"the router's net {name!r} is not on the open board (renamed while it was routing?)")
    return nets[name]
