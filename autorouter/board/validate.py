"""What kiutils does not check, checked before and after it reads a board: a file KiCad would refuse is refused here,
with one line naming the problem, rather than half-read.

Before parsing: balanced parentheses and well-formed numbers in the text. On the parsed tree: what small items hold
and what items cannot lack, in forms that have held from KiCad 6 to 10. On the model: coordinates and net numbers
within KiCad's own ranges.
"""
from __future__ import annotations

import math
import re

import numpy as np

from . import grammar

# A quoted string, its escapes included: runs of plain characters are taken whole (one step each, not one a character)
QUOTED = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"')


class BoardError(Exception):
    """The board cannot be read or routed as given; the message is one line for the user."""


def check_text(text: str, path) -> None:
    """The checks on the raw text, with quoted strings (which may hold anything) blanked once for both."""
    bare = QUOTED.sub('""', text)
    check_balanced(bare, path)
    check_numbers_text(bare, path)


def check_balanced(bare: str, path) -> None:
    """kiutils accepts some broken files silently; a truncated or unbalanced file is refused, not half-read.
    bare: the text with its quoted strings blanked."""
    if bare.count('"') % 2:
        raise BoardError(f"{path}: malformed board: unterminated string (truncated file?)")
    text = bare.encode("utf-8")
    codes = np.frombuffer(text, dtype=np.uint8)
    where = np.flatnonzero((codes == ord("(")) | (codes == ord(")")))     # the depth changes at parentheses only
    depth = np.cumsum(np.where(codes[where] == ord("("), 1, -1))
    if depth.size == 0 or depth[-1] > 0:
        left = int(depth[-1]) if depth.size else 0
        raise BoardError(f"{path}: malformed board: truncated or unbalanced parentheses ({left} left open)")
    if depth[-1] < 0:           # more closed than opened: a count "left open" would be negative
        raise BoardError(f"{path}: malformed board: unbalanced parentheses ({-int(depth[-1])} more ')' than '(')")
    closed = int(np.argmax(depth <= 0))
    if depth[closed] < 0 or text[where[closed] + 1:].strip():
        raise BoardError(f"{path}: malformed board: unbalanced ')' or text after the board's closing ')'")


IDENTIFIER = re.compile(r"\((?:tstamp|uuid|tedit)\s+[^\s()]+")      # KiCad 6/7 write uuids (and edit times) unquoted, in hex
# a bare token made of number characters that is no number (and no uuid, as in group member lists): "1.2.3", "-",
# "--3", "1e999". Tokens with letters are names or embedded data, not numbers gone wrong. Each pattern begins with
# the character before the token, which the re module finds fast; a lookbehind would be tried at every character.
NUMBER_OR_MEMBER = r"(?:[-+]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][-+]?\d{1,2})?+|\d{8}-\d{4}-[-\d]+)"
BAD_NUMBER = re.compile(rf"[\s(]((?!{NUMBER_OR_MEMBER}[\s)])[-+.\d][-+.\deE]*+)(?=[\s)])")


# KiCad's number parser refuses these where it expects a number, and no KiCad item has them as a bare name.
NOT_FINITE = re.compile(r"[\s(]([-+]?(?:nan|inf|infinity))(?=[\s)])", re.IGNORECASE)
# Any token either pattern could find, in one pass (a good board has none). A token that IDENTIFIER's removal leaves
# before a space or ')' had a space or a '(' after it, hence '[\s()]' here; the identifiers themselves, which KiCad 6/7
# write with a single space (00000000-0000-0000-0000-00005e3e1234), are passed over as BAD_NUMBER passes them. A
# token's first character is tested first, so that a name fails at once.
SUSPECT = re.compile(rf"[\s(](?=[-+.\dnNiI])(?:(?<!\(tstamp\s)(?<!\(uuid\s)(?<!\(tedit\s)(?!{NUMBER_OR_MEMBER}[\s()])"
                     r"[-+.\d][-+.\deE]*+|[-+]?(?i:nan|inf|infinity))(?=[\s()])")


def check_numbers_text(bare: str, path) -> None:
    """Refuse a malformed number anywhere in the file, as KiCad does (kiutils would keep it as text, or skip it).
    bare: the text with its quoted strings blanked. One pass clears a good board; a suspect token sends the text
    through the exact patterns, which name the token."""
    if SUSPECT.search(bare) is None:
        return
    bad = BAD_NUMBER.search(IDENTIFIER.sub("", bare)) or NOT_FINITE.search(bare)
    if bad:
        raise BoardError(f"{path}: malformed board: {bad.group(1)[:30]!r} is not a number")


