"""Standing orders (A70–A74): their shape, their checking, the automatic trades and the build queue.

Standing orders are plain JSON whose keys are the protobuf field names (snake_case)::

    {"posture": "hold"|"defensive"|"balanced"|"aggressive",           # A71; default "hold"
     "units": [{"unit": id,                                            # A72, one entry per unit
                "order": "stay"|"guard"|"patrol"|"move"|"escort"|"hunt",
                "tile"?: {"x", "y"},          # guard (a tile) or move: the tile
                "target"?: id,                # guard (an own unit), escort (an own unit, not itself),
                                              # hunt (a known enemy; left out: the nearest known one)
                "waypoints"?: [{"x", "y"}, ...]}],   # patrol: 2..10 waypoints
     "build_queue": [{"type": str, "tile"?: {"x", "y"}, "ship"?: id}],   # A73: at most 20 entries
     "bonus"?: "wood"|"food"|"iron"|"fuel",                            # A51
     "bank_rules": [{"give": res, "get": res, "keep": int}],           # A74, applied in order
     "accept_rules": [{"max_ratio": number}]}                          # A74

:func:`check_standing` (``GAME.check_standing(state, player, standing)``) checks standing orders
against the player's own view when they are submitted (A20's reading: the view decides, so a refusal
leaks nothing) and returns them **normalised**: keys in the order above, every list present,
``posture`` filled in, ``bonus`` left out when not chosen, tiles as ``{"x", "y"}``, per-unit entries
sorted by unit id and holding only their order's fields, ``keep`` filled in (0); the build queue and
the rules keep the player's order.  Refusals (nothing is stored):

- :class:`~engine.errors.InvalidOrder` — not an object, an unknown key or kind, a wrong type, a
  field the order does not take or a missing one, an unknown or unbuildable unit type in the queue,
  a bank rule whose ``give`` equals its ``get`` (field ``bank_rules[i].get``, rule A74), a ratio that
  is not a positive number;
- :class:`~engine.errors.IllegalOrder` — a unit that is not the player's (unknown and foreign units
  get the same message, rule A72, field ``units[i].unit``; likewise a guarded or escorted unit,
  ``units[i].target``), two entries for one unit, an order a mine cannot follow (move 0) or a flag
  may not (guard, hunt: flags never fight, A61), a hunt target the player knows nothing of, a
  ``move`` or ``guard`` tile or a patrol waypoint that the unit cannot reach over the player's
  explored terrain (A18's planning: its domain's explored tiles, units ignored; rule A72), a patrol
  of fewer than 2 or more than 10 waypoints or with two equal waypoints in a row (rule A72, field
  ``units[i].waypoints``), a 21st queue entry (rule A73, field ``build_queue[20]``), a mine whose
  tile is not explored terrain of its kind or a raft for something that is not an own ship (A42,
  A33), more than :data:`MAX_BANK_RULES` bank rules or :data:`MAX_ACCEPT_RULES` accept rules (A74).

Standing orders stay stored while the game changes: units die, targets vanish.  The autopilot reads
them leniently (:func:`parse_standing` with ``strict=False``): what no longer applies is skipped.

**The immediate actions** (:func:`standing_actions`, A74) are computed from the view at the close of
a round, before the player's orders: first the accept rules over the pending offers the view shows
addressed to the player (to it alone or to everyone, in the view's order): an offer is accepted when
the player holds what it would give and, valuing goods at the player's own bank rates (A52: 1 unit
is worth 1/4, or 1/2 of a resource whose port it controls), what it gives is at most ``max_ratio``
times what it gets, for some rule; then the bank rules in order: ``times = (stock[give] - keep) //
rate(give)`` conversions when at least one.  Goods still to come from an accepted offer are not
counted (the offer may be refused as "no longer valid", A53), goods given are: every action is
affordable whatever happens to the ones before it.  The services apply them in order with
``GAME.act`` and ignore the ones refused.

**The build queue** (A73) is consumed in order as resources allow.  The view has no memory of what
was built, so the design is: each round the autopilot takes the queue's entries from the front, in
order, into its ``builds`` while they are affordable together (after outposts and strikes); the
first unaffordable entry stops it (it waits: "in order").  An entry that cannot be built at all this
round as far as the view shows — a unit limit reached (A42: General, Sa'ar 6), a mine tile not
controlled or not empty, a raft whose ship is gone or has one, no free tile on the home island (land
units, aircraft) or next to the base (ships) after the round's moves — is passed over and stays
queued.  After the round the services call :func:`standing_after_round` (``GAME.
standing_after_round(standing, orders_used)``) with the orders the round resolved for that player:
the entries built are crossed off.  Matching: the builds of ``orders_used`` are taken in order and
each crosses off the first remaining queue entry equal to it (same type, tile and ship) after the
entry the previous build crossed off; if some build matches no entry, the builds were the player's
own and the queue is left as it was.  So the autopilot's builds cross off exactly the entries it
took (it only ever takes them in this order); a player's own builds cross entries off only when they
are exactly what the queue would have built next (a unit the queue waited for, built by hand, is no
longer wanted).  An entry the resolution then refunds or skips (A42: an enemy the view did not show
took the last free tile) is crossed off too; the autopilot counts the free tiles after its own moves,
so this needs something the player could not see.

The services' part, at the close of a round, for each seat ``p`` expected to act::

    for a in GAME.standing_actions(GAME.view(state, p), standing[p]):   # A74
        try: state, events = GAME.act(state, p, a)
        except GameError: pass                                         # e.g. "offer no longer valid"
    v = GAME.view(state, p)
    orders[p] = (GAME.complete_orders(v, standing[p], submitted[p]) if p submitted     # A70
                 else GAME.autopilot(v, standing[p]))
    ... state, events = GAME.resolve(state, orders) ...
    standing[p] = GAME.standing_after_round(standing[p], orders[p])    # A73

(A player who submitted builds had them checked against its stock at submission; trades made for it
afterwards by its own A74 rules may leave one unpaid at resolution, which skips it and reports it,
A42.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.actions import check_keys
from engine.archipelago.economy import BANK_RATE
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.view import view as player_view
from engine.archipelago.viewmap import ViewMap, bank_rates
from engine.archipelago.words import at, echo, own_unit
from engine.errors import GameError, IllegalOrder, InvalidOrder

POSTURES: tuple[str, ...] = ("hold", "defensive", "balanced", "aggressive")
UNIT_ORDERS: tuple[str, ...] = ("stay", "guard", "patrol", "move", "escort", "hunt")
MAX_QUEUE = 20
MIN_WAYPOINTS = 2
MAX_WAYPOINTS = 10
MAX_BANK_RULES = 12
MAX_ACCEPT_RULES = 4

#: The standing orders of a seat the autopilot plays alone (A4: the host filled it): aggressive (A71),
#: the Shaldag first (A66's point, and a ferry), then cheap strong land units and Dvoras to carry
#: them (A73); iron as bonus (A51); wood beyond 6 banked into iron; fair offers accepted (A74).
#: Against random legal play it wins nearly every 2-player game (``bench/autopilot_bench.py``).
DEFAULT_STANDING: dict[str, Any] = {
    "posture": "aggressive",
    "units": [],
    "build_queue": [{"type": "shaldag"}] + [{"type": "rank5"}, {"type": "rank4"}, {"type": "dvora"}] * 6
                   + [{"type": "rank5"}],
    "bonus": "iron",
    "bank_rules": [{"give": "wood", "get": "iron", "keep": 6}],
    "accept_rules": [{"max_ratio": 1.0}],
}

_TOP_KEYS = ("posture", "units", "build_queue", "bonus", "bank_rules", "accept_rules")
_UNIT_KEYS = ("unit", "order", "tile", "target", "waypoints")
_BUILD_KEYS = ("type", "tile", "ship")
_BANK_KEYS = ("give", "get", "keep")
_ACCEPT_KEYS = ("max_ratio",)
#: per order kind: (fields it requires, fields it may have); guard needs exactly one of tile, target
_ORDER_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "stay": ((), ()),
    "guard": ((), ("tile", "target")),
    "patrol": (("waypoints",), ("waypoints",)),
    "move": (("tile",), ("tile",)),
    "escort": (("target",), ("target",)),
    "hunt": ((), ("target",)),
}

Tile = tuple[int, int]

__all__ = ["DEFAULT_STANDING", "MAX_QUEUE", "MAX_WAYPOINTS", "MIN_WAYPOINTS", "POSTURES", "UNIT_ORDERS",
           "check_standing", "default_standing", "parse_standing", "standing_actions",
           "standing_after_round"]


def _tile(v: Any, fld: str) -> dict[str, int]:
    if isinstance(v, Mapping):
        if set(v) - {"x", "y"}:
            raise InvalidOrder("a tile is {\"x\": int, \"y\": int}", field=fld)
        x, y = v.get("x"), v.get("y")
    else:
        raise InvalidOrder("a tile is {\"x\": int, \"y\": int}", field=fld)
    if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, int) or not isinstance(y, int):
        raise InvalidOrder("tile coordinates are integers", field=fld)
    return {"x": x, "y": y}


def _list(v: Any, fld: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise InvalidOrder("must be a list", field=fld)
    return v


def _id(v: Any, fld: str) -> str:
    if not isinstance(v, str) or not v:
        raise InvalidOrder("must be a unit id (string)", field=fld)
    return v


def _unit_entry(ent: Any, f: str) -> dict[str, Any]:
    e = check_keys(ent, _UNIT_KEYS, f, "a unit's standing order")
    uid = _id(e.get("unit"), f + ".unit")
    kind = e.get("order", "stay")
    if kind not in UNIT_ORDERS:
        raise InvalidOrder(f"order must be one of {', '.join(UNIT_ORDERS)}", field=f + ".order")
    need, may = _ORDER_FIELDS[kind]
    given = [k for k in ("tile", "target", "waypoints") if e.get(k) is not None]
    for k in given:
        if k not in may:
            raise InvalidOrder(f"a {kind} order takes no {k}", field=f"{f}.{k}")
    for k in need:
        if k not in given:
            raise InvalidOrder(f"a {kind} order needs {k}", field=f"{f}.{k}")
    if kind == "guard" and len(given) != 1:
        raise InvalidOrder("a guard order names a tile or a target unit (one of them)",
                           field=f + ".tile")
    out: dict[str, Any] = {"unit": uid, "order": kind}
    if "tile" in given:
        out["tile"] = _tile(e["tile"], f + ".tile")
    if "target" in given:
        out["target"] = _id(e["target"], f + ".target")
    if "waypoints" in given:
        wps = _list(e["waypoints"], f + ".waypoints")
        if len(wps) < MIN_WAYPOINTS:
            raise IllegalOrder(f"a patrol needs at least {MIN_WAYPOINTS} waypoints, not {len(wps)}",
                               rule="A72", field=f + ".waypoints")
        if len(wps) > MAX_WAYPOINTS:
            raise IllegalOrder(f"a patrol has at most {MAX_WAYPOINTS} waypoints", rule="A72",
                               field=f"{f}.waypoints[{MAX_WAYPOINTS}]")
        tiles = [_tile(w, f"{f}.waypoints[{n}]") for n, w in enumerate(wps)]
        for n in (*range(1, len(tiles)), 0):  # the route closes: the last one leads to the first
            if tiles[n] == tiles[n - 1]:
                raise IllegalOrder(f"two equal waypoints in a row: {at(tiles[n])}", rule="A72",
                                   field=f"{f}.waypoints[{n or len(tiles) - 1}]")
        out["waypoints"] = tiles
    return out


def _build_entry(ent: Any, f: str) -> dict[str, Any]:
    e = check_keys(ent, _BUILD_KEYS, f, "a build queue entry")
    typ = e.get("type")
    if not isinstance(typ, str) or typ not in UNIT_TYPES or not UNIT_TYPES[typ].buildable:
        raise InvalidOrder(f"unknown or unbuildable unit type {str(typ)[:40]!r}", rule="A73", field=f + ".type")
    ut = UNIT_TYPES[typ]
    out: dict[str, Any] = {"type": typ}
    if ut.is_mine:
        if e.get("tile") is None:
            raise InvalidOrder(f"a {ut.name} build names its tile", field=f + ".tile")
        out["tile"] = _tile(e["tile"], f + ".tile")
    elif e.get("tile") is not None:
        raise InvalidOrder(f"a {ut.name} build takes no tile", field=f + ".tile")
    if typ == "raft":
        out["ship"] = _id(e.get("ship"), f + ".ship")
    elif e.get("ship") is not None:
        raise InvalidOrder(f"a {ut.name} build takes no ship", field=f + ".ship")
    return out


def _resource(v: Any, fld: str) -> str:
    if v not in RESOURCES:
        raise InvalidOrder(f"must be one of {', '.join(RESOURCES)}", field=fld)
    return str(v)


def _bank_entry(ent: Any, f: str) -> dict[str, Any]:
    e = check_keys(ent, _BANK_KEYS, f, "a bank rule")
    give = _resource(e.get("give"), f + ".give")
    get = _resource(e.get("get"), f + ".get")
    if give == get:
        raise InvalidOrder("give and get must differ", rule="A74", field=f + ".get")
    keep = e.get("keep", 0)
    if keep is None:
        keep = 0
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise InvalidOrder("keep is an integer ≥ 0", field=f + ".keep")
    return {"give": give, "get": get, "keep": keep}


def _accept_entry(ent: Any, f: str) -> dict[str, Any]:
    e = check_keys(ent, _ACCEPT_KEYS, f, "an accept rule")
    r = e.get("max_ratio")
    if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r <= 0:
        raise InvalidOrder("max_ratio is a positive number", rule="A74", field=f + ".max_ratio")
    return {"max_ratio": r}


def parse_standing(standing: Mapping[str, Any] | None, *, strict: bool) -> dict[str, Any]:
    """Standing orders normalised as far as their shape goes (no game knowledge).

    ``strict``: the first problem raises (see the module docstring); otherwise every malformed part
    is dropped (an unknown posture reads as "hold") and the rest kept — the autopilot's reading of
    stored orders."""
    out: dict[str, Any] = {"posture": "hold", "units": [], "build_queue": [], "bank_rules": [],
                           "accept_rules": []}
    if standing is None:
        return out
    if not isinstance(standing, Mapping):
        if strict:
            raise InvalidOrder("standing orders are an object", field="standing")
        return out
    if strict:
        check_keys(standing, _TOP_KEYS, "", "standing orders")

    def guarded(fn: Any, *args: Any) -> Any:
        if strict:
            return fn(*args)
        try:
            return fn(*args)
        except (GameError, KeyError, TypeError, ValueError):
            return None

    posture = standing.get("posture")
    if posture is not None:
        if posture in POSTURES:
            out["posture"] = posture
        elif strict:
            raise InvalidOrder(f"posture must be one of {', '.join(POSTURES)}", rule="A71", field="posture")
    bonus = standing.get("bonus")
    if bonus is not None:
        b = guarded(_resource, bonus, "bonus")
        if b is not None:
            out["bonus"] = b

    def each(key: str, parse: Any, limit: int, rule: str) -> list[dict[str, Any]]:
        entries = guarded(_list, standing.get(key), key) or []
        got: list[dict[str, Any]] = []
        for i, ent in enumerate(entries):
            if i >= limit:
                if strict:
                    raise IllegalOrder(f"at most {limit} entries", rule=rule, field=f"{key}[{i}]")
                break
            e = guarded(parse, ent, f"{key}[{i}]")
            if e is not None:
                got.append(e)
        return got

    units = each("units", _unit_entry, 10_000, "A72")
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    for i, e in enumerate(units):
        if e["unit"] in seen:
            if strict:
                raise IllegalOrder("this unit has a standing order already: at most one per unit", rule="A72",
                                   field=f"units[{i}].unit")
            continue
        seen.add(e["unit"])
        kept.append(e)
    out["units"] = sorted(kept, key=lambda e: e["unit"])
    out["build_queue"] = each("build_queue", _build_entry, MAX_QUEUE, "A73")
    out["bank_rules"] = each("bank_rules", _bank_entry, MAX_BANK_RULES, "A74")
    out["accept_rules"] = each("accept_rules", _accept_entry, MAX_ACCEPT_RULES, "A74")
    if "bonus" in out:  # canonical key order (module docstring)
        out = {k: out[k] for k in _TOP_KEYS if k in out}
    return out


def _pt(d: Mapping[str, int]) -> Tile:
    return (int(d["x"]), int(d["y"]))


def check_standing(state: State, player: int, standing: Mapping[str, Any]) -> dict[str, Any]:
    """Check standing orders for ``player`` against its own view and return them normalised
    (module docstring); raises an :class:`engine.errors.GameError` naming field and rule, and
    changes nothing."""
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < state.players:
        raise InvalidOrder(f"must be a seat number 0..{state.players - 1}", field="player")
    if not isinstance(standing, Mapping):
        raise InvalidOrder("standing orders are an object", field="standing")
    # report problems in the player's own order of entries: parse strictly, then check by index
    norm = parse_standing(standing, strict=True)
    v = player_view(state, player)
    vm = ViewMap(v)
    raw_units = standing.get("units") or []
    for i, ent in enumerate(raw_units):
        _check_unit(vm, _unit_entry(ent, f"units[{i}]"), f"units[{i}]")
    for i, ent in enumerate(standing.get("build_queue") or []):
        _check_build(vm, _build_entry(ent, f"build_queue[{i}]"), f"build_queue[{i}]")
    return norm


def default_standing(state: State, player: int) -> dict[str, Any]:
    """:data:`DEFAULT_STANDING`, normalised (the same for every seat and state)."""
    return parse_standing(DEFAULT_STANDING, strict=True)


def _known_enemies(vm: ViewMap) -> set[str]:
    return {e["id"] for e in vm.enemies} | {e["id"] for e in vm.v["enemy_log"]}


def _own(vm: ViewMap, u: Mapping[str, Any]) -> str:
    """A unit of the player's view in its words: "your Sergeant at (21, 10)"."""
    carrier = vm.own.get(u.get("carrier") or "")
    return own_unit(u["type"], u["tile"], carrier["type"] if carrier is not None else None)


