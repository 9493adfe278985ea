"""What one player may know of an Archipelago game: ``view(state, player)`` (A80–A85).

The view is *computed* from the full state after every round (never stored) and holds exactly what
the player may know, nothing else:

- A80 the tiles it sees now (sight of its units — cargo sees nothing —, its outposts 1, its base 2);
  an enemy submarine only from a tile orthogonally adjacent to one of its sighted units, outposts
  or base (sight is computed by :mod:`engine.archipelago.fog`, as for the resolution);
- A81 the terrain of every tile it ever saw, without units;
- A82 its own units in full; enemy units in sight as id + owner + *shown domain* (``"air"`` for
  aircraft, else the terrain of their tile: a naval commando at sea looks like a ship, a land mine
  like any land unit, a sea mine like any ship), with their type only once revealed (A31, A37–A39);
  its own flag while carried by an enemy only while that carrier is itself in sight;
- A83 the enemy log: every enemy unit seen before and not in sight now, with its owner, last tile,
  round last seen, how many rounds ago, and its type if revealed;
- A84 of every seat only the public figures: score and total resource count as it stood when the
  round opened (nicknames, submitted and connected flags are added by the services);
- A85 the events of the last round, already cut by the engine to the player's audience
  (:meth:`engine.base.Event.visible_to`); the state does not keep them, so the caller passes the
  events ``GAME.resolve`` returned (``view(state, player, events)``) — the engine names the
  shooter of a strike or bombardment to its victim only if the victim saw it.

Once the game is over (A67), nothing is secret any more: every player's view reveals the whole map —
every tile explored and in sight, every unit on the board with its type (cargo stays inside its
carrier). The game's seed is still never sent (A9).

Shape (JSON; keys are snake_case; a tile is ``{"x": int, "y": int}``; keys without a value are
omitted, never ``None``; lists are sorted as stated, so equal knowledge gives equal views)::

    {"game": "archipelago", "player": int, "players": int,
     "round": int, "version": int, "target": int, "max_rounds": int,
     "width": int, "height": int,
     "rows": [str, ...],                 # one per row y, char x: "?" unexplored, "." sea, "#" land
     "visible": [tile, ...],             # A80 tiles in sight now, sorted by (y, x)
     "base": tile,                       # own base
     "bases": [{"seat": int, "tile": tile}],          # explored bases (own included), by seat
     "islands": [{"id": int, "kind": "home"|"ring"|"centre", "owner"?: int,   # owner: home islands
                  "tiles": [tile, ...]}],             # explored tiles only; islands with none omitted
     "resource_tiles": [{"tile": tile, "resource": str}],   # explored resource tiles, by (y, x)
     "ports": [{"tile": tile, "resource": str}],            # explored ports, by (y, x)
     "units": [{"id", "owner", "type", "tile",        # own units, by id
                "carrier"?: id,                       # cargo: its ship/plane; own flag: enemy bearer
                "cargo"?: [id, ...], "flag"?: id,     # flag: the enemy flag this unit carries
                "raft"?: true}],
     "enemies": [{"id", "owner", "domain": "land"|"sea"|"air", "tile",   # enemy units in sight, by id
                  "type"?: str}],                     # only once revealed
     "enemy_log": [{"id", "owner": int, "tile", "round": int, "rounds_ago": int,   # seen before, not in sight now
                    "type"?: str}],                   # by id
     "outposts": [{"tile": tile, "owner": int}],      # own outposts and those on tiles in sight
     "control": [tile, ...],                          # explored land tiles it controls, by (y, x)
     "stock": {"wood", "food", "iron", "fuel"},       # own stock (all four keys)
     "score": int, "flags_captured": int, "bonus"?: str,      # bonus: standing A51 choice
     "seats": [{"seat": int, "score": int, "resource_total": int}],  # A84, every seat (own included)
     "offers": [{"id", "from_seat", "to_seat"?, "give": {res: n}, "get": {res: n}}],
                                                      # pending: addressed to the player or made by it
     "chat": [{"from_seat", "to_seat"?, "text", "round"}],   # this round's messages to/from the player
     "events": [{"kind": str, ...}],                  # last round's events for this player (A85)
     "outcome"?: {"winners", "draw", "reason", "scores"}}

Spectators (``spectator_view(state, events)``, no seat): what every player knows, in the same shape
with ``"player": -1`` — the public figures of every seat (``seats``, A84), round, target,
max_rounds, width, height, this round's chat to everyone, the last round's events every seat
receives (A85), and the map as far as every seat explored it: ``rows`` with the terrain of the
tiles explored by all seats ("?" elsewhere) and the bases, islands, resource tiles and ports on
those tiles.  No units, enemies, enemy log, outposts, control, stock, score, bonus, base, offers
or private chat (``visible``, ``units``, ``enemies``, ``enemy_log``, ``outposts``, ``control``,
``offers`` empty; the others absent).  Once the game is over (A67): the whole map (every tile
explored and in sight, every base, island tile, resource tile and port), every unit on the board
in full (``units``, each as its owner sees it: cargo inside its carrier, a carried flag with its
bearer), every outpost, the outcome.  Cheaper than a player view: no unit is looked at while the
game runs.

Pure and fast: one pass over the units, bit operations for the explored set; no I/O.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from engine.archipelago.board import Board, Tile
from engine.archipelago.fog import enemy_in_sight, shown_domain, visible_bits, watch_tiles
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES
from engine.base import SPECTATOR, Event


class _BoardCache:
    """Per-board constants (the board is immutable and shared by every state of a game)."""

    __slots__ = ("islands", "ports", "resources", "terrain")

    def __init__(self, b: Board) -> None:
        w = b.width
        # the whole board's terrain ("." / "#", row after row) as one big integer of bytes
        self.terrain: int = int.from_bytes("".join(b.rows()).encode(), "big")
        self.resources: list[tuple[int, Tile, str]] = sorted(
            ((t[1] * w + t[0], t, r) for t, r in b.resources.items()), key=lambda e: e[0])
        self.ports: list[tuple[int, Tile, str]] = sorted(
            ((t[1] * w + t[0], t, r) for t, r in b.ports.items()), key=lambda e: e[0])
        self.islands: list[tuple[int, str, int | None, list[tuple[int, Tile]]]] = [
            (isl.id, isl.kind, isl.owner if isl.kind == "home" else None,
             sorted((t[1] * w + t[0], t) for t in isl.tiles))
            for isl in b.islands]


_KEEP = bytes.maketrans(b"01", b"\x00\xff")  # explored bit -> keep the terrain byte
_FOG = bytes.maketrans(b"01", b"?\x00")       # unexplored bit -> "?"

_CACHE: weakref.WeakKeyDictionary[Board, _BoardCache] = weakref.WeakKeyDictionary()


def _board_cache(b: Board) -> _BoardCache:
    c = _CACHE.get(b)
    if c is None:
        c = _CACHE[b] = _BoardCache(b)
    return c


def _t(t: Tile) -> dict[str, int]:
    return {"x": t[0], "y": t[1]}


def _goods(g: Any) -> dict[str, int]:
    return {r: int(g.get(r, 0)) for r in RESOURCES if g.get(r)}


def _explored_bits(explored: int, n: int) -> str:
    """Bit i of ``explored`` as character i ("1" explored)."""
    return format(explored, f"0{n}b")[::-1][:n] if explored else "0" * n


def _rows(cache: _BoardCache, bits: str, w: int, h: int) -> list[str]:
    """The board's rows with the terrain of the tiles whose character of ``bits`` is "1", "?" elsewhere."""
    # byte i: the terrain where bit i is set, "?" elsewhere (two masks over the board's bytes)
    raw = bits.encode()
    keep = int.from_bytes(raw.translate(_KEEP), "big")
    fog = int.from_bytes(raw.translate(_FOG), "big")
    board_text = ((cache.terrain & keep) | fog).to_bytes(w * h, "big").decode()
    return [board_text[y * w:(y + 1) * w] for y in range(h)]


