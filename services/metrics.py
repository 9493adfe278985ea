"""Prometheus metrics of a shard process, and the Redis metrics every process keeps.

Each GameShard process fills its own registry; the gateway collects every shard's samples through a
Ray call when it is scraped and exposes them on its own ``/metrics`` with a ``shard`` label
(:class:`gateway.metrics.ShardCollector`), so one scrape target shows the whole cluster.

Redis (:class:`RedisMetrics`, filled by :class:`services.store.Store`): a shard's go in its registry
(:data:`SHARD_REDIS`); any other process's — the gateway's — in :data:`PROCESS_REDIS`, registered
nowhere, because the gateway's ``/metrics`` also shows the shards' families of the same names and a
scrape must show each family once: :class:`gateway.metrics.ShardCollector` exposes the gateway's
samples (no ``shard`` label) inside the shards' families. The same holds for the collector's pauses
(:class:`GcPauses`), the event loop's lag (:class:`LoopLag`) and the process's own figures
(``process_*``: a shard's :data:`SHARD_PROCESS`; the gateway's prometheus_client default one).

Games (:func:`count_game`, called by the game actor for each journal entry it writes — never for the
entries it replays when a game reloads, so a shard restart counts no start or end twice):
``archipelago_games_started_total{kind}``, ``archipelago_games_finished_total{kind, outcome}``
(:data:`OUTCOMES`), ``archipelago_game_duration_seconds{kind}`` (start to end, games that started),
``archipelago_lobby_wait_seconds{kind}`` (creation to start). Every (kind, outcome) from 0.
"""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from engine import GAMES as GAME_KINDS
from engine import get_game
from engine.archipelago.game import ACTION_KINDS as ARCHIPELAGO_ACTIONS
from engine.salvo.game import ACTION_KINDS as SALVO_ACTIONS

REGISTRY = CollectorRegistry(auto_describe=True)  # (its ProcessCollector has no describe: names from collect)

#: the phases of a game (GameActor.status), the ``phase`` label of archipelago_games
PHASES = ("lobby", "running", "over")
#: the kinds of immediate actions (the ``action`` oneof of ActRequest in game.proto), the ``kind`` label
#: of archipelago_actions_total: the engines' own lists (Salvo's chat, Archipelago's bank and trades), then
#: each turn game's kind, under which its actions count ("arcmage"); anything else counts as "other"
ACTION_KINDS: tuple[str, ...] = (*dict.fromkeys([*SALVO_ACTIONS, *ARCHIPELAGO_ACTIONS]),
                                 *(kind for kind in GAME_KINDS if hasattr(get_game(kind), "apply_action")))

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

#: how a game ended (the ``outcome`` label of archipelago_games_finished_total): ``won`` (one winner, or a
#: win shared by a tie, Archipelago's A67), ``draw`` (nobody won: Salvo's both-sunk or level at its round
#: cap, Arcmage's last players out at once or its round cap), ``ended`` (an operator ended it: the admin
#: door), ``abandoned`` (a lobby nobody started before it expired)
OUTCOMES = ("won", "draw", "ended", "abandoned")
#: a game's length: from a quick test game's seconds to the longest deadlines' weeks
DURATION_BUCKETS = (10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0,
                    86400.0, 2 * 86400.0, 4 * 86400.0, 7 * 86400.0, 14 * 86400.0, 28 * 86400.0)
#: a lobby's wait, up to its expiry (ARCHIPELAGO_LOBBY_TTL_S, a day by default)
LOBBY_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0,
                 12 * 3600.0, 86400.0)
GAMES_STARTED = Counter("archipelago_games_started", "Games started (play began), by kind", ["kind"],
                        registry=REGISTRY)
GAMES_FINISHED = Counter("archipelago_games_finished", "Games finished, by kind and outcome: won, draw, ended "
                         "(by an operator), abandoned (a lobby that expired unstarted)", ["kind", "outcome"],
                         registry=REGISTRY)
GAME_DURATION = Histogram("archipelago_game_duration_seconds", "From a game's start to its end (games that "
                          "started), by kind", ["kind"], registry=REGISTRY, buckets=DURATION_BUCKETS)
LOBBY_WAIT = Histogram("archipelago_lobby_wait_seconds", "From a game's creation to its start, by kind",
                       ["kind"], registry=REGISTRY, buckets=LOBBY_BUCKETS)
for _kind in GAME_KINDS:  # every series from 0
    GAMES_STARTED.labels(_kind)
    GAME_DURATION.labels(_kind)
    LOBBY_WAIT.labels(_kind)
    for _outcome in OUTCOMES:
        GAMES_FINISHED.labels(_kind, _outcome)