def _check_unit(vm: ViewMap, e: Mapping[str, Any], f: str) -> None:
    uid = e["unit"]
    u = vm.own.get(uid)
    if u is None:
        raise IllegalOrder(f"no unit of yours is called {echo(uid)}", rule="A72", field=f + ".unit")
    kind = e["order"]
    typ = u["type"]
    ut = UNIT_TYPES[typ]
    if kind == "stay":
        return
    if ut.move == 0:
        raise IllegalOrder(f"{_own(vm, u)} never moves: its only standing order is stay",
                           rule="A72", field=f + ".order")
    if ut.is_flag and kind in ("guard", "hunt"):
        raise IllegalOrder(f"{_own(vm, u)}: flags never fight", rule="A61", field=f + ".order")
    if e.get("target") is not None:
        tid = e["target"]
        if kind == "hunt":
            if tid not in _known_enemies(vm):
                raise IllegalOrder(f"{_own(vm, u)}: no enemy unit you know of is called {echo(tid)}", rule="A72",
                                   field=f + ".target")
        elif tid not in vm.own or (kind == "escort" and tid == uid):
            raise IllegalOrder(f"{_own(vm, u)}: no unit of yours is called {echo(tid)}" if tid != uid else
                               f"{_own(vm, u)}: a unit does not escort itself", rule="A72", field=f + ".target")
    tiles: list[tuple[Tile, str]] = []
    if e.get("tile") is not None:
        tiles.append((_pt(e["tile"]), f + ".tile"))
    for k, w in enumerate(e.get("waypoints") or ()):
        tiles.append((_pt(w), f"{f}.waypoints[{k}]"))
    if not tiles:
        return
    reach = set(vm.reachable(typ, _pt(u["tile"]), vm.w * vm.h))
    for t, fld in tiles:
        if t not in reach:
            raise IllegalOrder(f"{_own(vm, u)}: {at(t)} cannot be reached over your explored terrain",
                               rule="A72", field=fld)


