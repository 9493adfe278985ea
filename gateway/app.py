"""`archipelago serve`: the embedded cluster (Redis, Ray, shards) and the gateway in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY

from gateway.metrics import ShardCollector
from gateway.server import Gateway, GatewayConfig, build_server
from services import tracing
from services.cluster import Embedded, start_embedded
from services.store import Store

log = logging.getLogger(__name__)


async def start_gateway(cluster: Embedded, grpc_address: str, public_url: str) -> tuple[Gateway, Any, int]:
    from gateway.router import ShardRouter

    if tracing.setup("archipelago-gateway"):
        tracing.instrument_grpc_server()
    store = Store(cluster.redis_url, cluster.prefix)
    router = ShardRouter(store, cluster.shards, cluster.namespace)
    gw = Gateway(store, router, GatewayConfig(public_url=public_url))
    await gw.start()
    server, port = await build_server(gw, grpc_address)
    return gw, server, port


async def _monitor(gw: Gateway) -> None:
    """Ping every shard each second: wakes restarted shards (their timers) and logs trouble."""
    while True:
        try:
            await gw.router.ping_all()
        except Exception as exc:
            log.warning("shard ping failed: %r", exc)
        await asyncio.sleep(1.0)


async def serve(*, host: str, grpc_port: int, http_port: int, shards: int, data_dir: Path) -> None:
    import uvicorn

    from gateway.http import build_app

    cluster = await asyncio.to_thread(start_embedded, shards=shards, data_dir=data_dir)
    try:
        gw, server, port = await start_gateway(cluster, f"{host}:{grpc_port}",
                                               os.environ.get("ARCHIPELAGO_PUBLIC_URL")
                                               or f"http://{host}:{http_port}")

        async def health() -> dict[str, Any]:
            stats = await gw.router.ping_all()
            return {"shards": stats}

        shard_metrics = ShardCollector(gw.router)
        REGISTRY.register(shard_metrics)
        web = uvicorn.Server(uvicorn.Config(build_app(health, shard_metrics.refresh), host=host, port=http_port,
                                           log_level="warning", lifespan="off"))
        web_task = asyncio.get_running_loop().create_task(web.serve())
        monitor = asyncio.get_running_loop().create_task(_monitor(gw))
        print(f"gRPC  listening on {host}:{port}  (Lobby, Game, health, reflection)", flush=True)
        print(f"HTTP  listening on http://{host}:{http_port}  (/healthz, /metrics)", flush=True)
        print(f"try:  archipelago create salvo --server {host}:{port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        print("shutting down", flush=True)
        monitor.cancel()
        web.should_exit = True
        await server.stop(grace=2)
        await web_task
        await gw.stop()
    finally:
        await asyncio.to_thread(cluster.stop)
