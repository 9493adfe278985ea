"""A turn-based game hosted by a game actor, end to end over the in-memory journal with a fake clock:
the toy count game of :mod:`tests.engine.toygame` (rules T1–T6), registered for this module only.
Turn actions, window answers and passes, idempotency keys, NotYourTurn, the step's deadlines and the
autopilot at a deadline, autopilot seats, watch updates, reload from the journal, game over."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.base import STEP_OVER
from engine.errors import GameOver, KeyReused, NotYourTurn, StaleVersion
from services.game_actor import OVER, RUNNING, GameActor
from tests.engine import toygame
from tests.fakes import FakeClock, MemoryJournal

GID = "t1"
DEADLINE_S = 40  # a turn: 40 s; a response window: 5 s (an eighth)
ADD = {"add": {"n": 1}}
ANSWER: dict[str, Any] = {"answer": {}}
PASS: dict[str, Any] = {"pass": {}}


@pytest.fixture(autouse=True, scope="module")
def toy_registered() -> Iterator[None]:
    with toygame.registered():
        yield


async def new_game(clock: FakeClock, store: MemoryJournal, players: int = 3, fill: bool = False,
                   **cfg: Any) -> GameActor:
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind=toygame.NAME, config={"players": players, **cfg}, nickname="ann", secret_hash="h0",
                       public=False, deadline_s=DEADLINE_S, code="TOYTOY")
    if not fill:
        for i, name in enumerate(["bob", "cat"][:players - 1], 1):
            await actor.join(name, f"h{i}")
    await actor.start(0, fill)
    return actor


def entries(store: MemoryJournal) -> list[dict[str, Any]]:
    import json

    return [json.loads(e) for e in store.journals[GID]]


def step_of(actor: GameActor) -> dict[str, Any]:
    assert actor.current_step is not None
    return {**actor.current_step.to_dict(), "deadline_unix_ms": actor.deadline_ms}


async def test_t2_t3_turn_then_window_then_next_turn_with_deadlines_by_step() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    start = clock()
    view = await actor.view(0)
    assert view["step"] == {"kind": "turn", "players": [0], "active": 0, "deadline": "turn",
                            "deadline_unix_ms": start + DEADLINE_S * 1000}
    assert view["expected"] and not (await actor.view(1))["expected"]
    clock.advance(2)
    ack = await actor.action(0, {"add": {"n": 2}}, key="a")
    assert ack == {"version": actor.version, "replayed": False}
    assert entries(store)[-1] == {"op": "action", "seat": 0, "action": {"add": {"n": 2}}, "key": "a",
                                  "request": entries(store)[-1]["request"], "auto": False, "at": clock()}
    window_opened = clock()
    assert step_of(actor) == {"kind": "window", "players": [1, 2], "active": 0, "deadline": "response",
                              "deadline_unix_ms": window_opened + DEADLINE_S * 1000 // 8}
    assert (await actor.view(2))["expected"] and not (await actor.view(0))["expected"]
    clock.advance(1)
    await actor.action(2, PASS)  # T3: in any order
    assert step_of(actor)["players"] == [1]
    assert actor.deadline_ms == window_opened + DEADLINE_S * 1000 // 8  # the same window: its deadline stands
    await actor.action(1, PASS)
    assert actor.state.round == 2 and actor.state.count == 2
    assert step_of(actor) == {"kind": "turn", "players": [1], "active": 1, "deadline": "turn",
                              "deadline_unix_ms": clock() + DEADLINE_S * 1000}
    assert actor.round_version == actor.version


async def test_t3_an_answer_gives_the_turn_back_with_a_new_turn_deadline() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    await actor.action(0, {"add": {"n": 3}})
    clock.advance(3)
    await actor.action(1, ANSWER)
    assert actor.state.count == 2 and actor.state.scores == (0, 1) and actor.state.round == 1
    assert step_of(actor) == {"kind": "turn", "players": [0], "active": 0, "deadline": "turn",
                              "deadline_unix_ms": clock() + DEADLINE_S * 1000}


async def test_watchers_hear_each_action_and_the_step_cut_to_their_audience() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    await actor.action(0, ADD)
    await actor.action(1, PASS)
    await actor.action(2, PASS)  # seat 1's turn: "your_turn" to seat 1 only
    for seat in (0, 1, 2):
        ups = actor.updates_since(seat, 0)
        assert [u["seq"] for u in ups] == list(range(1, len(ups) + 1))
        kinds = [(u["kind"], u.get("event_kind", "")) for u in ups]
        assert kinds[kinds.index(("started", "")):] == [
            ("started", ""), ("round_opened", ""), ("step", ""),
            ("event", "added"), ("step", ""),
            ("event", "passed"), ("step", ""),
            ("event", "passed"), *([("event", "your_turn")] if seat == 1 else []), ("round_opened", ""), ("step", "")]
        steps = [u["data"] for u in ups if u["kind"] == "step"]
        assert [(s["kind"], s["players"], s["active"]) for s in steps] == [
            ("turn", [0], 0), ("window", [1, 2], 0), ("window", [2], 0), ("turn", [1], 1)]
        assert steps[-1]["deadline_unix_ms"] == actor.deadline_ms and steps[-1]["deadline"] == "turn"


async def test_t4_a_seat_outside_the_step_is_refused_and_nothing_is_journaled() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    length = len(store.journals[GID])
    with pytest.raises(NotYourTurn) as err:
        await actor.action(1, ADD)  # seat 0's turn
    assert err.value.rule == "T4" and err.value.code == "order/not_your_turn"
    await actor.action(0, ADD)
    length = len(store.journals[GID])
    with pytest.raises(NotYourTurn) as err:
        await actor.action(0, PASS)  # the active seat has no window to answer
    assert err.value.rule == "T4"
    with pytest.raises(NotYourTurn) as err:  # a turn game has no rounds of orders
        await actor.submit(1, {}, version=actor.version)
    assert err.value.rule == "A16" and err.value.field == "orders"
    assert len(store.journals[GID]) == length


async def test_a16_a_simultaneous_game_takes_no_turn_actions() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    await actor.start(0, True)
    assert (await actor.view(0))["step"] == {"kind": "simultaneous", "players": [0, 1], "active": -1,
                                             "deadline": "round", "deadline_unix_ms": actor.deadline_ms}
    length = len(store.journals[GID])
    with pytest.raises(NotYourTurn) as err:
        await actor.action(0, {"shots": ["A1"]})
    assert err.value.rule == "A16" and err.value.field == "action" and len(store.journals[GID]) == length
    assert "step" not in {u["kind"] for u in actor.updates_since(0, 0)}  # a round game's updates are as before


async def test_a16_an_action_key_applies_once_and_survives_the_turn_it_ended() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    first = await actor.action(0, ADD, key="k")
    length = len(store.journals[GID])
    again = await actor.action(0, ADD, key="k")
    assert again == {**first, "replayed": True} and len(store.journals[GID]) == length
    with pytest.raises(KeyReused) as err:
        await actor.action(0, {"add": {"n": 2}}, key="k")
    assert err.value.field == "idempotency_key"
    ended = await actor.action(1, PASS, key="w")  # ends the window and the round: seat 1's turn
    assert actor.state.round == 2
    assert await actor.action(1, PASS, key="w") == {**ended, "replayed": True}
    assert len(store.journals[GID]) == length + 1


async def test_a16_a_retried_action_is_a_replay_turns_later_and_after_a_reload() -> None:
    """A turn game's round is one turn: a retry whose turn has moved on (a lost answer, a restarted
    shard) must not be applied again — its key is still known, and is after a reload."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    first = await actor.action(0, ADD, key="t1-add")
    await actor.action(1, PASS, key="t1-pass")  # seat 1's turn now
    await actor.action(1, ADD, key="t2-add")
    await actor.action(0, PASS, key="t2-pass")  # seat 0's turn again: two rounds later
    assert actor.state.round == 3
    length = len(store.journals[GID])
    assert await actor.action(0, ADD, key="t1-add") == {**first, "replayed": True}
    reloaded = await GameActor.load(GID, store, now_ms=clock)
    assert await reloaded.action(1, PASS, key="t1-pass") == {"version": first["version"] + 1, "replayed": True}
    assert len(store.journals[GID]) == length, "nothing journaled for the retries"


