"""Everything the cluster keeps in Redis, behind one async class (:class:`Store`) composed of parts, one
concern each (services/store_*.py).

Key schema (all under a configurable prefix, default ``arch:``):

==============================  ==============================================================
``g:{game}:journal``            list of JSON journal entries (create, join, start, submit, standing,
                                act, close, action, rated, expire, end: the records of
                                :mod:`services.journal`) — the durable history a game reloads from
``g:{game}:summary``            JSON public summary (for ListGames / Rejoin)
``open``                        sorted set of public games open for joining (score: created ms)
``live``, ``ended``             sorted sets of public games running (score: started ms) and finished
                                (score: ended ms; one hour, at most 100) for ListLiveGames
``prf:…``, ``handle:…``,        profiles, ratings, leaderboards, history, the per-game rating marker
``prfsecret:…``, ``lb:…``,      (see :mod:`services.community_store`)
``rated:{game}``
``quick:…``                     quick play: each bucket's lobbies, lock and ticket queue (see
                                :mod:`services.store_quick`)
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

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.metrics import PROCESS_REDIS, RedisMetrics
from services.store_cluster import TOUCH_CHUNK, PlacementStore, PresenceStore
from services.store_directory import LIVE_ENDED_S, LIVE_KEPT, AgentTokenStore, DirectoryStore
from services.store_journal import NOTICE_AT, JournalConflict, JournalStore, _Appends
from services.store_quick import QuickPlayStore
from services.store_redis import MAX_CONNECTIONS, POOL_TIMEOUT_S, RETRIES, _MeteredRedis, dumps, is_outage


class Store(JournalStore, DirectoryStore, AgentTokenStore, PlacementStore, PresenceStore, QuickPlayStore):
    """Async access to the cluster's Redis. One instance per process (gateway or shard).

    Its parts, one concern each, share the connection: :class:`~services.store_journal.JournalStore`
    (journals, notices, retirement), :class:`~services.store_directory.DirectoryStore` (codes, secrets,
    summaries, lobbies per address), :class:`~services.store_directory.AgentTokenStore` (A90),
    :class:`~services.store_cluster.PlacementStore` (placement, shard set, deadlines),
    :class:`~services.store_cluster.PresenceStore` (Watch streams, A17) and
    :class:`~services.store_quick.QuickPlayStore`; here the connection and the notifications' outbox."""

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
        self._outbox: Any = None

    async def close(self) -> None:
        """Closes every connection of the pool (the pool is passed in, so redis-py would keep it open)."""
        self.metrics.pool.untrack(self.redis.connection_pool)
        await self.redis.aclose(close_connection_pool=True)

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

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


__all__ = ["LIVE_ENDED_S", "LIVE_KEPT", "MAX_CONNECTIONS", "NOTICE_AT", "POOL_TIMEOUT_S", "RETRIES", "TOUCH_CHUNK",
           "JournalConflict", "Store", "dumps", "is_outage"]
