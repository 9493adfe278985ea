"""Profiles, ratings, leaderboards and a profile's history in Redis (community.proto): a small class over
the Redis connection and key prefix of :class:`services.store.Store` (the gateway's profile calls and
a shard's finished games share it).

Key schema (under the store's prefix, beside those of :mod:`services.store`):

=================================  ===========================================================
``handle:{casefolded handle}``     the profile id that holds the handle (SET NX: unique,
                                   case-insensitively)
``prf:{id}``                       hash: handle, created_ms, secret (SHA-256 of the current
                                   profile secret; never the secret), games (finished games)
``prfsecret:{sha256}``             the profile id of a profile secret's hash (deleted by a reset)
``prfreset:{old sha256}:{h}``      JSON {profile, secret: the new hash} of a reset made with the
                                   request id whose hash is ``h`` (10 minutes: a retried reset)
``prf:{id}:ratings``               hash ``{game}:{speed}`` -> JSON {mu, sigma, games, member}
``prf:{id}:games``                 list of JSON PlayedGame, newest first, at most
                                   :data:`MAX_HISTORY`
``lb:{game}:{speed}``              sorted set of a leaderboard: member ``{first rated, ms, 13 hex
                                   digits}.{profile id}``, score −ordinal (ZRANGE: best first; equal
                                   ordinals: the earlier rated first)
``rated:{game id}``                JSON {"ratings": [RatingChange]}: the game's result is applied
                                   (kept the game's retention and a day more)
=================================  ===========================================================

**Bounded**: a profile's keys expire :data:`PROFILE_TTL_S` (400 days) after its last use (a call with
its secret, a game recorded); its leaderboard members are dropped when a leaderboard read meets them.

**Exactly once**: :meth:`CommunityStore.record_game` applies a finished game in one transaction
(WATCH the marker, the profiles and their ratings; MULTI: new ratings, leaderboards, history, the
marker); a retry — a shard that restarted after the end, or lost the answer — finds the marker and
answers the changes it holds. Two games of one profile ending at once: one transaction retries on the
other's write (WATCH), so both count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from redis.exceptions import WatchError

from services.ratings import MIN_RATED, Skill, rate

PROFILE_TTL_S = 400 * 24 * 3600  # a profile unused this long leaves Redis
MAX_HISTORY = 200  # PlayedGame entries kept per profile (the newest)
RESET_RECORD_S = 600  # a retried ResetProfileSecret answers the same new secret this long
MARKER_EXTRA_S = 24 * 3600  # a game's "rated" marker outlives its retention by this much


class _Keyed(Protocol):
    """What this needs of :class:`services.store.Store`."""

    redis: Any

    def key(self, *parts: str) -> str: ...


def fold(handle: str) -> str:
    """A handle as compared (case-insensitive): its case fold."""
    return handle.casefold()


@dataclass(frozen=True)
class PlayerResult:
    """One profile seat of a finished game: its place (1 = first), whether it won and is rated."""

    seat: int
    profile: str
    handle: str
    nickname: str
    place: int
    won: bool
    rated: bool


@dataclass(frozen=True)
class GameResult:
    """A finished game, as its profiles' history and ratings record it."""

    game_id: str
    game: str
    speed: str
    ended_ms: int
    reason: str
    seats: int
    players: tuple[PlayerResult, ...]