# Checked as KiCad's parser checks them (the tables are in grammar.py): which lists each item may hold, the order of a
# drawn shape's geometry, how many numbers each part has and that they are numbers, parts given twice, and the parts
# an item cannot lack. kiutils would skip what does not belong and leave out what is missing.
MAX_ANGLE = 1e5       # KiCad normalises angles one turn at a time: a huge one would hang it


def is_number(atom) -> bool:
    """Whether the atom is a finite number a float holds (an integer of hundreds of digits is none: KiCad's reader
    takes it as a double)."""
    try:
        return math.isfinite(atom if isinstance(atom, float) else float(atom))
    except (TypeError, ValueError, OverflowError):
        return False


def check_structure(tree, path) -> None:
    """Walk the parsed tree of the file. Most items repeat a few shapes (a footprint's properties, its lines), so
    what the grammar says of each (parent, head) and of each order of lists is worked out once. Most items hold no
    list (a position, a layer, a uuid): for those the walk asks only whether their values need a check."""
    rules: dict[tuple, tuple] = {}                     # (parent, head, strict) -> item_rule(...)
    lists_checked: dict[tuple, str | None] = {}        # (parent, head, heads of its lists) -> problem
    values_passed: set[tuple] = set()                  # (parent, strict, head, *values) of items holding no list
    # the items being walked, outermost first: each one's head, whether it is read strictly, and its lists still to
    # walk, last first (the order the walk has always taken, so that of two problems the same one is reported)
    walking = [(None, True, iter([tree]))]
    while walking:
        parent, strict, items = walking[-1]
        for node in items:
            head = node[0] if node and type(node[0]) is str else None
            rule = rules.get((parent, head, strict))
            if rule is None:
                rule = rules[(parent, head, strict)] = item_rule(parent, head, strict)
            skip, strict_below, plan, problem = rule
            if skip:
                continue
            lists = [c for c in node if type(c) is list]     # the parsed tree holds lists, str, int and float only
            if lists and lists[0] is node[0]:                # no head: a list in its place is not one of its parts
                del lists[0]
            if lists and strict_below:
                order = tuple([c[0] if c and type(c[0]) is str else None for c in lists])
                key = (parent, head, order)
                if key in lists_checked:
                    problem = lists_checked[key]
                else:
                    problem = check_lists(parent, head, list(order), lists)
                    if (parent, head) != ("kicad_pcb", "layers"):           # the only check that reads the lists
                        lists_checked[key] = problem
            if not problem and plan:
                if lists:
                    atoms = [a for a in node[1:] if type(a) is not list]
                    problem = check_values(parent, head, atoms, plan, empty=len(node) == 1)
                else:       # most repeat, (size 1 1), (thickness 0.15): equal values (1 and 1.0 too) pass alike
                    key = (parent, strict, head, *node[1:])
                    if key not in values_passed:
                        problem = check_values(parent, head, node[1:], plan, empty=len(node) == 1)
                        if problem is None:
                            values_passed.add(key)
            if problem:
                raise BoardError(f"{path}: malformed board: {problem}")
            if head == "pts":           # most of a large board: points, checked here at a fraction of the cost
                lists = [c for c in lists if not plain_point(c)]
            if lists:
                walking.append((head, strict_below, reversed(lists)))
                break
        else:
            walking.pop()


def item_rule(parent, head, strict: bool) -> tuple:
    """What the walk asks of an item (head ...) in (parent ...), read strictly (as all above it were) or not:
    (whether nothing in it is checked; whether its lists are checked, and strictly below it; its values_plan, or
    None where no value needs a check; what is wrong with it where it holds no list)."""
    strict = strict and head not in grammar.LENIENT          # below a leniently read item only values count
    plan = values_plan(parent, head, strict)
    # check_values also bounds an (at ...)'s angle, whatever the grammar says of its values
    return (head in grammar.UNREAD, strict, plan if plan != (None, None, None, None) or head == "at" else None,
            check_lists(parent, head, [], []) if strict else None)


def plain_point(item: list) -> bool:
    """(xy X Y) with two finite numbers, which every check below passes."""
    return (len(item) == 3 and item[0] == "xy" and type(item[1]) in (int, float) and type(item[2]) in (int, float)
            and item[1] - item[1] == 0 and item[2] - item[2] == 0)      # x - x is nan for an infinity


