"""The engine contract (``engine.base``, ``shared/design.md`` "Engine contract") checked the same way
for EVERY registered game (``engine.GAMES``) and for the toy turn-based game of
:mod:`tests.engine.toygame` (registered for this module only): seeded games played to their end,
step by step as ``step(state)`` says — a simultaneous step with each seat's ``random_orders(view,
seed)``, which must validate, then ``resolve``; a turn or window step with ``random_action(view,
seed)`` of one seat of the step, applied with ``apply_action``, which refuses the seats outside the
step; exact serialisation round trips; JSON views that the round-tripped state reproduces; replays
identical byte for byte; ``act`` with chat (audience, the A53 limit of 10 messages per round),
unknown actions refused without change; ``GameOver`` once the game has ended; every game ends
within its round bound.

A new game kind gets these checks by being registered; give it a small config in ``CONFIGS``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from engine import GAMES, get_game
from engine.base import (
    CORE_METHODS,
    OVER,
    RESPONSE_DEADLINE,
    ROUND_DEADLINE,
    ROUND_METHODS,
    SIMULTANEOUS,
    SPECTATOR,
    STANDING_METHODS,
    STEP_OVER,
    TURN,
    TURN_DEADLINE,
    TURN_METHODS,
    WINDOW,
    Core,
    Event,
    NoStanding,
    Rounds,
    Standing,
    Step,
    Turns,
    canonical_json,
    expected_players,
    has_standing,
    public_events,
    rounds_of,
    standing_of,
    state_hash,
    step_seconds,
    turns_of,
)
from engine.errors import GameError, GameOver, InvalidOrder, NotYourTurn, RateLimited
from tests.engine import toygame

#: every game this module checks: the registered ones and the toy turn-based game
KINDS = sorted({*GAMES, toygame.NAME})
#: per game: small configs (short games keep this file's runtime low)
CONFIGS: dict[str, list[dict[str, Any]]] = {
    "salvo": [{"players": 2}, {"players": 2, "mode": "classic", "fleet": "variant",
                               "first_player": "random", "max_rounds": 60}],
    "archipelago": [{"players": 2, "max_rounds": 10}, {"players": 3, "max_rounds": 6}],
    # turns, not rounds: a game past its bound is a draw (tests/engine/arcmage plays 200 whole games)
    "arcmage": [{"players": 2, "max_rounds": 12}, {"players": 3, "max_rounds": 9}],
    toygame.NAME: [{"players": 2}, {"players": 3, "target": 12, "max_rounds": 12}],
}
#: per game: an action other than chat that changes the state (GameOver once the game has ended)
NON_CHAT_ACTIONS: dict[str, dict[str, Any]] = {
    "archipelago": {"bank": {"give": "wood", "get": "iron"}},
}
SEEDS = (1, 2, 3, 4)
MAX_CHATS = 10
MAX_STEPS_PER_ROUND = 1000  # a turn-based round (a turn and its windows) ends within this many actions
DEADLINE_KINDS = (ROUND_DEADLINE, TURN_DEADLINE, RESPONSE_DEADLINE)


@pytest.fixture(autouse=True, scope="module")
def toy_registered() -> Iterator[None]:
    """Toy count is a registered game kind while this module runs, and only then."""
    with toygame.registered():
        yield


def configs(name: str) -> list[dict[str, Any]]:
    return CONFIGS.get(name) or [{"players": get_game(name).min_players}]


CASES = [(name, i, seed) for name in KINDS for i in range(len(CONFIGS.get(name) or [{}])) for seed in SEEDS]


def order_seed(seed: int, rnd: int, player: int, n: int = 0) -> int:
    return ((seed * 1000 + rnd) * 10 + player) * 1000 + n


def players_of(game: Core, config: Mapping[str, Any]) -> int:
    return int(game.normalize_config(config)["players"])


def round_bound(game: Core, config: Mapping[str, Any]) -> int:
    """The last round a game may reach: round 0 (setup) plus ``max_rounds`` rounds."""
    return int(game.normalize_config(config)["max_rounds"])


def check_event(event: Event, players: int) -> None:
    assert isinstance(event, Event)
    assert event.audience is None or event.audience <= frozenset(range(players)), event
    d = event.to_dict()
    assert json.loads(canonical_json(d)) == d
    assert Event.from_dict(json.loads(json.dumps(d))) == Event.from_dict(d)


def check_step(game: Core, state: Any, players: int) -> Step:
    """``step(state)``: a well-formed :class:`Step` of its kind, ``OVER`` exactly at the end, and
    the one source of ``expected_players``."""
    step = game.step(state)
    assert isinstance(step, Step)
    assert json.loads(canonical_json(step.to_dict())) == step.to_dict()
    assert len(set(step.players)) == len(step.players) and set(step.players) <= set(range(players)), step
    assert (step.kind == OVER) == (game.outcome(state) is not None), step
    if step.kind == OVER:
        assert step == STEP_OVER
    elif step.kind == SIMULTANEOUS:
        assert step.players and step.active == -1 and step.deadline in DEADLINE_KINDS, step
        rounds_of(game)  # a game with simultaneous steps has the round part
    elif step.kind == TURN:
        assert step.players == (step.active,) and step.deadline in DEADLINE_KINDS, step
        turns_of(game)
    else:
        assert step.kind == WINDOW, step
        assert step.players and 0 <= step.active < players and step.deadline in DEADLINE_KINDS, step
        turns_of(game)
    assert expected_players(game, state) == list(step.players)
    if callable(getattr(game, "expected_players", None)):
        assert game.expected_players(state) == list(step.players)  # type: ignore[attr-defined]
    return step


def check_round_trip(game: Core, state: Any, players: int) -> None:
    d = state.to_dict()
    again = game.state_from_dict(json.loads(canonical_json(d)))
    assert state_hash(again) == state_hash(state)
    assert again.to_dict() == d
    assert game.step(again) == game.step(state)
    for p in range(players):
        view = game.view(state, p)
        assert json.loads(canonical_json(view)) == view, "views are plain JSON"
        assert game.view(again, p) == view


def play_round(game: Core, state: Any, step: Step, seed: int, players: int
               ) -> tuple[Any, dict[str, Any]]:
    """A simultaneous step: every seat's ``random_orders`` (``{}`` for a seat outside the step),
    validated, then resolved together; returns the new state and the journal entry."""
    rounds = rounds_of(game)
    orders: dict[int, Any] = {}
    for p in range(players):
        view = game.view(state, p)
        o = rounds.random_orders(view, order_seed(seed, state.round, p))
        assert o == rounds.random_orders(json.loads(json.dumps(view)), order_seed(seed, state.round, p))
        assert json.loads(canonical_json(o)) == o
        if p not in step.players:
            assert not o, f"{game.name}: seat {p} may not act now but got orders {o}"
            continue
        rounds.validate(state, p, o)
        orders[p] = o
    state, events = rounds.resolve(state, orders)
    for e in events:
        check_event(e, players)
    return state, {"op": "resolve", "orders": {str(p): o for p, o in orders.items()}}


def play_action(game: Core, state: Any, step: Step, seed: int, n: int, players: int
                ) -> tuple[Any, dict[str, Any]]:
    """A turn or window step: each seat's ``legal_actions`` (none outside the step, each accepted
    by ``apply_action`` inside it) and ``random_action`` (one of them); a seat outside the step is
    refused with NotYourTurn naming a rule, and nothing changes; one seat of the step — the acting
    seat, or one of the window's chosen by the seed — applies its random action."""
    turns = turns_of(game)
    before = canonical_json(state.to_dict())
    chosen = step.players[order_seed(seed, state.round, 0, n) % len(step.players)]
    mine: dict[str, Any] = {}
    for p in range(players):
        view = game.view(state, p)
        copy = json.loads(json.dumps(view))
        legal = turns.legal_actions(view)
        assert legal == turns.legal_actions(copy) and json.loads(canonical_json(legal)) == legal
        a = turns.random_action(view, order_seed(seed, state.round, p, n))
        assert a == turns.random_action(copy, order_seed(seed, state.round, p, n))
        if p not in step.players:
            assert legal == [] and a == {}, f"{game.name}: seat {p} may not act now but may {legal}"
            some = next(iter(turns.legal_actions(game.view(state, chosen))))
            with pytest.raises(NotYourTurn) as refused:
                turns.apply_action(state, p, some)
            assert refused.value.rule, "NotYourTurn names the game's rule"
            continue
        assert legal and a in legal
        for other in legal[:8]:
            turns.apply_action(state, p, other)  # accepted (the result is dropped)
        auto = turns.autopilot_action(view)
        assert auto == turns.autopilot_action(copy)
        turns.apply_action(state, p, auto)
        if p == chosen:
            mine = a
    assert canonical_json(state.to_dict()) == before, "apply_action does not mutate its state"
    state, events = turns.apply_action(state, chosen, mine)
    for e in events:
        check_event(e, players)
    return state, {"op": "action", "seat": chosen, "action": mine}


