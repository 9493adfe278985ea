"""ShardCore (the logic inside a GameShard actor) on a real redis-server with a fake clock."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest

from services.cluster import RedisProcess
from services.shard import GameShard, ShardCore
from services.store import Store
from tests.fakes import FakeClock


@pytest.fixture
async def shard(redis_server: RedisProcess) -> AsyncIterator[tuple[ShardCore, FakeClock]]:
    clock = FakeClock()
    core = ShardCore("shard-t", Store(redis_server.url, prefix=f"sh{secrets.token_hex(4)}:"), now_ms=clock)
    yield core, clock
    await core.store.close()


async def new_game(core: ShardCore, game_id: str) -> None:
    await core.create_game(game_id, {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": "h0", "public": False, "deadline_s": 30, "code": "ABCDEF"})
    await core.join(game_id, "bob", "h1")
    await core.start_game(game_id, 0, False)


async def test_s9_a_passed_deadline_closes_the_round(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "g1")
    assert await core.fire_due() == 0
    clock.advance(29)
    assert await core.fire_due() == 0
    clock.advance(1)
    assert await core.fire_due() == 1
    view = await core.view("g1", 1)
    assert view["round"] == 1 and view["view"]["fleet"], "the autopilot placed the fleet"
    await core.flush()
    assert await core.store.deadlines("shard-t") == [("g1", view["deadline_unix_ms"])]


async def test_idle_games_leave_memory_and_come_back_from_the_journal(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "g2")
    before = await core.view("g2", 0)
    clock.advance(601)
    async with core.using("g2"):  # a call in progress: the game stays
        assert core.evict_idle(600_000) == 0
    clock.advance(601)
    assert core.evict_idle(600_000) == 1 and "g2" not in core.games
    after = await core.view("g2", 0)
    assert after == before


async def test_restarted_shard_rearms_deadlines_from_redis(shard: tuple[ShardCore, FakeClock],
                                                           redis_server: RedisProcess) -> None:
    core, clock = shard
    await new_game(core, "g3")
    version = (await core.view("g3", 0))["version"]
    await core.submit("g3", 0, {"random_placement": True}, version, "", False)
    await core.flush()
    again = ShardCore("shard-t", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    await again.start()  # re-arms from the deadline index, loads nothing yet
    assert again.games == {}
    clock.advance(31)
    assert await again.fire_due() == 1  # loads the game from its journal and closes the round
    view = await again.view("g3", 0)
    assert view["round"] == 1 and view["players"][0]["submitted"] is False
    await again.stop()


async def test_two_writers_of_one_game_never_both_append(shard: tuple[ShardCore, FakeClock]) -> None:
    """A shard being killed may still finish a call while its restarted self serves the game: the
    journal takes an entry only from a writer whose state ends where the journal does; the other one
    reloads the game and tries again — no entry twice, every entry's position its version."""
    core, clock = shard
    await new_game(core, "g-fence")
    other = ShardCore(core.name, Store(core.store.url, core.store.prefix), now_ms=clock)
    try:
        stale = await other.game("g-fence")  # loaded now; the first shard then writes on
        first = await core.submit("g-fence", 0, {"random_placement": True}, 3, "k0", False)
        assert stale.version == first["version"] - 1
        wrapper = GameShard.__new__(GameShard)
        wrapper.core = other
        got = await wrapper.call("submit", "g-fence", 1, {"random_placement": True}, 3, "k1", False)
        assert "ok" in got, got
        journal = await core.store.journal_read("g-fence")
        assert [(e["op"], e.get("seat"), e.get("key")) for e in journal[3:5]] == [("submit", 0, "k0"),
                                                                              ("submit", 1, "k1")]
        assert got["ok"]["version"] == 5, "the reloaded game wrote at the journal's end"
        again = await wrapper.call("submit", "g-fence", 0, {"random_placement": True}, 3, "k0", False)
        assert again == {"ok": {**first, "replayed": True}}, "the other writer's entry is known after the reload"
    finally:
        await other.store.close()


async def test_s9_deadlines_due_together_close_concurrently_and_their_lateness_is_measured(
        shard: tuple[ShardCore, FakeClock], monkeypatch: pytest.MonkeyPatch) -> None:
    """Many rounds due at one moment close side by side (up to FIRE_AT_ONCE), not one journal write
    after the other; each closing records how late it was in archipelago_deadline_lateness_seconds."""
    from services import metrics

    core, clock = shard
    for i in range(6):
        await new_game(core, f"gd{i}")
    in_flight = peak = 0
    original = core._deadline_of

    async def watched(game_id: str) -> bool:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(game_id)
        finally:
            in_flight -= 1

    monkeypatch.setattr(core, "_deadline_of", watched)
    before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_count")
    le1_before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_bucket", le="1.0")
    late_before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_bucket", le="2.5")
    clock.advance(32)  # 2 s after the deadline
    assert await core.fire_due() == 6
    assert peak == 6, "the six rounds closed side by side"
    after = metrics.snapshot()
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_count") == before + 6
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_bucket", le="1.0") == le1_before, \
        "2 s late: not within 1 s"
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_bucket", le="2.5") == late_before + 6
    for i in range(6):
        assert (await core.view(f"gd{i}", 0))["round"] == 1
