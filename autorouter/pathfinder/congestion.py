"""Occupancy of the lattice and the footprint of a routed net, with symmetric add and remove.

A routed net covers the nodes where another net's track centre-line, or another net's via centre, may not be:
discs around its track nodes and vias (on every layer for a via), and around its pad stubs. A route is legal when
none of its track nodes and vias lies in another net's cover: occupancy 1 (its own) at each. A conflict counts when
either side's cover holds the other, so the track-over-track radius can be the net's own width plus the largest
clearance: of two nets, the wider one's radius is at least half of both widths plus the clearance.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely

from ..lattice.grid import Lattice, disc_offsets
from ..lattice.raster import chord_ends


@dataclass
class Radii:
    """Cover radii in mm for one net class: track over track, track over via, via over track, via over via."""
    track_track: float
    track_via: float
    via_track: float
    via_via: float

    @property
    def reach(self) -> float:
        """The farthest any of the covers reaches."""
        return max(self.track_track, self.track_via, self.via_track, self.via_via)


def class_radii(cls, rules, margin: float, classes=None) -> Radii:
    """The cover radii of a net of class `cls` among nets of `classes` (default: the rules' classes).

    A conflict counts when either side's cover holds the other, so a track's cover over tracks only needs to reach
    tracks no wider than its own: the wider of two covers the pair (the two half widths plus the larger of the two
    clearances). Track and via covers reach every via and track, so that the prices a search sees for placing a via
    already count the tracks near it; a via's copper keeps the clearance and its hole the hole clearance. Between
    two vias, copper, holes and hole-to-hole all count."""
    classes = list(classes if classes is not None else rules.classes.values()) + [cls]
    clr = lambda other: max(cls.clearance, other.clearance)
    hclr, h2h = rules.hole_clearance, rules.hole_to_hole
    w, d, h = cls.track_width, cls.via_diameter, cls.via_drill
    track_track = max(w / 2 + o.track_width / 2 + clr(o) for o in classes if o.track_width <= w)
    # a bare via (not tented) opens the mask: no copper of another net under the opening, and a web between two
    bare = rules.bare_via_reach if rules.bare_vias else None
    via_track = max(max(d / 2 + clr(o), h / 2 + hclr, d / 2 + (bare or 0.0)) + o.track_width / 2 for o in classes)
    track_via = max(max(o.via_diameter / 2 + clr(o), o.via_drill / 2 + hclr) + w / 2 for o in classes)
    via_via = max(max(d / 2 + o.via_diameter / 2 + clr(o), h / 2 + o.via_drill / 2 + h2h, h / 2 + hclr
                      + o.via_diameter / 2, d / 2 + hclr + o.via_drill / 2,
                      d / 2 + o.via_diameter / 2 + 2 * bare + rules.mask_web if bare is not None else 0.0)
                  for o in classes if o.via_diameter <= d)
    return Radii(track_track + margin, track_via + margin, via_track + margin, via_via + margin)


@dataclass
class Stub:
    """The track from a pad to the lattice node a path ends at."""
    layer: int
    points: tuple                      # polyline in mm: the point on the pad, a bend if any, the node
    blocks: np.ndarray                 # other nets' portal nodes its geometry rules out (portals.mark_stub_conflicts)



@dataclass
class Connection:
    path: np.ndarray                                   # flat node indices, source first
    stubs: list[Stub] = field(default_factory=list)    # pad stubs at its ends
    parent: "Connection | None" = field(default=None, repr=False)   # the connection its path starts on, if any
    size: object = None                                # its track and via sizes (the task's NetClassRules)
    in_fill: list[int] = field(default_factory=list)   # path ends that join the net's zone fill (no pad stub)
    late: bool = False      # joined after negotiation (finishing.join), not by its net's task: kept when it moves
    pin: int = -1           # the task's pin it joined (-1: not known)
    from_pin: int = -1      # the joined pin whose portal or fill it leaves from (-1: it leaves from a path)
    _vias: np.ndarray | None = field(default=None, repr=False, compare=False)

    def vias(self, lattice: Lattice) -> np.ndarray:
        """Flat (row, col) indices where the path changes layer."""
        if self._vias is None:
            self._vias = path_vias(self.path, lattice)
        return self._vias


@dataclass
class NetRoute:
    """One net's routed geometry on the lattice."""
    connections: list[Connection] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)                # reasons, one per failed connection
    cover_track: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cover_via: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # nodes() and via_sites() are asked for far more often than the connections change: kept until add/remove
    _nodes: np.ndarray | None = field(default=None, repr=False, compare=False)
    _sites: np.ndarray | None = field(default=None, repr=False, compare=False)
    _sites_of: int = field(default=0, repr=False, compare=False)     # how many connections _sites holds

    def add(self, conn: Connection) -> None:
        self.connections.append(conn)
        if self._nodes is not None:
            self._nodes = sorted_union(self._nodes, conn.path)

    def remove(self, i: int) -> int:
        """Remove connection i and every connection that starts on it (they would dangle); return how many."""
        gone = {id(self.connections[i])}
        for conn in self.connections:          # in the order they were made: a parent comes before its children
            if conn.parent is not None and id(conn.parent) in gone:
                gone.add(id(conn))
        self.connections = [c for c in self.connections if id(c) not in gone]
        self._nodes = self._sites = None
        return len(gone)

    def owner_of(self, node: int) -> "Connection | None":
        """The first connection whose path holds the node (one pass over all paths: a net of a thousand pins asks
        after every connection)."""
        paths = self.paths
        at = np.flatnonzero(np.concatenate(paths) == node) if paths else ()
        if not len(at):
            return None
        return self.connections[int(np.searchsorted(np.cumsum([p.size for p in paths]), at[0], side="right"))]

    @property
    def paths(self) -> list[np.ndarray]:
        return [c.path for c in self.connections]

    @property
    def stubs(self) -> list[Stub]:
        return [s for c in self.connections for s in c.stubs]

    def nodes(self) -> np.ndarray:
        if self._nodes is None:
            self._nodes = np.unique(np.concatenate(self.paths)) if self.connections else np.zeros(0, np.int64)
        return self._nodes

    def via_sites(self, lattice: Lattice) -> np.ndarray:
        """Flat (row, col) indices of the vias: where a path changes layer. Those of connections added since the
        last call are merged in (a net of a thousand pins asks after every connection)."""
        if self._sites is None:
            self._sites, self._sites_of = np.zeros(0, np.int64), 0
        if self._sites_of < len(self.connections):
            more = [c.vias(lattice) for c in self.connections[self._sites_of:]]
            self._sites = sorted_union(self._sites, np.concatenate(more))
            self._sites_of = len(self.connections)
        return self._sites