def _check_build(vm: ViewMap, e: Mapping[str, Any], f: str) -> None:
    typ = e["type"]
    if typ in ("landmine", "seamine"):
        t = _pt(e["tile"])
        want = "#" if typ == "landmine" else "."
        if vm.terrain(t) != want:
            raise IllegalOrder(f"a {UNIT_TYPES[typ].name} goes on explored {'land' if want == '#' else 'sea'}",
                               rule="A42", field=f + ".tile")
    if typ == "raft":
        s = vm.own.get(e["ship"])
        if s is None or not UNIT_TYPES[s["type"]].is_ship or s["type"] == "raft":
            raise IllegalOrder(f"no ship of yours is called {echo(e['ship'])}", rule="A33", field=f + ".ship")


# -- A73: crossing built entries off the queue --------------------------------------------------------

def _build_key(b: Any) -> tuple[Any, ...] | None:
    if not isinstance(b, Mapping) or not isinstance(b.get("type"), str):
        return None
    t = b.get("tile")
    tile = (t.get("x"), t.get("y")) if isinstance(t, Mapping) else None
    return (b["type"], tile, b.get("ship"))


def standing_after_round(standing: Mapping[str, Any] | None, orders_used: Mapping[str, Any] | None
                         ) -> dict[str, Any]:
    """The standing orders for the next round: the queue entries that ``orders_used`` (the orders
    the round resolved for the player) built are crossed off (module docstring: the matching).

    Returns the normalised (leniently read) standing orders; the input is not changed."""
    out = parse_standing(standing, strict=False)
    builds = (orders_used or {}).get("builds") if isinstance(orders_used, Mapping) else None
    if not builds or not isinstance(builds, list):
        return out
    queue = out["build_queue"]
    keys = [_build_key(q) for q in queue]
    taken: list[int] = []
    pos = 0
    for b in builds:
        k = _build_key(b)
        j = next((j for j in range(pos, len(queue)) if keys[j] == k), None) if k is not None else None
        if j is None:
            return out  # the player's own builds: the queue stays as it was
        taken.append(j)
        pos = j + 1
    out["build_queue"] = [q for j, q in enumerate(queue) if j not in taken]
    return out


