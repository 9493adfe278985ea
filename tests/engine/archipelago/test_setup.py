"""Game setup (A1, A5): player counts and creation options."""

from __future__ import annotations

import pytest

from engine import get_game
from engine.errors import InvalidOrder

GAME = get_game("archipelago")


@pytest.mark.parametrize("players", range(2, 9))
def test_a1_two_to_eight_players_can_play(players: int) -> None:
    cfg = GAME.normalize_config({"players": players})
    state = GAME.new_game(cfg, seed=1234 + players)
    assert sorted(GAME.expected_players(state)) == list(range(players))
    owners = [u["owner"] for u in state.to_dict()["units"]]
    assert all(owners.count(p) == 6 for p in range(players))  # A13's six starting units each
    assert all(GAME.view(state, p)["round"] == 0 for p in range(players))


@pytest.mark.parametrize("players", [0, 1, 9, True, "4"])
def test_a1_other_player_counts_are_refused(players: object) -> None:
    with pytest.raises(InvalidOrder) as err:
        GAME.normalize_config({"players": players})
    assert err.value.field == "players" and err.value.rule == "A1"


def test_a1_unknown_options_are_refused() -> None:
    with pytest.raises(InvalidOrder) as err:
        GAME.normalize_config({"players": 2, "speed": "warp"})
    assert err.value.field == "speed"


def test_a12_unit_id_secret_is_not_drawn_from_the_map_stream() -> None:
    from engine.rng import Rng

    seed = 987654321987654321
    state = GAME.new_game(GAME.normalize_config({"players": 2}), seed)
    rng = Rng(seed)
    first = [rng.next64() for _ in range(8)]
    secret = state.to_dict()["id_secret"]
    assert all(format(v, "016x") not in secret for v in first)
    assert state.to_dict()["rng"] not in [Rng(seed).state, *first]


@pytest.mark.parametrize("players", [2, 5, 8])
def test_a14_each_player_knows_its_home_island_and_the_sea_around_it(players: int) -> None:
    from engine.archipelago.fog import is_explored

    state = GAME.new_game(GAME.normalize_config({"players": players}), seed=77 + players)
    board = state.board
    for p in range(players):
        home = set(board.home_island(p).tiles)
        around = {n for t in home for n in board.neighbours(t)}
        assert all(is_explored(state, p, t) for t in home | around)
