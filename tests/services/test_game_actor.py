"""Game actor logic with an in-memory journal and a fake clock (fast; tests/e2e runs it for real)."""

from __future__ import annotations

import json

import pytest

from engine.errors import (
    AlreadyExists,
    Conflict,
    GameOver,
    InvalidOrder,
    KeyReused,
    NotStarted,
    PermissionDenied,
    RateLimited,
    StaleVersion,
)
from services import actor_core
from services.game_actor import OVER, RUNNING, GameActor
from tests.fakes import FakeClock, MemoryJournal

GID = "g1"


async def new_game(clock: FakeClock, store: MemoryJournal, **cfg: object) -> GameActor:
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2, **cfg}, nickname="ann", secret_hash="h0",
                       public=True, deadline_s=30, code="ABCDEF")
    await actor.join("bob", "h1")
    await actor.start(0, False)
    return actor


async def test_a2_nickname_must_be_unique_and_printable() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    with pytest.raises(AlreadyExists):
        await actor.join("ann", "h1")
    with pytest.raises(InvalidOrder) as err:
        await actor.join("x" * 25, "h1")
    assert err.value.field == "nickname" and err.value.rule == "A2"
    assert len(actor.seats) == 1


async def test_a4_only_the_host_starts_and_only_when_full() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    with pytest.raises(Conflict):
        await actor.start(0, False)
    await actor.join("bob", "h1")
    with pytest.raises(PermissionDenied):
        await actor.start(1, False)
    await actor.start(0, False)
    assert actor.status == RUNNING
    with pytest.raises(Conflict):
        await actor.join("cat", "h2")


async def test_a4_fill_with_autopilot_starts_early() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    await actor.start(0, True)
    assert actor.status == RUNNING and actor.seats[1].bot


async def test_a17_round_closes_early_when_every_connected_player_submitted() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    assert actor.state.round == 0
    await actor.submit(1, {"random_placement": True}, version=actor.version)
    assert actor.state.round == 1


async def test_a17_with_nobody_connected_the_round_waits_for_the_deadline() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    await actor.submit(1, {"random_placement": True}, version=actor.version)
    assert actor.state.round == 0
    assert not await actor.deadline_passed()
    clock.advance(30)
    assert await actor.deadline_passed()
    assert actor.state.round == 1


async def test_s9_absent_player_is_played_by_the_autopilot_at_the_deadline() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    clock.advance(31)
    assert await actor.deadline_passed()
    view1 = await actor.view(1)
    assert view1["view"]["fleet"], "the autopilot placed the absent player's fleet"
    shots_before = len(view1["view"]["shots"])
    await actor.submit(0, {"shots": ["A1"]}, version=actor.version)
    clock.advance(31)
    assert await actor.deadline_passed()
    view1 = await actor.view(1)
    assert len(view1["view"]["shots"]) > shots_before, "the autopilot fired for the absent player"


async def test_stale_version_is_refused_and_changes_nothing() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    old = actor.version
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=old)
    await actor.submit(1, {"random_placement": True}, version=old)
    length = len(store.journals[GID])
    with pytest.raises(StaleVersion) as err:
        await actor.submit(0, {"shots": ["A1"]}, version=old)
    assert err.value.field == "version"
    assert len(store.journals[GID]) == length


async def test_idempotency_key_applies_once() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    a = await actor.submit(0, {"random_placement": True}, version=actor.version, key="k1")
    length = len(store.journals[GID])
    b = await actor.submit(0, {"random_placement": True}, version=actor.version, key="k1")
    assert b["replayed"] and not a["replayed"] and b["version"] == a["version"]
    assert len(store.journals[GID]) == length


async def test_reload_from_journal_gives_the_same_game() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version, key="a")
    await actor.submit(1, {"random_placement": True}, version=actor.version)
    await actor.submit(0, {"shots": ["B2", "C3"]}, version=actor.version, draft=True)
    again = await GameActor.load(GID, store, now_ms=clock)
    assert again.version == actor.version and again.round_version == actor.round_version
    assert again.state.to_dict() == actor.state.to_dict()
    assert again.submissions == actor.submissions and again.keys == actor.keys
    assert again.deadline_ms == actor.deadline_ms
    assert [u.to_dict(s) for u in again.updates for s in (0, 1)] == [u.to_dict(s) for u in actor.updates
                                                                     for s in (0, 1)]


