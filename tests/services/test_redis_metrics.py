"""Redis metrics of a process (issue 13): every command timed, a pipeline once as one round trip, failures
after the retries counted as ``outage`` or ``other``; and on the gateway's /metrics, the gateway's own
samples in the same families as the shards' (a family appears once per scrape).

Each Store here counts into its own registry, so the figures are exact whatever else runs."""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from gateway.metrics import ShardCollector
from gateway.router import ShardRouter
from services.cluster import RedisProcess
from services.metrics import RedisMetrics
from services.store import Store


class Metered:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.metrics = RedisMetrics(self.registry)

    def count(self, command: str) -> float:
        return self.registry.get_sample_value("archipelago_redis_command_seconds_count", {"command": command}) or 0.0

    def errors(self, kind: str) -> float:
        return self.registry.get_sample_value("archipelago_redis_errors_total", {"kind": kind}) or 0.0


@pytest.fixture
async def metered(redis_server: RedisProcess) -> AsyncIterator[tuple[Store, Metered]]:
    m = Metered()
    store = Store(redis_server.url, prefix=f"rm{secrets.token_hex(4)}:", metrics=m.metrics)
    yield store, m
    await store.close()


async def test_every_command_is_timed_by_name(metered: tuple[Store, Metered]) -> None:
    store, m = metered
    assert await store.claim_code("ABCDEF", "g1")
    assert await store.game_of_code("ABCDEF") == "g1"
    assert (m.count("SET"), m.count("GET")) == (1, 1)
    assert (m.errors("outage"), m.errors("other")) == (0, 0)


async def test_concurrent_journal_appends_are_one_round_trip(metered: tuple[Store, Metered]) -> None:
    store, m = metered
    await store.journal_append_publish("g0", {"op": "a"}, {"version": 1}, expected=0)  # (loads the script)
    pipelines, evals = m.count("PIPELINE"), m.count("EVALSHA")
    await asyncio.gather(*(store.journal_append_publish(f"g{i}", {"op": "a"}, {"version": 1}, expected=0)
                           for i in range(1, 6)))
    assert m.count("PIPELINE") == pipelines + 1, "five appends, one pipeline, one observation"
    assert m.count("EVALSHA") == evals, "the pipeline's commands are not timed one by one"
    assert (m.errors("outage"), m.errors("other")) == (0, 0)


async def test_a_failed_command_is_an_other_error_and_a_missing_script_none(metered: tuple[Store, Metered]) -> None:
    store, m = metered
    key = store.key("a-list")
    await store.redis.rpush(key, "x")
    with pytest.raises(ResponseError):
        await store.redis.get(key)  # WRONGTYPE
    assert (m.errors("other"), m.errors("outage")) == (1, 0)
    assert m.count("GET") == 1, "a failed command is timed too"
    with pytest.raises(NoScriptError):
        await store.redis.evalsha("0" * 40, 0)
    assert m.errors("other") == 1, "a script Redis does not hold yet is loaded by its caller: not a failure"


async def test_redis_that_does_not_answer_is_an_outage() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = Metered()
    store = Store(f"redis://127.0.0.1:{port}", metrics=m.metrics)
    try:
        with pytest.raises(RedisConnectionError):
            await store.ping()
    finally:
        await store.close()
    assert (m.errors("outage"), m.errors("other")) == (1, 0), "one failure, after the client's retries"
    assert m.count("PING") == 1


def test_the_gateway_shows_its_own_and_the_shards_redis_figures_in_one_family() -> None:
    gateway = RedisMetrics(None)
    gateway.observe("GET", 0.002)
    gateway.failed(outage=True)
    shard = Metered()
    shard.metrics.observe("PIPELINE", 0.001)
    shard.metrics.observe("PIPELINE", 0.003)
    collector = ShardCollector(ShardRouter(Store("redis://127.0.0.1:1"), ["shard-0"], "unused"),
                               local=(gateway.seconds, gateway.errors))
    collector.snapshots["shard-0"] = [(f.name, f.type, f.documentation,
                                       [(s.name, dict(s.labels), float(s.value)) for s in f.samples])
                                      for f in shard.registry.collect()]
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    assert text.count("# TYPE archipelago_redis_command_seconds histogram") == 1
    assert text.count("# TYPE archipelago_redis_errors_total counter") == 1
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for fam in text_string_to_metric_families(text) for s in fam.samples}
    assert got[("archipelago_redis_command_seconds_count", (("command", "GET"),))] == 1, "the gateway's: no shard"
    assert got[("archipelago_redis_command_seconds_count", (("command", "PIPELINE"), ("shard", "shard-0")))] == 2
    assert got[("archipelago_redis_errors_total", (("kind", "outage"),))] == 1
    assert got[("archipelago_redis_errors_total", (("kind", "outage"), ("shard", "shard-0")))] == 0


def test_garbage_collections_are_timed_by_generation() -> None:
    import gc

    from prometheus_client import CollectorRegistry

    from services.metrics import GcPauses

    registry = CollectorRegistry()
    pauses = GcPauses(registry)
    pauses.install()
    try:
        before = registry.get_sample_value("archipelago_gc_pause_seconds_count", {"generation": "2"}) or 0.0
        gc.collect()  # a full collection
        after = registry.get_sample_value("archipelago_gc_pause_seconds_count", {"generation": "2"})
        assert after == before + 1
        assert (registry.get_sample_value("archipelago_gc_pause_seconds_sum", {"generation": "2"}) or 0.0) > 0
    finally:
        gc.callbacks.remove(pauses._callback)