def play(game: Core, config: Mapping[str, Any], seed: int
         ) -> tuple[Any, list[dict[str, Any]], list[str]]:
    """A game to its end, step by step: at the first step of each round seat 0 chats (an action),
    then the step is played (:func:`play_round` or :func:`play_action`); returns the final state,
    the journal and the state hash after each entry."""
    players = players_of(game, config)
    state = game.new_game(config, seed)
    journal: list[dict[str, Any]] = []
    hashes: list[str] = []
    check_round_trip(game, state, players)
    chatted, steps = -1, 0
    while (step := check_step(game, state, players)).kind != OVER:
        assert state.round <= round_bound(game, config), f"{game.name} went past its round bound"
        if state.round != chatted:
            chatted, steps = state.round, 0
            action = {"chat": {"text": f"round {state.round}"}}
            state, events = game.act(state, 0, action)
            for e in events:
                check_event(e, players)
            journal.append({"op": "act", "seat": 0, "action": action})
            hashes.append(state_hash(state))
        steps += 1
        assert steps <= MAX_STEPS_PER_ROUND, f"{game.name}: round {state.round} never ends"
        before = state_hash(state)
        if step.kind == SIMULTANEOUS:
            state, entry = play_round(game, state, step, seed, players)
        else:
            state, entry = play_action(game, state, step, seed, steps, players)
        journal.append(entry)
        hashes.append(state_hash(state))
        assert before != hashes[-1]
        check_round_trip(game, state, players)
    return state, journal, hashes


