"""Seeded random Archipelago games with random LEGAL orders, and the checks the conformance suite,
the golden playthroughs and the bench share.

Orders and immediate operations are generated from each player's own view only (what a client or
an agent has), never from the full state: moves (paths and destinations), actions (outpost,
bombard, strike, reveal), builds (units, mines on a named tile, rafts for a named ship), the bonus
choice, deployment in round 0, and bank / offer / accept / chat operations during planning.

A played game is recorded as plain data (seed, players, max_rounds, and per round the immediate
operations in the order they ran plus each seat's orders), so it replays exactly (:func:`replay`).

The checks compare the state and every view against an *independent* statement of the rules
(A10, A24, A34, A41, A61–A64, A80–A85) written here, not against the engine's own helpers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.archipelago import GAME
from engine.archipelago.economy import accept_offer, bank, chat, offer
from engine.archipelago.state import State, Unit
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.view import view as make_view
from engine.base import Event, canonical_json, state_hash
from engine.errors import GameError

Tile = tuple[int, int]
DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
BUILDABLE = [k for k, t in UNIT_TYPES.items() if t.buildable]
WARSHIPS = {"saar6", "saar5", "saar45", "shaldag", "dvora"}
CARRIER_TYPES = {k for k, t in UNIT_TYPES.items() if t.capacity > 0}
MAX_CARGO = max(t.capacity for t in UNIT_TYPES.values())
OUTPOST_SIGHT, BASE_SIGHT = 1, 2


class ConformanceError(AssertionError):
    """A broken invariant, a leaking view or an illegal generated order (names game and round)."""


def _fail(ctx: str, msg: str) -> None:
    raise ConformanceError(f"{ctx}: {msg}")


def _tile(d: Mapping[str, Any]) -> Tile:
    return (int(d["x"]), int(d["y"]))


def _td(t: Tile) -> dict[str, int]:
    return {"x": t[0], "y": t[1]}


def _dist(a: Tile, b: Tile) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


# ================================================================================================
# Order generation (from the view only)
# ================================================================================================

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


# ================================================================================================
# Immediate operations (bank, offers, accept, chat) during planning
# ================================================================================================

def _apply_op(state: State, op: Mapping[str, Any]) -> State:
    p = int(op["player"])
    kind = op["op"]
    if kind == "bank":
        return bank(state, p, op["give"], op["get"], int(op.get("times", 1)))
    if kind == "offer":
        return offer(state, p, op.get("to"), op["give"], op["get"])
    if kind == "accept":
        return accept_offer(state, p, op["offer"])
    if kind == "chat":
        return chat(state, p, op["text"], op.get("to"))
    raise ValueError(f"unknown op {kind!r}")


def random_ops(state: State, rnd: random.Random, ctx: str, check: bool = True) -> tuple[State, list[dict[str, Any]]]:
    """A few random planning operations for every seat, generated from each seat's view.

    Legal ones must succeed; an accept may be refused ("offer no longer valid", A53) and a
    deliberately bad request must be refused — a refusal must leave the state unchanged."""
    ops: list[dict[str, Any]] = []
    for p in range(state.players):
        v = make_view(state, p)
        stock = v["stock"]
        ports = {pt["resource"] for pt in v["ports"] if _td(_tile(pt["tile"])) in v["control"]}
        r = rnd.random()
        cands: list[tuple[dict[str, Any], bool]] = []  # (op, must succeed)
        if r < 0.35:
            give = max(RESOURCES, key=lambda x: (stock[x], x)) if rnd.random() < 0.5 else rnd.choice(RESOURCES)
            rate = 2 if give in ports else 4
            if stock[give] >= rate:
                # fuel is rare on the map: ask for it half the time (fighters, spies, commandos)
                get = "fuel" if give != "fuel" and rnd.random() < 0.5 else rnd.choice(
                    [x for x in RESOURCES if x != give])
                cands.append(({"op": "bank", "player": p, "give": give, "get": get, "times": 1}, True))
        elif r < 0.48:
            held = [x for x in RESOURCES if stock[x] > 0]
            if held:
                give = rnd.choice(held)
                get = rnd.choice([x for x in RESOURCES if x != give])
                others = [q for q in range(state.players) if q != p]
                to = rnd.choice([*others, None])
                sent = sum(1 for o in v["offers"] if o["from_seat"] == p)
                op: dict[str, Any] = {"op": "offer", "player": p, "give": {give: 1}, "get": {get: 1}}
                if to is not None:
                    op["to"] = to
                cands.append((op, sent < 3 and state.pstates[p].offers_made < 3))
        elif r < 0.60:
            mine = [o for o in v["offers"] if o["from_seat"] != p]
            if mine:
                o = rnd.choice(mine)
                cands.append(({"op": "accept", "player": p, "offer": o["id"]}, False))
        elif r < 0.66:
            to = rnd.choice([None, *[q for q in range(state.players) if q != p]])
            op = {"op": "chat", "player": p, "text": f"hello {rnd.randrange(1000)}"}
            if to is not None:
                op["to"] = to
            cands.append((op, state.pstates[p].chats < 10))
        elif r < 0.71:  # deliberately refused: the bank wants more than anyone holds
            cands.append(({"op": "bank", "player": p, "give": "wood", "get": "iron", "times": 10_000}, False))
        for op, must in cands:
            before = state_hash(state) if check and not must else ""
            try:
                new = _apply_op(state, op)
            except GameError as e:
                if must:
                    _fail(ctx, f"legal operation {op} refused: {e}")
                if check and not must and state_hash(state) != before:
                    _fail(ctx, f"refused operation {op} changed the state")
                op = {**op, "refused": True}
            else:
                if op["op"] == "bank" and op["times"] == 10_000:
                    _fail(ctx, f"impossible bank trade accepted: {op}")
                state = new
            ops.append(op)
    return state, ops


# ================================================================================================
# Independent checks
# ================================================================================================

def oracle_sight(state: State, p: int) -> tuple[set[Tile], set[Tile]]:
    """A80 restated: tiles in sight; tiles from which a submarine is seen (next to a sighted unit,
    an outpost or the base)."""
    b = state.board
    src: list[tuple[Tile, int]] = []
    for u in state.units.values():
        if u.owner == p and u.carrier is None:
            src.append((u.tile, UNIT_TYPES[u.type].sight))
    src += [(t, OUTPOST_SIGHT) for t, o in state.outposts.items() if o == p]
    src.append((b.bases[p], BASE_SIGHT))
    vis = {(x, y) for (cx, cy), r in src for x in range(cx - r, cx + r + 1) for y in range(cy - r, cy + r + 1)
           if abs(x - cx) + abs(y - cy) <= r and 0 <= x < b.width and 0 <= y < b.height}
    watch = {(cx + dx, cy + dy) for (cx, cy), r in src if r > 0
             for dx, dy in ((0, 0), (0, -1), (1, 0), (0, 1), (-1, 0))}
    return vis, watch


def _enemy_seen(u: Unit, vis: set[Tile], watch: set[Tile]) -> bool:
    if u.carrier is not None or u.tile not in vis:
        return False
    return u.type != "submarine" or u.tile in watch


_SNAKE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _walk(obj: Any, ctx: str, strings: set[str]) -> None:
    """Collect every string value; fail on anything that is not plain JSON (dict with str keys,
    list, str, int, bool), on ``None`` values and on keys that are not snake_case."""
    stack = [obj]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is str:
            strings.add(x)
        elif tx is dict:
            for k, val in x.items():
                if val is None:
                    _fail(ctx, f"key {k!r} is None (unset keys must be omitted)")
                if type(k) is not str or not _SNAKE.issuperset(k):
                    _fail(ctx, f"key {k!r} is not snake_case")
                stack.append(val)
        elif tx is list:
            stack.extend(x)
        elif tx is not int and tx is not bool:
            _fail(ctx, f"{x!r} ({tx.__name__}) is not plain JSON")


def check_view(state: State, p: int, v: Mapping[str, Any], events: list[Event] | None, ctx: str) -> None:
    """The view holds what ``p`` may know (A80–A85) and nothing else."""
    ctx = f"{ctx} player {p}"
    b = state.board
    ps = state.pstates[p]
    vis, watch = oracle_sight(state, p)
    strings: set[str] = set()
    _walk({k: val for k, val in v.items() if k not in ("rows", "events")}, ctx, strings)
    _walk(v["events"], ctx, set())
    if {_tile(t) for t in v["visible"]} != vis:
        _fail(ctx, f"visible tiles differ from A80 sight: extra {sorted({_tile(t) for t in v['visible']} - vis)[:5]}"
                   f" missing {sorted(vis - {_tile(t) for t in v['visible']})[:5]}")
    # A81: explored terrain only
    for y, row in enumerate(v["rows"]):
        for x, c in enumerate(row):
            explored = bool(ps.explored >> (y * b.width + x) & 1)
            want = ("#" if (x, y) in b.land else ".") if explored else "?"
            if c != want:
                _fail(ctx, f"rows[{y}][{x}] is {c!r}, expected {want!r}")
    for key in ("resource_tiles", "ports"):
        for feat in v[key]:
            t = _tile(feat["tile"])
            if not ps.explored >> (t[1] * b.width + t[0]) & 1:
                _fail(ctx, f"{key} shows unexplored tile {t}")
    for isl in v["islands"]:
        for t in isl["tiles"]:
            if not ps.explored >> (t["y"] * b.width + t["x"]) & 1:
                _fail(ctx, f"island {isl['id']} shows unexplored tile {t}")
    # A82 own units in full (an own flag borne by an enemy only while the bearer is in sight)
    want_own: dict[str, dict[str, Any]] = {}
    for u in state.units.values():
        if u.owner != p:
            continue
        if u.type == "flag" and u.carrier is not None:
            bearer = state.units[u.carrier]
            if bearer.owner != p and not _enemy_seen(bearer, vis, watch):
                continue
        want_own[u.id] = u.to_dict()
    got_own = {u["id"]: u for u in v["units"]}
    if got_own != want_own:
        diff = sorted(set(got_own) ^ set(want_own)) or sorted(k for k in got_own if got_own[k] != want_own.get(k))
        _fail(ctx, f"own units differ from the state: {diff[:5]}")
    # A82 enemies in sight: owner + shown domain (+ type once revealed)
    want_en: dict[str, dict[str, Any]] = {}
    for u in state.units.values():
        if u.owner == p or not _enemy_seen(u, vis, watch):
            continue
        dom = "air" if UNIT_TYPES[u.type].domain == "air" else ("land" if u.tile in b.land else "sea")
        e: dict[str, Any] = {"id": u.id, "owner": u.owner, "domain": dom, "tile": _td(u.tile)}
        if u.id in ps.revealed:
            e["type"] = u.type
        want_en[u.id] = e
    got_en = {e["id"]: e for e in v["enemies"]}
    if got_en != want_en:
        bad = sorted(set(got_en) ^ set(want_en)) or sorted(k for k in got_en if got_en[k] != want_en[k])
        _fail(ctx, f"enemies differ from what A80/A82 allow: {bad[:5]} "
                   f"got {[got_en.get(k) for k in bad[:2]]} want {[want_en.get(k) for k in bad[:2]]}")
    # A83 enemy log: memory only
    want_log = []
    for uid in sorted(ps.log):
        if uid in want_en:
            continue
        t, rnd_seen, typ, owner = ps.log[uid]
        ent: dict[str, Any] = {"id": uid, "owner": owner, "tile": _td(t), "round": rnd_seen,
                               "rounds_ago": state.round - rnd_seen}
        if typ is not None:
            ent["type"] = typ
        want_log.append(ent)
    if v["enemy_log"] != want_log:
        _fail(ctx, "enemy_log differs from the player's memory")
    # outposts: own, or on tiles in sight; control: own
    for o in v["outposts"]:
        t = _tile(o["tile"])
        if state.outposts.get(t) != o["owner"] or (o["owner"] != p and t not in vis):
            _fail(ctx, f"outpost {o} may not be known")
    for t in v["control"]:
        if state.control.get(_tile(t)) != p:
            _fail(ctx, f"control shows {t} not controlled by the player")
    # A84: public figures only
    for s in v["seats"]:
        if set(s) != {"seat", "score", "resource_total"}:
            _fail(ctx, f"seat entry {s} carries more than A84 allows")
        q = state.pstates[s["seat"]]
        if s["score"] != q.score or s["resource_total"] != q.opening_total:
            _fail(ctx, f"seat {s['seat']} figures differ")
    if v["stock"] != ps.stock:
        _fail(ctx, "own stock differs")
    for o in v["offers"]:
        if o["from_seat"] != p and o.get("to_seat", p) != p:
            _fail(ctx, f"offer {o['id']} is not addressed to the player")
    # no enemy unit id anywhere outside what the player legitimately knows
    allowed = set(want_en) | set(ps.log)
    for u in state.units.values():
        if u.owner == p and u.flag is not None:
            allowed.add(u.flag)
        if u.owner == p and u.type == "flag" and u.carrier is not None and u.id in want_own:
            allowed.add(u.carrier)
    enemy_ids = {u.id for u in state.units.values() if u.owner != p}
    leaked = (strings & enemy_ids) - allowed
    if leaked:
        _fail(ctx, f"view names hidden enemy units {sorted(leaked)[:5]}")
    # A85: events name an enemy's type only once the player knows it
    for ev in v["events"]:
        for eu in ev.get("units") or ():
            uid = eu.get("id")
            if ("type" in eu and eu.get("owner") != p and uid in state.units
                    and uid not in ps.revealed and eu.get("type") != "flag"):
                _fail(ctx, f"event {ev['kind']} shows the type of unrevealed enemy {uid}")
    if events is not None:
        want_n = sum(1 for e in events if e.visible_to(p))
        if len(v["events"]) != want_n:
            _fail(ctx, f"{len(v['events'])} events in the view, {want_n} addressed to the player")


def check_event_ids(prev: State, state: State, p: int, events: list[dict[str, Any]], raw: list[Event],
                    ctx: str) -> None:
    """A85 (with A31): an event reaches a player that took part in it (one of its units, or the
    player itself, is named) or that saw its tile at the start or at the end of the round, unless
    it is public; a watcher's copy lists units without their types (checked by
    :func:`check_view`).  Any other field (``by``, ``carrier``, ``ship``, ...) names an enemy unit
    only if the player knew it: in sight at the start of the round, in its memory, or revealed."""
    enemy_ids = {u.id for st in (prev, state) for u in st.units.values() if u.owner != p}
    own_ids = {u.id for st in (prev, state) for u in st.units.values() if u.owner == p}
    known = set(prev.pstates[p].log) | set(state.pstates[p].log) | prev.pstates[p].revealed \
        | state.pstates[p].revealed
    vis0, watch0 = oracle_sight(prev, p)
    vis1, _ = oracle_sight(state, p)
    known |= {u.id for u in prev.units.values() if u.owner != p and _enemy_seen(u, vis0, watch0)}
    mine = [e for e in raw if e.visible_to(p)]
    if len(mine) != len(events):
        _fail(ctx, f"{len(events)} events in the view, {len(mine)} addressed to the player")
    for ev, e in zip(events, mine, strict=True):
        names: set[str] = set()
        _walk(ev, ctx, names)
        listed = [eu for eu in ev.get("units") or () if isinstance(eu, dict)]
        took_part = (any(eu.get("owner") == p for eu in listed) or bool(names & own_ids)
                     or p in (ev.get("owner"), ev.get("from"), ev.get("player")))
        tile = ev.get("tile")
        saw = tile is not None and (_tile(tile) in vis0 or _tile(tile) in vis1)
        if e.audience is not None and tile is not None and not took_part and not saw:
            _fail(ctx, f"event {ev['kind']} at {tile} reached a player that neither took part nor saw it")
        if not names & enemy_ids:
            continue
        # the units listed in an event the player took part in (or saw) are known to it
        known_here = known | {str(eu.get("id")) for eu in listed} if (took_part or saw) else known
        for key, val in ev.items():
            names = set()
            _walk(val, ctx, names)
            for uid in sorted((names & enemy_ids) - known_here):
                _fail(ctx, f"event {ev['kind']} names hidden enemy unit {uid} (field {key!r}): {ev}")


def check_state(prev: State | None, state: State, ctx: str) -> None:
    """Invariants after a round: A10, A24/A35 cargo, A34 landing, A41 stocks, A61–A64 flags, scores."""
    b = state.board
    units = state.units
    # serialisation round trip (exact, through JSON)
    d = state.to_dict()
    raw = canonical_json(d)
    back = GAME.state_from_dict(json.loads(raw))
    if back.to_dict() != d or state_hash(back) != state_hash(state):
        _fail(ctx, "to_dict/from_dict round trip is not exact")
    standing: dict[Tile, str] = {}
    flags_of = [0] * state.players
    for u in units.values():
        ut = UNIT_TYPES[u.type]
        if not 0 <= u.owner < state.players:
            _fail(ctx, f"unit {u.id} has owner {u.owner}")
        if not b.in_bounds(u.tile):
            _fail(ctx, f"unit {u.id} off the board at {u.tile}")
        if u.type == "flag":
            flags_of[u.owner] += 1
        if u.carrier is None:
            if u.tile in standing:  # A10
                _fail(ctx, f"two units on {u.tile}: {standing[u.tile]} and {u.id}")
            standing[u.tile] = u.id
            if ut.domain == "sea" and u.tile in b.land:
                _fail(ctx, f"ship {u.id} ({u.type}) on land {u.tile}")
            if ut.domain == "land" and u.type != "navcommando" and u.tile not in b.land:
                _fail(ctx, f"land unit {u.id} ({u.type}) at sea {u.tile}")
        else:
            c = units.get(u.carrier)
            if c is None:
                _fail(ctx, f"unit {u.id} carried by missing {u.carrier}")
                return
            if u.type == "flag":  # A61: borne by an enemy land unit
                if c.flag != u.id or c.owner == u.owner or UNIT_TYPES[c.type].domain != "land":
                    _fail(ctx, f"flag {u.id} borne by {c.id} inconsistently")
            elif u.id not in c.cargo:
                _fail(ctx, f"cargo {u.id} not listed by its carrier {c.id}")
            if u.tile != c.tile:
                _fail(ctx, f"carried {u.id} at {u.tile}, its carrier at {c.tile}")
        if u.cargo:
            cap = MAX_CARGO if u.type == "raft" else ut.capacity  # a raft keeps a sunk ship's cargo
            if len(u.cargo) > cap:
                _fail(ctx, f"{u.id} ({u.type}) carries {len(u.cargo)} > {cap}")
            for cid in u.cargo:
                if cid not in units or units[cid].carrier != u.id:
                    _fail(ctx, f"{u.id} lists cargo {cid} that is not aboard")
                elif UNIT_TYPES[units[cid].type].domain != "land":
                    _fail(ctx, f"{u.id} carries non-land unit {cid}")
        if u.flag is not None:
            f = units.get(u.flag)
            if f is None or f.carrier != u.id or f.type != "flag":
                _fail(ctx, f"{u.id} bears {u.flag} inconsistently")
        if u.type == "flag" and u.carrier is None and u.tile not in b.land:
            _fail(ctx, f"flag {u.id} lies at sea")
        if ut.domain == "air" and prev is not None and state.round > 1:
            # A34: after movement an aircraft stands on land its owner controlled at round start
            # (an aircraft built this round appears on its home island, A42)
            if u.tile not in b.land or (u.id in prev.units and prev.control.get(u.tile) != u.owner):
                _fail(ctx, f"aircraft {u.id} at {u.tile} not on land its owner controlled")
    if any(n > 1 for n in flags_of):
        _fail(ctx, f"a player has several flags: {flags_of}")
    for p, ps in enumerate(state.pstates):
        if any(ps.stock[r] < 0 for r in RESOURCES):
            _fail(ctx, f"player {p} stock below 0: {ps.stock}")
        if ps.score < 0:
            _fail(ctx, f"player {p} score {ps.score}")
    if prev is not None and state.round != prev.round + 1:
        _fail(ctx, f"round went {prev.round} -> {state.round}")
    if prev is not None and state.version != prev.version + 1:
        _fail(ctx, f"version went {prev.version} -> {state.version}")


# ================================================================================================
# Playing and replaying
# ================================================================================================

@dataclass
class Played:
    seed: int
    players: int
    max_rounds: int
    rounds: list[dict[str, Any]]  # {"ops": [...], "orders": {"0": {...}, ...}}
    hashes: list[str]             # state hash after each round
    final: State
    views: list[list[dict[str, Any]]] = field(default_factory=list)  # per round, per seat (optional)


def new_state(seed: int, players: int, max_rounds: int) -> State:
    state: State = GAME.new_game({"players": players, "max_rounds": max_rounds}, seed)
    return state


def _rnd(seed: int, rnd_no: int, salt: int) -> random.Random:
    return random.Random((seed * 1_000_003 + rnd_no) * 17 + salt)


def play(seed: int, players: int, *, max_rounds: int = 60, checks: bool = True, record_views: bool = False,
         bad_orders: bool = True) -> Played:
    """Play a seeded random game to its end (or ``max_rounds``), checking every round."""
    state = new_state(seed, players, max_rounds)
    rounds: list[dict[str, Any]] = []
    hashes: list[str] = []
    views: list[list[dict[str, Any]]] = []
    events: list[Event] | None = None
    if checks:
        check_state(None, state, f"game {seed}/{players}p start")
    while GAME.outcome(state) is None and state.round <= max_rounds:
        ctx = f"game seed={seed} players={players} round {state.round}"
        state, ops = random_ops(state, _rnd(seed, state.round, 1), ctx, checks) if state.round else (state, [])
        orders: dict[int, dict[str, Any]] = {}
        for p in GAME.expected_players(state):
            v = make_view(state, p)
            rnd = _rnd(seed, state.round, 100 + p)
            o = random_orders(v, rnd)
            try:
                GAME.validate(state, p, o)
            except GameError as e:
                _fail(ctx, f"player {p}: generated orders refused: {e}\n{json.dumps(o)}")
            if bad_orders and checks and rnd.random() < 0.08:
                _check_refused(state, p, _mutate(o, rnd), ctx)
            orders[p] = o
        prev = state
        state, events = GAME.resolve(state, orders)
        rounds.append({"ops": ops, "orders": {str(p): o for p, o in orders.items()}})
        hashes.append(state_hash(state))
        if checks:
            check_state(prev, state, f"{ctx} (after)")
        if checks or record_views:
            vs = [make_view(state, p, events) for p in range(state.players)]
            if checks:
                for p, v in enumerate(vs):
                    check_view(state, p, v, events, f"{ctx} (after)")
                    check_event_ids(prev, state, p, v["events"], events, f"{ctx} (after) player {p}")
            if record_views:
                views.append(vs)
            if checks and state_hash(state) != hashes[-1]:
                _fail(ctx, "computing the views changed the state")
    return Played(seed, players, max_rounds, rounds, hashes, state, views)


def _mutate(o: Mapping[str, Any], rnd: random.Random) -> dict[str, Any]:
    """An order set made invalid on purpose."""
    bad = json.loads(json.dumps(o))
    choice = rnd.randrange(4)
    if choice == 0:
        bad.setdefault("units", []).append({"unit": "no-such-unit", "path": ["N"]})
    elif choice == 1:
        bad["bonus"] = "gold"
    elif choice == 2:
        bad.setdefault("builds", []).append({"type": "flag"})
    else:
        bad["surprise"] = 1
    return bad  # type: ignore[no-any-return]


def _check_refused(state: State, p: int, o: Mapping[str, Any], ctx: str) -> None:
    before = state_hash(state)
    try:
        GAME.validate(state, p, o)
    except GameError:
        pass
    else:
        _fail(ctx, f"player {p}: invalid orders accepted: {json.dumps(o)}")
    if state_hash(state) != before:
        _fail(ctx, f"player {p}: refused orders changed the state")


def _replayed(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]
              ) -> Iterator[tuple[State, list[Event]]]:
    """Replay recorded operations and orders from the seed: the state and events of each round."""
    state = new_state(seed, players, max_rounds)
    for rd in rounds:
        for op in rd["ops"]:
            try:
                state = _apply_op(state, op)
            except GameError:
                if not op.get("refused"):
                    raise
        state, events = GAME.resolve(state, {int(p): o for p, o in rd["orders"].items()})
        yield state, events


def replay(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]) -> list[str]:
    """The state hash after each replayed round."""
    return [state_hash(state) for state, _ in _replayed(seed, players, max_rounds, rounds)]


def replay_views(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]
                 ) -> list[list[dict[str, Any]]]:
    """Every seat's view after each replayed round (for the golden files)."""
    return [[make_view(state, p, events) for p in range(players)]
            for state, events in _replayed(seed, players, max_rounds, rounds)]
