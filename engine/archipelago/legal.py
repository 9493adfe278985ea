"""What one Archipelago player may do now, computed from its view alone (A90: the agent's "legal
moves" tool, ``GAME.legal_moves(view, unit)``).

It reads nothing but the view a client gets (:mod:`engine.archipelago.view`), so the answer reveals
nothing hidden, and it lists only what the engine's own validation
(:func:`engine.archipelago.orders.parse_orders`) accepts, each option on its own: a move is a unit
order ``{"unit": id, "to": {"x", "y"}}`` (the server plans the path, A18/A28), an action
``{"unit": id, "action": kind, "target"?: id}``, a build ``{"type", "tile"?, "ship"?}``.  What ties
options together is left to the submission: one order per unit (A18, A19), builds, outposts and
strikes affordable together (A20), boarding or leaving a carrier only while it holds still (A24).

Tiles are ``[x, y]`` pairs, listed in reading order (by y, then x).  Shape::

    # round 0 (deployment, A13–A15): where each own unit may be placed
    {"phase": "deployment", "round": 0,
     "units": [{"unit": id, "type": str, "at": [x, y], "tiles": [[x, y], ...]}],   # by id
     "note": str}
    # rounds 1, 2, ...
    {"phase": "orders", "round": int,
     "units": [{"unit": id, "type": str, "at": [x, y], "move": int,
                "moves": [[x, y], ...],          # A18/A23/A24/A60: reachable this round
                "actions": [{"action": "outpost"}                                  # A36
                            | {"action": "bombard"|"strike"|"reveal",              # A37–A39
                               "targets": [id, ...]}]}],                           # enemies in view, by id
     "builds": [{"type": str, "cost": {resource: n}, "needs": "tile"|"ship"|None,  # A42
                 "tiles"?: [[x, y], ...], "ships"?: [id, ...]}],                   # where / for which ship
     "bank": {"rates": {resource: 4 | 2}},                                         # A52
     "note": str}
    {"phase": "over"}                                                              # A67

``moves`` are the explored tiles the unit reaches by a shortest path over its domain's terrain
(A23; a flag on its home island, A60) of at most its move, plus, for a land unit other than a flag,
an own carrier's tile (ship or parked transport plane) with room for it (boarding, A24, A35).  A
unit that never moves (mines), an own flag carried by an enemy (A61) and cargo's actions (A24) get
nothing.  ``builds`` are the types the player can afford now within the A42 limits; a mine with
the free tiles it may go on, a raft with the ships that may take one (A33).  ``bank.rates`` is what
the bank takes for 1 of anything, by the resource given (2 for a port the player controls).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engine.archipelago.economy import BANK_RATE, PORT_RATE
from engine.archipelago.orders import OUTPOST_COST, REVEAL_RANGE, STRIKE_COST, STRIKE_RANGE
from engine.archipelago.randplay import BUILDABLE, DIRS, ViewMap, _passable
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.words import echo
from engine.errors import InvalidOrder, NotFound

Tile = tuple[int, int]

DEPLOY_NOTE = ("Round 0 (A13-A15): submit {\"deploy\": [{\"unit\": id, \"tile\": {\"x\", \"y\"}}]}; land units "
               "and aircraft go on your home island, ships on sea next to it; placing a unit where another of "
               "yours stands swaps the two; units you leave out keep their places.")
ORDERS_NOTE = ("Each option is legal on its own. Submit {\"units\": [{\"unit\": id, \"to\": {\"x\", \"y\"}} | "
               "{\"unit\": id, \"action\": kind, \"target\"?: id}], \"builds\": [{\"type\", \"tile\"?, \"ship\"?}], "
               "\"bonus\"?: resource}: one order per unit (A18, A19); builds, outposts and strikes must be "
               "affordable together (A20); boarding or leaving a carrier needs it to have no move order (A24); "
               "aircraft must end on an empty land tile you control or are lost (A34).")

__all__ = ["legal_moves"]


def _tile(d: Mapping[str, Any]) -> Tile:
    return (int(d["x"]), int(d["y"]))


def _xy(t: Tile) -> list[int]:
    return [t[0], t[1]]


def _tiles(ts: set[Tile] | list[Tile]) -> list[list[int]]:
    """Tiles as ``[x, y]`` pairs in reading order (by y, then x)."""
    return [_xy(t) for t in sorted(ts, key=lambda t: (t[1], t[0]))]


def _dist(a: Tile, b: Tile) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _affordable(stock: Mapping[str, Any], cost: Mapping[str, int]) -> bool:
    return all(int(stock.get(r, 0)) >= n for r, n in cost.items())


def _room(vm: ViewMap, t: Tile) -> bool:
    """An own carrier (not itself cargo) stands on ``t`` with room for one more unit (A24, A35)."""
    cid = vm.carriers_at.get(t)
    if cid is None:
        return False
    c = vm.own[cid]
    return len(c.get("cargo") or ()) < UNIT_TYPES[c["type"]].capacity


def unit_moves(vm: ViewMap, u: Mapping[str, Any]) -> list[Tile]:
    """Tiles ``u`` may be ordered to (``{"unit", "to"}``) and reach this round (module docstring).

    The same reach as the engine's path planning (:func:`engine.archipelago.orders.plan_path`):
    explored tiles of the unit's terrain, with an own carrier's tile as a last step for a land unit
    (boarding); the unit's own tile is not a move."""
    typ = str(u["type"])
    ut = UNIT_TYPES[typ]
    if ut.move == 0 or (ut.is_flag and "carrier" in u):
        return []  # A91 mines never move; A61 an own flag carried by an enemy takes no order
    boards = ut.domain == "land" and not ut.is_flag
    start = _tile(u["tile"])
    seen = {start}
    out: list[Tile] = []
    frontier = [start]
    for _ in range(ut.move):
        nxt: list[Tile] = []
        for t in frontier:
            for dx, dy in DIRS.values():
                n = (t[0] + dx, t[1] + dy)
                if n in seen:
                    continue
                if _passable(vm, typ, n):
                    seen.add(n)
                    out.append(n)
                    nxt.append(n)
                elif boards and vm.terrain(n) not in ("", "?") and _room(vm, n):
                    seen.add(n)
                    out.append(n)  # boarding ends the move (A24): not a tile to go on from
        frontier = nxt
    return out


