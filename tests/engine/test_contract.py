"""The engine contract (``engine.base.Game``, ``shared/design.md`` "Engine contract") checked the same
way for EVERY registered game (``engine.GAMES``): seeded games played to their end with each seat's
``random_orders(view, seed)``, which must validate; exact serialisation round trips; JSON views that
the round-tripped state reproduces; replays identical byte for byte; ``act`` with chat (audience,
the A53 limit of 10 messages per round), unknown actions refused without change; ``GameOver`` once
the game has ended; every game ends within its round bound.

A new game kind gets these checks by being registered; give it a small config in ``CONFIGS``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

import pytest

from engine import GAMES, get_game
from engine.base import Event, Game, canonical_json, state_hash
from engine.errors import GameError, GameOver, InvalidOrder, RateLimited

#: per game: small configs (short games keep this file's runtime low)
CONFIGS: dict[str, list[dict[str, Any]]] = {
    "salvo": [{"players": 2}, {"players": 2, "mode": "classic", "fleet": "variant",
                               "first_player": "random", "max_rounds": 60}],
    "archipelago": [{"players": 2, "max_rounds": 10}, {"players": 3, "max_rounds": 6}],
}
#: per game: an action other than chat that changes the state (GameOver once the game has ended)
NON_CHAT_ACTIONS: dict[str, dict[str, Any]] = {
    "archipelago": {"bank": {"give": "wood", "get": "iron"}},
}
SEEDS = (1, 2, 3, 4)
MAX_CHATS = 10


def configs(name: str) -> list[dict[str, Any]]:
    game = get_game(name)
    return CONFIGS.get(name) or [{"players": game.min_players}]


CASES = [(name, i, seed) for name in sorted(GAMES) for i in range(len(configs(name))) for seed in SEEDS]


def order_seed(seed: int, rnd: int, player: int) -> int:
    return (seed * 1000 + rnd) * 10 + player


def players_of(game: Game, config: Mapping[str, Any]) -> int:
    return int(game.normalize_config(config)["players"])


def round_bound(game: Game, config: Mapping[str, Any]) -> int:
    """The last round a game may reach: round 0 (setup) plus ``max_rounds`` rounds."""
    return int(game.normalize_config(config)["max_rounds"])


def check_event(event: Event, players: int) -> None:
    assert isinstance(event, Event)
    assert event.audience is None or event.audience <= frozenset(range(players)), event
    d = event.to_dict()
    assert json.loads(canonical_json(d)) == d
    assert Event.from_dict(json.loads(json.dumps(d))) == Event.from_dict(d)


def check_round_trip(game: Game, state: Any, players: int) -> None:
    d = state.to_dict()
    again = game.state_from_dict(json.loads(canonical_json(d)))
    assert state_hash(again) == state_hash(state)
    assert again.to_dict() == d
    for p in range(players):
        view = game.view(state, p)
        assert json.loads(canonical_json(view)) == view, "views are plain JSON"
        assert game.view(again, p) == view


def play(game: Game, config: Mapping[str, Any], seed: int
         ) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """A game to its end: each round seat 0 chats (an action), then every expected seat's
    ``random_orders``; returns the final state, the journal and the state hash after each round."""
    players = players_of(game, config)
    state = game.new_game(config, seed)
    journal: list[dict[str, Any]] = []
    hashes: list[str] = []
    check_round_trip(game, state, players)
    while game.outcome(state) is None:
        assert state.round <= round_bound(game, config), f"{game.name} went past its round bound"
        action = {"chat": {"text": f"round {state.round}"}}
        state, events = game.act(state, 0, action)
        for e in events:
            check_event(e, players)
        expected = game.expected_players(state)
        orders: dict[int, Any] = {}
        for p in range(players):
            view = game.view(state, p)
            o = game.random_orders(view, order_seed(seed, state.round, p))
            assert o == game.random_orders(json.loads(json.dumps(view)), order_seed(seed, state.round, p))
            assert json.loads(canonical_json(o)) == o
            if p not in expected:
                assert not o, f"{game.name}: seat {p} may not act now but got orders {o}"
                continue
            game.validate(state, p, o)
            orders[p] = o
        before = state_hash(state)
        state, events = game.resolve(state, orders)
        for e in events:
            check_event(e, players)
        journal.append({"action": action, "orders": {str(p): o for p, o in orders.items()}})
        hashes.append(state_hash(state))
        assert before != hashes[-1]
        check_round_trip(game, state, players)
    return state, journal, hashes


def replay(game: Game, config: Mapping[str, Any], seed: int, journal: list[dict[str, Any]]) -> list[str]:
    state = game.new_game(config, seed)
    hashes = []
    for entry in json.loads(json.dumps(journal)):
        state, _ = game.act(state, 0, entry["action"])
        state, _ = game.resolve(state, {int(p): o for p, o in entry["orders"].items()})
        hashes.append(state_hash(state))
    return hashes


# -- the protocol itself ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_implements_the_whole_contract(name: str) -> None:
    game = get_game(name)
    assert game.name == name
    assert 1 <= game.min_players <= game.max_players
    for member, proto in inspect.getmembers(Game, inspect.isfunction):
        if member.startswith("_"):
            continue
        impl = getattr(game, member, None)
        assert callable(impl), f"{name} lacks {member}"
        want = list(inspect.signature(proto).parameters)[1:]
        assert list(inspect.signature(impl).parameters) == want, f"{name}.{member} parameters differ"


# -- seeded games, every game kind -------------------------------------------------------------------

@pytest.mark.parametrize(("name", "config_index", "seed"), CASES, ids=lambda v: str(v))
def test_random_games_validate_round_trip_replay_and_end(name: str, config_index: int, seed: int) -> None:
    game = get_game(name)
    config = configs(name)[config_index]
    final, journal, hashes = play(game, config, seed)
    outcome = game.outcome(final)
    assert outcome is not None
    assert final.round <= round_bound(game, config) + 1
    assert replay(game, config, seed, journal) == hashes  # byte for byte: equal canonical encodings
    # once over: no orders, no actions that change the game; chat stays allowed
    players = players_of(game, config)
    assert game.expected_players(final) == []
    for p in range(players):
        assert not game.random_orders(game.view(final, p), 5)
        with pytest.raises(GameOver):
            game.validate(final, p, {})
    if name in NON_CHAT_ACTIONS:
        before = state_hash(final)
        with pytest.raises(GameOver):
            game.act(final, 0, NON_CHAT_ACTIONS[name])
        assert state_hash(final) == before
    _, events = game.act(final, players - 1, {"chat": {"text": "good game"}})
    assert [e.kind for e in events] == ["chat"]


# -- act: chat and the action envelope, every game kind -------------------------------------------------

@pytest.mark.parametrize("name", sorted(GAMES))
def test_a53_chat_reaches_its_audience_and_the_eleventh_is_rate_limited(name: str) -> None:
    game = get_game(name)
    config = configs(name)[0]
    players = players_of(game, config)
    state = game.new_game(config, 3)
    before = state_hash(state)
    new, events = game.act(state, 0, {"chat": {"text": "hello everyone"}})
    assert [(e.kind, dict(e.data), e.audience) for e in events] == [
        ("chat", {"from": 0, "text": "hello everyone"}, None)]
    assert state_hash(state) == before  # act returns a new state, the input is untouched
    _, events = game.act(state, 0, {"chat": {"text": "just you", "to": players - 1}})
    assert [(e.kind, dict(e.data), e.audience) for e in events] == [
        ("chat", {"from": 0, "text": "just you", "to": players - 1}, frozenset({0, players - 1}))]
    for i in range(MAX_CHATS - 1):
        new, _ = game.act(new, 0, {"chat": {"text": f"message {i}"}})
    full = state_hash(new)
    with pytest.raises(RateLimited) as e:
        game.act(new, 0, {"chat": {"text": "one too many"}})
    assert e.value.rule == "A53"
    assert state_hash(new) == full
    game.act(new, 1, {"chat": {"text": "another seat still may"}})
    after, _ = game.resolve(new, {p: game.random_orders(game.view(new, p), p)
                                  for p in game.expected_players(new)})
    game.act(after, 0, {"chat": {"text": "a new round"}})  # the limit is per round


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("action", [
    {"teleport": {}}, {}, {"chat": {"text": "hi"}, "teleport": {}}, "chat", None, ["chat"],
])
def test_unknown_actions_are_invalid_and_change_nothing(name: str, action: Any) -> None:
    game = get_game(name)
    state = game.new_game(configs(name)[0], 4)
    before = canonical_json(state.to_dict())
    with pytest.raises(InvalidOrder) as e:
        game.act(state, 0, action)
    assert e.value.field == "action"
    assert canonical_json(state.to_dict()) == before


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize(("fields", "field"), [
    ({"text": ""}, "chat.text"), ({"text": "  "}, "chat.text"), ({"text": "x" * 501}, "chat.text"),
    ({"text": 3}, "chat.text"), ({"text": "hi", "to": 0}, "chat.to"), ({"text": "hi", "to": 99}, "chat.to"),
    ({"text": "hi", "colour": "red"}, "chat.colour"), ({"text": "\x00\x1b[2J"}, "chat.text"),
    ({"text": "two\nlines"}, "chat.text"), ({"text": "tab\there"}, "chat.text"),
])
def test_a53_malformed_chat_names_the_field(name: str, fields: dict[str, Any], field: str) -> None:
    game = get_game(name)
    state = game.new_game(configs(name)[0], 4)
    before = canonical_json(state.to_dict())
    with pytest.raises(GameError) as e:
        game.act(state, 0, {"chat": fields})
    assert isinstance(e.value, InvalidOrder) and e.value.field == field
    assert canonical_json(state.to_dict()) == before


# -- legal moves (A90), every game kind ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GAMES))
def test_a90_legal_moves_work_on_a_view_and_are_plain_json(name: str) -> None:
    """``legal_moves(view)`` for every seat in every round of a seeded game: plain JSON with a
    ``phase``, computed from the view alone (a JSON copy of the view gives the same answer); a unit
    that is not the player's is refused naming the field ``unit``; ``{"phase": "over"}`` once the
    game has ended."""
    game = get_game(name)
    config = configs(name)[0]
    players = players_of(game, config)
    state = game.new_game(config, 6)
    while game.outcome(state) is None:
        assert state.round <= round_bound(game, config)
        for p in range(players):
            view = game.view(state, p)
            moves = game.legal_moves(view)
            assert isinstance(moves, dict) and json.loads(canonical_json(moves)) == moves
            assert isinstance(moves.get("phase"), str) and moves["phase"] != "over"
            assert game.legal_moves(json.loads(json.dumps(view))) == moves
            with pytest.raises(GameError) as e:
                game.legal_moves(view, "no-such-unit")
            assert e.value.field == "unit"
        state, _ = game.resolve(state, {p: game.random_orders(game.view(state, p), order_seed(6, state.round, p))
                                        for p in game.expected_players(state)})
    for p in range(players):
        assert game.legal_moves(game.view(state, p)) == {"phase": "over"}


# -- standing orders, every game kind ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GAMES))
def test_standing_orders_empty_ones_check_and_change_nothing(name: str) -> None:
    """``check_standing`` accepts ``{}`` (normalised, plain JSON, idempotent) and the game's
    ``default_standing``, and refuses an unknown key naming it, without touching the state; with
    empty standing orders the autopilot plays as without any, ``complete_orders`` keeps a submission
    valid, there are no standing actions, and ``standing_after_round`` keeps them as they are."""
    game = get_game(name)
    state = game.new_game(configs(name)[0], 2)
    for _ in range(2):
        before = canonical_json(state.to_dict())
        norm = game.check_standing(state, 0, {})
        assert isinstance(norm, dict) and json.loads(canonical_json(norm)) == norm
        assert game.check_standing(state, 0, norm) == norm
        default = game.default_standing(state, 0)  # what seats filled with the autopilot play
        assert game.check_standing(state, 0, default) == default
        with pytest.raises(InvalidOrder) as e:
            game.check_standing(state, 0, {"no_such_key": 1})
        assert e.value.field == "no_such_key"
        assert canonical_json(state.to_dict()) == before
        orders: dict[int, Any] = {}
        for p in game.expected_players(state):
            view = game.view(state, p)
            assert game.standing_actions(view, norm) == []
            assert game.autopilot(view, norm) == game.autopilot(view, None)
            submitted = game.random_orders(view, p)
            completed = game.complete_orders(view, norm, submitted)
            game.validate(state, p, completed)
            assert game.standing_after_round(norm, completed) == norm
            orders[p] = completed
        state, _ = game.resolve(state, orders)
