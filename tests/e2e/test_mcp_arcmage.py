"""Arcmage through the MCP door (A90, issue 21), against the cluster (local Ray, real redis-server, the
gateway's HTTP port) with the `mcp` package's own client over streamable HTTP. The host creates a
2-player game, makes an agent token for its seat and starts with the autopilot in the other seat.

- a scripted agent written from the tool descriptions alone (tests/e2e/agent/arcmage_agent.py: only
  the `mcp` package and the standard library) plays the whole game;
- bad actions are tool errors naming the field and the rule, and change nothing;
- the Arcmage view, legal actions and waits hold no card id of the other player's hand, deck,
  resource piles or unbuilt cities (checked against the engine's state replayed from the journal at
  the version each answer was made at; M26).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from archipelago.v1 import arcmage_pb2, lobby_pb2
from client.base import BaseClient
from engine.arcmage import GAME
from engine.arcmage.carddb import FACTIONS
from gateway.agent_views import shaper
from gateway.convert import to_json
from gateway.mcp_door import rules_text
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S

pytestmark = pytest.mark.e2e

AGENT_SCRIPT = Path(__file__).with_name("agent") / "arcmage_agent.py"
DOCS = Path(__file__).parents[2] / "docs" / "rules" / "arcmage.md"
#: deadlines (s) far beyond what an agent's answer takes on a loaded machine: nothing here is the autopilot's
TURN_S, RESPONSE_S = 120.0, 60.0


@contextlib.asynccontextmanager
async def agent(cluster: Cluster, token: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(f"{cluster.http_url}/mcp", http_client=http)) as c:
        yield c


async def answer(c: Client, tool: str, **args: Any) -> tuple[Any, str]:
    """A tool's answer as (JSON, its text); fails on a tool error."""
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, f"{tool}{args}: {text}"
    return (json.loads(text) if text[:1] in "{[" else text), text


async def refused(c: Client, tool: str, **args: Any) -> str:
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert result.is_error, f"{tool}{args} succeeded: {text}"
    return text


async def arcmage_for_agent(cluster: Cluster, max_rounds: int) -> tuple[BaseClient, str, str]:
    """A started 2-player Arcmage game, seat 1 the autopilot; (host client, game id, the host's agent
    token)."""
    host = cluster.client("grpc")
    created = await host.create("arcmage", seats=2, nickname="host", deadline_seconds=120,
                                arcmage=arcmage_pb2.ArcmageOptions(max_rounds=max_rounds, turn_seconds=TURN_S,
                                                                   response_seconds=RESPONSE_S))
    token = (await host.create_agent_token(created.game_id, "arcmage agent")).token
    await host.start(created.game_id, fill=True)
    return host, created.game_id, token


def replay(journal: list[dict[str, Any]]) -> dict[int, Any]:
    """The game's state at every version from the start on, by the engine alone."""
    states: dict[int, Any] = {}
    config: dict[str, Any] = {}
    seed = 0
    state: Any = None
    for version, e in enumerate(journal, start=1):
        if e["op"] == "create":
            config, seed = dict(e["config"]), int(e["seed"])
        elif e["op"] == "join" and "config" in e:
            config = dict(e["config"])
        elif e["op"] == "start":
            state = GAME.new_game(config, seed)
        elif e["op"] == "action":
            state, _ = GAME.apply_action(state, int(e["seat"]), e["action"])
        elif e["op"] == "act":
            state, _ = GAME.act(state, int(e["seat"]), e["action"])
        if state is not None:
            states[version] = state
    return states


def hidden_from(state: Any, seat: int) -> set[str]:
    """The ids of the cards ``seat`` may not see (M26): the other seats' hand, deck, resource piles and
    unbuilt cities."""
    out: set[str] = set()
    for q, s in enumerate(state.data["seats"]):
        if q != seat:
            out.update(s["hand"], s["deck"], s["unbuilt"], *(s["piles"][f] for f in FACTIONS))
    return out


