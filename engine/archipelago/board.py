"""The Archipelago board (A6–A8): the one map model, its text drawing, and tile helpers (A28).

:class:`Board` is immutable and shared by every state of one game (never copied per round).  The
map generator (:func:`engine.archipelago.mapgen.generate_map`) builds it with
:meth:`Board.from_parts`, hand-drawn boards are read by :func:`parse_board`, a saved state's board
by :meth:`Board.from_dict`.

Tiles are ``(x, y)`` tuples: x the column, y the row, row 0 on top.  Directions are N (y-1),
E (x+1), S (y+1), W (x-1); A28 orders ties by Manhattan distance, then direction: among tiles at
one distance, by bearing clockwise from North (A105; neighbours N, E, S, W).

Islands (A7) are the 4-connected groups of land: a **home** island per seat (owner = seat), **ring**
and **centre** islands.  ``land`` is the union of the islands' tiles, ``bases[seat]`` a tile of
that seat's home island, ``resources`` maps producing land tiles to their resource and ``ports``
port tiles to the resource they trade 2:1 (A52); a tile is never both.  :meth:`Board.validate`
checks all this; generated and drawn maps are checked when built.

Drawing (:meth:`Board.render`, read back by :func:`parse_board`): one character per tile, rows
joined by ``"\\n"``:

* ``.`` sea, ``#`` plain land, ``B`` a base;
* ``w`` wood, ``f`` food, ``i`` iron, ``u`` fuel (a producing land tile);
* ``W``, ``F``, ``I``, ``U``: a port trading wood, food, iron, fuel (A52).

:meth:`Board.render_islands` is a second rendering showing each land tile's island id
(``0-9``, then ``a-z``, then ``A-Z``).  Scenario rows (:mod:`engine.archipelago.scenario`) are a
lenient dialect of the same drawing (:func:`parse_board` with ``dialect="scenario"``).

Serialised form (``Board.to_dict``; not a drawing: everything but the land is listed)::

    {"width": W, "height": H,
     "rows": ["..##..", ...],              # "." sea, "#" land, one string per row
     "islands": [{"id": 0, "kind": "home"|"ring"|"centre", "owner": 0 | None,
                  "tiles": [[x, y], ...]}, ...],
     "bases": [[x, y], ...],               # bases[seat]
     "resources": [[x, y, "wood"], ...],   # sorted by (y, x)
     "ports": [[x, y, "fuel"], ...]}       # sorted by (y, x)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Tile = tuple[int, int]

ISLAND_KINDS: tuple[str, ...] = ("home", "ring", "centre")
#: A9: a centre island has 9 tiles; a drawing without ``centres`` calls any island this big a centre
CENTRE_SIZE = 9

#: the drawing's alphabet (module docstring)
RESOURCE_GLYPHS: Mapping[str, str] = {"w": "wood", "f": "food", "i": "iron", "u": "fuel"}
PORT_GLYPHS: Mapping[str, str] = {"W": "wood", "F": "food", "I": "iron", "U": "fuel"}
_GLYPH_OF_RESOURCE = {v: k for k, v in RESOURCE_GLYPHS.items()}
_GLYPH_OF_PORT = {v: k for k, v in PORT_GLYPHS.items()}
_ID_GLYPHS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

#: the one direction table: a step's (dx, dy) by its name, in the order N, E, S, W (A28 ties)
DELTA: dict[str, Tile] = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
DIRS: tuple[str, ...] = tuple(DELTA)


def index_steps(width: int) -> dict[str, int]:
    """A step's change of tile index (``y * width + x``) by its name (:data:`DELTA`)."""
    return {d: dy * width + dx for d, (dx, dy) in DELTA.items()}


def step(t: Tile, d: str) -> Tile:
    dx, dy = DELTA[d]
    return (t[0] + dx, t[1] + dy)