# -- A74: automatic trades --------------------------------------------------------------------------

def standing_actions(view: Mapping[str, Any], standing: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A74: the ``act`` actions the player's trade rules take now (module docstring), from its view.

    ``[]`` once the game is over."""
    if view.get("outcome") is not None:
        return []
    s = parse_standing(standing, strict=False)
    if not s["bank_rules"] and not s["accept_rules"]:
        return []
    me = view["player"]
    stock = {r: int(view["stock"].get(r, 0)) for r in RESOURCES}
    rates = bank_rates(view)
    worth = {r: BANK_RATE // rates[r] for r in RESOURCES}  # value in quarters of a resource

    def value(goods: Mapping[str, Any]) -> int:
        return sum(worth[r] * int(n) for r, n in goods.items() if r in worth)

    actions: list[dict[str, Any]] = []
    ratios = [float(r["max_ratio"]) for r in s["accept_rules"]]
    if ratios:
        best = max(ratios)
        for o in view.get("offers") or ():
            if o.get("from_seat") == me or o.get("to_seat", me) != me:
                continue
            mine, theirs = o.get("get") or {}, o.get("give") or {}  # the maker's get is what I give
            if not mine or any(stock.get(r, 0) < int(n) for r, n in mine.items()):
                continue
            if value(mine) <= best * value(theirs):
                actions.append({"accept": {"offer": o["id"]}})
                for r, n in mine.items():
                    stock[r] -= int(n)
    for rule in s["bank_rules"]:
        give, get = rule["give"], rule["get"]
        times = (stock[give] - rule["keep"]) // rates[give]
        if times >= 1:
            actions.append({"bank": {"give": give, "get": get, "times": times}})
            stock[give] -= times * rates[give]
            stock[get] += times
    return actions
