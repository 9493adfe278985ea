"""The notifications' Redis side: each player's settings, the durable outbox and the retry schedule.

Keys (under the store's prefix):

===================================  =================================================================
``notify:{game}:{seat}``             hash: ``cfg`` the player's settings (JSON: language, each channel's
                                     kinds and target — secret data), ``st:{channel}`` that channel's
                                     delivery state (JSON), ``k:{kind}`` "1" for each kind an active
                                     channel wants (what the enqueue script reads); leaves with the game
``notify:seen:{game}``               hash ``{seat}:{kind}:{key}`` -> 1: what was queued once (dedup)
``notify:mark:{game}``               the game version whose notices were queued last (a reloaded game
                                     queues again what came after it: at least once)
``notify:outbox``                    stream of entries ``e`` = JSON notice (consumer group ``senders``);
                                     an entry leaves (XACK + XDEL) when every channel is done with it
``notify:retry``                     sorted set job JSON -> when it is due (Unix ms): a delivery to one
                                     channel waiting for its next attempt (claimed by moving its score)
``notify:confirm:{sha256}``          JSON {game, seat, address} of an email confirmation link (24 h)
``notify:failing``                   sorted set "{game}:{seat}:{channel}" -> last failure (Unix ms): the
                                     operators' list of failing channels (the newest 1,000)
===================================  =================================================================
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from services.notify.kinds import CHANNELS, DEFAULT_KINDS, KINDS, Notice

GROUP = "senders"
SEEN_TTL_S = 8 * 24 * 3600  # the longest a step lasts (7 days), and a day
CONFIRM_TTL_S = 24 * 3600
FAILING_KEPT = 1000

# Queue the notices of one journaled entry (or a deadline warning) once each: for each notice whose
# player wants its kind (``k:{kind}`` in its settings) and that was not queued before (HSETNX on the
# game's dedup hash), an outbox entry — unless the outbox is full (then counted as dropped). The mark
# says up to which version this game's notices are queued.
# KEYS: outbox, seen, mark, then one settings key per notice. ARGV: version, max queue, seen ttl (s),
# then per notice: kind, dedup field, entry JSON. Returns {dropped, the 1-based indexes of the queued notices…}.
_ENQUEUE = """
local outbox, seen, mark = KEYS[1], KEYS[2], KEYS[3]
local version, maxq, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if version > 0 and version > tonumber(redis.call('GET', mark) or '0') then
  redis.call('SET', mark, version, 'EX', ttl)
