"""Archipelago rule constants and computations shared by the engine's parts, each stated once.

The resolution (:mod:`engine.archipelago.resolve`), the orders' checks (:mod:`engine.archipelago.orders`),
the autopilot (:mod:`engine.archipelago.autopilot`), legal moves (:mod:`engine.archipelago.legal`) and
the random player (:mod:`engine.archipelago.randplay`) read these and never restate them:

- the unit actions (A36–A39): their kinds, the rule each answers to, costs and ranges;
- what a strike or a bombardment destroys (A37, A38);
- the duel (A29, A11, A34, A43): :func:`duel` decides a fight in the resolution, and
  :func:`attack_result` is the same function read from an attacker's side (the autopilot's "known
  weaker", A71);
- the terrain an A18 destination search runs over, by unit type (:data:`PLAN_TERRAIN`: A23, A60);
  the state side (:class:`engine.archipelago.orders.PathPlanner`) and the view side
  (:class:`engine.archipelago.viewmap.ViewMap`) each read it from what they know of the map;
- paying for outposts, strikes and builds from a stock (A20, A36, A38, A42).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Literal

from engine.archipelago.units import AIR, LAND, RESOURCES, SEA, UNIT_TYPES

#: the unit actions (A36–A39), in the order the orders' errors list them
ACTIONS: tuple[str, ...] = ("outpost", "bombard", "strike", "reveal")
#: the rule an order of each action answers to
ACTION_RULE: Mapping[str, str] = {"outpost": "A36", "bombard": "A37", "strike": "A38", "reveal": "A39"}
OUTPOST_COST: dict[str, int] = {"food": 1, "wood": 1}  # A36
STRIKE_COST: dict[str, int] = {"fuel": 1}  # A38
#: what an action costs (A20: paid with the builds from one stock)
ACTION_COST: Mapping[str, Mapping[str, int]] = {"outpost": OUTPOST_COST, "strike": STRIKE_COST}
STRIKE_RANGE = 5  # A38: a fighter strikes a unit within this distance
REVEAL_RANGE = 2  # A39: a spy reveals a unit within this distance
BOMBARD_RANGE = 1  # A37: a warship bombards an adjacent land tile

SCORE_CENTRE = 3  # A65: a centre island controlled, each round
SCORE_RING = 2  # A65: a ring island controlled, each round
SCORE_OUTPOST = 1  # A65: an outpost owned, each round
FLAG_SCORE = 5  # A63: an enemy flag brought to the base (its owner loses as much)

#: A38: the unit types a strike does not destroy: mines, flags, the submarine, aircraft
STRIKE_IMMUNE: frozenset[str] = frozenset(k for k, t in UNIT_TYPES.items()
                                          if t.is_mine or t.is_flag or k == "submarine" or t.domain == AIR)

#: A43: the unit types that beat a mine they enter (by the mine's type)
MINE_CLEARERS: Mapping[str, frozenset[str]] = {"landmine": frozenset({"engineer", "commando"}),
                                               "seamine": frozenset({"navcommando"})}

#: unit type -> the terrain an A18 destination search runs over: "home" (a flag: its home island,
#: A60), "land" (land units but the naval commando), "sea" (ships and sea mines), "any" (aircraft,
#: the naval commando) — explored tiles only, whoever plans
PLAN_TERRAIN: Mapping[str, Literal["home", "land", "sea", "any"]] = {
    k: ("home" if t.is_flag else "land" if t.domain == LAND and k != "navcommando"
        else "sea" if t.domain == SEA else "any")
    for k, t in UNIT_TYPES.items()}

_STRENGTH = {k: t.duel_strength for k, t in UNIT_TYPES.items()}
_SHIPS = frozenset(k for k, t in UNIT_TYPES.items() if t.is_ship)

HOLDER: Literal["holder"] = "holder"
ENTRANT: Literal["entrant"] = "entrant"
Winner = Literal["holder", "entrant"] | None


def strike_hits(target: str) -> bool:
    """A38: whether a strike destroys a unit of type ``target``."""
    return target not in STRIKE_IMMUNE


def bombard_hits(warship: str, target: str) -> bool:
    """A37: whether a bombardment by ``warship`` destroys a land unit of type ``target``: its
    strength is below the warship's ("–" never is)."""
    strength = UNIT_TYPES[target].strength
    return strength is not None and strength < _STRENGTH[warship]


