"""Per-client-address limits of the gateway (issue 11): lobby calls, failed authentications, open lobbies,
community reads and spectator streams.

A client address (``PEER``, set by each door for the request it serves: gRPC from the call's peer,
HTTP and WebSocket — hence MCP too — from the connection) has three token buckets in this gateway
process: one for lobby calls (CreateGame, JoinGame, ListGames, QuickPlay, CreateProfile,
ResetProfileSecret), one for failed authentications (a wrong or revoked secret or token) and one for
community reads (ListLiveGames, GetSpectatorView, Spectate, profiles, leaderboards, replays).  Spectator
streams are capped per game and per address on this gateway.  An empty bucket refuses with
``client/throttled`` (RESOURCE_EXHAUSTED / 429) naming the seconds to wait, in the message and
machine-readable (:class:`Wait`: HTTP ``Retry-After``, gRPC trailer ``retry-after``); a refused
authentication is refused before the secret is looked up.  The cap on open lobby games per address
is cluster-wide (kept in Redis, see :meth:`services.store.Store.open_lobbies`).

Everything is configurable by environment, so that load tests can raise or switch them off:
``ARCHIPELAGO_RATE_LIMITS=off``, ``ARCHIPELAGO_LOBBY_PER_MIN`` / ``_LOBBY_BURST``,
``ARCHIPELAGO_AUTH_FAILURES_PER_MIN`` / ``_AUTH_FAILURES_BURST``, ``ARCHIPELAGO_OPEN_LOBBIES``,
``ARCHIPELAGO_READS_PER_MIN`` / ``_READS_BURST``, ``ARCHIPELAGO_SPECTATORS_PER_GAME``,
``ARCHIPELAGO_SPECTATE_PER_ADDRESS``.
Buckets live in bounded maps (the least recently seen addresses are forgotten: a full bucket).
Behind a proxy every client has the proxy's address: raise the limits there.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from prometheus_client import Counter

from engine import errors as E
from engine.errors import Throttled
from gateway.cache import LRU

#: the client address of the request being served ("" when unknown: never limited)
PEER: ContextVar[str] = ContextVar("archipelago_peer", default="")
MAX_PEERS = 100_000
REFUSED = Counter("archipelago_throttled_total", "requests refused by a per-address limit (client/throttled): "
                  "lobby calls, failed authentications, open lobby games", ["limit"])
#: the ``limit`` label of archipelago_throttled_total, one counter each (every series there from 0)
THROTTLED = {limit: REFUSED.labels(limit) for limit in ("lobby", "auth_failures", "open_lobbies", "reads",
                                                        "spectators")}


def grpc_peer(peer: str) -> str:
    """The address of a grpc peer string ("ipv4:1.2.3.4:5678", "ipv6:[::1]:5678", "unix:…")."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        return rest.rsplit(":", 1)[0].strip("[]")
    return kind  # unix sockets and the rest: one address each kind


class TooLarge(E.TooLarge):
    """A request (body, message, frame) over the size limit of every door: ``request/too_large``,
    field ``body`` (the error table: gRPC INVALID_ARGUMENT with the error trailers, HTTP 413)."""

    def __init__(self, limit: int, what: str = "a request") -> None:
        super().__init__(f"{what} is at most {limit} bytes ({limit // 1024} KiB)", field="body")


class Wait(Throttled):
    """``client/throttled`` with the time to wait in machine-readable form: ``retry_after_s``, whole
    seconds rounded up (at least 1), sent as HTTP ``Retry-After`` and gRPC trailer ``retry-after``
    (:func:`gateway.errors.trailers`, :func:`gateway.errors.http_headers`)."""

    def __init__(self, message: str, *, wait_s: float, field: str) -> None:
        self.retry_after_s = max(1, math.ceil(wait_s)) if math.isfinite(wait_s) else 86_400
        super().__init__(message.format(s=self.retry_after_s), field=field)