def replay(game: Core, config: Mapping[str, Any], seed: int, journal: list[dict[str, Any]]) -> list[str]:
    state = game.new_game(config, seed)
    hashes = []
    for entry in json.loads(json.dumps(journal)):
        if entry["op"] == "act":
            state, _ = game.act(state, entry["seat"], entry["action"])
        elif entry["op"] == "resolve":
            state, _ = rounds_of(game).resolve(state, {int(p): o for p, o in entry["orders"].items()})
        else:
            state, _ = turns_of(game).apply_action(state, entry["seat"], entry["action"])
        hashes.append(state_hash(state))
    return hashes


def next_round(game: Core, state: Any, seed: int) -> Any:
    """The state at the start of the next round (or at the end): random orders for a simultaneous
    step, the autopilot's actions for turns and windows."""
    rnd = state.round
    for _ in range(MAX_STEPS_PER_ROUND):
        step = game.step(state)
        if state.round != rnd or step.kind == OVER:
            return state
        if step.kind == SIMULTANEOUS:
            rounds = rounds_of(game)
            state, _ = rounds.resolve(state, {p: rounds.random_orders(game.view(state, p), order_seed(seed, rnd, p))
                                              for p in step.players})
        else:
            seat = step.players[0]
            state, _ = turns_of(game).apply_action(state, seat, turns_of(game).autopilot_action(game.view(state, seat)))
    raise AssertionError(f"{game.name}: round {rnd} never ends")


# -- the protocol itself ------------------------------------------------------------------------------

def check_part(name: str, game: Any, proto: type, methods: tuple[str, ...]) -> None:
    for member in methods:
        impl = getattr(game, member, None)
        assert callable(impl), f"{name} lacks {member}"
        want = list(inspect.signature(getattr(proto, member)).parameters)[1:]
        assert list(inspect.signature(impl).parameters) == want, f"{name}.{member} parameters differ"


