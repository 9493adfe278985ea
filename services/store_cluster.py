"""Where games run, in Redis: each game's shard (placement), the cluster's shard set and heartbeats, each
shard's deadline index, and the presence of Watch streams (A17). Parts of :class:`services.store.Store`."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from services.store_redis import RedisKeys

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


class PlacementStore(RedisKeys):
    """Placement of games on shards, the shard set, heartbeats and each shard's deadline index."""

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
        return str(await self._script(_MOVE)(keys=keys, args=[old, new, game_id]))

    async def place(self, game_id: str, shard: str) -> str:
        """Record ``game -> shard`` unless already placed (then return the recorded shard)."""
        return (await self.claim_placement(game_id, shard))[0]

    async def claim_placement(self, game_id: str, shard: str) -> tuple[str, bool]:
        """:meth:`place`, and whether this call recorded the placement (False: it was there already)."""
        key = self.key("place", game_id)
        value = await self.redis.set(key, shard, nx=True, get=True)  # the recorded shard, None if new
        return (shard, True) if value is None else (str(value), False)

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


class PresenceStore(RedisKeys):
    """Open Watch streams per game and seat (A17): touched, dropped, lingering, who is connected."""

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
            await self._script(_TOUCH)(keys=keys, args=args)

    async def drop_stream(self, game_id: str, seat: int, stream: str) -> None:
        await self.redis.zrem(self.key("presence", game_id), f"{seat}:{stream}")

    async def linger_stream(self, game_id: str, seat: int, stream: str, grace_s: float) -> bool:
        """A Watch stream that ended: its seat stays connected ``grace_s`` more seconds (A17), unless
        the stream's entry had already expired (False then)."""
        ms = int(grace_s * 1000)
        expiry = int(time.time() * 1000) + ms
        return bool(await self._script(_LINGER)(keys=[self.key("presence", game_id)],
                                                args=[f"{seat}:{stream}", expiry, ms]))

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
