"""Seeded autopilot-vs-autopilot playouts of Salvo: every game ends, every order the autopilot gives
validates, states round-trip and are never mutated, replays are exact, and — S8 — no view or event
ever shows a player an enemy ship square or (salvo mode) which of its own shots hit before the end.
Every view is checked against the full state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.base import Event, state_hash
from engine.rng import Rng
from engine.salvo import GAME, SalvoState
from engine.salvo.board import ALL_SQUARES, FLEETS

SEEDS = range(50)
SQUARES = frozenset(ALL_SQUARES)
CONFIGS: dict[str, dict[str, Any]] = {
    "salvo-default": {},
    "salvo-variant": {"fleet": "variant"},
    # 200 turns = 100 shots each: enough to shoot every square, so the fleet-sunk rule ends the game
    "classic-random-first": {"mode": "classic", "first_player": "random", "max_rounds": 200},
}


def squares_in(obj: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (path, square) pair of a square name found anywhere inside ``obj``."""
    if isinstance(obj, str):
        if obj in SQUARES:
            yield path, obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from squares_in(value, f"{path}.{key}" if path else str(key))
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            yield from squares_in(value, f"{path}[{i}]")


def keys_in(obj: Any) -> Iterator[str]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from keys_in(value)
    elif isinstance(obj, list | tuple):
        for value in obj:
            yield from keys_in(value)