async def test_updates_are_cut_to_their_audience() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    await actor.submit(1, {"random_placement": True}, version=actor.version)
    await actor.submit(0, {"shots": ["A1", "B1"]}, version=actor.version)
    await actor.submit(1, {"shots": ["J10"]}, version=actor.version)
    for seat in (0, 1):
        for u in actor.updates_since(seat, 0):
            if u["kind"] == "event" and u["event_kind"] == "salvo_report":
                assert u["data"].get("shooter", seat) == seat


async def test_game_over_stops_the_clock() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store, max_rounds=1)
    clock.advance(31)
    await actor.deadline_passed()  # placement round
    clock.advance(31)
    await actor.deadline_passed()  # round 1 hits the cap
    assert actor.status == OVER and actor.deadline_ms is None and actor.outcome is not None
    assert store.summaries[GID]["status"] == OVER  # the public summary no longer says "running"
    with pytest.raises(GameOver) as err:  # defect 5: "game over", not "not your turn"
        await actor.submit(0, {"shots": ["A1"]}, version=actor.version)
    assert err.value.code == "game/over" and err.value.rule == "S7" and err.value.field == "game_id"
    with pytest.raises(GameOver):
        await actor.act(0, chat("gg"))


async def test_a16_resubmission_is_allowed_but_bounded_per_round() -> None:
    from services.game_actor import SUBMISSIONS_PER_ROUND

    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    for i in range(SUBMISSIONS_PER_ROUND):
        ack = await actor.submit(0, {"random_placement": True}, version=actor.version, draft=i % 2 == 0)
    assert ack["submitted"]  # the last submission stands (A16)
    length = len(store.journals[GID])
    with pytest.raises(RateLimited) as err:
        await actor.submit(0, {"random_placement": True}, version=actor.version)
    assert err.value.rule == "A16" and len(store.journals[GID]) == length
    await actor.submit(1, {"random_placement": True}, version=actor.version)  # others are not affected


async def test_a53_eleventh_chat_message_of_a_round_is_refused() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    for i in range(10):
        await actor.act(1, chat(f"hello {i}"))
    length = len(store.journals[GID])
    with pytest.raises(RateLimited) as err:
        await actor.act(1, chat("one too many"))
    assert err.value.rule == "A53" and len(store.journals[GID]) == length
    clock.advance(31)
    await actor.deadline_passed()
    await actor.act(1, chat("a new round, a new allowance"))


async def test_retried_create_and_join_change_nothing_but_restore_the_secret_index() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    spec = {"kind": "salvo", "config": {"players": 2}, "nickname": "ann", "secret_hash": "h0", "public": False,
            "deadline_s": 30, "code": "ABCDEF"}
    await actor.create(**spec)  # type: ignore[arg-type]
    first = await actor.join("bob", "h1")
    length = len(store.journals[GID])
    store.secrets.clear()  # as if the shard died after journaling, before indexing the secrets
    await actor.create(**spec)  # type: ignore[arg-type]
    again = await actor.join("bob", "h1")
    assert again == first and len(store.journals[GID]) == length and len(actor.seats) == 2
    assert store.secrets == {"h0": (GID, 0), "h1": (GID, 1)}


def chat(text: str) -> dict[str, object]:
    return {"chat": {"text": text}}


