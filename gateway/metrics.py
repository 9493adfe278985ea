"""The shards' metrics, exposed on the gateway's ``/metrics`` with a ``shard`` label.

A family a shard and the gateway both have (the Redis ones, :class:`services.metrics.RedisMetrics`, and
the garbage collector's pauses, :class:`services.metrics.GcPauses`)
comes out once: the gateway's own samples, without a ``shard`` label, then every shard's. (Two
families of one name in a scrape are refused, so the gateway's are registered nowhere else.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from gateway.router import ShardRouter
from services.metrics import PROCESS_GC, PROCESS_REDIS, Family


class ShardCollector(Collector):
    """A Prometheus collector over the latest snapshot of every shard (see :meth:`refresh`), merged with
    this process's metrics of the same names (``local``: the gateway's Redis metrics)."""

    def __init__(self, router: ShardRouter,
                 local: Iterable[Any] = (PROCESS_REDIS.seconds, PROCESS_REDIS.errors, PROCESS_GC.seconds)) -> None:
        self.router = router
        self.local = tuple(local)
        self.snapshots: dict[str, list[Family]] = {}

    async def refresh(self, timeout_s: float = 5.0) -> None:
        """Fetch every shard's samples (one Ray call each); a shard that does not answer keeps its
        last snapshot."""
        async def one(name: str) -> None:
            try:
                self.snapshots[name] = await asyncio.wait_for(self.router.handle(name).metrics.remote(), timeout_s)
            except Exception:  # restarting shard: its last figures stay until it answers again
                pass
        await asyncio.gather(*(one(n) for n in self.router.names))

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for metric in self.local:
            for own in metric.collect():
                fam = families[own.name] = Metric(own.name, own.documentation, own.type)
                fam.samples.extend(own.samples)
        for shard, snap in sorted(self.snapshots.items()):
            for name, typ, doc, samples in snap:
                merged = families.get(name)
                if merged is None:
                    merged = families[name] = Metric(name, doc, typ)
                for sample, labels, v in samples:
                    merged.add_sample(sample, {**labels, "shard": shard}, v)
        yield from families.values()
