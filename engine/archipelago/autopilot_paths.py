"""The autopilot's pathing (:mod:`engine.archipelago.autopilot`): the view-side reach of
:mod:`engine.archipelago.viewmap` with what the autopilot goes around.

Paths run over the player's explored terrain for the unit's type (A18, A23, A60:
:meth:`engine.archipelago.viewmap.ViewMap.passable`), around tiles holding known enemies (unless
attacking them) and, for land units, around own carriers (a step onto one would board it, A24);
ties between equally near goals follow A28 (distance, then bearing from the unit, A105).
"""

from __future__ import annotations

from collections.abc import Collection

from engine.archipelago.autopilot_plan import Plan
from engine.archipelago.units import UNIT_TYPES
from engine.archipelago.viewmap import distances

__all__ = ["Paths"]


class Paths:
    """Pathing for one decision (:class:`engine.archipelago.autopilot_plan.Plan`)."""

    def __init__(self, plan: Plan) -> None:
        self.p = plan
        self._fields: dict[str, list[int]] = {}
        #: :meth:`engine.archipelago.viewmap.ViewMap.path` (start, typ, goals, limit, blocked): a
        #: shortest path to the nearest goal
        self.path_to = plan.map.path
        #: :meth:`engine.archipelago.viewmap.ViewMap.passable` (typ): 1 where a unit of ``typ`` may
        #: plan a path, by tile index
        self.passable = plan.map.passable

    def blocked_for(self, typ: str) -> set[int]:
        """Tiles a planned path goes around: known enemies; for land units also own carriers."""
        b = set(self.p.enemy_tiles)
        if UNIT_TYPES[typ].domain == "land" and typ != "flag":
            b.update(self.p.carrier_at)
        return b

    def plan_to(self, start: int, typ: str, dest: int) -> list[str] | None:
        """The path a destination order from ``start`` takes (units ignored, as the server plans it)."""
        return self.path_to(start, typ, {dest})

    def field(self, name: str, sources: Collection[int], typ: str, blocked: Collection[int] = ()) -> list[int]:
        """Distances (−1: unreachable) to the nearest of ``sources`` over tiles passable for ``typ``
        and not ``blocked``; cached under ``name`` for this decision."""
        got = self._fields.get(name)
        if got is None:
            got = self._fields[name] = distances(self.p.nb, self.passable(typ), sources, blocked=blocked)
        return got

    def descend(self, start: int, fld: list[int], steps: int, avoid: Collection[int] = ()) -> list[str]:
        """Up to ``steps`` steps downhill on a field (N, E, S, W first among equals), never onto
        ``avoid``; stops at a source."""
        path: list[str] = []
        cur = start
        nb = self.p.nb
        for _ in range(steps):
            here = fld[cur] if fld[cur] >= 0 else 1 << 30
            if here == 0:
                break
            best: tuple[int, str, int] | None = None
            for d, j in nb[cur]:
                fj = fld[j]
                if 0 <= fj < here and j not in avoid and (best is None or fj < best[0]):
                    best = (fj, d, j)
            if best is None:
                break
            path.append(best[1])
            cur = best[2]
        return path

    def route(self, start: int, typ: str, goals: Collection[int]) -> list[str] | None:
        """A path to the nearest goal around enemies and own carriers; failing that, through them."""
        pas = self.passable(typ)
        goals = {g for g in goals if pas[g] or g in self.p.enemy_at}
        got = self.path_to(start, typ, goals, blocked=self.blocked_for(typ))
        if got is None:
            got = self.path_to(start, typ, goals)
        return got

    def head_for(self, uid: str, typ: str, goals: Collection[int]) -> None:
        """Move toward the nearest goal not held by an own unit, around own units and known enemies
        (own units that stay would hold it, A25); failing that, through own units."""
        p = self.p
        start = p.at[uid]
        goals = {g for g in goals if g not in p.own_at or g == start}
        if start in goals:
            return
        blocked = self.blocked_for(typ) | set(p.own_at)
        path = self.path_to(start, typ, goals, blocked=blocked)
        if path is None:
            path = self.path_to(start, typ, goals, blocked=self.blocked_for(typ))
        p.move_along(uid, typ, path)