async def test_a16_idempotency_keys_belong_to_one_player() -> None:
    """Defect 2: B's submission with A's key is B's own, not a replay of A's answer."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    a = await actor.submit(0, {"random_placement": True}, version=actor.version, key="k", draft=True)
    b = await actor.submit(1, {"random_placement": True}, version=actor.version, key="k", draft=True)
    assert not a["replayed"] and not b["replayed"] and b["version"] == a["version"] + 1
    assert set(actor.submissions) == {0, 1}


async def test_a16_a_key_resent_with_other_orders_is_refused() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    await actor.submit(0, {"random_placement": True}, version=actor.version, key="k", draft=True)
    again = await actor.submit(0, {"random_placement": True}, version=actor.version, key="k", draft=True)
    assert again["replayed"]
    length = len(store.journals[GID])
    with pytest.raises(KeyReused) as err:
        await actor.submit(0, {"random_placement": True}, version=actor.version, key="k", draft=False)
    assert err.value.field == "idempotency_key" and err.value.code == "request/key_reused"
    assert len(store.journals[GID]) == length and actor.submissions[0].draft


async def test_a16_a_key_of_last_round_is_not_replayed_in_this_one() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    first = await actor.submit(0, {"random_placement": True}, version=actor.version, key="same", draft=True)
    clock.advance(31)
    await actor.deadline_passed()  # round 0 closes; round 1 opens
    with pytest.raises(StaleVersion):  # the old request, retried late: its version is stale
        await actor.submit(0, {"random_placement": True}, version=first["version"], key="same")
    fresh = await actor.submit(0, {"shots": ["A1"]}, version=actor.version, key="same", draft=True)
    assert not fresh["replayed"] and fresh["round"] == 1


async def test_a16_a_version_from_the_future_is_refused() -> None:
    """Defect 3: the version is checked on both sides."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    length = len(store.journals[GID])
    for version in (actor.version + 1, 2**63 - 1):
        with pytest.raises(InvalidOrder) as err:
            await actor.submit(0, {"random_placement": True}, version=version)
        assert err.value.field == "version" and err.value.rule == "A16"
    assert len(store.journals[GID]) == length and not actor.submissions


async def test_a4_nothing_is_played_before_the_start() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    with pytest.raises(NotStarted) as err:
        await actor.submit(0, {"random_placement": True}, version=actor.version)
    assert err.value.code == "game/not_started" and err.value.rule == "A4"


async def play_rounds(actor: GameActor, clock: FakeClock, store: MemoryJournal) -> None:
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    await actor.act(1, chat("hi"))
    await actor.submit(1, {"random_placement": True}, version=actor.version)
    await actor.submit(0, {"shots": ["A1", "B1", "C1"]}, version=actor.version)
    await actor.submit(1, {"shots": ["J10"]}, version=actor.version)


async def test_every_update_has_its_own_seq_per_player_with_no_gap() -> None:
    """Defect 4: a round close and its events no longer share one resume point."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    await play_rounds(actor, clock, store)
    for seat in (0, 1):
        ups = actor.updates_since(seat, 0)
        assert [u["seq"] for u in ups] == list(range(1, len(ups) + 1)) == list(range(1, actor.seq[seat] + 1))
        closes = [i for i, u in enumerate(ups) if u["kind"] == "round_closed"]
        assert closes and all(ups[i + 1]["version"] == ups[i]["version"] for i in closes)  # shared version
        for k in range(len(ups) + 1):  # resuming from any point gives exactly the rest
            assert actor.updates_since(seat, k) == ups[k:]
    own = {u["event_kind"] for u in actor.updates_since(0, 0) if u["kind"] == "event"}
    other = {u["event_kind"] for u in actor.updates_since(1, 0) if u["kind"] == "event"}
    assert own and other


async def test_round_numbers_of_a_close_its_events_and_the_next_round() -> None:
    """Defect 6: round_closed and its events name the closed round; round_opened the new one."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    await play_rounds(actor, clock, store)
    ups = actor.updates_since(0, 0)
    kinds = [(u["kind"], u["round"]) for u in ups if u["kind"] in ("round_closed", "event", "round_opened")]
    assert kinds[0] == ("round_opened", 0)
    closed_at = kinds.index(("round_closed", 1))
    assert all(r == 1 for k, r in kinds[closed_at:] if k == "event")
    assert kinds[-1] == ("round_opened", 2)
    opened = [u for u in ups if u["kind"] == "round_opened"][-1]
    assert opened["data"]["deadline_unix_ms"] == actor.deadline_ms


