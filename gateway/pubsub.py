"""One Redis pub/sub connection per gateway, fanned out to the Watch streams of this process.

Each stream gets a :class:`Mailbox`: the highest version announced for its game, the latest
presence notices (bounded) and the append times of the versions announced and not yet sent (bounded:
the Watch fan-out latency, ``archipelago_watch_fanout_seconds``).  Subscribing and unsubscribing a
mailbox are synchronous (a stream registers before its first await, so a stream cancelled at any
point leaves nothing behind); one reconciling step makes the Redis subscriptions match the games
that have mailboxes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from typing import Any

from services.store import NOTICE_AT, Store, is_outage

log = logging.getLogger(__name__)

MAX_PRESENCE_NOTICES = 64
MAX_APPENDS = 64  # announced versions whose append time a mailbox keeps until its stream sent them


class Mailbox:
    """What a stream has been told and not yet read."""

    def __init__(self) -> None:
        self.version = 0
        self.presence: deque[tuple[int, bool]] = deque(maxlen=MAX_PRESENCE_NOTICES)
        self.revoked: set[str] = set()  # hashes of agent tokens revoked while the stream is open (A90)
        self.stale = False  # notices may have been missed (the pub/sub connection was lost): read again
        self.event = asyncio.Event()
        #: (version, its append's wall-clock time in epoch ms) of the notices heard and not yet sent
        self.appended: deque[tuple[int, float]] = deque(maxlen=MAX_APPENDS)

    def put(self, notice: dict[str, Any]) -> None:
        if "revoked" in notice:
            if len(self.revoked) < MAX_PRESENCE_NOTICES:  # bounded (a player has at most a few tokens)
                self.revoked.add(str(notice["revoked"]))
        elif "presence" in notice:
            self.presence.append((int(notice["presence"]), bool(notice["connected"])))
        else:
            version = int(notice.get("version", 0))
            self.version = max(self.version, version)
            at = notice.get(NOTICE_AT)
            if isinstance(at, int | float) and not isinstance(at, bool) and version > 0:
                self.appended.append((version, float(at)))
        self.event.set()

    def sent(self, version: int) -> list[float]:
        """The append times (epoch ms) of the notices heard of versions up to ``version`` — its stream
        has now sent what they announced — forgotten here."""
        done = [at for v, at in self.appended if v <= version]
        if done:
            kept = [(v, at) for v, at in self.appended if v > version]
            self.appended.clear()
            self.appended.extend(kept)
        return done

    def nudge(self) -> None:
        self.stale = True
        self.event.set()

    async def wait(self) -> None:
        await self.event.wait()
        self.event.clear()


class Notices:
    """``subscribe_now(game)`` gives a mailbox receiving that game's notices."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pubsub = store.redis.pubsub()
        self.boxes: dict[str, set[Mailbox]] = {}
        self._subscribed: set[str] = set()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._syncing: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        # A placeholder subscription keeps the connection in subscribed mode.
        await self.pubsub.subscribe(self.store.key("gateway", "keepalive"))
        self._task = asyncio.get_running_loop().create_task(self._reader())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for t in list(self._syncing):
            t.cancel()
        await self.pubsub.aclose()

    def subscribe_now(self, game_id: str) -> Mailbox:
        box = Mailbox()
        self.boxes.setdefault(game_id, set()).add(box)
        return box

    def unsubscribe_now(self, game_id: str, box: Mailbox) -> None:
        subs = self.boxes.get(game_id)
        if subs is None:
            return
        subs.discard(box)
        if not subs:
            del self.boxes[game_id]
            task = asyncio.get_running_loop().create_task(self._sync())
            self._syncing.add(task)
            task.add_done_callback(self._syncing.discard)

    async def ready(self, game_id: str) -> None:
        """Return once this gateway is subscribed to the game's channel."""
        if game_id not in self._subscribed:
            await self._sync()

    async def _sync(self) -> None:
        async with self._lock:
            want = set(self.boxes)
            add, drop = want - self._subscribed, self._subscribed - want
            try:
                if add:
                    await self.pubsub.subscribe(*(self.store.channel(g) for g in add))
                    self._subscribed |= add
                if drop:
                    await self.pubsub.unsubscribe(*(self.store.channel(g) for g in drop))
                    self._subscribed -= drop
            except Exception as exc:
                log.warning("pub/sub (un)subscribe failed: %r", exc)
                if add & set(self.boxes):
                    raise

    def subscriptions(self) -> int:
        return len(self._subscribed)

    async def _reader(self) -> None:
        """Fans notices out; after a lost connection (redis-py reconnects and subscribes again) every
        stream reads again, since notices published meanwhile are gone. One log line per outage."""
        prefix = self.store.key("g", "")
        broken = False
        while True:
            try:
                msg = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if broken:
                    broken = False
                    log.warning("pub/sub connection back: every Watch stream reads again")
                    for boxes in list(self.boxes.values()):
                        for box in list(boxes):
                            box.nudge()
                if msg is None or msg.get("type") != "message":
                    continue
                channel = str(msg["channel"])
                game_id = channel[len(prefix):].rsplit(":", 1)[0]
                data = json.loads(msg["data"])
                for box in list(self.boxes.get(game_id, ())):
                    box.put(data)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not broken:
                    if is_outage(exc):
                        log.warning("pub/sub connection lost (%s); reconnecting", type(exc).__name__)
                    else:
                        log.exception("pub/sub reader error")
                broken = True
                await asyncio.sleep(0.2)
