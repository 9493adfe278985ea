"""Issue 23 for MCP agents: `wait_for_next_round` and `wait_for_my_decision` answer the notifications
their player would have had (the outbox's kinds and words, in the player's language), derived from the
updates the wait reads — the start, a new round or turn, a trade offer and a private message addressed
to it — and never another player's. Against the cluster (local Ray, real redis-server, the gateway's
HTTP port)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from archipelago.v1 import archipelago_pb2, arcmage_pb2, notify_pb2
from client.base import BaseClient
from services.notify import kinds as nk
from tests.conftest import Cluster
from tests.e2e.test_mcp_door import agent, call, stock_of

pytestmark = pytest.mark.e2e


def words(kind: str, round_: int, language: str, *, who: str = "", deadline_ms: int = 0) -> dict[str, Any]:
    """A notification as the outbox words it (kinds.payload), in a wait's answer's form."""
    p = nk.payload(delivery_id="", kind=kind, game_id="", game="archipelago", round_=round_, url="",
                   deadline_ms=deadline_ms, at_ms=0, language=language, who=who)
    return {"kind": kind, "round": round_, "title": p["title"], "body": p["body"]}


async def both_play(agents: list[Any], round_: int) -> list[dict[str, Any]]:
    """Each agent submits (empty orders) for ``round_`` and waits for the next round; their answers."""
    async def one(c: Any) -> dict[str, Any]:
        await call(c, "submit_orders", round=round_, orders={})
        waited: dict[str, Any] = await call(c, "wait_for_next_round", after_round=round_, timeout_seconds=60)
        assert waited["round"] == round_ + 1 and not waited["timed_out"], waited
        return waited
    return list(await asyncio.gather(*(one(c) for c in agents)))


async def deadline_of(c: BaseClient, game_id: str) -> int:
    return int((await c.view(game_id)).deadline_unix_ms)


async def test_a90_a53_waiting_agents_hear_their_own_notifications_and_never_another_players(
        cluster: Cluster) -> None:
    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=3, nickname="host", deadline_seconds=120,
                                archipelago=archipelago_pb2.ArchipelagoOptions(max_rounds=30))
    gid = created.game_id
    ann, bob = cluster.client("grpc"), cluster.client("grpc")
    await ann.join(created.code, "ann")
    await bob.join(created.code, "bob")
    await bob.call("Game", "SetNotifications", notify_pb2.SetNotificationsRequest(
        game_id=gid, idempotency_key="he-1", language="he"), notify_pb2.NotificationSettings)
    tokens = [(await p.create_agent_token(gid, "agent")).token for p in (ann, bob)]
    await host.start(gid)  # (the host is not connected: the two agents' submissions close each round, A17)
    async with agent(cluster.http_url, tokens[0]) as a, agent(cluster.http_url, tokens[1]) as b:
        # round 0 (deployment): the start, then the round that opens next, each in its player's language
        first = await both_play([a, b], 0)
        deadline = await deadline_of(host, gid)
        assert first[0]["notifications"] == [words(nk.GAME_STARTED, 0, "en"),
                                             words(nk.YOUR_TURN, 1, "en", deadline_ms=deadline)], first[0]
        assert first[0]["notifications"][1]["title"] == "Your turn"
        assert first[0]["notifications"][1]["body"].startswith("Round 1 of your Archipelago game is open — deadline ")
        assert first[1]["notifications"] == [words(nk.GAME_STARTED, 0, "he"),
                                             words(nk.YOUR_TURN, 1, "he", deadline_ms=deadline)], first[1]
        # round 1: an offer and a private message to each agent (two messages to ann, in one round: one
        # notification), and public ones that notify nobody
        stock = stock_of(await host.view(gid))
        give = max(stock, key=lambda r: stock[r])
        assert stock[give] >= 1, stock
        get = next(r for r in stock if r != give)
        for to in (1, 2):
            await host.act(gid, offer=archipelago_pb2.OfferAction(to=to, give={give: 1}, get={get: 1}))
        await host.act(gid, offer=archipelago_pb2.OfferAction(give={give: 1}, get={get: 1}))  # (to everyone)
        await host.chat(gid, "for ann only", to=1)
        await host.chat(gid, "for bob only", to=2)
        await host.chat(gid, "for everyone")
        await call(b, "chat", text="bob to ann", to=1)
        await call(a, "chat", text="ann to the host", to=0)
        second = await both_play([a, b], 1)
        deadline = await deadline_of(host, gid)
        assert second[0]["notifications"] == [words(nk.TRADE_OFFER, 1, "en", who="host"),
                                              words(nk.PRIVATE_CHAT, 1, "en", who="host"),
                                              words(nk.YOUR_TURN, 2, "en", deadline_ms=deadline)], second[0]
        assert second[0]["notifications"][0]["body"] == "host offered you a trade in your Archipelago game."
        assert second[1]["notifications"] == [words(nk.TRADE_OFFER, 1, "he", who="host"),
                                              words(nk.PRIVATE_CHAT, 1, "he", who="host"),
                                              words(nk.YOUR_TURN, 2, "he", deadline_ms=deadline)], second[1]
        chats = [c for r in second[1]["happened"] for c in r.get("chat", [])]
        assert {c["text"] for c in chats} == {"for bob only", "for everyone", "bob to ann"}, "nothing of ann's"
        # round 2: nothing addressed to the agents (a public offer, a message from one agent to the host)
        await host.act(gid, offer=archipelago_pb2.OfferAction(give={give: 1}, get={get: 1}))
        await call(b, "chat", text="bob to the host", to=0)
        third = await both_play([a, b], 2)
        deadline = await deadline_of(host, gid)
        assert [w["notifications"] for w in third] == [[words(nk.YOUR_TURN, 3, "en", deadline_ms=deadline)],
                                                       [words(nk.YOUR_TURN, 3, "he", deadline_ms=deadline)]], third
        # asked again after the same round (a reconnected agent): no new round, no second "your turn"
        again = await call(a, "wait_for_next_round", after_round=3, timeout_seconds=1)
        assert again["timed_out"] and again["notifications"] == [], again


async def test_m40_an_arcmage_agent_waiting_for_its_decision_hears_the_start_and_its_turn(cluster: Cluster) -> None:
    host = cluster.client("grpc")
    created = await host.create("arcmage", seats=2, nickname="host", deadline_seconds=120,
                                arcmage=arcmage_pb2.ArcmageOptions(max_rounds=4, turn_seconds=120.0,
                                                                   response_seconds=60.0))
    token = (await host.create_agent_token(created.game_id, "agent")).token
    await host.start(created.game_id, fill=True)  # (seat 1: the autopilot)
    async with agent(cluster.http_url, token) as c:
        waited = await call(c, "wait_for_my_decision", since_seq=0, timeout_seconds=60)
        assert waited["your_decision"] and not waited["timed_out"], waited
        told = [(n["kind"], n["round"]) for n in waited["notifications"]]
        assert told[0] == ("game_started", 0), waited
        step = waited["step"]
        turn = (await host.view(created.game_id)).round
        if step["kind"] == "turn" and step["active"] == 0:
            assert ("your_turn", turn) in told, waited
        else:
            assert step["kind"] == "window" and ("your_decision", turn) in told, waited
        assert set(k for k, _ in told) <= {"game_started", "your_turn", "your_decision"}, waited
        assert all(n["title"] == nk.WORDS["en"][n["kind"]][0] for n in waited["notifications"]), waited
        # asked again from the seq it answered: nothing new happened, nothing is told again
        again = await call(c, "wait_for_my_decision", since_seq=waited["seq"], timeout_seconds=5)
        assert again["your_decision"] and again["notifications"] == [], again
