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
    address: str
    redis_url: str
    prefix: str
    shards: list[str]
    handles: list[Any]
    gateway: Any


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
    """Shards on the local Ray + a gateway on 127.0.0.1:<free port>, talking to real Redis."""
    from gateway.router import ShardRouter
    from gateway.server import Gateway, GatewayConfig, build_server
    from services.cluster import shard_names, start_shards
    from services.store import Store

    prefix = f"t{os.getpid()}:"
    handles = start_shards(SHARDS, redis_server.url, prefix=prefix, namespace=NAMESPACE)
    store = Store(redis_server.url, prefix)
    router = ShardRouter(store, shard_names(SHARDS), NAMESPACE)
    gw = Gateway(store, router, GatewayConfig(public_url="http://test.invalid"))
    await gw.start()
    server, port = await build_server(gw, "127.0.0.1:0")
    yield Cluster(f"127.0.0.1:{port}", redis_server.url, prefix, shard_names(SHARDS), handles, gw)
    await server.stop(grace=0.5)
    await gw.stop()
