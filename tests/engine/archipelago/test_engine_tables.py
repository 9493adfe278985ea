"""The tables and short cuts behind the engine's speed (issue 24), checked against the plain way.

Each test restates what a table holds or what a short cut computes without it, as
:mod:`tests.engine.archipelago.test_tile_bits` does for the tile bits: the per-type tables of
:mod:`engine.archipelago.orders`, the unit orders of a resolution read in short
(``_parse_units_lenient`` against :func:`engine.archipelago.orders._parse_unit_order` entry by
entry), and the planner's terrain and carrier tiles."""

from __future__ import annotations

import functools
import random
from typing import Any

from engine.archipelago.board import DIRS, Tile
from engine.archipelago.fog import visible_tiles, watch_tiles
from engine.archipelago.orders import (
    _MOVE,
    Parsed,
    PathPlanner,
    _carrier_on,
    _parse_unit_order,
    _parse_units_lenient,
    parse_orders,
    passable,
)
from engine.archipelago.rules import PLAN_TERRAIN
from engine.archipelago.state import State, Unit
from engine.archipelago.units import UNIT_TYPES
from engine.errors import GameError
from tests.engine.archipelago.boards import U, state
from tests.engine.archipelago.test_path_planning import random_board

TYPES = sorted(UNIT_TYPES)


def test_move_table_is_each_types_move() -> None:
    assert _MOVE == {k: t.move for k, t in UNIT_TYPES.items()}


def test_plan_terrain_is_where_passable_lets_the_unit_go() -> None:
    """``PLAN_TERRAIN`` names the tiles :func:`passable` allows a unit of that type (A23, A60)."""
    rng = random.Random(5)
    for _ in range(40):
        rows = random_board(rng)
        st = state(rows, [U("h0", 0, "rank1", 0, 0)])
        b = st.board
        planner = PathPlanner(st, 0)
        tiles = [(x, y) for y in range(b.height) for x in range(b.width)]
        for typ in TYPES:
            u = Unit("x", 0, typ, (0, 0))
            want = {t for t in tiles if passable(st, u, t)}
            assert set(b.tiles_of(planner._terrain(PLAN_TERRAIN[typ], 0))) == want, (typ, rows)


def test_planner_carrier_tiles_are_where_carrier_on_finds_one() -> None:
    rng = random.Random(6)
    for _ in range(60):
        rows = random_board(rng)
        h, w = len(rows), len(rows[0])
        units = [U(f"u{i}", rng.randrange(2), rng.choice(TYPES), rng.randrange(w), rng.randrange(h))
                 for i in range(rng.randint(0, 14))]
        if units and rng.random() < 0.5:  # some cargo (which is never a carrier standing anywhere)
            units.append(U("c0", units[0]["owner"], "transport", units[0]["tile"]["x"], units[0]["tile"]["y"],
                           cargo=[]))
        st = state(rows, units)
        for p in (0, 1):
            want = {(x, y) for y in range(h) for x in range(w) if _carrier_on(st, p, (x, y)) is not None}
            assert PathPlanner(st, p)._carrier_tiles() == want


def _random_entry(rng: random.Random, st: State, ids: list[str], tiles: list[Tile]) -> Any:
    """A unit order, well formed or not (wrong shapes, steps, tiles, ids; extra keys)."""
    uid: Any = rng.choice([*ids, "nobody", "", 7, None])
    r = rng.random()
    if r < 0.35:
        steps: list[Any] = [rng.choice(DIRS) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.1:
            steps.append(rng.choice(["X", 3, None, ["N"], "n"]))
        ent: Any = {"unit": uid, "path": steps}
    elif r < 0.75:
        x, y = rng.choice(tiles)
        to: Any = {"x": x, "y": y}
        if rng.random() < 0.1:
            to = rng.choice([{"x": x}, {"x": True, "y": y}, [x, y], {"x": float(x), "y": y}, "a1", None,
                             {"x": x, "y": y, "z": 0}])
        ent = {"unit": uid, "to": to}
    elif r < 0.9:
        ent = {"unit": uid, "action": rng.choice(["outpost", "bombard", "strike", "reveal", "dance"])}
        if rng.random() < 0.7:
            ent["target"] = rng.choice([*ids, "nobody", 3])
    else:
        ent = rng.choice([None, "N", [uid, "N"], {"unit": uid}, {"path": ["N"]}])
    if isinstance(ent, dict) and rng.random() < 0.08:
        ent[rng.choice(["target", "path", "to", "extra"])] = rng.choice([["E"], {"x": 1, "y": 1}, "x"])
    return ent


def _no_sight() -> tuple[set[Tile], set[Tile]]:
    return set(), set()  # (sight is asked for by strict orders only)


def _one_by_one(st: State, player: int, entries: list[Any]) -> Parsed:
    """The unit orders of a resolution the plain way: every entry through ``_parse_unit_order``
    (not strict), a refused one skipped, each destination planned by a fresh search."""
    out = Parsed()
    vis: list[tuple[set[Tile], set[Tile]]] = []

    def sight() -> tuple[set[Tile], set[Tile]]:
        if not vis:
            vis.append((visible_tiles(st, player), watch_tiles(st, player)))
        return vis[0]

    for i, ent in enumerate(entries):
        try:
            _parse_unit_order(st, player, ent, f"units[{i}]", out, False, sight, lambda: PathPlanner(st, player))
        except (GameError, KeyError, TypeError, ValueError):
            pass
    return out


def test_resolution_unit_orders_read_in_short_as_one_by_one() -> None:
    """``_parse_units_lenient`` (what a resolution reads) keeps exactly the moves and actions, in
    the same order, that each entry alone gives, on random boards with random, partly malformed
    orders."""
    kept = 0
    for seed in range(150):
        rng = random.Random(seed)
        rows = random_board(rng)
        h, w = len(rows), len(rows[0])
        tiles = [(x, y) for y in range(h) for x in range(w)]
        units = [U(f"u{i}", rng.randrange(2), rng.choice(TYPES), *rng.choice(tiles)) for i in range(10)]
        st = state(rows, units, explored="all" if rng.random() < 0.5 else "sight")
        ids = list(st.units)
        entries = [_random_entry(rng, st, ids, [*tiles, (-1, 0), (w, h)]) for _ in range(rng.randint(0, 25))]
        for p in (0, 1):
            want = _one_by_one(st, p, entries)
            got = Parsed()
            _parse_units_lenient(st, p, entries, got, _no_sight, functools.partial(PathPlanner, st, p))
            assert list(got.moves.items()) == list(want.moves.items()), (rows, entries)
            assert list(got.actions.items()) == list(want.actions.items())
            full = parse_orders(st, p, {"units": entries}, strict=False)
            assert list(full.moves.items()) == list(want.moves.items())
            kept += len(want.moves)
    assert kept > 250
