"""GameShard: one Ray actor (one OS process) hosting many game actors.

All hard state is in Redis (journals, deadline index); the shard's memory is a cache of game actors
rebuilt lazily from their journals.  Ray restarts a killed shard (``max_restarts=-1``) and retries
calls made to it meanwhile (``max_task_retries=-1``): the restarted shard reloads each game on its
first call and re-arms every deadline of its index at start, firing at once those that passed while
it was down.  One timer loop per shard serves all its games' deadlines; it logs and never dies.

:class:`ShardCore` is the plain-Python logic (tested with a fake clock); :class:`GameShard` is the
Ray actor around it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from engine import GAMES
from engine.errors import NotFound
from services import gctune, metrics, tracing
from services.errors import error_dict
from services.game_actor import RUNNING, GameActor, Retention, wall_ms
from services.hop import HopServer
from services.notify.config import WarnPolicy
from services.replay import ReplayCache
from services.shard_api import METHODS, ShardApi
from services.shard_timer import ShardTimer
from services.store import JournalConflict, Store

log = logging.getLogger(__name__)



class Moved(Exception):
    """This shard is draining: the caller (the gateway's router) places the game on an active shard
    and calls that one. Never reaches a client."""


class ShardCore(ShardTimer, ShardApi):
    """The games of one shard (the shard side of :class:`services.shard_api.ShardApi`); their deadline heap
    and timer loop are its :class:`~services.shard_timer.ShardTimer` part."""

    def __init__(self, name: str, store: Store, *, now_ms: Callable[[], int] = wall_ms,
                 retention: Retention | None = None, warn: WarnPolicy | None = None) -> None:
        self.name = name
        self.store = store
        self.now_ms = now_ms
        self.retention = retention or Retention()
        self.warn = warn or WarnPolicy()
        self.games: dict[str, GameActor] = {}
        self._loading: dict[str, asyncio.Future[GameActor]] = {}
        self._init_timer()
        self._started = False
        self._start_lock = asyncio.Lock()
        self._busy: dict[str, int] = {}  # game -> calls in progress
        self._used: dict[str, int] = {}  # game -> last use (ms)
        self.draining = False  # (see set_draining)
        self.replays = ReplayCache(store.journal_read)  # finished games' replays asked last (services.replay)

    # ---------------------------------------------------------------- life cycle
    async def start(self) -> None:
        """Re-arm the deadlines of this shard's games and start the timer loop (idempotent)."""
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            # (a restarted shard that was draining goes on draining)
            self.draining = (await self.store.shard_set()).get(self.name) == "draining"
            for game_id, deadline in await self.store.deadlines(self.name):
                self._arm(game_id, deadline)
            await self.store.heartbeat_shard(self.name, self.now_ms())
            self._timer = asyncio.get_running_loop().create_task(self._timer_loop())
            metrics.SHARD_LAG.start()  # (the process's event-loop lag: one task per process)
            self._started = True

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        metrics.SHARD_LAG.stop()
        await self.store.close()

    # ---------------------------------------------------------------- games
    def _new_actor(self, game_id: str) -> GameActor:
        return GameActor(game_id, self.store, now_ms=self.now_ms, on_deadline=self._deadline_changed,
                         retention=self.retention, warn=self.warn)

    async def game(self, game_id: str) -> GameActor:
        """The game actor, loaded from its journal on first use (NotFound if it has none)."""
        actor = self.games.get(game_id)
        if actor is not None:
            return actor
        pending = self._loading.get(game_id)
        if pending is not None:
            return await pending
        fut: asyncio.Future[GameActor] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = fut
        try:
            actor = await GameActor.load(game_id, self.store, now_ms=self.now_ms, retention=self.retention,
                                         warn=self.warn)
            actor.on_deadline = self._deadline_changed
            wake = actor.wake_ms()
            if wake is not None:
                self._arm(game_id, wake)
            self.games[game_id] = actor
            fut.set_result(actor)
            if actor.status == RUNNING:  # a shard that died between a journal entry and an early close
                self._later(self._recheck(game_id))
            return actor
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved
            raise
        finally:
            del self._loading[game_id]

    async def _recheck(self, game_id: str) -> None:
        """A17 once more for a game just loaded: every connected player may be done already."""
        try:
            if game_id in self.games and not self.draining:
                async with self.using(game_id) as actor:
                    await actor.presence_changed()
        except Exception as exc:  # the next call or the deadline closes the round anyway
            log.warning("early-close check of %s after its load failed: %r", game_id, exc)

    async def create_game(self, game_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        if self.draining:
            raise Moved(game_id)
        self._busy[game_id] = self._busy.get(game_id, 0) + 1
        try:
            actor = self.games.get(game_id)
            if actor is None:
                try:
                    actor = await self.game(game_id)  # a retried create finds its journal
                except NotFound:
                    actor = self.games[game_id] = self._new_actor(game_id)
            self._used[game_id] = self.now_ms()
            return await actor.create(**spec)
        finally:
            self._busy[game_id] -= 1
            if not self._busy[game_id]:
                del self._busy[game_id]


    # ---------------------------------------------------------------- calls from the gateway
    @contextlib.asynccontextmanager
    async def using(self, game_id: str) -> AsyncIterator[GameActor]:
        """The game actor for one call; a game in use is never evicted from memory. If the journal
        has moved on without it (:class:`JournalConflict`: another writer appended), it is dropped,
        to be reloaded from the journal by the next call."""
        if self.draining:
            raise Moved(game_id)
        self._busy[game_id] = self._busy.get(game_id, 0) + 1
        try:
            actor = await self.game(game_id)
            self._used[game_id] = self.now_ms()
            try:
                yield actor
            except JournalConflict:
                if self.games.get(game_id) is actor:
                    del self.games[game_id]
                    log.warning("game %s: the journal has entries this shard did not write; reloading", game_id)
                raise
        finally:
            left = self._busy[game_id] - 1
            if left:
                self._busy[game_id] = left
            else:
                del self._busy[game_id]

    # ---------------------------------------------------------------- draining
    async def set_draining(self, draining: bool) -> dict[str, Any]:
        """Draining: every new call is refused with :class:`Moved` (the router places the game on an
        active shard, which loads it from its journal), the timer fires no deadline (the router moves
        this shard's deadline index to the new owners), and the games leave memory as their calls in
        flight end (:meth:`release`). Calls already running finish here; their journal writes are
        fenced, so a game loaded elsewhere meanwhile never gets an entry twice."""
        self.draining = draining
        return {"draining": draining, "held": await self.release()}

    async def release(self) -> int:
        """While draining: drop the games with no call in flight; returns how many are still held.
        (Their deadline changes are recorded first, so what the router moves next is complete.)"""
        await self.flush()
        if self.draining:
            for game_id in [g for g in self.games if g not in self._busy]:
                del self.games[game_id]
                self._used.pop(game_id, None)
                self._deadline.pop(game_id, None)  # (its heap entry is now stale)
        return len(self.games)

    async def adopt(self, game_id: str) -> dict[str, Any]:
        """Load a game moved here (its deadline, if any, is armed)."""
        async with self.using(game_id) as actor:
            return {"version": actor.version, "deadline_ms": actor.deadline_ms}

    def evict_idle(self, idle_ms: int) -> int:
        """Drop from memory the games nobody used for ``idle_ms`` (they reload from the journal on
        their next call or deadline); returns how many went."""
        now = self.now_ms()
        gone = [g for g in self.games if g not in self._busy and now - self._used.get(g, now) >= idle_ms]
        for g in gone:
            del self.games[g]
            self._used.pop(g, None)
        return len(gone)

    async def join(self, game_id: str, nickname: str, secret_hash: str,
                   options: dict[str, Any] | None = None, profile: dict[str, str] | None = None) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.join(nickname, secret_hash, options=options, profile=profile)

    async def start_game(self, game_id: str, seat: int, fill: bool) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.start(seat, fill)

    async def submit(self, game_id: str, seat: int, orders: dict[str, Any], version: int, key: str,
                     draft: bool) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.submit(seat, orders, version=version, key=key, draft=draft)

    async def view(self, game_id: str, seat: int) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.view(seat)

    async def updates(self, game_id: str, seat: int, after_seq: int, min_version: int = 0) -> dict[str, Any]:
        """{"updates": [seat's updates after ``after_seq``], "version": the game's version, "over": the
        game has ended}, once ``min_version`` is applied (a watcher heard of it; bounded wait)."""
        async with self.using(game_id) as actor:
            if max(min_version, actor.writing) > actor.version:
                await actor.wait_version(min_version)
            # (a rated game is over once its game_over update exists: after its "rated" entry)
            return {"updates": actor.updates_since(seat, after_seq), "version": actor.version,
                    "over": actor.status == "over" and not actor.rating_due}

    async def set_standing(self, game_id: str, seat: int, standing: dict[str, Any], key: str) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.set_standing(seat, standing, key=key)

    async def act(self, game_id: str, seat: int, action: dict[str, Any], key: str) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return await actor.act(seat, action, key=key)

    async def action(self, game_id: str, seat: int, action: dict[str, Any], key: str,
                     version: int | None = None, kind: str = "") -> dict[str, Any]:
        """A turn or window action (:meth:`GameActor.action`)."""
        async with self.using(game_id) as actor:
            return await actor.action(seat, action, key=key, version=version, kind=kind)

    async def presence_changed(self, game_id: str) -> None:
        async with self.using(game_id) as actor:
            await actor.presence_changed()

    async def whoami(self, game_id: str, seat: int) -> dict[str, Any]:
        async with self.using(game_id) as actor:
            return actor.whoami(seat)

    async def state_hash(self, game_id: str) -> dict[str, Any]:
        """For operators and tests: the game's version and the SHA-256 of its engine state."""
        from engine.base import state_hash

        async with self.using(game_id) as actor:
            return {"version": actor.version,
                    "hash": state_hash(actor.state) if actor.state is not None else ""}

    # ---------------------------------------------------------------- for operators (the admin door)
    async def list_games(self) -> dict[str, Any]:
        """This shard's games in memory (public facts, :meth:`GameActor.brief`) and its deadline index
        (game id -> deadline, Unix ms: the games it owns a deadline of, loaded or not)."""
        games = [actor.brief() for actor in list(self.games.values()) if actor.version]  # (not half-created)
        index = await self.store.deadlines(self.name)
        return {"shard": self.name, "games": sorted(games, key=lambda g: g["game_id"]),
                "deadlines": [{"game_id": g, "deadline_unix_ms": d} for g, d in index]}

    async def inspect(self, game_id: str) -> dict[str, Any]:
        """One game's public state (:meth:`GameActor.inspect`) and this shard's name."""
        async with self.using(game_id) as actor:
            return {**await actor.inspect(), "shard": self.name}

    async def end_game(self, game_id: str, reason: str = "") -> dict[str, Any]:
        """End a game now (:meth:`GameActor.end`; idempotent)."""
        async with self.using(game_id) as actor:
            return {**await actor.end(reason), "shard": self.name}

    def census(self) -> dict[tuple[str, str], int]:
        """How many games this shard holds in memory, by (kind, phase): phase is lobby, running or
        over. A game whose creation is not journaled yet has no kind: not counted."""
        out: dict[tuple[str, str], int] = {}
        for actor in self.games.values():
            if actor.kind:
                key = (actor.kind, actor.status)
                out[key] = out.get(key, 0) + 1
        return out

    async def stats(self) -> dict[str, Any]:
        """``games``: every game in memory; ``finished``: those of them over (kept until evicted idle)."""
        finished = sum(1 for actor in self.games.values() if actor.status == "over")
        return {"name": self.name, "pid": os.getpid(), "games": len(self.games), "finished": finished,
                "armed": len(self._deadline), "deadlines_fired": self.deadlines_fired, "draining": self.draining}

    # ---------------------------------------------------------------- replays and exports (services.replay)
    async def replay_frame(self, game_id: str, frame: int, seat: int) -> dict[str, Any]:
        """One frame of a finished game's replay (:meth:`services.replay.Replay.frame`), replayed from its
        journal once and kept among the last few asked (:attr:`replays`)."""
        live = self.games.get(game_id)
        replay = await self.replays.get(game_id, live.status if live is not None else None)
        return replay.frame(frame, seat)

    async def export_game(self, game_id: str) -> dict[str, Any]:
        """A finished game's journal as export records and its final state's hash
        (:meth:`services.replay.Replay.export`)."""
        live = self.games.get(game_id)
        replay = await self.replays.get(game_id, live.status if live is not None else None)
        return replay.export()


def node_address() -> str:
    """This process's Ray node address (loopback outside a Ray worker)."""
    try:
        import ray

        return str(ray.util.get_node_ip_address())
    except Exception:  # (not in a Ray worker: an in-process shard of the tests)
        return "127.0.0.1"


def in_ray_actor() -> bool:
    """True in a Ray actor's process (a shard as the cluster runs it)."""
    try:
        import ray

        return bool(ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None)
    except Exception:
        return False


class GameShard:
    """The Ray actor: wraps a ShardCore; every method returns plain data.

    Errors travel back as ``{"error": ...}`` dicts (not exceptions) so the gateway maps them without
    unpickling engine classes. Created by :func:`services.cluster.start_shards`."""

    def __init__(self, name: str, redis_url: str, prefix: str = "arch:",
                 retention: dict[str, float] | None = None, warn: dict[str, float] | None = None) -> None:
        logging.basicConfig(level=logging.INFO)
        tracing.setup("archipelago-shard")
        metrics.SHARD_GC.install()
        store = Store(redis_url, prefix, client_name=f"archipelago-{name}", metrics=metrics.SHARD_REDIS)
        self.core = ShardCore(name, store, retention=Retention(**(retention or {})), warn=WarnPolicy(**(warn or {})))
        self._hop: HopServer | None = None
        if in_ray_actor():  # (a shard's own process: not a test's in-process shard)
            gctune.tune()

    async def hop_address(self) -> list[Any]:
        """The address of this shard's call stream and the token a gateway presents on it
        (:mod:`services.hop`): ``[host, port, token]``, the host this Ray node's address. Started on the
        first ask; a restarted shard is a new process with a new address."""
        await self.core.start()
        if self._hop is None:
            self._hop = HopServer(self.call_many, error_dict)
        return list(await self._hop.start(node_address()))

    async def call(self, method: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Run one ShardCore method: ``{"ok": result}`` or ``{"error": {...}}``."""
        await self.core.start()
        if method not in METHODS:  # (only the interface's calls: services.shard_api)
            return {"error": error_dict(NotFound(f"a shard has no call {method[:40]!r}", field="method"))}
        try:
            result = await self.core.reloading(getattr(self.core, method), *args, **kwargs)
        except Moved:
            return {"moved": True}
        except Exception as exc:
            err = error_dict(exc)
            if err["type"] == "Internal":
                log.exception("shard call %s failed", method)
            return {"error": err}
        return {"ok": result}

    async def call_many(self, calls: list[tuple[str, tuple[Any, ...], dict[str, str]]]) -> list[dict[str, Any]]:
        """Many calls in one Ray call (the gateway batches per shard); run concurrently, each game's
        own calls still in arrival order (its lock is fair). Each continues its caller's trace."""
        async def one(method: str, args: tuple[Any, ...], parent: dict[str, str]) -> dict[str, Any]:
            with tracing.span_from(parent, f"shard.{method}", shard=self.core.name) as span:
                reply = await self.call(method, *args)
                if (code := tracing.error_code(reply)) is not None:
                    tracing.failed(code, span)
                return reply
        return list(await asyncio.gather(*(one(m, a, c) for m, a, c in calls)))

    async def metrics(self) -> list[Any]:
        """This shard process's metric samples (collected by the gateway's /metrics)."""

        metrics.GAMES.set(len(self.core.games))
        census = self.core.census()
        for kind in sorted({*GAMES, *(k for k, _ in census)}):
            for phase in metrics.PHASES:
                metrics.GAMES_BY_PHASE.labels(kind, phase).set(census.get((kind, phase), 0))
        return metrics.snapshot()

    async def ping(self) -> dict[str, Any]:
        await self.core.start()
        return await self.core.stats()
