"""Everything the cluster keeps in Redis, behind one small async class.

Key schema (all under a configurable prefix, default ``arch:``):

==============================  ==============================================================
``g:{game}:journal``            list of JSON journal entries (create, join, start, submit, chat,
                                close) — the durable history a game reloads from
``g:{game}:summary``            JSON public summary (for ListGames / Rejoin)
``open``                        sorted set of public games open for joining (score: created ms)
``code:{CODE}``                 game id of a 6-character game code
``secret:{sha256}``             JSON {game, seat} of a player secret's hash (never the secret)
``agent:{sha256}``              JSON {game, seat, id} of a personal AI agent token's hash (A90)
``agents:{game}:{seat}``        hash token id -> JSON {hash, label, created_ms}: a player's live
                                agent tokens (at most a few; revoking deletes both keys)
``placement``                   hash game id -> shard name (rendezvous hashing, recorded)
``deadlines:{shard}``           sorted set game id -> round deadline (Unix ms) of that shard
``presence:{game}``             sorted set "{seat}:{stream}" -> expiry (Unix ms) of each open Watch
                                stream of the game (A17); the key itself expires with its last stream
``server_key``                  random key of the gateways (derives the secrets of retried creates
                                and joins, so a retry gets the same secret without it being stored)
``shards``                      hash shard name -> last heartbeat (Unix ms)
channel ``g:{game}:updates``    "game G is at version V" notices (never secret data)
==============================  ==============================================================
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.exceptions import WatchError


def is_outage(exc: BaseException) -> bool:
    """Redis (or the network to it) does not answer now: a state of the world, not a bug."""
    return isinstance(exc, (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError))


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
        pipe = self.redis.pipeline(transaction=True)  # both or neither: a notice always has its entry
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

    # --- personal AI agent tokens (A90) ---------------------------------------------------------
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
                    return True
                except WatchError:
                    continue

    async def agent_tokens(self, game_id: str, seat: int) -> dict[str, dict[str, Any]]:
        raw = await self.redis.hgetall(self.key("agents", game_id, str(seat)))
        return {str(k): json.loads(v) for k, v in raw.items()}

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
        raw = await self.redis.get(self.key("agent", token_hash))
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
    async def touch_streams(self, streams: Iterable[tuple[str, int, str]], ttl_s: float) -> None:
        """Mark open Watch streams ``(game, seat, stream id)`` as alive for ``ttl_s`` (one round trip)."""
        now = int(time.time() * 1000)
        expiry = now + int(ttl_s * 1000)
        pipe = self.redis.pipeline(transaction=False)
        n = 0
        for game_id, seat, stream in streams:
            key = self.key("presence", game_id)
            pipe.zremrangebyscore(key, "-inf", now)  # streams of gateways that died: gone
            pipe.zadd(key, {f"{seat}:{stream}": expiry})
            if ttl_s > 0:
                pipe.pexpire(key, int(ttl_s * 1000))  # the key goes with its last stream
            n += 1
        if n:
            await pipe.execute()

    async def drop_stream(self, game_id: str, seat: int, stream: str) -> None:
        await self.redis.zrem(self.key("presence", game_id), f"{seat}:{stream}")

    async def connected(self, game_id: str, seats: Iterable[int]) -> set[int]:
        """The seats among ``seats`` with at least one live Watch stream."""
        wanted = set(seats)
        if not wanted:
            return set()
        key = self.key("presence", game_id)
        now = int(time.time() * 1000)
        members = await self.redis.zrangebyscore(key, now, "+inf")
        live = {int(m.split(":", 1)[0]) for m in members}
        return live & wanted

    async def server_key(self) -> bytes:
        """The gateways' shared random key (created once)."""
        key = self.key("server_key")
        await self.redis.set(key, secrets.token_hex(32), nx=True)
        return bytes.fromhex(str(await self.redis.get(key)))

    # --- pub/sub -------------------------------------------------------------------------------
    async def publish(self, game_id: str, message: dict[str, Any]) -> None:
        await self.redis.publish(self.channel(game_id), dumps(message))
