"""The autopilot's per-unit standing orders (A72: stay, move, guard, patrol, escort, hunt); what
each does is in :mod:`engine.archipelago.autopilot`'s docstring."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engine.archipelago.autopilot_paths import Paths
from engine.archipelago.autopilot_plan import Plan
from engine.archipelago.units import UnitType

__all__ = ["UnitOrders"]

Handler = Callable[[str, UnitType, Mapping[str, Any]], bool]


class UnitOrders:
    """A72 for one decision: :meth:`follow` a unit's standing order."""

    def __init__(self, plan: Plan, paths: Paths) -> None:
        self.p = plan
        self.paths = paths
        self._handlers: dict[str, Handler] = {"move": self.move, "guard": self.guard, "patrol": self.patrol,
                                              "escort": self.escort, "hunt": self.hunt}

    def follow(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        """Follow the standing order ``so`` of unit ``uid``; ``False``: it no longer applies (its
        guarded or escorted unit is gone) and the posture decides."""
        kind = so["order"]
        if kind == "stay":
            return True
        return self._handlers[kind](uid, ut, so)

    def move(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        p = self.p
        dest = p.tix(so["tile"])
        start = p.at[uid]
        if dest is not None and dest != start:
            p.move_along(uid, ut.id, self.paths.route(start, ut.id, {dest}))
        return True

    def guard(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        p = self.p
        if "target" in so:
            if so["target"] not in p.own:
                return False
            centre = p.end_tile(so["target"])
        else:
            got = p.tix(so["tile"])
            if got is None:
                return True
            centre = got
        start = p.at[uid]
        typ = ut.id
        pas = self.paths.passable(typ)
        near = {centre, *(k for _, k in p.nb[centre])}
        foes = {j for j in near if j in p.enemy_at and pas[j]}
        if foes:
            p.move_along(uid, typ, self.paths.path_to(start, typ, foes, blocked=self.paths.blocked_for(typ)))
            return True
        if p.dist(start, centre) > 1:
            goals = {j for j in near if pas[j] and j not in p.enemy_at}
            p.move_along(uid, typ, self.paths.route(start, typ, goals))
        return True

    def escort(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        p = self.p
        tid = so["target"]
        if tid not in p.own or tid == uid:
            return False
        start = p.at[uid]
        typ = ut.id
        goal = p.end_tile(tid)
        if p.dist(start, goal) == 1:
            return True
        pas = self.paths.passable(typ)
        taken = {p.end_tile(k) for k in p.own if k != uid and "carrier" not in p.own[k]}
        near = {j for _, j in p.nb[goal] if pas[j] and j not in p.enemy_at}
        blocked = self.paths.blocked_for(typ)
        path = self.paths.path_to(start, typ, near - taken, limit=ut.move, blocked=blocked)
        if path is None:
            path = self.paths.route(start, typ, near)
        p.move_along(uid, typ, path)
        return True

    def hunt(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        p = self.p
        typ = ut.id
        start = p.at[uid]
        pas = self.paths.passable(typ)
        tid = so.get("target")
        goals: set[int] = set()
        if tid is not None:
            goals = {i for i, e in p.enemy_at.items() if e["id"] == tid}
            if not goals:
                goals = {i for i, e in p.log_at.items() if e["id"] == tid}
            goals = {i for i in goals if pas[i]}
        if not goals:
            goals = {i for i in (*p.enemy_at, *p.log_at) if pas[i]}
        if not goals:
            return True
        blocked = self.paths.blocked_for(typ)
        path = self.paths.path_to(start, typ, goals, blocked=blocked)
        if path and len(path) < ut.move and p.walk(start, path) in p.enemy_at:
            # steps to spare: run on past its tile the same way, in case it flees (if it stays, the
            # fight there stops the hunter, A30)
            i = p.walk(start, path)
            while len(path) < ut.move:
                j = p.walk(i, [path[-1]])
                if p.dist(i, j) != 1 or not 0 <= j < len(pas) or not pas[j] or j in blocked:
                    break
                path.append(path[-1])
                i = j
        p.move_along(uid, typ, path)
        return True

    def patrol(self, uid: str, ut: UnitType, so: Mapping[str, Any]) -> bool:
        p = self.p
        typ = ut.id
        got = [p.tix(t) for t in so["waypoints"]]
        wps = [i for i in got if i is not None]
        if len(wps) != len(got):
            return True
        walk: list[int] = []
        steps: list[str] = []
        for k, a in enumerate(wps):
            b = wps[(k + 1) % len(wps)]
            leg = self.paths.path_to(a, typ, {b})
            if leg is None:
                return True  # a waypoint out of reach: the patrol waits
            i = a
            for d in leg:
                walk.append(i)
                steps.append(d)
                i = p.walk(i, [d])
        start = p.at[uid]
        passes = [k for k, i in enumerate(walk) if i == start]
        if not passes:
            p.move_along(uid, typ, self.paths.route(start, typ, set(wps)))
            return True
        n = len(walk)
        k = passes[0]
        if len(passes) > 1:  # the pass least behind the schedule (the autopilot's docstring)
            sched = (p.round * ut.move) % n
            k = min(passes, key=lambda q: ((sched - q) % n, q))
        p.move_along(uid, typ, [steps[(k + j) % n] for j in range(ut.move)])
        return True
