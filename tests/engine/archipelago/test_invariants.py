"""Seeded random rounds on small boards: resolution never crashes and keeps the state consistent
(A10 one unit per tile, A24 cargo bookkeeping, A34 aircraft alone on land, A61 flag bearers,
A41 stocks, exact serialisation round trip)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine.archipelago.resolve import resolve_state
from engine.archipelago.scenario import state_from_scenario
from engine.archipelago.state import State
from engine.archipelago.units import UNIT_TYPES

ROWS = [
    "0##......2",
    "###...##..",
    "......##..",
    "..........",
    "..###.....",
    "..#.#...##",
    "..###...#1",
]
LAND = [(x, y) for y, r in enumerate(ROWS) for x, c in enumerate(r) if c != "."]
SEA = [(x, y) for y, r in enumerate(ROWS) for x, c in enumerate(r) if c == "."]
LAND_TYPES = ["rank1", "rank3", "rank5", "rank13", "commando", "engineer", "scout", "spy",
              "navcommando", "landmine", "flag"]
SEA_TYPES = ["dvora", "saar45", "saar6", "submarine", "raft", "seamine"]
AIR_TYPES = ["fighter", "transport"]


def random_scenario(rnd: random.Random, players: int = 2) -> dict[str, Any]:
    units: list[dict[str, Any]] = []
    used: set[tuple[int, int]] = set()
    flags = [0] * players
    for i in range(rnd.randint(4, 18)):
        owner = rnd.randrange(players)
        kind = rnd.random()
        if kind < 0.55:
            typ, pool = rnd.choice(LAND_TYPES), LAND
        elif kind < 0.9:
            typ, pool = rnd.choice(SEA_TYPES), SEA
        else:
            typ, pool = rnd.choice(AIR_TYPES), LAND
        if typ == "flag":
            if flags[owner]:
                continue
            flags[owner] = 1
        t = rnd.choice(pool)
        if t in used:
            continue
        used.add(t)
        u: dict[str, Any] = {"id": f"u{i}", "owner": owner, "type": typ, "tile": list(t)}
        if UNIT_TYPES[typ].is_ship and typ != "raft" and rnd.random() < 0.3:
            u["raft"] = True
        units.append(u)
    carriers = [u for u in units if UNIT_TYPES[u["type"]].capacity > 0]
    for c in carriers:
        if rnd.random() < 0.6:
            ctyp = rnd.choice(["rank1", "rank5", "commando", "navcommando"])
            cid = f"c{c['id']}"
            units.append({"id": cid, "owner": c["owner"], "type": ctyp})
            c["cargo"] = [cid]
    return {"rows": ROWS, "units": units, "stocks": {str(p): {"wood": 3, "food": 3, "iron": 3, "fuel": 1}
                                                      for p in range(players)}}


def random_orders(rnd: random.Random, st: State) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {p: {"units": [], "builds": []} for p in range(st.players)}
    ids = sorted(st.units)
    for uid in ids:
        u = st.units[uid]
        ut = UNIT_TYPES[u.type]
        r = rnd.random()
        if r < 0.6 and ut.move:
            path = [rnd.choice("NESW") for _ in range(rnd.randint(1, ut.move))]
            out[u.owner]["units"].append({"unit": uid, "path": path})
        elif r < 0.7:
            action = rnd.choice(["outpost", "bombard", "strike", "reveal"])
            target = rnd.choice(ids)
            entry: dict[str, Any] = {"unit": uid, "action": action}
            if action != "outpost":
                entry["target"] = target
            out[u.owner]["units"].append(entry)
    for p in range(st.players):
        if rnd.random() < 0.5:
            out[p]["builds"].append({"type": rnd.choice(["rank1", "dvora", "raft"]),
                                     "ship": rnd.choice(ids) if ids else "x"})
    return out


def check(st: State) -> None:
    ground: dict[tuple[int, int], str] = {}
    air: dict[tuple[int, int], list[str]] = {}
    for u in st.units.values():
        ut = UNIT_TYPES[u.type]
        assert 0 <= u.tile[0] < st.board.width and 0 <= u.tile[1] < st.board.height
        if u.carrier is not None:
            c = st.units[u.carrier]
            assert c.tile == u.tile
            if u.type == "flag":
                assert c.flag == u.id and c.owner != u.owner
            else:
                assert u.id in c.cargo
            continue
        if ut.domain == "air":
            air.setdefault(u.tile, []).append(u.id)
            continue
        assert u.tile not in ground, f"two units on {u.tile}"
        ground[u.tile] = u.id
        if ut.domain == "sea":
            assert u.tile not in st.board.land
        elif u.type != "navcommando":
            assert u.tile in st.board.land
        for cid in u.cargo:
            assert st.units[cid].carrier == u.id
        if u.flag is not None:
            assert st.units[u.flag].carrier == u.id
    for t, lst in air.items():
        assert len(lst) == 1 and t not in ground and t in st.board.land
    for ps in st.pstates:
        assert all(v >= 0 for v in ps.stock.values())


@pytest.mark.parametrize("seed", range(12))
def test_a10_random_rounds_keep_the_state_consistent(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(40):
        st = state_from_scenario(random_scenario(rnd, players=3))
        for _ in range(3):
            st, raw, _, _ = resolve_state(st, random_orders(rnd, st))
            check(st)
            json.dumps([e["ev"] for e in raw])
            d = st.to_dict()
            assert State.from_dict(json.loads(json.dumps(d))).to_dict() == d
