"""One player's view read as a map, and the view-side reach: where a unit may go as far as its
player knows the map.

Everything that plans from a view alone reads the view here: the random player
(:mod:`engine.archipelago.randplay`), legal moves (:mod:`engine.archipelago.legal`), the standing
orders' checks (:mod:`engine.archipelago.standing`) and the autopilot
(:mod:`engine.archipelago.autopilot`).  :class:`ViewMap` holds the view's terrain as one byte per
tile (``"?"`` unexplored, ``"."`` sea, ``"#"`` land) with the board's neighbour table
(:func:`engine.archipelago.board.index_neighbours`), and, read once when first asked, the player's
home island, control, own units and carriers, the enemies it sees and the outposts it knows.

**Reach.**  A unit plans over the *explored* tiles of its terrain
(:data:`engine.archipelago.rules.PLAN_TERRAIN`: A18, A23, A60) — :meth:`ViewMap.passable`.  The state
side (:class:`engine.archipelago.orders.PathPlanner`) reads the same table from the board and the
player's explored bits, and the two agree: a tile the view side reaches is one the state side
plans a path to.  What differs on purpose is what the view side adds, each where it is used:
:func:`distances` and :meth:`ViewMap.path` take tiles to go around (the autopilot avoids known
enemies and own units) and tiles to end on without passing through (legal moves: boarding an own
carrier, A24); the state side ignores units (A18).

Tiles are ``(x, y)`` tuples, or indices ``y * width + x`` where speed matters (the autopilot).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Any

from engine.archipelago.board import DELTA, Tile, index_neighbours, tie_key
from engine.archipelago.economy import BANK_RATE, PORT_RATE
from engine.archipelago.rules import BOMBARD_RANGE, PLAN_TERRAIN, REVEAL_RANGE, STRIKE_RANGE
from engine.archipelago.units import CARRIERS, LAND, RESOURCES, UNIT_TYPES

__all__ = ["LAND_GLYPH", "SEA_GLYPH", "UNEXPLORED_GLYPH", "ViewMap", "bank_rates", "distances", "reach", "tile_of"]

LAND_GLYPH, SEA_GLYPH, UNEXPLORED_GLYPH = ord("#"), ord("."), ord("?")
#: terrain kind (:data:`engine.archipelago.rules.PLAN_TERRAIN`, but "home") -> the view's rows
#: translated to 1 where a unit of that kind may plan a path
_OPEN = {"land": bytes.maketrans(b"#.?", b"\x01\x00\x00"),
         "sea": bytes.maketrans(b"#.?", b"\x00\x01\x00"),
         "any": bytes.maketrans(b"#.?", b"\x01\x01\x00")}


def tile_of(d: Mapping[str, Any]) -> Tile:
    """A view's ``{"x", "y"}`` as a tile."""
    return (int(d["x"]), int(d["y"]))


def reach(nb: list[list[tuple[str, int]]], open_: bytes | bytearray, sources: Collection[int], *,
          blocked: Collection[int] = (), ends: Collection[int] = (), limit: int | None = None) -> dict[int, int]:
    """The view-side reach: tile index -> the steps from the nearest of ``sources`` over ``open_``
    tiles that are not ``blocked``, at most ``limit`` steps, for every tile reached (the sources
    at 0); ``ends`` (not open) are reached as a last step but not passed through.  ``nb``:
    :func:`engine.archipelago.board.index_neighbours`."""
    seen = dict.fromkeys(sorted(sources), 0)
    frontier = list(seen)
    d = 0
    while frontier and (limit is None or d < limit):
        d += 1
        nxt: list[int] = []
        for i in frontier:
            for _, j in nb[i]:
                if j not in seen:
                    if open_[j] and j not in blocked:
                        seen[j] = d
                        nxt.append(j)
                    elif j in ends:
                        seen[j] = d
        frontier = nxt
    return seen


def distances(nb: list[list[tuple[str, int]]], open_: bytes | bytearray, sources: Collection[int], *,
              blocked: Collection[int] = ()) -> list[int]:
    """:func:`reach` as a field: by tile index, the steps from the nearest source (−1: not reached)."""
    dist = [-1] * len(nb)
    for i, d in reach(nb, open_, sources, blocked=blocked).items():
        dist[i] = d
    return dist


def bank_rates(view: Mapping[str, Any]) -> dict[str, int]:
    """A52 from a view: what the bank takes for 1 of anything, by the resource given — 2 for a
    resource whose port the player controls, else 4 (the state side:
    :func:`engine.archipelago.economy.bank_rate`)."""
    control = {tile_of(t) for t in view.get("control") or ()}
    rates = dict.fromkeys(RESOURCES, BANK_RATE)
    for p in view.get("ports") or ():
        if tile_of(p["tile"]) in control:
            rates[p["resource"]] = PORT_RATE
    return rates


