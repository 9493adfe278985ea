"""Watch's request checks and the WebSocket's first frame (issue 19), on the session's doors: an
``after_seq`` that is negative or beyond the caller's latest seq is refused (``order/invalid``,
field ``after_seq``) before any update, on both doors; a WebSocket that never sends its first frame
is closed after ``HELLO_TIMEOUT_S`` (4408) instead of being held open unauthenticated; gRPC
reflection answers on v1 as well as v1alpha."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import grpc
import pytest
import websockets
from grpc_reflection.v1alpha import reflection_pb2

from gateway import web
from gateway.grpc_door import REFLECTION_V1, SERVICE_NAMES
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, rpc_error

pytestmark = pytest.mark.e2e


async def _first_update(client: object, game_id: str, after_seq: int) -> object:
    async with contextlib.aclosing(client.watch(game_id, after_seq)) as stream:  # type: ignore[attr-defined]
        async for update in stream:
            return update
    raise AssertionError("the stream ended with no update and no error")


@pytest.mark.parametrize("offset", [1, 1000])
async def test_an_after_seq_beyond_the_latest_seq_is_refused_before_any_update(cluster: Cluster, door: str,
                                                                                offset: int) -> None:
    game = await new_game(lambda: cluster.client(door))
    latest = (await game.host.view(game.game_id)).seq
    err = await rpc_error(asyncio.wait_for(_first_update(game.host, game.game_id, latest + offset), 10))
    assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "order/invalid", "after_seq"), err
    assert f"seq {latest}" in err.message
    # the latest seq itself is fine: the stream opens and waits for the next update
    first = await asyncio.wait_for(_first_update(game.host, game.game_id, latest - 1), 10)
    assert first.seq == latest  # type: ignore[attr-defined]


async def test_a_negative_after_seq_is_refused(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    err = await rpc_error(asyncio.wait_for(_first_update(game.host, game.game_id, -5), 10))
    assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "order/invalid", "after_seq"), err


async def test_a3_a_websocket_without_its_first_frame_is_closed_after_the_hello_timeout(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web, "HELLO_TIMEOUT_S", 0.5)
    url = "ws" + cluster.http_url[len("http"):] + "/v1/Game/Watch"
    loop = asyncio.get_running_loop()
    async with websockets.connect(url) as ws:
        start = loop.time()
        async with asyncio.timeout(10):
            frame = json.loads(await ws.recv())
            with pytest.raises(websockets.ConnectionClosed):
                await ws.recv()
        assert loop.time() - start >= 0.45
        assert frame["error"]["code"] == "auth/unauthenticated" and frame["error"]["field"] == "authorization"
        assert "0.5 s" in frame["error"]["message"]
        assert ws.close_code == web.HELLO_CLOSE == 4408 and ws.close_reason == "hello timeout"


async def _list_services(channel: grpc.aio.Channel, service: str) -> list[str]:
    call = channel.stream_stream(f"/{service}/ServerReflectionInfo",
                                 request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                 response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)

    async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    async for response in call(requests()):
        return [s.name for s in response.list_services_response.service]
    raise AssertionError("no reflection answer")


async def test_reflection_answers_on_v1_and_v1alpha(cluster: Cluster) -> None:
    async with grpc.aio.insecure_channel(cluster.address) as channel:
        for service in (REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"):
            names = await asyncio.wait_for(_list_services(channel, service), 10)
            assert {*SERVICE_NAMES, REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"} <= set(names), names
        # and v1 describes our messages (grpcurl's describe)
        call = channel.stream_stream(f"/{REFLECTION_V1}/ServerReflectionInfo",
                                     request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                     response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)

        async def ask() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(file_containing_symbol="archipelago.v1.Game")

        async for response in call(ask()):
            assert response.file_descriptor_response.file_descriptor_proto, response
            break
