"""What the operators' door (issue 13) asks of a game and a shard: end a game now, list a shard's games,
inspect one — a game actor with an in-memory journal and a fake clock, a ShardCore on a real
redis-server."""

from __future__ import annotations

import json

import pytest

from engine.errors import Conflict, GameOver, NotFound
from services.game_actor import LOBBY, OVER, GameActor
from services.shard import ShardCore
from tests.fakes import FakeClock, MemoryJournal

GID = "g-admin"
HASHES = ("c0ffee" * 10 + "0a0b", "decade" * 10 + "0c0d")  # the players' secret hashes: never shown
ENDED = {"winners": [], "draw": False, "reason": "ended", "scores": []}


async def new_game(store: MemoryJournal, clock: FakeClock, *, start: bool = True,
                   deadlines: list[tuple[str, int | None]] | None = None) -> GameActor:
    def on_deadline(game_id: str, deadline: int | None) -> None:
        if deadlines is not None:
            deadlines.append((game_id, deadline))

    actor = GameActor(GID, store, now_ms=clock, on_deadline=on_deadline)
    await actor.create(kind="salvo", config={"players": 2}, nickname="ann", secret_hash=HASHES[0], public=True,
                       deadline_s=30, code="ADMIN2")
    await actor.join("bob", HASHES[1])
    if start:
        await actor.start(0, False)
    return actor


async def test_ending_a_running_game_journals_it_tells_everyone_and_retires_it() -> None:
    store, clock = MemoryJournal(), FakeClock()
    deadlines: list[tuple[str, int | None]] = []
    actor = await new_game(store, clock, deadlines=deadlines)
    view = await actor.view(0)
    await actor.submit(0, {"random_placement": True}, version=view["version"], key="k")
    before = list(actor.seq)

    answer = await actor.end("cheating reported by bob; see ticket 7")

    assert answer == {"game_id": GID, "ended": True, "status": OVER, "round": 0, "version": actor.version,
                      "outcome": ENDED}
    journal = await store.journal_read(GID)
    assert journal[-1] == {"op": "end", "at": clock.ms} and len(journal) == actor.version
    assert "ticket 7" not in json.dumps(journal), "the operator's words stay out of the journal"
    assert deadlines[-1] == (GID, None) and actor.deadline_ms is None
    assert store.retired == {GID: actor.retention.retention_s}
    assert store.summaries[GID]["status"] == OVER
    for seat in (0, 1):  # every player's next update is game_over, the last one
        updates = actor.updates_since(seat, before[seat])
        assert [(u["kind"], u["status"], u["data"]) for u in updates] == [("game_over", OVER, {"outcome": ENDED})]
        assert "ticket 7" not in json.dumps(updates)
        assert (await actor.view(seat))["view"]["outcome"] == ENDED  # the view says so too
    with pytest.raises(GameOver):
        await actor.submit(1, {"random_placement": True}, version=actor.version, key="late")
    with pytest.raises(GameOver):
        await actor.act(1, {"chat": {"text": "hello?"}})


async def test_ending_twice_answers_the_outcome_again_and_changes_nothing() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(store, clock)
    first = await actor.end("")
    length = len(await store.journal_read(GID))
    again = await actor.end("once more")
    assert again == {**first, "ended": False}
    assert len(await store.journal_read(GID)) == length


async def test_a_lobby_can_be_ended_and_then_takes_no_one() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(store, clock, start=False)
    assert actor.status == LOBBY
    answer = await actor.end("spam")
    assert answer["ended"] and answer["outcome"] == ENDED and actor.status == OVER
    assert actor.updates_since(0, 0)[-1]["kind"] == "game_over"
    with pytest.raises(Conflict):
        await actor.join("cat", "h2")


async def test_an_ended_game_reloads_from_its_journal_as_ended() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(store, clock)
    await actor.end("")
    store.retired.clear()
    again = await GameActor.load(GID, store, now_ms=clock)
    assert (again.status, again.outcome, again.version, again.deadline_ms) == (OVER, ENDED, actor.version, None)
    assert store.retired, "a game loaded over is retired (again: idempotent)"


async def test_inspect_shows_public_facts_only() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await new_game(store, clock)
    view = await actor.view(1)
    await actor.submit(1, {"random_placement": True}, version=view["version"], key="k", draft=True)
    store.present.add((GID, 0))
    clock.advance(10)

    seen = await actor.inspect()

    assert set(seen) == {"game_id", "game", "status", "round", "deadline_unix_ms", "time_left_ms", "journal_length",
                         "players", "autopilot", "seats", "summary", "version", "round_version", "created_unix_ms",
                         "outcome"}
    assert (seen["status"], seen["round"], seen["journal_length"], seen["time_left_ms"]) == ("running", 0, 4, 20_000)
    assert seen["summary"] == actor.summary()
    assert seen["players"] == [
        {"seat": 0, "nickname": "ann", "host": True, "connected": True, "autopilot": False, "submitted": False,
         "draft": False},
        {"seat": 1, "nickname": "bob", "host": False, "connected": False, "autopilot": False, "submitted": False,
         "draft": True}]
    text = json.dumps(seen)
    assert not any(h in text for h in HASHES), "no secret's hash"
    assert "fleet" not in text and "placement" not in text and str(actor.seed) not in text, "nothing of the engine"


async def shard_game(core: ShardCore, game_id: str) -> None:
    await core.create_game(game_id, {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": HASHES[0], "public": False, "deadline_s": 30, "code": "ADMIN3"})
    await core.join(game_id, "bob", HASHES[1])
    await core.start_game(game_id, 0, False)


async def test_a_shard_lists_its_games_in_memory_and_its_deadline_index(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await shard_game(core, "ga")
    await shard_game(core, "gb")
    await core.flush()
    clock.advance(601)
    assert core.evict_idle(600_000) == 2
    await core.inspect("gb")  # loaded again: in memory; "ga" is only in the deadline index
    deadline = core.games["gb"].deadline_ms

    listing = await core.list_games()

    assert listing["shard"] == "shard-t"
    assert listing["games"] == [{"game_id": "gb", "game": "salvo", "status": "running", "round": 0,
                                 "deadline_unix_ms": deadline, "journal_length": 3, "players": 2, "autopilot": 0,
                                 "seats": 2}]
    assert sorted(d["game_id"] for d in listing["deadlines"]) == ["ga", "gb"]


async def test_a_shard_ends_a_game_and_drops_its_deadline(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await shard_game(core, "gc")
    await core.flush()
    answer = await core.end_game("gc", "test")
    await core.flush()
    assert answer["ended"] and answer["shard"] == "shard-t" and answer["outcome"] == ENDED
    assert await core.store.deadlines("shard-t") == []
    assert (await core.store.journal_read("gc"))[-1]["op"] == "end"  # (compacted into its archive)
    clock.advance(31)
    assert await core.fire_due() == 0, "no round closes after the end"
    assert (await core.inspect("gc"))["shard"] == "shard-t"
    with pytest.raises(NotFound):
        await core.end_game("no-such-game", "")
