"""A maximum size for every request, the same on every door (issue 11): 256 KiB, far above the
largest legitimate request and far below what a hostile client would like the gateway to hold. Over
it, every door gives the error table's answer (issue 19): gRPC INVALID_ARGUMENT with the error-code
trailers, JSON 413 with the error body, the WebSocket a close 1009 with a reason."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import httpx2 as httpx
import pytest
import websockets

from archipelago.v1 import game_pb2
from gateway.api import MAX_REQUEST_BYTES
from gateway.grpc_door import MAX_RECEIVE_BYTES
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, rpc_error

pytestmark = pytest.mark.e2e


async def test_a_request_over_the_limit_is_refused_and_one_under_it_is_not(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    err = await rpc_error(game.host.view("x" * (MAX_REQUEST_BYTES + 1)))
    # the door's own answer, with its error-code trailers on gRPC (before: gRPC's "Received message
    # larger than max", RESOURCE_EXHAUSTED with no error-code), and 413 over HTTP
    assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "request/too_large", "body"), err
    assert "at most 262144 bytes" in err.message
    if door == "web":
        assert err.http_status == 413
    under = await rpc_error(game.host.view("x" * (MAX_REQUEST_BYTES // 2)))
    assert under.status == "PERMISSION_DENIED", under  # read in full: not its game
    assert (await game.host.view(game.game_id)).game_id == game.game_id


async def test_a_declared_or_streamed_oversized_body_is_not_read(cluster: Cluster) -> None:
    big = b"{" + b" " * (MAX_REQUEST_BYTES + 10) + b"}"

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the door counts as it reads
        for i in range(0, len(big), 65536):
            yield big[i:i + 65536]

    async with httpx.AsyncClient(base_url=cluster.http_url) as http:
        for content in (big, chunks()):
            resp = await http.post("/v1/Lobby/ListGames", content=content,
                                   headers={"content-type": "application/json"})
            assert resp.status_code == 413, resp.text
            error = resp.json()["error"]
            assert (error["code"], error["field"], error["http_status"]) == ("request/too_large", "body", 413), error
        resp = await http.post("/mcp", content=big, headers={"content-type": "application/json",
                                                             "accept": "application/json, text/event-stream"})
        assert resp.status_code == 413, resp.text


async def test_grpc_trailers_name_the_error_of_an_oversized_message_up_to_grpcs_own_limit(cluster: Cluster) -> None:
    async with grpc.aio.insecure_channel(cluster.address) as channel:
        call = channel.unary_unary("/archipelago.v1.Game/GetView",
                                   request_serializer=game_pb2.GetViewRequest.SerializeToString,
                                   response_deserializer=game_pb2.GetViewResponse.FromString)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(game_pb2.GetViewRequest(game_id="x" * (MAX_REQUEST_BYTES + 1)))
        trailers = dict(caught.value.trailing_metadata() or ())
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (trailers.get("error-code"), trailers.get("error-field")) == ("request/too_large", "body"), trailers
        with pytest.raises(grpc.aio.AioRpcError) as caught:  # beyond what gRPC reads at all (documented)
            await call(game_pb2.GetViewRequest(game_id="x" * (MAX_RECEIVE_BYTES + 1)))
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_websocket_frame_over_the_limit_closes_with_1009_and_a_reason(cluster: Cluster) -> None:
    url = "ws" + cluster.http_url[len("http"):] + "/v1/Game/Watch"
    game = await new_game(lambda: cluster.client("web"))
    secret = game.host.secret
    for hello_first in (False, True):
        async with websockets.connect(url, max_size=2**22) as ws:
            if hello_first:  # a valid stream, then an oversized frame
                await ws.send(f'{{"authorization": "Bearer {secret}", "game_id": "{game.game_id}"}}')
                await ws.recv()
            await ws.send("x" * (MAX_REQUEST_BYTES + 1))
            with pytest.raises(websockets.ConnectionClosed):
                async with asyncio.timeout(10):
                    while True:
                        await ws.recv()
            assert ws.close_code == 1009 and str(MAX_REQUEST_BYTES) in (ws.close_reason or ""), ws.close_reason
