"""What a game actor queues for notifications (services/actor_notify.py), over the in-memory journal
with a fake clock: per kind, to whom, once, and the deadline warning on the wake-up timer. Delivery is
tests/services/test_notify_flow.py; the served cluster's is tests/e2e/test_notify_e2e.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from services.game_actor import GameActor
from services.notify.config import WarnPolicy
from tests.engine import toygame
from tests.fakes import FakeClock, MemoryJournal

PASS: dict[str, Any] = {"pass": {}}


@pytest.fixture(autouse=True, scope="module")
def toy_registered() -> Iterator[None]:
    with toygame.registered():
        yield


def got(store: MemoryJournal, since: int = 0) -> list[tuple[int, str, str]]:
    return [(n.seat, n.kind, n.key) for _, n in store.notices[since:]]


async def toy(clock: FakeClock, store: MemoryJournal, fill: bool = False) -> GameActor:
    actor = GameActor("t1", store, now_ms=clock)
    await actor.create(kind=toygame.NAME, config={"players": 3}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=40, code="TOYTOY")
    if not fill:
        await actor.join("bob", "h1")
        await actor.join("cat", "h2")
    await actor.start(0, fill)
    return actor


async def test_notify_turns_tell_the_active_player_and_windows_each_seat_that_may_answer() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await toy(clock, store)
    assert got(store) == [(0, "game_started", "0"), (1, "game_started", "0"), (2, "game_started", "0"),
                          (0, "your_turn", "1")]
    n = len(store.notices)
    await actor.action(0, {"add": {"n": 1}})  # a window opens for seats 1 and 2 (T2)
    window = actor.deadline_ms
    assert got(store, n) == [(1, "your_decision", f"1.{window}"), (2, "your_decision", f"1.{window}")]
    n = len(store.notices)
    await actor.action(2, PASS)
    assert got(store, n) == [], "the same window, fewer seats: nothing new"
    await actor.action(1, PASS)
    assert got(store, n) == [(1, "your_turn", "2")]


async def test_notify_the_deadline_warning_comes_once_before_a_turn_deadline_and_never_for_short_windows() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await toy(clock, store)
    deadline = actor.deadline_ms
    assert deadline is not None
    assert actor.wake_ms() == deadline - 15_000, "a 40 s turn: warned 15 s before (fast)"
    n = len(store.notices)
    clock.advance(24)
    assert not await actor.deadline_passed() and got(store, n) == []
    clock.advance(1)
    assert not await actor.deadline_passed()
    assert got(store, n) == [(0, "deadline", f"1.{deadline}")]
    assert actor.wake_ms() == deadline, "next: the deadline itself"
    assert not await actor.deadline_passed() and len(store.notices) == n + 1, "once"
    await actor.action(0, {"add": {"n": 1}})
    assert actor.wake_ms() == actor.deadline_ms, "a 5 s response window gets no warning"


async def test_notify_autopilot_seats_hear_nothing() -> None:
    store, clock = MemoryJournal(), FakeClock()
    await toy(clock, store, fill=True)
    assert {seat for seat, _, _ in got(store)} == {0}


async def test_notify_a_lobby_that_expires_notifies_nobody() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor("t2", store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=60, code="LOBBYX")
    clock.advance(24 * 3600 + 1)
    assert await actor.deadline_passed() and actor.status == "over"
    assert store.notices == []


async def archipelago(clock: FakeClock, store: MemoryJournal) -> GameActor:
    actor = GameActor("a1", store, now_ms=clock)
    await actor.create(kind="archipelago", config={"players": 3}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=8 * 3600, code="ARCHIP")
    await actor.join("bob", "h1")
    await actor.join("cat", "h2")
    await actor.start(0, False)
    return actor


async def test_notify_a53_trade_offers_and_private_chat_reach_the_addressee_alone_once_a_round() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await archipelago(clock, store)
    assert got(store) == [(s, "game_started", "0") for s in range(3)] + [(s, "your_turn", "0") for s in range(3)]
    n = len(store.notices)
    await actor.act(0, {"chat": {"text": "all of you"}})
    assert got(store, n) == [], "chat to everyone: no notification"
    await actor.act(0, {"chat": {"text": "psst", "to": 2}})
    await actor.act(1, {"chat": {"text": "and again", "to": 2}})
    await actor.act(0, {"offer": {"to": 1, "give": {"wood": 1}, "get": {"iron": 1}}})
    await actor.act(0, {"offer": {"give": {"wood": 1}, "get": {"iron": 1}}})  # open to all: not addressed
    assert got(store, n) == [(2, "private_chat", "0"), (1, "trade_offer", "0")], "one of each per round"
    chat, offer = store.notices[n][1], store.notices[n + 1][1]
    assert chat.who == "ann" and offer.who == "ann"


async def test_notify_a_slow_round_warns_an_hour_before_only_who_has_not_submitted() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await archipelago(clock, store)
    deadline = actor.deadline_ms
    assert deadline is not None and actor.wake_ms() == deadline - 3600_000
    view = await actor.view(1)
    await actor.submit(1, {}, version=view["version"], key="k")
    await actor.submit(2, {}, version=view["version"], key="d", draft=True)  # a draft is not a submission
    n = len(store.notices)
    clock.advance(7 * 3600)
    assert not await actor.deadline_passed()
    assert got(store, n) == [(0, "deadline", "0"), (2, "deadline", "0")]


def test_notify_warn_policy_reads_slow_and_fast_steps() -> None:
    policy = WarnPolicy()
    assert policy.before(8 * 3600) == 3600 and policy.before(2 * 3600) == 3600
    assert policy.before(120) == 15 and policy.before(30) == 15
    assert policy.before(29) is None and policy.before(15) is None
    custom = WarnPolicy.from_env({"ARCHIPELAGO_NOTIFY_WARN_FAST_S": "2", "ARCHIPELAGO_NOTIFY_FAST_FROM_S": "4"})
    assert custom.before(5) == 2 and custom.before(3) is None