@dataclass(frozen=True)
class Limits:
    enabled: bool = True
    lobby_per_min: float = 60.0
    lobby_burst: int = 30
    auth_failures_per_min: float = 30.0
    auth_failures_burst: int = 30
    open_lobbies: int = 20
    #: community reads (ListLiveGames, GetSpectatorView, profiles, leaderboards, replays, Spectate opens)
    reads_per_min: float = 120.0
    reads_burst: int = 60
    #: spectator streams of one game on one gateway (not per address: every spectator counts)
    spectators_per_game: int = 200
    #: open spectator streams of one client address on one gateway
    spectate_per_address: int = 8

    @classmethod
    def off(cls) -> Limits:
        return cls(enabled=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if env is None else env
        if env.get("ARCHIPELAGO_RATE_LIMITS", "").lower() in ("off", "0", "false", "no"):
            return cls.off()
        d = cls()

        def num(name: str, default: float) -> float:
            raw = env.get(f"ARCHIPELAGO_{name}")
            return float(raw) if raw else default

        return cls(lobby_per_min=num("LOBBY_PER_MIN", d.lobby_per_min),
                   lobby_burst=int(num("LOBBY_BURST", d.lobby_burst)),
                   auth_failures_per_min=num("AUTH_FAILURES_PER_MIN", d.auth_failures_per_min),
                   auth_failures_burst=int(num("AUTH_FAILURES_BURST", d.auth_failures_burst)),
                   open_lobbies=int(num("OPEN_LOBBIES", d.open_lobbies)),
                   reads_per_min=num("READS_PER_MIN", d.reads_per_min),
                   reads_burst=int(num("READS_BURST", d.reads_burst)),
                   spectators_per_game=int(num("SPECTATORS_PER_GAME", d.spectators_per_game)),
                   spectate_per_address=int(num("SPECTATE_PER_ADDRESS", d.spectate_per_address)))


class Buckets:
    """Token buckets by address: ``rate`` tokens a second, at most ``burst``."""

    def __init__(self, rate_per_min: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate = rate_per_min / 60.0
        self.burst = float(burst)
        self.clock = clock
        self.level: LRU[str, tuple[float, float]] = LRU(MAX_PEERS)  # address -> (tokens, at)

    def _now(self, peer: str) -> tuple[float, float]:
        now = self.clock()
        tokens, at = self.level.get(peer) or (self.burst, now)
        return min(self.burst, tokens + (now - at) * self.rate), now

    def wait_s(self, peer: str) -> float:
        """0 when a token is there now, else the seconds until one is."""
        tokens, _ = self._now(peer)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate if self.rate > 0 else math.inf

    def take(self, peer: str) -> None:
        tokens, now = self._now(peer)
        self.level.put(peer, (tokens - 1, now))


class Limiter:
    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.lobby = Buckets(limits.lobby_per_min, limits.lobby_burst, clock)
        self.failures = Buckets(limits.auth_failures_per_min, limits.auth_failures_burst, clock)
        self.reads = Buckets(limits.reads_per_min, limits.reads_burst, clock)

    def _peer(self) -> str:
        return PEER.get() if self.limits.enabled else ""

    def lobby_call(self) -> None:
        """Count a lobby call of the current address; Throttled when its bucket is empty."""
        peer = self._peer()
        if not peer:
            return
        wait = self.lobby.wait_s(peer)
        if wait > 0:
            THROTTLED["lobby"].inc()
            raise Wait("too many lobby calls from this address: retry in {s} s", wait_s=wait, field="client")
        self.lobby.take(peer)

    def read_call(self) -> None:
        """Count a community read of the current address (community.proto); Throttled when its bucket
        is empty."""
        peer = self._peer()
        if not peer:
            return
        wait = self.reads.wait_s(peer)
        if wait > 0:
            THROTTLED["reads"].inc()
            raise Wait("too many reads from this address: retry in {s} s", wait_s=wait, field="client")
        self.reads.take(peer)

    def spectators_full(self, what: str) -> Throttled:
        """The refusal of a spectator stream beyond a cap (counted); the wait: a guess, streams end."""
        THROTTLED["spectators"].inc()
        return Wait(what + ": retry in {s} s", wait_s=30.0, field="game_id")

    def before_auth(self) -> None:
        """Refuse at once while the current address has spent its failed authentications."""
        peer = self._peer()
        if peer and (wait := self.failures.wait_s(peer)) > 0:
            THROTTLED["auth_failures"].inc()
            raise Wait("too many failed authentications from this address: retry in {s} s", wait_s=wait,
                       field="authorization")

    def auth_failed(self) -> None:
        peer = self._peer()
        if peer:
            self.failures.take(peer)

    def open_lobby_cap(self) -> int:
        """The cap on open lobby games of the current address (0: none)."""
        return self.limits.open_lobbies if self._peer() else 0

    def too_many_lobbies(self, ttl_s: float) -> Throttled:
        """The refusal of a create beyond :meth:`open_lobby_cap` (counted)."""
        THROTTLED["open_lobbies"].inc()  # (the wait: the latest an open lobby frees its place by itself)
        return Wait(f"at most {self.limits.open_lobbies} open lobby games per client address: start one or "
                    f"let one expire ({ttl_s / 3600:g} h after its creation)", wait_s=ttl_s, field="client")


__all__ = ["PEER", "THROTTLED", "Limiter", "Limits", "TooLarge", "Wait", "grpc_peer"]
