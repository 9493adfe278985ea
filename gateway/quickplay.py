"""Quick play ("Play now", community.proto ``QuickPlay``) — the player API's part.

A caller asks for a game kind, a speed and a size; it gets a seat in the public quick-play lobby of
that *bucket* (``{game}:{speed}:{seats}``) that is closest to full — ties: the oldest — or, when the
bucket has none, opens a new public lobby (and hosts it). Several gateways share the buckets, in Redis
(:meth:`services.store.Store.quick_enter` and the methods after it):

- **One seater at a time per bucket, first come first seated.** A caller takes the bucket's lock (SET
  with a token and a time to live, released by compare-and-delete: a crashed holder's lock expires)
  only when it is first in the bucket's queue: a FIFO of tickets in Redis (a sorted set by an INCR
  counter). A waiter blocks (BLPOP, at most :data:`POLL_S` at a time) on a key of its own that the
  lock's release pushes to, so the next one is served at once, with no polling; a waiter that
  stopped asking (its gateway died) drops out after :data:`ALIVE_MS`. In front of that, the callers
  of one gateway queue on a local FIFO lock per bucket, so a gateway has one caller in the Redis queue
  per bucket (one blocked connection) and its own callers keep their order. The whole wait is bounded
  (:attr:`QuickConfig.lock_wait_s`: past it, ``server/unavailable``, retry).
- **Under the lock** the bucket's lobbies are read with their public summaries (authoritative: each
  game's actor writes its summary before it answers); a lobby started, full or gone leaves the bucket.
  The fullest is joined; a join refused because the lobby filled or started meanwhile (Conflict)
  drops it and the next is tried; a nickname taken there gets " 2", " 3"… added. None left: a new
  public lobby, made by :meth:`gateway.lobby.Lobby.create` with ``quick`` settings
  (``{"wait_s", "autopilot", "bucket"}``) that its game actor journals (services/actor_lobby.py): the
  actor starts the game itself when a join takes the last seat, and at the end of the wait
  (``ARCHIPELAGO_QUICK_WAIT_FAST_S``, default 300; ``ARCHIPELAGO_QUICK_WAIT_SLOW_S``, default 86400)
  with autopilot seats if the opener allowed it — else the lobby waits until it expires. A started or
  ended lobby leaves its bucket (the actor removes it; the next caller drops it too if that failed).
- **Retries** (``request_id``): the secret of a seat is derived from the request id and the lobby
  (an HMAC with the gateways' key, never stored), so a retried join of the same lobby is the same
  join (the actor answers the seat it took, even when the lobby is full or started by now); and
  before each join (or create) the request's *record* (``quick:req:{h}``, ``h`` derived from the id;
  JSON: the lobby and the nickname tried, or "opened") is written, so that a retry goes back to where
  the first attempt may have sat down before it looks for a lobby — even if that lobby is full now.
  The record lives as long as a lobby may (the lobby time to live).

Limits: a QuickPlay counts as a lobby call (the per-address lobby bucket); one that opens a lobby
counts once more, as the CreateGame it makes, and that lobby counts against the address's open lobbies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine import get_game
from engine.errors import AlreadyExists, Conflict, InvalidOrder, KeyReused, NotFound, Unavailable
from gateway.auth import check_request_id
from services.actor_core import LOBBY, check_creation, check_nickname

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

#: seats when the request says 0
DEFAULT_SEATS = {"archipelago": 4, "salvo": 2, "arcmage": 2}
SPEEDS = ("fast", "slow")
DEFAULT_NICKNAME = "player"
LOCK_MS = 10_000  # a holder's lock lives this long (renewed before each shard call it makes)
ALIVE_MS = 3_000  # a waiter that has not asked for the lock this long leaves the queue
POLL_S = 0.5  # a waiter asks again at least this often (a lock that expired wakes nobody)
LOBBIES_READ = 50  # lobbies of a bucket looked at, oldest first


def _env_s(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw else default


@dataclass
class QuickConfig:
    """The waits of quick-play lobbies: seconds before one that has not filled starts with autopilot
    seats (if its opener allowed it), by speed; and the longest a caller waits for its turn."""

    wait_fast_s: float = field(default_factory=lambda: _env_s("ARCHIPELAGO_QUICK_WAIT_FAST_S", 300.0))
    wait_slow_s: float = field(default_factory=lambda: _env_s("ARCHIPELAGO_QUICK_WAIT_SLOW_S", 86_400.0))
    lock_wait_s: float = 30.0

    def wait_s(self, speed: str) -> float:
        return self.wait_slow_s if speed == "slow" else self.wait_fast_s


def nicknames(nickname: str, seats: int) -> list[str]:
    """``nickname``, then "nickname 2", "nickname 3"… (cut to stay within 24 characters, A2): enough
    variants for a lobby of ``seats`` to have a free one."""
    out = [nickname]
    for n in range(2, seats + 1):
        suffix = f" {n}"
        out.append(nickname[:24 - len(suffix)].rstrip() + suffix)
    return out


class QuickPlay:
    """``api.quick``: :meth:`play` is QuickPlay."""

    def __init__(self, api: PlayerAPI, config: QuickConfig | None = None) -> None:
        self.api = api
        self.config = config or QuickConfig()
        self._local: dict[str, asyncio.Lock] = {}  # bucket -> this gateway's FIFO in front of Redis's

    # ------------------------------------------------------------------ the rpc
    async def play(self, *, game: str, speed: str, seats: int, nickname: str, request_id: str,
                   allow_autopilot: bool, options: dict[str, Any] | None, profile_secret: str) -> dict[str, Any]:
        """The fields of QuickPlayResponse (``status``: "lobby" or "running"; "over" only for a retry of a
        game that has ended since)."""
        seats = self._check(game, speed, seats, nickname, options)
        check_request_id(request_id)
        self.api.limiter.lobby_call()
        profile = None
        try:
            profile = await self.api.profiles.lookup(profile_secret)
        except Unavailable:
            if not nickname:
                raise InvalidOrder("give a nickname (profiles are not available on this server)", field="nickname",
                                   rule="A2") from None
            raise
        nickname = nickname or (profile["handle"] if profile else DEFAULT_NICKNAME)
        ask = _Ask(game=game, speed=speed, seats=seats, nickname=nickname, request_id=request_id,
                   autopilot=allow_autopilot, options=options, profile=profile, profile_secret=profile_secret,
                   bucket=f"{game}:{speed}:{seats}")
        if request_id:
            ask.record = (await self.api.secrets.derive("quick", request_id))[:32]
        async with self._turn(ask.bucket) as token:
            ask.token = token
            return await self._seat(ask)

    def _check(self, game: str, speed: str, seats: int, nickname: str, options: Mapping[str, Any] | None) -> int:
        """Validate as CreateGame would (InvalidOrder naming the field; nothing done yet); the seats."""
        try:
            engine = get_game(game)
        except KeyError:
            raise InvalidOrder(f"unknown game kind {game[:20]!r}; known: {', '.join(sorted(DEFAULT_SEATS))}",
                               field="game") from None
        if speed not in SPEEDS:
            raise InvalidOrder(f"unknown speed {speed[:20]!r}: fast or slow", field="speed", rule="A1")
        seats = seats or DEFAULT_SEATS.get(game, 2)
        if nickname:
            check_nickname(nickname)
        try:
            config = check_creation(game, {"players": seats}, nickname or DEFAULT_NICKNAME, 60.0)
        except InvalidOrder as err:
            if err.field != "players":
                raise
            raise InvalidOrder(err.reason, field="seats", rule=err.rule) from None  # (the request's name)
        if options:
            seating = getattr(engine, "seat_config", None)
            if set(options) != {game}:
                raise InvalidOrder(f"options {', '.join(options)[:40]!r} do not belong to this {game} game",
                                   field="options")
            if seating is None:
                raise InvalidOrder(f"{game} has no seat options", field="options")
            seating(config, 1, options[game])  # (checked as a joiner's would be)
        return seats

    # ------------------------------------------------------------------ the bucket's turn
    @contextlib.asynccontextmanager
    async def _turn(self, bucket: str) -> AsyncIterator[str]:
        """Hold the bucket's lock (cluster-wide), taken in arrival order; yields the lock's token."""
        store = self.api.store
        local = self._local.setdefault(bucket, asyncio.Lock())  # asyncio's lock serves its waiters FIFO
        token = secrets.token_hex(12)
        try:
            async with asyncio.timeout(self.config.lock_wait_s):
                await local.acquire()
                try:
                    while not await store.quick_enter(bucket, token, lock_ms=LOCK_MS, alive_ms=ALIVE_MS):
                        await store.quick_wait(token, POLL_S)
                except BaseException:
                    local.release()
                    raise
        except TimeoutError:
            await self._exit(bucket, token)
            raise Unavailable("quick play is busy for this game and size: retry", field="game") from None
        except BaseException:
            await self._exit(bucket, token)
            raise
        try:
            yield token
        finally:
            local.release()
            await self._exit(bucket, token)

    async def _exit(self, bucket: str, token: str) -> None:
        try:
            await asyncio.shield(self.api.store.quick_exit(bucket, token))
        except Exception:  # (Redis down: the lock and the queue place expire by themselves)
            pass

    async def _hold(self, ask: _Ask) -> None:
        """Renew the bucket's lock before a shard call (which may be slow); Unavailable if it was lost
        (held past its time to live: another caller may be seating in this bucket now)."""
        if not await self.api.store.quick_hold(ask.bucket, ask.token, LOCK_MS):
            raise Unavailable("quick play took too long: retry", field="game")

    # ------------------------------------------------------------------ under the lock
    async def _seat(self, ask: _Ask) -> dict[str, Any]:
        store = self.api.store
        if ask.record:
            record = await store.quick_record(ask.record)
            if record is not None:  # a retry: back to where the first attempt may have sat down
                if record.get("bucket") != ask.bucket:
                    raise KeyReused("this request id already played now for another game, speed or size",
                                    field="request_id")
                if record.get("opened"):
                    return await self._open(ask, record)
                got = await self._join(ask, str(record["game_id"]), first=str(record.get("nickname", "")))
                if got is not None:
                    return got
        ids = await store.quick_lobbies(ask.bucket, LOBBIES_READ)
        found, gone = [], []
        for order, (game_id, s) in enumerate(zip(ids, await store.summaries(ids), strict=True)):
            if s is None or s["status"] != LOBBY or int(s["taken"]) >= int(s["seats"]):
                gone.append(game_id)
            else:
                found.append((-int(s["taken"]), order, game_id, str(s["code"])))
        await store.quick_leave(ask.bucket, *gone)
        for _, _, game_id, code in sorted(found):  # the fullest first; then the oldest
            got = await self._join(ask, game_id, code=code)
            if got is not None:
                return got
        return await self._open(ask, None)

    async def _join(self, ask: _Ask, game_id: str, *, code: str = "", first: str = "") -> dict[str, Any] | None:
        """A seat in this lobby; None when it has none for the caller (full, started, gone; or the
        caller's profile sits there already)."""
        from gateway.api import hash_secret

        api, store = self.api, self.api.store
        if ask.request_id:  # the same lobby and request id: the same secret, so the same join
            secret = (await api.secrets.derive(f"quick\0{game_id}", ask.request_id))[:40]
        else:
            secret = secrets.token_urlsafe(24)
        names = nicknames(ask.nickname, ask.seats)
        if first in names:
            names.remove(first)
            names.insert(0, first)
        for name in names:
            if ask.record:
                await store.put_quick_record(ask.record, {"bucket": ask.bucket, "game_id": game_id, "nickname": name},
                                             self._ttl_s())
            await self._hold(ask)
            try:
                joined = await api.router.game(game_id).join(game_id, name, hash_secret(secret), ask.options,
                                                             ask.profile)
            except AlreadyExists as err:
                if err.field == "nickname":
                    continue  # taken there: the next variant
                return None  # this profile already has a seat in that lobby
            except KeyReused:
                continue  # this secret sat down there under another variant (a retry): find it
            except (Conflict, NotFound):  # filled or started meanwhile, or gone
                await store.quick_leave(ask.bucket, game_id)
                return None
            status = str(joined.get("status", LOBBY))
            if status != LOBBY:
                await store.quick_leave(ask.bucket, game_id)
            if not code:
                summary = await store.summary(game_id)
                code = str(summary["code"]) if summary else ""
            return {"game_id": game_id, "seat": int(joined["seat"]), "secret": secret, "game": ask.game,
                    "code": code, "opened": False, "status": status,
                    "starts_unix_ms": int(joined.get("starts_ms", 0))}
        return None

    async def _open(self, ask: _Ask, record: dict[str, Any] | None) -> dict[str, Any]:
        """A new public quick-play lobby, this caller its host (a retry: the same one again)."""
        api, store = self.api, self.api.store
        if record is None:
            record = {"bucket": ask.bucket, "opened": True, "opened_ms": int(time.time() * 1000),
                      "autopilot": ask.autopilot}
            if ask.record:
                await store.put_quick_record(ask.record, record, self._ttl_s())
        options: dict[str, Any] = {}
        deck = (ask.options or {}).get(ask.game, {}).get("deck")
        if deck is not None:  # (Arcmage: the host's own deck is seat 0's of the game's decks)
            options["decks"] = [deck]
        rid = (await api.secrets.derive("quick-open", ask.request_id))[:32] if ask.request_id else ""
        await self._hold(ask)
        made = await api.create(game=ask.game, seats=ask.seats, nickname=ask.nickname, public=True, speed=ask.speed,
                                options=options, request_id=rid, profile_secret=ask.profile_secret,
                                extra={"quick": {"wait_s": self.config.wait_s(ask.speed),
                                                 "autopilot": bool(record["autopilot"]), "bucket": ask.bucket}})
        game_id = str(made["game_id"])
        # the lobby as its actor has it: its status (a retry may find it started) and its deadline,
        # which is when it starts with autopilot seats if its opener allowed that
        view = await api.router.game(game_id).view(game_id, 0)
        status = str(view["status"])
        if status == LOBBY:
            await store.quick_add(ask.bucket, game_id, int(record["opened_ms"]), self._ttl_s())
        starts = int(view["deadline_unix_ms"]) if record["autopilot"] and status == LOBBY else 0
        return {"game_id": game_id, "seat": 0, "secret": str(made["secret"]), "game": ask.game,
                "code": str(made["code"]), "opened": True, "status": status, "starts_unix_ms": starts}

    def _ttl_s(self) -> float:
        return self.api.config.retention.lobby_ttl_s


@dataclass
class _Ask:
    """One QuickPlay request, checked."""

    game: str
    speed: str
    seats: int
    nickname: str
    request_id: str
    autopilot: bool
    options: dict[str, Any] | None
    profile: dict[str, str] | None
    profile_secret: str
    bucket: str
    record: str = ""  # the name of the request's record ("" without a request id)
    token: str = ""  # the bucket lock's token while held
