"""Quick play ("Play now", community.proto) — the player API's part.

(Skeleton: the interface :mod:`gateway.rpc_community` calls; being built.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import Unavailable

if TYPE_CHECKING:
    from gateway.api import PlayerAPI


class QuickPlay:
    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def play(self, *, game: str, speed: str, seats: int, nickname: str, request_id: str,
                   allow_autopilot: bool, options: dict[str, Any] | None, profile_secret: str) -> dict[str, Any]:
        """The fields of QuickPlayResponse (``status``: "lobby" or "running")."""
        raise Unavailable("quick play is not built yet")