def has_none(obj: Any) -> bool:
    if obj is None:
        return True
    if isinstance(obj, dict):
        return any(has_none(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return any(has_none(v) for v in obj)
    return False


def truth(state: SalvoState, player: int) -> dict[str, Any]:
    """What the full state says about ``player``'s game, computed independently of the view."""
    enemy = 1 - player
    mine = [(s.square, s.round) for s in state.shots[player]]
    theirs = [(s.square, s.round) for s in state.shots[enemy]]
    my_shot = {sq for sq, _ in mine}
    their_shot = {sq for sq, _ in theirs}
    enemy_squares = {sq for ship in state.fleets[enemy] for sq in ship.squares}
    own_afloat = [ship.name for ship in state.fleets[player] if not set(ship.squares) <= their_shot]
    return {
        "mine": mine, "theirs": theirs, "my_shot": my_shot, "their_shot": their_shot,
        "enemy_squares": enemy_squares,
        "my_hits": sum(1 for sq in my_shot if sq in enemy_squares),
        "enemy_sunk": {ship.name for ship in state.fleets[enemy] if set(ship.squares) <= my_shot},
        "own_afloat": own_afloat,
    }


def check_view(state: SalvoState, player: int, view: dict[str, Any]) -> None:
    t = truth(state, player)
    over = GAME.outcome(state) is not None
    classic = state.mode == "classic"
    assert not has_none(view)
    # the facts the player may know are all there and true
    assert [(s["square"], s["round"]) for s in view["shots"]] == t["mine"]
    assert [(s["square"], s["round"]) for s in view["incoming"]] == t["theirs"]
    own = {sq for ship in state.fleets[player] for sq in ship.squares}
    assert all(s["hit"] == (s["square"] in own) for s in view["incoming"])
    assert [(ship["name"], ship["squares"]) for ship in view["fleet"]] == [
        (ship.name, list(ship.squares)) for ship in state.fleets[player]]
    assert set(view["enemy_sunk"]) == t["enemy_sunk"]
    if not classic:
        assert sum(r["hits"] for r in view["reports"]) == t["my_hits"]
        assert all(r["hits"] == sum(s["count"] for s in r["ships"]) for r in view["reports"])
        if not over and state.round > 0:
            worth = {spec.name: spec.shots for spec in FLEETS[state.fleet]}
            assert view["shots_allowed"] == sum(worth[name] for name in t["own_afloat"])
    # S8: nothing more before the end
    if not over:
        assert "enemy_fleet" not in view and "outcome" not in view
        for path, square in squares_in(view):
            if not path.startswith(("fleet", "incoming")):
                assert square in t["my_shot"], f"{path} shows {square}, which player {player} never shot"
        if not classic:
            assert all(set(s) == {"square", "round"} for s in view["shots"])
            assert all(set(r) == {"round", "hits", "ships", "sunk"} for r in view["reports"])
            assert all(set(e) == {"ship", "count"} for r in view["reports"] for e in r["ships"])
    else:
        assert [ship["squares"] for ship in view["enemy_fleet"]] == [
            list(ship.squares) for ship in state.fleets[1 - player]]
        assert all(s["hit"] == (s["square"] in t["enemy_squares"]) for s in view["shots"])
        assert view["outcome"]["reason"] == GAME.outcome(state).reason  # type: ignore[union-attr]
    if classic and view["shots"]:
        assert all(s["hit"] == (s["square"] in t["enemy_squares"]) for s in view["shots"])


def check_events(state: SalvoState, player: int, events: list[Event]) -> None:
    """Events a player receives carry only squares it shot or that were shot at it (S8)."""
    t = truth(state, player)
    known = t["my_shot"] | t["their_shot"]
    for event in events:
        if not event.visible_to(player):
            continue
        data = dict(event.data)
        assert not has_none(data)
        if event.kind in ("salvo_report", "shots_received"):  # a report goes to its shooter only,
            assert event.audience == frozenset({player})  # the squares received to their target only
        assert {sq for _, sq in squares_in(data)} <= known, (event.kind, data)
        if state.mode == "salvo":
            assert "hit" not in set(keys_in(data)), (event.kind, data)


def play(config: dict[str, Any], seed: int) -> tuple[SalvoState, list[dict[int, dict[str, Any]]]]:
    state = GAME.new_game(config, seed)
    journal: list[dict[int, dict[str, Any]]] = []
    bound = state.max_rounds + 1  # placement round + max_rounds rounds at most
    for _ in range(bound):
        if GAME.outcome(state) is not None:
            break
        orders = {}
        for player in GAME.expected_players(state):
            orders[player] = GAME.autopilot(GAME.view(state, player))
            GAME.validate(state, player, orders[player])
        before = state.to_dict()
        nxt, events = GAME.resolve(state, orders)
        assert state.to_dict() == before, "resolve mutated its input"
        assert (nxt.version, nxt.round) == (state.version + 1, state.round + 1)
        journal.append(orders)
        state = nxt
        d = state.to_dict()
        assert GAME.state_from_dict(d).to_dict() == d
        for player in (0, 1):
            check_view(state, player, GAME.view(state, player))
            check_events(state, player, events)
    return state, journal


@pytest.mark.parametrize("name", list(CONFIGS))
def test_s8_autopilot_playouts_end_and_never_leak(name: str) -> None:
    config = CONFIGS[name]
    reasons = set()
    for seed in SEEDS:
        state, journal = play(config, seed)
        outcome = GAME.outcome(state)
        assert outcome is not None, f"seed {seed} did not end"
        assert GAME.expected_players(state) == []
        # S7: every player shoots at least one untried square per round and has time to shoot all
        # 100, so each game ends by sinking, never by the round limit
        assert outcome.reason in ("fleet_sunk", "both_fleets_sunk")
        shot = [{s.square for s in state.shots[shooter]} for shooter in (0, 1)]
        sunk = [all(set(ship.squares) <= shot[1 - owner] for ship in state.fleets[owner]) for owner in (0, 1)]
        if outcome.draw:
            assert all(sunk)
        else:
            (winner,) = outcome.winners
            assert sunk[1 - winner] and not sunk[winner]
        reasons.add(outcome.reason)
        # replaying the journal from the seed gives the same game
        replay = GAME.new_game(config, seed)
        for orders in journal:
            replay, _ = GAME.resolve(replay, orders)
        assert state_hash(replay) == state_hash(state)
    assert "fleet_sunk" in reasons


def _random_shooter(view: dict[str, Any], seed: int) -> dict[str, Any]:
    tried = {s["square"] for s in view["shots"]}
    rng = Rng(seed * 1000 + view["round"])
    return {"shots": rng.sample([sq for sq in ALL_SQUARES if sq not in tried], view["shots_allowed"])}


def test_s9_hunting_autopilot_beats_random_shooting() -> None:
    """Hunting near hits must pay off: over 50 seeded games the autopilot (seat 0) beats a player
    shooting untried squares at random (seat 1) far more often than a coin flip would."""
    wins = 0
    for seed in SEEDS:
        state = GAME.new_game({}, seed)
        while GAME.outcome(state) is None:
            orders = {}
            for player in GAME.expected_players(state):
                view = GAME.view(state, player)
                if player == 0 or state.round == 0:
                    orders[player] = GAME.autopilot(view)
                else:
                    orders[player] = _random_shooter(view, seed)
            state, _ = GAME.resolve(state, orders)
        outcome = GAME.outcome(state)
        assert outcome is not None
        wins += outcome.winners == (0,)
    assert wins >= 40
