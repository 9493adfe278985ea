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

#: the liveness gauge's name
SHARD_UP = "archipelago_shard_up"


class ShardCollector(Collector):
    """A Prometheus collector over the latest snapshot of every shard (see :meth:`refresh`), merged with
    this process's metrics of the same names (``local``: the gateway's Redis metrics).

    Liveness: ``archipelago_shard_up{shard}`` is 1 for a shard of the router's set that answered the
    latest refresh, 0 for one that did not. A shard that misses a refresh keeps its last figures for
    that one refresh (``GRACE`` misses: a slow answer does not blank its panels), then shows only
    ``archipelago_shard_up 0`` until it answers again; a shard no longer in the router's set (``admin
    remove``) leaves every family, ``archipelago_shard_up`` too."""

    GRACE = 1  # refreshes a silent shard's last snapshot is still shown

    def __init__(self, router: ShardRouter,
                 local: Iterable[Any] = (PROCESS_REDIS.seconds, PROCESS_REDIS.errors, PROCESS_GC.seconds)) -> None:
        self.router = router
        self.local = tuple(local)
        self.snapshots: dict[str, list[Family]] = {}
        self.up: dict[str, bool] = {}
        self.misses: dict[str, int] = {}

    async def refresh(self, timeout_s: float = 5.0) -> None:
        """Fetch every shard's samples (one Ray call each, at most ``timeout_s``). A shard that does not
        answer is down; its last snapshot stays for ``GRACE`` refreshes, then goes. Shards that left
        the router's set are forgotten."""
        names = list(self.router.names)

        async def one(name: str) -> None:
            try:
                snap = await asyncio.wait_for(self.router.handle(name).metrics.remote(), timeout_s)
            except Exception:  # a dead or restarting shard
                self.up[name] = False
                self.misses[name] = self.misses.get(name, 0) + 1
                if self.misses[name] > self.GRACE:
                    self.snapshots.pop(name, None)
                return
            self.snapshots[name], self.up[name], self.misses[name] = snap, True, 0
        await asyncio.gather(*(one(n) for n in names))
        for gone in set(self.up) - set(self.router.names):
            self.up.pop(gone, None)
            self.misses.pop(gone, None)
            self.snapshots.pop(gone, None)

    def collect(self) -> Iterator[Metric]:
        members = set(self.router.names)
        families: dict[str, Metric] = {}
        for metric in self.local:
            for own in metric.collect():
                fam = families[own.name] = Metric(own.name, own.documentation, own.type)
                fam.samples.extend(own.samples)
        up = families[SHARD_UP] = Metric(SHARD_UP, "1 when the shard answered the gateway's latest metrics "
                                         "refresh, 0 when it did not (a shard of the cluster's set)", "gauge")
        for shard in sorted(members & set(self.up)):
            up.add_sample(SHARD_UP, {"shard": shard}, 1.0 if self.up[shard] else 0.0)
        for shard, snap in sorted(self.snapshots.items()):
            if shard not in members:
                continue
            for name, typ, doc, samples in snap:
                merged = families.get(name)
                if merged is None:
                    merged = families[name] = Metric(name, doc, typ)
                for sample, labels, v in samples:
                    merged.add_sample(sample, {**labels, "shard": shard}, v)
        yield from families.values()