async def test_a16_an_action_naming_an_older_step_is_stale() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    seen = actor.version
    await actor.action(0, ADD, version=seen)
    with pytest.raises(StaleVersion) as err:
        await actor.action(1, PASS, version=seen)
    assert err.value.field == "version"
    await actor.action(1, PASS, version=actor.version)


async def test_m25_at_the_turn_deadline_the_autopilot_plays_and_finishes_the_turn() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=3)
    assert not await actor.deadline_passed()
    clock.advance(DEADLINE_S)
    assert await actor.deadline_passed()
    auto = [e for e in entries(store) if e["op"] == "action"]
    assert [(e["seat"], e["action"], e["auto"], e["key"]) for e in auto] == [(0, ADD, True, "")]
    assert step_of(actor) == {"kind": "window", "players": [1, 2], "active": 0, "deadline": "response",
                              "deadline_unix_ms": clock() + DEADLINE_S * 1000 // 8}
    await actor.action(1, ANSWER)  # the turn goes back to seat 0, whose turn the autopilot took over
    await actor.action(2, PASS)
    assert step_of(actor)["kind"] == "turn" and actor.deadline_ms == clock()  # at once, no new turn deadline
    assert await actor.deadline_passed()
    assert [(e["seat"], e["auto"]) for e in entries(store) if e["op"] == "action"][-1] == (0, True)
    assert step_of(actor)["kind"] == "window" and step_of(actor)["players"] == [2]  # seat 1 answered already


async def test_m25_the_view_says_the_autopilot_played_until_the_player_acts_again() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    assert not (await actor.view(0))["autopilot_played"]
    clock.advance(DEADLINE_S)
    assert await actor.deadline_passed()  # seat 0's turn: the autopilot plays it
    assert (await actor.view(0))["autopilot_played"] and not (await actor.view(1))["autopilot_played"]
    reloaded = await GameActor.load(GID, store, now_ms=clock)
    assert (await reloaded.view(0))["autopilot_played"], "derived from the journal"
    while 0 not in (step := actor.current_step or STEP_OVER).players:  # seat 1 plays on: nothing changes for 0
        await actor.action(step.players[0], ADD if step.kind == "turn" else PASS)
        assert (await actor.view(0))["autopilot_played"] and not (await actor.view(1))["autopilot_played"]
    step = actor.current_step or STEP_OVER
    await actor.action(0, ADD if step.kind == "turn" else PASS)  # seat 0 acts itself again
    assert not (await actor.view(0))["autopilot_played"]


async def test_m25_the_autopilot_log_lists_the_actions_it_took_in_the_player_s_turn() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2)
    turn = actor.state.round
    clock.advance(DEADLINE_S)
    assert await actor.deadline_passed()  # seat 0's turn: the autopilot plays it
    auto = [e["action"] for e in entries(store) if e["op"] == "action" and e.get("auto") and e["seat"] == 0]
    assert auto, "the autopilot acted"
    log0 = (await actor.view(0))["autopilot_log"]
    assert log0 == [{"round": turn, "source": "autopilot", toygame.NAME: {"actions": auto}}], log0
    assert (await actor.view(1))["autopilot_log"] == [], "seat 1's view holds nothing of seat 0's"
    reloaded = await GameActor.load(GID, store, now_ms=clock)
    assert (await reloaded.view(0))["autopilot_log"] == log0, "rebuilt from the journal"


