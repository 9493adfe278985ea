"""The gateway's HTTP app: the JSON + WebSocket door, the MCP door, health, Prometheus metrics and the web
client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway import errors, web, webclient
from gateway.api import PlayerAPI
from gateway.limits import PEER
from gateway.mcp_door import McpDoor

HEALTH_TIMEOUT_S = 3.0


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


def build_app(health: Callable[[], Awaitable[dict[str, Any]]],
              before_scrape: Callable[[], Awaitable[None]] | None = None,
              lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
              host: str = "127.0.0.1") -> Starlette:
    """``before_scrape`` runs before each /metrics answer (it fetches the shards' samples);
    ``lifespan`` owns the resources the app uses and puts the player API in ``app.state.api`` (or
    the caller sets it). The app's own lifespan also runs the MCP door's session manager; ``host``
    is the address served (on a loopback address the MCP door refuses other Host headers)."""
    async def healthz(_request: Request) -> Response:
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT_S):
                return JSONResponse({"status": "ok", **await health()})
        except Exception as exc:  # report, don't crash (and never hang: a probe wants an answer)
            err = errors.as_game_error(exc)
            return JSONResponse({"status": "unavailable", "error": err.reason}, status_code=503)

    async def metrics(_request: Request) -> Response:
        if before_scrape is not None:
            await before_scrape()
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

    routes: list[Any] = [Route("/healthz", healthz), Route("/metrics", metrics)]
    routes += web.routes() + webclient.routes() + door.routes
    app = Starlette(routes=routes, lifespan=run, middleware=[Middleware(PeerAddress)])
    return app


__all__ = ["build_app"]