Features = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def _features(state: State, cache: _BoardCache, bits: str) -> Features:
    """The map features of the explored tiles (``bits``): resource tiles, ports, bases, islands."""
    b = state.board
    w = b.width
    resource_tiles = [{"tile": _t(t), "resource": r} for i, t, r in cache.resources if bits[i] == "1"]
    ports = [{"tile": _t(t), "resource": r} for i, t, r in cache.ports if bits[i] == "1"]
    bases = [{"seat": s, "tile": _t(t)} for s, t in enumerate(b.bases)
             if s < state.players and bits[t[1] * w + t[0]] == "1"]
    islands: list[dict[str, Any]] = []
    for iid, kind, owner, itiles in cache.islands:
        seen = [_t(t) for i, t in itiles if bits[i] == "1"]
        if not seen:
            continue
        isl: dict[str, Any] = {"id": iid, "kind": kind}
        if owner is not None:
            isl["owner"] = owner
        isl["tiles"] = seen
        islands.append(isl)
    return resource_tiles, ports, bases, islands


def view(state: State, player: int, events: Iterable[Event] | None = None) -> dict[str, Any]:
    """Everything ``player`` may know of ``state`` (module docstring: shape and rules A80–A85).

    ``events``: the events of the last round as returned by ``GAME.resolve``; only those whose
    audience includes ``player`` are kept (A85)."""
    b = state.board
    w, h = b.width, b.height
    cache = _board_cache(b)
    ps = state.pstates[player]
    units = state.units
    n = w * h
    if state.outcome is not None:  # the game is over: the whole map is revealed (A67)
        in_view = [(x, y) for y in range(h) for x in range(w)]
        vis = watch = set(in_view)
        bits = "1" * n
        revealed: Collection[str] = units.keys()
    else:
        in_view = b.tiles_of(visible_bits(state, player))  # in (y, x) order
        vis, watch = set(in_view), watch_tiles(state, player)
        bits = _explored_bits(ps.explored, n)
        revealed = ps.revealed

    rows = _rows(cache, bits, w, h)  # A81 explored terrain
    own, enemies, in_sight = _units(state, player, vis, watch, revealed)  # A82
    log = _enemy_log(state, player, in_sight)  # A83
    resource_tiles, ports, bases, islands = _features(state, cache, bits)
    outposts = [{"tile": _t(t), "owner": p}
                for t, p in sorted(state.outposts.items(), key=lambda i: (i[0][1], i[0][0]))
                if p == player or t in vis]
    control = [_t(t) for t in sorted((t for t, p in state.control.items()
                                      if p == player and bits[t[1] * w + t[0]] == "1"),
                                     key=lambda t: (t[1], t[0]))]

    # -- A84 public figures, A52/A53 trades and chat ---------------------------------------------
    seats = [{"seat": s, "score": q.score, "resource_total": q.opening_total}
             for s, q in enumerate(state.pstates)]
    offers, chat = _trades(state, player)

    out: dict[str, Any] = {
        "game": "archipelago", "player": player, "players": state.players,
        "round": state.round, "version": state.version, "target": state.target,
        "max_rounds": state.max_rounds, "width": w, "height": h,
        "rows": rows,
        "visible": [_t(t) for t in in_view],
        "base": _t(b.bases[player]),
        "bases": bases, "islands": islands, "resource_tiles": resource_tiles, "ports": ports,
        "units": own, "enemies": enemies, "enemy_log": log,
        "outposts": outposts, "control": control,
        "stock": {r: ps.stock[r] for r in RESOURCES},
        "score": ps.score, "flags_captured": ps.flags_captured,
        "seats": seats, "offers": offers, "chat": chat,
        "events": _events(events, player),
    }
    if ps.bonus is not None:
        out["bonus"] = ps.bonus
    if state.outcome is not None:
        out["outcome"] = dict(state.outcome)
    return out


