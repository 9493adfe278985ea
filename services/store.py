"""Everything the cluster keeps in Redis, behind one small async class.

Key schema (all under a configurable prefix, default ``arch:``):

==============================  ==============================================================
``g:{game}:journal``            list of JSON journal entries (create, join, start, submit, standing,
                                act, action, close, rated, expire, end) — the durable history a game
                                reloads from
``g:{game}:summary``            JSON public summary (for ListGames / Rejoin)
``open``                        sorted set of public games open for joining (score: created ms)
``live``, ``ended``             sorted sets of public games running (score: started ms) and finished
                                (score: ended ms; one hour, at most 100) for ListLiveGames
``prf:…``, ``handle:…``,        profiles, ratings, leaderboards, history, the per-game rating marker
``prfsecret:…``, ``lb:…``,      (see :mod:`services.community_store`)
``rated:{game}``
``quick:…``                     quick play: each bucket's lobbies, lock and ticket queue (see the
                                quick-play methods below)
``code:{CODE}``                 game id of a 6-character game code
``secret:{sha256}``             JSON {game, seat} of a player secret's hash (never the secret)
``agent:{sha256}``              JSON {game, seat, id} of a personal AI agent token's hash (A90)
``agents:{game}:{seat}``        hash token id -> JSON {hash, label, created_ms}: a player's live
                                agent tokens (at most a few; revoking deletes both keys)
``agentkey:{game}:{seat}:{h}``  JSON {nonce, created_ms} of a CreateAgentToken idempotency key (its
                                hash ``h``): the token is derived from it, never stored (1 h)
``agentrevoked:{game}:{seat}:{id}``  a revoked token's id: its key may not make it again (1 h)
``place:{game}``                shard name of the game (rendezvous hashing, recorded once)
``notify:…``                    notifications: settings, outbox, dedup (see :mod:`services.notify.outbox`)
``g:{game}:archive``            a finished game's journal, compacted (zlib + base64 of its JSON lines)
``deadlines:{shard}``           sorted set game id -> round deadline (Unix ms) of that shard
``presence:{game}``             sorted set "{seat}:{stream}" -> expiry (Unix ms) of each open Watch
                                stream of the game (A17); the key itself expires with its last stream
``server_key``                  random key of the gateways (derives the secrets of retried creates
                                and joins, so a retry gets the same secret without it being stored)
``shards``                      hash shard name -> last heartbeat (Unix ms)
``shardset``                    hash shard name -> ``active`` | ``draining``: the cluster's shard set
``peer:{addr}:lobbies``         sorted set game id -> created ms: lobby games a client address
                                created and that may still be open (the cap per peer)
channel ``g:{game}:updates``    "game G is at version V" notices (never secret data)
==============================  ==============================================================

**Retention** (:meth:`Store.retire`): when a game ends, its journal is compacted into one
``g:{game}:archive`` string and every key of the game — archive, summary, code, placement, its
players' secret hashes and agent tokens — gets the retention time to live (default 7 days): a
rejoin link shows the result until then, then the game is gone from Redis.  Nothing else of a game
outlives it: presence keys expire with their streams, deadlines and the open list drop it at once.

**Connections**: one bounded, blocking pool per process (``MAX_CONNECTIONS``): a command waits for a
free connection (up to ``POOL_TIMEOUT_S``, then fails as an outage) instead of opening one more.
The gateway's Watch streams share one pub/sub connection (:mod:`gateway.pubsub`).

**Metrics** (:class:`services.metrics.RedisMetrics`): every command's round trip is timed, and every
pipeline's once as one round trip (journal appends leave in pipelines: one observation for many
appends); a command or pipeline that fails after the retries counts as an error, ``outage`` or
``other``. The pub/sub connection is not timed (its reads wait for notices by design).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import time
import zlib
from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.metrics import PROCESS_REDIS, RedisMetrics

#: the key of a journal notice's append time (epoch ms, a float) in the pub/sub notice {"version": n, ...}
NOTICE_AT = "at_ms"


class JournalConflict(Exception):
    """The journal is not as long as the writer believed: another writer (a shard being killed, still
    finishing a call; or a game moving) appended meanwhile. The writer reloads the game and retries."""


# Append one journal entry and publish its notice, only if the journal has exactly ARGV[3] entries
# (so an entry's position is its version, and two writers of one game can never both append).
_APPEND = """
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[3]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PUBLISH', KEYS[2], ARGV[2])
return 1
"""


# Presence of open Watch streams, many games in one call: for each key (a game's presence set) drop the
# expired streams, (re)add this gateway's with their new expiry, and let the key expire with them.
# ARGV: now, expiry, ttl ms (0: no key expiry), then per key: the count of its members, the members.
_TOUCH = """
local now, expiry, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local a = 4
for _, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local n = tonumber(ARGV[a])
  for j = 1, n do redis.call('ZADD', key, expiry, ARGV[a + j]) end
  a = a + n + 1
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
return #KEYS
"""
TOUCH_CHUNK = 500  # games per presence script call

# A Watch stream that ended keeps counting as connected for a grace (A17): its member (if still there)
# expires ARGV[2] ms from now (ARGV[1]); the key's own expiry is only ever lengthened.
_LINGER = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  local left = redis.call('PTTL', KEYS[1])
  if left >= 0 and left < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  return 1
end
return 0
"""

