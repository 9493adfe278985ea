"""The gateway's HTTP app: the JSON + WebSocket door, health, Prometheus metrics and the web client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway import web, webclient


def build_app(health: Callable[[], Awaitable[dict[str, Any]]],
              before_scrape: Callable[[], Awaitable[None]] | None = None,
              lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None) -> Starlette:
    """``before_scrape`` runs before each /metrics answer (it fetches the shards' samples);
    ``lifespan`` owns the resources the app uses and puts the player API in ``app.state.api``."""
    async def healthz(_request: Request) -> Response:
        try:
            return JSONResponse({"status": "ok", **await health()})
        except Exception as exc:  # report, don't crash
            return JSONResponse({"status": "unavailable", "error": repr(exc)}, status_code=503)

    async def metrics(_request: Request) -> Response:
        if before_scrape is not None:
            await before_scrape()
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    routes: list[Any] = [Route("/healthz", healthz), Route("/metrics", metrics)]
    routes += web.routes() + webclient.routes()
    return Starlette(routes=routes, lifespan=lifespan)


__all__ = ["build_app"]
