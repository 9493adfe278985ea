"""The Redis store, on a real redis-server and on the in-process stand-in used when there is none."""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis

from services.cluster import NOT_DURABLE_WARNING, RedisProcess, start_fake_redis, start_redis
from services.store import JournalConflict, Store


@pytest.fixture(scope="module")
def fake_redis() -> Iterator[RedisProcess]:
    proc = start_fake_redis()
    yield proc
    proc.stop()


@pytest.fixture(params=["redis-server", "stand-in"])
async def store(request: pytest.FixtureRequest, redis_server: RedisProcess,
                fake_redis: RedisProcess) -> AsyncIterator[Store]:
    url = redis_server.url if request.param == "redis-server" else fake_redis.url
    s = Store(url, prefix=f"st{secrets.token_hex(4)}:")
    yield s
    await s.close()


async def test_journal_is_kept_in_order(store: Store) -> None:
    for i in range(6):
        await store.journal_append_publish("g", {"op": "x", "i": i}, {"version": i + 1}, expected=i)
    assert [e["i"] for e in await store.journal_read("g")] == list(range(6))


async def test_a_journal_append_naming_another_length_is_refused(store: Store) -> None:
    await store.journal_append_publish("gj", {"op": "a"}, {"version": 1}, expected=0)
    with pytest.raises(JournalConflict):
        await store.journal_append_publish("gj", {"op": "b"}, {"version": 1}, expected=0)
    await store.journal_append_publish("gj", {"op": "b"}, {"version": 2}, expected=1)
    assert [e["op"] for e in await store.journal_read("gj")] == ["a", "b"]