async def test_m25_at_a_window_deadline_every_seat_left_passes() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=3)
    await actor.action(0, {"add": {"n": 2}})
    clock.advance(DEADLINE_S / 8 - 1)
    assert not await actor.deadline_passed()
    clock.advance(1)
    assert await actor.deadline_passed()
    assert [(e["seat"], e["action"], e["auto"]) for e in entries(store)[-2:]] == [(1, PASS, True), (2, PASS, True)]
    assert actor.state.round == 2 and step_of(actor) == {"kind": "turn", "players": [1], "active": 1,
                                                         "deadline": "turn",
                                                         "deadline_unix_ms": clock() + DEADLINE_S * 1000}


async def test_step_deadlines_come_from_the_config_when_it_gives_them() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2, deadlines={"turn": 90, "response": 2})
    assert actor.deadline_ms == clock() + 90_000
    await actor.action(0, ADD)
    assert actor.deadline_ms == clock() + 2_000


async def test_a4_autopilot_seats_act_at_once() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2, fill=True)
    assert actor.seats[1].bot
    await actor.action(0, ADD)  # seat 1 (autopilot) passes, then takes its turn and adds
    auto = [(e["seat"], e["action"]) for e in entries(store) if e["op"] == "action" and e["auto"]]
    assert auto == [(1, PASS), (1, ADD)]
    assert step_of(actor)["kind"] == "window" and step_of(actor)["players"] == [0]
    assert actor.state.round == 2 and actor.state.count == 2


