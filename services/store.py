"""Everything the cluster keeps in Redis, behind one small async class.

Key schema (all under a configurable prefix, default ``arch:``):

==============================  ==============================================================
``g:{game}:journal``            list of JSON journal entries (create, join, start, submit, chat,
                                close) — the durable history a game reloads from
``g:{game}:summary``            JSON public summary (for ListGames / Rejoin)
``open``                        sorted set of public games open for joining (score: created ms)
``code:{CODE}``                 game id of a 6-character game code
``secret:{sha256}``             JSON {game, seat} of a player secret's hash (never the secret)
``placement``                   hash game id -> shard name (rendezvous hashing, recorded)
``deadlines:{shard}``           sorted set game id -> round deadline (Unix ms) of that shard
``presence:{game}:{seat}``      "1" with a TTL while the player is connected (A17)
``shards``                      hash shard name -> last heartbeat (Unix ms)
channel ``g:{game}:updates``    "game G is at version V" notices (never secret data)
==============================  ==============================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class Store:
    """Async access to the cluster's Redis. One instance per process (gateway or shard)."""

    def __init__(self, url: str, prefix: str = "arch:") -> None:
        self.url = url
        self.prefix = prefix
        # Any: redis-py types asyncio commands as "Awaitable[T] | T", which mypy cannot await.
        self.redis: Any = aioredis.Redis.from_url(url, decode_responses=True)

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def channel(self, game_id: str) -> str:
        return self.key("g", game_id, "updates")

    async def close(self) -> None:
        await self.redis.aclose()

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    # --- journal -------------------------------------------------------------------------------
    async def journal_append_publish(self, game_id: str, entry: dict[str, Any], notice: dict[str, Any]) -> None:
        """Append one entry and publish a notice in one round trip (the append is durable on return)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.rpush(self.key("g", game_id, "journal"), dumps(entry))
        pipe.publish(self.channel(game_id), dumps(notice))
        await pipe.execute()

    async def journal_read(self, game_id: str) -> list[dict[str, Any]]:
        raw = await self.redis.lrange(self.key("g", game_id, "journal"), 0, -1)
        return [json.loads(r) for r in raw]

    # --- directory: codes, secrets, summaries ----------------------------------------------------
    async def claim_code(self, code: str, game_id: str) -> bool:
        return bool(await self.redis.set(self.key("code", code), game_id, nx=True))

    async def game_of_code(self, code: str) -> str | None:
        value = await self.redis.get(self.key("code", code))
        return None if value is None else str(value)

    async def put_secret(self, secret_hash: str, game_id: str, seat: int) -> None:
        await self.redis.set(self.key("secret", secret_hash), dumps({"game": game_id, "seat": seat}))

    async def seat_of_secret(self, secret_hash: str) -> tuple[str, int] | None:
        raw = await self.redis.get(self.key("secret", secret_hash))
        if raw is None:
            return None
        d = json.loads(raw)
        return str(d["game"]), int(d["seat"])

    async def put_summary(self, game_id: str, summary: dict[str, Any], listed: bool,
                          created_ms: int) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.set(self.key("g", game_id, "summary"), dumps(summary))
        if listed:
            pipe.zadd(self.key("open"), {game_id: created_ms})
        else:
            pipe.zrem(self.key("open"), game_id)
        await pipe.execute()

    async def summary(self, game_id: str) -> dict[str, Any] | None:
        raw = await self.redis.get(self.key("g", game_id, "summary"))
        return None if raw is None else dict(json.loads(raw))

    async def open_games(self, limit: int = 100) -> list[dict[str, Any]]:
        ids = await self.redis.zrevrange(self.key("open"), 0, limit - 1)
        if not ids:
            return []
        raws = await self.redis.mget([self.key("g", g, "summary") for g in ids])
        return [json.loads(r) for r in raws if r is not None]

    # --- placement and shards ------------------------------------------------------------------
    async def placement(self, game_id: str) -> str | None:
        value = await self.redis.hget(self.key("placement"), game_id)
        return None if value is None else str(value)

    async def place(self, game_id: str, shard: str) -> str:
        """Record ``game -> shard`` unless already placed (then return the recorded shard)."""
        key = self.key("placement")
        await self.redis.hsetnx(key, game_id, shard)
        value = await self.redis.hget(key, game_id)
        return str(value)

    async def heartbeat_shard(self, shard: str, now_ms: int) -> None:
        await self.redis.hset(self.key("shards"), shard, str(now_ms))

    # --- deadlines -----------------------------------------------------------------------------
    async def set_deadline(self, shard: str, game_id: str, deadline_ms: int | None) -> None:
        key = self.key("deadlines", shard)
        if deadline_ms is None:
            await self.redis.zrem(key, game_id)
        else:
            await self.redis.zadd(key, {game_id: deadline_ms})

    async def deadlines(self, shard: str) -> list[tuple[str, int]]:
        rows = await self.redis.zrange(self.key("deadlines", shard), 0, -1, withscores=True)
        return [(str(g), int(s)) for g, s in rows]

    # --- presence ------------------------------------------------------------------------------
    async def touch_presence(self, game_id: str, seat: int, ttl_s: float) -> None:
        await self.redis.set(self.key("presence", game_id, str(seat)), "1", px=int(ttl_s * 1000))

    async def clear_presence(self, game_id: str, seat: int) -> None:
        await self.redis.delete(self.key("presence", game_id, str(seat)))

    async def connected(self, game_id: str, seats: Iterable[int]) -> set[int]:
        seats = list(seats)
        if not seats:
            return set()
        values = await self.redis.mget([self.key("presence", game_id, str(s)) for s in seats])
        return {s for s, v in zip(seats, values, strict=True) if v is not None}

    # --- pub/sub -------------------------------------------------------------------------------
    async def publish(self, game_id: str, message: dict[str, Any]) -> None:
        await self.redis.publish(self.channel(game_id), dumps(message))
