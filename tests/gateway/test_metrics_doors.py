"""Every door counts its requests in archipelago_requests_total{door, method, status, code} (gateway/metrics.py):
gRPC (and an rpc no service has), JSON (and a path that is no rpc, a known rpc with another method than POST),
the WebSocket Watch, MCP tool calls (and a tool that does not exist), admin calls; ``code`` is the error
table's code the client was answered with (``ok`` on success), ``method`` never the name a client made up.
Every (door, method) is exported from 0 before its first call.

Over the session cluster: each check is the difference before/after for a label set only this test uses
at that moment (an unknown method, an error code of its own)."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx2 as httpx
import pytest
import websockets
from grpc_health.v1 import health_pb2, health_pb2_grpc
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prometheus_client import REGISTRY, generate_latest

from client.errors import ApiError
from engine import errors as E
from gateway import errors, rpc
from gateway.http import build_app
from gateway.metrics import CODES, OK, UNKNOWN, count
from tests.conftest import Cluster

pytestmark = pytest.mark.e2e

TOKEN = "op-" + secrets.token_urlsafe(24)


def requests(door: str, method: str, status: str, code: str) -> float:
    return REGISTRY.get_sample_value("archipelago_requests_total",
                                     {"door": door, "method": method, "status": status, "code": code}) or 0.0


class Counted:
    """The change of one series of archipelago_requests_total across a block."""

    def __init__(self, door: str, method: str, status: str, code: str) -> None:
        self.labels = (door, method, status, code)
        self.before = requests(*self.labels)

    @property
    def change(self) -> float:
        return requests(*self.labels) - self.before


async def no_health() -> dict[str, Any]:
    return {}


@contextlib.asynccontextmanager
async def admin_door(cluster: Cluster, auth: str) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app(no_health, admin_token=TOKEN)
    app.state.api = cluster.api
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway.test",
                                 headers={"authorization": f"Bearer {auth}"}, timeout=60) as client:
        yield client


async def test_grpc_counts_the_error_code_it_answered_and_an_unknown_rpc_under_one_name(cluster: Cluster) -> None:
    client = cluster.client("grpc")
    try:
        unknown_code = Counted("grpc", "JoinGame", "NOT_FOUND", "lookup/not_found")
        ok = Counted("grpc", "ListGames", "OK", OK)
        with pytest.raises(ApiError) as refused:
            await client.join("ZZZZZZ", "nobody")
        assert refused.value.code == "lookup/not_found"
        assert unknown_code.change == 1
        await client.list_games("salvo")
        assert ok.change == 1
    finally:
        await client.close()
    made_up = "NoSuchRpc" + secrets.token_hex(4)
    unknown = Counted("grpc", UNKNOWN, "UNIMPLEMENTED", "lookup/not_found")
    async with grpc.aio.insecure_channel(cluster.address) as channel:
        call = channel.unary_unary(f"/archipelago.v1.Game/{made_up}")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call(b"")
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        # (the catch-all is asked last: health, reflection and the services still answer)
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert unknown.change == 1
    assert made_up not in generate_latest(REGISTRY).decode(), "never the name the client made up"


async def test_json_and_websocket_count_every_answer_and_unknown_paths_under_one_name(cluster: Cluster) -> None:
    made_up = "Nope" + secrets.token_hex(4)
    unknown = Counted("http", UNKNOWN, "NOT_FOUND", "lookup/not_found")
    wrong_method = Counted("http", "GetView", "INVALID_ARGUMENT", "order/invalid")
    ok = Counted("http", "ListGames", "OK", OK)
    bad_body = Counted("http", "CreateGame", "INVALID_ARGUMENT", "order/invalid")
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=30) as http:
        assert (await http.post(f"/v1/Lobby/{made_up}", json={})).status_code == 404
        assert (await http.post(f"/v1/{made_up}/x/y", json={})).status_code == 404
        assert (await http.get("/v1/Game/GetView")).status_code == 405
        assert (await http.post("/v1/Lobby/ListGames", json={"game": "salvo"})).status_code == 200
        assert (await http.post("/v1/Lobby/CreateGame", content=b"{not json")).status_code == 400
    assert (unknown.change, wrong_method.change, ok.change, bad_body.change) == (2, 1, 1, 1)
    assert made_up not in generate_latest(REGISTRY).decode(), "never the path the client asked"

    watch = Counted("http", "Watch", "UNAUTHENTICATED", "auth/unauthenticated")
    url = cluster.http_url.replace("http://", "ws://") + "/v1/Game/Watch"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"authorization": "Bearer not-a-secret", "game_id": "g", "after_seq": "0"}))
        frame = json.loads(await ws.recv())
        assert frame["error"]["code"] == "auth/unauthenticated"
    assert watch.change == 1


async def test_mcp_counts_each_tool_call_by_tool_and_code(cluster: Cluster) -> None:
    host = cluster.client("grpc")
    guest = cluster.client("grpc")
    try:
        created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
        await guest.join(created.code, "guest")
        token = (await guest.create_agent_token(created.game_id, "metrics")).token
        await host.start(created.game_id)
        ok = Counted("mcp", "rules", "OK", OK)
        invalid = Counted("mcp", "submit_orders", "INVALID_ARGUMENT", "order/invalid")
        unknown = Counted("mcp", UNKNOWN, "NOT_FOUND", "lookup/not_found")
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(f"{cluster.http_url}/mcp", http_client=http)) as c:
            assert not (await c.call_tool("rules", {})).is_error
            refused = await c.call_tool("submit_orders", {"round": 0, "orders": {"bogus": 1}})
            assert refused.is_error and "order/invalid" in "".join(getattr(p, "text", "") for p in refused.content)
            assert (await c.call_tool("no_such_tool_" + secrets.token_hex(4), {})).is_error
        assert (ok.change, invalid.change, unknown.change) == (1, 1, 1)
    finally:
        await host.close()
        await guest.close()


async def test_admin_calls_are_counted_by_action(cluster: Cluster) -> None:
    ok = Counted("admin", "shards", "OK", OK)
    wrong_method = Counted("admin", "shards", "INVALID_ARGUMENT", "order/invalid")
    unknown = Counted("admin", UNKNOWN, "NOT_FOUND", "lookup/not_found")
    refused = Counted("admin", "games", "UNAUTHENTICATED", "auth/unauthenticated")
    async with admin_door(cluster, TOKEN) as client:
        assert (await client.get("/admin/shards")).status_code == 200
        assert (await client.post("/admin/shards")).status_code == 405
        assert (await client.get("/admin/" + secrets.token_hex(4))).status_code == 404
    async with admin_door(cluster, "not-the-operator-token") as client:
        assert (await client.get("/admin/games")).status_code == 401
    assert (ok.change, wrong_method.change, unknown.change, refused.change) == (1, 1, 1, 1)


async def test_every_method_of_every_door_is_exported_from_0(cluster: Cluster) -> None:
    async with admin_door(cluster, TOKEN):  # (an app with the admin door open: its actions registered)
        pass
    text = generate_latest(REGISTRY).decode()
    tools = {"rules", "get_view", "legal_moves", "submit_orders", "wait_for_next_round"}
    admin = {"shards", "games", "game", "end", "drain", "activate", "remove", "notifications"}
    expected = ([("grpc", m) for m in (*rpc.UNARY, "Watch")] + [("http", m) for m in (*rpc.UNARY, "Watch")]
                + [("mcp", t) for t in tools] + [("admin", a) for a in admin])
    for door, method in expected:
        for status, code in (("OK", OK), ("INTERNAL", "server/internal"), ("UNAVAILABLE", "server/unavailable")):
            line = (f'archipelago_requests_total{{code="{code}",door="{door}",method="{method}",'
                    f'status="{status}"}}')
            assert line in text, line
    for door in ("grpc", "http"):
        for method in rpc.UNARY:
            assert f'archipelago_request_latency_seconds_count{{door="{door}",method="{method}"}}' in text


def test_the_code_label_is_bounded_by_the_error_table() -> None:
    assert CODES == {OK} | {k.code for k in errors.TABLE.values()}
    before = requests("http", "ListGames", "INTERNAL", "server/internal")
    count("http", "ListGames", KeyError("anything unexpected"))
    assert requests("http", "ListGames", "INTERNAL", "server/internal") == before + 1

    class Odd(E.InvalidOrder):
        code = "odd/made_up"

    before = requests("http", "ListGames", "INVALID_ARGUMENT", "order/invalid")
    count("http", "ListGames", Odd("x"))
    assert requests("http", "ListGames", "INVALID_ARGUMENT", "order/invalid") == before + 1
    assert "odd/made_up" not in generate_latest(REGISTRY).decode()
