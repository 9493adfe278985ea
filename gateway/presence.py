"""Presence (A17): which seats are connected, counted from the streams this gateway holds.

A player is *connected* while it has an open Watch stream on some gateway, or while its AI agent calls
(A90: a lease that outlasts the agent's last call by ``agent_presence_s``). Each open stream is a member
of a per-game sorted set in Redis with an expiry, refreshed by one heartbeat loop per gateway; closing
the stream removes it after the grace (``presence_grace_s``: a reload, a dropped connection). Nothing
else counts. Spectator streams are counted here too, but are never presence. The census of every
:class:`Presence` of the process is what ``/metrics`` shows (:class:`PresenceCollector`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway.auth import Caller
from gateway.metrics import WATCH_DOORS
from gateway.router import ShardRouter
from services.store import Store

if TYPE_CHECKING:
    from gateway.api import ApiConfig

log = logging.getLogger(__name__)

PRESENCE_TTL_S = 20.0  # a stream whose gateway stops refreshing it counts as gone after this
HEARTBEAT_S = 5.0
#: A17: a seat whose last Watch stream ended still counts as connected this long (a reload, a dropped
#: connection, a client restarted): the round waits for it meanwhile. 0: gone at once.
PRESENCE_GRACE_S = 20.0
AGENT_PRESENCE_S = 60.0  # an agent's player counts as connected this long after the agent's last call

#: the door serving the current request, for the ``door`` label of archipelago_watch_streams: the gRPC
#: door sets "grpc", the JSON + WebSocket door "http"; the MCP door's long polls (wait_for_next_round)
#: are the rest
DOOR: ContextVar[str] = ContextVar("archipelago_door", default="mcp")
_PRESENCES: weakref.WeakSet[Presence] = weakref.WeakSet()  # every Presence of this process (the metrics)


def stream_census(exclude_game: str = "") -> tuple[dict[str, int], int]:
    """(open Watch streams by door, connected players) of every player API of this process, leaving out
    the game ``exclude_game``: what :class:`PresenceCollector` exposes (``exclude_game`` for tests)."""
    doors: dict[str, int] = dict.fromkeys(WATCH_DOORS, 0)
    players: set[tuple[str, int]] = set()
    for presence in list(_PRESENCES):
        by_door, seats = presence.census(exclude_game)
        for door, n in by_door.items():
            doors[door] = doors.get(door, 0) + n
        players |= seats
    return doors, len(players)


class PresenceCollector(Collector):
    """``archipelago_watch_streams{door}`` and ``archipelago_connected_players``, counted at scrape
    time from the streams every player API of this process holds (so they can never drift)."""

    def collect(self) -> Iterator[Metric]:
        doors, players = stream_census()
        streams = GaugeMetricFamily("archipelago_watch_streams", "Open Watch streams on this gateway, by door "
                                    "(grpc; http: WebSocket; mcp: an agent's wait_for_next_round)", labels=["door"])
        for door, n in doors.items():
            streams.add_metric([door], n)
        yield streams
        yield GaugeMetricFamily("archipelago_connected_players", "Players (distinct game and seat) connected through "
                                "this gateway: at least one open Watch stream here, or their AI agent's presence "
                                "(A17, A90)", value=players)
        yield GaugeMetricFamily("archipelago_spectator_streams", "Open spectator streams (Spectate, community.proto) "
                                "on this gateway", value=sum(len(p.spectators) for p in list(_PRESENCES)))


REGISTRY.register(PresenceCollector())


class Presence:
    """The Watch streams open on this gateway, kept alive in Redis by one heartbeat loop, and the news of
    a seat connected or gone (to its game's players, and to its game, which may close a round early)."""

    def __init__(self, store: Store, router: ShardRouter, config: ApiConfig) -> None:
        self.store = store
        self.router = router
        self.config = config  # (read at each use: presence_grace_s, agent_presence_s)
        self.streams: dict[str, Caller] = {}  # every presence here: Watch streams and agents' leases
        self.doors: dict[str, str] = {}  # Watch stream id -> its door (leases have none)
        self._ids = itertools.count(1)
        self._prefix = secrets.token_hex(4)  # stream ids are unique across gateways
        self._task: asyncio.Task[None] | None = None
        self._cleanup: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.Task[None]] = set()  # grace ends (cancelled at stop: Redis expires them)
        # Agents' presence (A90): agent token hash -> [stream id, expiry (loop time), caller]
        self.leases: dict[str, list[Any]] = {}
        # spectator streams here (never presence, A17): stream id -> (game id, client address)
        self.spectators: dict[str, tuple[str, str]] = {}
        _PRESENCES.add(self)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._beat())

    async def stop(self) -> None:
        for agent in list(self.leases):
            self.end_lease(agent)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for timer in list(self._timers):
            timer.cancel()
        await asyncio.gather(*self._timers, return_exceptions=True)
        while self._cleanup:
            await asyncio.gather(*self._cleanup, return_exceptions=True)

    def open(self, who: Caller, door: str = "") -> str:
        """Register a Watch stream of ``door`` (no door: an agent's lease). No await: nothing can
        interrupt it half-way."""
        sid = f"{self._prefix}.{next(self._ids)}"
        self.streams[sid] = who
        if door:
            self.doors[sid] = door
        return sid

    def close(self, sid: str) -> Caller | None:
        self.doors.pop(sid, None)
        return self.streams.pop(sid, None)

    def open_spectator(self, game_id: str, peer: str) -> str:
        """Register a spectator stream of ``game_id`` from client address ``peer`` (no await)."""
        sid = f"spectator.{next(self._ids)}"
        self.spectators[sid] = (game_id, peer)
        return sid

    def close_spectator(self, sid: str) -> None:
        self.spectators.pop(sid, None)

    def spectators_of(self, game_id: str | None = None, peer: str | None = None) -> int:
        """Spectator streams open here of ``game_id`` (None: any game) from client address ``peer`` (None:
        any)."""
        return sum(1 for g, p in list(self.spectators.values())
                   if (game_id is None or g == game_id) and (peer is None or p == peer))

    def census(self, exclude_game: str = "") -> tuple[dict[str, int], set[tuple[str, int]]]:
        """(open Watch streams by door, the (game, seat) pairs present here), leaving out the game
        ``exclude_game``."""
        streams = dict(self.streams)  # (copies: a scrape from another thread must not see them change)
        doors: dict[str, int] = {}
        for sid, door in list(self.doors.items()):
            who = streams.get(sid)
            if who is not None and who.game_id != exclude_game:
                doors[door] = doors.get(door, 0) + 1
        seats = {(w.game_id, w.seat) for w in streams.values() if w.game_id != exclude_game}
        return doors, seats

    def later(self, coro: Any) -> None:
        """Run a cleanup coroutine to its end even if the stream's task is cancelled (tracked)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._cleanup.add(task)
        task.add_done_callback(self._cleanup.discard)

    def after(self, delay_s: float, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job()`` in ``delay_s`` seconds (tracked; cancelled when the gateway stops)."""
        async def run() -> None:
            await asyncio.sleep(delay_s)
            await job()

        task = asyncio.get_running_loop().create_task(run())
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)

    def end_lease(self, agent: str) -> None:
        """An agent's lease ends (expired, revoked, the gateway stops): its presence goes without a
        further grace (the lease already outlasted its last call)."""
        lease = self.leases.pop(agent, None)
        if lease is not None and self.close(lease[0]) is not None:
            who = lease[2]
            self.later(self.gone(who.game_id, who.seat, lease[0], grace_s=0))

    async def _beat(self) -> None:
        while True:
            now = asyncio.get_running_loop().time()
            for agent in [a for a, lease in self.leases.items() if lease[1] <= now]:
                self.end_lease(agent)
            try:
                await self.store.touch_streams(
                    [(w.game_id, w.seat, sid) for sid, w in list(self.streams.items())], PRESENCE_TTL_S)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis down: streams expire; say so, keep beating
                log.warning("presence heartbeat failed: %r", exc)
            await asyncio.sleep(HEARTBEAT_S)

    # ------------------------------------------------------------------ a seat connected or gone
    async def arrived(self, who: Caller, sid: str) -> bool:
        """Stream ``sid`` of ``who`` present in Redis; if the seat was connected nowhere else, its game's
        players are told. Present first, then asked whether it was already: a stream of the seat ending
        meanwhile (a reload's old one) sees this one, or this one sees it gone — the seat is never shown
        away. True when it was newly connected."""
        await self.store.touch_streams([(who.game_id, who.seat, sid)], PRESENCE_TTL_S)
        if await self.store.connected_elsewhere(who.game_id, who.seat, sid):
            return False
        await self.store.publish(who.game_id, {"presence": who.seat, "connected": True})
        return True

    async def hold(self, who: Caller) -> None:
        """An agent's call (A90): its player counts as connected (A17) until ``agent_presence_s`` after
        its last call, as a player with the game open does — nobody can tell an agent plays."""
        if not who.agent:
            return
        until = asyncio.get_running_loop().time() + self.config.agent_presence_s
        lease = self.leases.get(who.agent)
        if lease is not None:
            lease[1] = until
            return
        sid = self.open(who)
        self.leases[who.agent] = [sid, until, who]
        if await self.arrived(who, sid):
            self.later(self.changed(who.game_id))

    async def changed(self, game_id: str) -> None:
        """Tell the game its players' presence changed (it may close the round early, A17)."""
        try:
            await self.router.game(game_id).presence_changed(game_id)
        except Exception as exc:  # the next submission or the deadline closes the round anyway
            log.warning("presence check of %s failed: %r", game_id, exc)

    async def gone(self, game_id: str, seat: int, sid: str, grace_s: float | None = None) -> None:
        """After a stream ended: its seat stays connected for the grace (A17, ``presence_grace_s``),
        then its presence goes; if that was the seat's last stream anywhere, the others are told and
        the game re-checks an early close."""
        grace = self.config.presence_grace_s if grace_s is None else grace_s
        try:
            if grace > 0 and await self.store.linger_stream(game_id, seat, sid, grace):
                self.after(grace, lambda: self.gone(game_id, seat, sid, grace_s=0))
                return
            await self.store.drop_stream(game_id, seat, sid)
            if seat not in await self.store.connected(game_id, [seat]):
                await self.store.publish(game_id, {"presence": seat, "connected": False})
                await self.router.game(game_id).presence_changed(game_id)
        except Exception as exc:  # the stream's entry expires on its own
            log.warning("cleanup of stream %s of %s failed: %r", sid, game_id, exc)


__all__ = ["AGENT_PRESENCE_S", "DOOR", "HEARTBEAT_S", "PRESENCE_GRACE_S", "PRESENCE_TTL_S", "Presence",
           "PresenceCollector", "stream_census"]
