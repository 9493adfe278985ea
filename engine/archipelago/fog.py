"""What a player can see (A80–A84) and the fog memory kept in the state (A81, A83).

``visible_tiles(state, player)`` is A80: tiles within sight of the player's units (cargo sees
nothing), its outposts (1) and its base (2).  An enemy submarine is seen only from a tile
orthogonally adjacent to one of the player's units (with sight), outposts or base
(:func:`sees_unit`).  :func:`update_memory` folds the current sight into the explored tiles and the
enemy log after every resolution; :func:`simple_view` is a stand-in for ``view.py``.
"""

from __future__ import annotations

from typing import Any

from engine.archipelago.board import DIRS, diamond, tile_dict
from engine.archipelago.board import Tile as Tile
from engine.archipelago.state import State, Unit
from engine.archipelago.units import AIR, RESOURCES, UNIT_TYPES

OUTPOST_SIGHT = 1
BASE_SIGHT = 2


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


def sees_unit(state: State, player: int, u: Unit, vis: set[Tile], watch: set[Tile] | None = None) -> bool:
    """Whether ``player`` sees unit ``u`` (own units always; cargo and carried flags of others never)."""
    if u.owner == player:
        if u.type == "flag" and u.carrier is not None:  # A82: only while its (enemy) carrier is seen
            carrier = state.units.get(u.carrier)
            return carrier is not None and sees_unit(state, player, carrier, vis, watch)
        return True
    if u.carrier is not None:
        return False
    if u.type == "submarine":
        if watch is None:
            watch = watch_tiles(state, player)
        return u.tile in watch and u.tile in vis
    return u.tile in vis


def shown_domain(state: State, u: Unit) -> str:
    """A82: "air" for aircraft, else the terrain of the unit's tile."""
    if UNIT_TYPES[u.type].domain == AIR:
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


def simple_view(state: State, player: int) -> dict[str, Any]:
    """A simple correct view (own units in full, visible enemies as owner + shown domain)."""
    b = state.board
    ps = state.pstates[player]
    vis = visible_tiles(state, player)
    watch = watch_tiles(state, player)
    rows = []
    for y in range(b.height):
        row = []
        for x in range(b.width):
            if not ps.explored >> (y * b.width + x) & 1:
                row.append("?")
            else:
                row.append("#" if (x, y) in b.land else ".")
        rows.append("".join(row))
    units: list[dict[str, Any]] = []
    for uid in sorted(state.units):
        u = state.units[uid]
        if u.owner == player:
            if sees_unit(state, player, u, vis, watch):
                units.append(u.to_dict())
        elif sees_unit(state, player, u, vis, watch):
            d: dict[str, Any] = {"id": u.id, "owner": u.owner, "domain": shown_domain(state, u),
                                 "tile": tile_dict(u.tile)}
            if u.id in ps.revealed:
                d["type"] = u.type
            units.append(d)
    explored_feats = [
        {"tile": tile_dict(t), "resource": r} for t, r in sorted(b.resources.items(), key=_yx)
        if is_explored(state, player, t)
    ]
    ports = [{"tile": tile_dict(t), "resource": r} for t, r in sorted(b.ports.items(), key=_yx)
             if is_explored(state, player, t)]
    outposts = [{"tile": tile_dict(t), "owner": p} for t, p in sorted(state.outposts.items(), key=_yx)
                if p == player or t in vis]
    log = [{"unit": k, "owner": o, "tile": tile_dict(t), "round": r, **({"type": ty} if ty else {})}
           for k, (t, r, ty, o) in sorted(ps.log.items()) if k not in state.units or
           not sees_unit(state, player, state.units[k], vis, watch)]
    others = [{"seat": p, "score": q.score, "resources": q.opening_total}
              for p, q in enumerate(state.pstates)]
    view: dict[str, Any] = {
        "game": "archipelago", "player": player, "players": state.players, "round": state.round,
        "version": state.version, "target": state.target, "max_rounds": state.max_rounds,
        "width": b.width, "height": b.height, "rows": rows,
        "base": tile_dict(b.bases[player]), "resources_on_map": explored_feats, "ports": ports,
        "units": units, "outposts": outposts, "enemy_log": log,
        "stock": dict(ps.stock), "score": ps.score, "scores": others,
        "control": [tile_dict(t) for t, p in sorted(state.control.items(), key=_yx) if p == player],
        "offers": [dict(o) for o in state.offers if o["from"] == player or o.get("to") in (None, player)],
        "chat": [dict(m) for m in state.chat if m["from"] == player or m.get("to") in (None, player)],
        "directions": list(DIRS), "resources": list(RESOURCES),
    }
    if ps.bonus is not None:
        view["bonus"] = ps.bonus
    if state.outcome is not None:
        view["outcome"] = dict(state.outcome)
    return view


def _yx(item: tuple[Tile, Any]) -> tuple[int, int]:
    return (item[0][1], item[0][0])