def ids_in(text: str) -> set[str]:
    return set(re.findall(r"\b[ct]\d+\b", text))


def pick(moves: dict[str, Any]) -> dict[str, Any]:
    doing = [a for a in moves["actions"] if "pass" not in a["action"]]
    action: dict[str, Any] = (doing or moves["actions"])[0]["action"]
    return action


async def test_a90_an_agent_written_from_the_tool_descriptions_plays_a_whole_arcmage_game(cluster: Cluster) -> None:
    host, game_id, token = await arcmage_for_agent(cluster, max_rounds=16)
    env = {**os.environ, "MCP_URL": f"{cluster.http_url}/mcp", "AGENT_TOKEN": token}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(AGENT_SCRIPT), env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), WAIT_S * 3)
    output = out.decode()
    assert proc.returncode == 0, output
    assert "game over:" in output, output
    final = await host.view(game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    outcome = final.arcmage.outcome
    assert outcome.reason in ("last_player", "max_rounds"), outcome  # a win, a loss or the bound's draw (M3)
    journal = await cluster.api.store.journal_read(game_id)
    mine = [e for e in journal if e["op"] == "action" and e["seat"] == 0]
    assert mine and not [e for e in mine if e["auto"]], "the autopilot played for the agent's seat"
    assert {e["key"] for e in mine} == {f"arcmage-agent-{n}" for n in range(1, len(mine) + 1)}  # each act once
    kinds = {next(iter(e["action"])) for e in mine}
    assert {"choose", "draw", "resource", "play"} <= kinds, kinds  # it built, drew, paid and cast
    assert f"actions: {len(mine)}" in output, output
    states = replay(journal)
    replayed = GAME.outcome(states[len(journal)])  # the engine's replay of the journal ends the same game
    assert replayed is not None and (replayed.reason, list(replayed.winners), replayed.draw) == (
        outcome.reason, list(outcome.winners), outcome.draw), (replayed, outcome)


def test_the_arcmage_agent_imports_nothing_of_the_project() -> None:
    source = AGENT_SCRIPT.read_text()
    for module in ("engine", "gateway", "services", "client", "archipelago", "tests"):
        assert f"import {module}" not in source and f"from {module}" not in source
    proc = subprocess.run([sys.executable, "-I", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())",
                           str(AGENT_SCRIPT)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


async def test_m26_a90_bad_actions_are_refused_naming_field_and_rule_and_no_view_leaks(cluster: Cluster) -> None:
    host, game_id, token = await arcmage_for_agent(cluster, max_rounds=6)
    seen: list[tuple[str, int, str]] = []  # (tool, the version it answered at, its text)
    async with agent(cluster, token) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        for name in ("act", "pass_priority"):
            assert "idempotency_key" in tools[name].input_schema["properties"], name
        assert "Arcmage" in (tools["get_view"].description or "")
        waited, _ = await answer(c, "wait_for_my_decision", timeout_seconds=30)
        assert waited["your_decision"] and not waited["timed_out"], waited
        before = await host.view(game_id)
        view, text = await answer(c, "get_view")
        seen.append(("get_view", view["version"], text))
        assert view["step"]["your_decision"] and view["version"] == before.version, view
        assert [h["id"] for h in view["hand"]] == list(before.arcmage.hand)
        assert all(h["text"] and h["name"] and h["type"] for h in view["hand"]), view["hand"]
        assert view["attribution"] and "CC BY-SA" in view["attribution"]
        assert view["seats"][1]["hand"] == before.arcmage.seats[1].hand_count  # a count, never the cards

        # bad actions: each refused with its field and rule, none applied
        text = await refused(c, "act", action={"play": {"card": "c999", "to": "army"}})
        assert "order/illegal" in text and "field play.card" in text and "rule M33" in text, text
        assert "Retry: no" in text, text
        text = await refused(c, "act", action={"bogus": {}})
        assert "order/invalid" in text and "bogus" in text, text
        text = await refused(c, "act", action={"choose": {"option": "c999"}})
        assert "field choose.option" in text and "rule M53" in text, text
        text = await refused(c, "act", action={"pass": {}}, version=before.version - 1)
        assert "action/stale_state_id" in text and "field version" in text and "rule A16" in text, text
        text = await refused(c, "wait_for_my_decision", timeout_seconds=0)
        assert "timeout_seconds" in text, text
        text = await refused(c, "legal_moves", unit="u1")
        assert "field unit" in text, text
        text = await refused(c, "submit_orders", round=before.round, orders={})
        assert "rule M25" in text or "orders" in text, text
        after = await host.view(game_id)
        assert after.version == before.version and list(after.arcmage.hand) == list(before.arcmage.hand)
        assert len(await cluster.api.store.journal_read(game_id)) == before.version

        # the rules tool serves docs/rules/arcmage.md (its numbers' markers left out)
        rules, _ = await answer(c, "rules")
        assert rules == rules_text("arcmage")
        assert re.sub(r"<!-- /?n(: [A-Za-z_]+)? -->", "", DOCS.read_text()) in rules, \
            "gateway/agent_rules/arcmage.md lags docs/rules/arcmage.md: copy it in again, markers removed"
        assert "wait_for_my_decision" in rules and "legal_moves" in rules

        # play on (legal_moves, act) and look at the table at every decision
        seq = waited["seq"]
        acted = 0
        replayed = False
        async with asyncio.timeout(WAIT_S):
            while acted < 40:
                moves, text = await answer(c, "legal_moves")
                seen.append(("legal_moves", moves["version"], text))
                if not moves["actions"]:
                    break
                assert all(a["does"] for a in moves["actions"]), moves
                action = pick(moves)
                acted += 1
                done, _ = await answer(c, "act", action=action, version=moves["version"], idempotency_key=f"k{acted}")
                if not replayed and done["step"]["your_decision"] and done["round"] == moves["round"] > 0:
                    # the same key again, within the turn (keys are scoped to it, A16): applied once
                    now = (await host.view(game_id)).version
                    again, _ = await answer(c, "act", action=action, version=moves["version"],
                                            idempotency_key=f"k{acted}")
                    assert again["replayed"] and not done["replayed"], (done, again)
                    assert again["version"] == done["version"] == now, (done, again, now)  # nothing applied twice
                    replayed = True
                if done["status"] == "over":
                    break
                if not done["step"]["your_decision"]:
                    waited, text = await answer(c, "wait_for_my_decision", since_seq=seq, timeout_seconds=30)
                    assert not waited["timed_out"], waited
                    seq = waited["seq"]
                    if waited["status"] == "over":
                        break
                view, text = await answer(c, "get_view")
                seen.append(("get_view", view["version"], text))
        assert acted >= 10 and replayed, (acted, replayed)
        tail, text = await answer(c, "get_view", since_seq=0)
        assert any(e["kind"] == "drew" for e in tail["happened"]), tail["happened"][:5]
        assert not any(e["kind"] == "drew_cards" and e.get("player") == 1 for e in tail["happened"])

    journal = await cluster.api.store.journal_read(game_id)
    states = replay(journal)
    checked = 0
    for tool, version, text in seen:
        state = states[version]
        mine = set(state.data["seats"][0]["hand"])
        found = ids_in(text)
        if tool == "get_view":
            assert mine <= found, (tool, version, sorted(mine - found))  # the scanner sees ids: own hand
        hidden = hidden_from(state, 0)
        assert len(hidden) > 30, (version, len(hidden))  # the other seat's hand and deck: something to leak
        leaked = found & hidden
        assert not leaked, (tool, version, sorted(leaked), text[:400])
        checked += 1
    assert checked >= 20, checked


async def until(condition: Any, what: str) -> None:
    """Wait (bounded) for a condition of this process's own gateway to hold."""
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.01)
    assert condition(), what


async def test_a90_wait_for_my_decision_waits_while_the_other_player_thinks(cluster: Cluster) -> None:
    """The other seat is a player on the gRPC door: a short wait times out while it decides; a wait
    already open when it acts returns as soon as a step gives the agent a decision, with what the
    other player did."""
    host = cluster.client("grpc")
    created = await host.create("arcmage", seats=2, nickname="host", deadline_seconds=120,
                                arcmage=arcmage_pb2.ArcmageOptions(max_rounds=6, turn_seconds=TURN_S,
                                                                   response_seconds=RESPONSE_S))
    guest = cluster.client("grpc")
    await guest.join(created.code, "guest")
    token = (await guest.create_agent_token(created.game_id, "arcmage agent")).token
    await host.start(created.game_id)
    gid = created.game_id

    async def host_acts_until_the_guest_decides() -> None:
        for n in range(200):
            v = await host.view(gid)
            if v.status == lobby_pb2.GAME_STATUS_OVER or 1 in v.step.players:
                return
            action = GAME.autopilot_action(to_json(v.arcmage))
            await host.act(gid, key=f"h{v.version}-{n}", version=v.version,
                           arcmage=json_format.ParseDict(action, arcmage_pb2.ArcmageAction()))
        raise AssertionError("the guest never got a decision")

    async with agent(cluster, token) as c:
        for n in range(100):  # the agent plays until it is the host's decision
            if 0 in (await host.view(gid)).step.players:
                break
            moves, _ = await answer(c, "legal_moves")
            await answer(c, "act", action=pick(moves), idempotency_key=f"g{n}")
        short, _ = await answer(c, "wait_for_my_decision", timeout_seconds=1)
        assert short["timed_out"] and not short["your_decision"] and short["step"]["players"] == [0], short
        assert short["status"] == "running" and short["happened"] == [], short
        streams = cluster.api.open_streams()
        task = asyncio.get_running_loop().create_task(
            answer(c, "wait_for_my_decision", since_seq=short["seq"], timeout_seconds=WAIT_S))
        await until(lambda: cluster.api.open_streams() > streams, "the wait's stream opened")
        assert not task.done()
        await host_acts_until_the_guest_decides()
        waited, _ = await asyncio.wait_for(task, WAIT_S)
        assert waited["your_decision"] and not waited["timed_out"], waited
        assert 1 in waited["step"]["players"] and waited["seq"] > short["seq"], waited
        assert waited["happened"] and all(e["seq"] > short["seq"] for e in waited["happened"]), waited
        assert {e.get("player") for e in waited["happened"] if "player" in e} & {0}, waited["happened"]
        view, _ = await answer(c, "get_view", since_seq=short["seq"])
        assert view["step"]["your_decision"] and view["happened"][:len(waited["happened"])] == waited["happened"]


def test_m53_every_legal_action_of_played_games_is_described_with_its_cards_by_name() -> None:
    """The Arcmage shaper on the engine's own views of three seeded games (both seats the autopilot):
    every legal action has a `does` naming each card it moves by name, and every view of the table
    holds the seat's whole hand with faces."""
    shaper_ = shaper("arcmage")
    described: set[str] = set()
    for seed in range(3):
        state = GAME.new_game({"players": 2, "max_rounds": 12}, seed)
        for _ in range(400):
            if GAME.outcome(state) is not None:
                break
            seat = GAME.step(state).players[0]
            v = GAME.view(state, seat)
            table = shaper_.view(v)
            assert [h["id"] for h in table["hand"]] == v["hand"] and all(h["text"] for h in table["hand"])
            moves = shaper_.moves(v, None)
            assert [m["action"] for m in moves["actions"]] == v["legal"]
            for m in moves["actions"]:
                (kind, fields), = m["action"].items()
                assert m["does"], m
                card = fields.get("card")
                if card:
                    assert v["cards"][card]["name"] in m["does"], m
                described.add(kind)
            state, _ = GAME.apply_action(state, seat, GAME.autopilot_action(v))
        assert GAME.outcome(state) is not None, seed
    assert {"pass", "choose", "draw", "resource", "play", "attack", "move", "devote"} <= described, described