@pytest.mark.parametrize("name", KINDS)
def test_every_game_implements_the_core_and_whole_parts(name: str) -> None:
    """The core always; the round part or the turn part (or both), each whole; standing orders
    whole or not at all — with the contract's parameter names."""
    game = get_game(name)
    assert game.name == name
    assert 1 <= game.min_players <= game.max_players
    check_part(name, game, Core, CORE_METHODS)
    assert set(CORE_METHODS) == {m for m, _ in inspect.getmembers(Core, inspect.isfunction)
                                 if not m.startswith("_")}
    parts = [(proto, methods) for proto, methods in ((Rounds, ROUND_METHODS), (Turns, TURN_METHODS))
             if any(callable(getattr(game, m, None)) for m in methods)]
    assert parts, f"{name} has neither the round part nor the turn part"
    for proto, methods in parts:
        check_part(name, game, proto, methods)
    own = [m for m in STANDING_METHODS if m != "autopilot" and callable(getattr(game, m, None))]
    assert own in ([], [m for m in STANDING_METHODS if m != "autopilot"]), f"{name}: standing orders in part"
    if own:
        check_part(name, game, Standing, STANDING_METHODS)


def test_the_parts_and_their_defaults() -> None:
    """``rounds_of`` / ``turns_of`` refuse a game without the part, naming what it lacks;
    ``standing_of`` gives Archipelago its own and the others :class:`NoStanding`; step deadlines
    default to the game's deadline (a response window: an eighth of it, 1 s at least)."""
    salvo: Any = get_game("salvo")
    arch: Any = get_game("archipelago")
    toy: Any = get_game(toygame.NAME)
    with pytest.raises(TypeError, match="apply_action"):
        turns_of(salvo)
    with pytest.raises(TypeError, match="validate"):
        rounds_of(toy)
    assert turns_of(toy) is toy and rounds_of(salvo) is salvo
    assert standing_of(arch) is arch and has_standing(arch)
    assert isinstance(standing_of(salvo), NoStanding) and isinstance(standing_of(toy), NoStanding)
    assert isinstance(standing_of(salvo), Standing)
    assert step_seconds({}, 120, TURN_DEADLINE) == 120 == step_seconds({}, 120, ROUND_DEADLINE)
    assert step_seconds({}, 120, RESPONSE_DEADLINE) == 15
    assert step_seconds({}, 4, RESPONSE_DEADLINE) == 1 and step_seconds({}, 0.5, RESPONSE_DEADLINE) == 0.5
    given = {"deadlines": {"turn": 90, "response": 7}}
    assert step_seconds(given, 120, TURN_DEADLINE) == 90 and step_seconds(given, 120, RESPONSE_DEADLINE) == 7
    assert step_seconds(given, 120, ROUND_DEADLINE) == 120


def test_s4_salvo_classic_rounds_are_one_seat_simultaneous_steps() -> None:
    """Salvo classic stays a round game: after placement, each round a simultaneous step of the
    active player alone, on the round deadline."""
    game = rounds_of(get_game("salvo"))
    state = game.new_game({"players": 2, "mode": "classic"}, 1)
    assert game.step(state) == Step(SIMULTANEOUS, (0, 1), ROUND_DEADLINE)
    state, _ = game.resolve(state, {0: {}, 1: {}})
    assert game.step(state) == Step(SIMULTANEOUS, (0,), ROUND_DEADLINE)
    state, _ = game.resolve(state, {0: {"shots": ["A1"]}})
    assert game.step(state) == Step(SIMULTANEOUS, (1,), ROUND_DEADLINE)


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
    assert expected_players(game, final) == [] and game.step(final) == STEP_OVER
    played = [e for e in journal if e["op"] == "action"]
    for p in range(players):
        if any(e["op"] == "resolve" for e in journal):
            rounds = rounds_of(game)
            assert not rounds.random_orders(game.view(final, p), 5)
            with pytest.raises(GameOver):
                rounds.validate(final, p, {})
        if played:
            turns = turns_of(game)
            assert turns.legal_actions(game.view(final, p)) == [] and turns.random_action(game.view(final, p), 5) == {}
            with pytest.raises(GameOver):
                turns.apply_action(final, p, played[-1]["action"])
    if name in NON_CHAT_ACTIONS:
        before = state_hash(final)
        with pytest.raises(GameOver):
            game.act(final, 0, NON_CHAT_ACTIONS[name])
        assert state_hash(final) == before
    _, events = game.act(final, players - 1, {"chat": {"text": "good game"}})
    assert [e.kind for e in events] == ["chat"]