def around(t: Tile) -> tuple[Tile, ...]:
    """The four orthogonal neighbours of ``t`` in N, E, S, W order (:data:`DELTA`), off the board
    or not."""
    x, y = t
    return tuple((x + dx, y + dy) for dx, dy in DELTA.values())


def dist(a: Tile, b: Tile) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def tie_key(origin: Tile, t: Tile) -> tuple[int, int, int]:
    """A28/A105 order of ``t`` seen from ``origin``: Manhattan distance, then the bearing from
    ``origin`` measured clockwise from North (neighbours N, NE, E, SE, S, SW, W, NW).

    Exact, without angles: the quarter the bearing lies in (0: from N up to E, 1: from E up to
    S, 2: from S up to W, 3: from W up to N), then, at one distance, the coordinate that grows
    with the bearing inside that quarter.  Two tiles at one distance never share a bearing.
    """
    dx, dy = t[0] - origin[0], t[1] - origin[1]
    d = abs(dx) + abs(dy)
    if dx >= 0 and dy < 0:
        return (d, 0, dx)
    if dx > 0 and dy >= 0:
        return (d, 1, dy)
    if dx <= 0 and dy > 0:
        return (d, 2, -dx)
    return (d, 3, -dy)  # dx < 0, dy <= 0, or the origin itself (d = 0)


def tile_dict(t: Tile) -> dict[str, int]:
    return {"x": t[0], "y": t[1]}


def parse_tile(v: Any) -> Tile:
    """``{"x": .., "y": ..}`` or ``[x, y]`` -> ``(x, y)``; raises ValueError/TypeError/KeyError."""
    if type(v) is dict or isinstance(v, Mapping):
        x, y = v["x"], v["y"]
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        x, y = v
    else:
        raise ValueError("a tile is {\"x\": int, \"y\": int}")
    if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, int) or not isinstance(y, int):
        raise ValueError("tile coordinates must be integers")
    return (x, y)


_DIAMONDS: dict[int, tuple[Tile, ...]] = {}


def diamond(r: int) -> tuple[Tile, ...]:
    """Offsets within Manhattan distance ``r`` (cached)."""
    got = _DIAMONDS.get(r)
    if got is None:
        got = tuple((dx, dy) for dy in range(-r, r + 1) for dx in range(-r, r + 1)
                    if abs(dx) + abs(dy) <= r)
        _DIAMONDS[r] = got
    return got


_NEIGHBOURS: dict[tuple[int, int], dict[Tile, tuple[Tile, ...]]] = {}
_INDEX: dict[tuple[int, int], list[list[tuple[str, int]]]] = {}
_INDEX_IDS: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {}


def index_neighbours(width: int, height: int) -> list[list[tuple[str, int]]]:
    """The board's neighbour table, by tile index ``y * width + x``: (direction, neighbour index)
    in N, E, S, W order (:data:`DELTA`), in bounds only; one shared table per board size.  Every
    other neighbour table (by tile, indices only) is read off this one."""
    table = _INDEX.get((width, height))
    if table is None:
        table = []
        for y in range(height):
            for x in range(width):
                row = []
                for dname, (dx, dy) in DELTA.items():
                    nx, ny = x + dx, y + dy
                    if 0 <= nx < width and 0 <= ny < height:
                        row.append((dname, ny * width + nx))
                table.append(row)
        _INDEX[(width, height)] = table
    return table