def unit_actions(vm: ViewMap, u: Mapping[str, Any], stock: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The actions the engine accepts for ``u`` now, each with the enemy ids it may target (A36–A39)."""
    if "carrier" in u:
        return []  # A24 cargo takes no action (nor does an own flag an enemy carries, A61)
    typ = str(u["type"])
    ut = UNIT_TYPES[typ]
    tile = _tile(u["tile"])
    out: list[dict[str, Any]] = []
    if (ut.domain == "land" and not ut.is_mine and not ut.is_flag and vm.terrain(tile) == "#"
            and tile not in vm.home and tile not in vm.outposts and _affordable(stock, OUTPOST_COST)):
        out.append({"action": "outpost"})  # A36

    def targets(ok: Callable[[Mapping[str, Any], int], bool]) -> list[str]:
        return sorted(str(e["id"]) for e in vm.enemies if ok(e, _dist(_tile(e["tile"]), tile)))

    tg: list[str] = []
    kind = ""
    if ut.is_warship:  # A37: an enemy land unit on an adjacent land tile
        kind, tg = "bombard", targets(lambda e, d: d == 1 and e["domain"] == "land")
    elif typ == "fighter" and _affordable(stock, STRIKE_COST):  # A38
        kind, tg = "strike", targets(lambda e, d: d <= STRIKE_RANGE)
    elif typ == "spy":  # A39
        kind, tg = "reveal", targets(lambda e, d: d <= REVEAL_RANGE)
    if tg:
        out.append({"action": kind, "targets": tg})
    return out


def builds(vm: ViewMap, stock: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A42: the unit types the player can build now (afforded alone, within the limits), with
    the free tiles a mine may go on and the ships a raft may be bought for."""
    have: dict[str, int] = {}
    for u in vm.own.values():
        have[u["type"]] = have.get(u["type"], 0) + 1
    free_land = {t for t in vm.control if vm.terrain(t) == "#" and t not in vm.occupied}
    free_sea = {n for c in vm.control for dx, dy in DIRS.values()
                for n in [(c[0] + dx, c[1] + dy)] if vm.terrain(n) == "." and n not in vm.occupied}
    ships = sorted(str(u["id"]) for u in vm.own.values()
                   if UNIT_TYPES[u["type"]].is_ship and u["type"] != "raft" and not u.get("raft"))
    out: list[dict[str, Any]] = []
    for typ in BUILDABLE:
        ut = UNIT_TYPES[typ]
        if ut.limit is not None and have.get(typ, 0) >= ut.limit:
            continue
        if not _affordable(stock, ut.cost):
            continue
        b: dict[str, Any] = {"type": typ, "cost": dict(ut.cost), "needs": None}
        if ut.is_mine:
            spots = free_land if typ == "landmine" else free_sea
            if not spots:
                continue
            b["needs"] = "tile"
            b["tiles"] = _tiles(spots)
        elif typ == "raft":
            if not ships:
                continue
            b["needs"] = "ship"
            b["ships"] = ships
        out.append(b)
    return out


def bank_rates(vm: ViewMap) -> dict[str, int]:
    """A52: what the bank takes for 1 of anything, by the resource given."""
    ports = {str(p["resource"]) for p in vm.v["ports"] if _tile(p["tile"]) in vm.control}
    return {r: PORT_RATE if r in ports else BANK_RATE for r in RESOURCES}


def _deploy_tiles(vm: ViewMap, u: Mapping[str, Any]) -> list[list[int]]:
    """A14 as the engine checks it: land units and aircraft on the home island, ships on sea next to it."""
    if UNIT_TYPES[u["type"]].domain == "sea":
        return _tiles({n for t in vm.home for dx, dy in DIRS.values()
                       for n in [(t[0] + dx, t[1] + dy)] if vm.terrain(n) == "."})
    return _tiles(vm.home)


def _selected(vm: ViewMap, unit: str | None) -> list[str]:
    if unit is None:
        return sorted(vm.own)
    if not isinstance(unit, str) or not unit:
        raise InvalidOrder("must be a unit id (string)", field="unit")
    if unit not in vm.own:
        raise NotFound(f"no unit of yours in your view is called {echo(unit)}", field="unit")
    return [unit]


def legal_moves(view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
    """What the player whose view ``view`` is may do now (module docstring: shape and rules).

    ``unit``: only that own unit (builds and bank rates are listed all the same); an id that is not
    one of the player's units in the view raises :class:`engine.errors.NotFound` naming ``unit``."""
    if view.get("outcome") is not None:
        return {"phase": "over"}
    vm = ViewMap(view)
    ids = _selected(vm, unit)
    rnd = int(view["round"])
    if rnd == 0:
        return {"phase": "deployment", "round": 0,
                "units": [{"unit": uid, "type": vm.own[uid]["type"], "at": _xy(_tile(vm.own[uid]["tile"])),
                           "tiles": _deploy_tiles(vm, vm.own[uid])} for uid in ids],
                "note": DEPLOY_NOTE}
    stock = view["stock"]
    units = []
    for uid in ids:
        u = vm.own[uid]
        units.append({"unit": uid, "type": u["type"], "at": _xy(_tile(u["tile"])),
                      "move": UNIT_TYPES[u["type"]].move, "moves": _tiles(unit_moves(vm, u)),
                      "actions": unit_actions(vm, u, stock)})
    return {"phase": "orders", "round": rnd, "units": units, "builds": builds(vm, stock),
            "bank": {"rates": bank_rates(vm)}, "note": ORDERS_NOTE}
