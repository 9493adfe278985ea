"""Prometheus metrics of a shard process.

Each GameShard process fills its own registry; the gateway collects every shard's samples through a
Ray call when it is scraped and exposes them on its own ``/metrics`` with a ``shard`` label
(:class:`gateway.metrics.ShardCollector`), so one scrape target shows the whole cluster.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()

GAMES = Gauge("archipelago_shard_games", "Games held in this shard's memory", registry=REGISTRY)
ROUNDS_CLOSED = Counter("archipelago_rounds_closed", "Rounds closed, early (A17) or at the deadline",
                        ["how"], registry=REGISTRY)
RESOLUTION = Histogram("archipelago_round_resolution_seconds", "Time to resolve a round in the engine",
                       registry=REGISTRY, buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5))
JOURNAL = Histogram("archipelago_journal_write_seconds", "Time to journal an entry in Redis",
                    registry=REGISTRY, buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5))
DEADLINE_LATENESS = Histogram(
    "archipelago_deadline_lateness_seconds", "How long after its deadline a round was closed (journaled)",
    registry=REGISTRY, buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
AUTOPILOT = Histogram("archipelago_autopilot_seconds", "Time the autopilot takes for one absent player",
                      registry=REGISTRY, buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1))

Family = tuple[str, str, str, list[tuple[str, dict[str, str], float]]]


def snapshot() -> list[Family]:
    """Every metric family of this process as plain data (name, type, help, samples)."""
    out: list[Family] = []
    for fam in REGISTRY.collect():
        out.append((fam.name, fam.type, fam.documentation,
                    [(s.name, dict(s.labels), float(s.value)) for s in fam.samples]))
    return out


def value(families: list[Family], sample: str, **labels: Any) -> float:
    """One sample's value from a snapshot (0 when absent): for tests and tools."""
    want = {k: str(v) for k, v in labels.items()}
    return sum(v for fam in families for name, lab, v in fam[3]
               if name == sample and all(lab.get(k) == x for k, x in want.items()))
