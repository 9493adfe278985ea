"""Each process's own figures: the event loop's lag (services.metrics.LoopLag), the Redis connection pool
(services.metrics.RedisPools, read when scraped) and the shards' process_* (CPU, memory) beside the
gateway's on one /metrics (gateway.metrics.ShardCollector.attach), each family once.

The lag and the pool on the test's own event loop and a real redis-server; the process families through
the session cluster's real shards."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from prometheus_client import PROCESS_COLLECTOR, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import ShardCollector
from services import metrics
from services.cluster import RedisProcess
from services.metrics import LoopLag, RedisMetrics
from services.store import Store
from tests.conftest import Cluster


async def until(check: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    """Wait (polling) for ``check`` to hold; fails with ``what`` after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, what
        await asyncio.sleep(0.01)


def sample(registry: CollectorRegistry, name: str, labels: dict[str, str] | None = None) -> float:
    return registry.get_sample_value(name, labels or {}) or 0.0


async def test_the_loop_lag_observes_a_blocked_loop_and_stops() -> None:
    registry = CollectorRegistry()
    lag = LoopLag(registry, interval_s=0.02)
    lag.start()
    task = lag._task
    lag.start()  # once per process: the running task stays
    assert lag._task is task and task is not None
    await until(lambda: sample(registry, "archipelago_event_loop_lag_seconds_count") >= 1, "no observation")
    late_before = sample(registry, "archipelago_event_loop_lag_seconds_count") - sample(
        registry, "archipelago_event_loop_lag_seconds_bucket", {"le": "0.25"})
    assert late_before == 0, "an idle test loop is not a quarter of a second late"
    time.sleep(0.3)  # the loop blocked (what a long synchronous call in a coroutine does)
    await until(lambda: sample(registry, "archipelago_event_loop_lag_seconds_count") - sample(
        registry, "archipelago_event_loop_lag_seconds_bucket", {"le": "0.25"}) >= 1,
        "the timer due during the block is observed late by more than 0.25 s")
    lag.stop()
    await asyncio.sleep(0)
    assert task.cancelled() and lag._task is None
    count = sample(registry, "archipelago_event_loop_lag_seconds_count")
    await asyncio.sleep(0.1)  # five intervals: a running task would observe
    assert sample(registry, "archipelago_event_loop_lag_seconds_count") == count


async def test_the_pool_shows_connections_in_use_idle_and_calls_waiting(redis_server: RedisProcess) -> None:
    registry = CollectorRegistry()
    store = Store(redis_server.url, "pool:", max_connections=1, metrics=RedisMetrics(registry))

    def figures() -> tuple[float, float, float]:
        return (sample(registry, "archipelago_redis_pool_connections", {"state": "in_use"}),
                sample(registry, "archipelago_redis_pool_connections", {"state": "idle"}),
                sample(registry, "archipelago_redis_pool_waiting"))

    try:
        assert figures() == (0, 0, 0)
        await store.redis.ping()
        assert figures() == (0, 1, 0), "the connection went back to the pool"
        first = asyncio.ensure_future(store.redis.blpop(["pool:nothing"], timeout=5))
        await until(lambda: figures()[0] == 1, "a blocking command holds the only connection")
        second = asyncio.ensure_future(store.redis.ping())
        await until(lambda: figures() == (1, 0, 1), "a second call waits for it")
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        assert await second
        await until(lambda: figures()[0] == 0 and figures()[2] == 0, "nothing in use, nobody waiting")
    finally:
        await store.close()
    assert figures() == (0, 0, 0), "a closed store's pool is no longer counted"


def families(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        assert fam.name not in out, f"family {fam.name} twice in one scrape"
        out[fam.name] = [(dict(s.labels), s.value) for s in fam.samples]
    return out


@pytest.mark.e2e
async def test_the_shards_process_figures_and_loop_lag_reach_the_gateways_scrape_once(cluster: Cluster) -> None:
    registry = CollectorRegistry()
    registry.register(PROCESS_COLLECTOR)  # (the gateway's default registry has it)
    collector = ShardCollector(cluster.api.router)
    collector.attach(registry)
    try:
        await collector.refresh()
        text = generate_latest(registry).decode()
        assert text.count("# TYPE process_cpu_seconds_total ") == 1
        fams = families(text)
        for name in ("process_cpu_seconds", "process_resident_memory_bytes"):
            by_shard = {labels.get("shard", ""): v for labels, v in fams[name]}
            assert set(by_shard) == {"", *cluster.shards}, f"{name}: the gateway's own and each shard's"
            assert all(v > 0 for v in by_shard.values())
        starts = {labels.get("shard", ""): v for labels, v in fams["process_start_time_seconds"]}
        assert len(set(starts.values())) >= 2, "the shards' are their own processes' figures"
        pools = {(labels.get("shard", ""), labels["state"]) for labels, _ in fams["archipelago_redis_pool_connections"]}
        assert {("", "in_use"), ("", "idle")} | {(s, "in_use") for s in cluster.shards} <= pools

        end = time.monotonic() + 20
        while True:  # (a shard measures every 0.5 s from its start: wait for each one's first)
            fam = families(generate_latest(registry).decode())["archipelago_event_loop_lag_seconds"]
            observed = {labels.get("shard", "") for labels, v in fam if labels.get("le") == "+Inf" and v > 0}
            if observed >= {"", *cluster.shards}:
                break
            assert time.monotonic() < end, f"loop lag observed only for {observed}"
            await asyncio.sleep(0.2)
            await collector.refresh()
    finally:
        collector.detach()
    assert PROCESS_COLLECTOR in registry._collector_to_names, "detach gives the registry its collector back"
    assert metrics.PROCESS_LAG._task is None, "the gateway's lag task stops with it"


@pytest.mark.e2e
async def test_a_collector_not_attached_leaves_the_shards_process_figures_out(cluster: Cluster) -> None:
    registry = CollectorRegistry()
    registry.register(PROCESS_COLLECTOR)
    collector = ShardCollector(cluster.api.router)
    registry.register(collector)  # (as tests and tools do: the registry's own process_* stay alone)
    await collector.refresh()
    fams = families(generate_latest(registry).decode())
    assert [labels for labels, _ in fams["process_cpu_seconds"]] == [{}]
    assert {labels.get("shard") for labels, _ in fams["archipelago_shard_games"]} == set(cluster.shards)