def index_neighbour_ids(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """:func:`index_neighbours` without the directions: by tile index, the neighbours' indices."""
    table = _INDEX_IDS.get((width, height))
    if table is None:
        table = _INDEX_IDS[(width, height)] = tuple(tuple(j for _, j in row)
                                                    for row in index_neighbours(width, height))
    return table


def _neighbour_table(width: int, height: int) -> dict[Tile, tuple[Tile, ...]]:
    """Every tile's in-bounds neighbours in N, E, S, W order (:func:`index_neighbours` by tile)."""
    table = _NEIGHBOURS.get((width, height))
    if table is None:
        table = {(i % width, i // width): tuple((j % width, j // width) for _, j in row)
                 for i, row in enumerate(index_neighbours(width, height))}
        _NEIGHBOURS[(width, height)] = table
    return table


_WITHIN: dict[tuple[int, int, int], dict[Tile, tuple[Tile, ...]]] = {}


def _within_table(width: int, height: int, r: int) -> dict[Tile, tuple[Tile, ...]]:
    table = _WITHIN.get((width, height, r))
    if table is None:
        offsets = diamond(r)
        table = {(x, y): tuple((x + dx, y + dy) for dx, dy in offsets
                               if 0 <= x + dx < width and 0 <= y + dy < height)
                 for y in range(height) for x in range(width)}
        _WITHIN[(width, height, r)] = table
    return table


_AREAS: dict[tuple[int, int, int], dict[Tile, int]] = {}
_CROSSES: dict[tuple[int, int], dict[Tile, frozenset[Tile]]] = {}
_TILES: dict[tuple[int, int], list[Tile]] = {}
#: byte value -> the offsets of its set bits, low to high
_BYTE_BITS: tuple[tuple[int, ...], ...] = tuple(tuple(o for o in range(8) if v >> o & 1) for v in range(256))


def _area_table(width: int, height: int, r: int) -> dict[Tile, int]:
    table = _AREAS.get((width, height, r))
    if table is None:
        table = {}
        for t, tiles in _within_table(width, height, r).items():
            bits = 0
            for x, y in tiles:
                bits |= 1 << (y * width + x)
            table[t] = bits
        _AREAS[(width, height, r)] = table
    return table


def _tile_list(width: int, height: int) -> list[Tile]:
    tiles = _TILES.get((width, height))
    if tiles is None:
        tiles = _TILES[(width, height)] = [(x, y) for y in range(height) for x in range(width)]
    return tiles


def cross(t: Tile) -> frozenset[Tile]:
    """``t`` and its four orthogonal neighbours, off the board or not."""
    return frozenset((t, *around(t)))


def _cross_table(width: int, height: int) -> dict[Tile, frozenset[Tile]]:
    table = _CROSSES.get((width, height))
    if table is None:
        table = {(x, y): cross((x, y)) for y in range(height) for x in range(width)}
        _CROSSES[(width, height)] = table
    return table


_AROUND: dict[tuple[int, int], list[int]] = {}


def _around_table(width: int, height: int) -> list[int]:
    table = _AROUND.get((width, height))
    if table is None:
        table = []
        for row in index_neighbours(width, height):
            bits = 0
            for _, j in row:
                bits |= 1 << j
            table.append(bits)
        _AROUND[(width, height)] = table
    return table


_EDGES: dict[tuple[int, int], tuple[int, int, int]] = {}


def _edge_bits(width: int, height: int) -> tuple[int, int, int]:
    """(every tile, every tile but the west column, every tile but the east column) as tile bits."""
    got = _EDGES.get((width, height))
    if got is None:
        row = (1 << width) - 1
        every = not_west = not_east = 0
        for y in range(height):
            every |= row << (y * width)
            not_west |= (row & ~1) << (y * width)
            not_east |= (row >> 1) << (y * width)
        got = _EDGES[(width, height)] = (every, not_west, not_east)
    return got


@dataclass(frozen=True)
class Island:
    """A 4-connected group of land tiles (A7); ``owner`` is the seat of a home island."""

    id: int
    kind: str  # "home" | "ring" | "centre"
    tiles: tuple[Tile, ...]
    owner: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "owner": self.owner, "tiles": [[x, y] for x, y in self.tiles]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Island:
        owner = d.get("owner")
        return cls(int(d["id"]), str(d["kind"]), tuple((int(a), int(b)) for a, b in d["tiles"]),
                   None if owner is None else int(owner))


@dataclass(frozen=True, eq=False)
class Board:
    """An immutable board shared by every state of one game (module docstring: fields, drawing).

    Boards compare by identity (one object per game, the key of per-board caches); compare
    :meth:`to_dict` for equal content."""

    width: int
    height: int
    land: frozenset[Tile]
    islands: tuple[Island, ...]
    bases: tuple[Tile, ...]
    resources: Mapping[Tile, str]
    ports: Mapping[Tile, str]
    _island_of: dict[Tile, int] = field(default_factory=dict, repr=False, compare=False)
    _home: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _nbrs: dict[Tile, tuple[Tile, ...]] = field(default_factory=dict, repr=False, compare=False)
    _rows: list[str] = field(default_factory=list, repr=False, compare=False)
    _land_mask: bytearray = field(default_factory=bytearray, repr=False, compare=False)
    _bits: dict[int | str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for i, isl in enumerate(self.islands):
            for t in isl.tiles:
                self._island_of[t] = i
            if isl.kind == "home" and isl.owner is not None:
                self._home[isl.owner] = i
        object.__setattr__(self, "_nbrs", _neighbour_table(self.width, self.height))

    # -- queries -------------------------------------------------------------------------
    def in_bounds(self, t: Tile) -> bool:
        return 0 <= t[0] < self.width and 0 <= t[1] < self.height

    def is_land(self, t: Tile) -> bool:
        return t in self.land

    def is_sea(self, t: Tile) -> bool:
        return self.in_bounds(t) and t not in self.land

    def island_of(self, t: Tile) -> Island | None:
        i = self._island_of.get(t)
        return None if i is None else self.islands[i]

    def island_index(self, t: Tile) -> int | None:
        return self._island_of.get(t)

    def islands_of_kind(self, kind: str) -> tuple[Island, ...]:
        return tuple(i for i in self.islands if i.kind == kind)

    def home_island(self, seat: int) -> Island:
        return self.islands[self._home[seat]]

    def is_home_of(self, t: Tile, seat: int) -> bool:
        i = self._home.get(seat)
        return i is not None and self._island_of.get(t) == i

    def home_owner(self, t: Tile) -> int | None:
        i = self._island_of.get(t)
        if i is None:
            return None
        isl = self.islands[i]
        return isl.owner if isl.kind == "home" else None

    def neighbours(self, t: Tile) -> tuple[Tile, ...]:
        """In-bounds orthogonal neighbours in N, E, S, W order (precomputed)."""
        got = self._nbrs.get(t)
        if got is not None:
            return got
        return tuple(n for n in around(t) if self.in_bounds(n))  # a tile off the board

    def sea_neighbours(self, t: Tile) -> list[Tile]:
        return [n for n in self.neighbours(t) if n not in self.land]

    def coast(self, island: Island) -> tuple[Tile, ...]:
        """The sea tiles orthogonally adjacent to ``island``, sorted."""
        return tuple(sorted({n for t in island.tiles for n in self.sea_neighbours(t)}))

    def within(self, t: Tile, r: int) -> tuple[Tile, ...]:
        """In-bounds tiles within Manhattan distance ``r`` of ``t`` (shared tables per board size)."""
        return _within_table(self.width, self.height, r)[t]

    def crosses(self) -> Mapping[Tile, frozenset[Tile]]:
        """Every in-bounds tile -> :func:`cross` of it (shared tables per board size)."""
        return _cross_table(self.width, self.height)

    def land_mask(self) -> bytearray:
        """1 for land, 0 for sea, by tile index ``y * width + x`` (computed once; do not mutate)."""
        if not self._land_mask:
            self._land_mask.extend(1 if (i % self.width, i // self.width) in self.land else 0
                                   for i in range(self.width * self.height))
        return self._land_mask

    # -- tile bits: bit ``y * width + x`` of an int stands for tile (x, y) -----------------------
    # Sets of tiles as ints: a union is one ``|``, and the search of plan_path and the sight of
    # fog.py are a few int operations per step instead of one set operation per tile.
    def tile_bits(self, tiles: Iterable[Tile]) -> int:
        """The in-bounds ``tiles`` as tile bits."""
        w, h = self.width, self.height
        m = 0
        for x, y in tiles:
            if 0 <= x < w and 0 <= y < h:
                m |= 1 << (y * w + x)
        return m

    def tiles_of(self, bits: int) -> list[Tile]:
        """The tiles of ``bits``, in (y, x) order."""
        tiles = _tile_list(self.width, self.height)
        out: list[Tile] = []
        if not bits:
            return out
        first = ((bits & -bits).bit_length() - 1) >> 3  # the first byte holding a set bit
        base = first * 8
        for byte in (bits >> base).to_bytes((bits.bit_length() + 7) // 8 - first, "little"):
            if byte:
                for o in _BYTE_BITS[byte]:
                    out.append(tiles[base + o])
            base += 8
        return out

    def area_bits(self, r: int) -> Mapping[Tile, int]:
        """Every in-bounds tile -> the tiles within distance ``r`` of it (:meth:`within`) as tile
        bits (shared tables per board size and radius)."""
        return _area_table(self.width, self.height, r)

    def all_bits(self) -> int:
        return _edge_bits(self.width, self.height)[0]

    def land_bits(self) -> int:
        """The land as tile bits (computed once)."""
        got = self._bits.get("land")
        if got is None:
            got = self._bits["land"] = self.tile_bits(self.land)
        return got

    def sea_bits(self) -> int:
        """The sea as tile bits (computed once)."""
        got = self._bits.get("sea")
        if got is None:
            got = self._bits["sea"] = self.all_bits() & ~self.land_bits()
        return got

    def home_bits(self, seat: int) -> int:
        """The tiles of ``seat``'s home island as tile bits (computed once)."""
        got = self._bits.get(seat)
        if got is None:
            got = self._bits[seat] = self.tile_bits(self.home_island(seat).tiles)
        return got

    def edge_bits(self) -> tuple[int, int]:
        """(every tile but the west column, every tile but the east column) as tile bits: a shift
        by one column masked with these does not wrap around a row's end."""
        _, not_west, not_east = _edge_bits(self.width, self.height)
        return not_west, not_east

    def neighbour_indices(self) -> list[list[tuple[str, int]]]:
        """By tile index: (direction, neighbour index) in N, E, S, W order, in bounds only."""
        return index_neighbours(self.width, self.height)

    def around_bits(self) -> list[int]:
        """By tile index: its in-bounds neighbours as tile bits."""
        return _around_table(self.width, self.height)

    def index(self, t: Tile) -> int:
        return t[1] * self.width + t[0]

    def tile_at(self, i: int) -> Tile:
        return (i % self.width, i // self.width)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first inconsistency (module docstring: A6–A8 shape)."""
        island_at: dict[Tile, Island] = {}
        homes: dict[int, Island] = {}
        for island in self.islands:
            if island.kind not in ISLAND_KINDS:
                raise ValueError(f"island {island.id}: unknown kind {island.kind!r}")
            for t in island.tiles:
                if t in island_at:
                    raise ValueError(f"tile {t} is in islands {island_at[t].id} and {island.id}")
                island_at[t] = island
            if island.kind == "home":
                if island.owner is None or island.owner in homes:
                    raise ValueError(f"home island {island.id} needs a distinct owner")
                homes[island.owner] = island
        if set(island_at) != set(self.land):
            raise ValueError("land must be exactly the union of the islands' tiles")
        for t in self.land:
            if not self.in_bounds(t):
                raise ValueError(f"land tile {t} is off the board")
        if sorted(homes) != list(range(len(self.bases))):
            raise ValueError(f"{len(self.bases)} bases need home islands of seats 0..{len(self.bases) - 1}")
        for seat, base in enumerate(self.bases):
            if base not in homes[seat].tiles:
                raise ValueError(f"base {base} of seat {seat} is not on its home island")
        for t in list(self.resources) + list(self.ports):
            if t not in self.land:
                raise ValueError(f"resource or port {t} is not on land")
        if set(self.resources) & set(self.ports):
            raise ValueError("a tile cannot be both a resource and a port")

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_parts(cls, width: int, height: int, homes: Sequence[Sequence[Tile]],
                   rings: Sequence[Sequence[Tile]], centres: Sequence[Sequence[Tile]],
                   bases: Sequence[Tile], resources: Mapping[Tile, str], ports: Mapping[Tile, str]) -> Board:
        """A checked board with islands in the canonical order: ``homes[seat]`` first (id = seat),
        then the rings, then the centres, each of these two groups ordered by its smallest tile.

        Raises ``ValueError`` (:meth:`validate`) if the parts do not make a board."""
        islands: list[Island] = []
        for seat, tiles in enumerate(homes):
            islands.append(Island(len(islands), "home", tuple(sorted(tiles)), seat))
        for kind, groups in (("ring", rings), ("centre", centres)):
            for tiles in sorted(tuple(sorted(g)) for g in groups):
                islands.append(Island(len(islands), kind, tiles, None))
        board = cls(width=width, height=height, land=frozenset(t for i in islands for t in i.tiles),
                    islands=tuple(islands), bases=tuple(bases),
                    resources=dict(sorted(resources.items())), ports=dict(sorted(ports.items())))
        board.validate()
        return board

    # -- text ------------------------------------------------------------------------------------
    def glyph(self, t: Tile) -> str:
        """The drawing's character for ``t`` (module docstring)."""
        if t not in self.land:
            return "."
        if t in self.ports:
            return _GLYPH_OF_PORT[self.ports[t]]
        if t in self.resources:
            return _GLYPH_OF_RESOURCE[self.resources[t]]
        if t in self.bases:
            return "B"
        return "#"

    def render(self) -> str:
        """The drawing (module docstring): one character per tile, rows joined by newlines;
        ``parse_board(board.render())`` reads back a board with the same ``to_dict()``."""
        return "\n".join("".join(self.glyph((x, y)) for x in range(self.width)) for y in range(self.height))

    def render_islands(self) -> str:
        """Like :meth:`render`, but land shows its island id (``0-9a-zA-Z``)."""
        def ch(t: Tile) -> str:
            island = self.island_of(t)
            return "." if island is None else _ID_GLYPHS[island.id % len(_ID_GLYPHS)]
        return "\n".join("".join(ch((x, y)) for x in range(self.width)) for y in range(self.height))

    def rows(self) -> list[str]:
        """The land mask as text rows (computed once: the board never changes)."""
        if not self._rows:
            self._rows.extend("".join("#" if (x, y) in self.land else "." for x in range(self.width))
                              for y in range(self.height))
        return list(self._rows)

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def tl(items: Iterable[tuple[Tile, str]]) -> list[list[Any]]:
            return [[t[0], t[1], r] for t, r in sorted(items, key=lambda i: (i[0][1], i[0][0]))]
        return {
            "width": self.width, "height": self.height, "rows": self.rows(),
            "islands": [i.to_dict() for i in self.islands],
            "bases": [[x, y] for x, y in self.bases],
            "resources": tl(self.resources.items()),
            "ports": tl(self.ports.items()),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Board:
        """Deserialise :meth:`to_dict` (a saved state's board), exactly as it was.

        Not a drawing, so not read by :func:`parse_board`: islands (ids, kinds, owners), bases,
        resources and ports are listed and taken as they are (nothing is re-derived, so a scenario
        board's own island numbering and kinds survive); the rows carry only the land, any
        character but ``.``.  Not checked (a state is trusted data): call :meth:`validate`."""
        rows = d["rows"]
        land = frozenset((x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c != ".")
        return cls(width=int(d["width"]), height=int(d["height"]), land=land,
                   islands=tuple(Island.from_dict(i) for i in d["islands"]),
                   bases=tuple((int(a), int(b)) for a, b in d["bases"]),
                   resources={(int(x), int(y)): str(r) for x, y, r in d["resources"]},
                   ports={(int(x), int(y)): str(r) for x, y, r in d["ports"]})


# --------------------------------------------------------------------------------------------
# The drawing read back

Dialect = Literal["map", "scenario"]


def land_groups(land: Iterable[Tile]) -> list[tuple[Tile, ...]]:
    """The 4-connected groups of ``land`` (A7), each sorted, in the reading order (row by row,
    left to right) of their first tile."""
    todo = set(land)
    groups: list[tuple[Tile, ...]] = []
    for start in sorted(todo, key=lambda t: (t[1], t[0])):
        if start not in todo:
            continue
        todo.discard(start)
        group = [start]
        i = 0
        while i < len(group):
            t = group[i]
            i += 1
            for n in around(t):
                if n in todo:
                    todo.discard(n)
                    group.append(n)
        groups.append(tuple(sorted(group)))
    return groups


def parse_board(rows: str | Sequence[str], *, dialect: Dialect = "map", bases: Sequence[Tile] | None = None,
                centres: Iterable[Tile] | None = None,
                legend: Mapping[str, Mapping[str, str]] | None = None,
                kinds: Mapping[Tile, str] | None = None) -> Board:
    """A board from a drawing: a text, or its rows.  The one reader of text boards.

    Every 4-connected group of land becomes an island.  Two dialects share the alphabet of the
    module docstring (``.`` sea, ``#`` plain land, ``w f i u`` resources, ``W F I U`` ports) and
    ``legend`` (extra land characters: ``{"x": {"resource": "wood", "port": "fuel"}}``):

    ``dialect="map"`` — what :meth:`Board.render` writes, read back exactly (a rendered board reads
    back with the same ``to_dict()``), for tests.  Leading/trailing blank lines and the whitespace
    around each row are ignored; rows must have equal length; any other character is an error.
    ``B`` marks a base; seats follow ``bases`` if given (the ``B`` tiles in seat order), else the
    ``B`` tiles in reading order; a home island holds exactly one ``B``.  Another island is a
    centre if it holds a tile of ``centres``, or, without ``centres``, if it has at least
    :data:`CENTRE_SIZE` tiles; the rest are rings.  Islands are numbered canonically
    (:meth:`Board.from_parts`) and the board is checked (:meth:`Board.validate`).

    ``dialect="scenario"`` — hand-made scenario rows (:mod:`engine.archipelago.scenario`), lenient:
    rows are taken as they are and may differ in length (the board is as wide as the longest); a
    digit ``0``–``9`` is the base of that seat; any other character is plain land (``B`` is handy
    for bases placed by ``bases``).  ``bases`` (seat order) replaces the digits.  The island
    holding a seat's base is its home island, the others rings, unless ``kinds`` (tile -> kind of
    the island holding it) says otherwise.  Islands are numbered in the reading order of their
    first tile, and the board is not checked.

    Raises ``ValueError`` naming the row and column of a bad character (map dialect).
    """
    legend = legend or {}
    if dialect not in ("map", "scenario"):
        raise ValueError(f"unknown dialect {dialect!r} (expected 'map' or 'scenario')")
    lines = list(rows.strip("\n").split("\n") if isinstance(rows, str) else rows)
    if dialect == "scenario":
        d = _read_drawing(lines, max((len(r) for r in lines), default=0), True, legend)
        return _scenario_board(d, bases, kinds)
    lines = [ln.strip() for ln in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise ValueError("empty map")
    return _map_board(_read_drawing(lines, len(lines[0]), False, legend), bases, centres)


@dataclass
class _Drawing:
    """A drawing read tile by tile (:func:`parse_board`)."""

    width: int
    height: int
    land: set[Tile] = field(default_factory=set)
    resources: dict[Tile, str] = field(default_factory=dict)
    ports: dict[Tile, str] = field(default_factory=dict)
    marked: list[Tile] = field(default_factory=list)  # "B" (map)
    numbered: dict[int, Tile] = field(default_factory=dict)  # digits (scenario)


def _read_drawing(lines: list[str], width: int, scenario: bool, legend: Mapping[str, Mapping[str, str]]
                  ) -> _Drawing:
    """The land, resources, ports and base marks of a drawing's rows (the alphabet of the module
    docstring, ``legend``'s extra characters); the map dialect's rows must all be ``width`` long."""
    d = _Drawing(width, len(lines))
    for y, line in enumerate(lines):
        if not scenario and len(line) != width:
            raise ValueError(f"row {y}: {len(line)} characters, expected {width}")
        for x, c in enumerate(line):
            t = (x, y)
            if c == ".":
                continue
            d.land.add(t)
            if c in legend:
                if legend[c].get("resource"):
                    d.resources[t] = str(legend[c]["resource"])
                if legend[c].get("port"):
                    d.ports[t] = str(legend[c]["port"])
            elif c in RESOURCE_GLYPHS:
                d.resources[t] = RESOURCE_GLYPHS[c]
            elif c in PORT_GLYPHS:
                d.ports[t] = PORT_GLYPHS[c]
            elif scenario:
                if c.isdigit():
                    d.numbered[int(c)] = t
            elif c == "B":
                d.marked.append(t)
            elif c != "#":
                raise ValueError(f"row {y}, column {x}: unknown character {c!r}")
    return d


def _scenario_board(d: _Drawing, bases: Sequence[Tile] | None, kinds: Mapping[Tile, str] | None) -> Board:
    """The scenario dialect's board (:func:`parse_board`): islands in reading order, not checked."""
    seats = [(int(x), int(y)) for x, y in bases] if bases is not None else [d.numbered[i] for i in sorted(d.numbered)]
    base_of = {t: p for p, t in enumerate(seats)}
    islands = []
    for i, g in enumerate(land_groups(d.land)):
        owner = next((base_of[t] for t in g if t in base_of), None)
        kind = "home" if owner is not None else "ring"
        for t in g:
            if kinds and t in kinds:
                kind = kinds[t]
        islands.append(Island(i, kind, g, owner if kind == "home" else None))
    return Board(width=d.width, height=d.height, land=frozenset(d.land), islands=tuple(islands),
                 bases=tuple(seats), resources=d.resources, ports=d.ports)


def _map_board(d: _Drawing, bases: Sequence[Tile] | None, centres: Iterable[Tile] | None) -> Board:
    """The map dialect's board (:func:`parse_board`): homes by their ``B``, centres, rings; checked."""
    if bases is not None:
        seats = [(int(x), int(y)) for x, y in bases]
        if sorted(seats) != sorted(d.marked):
            raise ValueError("bases must list exactly the B tiles of the drawing")
    else:
        seats = d.marked
    centre_set = None if centres is None else {(int(x), int(y)) for x, y in centres}
    seat_of = {b: s for s, b in enumerate(seats)}
    homes: dict[int, tuple[Tile, ...]] = {}
    rings: list[tuple[Tile, ...]] = []
    centre_groups: list[tuple[Tile, ...]] = []
    for g in sorted(land_groups(d.land)):
        in_group = [seat_of[t] for t in g if t in seat_of]
        if len(in_group) > 1:
            raise ValueError(f"island at {g[0]} holds {len(in_group)} bases")
        if in_group:
            homes[in_group[0]] = g
        elif (len(g) >= CENTRE_SIZE) if centre_set is None else any(t in centre_set for t in g):
            centre_groups.append(g)
        else:
            rings.append(g)
    return Board.from_parts(d.width, d.height, [homes[s] for s in range(len(seats))], rings, centre_groups,
                            seats, d.resources, d.ports)