# Move a game from shard ARGV[1] to ARGV[2] if it is still placed on ARGV[1] (or nowhere): its
# placement (keeping its time to live) and its deadline-index entry; returns where it is placed now.
# KEYS: placement, the old shard's deadline index, the new one's, the current owner's (if moved).
_MOVE = """
local at = redis.call('GET', KEYS[1])
local d = redis.call('ZSCORE', KEYS[2], ARGV[3])
if d then redis.call('ZREM', KEYS[2], ARGV[3]) end
if at and at ~= ARGV[1] then
  -- moved already: an entry the old shard wrote since (a call it was finishing) goes to the owner's
  -- index unless that has one
  if d then redis.call('ZADD', KEYS[4], 'NX', d, ARGV[3]) end
  return at
end
if at then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') else redis.call('SET', KEYS[1], ARGV[2]) end
if d then redis.call('ZADD', KEYS[3], d, ARGV[3]) end
return ARGV[2]
"""


def is_outage(exc: BaseException) -> bool:
    """Redis (or the network to it) does not answer now: a state of the world, not a bug."""
    return isinstance(exc, (RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError))


MAX_CONNECTIONS = int(os.environ.get("ARCHIPELAGO_REDIS_CONNECTIONS", "32"))  # per process
POOL_TIMEOUT_S = 10.0
RETRIES = 3  # after a lost connection: 50, 100, 200 ms, then the caller gets server/unavailable


#: answers every caller handles by design, not failures: an optimistic transaction that lost a race
#: (retried), a script Redis does not hold yet (loaded, then called again)
_HANDLED = (WatchError, NoScriptError)


class _MeteredPipeline(Pipeline):
    """A pipeline whose ``execute`` is timed once, as one round trip (its queued commands are not)."""

    metrics: RedisMetrics = PROCESS_REDIS

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        name = "MULTI" if self.is_transaction or self.explicit_transaction else "PIPELINE"
        start = time.perf_counter()
        try:
            result = await super().execute(raise_on_error)
        except Exception as exc:
            self.metrics.observe(name, time.perf_counter() - start)
            if not isinstance(exc, _HANDLED):
                self.metrics.failed(is_outage(exc))
            raise
        self.metrics.observe(name, time.perf_counter() - start)
        return result


class _MeteredRedis(aioredis.Redis):
    """The Redis client with every command timed and every failure (after the retries) counted."""

    metrics: RedisMetrics = PROCESS_REDIS

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        start = time.perf_counter()
        try:
            result = await super().execute_command(*args, **options)
        except Exception as exc:
            self.metrics.observe(str(args[0]), time.perf_counter() - start)
            if not isinstance(exc, _HANDLED):
                self.metrics.failed(is_outage(exc))
            raise
        self.metrics.observe(str(args[0]), time.perf_counter() - start)
        return result

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        pipe = _MeteredPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
        pipe.metrics = self.metrics
        return pipe


