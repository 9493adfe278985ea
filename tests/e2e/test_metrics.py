"""Shard metrics reach the gateway's Prometheus exposition with a shard label."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import ShardCollector
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, placement, submit_and_close

pytestmark = pytest.mark.e2e


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


async def test_rounds_resolution_and_journal_metrics_per_shard(cluster: Cluster) -> None:
    collector = ShardCollector(cluster.api.router)
    registry = CollectorRegistry()
    registry.register(collector)
    await collector.refresh()
    before = samples(generate_latest(registry).decode())

    game = await new_game(lambda: cluster.client("grpc"))
    await submit_and_close(game, placement(0), placement(1))
    shard = await cluster.api.store.placement(game.game_id)
    await collector.refresh()
    after = samples(generate_latest(registry).decode())

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted({**labels, "shard": shard}.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("archipelago_rounds_closed_total", how="early") == 1
    # (other tests' games may close rounds by their deadlines on this shard meanwhile: each is counted)
    assert delta("archipelago_round_resolution_seconds_count") == 1 + delta("archipelago_rounds_closed_total",
                                                                            how="deadline")
    assert delta("archipelago_journal_write_seconds_count") >= 5  # create, join, start, 2 submissions, close
    assert after[("archipelago_shard_games", (("shard", shard),))] >= 1
    assert {dict(k[1]).get("shard") for k in after} >= set(cluster.shards)
