"""A game's journal in Redis (``g:{game}:journal``, ``g:{game}:archive``), its notices (channel
``g:{game}:updates``) and its retirement: one part of :class:`services.store.Store`."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
import zlib
from collections.abc import Iterable
from typing import Any

from redis.exceptions import NoScriptError

from services.store_redis import RedisKeys, dumps

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


class JournalStore(RedisKeys):
    """Journal appends (fenced by the length the writer expects), reads, notices, and a finished game's
    retirement."""

    _appends: _Appends

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

    async def publish(self, game_id: str, message: dict[str, Any]) -> None:
        await self.redis.publish(self.channel(game_id), dumps(message))