class CommunityStore:
    """Profiles, ratings, leaderboards and history over a :class:`services.store.Store`'s Redis."""

    def __init__(self, store: _Keyed) -> None:
        self.redis: Any = store.redis
        self.key = store.key

    # ---------------------------------------------------------------- keys
    def _profile(self, pid: str) -> str:
        return self.key("prf", pid)

    def _ratings(self, pid: str) -> str:
        return self.key("prf", pid, "ratings")

    def _history(self, pid: str) -> str:
        return self.key("prf", pid, "games")

    def _handle(self, handle: str) -> str:
        return self.key("handle", fold(handle))

    def _secret(self, secret_hash: str) -> str:
        return self.key("prfsecret", secret_hash)

    def _board(self, game: str, speed: str) -> str:
        return self.key("lb", game, speed)

    def _touch(self, pipe: Any, pid: str, handle: str, secret_hash: str) -> None:
        """Queue: every key of the profile lives :data:`PROFILE_TTL_S` from now."""
        for key in (self._profile(pid), self._ratings(pid), self._history(pid), self._handle(handle),
                    self._secret(secret_hash)):
            pipe.expire(key, PROFILE_TTL_S)

    # ---------------------------------------------------------------- profiles
    async def create_profile(self, pid: str, handle: str, secret_hash: str, created_ms: int) -> tuple[str, str]:
        """Make profile ``pid`` with ``handle`` unless the handle is taken: ("created", pid); ("again",
        its id) when the handle's profile holds this very secret (a retried create); ("taken", its id)."""
        claim, profile = self._handle(handle), self._profile(pid)
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(claim)
                    holder = await pipe.get(claim)
                    if holder is not None:
                        await pipe.unwatch()
                        same = await self.redis.hget(self._profile(str(holder)), "secret") == secret_hash
                        return ("again" if same else "taken"), str(holder)
                    pipe.multi()
                    pipe.set(claim, pid, ex=PROFILE_TTL_S)
                    pipe.hset(profile, mapping={"handle": handle, "created_ms": created_ms, "secret": secret_hash,
                                                "games": 0})
                    pipe.set(self._secret(secret_hash), pid, ex=PROFILE_TTL_S)
                    pipe.expire(profile, PROFILE_TTL_S)
                    await pipe.execute()
                    return "created", pid
                except WatchError:
                    continue

    async def profile(self, pid: str) -> dict[str, Any] | None:
        """{id, handle, created_ms, games, secret (hash)} of a profile; None if it has none (expired)."""
        raw = await self.redis.hgetall(self._profile(pid))
        if not raw or "handle" not in raw:
            return None
        return {"id": pid, "handle": str(raw["handle"]), "created_ms": int(raw.get("created_ms") or 0),
                "games": int(raw.get("games") or 0), "secret": str(raw.get("secret", ""))}

    async def profile_of_secret(self, secret_hash: str) -> dict[str, Any] | None:
        """The profile a profile secret's hash belongs to (its keys' lives renewed: a use), or None."""
        pid = await self.redis.get(self._secret(secret_hash))
        if pid is None:
            return None
        found = await self.profile(str(pid))
        if found is None or found["secret"] != secret_hash:  # (a reset raced this read: the old one is gone)
            return None
        pipe = self.redis.pipeline(transaction=False)
        self._touch(pipe, found["id"], found["handle"], secret_hash)
        await pipe.execute()
        return found

    async def profile_of_handle(self, handle: str) -> dict[str, Any] | None:
        pid = await self.redis.get(self._handle(handle))
        return None if pid is None else await self.profile(str(pid))

    async def reset_secret(self, pid: str, old_hash: str, new_hash: str, request_hash: str = "") -> bool:
        """Replace the profile's secret ``old_hash`` by ``new_hash`` (the old one is refused from now on);
        with ``request_hash``, the reset is recorded for :data:`RESET_RECORD_S` (:meth:`reset_record`).
        False when ``old_hash`` is not (or no longer) the profile's secret."""
        profile = self._profile(pid)
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(profile)
                    handle, current = await pipe.hmget(profile, ["handle", "secret"])
                    if handle is None or current != old_hash:
                        await pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.delete(self._secret(old_hash))
                    pipe.set(self._secret(new_hash), pid, ex=PROFILE_TTL_S)
                    pipe.hset(profile, "secret", new_hash)
                    if request_hash:
                        pipe.set(self.key("prfreset", old_hash, request_hash),
                                 json.dumps({"profile": pid, "secret": new_hash}), ex=RESET_RECORD_S)
                    self._touch(pipe, pid, str(handle), new_hash)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue

    async def reset_record(self, old_hash: str, request_hash: str) -> dict[str, Any] | None:
        """{profile, secret: the new hash} of a reset of ``old_hash`` made with that request (10 min)."""
        raw = await self.redis.get(self.key("prfreset", old_hash, request_hash))
        return None if raw is None else dict(json.loads(raw))

    # ---------------------------------------------------------------- ratings and leaderboards
    async def ratings_of(self, pid: str) -> list[dict[str, Any]]:
        """The profile's ratings: {game, speed, mu, sigma, ordinal, games, rank}, by game and speed."""
        raw = await self.redis.hgetall(self._ratings(pid))
        rows = sorted((str(k).split(":", 1), json.loads(v)) for k, v in raw.items())
        if not rows:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for (game, speed), r in rows:
            pipe.zrank(self._board(game, speed), r["member"])
        ranks = await pipe.execute()
        return [{"game": game, "speed": speed, "mu": float(r["mu"]), "sigma": float(r["sigma"]),
                 "ordinal": Skill(float(r["mu"]), float(r["sigma"])).ordinal, "games": int(r["games"]),
                 "rank": 0 if rank is None else int(rank) + 1}
                for ((game, speed), r), rank in zip(rows, ranks, strict=True)]

    async def leaderboard(self, game: str, speed: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """(entries {rank, handle, ordinal, mu, sigma, games} from place ``offset`` + 1, the count of
        rated profiles). Members of expired profiles met on the way are dropped (then read again)."""
        board, field = self._board(game, speed), f"{game}:{speed}"
        for _ in range(3):
            members = [str(m) for m in await self.redis.zrange(board, offset, offset + limit - 1)] if limit else []
            pipe = self.redis.pipeline(transaction=False)
            for m in members:
                pid = m.split(".", 1)[1]
                pipe.hget(self._profile(pid), "handle")
                pipe.hget(self._ratings(pid), field)
            pipe.zcard(board)
            *got, total = await pipe.execute()
            gone = [m for i, m in enumerate(members) if got[2 * i] is None or got[2 * i + 1] is None]
            if gone:
                await self.redis.zrem(board, *gone)
                continue
            entries = []
            for i, _m in enumerate(members):
                r = json.loads(got[2 * i + 1])
                skill = Skill(float(r["mu"]), float(r["sigma"]))
                entries.append({"rank": offset + i + 1, "handle": str(got[2 * i]), "ordinal": skill.ordinal,
                                "mu": skill.mu, "sigma": skill.sigma, "games": int(r["games"])})
            return entries, int(total)
        raise RuntimeError(f"the leaderboard {board} kept changing while read")

    async def history(self, pid: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """(the profile's PlayedGame dicts from ``offset``, newest first; how many are kept)."""
        if limit <= 0:
            return [], int(await self.redis.llen(self._history(pid)))
        pipe = self.redis.pipeline(transaction=False)
        pipe.lrange(self._history(pid), offset, offset + limit - 1)
        pipe.llen(self._history(pid))
        rows, total = await pipe.execute()
        return [json.loads(r) for r in rows], int(total)

    async def game_recorded(self, game_id: str) -> list[dict[str, Any]] | None:
        """The rating changes a recorded game applied ([] for an unrated one); None if not recorded."""
        raw = await self.redis.get(self.key("rated", game_id))
        return None if raw is None else list(json.loads(raw)["ratings"])

    async def record_game(self, result: GameResult, retention_s: float) -> list[dict[str, Any]]:
        """Apply a finished game to its profiles, exactly once: the rated players' new ratings and
        leaderboard places, one history entry per profile seat (rated or not), each profile's game
        count, and the marker ``rated:{game}`` — all in one transaction. Returns the rating changes
        ({seat, handle, before, after, mu, sigma}, the rated seats'; [] for an unrated game); a game
        recorded already answers the changes recorded then and changes nothing. A profile gone since
        (expired) is left out; fewer than two rated players left: nobody is rated."""
        marker = self.key("rated", result.game_id)
        field = f"{result.game}:{result.speed}"
        players = result.players
        watched = [marker, *(self._profile(p.profile) for p in players),
                   *(self._ratings(p.profile) for p in players if p.rated)]
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*watched)
                    done = await pipe.get(marker)
                    if done is not None:
                        await pipe.unwatch()
                        return list(json.loads(done)["ratings"])
                    live: list[tuple[PlayerResult, str]] = []  # (player, its profile's secret hash)
                    for p in players:
                        handle, secret = await pipe.hmget(self._profile(p.profile), ["handle", "secret"])
                        if handle is not None:
                            live.append((p, str(secret or "")))
                    rated = [p for p, _ in live if p.rated]
                    if len(rated) < MIN_RATED:
                        rated = []
                    before: list[dict[str, Any] | None] = []
                    for p in rated:
                        raw = await pipe.hget(self._ratings(p.profile), field)
                        before.append(None if raw is None else json.loads(raw))
                    old = [Skill() if b is None else Skill(float(b["mu"]), float(b["sigma"])) for b in before]
                    new = rate(old, [p.place for p in rated]) if rated else []
                    changes: dict[int, dict[str, Any]] = {}
                    pipe.multi()
                    for p, b, was, now in zip(rated, before, old, new, strict=True):
                        member = b["member"] if b else f"{result.ended_ms:013x}.{p.profile}"
                        pipe.hset(self._ratings(p.profile), field, json.dumps(
                            {"mu": now.mu, "sigma": now.sigma, "games": (int(b["games"]) if b else 0) + 1,
                             "member": member}))
                        pipe.zadd(self._board(result.game, result.speed), {member: -now.ordinal})
                        changes[p.seat] = {"seat": p.seat, "handle": p.handle, "before": was.ordinal,
                                           "after": now.ordinal, "mu": now.mu, "sigma": now.sigma}
                    for p, secret in live:
                        entry = {"game_id": result.game_id, "game": result.game, "speed": result.speed,
                                 "ended_unix_ms": result.ended_ms, "seat": p.seat, "nickname": p.nickname,
                                 "seats": result.seats, "place": p.place, "won": p.won, "reason": result.reason,
                                 "rated": p.seat in changes, "rating": changes.get(p.seat)}
                        pipe.lpush(self._history(p.profile), json.dumps(entry))
                        pipe.ltrim(self._history(p.profile), 0, MAX_HISTORY - 1)
                        pipe.hincrby(self._profile(p.profile), "games", 1)
                        self._touch(pipe, p.profile, p.handle, secret)
                    recorded = [changes[s] for s in sorted(changes)]
                    pipe.set(marker, json.dumps({"ratings": recorded}),
                             ex=max(1, int(retention_s + MARKER_EXTRA_S)))
                    await pipe.execute()
                    return recorded
                except WatchError:
                    continue


__all__ = ["MAX_HISTORY", "PROFILE_TTL_S", "RESET_RECORD_S", "CommunityStore", "GameResult", "PlayerResult",
           "fold"]
