"""The MCP door (A90): a player's personal AI agent plays its seat through the Model Context Protocol.

A third door over the same player API, on the gateway's HTTP port at ``/mcp`` (streamable HTTP,
stateless: any gateway answers any call, no session to keep). The agent authenticates every request
with ``Authorization: Bearer <agent token>`` — a token its player made with ``CreateAgentToken``
(any door, or the web client's Standing orders tab) and can revoke at once. Every tool goes through
the same handlers as the gRPC and JSON doors (:mod:`gateway.rpc`), so the agent has exactly its
player's view and powers and what it does looks to everyone else exactly like the player's own
actions. While an agent calls, its player counts as connected (A17), as a player with the game open.

Errors are MCP tool errors (``is_error``) whose text names the code, the field, the rule id, the
reason and whether a retry can help; nothing a bad argument does changes the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from google.protobuf.message import Message
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.routing import BaseRoute

from archipelago.v1 import archipelago_pb2, game_pb2
from engine import get_game
from engine.errors import InvalidOrder, NotStarted, StaleVersion, Unauthenticated
from gateway import errors, rpc
from gateway.api import AGENT_PREFIX, Caller, PlayerAPI, bearer
from gateway.web import MAX_BODY, parse, to_json

RULES = Path(__file__).with_name("agent_rules")
MAX_WAIT_S = 300.0
MAX_WAIT_UPDATES = 200  # what wait_for_next_round reports at most (the newest)

INSTRUCTIONS = """\
You play one seat of a turn-based game (Archipelago or Salvo) for the player who gave you this token.
Start with `rules` (the rules in brief and the order formats), then loop: `get_view` (what you know now:
round, time left, your units or fleet), `legal_moves` (what you may do), `submit_orders` (for the round
`get_view` shows; resubmitting replaces your orders), `wait_for_next_round`. Chat and trades
(`chat`, `offer_trade`, `answer_offer`, `bank_trade`) act at once. A tool error names the rule it
broke and whether retrying can help. You see only what your player may see."""

STATUS = {"lobby": "lobby", "running": "running", "over": "over"}


def _tile(t: Any) -> list[int]:
    return [int(t.get("x", 0)), int(t.get("y", 0))]


def _salvo(v: dict[str, Any]) -> dict[str, Any]:
    shots = v.get("shots", [])
    return {
        "phase": v.get("phase"), "mode": v.get("mode"), "shots_allowed": v.get("shots_allowed", 0),
        "active_player": v.get("active_player"), "fleet_spec": v.get("fleet_spec", []),
        "your_fleet": v.get("fleet", []),
        "enemy_shots_at_you": [[s["square"], s.get("round", 0), s.get("hit")] for s in v.get("incoming", [])],
        "your_shots": [[s["square"], s.get("round", 0)] + ([s["hit"]] if "hit" in s else []) for s in shots],
        "reports": v.get("reports", []), "enemy_ships_sunk": v.get("enemy_sunk", []),
        "untried_squares_left": 100 - len(shots),
        **({"enemy_fleet": v["enemy_fleet"]} if v.get("enemy_fleet") else {}),
        **({"outcome": v["outcome"]} if v.get("outcome") else {}),
    }


def _archipelago(v: dict[str, Any]) -> dict[str, Any]:
    def unit(u: dict[str, Any]) -> dict[str, Any]:
        out = {"id": u["id"], "type": u["type"], "at": _tile(u["tile"])}
        for k in ("carrier", "flag", "raft"):
            if u.get(k) is not None:
                out[k] = u[k]
        if u.get("cargo"):
            out["cargo"] = u["cargo"]
        return out

    def enemy(e: dict[str, Any], log: bool = False) -> dict[str, Any]:
        out = {"id": e["id"], "owner": e["owner"], "at": _tile(e["tile"])}
        out.update({"round_seen": e["round"], "rounds_ago": e["rounds_ago"]} if log else {"domain": e.get("domain")})
        if e.get("type"):
            out["type"] = e["type"]
        return out

    return {
        "target": v.get("target"), "max_rounds": v.get("max_rounds"), "score": v.get("score", 0),
        "stock": v.get("stock", {}), "bonus": v.get("bonus"), "flags_captured": v.get("flags_captured", 0),
        "map": {"width": v.get("width"), "height": v.get("height"), "rows": v.get("rows", []),
                "legend": 'one string per row y; character x: "?" unexplored, "." sea, "#" land'},
        "visible": [_tile(t) for t in v.get("visible", [])],
        "your_base": _tile(v["base"]) if v.get("base") else None,
        "bases": [{"seat": b["seat"], "at": _tile(b["tile"])} for b in v.get("bases", [])],
        "islands": [{"id": i.get("id", 0), "kind": i.get("kind"), "owner": i.get("owner"),
                     "tiles": [_tile(t) for t in i.get("tiles", [])]} for i in v.get("islands", [])],
        "resource_tiles": [[*_tile(r["tile"]), r["resource"]] for r in v.get("resource_tiles", [])],
        "ports": [[*_tile(r["tile"]), r["resource"]] for r in v.get("ports", [])],
        "your_units": [unit(u) for u in v.get("units", [])],
        "enemies_in_sight": [enemy(e) for e in v.get("enemies", [])],
        "enemy_log": [enemy(e, log=True) for e in v.get("enemy_log", [])],
        "outposts": [[*_tile(o["tile"]), o["owner"]] for o in v.get("outposts", [])],
        "you_control": [_tile(t) for t in v.get("control", [])],
        "public_figures": v.get("seats", []), "offers": v.get("offers", []), "chat": v.get("chat", []),
        "last_round_events": v.get("events", []),
        **({"outcome": v["outcome"]} if v.get("outcome") else {}),
    }


def compact_view(view: dict[str, Any]) -> dict[str, Any]:
    """The player API's view, shaped for a language model: tiles as [x, y], nothing repeated."""
    deadline = int(view.get("deadline_unix_ms") or 0)
    out: dict[str, Any] = {
        "game": view["game"], "game_id": view["game_id"],
        "status": STATUS.get(str(view["status"]), str(view["status"])),
        "round": view["round"], "you": view["you"], "submitted_this_round": view["submitted"],
        "expected_to_submit": view["expected"],
        "seconds_left": round(max(0.0, deadline / 1000 - time.time()), 1) if deadline else None,
        "players": [{"seat": p["seat"], "nickname": p["nickname"], "submitted": p["submitted"],
                     "connected": p["connected"]} for p in view["players"]],
    }
    if "pending" in view:
        out["your_orders_this_round"] = view["pending"]
    inner = view.get("view")
    if inner is not None:
        out.update(_salvo(inner) if view["game"] == "salvo" else _archipelago(inner))
    if "standing" in view:
        out["standing_orders"] = view["standing"]
    return out


