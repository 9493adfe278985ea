"""What a player can see (A80–A82) and the fog memory kept in the state (A81, A83).

The one place sight is computed: the resolution, order validation and the player's view
(:mod:`engine.archipelago.view`) all ask this module.

``visible_tiles(state, player)`` is A80: tiles within sight of the player's units (cargo sees
nothing), its outposts (1) and its base (2); :func:`visible_bits` the same as tile bits
(:meth:`engine.archipelago.board.Board.tile_bits`: the resolution works with those).  An enemy
submarine is seen only from a tile orthogonally adjacent to one of the player's units (with
sight), outposts or base (:func:`watch_tiles`); :func:`enemy_in_sight` and :func:`sees_unit` say
whether a unit is seen, :func:`shown_domain` what its A82 domain looks like.
:func:`update_memory` folds the current sight into the explored tiles and the enemy log after
every resolution.
"""

from __future__ import annotations

from collections.abc import Container, Mapping

from engine.archipelago.board import Tile as Tile
from engine.archipelago.board import cross, diamond
from engine.archipelago.state import State, Unit
from engine.archipelago.units import AIR, UNIT_TYPES

OUTPOST_SIGHT = 1
BASE_SIGHT = 2
_AIR_TYPES: frozenset[str] = frozenset(k for k, t in UNIT_TYPES.items() if t.domain == AIR)
_SIGHT: dict[str, int] = {k: t.sight for k, t in UNIT_TYPES.items()}
_MAX_SIGHT = max(OUTPOST_SIGHT, BASE_SIGHT, *_SIGHT.values())
_NO_TILES: frozenset[Tile] = frozenset()


def _areas(state: State) -> list[Mapping[Tile, int]]:
    """Radius -> every tile's diamond of that radius as tile bits (Board.area_bits)."""
    return [state.board.area_bits(r) for r in range(_MAX_SIGHT + 1)]


def _area(state: State, areas: list[Mapping[Tile, int]], t: Tile, r: int) -> int:
    got = areas[r].get(t)
    if got is None:  # off the board (scenario data): the in-bounds part of its diamond
        got = state.board.tile_bits((t[0] + dx, t[1] + dy) for dx, dy in diamond(r))
    return got


def _fixed_sight(state: State, areas: list[Mapping[Tile, int]], player: int) -> int:
    """What ``player``'s outposts and base see."""
    bits = 0
    for t, p in state.outposts.items():
        if p == player:
            bits |= _area(state, areas, t, OUTPOST_SIGHT)
    if player < len(state.board.bases):
        bits |= _area(state, areas, state.board.bases[player], BASE_SIGHT)
    return bits


def visible_bits(state: State, player: int) -> int:
    """A80 as tile bits (:meth:`engine.archipelago.board.Board.tile_bits`): every tile ``player``
    sees now, the union of the diamonds around its units (not cargo), outposts and base."""
    areas = _areas(state)
    bits = _fixed_sight(state, areas, player)
    for u in state.units.values():
        if u.owner == player and u.carrier is None:
            r = _SIGHT[u.type]
            got = areas[r].get(u.tile)
            bits |= got if got is not None else _area(state, areas, u.tile, r)
    return bits


def visible_tiles(state: State, player: int) -> set[Tile]:
    """A80: every tile ``player`` sees now."""
    return set(state.board.tiles_of(visible_bits(state, player)))


def sight(state: State) -> list[int]:
    """:func:`visible_bits` of every seat, with one pass over the units."""
    areas = _areas(state)
    bits = [_fixed_sight(state, areas, p) for p in range(state.players)]
    for u in state.units.values():
        if u.carrier is None and 0 <= u.owner < state.players:
            r = _SIGHT[u.type]
            got = areas[r].get(u.tile)
            bits[u.owner] |= got if got is not None else _area(state, areas, u.tile, r)
    return bits


def in_sight(state: State, bits: int, t: Tile) -> bool:
    """Whether tile ``t`` is one of the tile bits ``bits`` (of :func:`visible_bits`)."""
    b = state.board
    return b.in_bounds(t) and bool(bits >> (t[1] * b.width + t[0]) & 1)


