"""The autopilot's postures (A71: hold, defensive, balanced, aggressive) for units without a
standing order; what each does is in :mod:`engine.archipelago.autopilot`'s docstring.

:class:`Postures` holds the fights (falling back, attacking, a spy's reveal, a fighter's strike, a
warship's bombardment); :class:`Advance` the aggressive posture's taking ground (outposts, ferrying
land units abroad, landing them, exploring).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.autopilot_paths import Paths
from engine.archipelago.autopilot_plan import Plan
from engine.archipelago.board import tie_key
from engine.archipelago.rules import OUTPOST_COST, REVEAL_RANGE, STRIKE_COST, STRIKE_RANGE, attack_result, strike_hits
from engine.archipelago.units import UNIT_TYPES, UnitType
from engine.archipelago.viewmap import LAND_GLYPH, SEA_GLYPH, UNEXPLORED_GLYPH

__all__ = ["ATTACK_RANGE", "Advance", "Postures"]

ATTACK_RANGE = 2  # A71: "enemies within 2 tiles"


class Postures:
    """A71's fights for one decision."""

    def __init__(self, plan: Plan, paths: Paths) -> None:
        self.p = plan
        self.paths = paths

    def fall_back(self, uid: str, ut: UnitType) -> None:
        """Defensive: with an enemy in sight within 2 tiles, fall back toward the base, never into
        an enemy."""
        p, paths = self.p, self.paths
        start = p.at[uid]
        if not any(p.dist(start, j) <= ATTACK_RANGE for j in p.enemy_at):
            return
        typ = ut.id
        if ut.domain == "sea":
            src = {j for _, j in p.nb[p.base] if p.terr[j] == SEA_GLYPH} or {p.base}
            fld = paths.field("home-sea", src, typ, p.enemy_tiles)
        elif typ == "navcommando":
            fld = paths.field("home-any", {p.base}, typ, p.enemy_tiles)
        else:
            fld = paths.field("home-land", {p.base}, typ, p.enemy_tiles)
        p.move_along(uid, typ, paths.descend(start, fld, ut.move, p.enemy_tiles | set(p.own_at)))

    def attack(self, uid: str, ut: UnitType, mode: str) -> bool:
        """Balanced: enter (or step toward) an enemy within 2 tiles known to be weaker; aggressive:
        any but one known to beat the unit.  Whether it attacks."""
        p, paths = self.p, self.paths
        typ = ut.id
        start = p.at[uid]
        pas = paths.passable(typ)
        sure: set[int] = set()
        maybe: set[int] = set()
        for j, e in p.enemy_at.items():
            if p.dist(start, j) > ATTACK_RANGE or not pas[j]:
                continue
            res = attack_result(typ, e.get("type"))
            if res == "win":
                sure.add(j)
            elif mode == "aggressive" and res != "lose":
                maybe.add(j)
        blocked = paths.blocked_for(typ)
        for goals in (sure, maybe):
            path = paths.path_to(start, typ, goals, limit=ATTACK_RANGE, blocked=blocked)
            if path:
                p.move_along(uid, typ, path)
                return True
        return False

    def reveal(self, uid: str) -> bool:
        """A spy reveals the nearest unrevealed enemy within reach (A39); whether it does."""
        for _, e in self.p.enemies_by_distance(self.p.at[uid], REVEAL_RANGE):
            if "type" not in e:
                self.p.order_action(uid, "reveal", e["id"])
                return True
        return False

    def strike(self, uid: str) -> None:
        """A fighter strikes the nearest enemy in range that a strike destroys (aggressive: also
        one of unknown type), when the fuel allows (A38)."""
        p = self.p
        for _, e in p.enemies_by_distance(p.at[uid], STRIKE_RANGE):
            if e.get("domain") == "air":
                continue
            typ = e.get("type")
            if (typ is not None and not strike_hits(typ)) or (typ is None and p.posture != "aggressive"):
                continue
            if p.afford(STRIKE_COST):
                p.order_action(uid, "strike", e["id"])
            return

    def bombard(self, uid: str, ut: UnitType) -> None:
        """A warship holding still bombards an adjacent enemy land unit known to be weaker
        (aggressive: also one of unknown type, A37)."""
        p = self.p
        for _, j in p.nb[p.at[uid]]:
            e = p.enemy_at.get(j)
            if e is None or p.terr[j] != LAND_GLYPH or e.get("domain") == "air":
                continue
            typ = e.get("type")
            if typ is not None and (UNIT_TYPES[typ].domain == "air"
                                    or UNIT_TYPES[typ].duel_strength >= ut.duel_strength):
                continue  # not weaker: nothing happens (A37)
            if typ is None and p.posture != "aggressive":
                continue
            p.order_action(uid, "bombard", e["id"])
            return


