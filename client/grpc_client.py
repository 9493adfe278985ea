"""The gRPC client of the player API (grpc.aio)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import grpc
from google.protobuf.message import Message

from archipelago.v1 import community_pb2, community_pb2_grpc, game_pb2, game_pb2_grpc, lobby_pb2_grpc
from client.base import BaseClient, M
from client.errors import ApiError
from engine.errors import BY_CODE, HTTP_OF_STATUS, WIRE

#: a gRPC status's HTTP status (the error table's, engine/errors.py; any other status: 500)
HTTP_OF = {"OK": 200, **HTTP_OF_STATUS}


def api_error(err: grpc.aio.AioRpcError) -> ApiError:
    t = {k: v for k, v in (err.trailing_metadata() or ()) if isinstance(v, str)}
    status = err.code().name
    code = t.get("error-code", "")
    known = BY_CODE.get(code)  # the code's own row (order/illegal: 422, as the JSON door says), else the status's
    http = WIRE[known].http if known is not None else HTTP_OF.get(status, 500)
    return ApiError(status=status, code=code, field=t.get("error-field", ""), rule=t.get("error-rule", ""),
                    message=err.details() or "", http_status=http)


class Client(BaseClient):
    """One channel to a gateway's gRPC port (``host:port``)."""

    door = "grpc"

    def __init__(self, address: str, secret: str | None = None, channel: grpc.aio.Channel | None = None) -> None:
        super().__init__(secret)
        self.address = address
        self.channel = channel or grpc.aio.insecure_channel(address)
        self.stubs: dict[str, Any] = {"Lobby": lobby_pb2_grpc.LobbyStub(self.channel),
                                      "Game": game_pb2_grpc.GameStub(self.channel),
                                      "Community": community_pb2_grpc.CommunityStub(self.channel)}

    def with_secret(self, secret: str) -> Client:
        return Client(self.address, secret, self.channel)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.secret}"),) if self.secret else ()

    async def close(self) -> None:
        await self.channel.close()

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        try:
            result: M = await getattr(self.stubs[service], method)(request, metadata=self.metadata)
        except grpc.aio.AioRpcError as err:
            raise api_error(err) from None
        return result

    def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        return self._stream("Game", "Watch", game_pb2.WatchRequest(game_id=game_id, after_seq=after_seq))

    def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        return self._stream("Community", "Spectate",
                            community_pb2.SpectateRequest(game_id=game_id, after_seq=after_seq))

    async def _stream(self, service: str, method: str, request: Message) -> AsyncGenerator[game_pb2.Update, None]:
        call = getattr(self.stubs[service], method)(request, metadata=self.metadata)
        try:
            async for update in call:
                yield update
        except grpc.aio.AioRpcError as err:
            raise api_error(err) from None
        finally:
            call.cancel()
