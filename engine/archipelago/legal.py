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

from collections.abc import Mapping
from typing import Any

from engine.archipelago.rules import OUTPOST_COST, STRIKE_COST, Budget
from engine.archipelago.units import BUILDABLE, UNIT_TYPES
from engine.archipelago.viewmap import ViewMap, bank_rates, reach, tile_of
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

__all__ = ["legal_moves", "unit_moves"]


def _xy(t: Tile) -> list[int]:
    return [t[0], t[1]]


def _tiles(ts: set[Tile] | list[Tile]) -> list[list[int]]:
    """Tiles as ``[x, y]`` pairs in reading order (by y, then x)."""
    return [_xy(t) for t in sorted(ts, key=lambda t: (t[1], t[0]))]


def unit_moves(vm: ViewMap, u: Mapping[str, Any]) -> list[Tile]:
    """Tiles ``u`` may be ordered to (``{"unit", "to"}``) and reach this round (module docstring).

    The view-side reach (:mod:`engine.archipelago.viewmap`: explored tiles of the unit's terrain,
    as :func:`engine.archipelago.orders.plan_path` plans them) within the unit's move, plus, for a
    land unit, an own carrier's tile with room for it as a last step (boarding, A24, A35); the
    unit's own tile is not a move."""
    typ = str(u["type"])
    ut = UNIT_TYPES[typ]
    if ut.move == 0 or (ut.is_flag and "carrier" in u):
        return []  # A91 mines never move; A61 an own flag carried by an enemy takes no order
    boarding = vm.boarding_ix if ut.domain == "land" and not ut.is_flag else ()
    start = vm.ix(tile_of(u["tile"]))
    return [vm.xy(i) for i in reach(vm.nb, vm.passable(typ), (start,), ends=boarding, limit=ut.move) if i != start]


def unit_actions(vm: ViewMap, u: Mapping[str, Any], budget: Budget) -> list[dict[str, Any]]:
    """The actions the engine accepts for ``u`` now, each with the enemy ids it may target
    (A36–A39); ``budget``: the player's stock, nothing spent."""
    if "carrier" in u:
        return []  # A24 cargo takes no action (nor does an own flag an enemy carries, A61)
    typ = str(u["type"])
    ut = UNIT_TYPES[typ]
    tile = tile_of(u["tile"])
    out: list[dict[str, Any]] = []
    if vm.outpost_site(typ, tile) and budget.fits(OUTPOST_COST):
        out.append({"action": "outpost"})  # A36
    kind = ("bombard" if ut.is_warship  # A37
            else "strike" if typ == "fighter" and budget.fits(STRIKE_COST)  # A38
            else "reveal" if typ == "spy" else None)  # A39
    tg = sorted(str(e["id"]) for e in vm.targets(kind, tile)) if kind is not None else []
    if tg:
        out.append({"action": kind, "targets": tg})
    return out


def builds(vm: ViewMap, budget: Budget) -> list[dict[str, Any]]:
    """A42: the unit types the player can build now (afforded alone from ``budget``, the player's
    stock, within the limits), with the free tiles a mine may go on and the ships a raft may be
    bought for."""
    have = vm.type_counts
    ships = vm.raft_ships()
    out: list[dict[str, Any]] = []
    for typ in BUILDABLE:
        ut = UNIT_TYPES[typ]
        if ut.limit is not None and have.get(typ, 0) >= ut.limit:
            continue
        if not budget.fits(ut.cost):
            continue
        b: dict[str, Any] = {"type": typ, "cost": dict(ut.cost), "needs": None}
        if ut.is_mine:
            spots = vm.mine_sites(typ) - vm.occupied
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


def _deploy_tiles(vm: ViewMap, u: Mapping[str, Any]) -> list[list[int]]:
    """A14 as the engine checks it: land units and aircraft on the home island, ships on sea next to it."""
    if UNIT_TYPES[u["type"]].domain == "sea":
        return _tiles(vm.sea_next_to(vm.home))
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
                "units": [{"unit": uid, "type": vm.own[uid]["type"], "at": _xy(tile_of(vm.own[uid]["tile"])),
                           "tiles": _deploy_tiles(vm, vm.own[uid])} for uid in ids],
                "note": DEPLOY_NOTE}
    stock = Budget(view["stock"])
    units = []
    for uid in ids:
        u = vm.own[uid]
        units.append({"unit": uid, "type": u["type"], "at": _xy(tile_of(u["tile"])),
                      "move": UNIT_TYPES[u["type"]].move, "moves": _tiles(unit_moves(vm, u)),
                      "actions": unit_actions(vm, u, stock)})
    return {"phase": "orders", "round": rnd, "units": units, "builds": builds(vm, stock),
            "bank": {"rates": bank_rates(view)}, "note": ORDERS_NOTE}
