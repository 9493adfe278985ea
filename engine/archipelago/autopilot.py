"""The Archipelago autopilot (A70–A73): orders from one player's view and standing orders, nothing else.

``GAME.autopilot(view, standing)`` plays a player who submitted nothing; ``GAME.complete_orders(view,
standing, orders)`` adds standing orders to a submission for every unit it leaves without an order
(an entry with an empty path is an order: "stay"), plus the queue's builds when the submission has
no builds and the standing bonus when it has no bonus (A70).  Both read only the view
(:mod:`engine.archipelago.view`) and the standing orders (:mod:`engine.archipelago.standing`, read
leniently: entries for units that are gone are skipped), are deterministic for equal inputs, and
return orders that pass ``GAME.validate`` for that player.  In round 0 the autopilot keeps the
default deployment (``{"deploy": []}``); once the game is over it gives ``{}``.  With no standing
orders (``None``, ``{}``, or only "hold") it gives ``{"units": []}`` (plus the bonus): units stay.

Every move is given as an explicit ``path`` planned here over the player's explored terrain (A18:
the unit's domain; a flag only on its home island), around tiles holding known enemies (unless
attacking them) and, for land units, around own ships and planes (a step onto one would board it,
A24).  Ties between equally near tiles follow A28 (distance, then bearing from the unit, A105).

**Per-unit orders (A72)** — a unit with a standing order follows it and not the posture:

- ``stay``: no order.
- ``move`` (a tile): heads for the tile, ``move`` steps a round, over as many rounds as it takes;
  there it holds (the order stays in force: a unit pushed off heads back).
- ``guard`` (a tile, or an own unit's tile): attacks any enemy in sight on the guarded tile or next
  to it; else, if more than 1 tile away, heads back next to it; else holds.  A guarded unit that is
  gone leaves the guard to the posture.
- ``patrol`` (waypoints): the route is the closed walk through the waypoints in order and back to
  the first, each leg the shortest path over explored terrain.  The reading that needs no memory:
  a unit on its route takes the next ``move`` steps along it; a unit off its route heads for the
  nearest waypoint (A28 ties), which puts it on the route.  Where the walk passes the unit's tile
  more than once (legs that retrace each other — two waypoints are an out-and-back), the view cannot
  say which pass the unit is on: it takes the pass that puts it least behind the round's schedule
  position ``(round × move) mod length`` (the earlier pass on a tie).  Following its pass keeps a
  unit's lag constant and switching passes only ever lowers it, so the unit soon keeps to one pass
  and goes round the whole route, again and again.
- ``escort`` (an own unit): ends the round next to the escorted unit's tile after that unit's own
  order this round (its path, as far as this player orders it); holds while already there.  An
  escorted unit that is gone leaves the escort to the posture.
- ``hunt`` (an enemy, or the nearest known one): heads for the target's tile — in sight now, else
  its last tile in the enemy log (A83) — entering it when in reach (an attack), and with steps to
  spare runs on past it the same way (a target that stays stops it there, A30; one that flees
  straight on is caught).  Log entries on
  tiles in sight now are stale (the unit is not there) and ignored; a target that is gone or
  stale falls back to the nearest known enemy the unit can reach.

**Postures (A71)**, for units without a standing order (never flags, mines, cargo — cargo only
lands, see below — or aircraft, which must end each round on land their owner controls, A34):

- ``hold``: units stay (the default).
- ``defensive``: hold; a unit with an enemy in sight within 2 tiles falls back toward the base
  (land units toward the base tile, ships toward the sea next to it), never into an enemy.
- ``balanced``: attack (enter the tile of, or step toward) an enemy within 2 tiles that is known to
  be weaker — its type is revealed (A31, A37–A39) and the unit wins the duel as attacker by A29/A43
  (a flag is picked up, A61; a parked aircraft is beaten, A34); else hold.  Also: a warship holding
  still bombards an adjacent enemy land unit known to be weaker than it (A37), a spy reveals an
  unrevealed enemy within 2 (A39), a fighter strikes a known enemy unit that a strike destroys within
  5 tiles when fuel allows (A38).
- ``aggressive``: attack any enemy within 2 tiles except one known to beat the unit (a known equal
  is attacked: both die).  Warships bombard any adjacent enemy land unit, spies reveal, fighters
  strike any enemy in range not known to be immune.  The spec gives aggressive no "else hold", and
  an aggressive player takes ground; the reading here: a unit with no enemy in reach **advances**.
  A land unit on land outside its home island founds an outpost where there is none (A36: 1 food,
  1 wood, when the stock allows it, before the queue's builds) and otherwise heads for the nearest
  land tile its player does not control; a naval commando walks there over land and sea.  Ships
  ferry the others: an empty ship sails to the nearest sea tile next to an own land unit at home and
  waits there, land units next to a waiting ship board it (A24), land units at home walk toward
  such a ship, a ship with cargo sails (once full, or when nobody is left next to it to board) to
  the nearest sea tile next to land its player does not control and holds there, and cargo next to
  such land lands on it.  With no such land known, ships explore: they head for the nearest tile
  next to unexplored ones.

**Builds (A73)**: see :mod:`engine.archipelago.standing` (the queue's entries from the front while
affordable, after this round's outposts and strikes; entries that cannot be built this round as far
as the view shows are passed over).  **Bonus (A51)**: the standing choice, when the orders have
none.

**How it is built.**  One decision reads the view once into a :class:`~.autopilot_plan.Plan` (flat
tile indices, the orders decided so far); its parts each add orders to it: the pathing
(:mod:`.autopilot_paths`, over the view-side reach of :mod:`.viewmap`), the per-unit orders
(:mod:`.autopilot_orders`), the postures (:mod:`.autopilot_postures`) and the builds
(:mod:`.autopilot_builds`).  This module decides in which order the units are decided and which part
decides each.  Fights are judged by :func:`engine.archipelago.rules.attack_result`, the resolution's
own duel read from the attacker's side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.autopilot_builds import queue_builds
from engine.archipelago.autopilot_orders import UnitOrders
from engine.archipelago.autopilot_paths import Paths
from engine.archipelago.autopilot_plan import Plan
from engine.archipelago.autopilot_postures import ATTACK_RANGE, Advance, Postures
from engine.archipelago.units import UNIT_TYPES

__all__ = ["ATTACK_RANGE", "autopilot", "complete_orders"]


class _Decision:
    """One autopilot decision: a :class:`Plan` and the parts that add orders to it."""

    def __init__(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None) -> None:
        self.p = Plan(view, standing)
        self.paths = Paths(self.p)
        self.orders = UnitOrders(self.p, self.paths)
        self.postures = Postures(self.p, self.paths)
        self.advance = Advance(self.p, self.paths)

    def run(self, submitted: Mapping[str, Any]) -> dict[str, Any]:
        p = self.p
        p.take_submitted(submitted, self.paths.plan_to)
        sorders = {e["unit"]: e for e in p.s["units"] if e["unit"] in p.own}
        free = [uid for uid in sorted(p.own) if uid not in p.fixed]

        def follows(uid: str) -> bool:  # escorts and unit guards go after the units they follow
            so = sorders.get(uid)
            return so is not None and (so["order"] == "escort" or (so["order"] == "guard" and "target" in so))

        first = sorted((uid for uid in free if "carrier" not in p.own[uid] and not follows(uid)),
                       key=lambda k: (UNIT_TYPES[p.own[k]["type"]].capacity == 0, k))
        for uid in first:  # carriers first: boarders need to know whether they move
            self.decide(uid, sorders.get(uid))
        for uid in free:
            if "carrier" not in p.own[uid] and follows(uid):
                self.decide(uid, sorders.get(uid))
        for uid in free:  # cargo: lands only while its carrier holds still (A24)
            if "carrier" in p.own[uid]:
                self.decide(uid, sorders.get(uid))
        p.check_boarding()
        out: dict[str, Any] = dict(submitted)
        units = list(submitted["units"]) if isinstance(submitted.get("units"), list) else []
        out["units"] = units + [p.entries[k] for k in sorted(p.entries)]
        if not submitted.get("builds"):
            builds = queue_builds(p)
            if builds:
                out["builds"] = builds
        if submitted.get("bonus") is None and "bonus" in p.s:
            out["bonus"] = p.s["bonus"]
        return out

    def decide(self, uid: str, so: Mapping[str, Any] | None) -> None:
        """One unit: its standing order (A72), else the posture (A71)."""
        p = self.p
        u = p.own[uid]
        typ = u["type"]
        ut = UNIT_TYPES[typ]
        if ut.move == 0 or (typ == "flag" and "carrier" in u):
            return
        cargo = "carrier" in u
        if cargo:
            c = str(u["carrier"])
            if c not in p.own or p.moving(c):
                return  # an enemy bears this flag, or the carrier moves (A24)
        if so is not None and self.orders.follow(uid, ut, so):
            return
        posture = p.posture
        if cargo:
            if posture == "aggressive" and typ != "flag":
                self.advance.land_cargo(uid, ut)
            return
        if typ == "flag" or ut.domain == "air":
            if ut.id == "fighter" and posture in ("balanced", "aggressive"):
                self.postures.strike(uid)
            return
        if posture == "hold":
            return
        if posture == "defensive":
            self.postures.fall_back(uid, ut)
            return
        if typ == "spy" and self.postures.reveal(uid):
            return
        has_cargo = bool(u.get("cargo"))
        if not has_cargo and self.postures.attack(uid, ut, posture):
            return
        if posture == "aggressive":
            self.advance.advance(uid, u, ut)
        if ut.is_warship and not p.moving(uid):
            self.postures.bombard(uid, ut)


def complete_orders(view: Mapping[str, Any], standing: Mapping[str, Any] | None,
                    orders: Mapping[str, Any]) -> dict[str, Any]:
    """A70: ``orders`` (a submission that passed ``validate``) plus standing orders for every unit
    it leaves without an order, the queue's builds when it has none, the standing bonus when it has
    none (module docstring)."""
    if view.get("outcome") is not None:
        return dict(orders)
    if view.get("round", 0) == 0:
        return dict(orders)
    return _Decision(view, standing).run(orders if isinstance(orders, Mapping) else {})


def autopilot(view: Mapping[str, Any], standing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A70: the orders of a player who submitted nothing (module docstring)."""
    if view.get("outcome") is not None:
        return {}
    if view.get("round", 0) == 0:
        return {"deploy": []}
    return _Decision(view, standing).run({"units": []})
