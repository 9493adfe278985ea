"""`archipelago serve`: the embedded cluster (Redis, Ray, shards) and the gateway in one process.

The gateway is one Starlette app served by uvicorn whose lifespan owns every resource: the player
API (its Redis connections, pub/sub reader, presence heartbeat), the gRPC server on its own port,
and the shard monitor.  All three doors — gRPC, JSON + WebSocket and MCP — call that one player API.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from grpc_health.v1 import health, health_pb2
from prometheus_client import REGISTRY
from starlette.applications import Starlette

from engine.errors import Unavailable
from gateway import admin
from gateway.api import ApiConfig, PlayerAPI
from gateway.grpc_door import build_server, set_serving
from gateway.metrics import ShardCollector
from services import gctune, tracing
from services.cluster import DataDirInUse, Embedded, start_embedded
from services.metrics import PROCESS_GC
from services.store import Store

log = logging.getLogger(__name__)


async def start_api(cluster: Embedded, public_url: str) -> PlayerAPI:
    from gateway.router import ShardRouter

    store = Store(cluster.redis_url, cluster.prefix, client_name="archipelago-gateway")
    router = ShardRouter(store, cluster.shards, cluster.namespace)
    api = PlayerAPI(store, router, ApiConfig(public_url=public_url))
    await api.start()
    return api


DRAIN_S = float(os.environ.get("ARCHIPELAGO_DRAIN_S", "5"))  # NOT_SERVING but serving, after SIGTERM
STOP_GRACE_S = 5.0  # then calls in flight may finish; open streams end after it
LIVENESS = "liveness"  # a gRPC health service name that is SERVING as long as the process serves


class Readiness:
    """Whether this gateway can serve now: Redis answers and it is not draining. gRPC health (the
    overall "" service and each API service), /readyz and /healthz follow it; each change is logged
    once (not a line per failed call). The health service ``liveness`` stays SERVING regardless."""

    def __init__(self, health_servicer: Any) -> None:
        self.health = health_servicer
        self.redis_ok = True
        self.shards_ok = True
        self.draining = False

    @property
    def ready(self) -> bool:
        return self.redis_ok and not self.draining

    async def redis(self, ok: bool, why: BaseException | None = None) -> None:
        if ok == self.redis_ok:
            return
        self.redis_ok = ok
        if ok:
            log.warning("Redis answers again: SERVING")
        else:
            log.warning("Redis does not answer (%s): NOT_SERVING until it does", type(why).__name__)
        await set_serving(self.health, self.ready)

    async def drain(self) -> None:
        """Stop being ready (load balancers and probes take this gateway out) while still serving."""
        self.draining = True
        await set_serving(self.health, False)

    def shards(self, ok: bool, why: BaseException | None = None) -> None:
        if ok != self.shards_ok:
            self.shards_ok = ok
            log.warning("shards answer again" if ok else f"a shard does not answer ({why!r})")


async def _monitor(api: PlayerAPI, ready: Readiness) -> None:
    """Each second: ping Redis (readiness), read the cluster's shard set (a drained shard is routed
    around within a second) and ping every shard (wakes restarted shards and their timers)."""
    while True:
        try:
            async with asyncio.timeout(2.0):
                await api.store.ping()
                await api.router.refresh()
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


def listen_socket(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    """The HTTP port's listening socket; with ``reuse_port`` several gateway processes share it (the
    kernel spreads connections over them)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # (asyncio sets TCP_NODELAY only then)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(False)
    return sock


def ports_free(host: str, *ports: int) -> str | None:
    """Why a port we are to listen on is taken (a clear error before anything starts), or None."""
    for port in ports:
        if port == 0:
            continue
        try:
            listen_socket(host, port, reuse_port=False).close()
        except OSError as exc:
            return f"{host}:{port} cannot be used ({exc.strerror or exc}): is another server running there?"
    return None


