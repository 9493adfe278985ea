"""The MCP door (A90) with the `mcp` package's own client over streamable HTTP, against the cluster
(local Ray, real redis-server, the gateway's HTTP port). The agent plays through the tools only; the
other player is the autopilot bot on the gRPC door and records everything it receives."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from archipelago.v1 import archipelago_pb2, game_pb2, lobby_pb2
from client.base import BaseClient
from client.bot import play_seat
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S

pytestmark = pytest.mark.e2e

TOOLS = {"rules", "get_view", "legal_moves", "submit_orders", "set_standing_orders", "chat", "offer_trade",
         "answer_offer", "bank_trade", "wait_for_next_round", "act", "pass_priority", "wait_for_my_decision"}
MUTATING = {"submit_orders", "set_standing_orders", "chat", "offer_trade", "answer_offer", "bank_trade", "act",
            "pass_priority"}
AGENT_SCRIPT = Path(__file__).with_name("agent") / "salvo_agent.py"


@contextlib.asynccontextmanager
async def agent(cluster: Cluster, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(f"{cluster.http_url}/mcp", http_client=http)) as c:
        yield c


async def call(c: Client, tool: str, **args: Any) -> Any:
    """A tool's answer as JSON (fails on a tool error)."""
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, f"{tool}{args}: {text}"
    return json.loads(text) if text[:1] in "{[" else text


async def refused(c: Client, tool: str, **args: Any) -> str:
    """The text of a tool error (fails if the tool succeeds)."""
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert result.is_error, f"{tool}{args} succeeded: {text}"
    return text


async def new_game(cluster: Cluster, game: str, **options: Any) -> tuple[BaseClient, BaseClient, str, str]:
    """A started 2-player game; (host client, guest client, game id, the guest's agent token)."""
    host = cluster.client("grpc")
    created = await host.create(game, seats=2, nickname="host", deadline_seconds=60, **options)
    guest = cluster.client("grpc")
    await guest.join(created.code, "guest")
    token = (await guest.create_agent_token(created.game_id, "test agent")).token
    await host.start(created.game_id)
    return host, guest, created.game_id, token


@contextlib.asynccontextmanager
async def bot(host: BaseClient, game_id: str) -> AsyncIterator[list[game_pb2.Update]]:
    """The host plays by the autopilot; every update its stream receives is kept."""
    seen: list[game_pb2.Update] = []

    async def record() -> None:
        async with contextlib.aclosing(host.watch(game_id, 0)) as stream:
            async for u in stream:
                seen.append(u)

    tasks = [asyncio.get_running_loop().create_task(play_seat(host, game_id, log=lambda *_: None)),
             asyncio.get_running_loop().create_task(record())]
    try:
        yield seen
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def nothing_reveals_the_agent(seen: list[game_pb2.Update], views: list[game_pb2.GetViewResponse],
                              token: str) -> None:
    """A90: what the other player received is what a human's play would give it."""
    from google.protobuf import json_format
    texts = [json_format.MessageToJson(m) for m in [*seen, *views]]
    for text in texts:
        for word in (token, "agent", "mcp", "MCP"):
            assert word not in text, (word, text[:300])
    guest = {p.seat: p for v in views for p in v.players}[1]
    assert guest.nickname == "guest" and not guest.autopilot


async def test_a90_tools_are_listed_with_descriptions_and_schemas(cluster: Cluster) -> None:
    _host, _guest, _game_id, token = await new_game(cluster, "salvo")
    async with agent(cluster, token) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == TOOLS
        for t in tools.values():
            assert len(t.description or "") > 80, t.name
            assert t.input_schema["type"] == "object"
        submit = tools["submit_orders"].input_schema
        assert set(submit["required"]) == {"round", "orders"} and "done" in submit["properties"]
        for name in MUTATING:  # issue 19: every mutation takes the doors' idempotency key, and says so
            assert "idempotency_key" in tools[name].input_schema["properties"], name
            assert "idempotency_key" in (tools[name].description or ""), name
            assert "idempotency_key" not in tools[name].input_schema.get("required", []), name
        for t in tools.values():  # one copy of each answer: the text (no structuredContent twin)
            assert t.output_schema is None, t.name
        assert set(tools["answer_offer"].input_schema["properties"]["answer"]["enum"]) == {
            "accept", "decline", "withdraw"}
        rules = await call(c, "rules")
        assert "S3" in rules and '"random_placement": true' in rules and "idempotency_key" in rules
        result = await c.call_tool("get_view", {})
        assert result.structured_content is None and len(result.content) == 1
        resources = {str(r.uri) for r in (await c.list_resources()).resources}
        assert resources == {"game://rules/salvo", "game://rules/archipelago", "game://rules/arcmage"}
        templates = {t.uri_template for t in (await c.list_resource_templates()).resource_templates}
        assert templates == {"game://{game_id}/view"}
        view = await call(c, "get_view")
        read = await c.read_resource(f"game://{view['game_id']}/view")
        assert json.loads(read.contents[0].text)["you"] == 1  # type: ignore[union-attr]