async def test_expected_is_false_once_submitted() -> None:
    """Defect 6: `expected` means "still to submit"."""
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    assert (await actor.view(0))["expected"]
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    assert not (await actor.view(0))["expected"]
    await actor.submit(0, {"random_placement": True}, version=actor.version, draft=True)
    assert (await actor.view(0))["expected"]  # withdrawn (A16): a draft is not done


async def test_old_updates_are_dropped_with_a_resync() -> None:
    from collections import deque

    from services import game_actor

    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    actor.updates = deque(list(actor.updates)[-2:], maxlen=game_actor.MAX_UPDATES)
    ups = actor.updates_since(0, 0)
    assert ups[0]["kind"] == "resync" and ups[0]["seq"] == ups[1]["seq"] - 1
    assert [u["seq"] for u in ups[1:]] == [actor.seq[0] - 1, actor.seq[0]]


async def test_a70_the_autopilot_log_says_what_the_autopilot_played_for_that_player_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actor_core, "AUTOLOG_KEPT", 3)
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(clock, store)
    store.present |= {(GID, 0), (GID, 1)}
    await actor.submit(0, {"random_placement": True}, version=actor.version)
    clock.advance(31)
    assert await actor.deadline_passed()  # round 0: the autopilot places seat 1's fleet
    log1 = (await actor.view(1))["autopilot_log"]
    assert [(t["round"], t["source"]) for t in log1] == [(0, "autopilot")]
    closed = [json.loads(e) for e in store.journals[GID] if json.loads(e)["op"] == "close"]
    assert log1[0]["salvo"] == closed[0]["orders"]["1"], "what it played, as the journal holds it"
    assert (await actor.view(0))["autopilot_log"] == [], "seat 0 played its own round and sees nothing of 1's"
    for _ in range(40):  # nobody plays on: the autopilot plays both, until the game ends
        if actor.status != RUNNING:
            break
        clock.advance(31)
        assert await actor.deadline_passed()
    closed = [json.loads(e) for e in store.journals[GID] if json.loads(e)["op"] == "close"]
    kept = actor_core.AUTOLOG_KEPT  # (3 here: a game's seed is random, and one may end in 5 rounds)
    assert len(closed) > kept, "enough rounds to see the bound"
    log1 = (await actor.view(1))["autopilot_log"]
    assert [t["round"] for t in log1] == [c["round"] for c in closed][-kept:], "the latest ones, oldest first"
    assert [t["salvo"] for t in log1] == [c["orders"]["1"] for c in closed][-kept:]
    reloaded = await GameActor.load(GID, store, now_ms=clock)
    assert (await reloaded.view(1))["autopilot_log"] == log1, "rebuilt from the journal"


async def test_a70_the_log_lists_a_round_the_standing_orders_completed_and_not_one_they_left_alone() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="archipelago", config={"players": 2}, nickname="ann", secret_hash="h0",
                       public=True, deadline_s=30, code="ABCDEF")
    await actor.join("bob", "h1")
    await actor.start(0, False)
    store.present |= {(GID, 0), (GID, 1)}
    for seat in (0, 1):  # round 0: both deploy as they stand (A15)
        await actor.submit(seat, {}, version=actor.version)
    await actor.set_standing(0, {"posture": "hold", "bonus": "food"})
    for seat in (0, 1):  # round 1: ann's orders have no bonus: her standing one fills it
        await actor.submit(seat, {}, version=actor.version)
    log0 = (await actor.view(0))["autopilot_log"]
    assert [(t["round"], t["source"], t["archipelago"].get("bonus")) for t in log0] == [(1, "standing_orders", "food")]
    for seat, orders in ((0, {"bonus": "iron"}), (1, {})):  # round 2: nothing left for them to fill
        await actor.submit(seat, orders, version=actor.version)
    assert (await actor.view(0))["autopilot_log"] == log0, "a round her own orders covered is not listed"
    assert (await actor.view(1))["autopilot_log"] == [], "bob submitted every round and has no standing orders"
