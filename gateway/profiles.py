"""Profiles, ratings, leaderboards and a profile's history (community.proto) — the player API's part.

(Skeleton: the interface :mod:`gateway.rpc_community` calls; being built.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import Unavailable

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

PROFILE_PREFIX = "prf_"  # profile secrets look like "prf_…"; player secrets and agent tokens never start so


class Profiles:
    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def lookup(self, secret: str) -> dict[str, str] | None:
        """``{"id", "handle"}`` of the profile whose secret ``secret`` is; None when ``secret`` is not a
        profile secret (empty, or a player secret); Unauthenticated for an unknown or reset one."""
        if not secret.startswith(PROFILE_PREFIX):
            return None
        raise Unavailable("profiles are not built yet")

    async def create(self, handle: str, request_id: str = "") -> dict[str, Any]:
        """{"profile": profile dict, "secret", "link"}."""
        raise Unavailable("profiles are not built yet")

    async def mine(self, secret: str) -> dict[str, Any]:
        raise Unavailable("profiles are not built yet")

    async def reset(self, secret: str, request_id: str = "") -> dict[str, Any]:
        raise Unavailable("profiles are not built yet")

    async def get(self, handle: str) -> dict[str, Any]:
        raise Unavailable("profiles are not built yet")

    async def games(self, handle: str, limit: int = 0, offset: int = 0) -> dict[str, Any]:
        raise Unavailable("profiles are not built yet")

    async def leaderboard(self, game: str, speed: str, limit: int = 0, offset: int = 0) -> dict[str, Any]:
        raise Unavailable("profiles are not built yet")