async def test_reload_from_the_journal_gives_the_same_game() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=3)
    await actor.action(0, ADD, key="x")
    await actor.action(1, ANSWER, key="y")
    clock.advance(DEADLINE_S / 8)
    await actor.deadline_passed()  # seat 2 passes: seat 0 adds again
    await actor.act(2, {"chat": {"text": "hi"}})
    clock.advance(DEADLINE_S)
    await actor.deadline_passed()  # the autopilot adds for seat 0, which is now overdue
    again = await GameActor.load(GID, store, now_ms=clock)
    assert again.version == actor.version and again.state.to_dict() == actor.state.to_dict()
    assert again.current_step == actor.current_step and again.deadline_ms == actor.deadline_ms
    assert again.step_version == actor.step_version and again.round_version == actor.round_version
    assert again.keys == actor.keys and again.overdue == actor.overdue == {0}
    assert [u.to_dict(s) for u in again.updates for s in (0, 1, 2)] == [
        u.to_dict(s) for u in actor.updates for s in (0, 1, 2)]


async def test_t5_the_game_ends_on_the_target_and_takes_no_more_actions() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=2, target=4)
    await actor.action(0, {"add": {"n": 3}})
    await actor.action(1, PASS)
    await actor.action(1, {"add": {"n": 1}})
    assert actor.status == OVER and actor.deadline_ms is None
    assert actor.outcome == {"winners": [1], "draw": False, "reason": "target", "scores": [0, 0]}
    assert GID in store.retired and store.summaries[GID]["status"] == OVER
    view = await actor.view(0)
    assert view["step"] == {"kind": "over", "players": [], "active": -1, "deadline": "", "deadline_unix_ms": 0}
    assert [u["kind"] for u in actor.updates_since(0, 0)][-1] == "game_over"
    with pytest.raises(GameOver):
        await actor.action(0, ADD)
    assert not await actor.deadline_passed()


async def test_t5_a_game_of_autopilots_plays_to_its_end_on_deadlines() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, players=3, target=6)
    for _ in range(100):
        if actor.status != RUNNING:
            break
        assert actor.deadline_ms is not None
        clock.ms = max(clock.ms, actor.deadline_ms)
        assert await actor.deadline_passed()
    assert actor.status == OVER and actor.outcome is not None and actor.outcome["reason"] == "target"
    again = await GameActor.load(GID, store, now_ms=clock)
    assert again.state.to_dict() == actor.state.to_dict() and again.status == OVER