def sorted_union(sorted_unique: np.ndarray, more: np.ndarray) -> np.ndarray:
    """np.union1d for a large sorted set and a few more values: inserts them, without sorting the set again."""
    if not sorted_unique.size:
        return np.unique(more)
    new = np.unique(more[~in_sorted(sorted_unique, more)])
    return np.insert(sorted_unique, np.searchsorted(sorted_unique, new), new)


def in_sorted(sorted_unique: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Which of values are in the sorted array (np.isin without sorting it again)."""
    if not sorted_unique.size:
        return np.zeros(values.shape, bool)
    at = np.minimum(np.searchsorted(sorted_unique, values), sorted_unique.size - 1)
    return sorted_unique[at] == values


def path_vias(path: np.ndarray, lattice: Lattice) -> np.ndarray:
    hop = np.flatnonzero(np.abs(np.diff(path)) == lattice.plane)
    return path[hop] % lattice.plane


class Occupancy:
    def __init__(self, lattice: Lattice):
        self.lattice = lattice
        self.track = np.zeros(lattice.size, np.int32)
        self.via = np.zeros(lattice.plane, np.int32)
        self.hist_track = np.zeros(lattice.size, np.float32)
        self.hist_via = np.zeros(lattice.plane, np.float32)
        self.centres = np.zeros(lattice.size, np.int32)          # track nodes of routed nets, per node
        self.via_centres = np.zeros(lattice.plane, np.int32)     # vias of routed nets, per (row, col)
        self._stub_covers: dict[tuple, np.ndarray] = {}
        self._pin_stubs: dict[tuple, tuple] = {}
        self._discs: dict[float, Disc] = {}
        # count changes, for copies elsewhere: of track and via (every add), of the history (every iteration)
        self.version = 0
        self.hist_version = 0
        # what changed in track and via since a copy elsewhere last took it (Changes), for that copy to follow by
        # the same steps instead of copying the arrays again; None while no copy asks for it
        self.changes: Changes | None = None

    def disc(self, radius: float) -> "Disc":
        if radius not in self._discs:
            self._discs[radius] = Disc(disc_offsets(radius, self.lattice.pitch))
        return self._discs[radius]

    def stub_covers(self, portals, radii) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The track and via covers of the stubs of every portal of a pin at these radii, as footprint makes them,
        remembered: (track nodes, the portal of each, via sites, the portal of each)."""
        key = (id(portals), radii.track_track, radii.track_via)
        if key not in self._pin_stubs:
            lat, found = self.lattice, []
            for k in range(portals.nodes.size):
                found.append(self.stub_footprint(int(portals.nodes[k]) // lat.plane, portals.points(k, lat), radii))
            covers, none = [], np.zeros(0, np.int64)
            for part in (0, 1):                 # track, then via
                pieces = [(k, c) for k, f in enumerate(found) for c in f[part]]
                covers += [np.concatenate([c for _, c in pieces] + [none]),
                           np.concatenate([np.full(c.size, k) for k, c in pieces] + [none])]
            # the portals are kept with their covers, so that no other object takes their id while these are held
            self._pin_stubs[key] = (portals, *covers)
        return self._pin_stubs[key][1:]

    def stub_footprint(self, layer, points, radii) -> tuple[list, list]:
        """The track and via covers of a pad stub, one per segment of its polyline, as a route's footprint holds
        them."""
        pairs = list(zip(points, points[1:]))
        return ([self.stub_cover(layer, a, b, radii.track_track, steps=True) for a, b in pairs],
                [self.stub_cover(None, a, b, radii.track_via) for a, b in pairs])

    def stub_cover(self, layer, a, b, radius: float, steps: bool = False) -> np.ndarray:
        """near_segment, remembered: the same pad stubs come back every time their nets are rerouted."""
        key = (layer, a, b, radius, steps)
        if key not in self._stub_covers:
            self._stub_covers[key] = near_segment(self.lattice, layer, a, b, radius, steps)
        return self._stub_covers[key]

    def footprint(self, route: NetRoute, radii) -> None:
        """Fill route.cover_track (flat nodes) and route.cover_via (flat row/col) from its paths, vias and stubs.
        radii(size) gives the cover radii of a connection of that size (its net class, or a necked variant)."""
        lat = self.lattice
        track, via = [], []
        by_size: dict = {}
        for conn in route.connections:
            by_size.setdefault(conn.size, []).append(conn)
        for size, conns in by_size.items():
            r = radii(size)
            nodes = np.concatenate([c.path for c in conns])
            sites = np.concatenate([c.vias(lat) for c in conns])
            t, v = self.discs_around(nodes, sites, r.track_track, r.via_track, r.track_via, r.via_via)
            track.append(t)
            via.append(v)
            for stub in (s for c in conns for s in c.stubs):
                t, v = self.stub_footprint(stub.layer, stub.points, r)
                track += t + [stub.blocks]
                via += v
        route.cover_track = union(track)
        route.cover_via = union(via)

    def reached_by(self, radii: Radii, centres: np.ndarray, sites: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The track nodes and via sites where a route with these cover radii would hold one of these track nodes
        (centres, flat) or vias (sites, flat row/col) in its cover: a conflict counts either way, and a wider net's
        cover reaches farther than a narrower neighbour's, so its search must be kept from them as well."""
        return self.discs_around(centres, sites, radii.track_track, radii.track_via, radii.via_track, radii.via_via)

    def discs_around(self, nodes: np.ndarray, sites: np.ndarray, node_track: float, site_track: float,
                     node_via: float, site_via: float) -> tuple[np.ndarray, np.ndarray]:
        """The track nodes (flat) and via sites (flat row/col), sorted, within these radii of track nodes (nodes,
        flat) and vias (sites, flat row/col): a via reaches every layer. Marked in the box around them (Disc.around),
        which costs the box, not a sort of every node's disc."""
        lat = self.lattice
        layer, row, col = lat.unravel(nodes)
        srow, scol = np.divmod(sites, lat.cols)
        discs = [self.disc(r) for r in (node_track, site_track, node_via, site_via)]
        reach = max(d.reach for d in discs)
        rows, cols = np.concatenate([row, srow]), np.concatenate([col, scol])
        if not rows.size:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r0, c0 = max(0, int(rows.min()) - reach), max(0, int(cols.min()) - reach)
        r1, c1 = min(lat.rows, int(rows.max()) + reach + 1), min(lat.cols, int(cols.max()) + reach + 1)
        box, plane = (len(lat.layers), r1 - r0, c1 - c0), (r1 - r0, c1 - c0)
        row, col, srow, scol = row - r0, col - c0, srow - r0, scol - c0
        node_track, site_track, node_via, site_via = discs
        track = node_track.around(box, (layer, row, col)) | site_track.around(plane, (srow, scol))
        via = node_via.around(plane, (row, col)) | site_via.around(plane, (srow, scol))
        track_at, via_at = np.flatnonzero(track), np.flatnonzero(via)
        # from the box's flat indices to the lattice's
        tl, rest = np.divmod(track_at, plane[0] * plane[1])
        tr, tc = np.divmod(rest, plane[1])
        vr, vc = np.divmod(via_at, plane[1])
        return lat.index(tl, tr + r0, tc + c0), (vr + r0) * lat.cols + vc + c0

    def add(self, route: NetRoute, sign: int) -> None:
        """Add (sign +1) or remove (-1) a route's footprint: the same arrays, both ways."""
        self.bump(route.cover_track, route.cover_via, sign)
        self.centres[route.nodes()] += sign
        self.via_centres[route.via_sites(self.lattice)] += sign

    def bump(self, nodes: np.ndarray, sites: np.ndarray, delta: int) -> None:
        """Add delta to the track counts at nodes and the via counts at sites (an index given twice counts once, as
        NumPy's fancy += does)."""
        self.track[nodes] += delta
        self.via[sites] += delta
        self.version += 1
        if self.changes is not None:
            self.changes.bump(nodes, sites, delta)

    def scale(self, times: int = 1, over: int = 1) -> None:
        """Multiply every track and via count by times, or floor-divide it by over (counts are never negative)."""
        scale_counts((self.track, self.via), times, over)
        self.version += 1
        if self.changes is not None:
            self.changes.scale(times, over)

    def rewritten(self) -> None:
        """Say that track and via were written directly: a copy elsewhere takes them whole."""
        self.version += 1
        if self.changes is not None:
            self.changes.rewritten()

    def conflicts(self, route: NetRoute) -> int:
        """Track nodes and vias of the route that lie in another net's cover."""
        nodes, sites = self.shared_nodes(route)
        return int(nodes.size + sites.size)

    def shared_nodes(self, route: NetRoute) -> tuple[np.ndarray, np.ndarray]:
        """The route's track nodes and via sites that lie in another net's cover."""
        nodes = route.nodes()
        sites = route.via_sites(self.lattice)
        return nodes[self.track[nodes] > 1], sites[self.via[sites] > 1]

    def conflicts_with_others(self, route: NetRoute) -> bool:
        """Whether a route that is not added to the occupancy would conflict with the routes that are: its nodes in
        their covers, or their track nodes and vias in its cover."""
        nodes, sites = route.nodes(), route.via_sites(self.lattice)
        return bool((self.track[nodes] > 0).any() or (self.via[sites] > 0).any()
                    or (self.centres[route.cover_track] > 0).any() or (self.via_centres[route.cover_via] > 0).any())

    def connection_conflicts(self, conn: Connection) -> int:
        return int((self.track[conn.path] > 1).sum() + (self.via[conn.vias(self.lattice)] > 1).sum())

    def add_history(self, routes, hist_fac: float) -> int:
        """Raise the history cost of every shared node; return how many are shared."""
        nodes = np.unique(np.concatenate([r.nodes() for r in routes] or [np.zeros(0, np.int64)]))
        sites = np.unique(np.concatenate([r.via_sites(self.lattice) for r in routes] or [np.zeros(0, np.int64)]))
        over_t = nodes[self.track[nodes] > 1]
        over_v = sites[self.via[sites] > 1]
        self.hist_track[over_t] += hist_fac * (self.track[over_t] - 1)
        self.hist_via[over_v] += hist_fac * (self.via[over_v] - 1)
        self.hist_version += 1
        return int(over_t.size + over_v.size)


def scale_counts(counts, times: int, over: int) -> None:
    """Multiply each array of counts by times, then floor-divide it by over, in place (NumPy's or CuPy's); a factor
    of 1 costs no pass over the arrays."""
    for c in counts:
        if times != 1:
            c *= times
        if over != 1:
            c //= over


class Changes:
    """Occupancy's track and via changes since a copy elsewhere last followed them, in order: bumps (indices and a
    delta) and scalings. Once they add up to more than a copy of the arrays would move, they say "copy it all"."""

    def __init__(self, size: int):
        self.size = size              # indices beyond which a copy of the arrays is cheaper
        self.steps: list = []         # ("bump", nodes, sites, delta) and ("scale", times, over), oldest first
        self.indices = 0
        self.whole = True             # the copy must take the arrays whole (at first, and after rewritten())

    def bump(self, nodes: np.ndarray, sites: np.ndarray, delta: int) -> None:
        if self.whole:
            return
        self.indices += nodes.size + sites.size
        if self.indices > self.size:
            self.rewritten()
        else:
            self.steps.append(("bump", nodes, sites, delta))

    def scale(self, times: int, over: int) -> None:
        if not self.whole:
            self.steps.append(("scale", times, over))

    def rewritten(self) -> None:
        self.steps, self.indices, self.whole = [], 0, True

    def taken(self) -> None:
        """The copy has followed every change so far."""
        self.steps, self.indices, self.whole = [], 0, False


def union(parts: list[np.ndarray]) -> np.ndarray:
    """np.unique(np.concatenate(parts)) for indices; by marking them between the least and the greatest,
    which is linear, when there are many (a large net's cover has hundreds of thousands, mostly repeated). One
    concatenation, not a pass per part: a large net's cover is made of thousands of small stub covers."""
    every = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if not every.size:
        return np.zeros(0, np.int64)
    lo, hi = int(every.min()), int(every.max())
    if every.size * 32 < hi - lo:
        return np.unique(every)
    mark = np.zeros(hi - lo + 1, bool)
    mark[every - lo] = True
    return np.flatnonzero(mark) + lo


class Disc:
    """A disc of lattice offsets (disc_offsets), and the half width of its row at each row offset: a disc is convex
    and symmetric, so each row of it is one run of columns."""

    # a cell of a mask dilated by shifts costs about this fraction of one offset of one cell placed by index
    SHIFT_COST = 1 / 100

    def __init__(self, offsets: np.ndarray):
        self.offsets = offsets
        self.half: dict[int, int] = {}
        for dr, dc in offsets.tolist():
            self.half[dr] = max(self.half.get(dr, 0), abs(dc))
        self.reach = max(max(self.half, default=0), max(self.half.values(), default=0))

    def around(self, shape: tuple, points: tuple) -> np.ndarray:
        """A mask of `shape` (..., rows, cols) holding every cell within the disc of one of the points (index
        arrays, one per axis), clipped to the shape. Few points are spread offset by offset; many, marked and
        dilated by shifted ORs (each row's run of columns, then the rows), which costs the box, not points x disc."""
        out = np.zeros(shape, bool)
        if not self.half or not points[-1].size:
            return out
        *lead, row, col = points
        widest = max(self.half.values())
        if row.size * len(self.offsets) < out.size * (widest + len(self.half)) * self.SHIFT_COST:
            r = (row[:, None] + self.offsets[None, :, 0]).ravel()
            c = (col[:, None] + self.offsets[None, :, 1]).ravel()
            inside = (r >= 0) & (r < shape[-2]) & (c >= 0) & (c < shape[-1])
            out[tuple(np.repeat(a, len(self.offsets))[inside] for a in lead) + (r[inside], c[inside])] = True
            return out
        mask = np.zeros(shape, bool)
        mask[points] = True
        runs = [mask]                   # runs[k]: OR over column shifts -k..k
        for k in range(1, widest + 1):
            run = runs[-1].copy()
            run[..., k:] |= mask[..., :-k]
            run[..., :-k] |= mask[..., k:]
            runs.append(run)
        h = shape[-2]
        for dr, k in self.half.items():
            if abs(dr) >= h:
                continue
            if dr >= 0:
                out[..., dr:, :] |= runs[k][..., :h - dr, :]
            else:
                out[..., :h + dr, :] |= runs[k][..., -dr:, :]
        return out


def near_segment(lat: Lattice, layer, a, b, radius: float, steps: bool = False) -> np.ndarray:
    """Nodes closer than radius to segment a-b: on `layer`, or flat (row, col) indices when layer is None. steps:
    also their chord_ends (a step between two nodes farther than radius can pass an off-lattice stub end or bend
    nearer)."""
    reach = float(np.hypot(radius, lat.pitch / 2)) if steps else radius
    (ax, ay), (bx, by) = a, b
    rows, cols = lat.window(min(ax, bx) - reach, min(ay, by) - reach, max(ax, bx) + reach, max(ay, by) + reach)
    rr, cc = np.mgrid[rows, cols]
    r, c = rr.ravel(), cc.ravel()
    dist = segment_distance(lat, r, c, a, b)
    inside = dist < radius
    if steps:
        band = np.flatnonzero((dist >= radius) & (dist < reach))
        stub = np.full(band.size, shapely.LineString([a, b]), dtype=object)
        inside[band[chord_ends(lat, r[band], c[band], stub, np.full(band.size, radius))]] = True
    flat = r[inside] * lat.cols + c[inside]
    return flat if layer is None else layer * lat.plane + flat


def segment_distance(lat: Lattice, rows, cols, a, b) -> np.ndarray:
    """Distance (mm) from the nodes (rows, cols) of the plane to segment a-b."""
    x, y = lat.xy(rows, cols)
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = np.clip(((x - ax) * dx + (y - ay) * dy) / max(dx * dx + dy * dy, 1e-12), 0, 1)
    return np.hypot(x - (ax + t * dx), y - (ay + t * dy))
