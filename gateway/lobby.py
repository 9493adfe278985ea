"""The lobby flows of the player API: create a game, join it by its code, start it, list the open ones,
and find a secret's game again (rejoin).

Creation and joining carry a client-chosen ``request_id`` from which the game id and the secret are
*derived* (:meth:`gateway.auth.Secrets.derive`), so a retried create or join — after a lost reply —
returns the same game, seat and secret without the secret being stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine import speed_deadlines
from engine.base import DEADLINES_KEY, TURN_DEADLINE
from engine.errors import InvalidOrder, NotFound
from gateway.auth import check_request_id, hash_secret
from gateway.limits import PEER
from services.game_actor import check_creation, fingerprint

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # A2: no 0/O/1/I
SPEEDS = {"fast": 60.0, "slow": 8 * 3600.0}


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))


class Lobby:
    """Games before they start, for a player API."""

    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def create(self, *, game: str, seats: int, nickname: str, public: bool = False, speed: str = "fast",
                     deadline_seconds: float = 0.0, options: Mapping[str, Any] | None = None,
                     request_id: str = "", profile_secret: str = "",
                     extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Create a game; the caller is its host (seat 0). Returns game_id, code, invite_link, secret, seat.
        ``profile_secret`` (a ``prf_…`` bearer): the host plays under that profile (community.proto);
        ``extra``: more of the shard's create spec (a quick-play lobby's ``quick``)."""
        api = self.api
        check_request_id(request_id)
        api.limiter.lobby_call()
        profile = await api.profiles.lookup(profile_secret)
        config = {**(options or {}), "players": seats or 2}
        table = speed_deadlines(game, speed or "fast")
        if table and not deadline_seconds:  # a game with its own speeds (Arcmage, M25): its turn length
            deadline_seconds = table[TURN_DEADLINE]
            config[DEADLINES_KEY] = {**table, **dict(config.get(DEADLINES_KEY) or {})}
        deadline = deadline_seconds or SPEEDS.get(speed or "fast", 0.0)
        if not deadline:
            raise InvalidOrder(f"unknown speed {speed[:20]!r}: fast or slow", field="speed", rule="A1")
        check_creation(game, config, nickname, deadline)  # before any side effect
        request = fingerprint({"game": game, "config": config, "nickname": nickname, "public": public,
                               "deadline": deadline})
        if request_id:
            game_id = (await api.secrets.derive("game", request_id))[:16]
            secret = (await api.secrets.derive(f"secret\0{game_id}", request_id))[:40]
            summary = await api.store.summary(game_id)
        else:
            game_id, secret, summary = secrets.token_hex(8), secrets.token_urlsafe(24), None
        code = str(summary["code"]) if summary is not None else await self._new_code(game_id)  # (a retry: it exists)
        await api.router.place_new(game_id)
        spec: dict[str, Any] = {"kind": game, "config": config, "nickname": nickname,
                                "secret_hash": hash_secret(secret), "public": public, "deadline_s": deadline,
                                "code": code, "request": request, "speed": speed or "fast", **(extra or {})}
        if profile:
            spec["profile"] = profile
        made = await api.router.game(game_id).create_game(game_id, spec)
        if summary is None and api.limiter.open_lobby_cap():  # (a cap means a known address)
            await api.store.add_lobby(PEER.get(), game_id, api.config.retention.lobby_ttl_s)
        return {"game_id": game_id, "code": made["code"], "secret": secret, "seat": 0,
                "invite_link": f"{api.config.public_url}/join/{made['code']}"}

    async def _new_code(self, game_id: str) -> str:
        """A new game's code, claimed for ``game_id``, once the caller's open lobbies are under their cap."""
        api = self.api
        cap = api.limiter.open_lobby_cap()
        if cap and len(await api.store.open_lobbies(PEER.get())) >= cap:
            raise api.limiter.too_many_lobbies(api.config.retention.lobby_ttl_s)
        code = new_code()
        while not await api.store.claim_code(code, game_id):
            code = new_code()
        return code

    async def join(self, *, code: str, nickname: str, request_id: str = "",
                   options: dict[str, Any] | None = None, profile_secret: str = "") -> dict[str, Any]:
        """Take a free seat of a game in its lobby. Returns game_id, seat, secret, game. ``options``:
        ``{kind: the seat's own choices}`` (Arcmage: its deck), checked by the game; ``profile_secret``
        as for :meth:`create`."""
        api = self.api
        check_request_id(request_id)
        api.limiter.lobby_call()
        profile = await api.profiles.lookup(profile_secret)
        code = code.strip().upper()
        game_id = await api.store.game_of_code(code) if len(code) == 6 else None
        if game_id is None:
            raise NotFound(f"no game with code {code[:12]!r}", field="code", rule="A2")
        if request_id:
            secret = (await api.secrets.derive(f"join\0{game_id}", request_id))[:40]
        else:
            secret = secrets.token_urlsafe(24)
        joined = await api.router.game(game_id).join(game_id, nickname, hash_secret(secret), options, profile)
        return {"game_id": game_id, "seat": joined["seat"], "secret": secret, "game": joined["game"]}

    async def start_game(self, secret: str, game_id: str, fill_with_autopilot: bool = False) -> dict[str, Any]:
        """Start the game (host only, A4). Returns the game's summary."""
        who = await self.api.auth(secret, game_id)
        result: dict[str, Any] = await self.api.router.game(game_id).start_game(game_id, who.seat,
                                                                            fill_with_autopilot)
        return result

    async def list_games(self, game: str = "") -> list[dict[str, Any]]:
        """Public games open for joining, newest first."""
        self.api.limiter.lobby_call()
        return [s for s in await self.api.store.open_games() if not game or s["game"] == game]

    async def rejoin(self, secret: str) -> dict[str, Any]:
        """Who a secret belongs to (A3)."""
        who = await self.api.auth(secret)
        result: dict[str, Any] = await self.api.router.game(who.game_id).whoami(who.game_id, who.seat)
        return result


__all__ = ["CODE_ALPHABET", "SPEEDS", "Lobby", "new_code"]
