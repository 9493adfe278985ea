"""The tile bits behind sight and path planning (issue 24), checked against the plain definitions.

Sight (A80) and the A18 search work on ints whose bit ``y * width + x`` stands for tile (x, y)
(:mod:`engine.archipelago.board`); these tests restate what they compute with sets of tiles:
the diamonds of :meth:`Board.within` for sight, and one fresh search per unit for a
:class:`PathPlanner` that shares its searches between the units sent to one tile."""

from __future__ import annotations

import random

from engine.archipelago.board import Tile, diamond
from engine.archipelago.fog import BASE_SIGHT, OUTPOST_SIGHT, in_sight, sight, visible_bits, visible_tiles
from engine.archipelago.orders import PathPlanner, plan_path
from engine.archipelago.state import State, Unit
from engine.archipelago.units import UNIT_TYPES
from tests.engine.archipelago.boards import U, state
from tests.engine.archipelago.test_path_planning import MOVERS, random_board, reference

SIGHTED = ["rank1", "scout", "spy", "dvora", "saar5", "submarine", "fighter", "flag", "landmine"]


def sight_by_sets(st: State, player: int) -> set[Tile]:
    """A80 restated: the in-bounds tiles within sight of the player's units (not cargo), outposts
    (1) and base (2)."""
    b = st.board
    centres = [(u.tile, UNIT_TYPES[u.type].sight) for u in st.units.values()
               if u.owner == player and u.carrier is None]
    centres += [(t, OUTPOST_SIGHT) for t, p in st.outposts.items() if p == player]
    centres.append((b.bases[player], BASE_SIGHT))
    return {(t[0] + dx, t[1] + dy) for t, r in centres for dx, dy in diamond(r)
            if b.in_bounds((t[0] + dx, t[1] + dy))}


def random_state(rng: random.Random) -> State:
    rows = random_board(rng)
    h, w = len(rows), len(rows[0])
    units = []
    for i in range(rng.randint(0, 12)):
        x, y = rng.randrange(-1, w + 1), rng.randrange(-1, h + 1)  # now and then off the board
        units.append(U(f"u{i}", rng.randrange(2), rng.choice(SIGHTED), x, y))
    return state(rows, units, explored="sight")


def test_tiles_of_reads_back_tile_bits_in_row_order() -> None:
    rng = random.Random(1)
    for _ in range(300):
        st = random_state(rng)
        b = st.board
        tiles = {(rng.randrange(-2, b.width + 2), rng.randrange(-2, b.height + 2)) for _ in range(rng.randint(0, 40))}
        inside = sorted((t for t in tiles if b.in_bounds(t)), key=lambda t: (t[1], t[0]))
        bits = b.tile_bits(tiles)
        assert b.tiles_of(bits) == inside
        assert all(in_sight(st, bits, t) == (t in inside) for t in tiles)
    assert st.board.tiles_of(0) == []


def test_a80_sight_bits_are_the_union_of_the_diamonds() -> None:
    rng = random.Random(2)
    off_board = 0
    for _ in range(300):
        st = random_state(rng)
        off_board += any(not st.board.in_bounds(u.tile) for u in st.units.values())
        every = sight(st)
        for p in range(st.players):
            want = sight_by_sets(st, p)
            assert visible_tiles(st, p) == want
            assert every[p] == visible_bits(st, p) == st.board.tile_bits(want)
    assert off_board > 50  # units off the board (scenario data) were really seen from


def test_a18_a28_a_planner_shared_by_units_gives_each_its_own_path() -> None:
    """Several units sent to the same tiles through one PathPlanner (one search per tile and
    terrain, kept) get the paths a fresh search gives each, and ``steps`` their first steps."""
    compared = shared = 0
    for seed in range(60):
        rng = random.Random(seed)
        rows = random_board(rng)
        h, w = len(rows), len(rows[0])
        tiles = [(x, y) for y in range(h) for x in range(w)]
        units = [U(f"m{i}", 0, rng.choice(MOVERS), *rng.choice(tiles)) for i in range(8)]
        st = state(rows, units, explored="all" if rng.random() < 0.5 else "sight")
        planner = PathPlanner(st, 0)
        dests = rng.sample(tiles, 4)
        for _ in range(40):
            u: Unit = st.units[rng.choice(units)["id"]]
            dest = rng.choice(dests)
            steps = rng.choice([None, 1, 2, 3])
            want = reference(st, 0, u, dest)
            assert plan_path(st, 0, u, dest) == want
            got = planner.plan(u, dest, steps)
            assert got == (want if want is None or steps is None else want[:steps]), (rows, u.type, u.tile, dest)
            compared += want is not None and len(want) >= 3
        shared += len(planner._rings) < 40
    assert compared > 300 and shared == 60
