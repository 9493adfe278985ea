"""Game actor logic with an in-memory journal and a fake clock (fast; tests/e2e runs it for real)."""

from __future__ import annotations

import pytest

from engine.errors import (
    AlreadyExists,
    Conflict,
    InvalidOrder,
    NotYourTurn,
    PermissionDenied,
    RateLimited,
    StaleVersion,
)
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
    assert [u.to_dict() for u in again.updates] == [u.to_dict() for u in actor.updates]


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
    with pytest.raises(NotYourTurn):
        await actor.submit(0, {"shots": ["A1"]}, version=actor.version)


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
        await actor.chat(1, f"hello {i}")
    with pytest.raises(RateLimited) as err:
        await actor.chat(1, "one too many")
    assert err.value.rule == "A53"
    clock.advance(31)
    await actor.deadline_passed()
    await actor.chat(1, "a new round, a new allowance")


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
