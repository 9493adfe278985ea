"""The MCP door (A90): a player's personal AI agent plays its seat through the Model Context Protocol.

A third door over the same player API, on the gateway's HTTP port at ``/mcp`` (streamable HTTP,
stateless: any gateway answers any call, no session to keep). Every HTTP request to ``/mcp`` is
checked before the MCP layer sees it (:class:`Guard`): its ``Host`` (and ``Origin``, when sent) must
name this server — the public URL's host, ``localhost`` / ``127.0.0.1`` / ``[::1]`` on any port, or
one of ``ARCHIPELAGO_ALLOWED_HOSTS`` (DNS-rebinding protection; :func:`host_allowed`) — and it must
carry ``Authorization: Bearer <agent token>``, a live token its player made with
``CreateAgentToken`` (any door, or the web client's Standing orders tab) and can revoke at once;
anything else is answered as the JSON door answers it (401 with ``WWW-Authenticate: Bearer``, 403,
413: the error table's JSON body). Every tool goes through the same handlers as the gRPC and JSON
doors (:mod:`gateway.rpc`), so the agent has exactly its player's view and powers and what it does
looks to everyone else exactly like the player's own actions; each mutating tool takes the doors'
optional ``idempotency_key``. While an agent calls, its player counts as connected (A17), as a player
with the game open.

Answers are made for a language model's context: one compact JSON text per answer (no
``structuredContent`` copy, no indentation), nothing repeated between tools of one round of play.
The door holds no game's shapes: each game's part of ``get_view``, its ``legal_moves``, its events
and what its rules text adds come from its shaper in :mod:`gateway.agent_views` (one table by kind;
e.g. Archipelago's tiles everywhere in the one shape orders take, ``{"x": 3, "y": 4}``; Arcmage's
table with card faces and each legal action in words). Games of rounds are played with
``submit_orders`` and ``wait_for_next_round``; games of turns (a shaper's ``turns``) with ``act`` /
``pass_priority`` (one ActRequest member named after the kind) and ``wait_for_my_decision``, which
returns when the caller's seat is among the step's players, built on the same Watch stream. Errors are MCP tool errors
(``is_error``) whose text names the code, the field, the rule id, the reason and whether a retry can
help; nothing a bad argument does changes the game. A resource read that fails is a JSON-RPC error
carrying the same four fields as ``data``.

This module is the door itself (hosts, :class:`Guard`, tracing, :class:`McpDoor`); the tools are in
:mod:`gateway.mcp_tools` (one table), the long polls in :mod:`gateway.mcp_wait`, the answers' shapes and
errors in :mod:`gateway.mcp_answers`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from engine.errors import GameError, PermissionDenied, Unauthenticated
from gateway import errors
from gateway.agent_views import SHAPERS
from gateway.api import AGENT_PREFIX, Caller, PlayerAPI, bearer
from gateway.limits import TooLarge
from gateway.mcp_answers import compact_step, compact_view, happened, rules_text, tool_error
from gateway.mcp_tools import register
from gateway.metrics import count_tools
from gateway.web import MAX_BODY
from services import tracing

ALLOWED_HOSTS_ENV = "ARCHIPELAGO_ALLOWED_HOSTS"
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
SCOPE_KEY = "archipelago.agent"  # the guard's (token, caller) in the request's ASGI scope

ROUND_GAMES = ", ".join(g.title for g in SHAPERS.values() if not g.turns)
TURN_GAMES = ", ".join(g.title for g in SHAPERS.values() if g.turns)
INSTRUCTIONS = f"""\
You play one seat of a game ({ROUND_GAMES}, {TURN_GAMES}) for the player who gave you this token.
Start with `rules` (the rules in brief, the exact JSON of orders and actions), then loop.
Games of rounds ({ROUND_GAMES}): `get_view` (what you know now), `legal_moves` (what you may
do), `submit_orders` (for the round `get_view` shows; resubmitting replaces your orders),
`wait_for_next_round` (what happened: the closed round's events, chat, trades). Chat and trades
(`chat`, `offer_trade`, `answer_offer`, `bank_trade`) act at once. Tiles are always {{"x": column,
"y": row}}, in answers and in orders.
Games of turns ({TURN_GAMES}): `wait_for_my_decision` (until you may act; what happened since the
seq you pass), `legal_moves` (every legal action with what it does), `act` with one of them (or
`pass_priority`); `get_view` for the whole table.
Every tool that changes something takes an optional idempotency_key: retry with the same key and it
is applied once. A tool error names the rule it broke and whether retrying can help. You see only
what your player may see."""



# ---------------------------------------------------------------------------------- hosts (DNS rebinding)
def _split_host(value: str) -> tuple[str, str]:
    """(hostname, port) of a Host header value or an allowed-hosts entry, lower case ("" port: none)."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6]:port
        end = value.find("]")
        return value[:end + 1], value[end + 2:] if end >= 0 and value[end + 1:end + 2] == ":" else ""
    host, _, port = value.partition(":")
    return host, port


def allowed_hosts(public_url: str, extra: str = "") -> list[str]:
    """The hosts ``/mcp`` answers to: the loopback names, the public URL's host (any port) and the
    comma-separated ``extra`` entries (``ARCHIPELAGO_ALLOWED_HOSTS``: ``name`` for any port,
    ``name:port`` for one, ``*`` for every host)."""
    hosts = list(LOOPBACK)
    public = urlsplit(public_url).hostname
    if public:
        hosts.append(f"[{public}]" if ":" in public else public)
    hosts += [h.strip().lower() for h in extra.split(",") if h.strip()]
    return hosts


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    """Whether a ``Host`` header value names one of ``allowed`` (:func:`allowed_hosts`)."""
    if not host:
        return False
    name, port = _split_host(host)
    for entry in allowed:
        if entry == "*":
            return True
        want, want_port = _split_host(entry)
        if want == name and (not want_port or want_port == port):
            return True
    return False


class Guard:
    """Pure ASGI wrapper of the MCP app: every HTTP request to ``/mcp`` is checked before the MCP layer
    reads it — Host and Origin (:func:`host_allowed`), the declared body size, then the agent token
    (every method: ``tools/list`` needs a token as ``tools/call`` does). A refusal is the JSON door's
    answer: the error table's status and ``{"error": {...}}`` body, with ``WWW-Authenticate: Bearer``
    on a 401. The token and its caller go to the tools in the request's scope (no second lookup)."""

    def __init__(self, door: McpDoor, app: ASGIApp) -> None:
        self.door = door
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            self.door.check_host(headers.get("host"), headers.get("origin"))
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY:
                raise TooLarge(MAX_BODY, "a request body")
            api, token, who = await self.door.authenticate(headers.get("authorization"))
        except Exception as exc:
            await self.refuse(exc, bool(headers.get("authorization")))(scope, receive, send)
            return
        scope[SCOPE_KEY] = (api, token, who)
        await self.app(scope, receive, send)

    @staticmethod
    def refuse(exc: BaseException, had_token: bool) -> JSONResponse:
        err = errors.as_game_error(exc)
        body = errors.to_dict(err)
        extra = dict(errors.http_headers(err))
        if isinstance(err, Unauthenticated):
            # RFC 6750: no credentials: the bare challenge; a bad token: error="invalid_token"
            extra["www-authenticate"] = ('Bearer realm="archipelago", error="invalid_token"' if had_token
                                         else 'Bearer realm="archipelago"')
        return JSONResponse({"error": body}, status_code=body["http_status"], headers=extra)




class TracedServer(MCPServer[Any]):
    """The MCP server whose every tool call is a SERVER span of the MCP door (named after the tool, or
    ``unknown``), continuing a ``traceparent`` the HTTP request carries; a refused call's span has
    the error's code (:func:`services.tracing.failed`: a tool's refusal, its game error's; arguments
    that do not fit the tool, or no such tool, ``order/invalid``)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
                        ) -> Any:
        if not tracing.enabled():
            return await super().call_tool(name, arguments, context)
        try:
            headers = getattr(context.request_context.request, "headers", None) if context is not None else None
        except (AttributeError, ValueError):  # (no HTTP request: an in-process client)
            headers = None
        tool = name if self._tool_manager.get_tool(name) is not None else "unknown"
        with tracing.server_span(f"mcp {tool}", "mcp", headers, **{"mcp.tool": tool}) as span:
            try:
                return await super().call_tool(name, arguments, context)
            except Exception as exc:
                cause = exc.__context__ if isinstance(exc, ToolError) else exc
                code = (cause.code if isinstance(cause, GameError) else "order/invalid" if isinstance(exc, ToolError)
                        else errors.as_game_error(exc).code)
                tracing.failed(code, span)
                raise


class McpDoor:
    """The MCP server and its route; ``api()`` gives the player API of the running gateway.

    ``allowed_extra``: more hosts to answer to (:func:`allowed_hosts`; default the environment's
    ``ARCHIPELAGO_ALLOWED_HOSTS``); the public URL's host is read from the player API's config."""

    def __init__(self, api: Callable[[], PlayerAPI], host: str = "127.0.0.1", allowed_extra: str | None = None) -> None:
        self.api = api
        self.allowed_extra = os.environ.get(ALLOWED_HOSTS_ENV, "") if allowed_extra is None else allowed_extra
        self._allowed: tuple[str, list[str]] = ("", [])
        self.server: MCPServer[Any] = TracedServer(name="archipelago", title="Archipelago game cluster",
                                                   instructions=INSTRUCTIONS)
        # The Host/Origin check is the guard's (with the public URL); the library's own would refuse it.
        sub = self.server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host,
            max_request_body_size=MAX_BODY,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self.routes: list[BaseRoute] = [Route(r.path, Guard(self, r.app)) if isinstance(r, Route) else r
                                        for r in sub.routes]
        self.tools = register(self)  # the tools (gateway.mcp_tools) and resources
        count_tools(self.server._tool_manager)  # archipelago_requests_total{door="mcp", method=<tool>}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield

    # ------------------------------------------------------------------ plumbing
    def hosts(self) -> list[str]:
        public_url = self.api().config.public_url
        if self._allowed[0] != public_url:
            self._allowed = (public_url, allowed_hosts(public_url, self.allowed_extra))
        return self._allowed[1]

    def check_host(self, host: str | None, origin: str | None) -> None:
        """DNS-rebinding protection: PermissionDenied unless Host (and Origin, if sent) name this server."""
        hosts = self.hosts()
        if not host_allowed(host, hosts):
            raise PermissionDenied(f"this server does not answer to Host {str(host)[:80]!r}: use the MCP URL of "
                                   f"your agent token, or add the host to {ALLOWED_HOSTS_ENV}", field="host",
                                   rule="A90")
        if origin and not host_allowed(urlsplit(origin).netloc, hosts):
            raise PermissionDenied(f"requests from the web origin {origin[:80]!r} are refused", field="origin",
                                   rule="A90")

    async def authenticate(self, authorization: str | None) -> tuple[PlayerAPI, str, Caller]:
        token = bearer(authorization)
        if not token:
            raise Unauthenticated("send 'Authorization: Bearer <agent token>' (CreateAgentToken makes one)",
                                  field="authorization", rule="A90")
        if not token.startswith(AGENT_PREFIX):
            raise Unauthenticated("this door takes an agent token (agt_…), never the player's own secret",
                                  field="authorization", rule="A90")
        api = self.api()
        who = await api.auth(token)
        await api.hold_presence(who)
        return api, token, who

    async def caller(self, ctx: Context) -> tuple[PlayerAPI, str, Caller]:
        """(player API, agent token, its caller) of a tool call: the guard's, else from its headers."""
        try:
            request = ctx.request_context.request
        except ValueError:  # (no request: an in-process client)
            request = None
        scope = getattr(request, "scope", None) or {}
        if SCOPE_KEY in scope:  # checked by the guard for this very request
            found: tuple[PlayerAPI, str, Caller] = scope[SCOPE_KEY]
            return found
        headers = ctx.headers or {}
        return await self.authenticate(headers.get("authorization") or headers.get("Authorization"))

    @contextlib.asynccontextmanager
    async def calling(self, ctx: Context) -> AsyncIterator[tuple[PlayerAPI, str, Caller]]:
        """A tool's call: its (player API, agent token, caller), and every failure in the block (the
        caller's included) a tool error naming its rule."""
        try:
            yield await self.caller(ctx)
        except ToolError:
            raise
        except Exception as exc:
            raise tool_error(exc) from None


__all__ = ["Guard", "McpDoor", "allowed_hosts", "compact_step", "compact_view", "happened", "host_allowed",
           "rules_text", "tool_error"]
