"""The directory of games in Redis: game codes, players' secrets, public summaries (ListGames,
ListLiveGames), the lobbies each client address holds open, the gateways' shared key; and personal AI
agent tokens (A90). Parts of :class:`services.store.Store`."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from redis.exceptions import WatchError

from services.store_redis import RedisKeys, dumps

#: ListLiveGames: finished public games are listed this long after their end, and at most this many games
LIVE_ENDED_S = 3600
LIVE_KEPT = 100


async def seat_at(store: RedisKeys, key: str) -> tuple[str, int] | None:
    """The (game, seat) a secret's or a token's key records (JSON ``{"game", "seat", …}``), None if none."""
    raw = await store.redis.get(key)
    if raw is None:
        return None
    d = json.loads(raw)
    return str(d["game"]), int(d["seat"])


class DirectoryStore(RedisKeys):
    """Codes, secrets, summaries and the open lists, lobbies per client address, the server key."""

    async def claim_code(self, code: str, game_id: str) -> bool:
        return bool(await self.redis.set(self.key("code", code), game_id, nx=True))

    async def game_of_code(self, code: str) -> str | None:
        value = await self.redis.get(self.key("code", code))
        return None if value is None else str(value)

    async def put_secret(self, secret_hash: str, game_id: str, seat: int) -> None:
        # (KEEPTTL: a retried create or join of a retired game must not make its secret permanent)
        await self.redis.set(self.key("secret", secret_hash), dumps({"game": game_id, "seat": seat}), keepttl=True)

    async def seat_of_secret(self, secret_hash: str) -> tuple[str, int] | None:
        return await seat_at(self, self.key("secret", secret_hash))

    async def put_summary(self, game_id: str, summary: dict[str, Any], listed: bool,
                          created_ms: int, live: str = "") -> None:
        """Keep a game's public summary; ``listed``: in ListGames' open list; ``live`` ("running" or
        "over", for a public game): in ListLiveGames' lists (``live``: running, by start; ``ended``:
        finished, by end, kept for :data:`LIVE_ENDED_S` and at most :data:`LIVE_KEPT`)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(self.key("g", game_id, "summary"), dumps(summary), keepttl=True)  # a retired game keeps its TTL
        if listed:
            pipe.zadd(self.key("open"), {game_id: created_ms})
        else:
            pipe.zrem(self.key("open"), game_id)
        if live == "running":
            pipe.zadd(self.key("live"), {game_id: int(summary.get("started_ms") or created_ms)})
        elif live == "over":
            now_ms = int(time.time() * 1000)
            pipe.zrem(self.key("live"), game_id)
            pipe.zadd(self.key("ended"), {game_id: now_ms})
            pipe.zremrangebyscore(self.key("ended"), "-inf", now_ms - LIVE_ENDED_S * 1000)
            pipe.zremrangebyrank(self.key("ended"), 0, -LIVE_KEPT - 1)
        await pipe.execute()

    async def live_games(self, limit: int = LIVE_KEPT) -> list[dict[str, Any]]:
        """Public games running (newest start first), then those finished in the last
        :data:`LIVE_ENDED_S` (newest end first): at most ``limit`` summaries in all."""
        now_ms = int(time.time() * 1000)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(self.key("live"), 0, limit - 1)
        pipe.zrevrangebyscore(self.key("ended"), "+inf", now_ms - LIVE_ENDED_S * 1000, start=0, num=limit)
        running, ended = await pipe.execute()
        ids = (list(running) + list(ended))[:limit]
        if not ids:
            return []
        raws = await self.redis.mget([self.key("g", g, "summary") for g in ids])
        gone = [g for g, r in zip(ids, raws, strict=True) if r is None]  # (a summary that expired)
        if gone:
            await self.redis.zrem(self.key("live"), *gone)
        return [json.loads(r) for r in raws if r is not None]

    async def summary(self, game_id: str) -> dict[str, Any] | None:
        raw = await self.redis.get(self.key("g", game_id, "summary"))
        return None if raw is None else dict(json.loads(raw))

    async def summaries(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """The summaries of many games in one round trip (None for a game that has none)."""
        if not game_ids:
            return []
        raws = await self.redis.mget([self.key("g", g, "summary") for g in game_ids])
        return [None if r is None else dict(json.loads(r)) for r in raws]

    async def open_games(self, limit: int = 100) -> list[dict[str, Any]]:
        ids = await self.redis.zrevrange(self.key("open"), 0, limit - 1)
        if not ids:
            return []
        raws = await self.redis.mget([self.key("g", g, "summary") for g in ids])
        return [json.loads(r) for r in raws if r is not None]

    # --- open lobbies per client address (a cap against lobby spam) ----------------------------------
    async def open_lobbies(self, peer: str) -> list[str]:
        """Game ids of lobbies ``peer`` created that are still open (prunes the others)."""
        key = self.key("peer", peer, "lobbies")
        ids = [str(g) for g in await self.redis.zrange(key, 0, -1)]
        if not ids:
            return []
        raws = await self.redis.mget([self.key("g", g, "summary") for g in ids])
        still = [g for g, r in zip(ids, raws, strict=True) if r is not None and json.loads(r)["status"] == "lobby"]
        gone = set(ids) - set(still)
        if gone:
            await self.redis.zrem(key, *gone)
        return still

    async def add_lobby(self, peer: str, game_id: str, ttl_s: float) -> None:
        key = self.key("peer", peer, "lobbies")
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(key, {game_id: int(time.time() * 1000)})
        pipe.expire(key, max(1, int(ttl_s)))  # no lobby outlives its expiry: nor does the list
        await pipe.execute()

    async def server_key(self) -> bytes:
        """The gateways' shared random key (created once)."""
        key = self.key("server_key")
        await self.redis.set(key, secrets.token_hex(32), nx=True)
        return bytes.fromhex(str(await self.redis.get(key)))


class AgentTokenStore(RedisKeys):
    """Personal AI agent tokens (A90): a player's live tokens, their hashes, idempotency keys, revocations."""

    async def add_agent_token(self, game_id: str, seat: int, token_id: str, token_hash: str, label: str,
                              created_ms: int, limit: int) -> bool:
        """Record a token unless the player already has ``limit`` live ones (False then)."""
        listing = self.key("agents", game_id, str(seat))
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(listing)
                    if int(await pipe.hlen(listing)) >= limit:
                        await pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.hset(listing, token_id, dumps({"hash": token_hash, "label": label,
                                                         "created_ms": created_ms}))
                    pipe.set(self.key("agent", token_hash), dumps({"game": game_id, "seat": seat,
                                                                    "id": token_id}))
                    await pipe.execute()
                    break
                except WatchError:
                    continue
        ttl = int(await self.redis.ttl(self.key("g", game_id, "summary")))
        if ttl > 0:  # a token made for a finished game leaves with it
            pipe = self.redis.pipeline(transaction=False)
            pipe.expire(listing, ttl)
            pipe.expire(self.key("agent", token_hash), ttl)
            await pipe.execute()
        return True

    async def agent_tokens(self, game_id: str, seat: int) -> dict[str, dict[str, Any]]:
        raw = await self.redis.hgetall(self.key("agents", game_id, str(seat)))
        return {str(k): json.loads(v) for k, v in raw.items()}

    async def agent_key(self, game_id: str, seat: int, key_hash: str, record: str, ttl_s: int) -> str:
        """The record of a CreateAgentToken idempotency key: ``record`` if this call is its first (SET NX:
        concurrent retries agree), else the first call's."""
        marker = self.key("agentkey", game_id, str(seat), key_hash)
        await self.redis.set(marker, record, nx=True, ex=ttl_s)
        first = await self.redis.get(marker)
        return str(first) if first else record

    async def mark_agent_token_revoked(self, game_id: str, seat: int, token_id: str, ttl_s: int) -> None:
        await self.redis.set(self.key("agentrevoked", game_id, str(seat), token_id), 1, ex=ttl_s)

    async def agent_token_revoked(self, game_id: str, seat: int, token_id: str) -> bool:
        return bool(await self.redis.exists(self.key("agentrevoked", game_id, str(seat), token_id)))

    async def revoke_agent_token(self, game_id: str, seat: int, token_id: str) -> bool:
        listing = self.key("agents", game_id, str(seat))
        raw = await self.redis.hget(listing, token_id)
        if raw is None:
            return False
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(self.key("agent", json.loads(raw)["hash"]))
            pipe.hdel(listing, token_id)
            _, removed = await pipe.execute()
        return bool(removed)

    async def seat_of_agent_token(self, token_hash: str) -> tuple[str, int] | None:
        return await seat_at(self, self.key("agent", token_hash))
