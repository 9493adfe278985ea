"""The Redis client every store part shares (:class:`services.store.Store` composes the parts): the pooled,
metered connection, what counts as an outage, and :class:`RedisKeys`, the base of each part — its
connection, the key prefix, and its Lua scripts registered on first use."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.metrics import PROCESS_REDIS, RedisMetrics


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
            result = await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]  # (redis-py)
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


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class RedisKeys:
    """What every part of the store stands on: ``redis`` (the metered client; Any: redis-py types asyncio
    commands as "Awaitable[T] | T", which mypy cannot await) and the key prefix."""

    redis: Any
    prefix: str

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def channel(self, game_id: str) -> str:
        return self.key("g", game_id, "updates")

    def _script(self, source: str) -> Any:
        """The Lua script ``source`` registered on this store's connection (once; Redis loads it on its first
        call, and again after a restart)."""
        scripts: dict[str, Any] = self.__dict__.setdefault("_scripts", {})
        if source not in scripts:
            scripts[source] = self.redis.register_script(source)
        return scripts[source]
