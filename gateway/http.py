"""The gateway's HTTP app: the JSON + WebSocket door, the MCP door, health, Prometheus metrics and the web
client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

from gateway import admin, errors, notify_api, web, webclient
from gateway.api import PlayerAPI
from gateway.limits import PEER
from gateway.mcp_door import McpDoor
from gateway.security import SecurityHeaders, not_found

HEALTH_TIMEOUT_S = 3.0
HEADER_TIMEOUT_S = 10.0  # a connection must send a request's headers within this
IDLE_TIMEOUT_S = 30.0  # a kept-alive connection with no request in flight closes after this
MAX_CONNECTIONS = 10_000  # beyond this many connections and tasks, uvicorn answers 503


class CoalescedWrites(asyncio.Transport):
    """A connection's transport whose writes within one event-loop step leave as one ``send``.

    uvicorn's h11 protocol writes a response in pieces (status line and headers, then the body, then
    an empty end of message); with Nagle's algorithm the body then waited for the client's delayed
    ACK of the headers (~40 ms on Linux) on every request of a kept-alive connection. Writes are
    gathered here and handed to the real transport once, at the end of the step that made them
    (``loop.call_soon``): a JSON answer leaves as one segment, and a streamed one (MCP's SSE, a
    static file, WebSocket frames) is never held longer than that step. Closing writes what is
    gathered first. Everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.inner = transport
        self.loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self.loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self.inner.is_closing():
                self.inner.write(data)

    def close(self) -> None:
        self.flush()
        self.inner.close()

    def abort(self) -> None:
        self._pending.clear()
        self.inner.abort()

    def write_eof(self) -> None:
        self.flush()
        self.inner.write_eof()

    def can_write_eof(self) -> bool:
        return self.inner.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self.inner.get_write_buffer_size() + sum(len(d) for d in self._pending)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self.inner.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.inner.set_write_buffer_limits(high, low)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.inner.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self.inner.is_closing()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.inner.get_protocol()

    def is_reading(self) -> bool:
        return self.inner.is_reading()

    def pause_reading(self) -> None:
        self.inner.pause_reading()

    def resume_reading(self) -> None:
        self.inner.resume_reading()


def no_delay(transport: asyncio.BaseTransport) -> None:
    """TCP_NODELAY on a connection's socket. asyncio sets it only on sockets made with
    ``proto=IPPROTO_TCP``; a listening socket made as ``socket.socket(AF_INET, SOCK_STREAM)`` (proto 0:
    ours, uvicorn's own, the tests') hands out connections with Nagle's algorithm on, so a write
    that follows another one waited for the client's delayed ACK (~40 ms)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a header timeout: a connection (new, or kept alive between
    requests) that does not complete a request's headers within ``header_timeout_s`` is closed —
    uvicorn has only an idle timeout, so slow-header clients held connections for minutes. Upgraded
    connections (WebSocket) are the WebSocket protocol's from then on and are left alone.

    Every connection has TCP_NODELAY (:func:`no_delay`) and its writes coalesced
    (:class:`CoalescedWrites`): a response leaves in one write, with no delayed-ACK wait."""

    header_timeout_s = HEADER_TIMEOUT_S

    def connection_made(self, transport: Any) -> None:
        no_delay(transport)
        super().connection_made(CoalescedWrites(transport, self.loop))  # (the WebSocket protocol inherits it)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():
            self._arm_header_timer()  # (uvicorn's idle timer stops at the first byte of a request)
        super().data_received(data)
        if not self._waiting_for_headers() and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.get_protocol() is self and self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)


class LinkTokens(logging.Filter):
    """uvicorn's access log (off at the gateway's level, on if an operator lowers it) never shows the
    tokens of the mail links (``/notify/confirm/<token>``, ``/notify/unsubscribe/<token>``)."""

    PATH = re.compile(r"(/notify/(?:confirm|unsubscribe)/)[^/?\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self.PATH.sub(r"\1…", a) if isinstance(a, str) else a for a in record.args)
        return True


logging.getLogger("uvicorn.access").addFilter(LinkTokens())


def uvicorn_config(app: Any, *, host: str = "127.0.0.1", port: int = 0,
                   header_timeout_s: float = HEADER_TIMEOUT_S, idle_timeout_s: float = IDLE_TIMEOUT_S) -> Any:
    """The one way the gateway's HTTP port is served: wsproto WebSockets (a message over the request
    size limit closes the socket with 1009 and a reason naming the limit), header and idle timeouts,
    a bound on connections."""
    import uvicorn

    from gateway.api import MAX_REQUEST_BYTES

    protocol = type("GuardedH11Timed", (GuardedH11,), {"header_timeout_s": header_timeout_s})
    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", ws="wsproto",
                          ws_max_size=MAX_REQUEST_BYTES, http=protocol, timeout_keep_alive=int(idle_timeout_s),
                          limit_concurrency=MAX_CONNECTIONS)


