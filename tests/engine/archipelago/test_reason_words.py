"""A20: a refusal's reason speaks of the player's own units by type name and tile, of enemy units by what
the player sees, of tiles by coordinates — never by an internal id (unit ids, offer ids) unless it is
the player's own input echoed back ("no unit of yours is called '…'").

Seeded random games (random legal orders each round) are stopped every few rounds; each player's
random orders are then broken in many ways (foreign and unknown ids, unreachable and off-board
destinations, land units sent to sea, over-long paths, boarding a moving carrier, cargo stepping while
its carrier moves, actions without range, unaffordable and over-limit builds, rafts for no ship,
broken standing orders) and every refusal's reason is checked against the state's actual ids."""

from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from engine.archipelago.game import ArchipelagoGame
from engine.archipelago.state import State
from engine.archipelago.units import UNIT_TYPES
from engine.errors import GameError
from tests.engine.archipelago.boards import U, state

GAME = ArchipelagoGame()
HEX10 = re.compile(r"(?<![0-9a-f])[0-9a-f]{10}(?![0-9a-f])")


def _ids(state: State) -> set[str]:
    return set(state.units) | {str(o["id"]) for o in state.offers}


def check_reason(state: State, sent: Any, err: GameError) -> None:
    """No id of the state in the reason, except one the player itself sent, echoed quoted."""
    sent_text = json.dumps(sent)
    for uid in _ids(state):
        if uid in err.reason:
            assert f"'{uid}'" in err.reason and f'"{uid}"' in sent_text, (err.reason, uid)
            assert "is called" in err.reason, err.reason
    for m in HEX10.finditer(err.reason):  # nor an id-like word of any other kind (a dead unit's, a game's)
        quoted = err.reason[m.start() - 1:m.start()] == "'" and f'"{m.group()}"' in sent_text
        assert quoted, err.reason
    assert err.reason and err.reason.strip() == err.reason


def _rand_tile(state: State, rnd: random.Random) -> dict[str, int]:
    b = state.board
    return {"x": rnd.randint(-2, b.width + 1), "y": rnd.randint(-2, b.height + 1)}


def _sea_near(state: State, u: Any) -> dict[str, int] | None:
    b = state.board
    best = None
    for y in range(b.height):
        for x in range(b.width):
            if (x, y) not in b.land and state.pstates[u.owner].explored >> (y * b.width + x) & 1:
                d = abs(x - u.tile[0]) + abs(y - u.tile[1])
                if best is None or d < best[0]:
                    best = (d, {"x": x, "y": y})
    return best[1] if best else None