end
local queued, dropped, a = {}, 0, 4
for i = 4, #KEYS do
  local kind, field, entry = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  a = a + 3
  if redis.call('HEXISTS', KEYS[i], 'k:' .. kind) == 1 and redis.call('HSETNX', seen, field, 1) == 1 then
    if redis.call('XLEN', outbox) >= maxq then
      dropped = dropped + 1
    else
      redis.call('XADD', outbox, '*', 'e', entry)
      queued[#queued + 1] = i - 3
    end
  end
end
if #KEYS > 3 then redis.call('EXPIRE', seen, ttl) end
table.insert(queued, 1, dropped)
return queued
"""

# Claim the retry jobs due now: each one's score moves to now + lease (a gateway that dies holding it
# leaves it due again after the lease). ARGV: now, lease ms, count.
_CLAIM_RETRIES = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), m) end
return due
"""


def now_ms() -> int:
    return int(time.time() * 1000)


def wanted_kinds(cfg: dict[str, Any], status: dict[str, dict[str, Any]]) -> set[str]:
    """The kinds some active channel of these settings wants (``k:{kind}`` flags)."""
    kinds: set[str] = set()
    for channel in CHANNELS:
        ch = cfg.get(channel)
        if not ch or status.get(channel, {}).get("disabled"):
            continue
        if channel == "email" and not ch.get("confirmed"):
            continue
        if channel == "web_push" and not ch.get("devices"):
            continue
        kinds.update(ch.get("kinds") or DEFAULT_KINDS[channel])
    return kinds


class Outbox:
    """The Redis side of notifications, on a :class:`services.store.Store`'s connection pool."""

    def __init__(self, store: Any, *, max_queue: int = 200_000) -> None:
        self.store = store
        self.redis: Any = store.redis
        self.max_queue = max_queue
        self.stream = store.key("notify", "outbox")
        self.retry_key = store.key("notify", "retry")
        self.failing_key = store.key("notify", "failing")
        self._enqueue: Any = self.redis.register_script(_ENQUEUE)
        self._claim: Any = self.redis.register_script(_CLAIM_RETRIES)
        self._group_ready = False

    def settings_key(self, game_id: str, seat: int) -> str:
        return str(self.store.key("notify", game_id, str(seat)))

    # ------------------------------------------------------------------ the game actor's side
    async def enqueue(self, game_id: str, game: str, notices: Sequence[Notice], *, version: int,
                      at_ms: int) -> tuple[list[int], int]:
        """Queue ``notices`` of ``game_id`` (dedup, settings, bound in one script); returns the indexes (in
        ``notices``) of those queued, and how many were dropped (the outbox full)."""
        keys = [self.stream, self.store.key("notify", "seen", game_id), self.store.key("notify", "mark", game_id)]
        args: list[Any] = [version, self.max_queue, SEEN_TTL_S]
        for n in notices:
            keys.append(self.settings_key(game_id, n.seat))
            entry = {"game_id": game_id, "game": game, "seat": n.seat, "kind": n.kind, "round": n.round,
                     "key": n.key, "deadline_ms": n.deadline_ms, "who": n.who, "at": at_ms}
            args += [n.kind, n.dedup(), json.dumps(entry, separators=(",", ":"), ensure_ascii=False)]
        dropped, *queued = await self._enqueue(keys=keys, args=args)
        return [int(i) - 1 for i in queued], int(dropped)

    async def mark(self, game_id: str) -> int:
        raw = await self.redis.get(self.store.key("notify", "mark", game_id))
        return int(raw) if raw else 0

    # ------------------------------------------------------------------ settings
    async def settings(self, game_id: str, seat: int) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The player's settings and each channel's delivery state."""
        raw = await self.redis.hgetall(self.settings_key(game_id, seat))
        cfg = json.loads(raw["cfg"]) if "cfg" in raw else {}
        status = {k[3:]: json.loads(v) for k, v in raw.items() if k.startswith("st:")}
        return cfg, status

    async def put_settings(self, game_id: str, seat: int, cfg: dict[str, Any] | None,
                           status: dict[str, dict[str, Any]]) -> None:
        """Replace the settings (``cfg``; None: unchanged) and the states of the channels named in
        ``status``; the kind flags follow both."""
        key = self.settings_key(game_id, seat)
        old_cfg, full = await self.settings(game_id, seat)
        full.update(status)
        cfg_now = old_cfg if cfg is None else cfg
        pipe = self.redis.pipeline(transaction=True)
        if cfg is not None:
            pipe.hset(key, "cfg", json.dumps(cfg, separators=(",", ":")))
        for channel, st in status.items():
            pipe.hset(key, f"st:{channel}", json.dumps(st, separators=(",", ":")))
        for kind in KINDS:
            pipe.hdel(key, f"k:{kind}")
        for kind in wanted_kinds(cfg_now, full):
            pipe.hset(key, f"k:{kind}", 1)
        await pipe.execute()

    async def set_status(self, game_id: str, seat: int, channel: str, st: dict[str, Any]) -> None:
        """A channel's delivery state changed (a success, a failure, disabled): the kind flags follow."""
        if not await self.redis.hexists(self.settings_key(game_id, seat), "cfg"):
            return  # the settings were removed meanwhile (or the game left Redis)
        await self.put_settings(game_id, seat, None, {channel: st})
        member = f"{game_id}:{seat}:{channel}"
        if st.get("disabled") or st.get("failures"):
            pipe = self.redis.pipeline(transaction=False)
            pipe.zadd(self.failing_key, {member: int(st.get("last_failure") or now_ms())})
            pipe.zremrangebyrank(self.failing_key, 0, -FAILING_KEPT - 1)
            await pipe.execute()
        else:
            await self.redis.zrem(self.failing_key, member)

    async def failing(self, limit: int = 100) -> list[tuple[str, int, str, dict[str, Any]]]:
        """(game, seat, channel, state) of the channels that failed lately, newest first."""
        members = await self.redis.zrevrange(self.failing_key, 0, limit - 1)
        out = []
        for m in members:
            game_id, seat, channel = str(m).rsplit(":", 2)
            _, status = await self.settings(game_id, int(seat))
            st = status.get(channel)
            if st and (st.get("disabled") or st.get("failures")):
                out.append((game_id, int(seat), channel, st))
            else:
                await self.redis.zrem(self.failing_key, m)
        return out

    # ------------------------------------------------------------------ email confirmation
    async def put_confirmation(self, token: str, game_id: str, seat: int, address: str) -> None:
        key = self.store.key("notify", "confirm", hashlib.sha256(token.encode()).hexdigest())
        await self.redis.set(key, json.dumps({"game": game_id, "seat": seat, "address": address}), ex=CONFIRM_TTL_S)

    async def confirmation(self, token: str) -> dict[str, Any] | None:
        """The record of a confirmation link (kept its 24 h: a second click confirms again, idempotent)."""
        key = self.store.key("notify", "confirm", hashlib.sha256(token.encode()).hexdigest())
        raw = await self.redis.get(key)
        return None if raw is None else dict(json.loads(raw))

    # ------------------------------------------------------------------ the senders' side
    async def ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            await self.redis.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except Exception as exc:  # BUSYGROUP: made already
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    async def read(self, consumer: str, count: int, block_ms: int) -> list[tuple[str, dict[str, Any]]]:
        """New entries for this consumer (blocks up to ``block_ms``)."""
        await self.ensure_group()
        got = await self.redis.xreadgroup(GROUP, consumer, {self.stream: ">"}, count=count, block=block_ms)
        return [(str(i), json.loads(f["e"])) for _, rows in got or [] for i, f in rows if f and "e" in f]

    async def claim_stale(self, consumer: str, idle_ms: int, count: int) -> list[tuple[str, dict[str, Any]]]:
        """Entries another consumer read and never finished (it died): taken over after ``idle_ms``."""
        await self.ensure_group()
        res = await self.redis.xautoclaim(self.stream, GROUP, consumer, idle_ms, "0-0", count=count)
        rows = res[1] if len(res) > 1 else []
        deleted = res[2] if len(res) > 2 else []
        if deleted:  # (an entry deleted while pending: nothing to deliver)
            await self.redis.xack(self.stream, GROUP, *deleted)
        return [(str(i), json.loads(f["e"])) for i, f in rows if f and "e" in f]

    async def keep(self, consumer: str, entry_ids: Iterable[str]) -> None:
        """Entries ``consumer`` holds and is still working on: their idle time starts again, so another
        consumer's take-over (:meth:`claim_stale`) leaves them alone while their gateway lives."""
        ids = list(entry_ids)
        if ids:
            await self.redis.xclaim(self.stream, GROUP, consumer, 0, ids, justid=True)

    async def done(self, entry_ids: Iterable[str]) -> None:
        ids = list(entry_ids)
        if not ids:
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.xack(self.stream, GROUP, *ids)
        pipe.xdel(self.stream, *ids)
        await pipe.execute()

    async def schedule_retry(self, job: dict[str, Any], due_ms: int) -> None:
        await self.redis.zadd(self.retry_key, {json.dumps(job, separators=(",", ":"), sort_keys=True): due_ms})

    async def claim_retries(self, lease_ms: int, count: int) -> list[tuple[str, dict[str, Any]]]:
        rows = await self._claim(keys=[self.retry_key], args=[now_ms(), lease_ms, count])
        return [(str(m), json.loads(m)) for m in rows]

    async def retry_done(self, member: str) -> None:
        await self.redis.zrem(self.retry_key, member)

    async def depth(self) -> tuple[int, int]:
        """(outbox entries, retry jobs) now."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.xlen(self.stream)
        pipe.zcard(self.retry_key)
        a, b = await pipe.execute()
        return int(a), int(b)

    async def prune_consumers(self, idle_ms: int) -> int:
        """Forget consumers (gateways gone) idle longer than ``idle_ms`` with nothing pending."""
        await self.ensure_group()
        gone = 0
        for c in await self.redis.xinfo_consumers(self.stream, GROUP):
            if int(c.get("pending", 0)) == 0 and int(c.get("idle", 0)) > idle_ms:
                await self.redis.xgroup_delconsumer(self.stream, GROUP, c["name"])
                gone += 1
        return gone
