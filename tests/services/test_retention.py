"""Retention (issue 11): lobbies nobody starts expire; a finished game leaves Redis by a stated time.

On a real redis-server; the shard's clock is a fake one, Redis' time to live the real one (checked
as a bound, never waited for).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest

from services.cluster import RedisProcess
from services.game_actor import OVER, Retention
from services.shard import ShardCore
from services.store import Store
from tests.fakes import FakeClock

RETENTION = Retention(retention_s=120, lobby_ttl_s=3600)


@pytest.fixture
async def shard(redis_server: RedisProcess) -> AsyncIterator[tuple[ShardCore, FakeClock]]:
    clock = FakeClock()
    core = ShardCore("shard-r", Store(redis_server.url, prefix=f"rt{secrets.token_hex(4)}:"), now_ms=clock,
                     retention=RETENTION)
    await core.start()
    yield core, clock
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.stop()


async def lobby(core: ShardCore, game_id: str, code: str) -> None:
    await core.create_game(game_id, {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": "h0" * 32, "public": True, "deadline_s": 30, "code": code})
    await core.store.claim_code(code, game_id)
    await core.store.place(game_id, core.name)
    await core.flush()


async def ttls(store: Store, keys: list[str]) -> dict[str, int]:
    return {k: int(await store.redis.ttl(store.key(k))) for k in keys}


async def test_a_lobby_nobody_starts_expires_and_ends_as_expired(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await lobby(core, "lob1", "LOBBY2")
    assert [g["game_id"] for g in await core.store.open_games()] == ["lob1"]
    await core.join("lob1", "bob", "h1" * 32)
    await core.store.put_summary("lob1", await core.whoami("lob1", 0), True, 0)  # listed, as if a seat were free
    clock.advance(RETENTION.lobby_ttl_s - 1)
    assert await core.fire_due() == 0, "not yet"
    clock.advance(1)
    assert await core.fire_due() == 1
    view = await core.view("lob1", 1)
    assert view["status"] == OVER
    over = [u for u in core.games["lob1"].updates_since(1, 0) if u["kind"] == "game_over"]
    assert over and over[0]["data"]["outcome"]["reason"] == "expired" and over[0]["data"]["outcome"]["winners"] == []
    assert await core.store.open_games() == [], "an expired lobby is not listed"
    assert (await core.store.summary("lob1") or {})["status"] == OVER
    await core.flush()
    assert await core.store.deadlines(core.name) == [], "nothing left armed"
    left = await ttls(core.store, ["g:lob1:archive", "g:lob1:summary", "code:LOBBY2", "place:lob1",
                                   "secret:" + "h0" * 32, "secret:" + "h1" * 32])
    assert all(0 < t <= RETENTION.retention_s for t in left.values()), left
    assert await core.store.redis.exists(core.store.key("g", "lob1", "journal")) == 0, "compacted"


async def test_a_lobby_expiry_survives_a_shard_restart(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await lobby(core, "lob2", "LOBBY3")
    again = ShardCore(core.name, Store(core.store.url, core.store.prefix), now_ms=clock, retention=RETENTION)
    await again.start()  # re-arms from Redis' deadline index
    try:
        clock.advance(RETENTION.lobby_ttl_s)
        assert await again.fire_due() == 1
        assert (await again.view("lob2", 0))["status"] == OVER
    finally:
        await again.stop()


async def test_a_started_game_does_not_expire_as_a_lobby(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await lobby(core, "run1", "RUNNR2")
    await core.join("run1", "bob", "h1" * 32)
    await core.start_game("run1", 0, False)
    clock.advance(RETENTION.lobby_ttl_s + 1)
    await core.fire_due()  # rounds close by their own deadlines (the autopilot plays), never "expired"
    updates = core.games["run1"].updates_since(0, 0)
    assert not any(u["kind"] == "game_over" and u["data"]["outcome"]["reason"] == "expired" for u in updates)


async def test_a_finished_game_is_compacted_and_reloads_from_its_archive(shard: tuple[ShardCore, FakeClock]
                                                                         ) -> None:
    core, clock = shard
    await lobby(core, "fin1", "FINSH2")
    await core.join("fin1", "bob", "h1" * 32)
    await core.start_game("fin1", 0, False)
    while core.games["fin1"].status != OVER:  # nobody plays: the autopilot does, round by round (S9)
        clock.advance(30)
        await core.fire_due()
    journal = await core.store.journal_read("fin1")
    before = await core.view("fin1", 0)
    assert await core.store.redis.llen(core.store.key("g", "fin1", "journal")) == 0
    packed = await core.store.redis.strlen(core.store.key("g", "fin1", "archive"))
    assert 0 < packed < sum(len(str(e)) for e in journal) / 2, "compaction at least halves it"
    core.evict_idle(0)
    assert "fin1" not in core.games
    assert await core.view("fin1", 0) == before, "the finished game reloads from its archive"
    assert 0 < await core.store.redis.ttl(core.store.key("g", "fin1", "summary")) <= RETENTION.retention_s, \
        "reloading it re-published its summary without losing the summary's time to live"
    ttl = await core.store.redis.ttl(core.store.key("g", "fin1", "archive"))
    await core.store.retire("fin1", code="FINSH2", secret_hashes=["h0" * 32], retention_s=10_000)
    assert await core.store.redis.ttl(core.store.key("g", "fin1", "archive")) <= ttl, "a retry changes nothing"


async def test_retention_comes_from_the_environment() -> None:
    got = Retention.from_env({"ARCHIPELAGO_RETENTION_S": "60", "ARCHIPELAGO_LOBBY_TTL_S": "90"})
    assert (got.retention_s, got.lobby_ttl_s) == (60.0, 90.0)
    assert Retention.from_env({}) == Retention(7 * 24 * 3600.0, 24 * 3600.0)
