"""Shared fixtures: a real private redis-server, a real local Ray, shards and a gRPC gateway.

One of each per test session (Ray takes seconds to start); tests keep apart by using their own
games.  Nothing here sleeps to synchronise: tests wait for the events they expect, with timeouts.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from services.cluster import RedisProcess, init_ray, ray_environment, start_redis_server

ray_environment()

NAMESPACE = "archipelago-tests"
SHARDS = 2


@pytest.fixture(autouse=True)
def private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test keeps `archipelago play`'s local state (drafts, labels: client.draft_store) in a
    temporary folder of its own (and so do the clients it starts), never in the user's."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state / "archipelago"


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="arch-tests-") as d:
        yield Path(d)


@pytest.fixture(scope="session")
def redis_server(tmp_root: Path) -> Iterator[RedisProcess]:
    """A real redis-server on a free loopback port (scripts/ensure-test-deps.sh installs it)."""
    proc = start_redis_server(tmp_root / "redis", durable=False)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def ray_local(tmp_root: Path) -> Iterator[None]:
    import ray

    ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short path: Ray's socket names are bounded
    init_ray(None, namespace=NAMESPACE, num_cpus=2, tmpdir=ray_tmp)
    yield
    ray.shutdown()


@dataclass
class Cluster:
    address: str  # gRPC door, host:port
    http_url: str  # JSON + WebSocket door, http://host:port
    redis_url: str
    prefix: str
    shards: list[str]
    handles: list[Any]
    api: Any  # gateway.api.PlayerAPI

    def client(self, door: str, secret: str | None = None) -> Any:
        """A client of the player API through ``door`` ("grpc" or "web")."""
        from client.grpc_client import Client
        from client.web_client import WebClient

        client = Client(self.address, secret) if door == "grpc" else WebClient(self.http_url, secret)
        _clients.append(client)  # closed when the test ends (close_clients)
        return client


_clients: list[Any] = []  # the clients Cluster.client made for the running test


@pytest.fixture
async def close_clients() -> AsyncIterator[None]:
    """Closes the clients ``Cluster.client`` made in the test's body once it ends: their connections would
    outlive it and be collected (ResourceWarning) in a later test. Every test that uses ``cluster`` has
    it, set up after the test's other fixtures: the clients they made (a module's may serve several
    tests) are theirs to close."""
    _clients.clear()
    yield
    while _clients:
        await _clients.pop().close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures: list[str] = getattr(item, "fixturenames", [])
        if "cluster" in fixtures and "close_clients" not in fixtures:
            fixtures.append("close_clients")


@pytest.fixture(scope="session")
def spans() -> Iterator[Any]:
    """Every span this test process ends, in memory (a tracer provider can be set once per process)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from services import tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    tracing.instrument_grpc_server()
    yield exporter


@pytest.fixture(scope="session")
async def cluster(redis_server: RedisProcess, ray_local: None, spans: Any) -> AsyncIterator[Cluster]:
    """Shards on the local Ray + the gateway's two doors on 127.0.0.1 (free ports), on real Redis."""
    import asyncio
    import socket

    import uvicorn

    from gateway.api import ApiConfig, PlayerAPI
    from gateway.grpc_door import build_server
    from gateway.http import build_app, uvicorn_config
    from gateway.limits import Limits
    from gateway.router import ShardRouter
    from services.cluster import shard_names, start_shards
    from services.store import Store

    prefix = f"t{os.getpid()}:"
    handles = start_shards(SHARDS, redis_server.url, prefix=prefix, namespace=NAMESPACE)
    store = Store(redis_server.url, prefix)
    router = ShardRouter(store, shard_names(SHARDS), NAMESPACE)
    # The per-address limits are off here (every test calls from 127.0.0.1); tests/gateway/test_limits.py
    # tests them with their own player API.
    # No presence grace (A17) here: a stream that ends is gone at once, as the tests of rounds expect;
    # tests/e2e/test_presence_grace.py sets one.
    api = PlayerAPI(store, router, ApiConfig(public_url="http://test.invalid", limits=Limits.off(),
                                             presence_grace_s=0))
    await api.start()
    server, port = await build_server(api, "127.0.0.1:0")

    async def health() -> dict[str, Any]:
        return {"shards": await router.ping_all()}

    app = build_app(health)
    app.state.api = api
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound and listening before uvicorn runs: no wait for readiness
    sock.listen(128)
    web = uvicorn.Server(uvicorn_config(app))
    web_task = asyncio.get_running_loop().create_task(web.serve(sockets=[sock]))
    yield Cluster(f"127.0.0.1:{port}", f"http://127.0.0.1:{sock.getsockname()[1]}", redis_server.url, prefix,
                  shard_names(SHARDS), handles, api)
    web.should_exit = True
    await web_task
    await server.stop(grace=0.5)
    await api.stop()


@pytest.fixture(params=["grpc", "web"])
def door(request: pytest.FixtureRequest) -> str:
    """Runs a test once per door of the player API."""
    return str(request.param)
