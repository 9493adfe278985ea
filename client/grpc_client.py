"""A small async client of the gRPC API, used by the CLI, the bots, tests and benchmarks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc


class Client:
    """One channel to a gateway; ``secret`` (if any) is sent with every call."""

    def __init__(self, address: str, secret: str | None = None,
                 channel: grpc.aio.Channel | None = None) -> None:
        self.address = address
        self.channel = channel or grpc.aio.insecure_channel(address)
        self.secret = secret
        self.lobby = lobby_pb2_grpc.LobbyStub(self.channel)
        self.game = game_pb2_grpc.GameStub(self.channel)

    def with_secret(self, secret: str) -> Client:
        """Another client sharing this channel, acting as another player."""
        return Client(self.address, secret, self.channel)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.secret}"),) if self.secret else ()

    async def close(self) -> None:
        await self.channel.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # lobby
    async def create(self, game: str, **kw: Any) -> lobby_pb2.CreateGameResponse:
        resp: lobby_pb2.CreateGameResponse = await self.lobby.CreateGame(
            lobby_pb2.CreateGameRequest(game=game, **kw))
        self.secret = self.secret or resp.secret
        return resp

    async def join(self, code: str, nickname: str) -> lobby_pb2.JoinGameResponse:
        resp: lobby_pb2.JoinGameResponse = await self.lobby.JoinGame(
            lobby_pb2.JoinGameRequest(code=code, nickname=nickname))
        self.secret = self.secret or resp.secret
        return resp

    async def start(self, game_id: str, fill: bool = False) -> lobby_pb2.GameSummary:
        r: lobby_pb2.GameSummary = await self.lobby.StartGame(
            lobby_pb2.StartGameRequest(game_id=game_id, fill_with_autopilot=fill), metadata=self.metadata)
        return r

    async def list_games(self, game: str = "") -> lobby_pb2.ListGamesResponse:
        r: lobby_pb2.ListGamesResponse = await self.lobby.ListGames(lobby_pb2.ListGamesRequest(game=game))
        return r

    async def rejoin(self) -> lobby_pb2.RejoinResponse:
        r: lobby_pb2.RejoinResponse = await self.lobby.Rejoin(lobby_pb2.RejoinRequest(),
                                                               metadata=self.metadata)
        return r

    # game
    async def view(self, game_id: str) -> game_pb2.GetViewResponse:
        r: game_pb2.GetViewResponse = await self.game.GetView(game_pb2.GetViewRequest(game_id=game_id),
                                                              metadata=self.metadata)
        return r

    async def submit(self, game_id: str, version: int, key: str = "", draft: bool = False,
                     **orders: Any) -> game_pb2.SubmitOrdersResponse:
        r: game_pb2.SubmitOrdersResponse = await self.game.SubmitOrders(
            game_pb2.SubmitOrdersRequest(game_id=game_id, version=version, idempotency_key=key, draft=draft,
                                         **orders), metadata=self.metadata)
        return r

    async def submit_message(self, game_id: str, version: int, orders_field: str, orders: Message,
                             key: str = "", draft: bool = False) -> game_pb2.SubmitOrdersResponse:
        """Submit orders given as a game's orders message (``orders_field`` names the oneof member)."""
        req = game_pb2.SubmitOrdersRequest(game_id=game_id, version=version, idempotency_key=key, draft=draft)
        getattr(req, orders_field).CopyFrom(orders)
        r: game_pb2.SubmitOrdersResponse = await self.game.SubmitOrders(req, metadata=self.metadata)
        return r

    async def chat(self, game_id: str, text: str) -> game_pb2.SendChatResponse:
        r: game_pb2.SendChatResponse = await self.game.SendChat(
            game_pb2.SendChatRequest(game_id=game_id, text=text), metadata=self.metadata)
        return r

    def watch(self, game_id: str, from_version: int = 0) -> AsyncIterator[game_pb2.Update]:
        call = self.game.Watch(game_pb2.WatchRequest(game_id=game_id, from_version=from_version),
                               metadata=self.metadata)
        stream: AsyncIterator[game_pb2.Update] = call.__aiter__()
        return stream
