"""A fast reader of KiCad's s-expressions into nested lists, the same lists as kiutils' parse_sexp gives.

kiutils' parser matches one token at a time in Python: 34 s for the 70 MB of the largest KiCad demo. Here the text is
rewritten into JSON and read by the json module, in C: the quoted strings are set aside first (they may hold
anything), every bare word is quoted by one regular expression pass, plain numbers stay bare, and the rest is string
methods: parentheses become brackets and one comma goes between two elements.

As kiutils does: a quoted string loses its quotes and its escaped quotes (\\" becomes "), other backslashes stay;
a bare token that is a plain decimal number becomes an int (when it has no fraction) or a float.
"""
from __future__ import annotations

import json
import re

STRING = re.compile(r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"', re.S)     # runs of plain characters taken whole
HOLE = "\x00"                       # where a quoted string was: no KiCad text holds this character
IN_WORDS = str.maketrans({",": "\\u002c", "[": "\\u005b", "]": "\\u005d"})   # JSON's own, where a bare word has them
# A bare token with a character no number has: a word, quoted whole. It is matched from its first character, since a
# scan that fails at a token's start fails inside it too. Tokens of digits, "-" and "." alone stay bare for JSON, which
# reads a plain number as kiutils does; one that is no plain number ("1.", "007") makes JSON fail, and the text is then
# read again the exact (slower) way, with WORD.
# Both capture the whole token, so that splitting by them leaves the words at the odd places (quoted by quote_words).
# They read the text with its white space made single spaces, so WORDLIKE names the space alone (a set of a few
# characters is tested faster than the class of all white space).
WORDLIKE = re.compile(r"([-.\d]*+[^ ()\x00\-.\d][^ ()\x00]*+)")
NUMBER = r"-?(?:0|[1-9]\d*)(?:\.\d+)?"
WORD = re.compile(rf"(?<![^\s()\x00])(?!{NUMBER}(?![^\s()\x00]))([^\s()\x00]+)")


class SexprError(ValueError):
    pass


def parse(text: str) -> list:
    """The top-level list of the text (which must hold exactly one)."""
    parts = STRING.split(text)
    bare = HOLE.join(parts[0::2])
    if '"' in bare:
        raise SexprError("unterminated string")
    # each run of white space made one space, which JSON reads as it reads any: the words' pattern has fewer places to
    # try (a large board is indented by tabs), and the JSON is made with plain replacements
    bare = " ".join(bare.replace("\\", "\\\\").translate(IN_WORDS).split())
    # JSON string bodies that decode to what kiutils keeps: backslashes doubled, then \" as an escaped quote
    strings = HOLE.join(parts[1::2]).replace("\\", "\\\\").replace('\\\\"', '\\"').split(HOLE)
    try:
        tree = json.loads(as_json(quote_words(WORDLIKE, bare), strings), strict=False)
    except json.JSONDecodeError:
        try:
            tree = json.loads(as_json(quote_words(WORD, bare), strings), strict=False)
        except json.JSONDecodeError as e:
            raise SexprError(f"not an s-expression ({e.msg})") from None
    if not isinstance(tree, list):
        raise SexprError("not an s-expression")
    return tree


def quote_words(pattern: re.Pattern, bare: str) -> str:
    """Every match of pattern (one capturing group, the whole match) in quotes. Split by the pattern, the text
    alternates between what lies between words and the words, so one quote between every two pieces opens and
    closes each word: all in C, where a substitution template is expanded in Python once per word (2 million on
    the largest demo)."""
    return '"'.join(pattern.split(bare))


def as_json(bare: str, strings: list[str]) -> str:
    """The text as JSON, its words quoted: parentheses become brackets, and one comma goes between two elements
    (string methods and splits only: a board holds millions of tokens). bare: white space is single spaces."""
    bare = bare.replace("(", ",[").replace(")", "],").replace(HOLE, f',"{HOLE}",').replace(" ", ",")
    bare = bare.replace(",,", ",").replace(",,", ",").replace("[,", "[").replace(",]", "]")
    pieces = bare.strip(",").split(HOLE)
    out = [""] * (2 * len(pieces) - 1)
    out[0::2] = pieces
    out[1::2] = strings if len(pieces) > 1 else []
    return "".join(out)
