"""The board's custom design rules (.kicad_dru), read as far as they bound what the router makes.

A rule has a name, an optional layer scope, an optional condition in KiCad's expression language, and constraints.
What the router needs is, per net, the clearance and track width that any rule may ask of its tracks and vias, and
board-wide floors for the rest. Conditions are evaluated with three values (true, false, unknown): the net in hand
plays A (its name, class and type known), everything about B is unknown, and a rule whose condition is not false
is applied. That is conservative: a rule applied where KiCad would not only keeps more room. The layer scope is
ignored the same way (a rule for inner layers is kept on every layer). Constraints the router cannot meet yet
(length, skew, diff pair gaps) are named in the report.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache

from . import sexpr
from .tree import atoms, nodes, word

UNITS = {"mm": 1.0, "um": 0.001, "mil": 0.0254, "in": 25.4}
APPLIED = {"clearance", "track_width", "hole_clearance", "edge_clearance", "hole_to_hole", "via_diameter", "hole_size"}


class RuleError(ValueError):
    """The .kicad_dru cannot be read; the message is one line."""


@dataclass(frozen=True)
class CustomRule:
    name: str
    condition: str
    constraints: dict = field(default_factory=dict)      # constraint -> {"min"/"opt"/"max": mm}


def value_mm(text) -> float:
    m = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(mm|um|mil|in)?\s*", str(text))
    if not m:
        raise RuleError(f"{text!r} is not a length")
    return float(m.group(1)) * UNITS[m.group(2) or "mm"]


def parse_rules(text: str) -> list[CustomRule]:
    try:
        tree = sexpr.parse(f"(rules {text})")
    except sexpr.SexprError as e:
        raise RuleError(f"not an s-expression ({e})") from None
    rules = []
    for r in nodes(tree, "rule"):
        constraints = {}
        for c in nodes(r, "constraint"):
            kind = str(c[1]) if len(c) > 1 else ""
            limits = {}
            for lim in nodes(c):
                if lim[0] in ("min", "opt", "max") and atoms(lim):
                    limits[lim[0]] = value_mm(atoms(lim)[0])
            constraints[kind] = limits
        rules.append(CustomRule(str(r[1]) if len(r) > 1 else "?", word(r, "condition", "") or "", constraints))
    return rules


TOKEN = re.compile(r"\s*(?:(?P<str>'[^']*')|(?P<op>==|!=|&&|\|\||[!()<>,])|(?P<name>[A-Za-z_][\w.]*)|(?P<num>[\d.]+\w*))")


@lru_cache(maxsize=1024)
def tokens(condition: str) -> tuple[tuple[str, str], ...]:
    """The condition's tokens, worked out once per condition: each rule's is evaluated for every net and item type."""
    out, at = [], 0
    while at < len(condition):
        m = TOKEN.match(condition, at)
        if not m or m.end() == at:
            if condition[at:].strip():
                out.append(("other", condition[at:]))
            break
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        at = m.end()
    return tuple(out)


def evaluate(condition: str, a: dict) -> bool | None:
    """True, False, or None (unknown) for an item whose properties `a` (NetName, NetClass, Type) play A."""
    if not condition.strip():
        return True
    toks = tokens(condition)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else ("end", "")

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def both(x, y, op):                       # three-valued and / or
        if op == "&&":
            return False if x is False or y is False else (True if x and y else None)
        return True if x is True or y is True else (False if x is False and y is False else None)

    def expr():
        value = term()
        while peek() == ("op", "||"):
            take()
            value = both(value, term(), "||")
        return value

    def term():
        value = factor()
        while peek() == ("op", "&&"):
            take()
            value = both(value, factor(), "&&")
        return value

    def factor():
        kind, text = peek()
        if (kind, text) == ("op", "!"):
            take()
            value = factor()
            return None if value is None else not value
        if (kind, text) == ("op", "("):
            take()
            value = expr()
            if peek() == ("op", ")"):
                take()
            return value
        left = operand()
        if peek()[0] == "op" and peek()[1] in ("==", "!="):
            op = take()[1]
            right = operand()
            if left is None or right is None:
                return None
            same = fnmatchcase(left, right) or fnmatchcase(right, left)
            return same if op == "==" else not same
        return None

    def operand():
        kind, text = take() if pos < len(toks) else ("end", "")
        if kind == "str":
            return text[1:-1]
        if kind == "name":
            if peek() == ("op", "("):                 # a function call: its value is unknown
                depth = 0
                while pos < len(toks):
                    k, t = take()
                    depth += (t == "(") - (t == ")")
                    if depth == 0:
                        break
                return None
            who, _, prop = text.partition(".")
            return a.get(prop) if who == "A" else None
        return None

    try:
        return expr()
    except IndexError:
        return None


def applicable(rules: list[CustomRule], kind: str, a: dict, limit: str = "min") -> float | None:
    """The largest `limit` of constraint `kind` among the rules that may apply to an item like `a`."""
    values = [r.constraints[kind][limit] for r in rules if limit in r.constraints.get(kind, {})
              and evaluate(r.condition, a) is not False]
    return max(values) if values else None


def not_applied(rules: list[CustomRule]) -> list[str]:
    """Rules with constraints the router does not meet (length, skew, diff pairs...), for the report."""
    return [f"{r.name} ({', '.join(sorted(set(r.constraints) - APPLIED))})" for r in rules
            if set(r.constraints) - APPLIED]
