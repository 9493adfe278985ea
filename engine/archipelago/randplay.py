"""Random LEGAL Archipelago orders computed from one player's view only (bots, load tests, the
agent's "legal moves" tool, and the seeded random games of the test suite).

:func:`random_orders` reads nothing but the view a client gets (:mod:`engine.archipelago.view`):
moves (paths and destinations over explored terrain), actions (outpost, bombard, strike, reveal),
builds it can afford (units, mines on a named tile, rafts for a named ship), the bonus choice, and
the deployment in round 0 (A13–A20, A24, A36–A42); the view is read as a map by
:class:`engine.archipelago.viewmap.ViewMap` (terrain, reach, targets, where builds may go).  Its
only randomness is the ``random.Random`` instance it is given, so a given (view, generator state)
always gives the same orders; ``GAME.random_orders(view, seed)`` seeds one.  The generator's
sequence of draws is part of the recorded golden playthroughs: changing it changes
``tests/engine/archipelago/golden``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from engine.archipelago.board import DIRS, Tile, dist, step, tile_dict
from engine.archipelago.rules import OUTPOST_COST, STRIKE_COST, Budget
from engine.archipelago.units import BUILDABLE, RESOURCES, UNIT_TYPES
from engine.archipelago.viewmap import ViewMap, tile_of

__all__ = ["random_orders"]


def random_orders(v: Mapping[str, Any], rnd: random.Random) -> dict[str, Any]:
    """Random orders that are legal for the player whose view ``v`` is (A13–A20, A24, A36–A42)."""
    vm = ViewMap(v)
    if v["round"] == 0:
        return _random_deploy(vm, rnd)
    budget = Budget(v["stock"])
    entries: dict[str, dict[str, Any]] = {}
    moving: set[str] = set()
    own = vm.own
    # carriers decide first (a land unit's destination order needs to know whether one moves);
    # pass 1: units that are not cargo; pass 2: cargo (only while its carrier holds still, A24)
    ids = sorted(own, key=lambda k: (not UNIT_TYPES[own[k]["type"]].is_carrier, k))
    for cargo_pass in (False, True):
        for uid in ids:
            u = own[uid]
            if ("carrier" in u) != cargo_pass:
                continue
            if cargo_pass and (u["carrier"] not in own or u["carrier"] in moving):
                continue  # own flag carried by an enemy, or a carrier on the move
            ent = _unit_order(vm, rnd, u, cargo_pass, moving, budget.afford)
            if ent is not None:
                entries[uid] = ent
                if "action" not in ent:
                    moving.add(uid)
    _cut_at_moving_carriers(vm, entries, moving)
    builds = _random_builds(vm, rnd, budget.afford)
    orders: dict[str, Any] = {"units": [entries[k] for k in sorted(entries, key=lambda _: rnd.random())]}
    if builds:
        orders["builds"] = builds
    if rnd.random() < 0.3:
        orders["bonus"] = rnd.choice(RESOURCES)
    return orders


def _unit_order(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], cargo_pass: bool, moving: set[str],
                afford: Callable[[Mapping[str, int]], bool]) -> dict[str, Any] | None:
    """One unit's random order (an action, a move with a purpose, a destination or random
    steps), or ``None``: no order."""
    uid, typ = u["id"], u["type"]
    ut = UNIT_TYPES[typ]
    tile = tile_of(u["tile"])
    r = rnd.random()
    if (r < 0.18 or (typ == "fighter" and r < 0.6)) and not cargo_pass:
        act = _random_action(vm, rnd, u, tile, afford)
        if act is not None:
            return act
    if ut.domain == "air" and rnd.random() < 0.7:
        return None  # aircraft mostly stay parked (A34: they must land on controlled land)
    if ut.move == 0 or r > 0.85:
        return None
    if r < 0.55:
        ent = _purposeful(vm, rnd, u, tile, moving)
        if ent is not None:
            return ent or None  # {}: holds on purpose
    if r < 0.65:
        dests = vm.reachable(typ, tile, ut.move + 3)
        if len(dests) > 1 and (ut.domain != "land" or typ == "flag" or not _any_moving_carrier(vm, moving)):
            dest = rnd.choice(dests)
            if dest != tile:
                return {"unit": uid, "to": tile_dict(dest)}
    n = rnd.randint(1, ut.move)
    path = _random_path(vm, rnd, tile, n, rnd.random() < 0.85, typ)
    return {"unit": uid, "path": path} if path else None


def _cut_at_moving_carriers(vm: ViewMap, entries: dict[str, dict[str, Any]], moving: set[str]) -> None:
    """A24: a land unit may not step onto an own carrier that has a move order: cut the path there."""
    for uid, ent in list(entries.items()):
        u = vm.own[uid]
        if "path" not in ent or UNIT_TYPES[u["type"]].domain != "land" or u["type"] == "flag":
            continue
        hit = vm.first_carrier_on(tile_of(u["tile"]), ent["path"], u.get("carrier"))
        if hit is not None and hit[1] in moving:
            if hit[0] == 0:
                del entries[uid]
            else:
                ent["path"] = ent["path"][:hit[0]]


def _random_path(vm: ViewMap, rnd: random.Random, start: Tile, n: int, sensible: bool, typ: str) -> list[str]:
    path: list[str] = []
    t = start
    for _ in range(n):
        opts = []
        for d in DIRS:
            nt = step(t, d)
            if not vm.in_bounds(nt):
                continue
            if sensible and vm.terrain(nt) != "?" and not vm.passable_at(typ, nt) and nt not in vm.carriers_at:
                continue
            opts.append((d, nt))
        if not opts:
            break
        d, t = rnd.choice(opts)
        path.append(d)
    return path


def _purposeful(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], tile: Tile, moving: set[str]
                ) -> dict[str, Any] | None:
    """A move with a purpose, so that random games meet: ships carry land units abroad, land units
    board idle ships next to them and land on foreign shores, units close in on known enemies.
    ``{}`` means "hold on purpose" (an empty ship waiting for passengers); None: no idea."""
    uid, typ = u["id"], u["type"]
    ut = UNIT_TYPES[typ]
    if "carrier" in u:  # cargo of an idle carrier: land on a foreign shore next to it
        shore = [d for d in DIRS if vm.terrain(step(tile, d)) == "#" and step(tile, d) not in vm.home]
        return {"unit": uid, "path": [rnd.choice(shore)]} if shore else None
    if ut.domain == "sea" and not ut.is_mine:
        return _purposeful_ship(vm, rnd, u, tile)
    if ut.domain == "land" and typ != "flag":
        for d in DIRS:  # board an idle own ship next to it
            n = step(tile, d)
            c = vm.carriers_at.get(n)
            if c is not None and c not in moving and vm.terrain(n) == "." and rnd.random() < 0.6:
                if vm.room(c) > 0:
                    return {"unit": uid, "path": [d]}
        near = [tile_of(e["tile"]) for e in vm.enemies if dist(tile_of(e["tile"]), tile) <= 2]
        if near:
            g = rnd.choice(near)
            steps = [d for d in DIRS if dist(step(tile, d), g) < dist(tile, g)]
            if steps:
                return {"unit": uid, "path": [rnd.choice(steps)]}
    return None


def _purposeful_ship(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], tile: Tile) -> dict[str, Any] | None:
    """:func:`_purposeful` for a ship: wait next to home for passengers, else sail toward a known
    enemy or far from the base."""
    typ = u["type"]
    if not u.get("cargo") and rnd.random() < 0.5 and any(step(tile, d) in vm.home for d in DIRS):
        return {}  # wait next to the home island for passengers
    targets = [tile_of(e["tile"]) for e in vm.enemies] + [tile_of(e["tile"]) for e in vm.v["enemy_log"]]
    dests = [t for t in vm.reachable(typ, tile, UNIT_TYPES[typ].move + 8) if t != tile]
    if not dests:
        return None
    if targets and rnd.random() < 0.4:
        g = rnd.choice(targets)
        goal = min(dests, key=lambda t: (dist(t, g), t))
    else:
        base = tile_of(vm.v["base"])
        far = sorted(dests, key=lambda t: (-dist(t, base), t))[:6]
        goal = rnd.choice(far)
    return {"unit": u["id"], "to": tile_dict(goal)}


def _any_moving_carrier(vm: ViewMap, moving: set[str]) -> bool:
    return any(c in moving for c in vm.carriers_at.values())


def _random_action(vm: ViewMap, rnd: random.Random, u: Mapping[str, Any], tile: Tile,
                   afford: Callable[[Mapping[str, int]], bool]) -> dict[str, Any] | None:
    typ = u["type"]
    ut = UNIT_TYPES[typ]
    uid = u["id"]
    if typ == "spy":
        tg = vm.targets("reveal", tile)
        if tg:
            return {"unit": uid, "action": "reveal", "target": rnd.choice(tg)["id"]}
    if ut.is_warship:
        tg = vm.targets("bombard", tile)
        if tg:
            return {"unit": uid, "action": "bombard", "target": rnd.choice(tg)["id"]}
    if typ == "fighter":
        tg = vm.targets("strike", tile)
        if tg and afford(STRIKE_COST):
            return {"unit": uid, "action": "strike", "target": rnd.choice(tg)["id"]}
    if vm.outpost_site(typ, tile) and afford(OUTPOST_COST):
        return {"unit": uid, "action": "outpost"}
    return None


def _random_builds(vm: ViewMap, rnd: random.Random, afford: Callable[[Mapping[str, int]], bool]
                   ) -> list[dict[str, Any]]:
    builds: list[dict[str, Any]] = []
    have = dict(vm.type_counts)
    used: set[Tile] = set(vm.occupied)
    rafted: set[str] = set()
    for _ in range(rnd.choice((0, 1, 1, 2, 3))):
        typ = rnd.choice(BUILDABLE)
        ut = UNIT_TYPES[typ]
        if ut.limit is not None and have.get(typ, 0) >= ut.limit:
            continue
        b: dict[str, Any] = {"type": typ}
        if ut.is_mine:
            spots = sorted(vm.mine_sites(typ) - used)
            if not spots:
                continue
            b["tile"] = tile_dict(rnd.choice(spots))
        elif typ == "raft":
            ships = [s for s in vm.raft_ships() if s not in rafted]
            if not ships:
                continue
            b["ship"] = rnd.choice(ships)
        if not afford(ut.cost):
            continue
        if "tile" in b:
            used.add(tile_of(b["tile"]))
        if "ship" in b:
            rafted.add(b["ship"])
        have[typ] = have.get(typ, 0) + 1
        builds.append(b)
    return builds


def _random_deploy(vm: ViewMap, rnd: random.Random) -> dict[str, Any]:
    """A14: land units on the home island, ships on sea next to it (swaps allowed)."""
    sea_next = sorted(vm.sea_next_to(vm.home))
    out = []
    for uid in sorted(vm.own):
        u = vm.own[uid]
        if rnd.random() < 0.5:
            continue
        dom = UNIT_TYPES[u["type"]].domain
        pool = sorted(vm.home) if dom == "land" else sea_next if dom == "sea" else []
        if pool:
            out.append({"unit": uid, "tile": tile_dict(rnd.choice(pool))})
    return {"deploy": out}


def random_game(seed: int, players: int, max_rounds: int = 60) -> Any:
    """A seeded random game played to its end (or ``max_rounds``): each round every seat's
    :func:`random_orders` from its own view, no immediate actions. For benchmarks and load (the
    conformance suite's self-play, with its checks and trades, is ``tests/engine/archipelago/randplay.py``)."""
    from engine.archipelago.game import GAME  # (game imports this module: at call time)

    state = GAME.new_game({"players": players, "max_rounds": max_rounds}, seed)
    while GAME.outcome(state) is None and state.round <= max_rounds:
        orders = {}
        for p in GAME.expected_players(state):
            rnd = random.Random((seed * 1_000_003 + state.round) * 17 + 100 + p)
            orders[p] = random_orders(GAME.view(state, p), rnd)
        state, _ = GAME.resolve(state, orders)
    return state
