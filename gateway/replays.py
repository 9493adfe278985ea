"""Replays and exports of finished games (community.proto ``GetReplay``, ``ExportGame``) — the player
API's part.

Who may ask: anyone, for a public game; for a private one, a player of it (its secret, or one of its
agent tokens, as ``authorization: Bearer …``), anyone else is PermissionDenied (an unknown or missing
secret too). A game still running is NotOver (FAILED_PRECONDITION ``game/not_over``): while it runs
its seed and every hidden fact stay secret (A9). Both calls count as community reads
(:meth:`gateway.limits.Limiter.read_call`). The replay itself is the shard's
(:meth:`services.shard.ShardCore.replay_frame`, :mod:`services.replay`): the game's journal replayed
by the engine once, kept among the last few asked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import InvalidOrder, NotFound, PermissionDenied, Unauthenticated
from services.replay import not_over

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

#: a game id's length at most (as the spectators' calls check it)
MAX_GAME_ID = 64
#: the largest frame number a request may name (a protobuf int32)
MAX_FRAME = 2**31 - 1


class Replays:
    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def frame(self, secret: str, game_id: str, frame: int, seat: int) -> dict[str, Any]:
        """The fields of ReplayFrame, ``view`` a view dict as the player API's ``view`` answers: frame
        ``frame`` (0 … the game's last) seen by ``seat`` (below 0: the whole game). InvalidOrder naming
        ``frame`` or ``seat`` out of range."""
        if not 0 <= frame <= MAX_FRAME:
            raise InvalidOrder("a frame is 0 (the game as it started) … the game's last frame", field="frame")
        await self._finished(secret, game_id)
        result: dict[str, Any] = await self.api.router.game(game_id).replay_frame(game_id, frame, max(seat, -1))
        return result

    async def export(self, secret: str, game_id: str) -> dict[str, Any]:
        """{"format", "records": [JSON text, …], "state_hash"} (docs/replay-format.md)."""
        await self._finished(secret, game_id)
        result: dict[str, Any] = await self.api.router.game(game_id).export_game(game_id)
        return result

    async def _finished(self, secret: str, game_id: str) -> None:
        """A read of a finished game ``secret`` may see: counted, then NotFound (unknown game),
        PermissionDenied (a private game, not its player's secret), NotOver (still running), in that
        order — nothing about a private game is told to anyone else."""
        self.api.limiter.read_call()
        summary = await self.api.store.summary(game_id) if 0 < len(game_id) <= MAX_GAME_ID else None
        if summary is None:
            raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
        if not summary.get("public"):
            await self._player(secret, game_id)
        if summary.get("status") != "over":
            raise not_over()

    async def _player(self, secret: str, game_id: str) -> None:
        """PermissionDenied unless ``secret`` is a player's (or its agent's) of ``game_id``."""
        refusal = "a private game's replay and export are for its players: send one's secret as the bearer"
        if not secret:
            raise PermissionDenied(refusal, field="authorization", rule="A3")
        try:
            await self.api.auth(secret, game_id)
        except Unauthenticated:
            raise PermissionDenied(refusal, field="authorization", rule="A3") from None
