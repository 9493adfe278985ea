"""Routing a game's calls to the GameShard that hosts it (Ray actor calls)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from gateway.errors import RemoteError
from services.placement import rendezvous
from services.store import Store

log = logging.getLogger(__name__)

RETRY_S = 60.0  # how long a call waits for a restarting shard


class ShardRouter:
    """Finds a game's shard (recorded placement, else rendezvous hashing) and calls it.

    Calls are retried while a shard restarts; that is safe because every shard mutation is
    idempotent (creation by game id, submissions by idempotency key)."""

    def __init__(self, store: Store, shard_names: list[str], namespace: str) -> None:
        self.store = store
        self.names = list(shard_names)
        self.namespace = namespace
        self._handles: dict[str, Any] = {}
        self._placement: dict[str, str] = {}

    def handle(self, name: str) -> Any:
        h = self._handles.get(name)
        if h is None:
            import ray

            h = ray.get_actor(name, namespace=self.namespace)
            self._handles[name] = h
        return h

    async def place_new(self, game_id: str) -> str:
        shard = await self.store.place(game_id, rendezvous(game_id, self.names))
        self._placement[game_id] = shard
        return shard

    async def shard_of(self, game_id: str) -> str:
        shard = self._placement.get(game_id)
        if shard is None:
            recorded = await self.store.placement(game_id)
            if recorded is None:
                raise RemoteError({"type": "NotFound", "code": "lookup/not_found", "field": "game_id",
                                   "message": f"game_id: no game {game_id}"})
            shard = self._placement[game_id] = recorded
        return shard

    async def call(self, game_id: str, method: str, *args: Any) -> Any:
        shard = await self.shard_of(game_id)
        return await self.call_shard(shard, method, *args)

    async def call_shard(self, shard: str, method: str, *args: Any) -> Any:
        from ray.exceptions import RayActorError

        deadline = time.monotonic() + RETRY_S
        delay = 0.05
        while True:
            try:
                reply = await self.handle(shard).call.remote(method, *args)
                break
            except (RayActorError, ValueError) as exc:  # ValueError: named actor not yet re-registered
                self._handles.pop(shard, None)
                if time.monotonic() > deadline:
                    raise RemoteError({"type": "Unavailable", "code": "shard/unavailable",
                                       "message": f"shard {shard} unavailable: {exc}"}) from exc
                log.warning("shard %s unavailable (%s); retrying", shard, type(exc).__name__)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        if "error" in reply:
            raise RemoteError(reply["error"])
        return reply["ok"]

    async def ping_all(self) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(self.handle(n).ping.remote() for n in self.names)))
