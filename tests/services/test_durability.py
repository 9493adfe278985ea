"""Nothing acknowledged is lost when Redis itself restarts: the private redis-server of `serve`
keeps an append-only file under the data dir, and a new shard reloads the game from it."""

from __future__ import annotations

from pathlib import Path

from services.cluster import free_port, start_redis_server
from services.shard import ShardCore
from services.store import Store
from tests.fakes import FakeClock


async def test_acknowledged_submissions_survive_a_redis_restart(tmp_path: Path) -> None:
    port = free_port()
    redis = start_redis_server(tmp_path / "redis", port, durable=True)
    clock = FakeClock()
    core = ShardCore("shard-0", Store(redis.url), now_ms=clock)
    await core.create_game("g", {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                 "secret_hash": "h0", "public": False, "deadline_s": 30, "code": "DURAB1"})
    await core.join("g", "bob", "h1")
    await core.start_game("g", 0, False)
    version = (await core.view("g", 0))["version"]
    ack = await core.submit("g", 0, {"random_placement": True}, version, "k1", False)
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.store.close()
    redis.stop()  # SIGTERM: redis-server flushes its append-only file and exits

    again = start_redis_server(tmp_path / "redis", port, durable=True)
    try:
        fresh = ShardCore("shard-0", Store(again.url), now_ms=clock)
        view = await fresh.view("g", 0)
        assert view["version"] == ack["version"] and view["submitted"] and view["pending"] == {
            "random_placement": True}
        replay = await fresh.submit("g", 0, {"random_placement": True}, version, "k1", False)
        assert replay["replayed"] and replay["version"] == ack["version"]
        await fresh.flush()  # (its pending writes: none may run on a closed store)
        await fresh.store.close()
    finally:
        again.stop()
