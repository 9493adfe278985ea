"""Archipelago from lobby to game over through each door (real Ray, real redis-server, loopback).

Four players: seat 3 joins and never connects (the autopilot plays it), seat 2 leaves mid-game and
comes back with its secret from a new client; players chat to all and to one, a trade offer is
accepted and another declined, a bank trade is made; at the end the scores every player sees equal
the engine's own outcome replayed from the game's journal (A52, A53, A67, A70, A3, A17).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.views import view_dict
from engine import get_game
from tests.conftest import Cluster
from tests.e2e.helpers import connected, rpc_error, wait_update

pytestmark = pytest.mark.e2e

ROUNDS = 4  # max_rounds: the game ends after round 4 (A67)
GAME = get_game("archipelago")


def hold(view: game_pb2.GetViewResponse) -> A.ArchipelagoOrders:
    """Round 0: the default deployment (A15); afterwards no orders: units hold, stock grows (A50)."""
    return A.ArchipelagoOrders() if view.round == 0 else A.ArchipelagoOrders(bonus="iron")


async def play_round(game_id: str, players: dict[int, BaseClient], watcher: BaseClient) -> game_pb2.Update:
    since = (await watcher.view(game_id)).seq
    views = {s: await c.view(game_id) for s, c in players.items()}
    for s, c in players.items():
        await c.submit(game_id, views[s].version, archipelago=hold(views[s]))
    first = next(iter(views.values()))
    return await wait_update(watcher, game_id, since,
                             lambda u: u.kind == "round_closed" and u.round == first.round)


def replayed_outcome(journal: list[dict[str, Any]]) -> dict[str, Any]:
    """The engine alone, fed the journal: create's seed and config, every action and every close."""
    create = journal[0]
    state = GAME.new_game(create["config"], int(create["seed"]))
    for e in journal[1:]:
        if e["op"] == "act":
            state, _ = GAME.act(state, int(e["seat"]), e["action"])
        elif e["op"] == "close":
            state, _ = GAME.resolve(state, {int(s): o for s, o in e["orders"].items()})
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome.to_dict()


async def test_a4_a53_a67_four_players_lobby_to_game_over(cluster: Cluster, door: str) -> None:
    host = cluster.client(door)
    created = await host.create("archipelago", seats=4, nickname="ann", deadline_seconds=30,
                                archipelago=A.ArchipelagoOptions(max_rounds=ROUNDS))
    gid = created.game_id
    clients: dict[int, BaseClient] = {0: host}
    for seat, name in ((1, "bob"), (2, "cat"), (3, "dan")):
        c = cluster.client(door)
        joined = await c.join(created.code, name)
        assert joined.seat == seat and joined.game == "archipelago"
        clients[seat] = c
    await host.start(gid)
    async with contextlib.AsyncExitStack() as stack:
        for s in (0, 1, 2):
            await stack.enter_async_context(connected(clients[s], gid))
        cat_stream = contextlib.AsyncExitStack()
        await cat_stream.enter_async_context(connected(clients[2], gid))
        first = await clients[0].view(gid)
        assert first.archipelago.round == 0 and first.archipelago.players == 4
        assert [p.connected for p in first.players] == [True, True, True, False]
        await play_round(gid, {0: host, 1: clients[1], 2: clients[2]}, host)  # deployment (round 0)

        # round 1: chat to everyone and to one player (A53)
        await host.chat(gid, "hello all")
        await clients[1].chat(gid, "just you, ann", to=0)
        views = {s: await clients[s].view(gid) for s in range(3)}
        assert [m.text for m in views[0].archipelago.chat] == ["hello all", "just you, ann"]
        assert [m.text for m in views[2].archipelago.chat] == ["hello all"]  # not the private one
        await play_round(gid, {0: host, 1: clients[1], 2: clients[2]}, host)

        # cat leaves: its stream closes; the others play on without waiting for it (A17)
        await cat_stream.aclose()
        await stack.aclose()
        for s in (0, 1):
            await stack.enter_async_context(connected(clients[s], gid))
        await play_round(gid, {0: host, 1: clients[1]}, host)

        # round 3: a bank trade, an offer accepted, another declined (A52, A53)
        v0 = (await host.view(gid)).archipelago
        assert v0.stock.wood >= 4, v0.stock
        before = await host.view(gid)
        await host.act(gid, bank=A.BankAction(give="wood", get="fuel", times=1))
        after = (await host.view(gid)).archipelago
        assert (after.stock.wood, after.stock.fuel) == (v0.stock.wood - 4, v0.stock.fuel + 1)
        assert after.seats == before.archipelago.seats  # the others' figures move only at round open (A84)
        await host.act(gid, offer=A.OfferAction(to=1, give={"wood": 1}, get={"food": 1}))
        bob_before = (await clients[1].view(gid)).archipelago
        offer_id = bob_before.offers[0].id
        await clients[1].act(gid, accept=A.AcceptAction(offer=offer_id))
        bob_after = (await clients[1].view(gid)).archipelago
        assert (bob_after.stock.wood, bob_after.stock.food) == (bob_before.stock.wood + 1, bob_before.stock.food - 1)
        await clients[1].act(gid, offer=A.OfferAction(to=0, give={"food": 1}, get={"iron": 1}))
        second = next(o for o in (await host.view(gid)).archipelago.offers if o.from_seat == 1).id
        await host.act(gid, decline=A.DeclineAction(offer=second))
        err = await rpc_error(clients[1].act(gid, withdraw=A.WithdrawAction(offer=second)))
        assert (err.status, err.rule, err.field) == ("NOT_FOUND", "A53", "withdraw.offer")  # declined: not pending
        assert list((await clients[1].view(gid)).archipelago.offers) == []  # accepted, declined: none left

        # cat comes back from another device with its secret (A3) and plays again
        secret = clients[2].secret or ""
        again = cluster.client(door, secret)
        who = await again.rejoin()
        assert (who.game_id, who.seat, who.nickname) == (gid, 2, "cat")
        await stack.enter_async_context(connected(again, gid))
        assert (await host.view(gid)).players[2].connected
        last: game_pb2.Update | None = None
        while (await host.view(gid)).status == lobby_pb2.GAME_STATUS_RUNNING:
            last = await play_round(gid, {0: host, 1: clients[1], 2: again}, host)
    assert last is not None
    final = await host.view(gid)
    assert final.status == lobby_pb2.GAME_STATUS_OVER and final.round == ROUNDS
    outcome = json_format.MessageToDict(final.archipelago.outcome, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
    journal = await cluster.api.store.journal_read(gid)
    expected = replayed_outcome(journal)
    assert outcome["scores"] == expected["scores"] and outcome["winners"] == expected["winners"]
    for s in (1, 3):  # every seat sees the same end
        assert view_dict(await cluster.client(door, clients[s].secret).view(gid))["outcome"]["scores"] == \
            expected["scores"]
    ops = [e["op"] for e in journal]
    assert ops.count("act") == 7 and ops.count("close") == ROUNDS + 1  # 2 chats, bank, 2 offers, accept, decline
    assert not any(e["op"] == "submit" and e["seat"] == 3 for e in journal)  # dan never played himself