def outcome_label(outcome: Mapping[str, Any] | None) -> str:
    """The ``outcome`` label of a finished game's outcome (its ``reason``, ``draw`` and ``winners``)."""
    outcome = outcome or {}
    reason = outcome.get("reason")
    if reason == "ended":  # (services.actor_core.ENDED: the admin door)
        return "ended"
    if reason == "expired":  # (services.actor_core: a lobby nobody started)
        return "abandoned"
    return "draw" if outcome.get("draw") or not outcome.get("winners") else "won"


def count_game(kind: str, op: str, before: str, after: str, *, at_ms: int, created_ms: int, started_ms: int,
               outcome: Mapping[str, Any] | None) -> None:
    """A journal entry (``op``, written at ``at_ms``) that the game actor has just written and applied took
    the game from status ``before`` to ``after``: a ``start`` counts a start and its lobby wait (since
    ``created_ms``); reaching "over" a finish by outcome and, for a game that started (``started_ms``),
    its duration. Called for live entries only (a reload's replay counts nothing)."""
    if op == "start":
        GAMES_STARTED.labels(kind).inc()
        LOBBY_WAIT.labels(kind).observe(max(0, at_ms - created_ms) / 1000)
    if before != "over" and after == "over":
        GAMES_FINISHED.labels(kind, outcome_label(outcome)).inc()
        if started_ms:
            GAME_DURATION.labels(kind).observe(max(0, at_ms - started_ms) / 1000)
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
        self.pool = RedisPools()
        if registry is not None:
            registry.register(self.pool)

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


class RedisPools(Collector):
    """The process's Redis connection pools, read when scraped: ``archipelago_redis_pool_connections{state}``
    (``in_use``: lent to a command now; ``idle``: open, waiting in the pool) and
    ``archipelago_redis_pool_waiting`` (calls waiting for a connection: the pool is at its
    ``max_connections``). :class:`services.store.Store` tracks its pool here while it is open."""

    CONNECTIONS, WAITING = "archipelago_redis_pool_connections", "archipelago_redis_pool_waiting"

    def __init__(self) -> None:
        self.pools: weakref.WeakSet[Any] = weakref.WeakSet()

    def track(self, pool: Any) -> None:
        self.pools.add(pool)

    def untrack(self, pool: Any) -> None:
        self.pools.discard(pool)

    def describe(self) -> Iterator[Metric]:
        """The families' names (for a registry's duplicate check; collect reads the pools)."""
        yield GaugeMetricFamily(self.CONNECTIONS, "", labels=["state"])
        yield GaugeMetricFamily(self.WAITING, "")

    def collect(self) -> Iterator[Metric]:
        used = idle = waiting = 0
        for pool in list(self.pools):
            for count, attributes in pool.get_connection_count():  # redis-py's: (idle, used) with their state
                if attributes.get("db.client.connection.state") == "used":
                    used += count
                else:
                    idle += count
            # (redis-py has no public count of them: a BlockingConnectionPool's callers wait on its condition)
            waiting += len(getattr(getattr(pool, "_condition", None), "_waiters", None) or ())
        conns = GaugeMetricFamily(self.CONNECTIONS, "Redis connections of the process's "
                                  "pool: in_use (lent to a command) or idle", labels=["state"])
        conns.add_metric(["in_use"], used)
        conns.add_metric(["idle"], idle)
        yield conns
        yield GaugeMetricFamily(self.WAITING, "Calls waiting for a Redis connection (the "
                                "pool is at its max_connections)", value=waiting)


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


class LoopLag:
    """``archipelago_event_loop_lag_seconds``: how late the process's event loop runs a timer — one task
    sleeps ``interval_s`` again and again and observes how much longer than that it took (a busy or
    blocked loop delays every call and stream of the process by as much). One task per process:
    :meth:`start` (again: nothing) on the running loop, :meth:`stop` cancels it."""

    BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

    def __init__(self, registry: CollectorRegistry | None, interval_s: float = 0.5) -> None:
        self.seconds = Histogram("archipelago_event_loop_lag_seconds", "How late the process's event loop ran "
                                 "a timer (the time every coroutine of the process waited beyond its due)",
                                 registry=registry, buckets=self.BUCKETS)
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Measure on the running loop from now on (once per process: a task already running there stays)."""
        loop = asyncio.get_running_loop()
        if self._task is not None and not self._task.done() and self._task.get_loop() is loop:
            return
        self._task = loop.create_task(self._run(), name="archipelago-loop-lag")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.interval_s
            await asyncio.sleep(self.interval_s)
            self.seconds.observe(max(0.0, loop.time() - due))


SHARD_LAG = LoopLag(REGISTRY)  # a shard process's (started by services.shard.ShardCore.start)
PROCESS_LAG = LoopLag(None)  # the gateway's (like PROCESS_GC; started by gateway.metrics.ShardCollector.attach)
#: a shard process's own CPU, memory, file descriptors and start time (process_*; the gateway's are
#: prometheus_client's default ProcessCollector's)
SHARD_PROCESS = ProcessCollector(registry=REGISTRY)

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
