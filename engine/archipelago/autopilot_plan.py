"""One autopilot decision's working set (:mod:`engine.archipelago.autopilot`): the player's view read
once into flat tile indices, and the orders decided so far.

:class:`Plan` is what the autopilot's parts share — the pathing (:mod:`.autopilot_paths`), the
per-unit orders (:mod:`.autopilot_orders`), the postures (:mod:`.autopilot_postures`) and the builds
(:mod:`.autopilot_builds`): where own units, carriers and known enemies stand, the home island and
control, the stock still free (A20), and the order entries with their paths.  Each part reads it
and adds orders through :meth:`Plan.order_path`, :meth:`Plan.move_along` and
:meth:`Plan.order_action` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import index_steps
from engine.archipelago.rules import ACTION_COST, Budget
from engine.archipelago.standing import parse_standing
from engine.archipelago.units import UNIT_TYPES
from engine.archipelago.viewmap import LAND_GLYPH, ViewMap

__all__ = ["Plan"]


class Plan:
    """One autopilot decision: the view read once into flat tile indices (``y * width + x``), and
    the orders decided so far."""

    def __init__(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None) -> None:
        vm = self.map = ViewMap(view)
        self.s = parse_standing(standing, strict=False)
        self.posture: str = self.s["posture"]
        self.w, self.h, self.me = vm.w, vm.h, vm.me
        self.round = int(view["round"])
        self.nb = vm.nb
        self._steps = index_steps(self.w)
        self.terr = vm.terr
        self.own: Mapping[str, Mapping[str, Any]] = vm.own
        self.at: dict[str, int] = {}  # unit id -> tile index (cargo: its carrier's tile)
        self.own_at: dict[int, str] = {}  # tile -> own unit standing there (not cargo)
        for u in view["units"]:
            i = self.at[u["id"]] = self.ix(u["tile"])
            if "carrier" not in u:
                self.own_at[i] = u["id"]
        self.carrier_at = vm.carrier_ix  # tile -> own carrier standing there
        self.enemy_at: dict[int, Mapping[str, Any]] = {self.ix(e["tile"]): e for e in view["enemies"]}
        self.visible: set[int] = {self.ix(t) for t in view["visible"]}
        self.log_at: dict[int, Mapping[str, Any]] = {}
        for e in view["enemy_log"]:
            i = self.ix(e["tile"])
            if i not in self.visible and i not in self.log_at:
                self.log_at[i] = e
        self.home = vm.home_ix
        self.control = vm.control_ix
        self.outposts: dict[int, int] = {self.ix(o["tile"]): int(o["owner"]) for o in view["outposts"]}
        self.base = self.ix(view["base"])
        self.budget = Budget(view["stock"])
        self.enemy_tiles: frozenset[int] = frozenset(self.enemy_at)
        # decisions
        self.entries: dict[str, dict[str, Any]] = {}  # unit id -> the order entry we add
        self.fixed: set[str] = set()  # units the submission orders
        self.paths: dict[str, list[str]] = {}  # unit id -> its path this round (submitted or ours)
        self.pinned: set[str] = set()  # carriers that must not move (boarded or left this round)
        self.boarders: dict[str, int] = {}  # carrier id -> units boarding it this round
        self.boarding: dict[str, str] = {}  # unit id -> the waiting carrier it boards (ours)

    # -- tiles --------------------------------------------------------------------------------------
    def ix(self, t: Mapping[str, Any]) -> int:
        return int(t["y"]) * self.w + int(t["x"])

    def tix(self, t: Any) -> int | None:
        """The index of a tile from stored standing orders; ``None`` off the board."""
        try:
            x, y = int(t["x"]), int(t["y"])
        except (KeyError, TypeError, ValueError):
            return None
        return y * self.w + x if 0 <= x < self.w and 0 <= y < self.h else None

    def xy(self, i: int) -> tuple[int, int]:
        return (i % self.w, i // self.w)

    def dist(self, a: int, b: int) -> int:
        return abs(a % self.w - b % self.w) + abs(a // self.w - b // self.w)

    def walk(self, start: int, path: list[str]) -> int:
        """The tile index ``path`` leads to from ``start`` (steps N, E, S, W)."""
        steps = self._steps
        i = start
        for d in path:
            i += steps[d]
        return i

    def enemies_by_distance(self, start: int, reach: int) -> list[tuple[int, Mapping[str, Any]]]:
        """The enemies in sight within ``reach`` of ``start`` with their tiles, nearest first (then
        by id)."""
        got = sorted(self.enemy_at, key=lambda j: (self.dist(start, j), self.enemy_at[j]["id"]))
        return [(j, self.enemy_at[j]) for j in got if self.dist(start, j) <= reach]

    # -- what is decided ------------------------------------------------------------------------------
    def afford(self, cost: Mapping[str, int]) -> bool:
        return self.budget.afford(cost)

    def order_path(self, uid: str, path: list[str]) -> None:
        if path:
            self.entries[uid] = {"unit": uid, "path": path}
            self.paths[uid] = path

    def order_action(self, uid: str, action: str, target: str | None = None) -> None:
        e: dict[str, Any] = {"unit": uid, "action": action}
        if target is not None:
            e["target"] = target
        self.entries[uid] = e

    def move_along(self, uid: str, typ: str, path: list[str] | None) -> None:
        """Order the first ``move`` steps of ``path``; aircraft only to a safe landing (A34)."""
        if not path or uid in self.pinned:
            return
        ut = UNIT_TYPES[typ]
        path = path[: ut.move]
        if ut.domain == "air":
            i = self.at[uid]
            best = 0
            for k, d in enumerate(path):
                i = self.walk(i, [d])
                if (i in self.control and self.terr[i] == LAND_GLYPH and i not in self.own_at
                        and i not in self.enemy_at):
                    best = k + 1
            path = path[:best]
        self.order_path(uid, path)

    def moving(self, uid: str) -> bool:
        return bool(self.paths.get(uid))

    def end_tile(self, uid: str) -> int:
        """Where an own unit should stand after this round's orders (its path walked out)."""
        u = self.own[uid]
        c = u.get("carrier")
        if c is not None and c in self.own and not self.paths.get(uid):
            return self.end_tile(c)
        return self.walk(self.at[uid], self.paths.get(uid, []))

    def boards(self, uid: str, path: list[str]) -> tuple[int, str] | None:
        """A24: the first step of ``path`` by the own unit ``uid`` onto an own carrier other than its
        own, with the carrier (a land unit's step there boards it); ``None``: no such step, or not a
        land unit that boards."""
        u = self.own[uid]
        if UNIT_TYPES[u["type"]].domain != "land" or u["type"] == "flag":
            return None
        return self.map.first_carrier_on(self.xy(self.at[uid]), path, u.get("carrier"))

    # -- the submission -----------------------------------------------------------------------------
    def take_submitted(self, orders: Mapping[str, Any], plan_to: Any) -> None:
        """Units the submission orders keep their orders; note their paths, spending and carriers.
        ``plan_to(start, typ, dest)``: the path a destination order takes (the autopilot's pathing)."""
        for b in orders.get("builds") or ():  # paid from the same stock as our outposts and strikes (A20)
            ut = UNIT_TYPES.get(str(b.get("type"))) if isinstance(b, Mapping) else None
            if ut is not None:
                self.budget.spend(ut.cost)
        for ent in orders.get("units") or ():
            if not isinstance(ent, Mapping):
                continue
            uid = ent.get("unit")
            if not isinstance(uid, str) or uid not in self.own:
                continue
            self.fixed.add(uid)
            u = self.own[uid]
            typ = u["type"]
            path: list[str] | None = None
            if isinstance(ent.get("path"), list):
                path = [str(d) for d in ent["path"]][: UNIT_TYPES[typ].move]
            elif isinstance(ent.get("to"), Mapping):
                try:
                    dest = self.ix(ent["to"])
                except (KeyError, TypeError, ValueError):
                    dest = -1
                if 0 <= dest < self.w * self.h:
                    path = (plan_to(self.at[uid], typ, dest) or [])[: UNIT_TYPES[typ].move]
            elif isinstance(ent.get("action"), str):
                self.budget.spend(ACTION_COST.get(ent["action"], {}))
            if not path:
                continue
            self.paths[uid] = path
            c = u.get("carrier")
            if c is not None:
                self.pinned.add(str(c))  # cargo leaving: its carrier holds still (A24)
            hit = self.boards(uid, path)
            if hit is not None:
                self.pinned.add(hit[1])  # boarding: the carrier holds still (A24)

    def check_boarding(self) -> None:
        """A24/A91: a land unit's path stops before an own carrier, unless it is a boarding we
        ordered onto a waiting carrier (which holds still)."""
        for uid in sorted(self.entries):
            path = self.paths.get(uid)
            if not path:
                continue
            hit = self.boards(uid, path)
            if hit is None:
                continue
            k, c = hit
            if self.boarding.get(uid) == c and k == len(path) - 1 and not self.moving(c):
                continue
            if k:
                self.entries[uid] = {"unit": uid, "path": path[:k]}
                self.paths[uid] = path[:k]
            else:
                del self.entries[uid]
                self.paths.pop(uid, None)