class Gateways:
    """The extra gateway processes of ``serve --gateways N``: each joins the Ray cluster as a driver,
    opens its own Redis connections and serves the same gRPC and HTTP ports (SO_REUSEPORT). They die
    with this process (PDEATHSIG); one that exits alone is started again, at most 5 times a minute."""

    def __init__(self, count: int, env: dict[str, str]) -> None:
        self.count = count
        self.env = env
        self.procs: list[subprocess.Popen[bytes]] = []
        self._starts: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def _start_one(self) -> subprocess.Popen[bytes]:
        from services.cluster import spawn

        self._starts = [t for t in self._starts if time.monotonic() - t < 60] + [time.monotonic()]
        return spawn([sys.executable, "-m", "gateway.app"], env=self.env, quiet=False)

    def start(self) -> None:
        self.procs = [self._start_one() for _ in range(self.count)]
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            for i, proc in enumerate(self.procs):
                if proc.poll() is None:
                    continue
                if len(self._starts) >= 5 and time.monotonic() - self._starts[-5] < 60:
                    continue  # restarting too often: leave it down (the others serve the ports)
                log.warning("gateway process %d exited (code %s): starting it again", proc.pid, proc.returncode)
                self.procs[i] = self._start_one()

    def signal_stop(self) -> None:
        """SIGTERM to each (they drain as this process does, side by side); no restarts from now."""
        if self._task is not None:
            self._task.cancel()
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)

    async def stop(self) -> None:
        self.signal_stop()
        for proc in self.procs:
            try:
                await asyncio.to_thread(proc.wait, DRAIN_S + STOP_GRACE_S + 10)
            except subprocess.TimeoutExpired:
                proc.kill()
                await asyncio.to_thread(proc.wait)


async def run_gateway(cluster: Embedded, *, host: str, grpc_port: int, http_port: int, reuse_port: bool,
                      announce: Callable[[int, int], None] | None = None,
                      on_ready: Callable[[int, int], Awaitable[None]] | None = None,
                      on_stop: Callable[[], None] | None = None) -> None:
    """One gateway process: the player API, the gRPC server and the HTTP app, until SIGINT / SIGTERM,
    then a graceful stop: NOT_SERVING while still serving for ``DRAIN_S``, then calls in flight get
    ``STOP_GRACE_S`` to finish. ``announce(grpc_port, http_port)`` prints where to connect;
    ``on_ready`` runs once both listen, ``on_stop`` when the stop signal comes."""
    from gateway.http import build_app, uvicorn_config, uvicorn_server

    if tracing.setup("archipelago-gateway"):
        tracing.instrument_grpc_server()
    PROCESS_GC.install()
    http_sock = listen_socket(host, http_port, reuse_port=reuse_port)
    http_port = http_sock.getsockname()[1]
    public_url = os.environ.get("ARCHIPELAGO_PUBLIC_URL") or f"http://{host}:{http_port}"
    state: dict[str, Any] = {}
    ready_event = asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        api = await start_api(cluster, public_url)
        health_servicer = health.aio.HealthServicer()
        server, port = await build_server(api, f"{host}:{grpc_port}", health_servicer, reuse_port=reuse_port)
        await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        ready = Readiness(health_servicer)
        state["ready"], state["grpc_port"] = ready, port
        monitor = asyncio.get_running_loop().create_task(_monitor(api, ready))
        shard_metrics = ShardCollector(api.router)
        shard_metrics.attach(REGISTRY)  # (with the gateway's process_* and event-loop lag)
        state["api"], state["metrics"] = api, shard_metrics
        app.state.api = api
        gctune.tune()  # (what start-up made, out of the collector's way)
        if announce is not None:
            announce(port, http_port)
        ready_event.set()
        try:
            yield
        finally:
            monitor.cancel()
            api.end_streams()  # (streams never end by themselves: the grace is for unary calls)
            await server.stop(grace=STOP_GRACE_S)
            shard_metrics.detach()
            await api.stop()

    async def health_report() -> dict[str, Any]:
        if not state["ready"].redis_ok:
            raise Unavailable("Redis does not answer")
        return {"gateway": {"pid": os.getpid()}, "shards": await state["api"].router.ping_all()}

    def is_ready() -> bool:
        return "ready" in state and bool(state["ready"].ready)

    async def refresh(budget_s: float) -> None:
        await state["metrics"].refresh(budget_s)

    web = uvicorn_server(uvicorn_config(build_app(health_report, refresh, lifespan, host=host, ready=is_ready),
                                        host=host, port=http_port))
    await _serve_until_stopped(web, http_sock, http_port, state, ready_event, on_ready, on_stop)


