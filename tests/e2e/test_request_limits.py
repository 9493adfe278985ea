"""A maximum size for every request, the same on every door (issue 11): 256 KiB, far above the
largest legitimate request and far below what a hostile client would like the gateway to hold."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2 as httpx
import pytest

from gateway.api import MAX_REQUEST_BYTES
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, rpc_error

pytestmark = pytest.mark.e2e


async def test_a_request_over_the_limit_is_refused_and_one_under_it_is_not(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    err = await rpc_error(game.host.view("x" * (MAX_REQUEST_BYTES + 1)))
    if door == "grpc":
        assert err.status == "RESOURCE_EXHAUSTED", err  # refused by gRPC itself, before any parsing
    else:
        assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "order/invalid", "body"), err
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
            assert resp.status_code == 400 and resp.json()["error"]["field"] == "body", resp.text
        resp = await http.post("/mcp", content=big, headers={"content-type": "application/json",
                                                             "accept": "application/json, text/event-stream"})
        assert resp.status_code == 413, resp.text
