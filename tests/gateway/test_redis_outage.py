"""A Redis outage, as clients and operators see it (issue 11): UNAVAILABLE with a retry hint on every
door — never INTERNAL or UNKNOWN, never Redis' address — health NOT_SERVING while it lasts, one log
line per change of state, and service again once Redis is back on its port with its data."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import httpx2 as httpx
import pytest
import redis.exceptions
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from archipelago.v1 import game_pb2, game_pb2_grpc
from gateway import errors
from gateway.api import PlayerAPI
from gateway.app import Readiness
from gateway.grpc_door import build_server
from gateway.http import build_app
from services.cluster import RedisProcess, start_redis_server
from services.errors import error_dict
from services.shard import ShardCore
from services.store import Store
from tests.gateway.test_api import LocalRouter

ADDRESS_BITS = ("127.0.0.1", "6379", "Error 111", "redis://")


def test_an_outage_is_unavailable_with_a_retry_hint_and_no_address() -> None:
    for exc in (redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
                redis.exceptions.TimeoutError("Timeout reading from 127.0.0.1:6379"), ConnectionRefusedError()):
        body = errors.to_dict(errors.as_game_error(exc))
        assert (body["code"], body["status"], body["http_status"], body["retry"]) == (
            "server/unavailable", "UNAVAILABLE", 503, True)
        assert not any(bit in body["message"] for bit in ADDRESS_BITS), body
        shard = error_dict(exc)
        assert shard["code"] == "server/unavailable" and "127.0.0.1" not in shard["message"]
    assert errors.as_game_error(KeyError("x")).code == "server/internal"  # a bug stays a bug


@pytest.fixture
async def outage(tmp_path: Path) -> AsyncIterator[tuple[PlayerAPI, RedisProcess, Path]]:
    """A player API (shard logic in-process) on its own durable redis-server, which a test stops."""
    data = tmp_path / "redis"
    proc = start_redis_server(data)
    prefix = f"o{secrets.token_hex(3)}:"
    core = ShardCore("local", Store(proc.url, prefix))
    await core.start()
    api = PlayerAPI(Store(proc.url, prefix), LocalRouter(core))  # type: ignore[arg-type]
    await api.start()
    yield api, proc, data
    await api.stop()
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.stop()
    proc.stop()


async def test_every_door_says_unavailable_while_redis_is_down_and_serves_again_after(
        outage: tuple[PlayerAPI, RedisProcess, Path]) -> None:
    api, proc, data = outage
    made = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=60)
    app = build_app(lambda: _no_health())
    app.state.api = api
    server, port = await build_server(api, "127.0.0.1:0")
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway.test")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = game_pb2_grpc.GameStub(channel)
    body = {"game_id": made["game_id"]}
    auth = {"authorization": f"Bearer {made['secret']}"}
    try:
        assert (await http.post("/v1/Game/GetView", json=body, headers=auth)).status_code == 200
        api.secrets.cache = type(api.secrets.cache)(10)  # a fresh gateway: nothing cached
        proc.stop()  # Redis goes away
        resp = await http.post("/v1/Game/GetView", json=body, headers=auth)
        assert resp.status_code == 503, resp.text
        err = resp.json()["error"]
        assert (err["code"], err["status"], err["retry"]) == ("server/unavailable", "UNAVAILABLE", True)
        assert not any(bit in resp.text for bit in ADDRESS_BITS), resp.text
        resp = await http.post("/v1/Lobby/CreateGame", json={"game": "salvo", "seats": 2, "nickname": "bo"})
        assert resp.status_code == 503 and resp.json()["error"]["code"] == "server/unavailable"
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.GetView(game_pb2.GetViewRequest(game_id=made["game_id"]),
                               metadata=(("authorization", f"Bearer {made['secret']}"),))
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert dict(failed.value.trailing_metadata() or ())["error-code"] == "server/unavailable"
        assert not any(bit in (failed.value.details() or "") for bit in ADDRESS_BITS)

        port_of_redis = int(proc.url.rsplit(":", 1)[1].split("/")[0])
        again = start_redis_server(data, port_of_redis)  # back on its port, with its append-only file
        try:
            resp = await http.post("/v1/Game/GetView", json=body, headers=auth)
            assert resp.status_code == 200 and resp.json()["game_id"] == made["game_id"]
        finally:
            again.stop()
    finally:
        await http.aclose()
        await channel.close()
        await server.stop(grace=0)


async def _no_health() -> dict[str, Any]:
    return {}


async def test_health_turns_not_serving_while_redis_is_down_with_one_log_line_per_change(
        caplog: pytest.LogCaptureFixture) -> None:
    servicer = health.aio.HealthServicer()
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    ready = Readiness(servicer)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = health_pb2_grpc.HealthStub(channel)

    async def status() -> int:
        return int((await stub.Check(health_pb2.HealthCheckRequest(service=""))).status)

    try:
        with caplog.at_level(logging.WARNING, logger="gateway.app"):
            for _ in range(3):  # three failed checks in a row: one line
                await ready.redis(False, redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1"))
            assert await status() == health_pb2.HealthCheckResponse.NOT_SERVING
            for _ in range(3):
                await ready.redis(True)
            assert await status() == health_pb2.HealthCheckResponse.SERVING
        lines = [r.getMessage() for r in caplog.records if r.name == "gateway.app"]
        assert len(lines) == 2 and "NOT_SERVING" in lines[0] and "SERVING" in lines[1], lines
        assert not any("127.0.0.1" in line for line in lines)
    finally:
        await channel.close()
        await server.stop(grace=0)


async def test_after_an_outage_presence_returns_by_heartbeat_and_streams_hear_again(
        outage: tuple[PlayerAPI, RedisProcess, Path]) -> None:
    """A17 presence is kept by the gateway's heartbeat, so it comes back after Redis lost it; the
    pub/sub connection subscribes again, and an open Watch stream hears what happens next."""
    import asyncio
    import contextlib

    api, proc, data = outage
    made = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=600)
    joined = await api.join(code=made["code"], nickname="bob")
    await api.start_game(made["secret"], made["game_id"])
    gid = made["game_id"]
    heard: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def watch() -> None:
        async with contextlib.aclosing(await api.watch(made["secret"], gid, 0)) as stream:
            async for u in stream:
                await heard.put(u)

    task = asyncio.get_running_loop().create_task(watch())
    try:
        async with asyncio.timeout(30):
            while (await heard.get())["kind"] != "round_opened":
                pass
            assert await api.store.connected(gid, [0]) == {0}
            port = int(proc.url.rsplit(":", 1)[1].split("/")[0])
            proc.stop()
            again = start_redis_server(data, port)  # back, with its data — but presence is gone:
            await api.store.redis.delete(api.store.key("presence", gid))  # (as after a long outage)
            try:
                while await api.store.connected(gid, [0]) != {0}:  # the heartbeat (every 5 s) restores it
                    await asyncio.sleep(0.1)
                while True:  # the stream hears a chat sent after the outage
                    try:
                        await api.act(joined["secret"], gid, action={"chat": {"text": "back?"}})
                        break
                    except Exception as exc:  # the first calls may meet connections Redis closed
                        assert errors.as_game_error(exc).code == "server/unavailable", exc
                while True:
                    u = await heard.get()
                    if u["kind"] == "chat":
                        assert u["chat"]["text"] == "back?"
                        break
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                again.stop()
    finally:
        task.cancel()
