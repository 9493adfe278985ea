"""Seeded whole games (M53, M26, determinism): autopilot against autopilot and against the random
legal player, 2, 3 and 4 players, both built-in decks.

Every game must end (a winner or a draw) within a bound of actions; every action comes from a
player's view and is accepted by ``apply_action``; states round-trip through ``to_dict``; replaying
the seed and the actions gives the same state hash; and no view shows another player's hand, a
deck, face-down resources or unbuilt cities — checked against the full state here, not by the view
code.  ``ARCMAGE_GAMES`` sets the number of games (default 200).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from engine.arcmage import GAME, ArcState, core
from engine.base import canonical_json, state_hash

N_GAMES = int(os.environ.get("ARCMAGE_GAMES", "200"))
MAX_ACTIONS = {2: 3000, 3: 6000, 4: 8000}
DECK_NAMES = ("Brothers in Arms", "Gaian love for life")


def game_plan(i: int) -> tuple[int, list[str], list[str]]:
    """Players, decks and seat kinds of game ``i``: mostly 2 players, some 3 and 4."""
    r = i % 20
    n = 4 if r == 0 else 3 if r in (5, 15) else 2
    decks = [DECK_NAMES[(i // 2 + s) % 2] for s in range(n)]
    kinds = ["auto" if (i + s) % 2 == 0 or (s == 0 and i % 4 != 3) else "random" for s in range(n)]
    if i % 4 == 3:
        kinds[0] = "random"
        kinds[1 % n] = "auto"
    return n, decks, kinds


def hidden_from(S: dict[str, Any], p: int) -> set[str]:
    """Card ids seat ``p`` must not see: every deck, others' hands, piles and unbuilt cities."""
    out: set[str] = set()
    for q, s in enumerate(S["seats"]):
        out.update(s["deck"])
        if q != p:
            out.update(s["hand"])
            out.update(s["unbuilt"])
            for pile in s["piles"].values():
                out.update(pile)
    h = core.head(S)
    if h is not None and h["op"] == "decide" and h["seat"] == p:  # a search shows the deck (M48)
        for o in h["options"]:
            if isinstance(o, str):
                out.discard(o)
            elif isinstance(o, list):
                out.difference_update(x for x in o if isinstance(x, str))
    return out


def strings(obj: Any) -> set[str]:
    """Every string inside plain data (keys and values)."""
    out: set[str] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.add(x)
        elif isinstance(x, dict):
            out.update(k for k in x if isinstance(k, str))
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    return out


def private_cards(S: dict[str, Any]) -> set[str]:
    """Cards hidden from at least one seat: decks, hands, resource piles, unbuilt cities."""
    out: set[str] = set()
    for s in S["seats"]:
        out.update(s["deck"], s["hand"], s["unbuilt"], *s["piles"].values())
    return out


def check_events(before: ArcState, after: ArcState, events: list[Any]) -> None:
    """No event names a card hidden from someone in its audience both before and after the action
    (M26: events carry their audience; a card seen moving, e.g. back to a hand, may be named)."""
    private: set[str] | None = None
    for e in events:
        names = strings(e.data)
        if e.audience is None:
            if private is None:
                private = private_cards(before.data) & private_cards(after.data)
            leaked = names & private
        else:
            leaked = set()
            for q in e.audience:
                leaked |= names & hidden_from(before.data, q) & hidden_from(after.data, q)
        assert not leaked, f"event {e.kind} to {e.audience} names hidden cards {sorted(leaked)[:4]}"


def check_view(state: ArcState, p: int, view: dict[str, Any], full: bool = False) -> None:
    """No hidden card in the view's cards; with ``full``, no hidden hand card named anywhere."""
    S = state.data
    leaked = hidden_from(S, p) & set(view["cards"])
    assert not leaked, f"seat {p} sees hidden cards {sorted(leaked)[:5]}"
    assert "rng" not in view and "todo" not in view
    pend = view["pending"]
    if pend is not None and pend["op"] == "decide" and pend["seat"] != p:
        assert "options" not in pend
    if not full:
        return
    text = canonical_json(view).decode()
    for q, s in enumerate(S["seats"]):
        if q != p:
            for cid in s["hand"][:3]:
                assert f'"{cid}"' not in text, f"seat {p}'s view names seat {q}'s hand card {cid}"


def play(i: int) -> None:
    n, decks, kinds = game_plan(i)
    seed = 1000 + i
    cfg = {"players": n, "decks": decks}
    state = GAME.new_game(cfg, seed)
    actions: list[tuple[int, dict[str, Any]]] = []
    while GAME.outcome(state) is None:
        assert len(actions) < MAX_ACTIONS[n], f"game {i} did not end within {MAX_ACTIONS[n]} actions"
        st = GAME.step(state)
        assert st.players, st
        p = st.players[0]
        view = GAME.view(state, p)
        check_view(state, p, view)
        if kinds[p] == "auto":
            action = GAME.autopilot_action(view)
        else:
            action = GAME.random_action(view, seed * 7919 + len(actions))
        assert action, f"seat {p} has no action at {st}"
        sample = len(actions) % 47 == 0
        before = canonical_json(state.data) if sample else b""
        old = state
        state, events = GAME.apply_action(state, p, action)
        check_events(old, state, events)
        actions.append((p, action))
        if sample:
            assert canonical_json(old.data) == before, "apply_action changed its input state"
            assert canonical_json(GAME.state_from_dict(state.to_dict()).to_dict()) == canonical_json(state.to_dict())
            for q in range(n):
                check_view(state, q, GAME.view(state, q), full=True)
    o = GAME.outcome(state)
    assert o is not None and (o.draw or len(o.winners) == 1)
    again = GAME.new_game(cfg, seed)
    for p, a in actions:
        again, _ = GAME.apply_action(again, p, a)
    assert state_hash(again) == state_hash(state)
    assert state_hash(GAME.state_from_dict(state.to_dict())) == state_hash(state)


@pytest.mark.parametrize("i", range(N_GAMES))
def test_m53_seeded_game_conformance(i: int) -> None:
    play(i)


def test_conformance_covers_2_3_and_4_players_both_decks_and_both_opponents() -> None:
    plans = [game_plan(i) for i in range(N_GAMES)]
    assert {n for n, _, _ in plans} == {2, 3, 4}
    assert {d for _, decks, _ in plans for d in decks} == set(DECK_NAMES)
    assert any(all(k == "auto" for k in kinds) for _, _, kinds in plans)
    assert any("random" in kinds and "auto" in kinds for _, _, kinds in plans)
    assert N_GAMES >= 200 or os.environ.get("ARCMAGE_GAMES")
