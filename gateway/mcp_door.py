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
``structuredContent`` copy, no indentation), nothing repeated between tools of one round of play,
tiles everywhere in the one shape orders take, ``{"x": 3, "y": 4}``. Errors are MCP tool errors
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

from archipelago.v1 import archipelago_pb2, game_pb2
from engine import get_game
from engine.archipelago.units import UNIT_TYPES
from engine.errors import InvalidOrder, NotStarted, PermissionDenied, StaleVersion, Unauthenticated
from gateway import errors, rpc
from gateway.api import AGENT_PREFIX, Caller, PlayerAPI, bearer
from gateway.limits import TooLarge
from gateway.web import MAX_BODY, parse

RULES = Path(__file__).with_name("agent_rules")
MAX_WAIT_S = 300.0
MAX_WAIT_UPDATES = 200  # what wait_for_next_round reports at most (the newest)
ALLOWED_HOSTS_ENV = "ARCHIPELAGO_ALLOWED_HOSTS"
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
SCOPE_KEY = "archipelago.agent"  # the guard's (token, caller) in the request's ASGI scope
IDEMPOTENCY = ("Optional idempotency_key (printable, at most 64 characters): a retry with the same key and "
               "the same arguments in the same round is answered as the first call and applied once "
               "(\"replayed\": true); the same key with other arguments is refused (request/key_reused, A16).")

INSTRUCTIONS = """\
You play one seat of a turn-based game (Archipelago or Salvo) for the player who gave you this token.
Start with `rules` (the rules in brief, the exact JSON of orders, the unit table), then loop:
`get_view` (what you know now), `legal_moves` (what you may do), `submit_orders` (for the round
`get_view` shows; resubmitting replaces your orders), `wait_for_next_round` (what happened: the closed
round's events, chat, trades). Chat and trades (`chat`, `offer_trade`, `answer_offer`, `bank_trade`)
act at once. Tiles are always {"x": column, "y": row}, in answers and in orders. Every tool that
changes something takes an optional idempotency_key: retry with the same key and it is applied once.
A tool error names the rule it broke and whether retrying can help. You see only what your player
may see."""

STATUS = {"lobby": "lobby", "running": "running", "over": "over"}
# The map's characters: in sight now, explored but out of sight now, unexplored.
IN_SIGHT = {".": ".", "#": "#"}
OUT_OF_SIGHT = {".": "~", "#": "+"}


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
def xy(t: Mapping[str, Any]) -> dict[str, int]:
    """A tile in the one shape every door uses, in answers and in orders (the proto's ``Tile``)."""
    return {"x": int(t.get("x", 0)), "y": int(t.get("y", 0))}


def _pair(t: Any) -> dict[str, int]:
    """An engine pair ``[x, y]`` (legal moves) as a tile ``{"x", "y"}``."""
    return {"x": int(t[0]), "y": int(t[1])}


def _salvo(v: dict[str, Any]) -> dict[str, Any]:
    shots = v.get("shots", [])
    return {
        "phase": v.get("phase"), "mode": v.get("mode"), "shots_allowed": v.get("shots_allowed", 0),
        **({"active_player": v["active_player"]} if "active_player" in v else {}),
        "fleet_spec": v.get("fleet_spec", []), "your_fleet": v.get("fleet", []),
        "enemy_shots_at_you": [[s["square"], s.get("round", 0), s.get("hit")] for s in v.get("incoming", [])],
        "your_shots": [[s["square"], s.get("round", 0)] + ([s["hit"]] if "hit" in s else []) for s in shots],
        "reports": v.get("reports", []), "enemy_ships_sunk": v.get("enemy_sunk", []),
        "untried_squares_left": 100 - len(shots),
        **({"enemy_fleet": v["enemy_fleet"]} if v.get("enemy_fleet") else {}),
        **({"outcome": v["outcome"]} if v.get("outcome") else {}),
    }


