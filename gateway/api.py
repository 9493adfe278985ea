"""The player API: every player flow once, for every door (gRPC, JSON + WebSocket, MCP).

Plain data in, plain data out; failures are the engine's error tree (:mod:`engine.errors`), which
each door renders through the one table of :mod:`gateway.errors`.  A door only parses its
transport's request, calls a method here and renders the answer (see ``shared/design.md``, "one
player API, three doors").

- **Authentication** (A3): a player's secret maps to (game, seat) through its SHA-256 in Redis
  (cached here, bounded).  The secret is never stored.
- **Retries**: submissions and actions carry an idempotency key (scoped to player and round, by
  the game actor); creation and joining carry a client-chosen ``request_id`` from which the game id
  and the secret are *derived* (HMAC with the gateways' shared key), so a retried create or join —
  after a lost reply — returns the same game, seat and secret without the secret being stored.
- **Presence** (A17): a player is *connected* while it has an open Watch stream on some gateway.
  Each open stream is a member of a per-game sorted set in Redis with an expiry, refreshed by one
  heartbeat loop per gateway; closing the stream removes it at once.  Nothing else counts.
- **Watch**: a player's updates after a ``seq``, then new ones as pub/sub notices announce new
  versions.  A notice can arrive before the shard has applied the version it announces (it leaves
  with the journal write), so the read names the announced version and the shard waits for it:
  a stream never goes silent on an update it was told of.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import itertools
import json
import logging
import os
import secrets
import time
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import REGISTRY
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from engine import GAMES, speed_deadlines
from engine.base import DEADLINES_KEY, TURN_DEADLINE
from engine.errors import Conflict, InvalidOrder, KeyReused, NotFound, PermissionDenied, Unauthenticated, Unavailable
from gateway.cache import CACHE_ENTRIES, LRU
from gateway.limits import PEER, Limiter, Limits
from gateway.metrics import fanned_out
from gateway.pubsub import Notices
from gateway.router import ShardRouter
from services.actor_core import SPECTATOR
from services.game_actor import Retention, check_creation, fingerprint
from services.store import Store

log = logging.getLogger(__name__)

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # A2: no 0/O/1/I
PRESENCE_TTL_S = 20.0  # a stream whose gateway stops refreshing it counts as gone after this
HEARTBEAT_S = 5.0
#: A17: a seat whose last Watch stream ended still counts as connected this long (a reload, a dropped
#: connection, a client restarted): the round waits for it meanwhile. 0: gone at once.
PRESENCE_GRACE_S = 20.0
SPEEDS = {"fast": 60.0, "slow": 8 * 3600.0}
# The largest request any door accepts (gRPC's receive limit, HTTP bodies, MCP): the biggest
# legitimate one, an 8-player Archipelago player's orders or standing orders, is a few tens of KiB.
MAX_REQUEST_BYTES = 256 * 1024
AGENT_PREFIX = "agt_"  # agent tokens (A90) look like "agt_…"; player secrets never start so
MAX_AGENT_TOKENS = 5  # live agent tokens per player
MAX_LABEL = 40
AGENT_PRESENCE_S = 60.0  # an agent's player counts as connected this long after the agent's last call
AGENT_KEY_TTL_S = 3600  # a CreateAgentToken idempotency key gives the same token this long
MAX_AGENT_KEY = 64  # characters of that key, printable (as the other doors' idempotency keys)
MIN_REQUEST_ID, MAX_REQUEST_ID = 16, 64

#: the door serving the current request, for the ``door`` label of archipelago_watch_streams: the gRPC
#: door sets "grpc", the JSON + WebSocket door "http"; the MCP door's long polls (wait_for_next_round)
#: are the rest
DOOR: ContextVar[str] = ContextVar("archipelago_door", default="mcp")
WATCH_DOORS = ("grpc", "http", "mcp")
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


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))


def bearer(value: str | None) -> str:
    """The secret in an ``authorization`` value ``"Bearer <secret>"`` ("" when absent). The scheme is
    case-insensitive (RFC 7235: ``bearer``, ``BEARER``) and may be followed by several spaces."""
    scheme, _, rest = (value or "").strip().partition(" ")
    if scheme.lower() == "bearer":
        return rest.strip()
    return ""


@dataclass
class ApiConfig:
    public_url: str = "http://127.0.0.1:8080"
    limits: Limits = field(default_factory=Limits.from_env)
    retention: Retention = field(default_factory=Retention.from_env)
    #: seconds a seat whose last Watch stream ended still counts as connected (A17);
    #: ``ARCHIPELAGO_PRESENCE_GRACE_S``
    presence_grace_s: float = field(default_factory=lambda: float(
        os.environ.get("ARCHIPELAGO_PRESENCE_GRACE_S") or PRESENCE_GRACE_S))
    #: seconds an agent's player counts as connected after the agent's last call (A17, A90);
    #: ``ARCHIPELAGO_AGENT_PRESENCE_S``
    agent_presence_s: float = field(default_factory=lambda: float(
        os.environ.get("ARCHIPELAGO_AGENT_PRESENCE_S") or AGENT_PRESENCE_S))


@dataclass(frozen=True)
class Caller:
    game_id: str
    seat: int
    # The hash of the agent token the call came with (A90), "" for the player's own secret.
    agent: str = ""


class Presence:
    """The Watch streams open on this gateway, kept alive in Redis by one heartbeat loop."""

    def __init__(self, store: Store) -> None:
        self.store = store
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
        self.on_lease_end: Any = None  # async (game_id, seat, sid) -> None, set by PlayerAPI
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
        lease = self.leases.pop(agent, None)
        if lease is not None and self.close(lease[0]) is not None and self.on_lease_end is not None:
            who = lease[2]
            self.later(self.on_lease_end(who.game_id, who.seat, lease[0]))

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


class PlayerAPI:
    """The player flows over a store (Redis) and a router (to the shards)."""

    def __init__(self, store: Store, router: ShardRouter, config: ApiConfig | None = None) -> None:
        self.store = store
        self.router = router
        self.config = config or ApiConfig()
        self.notices = Notices(store)
        self.presence = Presence(store)
        self.closing = False  # (end_streams)
        self._secrets: LRU[str, Caller] = LRU(CACHE_ENTRIES)  # secrets never change seat
        self._kinds: LRU[str, str] = LRU(CACHE_ENTRIES)  # games never change kind
        self._key: bytes | None = None
        # an agent's lease (A90) already outlasts its last call: it ends without a further grace
        self.presence.on_lease_end = lambda game_id, seat, sid: self._gone(game_id, seat, sid, grace_s=0)
        self.limiter = Limiter(self.config.limits)
        from gateway.notify_api import NotifyService
        from gateway.profiles import Profiles
        from gateway.quickplay import QuickPlay
        from gateway.replays import Replays

        self.notify = NotifyService(store, self.config.public_url)
        self.profiles = Profiles(self)  # profiles, ratings, leaderboards, history (community.proto)
        self.quick = QuickPlay(self)  # "Play now"
        self.replays = Replays(self)  # finished games: replays and exports

    async def start(self) -> None:
        await self.notices.start()
        self.presence.start()
        await self.notify.start()

    def end_streams(self) -> int:
        """A stopping gateway: every open Watch stream ends now with ``server/unavailable`` (its client
        resumes from its last seq, on another gateway), instead of being cut at the server's grace;
        a stream opened after this ends at its first wait. Returns how many were told."""
        self.closing = True
        told = 0
        for boxes in list(self.notices.boxes.values()):
            for box in list(boxes):
                box.nudge()
                told += 1
        return told

    async def stop(self) -> None:
        await self.notify.stop()
        await self.presence.stop()
        await self.notices.stop()
        await self.router.close()
        await self.store.close()

    # ------------------------------------------------------------------ helpers
    async def kind_of(self, game_id: str) -> str:
        kind = self._kinds.get(game_id)
        if kind is None:
            summary = await self.store.summary(game_id)
            if summary is None:
                raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
            kind = str(summary["game"])
            self._kinds.put(game_id, kind)
        return kind

    async def auth(self, secret: str, game_id: str | None = None) -> Caller:
        """The (game, seat) of a player secret; Unauthenticated / PermissionDenied otherwise."""
        if not secret:
            raise Unauthenticated("missing player secret (send 'authorization: Bearer <secret>')",
                                  field="authorization", rule="A3")
        self.limiter.before_auth()
        h = hash_secret(secret)
        if secret.startswith(AGENT_PREFIX):  # never cached: a revoked token is refused at once
            token_seat = await self.store.seat_of_agent_token(h)
            if token_seat is None:
                self.limiter.auth_failed()
                raise Unauthenticated("unknown or revoked agent token", field="authorization", rule="A90")
            agent = Caller(*token_seat, agent=h)
            if game_id is not None and game_id != agent.game_id:
                raise PermissionDenied("this token belongs to a player of another game", field="game_id",
                                       rule="A90")
            return agent
        who = self._secrets.get(h)
        if who is None:
            found = await self.store.seat_of_secret(h)
            if found is None:
                self.limiter.auth_failed()
                raise Unauthenticated("unknown player secret", field="authorization", rule="A3")
            who = Caller(*found)
            self._secrets.put(h, who)
        if game_id is not None and game_id != who.game_id:
            raise PermissionDenied("this secret belongs to a player of another game", field="game_id", rule="A3")
        return who

    async def _derive(self, label: str, request_id: str) -> str:
        if self._key is None:
            self._key = await self.store.server_key()
        return hmac.new(self._key, f"{label}\0{request_id}".encode(), hashlib.sha256).hexdigest()

    @staticmethod
    def _check_request_id(request_id: str) -> None:
        if request_id and not (MIN_REQUEST_ID <= len(request_id) <= MAX_REQUEST_ID and request_id.isprintable()):
            raise InvalidOrder(f"a request id is {MIN_REQUEST_ID}–{MAX_REQUEST_ID} printable characters, "
                               "random and kept secret", field="request_id")

    # ------------------------------------------------------------------ lobby
    async def create(self, *, game: str, seats: int, nickname: str, public: bool = False, speed: str = "fast",
                     deadline_seconds: float = 0.0, options: Mapping[str, Any] | None = None,
                     request_id: str = "", profile_secret: str = "",
                     extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Create a game; the caller is its host (seat 0). Returns game_id, code, invite_link, secret, seat.
        ``profile_secret`` (a ``prf_…`` bearer): the host plays under that profile (community.proto);
        ``extra``: more of the shard's create spec (a quick-play lobby's ``quick``)."""
        self._check_request_id(request_id)
        self.limiter.lobby_call()
        profile = await self.profiles.lookup(profile_secret)
        config = {**(options or {}), "players": seats or 2}
        table = speed_deadlines(game, speed or "fast")
        if table and not deadline_seconds:  # a game with its own speeds (Arcmage, M25): its turn length
            deadline_seconds = table[TURN_DEADLINE]
            config[DEADLINES_KEY] = {**table, **dict(config.get(DEADLINES_KEY) or {})}
        deadline = deadline_seconds or SPEEDS.get(speed or "fast", 0.0)
        if not deadline:
            raise InvalidOrder(f"unknown speed {speed[:20]!r}: fast or slow", field="speed", rule="A1")
        check_creation(game, config, nickname, deadline)  # before any side effect
        request = fingerprint({"game": game, "config": config, "nickname": nickname, "public": public,
                               "deadline": deadline})
        if request_id:
            game_id = (await self._derive("game", request_id))[:16]
            secret = (await self._derive(f"secret\0{game_id}", request_id))[:40]
            summary = await self.store.summary(game_id)
        else:
            game_id, secret, summary = secrets.token_hex(8), secrets.token_urlsafe(24), None
        if summary is not None:
            code = str(summary["code"])  # a retry: the game exists
        else:
            await self._check_open_lobbies()
            code = new_code()
            while not await self.store.claim_code(code, game_id):
                code = new_code()
        await self.router.place_new(game_id)
        spec: dict[str, Any] = {"kind": game, "config": config, "nickname": nickname,
                                "secret_hash": hash_secret(secret), "public": public, "deadline_s": deadline,
                                "code": code, "request": request, "speed": speed or "fast", **(extra or {})}
        if profile:
            spec["profile"] = profile
        made = await self.router.game(game_id).create_game(game_id, spec)
        if summary is None and self.limiter.open_lobby_cap():  # (a cap means a known address)
            await self.store.add_lobby(PEER.get(), game_id, self.config.retention.lobby_ttl_s)
        return {"game_id": game_id, "code": made["code"], "secret": secret, "seat": 0,
                "invite_link": f"{self.config.public_url}/join/{made['code']}"}

    async def _check_open_lobbies(self) -> None:
        cap = self.limiter.open_lobby_cap()
        if cap and len(await self.store.open_lobbies(PEER.get())) >= cap:
            raise self.limiter.too_many_lobbies(self.config.retention.lobby_ttl_s)

    async def join(self, *, code: str, nickname: str, request_id: str = "",
                   options: dict[str, Any] | None = None, profile_secret: str = "") -> dict[str, Any]:
        """Take a free seat of a game in its lobby. Returns game_id, seat, secret, game. ``options``:
        ``{kind: the seat's own choices}`` (Arcmage: its deck), checked by the game; ``profile_secret``
        as for :meth:`create`."""
        self._check_request_id(request_id)
        self.limiter.lobby_call()
        profile = await self.profiles.lookup(profile_secret)
        code = code.strip().upper()
        game_id = await self.store.game_of_code(code) if len(code) == 6 else None
        if game_id is None:
            raise NotFound(f"no game with code {code[:12]!r}", field="code", rule="A2")
        if request_id:
            secret = (await self._derive(f"join\0{game_id}", request_id))[:40]
        else:
            secret = secrets.token_urlsafe(24)
        joined = await self.router.game(game_id).join(game_id, nickname, hash_secret(secret), options, profile)
        return {"game_id": game_id, "seat": joined["seat"], "secret": secret, "game": joined["game"]}

    async def start_game(self, secret: str, game_id: str, fill_with_autopilot: bool = False) -> dict[str, Any]:
        """Start the game (host only, A4). Returns the game's summary."""
        who = await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).start_game(game_id, who.seat,
                                                        fill_with_autopilot)
        return result

    async def list_games(self, game: str = "") -> list[dict[str, Any]]:
        """Public games open for joining, newest first."""
        self.limiter.lobby_call()
        return [s for s in await self.store.open_games() if not game or s["game"] == game]

    async def rejoin(self, secret: str) -> dict[str, Any]:
        """Who a secret belongs to (A3)."""
        who = await self.auth(secret)
        result: dict[str, Any] = await self.router.game(who.game_id).whoami(who.game_id, who.seat)
        return result

    # ------------------------------------------------------------------ playing
    async def view(self, secret: str, game_id: str) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).view(game_id, who.seat)
        return result

    async def submit(self, secret: str, game_id: str, *, orders: dict[str, Any], version: int, key: str = "",
                     draft: bool = False, who: Caller | None = None) -> dict[str, Any]:
        """Orders for the round (``who``: the caller, when the door has authenticated it already)."""
        who = who or await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).submit(game_id, who.seat, orders, version,
                                                        key, draft)
        return result

    async def act(self, secret: str, game_id: str, *, action: dict[str, Any], key: str = "",
                  version: int | None = None) -> dict[str, Any]:
        """An immediate action: ``{"chat": {"text": ...}}`` and each game's own kinds; a member named
        after a game kind (``{"arcmage": {...}}``) is a turn or window action of that turn-based game."""
        who = await self.auth(secret, game_id)
        if len(action) == 1:
            (which, body), = action.items()
            if which in GAMES:
                turn: dict[str, Any] = await self.router.game(game_id).action(game_id, who.seat, body, key, version,
                                                                             which)
                return turn
        result: dict[str, Any] = await self.router.game(game_id).act(game_id, who.seat, action, key)
        return result

    async def set_standing(self, secret: str, game_id: str, *, standing: dict[str, Any],
                           key: str = "", who: Caller | None = None) -> dict[str, Any]:
        """Replace the caller's standing orders (A70–A74); ``who`` as for :meth:`submit`."""
        who = who or await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).set_standing(game_id, who.seat, standing, key)
        return result

    # ------------------------------------------------------------------ personal AI agent tokens (A90)
    async def _owner(self, secret: str, game_id: str) -> Caller:
        who = await self.auth(secret, game_id)
        if who.agent:
            raise PermissionDenied("only the player's own secret manages agent tokens", field="authorization",
                                   rule="A90")
        return who

    def _token_info(self, token_id: str, rec: Mapping[str, Any], token: str = "") -> dict[str, Any]:
        return {"token_id": token_id, "label": rec["label"], "created_unix_ms": int(rec["created_ms"]),
                "token": token, "mcp_url": f"{self.config.public_url}/mcp"}

    async def create_agent_token(self, secret: str, game_id: str, label: str = "", key: str = "") -> dict[str, Any]:
        """A new agent token for the caller's seat; the token string is in this answer only.

        ``key`` (optional idempotency key, <= 64 printable characters, scoped to the player): within
        ``AGENT_KEY_TTL_S`` of the first call, the same key with the same label answers the same token
        again — *derived* (HMAC with the gateways' shared key, from the key and a nonce kept for that
        time), never stored — and makes no second one; with another label it is
        ``request/key_reused``; once that token is revoked, the key is ``request/key_reused`` too (a
        revoked token never comes back)."""
        who = await self._owner(secret, game_id)
        if len(label) > MAX_LABEL or not label.isprintable():
            raise InvalidOrder(f"a label is 0–{MAX_LABEL} printable characters", field="label", rule="A90")
        if len(key) > MAX_AGENT_KEY or not key.isprintable():
            raise InvalidOrder(f"an idempotency key is at most {MAX_AGENT_KEY} printable characters",
                               field="idempotency_key", rule="A16")
        if key:
            token, token_id, created = await self._keyed_agent_token(who, key)
            live = (await self.store.agent_tokens(who.game_id, who.seat)).get(token_id)
            if live is not None:
                if live["label"] != label:
                    raise KeyReused("this idempotency key made a token with another label", field="idempotency_key",
                                    rule="A16")
                return self._token_info(token_id, live, token)  # a retry: the same token, nothing new
            if await self.store.agent_token_revoked(who.game_id, who.seat, token_id):
                raise KeyReused("the token this idempotency key made was revoked: use a new key",
                                field="idempotency_key", rule="A16")
        else:
            token, token_id, created = AGENT_PREFIX + secrets.token_urlsafe(24), secrets.token_hex(6), 0
        created = created or int(time.time() * 1000)
        if not await self.store.add_agent_token(who.game_id, who.seat, token_id, hash_secret(token), label, created,
                                                MAX_AGENT_TOKENS):
            # (not a rate: waiting never helps, revoking does — retry false)
            raise Conflict(f"at most {MAX_AGENT_TOKENS} live agent tokens per player: revoke one first",
                           rule="A90")
        return self._token_info(token_id, {"label": label, "created_ms": created}, token)

    async def _keyed_agent_token(self, who: Caller, key: str) -> tuple[str, str, int]:
        """(token, token id, created ms) of an idempotency key of ``who``: the first call keeps a random
        nonce and the creation time for ``AGENT_KEY_TTL_S`` (SET NX: concurrent retries agree), and
        the token is derived from the key and that nonce."""
        mine = json.dumps({"nonce": secrets.token_hex(16), "created_ms": int(time.time() * 1000)})
        first = json.loads(await self.store.agent_key(who.game_id, who.seat, hash_secret(key)[:32], mine,
                                                      AGENT_KEY_TTL_S))
        seed = await self._derive(f"agent\0{who.game_id}\0{who.seat}\0{first['nonce']}", key)
        return AGENT_PREFIX + seed[:40], seed[40:52], int(first["created_ms"])

    async def list_agent_tokens(self, secret: str, game_id: str) -> list[dict[str, Any]]:
        who = await self._owner(secret, game_id)
        tokens = await self.store.agent_tokens(who.game_id, who.seat)
        return sorted((self._token_info(tid, rec) for tid, rec in tokens.items()),
                      key=lambda t: (t["created_unix_ms"], t["token_id"]))

    async def revoke_agent_token(self, secret: str, game_id: str, token_id: str) -> None:
        """Revoke a token: every later call with it is refused, and streams open with it end."""
        who = await self._owner(secret, game_id)
        tokens = await self.store.agent_tokens(who.game_id, who.seat)
        rec = tokens.get(token_id)
        if rec is None or not await self.store.revoke_agent_token(who.game_id, who.seat, token_id):
            raise NotFound("no live agent token with this id", field="token_id", rule="A90")
        # a retried CreateAgentToken with the key that made it must not bring it back (create_agent_token)
        await self.store.mark_agent_token_revoked(who.game_id, who.seat, token_id, AGENT_KEY_TTL_S)
        await self.store.publish(game_id, {"revoked": rec["hash"]})  # every gateway ends its streams
        self.presence.end_lease(rec["hash"])

    # ------------------------------------------------------------------ notifications (notify.proto)
    async def get_notifications(self, secret: str, game_id: str) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        return await self.notify.get(who.game_id, who.seat, await self.kind_of(who.game_id))

    async def set_notifications(self, secret: str, game_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        summary = await self.store.summary(who.game_id) or {}
        return await self.notify.set(who.game_id, who.seat, await self.kind_of(who.game_id),
                                     str(summary.get("status", "")), request, agent=bool(who.agent))

    async def hold_presence(self, who: Caller) -> None:
        """An agent's call (A90): its player counts as connected (A17) until ``agent_presence_s`` after
        its last call, as a player with the game open does — nobody can tell an agent plays."""
        if not who.agent:
            return
        until = asyncio.get_running_loop().time() + self.config.agent_presence_s
        lease = self.presence.leases.get(who.agent)
        if lease is not None:
            lease[1] = until
            return
        sid = self.presence.open(who)
        self.presence.leases[who.agent] = [sid, until, who]
        # present first, then asked whether it was already: a stream ending meanwhile sees this one
        # (no "disconnected"), or this one sees it gone (and says "connected") — never neither
        await self.store.touch_streams([(who.game_id, who.seat, sid)], PRESENCE_TTL_S)
        if not await self.store.connected_elsewhere(who.game_id, who.seat, sid):
            await self.store.publish(who.game_id, {"presence": who.seat, "connected": True})
            self.presence.later(self._changed(who.game_id))

    async def watch(self, secret: str, game_id: str, after_seq: int = 0) -> AsyncGenerator[dict[str, Any], None]:
        """The caller's updates with seq > ``after_seq``, then live ones, until the game is over.

        Authentication fails before the first update.  However the consumer leaves (closes the
        iterator, is cancelled, the client goes away), the stream is unregistered, its presence
        removed and the others told."""
        who = await self.auth(secret, game_id)
        return self._stream(who, max(0, after_seq), DOOR.get())

    async def _stream(self, who: Caller, after_seq: int, door: str) -> AsyncGenerator[dict[str, Any], None]:
        game_id, seat = who.game_id, who.seat
        box = self.notices.subscribe_now(game_id)  # no await before the try: nothing can leak
        sid = self.presence.open(who, door)
        try:
            await self.notices.ready(game_id)  # subscribed before the first read: no notice missed
            # present first, then asked whether it was already (as in hold_presence: a reload's old
            # stream ending at the same time can never leave the seat shown away)
            await self.store.touch_streams([(game_id, seat, sid)], PRESENCE_TTL_S)
            if not await self.store.connected_elsewhere(game_id, seat, sid):
                await self.store.publish(game_id, {"presence": seat, "connected": True})
            self.presence.later(self._changed(game_id))  # may close the round (A17); not waited for
            async for u in self._updates(who, after_seq, door, box):
                yield u
        finally:
            self.notices.unsubscribe_now(game_id, box)
            self.presence.close(sid)
            self.presence.later(self._gone(game_id, seat, sid))

    async def _updates(self, who: Caller, after_seq: int, door: str, box: Any) -> AsyncGenerator[dict[str, Any], None]:
        """The updates of ``who`` (a seat, or ``SPECTATOR``) after ``after_seq``, then live ones as
        ``box`` (subscribed) hears of new versions, until the game is over."""
        game_id, seat = who.game_id, who.seat
        since, target = after_seq, 0
        while True:
            got = await self.router.game(game_id).updates(game_id, seat, since, target)
            version = int(got["version"])
            updates = got["updates"]
            for i, u in enumerate(updates):
                if door == "mcp" and i == len(updates) - 1:  # an agent's wait reads the stream in this
                    fanned_out(door, box.sent(version))  # process and may stop at it: handed over = sent
                yield u
                since = max(since, int(u["seq"]))
            # (resumed after the last one: the door has written them; notices that made no update
            # for this seat are forgotten unmeasured)
            sent = box.sent(version)
            if updates and door != "mcp":
                fanned_out(door, sent)
            if got["over"]:
                return  # game_over was the last update
            target = max(target, version)  # a version not applied after the wait is not waited for again
            while box.version <= target and not box.stale:
                await box.wait()
                if self.closing:
                    raise Unavailable("this gateway is stopping: watch again (another gateway) from your last "
                                      "seq", field="game_id")
                if who.agent and who.agent in box.revoked:
                    raise Unauthenticated("this agent token was revoked", field="authorization", rule="A90")
                while box.presence:
                    other, connected = box.presence.popleft()
                    if other != seat:
                        yield {"version": version, "seq": 0, "round": 0, "seat": other,
                               "kind": "connected" if connected else "disconnected"}
            box.stale = False  # (nudged: notices may be lost; read again, waiting for nothing new)
            target = max(target, box.version)

    # ------------------------------------------------------------------ spectators (community.proto)
    async def _public_game(self, game_id: str) -> dict[str, Any]:
        """The summary of a public game; NotFound for an unknown or private one (alike: a private game's
        existence is not told)."""
        summary = await self.store.summary(game_id) if 0 < len(game_id) <= 64 else None
        if summary is None or not summary.get("public"):
            raise NotFound(f"no public game {game_id[:40]!r}", field="game_id")
        return summary

    async def spectator_view(self, game_id: str) -> dict[str, Any]:
        """What a spectator sees of a public game (what every player knows; everything once over)."""
        self.limiter.read_call()
        await self._public_game(game_id)
        result: dict[str, Any] = await self.router.game(game_id).view(game_id, SPECTATOR)
        return result

    async def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[dict[str, Any], None]:
        """A spectator's updates of a public game after ``after_seq``, then live ones, until the game is
        over. Refused before the first update: an unknown or private game, a bad ``after_seq``, a game
        with ``spectators_per_game`` spectator streams here, an address with ``spectate_per_address``."""
        from gateway.rpc import check_after_seq

        check_after_seq(after_seq)
        self.limiter.read_call()
        await self._public_game(game_id)
        if after_seq > 0:
            latest = await self.router.game(game_id).view(game_id, SPECTATOR)
            check_after_seq(after_seq, int(latest["seq"]))
        limits, peer = self.config.limits, PEER.get()
        watching = self.presence.spectators
        if limits.enabled:
            if sum(1 for g, _ in watching.values() if g == game_id) >= limits.spectators_per_game:
                raise self.limiter.spectators_full(f"this game has {limits.spectators_per_game} spectators on this "
                                                   "gateway, the most it takes")
            if peer and sum(1 for _, p in watching.values() if p == peer) >= limits.spectate_per_address:
                raise self.limiter.spectators_full(f"at most {limits.spectate_per_address} spectator streams per "
                                                   "client address")
        return self._spectator_stream(game_id, after_seq, peer, DOOR.get())

    async def _spectator_stream(self, game_id: str, after_seq: int, peer: str, door: str
                                ) -> AsyncGenerator[dict[str, Any], None]:
        box = self.notices.subscribe_now(game_id)  # no await before the try: nothing can leak
        sid = f"spectator.{next(self.presence._ids)}"
        self.presence.spectators[sid] = (game_id, peer)
        try:
            await self.notices.ready(game_id)
            async for u in self._updates(Caller(game_id, SPECTATOR), after_seq, door, box):
                yield u
        finally:
            self.notices.unsubscribe_now(game_id, box)
            self.presence.spectators.pop(sid, None)

    def spectators_of(self, game_id: str) -> int:
        """Spectator streams of ``game_id`` open on this gateway."""
        return sum(1 for g, _ in list(self.presence.spectators.values()) if g == game_id)

    async def live_games(self, game: str = "") -> list[dict[str, Any]]:
        """Public games being played (and finished within the last hour), newest first, with their
        players and this gateway's spectators."""
        self.limiter.read_call()
        out = []
        for s in await self.store.live_games():
            if game and s["game"] != game:
                continue
            out.append({"summary": s, "started_unix_ms": int(s.get("started_ms", 0)),
                        "spectators": self.spectators_of(s["game_id"]),
                        "players": [{"seat": p["seat"], "nickname": p["nickname"], "handle": p.get("handle", ""),
                                     "autopilot": bool(p.get("autopilot")), "host": p["seat"] == 0}
                                    for p in s.get("players", ())]})
        return out

    async def _changed(self, game_id: str) -> None:
        try:
            await self.router.game(game_id).presence_changed(game_id)
        except Exception as exc:  # the next submission or the deadline closes the round anyway
            log.warning("presence check of %s failed: %r", game_id, exc)

    async def _gone(self, game_id: str, seat: int, sid: str, grace_s: float | None = None) -> None:
        """After a stream ended: its seat stays connected for the grace (A17, ``presence_grace_s``),
        then its presence goes; if that was the seat's last stream anywhere, the others are told and
        the game re-checks an early close."""
        grace = self.config.presence_grace_s if grace_s is None else grace_s
        try:
            if grace > 0 and await self.store.linger_stream(game_id, seat, sid, grace):
                self.presence.after(grace, lambda: self._gone(game_id, seat, sid, grace_s=0))
                return
            await self.store.drop_stream(game_id, seat, sid)
            if seat not in await self.store.connected(game_id, [seat]):
                await self.store.publish(game_id, {"presence": seat, "connected": False})
                await self.router.game(game_id).presence_changed(game_id)
        except Exception as exc:  # the stream's entry expires on its own
            log.warning("cleanup of stream %s of %s failed: %r", sid, game_id, exc)

    # ------------------------------------------------------------------ for tests and operators
    def open_streams(self) -> int:
        return len(self.presence.streams)

    def mailboxes(self) -> int:
        return sum(len(b) for b in self.notices.boxes.values())


__all__ = ["DOOR", "ApiConfig", "Caller", "PlayerAPI", "bearer", "hash_secret", "stream_census"]
