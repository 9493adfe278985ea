"""What every client of the player API offers, whatever door it uses: the rpcs of the .proto
services as methods taking and returning the .proto messages.  A door's client implements two
calls: one unary rpc, and the Watch stream."""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from google.protobuf.message import Message

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
