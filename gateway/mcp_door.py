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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from google.protobuf.message import Message
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from archipelago.v1 import game_pb2
from engine.errors import GameError, InvalidOrder, NotStarted, PermissionDenied, StaleVersion, Unauthenticated
from gateway import errors, rpc
from gateway.agent_notify import deadline_notice, notices_of, worded
from gateway.agent_views import SHAPERS, shaper
from gateway.api import AGENT_PREFIX, Caller, PlayerAPI, bearer
from gateway.limits import TooLarge
from gateway.metrics import count_tools
from gateway.web import MAX_BODY, parse
from services import tracing
from services.notify.kinds import Notice

RULES = Path(__file__).with_name("agent_rules")
MAX_WAIT_S = 300.0
MAX_WAIT_UPDATES = 200  # what wait_for_next_round reports at most (the newest)
ALLOWED_HOSTS_ENV = "ARCHIPELAGO_ALLOWED_HOSTS"
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
SCOPE_KEY = "archipelago.agent"  # the guard's (token, caller) in the request's ASGI scope
IDEMPOTENCY = ("Optional idempotency_key (printable, at most 64 characters): a retry with the same key and "
               "the same arguments in the same round is answered as the first call and applied once "
               "(\"replayed\": true); the same key with other arguments is refused (request/key_reused, A16).")
NOTIFIED = ("notifications: what your player's notifications would have told it while you waited, in the same "
            "kinds and words (its language): [{kind, round, title, body}], kind one of game_started, your_turn (a "
            "later round opened; in a game of turns, your turn began), your_decision (a window or a choice waits "
            "on you), deadline (the step now open waits on you, you have not acted, and its deadline is near: by "
            "default 1 h before the end of a step of 2 h or more, 15 s before one of 30 s to 2 h), trade_offer and "
            "private_chat (addressed to you), game_over; each kind once per round (your_decision once per window), "
            "[] when nothing.")

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

STATUS = {"lobby": "lobby", "running": "running", "over": "over"}


def dumps(obj: Any) -> str:
    """The one JSON form of every answer: compact, UTF-8 as is."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


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


# ---------------------------------------------------------------------------------- answers
def seconds_left(deadline_unix_ms: Any) -> float | None:
    """Seconds until a deadline in Unix ms (None: no deadline)."""
    deadline = int(deadline_unix_ms or 0)
    return round(max(0.0, deadline / 1000 - time.time()), 1) if deadline else None


def compact_step(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The step now (who may act): kind ("turn", "window", "simultaneous", "over"), players (the seats
    that may act now), active (whose turn), deadline (its kind) and seconds_left, and your_decision:
    whether you are one of the players."""
    step = view.get("step")
    if not step:
        return None
    return {"kind": step.get("kind", ""), "players": list(step.get("players") or ()),
            "active": step.get("active", -1), "deadline": step.get("deadline", ""),
            "seconds_left": seconds_left(step.get("deadline_unix_ms")),
            "your_decision": view.get("status") == "running" and view.get("you") in (step.get("players") or ())}


def compact_view(view: dict[str, Any]) -> dict[str, Any]:
    """The player API's view, shaped for a language model: the header every game shares, then the
    game's own part from its shaper (:mod:`gateway.agent_views`). The last round's events are not
    here: the wait tools report them."""
    inner = view.get("view")
    game = shaper(view["game"])
    figures = game.figures(inner) if inner is not None else {}

    def player(p: dict[str, Any]) -> dict[str, Any]:
        return {"seat": p["seat"], "nickname": p["nickname"], **figures.get(p["seat"], {})}

    out: dict[str, Any] = {
        "game": view["game"], "game_id": view["game_id"],
        "status": STATUS.get(str(view["status"]), str(view["status"])),
        "round": view["round"], "you": view["you"],
    }
    if game.turns:
        out.update(version=view["version"], seq=view["seq"], step=compact_step(view))
    else:
        out.update(submitted_this_round=view["submitted"], expected_to_submit=view["expected"],
                   seconds_left=seconds_left(view.get("deadline_unix_ms")))
    out["players"] = [player(p) for p in view["players"]]
    if not game.turns:
        out["submitted"] = [p["seat"] for p in view["players"] if p["submitted"]]
    out["connected"] = [p["seat"] for p in view["players"] if p["connected"]]
    if "pending" in view:
        out["your_orders_this_round"] = view["pending"]
    if inner is not None:
        out.update(game.view(inner))
    if "standing" in view:
        out["standing_orders"] = view["standing"]
    if view.get("autopilot_log"):  # what the autopilot / standing orders played for you (your own only)
        out["autopilot_played_for_you"] = view["autopilot_log"]
    return out


