"""``engine.archipelago.randplay.random_game``: the project's own seeded self-play (benches and load use
it instead of the conformance suite's): the same seed gives the same game, and the game ends."""

from __future__ import annotations

from engine.archipelago.game import GAME
from engine.archipelago.randplay import random_game
from engine.base import state_hash


def test_a_random_game_is_deterministic_and_ends() -> None:
    first = random_game(11, 3, max_rounds=6)
    assert state_hash(first) == state_hash(random_game(11, 3, max_rounds=6))
    assert GAME.outcome(first) is not None and first.round <= 7
    assert state_hash(random_game(12, 3, max_rounds=6)) != state_hash(first)
