"""Per-shard liveness on the gateway's /metrics (gateway.metrics.ShardCollector): archipelago_shard_up{shard}
is 1 for a shard that answered the latest refresh and 0 for one that did not; a silent shard's figures
stay for one refresh, then go; a shard taken out of the set (``admin remove``: ShardRouter.remove)
leaves every family.

Two real GameShards of their own (own names, own Redis prefix: the session cluster's shards and games
are not touched) on the session's Ray and redis-server."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import SHARD_UP, ShardCollector
from gateway.router import ShardRouter
from services.cluster import RedisProcess, start_shards
from services.store import Store
from tests.conftest import NAMESPACE

pytestmark = pytest.mark.e2e

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(collector: ShardCollector) -> Samples:
    registry = CollectorRegistry()
    registry.register(collector)
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(generate_latest(registry).decode()) for s in fam.samples}


def shards_in(samples: Samples) -> set[str]:
    """The shards any sample of the scrape names."""
    return {dict(labels)["shard"] for _name, labels in samples if "shard" in dict(labels)}


def up(samples: Samples) -> dict[str, float]:
    return {dict(labels)["shard"]: v for (name, labels), v in samples.items() if name == SHARD_UP}


@pytest.fixture
async def two_shards(redis_server: RedisProcess, ray_local: None) -> AsyncIterator[tuple[ShardRouter, list[str]]]:
    import ray

    names = [f"live{os.getpid()}-a", f"live{os.getpid()}-b"]
    prefix = f"live{os.getpid()}:"
    handles = start_shards(names, redis_server.url, prefix=prefix, namespace=NAMESPACE)  # (held: a dropped
    # handle would end its actor)
    store = Store(redis_server.url, prefix)
    await store.ensure_shard_set(names)
    router = ShardRouter(store, names, NAMESPACE)
    try:
        yield router, names
    finally:
        await router.close()
        await store.close()
        for handle in handles:
            with contextlib.suppress(Exception):  # (one may be gone already)
                ray.kill(handle, no_restart=True)


async def test_a_removed_shard_leaves_every_family_and_a_dead_one_is_marked_down_then_dropped(
        two_shards: tuple[ShardRouter, list[str]]) -> None:
    import ray

    router, (a, b) = two_shards
    collector = ShardCollector(router, local=())
    await collector.refresh()
    s = scrape(collector)
    assert up(s) == {a: 1.0, b: 1.0}
    assert ("archipelago_shard_games", (("shard", b),)) in s and shards_in(s) == {a, b}

    removed = await router.remove(b)  # what `archipelago admin remove` does
    assert removed["removed"] and router.names == [a]
    await collector.refresh()
    s = scrape(collector)
    assert up(s) == {a: 1.0}, "the removed shard has no liveness series"
    assert shards_in(s) == {a}, "the removed shard's figures are gone from every family at the next scrape"

    ray.kill(router.handle(a), no_restart=True)  # dead, but still in the cluster's set
    await collector.refresh()
    s = scrape(collector)
    assert up(s) == {a: 0.0}
    assert ("archipelago_shard_games", (("shard", a),)) in s, "one refresh's grace: its last figures stay"
    await collector.refresh()
    s = scrape(collector)
    assert up(s) == {a: 0.0}, "still in the set: marked down"
    assert shards_in(s) == {a} and [k for k in s if k[0] != SHARD_UP] == [], "its stale figures are dropped"


async def test_a_shard_taken_out_of_the_set_between_refresh_and_scrape_is_not_shown(
        two_shards: tuple[ShardRouter, list[str]]) -> None:
    router, (a, b) = two_shards
    collector = ShardCollector(router, local=())
    await collector.refresh()
    assert shards_in(scrape(collector)) == {a, b}
    router.names = [a]  # the monitor's refresh read the set from Redis meanwhile
    assert shards_in(scrape(collector)) == {a}
