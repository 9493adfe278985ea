"""The gateway's request counting (every door: :func:`count`) and the shards' metrics, exposed on the
gateway's ``/metrics`` with a ``shard`` label (:class:`ShardCollector`).

``archipelago_requests_total{door, method, status, code}``: every request of every door, once, when it
is answered — ``door`` grpc, http (JSON and the WebSocket Watch), mcp (a tool call) or admin; ``method``
the rpc, tool or admin action (a fixed, bounded set per door: a path or tool that is none of them counts
as :data:`UNKNOWN`); ``status`` the gRPC status name (``OK`` on success; the JSON door answers the same
statuses, as HTTP ones); ``code`` the error table's code (gateway/errors.py), :data:`OK` on success.
``archipelago_request_latency_seconds{door, method}``: unary calls (not Watch streams).
``archipelago_watch_fanout_seconds{door}`` (door grpc, http or mcp): from a journal entry's append (its
shard's clock) to a Watch stream of this gateway having sent the updates it made (:func:`fanned_out`).

A family a shard and the gateway both have (the Redis ones, :class:`services.metrics.RedisMetrics`, with
its connection pool's, the garbage collector's pauses, :class:`services.metrics.GcPauses`, the event
loop's lag, :class:`services.metrics.LoopLag`, and the process's own ``process_*``)
comes out once: the gateway's own samples, without a ``shard`` label, then every shard's. (Two
families of one name in a scrape are refused, so the gateway's are registered nowhere else: its
``process_*`` collector, prometheus_client's default one, leaves the default registry while the
collector is :meth:`ShardCollector.attach`-ed and comes out inside it; a ShardCollector registered
otherwise leaves the shards' ``process_*`` out.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import PROCESS_COLLECTOR, Counter, Histogram
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from engine.errors import GameError
from gateway import errors
from gateway.router import ShardRouter
from services.metrics import PROCESS_GC, PROCESS_LAG, PROCESS_REDIS, Family

#: the doors (the ``door`` label)
DOORS = ("grpc", "http", "mcp", "admin")
#: the ``code`` label of a request answered without error
OK = "ok"
#: the ``method`` label of a request to no known rpc, tool or action (never the path or name asked)
UNKNOWN = "unknown"
#: every ``code`` value: the error table's codes and OK
CODES = frozenset({OK, *(k.code for k in errors.TABLE.values())})

REQUESTS = Counter("archipelago_requests_total", "Requests by door (grpc, http, mcp, admin), method (rpc, tool or "
                   "admin action), gRPC status name and error code (ok on success)",
                   ["door", "method", "status", "code"])
LATENCY = Histogram("archipelago_request_latency_seconds", "Unary call latency by door and method", ["door", "method"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))

#: the doors of a Watch stream (the ``door`` label of archipelago_watch_fanout_seconds)
WATCH_DOORS = ("grpc", "http", "mcp")
WATCH_FANOUT = Histogram(
    "archipelago_watch_fanout_seconds", "From a journal entry's append (the shard's wall clock) to a Watch stream "
    "of this gateway having written the updates it made, once per stream and entry, by door (grpc; http: the "
    "WebSocket; mcp: an agent's wait). Two clocks: the shard's and the gateway's hosts must be one machine or "
    "NTP-synchronised (a skew shows as a shift; a negative difference counts as 0)", ["door"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0))
for _door in WATCH_DOORS:
    WATCH_FANOUT.labels(_door)  # every door from 0


def fanned_out(door: str, appended_ms: Iterable[float], now_ms: float | None = None) -> None:
    """A Watch stream of ``door`` has sent the updates of entries appended at ``appended_ms`` (epoch ms)."""
    child = WATCH_FANOUT.labels(door if door in WATCH_DOORS else "mcp")  # (bounded: the Watch doors only)
    now = time.time() * 1000 if now_ms is None else now_ms
    for at in appended_ms:
        child.observe(max(0.0, now - at) / 1000)


def known(door: str, methods: Iterable[str], timed: bool = True) -> None:
    """Export a door's methods from 0: answered OK, failed with either server error (``server/internal``,
    ``server/unavailable``: the server-error ratio has a series before the first one) and, with
    ``timed``, their latency — so every (door, method) shows 0, not "No data", before its first call."""
    for method in methods:
        REQUESTS.labels(door, method, "OK", OK)
        for code in ("server/internal", "server/unavailable"):
            REQUESTS.labels(door, method, errors.TABLE[errors.BY_CODE[code]].grpc.name, code)
        if timed:
            LATENCY.labels(door, method)


def count(door: str, method: str, failure: BaseException | None = None) -> None:
    """One request of ``door`` answered: OK, or with the error ``failure`` (any exception: as the door
    answers it, :func:`gateway.errors.as_game_error`)."""
    if failure is None:
        REQUESTS.labels(door, method, "OK", OK).inc()
        return
    err = failure if isinstance(failure, GameError) else errors.as_game_error(failure)
    kind = errors.kind_of(err)
    REQUESTS.labels(door, method, kind.grpc.name, err.code if err.code in CODES else kind.code).inc()

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
    #: the families of a process's own figures (prometheus_client's ProcessCollector)
    PROCESS_PREFIX = "process_"

    def __init__(self, router: ShardRouter,
                 local: Iterable[Any] = (PROCESS_REDIS.seconds, PROCESS_REDIS.errors, PROCESS_REDIS.pool,
                                         PROCESS_GC.seconds, PROCESS_LAG.seconds)) -> None:
        self.router = router
        self.local = tuple(local)
        self.snapshots: dict[str, list[Family]] = {}
        self.up: dict[str, bool] = {}
        self.misses: dict[str, int] = {}
        self._registry: CollectorRegistry | None = None
        self._process: Collector | None = None  # the gateway's process_* collector, while attached

    def attach(self, registry: CollectorRegistry) -> None:
        """Serve on ``registry`` (the gateway's, while it serves): the registry's ``process_*`` collector
        (prometheus_client's default one) moves inside this collector, beside the shards' ``process_*``,
        and the gateway's event-loop lag is measured (:data:`services.metrics.PROCESS_LAG`)."""
        try:
            registry.unregister(PROCESS_COLLECTOR)
            self._process = PROCESS_COLLECTOR
        except KeyError:  # (a registry without it: the shards' process_* alone)
            self._process = None
        registry.register(self)
        self._registry = registry
        PROCESS_LAG.start()

    def detach(self) -> None:
        """Undo :meth:`attach`."""
        PROCESS_LAG.stop()
        if self._registry is not None:
            self._registry.unregister(self)
            if self._process is not None:
                self._registry.register(self._process)
        self._registry, self._process = None, None

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
        for metric in (*self.local, *((self._process,) if self._process is not None else ())):
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
                if self._registry is None and name.startswith(self.PROCESS_PREFIX):
                    continue  # (not attached: the registry's own process_* would come out twice)
                merged = families.get(name)
                if merged is None:
                    merged = families[name] = Metric(name, doc, typ)
                for sample, labels, v in samples:
                    merged.add_sample(sample, {**labels, "shard": shard}, v)
        yield from families.values()


def _cause(exc: BaseException) -> BaseException:
    """The game error behind an MCP tool failure (the tool's ToolError, and the MCP library's wrapping
    of it, chain to it), else ``exc``: a ToolError of its own (arguments that fail the tool's schema)
    is the caller's ``order/invalid``, an unknown tool ``lookup/not_found``, anything else internal."""
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    seen: BaseException | None = exc
    for _ in range(8):  # (a short chain; bounded all the same)
        if seen is None or isinstance(seen, GameError):
            break
        seen = seen.__cause__ or seen.__context__
    if isinstance(seen, GameError):
        return seen
    if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
        from engine.errors import InvalidOrder, NotFound

        return NotFound("no such tool") if str(exc).startswith("Unknown tool") else InvalidOrder("arguments")
    return exc


def count_tools(manager: Any) -> None:
    """Count every MCP tool call (door ``mcp``, method the tool's name, :data:`UNKNOWN` for a name that is
    no tool) by wrapping the MCP server's tool manager's ``call_tool``; its tools from 0."""
    call = manager.call_tool
    known("mcp", [t.name for t in manager.list_tools()], timed=False)  # (the wait tools are long by design)

    async def counted(name: str, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        method = name if manager.get_tool(name) is not None else UNKNOWN
        try:
            result = await call(name, arguments, *args, **kwargs)
        except Exception as exc:
            count("mcp", method, _cause(exc))
            raise
        count("mcp", method)
        return result
    manager.call_tool = counted
