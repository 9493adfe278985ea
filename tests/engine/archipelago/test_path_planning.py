"""A18/A28 path planning checked against a plain reference on random boards.

``plan_path`` is the hot loop of order parsing and works on integer tile indices and bit masks;
this reference restates A18 directly with the readable helpers (``passable``, ``is_explored``):
a breadth-first search from the destination over explored, passable terrain, then the first
shortest path in direction order N, E, S, W (A28)."""

from __future__ import annotations

import random

from engine.archipelago.board import DIRS, Tile, step
from engine.archipelago.fog import is_explored
from engine.archipelago.orders import _carrier_on, passable, plan_path
from engine.archipelago.state import State, Unit
from engine.archipelago.units import LAND, UNIT_TYPES
from tests.engine.archipelago.boards import U, state

MOVERS = ["rank1", "scout", "commando", "navcommando", "dvora", "saar5", "fighter", "transport", "flag"]


def reference(st: State, player: int, u: Unit, dest: Tile) -> list[str] | None:
    if dest == u.tile:
        return []
    b = st.board
    if not b.in_bounds(dest) or not is_explored(st, player, dest):
        return None

    def ok(t: Tile) -> bool:
        return b.in_bounds(t) and passable(st, u, t) and is_explored(st, player, t)

    if not ok(dest) and not (_carrier_on(st, player, dest) is not None and UNIT_TYPES[u.type].domain == LAND
                             and u.type != "flag"):
        return None
    dist = {dest: 0}
    queue = [dest]
    for t in queue:
        for d in DIRS:
            n = step(t, d)
            if n not in dist and (n == u.tile or ok(n)):
                dist[n] = dist[t] + 1
                queue.append(n)
    if u.tile not in dist:
        return None
    path, cur = [], u.tile
    while cur != dest:
        cur_d = dist[cur]
        d = next(d for d in DIRS if dist.get(step(cur, d)) == cur_d - 1)
        path.append(d)
        cur = step(cur, d)
    return path


def random_board(rng: random.Random) -> list[str]:
    w, h = rng.randint(5, 12), rng.randint(4, 9)
    rows = [[("#" if rng.random() < 0.45 else ".") for _ in range(w)] for _ in range(h)]
    rows[0][0] = "0"
    rows[h - 1][w - 1] = "1"
    return ["".join(r) for r in rows]


def test_a18_a28_planned_paths_match_the_reference() -> None:
    long_paths = unreachable = 0
    for seed in range(40):
        rng = random.Random(seed)
        rows = random_board(rng)
        h, w = len(rows), len(rows[0])
        tiles = [(x, y) for y in range(h) for x in range(w)]
        for _ in range(25):
            typ = rng.choice(MOVERS)
            domain = UNIT_TYPES[typ].domain
            start = rng.choice([t for t in tiles if (rows[t[1]][t[0]] != ".") == (domain == LAND)] or tiles)
            st = state(rows, [U("m", 0, typ, *start)], explored="all" if rng.random() < 0.5 else "sight")
            u = st.units["m"]
            for dest in rng.sample(tiles, 8):
                got = plan_path(st, 0, u, dest)
                assert got == reference(st, 0, u, dest), (rows, typ, start, dest)
                long_paths += got is not None and len(got) >= 4
                unreachable += got is None
    assert long_paths > 1000 and unreachable > 1000  # both kinds of answer were really compared
