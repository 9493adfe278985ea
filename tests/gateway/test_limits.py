"""Per-client-address limits (issue 11): lobby calls, failed authentications, open lobby games.

The buckets on a fake clock; then a player API with tight limits over the session's real Redis and
shards, called as from two addresses, and through its own gRPC and HTTP doors (the session's doors
run with the limits off: every test calls from 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from prometheus_client import REGISTRY

from client.errors import ApiError
from client.grpc_client import Client
from client.web_client import WebClient
from engine.errors import Throttled, Unauthenticated
from gateway.api import ApiConfig, PlayerAPI
from gateway.limits import PEER, Buckets, Limiter, Limits, grpc_peer
from services.store import Store
from tests.conftest import Cluster
from tests.e2e.helpers import rpc_error


def throttled(limit: str) -> float:
    """archipelago_throttled_total{limit} of this process (only these tests' player APIs have limits on)."""
    return REGISTRY.get_sample_value("archipelago_throttled_total", {"limit": limit}) or 0.0


TIGHT = Limits(lobby_per_min=6, lobby_burst=4, auth_failures_per_min=6, auth_failures_burst=2, open_lobbies=2)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_bucket_refuses_beyond_its_burst_and_refills_at_its_rate() -> None:
    clock = Clock()
    b = Buckets(rate_per_min=6, burst=3, clock=clock)
    for _ in range(3):
        assert b.wait_s("1.2.3.4") == 0
        b.take("1.2.3.4")
    assert b.wait_s("1.2.3.4") == pytest.approx(10.0), "one token every 10 s"
    assert b.wait_s("5.6.7.8") == 0, "addresses are apart"
    clock.t += 10
    assert b.wait_s("1.2.3.4") == 0


def test_a_refusal_names_the_seconds_to_wait_and_counts_nothing() -> None:
    clock = Clock()
    limiter = Limiter(Limits(lobby_per_min=60, lobby_burst=1), clock=clock)
    PEER.set("10.0.0.1")
    before = throttled("lobby")
    limiter.lobby_call()
    assert throttled("lobby") == before
    with pytest.raises(Throttled, match="retry in 1 s") as err:
        limiter.lobby_call()
    assert err.value.code == "client/throttled"
    assert throttled("lobby") == before + 1, "the refusal is counted"
    clock.t += 1
    limiter.lobby_call()


def test_limits_come_from_the_environment_and_can_be_switched_off() -> None:
    assert not Limits.from_env({"ARCHIPELAGO_RATE_LIMITS": "off"}).enabled
    got = Limits.from_env({"ARCHIPELAGO_LOBBY_PER_MIN": "600", "ARCHIPELAGO_OPEN_LOBBIES": "5"})
    assert got.enabled and got.lobby_per_min == 600 and got.open_lobbies == 5 and got.lobby_burst == 30
    assert grpc_peer("ipv4:10.1.2.3:5555") == "10.1.2.3" and grpc_peer("ipv6:[::1]:5555") == "::1"


@pytest.fixture
async def tight(cluster: Cluster) -> AsyncIterator[PlayerAPI]:
    store = Store(cluster.redis_url, cluster.prefix)
    api = PlayerAPI(store, cluster.api.router, ApiConfig(public_url="http://test.invalid", limits=TIGHT))
    await api.start()
    yield api
    await api.stop()


async def as_peer(peer: str, coro_fn: object) -> object:
    """Run a call of the API as from ``peer`` (its own context, as a door's request has)."""
    async def run() -> object:
        PEER.set(peer)
        return await coro_fn()  # type: ignore[operator]
    return await asyncio.get_running_loop().create_task(run())


async def test_open_lobby_games_are_capped_per_address(tight: PlayerAPI) -> None:
    made = [await as_peer("10.9.0.1", lambda: tight.create(game="salvo", seats=2, nickname="a")) for _ in range(2)]
    before = {limit: throttled(limit) for limit in ("lobby", "auth_failures", "open_lobbies")}
    with pytest.raises(Throttled, match="at most 2 open lobby games") as err:
        await as_peer("10.9.0.1", lambda: tight.create(game="salvo", seats=2, nickname="a"))
    assert err.value.field == "client"
    assert {limit: throttled(limit) - n for limit, n in before.items()} == {"lobby": 0, "auth_failures": 0,
                                                                           "open_lobbies": 1}
    await as_peer("10.9.0.2", lambda: tight.create(game="salvo", seats=2, nickname="b"))  # another address
    first = made[0]
    assert isinstance(first, dict)
    await as_peer("10.9.0.3", lambda: tight.join(code=first["code"], nickname="guest"))
    await as_peer("10.9.0.1", lambda: tight.start_game(first["secret"], first["game_id"]))
    third = await as_peer("10.9.0.1", lambda: tight.create(game="salvo", seats=2, nickname="a"))
    assert isinstance(third, dict) and third["game_id"], "a started game frees a slot"


async def test_lobby_calls_are_rate_limited_per_address(tight: PlayerAPI) -> None:
    for _ in range(TIGHT.lobby_burst):
        await as_peer("10.8.0.1", lambda: tight.list_games())
    before = throttled("lobby")
    with pytest.raises(Throttled, match=r"too many lobby calls .* retry in 10 s"):
        await as_peer("10.8.0.1", lambda: tight.join(code="ZZZZZZ", nickname="x"))
    assert throttled("lobby") == before + 1
    await as_peer("10.8.0.2", lambda: tight.list_games())


async def test_a3_failed_authentications_are_limited_per_address_even_for_a_good_secret(tight: PlayerAPI) -> None:
    made = await as_peer("10.7.0.1", lambda: tight.create(game="salvo", seats=2, nickname="a"))
    assert isinstance(made, dict)
    before = throttled("auth_failures")
    for _ in range(TIGHT.auth_failures_burst):
        with pytest.raises(Unauthenticated):
            await as_peer("10.7.0.9", lambda: tight.view("not-a-secret-" + "x" * 20, made["game_id"]))
    assert throttled("auth_failures") == before, "failures within the burst are answered, not throttled"
    with pytest.raises(Throttled, match="too many failed authentications") as err:
        await as_peer("10.7.0.9", lambda: tight.view(made["secret"], made["game_id"]))
    assert err.value.field == "authorization"
    assert throttled("auth_failures") == before + 1
    view = await as_peer("10.7.0.1", lambda: tight.view(made["secret"], made["game_id"]))
    assert isinstance(view, dict) and view["game_id"] == made["game_id"], "other addresses are not refused"


@dataclass
class Doors:
    grpc: str
    http: str


@pytest.fixture
async def doors(tight: PlayerAPI) -> AsyncIterator[Doors]:
    import uvicorn

    from gateway.grpc_door import build_server
    from gateway.http import build_app, uvicorn_config

    server, port = await build_server(tight, "127.0.0.1:0")

    async def health() -> dict[str, object]:
        return {}

    app = build_app(health)
    app.state.api = tight
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    web = uvicorn.Server(uvicorn_config(app))
    task = asyncio.get_running_loop().create_task(web.serve(sockets=[sock]))
    yield Doors(f"127.0.0.1:{port}", f"http://127.0.0.1:{sock.getsockname()[1]}")
    web.should_exit = True
    await task
    await server.stop(grace=0.5)


@pytest.mark.parametrize("door", ["grpc", "web"])
async def test_a_throttled_call_is_resource_exhausted_429_with_code_and_hint(doors: Doors, door: str) -> None:
    client = Client(doors.grpc) if door == "grpc" else WebClient(doors.http)
    try:
        for _ in range(TIGHT.lobby_burst):
            await client.list_games()
        err: ApiError = await rpc_error(client.list_games())
        assert err.status == "RESOURCE_EXHAUSTED" and err.code == "client/throttled"
        assert "retry in" in err.message and err.field == "client"
        if door == "web":
            assert err.http_status == 429
    finally:
        await client.close()