def test_the_toy_game_plays_turns_and_windows() -> None:
    """The conformance run above really takes the turn path: turns and windows both occur, several
    seats answer one window, and a turn goes on after a window (T3: someone answered)."""
    game = get_game(toygame.NAME)
    kinds: set[str] = set()
    sizes: set[int] = set()
    resumed = 0
    n = 0
    for seed in SEEDS:
        state = game.new_game(configs(toygame.NAME)[1], seed)
        before = game.step(state)
        while (step := game.step(state)).kind != OVER:
            kinds.add(step.kind)
            if step.kind == WINDOW:
                sizes.add(len(step.players))
            resumed += before.kind == WINDOW and step.kind == TURN and step.active == before.active
            n += 1
            before = step
            state, _ = play_action(game, state, step, seed, n, 3)
    assert kinds == {TURN, WINDOW} and sizes == {1, 2} and resumed


# -- act: chat and the action envelope, every game kind -------------------------------------------------

@pytest.mark.parametrize("name", KINDS)
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
    after = next_round(game, new, 0)
    game.act(after, 0, {"chat": {"text": "a new round"}})  # the limit is per round


@pytest.mark.parametrize("name", KINDS)
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
    if callable(getattr(game, "apply_action", None)):
        with pytest.raises(InvalidOrder) as e:
            turns_of(game).apply_action(state, game.step(state).players[0], action)
        assert e.value.field == "action"
    assert canonical_json(state.to_dict()) == before


@pytest.mark.parametrize("name", KINDS)
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

@pytest.mark.parametrize("name", KINDS)
def test_a90_legal_moves_work_on_a_view_and_are_plain_json(name: str) -> None:
    """``legal_moves(view)`` for every seat at every step of a seeded game: plain JSON with a
    ``phase``, computed from the view alone (a JSON copy of the view gives the same answer); a unit
    that is not the player's is refused naming the field ``unit``; ``{"phase": "over"}`` once the
    game has ended."""
    game = get_game(name)
    config = configs(name)[0]
    players = players_of(game, config)
    state = game.new_game(config, 6)
    n = 0
    while (step := game.step(state)).kind != OVER:
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
        n += 1
        if step.kind == SIMULTANEOUS:
            rounds = rounds_of(game)
            state, _ = rounds.resolve(state, {p: rounds.random_orders(game.view(state, p),
                                                                      order_seed(6, state.round, p))
                                              for p in step.players})
        else:
            seat = step.players[0]
            action = turns_of(game).random_action(game.view(state, seat), order_seed(6, state.round, seat, n))
            state, _ = turns_of(game).apply_action(state, seat, action)
    for p in range(players):
        assert game.legal_moves(game.view(state, p)) == {"phase": "over"}


# -- spectator views, every game kind ---------------------------------------------------------------------

def check_spectator_view(game: Core, state: Any, events: list[Event], players: int) -> dict[str, Any]:
    """A spectator view as the contract says: plain JSON; the viewer's seat field ``SPECTATOR``; its
    keys a subset of a player view's, each of the same type; the same bytes again and from the
    state's JSON round trip; only the events every seat receives count (the private ones passed
    too change nothing); the state untouched."""
    before = canonical_json(state.to_dict())
    public = public_events(events, players)
    sv = game.spectator_view(state, public)
    assert json.loads(canonical_json(sv)) == sv, "spectator views are plain JSON"
    pv = game.view(state, 0, events)
    seat_key = next(k for k in ("you", "player") if k in pv)
    assert pv[seat_key] == 0 and sv[seat_key] == SPECTATOR
    assert set(sv) <= set(pv), f"{game.name}: keys no player view has: {set(sv) - set(pv)}"
    assert [k for k in sv if type(sv[k]) is not type(pv[k])] == []
    again = game.state_from_dict(json.loads(canonical_json(state.to_dict())))
    assert canonical_json(game.spectator_view(again, public)) == canonical_json(sv)
    assert canonical_json(game.spectator_view(state, events)) == canonical_json(sv)
    assert canonical_json(state.to_dict()) == before
    return sv