def special_win(att: str, dfn: str) -> bool:
    """A29: whether a special rule makes ``att`` win attacking ``dfn``."""
    if att == "commando":
        return dfn == "rank13"
    if att == "submarine":
        return dfn in _SHIPS and dfn != "submarine"
    if att == "navcommando":
        return dfn == "saar6"
    return False


def duel(holder: str, entrant: str, holder_attacks: bool, entrant_attacks: bool) -> Winner:
    """The winner of a duel (A29, A11, A34, A43) between a unit of type ``holder`` on the tile and
    one of type ``entrant``: :data:`HOLDER`, :data:`ENTRANT` or ``None`` for a tie.

    A parked aircraft loses to whatever enters (A34); a mine beats every entrant but its clearers
    (A43); else a special rule counts for a side that attacks (A29), then the strength ("–" is −1,
    A11)."""
    if UNIT_TYPES[holder].domain == AIR:
        return ENTRANT
    clearers = MINE_CLEARERS.get(holder)
    if clearers is not None:
        return ENTRANT if entrant in clearers else HOLDER
    sa = holder_attacks and special_win(holder, entrant)
    sb = entrant_attacks and special_win(entrant, holder)
    if sa != sb:
        return HOLDER if sa else ENTRANT
    xa, xb = _STRENGTH[holder], _STRENGTH[entrant]
    return HOLDER if xa > xb else ENTRANT if xb > xa else None


def attack_result(att: str, dfn: str | None) -> Literal["win", "tie", "lose"] | None:
    """The attacker's result entering a unit of type ``dfn`` that stays (A29, A11, A34, A43, A61):
    :func:`duel` with the defender holding and only the attacker attacking; an enemy flag is picked
    up (A61: "win").  ``None`` for an unknown type."""
    if dfn is None or dfn not in UNIT_TYPES:
        return None
    if dfn == "flag":
        return "win"
    won = duel(dfn, att, False, True)
    return "win" if won == ENTRANT else "lose" if won == HOLDER else "tie"


def can_pay(stock: Mapping[str, int], cost: Mapping[str, int]) -> bool:
    """Whether ``stock`` holds ``cost``."""
    return all(stock[r] >= n for r, n in cost.items())


def pay(stock: MutableMapping[str, int], cost: Mapping[str, int]) -> None:
    """Take ``cost`` from ``stock`` (:func:`can_pay` first)."""
    for r, n in cost.items():
        stock[r] -= n


class Budget:
    """A stock to pay from while orders are put together from a view (A20: builds, outposts and
    strikes are paid from one stock): what is spent so far, and whether more fits."""

    __slots__ = ("spent", "stock")

    def __init__(self, stock: Mapping[str, int]) -> None:
        self.stock = {r: int(stock.get(r, 0)) for r in RESOURCES}
        self.spent = dict.fromkeys(RESOURCES, 0)

    def fits(self, cost: Mapping[str, int]) -> bool:
        """Whether ``cost`` can be paid on top of what is spent."""
        return all(self.spent[r] + cost.get(r, 0) <= self.stock[r] for r in RESOURCES)

    def spend(self, cost: Mapping[str, int]) -> None:
        """Count ``cost`` as spent (paid or not)."""
        for r, n in cost.items():
            self.spent[r] += n

    def afford(self, cost: Mapping[str, int]) -> bool:
        """Spend ``cost`` if it fits; whether it did."""
        if self.fits(cost):
            self.spend(cost)
            return True
        return False


__all__ = ["ACTIONS", "ACTION_COST", "ACTION_RULE", "BOMBARD_RANGE", "ENTRANT", "FLAG_SCORE", "HOLDER",
           "MINE_CLEARERS", "OUTPOST_COST", "PLAN_TERRAIN", "REVEAL_RANGE", "SCORE_CENTRE", "SCORE_OUTPOST",
           "SCORE_RING", "STRIKE_COST", "STRIKE_IMMUNE", "STRIKE_RANGE",
           "Budget", "attack_result", "bombard_hits", "can_pay", "duel", "pay", "special_win", "strike_hits"]
