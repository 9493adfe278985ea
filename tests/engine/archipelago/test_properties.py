"""Property tests (hypothesis): arbitrary client payloads never crash the engine.

Arbitrary JSON-ish values and mutated valid orders go to ``GAME.validate`` (A20) and to the
immediate operations (A52 bank, A53 offer / accept / chat): they either succeed or raise an
``engine.errors.GameError`` — never anything else — and a refused request leaves the state exactly
as it was (same hash).  Resolution (lenient parsing) survives the same payloads.
"""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.archipelago import GAME
from engine.archipelago.economy import accept_offer, bank, chat, offer
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.view import view
from engine.base import state_hash
from engine.errors import GameError

from .randplay import new_state, play, random_orders

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)


@functools.cache
def _states() -> tuple[State, State]:
    """A round-0 state and a mid-game state (after some random rounds, with pending offers)."""
    s0 = new_state(3, 3, 60)
    g = play(21, 3, max_rounds=8, checks=False)
    mid = g.final
    if mid.outcome is not None:  # pragma: no cover - 8 rounds never reach the target
        mid = new_state(21, 3, 60)
    mid = offer(mid, 1, None, {r: 1 for r in RESOURCES if mid.pstates[1].stock[r] > 0} or {"wood": 1},
                {"iron": 1}) if any(mid.pstates[1].stock.values()) else mid
    return s0, mid


def _ids(state: State) -> list[str]:
    return sorted(state.units)


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["N", "E", "S", "W", "wood", "iron", "fuel", "food", "outpost", "strike",
                                     "reveal", "bombard", *UNIT_TYPES, "x", "y", "unit", "path", "to"]))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.one_of(st.text(max_size=8),
                                                      st.sampled_from(["unit", "path", "to", "action", "target",
                                                                       "type", "tile", "ship", "x", "y",
                                                                       "units", "builds", "bonus", "deploy"])),
                                            inner, max_size=5)),
    max_leaves=20)
order_like = st.dictionaries(st.sampled_from(["units", "builds", "bonus", "deploy", "extra"]), json_values,
                             max_size=4)
players_arg = st.one_of(st.integers(-2, 9), json_values)


def _assert_safe(state: State, fn: Any, *args: Any) -> None:
    before = state_hash(state)
    try:
        fn(*args)
    except GameError:
        pass
    assert state_hash(state) == before, "the request changed the state"


def _mutate(o: Any, rnd: random.Random, value: Any) -> Any:
    """Replace one node of ``o`` (chosen by ``rnd``) with ``value``, or delete it."""
    o = copy.deepcopy(o)
    nodes: list[tuple[Any, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k in list(x):
                nodes.append((x, k))
                walk(x[k])
        elif isinstance(x, list):
            for i in range(len(x)):
                nodes.append((x, i))
                walk(x[i])
    walk(o)
    if not nodes:
        return value
    parent, key = rnd.choice(nodes)
    if rnd.random() < 0.2:
        del parent[key]
    else:
        parent[key] = value
    return o


@SETTINGS
@given(payload=st.one_of(order_like, json_values), player=players_arg, which=st.integers(0, 1))
def test_a20_arbitrary_payload_never_crashes_validate(payload: Any, player: Any, which: int) -> None:
    state = _states()[which]
    _assert_safe(state, GAME.validate, state, player, payload)


@SETTINGS
@given(seed=st.integers(0, 10**6), value=json_values, n=st.integers(1, 3), which=st.integers(0, 1))
def test_a20_mutated_valid_orders_never_crash_validate(seed: int, value: Any, n: int, which: int) -> None:
    state = _states()[which]
    rnd = random.Random(seed)
    p = rnd.randrange(state.players)
    o: Any = random_orders(view(state, p), rnd)
    GAME.validate(state, p, o)  # the unmutated orders are legal
    for _ in range(n):
        o = _mutate(o, rnd, value if rnd.random() < 0.7 else rnd.choice(_ids(state)))
    _assert_safe(state, GAME.validate, state, p, o)


@SETTINGS
@given(seed=st.integers(0, 10**6), value=json_values)
def test_a21_resolution_survives_mutated_orders(seed: int, value: Any) -> None:
    state = _states()[1]
    rnd = random.Random(seed)
    orders = {p: _mutate(random_orders(view(state, p), rnd), rnd, value) for p in range(state.players)}
    before = state_hash(state)
    new, _ = GAME.resolve(state, orders)
    assert state_hash(state) == before  # resolve never mutates its input
    assert new.round == state.round + 1


@SETTINGS
@given(player=players_arg, give=json_values, get=json_values, times=st.one_of(st.integers(-3, 10**9), json_values))
def test_a52_bank_arbitrary_arguments(player: Any, give: Any, get: Any, times: Any) -> None:
    state = _states()[1]
    _assert_safe(state, bank, state, player, give, get, times)


@SETTINGS
@given(player=players_arg, to=players_arg, give=json_values, get=json_values)
def test_a53_offer_arbitrary_arguments(player: Any, to: Any, give: Any, get: Any) -> None:
    state = _states()[1]
    _assert_safe(state, offer, state, player, to, give, get)


@SETTINGS
@given(player=players_arg, offer_id=st.one_of(st.sampled_from(["o1", "o2", "o0", ""]), json_values))
def test_a53_accept_arbitrary_arguments(player: Any, offer_id: Any) -> None:
    state = _states()[1]
    _assert_safe(state, accept_offer, state, player, offer_id)


@SETTINGS
@given(player=players_arg, text=json_values, to=players_arg)
def test_a53_chat_arbitrary_arguments(player: Any, text: Any, to: Any) -> None:
    state = _states()[1]
    _assert_safe(state, chat, state, player, text, to)


action_kinds = st.sampled_from(["bank", "offer", "accept", "chat", "trade", ""])
action_fields = st.dictionaries(st.sampled_from(["give", "get", "times", "to", "offer", "text", "extra"]),
                                json_values, max_size=4)
actions = st.one_of(json_values, st.dictionaries(action_kinds, st.one_of(action_fields, json_values),
                                                 min_size=1, max_size=2))


@SETTINGS
@given(player=players_arg, action=actions, which=st.integers(0, 1))
def test_a53_act_arbitrary_actions(player: Any, action: Any, which: int) -> None:
    state = _states()[which]
    _assert_safe(state, GAME.act, state, player, action)
