"""The MCP door's tools (A90): one named method per tool on :class:`AgentTools`, registered from one
table (:data:`TOOLS`), with the door's resources (:func:`register`).

Every tool goes through :meth:`gateway.mcp_door.McpDoor.calling` (the caller of the agent token; any
failure a tool error naming its rule) and the same handlers as the gRPC and JSON doors
(:mod:`gateway.rpc`); each answers one compact JSON text (:func:`gateway.mcp_answers.dumps`). A tool's
description is its docstring, with what :data:`TOOLS` says it adds: the doors' idempotency key, the
notifications a wait reports, each game's part of the view or of the legal moves.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from google.protobuf.message import Message
from mcp.server.mcpserver import Context

from archipelago.v1 import game_pb2
from engine.errors import InvalidOrder, NotStarted, StaleVersion
from gateway import rpc
from gateway.agent_views import SHAPERS, shaper
from gateway.mcp_answers import RULES, STATUS, compact_step, compact_view, dumps, resource_error, rules_text
from gateway.mcp_wait import MAX_WAIT_S, my_decision, next_round, read_since, report
from gateway.web import parse

if TYPE_CHECKING:
    from gateway.mcp_door import McpDoor

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


@dataclass(frozen=True)
class ToolRow:
    """One tool: its :class:`AgentTools` method, its title, and what its description adds."""

    name: str
    title: str
    idempotent: bool = False  # mutates: takes the doors' optional idempotency_key (IDEMPOTENCY)
    games_doc: str = ""  # the shapers' attribute whose text each game adds ("view_doc", "moves_doc")


#: every tool, in the order tools/list gives them
TOOLS: tuple[ToolRow, ...] = (
    ToolRow("rules", "The rules of your game"),
    ToolRow("get_view", "What you know now", games_doc="view_doc"),
    ToolRow("legal_moves", "What you may do now", games_doc="moves_doc"),
    ToolRow("submit_orders", "Submit your orders for this round", idempotent=True),
    ToolRow("set_standing_orders", "Set your standing orders (Archipelago)", idempotent=True),
    ToolRow("act", "Take one action (games of turns: Arcmage)", idempotent=True),
    ToolRow("pass_priority", "Pass (games of turns: Arcmage)", idempotent=True),
    ToolRow("chat", "Chat", idempotent=True),
    ToolRow("offer_trade", "Offer a trade (Archipelago)", idempotent=True),
    ToolRow("answer_offer", "Answer a trade offer (Archipelago)", idempotent=True),
    ToolRow("bank_trade", "Trade with the bank (Archipelago)", idempotent=True),
    ToolRow("wait_for_next_round", "Wait for the next round"),
    ToolRow("wait_for_my_decision", "Wait until you have a decision to make (games of turns: Arcmage)"),
)


def describe(row: ToolRow, doc: str) -> str:
    """The description a client sees: the docstring (``{NOTIFIED}`` in it spelt out), then what ``row`` adds."""
    text = inspect.cleandoc(doc).replace("{NOTIFIED}", NOTIFIED)
    if row.idempotent:
        text = f"{text.rstrip()} {IDEMPOTENCY}"
    games = [f"{g.title}: {getattr(g, row.games_doc)}" for g in SHAPERS.values()
             if row.games_doc and getattr(g, row.games_doc)]
    return f"{text.rstrip()} {' '.join(games)}" if games else text


def member(holder: Message, field: str, value: Any, what: str) -> None:
    """Fill ``holder.<field>`` (a game's message) from JSON, refused as the JSON door refuses it."""
    if not isinstance(value, dict):
        raise InvalidOrder(f"{what} is a JSON object (see the rules tool)", field=what)
    getattr(holder, field).CopyFrom(parse(value, type(getattr(holder, field))))


class AgentTools:
    """The tools of an MCP door: ``ctx`` and the tool's arguments in, one compact JSON text out."""

    def __init__(self, door: McpDoor) -> None:
        self.door = door

    async def rules(self, ctx: Context) -> str:
        """The rules of the game this token plays, in brief: goal, rounds, the exact JSON of orders,
        fights, economy, what you can see, and (Archipelago) the unit table with every cost. Read
        this first."""
        async with self.door.calling(ctx) as (api, _token, who):
            return rules_text(await api.kind_of(who.game_id))

    async def get_view(self, ctx: Context, since_seq: int | None = None) -> str:
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
        async with self.door.calling(ctx) as (api, token, who):
            view = await api.view(token, who.game_id)
            out = compact_view(view)
            if since_seq is not None:
                got, last = await read_since(api, token, who, since_seq, int(view["seq"]))
                out["seq"] = last
                out["happened"] = report(view["game"], got)
            return dumps(out)

    async def legal_moves(self, ctx: Context, unit: str | None = None) -> str:
        """What the rules allow you now, from your view (each option is legal on its own), with
        round, version and (games of turns) step as get_view has them."""
        async with self.door.calling(ctx) as (api, token, who):
            view = await api.view(token, who.game_id)
            if view["status"] != "running" or "view" not in view:
                return dumps({"status": view["status"], "note": "nothing to do: the game is not running"})
            game = shaper(view["game"])
            moves = game.moves(view["view"], unit)
            head: dict[str, Any] = {"round": view["round"]}
            if game.turns:
                step = compact_step(view)
                head.update(version=view["version"], step=step)
                if step is None or not step["your_decision"]:
                    head["note"] = "not your decision now: call wait_for_my_decision"
            return dumps({**head, **moves})

    async def submit_orders(self, ctx: Context, round: int, orders: dict[str, Any], done: bool = True,
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
        async with self.door.calling(ctx) as (api, token, who):
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
            member(req, kind, orders, "orders")
            ack: Any = await rpc.submit_orders(api, req, token)
            return dumps({"round": ack.round, "submitted": ack.submitted, "replayed": ack.replayed})

    async def set_standing_orders(self, ctx: Context, standing: dict[str, Any], idempotency_key: str = "") -> str:
        """Replace your standing orders (Archipelago, A70–A74): what plays for you when you do not
        submit, and what units without an order do. {"posture": "hold"|"defensive"|"balanced"|
        "aggressive", "units": [{"unit": "<id>", "order": "stay"|"guard"|"patrol"|"move"|"escort"|
        "hunt", "tile": {"x": 3, "y": 4}, "target": "<unit id>", "waypoints": [{"x": 3, "y": 4}, …]}],
        "build_queue": [{"type": "rank1"}], "bonus": "iron", "bank_rules": [{"give": "wood",
        "get": "iron", "keep": 2}], "accept_rules": [{"max_ratio": 1.0}]}. Answers {ok, replayed}."""
        async with self.door.calling(ctx) as (api, token, who):
            kind = await api.kind_of(who.game_id)
            req = game_pb2.SetStandingOrdersRequest(game_id=who.game_id, idempotency_key=idempotency_key)
            if kind not in req.DESCRIPTOR.fields_by_name:
                raise InvalidOrder(f"{kind} has no standing orders", field="standing", rule="A70")
            member(req, kind, standing, "standing")
            ack: Any = await rpc.set_standing_orders(api, req, token)
            return dumps({"ok": True, "replayed": ack.replayed})

    async def _send(self, ctx: Context, key: str, build: Callable[[game_pb2.ActRequest], None]) -> str:
        async with self.door.calling(ctx) as (api, token, who):
            req = game_pb2.ActRequest(game_id=who.game_id, idempotency_key=key)
            build(req)
            ack: Any = await rpc.act(api, req, token)
            return dumps({"ok": True, "replayed": ack.replayed})

    async def _turn_action(self, ctx: Context, key: str, version: int | None,
                          action: Callable[[str], Any]) -> str:
        """One action of a game of turns (its ActRequest member, named after the kind), then the
        step it led to."""
        async with self.door.calling(ctx) as (api, token, who):
            kind = await api.kind_of(who.game_id)
            req = game_pb2.ActRequest(game_id=who.game_id, idempotency_key=key)
            if not shaper(kind).turns or kind not in req.DESCRIPTOR.fields_by_name:
                raise InvalidOrder(f"{kind} is played by rounds of orders: use submit_orders", field="action",
                                   rule="A16")
            if version is not None:
                req.version = version
            member(req, kind, action(kind), "action")
            ack: Any = await rpc.act(api, req, token)
            view = await api.view(token, who.game_id)
            return dumps({"ok": True, "replayed": ack.replayed, "version": view["version"], "round": view["round"],
                    "status": STATUS.get(str(view["status"]), str(view["status"])), "step": compact_step(view)})

    async def act(self, ctx: Context, action: dict[str, Any], version: int | None = None,
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
        return await self._turn_action(ctx, idempotency_key, version, lambda kind: action)

    async def pass_priority(self, ctx: Context, version: int | None = None, idempotency_key: str = "") -> str:
        """Pass, in a game played by turns (Arcmage): the same as act with {"pass": {}} — end your
        phase step (the game goes on to the next phase), let the stack resolve or the game go on in
        a window (no answer), or decline an optional choice. Answers as act does."""
        def action(kind: str) -> Any:
            found = shaper(kind).pass_action
            if found is None:
                raise InvalidOrder(f"{kind} has no pass action", field="action", rule="A16")
            return found
        return await self._turn_action(ctx, idempotency_key, version, action)

    async def chat(self, ctx: Context, text: str, to: int | None = None, idempotency_key: str = "") -> str:
        """Send a chat message (1–500 characters) to every player, or to one seat `to`. At most 10
        per round (A53). Others see it as your player's message. Answers {ok, replayed}."""
        return await self._send(ctx, idempotency_key, lambda r: r.chat.CopyFrom(game_pb2.ChatAction(text=text, to=to)))

    async def offer_trade(self, ctx: Context, give: dict[str, int], get: dict[str, int], to: int | None = None,
                          idempotency_key: str = "") -> str:
        """Offer to give resources for others, to one seat `to` or to everyone (A53): e.g.
        give {"wood": 2}, get {"iron": 1}. Resources: wood, food, iron, fuel. At most 3 offers a
        round; offers expire when the round closes. The offer's id appears in get_view's offers.
        Answers {ok, replayed}."""
        def build(r: game_pb2.ActRequest) -> None:
            r.offer.CopyFrom(parse({"give": give, "get": get, **({"to": to} if to is not None else {})},
                                   type(r.offer)))  # type: ignore[arg-type]
        return await self._send(ctx, idempotency_key, build)

    async def answer_offer(self, ctx: Context, offer: str, answer: Literal["accept", "decline", "withdraw"],
                           idempotency_key: str = "") -> str:
        """accept an offer made to you (executed at once if both still hold the goods), decline one
        made to you alone, or withdraw your own (A53). `offer` is the id from get_view's offers.
        Answers {ok, replayed}."""
        def build(r: game_pb2.ActRequest) -> None:
            getattr(r, answer).offer = offer
        return await self._send(ctx, idempotency_key, build)

    async def bank_trade(self, ctx: Context, give: str, get: str, times: int = 1, idempotency_key: str = "") -> str:
        """Give 4 of `give` for 1 of `get` (2 for 1 when you control a port of `give`: legal_moves'
        bank says the rate), `times` times, at once (A52). Resources: wood, food, iron, fuel.
        Answers {ok, replayed}."""
        def build(r: game_pb2.ActRequest) -> None:
            r.bank.give, r.bank.get, r.bank.times = give, get, times
        return await self._send(ctx, idempotency_key, build)

    async def wait_for_next_round(self, ctx: Context, after_round: int | None = None,
                                  timeout_seconds: float = 60.0) -> str:
        """Wait (long poll) until a round later than `after_round` opens or the game ends, at most
        timeout_seconds (1–300). Pass the round you just submitted orders for: if a later round is
        already open (your submission may have closed the round), it answers at once. Without
        after_round it waits for the round after the current one (in the lobby: for the start).
        Answers {round, status, timed_out, happened, notifications}: happened has one record per
        round from `after_round` on, {round, submitted: [seats], chat: [{from, text, to?}], events:
        [{kind, …}] (the round's trades and, once it closed, its resolution as you saw it), closed:
        true, game_over: outcome}. {NOTIFIED} Then call get_view."""
        async with self.door.calling(ctx) as (api, token, who):
            if not 1 <= timeout_seconds <= MAX_WAIT_S:
                raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
            return dumps(await next_round(api, token, who, after_round, timeout_seconds))

    async def wait_for_my_decision(self, ctx: Context, since_seq: int | None = None,
                                   timeout_seconds: float = 60.0) -> str:
        """Wait (long poll) until you may act — your seat is one of the step's players: your turn's
        phase step, a decision the game asks of you, a window in which you may answer — or the game
        is over, at most timeout_seconds (1–300); at once if that is so already. Pass since_seq = the
        seq of your last answer (get_view, this tool) to be told what happened after it (the other
        players' plays, the autopilot's answers, what your own actions led to). Answers {status,
        seq, your_decision, timed_out, step, happened: [{seq, kind, …}] (events, cards as "Name
        (id)"; chat {from, text}; game_over), notifications, outcome once over}. {NOTIFIED} Then:
        legal_moves and act (or pass_priority); call again with the seq it answered."""
        async with self.door.calling(ctx) as (api, token, who):
            if not 1 <= timeout_seconds <= MAX_WAIT_S:
                raise InvalidOrder(f"timeout_seconds is 1–{MAX_WAIT_S:.0f}", field="timeout_seconds")
            return dumps(await my_decision(api, token, who, since_seq, timeout_seconds))

    async def view_resource(self, game_id: str, ctx: Context) -> str:
        """Your view of game `game_id` now: the same as the get_view tool (its `game_id`)."""
        try:
            api, token, _who = await self.door.caller(ctx)
            return dumps(compact_view(await api.view(token, game_id)))
        except Exception as exc:
            raise resource_error(exc) from None


def rules_of(kind: str) -> Callable[[], str]:
    """The read of resource ``game://rules/<kind>`` (the text read once)."""
    text = rules_text(kind)

    def read() -> str:
        return text
    read.__doc__ = f"The rules of {kind} for an agent (the same as the rules tool)."
    return read


def register(door: McpDoor) -> AgentTools:
    """Register every tool of :data:`TOOLS` and the resources (a game's view, each game's rules) on the
    door's MCP server."""
    tools, server = AgentTools(door), door.server
    for row in TOOLS:
        method = getattr(tools, row.name)
        server.add_tool(method, name=row.name, title=row.title, description=describe(row, method.__doc__ or ""),
                        structured_output=False)
    server.resource("game://{game_id}/view", name="view", title="Your view now",
                    mime_type="application/json")(tools.view_resource)
    for kind in sorted(p.stem for p in RULES.glob("*.md")):
        server.resource(f"game://rules/{kind}", name=f"rules-{kind}", title=f"The rules of {kind}",
                        mime_type="text/markdown")(rules_of(kind))
    return tools


__all__ = ["IDEMPOTENCY", "NOTIFIED", "TOOLS", "AgentTools", "ToolRow", "describe", "member", "register"]
