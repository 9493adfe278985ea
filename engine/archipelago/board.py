"""The immutable board an Archipelago state plays on, and tile helpers (A6–A8, A28).

:class:`Board` needs only what the map generator's ``GameMap`` offers (width, height, land,
islands, bases, resources, ports): ``Board.from_map`` copies any such map once per game, and the
state shares the same Board object between rounds (it is never copied per round).

Tiles are ``(x, y)`` tuples: x the column, y the row, row 0 on top.  Directions are N (y-1),
E (x+1), S (y+1), W (x-1); A28 orders ties by Manhattan distance, then direction: among tiles at
one distance, by bearing clockwise from North (A105; neighbours N, E, S, W).

Serialised form (``Board.to_dict``)::

    {"width": W, "height": H,
     "rows": ["..##..", ...],              # "." sea, "#" land, one string per row
     "islands": [{"id": 0, "kind": "home"|"ring"|"centre", "owner": 0 | None,
                  "tiles": [[x, y], ...]}, ...],
     "bases": [[x, y], ...],               # bases[seat]
     "resources": [[x, y, "wood"], ...],   # sorted by (y, x)
     "ports": [[x, y, "fuel"], ...]}       # sorted by (y, x)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

Tile = tuple[int, int]

DIRS: tuple[str, ...] = ("N", "E", "S", "W")
DELTA: dict[str, Tile] = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}


def step(t: Tile, d: str) -> Tile:
    dx, dy = DELTA[d]
    return (t[0] + dx, t[1] + dy)


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
    if isinstance(v, Mapping):
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


def _neighbour_table(width: int, height: int) -> dict[Tile, tuple[Tile, ...]]:
    """Every tile's in-bounds neighbours in N, E, S, W order; one shared table per board size."""
    table = _NEIGHBOURS.get((width, height))
    if table is None:
        table = {(x, y): tuple(n for n in ((x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y))
                               if 0 <= n[0] < width and 0 <= n[1] < height)
                 for y in range(height) for x in range(width)}
        _NEIGHBOURS[(width, height)] = table
    return table


_WITHIN: dict[tuple[int, int, int], dict[Tile, tuple[Tile, ...]]] = {}
_INDEX: dict[tuple[int, int], list[list[tuple[str, int]]]] = {}


def _within_table(width: int, height: int, r: int) -> dict[Tile, tuple[Tile, ...]]:
    table = _WITHIN.get((width, height, r))
    if table is None:
        offsets = diamond(r)
        table = {(x, y): tuple((x + dx, y + dy) for dx, dy in offsets
                               if 0 <= x + dx < width and 0 <= y + dy < height)
                 for y in range(height) for x in range(width)}
        _WITHIN[(width, height, r)] = table
    return table


def _index_table(width: int, height: int) -> list[list[tuple[str, int]]]:
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


class MapLike(Protocol):
    """What a map generator's map offers (the subset the engine relies on)."""

    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def land(self) -> frozenset[Tile]: ...
    @property
    def islands(self) -> Any: ...
    @property
    def bases(self) -> Any: ...
    @property
    def resources(self) -> Mapping[Tile, str]: ...
    @property
    def ports(self) -> Mapping[Tile, str]: ...


@dataclass(frozen=True)
class Island:
    id: int
    kind: str  # "home" | "ring" | "centre"
    tiles: tuple[Tile, ...]
    owner: int | None


@dataclass(frozen=True, eq=False)
class Board:
    """An immutable board shared by every state of one game."""

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
        x, y = t  # a tile off the board: its in-bounds neighbours
        return tuple(n for n in ((x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y)) if self.in_bounds(n))

    def within(self, t: Tile, r: int) -> tuple[Tile, ...]:
        """In-bounds tiles within Manhattan distance ``r`` of ``t`` (shared tables per board size)."""
        return _within_table(self.width, self.height, r)[t]

    def land_mask(self) -> bytearray:
        """1 for land, 0 for sea, by tile index ``y * width + x`` (computed once; do not mutate)."""
        if not self._land_mask:
            self._land_mask.extend(1 if (i % self.width, i // self.width) in self.land else 0
                                   for i in range(self.width * self.height))
        return self._land_mask

    def neighbour_indices(self) -> list[list[tuple[str, int]]]:
        """By tile index: (direction, neighbour index) in N, E, S, W order, in bounds only."""
        return _index_table(self.width, self.height)

    def index(self, t: Tile) -> int:
        return t[1] * self.width + t[0]

    def tile_at(self, i: int) -> Tile:
        return (i % self.width, i // self.width)

    # -- construction / serialisation ---------------------------------------------------------
    @classmethod
    def from_map(cls, m: MapLike) -> Board:
        if isinstance(m, Board):
            return m
        islands = tuple(Island(int(i.id), str(i.kind), tuple(sorted((int(a), int(b)) for a, b in i.tiles)),
                               None if i.owner is None else int(i.owner)) for i in m.islands)
        return cls(width=int(m.width), height=int(m.height), land=frozenset(m.land), islands=islands,
                   bases=tuple((int(a), int(b)) for a, b in m.bases),
                   resources=dict(m.resources), ports=dict(m.ports))

    def rows(self) -> list[str]:
        """The land mask as text rows (computed once: the board never changes)."""
        if not self._rows:
            self._rows.extend("".join("#" if (x, y) in self.land else "." for x in range(self.width))
                              for y in range(self.height))
        return list(self._rows)

    def to_dict(self) -> dict[str, Any]:
        def tl(items: Iterable[tuple[Tile, str]]) -> list[list[Any]]:
            return [[t[0], t[1], r] for t, r in sorted(items, key=lambda i: (i[0][1], i[0][0]))]
        return {
            "width": self.width, "height": self.height, "rows": self.rows(),
            "islands": [{"id": i.id, "kind": i.kind, "owner": i.owner,
                         "tiles": [[x, y] for x, y in i.tiles]} for i in self.islands],
            "bases": [[x, y] for x, y in self.bases],
            "resources": tl(self.resources.items()),
            "ports": tl(self.ports.items()),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Board:
        rows = d["rows"]
        land = frozenset((x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c != ".")
        islands = tuple(Island(int(i["id"]), str(i["kind"]), tuple((int(a), int(b)) for a, b in i["tiles"]),
                               None if i.get("owner") is None else int(i["owner"])) for i in d["islands"])
        return cls(width=int(d["width"]), height=int(d["height"]), land=land, islands=islands,
                   bases=tuple((int(a), int(b)) for a, b in d["bases"]),
                   resources={(int(x), int(y)): str(r) for x, y, r in d["resources"]},
                   ports={(int(x), int(y)): str(r) for x, y, r in d["ports"]})
