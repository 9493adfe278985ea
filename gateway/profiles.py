"""Profiles, ratings, leaderboards and a profile's history (community.proto) — the player API's part.

- **A profile** is a handle (unique case-insensitively — its case fold —, 1–24 printable characters as
  a nickname, A2) and a *profile secret* the client keeps (``prf_`` + 40 URL-safe characters). Only its
  SHA-256 is stored (:mod:`services.community_store`); the link ``<public url>/profile#<secret>``
  moves it to another device (the fragment never reaches a server). No password, no e-mail.
- **Revocation**: ResetProfileSecret deletes the old secret's hash and answers a new secret. Lookups
  are never cached, on any gateway: the old secret is refused from the very next call.
- **Retries** (``request_id``, as CreateGame's): the secret is *derived* from the request id (HMAC with
  the gateways' shared key, :meth:`gateway.auth.Secrets.derive`), never stored — a retried create
  answers the same profile and secret while that secret is still the profile's; a retried reset answers
  the same new secret for ten minutes (a record keyed by the old secret's hash and the request id's).
- **Limits**: CreateProfile and ResetProfileSecret are lobby calls, the reads here community reads;
  a failed profile authentication counts as a failed authentication (README "Limits").
- Ratings, leaderboards and history are written by the game shards when a game ends
  (:mod:`services.actor_ratings`); here they are read.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any

from engine import GAMES
from engine.errors import AlreadyExists, InvalidOrder, NotFound, Unauthenticated
from gateway.auth import check_request_id
from services.actor_core import check_nickname
from services.community_store import CommunityStore, fold
from services.ratings import SPEEDS

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

PROFILE_PREFIX = "prf_"  # profile secrets look like "prf_…"; player secrets and agent tokens never start so
SECRET_CHARS = 40  # after the prefix
DEFAULT_PAGE, MAX_PAGE = 50, 200  # ListProfileGames, GetLeaderboard


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_handle(handle: str) -> str:
    """A handle follows the nickname rules (A2: 1–24 printable characters)."""
    try:
        return check_nickname(handle)
    except InvalidOrder:
        raise InvalidOrder("a handle is 1–24 printable characters, as a nickname", rule="A2",
                           field="handle") from None


def _page(limit: int, offset: int) -> tuple[int, int]:
    """(limit, offset) of a listing: limit 0 is the default (50), above 200 is 200."""
    if limit < 0:
        raise InvalidOrder(f"limit is 0 (the default, {DEFAULT_PAGE}) or more (at most {MAX_PAGE} are sent)",
                           field="limit")
    if offset < 0:
        raise InvalidOrder("offset is 0 or more", field="offset")
    return min(limit or DEFAULT_PAGE, MAX_PAGE), offset


class Profiles:
    """The profile calls of the player API (the dicts :mod:`gateway.rpc_community` turns into messages)."""

    def __init__(self, api: PlayerAPI) -> None:
        self.api = api
        self._store: CommunityStore | None = None

    @property
    def store(self) -> CommunityStore:
        if self._store is None:
            self._store = CommunityStore(self.api.store)
        return self._store

    def _link(self, secret: str) -> str:
        return f"{self.api.config.public_url}/profile#{secret}"

    async def _find(self, secret: str) -> dict[str, Any] | None:
        """The stored profile of a profile secret (None when ``secret`` is none); Unauthenticated for an
        unknown or reset one. Never cached: a reset is seen by the next call on every gateway."""
        if not secret.startswith(PROFILE_PREFIX):
            return None
        self.api.limiter.before_auth()
        found = await self.store.profile_of_secret(_hash(secret))
        if found is None:
            self.api.limiter.auth_failed()
            raise Unauthenticated("unknown or reset profile secret", field="authorization")
        return found

    async def _own(self, secret: str) -> dict[str, Any]:
        """:meth:`_find` for a call that needs a profile secret."""
        if not secret:
            raise Unauthenticated("missing profile secret (send 'authorization: Bearer prf_…')", field="authorization")
        found = await self._find(secret)
        if found is None:
            raise Unauthenticated("this call needs a profile secret (prf_…), not a player secret",
                                  field="authorization")
        return found

    async def lookup(self, secret: str) -> dict[str, str] | None:
        """``{"id", "handle"}`` of the profile whose secret ``secret`` is; None when ``secret`` is not a
        profile secret (empty, or a player secret); Unauthenticated for an unknown or reset one."""
        found = await self._find(secret)
        return None if found is None else {"id": found["id"], "handle": found["handle"]}

    async def _profile(self, found: dict[str, Any]) -> dict[str, Any]:
        return {"handle": found["handle"], "created_unix_ms": found["created_ms"], "games": found["games"],
                "ratings": await self.store.ratings_of(found["id"])}

    async def _made(self, pid: str, secret: str) -> dict[str, Any]:
        found = await self.store.profile(pid)
        if found is None:  # (expired between two calls: 400 days unused)
            raise NotFound("no such profile", field="handle")
        return {"profile": await self._profile(found), "secret": secret, "link": self._link(secret)}

    async def create(self, handle: str, request_id: str = "") -> dict[str, Any]:
        """A new profile: {"profile": profile dict, "secret", "link"}. AlreadyExists (field ``handle``)
        for a handle taken, whatever its case."""
        check_request_id(request_id)
        self.api.limiter.lobby_call()
        check_handle(handle)
        if request_id:
            derived = await self.api.secrets.derive(f"profile\0{fold(handle)}", request_id)
            secret = PROFILE_PREFIX + derived[:SECRET_CHARS]
        else:
            secret = PROFILE_PREFIX + secrets.token_urlsafe(SECRET_CHARS * 3 // 4)
        status, pid = await self.store.create_profile(secrets.token_hex(8), handle, _hash(secret),
                                                      int(time.time() * 1000))
        if status == "taken":
            raise AlreadyExists(f"the handle {handle!r} is taken (handles are compared whatever their case)",
                                field="handle")
        return await self._made(pid, secret)  # (created, or "again": a retry of this very create)

    async def mine(self, secret: str) -> dict[str, Any]:
        """The caller's own profile (its profile secret)."""
        self.api.limiter.read_call()
        return await self._profile(await self._own(secret))

    async def _reset_secret(self, old_hash: str, request_id: str) -> str:
        return PROFILE_PREFIX + (await self.api.secrets.derive(f"profile-reset\0{old_hash}", request_id))[:SECRET_CHARS]

    async def _reset_again(self, old_hash: str, request_id: str) -> dict[str, Any] | None:
        """The answer of a reset already made with this secret and request id (None: there is none)."""
        record = await self.store.reset_record(old_hash, _hash(request_id)[:32])
        if record is None:
            return None
        secret = await self._reset_secret(old_hash, request_id)
        found = await self.store.profile(str(record["profile"]))
        if found is None or found["secret"] != record["secret"] or record["secret"] != _hash(secret):
            raise Unauthenticated("this profile secret was reset, and the new one reset again since",
                                  field="authorization")
        return await self._made(found["id"], secret)

    async def reset(self, secret: str, request_id: str = "") -> dict[str, Any]:
        """Revoke the caller's profile secret and answer a new one (as :meth:`create`)."""
        check_request_id(request_id)
        self.api.limiter.lobby_call()
        old_hash = _hash(secret)
        if request_id and secret.startswith(PROFILE_PREFIX):
            again = await self._reset_again(old_hash, request_id)  # a retry: its secret is refused by now
            if again is not None:
                return again
        found = await self._own(secret)
        new = await self._reset_secret(old_hash, request_id) if request_id else \
            PROFILE_PREFIX + secrets.token_urlsafe(SECRET_CHARS * 3 // 4)
        request_hash = _hash(request_id)[:32] if request_id else ""
        if not await self.store.reset_secret(found["id"], old_hash, _hash(new), request_hash):
            again = await self._reset_again(old_hash, request_id) if request_id else None
            if again is not None:  # a retry of this reset raced it
                return again
            raise Unauthenticated("this profile secret was reset meanwhile", field="authorization")
        return await self._made(found["id"], new)

    async def _by_handle(self, handle: str) -> dict[str, Any]:
        found = await self.store.profile_of_handle(handle) if 0 < len(handle) <= 24 else None
        if found is None:
            raise NotFound(f"no profile {handle[:40]!r}", field="handle")
        return found

    async def get(self, handle: str) -> dict[str, Any]:
        """A profile's public page: handle, creation, games, ratings (any case of the handle)."""
        self.api.limiter.read_call()
        return await self._profile(await self._by_handle(handle))

    async def games(self, handle: str, limit: int = 0, offset: int = 0) -> dict[str, Any]:
        """{"games": [PlayedGame dicts, newest first], "total": kept (at most 200)}."""
        self.api.limiter.read_call()
        limit, offset = _page(limit, offset)
        found = await self._by_handle(handle)
        games, total = await self.store.history(found["id"], offset, limit)
        return {"games": games, "total": total}

    async def leaderboard(self, game: str, speed: str, limit: int = 0, offset: int = 0) -> dict[str, Any]:
        """{"game", "speed", "entries": [{rank, handle, ordinal, mu, sigma, games}], "total"}: best first
        by ordinal; rank = place on the board (equal ordinals: the earlier rated first)."""
        self.api.limiter.read_call()
        if game not in GAMES:
            raise InvalidOrder(f"unknown game kind {game[:20]!r}", field="game")
        if speed not in SPEEDS:
            raise InvalidOrder(f"unknown speed {speed[:20]!r}: fast or slow", field="speed")
        limit, offset = _page(limit, offset)
        entries, total = await self.store.leaderboard(game, speed, offset, limit)
        return {"game": game, "speed": speed, "entries": entries, "total": total}
