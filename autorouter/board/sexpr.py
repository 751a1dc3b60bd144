"""A fast reader of KiCad's s-expressions into nested lists, the same lists as kiutils' parse_sexp gives.

kiutils' parser matches one token at a time in Python: 34 s for the 70 MB of the largest KiCad demo. Here the text is
rewritten into JSON by a handful of whole-text regular expression passes and read by the json module, in C: the
quoted strings are set aside first (they may hold anything), every bare token becomes a JSON string or, when it is a
plain number, a JSON number; parentheses become brackets and a comma follows every element.

As kiutils does: a quoted string loses its quotes and its escaped quotes (\\" becomes "), other backslashes stay;
a bare token that is a plain decimal number becomes an int (when it has no fraction) or a float.
"""
from __future__ import annotations

import json
import re

STRING = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
HOLE = "\x00"                       # where a quoted string was: no KiCad text holds this character
ATOM = re.compile(r"[^\s()\x00]+")
QUOTED_NUMBER = re.compile(r'"(-?(?:0|[1-9]\d*)(?:\.\d+)?)"')
TRAILING_COMMA = re.compile(r",\s*\]")


class SexprError(ValueError):
    pass


def parse(text: str) -> list:
    """The top-level list of the text (which must hold exactly one)."""
    parts = STRING.split(text)
    bare = HOLE.join(parts[0::2])
    if '"' in bare:
        raise SexprError("unterminated string")
    bare = bare.replace("\\", "\\\\")
    bare = ATOM.sub(r'"\g<0>",', bare)
    bare = QUOTED_NUMBER.sub(r"\1", bare)
    bare = bare.replace(HOLE, f'"{HOLE}",').replace("(", "[").replace(")", "],")
    bare = TRAILING_COMMA.sub("]", bare).rstrip().rstrip(",")     # a literal: no Python call per list
    pieces = bare.split(HOLE)
    out = [""] * (2 * len(pieces) - 1)
    out[0::2] = pieces
    # JSON string bodies that decode to what kiutils keeps: backslashes doubled, then \" as an escaped quote
    out[1::2] = HOLE.join(parts[1::2]).replace("\\", "\\\\").replace('\\\\"', '\\"').split(HOLE) if len(pieces) > 1 else []
    try:
        tree = json.loads("".join(out), strict=False)
    except json.JSONDecodeError as e:
        raise SexprError(f"not an s-expression ({e.msg})") from None
    if not isinstance(tree, list):
        raise SexprError("not an s-expression")
    return tree
