"""The router as one call: route(board, rules, config, on_progress) -> RouteResult.

read (done by the caller) -> lattice and obstacles -> pins, portals and MST order -> PathFinder over the search engine
-> tracks and vias in mm. The library never prints; progress goes to on_progress(event: dict).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import NamedTuple

import numpy as np

from .board.model import Board, Track, Via, net_label
from .board.rules import DesignRules
from .config import RouterConfig
from .detail import join_apart
from .escapes import escaped, trimmed
from .lattice import build_obstacles, choose_pitch, make_lattice
from .lattice.align import MAX_ROW_REFINE, aligned_pitch, ball_grid, pin_row
from .lattice.grid import Lattice
from .lattice.portals import crossings, track_index
from .lattice.raster import nodes_inside
from .board.connectivity import pad_groups
from .parallel import at_once
from .pathfinder import NetRoute, NetTask, build_tasks, make_room, negotiate, reconnect
from .pathfinder.finishing import clear_areas, make_way, single_joins
from .pathfinder.router import NO_PATH, Best, stop_by, time_for_another
from .pathfinder.walls import MOST_NAMED, walled_in_by
from .pathfinder.nets import first_sizes, mark_conflicts, neck_tasks
from .search import make_engine
from .search.constants import STEP
from .writeback.tracks import routes_to_items
from .zones import predict as predict_fill
from .zones.fill import Copper
from .zones import (feed_starved, relief_fill, relief_room, reliefs, starting_fills, starved_keys,
                    stitch_islands)


@dataclass
class RouteResult:
    lattice: Lattice
    tasks: list[NetTask]
    routes: dict[int, NetRoute]
    tracks: list[Track]             # new items only
    vias: list[Via]
    iterations: int
    converged: bool
    backend: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stopped_early: str = ""
    search_seconds: float = 0.0     # of the "search and negotiation" stage, in the search engine
    connections: int = 0            # joins the nets needed: pad groups that copper and zone fills did not join,
                                    # and those the new copper made needed by cutting a fill apart
    missing: dict[int, int] = field(default_factory=dict)   # net -> joins still missing at the end
    rois_per_launch: float = 0.0    # mean searches per engine call
    nets_to_route: int = 0          # nets with a join to make (counted as `connections` is)
    cut_short: str = ""             # what stopped the run before it was done (time limit, a signal), if anything
    fills_before: list = field(default_factory=list)   # the fills thermal reliefs are judged on (relief_fill),
                                                       # without the new copper
    fills: list = field(default_factory=list)          # and with it (zones.predict), for the check to take over
    relief_fills: list | None = None                   # relief_fill with the new copper, where finishing made it
    apart: dict[int, list[str]] = field(default_factory=dict)   # net -> apart_pads at the end
    net_names: dict[int, str] = field(default_factory=dict)     # the board's, for the report
    walls_found: dict = field(default_factory=dict, repr=False)  # (net, reason) -> walls(): the report asks twice

    def failed_nets(self) -> dict[str, str]:
        """Net name -> reason, for every net with a connection left unrouted: the newest reason routing gave that
        names a pad still apart (a net's early failures may have been joined since, by finishing or a fill)."""
        names = {t.net: t.name for t in self.tasks}
        out = {}
        for net in self.missing:
            route = self.routes.get(net)
            apart = self.apart.get(net, [])
            named = [why for why in reversed(route.failed if route is not None else [])
                     if set(re.split(r"[\s/]", why)) & set(apart)]
            if named:
                reason = named[0] + self.walls(net, named[0])
            elif self.cut_short:
                reason = f"{self.cut_short}: stopped before reaching it"
            else:
                shown = ", ".join(apart[:4]) + (" ..." if len(apart) > 4 else "")
                reason = f"{'pad' if len(apart) == 1 else 'pads'} {shown} left apart from the rest of the net"
            out[names.get(net, str(net))] = reason
        return out

    def walls(self, net: int, reason: str) -> str:
        """What a "no path to pad" reason of the net adds: the nets whose routes wall its pad in (pathfinder.walls),
        as " (walled in by A, B)"; "" for other reasons, or where the pad is not walled in nearby."""
        if not reason.startswith(NO_PATH):
            return ""
        if (net, reason) not in self.walls_found:
            pads = reason[len(NO_PATH):]
            found = [(t, i) for t in self.tasks if t.net == net
                     for i, pin in enumerate(t.pins) if pin.names == pads]
            nets = [net_label(self.net_names.get(n, str(n)))
                    for n in (walled_in_by(*found[-1], self.routes, self.lattice) if found else [])]
            more = " ..." if len(nets) > MOST_NAMED else ""
            self.walls_found[net, reason] = f" (walled in by {', '.join(nets[:MOST_NAMED])}{more})" if nets else ""
        return self.walls_found[net, reason]

    @property
    def routed_connections(self) -> int:
        return self.connections - sum(self.missing.values())

    @property
    def routed_nets(self) -> int:
        return self.nets_to_route - len(self.missing)


def apart_pads(board: Board, groups: list[list[int]]) -> list[str]:
    """The names of a net's pads outside its largest group of joined pads; all of them where no group is largest."""
    sizes = sorted(len(g) for g in groups)
    rest = [g for g in groups if len(g) < sizes[-1] or sizes[-1] == sizes[-2]]
    return [board.pads[i].name for g in rest for i in g]


def auto_pitch(rules: DesignRules, config: RouterConfig) -> float:
    """Half the sum of the narrowest track and the largest clearance (and the margin): nets of the narrowest class
    can then run on every other lattice line, at exactly their spacing. Unless config.sizes is "class", the narrowest
    is the board's minimum width."""
    narrowest = min(c.track_width for c in rules.classes.values())
    if config.sizes != "class" and rules.min_track_width:
        narrowest = min(narrowest, rules.min_track_width)
    return (narrowest + rules.max_clearance + config.clearance_margin) / 2


def board_lattice(board: Board, rules: DesignRules, config: RouterConfig) -> Lattice:
    """The lattice routing uses: at config.pitch; or at the automatic pitch, made to divide the pitch of the board's
    largest ball grid with lines through the channels between its balls (lattice.align) where the narrowest track
    the board allows needs them to pass, else (config.pin_lattice) the pitch of its finest row of pins with lines on
    their axes where a track needs them to leave a pin straight; unless the lattice must grow coarser to fit."""
    bounds, layers = board.outline.bounds, board.copper_layers
    if config.pitch:
        return make_lattice(bounds, layers, config.pitch)
    pitch = auto_pitch(rules, config)
    grid = ball_grid(board.pads)
    thinnest = min(w for w in (*(c.track_width for c in rules.classes.values()), rules.min_track_width,
                               rules.small_track) if w > 0)
    if grid is not None and grid.needs_lines(thinnest, rules.max_clearance, pitch):
        aligned = aligned_pitch(pitch, grid.pitch)
        if aligned and choose_pitch(bounds, len(layers), aligned, config) == aligned:
            return make_lattice(bounds, layers, aligned, (grid.x, grid.y))
    row = pin_row(board.pads) if config.pin_lattice else None
    # the narrowest class's clearance: a fine row's pins are mostly signals (a power pin's wider one only makes its
    # band narrower still)
    if row is not None and row.needs_lines(thinnest, min(c.clearance for c in rules.classes.values()), pitch):
        aligned = aligned_pitch(pitch, row.pitch, MAX_ROW_REFINE)
        if aligned and choose_pitch(bounds, len(layers), aligned, config) == aligned:
            return make_lattice(bounds, layers, aligned, (row.x, row.y))
    return make_lattice(bounds, layers, choose_pitch(bounds, len(layers), pitch, config))


# Of --time-limit, what follows routing is kept for it (the check and the write, with their fill predictions): this
# many of the board's fill predictions at set-up (k8_tinytapeout_demo: 10 s after routing's end, 1.1 s a prediction;
# c6_teres_a64 37 s, 4.6 s), and no less and no more than these shares of the limit. A fixed quarter, as before, left
# most boards short of joins 40 to 85 s of their 300 unused (benchmarks/CORPUS.md, 2026-12-08).
AFTER_FILLS = 10
AFTER_SHARE = (0.1, 0.25)
# Of --time-limit, the share negotiation's iterations may take (counted from the start of the run): what follows them
# (the repair of the connections dropped, make_room, the finishing rounds) needs the rest, up to routing's end. A
# board cut off mid-negotiation without that time loses every connection still in conflict. These two stay shares
# of the limit, so that the time routing gains where what follows it is quick goes to finishing: the boards short
# of joins negotiate on a plateau by then (k8_glasgow_revc3 on the CPU: 70-79 nets in conflict from its 11th
# iteration to its 18th), while finishing got 1-2 s (benchmarks/CORPUS.md, 2026-12-08).
NEGOTIATION_SHARE = 0.7
# ... and the share by which make_room stops (at once where negotiation ran past it): on a board that does not
# converge it would take every second left, and the finishing rounds after it (the joins the fills lose, the
# smallest sizes, the thermal reliefs) none, though they join more per second there (benchmarks/CORPUS.md).
ROOM_SHARE = 0.6

# Where routing has a deadline, the join rounds (and the detail joins) end while the relief stage after them still
# has the time of this many fill predictions (as long as the longest the rounds made) before it: that stage predicts
# the fills once more, and three times with stitching vias (c6_teres_a64, whose prediction takes 12 s: its rounds ran
# 38 s past the deadline, and its reliefs were fed without stitching vias).
RELIEF_FILLS = 4
# ... and negotiation (make_room too) ends earlier by the time of this many predictions of the board's fills as they
# were at set-up (a routed board's take two or three times as long): the repair, the join rounds' first prediction and
# the reliefs' need it (c6_teres_a64, 4.6 s at set-up: its repair ended past routing's deadline, and so did its
# reliefs' feeding, without stitching vias).
FINISH_FILLS = 6


def routing_seconds(config, fill_seconds: float) -> float | None:
    """Of config.time_limit, the seconds routing may take (None: no limit): the rest is what follows it (AFTER_FILLS
    of the board's fill predictions at set-up, fill_seconds each, within AFTER_SHARE of the limit)."""
    if not config.time_limit:
        return None
    low, high = AFTER_SHARE
    return config.time_limit - min(max(AFTER_FILLS * fill_seconds, low * config.time_limit), high * config.time_limit)


def share_ends(started: float, config, share: float, less: float = 0.0) -> float | None:
    """The time.monotonic() by which `share` of config.time_limit, counted from started, is spent, `less` seconds
    earlier (None: no limit)."""
    return started + share * config.time_limit - less if config.time_limit else None


def routing_ends(started: float, config, fill_seconds: float) -> float | None:
    """The time.monotonic() by which routing ends (routing_seconds from started; None: no limit), and route's
    should_stop says "time limit"."""
    seconds = routing_seconds(config, fill_seconds)
    return None if seconds is None else started + seconds


# Rounds of joining what is still apart once negotiation is over. A join can cut another net's fill (two zones
# that share a layer), which the next round joins again: rounds go on while the joins still missing fall, and stop
# after FINISH_STALL rounds without a new low.
FINISH_ROUNDS = 8
FINISH_STALL = 2
# Without a time limit, the detail joins stop after this many nets in a row joined nothing: a search on the fine grid
# that finds no way visits up to a million points in Python (seconds): c4_esp32p4_devkit, 39 joins short, spent more
# than 200 s there (benchmarks/CORPUS.md, 2026-11-28). With a time limit, the limit ends them.
DETAIL_STALL = 8
# Times the nets a detail join parts (its new copper cuts their fill) are joined again before it is judged
MEND_ROUNDS = 2
# Levels of ways through further nets' copper that the nets a detail join moves may take on their way back
THROUGH_DEPTH = 1

# Where joins are still missing once finished, routing starts over with the next of these changes to the settings (a
# number: a factor on the config field; a string or a switch: its value; best_attempt). Which costs settle a congested
# board differs from board to board, and none settles every board (benchmarks/CORPUS.md, 2026-11-26 evening: on seven
# boards left one to six joins short, cheaper vias with more history joined libresolar and framework_mcu, a slower
# present-cost growth gave icepi's and dxwifi's best, cheaper vias still esp32c5's; a lattice of three quarters the
# pitch joined usb_tester, whose USB-C escapes then fit between its lines). First the change that joined the most; then
# the nets' own class sizes on the lattice they ask for (kit-dev's negotiation, which compact sizes leave one join
# short, settles in a minute so; first, it cost framework_mcu the retry that joins it within --time-limit 300:
# 2026-11-27 dusk); last the change that costs the most. Before them all, where the board has a row of pins whose
# straight escapes need lines the first lattice may not have, the lattice laid on their axes (pin_lattice): it routed
# usb_tester whole in one attempt of 11 iterations, where its own lattice took eight attempts; made the first attempt,
# it also gave dxwifi one join more but starved two reliefs of teres_keyboard that were fed before (2026-11-29); with
# those reliefs seen, it still left more apart on tinytapeout (KiCad: 13, against 9) and rp2350 (59, against 48), so
# it is a retry: a board that routes whole on its own lattice never meets it.
# Last, escapes (escapes.py): they joined more on six of the eight boards short of joins and fewer on five that were
# whole (2026-12-07, fifth session), so only a board that no other change makes whole meets them; run side by side
# (jobs.py), every board that is not whole on its first attempt does.
RETRIES = ({"pin_lattice": True}, {"via_cost": 0.5, "hist_fac": 2.5}, {"sizes": "class"}, {"pres_fac_mult": 1.25},
           {"via_cost": 0.25}, {"wrong_way_cost": 2 / 3}, {"via_cost": 0.5}, {"pitch": 0.75}, {"escape_length": 0.5})
# The fields a retry sets to its value rather than multiplies (besides strings and switches)
SET_TO = {"escape_length"}


class Joined(NamedTuple):
    """What finishing ends with: the tasks (the joining ones added), the new tracks and vias, the zone fills
    predicted with them, the pad groups each net ends with, and the fills thermal reliefs are judged on with them
    (zones.relief_fill; None where finishing was stopped before making them)."""
    tasks: list
    tracks: list
    vias: list
    fills: list
    groups: dict
    relief_fills: list | None


def finish(board, rules, profiles, lattice, config, scope, tasks, outcome, starved_before=frozenset(),
           fills_before=(), report=lambda event: None, until: float | None = None) -> Joined:
    """join_rounds, then once more if some thermal relief is left short that no stub could feed: the nets whose
    copper crowds it move away (clear_areas), and the result with fewer joins missing, then fewer reliefs short, is
    kept. until: the time.monotonic() by which routing ends (None: no limit)."""
    first = join_rounds(board, rules, profiles, lattice, config, scope, tasks, outcome, starved_before, report,
                        until=until)
    if outcome.context.should_stop():
        return first
    short = short_reliefs(board, rules, first, starved_before)
    if not short:
        return first
    kept = {net: NetRoute(list(r.connections), list(r.failed)) for net, r in outcome.routes.items()}
    report({"stage": "clearing reliefs", "reliefs": len(short)})
    if not clear_areas(outcome, relief_areas(board, lattice, short, fills_before)):
        return first
    second = join_rounds(board, rules, profiles, lattice, config, scope, first.tasks, outcome, starved_before,
                         report, previous=first, until=until)
    if ((missing_joins(second.groups, scope), len(short_reliefs(board, rules, second, starved_before)))
            < (missing_joins(first.groups, scope), len(short))):
        return second
    outcome.routes.clear()
    outcome.routes.update(kept)
    return first


def missing_joins(groups: dict[int, list], scope: set[int]) -> int:
    return sum(len(g) - 1 for net, g in groups.items() if net in scope)


def short_reliefs(board, rules, finished: Joined, starved_before) -> list:
    """The reliefs a join_rounds result leaves short that the board did not come with."""
    fills = finished.relief_fills
    if fills is None:
        fills = relief_fill(board, rules, finished.tracks, finished.vias)
    return [r for r in reliefs(board, rules, fills, finished.tracks, finished.vias)
            if r.short and (r.pad, r.layer, r.zone) not in starved_before]


def relief_areas(board, lattice, short, fills_before) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Each short relief's room (zones.relief_room) on the lattice: the nodes of its layer and the via sites inside
    it, both sorted flat indices, and the pad's net it is kept for."""
    which, sites = nodes_inside(lattice, [relief_room(board, r, fills_before) for r in short])
    areas = []
    for k, r in enumerate(short):
        inside = np.unique(sites[which == k])
        areas.append((inside + board.copper_layers.index(r.layer) * lattice.plane, inside, board.pads[r.pad].net))
    return areas


def join_rounds(board, rules, profiles, lattice, config, scope, tasks, outcome, starved_before=frozenset(),
                report=lambda event: None, previous: Joined | None = None, until: float | None = None):
    """Join what negotiation left apart: connections it dropped, and pads that the zone fills no longer join once
    the new tracks cut them (KiCad's refill predicted with them). Each round searches the missing joins with every
    other net as a wall (strict: whatever is found is legal); the first at the nets' own sizes, the later ones with
    the board's smallest track and via, which fit where the class sizes do not. Last, thermal reliefs the new
    copper starved get a stub into their fill (zones.feed_starved). Returns them as Joined. previous: what an
    earlier call ended with, whose fills are predicted again only where the copper has changed since. until: the
    time.monotonic() by which routing ends: the joining stops while the reliefs still have RELIEF_FILLS fill
    predictions' time before it, and stitching vias are added only before it."""
    tasks = list(tasks)
    hole_gap = rules.hole_to_hole + config.clearance_margin
    fewest, stalled = None, 0
    tried = set()                 # the joins a way was made for already: a later round would only try them again
    seen: dict = {}               # the round's copper states (by their items) -> their fills and pad groups
    # the (tracks, vias, fills) predicted last: the next state is predicted from it
    last = None if previous is None else (previous.tracks, previous.vias, previous.fills)
    items_memo: dict = {}         # each net's items, while its connections stay (routes_to_items)
    stop = outcome.context.should_stop
    fill_seconds = 0.0            # the longest fill prediction so far

    def out_of_time() -> str:
        """stop's answer, or "time limit" once the reliefs would no longer have their time before until."""
        why = stop()
        if why or until is None:
            return why
        return "time limit" if time.monotonic() + RELIEF_FILLS * fill_seconds > until else ""

    def items_now():
        """The new tracks and vias as the routes stand."""
        return routes_to_items(lattice, tasks, outcome.routes, hole_gap, items_memo, config.chamfer)

    def copper_now(forget_others: bool = False):
        """The new tracks and vias as the routes stand, the zone fills predicted with them and each net's pad
        groups. A state met before in this round (the ways tried come back to it when undone, and the next round
        starts on the last one) is not predicted again, and a new one only where its items differ from the last
        state's (predict's since): the fill is finishing's main cost."""
        nonlocal seen, last, fill_seconds
        tracks, vias = items_now()
        key = (tuple(tracks), tuple(vias))
        if key not in seen:
            pieces = []
            if board.zones:
                t0 = time.monotonic()
                since = None if last is None else (last[2], changed_items(last[0], last[1], tracks, vias))
                pieces = predict_fill(board, rules, tracks, vias, since=since)
                fill_seconds = max(fill_seconds, time.monotonic() - t0)
            last = tracks, vias, pieces
            seen[key] = pieces, pad_groups(board, tracks, vias, pieces)
        if forget_others:
            seen = {key: seen[key]}
        return (tracks, vias) + seen[key]

    def apart_in(groups) -> set[str]:
        return {board.net_name(net) for net, g in groups.items() if len(g) > 1 and net in scope}

    def now() -> tuple[int, set[str]]:
        """The joins missing and the nets apart, as the routes stand."""
        groups = copper_now()[3]
        return missing_joins(groups, scope), apart_in(groups)

    def rejoin(names: set[str]) -> list:
        """Search the joins these nets miss, with every other net as a wall (the round's joins, and those a net lost
        stepping aside for a way); returns the tasks of which nothing could be joined."""
        tracks, vias, pieces, _ = copper_now()
        extra = build_tasks(board, rules, profiles, lattice, config, names, tracks=tracks, vias=vias, pieces=pieces,
                            smallest=round_ > 0)
        failed = reconnect(extra, outcome)
        tasks.extend(extra)
        return failed

    def stubs_clear(net: int, before: list) -> bool:
        """Whether the stubs of the net's connections not in `before` (those a way was just made for) keep clear of
        every other net's tracks as they now stand: the nets that stepped aside did so on the lattice, which does not
        see stubs exactly."""
        new = [c for c in outcome.routes[net].connections if all(c is not b for b in before)]
        stubs = [(s, c.size) for c in new for s in c.stubs]
        if not stubs:
            return True
        return not any(crossings([s.points for s, _ in stubs], [s.layer for s, _ in stubs], net,
                                 [size.track_width for _, size in stubs], track_index(items_now()[0], lattice),
                                 rules.max_clearance))

    outcome.context.should_stop = out_of_time
    try:
        for round_ in range(FINISH_ROUNDS + 1):
            tracks, vias, pieces, groups = copper_now(forget_others=True)
            apart = apart_in(groups)
            missing = missing_joins(groups, scope)
            fewest, stalled = (missing, 0) if fewest is None or missing < fewest else (fewest, stalled + 1)
            stopping = outcome.context.should_stop()
            report({"stage": "joining", "round": round_ + 1, "missing": missing})
            if not apart or round_ == FINISH_ROUNDS or stalled >= FINISH_STALL or stopping:
                # the reliefs are fed even when time is up (a starved relief is a DRC error): with stubs, which cost
                # little, and with stitching vias, which cut every plane they pass (three fill predictions), only
                # before routing's deadline
                relief = None
                if pieces:
                    since = None if previous is None or previous.relief_fills is None else \
                        (previous.relief_fills, changed_items(previous.tracks, previous.vias, tracks, vias))
                    relief = relief_fill(board, rules, tracks, vias, since=since)
                finished = Joined(tasks, tracks, vias, pieces, groups, relief)
                if apart and not stopping:
                    report({"stage": "detail joins"})
                    finished = detail_joins(board, rules, config, scope, starved_before, finished,
                                            outcome.context.should_stop)
                if relief is None:
                    return finished
                report({"stage": "thermal reliefs"})
                return feed_reliefs(board, rules, config, scope, starved_before, finished, not stop())
            failed = rejoin(apart)
            if failed:
                make_ways(failed, outcome, now, tried, rejoin, stubs_clear)
    finally:
        outcome.context.should_stop = stop


def detail_joins(board, rules, config, scope, starved_before, joined: Joined, should_stop) -> Joined:
    """The nets still apart once the join rounds are done, joined in exact geometry on a fine grid (detail), else
    through other nets' new copper, which then moves (join_through): each join kept where the board then misses
    fewer joins and starves no more thermal reliefs. In passes: first the nets moved find their way back in free
    room, then (for the nets still apart) also through a further net's copper (THROUGH_DEPTH), which costs more
    where it finds nothing (c4_pico_ice's /ICE_28: 14 -> 47-61 s) and moves more copper. Without a time limit, a pass
    stops after DETAIL_STALL nets in a row that joined nothing. The passes are made again while they join more: the
    copper a join moved opens ways for others (k8_glasgow_revc3: 14 -> 3 missing, then 2)."""
    starved, copper = None, None
    while True:
        joined, starved, copper, gained = detail_pass(board, rules, config, scope, starved_before, joined,
                                                      should_stop, starved, copper)
        if not gained or should_stop():
            return joined


def detail_pass(board, rules, config, scope, starved_before, joined: Joined, should_stop, starved, copper):
    """detail_joins' passes (in free room, then through further nets) once over the nets apart: what they end with
    (the joins, the reliefs starved and the copper, which the next round starts from), and whether they joined
    anything."""
    first = missing_joins(joined.groups, scope)
    for deeper in range(THROUGH_DEPTH + 1):
        fruitless = 0
        for net in sorted(n for n, g in joined.groups.items() if n in scope and len(g) > 1):
            if (not config.time_limit and fruitless >= DETAIL_STALL) or should_stop():
                break
            before = missing_joins(joined.groups, scope)
            while not should_stop():
                copper = copper or Copper(board, rules, joined.tracks, joined.vias)
                found = join_apart(board, rules, net, joined.tracks, joined.vias, joined.fills,
                                   config.clearance_margin, should_stop, copper, deeper=deeper)
                if found is None:
                    break
                tracks, vias = found
                if joined.relief_fills is None:         # no fills to predict again
                    trial = joined._replace(tracks=tracks, vias=vias,
                                            groups=pad_groups(board, tracks, vias, joined.fills))
                else:
                    trial = fills_mended(board, rules, config, scope, joined,
                                         with_copper(board, rules, joined, tracks, vias), should_stop, net)
                if missing_joins(trial.groups, scope) >= missing_joins(joined.groups, scope):
                    break
                if joined.relief_fills is not None:
                    if starved is None:
                        starved = starved_count(board, rules, joined, starved_before)
                    now = starved_count(board, rules, trial, starved_before)
                    if now > starved:
                        break
                    starved = now
                joined, copper = trial, None
            fruitless = 0 if missing_joins(joined.groups, scope) < before else fruitless + 1
    return joined, starved, copper, missing_joins(joined.groups, scope) < first


def fills_mended(board, rules, config, scope, before: Joined, trial: Joined, should_stop, joining: int) -> Joined:
    """The trial with the nets it parts joined again: a way through other nets' copper moves them, and their new
    copper can cut a fill apart, which only the fills predicted again show (c4_buspirate6's SPI_CLK, joined through
    GND, BUFIO7 and SPI_CDO in a 5 mm window: their new tracks parted a GND fill). Each is joined in the fine grid's
    free room, else through other nets' copper, the net the trial joins (joining) kept where it is (c4_esp32c5's
    GND, parted in three places by the nets /USB_DN's way moved), once for each group more than before. Up to
    MEND_ROUNDS times, while some net is apart in more groups than before."""
    for _ in range(MEND_ROUNDS):
        parted = [net for net, g in sorted(trial.groups.items())
                  if net in scope and len(g) > len(before.groups.get(net, ())) and len(g) > 1]
        if not parted or should_stop():
            break
        for net in parted:
            for _ in range(len(trial.groups[net]) - len(before.groups.get(net, ()))):
                found = join_apart(board, rules, net, trial.tracks, trial.vias, trial.fills,
                                   config.clearance_margin, should_stop, keep=frozenset({joining}))
                if found is None:
                    return trial
                trial = with_copper(board, rules, trial, *found)
    return trial


def feed_reliefs(board, rules, config, scope, starved_before, joined: Joined, stitch: bool = True) -> Joined:
    """The thermal reliefs the new copper starved, fed: stubs of their nets into the fill (zones.feed_starved), then
    (if stitch) stitching vias into the islands their spokes reach (zones.stitch_islands) and stubs to them, kept
    only where the board then misses no more joins and has fewer reliefs starved (a via of one net cuts the fills
    of other zones on the layers it passes)."""
    margin = config.clearance_margin
    stubs = feed_starved(board, rules, joined.relief_fills, joined.tracks, joined.vias, margin, starved_before)
    if stubs:
        joined = with_copper(board, rules, joined, joined.tracks + stubs, joined.vias)
    if not stitch:
        return joined
    stitches = stitch_islands(board, rules, joined.relief_fills, joined.tracks, joined.vias, margin, starved_before)
    if not stitches:
        return joined
    stitched = with_copper(board, rules, joined, joined.tracks, joined.vias + stitches)
    # a via alone may leave an SMD pad's island single (KiCad counts the via, not the pad): a stub joins them
    stubs = feed_starved(board, rules, stitched.relief_fills, stitched.tracks, stitched.vias, margin, starved_before)
    if stubs:
        stitched = with_copper(board, rules, stitched, stitched.tracks + stubs, stitched.vias)
    if (missing_joins(stitched.groups, scope) <= missing_joins(joined.groups, scope)
            and starved_count(board, rules, stitched, starved_before) < starved_count(board, rules, joined,
                                                                                   starved_before)):
        return stitched
    return joined


def starved_count(board, rules, joined: Joined, starved_before) -> int:
    """The reliefs KiCad will find starved that the board did not come with."""
    return len(starved_keys(reliefs(board, rules, joined.relief_fills, joined.tracks, joined.vias)) - starved_before)


def with_copper(board, rules, joined: Joined, tracks, vias) -> Joined:
    """joined with these tracks and vias, its fills and pad groups predicted again: the fills that the items added
    or taken away reach, the others as they were."""
    changed = changed_items(joined.tracks, joined.vias, tracks, vias)
    pieces, relief = at_once(partial(predict_fill, board, rules, tracks, vias, since=(joined.fills, changed)),
                             partial(relief_fill, board, rules, tracks, vias, since=(joined.relief_fills, changed)))
    return joined._replace(tracks=tracks, vias=vias, fills=pieces, groups=pad_groups(board, tracks, vias, pieces),
                           relief_fills=relief)


def changed_items(tracks, vias, new_tracks, new_vias) -> list:
    """The tracks and vias added or taken away between two sets of items (for predict's since)."""
    return list(set(tracks) ^ set(new_tracks)) + list(set(vias) ^ set(new_vias))


def make_ways(failed: list, outcome, now, tried: set, rejoin, stubs_clear) -> None:
    """Each task that found no legal way makes one through the few nets in its way (finishing.make_way): all its
    joins at once, else one at a time. A way is kept only when the board, zone fills included, then misses no more
    joins (now(): the joins missing and the nets apart): the nets that step aside can cut a plane's fill elsewhere,
    which make_way does not see, and give up late joins that the new way crosses: the nets left apart so are joined
    again (rejoin(names)) before the way is judged; and only when the stubs of its new joins keep clear of the
    tracks as they end (stubs_clear(net, its connections before)). tried: the joins already tried (net, sizes and
    pads), each tried once: a way costs a local negotiation."""
    fewest, apart = None, set()

    def made(task) -> bool:
        nonlocal fewest, apart
        key = (task.net, task.rules, tuple(tuple(pad.name for pad in pin.pads) for pin in task.pins))
        if outcome.context.should_stop():
            return True
        if key in tried:
            return False
        tried.add(key)
        if fewest is None:
            fewest, apart = now()
        before = Best()
        before.offer(outcome.routes)
        if not make_way(task, outcome):          # undone: the board is as it was
            return False
        if not stubs_clear(task.net, before.routes.get(task.net, NetRoute()).connections):
            before.restore(outcome.routes, outcome.context.occ)
            return False
        missing, apart_after = now()
        if missing > fewest and apart_after - apart:
            rejoin(apart_after - apart)
            missing, apart_after = now()
        if missing <= fewest:
            fewest, apart = missing, apart_after
            return True
        before.restore(outcome.routes, outcome.context.occ)
        return False
    for t in failed:
        if not made(t) and t.connections > 1:
            for one in single_joins(t):
                made(one)


def settle(tasks, board, rules, profiles, lattice, engine, config, report, should_stop, started: float,
           fill_seconds: float = 0.0):
    """Negotiation, then make_room for the nets it leaves short. Where connections are still missing and the time
    left allows another as long, negotiation starts over with config.hist_fac_again: which history schedule settles
    a congested board differs from board to board (benchmarks/CORPUS.md), and the outcome that joins more is kept.
    fill_seconds: how long the board's zone fills took to predict at set-up; negotiation and make_room end
    FINISH_FILLS times that earlier, the time finishing's fill predictions take."""
    reserve = FINISH_FILLS * fill_seconds
    until = share_ends(started, config, NEGOTIATION_SHARE, reserve)
    room_until = share_ends(started, config, ROOM_SHARE, reserve)

    def attempt(hist_fac: float):
        run_config = replace(config, hist_fac=hist_fac)
        neck = partial(neck_tasks, board=board, rules=rules, profiles=profiles, lattice=lattice, config=run_config)
        outcome = negotiate(tasks, lattice, rules, engine, run_config, report, should_stop, neck, until)
        make_room(outcome, report, room_until)
        return outcome
    t0 = time.monotonic()
    first = attempt(config.hist_fac)
    missing = short_of(first)
    # the same schedule again would negotiate the same routes (the first retry's history is hist_fac_again's)
    if (not config.hist_fac_again or config.hist_fac_again == config.hist_fac or not missing or should_stop()
            or not time_for_another(t0, room_until)):
        return first
    mark_conflicts(tasks, lattice)          # the first run's necks marked its tasks' portals against theirs
    report({"stage": "again", "missing": missing})
    second = attempt(config.hist_fac_again)
    return second if joined(second) > joined(first) else first


def joined(outcome) -> int:
    return sum(len(r.connections) for r in outcome.routes.values())


def short_of(outcome) -> int:
    """The connections an outcome leaves unjoined."""
    return sum(len(t.pins) - 1 for t in outcome.tasks) - joined(outcome)


def attempts(config: RouterConfig, pitch: float):
    """The settings of each attempt at routing the board: the user's, then each of RETRIES applied to them (a
    "pitch" factor to the pitch of the first attempt's lattice). Sizes the user chose are kept: the retry at the
    classes' own sizes only replaces the default, compact; the pins' lattice and escapes are retried only where the
    user did not ask for them."""
    yield config
    for change in RETRIES[:config.retries]:
        if (("sizes" in change and config.sizes != "compact") or ("pin_lattice" in change and config.pin_lattice)
                or ("escape_length" in change and config.escape_length)):
            continue
        yield replace(config, **{key: value if isinstance(value, (str, bool)) or key in SET_TO else
                                 round((pitch if key == "pitch" else getattr(config, key)) * value, 6)
                                 for key, value in change.items()})


def changed(variant: RouterConfig, config: RouterConfig) -> str:
    """What a retry's settings change, for the report ("" where none)."""
    return ", ".join(f"{f.name} {getattr(variant, f.name)}" for f in fields(variant)
                     if getattr(variant, f.name) != getattr(config, f.name))


def same_lattice(board, rules, variant: RouterConfig, config: RouterConfig, first: Lattice) -> bool:
    """Whether the variant asks for the pins' lattice where the board has no row of pins that asks for other lines
    than the first attempt's: an attempt with it would route the board as the first did."""
    return variant.pin_lattice != config.pin_lattice and board_lattice(board, rules, variant) == first


class Attempt(NamedTuple):
    outcome: object         # settle's Negotiation
    finished: Joined
    cut_short: str          # what stopped it before it was done, if anything
    lattice: Lattice
    board: Board            # the board as this attempt routed it: with its escapes, if any
    escapes: list           # those escapes, to be cut back to what the routes reach
    note: str = ""          # for the report, where several attempts were made: which one was kept, with what


def best_attempt(board, escapes, rules, config, nets, engine, ready: SetUp, starved_before, timings, report,
                 should_stop, started: float) -> Attempt:
    """Negotiation and finishing (settle, finish), then again with the settings of each retry (attempts) while joins
    are missing or thermal reliefs starved (as KiCad counts them: c2_teres_keyboard's TQFP, whose GND pin the
    first attempt left one spoke and nothing could feed, is whole on the next) and the time limit allows one as long
    as the longest so far before ROOM_SHARE of it. Returns the attempt that misses the fewest joins, then starves
    the fewest reliefs, then leaves the fewest short (the first of equals); adds the seconds of its stages to
    timings. escapes: the board's own (config.escape_length), already on it."""
    scope, done, changes, longest = ready.scope, [], [], 0.0    # changes: each attempt's to the settings, said
    flaws: list[list[int]] = []         # each attempt's joins missing, then (once asked for) reliefs starved and short

    def flaw(k: int) -> tuple[int, int, int]:
        if len(flaws[k]) == 1:
            short = short_reliefs(done[k].board, rules, done[k].finished, starved_before)
            flaws[k] += [sum(r.starved for r in short), len(short)]
        return tuple(flaws[k])

    first, alone, base = ready, False, (board, escapes)
    # routing's end, as route's should_stop has it: from the first set-up's fills (an attempt with escapes sets up
    # again and measures its own)
    until = routing_ends(started, config, first.fill_seconds)
    for variant in attempts(config, first.lattice.pitch):
        t_start = time.monotonic()
        if alone:                       # the next retries are made on the first attempt's lattice and board
            (ready, alone), (board, escapes) = (first, False), base
        if done:
            if should_stop() or (config.time_limit and t_start + longest > share_ends(started, config, ROOM_SHARE)):
                break
            missing = min(f[0] for f in flaws)
            starved = 0 if missing else min(flaw(k)[1] for k in range(len(done)) if not flaws[k][0])
            if not (missing or starved):
                break
            if same_lattice(board, rules, variant, config, first.lattice):
                continue                                # no row of pins asks for other lines: nothing new to try
            with_escapes = variant.escape_length != config.escape_length
            if with_escapes:
                led_out = escaped(board, rules, variant.escape_length)
                if not led_out[1]:
                    continue                            # no fine-pitch row: nothing new to try
            report({"stage": "retry", "attempt": len(done) + 1, "missing": missing, "starved": starved})
            if with_escapes:                                   # the board with its escapes, for this attempt alone
                (board, escapes), alone = led_out, True
                ready = set_up(board, rules, variant, nets, report)
            elif variant.pin_lattice != config.pin_lattice:    # the pins' lattice, for this attempt alone
                ready, alone = set_up(board, rules, variant, nets, report, like=ready), True
            elif (variant.pitch, variant.sizes) != (config.pitch, config.sizes):     # another lattice: set up again
                ready = set_up(board, rules, variant, nets, report, like=ready)
            else:
                ready = replace(ready, tasks=build_tasks(board, rules, ready.profiles, ready.lattice, variant, nets,
                                                         pieces=ready.pieces))
        outcome = settle(ready.tasks, board, rules, ready.profiles, ready.lattice, engine, variant, report,
                         should_stop, started, ready.fill_seconds)
        t0 = time.monotonic()
        finished = finish(board, rules, ready.profiles, ready.lattice, variant, scope, outcome.tasks, outcome,
                          starved_before, ready.relief_fills, report, until)
        done.append(Attempt(outcome, finished, should_stop(), ready.lattice, board, escapes))
        flaws.append([missing_joins(finished.groups, scope)])
        changes.append(changed(variant, config))
        timings["search and negotiation"] = timings.get("search and negotiation", 0.0) + t0 - t_start
        timings["finishing"] = timings.get("finishing", 0.0) + time.monotonic() - t0
        longest = max(longest, time.monotonic() - t_start)
    if len(done) == 1:
        return done[0]
    k = min(range(len(done)), key=flaw)
    return done[k]._replace(note=f"joins were missing or reliefs starved: {len(done)} attempts made, attempt {k + 1} "
                                 f"({changes[k] or 'the settings given'}) kept")


def make_search_engine(config: RouterConfig):
    """(engine, note): the engine config.backend asks for; raises EngineUnavailable for a GPU that is not there."""
    return make_engine(config.backend, int(config.delta * STEP))


@dataclass
class SetUp:
    """What the search starts from: the lattice, the predicted zone fills (for the joins they make, and for thermal
    reliefs), the obstacle profiles, the tasks, and the pad groups of each net in scope (how many joins it needs)."""
    lattice: Lattice
    pieces: list
    relief_fills: list
    profiles: object            # lattice.Obstacles
    tasks: list[NetTask]
    scope: set[int]
    apart: dict[int, int]       # net -> pad groups before routing
    timings: dict[str, float]   # "lattice" and "pins and MST", seconds
    guards: list = field(default_factory=list)   # zones.spoke_guards of relief_fills
    fill_seconds: float = 0.0   # how long the fills took to predict (finishing predicts them again: settle)


def set_up(board: Board, rules: DesignRules, config: RouterConfig, nets: set[str] | None = None,
           report=lambda event: None, like: SetUp | None = None) -> SetUp:
    """The stages before the first search: lattice and obstacles, then pins, portals and MST order. like: a set-up
    of the board on another lattice, whose zone fills and spoke guards (none of them depends on the lattice) are
    taken over rather than predicted again."""
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    lattice = board_lattice(board, rules, config)
    report({"stage": "lattice", "shape": lattice.shape, "pitch": lattice.pitch})
    if like is None:
        t1 = time.monotonic()
        pieces, relief_fills, guards = starting_fills(board, rules)
        fill_seconds = time.monotonic() - t1
    else:
        pieces, relief_fills, guards, fill_seconds = like.pieces, like.relief_fills, like.guards, like.fill_seconds
    profiles = build_obstacles(board, rules, lattice, config.clearance_margin, guards)
    # rasterise the sizes the nets try first now, so that the lattice stage owns its time
    profiles.prepare({first_sizes(rules.for_net(n.number), rules, config) for n in board.nets if n.number})
    timings["lattice"] = time.monotonic() - t0
    t0 = time.monotonic()
    tasks = build_tasks(board, rules, profiles, lattice, config, nets, pieces=pieces)
    scope = {net for net, name in board.net_names.items() if net and (nets is None or name in nets)}
    apart = {net: len(g) for net, g in pad_groups(board, pieces=pieces).items() if net in scope}
    timings["pins and MST"] = time.monotonic() - t0
    return SetUp(lattice, pieces, relief_fills, profiles, tasks, scope, apart, timings, guards, fill_seconds)


def route(board: Board, rules: DesignRules, config: RouterConfig, on_progress=None, nets: set[str] | None = None,
          should_stop=lambda: "", engine=None, started: float | None = None) -> RouteResult:
    """engine: (engine, note) from make_search_engine, or None to make it here. started: the time.monotonic() from
    which config.time_limit counts (the CLI's, which read the board before; now where not given)."""
    report = on_progress or (lambda event: None)
    started = time.monotonic() if started is None else started
    engine, engine_note = engine or make_search_engine(config)
    # from here on, the board as routing sees it: with its escapes and the pads at their ends
    board, escapes = escaped(board, rules, config.escape_length) if config.escape_length else (board, [])
    ready = set_up(board, rules, config, nets, report)
    should_stop = stop_by(should_stop, routing_ends(started, config, ready.fill_seconds))
    scope, apart = ready.scope, ready.apart
    timings = dict(ready.timings)
    needed = sum(n - 1 for n in apart.values())
    report({"stage": "tasks", "nets": len(ready.tasks), "connections": needed})
    starved_before = starved_keys(reliefs(board, rules, ready.relief_fills), strict=True)
    outcome, finished, cut_short, lattice, board, escapes, kept = best_attempt(
        board, escapes, rules, config, nets, engine, ready, starved_before, timings, report, should_stop, started)
    tasks, tracks, vias, fills, groups, relief_fills = finished
    tracks = trimmed(escapes, tracks, vias) + list(tracks)
    engine_report = getattr(engine, "report", lambda: None)()
    notes = [n for n in (engine_note, engine_report, kept) if n] + list(dict.fromkeys(note for t in tasks
                                                                                      for note in t.notes))
    missing = {net: len(g) - 1 for net, g in groups.items() if len(g) > 1 and net in scope}
    # a fill that the new tracks cut apart makes joins that were not needed at the start: they count as needed,
    # so that routed = needed - missing is never negative and agrees with `check` on the output
    cut_apart = sum(max(0, len(g) - apart.get(net, 1)) for net, g in groups.items() if net in scope)
    nets_to_route = len({net for net, n in apart.items() if n > 1} | set(missing))
    result = RouteResult(lattice, tasks, outcome.routes, tracks, vias, outcome.iterations, outcome.converged,
                         engine.name, timings, notes, outcome.stopped_early, outcome.search_seconds,
                         needed + cut_apart, missing, outcome.context.rois / max(outcome.context.launches, 1),
                         nets_to_route, cut_short, list(ready.relief_fills), fills, relief_fills,
                         {net: apart_pads(board, groups[net]) for net in missing}, board.net_names)
    report({"stage": "done", "nets": result.routed_nets, "nets_total": nets_to_route,
            "connections": result.routed_connections, "connections_total": result.connections})
    return result
