"""One Redis pub/sub connection per gateway, fanned out to the Watch streams of this process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from services.store import Store

log = logging.getLogger(__name__)


class Notices:
    """``subscribe(game)`` gives a queue receiving that game's notices ({"version": V}, ...)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pubsub = store.redis.pubsub()
        self.queues: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        # A placeholder subscription keeps the connection in subscribed mode.
        await self.pubsub.subscribe(self.store.key("gateway", "keepalive"))
        self._task = asyncio.get_running_loop().create_task(self._reader())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.pubsub.aclose()

    async def subscribe(self, game_id: str) -> asyncio.Queue[dict[str, Any]]:
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        subs = self.queues.setdefault(game_id, set())
        first = not subs
        subs.add(q)
        if first:
            await self.pubsub.subscribe(self.store.channel(game_id))
        return q

    async def unsubscribe(self, game_id: str, q: asyncio.Queue[dict[str, Any]]) -> None:
        subs = self.queues.get(game_id)
        if subs is None:
            return
        subs.discard(q)
        if not subs:
            del self.queues[game_id]
            with contextlib.suppress(Exception):
                await self.pubsub.unsubscribe(self.store.channel(game_id))

    async def _reader(self) -> None:
        prefix = self.store.key("g", "")
        while True:
            try:
                msg = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if msg is None or msg.get("type") != "message":
                    continue
                channel = str(msg["channel"])
                game_id = channel[len(prefix):].rsplit(":", 1)[0]
                data = json.loads(msg["data"])
                for q in list(self.queues.get(game_id, ())):
                    q.put_nowait(data)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pub/sub reader error")
                await asyncio.sleep(0.2)
