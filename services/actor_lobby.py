"""The lobby of a game: create, join (with a seat's own options), start."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Mapping
from typing import Any

from engine import get_game
from engine.base import (
    standing_of,
)
from engine.errors import (
    AlreadyExists,
    Conflict,
    InvalidOrder,
    KeyReused,
    PermissionDenied,
)
from services import journal
from services.actor_core import (
    LOBBY,
    OVER,
    RUNNING,
    ActorCore,
    Seat,
    check_creation,
    check_nickname,
)

log = logging.getLogger(__name__)


class LobbyPart(ActorCore):
    """The lobby of a game: create, join (with a seat's own options), start."""

    #: the first state made off the event loop for a start being journaled: (seed, state)
    _fresh: tuple[int, Any] | None = None

    def _apply_create(self, e: journal.Create) -> None:
        self.kind = e.kind
        self.engine = get_game(self.kind)
        self.config = dict(e.config)
        self.seed = int(e.seed)
        self.seats_total = int(self.config["players"])
        self.deadline_s = float(e.deadline_s)
        self.public = bool(e.public)
        self.code = e.code
        self.created_ms = int(e.at)
        self.create_fingerprint = str(e.request)
        self.speed = str(e.speed or "")  # "" for a game created before speeds were journaled
        self.quick = dict(e.quick or {})  # a quick-play lobby's settings ({} for any other game)
        self.seats = [Seat(0, e.nickname, e.secret_hash, profile=str(e.profile or ""), handle=str(e.handle or ""))]
        self.seq = [0] * self.seats_total
        self._push("joined", seat=0)
        self.deadline_ms = self.created_ms + int(self.retention.lobby_ttl_s * 1000)  # the lobby's expiry
        if self._quick_starts_ms():  # a quick-play lobby whose opener allowed the autopilot starts then
            self.deadline_ms = min(self.deadline_ms, self._quick_starts_ms())
        self._wake_changed()

    def _apply_join(self, e: journal.Join) -> None:
        self.seats.append(Seat(int(e.seat), e.nickname, e.secret_hash, profile=str(e.profile or ""),
                               handle=str(e.handle or "")))
        if e.config is not None:  # the joiner chose for its seat (its deck)
            self.config = dict(e.config)
        self._push("joined", seat=int(e.seat))
        if self.quick and len(self.seats) == self.seats_total:
            # a full quick-play lobby starts at once (the join's caller journals the start next); were
            # that start lost (a shard stopped between the two), this deadline starts it on reload
            self.deadline_ms = int(e.at)
            self._wake_changed()

    def _apply_start(self, e: journal.Start) -> None:
        assert self.engine is not None
        for i in range(len(self.seats), self.seats_total):
            self.seats.append(Seat(i, f"autopilot-{i + 1}", "", bot=True))
        fresh, self._fresh = self._fresh, None
        self.state = fresh[1] if fresh is not None and fresh[0] == self.seed else self.engine.new_game(
            self.config, self.seed)
        standing = standing_of(self.engine)
        for s in self.seats:
            if s.bot:  # autopilot seats play with the game's sensible default (A4, A70)
                self.standing[s.seat] = standing.check_standing(
                    self.state, s.seat, standing.default_standing(self.state, s.seat))
        self.status = RUNNING
        self.started_ms = int(e.at)
        self._push("started", status=RUNNING)
        self._open_round(int(e.at))

    # ------------------------------------------------------------------ lobby
    async def create(self, *, kind: str, config: Mapping[str, Any], nickname: str, secret_hash: str,
                     public: bool, deadline_s: float, code: str, request: str = "",
                     profile: Mapping[str, str] | None = None, speed: str = "",
                     quick: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Create the game. Idempotent by game id: a retried create (same ``request`` fingerprint)
        finds it journaled and finishes the rest again; a different request under the same id is
        :class:`KeyReused`. ``profile``: ``{"id", "handle"}`` of the profile the host plays under;
        ``speed``: the speed asked ("fast", "slow"; ratings and leaderboards are per speed); ``quick``:
        a quick-play lobby's settings (:mod:`gateway.quickplay`)."""
        async with self.lock:
            if self.version:
                if request != self.create_fingerprint or secret_hash != self.seats[0].secret_hash:
                    raise KeyReused("this request id already created another game", field="request_id")
            else:
                cfg = check_creation(kind, config, nickname, deadline_s)
                await self._commit(journal.Create(
                    kind=kind, config=cfg, seed=secrets.randbits(128), nickname=nickname, secret_hash=secret_hash,
                    public=public, deadline_s=deadline_s, code=code, at=self.now_ms(), request=request,
                    profile=str(profile["id"]) if profile else None,
                    handle=str(profile["handle"]) if profile else None,
                    speed=speed or None, quick=dict(quick) if quick else None))
            await self.store.put_secret(self.seats[0].secret_hash, self.game_id, 0)
            await self._publish_summary()
            return self.summary()

    async def join(self, nickname: str, secret_hash: str, options: Mapping[str, Any] | None = None,
                   profile: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Take a seat. Idempotent by secret: a retried join gets the seat the first one took.
        ``options`` (``{kind: seat options}``, JoinGameRequest.options) are the joiner's own choices
        for its seat, checked by the engine's ``seat_config`` and journaled with the join; ``profile``
        (``{"id", "handle"}``) the profile the joiner plays under (one seat per profile in a game)."""
        async with self.lock:
            again = next((s for s in self.seats if s.secret_hash == secret_hash and not s.bot), None)
            if again is not None:  # a retried join (same request id): the seat it took
                if again.nickname != nickname:
                    raise KeyReused("this request id already joined with another nickname", field="request_id")
                await self.store.put_secret(secret_hash, self.game_id, again.seat)
                if self.quick and self.status == LOBBY and len(self.seats) == self.seats_total:
                    await self._begin(fill=False, by="quick")  # (the first try's start was lost)
                    await self._quick_leave()
                return self._joined(again.seat)
            check_nickname(nickname)
            if self.status != LOBBY:
                raise Conflict("the game has already started", field="code", rule="A4")
            if len(self.seats) >= self.seats_total:
                raise Conflict("the game is full", field="code", rule="A4")
            if any(s.nickname == nickname for s in self.seats):
                raise AlreadyExists(f"nickname {nickname!r} is taken in this game", field="nickname", rule="A2")
            if profile and any(s.profile == profile["id"] for s in self.seats):
                raise AlreadyExists("this profile already has a seat in this game", field="authorization")
            seat, at = len(self.seats), self.now_ms()
            await self._commit(journal.Join(
                seat=seat, nickname=nickname, secret_hash=secret_hash, at=at,
                profile=str(profile["id"]) if profile else None, handle=str(profile["handle"]) if profile else None,
                config=self._seat_config(seat, options) if options else None))
            await self.store.put_secret(secret_hash, self.game_id, seat)
            if self.quick and len(self.seats) == self.seats_total:  # nobody has to press Start
                await self._begin(fill=False, by="quick")
                await self._quick_leave()
            else:
                await self._publish_summary()
            return self._joined(seat)

    def _joined(self, seat: int) -> dict[str, Any]:
        """A join's answer: the seat, and the game's status now (``starts_ms``: when a quick-play lobby
        starts with autopilot seats, 0 if it waits for players)."""
        return {"game_id": self.game_id, "seat": seat, "game": self.kind, "status": self.status,
                "starts_ms": self._quick_starts_ms()}

    def _seat_config(self, seat: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """The game's config with a joiner's seat options (``{kind: options}``) applied."""
        if len(options) != 1 or self.kind not in options:
            raise InvalidOrder(f"this is a {self.kind} game: send {self.kind} options, or none", field="options")
        seating = getattr(self._engine(), "seat_config", None)
        if seating is None:
            raise InvalidOrder(f"{self.kind} has no seat options", field="options")
        config: dict[str, Any] = seating(self.config, seat, options[self.kind])
        return config

    async def start(self, seat: int, fill_with_autopilot: bool) -> dict[str, Any]:
        async with self.lock:
            if seat != 0:
                raise PermissionDenied("only the host may start the game", rule="A4", field="authorization")
            if self.status != LOBBY:  # a retried start (a lost reply): the same summary, nothing changes
                return self.summary()
            if len(self.seats) < self.seats_total and not fill_with_autopilot:
                raise Conflict(f"{len(self.seats)} of {self.seats_total} seats are filled",
                               field="fill_with_autopilot", rule="A4")
            await self._begin(fill=fill_with_autopilot)
            if self.quick:
                await self._quick_leave()
            return self.summary()

    async def _begin(self, *, fill: bool, by: str = "") -> None:
        """Start the game (under the lock): journal ``start`` (``fill``: autopilot seats take the empty
        ones; ``by`` "quick": the actor started its quick-play lobby itself, not a player), then play
        the autopilot seats' first turn if theirs, publish, retire a game already over."""
        # The first state (an Archipelago map: up to ~0.1 s of CPU) is made in a thread, so the shard's
        # event loop goes on serving its other games meanwhile (it blocked every other call of the
        # shard: lobby calls waited seconds under load). The engine is pure: the same state as made here.
        assert self.engine is not None
        self._fresh = (self.seed, await asyncio.to_thread(self.engine.new_game, dict(self.config), self.seed))
        await self._commit(journal.Start(fill=fill, at=self.now_ms(), by=by or None))
        await self._autoplay_bots()  # a turn-based game whose first turn is an autopilot seat's
        await self._publish_summary()
        if self.status == OVER:
            await self._retire()

    # ------------------------------------------------------------------ quick play (gateway.quickplay)
    def _quick_starts_ms(self) -> int:
        """When this quick-play lobby starts with autopilot seats if it has not filled (its opener
        allowed it); 0 for a lobby that waits for players, or any other game."""
        if not self.quick.get("autopilot"):
            return 0
        return self.created_ms + int(float(self.quick.get("wait_s", 0)) * 1000)

    async def _lobby_deadline(self) -> None:
        """The lobby's deadline passed (under the lock): a quick-play lobby that is full, or whose wait is
        over with the autopilot allowed, starts (the empty seats autopilot ones); any other lobby
        expires (reason "expired"). A quick-play lobby then leaves its bucket."""
        if self.quick and (len(self.seats) == self.seats_total or self._quick_starts_ms()):
            await self._begin(fill=len(self.seats) < self.seats_total, by="quick")
        else:
            await self._commit(journal.Expire(at=self.now_ms()))
            await self._retire()
        if self.quick:
            await self._quick_leave()

    async def _quick_leave(self) -> None:
        """A started or ended quick-play lobby leaves its bucket (the gateway also drops, when it looks,
        any lobby it finds started, full or gone: a failure here only leaves that to it)."""
        leave = getattr(self.store, "quick_leave", None)  # (services.store.Store; a test's journal has none)
        bucket = str(self.quick.get("bucket", ""))
        if leave is None or not bucket:
            return
        try:
            await leave(bucket, self.game_id)
        except Exception as exc:
            log.warning("quick-play lobby %s could not leave its bucket: %r", self.game_id, exc)
