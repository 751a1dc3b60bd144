"""Which nets a user means by `--nets A,B`: exact names first, then the one name that matches ignoring case; a name
that matches nothing (or several nets that differ only in case) is refused, with the closest names as suggestions."""
from __future__ import annotations

import difflib

SUGGESTIONS = 3          # close names offered for a name that matches nothing


class NetSelectionError(ValueError):
    """A requested net name matches no net, or several; the message is one line."""


def select_nets(spec: str, names) -> set[str]:
    """The board's net names meant by the comma-separated spec."""
    names = sorted({n for n in names if n})
    by_folded: dict[str, list[str]] = {}
    for n in names:
        by_folded.setdefault(n.casefold(), []).append(n)
    chosen = set()
    for wanted in (w.strip() for w in spec.split(",")):
        if not wanted:
            continue
        if wanted in names:
            chosen.add(wanted)
            continue
        same = by_folded.get(wanted.casefold(), [])
        if len(same) == 1:
            chosen.add(same[0])
        elif same:
            raise NetSelectionError(f"{wanted!r} matches several nets that differ only in case: "
                                    + ", ".join(same) + " (give the exact name)")
        else:
            raise NetSelectionError(f"no net named {wanted!r} on this board" + suggest(wanted, by_folded))
    return chosen


def suggest(wanted: str, by_folded: dict[str, list[str]]) -> str:
    close = difflib.get_close_matches(wanted.casefold(), list(by_folded), n=SUGGESTIONS, cutoff=0.6)
    return f" (did you mean {', '.join(n for c in close for n in by_folded[c])}?)" if close else ""