def _map(v: Mapping[str, Any]) -> dict[str, Any]:
    """The explored part of the board: the smallest box holding every explored tile, one string per
    row from ``y0``, character i of a row the tile ``x0 + i``; in sight "." sea, "#" land; explored
    but out of sight "~" sea, "+" land; "?" unexplored."""
    rows: list[str] = list(v.get("rows", []))
    seen = [(x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c != "?"]
    out: dict[str, Any] = {"width": v.get("width"), "height": v.get("height")}
    if not seen:
        return {**out, "x0": 0, "y0": 0, "rows": []}
    x0, x1 = min(x for x, _ in seen), max(x for x, _ in seen)
    y0, y1 = min(y for _, y in seen), max(y for _, y in seen)
    sight = {(int(t["x"]), int(t["y"])) for t in v.get("visible", [])}
    cropped = ["".join((IN_SIGHT if (x, y) in sight else OUT_OF_SIGHT).get(rows[y][x], rows[y][x])
                       for x in range(x0, x1 + 1)) for y in range(y0, y1 + 1)]
    return {**out, "x0": x0, "y0": y0, "rows": cropped}


def _by_resource(entries: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, int]]]:
    out: dict[str, list[dict[str, int]]] = {}
    for r in entries:
        out.setdefault(str(r["resource"]), []).append(xy(r["tile"]))
    return out