def check_lists(parent, head, order: list, lists: list) -> str | None:
    """What is wrong with the lists an item holds, or None."""
    allowed = grammar.allowed_children(parent, head)
    if allowed is not None and not set(order) <= allowed:
        return f"a ({head} ...) holds a ({sorted(str(h) for h in set(order) - allowed)[0]} ...)"
    lead = grammar.SHAPES.get(head)
    if lead and tuple(order[:len(lead)]) != lead:
        return f"a ({head} ...) must begin with " + " ".join(f"({h} ...)" for h in lead)
    if (parent, head) == ("kicad_pcb", "layers") and not all(
            len(c) >= 3 and isinstance(c[0], int) and not any(isinstance(a, list) for a in c) for c in lists):
        return "a layer definition is not (number name type)"
    twice = [h for h in grammar.SINGULAR if order.count(h) > 1] if head not in grammar.MANY_OF else []
    if twice:
        return f"a ({head} ...) holds two ({twice[0]} ...)"
    missing = grammar.required_parts(parent, head) - set(order)
    if missing:
        return f"a ({head} ...) without its ({sorted(missing)[0]} ...)"
    return None


def values_plan(parent, head, strict: bool) -> tuple:
    """What the grammar asks of the values of (head ...) in (parent ...): (how many numbers, or None; how many
    values a net item holds, or None; the words allowed besides numbers, or None when they need not be numbers;
    the keywords of which it holds one, or None)."""
    count = grammar.number_count(parent, head) if strict else None
    net = grammar.net_values(parent) if head == "net" and strict else None
    words = grammar.WORDS.get(head, ()) if grammar.holds_numbers(parent, head) else None
    return count, net, words, grammar.CHOICES.get((parent, head)) if strict else None


def check_values(parent, head, atoms: list, plan: tuple, empty: bool = False) -> str | None:
    """What is wrong with the values (numbers, names) an item holds, or None.
    plan: values_plan(parent, head, strict); empty: the item holds nothing at all."""
    count, net, words, choices = plan
    try:
        numbers = sum(map(math.isfinite, atoms))    # all numbers, as JSON gives most: is_number's answer, in C
    except (TypeError, OverflowError):
        numbers = None      # a word, or an integer too large for a float, which is_number answers (no number)
    if count and not count[0] <= (sum(map(is_number, atoms)) if numbers is None else numbers) <= count[1]:
        return f"({head} ...) needs " + ("1 number" if count == (1, 1) else f"{count[0]} numbers"
                                         if count[0] == count[1] else f"{count[0]} to {count[1]} numbers")
    if empty and words is not None:           # (scaleselection), below an item read leniently: KiCad reads a number
        return f"({head} ...) needs a number"
    if net and not net[0] <= len(atoms) <= net[1]:
        return f"a ({parent} ...) has a malformed (net ...)"
    if words is not None and numbers != len(atoms) and not all(is_number(a) or a in words for a in atoms):
        return f"({head} ...) holds something that is not a number"
    if head == "at" and len(atoms) > 2 and is_number(atoms[2]) and abs(float(atoms[2])) > MAX_ANGLE:
        return f"a rotation of {atoms[2]} degrees"
    if choices and not (len(atoms) == 1 and atoms[0] in choices):
        return f"a ({parent} ...) has ({head} {' '.join(map(str, atoms))}), not one of {', '.join(sorted(choices))}"
    return None


LIMIT_MM = 2147.0           # KiCad stores coordinates as 32-bit nanometres: nothing real lies farther out


def check_numbers(board):
    """Every coordinate and size a finite number within KiCad's range, every net number a 32-bit index: kiutils
    passes a malformed number through as text, and an absurd one would blow up the lattice."""
    def items():
        for t in board.tracks:
            yield "track", [*t.start, *t.end, t.width] + ([*t.mid] if t.mid else [])
        for v in board.vias:
            yield "via", [v.x, v.y, v.diameter, v.drill]
        for p in board.pads:
            if p.layers and p.outline.is_empty:
                raise BoardError(f"{board.path}: malformed board: pad {p.name} has copper layers but no size")
            yield f"pad {p.name}", [p.x, p.y, p.drill] + ([] if p.outline.is_empty else list(p.outline.bounds))
        for what, shapes in (("keep-out", board.keepouts), ("copper graphic", board.graphics)):
            for g in shapes:
                yield what, [] if g.outline.is_empty else list(g.outline.bounds)
        yield "board outline", list(board.outline.bounds)
    for what, values in items():
        for v in values:
            if not isinstance(v, (int, float)) or not math.isfinite(v) or abs(v) > LIMIT_MM:
                raise BoardError(f"{board.path}: malformed board: a {what} has an invalid number ({v!r})")
    numbers = [n.number for n in board.nets] + [i.net for group in (board.pads, board.tracks, board.vias) for i in group]
    for n in numbers:
        if not isinstance(n, int) or not 0 <= n < 2 ** 31:
            raise BoardError(f"{board.path}: malformed board: invalid net number ({n!r})")
    return board