class Advance:
    """The aggressive posture's taking ground (A71, as :mod:`engine.archipelago.autopilot` reads
    it) for one decision."""

    def __init__(self, plan: Plan, paths: Paths) -> None:
        self.p = plan
        self.paths = paths
        self._targets: set[int] | None = None
        self._drops: list[int] | None = None
        self._frontier: list[int] | None = None

    def targets(self) -> set[int]:
        """Explored land outside the home island that the player does not control."""
        if self._targets is None:
            p = self.p
            t = p.terr
            self._targets = {i for i in range(len(t)) if t[i] == LAND_GLYPH and i not in p.home
                             and i not in p.control and p.outposts.get(i) != p.me}
        return self._targets

    def drops(self) -> list[int]:
        """The sea tiles next to a target, where cargo lands."""
        if self._drops is None:
            sea = self.paths.passable("dvora")
            self._drops = sorted({j for i in self.targets() for _, j in self.p.nb[i] if sea[j]})
        return self._drops

    def troops_home(self) -> list[str]:
        """Own land units at home that may go abroad (not flags or mines, not ordered elsewhere)."""
        p = self.p
        got = []
        for uid, u in p.own.items():
            if "carrier" in u or p.at[uid] not in p.home:
                continue
            ut = UNIT_TYPES[u["type"]]
            if ut.domain == "land" and not ut.is_mine and not ut.is_flag and u["type"] != "navcommando":
                got.append(uid)
        return got

    def room(self, cid: str) -> int:
        """The room left on own carrier ``cid`` after this round's boarders."""
        return self.p.map.room(cid) - self.p.boarders.get(cid, 0)

    def advance(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        """A unit with no enemy in reach: found an outpost abroad, head for land to take, board a
        waiting ship at home; a ship ferries."""
        p = self.p
        typ = ut.id
        start = p.at[uid]
        if ut.domain == "land":
            abroad = p.terr[start] == LAND_GLYPH and start not in p.home
            if p.map.outpost_site(typ, p.xy(start)) and p.afford(OUTPOST_COST):
                p.order_action(uid, "outpost")
            elif typ == "navcommando" or abroad:
                self.paths.head_for(uid, typ, self.targets() - {start})
            elif start in p.home:
                self.go_aboard(uid, start)
            return
        if ut.domain == "sea" and ut.capacity > 0:
            self.ferry(uid, u, ut)

    def waiting_carriers(self) -> list[str]:
        """Own ships next to the home island that hold still and have room."""
        p = self.p
        return [c for i, c in sorted(p.carrier_at.items())
                if UNIT_TYPES[p.own[c]["type"]].domain == "sea" and not p.moving(c) and self.room(c) > 0
                and any(j in p.home for _, j in p.nb[i])]

    def go_aboard(self, uid: str, start: int) -> None:
        """A land unit at home boards a waiting ship next to it, or walks toward one."""
        p = self.p
        if not self.targets():
            return
        for d, j in p.nb[start]:
            c = p.carrier_at.get(j)
            if c is not None and c in self.waiting_carriers():
                p.boarders[c] = p.boarders.get(c, 0) + 1
                p.pinned.add(c)
                p.boarding[uid] = c
                p.order_path(uid, [d])
                return
        waiting = self.waiting_carriers()
        if not waiting:
            return
        self.paths.head_for(uid, p.own[uid]["type"], {j for c in waiting for _, j in p.nb[p.at[c]]
                                                      if j in p.home})

    def ferry(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        """A ship: waits for passengers, carries them to land to take and holds there while they
        land, or explores when no such land is known."""
        p = self.p
        start = p.at[uid]
        if uid in p.pinned:
            return
        cargo = [c for c in (u.get("cargo") or ())
                 if c in p.own and UNIT_TYPES[p.own[c]["type"]].domain == "land"]
        troops = self.troops_home()
        near = any(p.dist(p.at[t], start) == 1 for t in troops)  # could board next round
        if cargo:
            if start in self.drops():
                return  # hold: the cargo lands
            if self.room(uid) > 0 and near:
                return  # wait for more passengers
            self.paths.head_for(uid, ut.id, self.drops())
            return
        if not self.targets():
            self.explore(uid, ut)
            return
        if not troops or near:
            return  # nobody to carry, or waiting for passengers
        self.paths.head_for(uid, ut.id, {j for t in troops for _, j in p.nb[p.at[t]] if p.terr[j] == SEA_GLYPH})

    def explore(self, uid: str, ut: UnitType) -> None:
        """No land to take is known: head for the nearest tile next to unexplored ones."""
        p = self.p
        if self._frontier is None:
            t = p.terr
            self._frontier = [i for i in range(len(t)) if t[i] != UNEXPLORED_GLYPH
                              and any(t[j] == UNEXPLORED_GLYPH for _, j in p.nb[i])]
        pas = self.paths.passable(ut.id)
        goals = {i for i in self._frontier if pas[i] and i not in p.own_at}
        p.move_along(uid, ut.id, self.paths.path_to(p.at[uid], ut.id, goals,
                                                    blocked=p.enemy_tiles | set(p.own_at)))

    def land_cargo(self, uid: str, ut: UnitType) -> None:
        """Cargo next to land to take lands on it: on a known enemy it does not lose to, else on
        an empty tile (A28 ties)."""
        p = self.p
        start = p.at[uid]
        tg = self.targets()
        pas = self.paths.passable(ut.id)
        goals = [j for _, j in p.nb[start] if j in tg and j not in p.own_at and pas[j]]
        foes = [j for j in goals if j in p.enemy_at and attack_result(ut.id, p.enemy_at[j].get("type")) != "lose"]
        calm = [j for j in goals if j not in p.enemy_at]
        pick = (foes or calm)
        if not pick:
            return
        origin = p.xy(start)
        j = min(pick, key=lambda j: tie_key(origin, p.xy(j)))
        d = next(d for d, k in p.nb[start] if k == j)
        p.order_path(uid, [d])