def broken_orders(state: State, player: int, view: Mapping[str, Any], rnd: random.Random) -> list[dict[str, Any]]:
    """Many ways of breaking the player's random legal orders (module docstring)."""
    base = GAME.random_orders(view, rnd.randrange(1 << 30))
    own = [u for u in state.units.values() if u.owner == player]
    others = [u for u in state.units.values() if u.owner != player]
    enemies = [e["id"] for e in view["enemies"]] + [e["id"] for e in view["enemy_log"]]
    out: list[dict[str, Any]] = []

    def entry(ent: dict[str, Any]) -> None:
        o = copy.deepcopy(base)
        o.setdefault("units", []).insert(rnd.randint(0, len(o.get("units", []))), ent)
        out.append(o)

    if state.round == 0:
        for u in own:
            out.append({"deploy": [{"unit": u.id, "tile": _rand_tile(state, rnd)}]})
        out.append({"deploy": [{"unit": rnd.choice(others).id, "tile": {"x": 1, "y": 1}}]})
        out.append({"units": [{"unit": own[0].id, "path": ["N"]}]})
        return out
    out.append({"deploy": [{"unit": own[0].id, "tile": {"x": 1, "y": 1}}]})
    for u in rnd.sample(own, min(len(own), 6)):
        ut = UNIT_TYPES[u.type]
        entry({"unit": u.id, "to": _rand_tile(state, rnd)})
        entry({"unit": u.id, "path": ["N", "E", "S", "W", "N", "E"][: ut.move + 1 + rnd.randint(0, 2)]})
        entry({"unit": u.id, "path": ["N"] * (u.tile[1] + 1)} if ut.move > u.tile[1] else
              {"unit": u.id, "path": ["W"] * max(1, min(ut.move, u.tile[0] + 1))})
        entry({"unit": u.id, "path": ["Q"]})
        entry({"unit": u.id, "path": "N"})
        entry({"unit": u.id, "path": ["N"], "to": {"x": 1, "y": 1}})
        entry({"unit": u.id, "path": ["N"], "target": u.id})
        entry({"unit": u.id, "action": "fly"})
        entry({"unit": u.id, "action": "outpost"})
        entry({"unit": u.id, "action": "outpost", "target": u.id})
        for action in ("bombard", "strike", "reveal"):
            entry({"unit": u.id, "action": action, "target": rnd.choice([*enemies, *[o.id for o in others], u.id]
                                                                      or [u.id])})
            entry({"unit": u.id, "action": action})
        if ut.domain == "land" and not ut.is_flag and u.carrier is None:
            sea = _sea_near(state, u)
            if sea is not None:
                entry({"unit": u.id, "to": sea})
        o = copy.deepcopy(base)
        o["units"] = [{"unit": u.id, "path": []}, {"unit": u.id, "path": []}]
        out.append(o)
    for u in rnd.sample(others, min(len(others), 4)):
        entry({"unit": u.id, "path": ["N"]})
        out.append({"builds": [{"type": "raft", "ship": u.id}]})
    entry({"unit": f"{rnd.getrandbits(120):030x}", "path": ["N"]})
    entry({"unit": 7, "path": ["N"]})
    # A24: boarding a carrier that moves; cargo stepping while its carrier moves
    carriers = [u for u in own if UNIT_TYPES[u.type].is_carrier and u.carrier is None]
    for c in carriers:
        for u in own:
            if UNIT_TYPES[u.type].domain == "land" and not UNIT_TYPES[u.type].is_flag and u.carrier is None:
                for d, (dx, dy) in {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}.items():
                    if (u.tile[0] + dx, u.tile[1] + dy) == c.tile:
                        out.append({"units": [{"unit": c.id, "path": ["N"]}, {"unit": u.id, "path": [d]}]})
        for cid in c.cargo:
            out.append({"units": [{"unit": c.id, "path": ["E"]}, {"unit": cid, "path": ["E"]}]})
    # builds: over the limit, unaffordable, mines anywhere, rafts for what is no ship of theirs
    for typ in ("rank13", "saar6", "fighter"):
        out.append({"builds": [{"type": typ}, {"type": typ}]})
    out.append({"builds": [{"type": "landmine", "tile": _rand_tile(state, rnd)}]})
    out.append({"builds": [{"type": "seamine", "tile": _rand_tile(state, rnd)}]})
    out.append({"builds": [{"type": "raft", "ship": own[0].id}, {"type": "raft", "ship": own[0].id}]})
    out.append({"builds": [{"type": "rank1", "tile": {"x": 1, "y": 1}}]})
    out.append({"builds": [{"type": "flag"}]})
    ships = [u for u in own if UNIT_TYPES[u.type].is_ship and u.type != "raft"]
    for s in ships:
        out.append({"builds": [{"type": "raft", "ship": s.id}, {"type": "raft", "ship": s.id}]})
    return out


def broken_standing(state: State, player: int, rnd: random.Random) -> list[dict[str, Any]]:
    own = [u for u in state.units.values() if u.owner == player]
    others = [u for u in state.units.values() if u.owner != player]
    out: list[dict[str, Any]] = []
    for u in rnd.sample(own, min(len(own), 4)):
        far = _rand_tile(state, rnd)
        out += [
            {"units": [{"unit": u.id, "order": "guard", "tile": far}]},
            {"units": [{"unit": u.id, "order": "patrol", "waypoints": [far, far]}]},
            {"units": [{"unit": u.id, "order": "patrol", "waypoints": [far]}]},
            {"units": [{"unit": u.id, "order": "hunt", "target": rnd.choice(others).id}]},
            {"units": [{"unit": u.id, "order": "escort", "target": rnd.choice(others).id}]},
            {"units": [{"unit": u.id, "order": "escort", "target": u.id}]},
            {"units": [{"unit": u.id, "order": "stay"}, {"unit": u.id, "order": "stay"}]},
            {"units": [{"unit": u.id, "order": "guard"}]},
        ]
    out.append({"units": [{"unit": rnd.choice(others).id, "order": "stay"}]})
    out.append({"build_queue": [{"type": "raft", "ship": rnd.choice(others).id}]})
    out.append({"build_queue": [{"type": "landmine", "tile": _rand_tile(state, rnd)}]})
    return out


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_a20_no_reason_names_an_internal_id(seed: int) -> None:
    rnd = random.Random(seed)
    players = 2 + seed % 3
    state = GAME.new_game({"players": players, "max_rounds": 30}, seed)
    seen: Counter[tuple[str, str | None]] = Counter()
    words: Counter[str] = Counter()
    refused = 0
    for rnd_no in range(14):
        if state.outcome is not None:
            break
        views = {p: GAME.view(state, p) for p in range(players)}
        if rnd_no in (0, 1, 4, 8, 13):
            for p in range(players):
                for orders in broken_orders(state, p, views[p], rnd):
                    try:
                        GAME.validate(state, p, orders)
                    except GameError as e:
                        refused += 1
                        check_reason(state, orders, e)
                        seen[(e.code, e.rule)] += 1
                        words.update(w for w in ("your ", "the enemy ", "cannot go to sea", "is called")
                                     if w in e.reason)
                for standing in broken_standing(state, p, rnd):
                    try:
                        GAME.check_standing(state, p, standing)
                    except GameError as e:
                        refused += 1
                        check_reason(state, standing, e)
                        seen[(e.code, e.rule)] += 1
        orders_by = {p: GAME.random_orders(views[p], rnd.randrange(1 << 30)) for p in range(players)}
        state, _ = GAME.resolve(state, orders_by)
    # the breakages reached the rules they aim at (the test would prove nothing otherwise)
    assert refused > 300, refused
    rules = {r for _, r in seen}
    assert {"A13", "A14", "A18", "A24", "A33", "A42", "A72", "A91"} <= rules, sorted(map(str, rules))
    assert words["your "] > 100 and words["is called"] > 10 and words["cannot go to sea"] > 0, words