class ViewMap:
    """One player's view read as a map (module docstring); ``v`` is the view."""

    def __init__(self, v: Mapping[str, Any]) -> None:
        self.v = v
        self.w: int = int(v["width"])
        self.h: int = int(v["height"])
        self.me: int = int(v["player"])
        self.terr: bytes = "".join(v["rows"]).encode()
        self.nb = index_neighbours(self.w, self.h)
        self._open: dict[str, bytes | bytearray] = {}
        self._mines: dict[str, set[Tile]] = {}

    # -- tiles -------------------------------------------------------------------------------------
    def ix(self, t: Tile) -> int:
        return t[1] * self.w + t[0]

    def xy(self, i: int) -> Tile:
        return (i % self.w, i // self.w)

    def in_bounds(self, t: Tile) -> bool:
        return 0 <= t[0] < self.w and 0 <= t[1] < self.h

    def terrain(self, t: Tile) -> str:
        """``"?"`` unexplored, ``"."`` sea, ``"#"`` land, ``""`` off the board."""
        if not (0 <= t[0] < self.w and 0 <= t[1] < self.h):
            return ""
        return chr(self.terr[t[1] * self.w + t[0]])

    # -- what the view shows, read once ------------------------------------------------------------
    @cached_property
    def own(self) -> dict[str, dict[str, Any]]:
        """Own units by id (the view's order: by id)."""
        return {u["id"]: u for u in self.v["units"]}

    @cached_property
    def enemies(self) -> list[dict[str, Any]]:
        return list(self.v["enemies"])

    @cached_property
    def home(self) -> set[Tile]:
        """The player's home island (its explored tiles: all of it, A14)."""
        return {(t["x"], t["y"]) for t in self._home_tiles()}

    @cached_property
    def home_ix(self) -> set[int]:
        """:attr:`home` by tile index."""
        w = self.w
        return {t["y"] * w + t["x"] for t in self._home_tiles()}

    def _home_tiles(self) -> list[Mapping[str, int]]:
        return [t for isl in self.v["islands"] if isl["kind"] == "home" and isl.get("owner") == self.me
                for t in isl["tiles"]]

    @cached_property
    def control(self) -> set[Tile]:
        """The explored land tiles the player controls."""
        return {(t["x"], t["y"]) for t in self.v["control"]}

    @cached_property
    def control_ix(self) -> set[int]:
        """:attr:`control` by tile index."""
        w = self.w
        return {t["y"] * w + t["x"] for t in self.v["control"]}

    @cached_property
    def carrier_ix(self) -> dict[int, str]:
        """Tile index -> the own carrier (ship that takes cargo, transport plane) standing there."""
        got: dict[int, str] = {}
        w = self.w
        for u in self.v["units"]:
            if "carrier" not in u and u["type"] in CARRIERS:
                got[u["tile"]["y"] * w + u["tile"]["x"]] = u["id"]
        return got

    @cached_property
    def carriers_at(self) -> dict[Tile, str]:
        """:attr:`carrier_ix` by tile."""
        return {self.xy(i): c for i, c in self.carrier_ix.items()}

    @cached_property
    def occupied(self) -> set[Tile]:
        """Tiles with a unit the player sees standing there (own units but cargo, enemies)."""
        got = {tile_of(u["tile"]) for u in self.v["units"] if "carrier" not in u}
        got.update(tile_of(e["tile"]) for e in self.enemies)
        return got

    @cached_property
    def outposts(self) -> set[Tile]:
        return {tile_of(o["tile"]) for o in self.v["outposts"]}

    @cached_property
    def type_counts(self) -> Mapping[str, int]:
        """How many own units of each type there are (A42's limits count them)."""
        got: dict[str, int] = {}
        for u in self.v["units"]:
            got[u["type"]] = got.get(u["type"], 0) + 1
        return got

    @cached_property
    def boarding_ix(self) -> set[int]:
        """The tiles (indices) of own carriers with room for one more unit (A24, A35)."""
        return {i for i, cid in self.carrier_ix.items() if self.room(cid) > 0}

    def room(self, cid: str) -> int:
        """How many more units the own carrier ``cid`` takes (A24, A35)."""
        c = self.own[cid]
        return UNIT_TYPES[c["type"]].capacity - len(c.get("cargo") or ())

    # -- derived sets ----------------------------------------------------------------------------------
    def sea_next_to(self, tiles: Collection[Tile]) -> set[Tile]:
        """The explored sea tiles next to one of ``tiles``."""
        w, h, terr = self.w, self.h, self.terr
        got: set[Tile] = set()
        for t in tiles:
            if 0 <= t[0] < w and 0 <= t[1] < h:
                for _, j in self.nb[t[1] * w + t[0]]:
                    if terr[j] == SEA_GLYPH:
                        got.add((j % w, j // w))
        return got

    def mine_sites(self, typ: str) -> set[Tile]:
        """A42 as far as the view shows: where a mine of ``typ`` may go, whatever stands there — a
        land mine on land the player controls, a sea mine on explored sea next to it."""
        got = self._mines.get(typ)
        if got is None:
            if typ == "landmine":
                got = {t for t in self.control if self.terrain(t) == "#"}
            else:
                got = self.sea_next_to(self.control)
            self._mines[typ] = got
        return got

    def raft_ships(self) -> list[str]:
        """The own ships that may get a raft (A33: a ship but a raft, without one yet), by id."""
        return sorted(u["id"] for u in self.own.values()
                      if UNIT_TYPES[u["type"]].is_ship and u["type"] != "raft" and not u.get("raft"))

    def outpost_site(self, typ: str, t: Tile) -> bool:
        """A36 as far as the view shows: a unit of ``typ`` standing (not as cargo) on ``t`` may
        found an outpost there — a land unit but a mine or flag, on explored land outside the home
        island, where no outpost is known (the cost aside)."""
        ut = UNIT_TYPES[typ]
        return (ut.domain == LAND and not ut.is_mine and not ut.is_flag and self.terrain(t) == "#"
                and t not in self.home and t not in self.outposts)

    def targets(self, action: str, t: Tile) -> list[dict[str, Any]]:
        """The enemies in sight that a unit on ``t`` may target with ``action`` ("reveal", "bombard",
        "strike"), as far as the view shows (A37–A39: the distance, and a bombardment's target a
        land unit as shown), in the view's order."""
        if action == "bombard":
            return [e for e in self.enemies
                    if abs(e["tile"]["x"] - t[0]) + abs(e["tile"]["y"] - t[1]) == BOMBARD_RANGE
                    and e["domain"] == "land"]
        reach = REVEAL_RANGE if action == "reveal" else STRIKE_RANGE
        return [e for e in self.enemies if abs(e["tile"]["x"] - t[0]) + abs(e["tile"]["y"] - t[1]) <= reach]

    # -- reach -----------------------------------------------------------------------------------------
    def passable(self, typ: str) -> bytes | bytearray:
        """By tile index, 1 where a unit of ``typ`` may plan a path: explored tiles of its terrain
        (:data:`engine.archipelago.rules.PLAN_TERRAIN`: A18, A23, A60)."""
        kind = PLAN_TERRAIN[typ]
        got = self._open.get(kind)
        if got is None:
            if kind == "home":
                m = bytearray(self.w * self.h)
                for i in self.home_ix:
                    m[i] = 1
                got = m
            else:
                got = self.terr.translate(_OPEN[kind])
            self._open[kind] = got
        return got

    def passable_at(self, typ: str, t: Tile) -> bool:
        """:meth:`passable` at a tile (``False`` off the board)."""
        return 0 <= t[0] < self.w and 0 <= t[1] < self.h and bool(self.passable(typ)[t[1] * self.w + t[0]])

    def reachable(self, typ: str, start: Tile, limit: int) -> list[Tile]:
        """The tiles a unit of ``typ`` at ``start`` reaches within ``limit`` steps over passable
        tiles (``start`` included), sorted."""
        w = self.w
        return sorted((i % w, i // w) for i in reach(self.nb, self.passable(typ), (self.ix(start),), limit=limit))

    def path(self, start: int, typ: str, goals: Collection[int], limit: int = 10_000,
             blocked: Collection[int] = ()) -> list[str] | None:
        """A shortest path (tile indices) from ``start`` to the nearest of ``goals`` (entered
        whatever stands on them: the caller passes only goals the unit may enter), over tiles
        passable for ``typ`` and not ``blocked``; ties: A28 from ``start``.  ``None``: none within
        ``limit`` steps."""
        if not goals:
            return None
        if start in goals:
            return []
        pas = self.passable(typ)
        nb = self.nb
        parent: dict[int, tuple[int, str]] = {start: (-1, "")}
        frontier = [start]
        depth = 0
        while frontier and depth < limit:
            depth += 1
            nxt: list[int] = []
            found: list[int] = []
            for i in frontier:
                for d, j in nb[i]:
                    if j in parent:
                        continue
                    if j in goals:
                        parent[j] = (i, d)
                        found.append(j)
                    elif pas[j] and j not in blocked:
                        parent[j] = (i, d)
                        nxt.append(j)
            if found:
                origin = self.xy(start)
                best = min(found, key=lambda j: tie_key(origin, self.xy(j)))
                path: list[str] = []
                while best != start:
                    best, d = parent[best]
                    path.append(d)
                path.reverse()
                return path
            frontier = nxt
        return None

    def first_carrier_on(self, start: Tile, path: list[str], own_carrier: str | None) -> tuple[int, str] | None:
        """A24: the first step of ``path`` (from ``start``) onto an own carrier other than
        ``own_carrier`` (the unit's, when it is cargo), with the carrier's id; ``None``: no such step."""
        x, y = start
        for k, d in enumerate(path):
            dx, dy = DELTA[d]
            x += dx
            y += dy
            c = self.carriers_at.get((x, y))
            if c is not None and c != own_carrier:
                return k, c
        return None
