"""Random LEGAL Archipelago orders computed from one player's view only (bots, load tests, the
agent's "legal moves" tool, and the seeded random games of the test suite).

:func:`random_orders` reads nothing but the view a client gets (:mod:`engine.archipelago.view`):
moves (paths and destinations over explored terrain), actions (outpost, bombard, strike, reveal),
builds it can afford (units, mines on a named tile, rafts for a named ship), the bonus choice, and
the deployment in round 0 (A13–A20, A24, A36–A42).  Its only randomness is the ``random.Random``
instance it is given, so a given (view, generator state) always gives the same orders;
``GAME.random_orders(view, seed)`` seeds one.  The generator's sequence of draws is part of the
recorded golden playthroughs: changing it changes ``tests/engine/archipelago/golden``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.archipelago.units import RESOURCES, UNIT_TYPES

Tile = tuple[int, int]
DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
BUILDABLE = [k for k, t in UNIT_TYPES.items() if t.buildable]
WARSHIPS = {"saar6", "saar5", "saar45", "shaldag", "dvora"}
CARRIER_TYPES = {k for k, t in UNIT_TYPES.items() if t.capacity > 0}

__all__ = ["BUILDABLE", "CARRIER_TYPES", "DIRS", "WARSHIPS", "ViewMap", "random_orders"]


def _tile(d: Mapping[str, Any]) -> Tile:
    return (int(d["x"]), int(d["y"]))


def _td(t: Tile) -> dict[str, int]:
    return {"x": t[0], "y": t[1]}


def _dist(a: Tile, b: Tile) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


@dataclass
class ViewMap:
    """What the generator reads from a view."""

    v: Mapping[str, Any]
    w: int = 0
    h: int = 0
    me: int = 0
    own: dict[str, dict[str, Any]] = field(default_factory=dict)
    enemies: list[dict[str, Any]] = field(default_factory=list)
    home: set[Tile] = field(default_factory=set)
    control: set[Tile] = field(default_factory=set)
    occupied: set[Tile] = field(default_factory=set)  # tiles with a unit the player sees standing
    carriers_at: dict[Tile, str] = field(default_factory=dict)
    outposts: set[Tile] = field(default_factory=set)

    def __post_init__(self) -> None:
        v = self.v
        self.w, self.h, self.me = v["width"], v["height"], v["player"]
        self.own = {u["id"]: u for u in v["units"]}
        self.enemies = list(v["enemies"])
        for isl in v["islands"]:
            if isl["kind"] == "home" and isl.get("owner") == self.me:
                self.home |= {_tile(t) for t in isl["tiles"]}
        self.control = {_tile(t) for t in v["control"]}
        for u in v["units"]:
            if "carrier" not in u:
                self.occupied.add(_tile(u["tile"]))
                if u["type"] in CARRIER_TYPES:
                    self.carriers_at[_tile(u["tile"])] = u["id"]
        for e in self.enemies:
            self.occupied.add(_tile(e["tile"]))
        self.outposts = {_tile(o["tile"]) for o in v["outposts"]}

    def terrain(self, t: Tile) -> str:
        """"?" unexplored, "." sea, "#" land, "" off the board."""
        if not (0 <= t[0] < self.w and 0 <= t[1] < self.h):
            return ""
        return str(self.v["rows"][t[1]][t[0]])

    def in_bounds(self, t: Tile) -> bool:
        return 0 <= t[0] < self.w and 0 <= t[1] < self.h


def _passable(vm: ViewMap, typ: str, t: Tile) -> bool:
    """Explored terrain a unit may plan a path over (A18, A23, A60)."""
    c = vm.terrain(t)
    if c in ("", "?"):
        return False
    dom = UNIT_TYPES[typ].domain
    if typ == "flag":
        return t in vm.home
    if typ == "navcommando" or dom == "air":
        return True
    return (c == "#") == (dom == "land")


def _reachable(vm: ViewMap, typ: str, start: Tile, limit: int) -> list[Tile]:
    """Explored tiles reachable over passable explored terrain (BFS, at most ``limit`` steps)."""
    seen = {start: 0}
    frontier = [start]
    while frontier:
        nxt = []
        for t in frontier:
            if seen[t] >= limit:
                continue
            for dx, dy in DIRS.values():
                n = (t[0] + dx, t[1] + dy)
                if n not in seen and _passable(vm, typ, n):
                    seen[n] = seen[t] + 1
                    nxt.append(n)
        frontier = nxt
    return sorted(seen)


def _random_path(vm: ViewMap, rnd: random.Random, start: Tile, n: int, sensible: bool, typ: str) -> list[str]:
    path: list[str] = []
    t = start
    for _ in range(n):
        opts = []
        for d, (dx, dy) in DIRS.items():
            nt = (t[0] + dx, t[1] + dy)
            if not vm.in_bounds(nt):
                continue
            if sensible and vm.terrain(nt) != "?" and not _passable(vm, typ, nt) and nt not in vm.carriers_at:
                continue
            opts.append((d, nt))
        if not opts:
            break
        d, t = rnd.choice(opts)
        path.append(d)
    return path


def random_orders(v: Mapping[str, Any], rnd: random.Random) -> dict[str, Any]:
    """Random orders that are legal for the player whose view ``v`` is (A13–A20, A24, A36–A42)."""
    vm = ViewMap(v)
    if v["round"] == 0:
        return _random_deploy(vm, rnd)
    stock = dict(v["stock"])
    spend = {r: 0 for r in RESOURCES}

    def afford(cost: Mapping[str, int]) -> bool:
        if all(spend[r] + cost.get(r, 0) <= stock[r] for r in RESOURCES):
            for r in RESOURCES:
                spend[r] += cost.get(r, 0)
            return True
        return False

    entries: dict[str, dict[str, Any]] = {}
    moving: set[str] = set()
    own = vm.own
    # carriers decide first (a land unit's destination order needs to know whether one moves);
    # pass 1: units that are not cargo; pass 2: cargo (only while its carrier holds still, A24)
    ids = sorted(own, key=lambda k: (own[k]["type"] not in CARRIER_TYPES, k))
    for cargo_pass in (False, True):
        for uid in ids:
            u = own[uid]
            if ("carrier" in u) != cargo_pass:
                continue
            typ = u["type"]
            ut = UNIT_TYPES[typ]
            if cargo_pass and (u["carrier"] not in own or u["carrier"] in moving):
                continue  # own flag carried by an enemy, or a carrier on the move
            tile = _tile(u["tile"])
            r = rnd.random()
            if (r < 0.18 or (typ == "fighter" and r < 0.6)) and not cargo_pass:
                act = _random_action(vm, rnd, u, tile, afford)
                if act is not None:
                    entries[uid] = act
                    continue
            if ut.domain == "air" and rnd.random() < 0.7:
                continue  # aircraft mostly stay parked (A34: they must land on controlled land)
            if ut.move == 0 or r > 0.85:
                continue
            if r < 0.55:
                ent = _purposeful(vm, rnd, u, tile, moving)
                if ent is not None:
                    if ent:
                        entries[uid] = ent
                        moving.add(uid)
                    continue
            if r < 0.65:
                dests = _reachable(vm, typ, tile, ut.move + 3)
                if len(dests) > 1 and (ut.domain != "land" or typ == "flag" or not _any_moving_carrier(vm, moving)):
                    dest = rnd.choice(dests)
                    if dest != tile:
                        entries[uid] = {"unit": uid, "to": _td(dest)}
                        moving.add(uid)
                        continue
            n = rnd.randint(1, ut.move)
            path = _random_path(vm, rnd, tile, n, rnd.random() < 0.85, typ)
            if path:
                entries[uid] = {"unit": uid, "path": path}
                moving.add(uid)
    # A24: a land unit may not step onto an own carrier that has a move order: cut the path there
    for uid, ent in list(entries.items()):
        u = own[uid]
        if "path" not in ent or UNIT_TYPES[u["type"]].domain != "land" or u["type"] == "flag":
            continue
        t = _tile(u["tile"])
        for k, d in enumerate(ent["path"]):
            dx, dy = DIRS[d]
            t = (t[0] + dx, t[1] + dy)
            c = vm.carriers_at.get(t)
            if c is not None and c != u.get("carrier"):
                if c in moving:
                    if k == 0:
                        del entries[uid]
                    else:
                        ent["path"] = ent["path"][:k]
                break
    builds = _random_builds(vm, rnd, afford)
    orders: dict[str, Any] = {"units": [entries[k] for k in sorted(entries, key=lambda _: rnd.random())]}
    if builds:
        orders["builds"] = builds
    if rnd.random() < 0.3:
        orders["bonus"] = rnd.choice(RESOURCES)
    return orders


def _purposeful(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], tile: Tile, moving: set[str]
                ) -> dict[str, Any] | None:
    """A move with a purpose, so that random games meet: ships carry land units abroad, land units
    board idle ships next to them and land on foreign shores, units close in on known enemies.
    ``{}`` means "hold on purpose" (an empty ship waiting for passengers); None: no idea."""
    uid, typ = u["id"], u["type"]
    ut = UNIT_TYPES[typ]
    base = _tile(vm.v["base"])
    if "carrier" in u:  # cargo of an idle carrier: land on a foreign shore next to it
        shore = [d for d, (dx, dy) in DIRS.items()
                 if vm.terrain((tile[0] + dx, tile[1] + dy)) == "#" and (tile[0] + dx, tile[1] + dy) not in vm.home]
        return {"unit": uid, "path": [rnd.choice(shore)]} if shore else None
    if ut.domain == "sea" and not ut.is_mine:
        if not u.get("cargo") and rnd.random() < 0.5 and any(
                (tile[0] + dx, tile[1] + dy) in vm.home for dx, dy in DIRS.values()):
            return {}  # wait next to the home island for passengers
        targets = [_tile(e["tile"]) for e in vm.enemies] + [_tile(e["tile"]) for e in vm.v["enemy_log"]]
        dests = [t for t in _reachable(vm, typ, tile, ut.move + 8) if t != tile]
        if not dests:
            return None
        if targets and rnd.random() < 0.4:
            g = rnd.choice(targets)
            goal = min(dests, key=lambda t: (_dist(t, g), t))
        else:
            far = sorted(dests, key=lambda t: (-_dist(t, base), t))[:6]
            goal = rnd.choice(far)
        return {"unit": uid, "to": _td(goal)}
    if ut.domain == "land" and typ != "flag":
        for d, (dx, dy) in DIRS.items():  # board an idle own ship next to it
            n = (tile[0] + dx, tile[1] + dy)
            c = vm.carriers_at.get(n)
            if c is not None and c not in moving and vm.terrain(n) == "." and rnd.random() < 0.6:
                cu = vm.own[c]
                if len(cu.get("cargo", ())) < UNIT_TYPES[cu["type"]].capacity:
                    return {"unit": uid, "path": [d]}
        near = [_tile(e["tile"]) for e in vm.enemies if _dist(_tile(e["tile"]), tile) <= 2]
        if near:
            g = rnd.choice(near)
            steps = [d for d, (dx, dy) in DIRS.items()
                     if _dist((tile[0] + dx, tile[1] + dy), g) < _dist(tile, g)]
            if steps:
                return {"unit": uid, "path": [rnd.choice(steps)]}
    return None


def _any_moving_carrier(vm: ViewMap, moving: set[str]) -> bool:
    return any(c in moving for c in vm.carriers_at.values())


def _random_action(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], tile: Tile,
                   afford: Callable[[Mapping[str, int]], bool]) -> dict[str, Any] | None:
    typ = u["type"]
    ut = UNIT_TYPES[typ]
    uid = u["id"]
    if typ == "spy":
        tg = [e for e in vm.enemies if _dist(_tile(e["tile"]), tile) <= 2]
        if tg:
            return {"unit": uid, "action": "reveal", "target": rnd.choice(tg)["id"]}
    if typ in WARSHIPS:
        tg = [e for e in vm.enemies if _dist(_tile(e["tile"]), tile) == 1 and e["domain"] == "land"]
        if tg:
            return {"unit": uid, "action": "bombard", "target": rnd.choice(tg)["id"]}
    if typ == "fighter":
        tg = [e for e in vm.enemies if _dist(_tile(e["tile"]), tile) <= 5]
        if tg and afford({"fuel": 1}):
            return {"unit": uid, "action": "strike", "target": rnd.choice(tg)["id"]}
    if (ut.domain == "land" and not ut.is_mine and typ != "flag" and vm.terrain(tile) == "#"
            and tile not in vm.home and tile not in vm.outposts and afford({"food": 1, "wood": 1})):
        return {"unit": uid, "action": "outpost"}
    return None


def _random_builds(vm: ViewMap, rnd: random.Random, afford: Callable[[Mapping[str, int]], bool]
                   ) -> list[dict[str, Any]]:
    builds: list[dict[str, Any]] = []
    have = {t: 0 for t in UNIT_TYPES}
    for u in vm.own.values():
        have[u["type"]] += 1
    used: set[Tile] = set(vm.occupied)
    rafted: set[str] = set()
    for _ in range(rnd.choice((0, 1, 1, 2, 3))):
        typ = rnd.choice(BUILDABLE)
        ut = UNIT_TYPES[typ]
        if ut.limit is not None and have[typ] >= ut.limit:
            continue
        b: dict[str, Any] = {"type": typ}
        if typ == "landmine":
            spots = sorted(t for t in vm.control if vm.terrain(t) == "#" and t not in used)
            if not spots:
                continue
            t = rnd.choice(spots)
            b["tile"] = _td(t)
        elif typ == "seamine":
            spots = sorted({n for c in vm.control for dx, dy in DIRS.values()
                            for n in [(c[0] + dx, c[1] + dy)] if vm.terrain(n) == "." and n not in used})
            if not spots:
                continue
            t = rnd.choice(spots)
            b["tile"] = _td(t)
        elif typ == "raft":
            ships = sorted(u["id"] for u in vm.own.values()
                           if UNIT_TYPES[u["type"]].is_ship and u["type"] != "raft" and not u.get("raft")
                           and u["id"] not in rafted)
            if not ships:
                continue
            b["ship"] = rnd.choice(ships)
        if not afford(ut.cost):
            continue
        if "tile" in b:
            used.add(_tile(b["tile"]))
        if "ship" in b:
            rafted.add(b["ship"])
        have[typ] += 1
        builds.append(b)
    return builds


def _random_deploy(vm: ViewMap, rnd: random.Random) -> dict[str, Any]:
    """A14: land units on the home island, ships on sea next to it (swaps allowed)."""
    sea_next = sorted({n for t in vm.home for dx, dy in DIRS.values()
                       for n in [(t[0] + dx, t[1] + dy)] if vm.terrain(n) == "."})
    out = []
    for uid in sorted(vm.own):
        u = vm.own[uid]
        if rnd.random() < 0.5:
            continue
        dom = UNIT_TYPES[u["type"]].domain
        pool = sorted(vm.home) if dom == "land" else sea_next if dom == "sea" else []
        if pool:
            out.append({"unit": uid, "tile": _td(rnd.choice(pool))})
    return {"deploy": out}