def happened(updates: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A player's updates as one record per round: who submitted (done, not drafts), chat, the events
    (the round's own trades and, once it closed, its resolution, each ``{"kind", ...}`` as the view's
    events are), whether it closed, the outcome when the game ended."""
    rounds: dict[int, dict[str, Any]] = {}

    def record(u: Mapping[str, Any]) -> dict[str, Any]:
        r = int(u.get("round", 0))
        return rounds.setdefault(r, {"round": r})

    for u in updates:
        kind = u.get("kind")
        data = u.get("data") or {}
        if kind == "submitted" and data.get("done", True):
            done = record(u).setdefault("submitted", [])
            if u["seat"] not in done:
                done.append(u["seat"])
        elif kind == "chat" and u.get("chat"):
            c = u["chat"]
            record(u).setdefault("chat", []).append({"from": c["seat"], "text": c["text"],
                                                     **({"to": c["to"]} if c.get("to") is not None else {})})
        elif kind == "event":
            record(u).setdefault("events", []).append({"kind": u.get("event_kind"), **data})
        elif kind == "round_closed":
            record(u)["closed"] = True
        elif kind == "started":
            record(u)["started"] = True
        elif kind == "game_over":
            record(u)["game_over"] = data.get("outcome", {})
    return [rounds[r] for r in sorted(rounds)]


def tool_error(exc: BaseException) -> ToolError:
    err = errors.as_game_error(exc)
    kind = errors.kind_of(err)
    where = ", ".join(p for p in (f"field {err.field}" if err.field else "",
                                  f"rule {err.rule}" if err.rule else "") if p)
    wait = errors.retry_after_s(err)  # (client/throttled: the wait the other doors send as Retry-After)
    retry = f"yes, in {wait} s" if wait else "yes, later" if kind.retry else "no: change the request"
    return ToolError(f"{kind.code} ({kind.grpc.name}){' — ' + where if where else ''}: {err.reason}. "
                     f"Retry: {retry}.")


def resource_error(exc: BaseException) -> MCPError:
    """A failed resource read as a JSON-RPC error: invalid params (-32602) for anything the request
    can change (another game's id, an unknown game), internal (-32603) only for the server's own
    trouble; ``data`` holds the error table's fields. Never a traceback."""
    err = errors.as_game_error(exc)
    code = INTERNAL_ERROR if errors.kind_of(err).retry else INVALID_PARAMS
    return MCPError(code=code, message=str(tool_error(err)), data={"error": errors.to_dict(err)})


def rules_text(kind: str) -> str:
    """The rules tool's text: ``agent_rules/<kind>.md`` and what the game's shaper adds."""
    return (RULES / f"{kind}.md").read_text(encoding="utf-8") + shaper(kind).rules_extra()


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
        self._tools()
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

    async def _caller(self, ctx: Context) -> tuple[PlayerAPI, str, Caller]:
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

    async def _run(self, ctx: Context, body: Callable[[PlayerAPI, str, Caller], Awaitable[Any]]) -> str:
        try:
            api, token, who = await self._caller(ctx)
            result = await body(api, token, who)
        except ToolError:
            raise
        except Exception as exc:  # every failure becomes a tool error naming its rule
            raise tool_error(exc) from None
        return result if isinstance(result, str) else dumps(result)

    @staticmethod
    def _member(holder: Message, field: str, value: Any, what: str) -> None:
        """Fill ``holder.<field>`` (a game's message) from JSON, refused as the JSON door refuses it."""
        if not isinstance(value, dict):
            raise InvalidOrder(f"{what} is a JSON object (see the rules tool)", field=what)
        getattr(holder, field).CopyFrom(parse(value, type(getattr(holder, field))))

    # ------------------------------------------------------------------ tools
    def _tools(self) -> None:
        server = self.server
        tool = server.tool

        @tool(title="The rules of your game", structured_output=False)
        async def rules(ctx: Context) -> str:
            """The rules of the game this token plays, in brief: goal, rounds, the exact JSON of orders,
            fights, economy, what you can see, and (Archipelago) the unit table with every cost. Read
            this first."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> str:
                return rules_text(await api.kind_of(who.game_id))
            return await self._run(ctx, body)

        @tool(title="What you know now", structured_output=False)
        async def get_view(ctx: Context, since_seq: int | None = None) -> str:
            """Your player's view now (and nothing it may not see), as compact JSON: game, game_id,
            status ("lobby", "running", "over"), round (0 is the setup round), you (your seat).
            Games of rounds: seconds_left, submitted_this_round, expected_to_submit, submitted
            (seats), your orders this round if any, standing_orders if set; autopilot_played_for_you
            if the autopilot or your standing orders played for you: [{round, source ("autopilot" |
            "standing_orders"), <game>: the orders it submitted, or (turns) {actions: [...]}}], the
            latest 10. Games of turns: version, seq (the number of the last update you were sent),
            step {kind: "turn"|"window"|"over", players (the seats that may act now), active (whose
            turn), deadline, seconds_left (then the autopilot acts for the seats left),
            your_decision (true: you are one of players)}. Then players [{seat, nickname}],
            connected (seats) and the game's own view. With since_seq (the seq of an earlier answer)
            it also holds `happened`: what you were told after that seq (events [{seq, kind, …}],
            chat, game_over), at most 200, the newest."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await api.view(token, who.game_id)
                out = compact_view(view)
                if since_seq is not None:
                    got, last = await self.read_since(api, token, who, since_seq, int(view["seq"]))
                    out["seq"] = last
                    out["happened"] = self.report(view["game"], got)
                return out
            return await self._run(ctx, body)

        @tool(title="What you may do now", structured_output=False)
        async def legal_moves(ctx: Context, unit: str | None = None) -> str:
            """What the rules allow you now, from your view (each option is legal on its own), with
            round, version and (games of turns) step as get_view has them."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await api.view(token, who.game_id)
                if view["status"] != "running" or "view" not in view:
                    return {"status": view["status"], "note": "nothing to do: the game is not running"}
                game = shaper(view["game"])
                moves = game.moves(view["view"], unit)
                head: dict[str, Any] = {"round": view["round"]}
                if game.turns:
                    step = compact_step(view)
                    head.update(version=view["version"], step=step)
                    if step is None or not step["your_decision"]:
                        head["note"] = "not your decision now: call wait_for_my_decision"
                return {**head, **moves}
            return await self._run(ctx, body)

        @tool(title="Submit your orders for this round", structured_output=False)
        async def submit_orders(ctx: Context, round: int, orders: dict[str, Any], done: bool = True,
                                idempotency_key: str = "") -> str:
            """Submit (or replace) your orders for `round` — the round number get_view shows; orders
            planned for an earlier round are refused (action/stale_state_id), a round not open yet is
            invalid (order/invalid), never applied to another round. `orders` is the game's orders
            object exactly as the rules tool shows it, e.g. Salvo {"shots": ["A1", "B2"]} or
            {"placement": [{"ship": "battleship", "bow": "A1", "vertical": false}, …]} or
            {"random_placement": true}; Archipelago {"units": [{"unit": "<id>", "to": {"x": 3, "y": 4}},
            {"unit": "<id>", "action": "bombard", "target": "<enemy id>"}], "builds": [{"type": "rank1"},
            {"type": "landmine", "tile": {"x": 3, "y": 2}}]} or, in round 0, {"deploy": [{"unit": "<id>",
            "tile": {"x": 5, "y": 4}}]} ({} keeps the default layout). Tiles are {"x", "y"} objects, never
            [x, y]. done=false keeps them as a draft without marking you done (a draft does not close the
            round early). The whole submission is refused, changing nothing, if any part breaks a rule:
            the error names the field and the rule. Answers {round, submitted, replayed}. """
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await api.view(token, who.game_id)
                kind = view["game"]
                if view["status"] == "lobby":
                    raise NotStarted("the game has not started yet", field="round", rule="A4")
                if view["status"] == "running" and round < view["round"]:
                    raise StaleVersion(f"round {view['round']} is open now, not round {round}: look again",
                                       field="round", rule="A16")
                if view["status"] == "running" and round > view["round"]:
                    raise InvalidOrder(f"round {round} has not opened: the open round is {view['round']}",
                                       field="round", rule="A16")
                req = game_pb2.SubmitOrdersRequest(game_id=who.game_id, version=int(view["version"]), draft=not done,
                                                   idempotency_key=idempotency_key)
                self._member(req, kind, orders, "orders")
                ack: Any = await rpc.submit_orders(api, req, token)
                return {"round": ack.round, "submitted": ack.submitted, "replayed": ack.replayed}
            return await self._run(ctx, body)

        @tool(title="Set your standing orders (Archipelago)", structured_output=False)
        async def set_standing_orders(ctx: Context, standing: dict[str, Any], idempotency_key: str = "") -> str:
            """Replace your standing orders (Archipelago, A70–A74): what plays for you when you do not
            submit, and what units without an order do. {"posture": "hold"|"defensive"|"balanced"|
            "aggressive", "units": [{"unit": "<id>", "order": "stay"|"guard"|"patrol"|"move"|"escort"|
            "hunt", "tile": {"x": 3, "y": 4}, "target": "<unit id>", "waypoints": [{"x": 3, "y": 4}, …]}],
            "build_queue": [{"type": "rank1"}], "bonus": "iron", "bank_rules": [{"give": "wood",
            "get": "iron", "keep": 2}], "accept_rules": [{"max_ratio": 1.0}]}. Answers {ok, replayed}."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                kind = await api.kind_of(who.game_id)
                req = game_pb2.SetStandingOrdersRequest(game_id=who.game_id, idempotency_key=idempotency_key)
                if kind not in req.DESCRIPTOR.fields_by_name:
                    raise InvalidOrder(f"{kind} has no standing orders", field="standing", rule="A70")
                self._member(req, kind, standing, "standing")
                ack: Any = await rpc.set_standing_orders(api, req, token)
                return {"ok": True, "replayed": ack.replayed}
            return await self._run(ctx, body)

        async def send(ctx: Context, key: str, build: Callable[[game_pb2.ActRequest], None]) -> str:
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                req = game_pb2.ActRequest(game_id=who.game_id, idempotency_key=key)
                build(req)
                ack: Any = await rpc.act(api, req, token)
                return {"ok": True, "replayed": ack.replayed}
            return await self._run(ctx, body)

        async def turn_action(ctx: Context, key: str, version: int | None,
                              action: Callable[[str], Any]) -> str:
            """One action of a game of turns (its ActRequest member, named after the kind), then the
            step it led to."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                kind = await api.kind_of(who.game_id)
                req = game_pb2.ActRequest(game_id=who.game_id, idempotency_key=key)
                if not shaper(kind).turns or kind not in req.DESCRIPTOR.fields_by_name:
                    raise InvalidOrder(f"{kind} is played by rounds of orders: use submit_orders", field="action",
                                       rule="A16")
                if version is not None:
                    req.version = version
                self._member(req, kind, action(kind), "action")
                ack: Any = await rpc.act(api, req, token)
                view = await api.view(token, who.game_id)
                return {"ok": True, "replayed": ack.replayed, "version": view["version"], "round": view["round"],
                        "status": STATUS.get(str(view["status"]), str(view["status"])), "step": compact_step(view)}
            return await self._run(ctx, body)

        @tool(title="Take one action (games of turns: Arcmage)", structured_output=False)
        async def act(ctx: Context, action: dict[str, Any], version: int | None = None,
                      idempotency_key: str = "") -> str:
            """Take one action now, in a game played by turns (Arcmage), when get_view's or
            wait_for_my_decision's step says your_decision: true. `action` is one of legal_moves'
            actions, sent exactly as listed: an object with one key naming the kind, e.g.
            {"pass": {}} (end your phase step, pass in a window, decline an optional choice),
            {"choose": {"option": <one of pending.options>}} (answer the decision the game waits for),
            {"draw": {"option": "draw1"}}, {"resource": {"card": "c7", "faction": "Gaian"}},
            {"build": {"card": "c3"}}, {"devote": {"card": "c9"}}, {"play": {"card": "c12", "to":
            "army"}} (to: a city id of yours or "army"; targets, x, mode when the card needs them),
            {"ability": {"card": "c5", "targets": ["c20"]}}, {"move": {"card": "c12", "to": "c4"}},
            {"salvage": {"card": "c31"}}, {"attack": {"attackers": ["c12", "c13"], "city": "c40"}}
            (the rules tool has the whole table). It is applied at once (the other seats' autopilot, if
            any, answers before this returns). Optional version: the version you saw; older than the
            step now open is refused (action/stale_state_id), so nothing lands on a step you did not
            see. A refused action changes nothing; the error names the field and the rule. Answers {ok,
            replayed, version (the game's version now, the other seats' answers included), round (the
            turn), status, step} — step as get_view has it: your_decision true means act again (call
            legal_moves), false means call wait_for_my_decision. Use a new idempotency_key for every
            action (e.g. "t<turn>-<n>"); a key is remembered for the turn, so send version too: a retry
            after the game moved on is then refused, never applied twice."""
            return await turn_action(ctx, idempotency_key, version, lambda kind: action)

        @tool(title="Pass (games of turns: Arcmage)", structured_output=False)
        async def pass_priority(ctx: Context, version: int | None = None, idempotency_key: str = "") -> str:
            """Pass, in a game played by turns (Arcmage): the same as act with {"pass": {}} — end your
            phase step (the game goes on to the next phase), let the stack resolve or the game go on in
            a window (no answer), or decline an optional choice. Answers as act does."""
            def action(kind: str) -> Any:
                found = shaper(kind).pass_action
                if found is None:
                    raise InvalidOrder(f"{kind} has no pass action", field="action", rule="A16")
                return found
            return await turn_action(ctx, idempotency_key, version, action)

        @tool(title="Chat", structured_output=False)
        async def chat(ctx: Context, text: str, to: int | None = None, idempotency_key: str = "") -> str:
            """Send a chat message (1–500 characters) to every player, or to one seat `to`. At most 10
            per round (A53). Others see it as your player's message. Answers {ok, replayed}."""
            return await send(ctx, idempotency_key, lambda r: r.chat.CopyFrom(game_pb2.ChatAction(text=text, to=to)))

        @tool(title="Offer a trade (Archipelago)", structured_output=False)
        async def offer_trade(ctx: Context, give: dict[str, int], get: dict[str, int], to: int | None = None,
                              idempotency_key: str = "") -> str:
            """Offer to give resources for others, to one seat `to` or to everyone (A53): e.g.
            give {"wood": 2}, get {"iron": 1}. Resources: wood, food, iron, fuel. At most 3 offers a
            round; offers expire when the round closes. The offer's id appears in get_view's offers.
            Answers {ok, replayed}."""
            def build(r: game_pb2.ActRequest) -> None:
                r.offer.CopyFrom(parse({"give": give, "get": get, **({"to": to} if to is not None else {})},
                                       type(r.offer)))  # type: ignore[arg-type]
            return await send(ctx, idempotency_key, build)

        @tool(title="Answer a trade offer (Archipelago)", structured_output=False)
        async def answer_offer(ctx: Context, offer: str, answer: Literal["accept", "decline", "withdraw"],
                               idempotency_key: str = "") -> str:
            """accept an offer made to you (executed at once if both still hold the goods), decline one
            made to you alone, or withdraw your own (A53). `offer` is the id from get_view's offers.
            Answers {ok, replayed}."""
            def build(r: game_pb2.ActRequest) -> None:
                getattr(r, answer).offer = offer
            return await send(ctx, idempotency_key, build)

        @tool(title="Trade with the bank (Archipelago)", structured_output=False)
        async def bank_trade(ctx: Context, give: str, get: str, times: int = 1, idempotency_key: str = "") -> str:
            """Give 4 of `give` for 1 of `get` (2 for 1 when you control a port of `give`: legal_moves'
            bank says the rate), `times` times, at once (A52). Resources: wood, food, iron, fuel.
            Answers {ok, replayed}."""
            def build(r: game_pb2.ActRequest) -> None:
                r.bank.give, r.bank.get, r.bank.times = give, get, times
            return await send(ctx, idempotency_key, build)

        @tool(title="Wait for the next round", structured_output=False)
        async def wait_for_next_round(ctx: Context, after_round: int | None = None,
                                      timeout_seconds: float = 60.0) -> str:
            """Wait (long poll) until a round later than `after_round` opens or the game ends, at most
            timeout_seconds (1–300). Pass the round you just submitted orders for: if a later round is
            already open (your submission may have closed the round), it answers at once. Without
            after_round it waits for the round after the current one (in the lobby: for the start).
            Answers {round, status, timed_out, happened, notifications}: happened has one record per
            round from `after_round` on, {round, submitted: [seats], chat: [{from, text, to?}], events:
            [{kind, …}] (the round's trades and, once it closed, its resolution as you saw it), closed:
            true, game_over: outcome}. {NOTIFIED} Then call get_view."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                if not 1 <= timeout_seconds <= MAX_WAIT_S:
                    raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
                return await self.wait(api, token, who, after_round, timeout_seconds)
            return await self._run(ctx, body)

        @tool(title="Wait until you have a decision to make (games of turns: Arcmage)", structured_output=False)
        async def wait_for_my_decision(ctx: Context, since_seq: int | None = None,
                                       timeout_seconds: float = 60.0) -> str:
            """Wait (long poll) until you may act — your seat is one of the step's players: your turn's
            phase step, a decision the game asks of you, a window in which you may answer — or the game
            is over, at most timeout_seconds (1–300); at once if that is so already. Pass since_seq = the
            seq of your last answer (get_view, this tool) to be told what happened after it (the other
            players' plays, the autopilot's answers, what your own actions led to). Answers {status,
            seq, your_decision, timed_out, step, happened: [{seq, kind, …}] (events, cards as "Name
            (id)"; chat {from, text}; game_over), notifications, outcome once over}. {NOTIFIED} Then:
            legal_moves and act (or pass_priority); call again with the seq it answered."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                if not 1 <= timeout_seconds <= MAX_WAIT_S:
                    raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
                return await self.wait_decision(api, token, who, since_seq, timeout_seconds)
            return await self._run(ctx, body)

        for name in ("wait_for_next_round", "wait_for_my_decision"):
            registered = server._tool_manager.get_tool(name)  # ({NOTIFIED} in the docstrings above)
            if registered is not None:
                registered.description = (registered.description or "").replace("{NOTIFIED}", NOTIFIED)
        for name in ("submit_orders", "set_standing_orders", "chat", "offer_trade", "answer_offer", "bank_trade",
                     "act", "pass_priority"):
            registered = server._tool_manager.get_tool(name)  # the description the client sees
            if registered is not None:
                registered.description = f"{(registered.description or '').rstrip()} {IDEMPOTENCY}"
        for name, part in (("get_view", "view_doc"), ("legal_moves", "moves_doc")):
            registered = server._tool_manager.get_tool(name)
            games = [f"{g.title}: {getattr(g, part)}" for g in SHAPERS.values() if getattr(g, part)]
            if registered is not None and games:
                registered.description = f"{(registered.description or '').rstrip()} {' '.join(games)}"

        @server.resource("game://{game_id}/view", name="view", title="Your view now", mime_type="application/json")
        async def view_resource(game_id: str, ctx: Context) -> str:
            """Your view of game `game_id` now: the same as the get_view tool (its `game_id`)."""
            try:
                api, token, _who = await self._caller(ctx)
                return dumps(compact_view(await api.view(token, game_id)))
            except Exception as exc:
                raise resource_error(exc) from None

        def rules_of(kind: str) -> Callable[[], str]:
            text = rules_text(kind)

            def read() -> str:
                return text
            read.__doc__ = f"The rules of {kind} for an agent (the same as the rules tool)."
            return read

        for kind in sorted(p.stem for p in RULES.glob("*.md")):
            server.resource(f"game://rules/{kind}", name=f"rules-{kind}", title=f"The rules of {kind}",
                            mime_type="text/markdown")(rules_of(kind))

    # ------------------------------------------------------------------ waiting
    async def wait(self, api: PlayerAPI, token: str, who: Caller, after_round: int | None,
                   timeout_s: float) -> dict[str, Any]:
        """What ``wait_for_next_round`` answers. The updates are the player's own stream read from
        before round ``after_round`` (the newest :data:`MAX_WAIT_UPDATES` of them at most), not from
        the call on: the close an agent's own submission made happened before this call, and is
        reported all the same. Reading stops at the opening of a later round (in the lobby: at the
        start) or the game's end, or at the timeout."""
        view = await api.view(token, who.game_id)
        lobby = view["status"] == "lobby"
        since = int(view["round"]) if after_round is None else after_round
        got: list[dict[str, Any]] = []
        opening: list[dict[str, Any]] = []  # the update that ended the wait: a later round's opening
        timed_out = False
        stream = await api.watch(token, who.game_id, max(0, int(view["seq"]) - MAX_WAIT_UPDATES))
        try:
            async with asyncio.timeout(timeout_s):
                async for u in stream:
                    if not u.get("seq"):
                        continue  # presence notices
                    r = int(u.get("round", 0))
                    if u["kind"] == "round_opened" and (lobby or r > since):
                        opening.append(u)
                        break
                    if lobby or r >= since or u["kind"] == "game_over":
                        got.append(u)
                        del got[:-MAX_WAIT_UPDATES]
                    if u["kind"] == "game_over":
                        break
        except TimeoutError:
            timed_out = True
        finally:
            await stream.aclose()
        now = await api.view(token, who.game_id)
        told = notices_of([*got, *opening], who.seat, now, turns=shaper(now["game"]).turns,
                          after_round=None if lobby else since)
        return {"round": now["round"], "status": now["status"], "timed_out": timed_out, "happened": happened(got),
                "notifications": await self.notifications(api, token, who, now, told)}

    @staticmethod
    async def notifications(api: PlayerAPI, token: str, who: Caller, view: Mapping[str, Any],
                            told: list[Notice]) -> list[dict[str, Any]]:
        """The ``notifications`` of a wait's answer (:mod:`gateway.agent_notify`): the notices found in
        its updates and the deadline warning now due, in the words of the player's language."""
        now_ms = int(time.time() * 1000)
        warning = deadline_notice(view, api.notify.config.warn, now_ms, turns=shaper(view["game"]).turns)
        told = [*told, *([warning] if warning else [])]
        if not told:
            return []
        language = str((await api.get_notifications(token, who.game_id)).get("language") or "en")
        return worded(told, game=str(view["game"]), game_id=who.game_id, language=language, now_ms=now_ms)


    # ------------------------------------------------------------------ games of turns
    @staticmethod
    def report(kind: str, updates: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """What a player was told, for an agent: games of rounds one record per round
        (:func:`happened`); games of turns one entry per event, chat and game end, in order, each
        with its seq, the events in the game's shaper's form."""
        game = shaper(kind)
        if not game.turns:
            return happened(updates)
        out: list[dict[str, Any]] = []
        for u in updates:
            data = u.get("data") or {}
            if u.get("kind") == "event":
                out.append({"seq": u["seq"], **game.event(str(u.get("event_kind", "")), data)})
            elif u.get("kind") == "chat" and u.get("chat"):
                c = u["chat"]
                out.append({"seq": u["seq"], "kind": "chat", "from": c["seat"], "text": c["text"],
                            **({"to": c["to"]} if c.get("to") is not None else {})})
            elif u.get("kind") in ("started", "game_over"):
                out.append({"seq": u["seq"], "kind": u["kind"], **({"outcome": data["outcome"]}
                                                                    if "outcome" in data else {})})
        return out

    @staticmethod
    async def read_since(api: PlayerAPI, token: str, who: Caller, since: int, upto: int,
                         stop: Callable[[Mapping[str, Any]], bool] | None = None
                         ) -> tuple[list[dict[str, Any]], int]:
        """The player's own updates after seq ``since`` (the newest :data:`MAX_WAIT_UPDATES`), read
        from its Watch stream: through seq ``upto`` (what it has been sent already: no wait), then,
        with ``stop``, live ones until one satisfies ``stop`` (the caller bounds the wait). Answers
        (updates, the last seq read)."""
        since = max(0, min(since, upto))
        last = since
        got: list[dict[str, Any]] = []
        if since >= upto and stop is None:
            return got, last
        stream = await api.watch(token, who.game_id, since)
        try:
            async for u in stream:
                seq = int(u.get("seq") or 0)
                if not seq:
                    continue  # presence notices
                if u.get("kind") != "resync":
                    got.append(u)
                    del got[:-MAX_WAIT_UPDATES]
                last = max(last, seq)
                if seq >= upto and (stop is None or (seq > upto and stop(u))):
                    break
        finally:
            await stream.aclose()
        return got, last

    async def wait_decision(self, api: PlayerAPI, token: str, who: Caller, since_seq: int | None,
                            timeout_s: float) -> dict[str, Any]:
        """What ``wait_for_my_decision`` answers: at once when the caller may act now (or the game is
        over), else when a later update says so — a step with the caller among its players, the
        start, the game's end — or at the timeout. ``happened`` is what the caller was told after
        ``since_seq`` (default: the call's start)."""
        view = await api.view(token, who.game_id)
        now = int(view["seq"])
        since = now if since_seq is None else since_seq

        def mine(v: Mapping[str, Any]) -> bool:
            step = v.get("step") or {}
            return v["status"] == "over" or (v["status"] == "running" and v["you"] in (step.get("players") or ()))

        def decides(u: Mapping[str, Any]) -> bool:
            if u.get("kind") in ("game_over", "started"):
                return True
            return u.get("kind") == "step" and who.seat in ((u.get("data") or {}).get("players") or ())

        timed_out = False
        got: list[dict[str, Any]] = []
        last = since
        try:
            async with asyncio.timeout(timeout_s):
                got, last = await self.read_since(api, token, who, since, now, None if mine(view) else decides)
        except TimeoutError:
            timed_out = True
        view = await api.view(token, who.game_id)
        if timed_out:  # what was read before the timeout is read again, without waiting
            got, last = await self.read_since(api, token, who, since, int(view["seq"]))
        step = compact_step(view)
        told = notices_of(got, who.seat, view, turns=shaper(view["game"]).turns)
        out: dict[str, Any] = {"status": STATUS.get(str(view["status"]), str(view["status"])), "seq": last,
                               "your_decision": bool(step and step["your_decision"]), "timed_out": timed_out,
                               "step": step, "happened": self.report(view["game"], got),
                               "notifications": await self.notifications(api, token, who, view, told)}
        outcome = (view.get("view") or {}).get("outcome")
        if view["status"] == "over" and outcome:
            out["outcome"] = outcome
        return out


__all__ = ["Guard", "McpDoor", "allowed_hosts", "compact_step", "compact_view", "happened", "host_allowed",
           "rules_text", "tool_error"]
