"""The deadlines of one shard's games: the heap of armed deadlines, their records in the shard's deadline
index in Redis, and the timer loop that fires them (a part of :class:`services.shard.ShardCore`).

The shard owns the timer: a game actor says when its deadline changes (``on_deadline``), the shard arms
it, and when it passes calls the actor's :meth:`~services.game_actor.GameActor.deadline_passed`
(a round closed, a step's autopilot, a lobby expired or started, a deadline warning, a held result
retried). The loop logs and never dies; it also evicts the games idle in memory.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import os
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from services import metrics, tracing
from services.errors import error_dict
from services.game_actor import GameActor
from services.store import JournalConflict, Store

log = logging.getLogger(__name__)

EVICT_IDLE_MS = int(float(os.environ.get("ARCHIPELAGO_EVICT_IDLE_S", "600")) * 1000)  # memory is a cache
EVICT_EVERY_MS = 60_000
FIRE_AT_ONCE = 64  # deadlines closed concurrently by one shard
T = TypeVar("T")


class ShardTimer:
    """The deadline heap and timer loop of a shard (see the module docstring); :class:`ShardCore` says
    which games there are (:meth:`using`) and evicts the idle ones (:meth:`evict_idle`)."""

    name: str
    store: Store
    now_ms: Callable[[], int]
    draining: bool

    def _init_timer(self) -> None:
        self._heap: list[tuple[int, str]] = []
        self._deadline: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self.deadlines_fired = 0
        self._next_eviction = 0
        self._recording: set[asyncio.Task[None]] = set()

    def using(self, game_id: str) -> AbstractAsyncContextManager[GameActor]:
        raise NotImplementedError  # (ShardCore implements it)

    def evict_idle(self, idle_ms: int) -> int:
        raise NotImplementedError  # (ShardCore implements it)

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._recording.add(task)  # (tracked, and awaited by flush)
        task.add_done_callback(self._recording.discard)

    def _deadline_changed(self, game_id: str, deadline_ms: int | None) -> None:
        if deadline_ms is None:
            self._deadline.pop(game_id, None)
        else:
            self._arm(game_id, deadline_ms)
        task = asyncio.get_running_loop().create_task(self._record_deadline(game_id))
        self._recording.add(task)
        task.add_done_callback(self._recording.discard)

    async def flush(self) -> None:
        """Wait until every deadline change so far is recorded in Redis."""
        while self._recording:
            await asyncio.gather(*self._recording)

    async def _record_deadline(self, game_id: str) -> None:
        # Writes the deadline current when it runs, so out-of-order writes still end right.
        try:
            await self.store.set_deadline(self.name, game_id, self._deadline.get(game_id))
        except Exception:
            log.exception("could not record the deadline of %s", game_id)

    def _arm(self, game_id: str, deadline_ms: int) -> None:
        self._deadline[game_id] = deadline_ms
        heapq.heappush(self._heap, (deadline_ms, game_id))
        self._wake.set()

    def due(self) -> list[tuple[str, int]]:
        """Pop the games whose current deadline has passed, with that deadline."""
        now = self.now_ms()
        out = []
        while self._heap and self._heap[0][0] <= now:
            deadline, game_id = heapq.heappop(self._heap)
            if self._deadline.get(game_id) == deadline:
                del self._deadline[game_id]
                out.append((game_id, deadline))
        return out

    async def fire_due(self) -> int:
        """Close every round whose deadline passed, up to ``FIRE_AT_ONCE`` games at a time (each one
        waits for its journal write: one after the other, 10,000 deadlines due in the same second
        would close seconds late); returns how many closed. None while draining."""
        if self.draining:
            return 0
        gate = asyncio.Semaphore(FIRE_AT_ONCE)

        async def fire(game_id: str, wake: int) -> bool:
            async with gate:
                # one trace per wake-up: a close, its journal writes and the engine's resolution under it
                with tracing.root_span("shard.deadline", game=game_id, shard=self.name) as span:
                    try:
                        passed = await self.reloading(self._deadline_of, game_id)
                    except Exception as exc:
                        log.exception("deadline of %s failed", game_id)
                        tracing.failed(error_dict(exc)["code"], span)
                        return False
                    span.set_attribute("archipelago.deadline.passed", passed is not None)
                if passed is not None:  # (late from the deadline itself, not from a warning's wake-up)
                    metrics.DEADLINE_LATENESS.observe(max(0, self.now_ms() - passed) / 1000.0)
                return passed is not None

        fired = sum(await asyncio.gather(*(fire(g, d) for g, d in self.due())))
        self.deadlines_fired += fired
        return fired

    async def _deadline_of(self, game_id: str) -> int | None:
        """Wake a game (its deadline, or the deadline warning before it); the deadline that passed, if
        one did (None: not yet — the game is armed again for its next wake-up)."""
        async with self.using(game_id) as actor:
            deadline = actor.deadline_ms
            if await actor.deadline_passed():
                return deadline or 0
            wake = actor.wake_ms()
            if wake is not None and game_id not in self._deadline:
                self._arm(game_id, wake)
            return None

    async def reloading(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, once more if a journal conflict dropped its game (:meth:`using`): the entry
        that conflicted was not written, and what the call wrote before it is in the journal the game
        reloads from (its idempotency key makes that part idempotent)."""
        try:
            return await fn(*args, **kwargs)
        except JournalConflict:
            return await fn(*args, **kwargs)

    async def _timer_loop(self) -> None:
        while True:
            try:
                await self.fire_due()
                if self.now_ms() >= self._next_eviction:
                    self.evict_idle(EVICT_IDLE_MS)
                    self._next_eviction = self.now_ms() + EVICT_EVERY_MS
                self._wake.clear()
                timeout = EVICT_EVERY_MS / 1000.0
                if self._heap:
                    timeout = min(timeout, max(0.0, (self._heap[0][0] - self.now_ms()) / 1000.0))
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    pass
            except asyncio.CancelledError:
                raise
            except Exception:  # the loop never dies
                log.exception("timer loop error")
                await asyncio.sleep(0.1)
