"""`archipelago serve`: the embedded cluster (Redis, Ray, shards) and the gateway in one process.

The gateway is one Starlette app served by uvicorn whose lifespan owns every resource: the player
API (its Redis connections, pub/sub reader, presence heartbeat), the gRPC server on its own port,
and the shard monitor.  Both doors — gRPC and JSON + WebSocket — call that one player API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from grpc_health.v1 import health
from prometheus_client import REGISTRY
from starlette.applications import Starlette

from engine.errors import Unavailable
from gateway.api import ApiConfig, PlayerAPI
from gateway.grpc_door import build_server, set_serving
from gateway.metrics import ShardCollector
from services import tracing
from services.cluster import DataDirInUse, Embedded, start_embedded
from services.store import Store

log = logging.getLogger(__name__)


async def start_api(cluster: Embedded, public_url: str) -> PlayerAPI:
    from gateway.router import ShardRouter

    store = Store(cluster.redis_url, cluster.prefix, client_name="archipelago-gateway")
    router = ShardRouter(store, cluster.shards, cluster.namespace)
    api = PlayerAPI(store, router, ApiConfig(public_url=public_url))
    await api.start()
    return api


class Readiness:
    """Whether this gateway can serve now: Redis answers. gRPC health and /healthz follow it; each
    change is logged once (not a line per failed call)."""

    def __init__(self, health_servicer: Any) -> None:
        self.health = health_servicer
        self.redis_ok = True
        self.shards_ok = True

    async def redis(self, ok: bool, why: BaseException | None = None) -> None:
        if ok == self.redis_ok:
            return
        self.redis_ok = ok
        if ok:
            log.warning("Redis answers again: SERVING")
        else:
            log.warning("Redis does not answer (%s): NOT_SERVING until it does", type(why).__name__)
        await set_serving(self.health, ok)

    def shards(self, ok: bool, why: BaseException | None = None) -> None:
        if ok != self.shards_ok:
            self.shards_ok = ok
            log.warning("shards answer again" if ok else f"a shard does not answer ({why!r})")


async def _monitor(api: PlayerAPI, ready: Readiness) -> None:
    """Each second: ping Redis (readiness) and every shard (wakes restarted shards and their timers)."""
    while True:
        try:
            async with asyncio.timeout(2.0):
                await api.store.ping()
            await ready.redis(True)
        except Exception as exc:
            await ready.redis(False, exc)
        try:
            async with asyncio.timeout(5.0):
                await api.router.ping_all()
            ready.shards(True)
        except Exception as exc:
            ready.shards(False, exc)
        await asyncio.sleep(1.0)


def client_command() -> str:
    """How the user runs the client command from here (``archipelago`` may not be on PATH)."""
    exe = Path(sys.argv[0])
    if exe.name == "archipelago" and shutil.which("archipelago") != str(exe.resolve()):
        with contextlib.suppress(ValueError):
            return str(exe.resolve().relative_to(Path.cwd()))
        return str(exe)
    return "archipelago"


async def serve(*, host: str, grpc_port: int, http_port: int, shards: int, data_dir: Path) -> None:
    import uvicorn

    from gateway.http import build_app, uvicorn_config

    try:  # (from a thread that lives as long as the process: see services/cluster.py on PDEATHSIG)
        cluster = await asyncio.to_thread(start_embedded, shards=shards, data_dir=data_dir)
    except DataDirInUse as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    try:
        if tracing.setup("archipelago-gateway"):
            tracing.instrument_grpc_server()
        public_url = os.environ.get("ARCHIPELAGO_PUBLIC_URL") or f"http://{host}:{http_port}"
        state: dict[str, Any] = {}

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            api = await start_api(cluster, public_url)
            health_servicer = health.aio.HealthServicer()
            server, port = await build_server(api, f"{host}:{grpc_port}", health_servicer)
            ready = Readiness(health_servicer)
            state["ready"] = ready
            monitor = asyncio.get_running_loop().create_task(_monitor(api, ready))
            shard_metrics = ShardCollector(api.router)
            REGISTRY.register(shard_metrics)
            state["api"], state["metrics"] = api, shard_metrics
            app.state.api = api
            print(f"gRPC  listening on {host}:{port}  (Lobby, Game, health, reflection)", flush=True)
            print(f"HTTP  listening on http://{host}:{http_port}  (JSON API /v1/…, WebSocket /v1/Game/Watch, "
                  "MCP /mcp, /healthz, /metrics)", flush=True)
            print(f"play: {public_url}/  (in a browser)", flush=True)
            print(f"try:  {client_command()} create salvo --server {host}:{port}", flush=True)
            try:
                yield
            finally:
                print("shutting down", flush=True)
                monitor.cancel()
                await server.stop(grace=2)
                REGISTRY.unregister(shard_metrics)
                await api.stop()

        async def health_report() -> dict[str, Any]:
            if not state["ready"].redis_ok:
                raise Unavailable("Redis does not answer")
            return {"shards": await state["api"].router.ping_all()}

        async def refresh() -> None:
            await state["metrics"].refresh()

        web = uvicorn.Server(uvicorn_config(build_app(health_report, refresh, lifespan, host=host),
                                            host=host, port=http_port))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        web_task = loop.create_task(web.serve())
        stopper = loop.create_task(stop.wait())
        await asyncio.wait({web_task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        web.should_exit = True
        await web_task
        stopper.cancel()
    finally:
        await asyncio.to_thread(cluster.stop)
