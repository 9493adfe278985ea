"""What every client of the player API offers, whatever door it uses: the rpcs of the .proto
services as methods taking and returning the .proto messages.  A door's client implements two
calls: one unary rpc, and the Watch stream."""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from google.protobuf.message import Message

from archipelago.v1 import community_pb2 as cp
from archipelago.v1 import game_pb2, lobby_pb2

M = TypeVar("M", bound=Message)


class BaseClient(abc.ABC):
    """One connection to a gateway; ``secret`` (if any) authenticates every call (A3)."""

    door = ""

    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret

    # ------------------------------------------------------------------ what a door implements
    @abc.abstractmethod
    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        """One unary rpc (``service`` "Lobby" or "Game"); raises client.errors.ApiError."""

    @abc.abstractmethod
    def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        """The Watch stream; raises client.errors.ApiError (at the first step for a refused call).
        Close it (``contextlib.aclosing``) when done: while it is open the player counts as connected."""

    def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        """The Spectate stream of a public game (community.proto): the updates every player receives,
        with a spectator's own seqs. Close it when done. (Both doors' clients implement it; a client
        made for a test need not.)"""
        raise NotImplementedError(f"{type(self).__name__} has no Spectate stream")

    @abc.abstractmethod
    def with_secret(self, secret: str) -> BaseClient:
        """Another client sharing this one's connection, acting as another player."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> BaseClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ------------------------------------------------------------------ lobby
    # ------------------------------------------------------------------ community (community.proto)
    async def quick_play(self, game: str, **kw: Any) -> cp.QuickPlayResponse:
        """"Play now": a seat in the fullest quick-play lobby of the game, speed and size, or a new one.
        With a profile secret as this client's secret the seat is linked to that profile. The answer
        holds the new player's secret: act as that player with ``with_secret(answer.secret)``."""
        resp = await self.call("Community", "QuickPlay", cp.QuickPlayRequest(game=game, **kw), cp.QuickPlayResponse)
        return resp

    async def live_games(self, game: str = "") -> cp.ListLiveGamesResponse:
        return await self.call("Community", "ListLiveGames", cp.ListLiveGamesRequest(game=game),
                               cp.ListLiveGamesResponse)

    async def spectator_view(self, game_id: str) -> game_pb2.GetViewResponse:
        return await self.call("Community", "GetSpectatorView", cp.GetSpectatorViewRequest(game_id=game_id),
                               game_pb2.GetViewResponse)

    async def create_profile(self, handle: str, request_id: str = "") -> cp.ProfileSecret:
        return await self.call("Community", "CreateProfile", cp.CreateProfileRequest(handle=handle,
                                                                                    request_id=request_id),
                               cp.ProfileSecret)

    async def my_profile(self) -> cp.Profile:
        return await self.call("Community", "GetMyProfile", cp.GetMyProfileRequest(), cp.Profile)

    async def reset_profile_secret(self, request_id: str = "") -> cp.ProfileSecret:
        return await self.call("Community", "ResetProfileSecret", cp.ResetProfileSecretRequest(request_id=request_id),
                               cp.ProfileSecret)

    async def profile(self, handle: str) -> cp.Profile:
        return await self.call("Community", "GetProfile", cp.GetProfileRequest(handle=handle), cp.Profile)

    async def profile_games(self, handle: str, limit: int = 0, offset: int = 0) -> cp.ListProfileGamesResponse:
        return await self.call("Community", "ListProfileGames",
                               cp.ListProfileGamesRequest(handle=handle, limit=limit, offset=offset),
                               cp.ListProfileGamesResponse)

    async def leaderboard(self, game: str, speed: int = 0, limit: int = 0, offset: int = 0
                          ) -> cp.GetLeaderboardResponse:
        return await self.call("Community", "GetLeaderboard",
                               cp.GetLeaderboardRequest(game=game, speed=speed, limit=limit,  # type: ignore[arg-type]
                                                        offset=offset), cp.GetLeaderboardResponse)

    async def replay(self, game_id: str, frame: int, seat: int = -1) -> cp.ReplayFrame:
        return await self.call("Community", "GetReplay", cp.GetReplayRequest(game_id=game_id, frame=frame, seat=seat),
                               cp.ReplayFrame)

    async def export_game(self, game_id: str) -> cp.ExportGameResponse:
        return await self.call("Community", "ExportGame", cp.ExportGameRequest(game_id=game_id),
                               cp.ExportGameResponse)

    # ------------------------------------------------------------------ lobby
    async def create(self, game: str, **kw: Any) -> lobby_pb2.CreateGameResponse:
        resp = await self.call("Lobby", "CreateGame", lobby_pb2.CreateGameRequest(game=game, **kw),
                               lobby_pb2.CreateGameResponse)
        self.secret = self.secret or resp.secret
        return resp

    async def join(self, code: str, nickname: str, request_id: str = "", **options: Any) -> lobby_pb2.JoinGameResponse:
        """Take a seat; ``options``: the seat's own choices, named after the game (``arcmage=ArcmageSeatOptions``)."""
        resp = await self.call("Lobby", "JoinGame",
                               lobby_pb2.JoinGameRequest(code=code, nickname=nickname, request_id=request_id,
                                                         **options),
                               lobby_pb2.JoinGameResponse)
        self.secret = self.secret or resp.secret
        return resp

    async def start(self, game_id: str, fill: bool = False) -> lobby_pb2.GameSummary:
        return await self.call("Lobby", "StartGame",
                               lobby_pb2.StartGameRequest(game_id=game_id, fill_with_autopilot=fill),
                               lobby_pb2.GameSummary)

    async def list_games(self, game: str = "") -> lobby_pb2.ListGamesResponse:
        return await self.call("Lobby", "ListGames", lobby_pb2.ListGamesRequest(game=game),
                               lobby_pb2.ListGamesResponse)

    async def rejoin(self) -> lobby_pb2.RejoinResponse:
        return await self.call("Lobby", "Rejoin", lobby_pb2.RejoinRequest(), lobby_pb2.RejoinResponse)

    # ------------------------------------------------------------------ game
    async def view(self, game_id: str) -> game_pb2.GetViewResponse:
        return await self.call("Game", "GetView", game_pb2.GetViewRequest(game_id=game_id),
                               game_pb2.GetViewResponse)

    async def submit(self, game_id: str, version: int, key: str = "", draft: bool = False,
                     **orders: Any) -> game_pb2.SubmitOrdersResponse:
        req = game_pb2.SubmitOrdersRequest(game_id=game_id, version=version, idempotency_key=key, draft=draft,
                                           **orders)
        return await self.call("Game", "SubmitOrders", req, game_pb2.SubmitOrdersResponse)

    async def submit_message(self, game_id: str, version: int, orders_field: str, orders: Message,
                             key: str = "", draft: bool = False) -> game_pb2.SubmitOrdersResponse:
        """Submit orders given as a game's orders message (``orders_field`` names the oneof member)."""
        req = game_pb2.SubmitOrdersRequest(game_id=game_id, version=version, idempotency_key=key, draft=draft)
        getattr(req, orders_field).CopyFrom(orders)
        return await self.call("Game", "SubmitOrders", req, game_pb2.SubmitOrdersResponse)

    async def set_standing(self, game_id: str, key: str = "", **standing: Any) -> game_pb2.SetStandingOrdersResponse:
        """Replace the caller's standing orders: ``archipelago=ArchipelagoStandingOrders(...)``."""
        return await self.call("Game", "SetStandingOrders",
                               game_pb2.SetStandingOrdersRequest(game_id=game_id, idempotency_key=key, **standing),
                               game_pb2.SetStandingOrdersResponse)

    async def act(self, game_id: str, key: str = "", **action: Any) -> game_pb2.ActResponse:
        return await self.call("Game", "Act", game_pb2.ActRequest(game_id=game_id, idempotency_key=key, **action),
                               game_pb2.ActResponse)

    async def chat(self, game_id: str, text: str, to: int | None = None, key: str = "") -> game_pb2.ActResponse:
        return await self.act(game_id, key=key, chat=game_pb2.ChatAction(text=text, to=to))

    async def create_agent_token(self, game_id: str, label: str = "") -> game_pb2.AgentToken:
        """A personal AI agent token for the caller's seat (A90); its ``token`` is shown only here."""
        return await self.call("Game", "CreateAgentToken",
                               game_pb2.CreateAgentTokenRequest(game_id=game_id, label=label), game_pb2.AgentToken)

    async def list_agent_tokens(self, game_id: str) -> game_pb2.ListAgentTokensResponse:
        return await self.call("Game", "ListAgentTokens", game_pb2.ListAgentTokensRequest(game_id=game_id),
                               game_pb2.ListAgentTokensResponse)

    async def revoke_agent_token(self, game_id: str, token_id: str) -> game_pb2.RevokeAgentTokenResponse:
        return await self.call("Game", "RevokeAgentToken",
                               game_pb2.RevokeAgentTokenRequest(game_id=game_id, token_id=token_id),
                               game_pb2.RevokeAgentTokenResponse)