#: ListLiveGames: finished public games are listed this long after their end, and at most this many games
LIVE_ENDED_S = 3600
LIVE_KEPT = 100


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class _Appends:
    """Journal appends of one process sent together: every append asked for while the event loop
    runs one round of ready work leaves in one pipeline (one write, one read, one pooled connection)
    instead of one round trip each. Each append is still its own atomic script; an idle process
    adds no delay (the pipeline leaves at the end of the current loop iteration)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self.sha = hashlib.sha1(_APPEND.encode()).hexdigest()
        self.pending: list[tuple[list[str], list[Any], asyncio.Future[Any]]] = []

    async def run(self, keys: list[str], args: list[Any]) -> Any:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        if not self.pending:
            loop.call_soon(self._flush)
        self.pending.append((keys, args, fut))
        return await fut

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        task = asyncio.get_running_loop().create_task(self._send(batch))
        _BACKGROUND.add(task)
        task.add_done_callback(_BACKGROUND.discard)

    async def _send(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> None:
        try:
            results = await self._pipeline(batch)
            if any(isinstance(r, NoScriptError) for r in results):  # a restarted Redis forgot the script
                await self.redis.script_load(_APPEND)
                results = await self._pipeline(batch)
        except BaseException as exc:
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, _, fut), result in zip(batch, results, strict=True):
            if fut.done():
                continue
            if isinstance(result, BaseException):
                fut.set_exception(result)
            else:
                fut.set_result(result)

    async def _pipeline(self, batch: list[tuple[list[str], list[Any], asyncio.Future[Any]]]) -> list[Any]:
        pipe = self.redis.pipeline(transaction=False)
        for keys, args, _ in batch:
            pipe.evalsha(self.sha, len(keys), *keys, *args)
        return list(await pipe.execute(raise_on_error=False))


_BACKGROUND: set[asyncio.Task[None]] = set()  # pipelines in flight (a task needs a reference)


class Store:
    """Async access to the cluster's Redis. One instance per process (gateway or shard)."""

    def __init__(self, url: str, prefix: str = "arch:", max_connections: int = MAX_CONNECTIONS,
                 client_name: str = "archipelago", metrics: RedisMetrics = PROCESS_REDIS) -> None:
        """``metrics``: where the Redis round trips and errors are counted (a shard passes its registry's)."""
        self.url = url
        self.prefix = prefix
        # Retried with backoff on a lost connection (a restarted Redis closes every pooled one): safe,
        # since every write here is idempotent or fenced — a journal append names the length it
        # expects, so a retry of one that was done is refused, never done twice.
        retry = Retry(ExponentialBackoff(cap=1.0, base=0.05), RETRIES)
        pool = aioredis.BlockingConnectionPool.from_url(  # named: operators see who holds what in CLIENT LIST
            url, decode_responses=True, max_connections=max_connections, timeout=POOL_TIMEOUT_S,
            socket_connect_timeout=5.0, client_name=client_name, retry=retry,
            retry_on_error=[RedisConnectionError, RedisTimeoutError, ConnectionError, TimeoutError])
        # Any: redis-py types asyncio commands as "Awaitable[T] | T", which mypy cannot await.
        self.redis: Any = _MeteredRedis(connection_pool=pool)
        self.redis.metrics = self.metrics = metrics
        metrics.pool.track(pool)  # (its connections in use and idle, read when the process is scraped)
        self._appends = _Appends(self.redis)
        self._touch: Any = self.redis.register_script(_TOUCH)
        self._linger: Any = self.redis.register_script(_LINGER)
        self._move: Any = self.redis.register_script(_MOVE)
        self._outbox: Any = None

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def channel(self, game_id: str) -> str:
        return self.key("g", game_id, "updates")

    async def close(self) -> None:
        self.metrics.pool.untrack(self.redis.connection_pool)
        await self.redis.aclose()

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    # --- journal -------------------------------------------------------------------------------
    async def journal_append_publish(self, game_id: str, entry: dict[str, Any], notice: dict[str, Any],
                                     expected: int) -> None:
        """Append one entry and publish a notice in one round trip, both or neither, only if the journal
        holds exactly ``expected`` entries now (:class:`JournalConflict` otherwise). The append is
        durable on return: see ``appendfsync`` in :mod:`services.cluster`.

        The notice gets ``at_ms``, the wall-clock time (epoch ms) the append leaves for Redis: the
        gateways measure the Watch fan-out from it (``archipelago_watch_fanout_seconds``); it is never
        sent to a client."""
        notice = {**notice, NOTICE_AT: round(time.time() * 1000, 3)}
        done = await self._appends.run([self.key("g", game_id, "journal"), self.channel(game_id)],
                                       [dumps(entry), dumps(notice), expected])
        if not int(done):
            raise JournalConflict(f"the journal of {game_id} is not at {expected} entries")

    async def journal_read(self, game_id: str) -> list[dict[str, Any]]:
        raw = await self.redis.lrange(self.key("g", game_id, "journal"), 0, -1)
        if not raw:  # a finished game: its compacted journal (see retire)
            packed = await self.redis.get(self.key("g", game_id, "archive"))
            if packed is not None:
                raw = zlib.decompress(base64.b64decode(packed)).decode().split("\n")
        return [json.loads(r) for r in raw]

    async def retire(self, game_id: str, *, code: str, secret_hashes: Iterable[str], retention_s: float) -> None:
        """A finished game leaves Redis after ``retention_s``: its journal compacted to one string and
        every key of it given that time to live, in one transaction (a retry finds the journal
        compacted and does nothing)."""
        ttl = max(1, int(retention_s))
        journal, archive = self.key("g", game_id, "journal"), self.key("g", game_id, "archive")
        raw = await self.redis.lrange(journal, 0, -1)
        if not raw:
            return
        seats = list(secret_hashes)  # one per seat ("" for an autopilot seat)
        keys = [archive, self.key("g", game_id, "summary"), self.key("place", game_id)]
        keys += [self.key("code", code)] if code else []
        keys += [self.key("secret", h) for h in seats if h]
        keys += [self.key("notify", game_id, str(seat)) for seat in range(len(seats))]  # notification settings
        keys += [self.key("notify", "seen", game_id), self.key("notify", "mark", game_id)]
        for seat in range(len(seats)):  # agent tokens: the listing and each token's key
            listing = self.key("agents", game_id, str(seat))
            tokens = await self.redis.hgetall(listing)
            if tokens:
                keys.append(listing)
                keys += [self.key("agent", json.loads(rec)["hash"]) for rec in tokens.values()]
        pipe = self.redis.pipeline(transaction=True)
        pipe.set(archive, base64.b64encode(zlib.compress("\n".join(raw).encode(), 9)).decode())
        pipe.delete(journal)
        for key in keys:
            pipe.expire(key, ttl)
        await pipe.execute()

    # --- directory: codes, secrets, summaries ----------------------------------------------------
    async def claim_code(self, code: str, game_id: str) -> bool:
        return bool(await self.redis.set(self.key("code", code), game_id, nx=True))

    async def game_of_code(self, code: str) -> str | None:
        value = await self.redis.get(self.key("code", code))
        return None if value is None else str(value)

    async def put_secret(self, secret_hash: str, game_id: str, seat: int) -> None:
        # (KEEPTTL: a retried create or join of a retired game must not make its secret permanent)
        await self.redis.set(self.key("secret", secret_hash), dumps({"game": game_id, "seat": seat}), keepttl=True)

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
        raw = await self.redis.get(self.key("agent", token_hash))
        if raw is None:
            return None
        d = json.loads(raw)
        return str(d["game"]), int(d["seat"])

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

    # --- placement and shards ------------------------------------------------------------------
    async def placement(self, game_id: str) -> str | None:
        value = await self.redis.get(self.key("place", game_id))
        return None if value is None else str(value)

    async def shard_set(self) -> dict[str, str]:
        """The cluster's shards: name -> state ("active" or "draining"), one configuration for every
        gateway (the first ``serve`` of a cluster writes it)."""
        return {str(k): str(v) for k, v in (await self.redis.hgetall(self.key("shardset"))).items()}

    async def ensure_shard_set(self, names: list[str]) -> dict[str, str]:
        """The recorded shard set, or ``names`` (all active) recorded now if there is none."""
        await self.redis.eval("if redis.call('EXISTS', KEYS[1]) == 0 then "
                              "for _, n in ipairs(ARGV) do redis.call('HSET', KEYS[1], n, 'active') end end",
                              1, self.key("shardset"), *names)  # (atomic: the first writer's set wins)
        return await self.shard_set()

    async def set_shard_state(self, name: str, state: str) -> None:
        await self.redis.hset(self.key("shardset"), name, state)

    async def remove_shard(self, name: str) -> None:
        """Out of the shard set (its deadline index is empty: it was drained)."""
        await self.redis.hdel(self.key("shardset"), name)

    async def move(self, game_id: str, old: str, new: str) -> str:
        """Move a game's placement from ``old`` to ``new`` (with its entry in the deadline index),
        unless it is no longer on ``old``; returns where it is now."""
        at = await self.placement(game_id)
        owner = at if at is not None and at != old else new
        keys = [self.key("place", game_id), self.key("deadlines", old), self.key("deadlines", new),
                self.key("deadlines", owner)]
        return str(await self._move(keys=keys, args=[old, new, game_id]))

    async def place(self, game_id: str, shard: str) -> str:
        """Record ``game -> shard`` unless already placed (then return the recorded shard)."""
        return (await self.claim_placement(game_id, shard))[0]

    async def claim_placement(self, game_id: str, shard: str) -> tuple[str, bool]:
        """:meth:`place`, and whether this call recorded the placement (False: it was there already)."""
        key = self.key("place", game_id)
        value = await self.redis.set(key, shard, nx=True, get=True)  # the recorded shard, None if new
        return (shard, True) if value is None else (str(value), False)

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
        """Mark open Watch streams ``(game, seat, stream id)`` as alive for ``ttl_s``: one script call
        per ``TOUCH_CHUNK`` games (a gateway holding 10,000 streams sent 30,000 commands in one
        pipeline every heartbeat, stalling its event loop for half a second)."""
        now = int(time.time() * 1000)
        expiry = now + int(ttl_s * 1000)
        by_game: dict[str, list[str]] = {}
        for game_id, seat, stream in streams:
            by_game.setdefault(game_id, []).append(f"{seat}:{stream}")
        games = list(by_game.items())
        for i in range(0, len(games), TOUCH_CHUNK):
            keys: list[str] = []
            args: list[Any] = [now, expiry, int(ttl_s * 1000) if ttl_s > 0 else 0]
            for game_id, members in games[i:i + TOUCH_CHUNK]:
                keys.append(self.key("presence", game_id))
                args += [len(members), *members]
            await self._touch(keys=keys, args=args)

    async def drop_stream(self, game_id: str, seat: int, stream: str) -> None:
        await self.redis.zrem(self.key("presence", game_id), f"{seat}:{stream}")

    async def linger_stream(self, game_id: str, seat: int, stream: str, grace_s: float) -> bool:
        """A Watch stream that ended: its seat stays connected ``grace_s`` more seconds (A17), unless
        the stream's entry had already expired (False then)."""
        ms = int(grace_s * 1000)
        expiry = int(time.time() * 1000) + ms
        return bool(await self._linger(keys=[self.key("presence", game_id)], args=[f"{seat}:{stream}", expiry, ms]))

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

    async def connected_elsewhere(self, game_id: str, seat: int, stream: str) -> bool:
        """``seat`` has a live Watch stream (or grace, or agent lease) other than ``stream``."""
        now = int(time.time() * 1000)
        members = await self.redis.zrangebyscore(self.key("presence", game_id), now, "+inf")
        mine = f"{seat}:{stream}"
        return any(m != mine and m.split(":", 1)[0] == str(seat) for m in members)

    async def server_key(self) -> bytes:
        """The gateways' shared random key (created once)."""
        key = self.key("server_key")
        await self.redis.set(key, secrets.token_hex(32), nx=True)
        return bytes.fromhex(str(await self.redis.get(key)))

    # --- notifications (services.notify.outbox) -------------------------------------------------
    @property
    def outbox(self) -> Any:
        """The notifications' outbox on this store's connections (made on first use)."""
        if self._outbox is None:
            from services.notify.config import NotifyConfig
            from services.notify.outbox import Outbox

            self._outbox = Outbox(self, max_queue=NotifyConfig.from_env().max_queue)
        return self._outbox

    async def notify(self, game_id: str, game: str, notices: Any, *, version: int,
                     at_ms: int) -> tuple[list[int], int]:
        """Queue a game's notices (:meth:`services.notify.outbox.Outbox.enqueue`): the indexes queued, the
        count dropped."""
        queued, dropped = await self.outbox.enqueue(game_id, game, notices, version=version, at_ms=at_ms)
        return list(queued), int(dropped)

    async def notify_mark(self, game_id: str) -> int:
        return int(await self.outbox.mark(game_id))

    # --- pub/sub -------------------------------------------------------------------------------
    async def publish(self, game_id: str, message: dict[str, Any]) -> None:
        await self.redis.publish(self.channel(game_id), dumps(message))

    # --- quick play (gateway.quickplay) ---------------------------------------------------------
    # Keys, per bucket B = "{game}:{speed}:{seats}": ``quick:B:lobbies`` (sorted set game id -> opened
    # ms: the bucket's open quick-play lobbies), ``quick:B:lock`` (the bucket's lock: its holder's
    # token, with a time to live), ``quick:B:queue`` (sorted set token -> ticket: the callers waiting
    # for the lock, in arrival order), ``quick:B:alive`` (sorted set token -> expiry ms: a waiter that
    # stops asking is dropped from the queue), ``quick:B:tickets`` (the ticket counter);
    # ``quick:wake:{token}`` (a list a waiter blocks on: the lock's release wakes the queue's head);
    # ``quick:req:{h}`` (JSON: where a QuickPlay request id last sat down; ``h`` is derived from it).

    # Take the lock of a bucket if it is free and the caller (ARGV[1]) is first in its queue; else
    # queue the caller (once: its ticket keeps its place) and say 0. Every call keeps the caller alive
    # for ARGV[3] ms and drops the waiters that stopped asking. ARGV: token, lock ms, alive ms, key ms.
    _QUICK_ENTER = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1])
