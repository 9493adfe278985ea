"""Prometheus metrics of a shard process, and the Redis metrics every process keeps.

Each GameShard process fills its own registry; the gateway collects every shard's samples through a
Ray call when it is scraped and exposes them on its own ``/metrics`` with a ``shard`` label
(:class:`gateway.metrics.ShardCollector`), so one scrape target shows the whole cluster.

Redis (:class:`RedisMetrics`, filled by :class:`services.store.Store`): a shard's go in its registry
(:data:`SHARD_REDIS`); any other process's — the gateway's — in :data:`PROCESS_REDIS`, registered
nowhere, because the gateway's ``/metrics`` also shows the shards' families of the same names and a
scrape must show each family once: :class:`gateway.metrics.ShardCollector` exposes the gateway's
samples (no ``shard`` label) inside the shards' families.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()

#: the phases of a game (GameActor.status), the ``phase`` label of archipelago_games
PHASES = ("lobby", "running", "over")
#: the kinds of immediate actions (the ``action`` oneof of ActRequest in game.proto), the ``kind`` label
#: of archipelago_actions_total (a turn game's actions count under the game's kind, "arcmage"); anything else
#: counts as "other"
ACTION_KINDS = ("chat", "bank", "offer", "accept", "decline", "withdraw", "arcmage")

GAMES = Gauge("archipelago_shard_games", "Games held in this shard's memory", registry=REGISTRY)
GAMES_BY_PHASE = Gauge(
    "archipelago_games", "Games held in this shard's memory by kind and phase (lobby, running, over); "
    "idle games evicted from memory are not counted until they reload", ["kind", "phase"], registry=REGISTRY)
ROUNDS_CLOSED = Counter("archipelago_rounds_closed", "Rounds closed, early (A17) or at the deadline",
                        ["how"], registry=REGISTRY)
for _how in ("early", "deadline"):
    ROUNDS_CLOSED.labels(_how)  # every series from 0
ACTIONS = Counter("archipelago_actions", "Immediate actions journaled (the Act rpc: chat, bank, trade offers "
                  "and answers; and the automatic trades of standing orders, A74), by kind", ["kind"],
                  registry=REGISTRY)
RESOLUTION = Histogram("archipelago_round_resolution_seconds", "Time to resolve a round in the engine",
                       registry=REGISTRY, buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5))
JOURNAL = Histogram("archipelago_journal_write_seconds", "Time to journal an entry in Redis",
                    registry=REGISTRY, buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5))
DEADLINE_LATENESS = Histogram(
    "archipelago_deadline_lateness_seconds", "How long after its deadline a round was closed (journaled)",
    registry=REGISTRY, buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
AUTOPILOT = Histogram("archipelago_autopilot_seconds", "Time the autopilot takes for one absent player",
                      registry=REGISTRY, buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1))

NOTIFY_KINDS = ("game_started", "your_turn", "your_decision", "deadline", "trade_offer", "private_chat",
                "game_over")
NOTIFICATIONS_QUEUED = Counter("archipelago_notifications_queued", "Notifications queued in the outbox (one per "
                               "player and thing: after dedup, only for players who want that kind)", ["kind"],
                               registry=REGISTRY)
NOTIFICATIONS_DROPPED = Counter("archipelago_notifications_dropped", "Notifications not queued: the outbox was "
                                "full (ARCHIPELAGO_NOTIFY_MAX_QUEUE)", registry=REGISTRY)
for _kind in NOTIFY_KINDS:
    NOTIFICATIONS_QUEUED.labels(_kind)  # every series from 0
_ACTION_COUNTERS = {kind: ACTIONS.labels(kind) for kind in (*ACTION_KINDS, "other")}  # every series from 0


def count_action(action: Any) -> None:
    """Count one journaled action by its kind (its one top-level key; "other" if unknown)."""
    kind = next(iter(action), "other") if isinstance(action, dict) else "other"
    _ACTION_COUNTERS.get(kind, _ACTION_COUNTERS["other"]).inc()


class RedisMetrics:
    """One process's Redis round trips and failures (:class:`services.store.Store` fills them).

    - ``archipelago_redis_command_seconds{command}``: from asking to the answer (or the error), a
      wait for a pooled connection included; ``command`` is the Redis command, or ``PIPELINE`` /
      ``MULTI`` for a pipeline, timed once as one round trip (the journal's appends leave in
      pipelines). At most ``MAX_COMMANDS`` names, then ``other``.
    - ``archipelago_redis_errors_total{kind}``: commands and pipelines that failed after the
      client's retries: ``outage`` (Redis or the network to it does not answer) or ``other``.
    """

    MAX_COMMANDS = 64
    BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0)

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.seconds = Histogram("archipelago_redis_command_seconds",
                                 "Redis command (or pipeline) round trips, a wait for a pooled connection "
                                 "included", ["command"], registry=registry, buckets=self.BUCKETS)
        self.errors = Counter("archipelago_redis_errors", "Redis commands or pipelines that failed after the "
                              "client's retries: outage (no answer) or other", ["kind"], registry=registry)
        self.outage, self.other = self.errors.labels("outage"), self.errors.labels("other")
        self._commands: dict[str, Any] = {}

    def observe(self, command: str, seconds: float) -> None:
        child = self._commands.get(command)
        if child is None:
            if len(self._commands) >= self.MAX_COMMANDS:
                command = "other"
            child = self._commands.get(command) or self.seconds.labels(command)
            self._commands[command] = child
        child.observe(seconds)

    def failed(self, outage: bool) -> None:
        (self.outage if outage else self.other).inc()


SHARD_REDIS = RedisMetrics(REGISTRY)  # a shard process's (services.shard.GameShard)
PROCESS_REDIS = RedisMetrics(None)  # any other process's (the gateway's): see the module's docstring


class GcPauses:
    """``archipelago_gc_pause_seconds{generation}``: how long each of the process's garbage collections
    stopped it (every coroutine of the process waits meanwhile: a long one shows as a latency spike)."""

    BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.seconds = Histogram("archipelago_gc_pause_seconds", "Garbage collections of the process: how long "
                                 "each stopped it, by generation", ["generation"], registry=registry,
                                 buckets=self.BUCKETS)
        self._gens = [self.seconds.labels(str(g)) for g in range(3)]
        self._started = 0.0

    def install(self) -> None:
        """Time this process's collections from now on (once per process)."""
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._gens[min(2, int(info.get("generation", 2)))].observe(time.perf_counter() - self._started)


SHARD_GC = GcPauses(REGISTRY)
PROCESS_GC = GcPauses(None)  # the gateway's (like PROCESS_REDIS)

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