def test_a18_the_words_name_own_units_and_enemies_as_the_player_sees_them() -> None:
    state = GAME.new_game({"players": 2}, 3)
    views = {p: GAME.view(state, p) for p in range(2)}
    state, _ = GAME.resolve(state, {p: GAME.random_orders(views[p], p) for p in range(2)})
    me = next(u for u in state.units.values() if u.owner == 0 and u.type == "rank3")
    with pytest.raises(GameError) as e:
        GAME.validate(state, 0, {"units": [{"unit": me.id, "path": ["N", "N"]}]})
    assert e.value.reason == (f"your Sergeant at ({me.tile[0]}, {me.tile[1]}) moves at most 1 tile a round; "
                              "the path has 2 steps")
    assert (e.value.code, e.value.rule, e.value.field) == ("order/illegal", "A18", "units[0].path[1]")
    with pytest.raises(GameError) as e:
        GAME.validate(state, 0, {"units": [{"unit": "e3fceb6aa2", "path": ["N"]}]})
    assert e.value.reason == "no unit of yours is called 'e3fceb6aa2'"
    assert (e.value.rule, e.value.field) == ("A18", "units[0].unit")


SHORE = ["0#....", "......", "...#..", "......", "....#1"]


def test_a37_a39_an_enemy_unit_is_named_by_what_the_player_sees_of_it() -> None:
    st = state(SHORE, [U("d0", 0, "dvora", 2, 1), U("s0", 0, "spy", 0, 0), U("p1", 1, "rank1", 3, 2),
                       U("d1", 1, "dvora", 4, 1)])

    def reason(orders: dict[str, Any]) -> str:
        with pytest.raises(GameError) as e:
            GAME.validate(st, 0, orders)
        check_reason(st, orders, e.value)
        return e.value.reason

    assert reason({"units": [{"unit": "d0", "action": "bombard", "target": "p1"}]}) == (
        "your Dvora at (2, 1): the enemy unit at (3, 2) is not on an adjacent land tile")
    assert reason({"units": [{"unit": "d0", "action": "bombard", "target": "d1"}]}) == (
        "your Dvora at (2, 1): the enemy ship at (4, 1) is not on an adjacent land tile")
    assert reason({"units": [{"unit": "s0", "action": "reveal", "target": "p1"}]}) == (
        "your Spy at (0, 0): the enemy unit at (3, 2) is beyond distance 2")
    st.pstates[0].revealed.add("p1")  # A39: once revealed, its type is named
    assert reason({"units": [{"unit": "s0", "action": "reveal", "target": "p1"}]}) == (
        "your Spy at (0, 0): the enemy Private at (3, 2) is beyond distance 2")


def test_a10_ranks_have_english_names_and_keep_their_hebrew_rank() -> None:
    names = {t.id: (t.name, t.rank) for t in UNIT_TYPES.values()}
    assert names["rank1"] == ("Private", "Turai") and names["rank3"] == ("Sergeant", "Samal")
    assert names["rank13"] == ("General", "Rav-Aluf") and names["rank9"] == ("Lieutenant colonel", "Sgan Aluf")
    assert all((rank is not None) == tid.startswith("rank") for tid, (_, rank) in names.items())
    assert len({name for name, _ in names.values()}) == len(names), "every name tells one type"
    assert names["dvora"] == ("Dvora", None) and names["navcommando"] == ("Naval commando", None)
