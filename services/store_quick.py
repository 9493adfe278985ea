"""Quick play in Redis (gateway.quickplay): each bucket's open lobbies, its lock and the queue of callers
waiting for it, and where a QuickPlay request sat down. A part of :class:`services.store.Store`."""

from __future__ import annotations

import json
from typing import Any

from services.store_redis import RedisKeys, dumps

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


class QuickPlayStore(RedisKeys):
    """The quick-play buckets: lobbies, lock, queue, wake-ups, request records."""

    def _quick_keys(self, bucket: str) -> list[str]:
        return [self.key("quick", bucket, part) for part in ("lock", "queue", "alive", "tickets")]

    async def quick_enter(self, bucket: str, token: str, *, lock_ms: int, alive_ms: int) -> bool:
        """Take the bucket's lock for ``lock_ms`` if it is free and ``token`` is first in the bucket's
        queue (True); else queue ``token`` (in arrival order, kept alive for ``alive_ms``; False)."""
        got = await self._script(_QUICK_ENTER)(keys=self._quick_keys(bucket),
                                                      args=[token, lock_ms, alive_ms, 3_600_000])
        return bool(got)

    async def quick_exit(self, bucket: str, token: str) -> None:
        """``token`` leaves the bucket's lock (if it holds it) and queue; the next in the queue is woken."""
        await self._script(_QUICK_EXIT)(keys=self._quick_keys(bucket)[:3],
                                               args=[token, self.key("quick", "wake", ""), 60_000])

    async def quick_hold(self, bucket: str, token: str, lock_ms: int) -> bool:
        """The holder ``token`` keeps the bucket's lock ``lock_ms`` from now; False if it lost it."""
        return bool(await self._script(_QUICK_HOLD)(keys=self._quick_keys(bucket)[:1],
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
