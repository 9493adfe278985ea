"""The gateway -> shard hop's figures (gateway/router.py Batcher): each batch's round trip
(archipelago_hop_batch_seconds), the calls it carries (archipelago_hop_batch_calls) and the calls waiting in
the gateway's per-shard queue (archipelago_hop_queued_calls) — through the session cluster's real shards."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from tests.conftest import Cluster

pytestmark = pytest.mark.e2e

CALLS = 40


def value(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def figures() -> dict[str, float]:
    return {
        "batches": value("archipelago_hop_batch_calls_count"),
        "calls": value("archipelago_hop_batch_calls_sum"),
        "lone": value("archipelago_hop_batch_calls_bucket", {"le": "1.0"}),
        "timed": value("archipelago_hop_batch_seconds_count"),
        "seconds": value("archipelago_hop_batch_seconds_sum"),
        "queued": value("archipelago_hop_queued_calls"),
    }


async def test_calls_at_once_wait_in_the_queue_then_leave_in_few_timed_batches(cluster: Cluster) -> None:
    router = cluster.api.router
    shard = router.names[0]
    await router.call_shard(shard, "stats")  # (the stream to the shard open: the first batch is no outlier)
    before = figures()
    tasks = [asyncio.ensure_future(router.call_shard(shard, "stats")) for _ in range(CALLS)]
    await asyncio.sleep(0)  # every call has been made once: the first left at once, the others wait
    assert figures()["queued"] - before["queued"] >= CALLS - 1, "the calls behind the first one are queued"
    await asyncio.gather(*tasks)
    after = figures()
    assert after["queued"] <= before["queued"], "the queue is empty again once every call is answered"
    batches = after["batches"] - before["batches"]
    assert after["calls"] - before["calls"] >= CALLS, "every call leaves in a batch"
    assert 2 <= batches < CALLS, "the calls left together, in a few batches"
    assert batches - (after["lone"] - before["lone"]) >= 1, "a batch carried more than one call"
    assert after["timed"] - before["timed"] == batches, "each batch's round trip is timed once"
    assert after["seconds"] > before["seconds"]
