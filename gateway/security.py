"""The web door's defences and its not-found page.

The page keeps player secrets in ``localStorage``, so every HTTP answer of the gateway (the page, its
static files, the rules pages, the JSON API, the not-found page) carries:

- ``Content-Security-Policy``: scripts, styles, connections and everything else only from the gateway
  itself (``'self'``; connections also ``ws:``/``wss:`` to the same host, spelled out for browsers
  whose ``'self'`` does not cover WebSockets), images also as ``data:``, no inline script or style
  element, no plugins (``object-src 'none'``), no ``<base>``, forms only to the gateway, and no
  framing (``frame-ancestors 'none'``);
- ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` (framing, for browsers before CSP
  2) and ``Referrer-Policy: no-referrer`` (an invite or rejoin link is never sent on).

A header a route set itself is left as it is. WebSocket handshakes are left alone (their answer is no
page). :func:`not_found` answers every path no route knows: an HTML page with a link home for a
browser (``Accept: text/html``), the JSON error body of the API (``lookup/not_found``) for anything
else; the JSON door's own paths under ``/v1/`` answer with that body themselves.
"""

from __future__ import annotations

import html
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from engine.errors import NotFound
from gateway import errors

#: a Host header that may be written into the policy (a name or an IP, an optional port)
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$")

_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
           "font-src 'self'; connect-src {connect}; manifest-src 'self'; worker-src 'self'; object-src 'none'; "
           "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def content_security_policy(host: str | None) -> str:
    """The policy for a request to ``host`` (its Host header): ``connect-src 'self'`` plus the same
    host's ``ws:``/``wss:`` when the header is a plain host name (anything else: ``'self'`` only)."""
    connect = "'self'"
    if host and _HOST.match(host):
        connect += f" ws://{host} wss://{host}"
    return _POLICY.format(connect=connect)


def security_headers(host: str | None) -> dict[str, str]:
    """Every header :class:`SecurityHeaders` adds, for a request to ``host``."""
    return {"content-security-policy": content_security_policy(host), "x-content-type-options": "nosniff",
            "x-frame-options": "DENY", "referrer-policy": "no-referrer"}


class SecurityHeaders:
    """Pure ASGI middleware: :func:`security_headers` on every HTTP response (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers") or () if k == b"host"), None)
        extra = [(k.encode(), v.encode()) for k, v in security_headers(host).items()]

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers") or ()}
                message = dict(message)
                message["headers"] = [*(message.get("headers") or ()), *(h for h in extra if h[0] not in have)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


_PAGE = """<!doctype html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Page not found — Archipelago</title>
<link rel="icon" href="/static/img/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/css/rules.css">
</head>
<body>
<main class="rules not-found" data-testid="not-found">
<h1>Page not found</h1>
<p>There is no page at <code>{path}</code>. A game's own link looks like <code>/game/…</code> or
<code>/join/…</code>; the rules are at <a href="/rules/archipelago">Archipelago</a>,
<a href="/rules/salvo">Salvo</a> and <a href="/rules/arcmage">Arcmage</a>.</p>
<p><a href="/" data-testid="home-link">⚓ Go to the home page</a></p>
</main>
</body>
</html>
"""


def not_found_page(path: str) -> str:
    """The not-found page for ``path`` (escaped, clipped)."""
    shown = path if len(path) <= 80 else path[:79] + "…"
    return _PAGE.format(path=html.escape(shown))


async def not_found(request: Request, _exc: Exception) -> Response:
    """The 404 answer (module docstring): HTML for a browser, the API's JSON error body otherwise."""
    path = request.url.path
    if "text/html" in request.headers.get("accept", "") and not path.startswith("/v1/"):
        return HTMLResponse(not_found_page(path), status_code=404, headers={"cache-control": "no-cache"})
    body = errors.to_dict(NotFound(f"no page or rpc at {path[:60]!r}", field="path"))
    return JSONResponse({"error": body}, status_code=404)


__all__ = ["SecurityHeaders", "content_security_policy", "not_found", "not_found_page", "security_headers"]
