"""Replays and exports of finished games (community.proto) — the player API's part.

(Skeleton: the interface :mod:`gateway.rpc_community` calls; being built.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import Unavailable

if TYPE_CHECKING:
    from gateway.api import PlayerAPI


class Replays:
    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def frame(self, secret: str, game_id: str, frame: int, seat: int) -> dict[str, Any]:
        """The fields of ReplayFrame, ``view`` a view dict as the player API's ``view`` answers."""
        raise Unavailable("replays are not built yet")

    async def export(self, secret: str, game_id: str) -> dict[str, Any]:
        """{"format", "records": [JSON text, …], "state_hash"}."""
        raise Unavailable("exports are not built yet")
