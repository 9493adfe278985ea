"""The shards' metrics, exposed on the gateway's ``/metrics`` with a ``shard`` label."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from gateway.router import ShardRouter
from services.metrics import Family


class ShardCollector(Collector):
    """A Prometheus collector over the latest snapshot of every shard (see :meth:`refresh`)."""

    def __init__(self, router: ShardRouter) -> None:
        self.router = router
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
        for shard, snap in sorted(self.snapshots.items()):
            for name, typ, doc, samples in snap:
                fam = families.get(name)
                if fam is None:
                    fam = families[name] = Metric(name, doc, typ)
                for sample, labels, v in samples:
                    fam.add_sample(sample, {**labels, "shard": shard}, v)
        yield from families.values()