async def test_concurrent_appends_leave_in_one_pipeline_each_fenced_alone(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends asked for in one event-loop round share one round trip; a refused one (wrong length)
    fails alone, the others are written."""
    await store.journal_append_publish("gp0", {"op": "a"}, {"version": 1}, expected=0)
    sent: list[int] = []
    original = store._appends._pipeline

    async def counted(batch: list) -> list:  # type: ignore[type-arg]
        sent.append(len(batch))
        return await original(batch)

    monkeypatch.setattr(store._appends, "_pipeline", counted)
    outcomes = await asyncio.gather(
        *(store.journal_append_publish(f"gp{i}", {"op": "b"}, {"version": 1}, expected=0) for i in range(10)),
        return_exceptions=True)
    assert sent == [10], "one pipeline for the ten"
    assert isinstance(outcomes[0], JournalConflict) and outcomes[1:] == [None] * 9
    assert [e["op"] for e in await store.journal_read("gp0")] == ["a"]
    for i in range(1, 10):
        assert [e["op"] for e in await store.journal_read(f"gp{i}")] == ["b"]


async def test_an_append_after_redis_forgot_the_script_loads_it_again(redis_server: RedisProcess) -> None:
    store = Store(redis_server.url, prefix=f"st{secrets.token_hex(4)}:")
    try:
        await store.journal_append_publish("gs", {"op": "a"}, {"version": 1}, expected=0)
        await store.redis.script_flush()  # as a restarted Redis without its scripts
        await store.journal_append_publish("gs", {"op": "b"}, {"version": 2}, expected=1)
        assert [e["op"] for e in await store.journal_read("gs")] == ["a", "b"]
    finally:
        await store.close()


async def test_codes_are_claimed_once_and_secrets_resolve(store: Store) -> None:
    assert await store.claim_code("ABCDEF", "g1")
    assert not await store.claim_code("ABCDEF", "g2")
    assert await store.game_of_code("ABCDEF") == "g1"
    await store.put_secret("h" * 64, "g1", 3)
    assert await store.seat_of_secret("h" * 64) == ("g1", 3)
    assert await store.seat_of_secret("x" * 64) is None


async def test_placement_is_recorded_once(store: Store) -> None:
    assert await store.place("g", "shard-1") == "shard-1"
    assert await store.place("g", "shard-0") == "shard-1"


async def test_a17_presence_is_the_set_of_live_streams(store: Store) -> None:
    await store.touch_streams([("g", 0, "old"), ("g", 1, "s1"), ("g", 1, "s2")], 60)
    assert await store.connected("g", [0, 1, 2]) == {0, 1}
    await store.touch_streams([("g", 0, "old")], -1)  # its gateway stopped refreshing it: expired
    assert await store.connected("g", [0, 1]) == {1}
    await store.drop_stream("g", 1, "s1")
    assert await store.connected("g", [0, 1]) == {1}  # its other stream is still open
    await store.drop_stream("g", 1, "s2")
    assert await store.connected("g", [0, 1]) == set()


async def test_a17_a_new_stream_asks_whether_its_seat_was_there_without_it(store: Store) -> None:
    # a reload: the new stream is present before the old one's end is seen; the new one asks about others
    await store.touch_streams([("re", 0, "old"), ("re", 1, "x"), ("re", 0, "new")], 60)
    assert await store.connected_elsewhere("re", 0, "new"), "the old stream is still there"
    await store.drop_stream("re", 0, "old")
    assert not await store.connected_elsewhere("re", 0, "new"), "only itself now (seat 1's stream is not seat 0's)"
    assert await store.connected("re", [0]) == {0}, "and the seat stays connected through it"
    assert await store.connected_elsewhere("re", 1, "y"), "seat 1's stream x counts for its other stream y"


async def test_a17_an_ended_stream_lingers_for_its_grace_and_only_lengthens_the_key(store: Store) -> None:
    await store.touch_streams([("lg", 0, "a"), ("lg", 1, "b")], 5)
    assert await store.linger_stream("lg", 0, "a", 60)  # its stream ended: 60 s of grace
    assert await store.connected("lg", [0, 1]) == {0, 1}
    assert 5_000 < await store.redis.pttl(store.key("presence", "lg")) <= 60_000, "the key outlives the grace"
    assert await store.linger_stream("lg", 1, "b", 1)
    assert await store.redis.pttl(store.key("presence", "lg")) > 5_000, "a shorter grace never shortens the key"
    await store.drop_stream("lg", 0, "a")
    assert not await store.linger_stream("lg", 0, "a", 60), "a stream already gone is not brought back"
    assert await store.connected("lg", [0]) == set()
    assert await store.linger_stream("lg", 1, "b", -1)  # (a grace already past: gone)
    assert await store.connected("lg", [1]) == set()


async def test_a17_presence_of_many_games_in_chunks_with_their_keys_expiring(store: Store) -> None:
    from services.store import TOUCH_CHUNK

    games = [f"pg{i}" for i in range(2 * TOUCH_CHUNK + 7)]  # three script calls
    await store.touch_streams([(g, seat, f"s{seat}") for g in games for seat in (0, 2)], 30)
    for g in (games[0], games[TOUCH_CHUNK], games[-1]):
        assert await store.connected(g, [0, 1, 2]) == {0, 2}
        assert 0 < await store.redis.pttl(store.key("presence", g)) <= 30_000
    await store.touch_streams([(games[-1], 0, "s0")], -1)  # one stream's gateway stopped refreshing it
    assert await store.connected(games[-1], [0, 2]) == {2}
    assert await store.connected(games[0], [0, 2]) == {0, 2}


async def test_notices_reach_subscribers(store: Store) -> None:
    pubsub = store.redis.pubsub()
    await pubsub.subscribe(store.channel("g"))
    await store.publish("g", {"version": 7})
    async with asyncio.timeout(20):  # the stand-in serves from a thread: slow on a loaded 2-core box
        while True:
            msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if msg is not None:
                break
    assert json.loads(msg["data"]) == {"version": 7}
    await pubsub.aclose()


def test_without_redis_server_the_stand_in_starts_with_a_loud_warning(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    proc, url = start_redis(tmp_path, None)
    try:
        assert proc is not None and not proc.durable and proc.fake_server is not None
        assert redis.Redis.from_url(url).ping()
        assert NOT_DURABLE_WARNING.strip() in capsys.readouterr().err
    finally:
        assert proc is not None
        proc.stop()


def test_with_redis_server_a_private_durable_one_starts(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    proc, url = start_redis(tmp_path, None)
    try:
        assert proc is not None and proc.proc is not None and proc.durable
        client = redis.Redis.from_url(url)
        client.set("k", "v")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert str(tmp_path / "redis") in capsys.readouterr().out
    finally:
        assert proc is not None
        proc.stop()


async def test_a_move_takes_placement_and_deadline_once(store: Store) -> None:
    await store.place("gm", "shard-1")
    await store.set_deadline("shard-1", "gm", 1234)
    assert await store.move("gm", "shard-1", "shard-2") == "shard-2"
    assert await store.placement("gm") == "shard-2"
    assert await store.deadlines("shard-1") == [] and await store.deadlines("shard-2") == [("gm", 1234)]
    assert await store.move("gm", "shard-1", "shard-0") == "shard-2", "moved already: stays"
    await store.set_deadline("shard-1", "gm", 5678)  # written by a call the old shard was finishing
    assert await store.move("gm", "shard-1", "shard-0") == "shard-2"
    assert await store.deadlines("shard-1") == [], "the old index is emptied all the same"
    assert await store.deadlines("shard-2") == [("gm", 1234)], "(the owner's own entry is kept)"


async def test_the_shard_set_is_the_first_writers(store: Store) -> None:
    assert await store.ensure_shard_set(["shard-0", "shard-1"]) == {"shard-0": "active", "shard-1": "active"}
    assert await store.ensure_shard_set(["shard-0", "shard-1", "shard-2"]) == {"shard-0": "active",
                                                                              "shard-1": "active"}
    await store.set_shard_state("shard-1", "draining")
    assert (await store.shard_set())["shard-1"] == "draining"