def _archipelago(v: dict[str, Any]) -> dict[str, Any]:
    def unit(u: dict[str, Any]) -> dict[str, Any]:
        out = {"id": u["id"], "type": u["type"], "at": xy(u["tile"])}
        for k in ("carrier", "flag", "raft", "cargo"):
            if u.get(k):
                out[k] = u[k]
        return out

    def enemy(e: dict[str, Any], log: bool = False) -> dict[str, Any]:
        out = {"id": e["id"], "owner": e["owner"], "at": xy(e["tile"])}
        out.update({"round_seen": e["round"]} if log else {"domain": e.get("domain")})
        if e.get("type"):
            out["type"] = e["type"]
        return out

    def island(i: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": i.get("id", 0), "kind": i.get("kind")}
        if i.get("owner") is not None:
            out["owner"] = i["owner"]
        out["tiles"] = [xy(t) for t in i.get("tiles", [])]
        return out

    return {
        "target": v.get("target"), "max_rounds": v.get("max_rounds"), "score": v.get("score", 0),
        "stock": v.get("stock", {}), **({"bonus": v["bonus"]} if v.get("bonus") else {}),
        "flags_captured": v.get("flags_captured", 0), "map": _map(v),
        "bases": [{"seat": b["seat"], "at": xy(b["tile"])} for b in v.get("bases", [])],
        "islands": [island(i) for i in v.get("islands", [])],
        "resource_tiles": _by_resource(v.get("resource_tiles", [])), "ports": _by_resource(v.get("ports", [])),
        "your_units": [unit(u) for u in v.get("units", [])],
        "enemies_in_sight": [enemy(e) for e in v.get("enemies", [])],
        "enemy_log": [enemy(e, log=True) for e in v.get("enemy_log", [])],
        "outposts": [{"at": xy(o["tile"]), "owner": o["owner"]} for o in v.get("outposts", [])],
        "you_control": [xy(t) for t in v.get("control", [])],
        "offers": v.get("offers", []), "chat": v.get("chat", []),
        **({"outcome": v["outcome"]} if v.get("outcome") else {}),
    }


def compact_view(view: dict[str, Any]) -> dict[str, Any]:
    """The player API's view, shaped for a language model: nothing repeated, tiles ``{"x", "y"}``. The
    last round's events are not here: ``wait_for_next_round`` reports them (``after_round`` = the
    round before the open one answers at once with them)."""
    deadline = int(view.get("deadline_unix_ms") or 0)
    inner = view.get("view")
    figures = {s["seat"]: s for s in (inner or {}).get("seats", [])} if view["game"] != "salvo" else {}

    def player(p: dict[str, Any]) -> dict[str, Any]:
        out = {"seat": p["seat"], "nickname": p["nickname"]}
        f = figures.get(p["seat"])
        if f is not None:
            out.update(score=f.get("score", 0), resource_total=f.get("resource_total", 0))
        return out

    out: dict[str, Any] = {
        "game": view["game"], "game_id": view["game_id"],
        "status": STATUS.get(str(view["status"]), str(view["status"])),
        "round": view["round"], "you": view["you"], "submitted_this_round": view["submitted"],
        "expected_to_submit": view["expected"],
        "seconds_left": round(max(0.0, deadline / 1000 - time.time()), 1) if deadline else None,
        "players": [player(p) for p in view["players"]],
        "submitted": [p["seat"] for p in view["players"] if p["submitted"]],
        "connected": [p["seat"] for p in view["players"] if p["connected"]],
    }
    if "pending" in view:
        out["your_orders_this_round"] = view["pending"]
    if inner is not None:
        out.update(_salvo(inner) if view["game"] == "salvo" else _archipelago(inner))
    if "standing" in view:
        out["standing_orders"] = view["standing"]
    return out


def compact_moves(game: str, moves: dict[str, Any]) -> dict[str, Any]:
    """The engine's legal moves (:meth:`engine.base.Game.legal_moves`) in the door's shapes: tiles
    ``{"x", "y"}``; Archipelago units with nothing to do left out, builds as the build orders they
    are; what get_view or the rules tool already say (a unit's tile and type, notes, costs, moves per
    unit type) left out."""
    out = {k: v for k, v in moves.items() if k != "note"}
    if game != "archipelago" or out.get("phase") not in ("orders", "deployment"):
        return out
    if out["phase"] == "deployment":
        where: dict[str, list[dict[str, int]]] = {}
        units = []
        for u in out["units"]:
            on = "sea" if UNIT_TYPES[u["type"]].domain == "sea" else "land"
            where.setdefault(on, [_pair(t) for t in u["tiles"]])
            units.append({"unit": u["unit"], "type": u["type"], "at": _pair(u["at"]), "goes_on": on})
        return {**out, "units": units, **where}
    units = []
    for u in out["units"]:
        if not u["moves"] and not u["actions"]:
            continue
        entry: dict[str, Any] = {"unit": u["unit"], "moves": [_pair(t) for t in u["moves"]]}
        if u["actions"]:
            entry["actions"] = u["actions"]
        units.append(entry)
    builds = []
    for b in out.get("builds", []):
        entry = {"type": b["type"]}
        if b.get("tiles"):
            entry["tiles"] = [_pair(t) for t in b["tiles"]]
        if b.get("ships"):
            entry["ships"] = b["ships"]
        builds.append(entry)
    return {**out, "units": units, "builds": builds, "bank": out.get("bank", {}).get("rates", {})}


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


def unit_table() -> str:
    """The unit table of the Archipelago rules text, from the engine's own (costs, moves, sight)."""
    lines = ["## Unit table (from the engine)",
             "type | domain | strength | move | sight | cost | carries | limit", "---|---|---|---|---|---|---|---"]
    for t in UNIT_TYPES.values():
        cost = " ".join(f"{n} {r}" for r, n in t.cost.items()) if t.buildable else "not buildable"
        lines.append(f"{t.id} ({t.name}) | {t.domain} | {'–' if t.strength is None else t.strength} | {t.move} | "
                     f"{t.sight} | {cost} | {t.capacity or ''} | {t.limit or ''}")
    return "\n".join(lines) + "\n"


def rules_text(kind: str) -> str:
    text = (RULES / f"{kind}.md").read_text(encoding="utf-8")
    return text + "\n" + unit_table() if kind == "archipelago" else text


class McpDoor:
    """The MCP server and its route; ``api()`` gives the player API of the running gateway.

    ``allowed_extra``: more hosts to answer to (:func:`allowed_hosts`; default the environment's
    ``ARCHIPELAGO_ALLOWED_HOSTS``); the public URL's host is read from the player API's config."""

    def __init__(self, api: Callable[[], PlayerAPI], host: str = "127.0.0.1", allowed_extra: str | None = None) -> None:
        self.api = api
        self.allowed_extra = os.environ.get(ALLOWED_HOSTS_ENV, "") if allowed_extra is None else allowed_extra
        self._allowed: tuple[str, list[str]] = ("", [])
        self.server: MCPServer[Any] = MCPServer(name="archipelago", title="Archipelago game cluster",
                                                instructions=INSTRUCTIONS)
        # The Host/Origin check is the guard's (with the public URL); the library's own would refuse it.
        sub = self.server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host,
            max_request_body_size=MAX_BODY,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
        self.routes: list[BaseRoute] = [Route(r.path, Guard(self, r.app)) if isinstance(r, Route) else r
                                        for r in sub.routes]
        self._tools()

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
        async def get_view(ctx: Context) -> str:
            """Your player's view now (and nothing it may not see), as compact JSON: game, game_id,
            status ("lobby", "running", "over"), round (0 is the setup round), you (your seat),
            seconds_left, submitted_this_round, expected_to_submit, players [{seat, nickname, score,
            resource_total}], submitted and connected (lists of seats), your orders this round if any,
            standing_orders if set, and the game's own view. Archipelago: map {width, height, x0, y0,
            rows} — the explored box only: rows[j][i] is the tile {"x": x0 + i, "y": y0 + j}: "." sea
            and "#" land in sight now, "~" sea and "+" land explored but out of sight, "?" unexplored;
            your_units [{id, type, at}], enemies_in_sight [{id, owner, domain, at, type if revealed}],
            enemy_log [{id, owner, at, round_seen, type?}], bases, islands {id, kind, owner?, tiles},
            resource_tiles and ports {resource: [tiles]}, outposts, you_control [tiles], stock, score,
            target, offers, chat. Every tile is {"x": column, "y": row}, as orders take it. The last
            round's events are in wait_for_next_round's answer. Salvo: phase, shots_allowed, your
            fleet with hits, your shots [square, round], the reports of your salvos, enemy ships sunk."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                return compact_view(await api.view(token, who.game_id))
            return await self._run(ctx, body)

        @tool(title="What you may do now", structured_output=False)
        async def legal_moves(ctx: Context, unit: str | None = None) -> str:
            """The moves the rules allow you now, from your view. Archipelago round 0 (phase
            "deployment"): your units {unit, type, at, goes_on: "land"|"sea"} and the tiles each kind may
            be placed on ("land", "sea"). Later rounds (phase "orders"): for each of your units that can
            do something (or only `unit`, a unit id): {unit, moves: [tiles it can reach this round],
            actions?: [{action, targets?}]}; builds: the build orders you can afford now ({"type"}; a
            mine also lists the "tiles" it may go on — send one as "tile"; a raft the "ships" — send one
            as "ship"); bank: what the bank takes for 1 of anything, by resource given. Each option is
            legal on its own; tiles are {"x", "y"} exactly as submit_orders takes them. Salvo: the fleet
            to place in round 0; then shots_allowed and the untried squares."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await api.view(token, who.game_id)
                if view["status"] != "running" or "view" not in view:
                    return {"status": view["status"], "note": "nothing to do: the game is not running"}
                moves = get_game(view["game"]).legal_moves(view["view"], unit)
                return {"round": view["round"], **compact_moves(view["game"], moves)}
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

        async def act(ctx: Context, key: str, build: Callable[[game_pb2.ActRequest], None]) -> str:
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                req = game_pb2.ActRequest(game_id=who.game_id, idempotency_key=key)
                build(req)
                ack: Any = await rpc.act(api, req, token)
                return {"ok": True, "replayed": ack.replayed}
            return await self._run(ctx, body)

        @tool(title="Chat", structured_output=False)
        async def chat(ctx: Context, text: str, to: int | None = None, idempotency_key: str = "") -> str:
            """Send a chat message (1–500 characters) to every player, or to one seat `to`. At most 10
            per round (A53). Others see it as your player's message. Answers {ok, replayed}."""
            return await act(ctx, idempotency_key, lambda r: r.chat.CopyFrom(game_pb2.ChatAction(text=text, to=to)))

        @tool(title="Offer a trade (Archipelago)", structured_output=False)
        async def offer_trade(ctx: Context, give: dict[str, int], get: dict[str, int], to: int | None = None,
                              idempotency_key: str = "") -> str:
            """Offer to give resources for others, to one seat `to` or to everyone (A53): e.g.
            give {"wood": 2}, get {"iron": 1}. Resources: wood, food, iron, fuel. At most 3 offers a
            round; offers expire when the round closes. The offer's id appears in get_view's offers.
            Answers {ok, replayed}."""
            def build(r: game_pb2.ActRequest) -> None:
                r.offer.CopyFrom(parse({"give": give, "get": get, **({"to": to} if to is not None else {})},
                                       archipelago_pb2.OfferAction))  # type: ignore[arg-type]
            return await act(ctx, idempotency_key, build)

        @tool(title="Answer a trade offer (Archipelago)", structured_output=False)
        async def answer_offer(ctx: Context, offer: str, answer: Literal["accept", "decline", "withdraw"],
                               idempotency_key: str = "") -> str:
            """accept an offer made to you (executed at once if both still hold the goods), decline one
            made to you alone, or withdraw your own (A53). `offer` is the id from get_view's offers.
            Answers {ok, replayed}."""
            def build(r: game_pb2.ActRequest) -> None:
                getattr(r, answer).offer = offer
            return await act(ctx, idempotency_key, build)

        @tool(title="Trade with the bank (Archipelago)", structured_output=False)
        async def bank_trade(ctx: Context, give: str, get: str, times: int = 1, idempotency_key: str = "") -> str:
            """Give 4 of `give` for 1 of `get` (2 for 1 when you control a port of `give`: legal_moves'
            bank says the rate), `times` times, at once (A52). Resources: wood, food, iron, fuel.
            Answers {ok, replayed}."""
            bank = archipelago_pb2.BankAction(give=give, get=get, times=times)
            return await act(ctx, idempotency_key, lambda r: r.bank.CopyFrom(bank))

        @tool(title="Wait for the next round", structured_output=False)
        async def wait_for_next_round(ctx: Context, after_round: int | None = None,
                                      timeout_seconds: float = 60.0) -> str:
            """Wait (long poll) until a round later than `after_round` opens or the game ends, at most
            timeout_seconds (1–300). Pass the round you just submitted orders for: if a later round is
            already open (your submission may have closed the round), it answers at once. Without
            after_round it waits for the round after the current one (in the lobby: for the start).
            Answers {round, status, timed_out, happened}: happened has one record per round from
            `after_round` on, {round, submitted: [seats], chat: [{from, text, to?}], events: [{kind, …}]
            (the round's trades and, once it closed, its resolution as you saw it), closed: true,
            game_over: outcome}. Then call get_view."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                if not 1 <= timeout_seconds <= MAX_WAIT_S:
                    raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
                return await self.wait(api, token, who, after_round, timeout_seconds)
            return await self._run(ctx, body)

        for t in (submit_orders, set_standing_orders, chat, offer_trade, answer_offer, bank_trade):
            registered = server._tool_manager.get_tool(t.__name__)  # the description the client sees
            if registered is not None:
                registered.description = f"{(registered.description or '').rstrip()} {IDEMPOTENCY}"

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
        timed_out = False
        stream = await api.watch(token, who.game_id, max(0, int(view["seq"]) - MAX_WAIT_UPDATES))
        try:
            async with asyncio.timeout(timeout_s):
                async for u in stream:
                    if not u.get("seq"):
                        continue  # presence notices
                    r = int(u.get("round", 0))
                    if u["kind"] == "round_opened" and (lobby or r > since):
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
        return {"round": now["round"], "status": now["status"], "timed_out": timed_out, "happened": happened(got)}


__all__ = ["Guard", "McpDoor", "allowed_hosts", "compact_moves", "compact_view", "happened", "host_allowed",
           "tool_error"]
