"""The player API: every player flow once, for every door (gRPC, JSON + WebSocket, MCP).

Plain data in, plain data out; failures are the engine's error tree (:mod:`engine.errors`), which
each door renders through the one table of :mod:`gateway.errors`.  A door only parses its
transport's request, calls a method here and renders the answer (see ``shared/design.md``, "one
player API, three doors").

:class:`PlayerAPI` is the one object the doors hold; each concern lives in its own module and the API
hands its flows on by the same names:

- **Authentication** (A3, A90): :mod:`gateway.auth` — a player's secret or an agent token as a caller;
  the secrets and game ids derived from a client's ``request_id`` (retries without stored secrets).
- **Lobby**: :mod:`gateway.lobby` — ``create``, ``join``, ``start_game``, ``list_games``, ``rejoin``.
- **Playing**: ``view``, ``submit``, ``act``, ``set_standing`` (here: each one shard call).
- **Watch** and spectators: :mod:`gateway.watch` — ``watch``, ``spectate``, ``spectator_view``,
  ``live_games``.
- **Presence** (A17): :mod:`gateway.presence` — Watch streams and agents' leases, the heartbeat, the
  grace, and the stream census of ``/metrics``; ``hold_presence``, ``spectators_of``.
- **Agent tokens** (A90): :mod:`gateway.agents` — ``create_agent_token``, ``list_agent_tokens``,
  ``revoke_agent_token``.
- Notifications (:mod:`gateway.notify_api`), profiles, quick play and replays (community.proto) have
  their own modules too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import GAMES
from engine.errors import NotFound
from gateway.agents import AGENT_KEY_TTL_S, MAX_AGENT_KEY, MAX_AGENT_TOKENS, MAX_LABEL, AgentTokens
from gateway.auth import AGENT_PREFIX, MAX_REQUEST_ID, MIN_REQUEST_ID, Caller, Secrets, bearer, hash_secret
from gateway.cache import CACHE_ENTRIES, LRU
from gateway.limits import Limiter, Limits
from gateway.lobby import CODE_ALPHABET, SPEEDS, Lobby, new_code
from gateway.metrics import WATCH_DOORS
from gateway.presence import (
    AGENT_PRESENCE_S,
    DOOR,
    HEARTBEAT_S,
    PRESENCE_GRACE_S,
    PRESENCE_TTL_S,
    Presence,
    PresenceCollector,
    stream_census,
)
from gateway.pubsub import Notices
from gateway.router import ShardRouter
from gateway.watch import Watch
from services.game_actor import Retention
from services.store import Store

# The largest request any door accepts (gRPC's receive limit, HTTP bodies, MCP): the biggest
# legitimate one, an 8-player Archipelago player's orders or standing orders, is a few tens of KiB.
MAX_REQUEST_BYTES = 256 * 1024


@dataclass
class ApiConfig:
    public_url: str = "http://127.0.0.1:8080"
    limits: Limits = field(default_factory=Limits.from_env)
    retention: Retention = field(default_factory=Retention.from_env)
    #: seconds a seat whose last Watch stream ended still counts as connected (A17);
    #: ``ARCHIPELAGO_PRESENCE_GRACE_S``
    presence_grace_s: float = field(default_factory=lambda: float(
        os.environ.get("ARCHIPELAGO_PRESENCE_GRACE_S") or PRESENCE_GRACE_S))
    #: seconds an agent's player counts as connected after the agent's last call (A17, A90);
    #: ``ARCHIPELAGO_AGENT_PRESENCE_S``
    agent_presence_s: float = field(default_factory=lambda: float(
        os.environ.get("ARCHIPELAGO_AGENT_PRESENCE_S") or AGENT_PRESENCE_S))


class PlayerAPI:
    """The player flows over a store (Redis) and a router (to the shards)."""

    def __init__(self, store: Store, router: ShardRouter, config: ApiConfig | None = None) -> None:
        self.store = store
        self.router = router
        self.config = config or ApiConfig()
        self.notices = Notices(store)
        self.limiter = Limiter(self.config.limits)
        self.secrets = Secrets(store, self.limiter)  # who a secret or an agent token is
        self.presence = Presence(store, router, self.config)
        self.closing = False  # (end_streams)
        self._kinds: LRU[str, str] = LRU(CACHE_ENTRIES)  # games never change kind
        from gateway.notify_api import NotifyService
        from gateway.profiles import Profiles
        from gateway.quickplay import QuickPlay
        from gateway.replays import Replays

        self.notify = NotifyService(store, self.config.public_url)
        self.profiles = Profiles(self)  # profiles, ratings, leaderboards, history (community.proto)
        self.quick = QuickPlay(self)  # "Play now"
        self.replays = Replays(self)  # finished games: replays and exports
        self.lobby = Lobby(self)
        self.streams = Watch(self)
        self.agents = AgentTokens(self)
        # the flows of those modules, by the names every door calls
        self.create = self.lobby.create
        self.join = self.lobby.join
        self.start_game = self.lobby.start_game
        self.list_games = self.lobby.list_games
        self.rejoin = self.lobby.rejoin
        self.watch = self.streams.watch
        self.spectate = self.streams.spectate
        self.spectator_view = self.streams.spectator_view
        self.live_games = self.streams.live_games
        self.hold_presence = self.presence.hold
        self.create_agent_token = self.agents.create
        self.list_agent_tokens = self.agents.tokens
        self.revoke_agent_token = self.agents.revoke

    async def start(self) -> None:
        await self.notices.start()
        self.presence.start()
        await self.notify.start()

    def end_streams(self) -> int:
        """A stopping gateway: every open Watch stream ends now with ``server/unavailable`` (its client
        resumes from its last seq, on another gateway), instead of being cut at the server's grace;
        a stream opened after this ends at its first wait. Returns how many were told."""
        self.closing = True
        told = 0
        for boxes in list(self.notices.boxes.values()):
            for box in list(boxes):
                box.nudge()
                told += 1
        return told

    async def stop(self) -> None:
        await self.notify.stop()
        await self.presence.stop()
        await self.notices.stop()
        await self.router.close()
        await self.store.close()

    # ------------------------------------------------------------------ helpers
    async def kind_of(self, game_id: str) -> str:
        kind = self._kinds.get(game_id)
        if kind is None:
            summary = await self.store.summary(game_id)
            if summary is None:
                raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
            kind = str(summary["game"])
            self._kinds.put(game_id, kind)
        return kind

    async def auth(self, secret: str, game_id: str | None = None) -> Caller:
        """The (game, seat) of a player secret or agent token; Unauthenticated / PermissionDenied otherwise
        (:meth:`gateway.auth.Secrets.caller`)."""
        return await self.secrets.caller(secret, game_id)

    # ------------------------------------------------------------------ playing
    async def view(self, secret: str, game_id: str) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).view(game_id, who.seat)
        return result

    async def submit(self, secret: str, game_id: str, *, orders: dict[str, Any], version: int, key: str = "",
                     draft: bool = False, who: Caller | None = None) -> dict[str, Any]:
        """Orders for the round (``who``: the caller, when the door has authenticated it already)."""
        who = who or await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).submit(game_id, who.seat, orders, version,
                                                        key, draft)
        return result

    async def act(self, secret: str, game_id: str, *, action: dict[str, Any], key: str = "",
                  version: int | None = None) -> dict[str, Any]:
        """An immediate action: ``{"chat": {"text": ...}}`` and each game's own kinds; a member named
        after a game kind (``{"arcmage": {...}}``) is a turn or window action of that turn-based game."""
        who = await self.auth(secret, game_id)
        if len(action) == 1:
            (which, body), = action.items()
            if which in GAMES:
                turn: dict[str, Any] = await self.router.game(game_id).action(game_id, who.seat, body, key, version,
                                                                             which)
                return turn
        result: dict[str, Any] = await self.router.game(game_id).act(game_id, who.seat, action, key)
        return result

    async def set_standing(self, secret: str, game_id: str, *, standing: dict[str, Any],
                           key: str = "", who: Caller | None = None) -> dict[str, Any]:
        """Replace the caller's standing orders (A70–A74); ``who`` as for :meth:`submit`."""
        who = who or await self.auth(secret, game_id)
        result: dict[str, Any] = await self.router.game(game_id).set_standing(game_id, who.seat, standing, key)
        return result

    # ------------------------------------------------------------------ notifications (notify.proto)
    async def get_notifications(self, secret: str, game_id: str) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        return await self.notify.get(who.game_id, who.seat, await self.kind_of(who.game_id))

    async def set_notifications(self, secret: str, game_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
        who = await self.auth(secret, game_id)
        summary = await self.store.summary(who.game_id) or {}
        return await self.notify.set(who.game_id, who.seat, await self.kind_of(who.game_id),
                                     str(summary.get("status", "")), request, agent=bool(who.agent))

    def spectators_of(self, game_id: str) -> int:
        """Spectator streams of ``game_id`` open on this gateway."""
        return self.presence.spectators_of(game_id)

    # ------------------------------------------------------------------ for tests and operators
    def open_streams(self) -> int:
        return len(self.presence.streams)

    def mailboxes(self) -> int:
        return sum(len(b) for b in self.notices.boxes.values())


__all__ = ["AGENT_KEY_TTL_S", "AGENT_PREFIX", "CODE_ALPHABET", "DOOR", "HEARTBEAT_S", "MAX_AGENT_KEY",
           "MAX_AGENT_TOKENS", "MAX_LABEL", "MAX_REQUEST_BYTES", "MAX_REQUEST_ID", "MIN_REQUEST_ID", "PRESENCE_GRACE_S",
           "PRESENCE_TTL_S", "SPEEDS", "WATCH_DOORS", "ApiConfig", "Caller", "PlayerAPI", "PresenceCollector",
           "bearer", "hash_secret", "new_code", "stream_census"]