end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[1])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now)) do
  redis.call('ZREM', KEYS[2], gone)
  redis.call('ZREM', KEYS[3], gone)
end
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
"""
    # The caller (ARGV[1]) leaves: its lock (only if it holds it: compare and delete) and its place in
    # the queue; if the lock is free, the queue's new head is woken (ARGV[2]: the wake keys' prefix).
    _QUICK_EXIT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', ARGV[2] .. ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head then
    redis.call('RPUSH', ARGV[2] .. head, '1')
    redis.call('PEXPIRE', ARGV[2] .. head, ARGV[3])
  end
end
return 1
"""
    # The holder (ARGV[1]) keeps its lock ARGV[2] ms more; 0 when it does not hold it (any more).
    _QUICK_HOLD = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

    def _quick_script(self, name: str) -> Any:
        scripts = self.__dict__.setdefault("_quick_scripts", {})
        if name not in scripts:
            scripts[name] = self.redis.register_script(getattr(self, name))
        return scripts[name]

    def _quick_keys(self, bucket: str) -> list[str]:
        return [self.key("quick", bucket, part) for part in ("lock", "queue", "alive", "tickets")]

    async def quick_enter(self, bucket: str, token: str, *, lock_ms: int, alive_ms: int) -> bool:
        """Take the bucket's lock for ``lock_ms`` if it is free and ``token`` is first in the bucket's
        queue (True); else queue ``token`` (in arrival order, kept alive for ``alive_ms``; False)."""
        got = await self._quick_script("_QUICK_ENTER")(keys=self._quick_keys(bucket),
                                                      args=[token, lock_ms, alive_ms, 3_600_000])
        return bool(got)

    async def quick_exit(self, bucket: str, token: str) -> None:
        """``token`` leaves the bucket's lock (if it holds it) and queue; the next in the queue is woken."""
        await self._quick_script("_QUICK_EXIT")(keys=self._quick_keys(bucket)[:3],
                                               args=[token, self.key("quick", "wake", ""), 60_000])

    async def quick_hold(self, bucket: str, token: str, lock_ms: int) -> bool:
        """The holder ``token`` keeps the bucket's lock ``lock_ms`` from now; False if it lost it."""
        return bool(await self._quick_script("_QUICK_HOLD")(keys=self._quick_keys(bucket)[:1],
                                                           args=[token, lock_ms]))

    async def quick_wait(self, token: str, timeout_s: float) -> bool:
        """Block until ``token`` is woken (True) or ``timeout_s`` passes (False)."""
        return await self.redis.blpop([self.key("quick", "wake", token)], timeout=timeout_s) is not None

    async def quick_lobbies(self, bucket: str, limit: int = 50) -> list[str]:
        """The bucket's quick-play lobbies, oldest first."""
        return [str(g) for g in await self.redis.zrange(self.key("quick", bucket, "lobbies"), 0, limit - 1)]

    async def quick_add(self, bucket: str, game_id: str, opened_ms: int, ttl_s: float) -> None:
        """A lobby joins its bucket (the bucket lives ``ttl_s`` after its last new lobby: no lobby outlives
        its expiry)."""
        key = self.key("quick", bucket, "lobbies")
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(key, {game_id: opened_ms})
        pipe.expire(key, max(1, int(ttl_s)))
        await pipe.execute()

    async def quick_leave(self, bucket: str, *game_ids: str) -> None:
        """Lobbies leave their bucket (started, ended, full or gone)."""
        if game_ids:
            await self.redis.zrem(self.key("quick", bucket, "lobbies"), *game_ids)

    async def quick_record(self, name: str) -> dict[str, Any] | None:
        raw = await self.redis.get(self.key("quick", "req", name))
        return None if raw is None else dict(json.loads(raw))

    async def put_quick_record(self, name: str, record: dict[str, Any], ttl_s: float) -> None:
        await self.redis.set(self.key("quick", "req", name), dumps(record), ex=max(1, int(ttl_s)))
