"""What a player can see (A80–A82) and the fog memory kept in the state (A81, A83).

The one place sight is computed: the resolution, order validation and the player's view
(:mod:`engine.archipelago.view`) all ask this module.

``visible_tiles(state, player)`` is A80: tiles within sight of the player's units (cargo sees
nothing), its outposts (1) and its base (2).  An enemy submarine is seen only from a tile
orthogonally adjacent to one of the player's units (with sight), outposts or base
(:func:`watch_tiles`); :func:`enemy_in_sight` and :func:`sees_unit` say whether a unit is seen,
:func:`shown_domain` what its A82 domain looks like.  :func:`update_memory` folds the current sight
into the explored tiles and the enemy log after every resolution.
"""

from __future__ import annotations

from collections.abc import Container

from engine.archipelago.board import Tile as Tile
from engine.archipelago.board import diamond
from engine.archipelago.state import State, Unit
from engine.archipelago.units import AIR, UNIT_TYPES

OUTPOST_SIGHT = 1
BASE_SIGHT = 2
_AIR_TYPES: frozenset[str] = frozenset(k for k, t in UNIT_TYPES.items() if t.domain == AIR)
_NO_TILES: frozenset[Tile] = frozenset()


def visible_tiles(state: State, player: int) -> set[Tile]:
    """A80: every tile ``player`` sees now."""
    b = state.board
    w, h = b.width, b.height
    vis: set[Tile] = set()
    centres: list[tuple[Tile, int]] = []
    for u in state.units.values():
        if u.owner == player and u.carrier is None:
            centres.append((u.tile, UNIT_TYPES[u.type].sight))
    for t, p in state.outposts.items():
        if p == player:
            centres.append((t, OUTPOST_SIGHT))
    if player < len(b.bases):
        centres.append((b.bases[player], BASE_SIGHT))
    for t, r in centres:
        if 0 <= t[0] < w and 0 <= t[1] < h:
            vis.update(b.within(t, r))
        else:  # off the board (scenario data): the in-bounds part of its diamond
            vis.update((t[0] + dx, t[1] + dy) for dx, dy in diamond(r)
                       if 0 <= t[0] + dx < w and 0 <= t[1] + dy < h)
    return vis


def watch_tiles(state: State, player: int) -> set[Tile]:
    """Tiles from which a submarine is seen (A80): own sighted units, outposts, base, and neighbours."""
    out: set[Tile] = set()
    srcs: list[Tile] = [u.tile for u in state.units.values()
                        if u.owner == player and u.carrier is None and UNIT_TYPES[u.type].sight > 0]
    srcs.extend(t for t, p in state.outposts.items() if p == player)
    if player < len(state.board.bases):
        srcs.append(state.board.bases[player])
    for x, y in srcs:
        out.add((x, y))
        out.add((x, y - 1))
        out.add((x + 1, y))
        out.add((x, y + 1))
        out.add((x - 1, y))
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


def update_memory(state: State, visible: list[set[Tile]] | None = None) -> list[set[Tile]]:
    """Fold current sight into explored tiles and enemy logs (mutates ``state``: call on a clone).

    Revealed types of dead units are forgotten (A39 "as long as it lives").  Returns the
    visible sets used."""
    if visible is None:
        visible = [visible_tiles(state, p) for p in range(state.players)]
    units = state.units
    for p, ps in enumerate(state.pstates):
        vis = visible[p]
        ps.explored |= tiles_mask(state, vis)
        if ps.revealed:
            ps.revealed = {i for i in ps.revealed if i in units}
        watch: set[Tile] | None = None
        log = ps.log
        for u in units.values():
            if u.owner == p or u.carrier is not None or u.tile not in vis:
                continue
            if u.type == "submarine":
                if watch is None:
                    watch = watch_tiles(state, p)
                if u.tile not in watch:
                    continue
            old = log.get(u.id)
            typ = u.type if u.id in ps.revealed else (old[2] if old is not None else None)
            log[u.id] = (u.tile, state.round, typ, u.owner)
        for uid in ps.revealed:
            ent = log.get(uid)
            if ent is not None and ent[2] is None:
                log[uid] = (ent[0], ent[1], units[uid].type, ent[3])
    return visible


def is_explored(state: State, player: int, t: Tile) -> bool:
    b = state.board
    if not b.in_bounds(t):
        return False
    return bool(state.pstates[player].explored >> (t[1] * b.width + t[0]) & 1)