async def _serve_until_stopped(web: Any, http_sock: socket.socket, http_port: int, state: dict[str, Any],
                               ready_event: asyncio.Event, on_ready: Callable[[int, int], Awaitable[None]] | None,
                               on_stop: Callable[[], None] | None) -> None:
    """:func:`run_gateway`'s serving: the HTTP server (``web``; its lifespan starts the rest, filling
    ``state`` and setting ``ready_event``) until SIGINT / SIGTERM, then the drain (SIGTERM) and the stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals: list[signal.Signals] = []

    def stop_on(sig: signal.Signals) -> None:
        signals.append(sig)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop_on, sig)
    web_task = loop.create_task(web.serve(sockets=[http_sock]))
    stopper = loop.create_task(stop.wait())
    readied = loop.create_task(ready_event.wait())
    await asyncio.wait({web_task, stopper, readied}, return_when=asyncio.FIRST_COMPLETED)
    if readied.done() and not web_task.done() and on_ready is not None:
        await on_ready(state["grpc_port"], http_port)
    await asyncio.wait({web_task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if on_stop is not None:
        on_stop()
    if signals == [signal.SIGTERM] and DRAIN_S > 0 and not web_task.done() and "ready" in state:
        # Draining (SIGTERM: an orchestrator's stop; Ctrl-C stops at once): NOT_SERVING — readiness
        # probes and load balancers stop sending new players here — while every call still works,
        # for DRAIN_S or until a second signal; then stop.
        await state["ready"].drain()
        print(f"draining: NOT_SERVING for {DRAIN_S:g} s, then stopping (signal again to stop now)", flush=True)
        stop.clear()
        again = loop.create_task(stop.wait())
        await asyncio.wait({web_task, again}, timeout=DRAIN_S, return_when=asyncio.FIRST_COMPLETED)
        again.cancel()
    if "api" in state:
        state["api"].end_streams()  # both doors' streams end now, told to resume elsewhere
    web.should_exit = True
    await web_task
    stopper.cancel()
    readied.cancel()
    http_sock.close()


async def serve(*, host: str, grpc_port: int, http_port: int, shards: int, data_dir: Path,
                gateways: int = 1) -> None:
    taken = ports_free(host, grpc_port, http_port)
    if taken:
        print(f"error: {taken}", file=sys.stderr, flush=True)
        raise SystemExit(1)
    try:  # (from a thread that lives as long as the process: see services/cluster.py on PDEATHSIG)
        cluster = await asyncio.to_thread(start_embedded, shards=shards, data_dir=data_dir)
    except DataDirInUse as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    extra: Gateways | None = None

    def announce(port: int, web_port: int) -> None:
        public_url = os.environ.get("ARCHIPELAGO_PUBLIC_URL") or f"http://{host}:{web_port}"
        print(f"gRPC  listening on {host}:{port}  (Lobby, Game, Community, health, reflection)", flush=True)
        print(f"HTTP  listening on http://{host}:{web_port}  (JSON API /v1/…, WebSocket /v1/Game/Watch, "
              "MCP /mcp, /healthz, /metrics)", flush=True)
        if gateways > 1:
            print(f"gateways: {gateways} processes share both ports (SO_REUSEPORT)", flush=True)
        if not admin.off_reason(admin.token_from_env()):
            print("admin: /admin/ on the HTTP port (`archipelago admin …`, token ARCHIPELAGO_ADMIN_TOKEN)", flush=True)
        print(f"play: {public_url}/  (in a browser)", flush=True)
        print(f"try:  {client_command()} create salvo --server {host}:{port}", flush=True)

    async def start_others(port: int, web_port: int) -> None:
        nonlocal extra
        if gateways > 1:
            import ray

            env = dict(os.environ, RAY_ADDRESS=ray.get_runtime_context().gcs_address,
                       REDIS_URL=cluster.redis_url, ARCHIPELAGO_GATEWAY_PORTS=f"{host},{port},{web_port}",
                       ARCHIPELAGO_GATEWAY_CLUSTER=json.dumps([cluster.shards, cluster.namespace, cluster.prefix]))
            extra = Gateways(gateways - 1, env)
            extra.start()

    try:
        await run_gateway(cluster, host=host, grpc_port=grpc_port, http_port=http_port, reuse_port=gateways > 1,
                          announce=announce, on_ready=start_others,
                          on_stop=lambda: extra.signal_stop() if extra is not None else None)
    finally:
        print("shutting down", flush=True)
        if extra is not None:
            await extra.stop()
        await asyncio.to_thread(cluster.stop)


async def _extra_gateway() -> None:
    """An extra gateway process of ``serve --gateways N`` (started by :class:`Gateways`)."""
    from services.cluster import init_ray

    host, grpc_port, http_port = os.environ["ARCHIPELAGO_GATEWAY_PORTS"].split(",")
    shards, namespace, prefix = json.loads(os.environ["ARCHIPELAGO_GATEWAY_CLUSTER"])
    cluster = Embedded(redis_url=os.environ["REDIS_URL"], shards=shards, namespace=namespace, prefix=prefix)
    await asyncio.to_thread(init_ray, os.environ["RAY_ADDRESS"], namespace=namespace)
    try:
        await run_gateway(cluster, host=host, grpc_port=int(grpc_port), http_port=int(http_port), reuse_port=True)
    finally:
        import ray

        ray.shutdown()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s gateway[%(process)d] %(levelname)s %(message)s")
    asyncio.run(_extra_gateway())