def _units(state: State, player: int, vis: set[Tile], watch: set[Tile], revealed: Collection[str]
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """A82: the player's own units in full, the enemy units in sight (their type once revealed),
    and the ids of those enemies; by id."""
    units = state.units
    own: list[dict[str, Any]] = []
    enemies: list[dict[str, Any]] = []
    in_sight: set[str] = set()
    for uid in sorted(units):
        u = units[uid]
        if u.owner == player:
            if u.type == "flag" and u.carrier is not None:
                bearer = units.get(u.carrier)
                if bearer is None or bearer.owner == player or not enemy_in_sight(bearer, vis, watch):
                    continue  # A82: own carried flag only while its carrier is in sight
            own.append(u.to_dict())
        elif enemy_in_sight(u, vis, watch):
            in_sight.add(uid)
            e: dict[str, Any] = {"id": uid, "owner": u.owner, "domain": shown_domain(state, u),
                                 "tile": _t(u.tile)}
            if uid in revealed:
                e["type"] = u.type
            enemies.append(e)
    return own, enemies, in_sight


def _enemy_log(state: State, player: int, in_sight: set[str]) -> list[dict[str, Any]]:
    """A83: every enemy unit seen before and not in sight now, by id."""
    ps = state.pstates[player]
    log: list[dict[str, Any]] = []
    for uid in sorted(ps.log):
        if uid in in_sight:
            continue
        t, rnd, typ, seen_owner = ps.log[uid]
        ent: dict[str, Any] = {"id": uid, "owner": seen_owner, "tile": _t(t), "round": rnd,
                               "rounds_ago": max(0, state.round - rnd)}
        if typ is not None:
            ent["type"] = typ
        log.append(ent)
    return log


def _trades(state: State, player: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A52/A53: the pending offers and this round's chat messages made by or to the player (to
    everyone included)."""
    offers: list[dict[str, Any]] = []
    for o in state.offers:
        to = o.get("to")
        if o["from"] != player and to is not None and to != player:
            continue
        od: dict[str, Any] = {"id": o["id"], "from_seat": o["from"]}
        if to is not None:
            od["to_seat"] = to
        od["give"] = _goods(o["give"])
        od["get"] = _goods(o["get"])
        offers.append(od)
    chat: list[dict[str, Any]] = []
    for m in state.chat:
        to = m.get("to")
        if m["from"] != player and to is not None and to != player:
            continue
        md: dict[str, Any] = {"from_seat": m["from"]}
        if to is not None:
            md["to_seat"] = to
        md["text"] = m["text"]
        md["round"] = m["round"]
        chat.append(md)
    return offers, chat


def _events(events: Iterable[Event] | None, player: int) -> list[dict[str, Any]]:
    """The events addressed to ``player``, as plain data (the engine already cut them, A85)."""
    if not events:
        return []
    out: list[dict[str, Any]] = []
    for e in events:
        if e.visible_to(player):
            d = _plain(e.data)
            d["kind"] = e.kind
            out.append(d)
    return out


def _plain(v: Any) -> Any:
    """A JSON-plain copy without ``None`` values (A85 events as the engine made them)."""
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(k): _plain(x) for k, x in v.items() if x is not None}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def spectator_view(state: State, events: Iterable[Event] | None = None, *, whole: bool = False) -> dict[str, Any]:
    """What every player knows of ``state`` (module docstring, "Spectators"), in the player view's
    shape with ``player`` = -1; the whole game once it is over — or at once with ``whole`` (a
    replay's view of the whole game, ``GAME.full_view``: every tile, unit and outpost at this round).

    ``events``: the last round's; only those every seat receives are kept (A85)."""
    b = state.board
    w, h = b.width, b.height
    cache = _board_cache(b)
    n = w * h
    over = whole or state.outcome is not None
    if over:
        bits = "1" * n
    else:
        common = (1 << n) - 1
        for ps in state.pstates:
            common &= ps.explored
        bits = _explored_bits(common, n)
    resource_tiles, ports, bases, islands = _features(state, cache, bits)
    players = state.players
    chat: list[dict[str, Any]] = []
    for m in state.chat:
        if m.get("to") is None:
            chat.append({"from_seat": m["from"], "text": m["text"], "round": m["round"]})
    out: dict[str, Any] = {
        "game": "archipelago", "player": SPECTATOR, "players": players,
        "round": state.round, "version": state.version, "target": state.target,
        "max_rounds": state.max_rounds, "width": w, "height": h,
        "rows": _rows(cache, bits, w, h),
        "visible": [{"x": x, "y": y} for y in range(h) for x in range(w)] if over else [],
        "bases": bases, "islands": islands, "resource_tiles": resource_tiles, "ports": ports,
        "units": [state.units[uid].to_dict() for uid in sorted(state.units)] if over else [],
        "enemies": [], "enemy_log": [],
        "outposts": [{"tile": _t(t), "owner": p}
                     for t, p in sorted(state.outposts.items(), key=lambda i: (i[0][1], i[0][0]))] if over else [],
        "control": [],
        "seats": [{"seat": s, "score": q.score, "resource_total": q.opening_total}
                  for s, q in enumerate(state.pstates)],
        "offers": [], "chat": chat,
        "events": [{**_plain(e.data), "kind": e.kind} for e in events or () if e.is_public(players)],
    }
    if state.outcome is not None:
        out["outcome"] = dict(state.outcome)
    return out


def views(state: State, events: Sequence[Event] | None = None) -> list[dict[str, Any]]:
    """``view`` for every seat."""
    return [view(state, p, events) for p in range(state.players)]


__all__ = ["spectator_view", "view", "views"]