async def test_a90_an_agent_plays_a_whole_salvo_game_and_nobody_can_tell(cluster: Cluster) -> None:
    host, guest, game_id, token = await new_game(cluster, "salvo")
    async with bot(host, game_id) as seen, agent(cluster, token) as c:
        async with asyncio.timeout(120):
            while True:
                view = await call(c, "get_view")
                if view["status"] == "over":
                    break
                if view["expected_to_submit"] and not view["submitted_this_round"]:
                    if view["round"] == 1:  # the round waits for the agent: a short wait times out
                        waited = await call(c, "wait_for_next_round", timeout_seconds=1)
                        assert waited["timed_out"] and waited["round"] == 1, waited
                    moves = await call(c, "legal_moves")
                    if moves["phase"] == "placement":
                        orders: dict[str, Any] = {"random_placement": True}
                    else:
                        orders = {"shots": moves["untried"][: moves["shots_allowed"]]}
                    ack = await call(c, "submit_orders", round=view["round"], orders=orders)
                    assert ack["submitted"] and ack["round"] == view["round"]
                    if view["round"] == 1:
                        await call(c, "chat", text="good luck")
                await call(c, "wait_for_next_round", after_round=view["round"], timeout_seconds=30)
        assert view["outcome"]["reason"] in ("fleet_sunk", "both_fleets_sunk")
        assert len(view["your_shots"]) > 0 and view["reports"]
        final = await host.view(game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    chats = [u for u in seen if u.kind == "chat"]
    assert [(u.seat, u.chat.nickname, u.chat.text) for u in chats] == [(1, "guest", "good luck")]
    submitted = {u.seat for u in seen if u.kind == "submitted"}
    assert 1 in submitted
    nothing_reveals_the_agent(seen, [final], token)
    assert (await guest.view(game_id)).you == 1


async def test_a90_an_agent_plays_archipelago_rounds(cluster: Cluster) -> None:
    host, guest, game_id, token = await new_game(cluster, "archipelago",
                                                 archipelago=archipelago_pb2.ArchipelagoOptions(max_rounds=20))
    async with bot(host, game_id) as seen, agent(cluster, token) as c:
        moved: dict[str, list[int]] = {}
        async with asyncio.timeout(120):
            for _ in range(4):  # round 0 and three more
                view = await call(c, "get_view")
                assert view["status"] == "running"
                moves = await call(c, "legal_moves")
                if view["round"] == 0:
                    orders: dict[str, Any] = {}
                else:
                    mover = next(m for m in moves["units"] if m["moves"])  # (its own tile is not a move)
                    target = mover["moves"][0]
                    assert set(target) == {"x", "y"}  # issue 19: the shape orders take, used as it comes
                    moved = {mover["unit"]: target}
                    orders = {"units": [{"unit": mover["unit"], "to": target}]}
                    plain = [b for b in moves["builds"] if set(b) == {"type"}]
                    if plain:
                        orders["builds"] = plain[:1]  # a build order exactly as legal_moves lists it
                draft = await call(c, "submit_orders", round=view["round"], orders=orders, done=False)
                assert not draft["submitted"]  # a draft: the round waits for the real thing
                pending = (await guest.view(game_id)).archipelago_pending  # what the server keeps for seat 1
                assert [u.unit for u in pending.units] == (list(moved) if view["round"] else [])
                await call(c, "submit_orders", round=view["round"], orders=orders)
                if view["round"] == 1:
                    await call(c, "chat", text="shalom")
                    await call(c, "set_standing_orders", standing={"posture": "defensive"})
                    give = next(r for r, n in (await call(c, "get_view"))["stock"].items() if n > 0)
                    await call(c, "offer_trade", give={give: 1}, get={"iron": 1} if give != "iron" else {"wood": 1},
                               to=0)
                    offers = (await call(c, "get_view"))["offers"]
                    assert [(o["from_seat"], o["to_seat"]) for o in offers] == [(1, 0)]
                    await call(c, "answer_offer", offer=offers[0]["id"], answer="withdraw")
                    assert (await call(c, "get_view"))["offers"] == []
                waited = await call(c, "wait_for_next_round", after_round=view["round"], timeout_seconds=60)
                assert waited["round"] == view["round"] + 1 and not waited["timed_out"]
        mine = await guest.view(game_id)
    assert mine.round == 4
    assert mine.archipelago_standing.posture == "defensive"
    final = await host.view(game_id)
    nothing_reveals_the_agent(seen, [final], token)
    assert any(u.kind == "chat" and u.seat == 1 and u.chat.text == "shalom" for u in seen)


async def test_a90_bad_arguments_are_tool_errors_that_change_nothing(cluster: Cluster) -> None:
    host, guest, game_id, token = await new_game(cluster, "salvo")
    before = await guest.view(game_id)
    async with agent(cluster, token) as c:
        text = await refused(c, "submit_orders", round=0, orders={"placement": [{"ship": "battleship", "bow": "K1"}]})
        assert "order/illegal" in text and ("rule S3" in text or "rule S1" in text), text
        text = await refused(c, "submit_orders", round=0, orders={"bogus": 1})
        assert "order/invalid" in text and "Retry: no" in text, text
        # issue 19: a round not open yet is INVALID_ARGUMENT (as SubmitOrders documents for a newer
        # version), an earlier one ABORTED
        text = await refused(c, "submit_orders", round=3, orders={"random_placement": True})
        assert "order/invalid (INVALID_ARGUMENT)" in text and "field round" in text and "rule A16" in text, text
        text = await refused(c, "submit_orders", round=-1, orders={"random_placement": True})
        assert "action/stale_state_id (ABORTED)" in text and "rule A16" in text, text
        text = await refused(c, "submit_orders", round=0, orders="shoot everything")
        assert "submit_orders" in text or "orders" in text, text
        text = await refused(c, "submit_orders", orders={})  # round missing
        assert "round" in text, text
        text = await refused(c, "bank_trade", give="wood", get="iron")  # Salvo has no bank
        assert "order/invalid" in text and "field action" in text, text
        text = await refused(c, "set_standing_orders", standing={"posture": "hold"})
        assert "rule A70" in text, text
        text = await refused(c, "chat", text="")
        assert "rule A53" in text or "text" in text, text
        text = await refused(c, "wait_for_next_round", timeout_seconds=0)
        assert "timeout_seconds" in text, text
        text = await refused(c, "legal_moves", unit="no-such-unit")
        assert "unit" in text, text
    after = await guest.view(game_id)
    assert (after.version, after.submitted) == (before.version, False)
    assert not (await host.view(game_id)).players[1].submitted


async def test_a90_a_revoked_token_and_a_player_secret_are_refused(cluster: Cluster) -> None:
    """Refused before the MCP layer (issue 19): the MCP client gets no tool list, no tool result."""
    host = cluster.client("grpc")
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    made = await host.create_agent_token(created.game_id)
    async with agent(cluster, made.token) as c:
        assert (await call(c, "get_view"))["you"] == 0
        await host.revoke_agent_token(created.game_id, made.token_id)
        with pytest.raises(MCPError):
            await c.call_tool("get_view", {})
    for secret in (created.secret, "agt_nonsense", made.token):
        with pytest.raises(Exception) as caught:
            async with agent(cluster, secret) as c:
                await c.list_tools()
        assert "401" in repr(caught.value) or "error response" in repr(caught.value), caught.value


async def test_a90_a_scripted_agent_that_reads_only_the_tool_descriptions_wins_or_loses_a_salvo_game(
        cluster: Cluster) -> None:
    host, _guest, game_id, token = await new_game(cluster, "salvo")
    env = {**os.environ, "MCP_URL": f"{cluster.http_url}/mcp", "AGENT_TOKEN": token}
    async with bot(host, game_id):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(AGENT_SCRIPT), env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), WAIT_S * 6)
    output = out.decode()
    assert proc.returncode == 0, output
    assert "game over" in output, output
    assert (await host.view(game_id)).status == lobby_pb2.GAME_STATUS_OVER


def test_the_scripted_agent_imports_nothing_of_the_project() -> None:
    source = AGENT_SCRIPT.read_text()
    for module in ("engine", "gateway", "services", "client", "archipelago", "tests"):
        assert f"import {module}" not in source and f"from {module}" not in source
    proc = subprocess.run([sys.executable, "-I", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())",
                           str(AGENT_SCRIPT)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