def watch_tiles(state: State, player: int) -> set[Tile]:
    """Tiles from which a submarine is seen (A80): own sighted units, outposts, base, and neighbours."""
    b = state.board
    srcs: list[Tile] = [u.tile for u in state.units.values()
                        if u.owner == player and u.carrier is None and _SIGHT[u.type] > 0]
    srcs.extend(t for t, p in state.outposts.items() if p == player)
    if player < len(b.bases):
        srcs.append(b.bases[player])
    crosses = b.crosses()
    out: set[Tile] = set()
    for t in srcs:
        out |= crosses.get(t) or cross(t)
    return out


def enemy_in_sight(u: Unit, vis: Container[Tile], watch: Container[Tile]) -> bool:
    """A80/A82 for another player's unit, given that player's :func:`visible_tiles` and
    :func:`watch_tiles`: not cargo (nor a carried flag), on a tile in sight; a submarine only on a
    tile orthogonally adjacent to a watcher."""
    if u.carrier is not None or u.tile not in vis:
        return False
    return u.type != "submarine" or u.tile in watch


def sees_unit(state: State, player: int, u: Unit, vis: set[Tile], watch: set[Tile] | None = None) -> bool:
    """Whether ``player`` sees unit ``u`` (own units always; cargo and carried flags of others never).

    ``watch`` (:func:`watch_tiles`) is computed here when left out and needed."""
    if u.owner == player:
        if u.type == "flag" and u.carrier is not None:  # A82: only while its (enemy) carrier is seen
            carrier = state.units.get(u.carrier)
            return carrier is not None and sees_unit(state, player, carrier, vis, watch)
        return True
    if watch is None and u.type == "submarine" and u.carrier is None:
        watch = watch_tiles(state, player)
    return enemy_in_sight(u, vis, _NO_TILES if watch is None else watch)


def shown_domain(state: State, u: Unit) -> str:
    """A82: "air" for aircraft, else the terrain of the unit's tile."""
    if u.type in _AIR_TYPES:
        return "air"
    return "land" if u.tile in state.board.land else "sea"


def tiles_mask(state: State, tiles: set[Tile]) -> int:
    w = state.board.width
    m = 0
    for x, y in tiles:
        m |= 1 << (y * w + x)
    return m


def update_memory(state: State, visible: list[set[Tile]] | None = None) -> list[int]:
    """Fold current sight into explored tiles and enemy logs (mutates ``state``: call on a clone).

    ``visible``: every seat's :func:`visible_tiles`, computed here when left out.  Revealed types
    of dead units are forgotten (A39 "as long as it lives").  Returns the visible tiles used, as
    tile bits per seat."""
    b = state.board
    bits = sight(state) if visible is None else [tiles_mask(state, vis) for vis in visible]
    units = state.units
    on_tile: dict[Tile, list[Unit]] = {}  # the units on the board (not cargo) by tile
    occupied: dict[int, int] = {}  # owner -> the tiles of those units as tile bits
    tile_bit = b.area_bits(0)
    for u in units.values():
        if u.carrier is None:
            on_tile.setdefault(u.tile, []).append(u)
            occupied[u.owner] = occupied.get(u.owner, 0) | tile_bit.get(u.tile, 0)
    for p, ps in enumerate(state.pstates):
        ps.explored |= bits[p]
        if ps.revealed:
            ps.revealed = {i for i in ps.revealed if i in units}
        watch: set[Tile] | None = None
        log = ps.log
        others = 0  # the tiles holding another seat's unit
        for owner, o_bits in occupied.items():
            if owner != p:
                others |= o_bits
        for t in b.tiles_of(bits[p] & others):
            for u in on_tile[t]:
                if u.owner == p:
                    continue
                if u.type == "submarine":
                    if watch is None:
                        watch = watch_tiles(state, p)
                    if t not in watch:
                        continue
                old = log.get(u.id)
                typ = u.type if u.id in ps.revealed else (old[2] if old is not None else None)
                log[u.id] = (t, state.round, typ, u.owner)
        for uid in ps.revealed:
            ent = log.get(uid)
            if ent is not None and ent[2] is None:
                log[uid] = (ent[0], ent[1], units[uid].type, ent[3])
    return bits


def is_explored(state: State, player: int, t: Tile) -> bool:
    b = state.board
    if not b.in_bounds(t):
        return False
    return bool(state.pstates[player].explored >> (t[1] * b.width + t[0]) & 1)
