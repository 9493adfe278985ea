"""Conformance suite: seeded random Archipelago games (2–8 players) with random legal orders.

Every game is played to its end or the round cap (60, A67).  After every round (see randplay):
exact serialisation round trip and equal state hash; invariants (A10 one unit per tile, A24 cargo
within capacity, A34 aircraft on controlled land, A41 stocks ≥ 0, A61–A64 flags, scores ≥ 0);
every generated order validates, refused ones change nothing; every view holds exactly what the
player may know (A80–A85).  At the end the recorded operations and orders replay from the seed to
the same state hash after every round.

``ARCHIPELAGO_CONFORMANCE_GAMES`` sets the number of games (default 100, ~3 minutes on the 2-core
machine — 200 took ~6 of the suite's 15; 2000 for a long run);
``ARCHIPELAGO_CONFORMANCE_SEED`` shifts the seeds (default 0).
"""

from __future__ import annotations

import copy
import os

import pytest

from engine.archipelago.scenario import state_from_scenario
from engine.archipelago.state import State
from engine.archipelago.view import view
from engine.base import state_hash

from .randplay import ConformanceError, check_state, check_view, new_state, play, random_orders, replay

GAMES = int(os.environ.get("ARCHIPELAGO_CONFORMANCE_GAMES", "100"))
SEED0 = int(os.environ.get("ARCHIPELAGO_CONFORMANCE_SEED", "0"))
CAP = 60


def _cases() -> list[tuple[int, int]]:
    return [(SEED0 + i, 2 + i % 7) for i in range(GAMES)]


@pytest.mark.parametrize(("seed", "players"), _cases(), ids=lambda v: str(v))
def test_a67_random_game_conforms(seed: int, players: int) -> None:
    g = play(seed, players, max_rounds=CAP)
    # A67: the game ended, by the target or at the round cap
    assert g.final.outcome is not None, f"game {seed}/{players}p did not end"
    assert g.final.round <= CAP + 1
    # replaying the journal from the seed gives the same state after every round
    got = replay(seed, players, CAP, g.rounds)
    for r, (a, b) in enumerate(zip(got, g.hashes, strict=True)):
        assert a == b, f"game {seed}/{players}p: replay differs after round {r}"


# -- the checks themselves must be able to fail ---------------------------------------------------

ROWS = [
    "0#..........",
    "##..........",
    "............",
    "....#####...",
    "............",
    "..........##",
    "..........#1",
]


def _scenario_state() -> State:
    return state_from_scenario({"rows": ROWS, "units": [
        {"id": "s", "owner": 0, "type": "scout", "tile": [6, 3]},
        {"id": "g", "owner": 1, "type": "rank13", "tile": [5, 3]},
        {"id": "h", "owner": 1, "type": "saar5", "tile": [10, 4], "cargo": ["c"]},
        {"id": "c", "owner": 1, "type": "rank2"},
    ]})


def test_a82_checker_catches_a_leaked_type() -> None:
    st = _scenario_state()
    v = view(st, 0)
    check_view(st, 0, v, None, "ok")
    bad = copy.deepcopy(v)
    next(e for e in bad["enemies"] if e["id"] == "g")["type"] = "rank13"
    with pytest.raises(ConformanceError, match="enemies differ"):
        check_view(st, 0, bad, None, "leak")


def test_a80_checker_catches_a_hidden_enemy_and_hidden_cargo() -> None:
    st = _scenario_state()
    v = view(st, 0)
    bad = copy.deepcopy(v)
    bad["enemies"].append({"id": "h", "owner": 1, "domain": "sea", "tile": {"x": 10, "y": 4}})
    with pytest.raises(ConformanceError):
        check_view(st, 0, bad, None, "leak")
    bad = copy.deepcopy(v)
    bad["enemy_log"].append({"id": "c", "owner": 1, "tile": {"x": 10, "y": 4}, "round": 1, "rounds_ago": 0})
    with pytest.raises(ConformanceError):
        check_view(st, 0, bad, None, "leak")
    bad = copy.deepcopy(v)
    bad["seats"][1]["stock"] = {"wood": 1}
    with pytest.raises(ConformanceError, match="A84"):
        check_view(st, 0, bad, None, "leak")


def test_a10_checker_catches_two_units_on_a_tile_and_negative_stock() -> None:
    st = _scenario_state()
    check_state(None, st, "ok")
    two = st.clone()
    two.units["g"].tile = (6, 3)
    with pytest.raises(ConformanceError, match="two units"):
        check_state(None, two, "bad")
    neg = st.clone()
    neg.pstates[1].stock["iron"] = -1
    with pytest.raises(ConformanceError, match="stock below 0"):
        check_state(None, neg, "bad")


def test_a20_generated_orders_validate_on_a_fresh_game() -> None:
    import random

    from engine.archipelago import GAME

    st = new_state(11, 4, CAP)
    st, _ = GAME.resolve(st, {})
    h = state_hash(st)
    for p in range(4):
        for k in range(20):
            o = random_orders(view(st, p), random.Random(k))
            GAME.validate(st, p, o)
    assert state_hash(st) == h