def uvicorn_server(config: Any) -> Any:
    """A uvicorn server that leaves SIGINT and SIGTERM to its owner: uvicorn would stop at once on
    SIGTERM, where the gateway first drains (NOT_SERVING while serving) and then tells it to exit."""
    import uvicorn

    class OwnedSignals(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return OwnedSignals(config)


class PeerAddress:
    """Pure ASGI middleware: the client address of every HTTP and WebSocket request (the JSON door,
    the MCP door) in :data:`gateway.limits.PEER`, for the per-address limits."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            PEER.set(str(client[0]) if client else "")
        await self.app(scope, receive, send)


#: how long a /metrics answer waits for the shards' samples at most (a shard that has not answered by
#: then is down: archipelago_shard_up 0); less when the scraper's own timeout is shorter
SCRAPE_BUDGET_S = 5.0


def scrape_budget(header: str | None) -> float:
    """Seconds a scrape may wait for the shards: ``SCRAPE_BUDGET_S``, or less when Prometheus says (its
    ``X-Prometheus-Scrape-Timeout-Seconds`` header) that it gives up sooner — then 80 % of that, so the
    answer, with a silent shard marked down, still reaches it in time (a scrape that times out loses
    every figure of the cluster, not only the silent shard's)."""
    try:
        scraper = float(header) if header else 0.0
    except ValueError:
        scraper = 0.0
    if not math.isfinite(scraper) or scraper <= 0:
        return SCRAPE_BUDGET_S
    return max(0.1, min(SCRAPE_BUDGET_S, scraper * 0.8))


def build_app(health: Callable[[], Awaitable[dict[str, Any]]],
              before_scrape: Callable[[float], Awaitable[None]] | None = None,
              lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
              host: str = "127.0.0.1", ready: Callable[[], bool] | None = None,
              admin_token: str | None = None) -> Starlette:
    """``/healthz`` is the cluster's health (``health()``: Redis and every shard), ``/readyz`` this gateway's
    readiness (``ready()``: it can serve and is not draining — no shard is asked), ``/livez`` that its process
    answers at all. ``before_scrape(budget_s)`` runs before each /metrics answer (it fetches the shards'
    samples, waiting at most ``budget_s``: :func:`scrape_budget`); ``lifespan`` owns the resources the app uses
    and puts the player API in ``app.state.api`` (or the caller sets it). The app's own lifespan also runs the
    MCP door's session manager; ``host`` is the address served (the MCP door's own Host check accepts it,
    loopback names, the public URL's host and ``ARCHIPELAGO_ALLOWED_HOSTS``:
    :func:`gateway.mcp_door.allowed_hosts`); ``admin_token`` opens the operators' door under /admin/
    (:mod:`gateway.admin`; None: read once from ``ARCHIPELAGO_ADMIN_TOKEN``)."""
    async def healthz(_request: Request) -> Response:
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT_S):
                return JSONResponse({"status": "ok", **await health()})
        except Exception as exc:  # report, don't crash (and never hang: a probe wants an answer)
            err = errors.as_game_error(exc)
            return JSONResponse({"status": "unavailable", "error": err.reason}, status_code=503)

    async def readyz(_request: Request) -> Response:
        if ready is None or ready():
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "not ready"}, status_code=503)

    async def livez(_request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def metrics(request: Request) -> Response:
        if before_scrape is not None:
            await before_scrape(scrape_budget(request.headers.get("x-prometheus-scrape-timeout-seconds")))
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    app: Starlette | None = None

    def api() -> PlayerAPI:
        assert app is not None
        player_api: PlayerAPI = app.state.api
        return player_api

    door = McpDoor(api, host=host)

    @contextlib.asynccontextmanager
    async def run(the_app: Starlette) -> AsyncIterator[None]:
        async with door.running():
            if lifespan is None:
                yield
            else:
                async with lifespan(the_app):
                    yield

    routes: list[Any] = [Route("/healthz", healthz), Route("/readyz", readyz), Route("/livez", livez),
                         Route("/metrics", metrics)]
    async def game_known(game_id: str) -> bool:
        return await api().store.summary(game_id) is not None

    routes += web.routes() + webclient.routes(game_known) + door.routes
    routes += admin.routes(api, admin.token_from_env() if admin_token is None else admin_token)
    routes += notify_api.routes(lambda _request: api().notify)  # the links in notification mails
    # every HTTP answer carries the security headers; an unknown path gets the not-found page (gateway.security)
    app = Starlette(routes=routes, lifespan=run, middleware=[Middleware(PeerAddress), Middleware(SecurityHeaders)],
                    exception_handlers={404: not_found})
    return app


__all__ = ["build_app", "uvicorn_config"]
