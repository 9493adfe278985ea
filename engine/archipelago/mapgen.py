"""Archipelago map generation: the board of rules A6–A9.

A map is a rectangular grid of sea and land tiles (A6).  Tiles are ``(x, y)`` pairs: ``x`` is the
column ``0 .. width-1``, ``y`` the row ``0 .. height-1``, row 0 at the top.  Neighbours are
orthogonal only, listed in the A28 order N ``(x, y-1)``, E ``(x+1, y)``, S ``(x, y+1)``,
W ``(x-1, y)``.

Islands (A7) are the 4-connected groups of land: one **home** island per seat (owner = seat), one
**ring** island per seat, and one **centre** island (two for 6–8 players).  No two islands touch,
not even diagonally: at least one sea tile separates any two of them.

:func:`generate_map` builds a map deterministically from ``(seed, players)`` (A9); all randomness
comes from :class:`engine.rng.Rng` seeded with the (possibly ≥ 128-bit) seed.  It meets A9:

* boards 26×18, 26×26, 28×28, 32×32, 34×34, 38×38, 40×40 for 2…8 players;
* home island: 10 tiles — the base, 2 food, 2 wood, 2 iron, 3 plain (every home the same);
* ring islands: one per seat, 5 tiles, 2 resources and 1 port each.  Around the circle of homes,
  ring ``k`` (``k = 0 .. players-1``) lies between the ``k``-th and ``k+1``-th homes (mod players,
  in the homes' order around the circle, which need not be the seat order) and is at
  sea distance 3–5 from both (shared); rings with even ``k`` carry fuel as one of their two
  resources ("fuel on every other ring": with an odd player count rings ``0`` and ``players-1``
  both do), the other resources are wood, food or iron, and a home always has a fuel ring within
  3–5;
* centre island: 9 tiles — 2 fuel, 1 iron, 1 food, 1 wood, 2 ports (of two different resources)
  and 2 plain;
* ports are coastal tiles of ring and centre islands; a port tile carries no producing resource;
* the sea distance (:func:`sea_distance`) from every home to its nearest ring island lies in 3–5
  and is the same for all seats ±1; to its nearest centre island it is the same for all seats ±1
  and at least 2 more than its nearest ring distance;
* every base is a coastal tile with ≥ 2 sea neighbours; every island is reachable by sea from
  every base;
* beyond A9: two homes are at least 6 apart by sea (farther than any home from its rings), and
  no island touches the board's edge.

The generator is a seeded search with retries.  An attempt places the centre island(s), then
pushes each home out along its own ray from the centre until its sea distance to the nearest
centre island reaches a target common to all homes, then puts each ring at the best spot between
its two homes (both distances in a band ``[d, d+1]`` inside 3–5, as even as possible); the finished
attempt is checked against every rule above and a failing one is retried with fresh random draws
(2–4 attempts per map on average: 5–40 ms per map in CPython, rarely over 150 ms).  For 4–8
players the homes surround the centre.  For 2–3 players they cannot: with the centre island inside
the circle of homes, no ring shared by two homes is 2 nearer to both of them than the centre
(Manhattan triangle inequality), so there the homes stand in a fan on one side of the centre
island, which sits near a board edge.

The result is a :class:`engine.archipelago.board.Board` (the one map model), built by
:meth:`Board.from_parts <engine.archipelago.board.Board.from_parts>`.  Seats are numbered in the
reading order of their bases (row by row, left to right); island ids are the homes first
(id = seat), then the rings, then the centre island(s), each of these two groups ordered by its
smallest tile.  :func:`engine.archipelago.board.parse_board` numbers seats and islands the same
way, so a rendering (:meth:`Board.render <engine.archipelago.board.Board.render>`, alphabet in
:mod:`engine.archipelago.board`) reads back as the very same map.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from engine.archipelago.board import CENTRE_SIZE, DELTA, Board, Island, Tile, index_neighbour_ids
from engine.rng import Rng

__all__ = [
    "BOARD_SIZES",
    "CENTRE_RESOURCES",
    "CENTRE_SIZE",
    "HOME_GAP",
    "HOME_RESOURCES",
    "HOME_SIZE",
    "RESOURCES",
    "RING_SIZE",
    "generate_map",
    "sea_distance",
]

#: the four resources, in the A51 tie order
RESOURCES: tuple[str, ...] = ("wood", "food", "iron", "fuel")

#: players -> (width, height) (A9)
BOARD_SIZES: Mapping[int, tuple[int, int]] = {
    2: (26, 18), 3: (26, 26), 4: (28, 28), 5: (32, 32), 6: (34, 34), 7: (38, 38), 8: (40, 40),
}
HOME_SIZE = 10
RING_SIZE = 5
#: resources of a home island besides its base (the other 3 tiles are plain)
HOME_RESOURCES: tuple[str, ...] = ("food", "food", "wood", "wood", "iron", "iron")
#: resources of a centre island besides its 2 ports (the other 2 tiles are plain)
CENTRE_RESOURCES: tuple[str, ...] = ("fuel", "fuel", "iron", "food", "wood")
CENTRE_PORTS = 2
RING_PORTS = 1

#: A9 distances
RING_DISTANCE_MIN = 3
RING_DISTANCE_MAX = 5
CENTRE_MARGIN = 2  # the nearest centre is at least this much farther than the nearest ring
BASE_MIN_SEA = 2
#: (beyond A9) least sea distance between two homes: more than RING_DISTANCE_MAX, so that a ring
#: "between two neighbouring homes" is nearer to each of them than they are to each other
HOME_GAP = 6

_DIRECTIONS: tuple[tuple[int, int], ...] = tuple(DELTA.values())  # N E S W (A28)

# Search parameters, tuned so that a map takes 2-4 attempts on average for every player count (an
# attempt costs 2-15 ms).
_MAX_ATTEMPTS = 500
#: 2-3 players: distance of the centre island's middle from its board edge (the fan's root), and
#: the angle in degrees (least, random extra) between the outermost homes' rays and the fan's axis
_FAN_EDGE: Mapping[int, float] = {2: 4.0, 3: 4.0}
_FAN_SPREAD: Mapping[int, tuple[int, int]] = {2: (35, 20), 3: (35, 20)}
#: rings placed in this order of k (the hardest one first)
_RING_ORDER: Mapping[int, tuple[int, ...]] = {3: (2, 0, 1)}
#: per ring k: +1 = as far from the centre island as possible, -1 = as near, 0 = anywhere
_RING_PREFERENCE: Mapping[int, tuple[int, ...]] = {2: (1, -1)}
_RING_SLACK = 1
#: largest spread of homes' random angular offsets (radians) for 4-8 players
_ANGLE_JITTER = 0.25


# --------------------------------------------------------------------------------------------
# Sea distances


def sea_distance(board: Board, a: Island, b: Island) -> int | None:
    """A9 sea distance: the fewest orthogonal sea steps from a sea tile adjacent to ``a`` to a sea
    tile adjacent to ``b`` (0 when some sea tile touches both); ``None`` if no sea path exists."""
    targets = set(board.coast(b))
    frontier = list(board.coast(a))
    seen = set(frontier)
    dist = 0
    while frontier:
        if any(t in targets for t in frontier):
            return dist
        nxt: list[Tile] = []
        for t in frontier:
            for n in board.sea_neighbours(t):
                if n not in seen:
                    seen.add(n)
                    nxt.append(n)
        frontier = nxt
        dist += 1
    return None


# --------------------------------------------------------------------------------------------
# Generation


def generate_map(seed: int, players: int) -> Board:
    """The A9 map for ``players`` (2..8) seats, a pure function of ``(seed, players)``."""
    if isinstance(players, bool) or not isinstance(players, int) or players not in BOARD_SIZES:
        raise ValueError(f"players must be 2..8, not {players!r}")
    rng = Rng(seed)
    width, height = BOARD_SIZES[players]
    for _ in range(_MAX_ATTEMPTS):
        board = _Layout(width, height, players, rng).build()
        if board is not None:
            return board
    raise RuntimeError(f"no A9 map found for {players} players")  # pragma: no cover


_INF = 1 << 30


def _normalise(cells: Iterable[Tile]) -> list[Tile]:
    cells = list(cells)
    mx = min(x for x, _ in cells)
    my = min(y for _, y in cells)
    return sorted((x - mx, y - my) for x, y in cells)


def _has_hole(cells: set[Tile]) -> bool:
    """Whether the polyomino encloses sea (a lake no ship could reach)."""
    xs = [x for x, _ in cells]
    ys = [y for _, y in cells]
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    outside = {(x0, y0)}
    stack = [(x0, y0)]
    while stack:
        x, y = stack.pop()
        for dx, dy in _DIRECTIONS:
            n = (x + dx, y + dy)
            if (x0 <= n[0] <= x1 and y0 <= n[1] <= y1 and n not in cells
                    and n not in outside):
                outside.add(n)
                stack.append(n)
    return len(outside) + len(cells) < (x1 - x0 + 1) * (y1 - y0 + 1)


def _polyomino(rng: Rng, size: int, max_span: int) -> list[Tile]:
    """A compact random polyomino without holes, at most ``max_span`` wide and tall, normalised
    to start at (0, 0).  Cells touching more of the shape are likelier to be added."""
    while True:
        cells = {(0, 0)}
        while len(cells) < size:
            xs = [x for x, _ in cells]
            ys = [y for _, y in cells]
            options: list[tuple[Tile, int]] = []
            for cx, cy in sorted(cells):
                for dx, dy in _DIRECTIONS:
                    n = (cx + dx, cy + dy)
                    if n in cells:
                        continue
                    if max(max(xs), n[0]) - min(min(xs), n[0]) >= max_span:
                        continue
                    if max(max(ys), n[1]) - min(min(ys), n[1]) >= max_span:
                        continue
                    touching = sum((n[0] + ex, n[1] + ey) in cells for ex, ey in _DIRECTIONS)
                    options.append((n, touching * touching))
            pick = rng.randbelow(sum(w for _, w in options))
            for n, w in options:
                if pick < w:
                    cells.add(n)
                    break
                pick -= w
        if not _has_hole(cells):
            return _normalise(cells)


def _rotate(shape: Sequence[Tile], quarter_turns: int) -> list[Tile]:
    cells = list(shape)
    for _ in range(quarter_turns % 4):
        cells = [(-y, x) for x, y in cells]
    return _normalise(cells)


def _extent(shape: Sequence[Tile]) -> tuple[int, int]:
    return max(x for x, _ in shape) + 1, max(y for _, y in shape) + 1


class _Layout:
    """One placement attempt, on an index grid (``i = y * width + x``).

    ``homes[k]`` is the k-th home around the circle, ``rings[k]`` the ring between homes ``k`` and ``k+1``
    (mod players), ``centres`` the centre island(s); each a list of cell indices.
    """

    def __init__(self, width: int, height: int, players: int, rng: Rng) -> None:
        self.w, self.h, self.n, self.rng = width, height, players, rng
        self.nbrs = index_neighbour_ids(width, height)
        self.land = bytearray(width * height)  # 1 = land
        self.halo = bytearray(width * height)  # 1 = land or 8-adjacent to land
        self.homes: list[list[int]] = []
        self.rings: list[list[int]] = []
        self.centres: list[list[int]] = []
        self.bases: list[int] = []
        self.origin = ((width - 1) / 2, (height - 1) / 2)
        self.up = 0.0  # 2-3 players: the angle of the fan's axis

    # -- grid helpers --------------------------------------------------------------------------

    def fits(self, shape: Sequence[Tile], ax: int, ay: int) -> list[int] | None:
        """The cells of ``shape`` anchored at (ax, ay) if they keep 1 tile off the board's edge and
        a sea tile (also diagonally) from all other land, else None."""
        w, h = self.w, self.h
        cells = []
        for sx, sy in shape:
            x, y = ax + sx, ay + sy
            if not (1 <= x < w - 1 and 1 <= y < h - 1):
                return None
            i = y * w + x
            if self.halo[i]:
                return None
            cells.append(i)
        return cells

    def put(self, cells: Sequence[int]) -> None:
        w, h = self.w, self.h
        for i in cells:
            self.land[i] = 1
            x, y = i % w, i // w
            for yy in range(max(0, y - 1), min(h, y + 2)):
                for xx in range(max(0, x - 1), min(w, x + 2)):
                    self.halo[yy * w + xx] = 1

    def coast(self, cells: Iterable[int]) -> list[int]:
        """The sea cells orthogonally adjacent to ``cells``, sorted."""
        land = self.land
        return sorted({j for i in cells for j in self.nbrs[i] if not land[j]})

    def field(self, sources: Iterable[int]) -> list[int]:
        """Sea distances from the sea cells ``sources`` (breadth-first, land blocks)."""
        dist = [_INF] * (self.w * self.h)
        queue = list(sources)
        for s in queue:
            dist[s] = 0
        land, nbrs = self.land, self.nbrs
        k = 0
        while k < len(queue):
            i = queue[k]
            k += 1
            d = dist[i] + 1
            for j in nbrs[i]:
                if dist[j] == _INF and not land[j]:
                    dist[j] = d
                    queue.append(j)
        return dist

    def centre_field(self) -> list[int]:
        return self.field(self.coast(c for centre in self.centres for c in centre))

    # -- the attempt ---------------------------------------------------------------------------

    def build(self) -> Board | None:
        # ring distances of this attempt lie in [low, low + 1], within A9's 3-5
        low = RING_DISTANCE_MIN + self.rng.randbelow(RING_DISTANCE_MAX - RING_DISTANCE_MIN)
        if (self.place_centres() and self.place_homes(low) and self.place_rings(low)
                and self.place_bases() and self.check()):
            return _finish(self)
        return None

    def place_centres(self) -> bool:
        """One centre island (two side by side for 6-8 players) at the fan's root or the middle."""
        rng, w, h, n = self.rng, self.w, self.h, self.n
        if n in _FAN_EDGE:
            # 2-3 players: every home on the same side of the centre island, in a fan.  With the
            # centre island inside the homes' circle, a ring shared by two homes can never be 2
            # nearer to both than the centre island is (Manhattan triangle inequality).
            sides = ((0, 1), (0, -1)) if w > h else ((0, 1), (0, -1), (1, 0), (-1, 0))
            sx, sy = rng.choice(sides)
            offset = (h if sy else w) / 2 - _FAN_EDGE[n]
            self.origin = ((w - 1) / 2 + sx * offset, (h - 1) / 2 + sy * offset)
            self.up = math.atan2(-sy, -sx)
        else:
            self.origin = ((w - 1) / 2 + rng.random() - 0.5, (h - 1) / 2 + rng.random() - 0.5)
        count = 2 if n >= 6 else 1
        horizontal = rng.randbelow(2) == 0
        gap = 2 + rng.randbelow(2)
        for c in range(count):
            shape = _polyomino(rng, CENTRE_SIZE, 4)
            sw, sh = _extent(shape)
            ox, oy = self.origin
            if count == 2:
                shift = (2 * c - 1) * ((sw if horizontal else sh) + gap) / 2
                ox, oy = (ox + shift, oy) if horizontal else (ox, oy + shift)
            cells = self.fits(shape, round(ox - (sw - 1) / 2), round(oy - (sh - 1) / 2))
            if cells is None:
                return False
            self.put(cells)
            self.centres.append(cells)
        return True

    def place_homes(self, low: int) -> bool:
        """Each home slides out along its ray from the centre; all stop at one sea distance to
        the nearest centre island (chosen at random among those every ray reaches)."""
        rng, n = self.rng, self.n
        centre_field = self.centre_field()
        shape0 = _polyomino(rng, HOME_SIZE, 4)
        if n in _FAN_SPREAD:
            least, extra = _FAN_SPREAD[n]
            spread = math.radians(least + rng.randbelow(extra + 1))
            angles = [self.up + spread * (2 * k - n + 1) / (n - 1) for k in range(n)]
        else:
            start = rng.random() * 2 * math.pi
            angles = [start + 2 * math.pi * k / n + (rng.random() - 0.5) * _ANGLE_JITTER
                      for k in range(n)]
        ox, oy = self.origin
        spots: list[dict[int, list[list[int]]]] = []  # per home: centre distance -> placements
        for a in angles:
            shape = _rotate(shape0, round(a / (math.pi / 2)))
            sw, sh = _extent(shape)
            by_distance: dict[int, list[list[int]]] = {}
            seen: set[tuple[int, int]] = set()
            r = 2.0
            while r < self.w + self.h:
                anchor = (round(ox + r * math.cos(a) - (sw - 1) / 2),
                          round(oy + r * math.sin(a) - (sh - 1) / 2))
                r += 0.5
                if anchor in seen:
                    continue
                seen.add(anchor)
                cells = self.fits(shape, *anchor)
                if cells is not None:
                    d = min(centre_field[j] for j in self.coast(cells))
                    by_distance.setdefault(d, []).append(cells)
            spots.append(by_distance)
        common = set.intersection(*(set(s) for s in spots))
        targets = sorted(d for d in common if d >= low + 1 + CENTRE_MARGIN)
        rng.shuffle(targets)
        land, halo = bytes(self.land), bytes(self.halo)
        for target in targets:
            if self.put_homes([by_distance[target] for by_distance in spots]):
                return True
            self.land, self.halo, self.homes = bytearray(land), bytearray(halo), []
        return False

    def put_homes(self, spots: list[list[list[int]]]) -> bool:
        """Place each home at its first free spot; False if one has none or two homes end up
        nearer than ``HOME_GAP`` by sea."""
        for options in spots:
            for cells in options:
                if not any(self.halo[i] for i in cells):
                    self.put(cells)
                    self.homes.append(cells)
                    break
            else:
                return False
        for a, home in enumerate(self.homes):
            f = self.field(self.coast(home))
            if any(min(f[j] for j in self.coast(other)) < HOME_GAP
                   for other in self.homes[a + 1:]):
                return False
        return True

    def place_rings(self, low: int) -> bool:
        """Ring k at sea distance low..low+1 from homes k and k+1 (as evenly as possible) and at
        least ``low`` from every other home."""
        rng, n, w, h = self.rng, self.n, self.w, self.h
        high = low + 1
        fields = [self.field(self.coast(home)) for home in self.homes]
        centre_field = self.centre_field()
        placed: dict[int, list[int]] = {}
        for k in _RING_ORDER.get(n, tuple(range(n))):
            a, b = k, (k + 1) % n
            fa, fb = fields[a], fields[b]
            others = [f for j, f in enumerate(fields) if j not in (a, b)]
            shape0 = _polyomino(rng, RING_SIZE, 3)
            found: list[tuple[int, int, list[int]]] = []  # (imbalance, centre distance, cells)
            for quarter in range(4):
                shape = _rotate(shape0, quarter)
                ring_coast = sorted({(x + dx, y + dy) for x, y in shape for dx, dy in _DIRECTIONS}
                                    - set(shape))
                for ay in range(1, h - 1):
                    for ax in range(1, w - 1):
                        i0 = ay * w + ax
                        if fa[i0] > high + 6 or fb[i0] > high + 6:  # too far to qualify
                            continue
                        cells = self.fits(shape, ax, ay)
                        if cells is None:
                            continue
                        coast = [(ay + y) * w + ax + x for x, y in ring_coast]
                        da = min(fa[j] for j in coast)
                        db = min(fb[j] for j in coast)
                        if not (low <= da <= high and low <= db <= high):
                            continue
                        if any(min(f[j] for j in coast) < low for f in others):
                            continue
                        found.append((abs(da - db), min(centre_field[j] for j in coast), cells))
            if not found:
                return False
            even = min(f[0] for f in found)
            found = [f for f in found if f[0] == even]
            prefer = _RING_PREFERENCE.get(n, (0,) * n)[k]
            if prefer:
                edge = max(prefer * f[1] for f in found)
                found = [f for f in found if prefer * f[1] >= edge - _RING_SLACK]
            cells = found[rng.randbelow(len(found))][2]
            self.put(cells)
            placed[k] = cells
        self.rings = [placed[k] for k in range(n)]
        return True

    def place_bases(self) -> bool:
        """Each base: a home tile with >= 2 sea neighbours, the nearest to a centre island."""
        centre_field = self.centre_field()
        land, nbrs, w = self.land, self.nbrs, self.w
        for home in self.homes:
            eligible = [i for i in home if sum(not land[j] for j in nbrs[i]) >= BASE_MIN_SEA]
            if not eligible:
                return False
            self.bases.append(min(eligible, key=lambda i: (
                min(centre_field[j] for j in nbrs[i]), i % w, i // w)))
        return True

    def check(self) -> bool:
        """Every A9 distance and reachability rule, recomputed on the final land."""
        n = self.n
        ring_coasts = [self.coast(r) for r in self.rings]
        centre_coasts = [self.coast(c) for c in self.centres]
        near_ring: list[int] = []
        near_centre: list[int] = []
        for seat, home in enumerate(self.homes):
            f = self.field(self.coast(home))
            to_ring = [min(f[j] for j in rc) for rc in ring_coasts]
            dr = min(to_ring)
            dc = min(min(f[j] for j in cc) for cc in centre_coasts)
            if not RING_DISTANCE_MIN <= dr <= RING_DISTANCE_MAX or dc < dr + CENTRE_MARGIN:
                return False
            for k in (seat - 1) % n, seat:  # the two rings shared with the neighbouring homes
                if not RING_DISTANCE_MIN <= to_ring[k] <= RING_DISTANCE_MAX:
                    return False
            near_ring.append(dr)
            near_centre.append(dc)
        if max(near_ring) - min(near_ring) > 1 or max(near_centre) - min(near_centre) > 1:
            return False
        islands = self.homes + self.rings + self.centres
        for base in self.bases:
            f = self.field(j for j in self.nbrs[base] if not self.land[j])
            if any(min(f[j] for j in self.coast(cells)) >= _INF for cells in islands):
                return False
        return True


def _finish(lay: _Layout) -> Board:
    """A placed layout's resources and ports (A8, A9), then the board with its canonical island ids."""
    rng, w, land, nbrs = lay.rng, lay.w, lay.land, lay.nbrs

    def tile(i: int) -> Tile:
        return (i % w, i // w)

    def coastal(cells: Iterable[int]) -> list[int]:
        return [i for i in sorted(cells) if any(not land[j] for j in nbrs[i])]

    resources: dict[Tile, str] = {}
    ports: dict[Tile, str] = {}
    for home, base in zip(lay.homes, lay.bases, strict=True):
        rest = sorted(i for i in home if i != base)
        rng.shuffle(rest)
        for i, resource in zip(rest, HOME_RESOURCES, strict=False):
            resources[tile(i)] = resource
    for k, ring in enumerate(lay.rings):
        port = rng.choice(coastal(ring))
        ports[tile(port)] = rng.choice(RESOURCES)
        others = ["wood", "food", "iron"]
        rng.shuffle(others)
        kinds = ["fuel", others[0]] if k % 2 == 0 else others[:2]
        rest = sorted(i for i in ring if i != port)
        rng.shuffle(rest)
        for i, resource in zip(rest, kinds, strict=False):
            resources[tile(i)] = resource
    for centre in lay.centres:
        harbours = rng.sample(coastal(centre), CENTRE_PORTS)
        for i, resource in zip(harbours, rng.sample(RESOURCES, CENTRE_PORTS), strict=True):
            ports[tile(i)] = resource
        rest = sorted(i for i in centre if i not in harbours)
        rng.shuffle(rest)
        for i, resource in zip(rest, CENTRE_RESOURCES, strict=False):
            resources[tile(i)] = resource
    # seats in the reading order of their bases, as parse_board numbers them
    seats = sorted(range(lay.n), key=lambda s: lay.bases[s])
    return Board.from_parts(lay.w, lay.h,
                            [[tile(i) for i in lay.homes[s]] for s in seats],
                            [[tile(i) for i in ring] for ring in lay.rings],
                            [[tile(i) for i in centre] for centre in lay.centres],
                            [tile(lay.bases[s]) for s in seats], resources, ports)