def tool_error(exc: BaseException) -> ToolError:
    err = errors.as_game_error(exc)
    kind = errors.kind_of(err)
    where = ", ".join(p for p in (f"field {err.field}" if err.field else "",
                                  f"rule {err.rule}" if err.rule else "") if p)
    retry = "yes, later" if kind.retry else "no: change the request"
    return ToolError(f"{kind.code} ({kind.grpc.name}){' — ' + where if where else ''}: {err.reason}. "
                     f"Retry: {retry}.")


def _update(u: dict[str, Any]) -> dict[str, Any]:
    out = {k: u[k] for k in ("kind", "round", "seat", "event_kind", "data", "chat") if u.get(k) not in (None, "", {})}
    return out


class McpDoor:
    """The MCP server and its route; ``api()`` gives the player API of the running gateway."""

    def __init__(self, api: Callable[[], PlayerAPI], host: str = "127.0.0.1") -> None:
        self.api = api
        self.server: MCPServer[Any] = MCPServer(name="archipelago", title="Archipelago game cluster",
                                                instructions=INSTRUCTIONS)
        sub = self.server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                              json_response=True, host=host, max_request_body_size=MAX_BODY)
        self.routes: list[BaseRoute] = list(sub.routes)
        self._tools()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield

    # ------------------------------------------------------------------ plumbing
    async def _caller(self, ctx: Context) -> tuple[PlayerAPI, str, Caller]:
        headers = ctx.headers or {}
        token = bearer(headers.get("authorization") or headers.get("Authorization"))
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

    async def _run(self, ctx: Context, body: Callable[[PlayerAPI, str, Caller], Awaitable[Any]]) -> Any:
        try:
            api, token, who = await self._caller(ctx)
            return await body(api, token, who)
        except ToolError:
            raise
        except Exception as exc:  # every failure becomes a tool error naming its rule
            raise tool_error(exc) from None

    async def _view(self, api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
        return await api.view(token, who.game_id)

    @staticmethod
    def _member(kind: str, holder: Message, field: str, value: Any, what: str) -> None:
        """Fill ``holder.<field>`` (a game's message) from JSON, refused as the JSON door refuses it."""
        if not isinstance(value, dict):
            raise InvalidOrder(f"{what} is a JSON object (see the rules tool)", field=what)
        getattr(holder, field).CopyFrom(parse(value, type(getattr(holder, field))))

    # ------------------------------------------------------------------ tools
    def _tools(self) -> None:
        server = self.server

        @server.tool(title="The rules of your game")
        async def rules(ctx: Context) -> str:
            """The rules of the game this token plays, in brief: goal, rounds, the exact JSON of orders,
            fights, economy, what you can see. Read this first."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> str:
                return (RULES / f"{await api.kind_of(who.game_id)}.md").read_text(encoding="utf-8")
            result: str = await self._run(ctx, body)
            return result

        @server.tool(title="What you know now")
        async def get_view(ctx: Context) -> dict[str, Any]:
            """Your player's view now (and nothing it may not see): game, status ("lobby", "running",
            "over"), round (0 is the setup round), seconds_left, whether you have submitted, the players
            (seat, nickname, submitted, connected), your orders this round if any, and the game's own
            view. Archipelago: map rows, visible tiles, your units (id, type, at [x, y]), enemies in
            sight (owner, domain, type if revealed), the enemy log, stock, score, target, offers, chat,
            last round's events, standing orders. Salvo: phase, shots_allowed, your fleet with hits,
            your shots [square, round], the reports of your salvos, enemy ships sunk. Tiles are [x, y]."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                return compact_view(await self._view(api, token, who))
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        @server.tool(title="What you may do now")
        async def legal_moves(ctx: Context, unit: str | None = None) -> dict[str, Any]:
            """The moves the rules allow you now, from your view. Archipelago round 0: for each unit
            the tiles it may be placed on. Later rounds: for each of your units (or only `unit`, a unit
            id), the tiles [x, y] it can reach this round, the actions it may take with their targets,
            and the builds you can afford. Salvo: placement needs in round 0; then shots_allowed and
            the untried squares. Use them in submit_orders."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await self._view(api, token, who)
                if view["status"] != "running" or "view" not in view:
                    return {"status": view["status"], "note": "nothing to do: the game is not running"}
                moves: dict[str, Any] = get_game(view["game"]).legal_moves(view["view"], unit)
                return {"round": view["round"], **moves}
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        @server.tool(title="Submit your orders for this round")
        async def submit_orders(ctx: Context, round: int, orders: dict[str, Any], done: bool = True) -> dict[str, Any]:
            """Submit (or replace) your orders for `round` — the round number get_view shows; orders
            planned for an earlier round are refused, never applied to the next one. `orders` is the
            game's orders object exactly as the rules tool shows it, e.g. Salvo
            {"shots": ["A1", "B2"]} or {"placement": [{"ship": "battleship", "bow": "A1", "vertical":
            false}, …]} or {"random_placement": true}; Archipelago {"units": [{"unit": "<id>", "to":
            {"x": 3, "y": 4}}], "builds": [{"type": "rank1"}]} or, in round 0, {"deploy": [{"unit":
            "<id>", "tile": {"x": 5, "y": 4}}]}. done=false keeps them as a draft without marking you
            done (a draft does not close the round early). The whole submission is refused, changing
            nothing, if any part breaks a rule: the error names the field and the rule."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                view = await self._view(api, token, who)
                kind = view["game"]
                if view["status"] == "lobby":
                    raise NotStarted("the game has not started yet", field="round", rule="A4")
                if round != view["round"] and view["status"] == "running":
                    raise StaleVersion(f"round {view['round']} is open now, not round {round}: look again",
                                       field="round", rule="A16")
                req = game_pb2.SubmitOrdersRequest(game_id=who.game_id, version=int(view["version"]), draft=not done)
                self._member(kind, req, kind, orders, "orders")
                ack = await rpc.submit_orders(api, req, token)
                return to_json(ack)
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        @server.tool(title="Set your standing orders (Archipelago)")
        async def set_standing_orders(ctx: Context, standing: dict[str, Any]) -> dict[str, Any]:
            """Replace your standing orders (Archipelago, A70–A74): what plays for you when you do not
            submit, and what units without an order do. {"posture": "hold"|"defensive"|"balanced"|
            "aggressive", "units": [{"unit": "<id>", "order": "stay"|"guard"|"patrol"|"move"|"escort"|
            "hunt", "tile": {"x":…,"y":…}, "target": "<unit id>", "waypoints": [{"x":…,"y":…}, …]}],
            "build_queue": [{"type": "rank1"}], "bonus": "iron", "bank_rules": [{"give": "wood",
            "get": "iron", "keep": 2}], "accept_rules": [{"max_ratio": 1.0}]}."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                kind = await api.kind_of(who.game_id)
                req = game_pb2.SetStandingOrdersRequest(game_id=who.game_id)
                if kind not in req.DESCRIPTOR.fields_by_name:
                    raise InvalidOrder(f"{kind} has no standing orders", field="standing", rule="A70")
                self._member(kind, req, kind, standing, "standing")
                return to_json(await rpc.set_standing_orders(api, req, token))
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        async def act(ctx: Context, build: Callable[[game_pb2.ActRequest], None]) -> dict[str, Any]:
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                req = game_pb2.ActRequest(game_id=who.game_id)
                build(req)
                return to_json(await rpc.act(api, req, token))
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        @server.tool(title="Chat")
        async def chat(ctx: Context, text: str, to: int | None = None) -> dict[str, Any]:
            """Send a chat message (1–500 characters) to every player, or to one seat `to`. At most 10
            per round (A53). Others see it as your player's message."""
            return await act(ctx, lambda r: r.chat.CopyFrom(game_pb2.ChatAction(text=text, to=to)))

        @server.tool(title="Offer a trade (Archipelago)")
        async def offer_trade(ctx: Context, give: dict[str, int], get: dict[str, int],
                              to: int | None = None) -> dict[str, Any]:
            """Offer to give resources for others, to one seat `to` or to everyone (A53): e.g.
            give {"wood": 2}, get {"iron": 1}. Resources: wood, food, iron, fuel. At most 3 offers a
            round; offers expire when the round closes. The offer's id appears in get_view's offers."""
            def build(r: game_pb2.ActRequest) -> None:
                r.offer.CopyFrom(parse({"give": give, "get": get, **({"to": to} if to is not None else {})},
                                       archipelago_pb2.OfferAction))  # type: ignore[arg-type]
            return await act(ctx, build)

        @server.tool(title="Answer a trade offer (Archipelago)")
        async def answer_offer(ctx: Context, offer: str,
                               answer: Literal["accept", "decline", "withdraw"]) -> dict[str, Any]:
            """accept an offer made to you (executed at once if both still hold the goods), decline one
            made to you alone, or withdraw your own (A53). `offer` is the id from get_view's offers."""
            def build(r: game_pb2.ActRequest) -> None:
                getattr(r, answer).offer = offer
            return await act(ctx, build)

        @server.tool(title="Trade with the bank (Archipelago)")
        async def bank_trade(ctx: Context, give: str, get: str, times: int = 1) -> dict[str, Any]:
            """Give 4 of `give` for 1 of `get` (2 for 1 when you control a port of `give`), `times`
            times, at once (A52). Resources: wood, food, iron, fuel."""
            bank = archipelago_pb2.BankAction(give=give, get=get, times=times)
            return await act(ctx, lambda r: r.bank.CopyFrom(bank))

        @server.tool(title="Wait for the next round")
        async def wait_for_next_round(ctx: Context, after_round: int | None = None,
                                      timeout_seconds: float = 60.0) -> dict[str, Any]:
            """Wait (long poll) until a round later than `after_round` opens or the game ends, at most
            timeout_seconds (1–300). Pass the round you just submitted orders for: if a later round is
            already open, it answers at once. Without after_round it waits for the round after the
            current one. Returns the round and status now, whether it timed out, and what happened
            meanwhile (chat, submissions, the closed round's events). Then call get_view."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                if not 1 <= timeout_seconds <= MAX_WAIT_S:
                    raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
                view = await self._view(api, token, who)
                start_round = view["round"] if after_round is None else after_round
                happened: list[dict[str, Any]] = []
                timed_out = False
                if view["status"] == "lobby" or (view["status"] == "running" and view["round"] <= start_round):
                    stream = await api.watch(token, who.game_id, int(view["seq"]))
                    try:
                        async with asyncio.timeout(timeout_seconds):
                            async for u in stream:
                                if u.get("seq", 0) == 0:
                                    continue  # presence notices
                                happened.append(_update(u))
                                del happened[:-MAX_WAIT_UPDATES]
                                if u["kind"] == "game_over" or (u["kind"] == "round_opened"
                                                                and int(u.get("round", 0)) > start_round):
                                    break
                    except TimeoutError:
                        timed_out = True
                    finally:
                        await stream.aclose()
                    view = await self._view(api, token, who)
                return {"round": view["round"], "status": view["status"], "timed_out": timed_out,
                        "happened": happened}
            result: dict[str, Any] = await self._run(ctx, body)
            return result

        @server.resource("game://{game_id}/view", name="view", title="Your view now", mime_type="application/json")
        async def view_resource(game_id: str, ctx: Context) -> str:
            """Your view of game `game_id` now: the same as the get_view tool (its `game_id`)."""
            async def body(api: PlayerAPI, token: str, who: Caller) -> dict[str, Any]:
                return compact_view(await api.view(token, game_id))
            return json.dumps(await self._run(ctx, body), ensure_ascii=False)

        def rules_of(kind: str) -> Callable[[], str]:
            text = (RULES / f"{kind}.md").read_text(encoding="utf-8")

            def read() -> str:
                return text
            read.__doc__ = f"The rules of {kind} for an agent (the same as the rules tool)."
            return read

        for kind in sorted(p.stem for p in RULES.glob("*.md")):
            server.resource(f"game://rules/{kind}", name=f"rules-{kind}", title=f"The rules of {kind}",
                            mime_type="text/markdown")(rules_of(kind))


__all__ = ["McpDoor", "compact_view", "tool_error"]
