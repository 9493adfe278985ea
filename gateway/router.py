"""Routing a game's calls to the GameShard that hosts it: batches on one TCP stream per shard
(:mod:`services.hop`), or a Ray actor call each with ``ARCHIPELAGO_SHARD_HOP=ray``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from typing import Any

from opentelemetry import trace
from prometheus_client import Counter, Gauge, Histogram

from engine.errors import Conflict, NotFound, Unavailable, from_dict
from gateway.cache import CACHE_ENTRIES, LRU
from services import tracing
from services.hop import HopClient, HopLost
from services.placement import rendezvous
from services.shard_api import ShardApi, typed
from services.store import Store

log = logging.getLogger(__name__)

PLACEMENTS = Counter("archipelago_placements", "Games placed on a shard by this gateway (a placement recorded in "
                     "Redis; a retried create that finds its game placed is not counted)")
PLACEMENT_MOVES = Counter("archipelago_placement_moves", "Games whose recorded shard this gateway changed (moved to "
                          "another shard; draining a shard moves its games)")

#: the gateway -> shard hop (every shard together; a batch's round trip includes the retries of a restarting shard)
HOP_SECONDS = Histogram("archipelago_hop_batch_seconds", "Round trip of a batch of shard calls from this gateway (its "
                        "stream, or a Ray call), retries while the shard restarts included",
                        buckets=(0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0))
HOP_CALLS = Histogram("archipelago_hop_batch_calls", "Calls a batch to a shard carries",
                      buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256))
HOP_QUEUED = Gauge("archipelago_hop_queued_calls", "Shard calls waiting in this gateway's per-shard queues for a "
                   "batch to leave")

#: how batches reach a shard: "stream" (a TCP stream per shard, services.hop) or "ray" (a Ray actor call each)
HOP = os.environ.get("ARCHIPELAGO_SHARD_HOP", "stream")
RETRY_S = 60.0  # how long a call waits for a restarting shard
MOVED_RETRIES = 4  # a call that meets a draining shard goes again (the set re-read) this many times
DRAIN_TIMEOUT_S = 60.0  # how long a drain waits for the calls in flight on the drained shard


#: a call waiting in a :class:`Batcher`: method, arguments, trace carrier, its answer, its hop span
Pending = tuple[str, tuple[Any, ...], dict[str, str], asyncio.Future[dict[str, Any]], trace.Span]


class Batcher:
    """Coalesces the calls to one shard: a call goes out at once when the line to the shard is idle;
    calls arriving while a batch is out wait and leave together in the next one — unless that batch
    is slow (out for ``SECOND_LINE_S``: a long call in it, an Archipelago map being made), then a
    second batch may go beside it (at most ``MAX_IN_FLIGHT``), so one slow call never holds the others.

    A batch costs the gateway about the same CPU whatever it carries (a Ray call ~0.4–0.7 ms, measured on
    this machine; a stream frame much less, README "How it is built"), so under load this turns
    thousands of small calls per second into a few hundred large ones, with no added delay when the
    system is idle."""

    MAX_IN_FLIGHT = 2
    MAX_BATCH = 256
    SECOND_LINE_S = 0.005

    def __init__(self, router: ShardRouter, shard: str) -> None:
        self.router = router
        self.shard = shard
        self.pending: list[Pending] = []
        self.in_flight: list[float] = []  # when each batch out now left (loop time)
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def call(self, method: str, args: tuple[Any, ...]) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        with tracing.hop_span(self.shard, method) as span:  # (the shard's span is its child)
            self.pending.append((method, args, tracing.carrier(), fut, span))
            HOP_QUEUED.inc()
            self._kick()
            try:
                reply = await fut
            except Exception as exc:
                tracing.failed(getattr(exc, "code", "server/internal"), span)
                raise
            if span.is_recording() and (code := tracing.error_code(reply)) is not None:
                tracing.failed(code, span)
            return reply

    def _kick(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending and len(self.in_flight) < self.MAX_IN_FLIGHT:
            if self.in_flight:
                opens = min(self.in_flight) + self.SECOND_LINE_S
                if loop.time() < opens:  # the batch out is young: wait for it (or for it to turn slow)
                    if self._timer is None:
                        self._timer = loop.call_at(opens, self._on_timer)
                    return
            batch, self.pending = self.pending[:self.MAX_BATCH], self.pending[self.MAX_BATCH:]
            HOP_QUEUED.dec(len(batch))
            HOP_CALLS.observe(len(batch))
            started = loop.time()
            self.in_flight.append(started)
            task = loop.create_task(self._send(batch, started))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _on_timer(self) -> None:
        self._timer = None
        self._kick()

    async def _send(self, batch: list[Pending], started: float) -> None:
        try:
            tracing.batch_left([entry[4] for entry in batch])
            with HOP_SECONDS.time():
                replies = await self.router.send_batch(self.shard, [(m, a, c) for m, a, c, _, _ in batch])
            for (_, _, _, fut, _), reply in zip(batch, replies, strict=True):
                if not fut.done():
                    fut.set_result(reply)
        except Exception as exc:
            for _, _, _, fut, _ in batch:
                if not fut.done():
                    fut.set_exception(exc)
        finally:
            self.in_flight.remove(started)
            self._kick()


class ShardRouter:
    """Finds a game's shard (recorded placement, else rendezvous hashing over the active shards) and
    calls it.

    The shard set is the cluster's, in Redis (:meth:`refresh`, each second from the gateway's
    monitor): a game placed on a shard that is no longer active (draining, or gone from the set) is
    moved — its placement record rewritten, atomically and once — to the rendezvous choice among the
    active ones, which loads it from its journal. A draining shard answers ``moved`` to any call
    that still reaches it, and the call goes again. Calls are retried while a shard restarts; that is
    safe because every shard mutation is idempotent (creation by game id, submissions by
    idempotency key) and every journal append is fenced."""

    def __init__(self, store: Store, shard_names: list[str], namespace: str) -> None:
        self.store = store
        self.names = list(shard_names)
        self.states = {n: "active" for n in self.names}
        self.namespace = namespace
        self._handles: dict[str, Any] = {}
        self._placement: LRU[str, str] = LRU(CACHE_ENTRIES)
        self._batchers: dict[str, Batcher] = {}
        self._streams: dict[str, HopClient] = {}  # one per shard (bounded by the shard set)
        self._opening: dict[str, asyncio.Task[HopClient]] = {}
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def active(self) -> list[str]:
        return [n for n in self.names if self.states.get(n) == "active"] or self.names

    async def refresh(self) -> dict[str, str]:
        """Read the cluster's shard set from Redis (the gateway's monitor calls this each second)."""
        states = await self.store.shard_set()
        if states:
            self.names = sorted(states, key=lambda n: (len(n), n))
            self.states = states
        return self.states

    async def drain(self, shard: str) -> dict[str, Any]:
        """Move every game off ``shard`` and keep new ones away, losing nothing: mark it draining (in
        Redis: every gateway routes around it within a second), let it refuse new calls, move each
        game of its deadline index to an active shard (placement and deadline in one step) and have
        that shard load it (its deadline armed there), then wait until the drained shard holds no
        game in memory (calls in flight there finish first)."""
        if shard not in self.names:
            raise NotFound(f"no shard {shard[:40]!r}", field="shard")
        if len([n for n in self.names if self.states.get(n) == "active" and n != shard]) == 0:
            raise Conflict("draining it would leave no active shard", field="shard")
        await self.store.ensure_shard_set(self.names)  # (a cluster started before shard sets had none)
        # the games it holds now: "moved" counts those that left it, whoever's call moved each (a game
        # called while the drain runs is moved by that call, :meth:`shard_of`)
        had = {game_id for game_id, _ in await self.store.deadlines(shard)}
        await self.store.set_shard_state(shard, "draining")
        await self.refresh()
        await self.shard(shard).set_draining(True)
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while True:
            for game_id, _ in await self.store.deadlines(shard):
                await self._move(game_id, shard)
            held = await self.shard(shard).release()
            if not held and not await self.store.deadlines(shard):
                moved = sum([await self.store.placement(g) not in (None, shard) for g in had])
                return {"shard": shard, "moved": moved}
            if time.monotonic() > deadline:
                raise Unavailable(f"shard {shard} still holds {held} game(s) in calls; drain again",
                                  field="shard")
            await asyncio.sleep(0.1)  # (its calls in flight are finishing)

    async def activate(self, shard: str) -> dict[str, Any]:
        """Take new games on ``shard`` again (games moved away stay where they are); a new name
        ``shard-N`` adds a shard to the cluster (its actor started, detached, on the Ray cluster)."""
        if shard not in self.names:
            if not re.fullmatch(r"shard-[0-9]{1,4}", shard):
                raise NotFound(f"no shard {shard[:40]!r} (a new one is named shard-N)", field="shard")
            from services.cluster import start_shards

            await asyncio.to_thread(start_shards, [shard], self.store.url, prefix=self.store.prefix,
                                    namespace=self.namespace, detached=True)
        await self.store.ensure_shard_set(self.names)
        await self.store.set_shard_state(shard, "active")
        await self.refresh()
        await self.shard(shard).set_draining(False)
        return {"shard": shard, "state": "active"}

    async def remove(self, shard: str) -> dict[str, Any]:
        """Drain ``shard``, then stop its actor and take it out of the cluster's shard set."""
        drained = await self.drain(shard)
        import ray

        with contextlib.suppress(ValueError):  # (already gone)
            ray.kill(self.handle(shard), no_restart=True)
        self._handles.pop(shard, None)
        self._batchers.pop(shard, None)
        self._drop_stream(shard)
        await self.store.remove_shard(shard)
        await self.refresh()
        return {**drained, "removed": True}

    async def _move(self, game_id: str, old: str) -> str | None:
        """Place a game of the non-active shard ``old`` on an active one and load it there; returns
        the new shard (None if someone else had moved it already)."""
        new = rendezvous(game_id, self.active)
        at = await self.store.move(game_id, old, new)
        self._placement.put(game_id, at)
        if at != new:
            return None
        PLACEMENT_MOVES.inc()
        with contextlib.suppress(NotFound):  # (a game whose journal is gone has nothing to load)
            await self.shard(at).adopt(game_id)
        return at

    def handle(self, name: str) -> Any:
        h = self._handles.get(name)
        if h is None:
            import ray

            h = ray.get_actor(name, namespace=self.namespace)
            self._handles[name] = h
        return h

    async def place_new(self, game_id: str) -> str:
        shard, recorded = await self.store.claim_placement(game_id, rendezvous(game_id, self.active))
        if recorded:
            PLACEMENTS.inc()
        self._placement.put(game_id, shard)
        return shard

    async def shard_of(self, game_id: str) -> str:
        shard = self._placement.get(game_id) or await self._recorded(game_id)
        if self.states.get(shard) != "active" and shard not in self.active:
            shard = await self._move(game_id, shard) or await self._recorded(game_id)
        return shard

    async def _recorded(self, game_id: str) -> str:
        shard = await self.store.placement(game_id)
        if shard is None:
            raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
        self._placement.put(game_id, shard)
        return shard

    def game(self, game_id: str) -> ShardApi:
        """The shard that hosts ``game_id``, as :class:`ShardApi` (routed per call; see :meth:`call`)."""
        return typed(lambda method, args: self.call(game_id, method, *args))

    def shard(self, name: str) -> ShardApi:
        """The shard ``name`` itself, as :class:`ShardApi` (see :meth:`call_shard`)."""
        return typed(lambda method, args: self.call_shard(name, method, *args))

    async def call(self, game_id: str, method: str, *args: Any) -> Any:
        for _ in range(MOVED_RETRIES):
            shard = await self.shard_of(game_id)
            reply = await self._batched(shard, method, args)
            if "moved" not in reply:
                return self._result(reply)
            self._placement.pop(game_id)  # the shard drains: the set has changed; read it again
            await self.refresh()
        raise Unavailable(f"game {game_id[:40]!r} is moving between shards; retry", field="game_id")

    async def call_shard(self, shard: str, method: str, *args: Any) -> Any:
        reply = await self._batched(shard, method, args)
        if "moved" in reply:
            raise Unavailable(f"shard {shard} is draining; retry", field="game_id")
        return self._result(reply)

    async def _batched(self, shard: str, method: str, args: tuple[Any, ...]) -> dict[str, Any]:
        batcher = self._batchers.get(shard)
        if batcher is None:
            batcher = self._batchers[shard] = Batcher(self, shard)
        return await batcher.call(method, args)

    @staticmethod
    def _result(reply: dict[str, Any]) -> Any:
        if "error" in reply:
            raise from_dict(reply["error"])
        return reply["ok"]

    async def send_batch(self, shard: str, calls: list[tuple[str, tuple[Any, ...], dict[str, str]]]
                         ) -> list[dict[str, Any]]:
        """One batch of shard calls, on the shard's stream (:mod:`services.hop`; ``ARCHIPELAGO_SHARD_HOP=ray``:
        one Ray call instead); retried while the shard restarts or its stream is found again."""
        from ray.exceptions import RayActorError

        deadline = time.monotonic() + RETRY_S
        delay = 0.05
        while True:
            try:
                if HOP == "ray":
                    replies: list[dict[str, Any]] = await self.handle(shard).call_many.remote(calls)
                    return replies
                return await (await self._stream(shard)).send(calls)
            except (RayActorError, ValueError, HopLost) as exc:  # ValueError: named actor not yet re-registered
                self._handles.pop(shard, None)
                self._drop_stream(shard)
                if time.monotonic() > deadline:
                    raise Unavailable(f"shard {shard} unavailable ({type(exc).__name__})") from exc
                log.warning("shard %s unavailable (%s); retrying", shard, type(exc).__name__)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _stream(self, shard: str) -> HopClient:
        """The open stream to ``shard``, opened once (its address asked of the actor through Ray)."""
        client = self._streams.get(shard)
        if client is not None and not client.broken:
            return client
        opening = self._opening.get(shard)
        if opening is None:
            opening = self._opening[shard] = asyncio.get_running_loop().create_task(self._open(shard))
            opening.add_done_callback(lambda _t: self._opening.pop(shard, None))
        return await asyncio.shield(opening)

    async def _open(self, shard: str) -> HopClient:
        host, port, token = await self.handle(shard).hop_address.remote()
        client = HopClient(str(token))
        await client.connect(str(host), int(port))
        self._streams[shard] = client
        return client

    def _drop_stream(self, shard: str) -> None:
        client = self._streams.pop(shard, None)
        if client is not None:
            task = asyncio.get_running_loop().create_task(client.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close every shard stream (the gateway stops)."""
        for shard in list(self._streams):
            client = self._streams.pop(shard)
            await client.close()

    async def ping_all(self) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(self.handle(n).ping.remote() for n in self.names)))