@pytest.mark.parametrize("name", KINDS)
def test_spectator_view_is_in_the_view_shape_at_every_step(name: str) -> None:
    """``spectator_view(state, events)`` after every step and every chat of a seeded game
    (:func:`check_spectator_view`; a chat to one seat is no public event), and once the game is over
    it holds the outcome as a player view does.  (What it shows is each game's: the leak property is
    tested per game in tests/engine/test_spectator.py.)"""
    game = get_game(name)
    config = configs(name)[0]
    players = players_of(game, config)
    state = game.new_game(config, 8)
    check_spectator_view(game, state, [], players)
    n = 0
    while (step := game.step(state)).kind != OVER:
        n += 1
        if n % 4 == 1:
            for action in ({"chat": {"text": "to all"}}, {"chat": {"text": "just you", "to": 1}}):
                state, events = game.act(state, 0, action)
                sv = check_spectator_view(game, state, events, players)
                if "events" in sv:
                    assert "just you" not in canonical_json(sv["events"]).decode()
        if step.kind == SIMULTANEOUS:
            rounds = rounds_of(game)
            state, events = rounds.resolve(state, {p: rounds.random_orders(game.view(state, p),
                                                                           order_seed(8, state.round, p))
                                                   for p in step.players})
        else:
            seat = step.players[0]
            action = turns_of(game).random_action(game.view(state, seat), order_seed(8, state.round, seat, n))
            state, events = turns_of(game).apply_action(state, seat, action)
        sv = check_spectator_view(game, state, events, players)
    assert sv.get("outcome") and sv["outcome"] == game.view(state, 0)["outcome"]


# -- standing orders, every game kind ---------------------------------------------------------------------

@pytest.mark.parametrize("name", KINDS)
def test_standing_orders_empty_ones_check_and_change_nothing(name: str) -> None:
    """``standing_of(game)`` (the game's own, or :class:`NoStanding`): ``check_standing`` accepts
    ``{}`` (normalised, plain JSON, idempotent) and the game's ``default_standing``, and refuses an
    unknown key naming it, without touching the state; in a simultaneous step, with empty standing
    orders the autopilot plays as without any, ``complete_orders`` keeps a submission valid, there
    are no standing actions, and ``standing_after_round`` keeps them as they are."""
    game = get_game(name)
    standing = standing_of(game)
    state = game.new_game(configs(name)[0], 2)
    for _ in range(2):
        before = canonical_json(state.to_dict())
        norm = standing.check_standing(state, 0, {})
        assert isinstance(norm, dict) and json.loads(canonical_json(norm)) == norm
        assert standing.check_standing(state, 0, norm) == norm
        default = standing.default_standing(state, 0)  # what seats filled with the autopilot play
        assert standing.check_standing(state, 0, default) == default
        with pytest.raises(InvalidOrder) as e:
            standing.check_standing(state, 0, {"no_such_key": 1})
        assert e.value.field == "no_such_key"
        assert canonical_json(state.to_dict()) == before
        step = game.step(state)
        if step.kind != SIMULTANEOUS:
            state = next_round(game, state, 2)
            continue
        rounds = rounds_of(game)
        orders: dict[int, Any] = {}
        for p in step.players:
            view = game.view(state, p)
            assert standing.standing_actions(view, norm) == []
            assert standing.autopilot(view, norm) == standing.autopilot(view, None) == rounds.autopilot(view)
            submitted = rounds.random_orders(view, p)
            completed = standing.complete_orders(view, norm, submitted)
            rounds.validate(state, p, completed)
            assert standing.standing_after_round(norm, completed) == norm
            orders[p] = completed
        state, _ = rounds.resolve(state, orders)
