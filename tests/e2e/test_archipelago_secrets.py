"""No player learns what it may not see (A80–A85), proven over every message of a whole game.

Four players play an Archipelago game through the gateway; every message each one receives is kept:
every view (GetView), every update (Watch, from the start to game over) and every error. Then the
game's journal is replayed by the engine alone, and:
- each view received equals the engine's own view of the replayed state at that version for that
  player (so the gateway adds and leaks nothing), and that engine view passes the conformance
  suite's independent check against the full state (no enemy type before it was revealed, no
  position out of sight, no other player's stock by resource, …);
- each event update equals an event of the replayed resolution or action whose audience includes
  the player, and each chat it received was sent to it or to everyone;
- no "submitted" update carries anything but the seat and whether it was done (never orders);
- errors name only what the player sent: accepting an offer that is gone says "offer no longer
  valid", never whose stock fell short (A53).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.bot import choose_orders
from client.errors import ApiError
from client.views import orders_message
from engine import get_game
from tests.conftest import Cluster
from tests.e2e.helpers import replay_journal, wait_update
from tests.engine.archipelago.randplay import check_view

pytestmark = pytest.mark.e2e

GAME = get_game("archipelago")
SEATS = 4
ROUNDS = 6


def plain(data: Any) -> Any:
    """Data as it travels in an Update (a protobuf Struct: numbers become floats)."""
    s = struct_pb2.Struct()
    s.update({"v": data})
    return json_format.MessageToDict(s)["v"]


class Seat:
    def __init__(self, client: BaseClient, seat: int) -> None:
        self.client, self.seat = client, seat
        self.views: list[game_pb2.GetViewResponse] = []
        self.updates: list[game_pb2.Update] = []
        self.errors: list[ApiError] = []

    async def view(self, gid: str) -> game_pb2.GetViewResponse:
        v = await self.client.view(gid)
        self.views.append(v)
        return v

    async def watch(self, gid: str) -> None:
        async with contextlib.aclosing(self.client.watch(gid, 0)) as stream:
            async for u in stream:
                self.updates.append(u)


async def test_a80_a85_no_message_holds_a_hidden_fact(cluster: Cluster) -> None:
    rnd = random.Random(85)
    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=SEATS, nickname="p0", deadline_seconds=600,
                                archipelago=A.ArchipelagoOptions(max_rounds=ROUNDS))
    gid = created.game_id
    seats = [Seat(host, 0)]
    for n in range(1, SEATS):
        c = cluster.client("grpc")
        await c.join(created.code, f"p{n}")
        seats.append(Seat(c, n))
    watchers = [asyncio.ensure_future(s.watch(gid)) for s in seats]
    await host.start(gid)
    async with asyncio.timeout(240):
        while True:
            views = [await s.view(gid) for s in seats]
            if views[0].status == lobby_pb2.GAME_STATUS_OVER:
                break
            since = views[0].seq
            if views[0].round >= 1:  # immediate actions between the orders
                a, b = rnd.sample(range(SEATS), 2)
                await seats[a].client.chat(gid, f"psst {b}", to=b)
                await seats[b].client.chat(gid, "hello all")
                with contextlib.suppress(ApiError):
                    await seats[a].client.act(gid, offer=A.OfferAction(to=b, give={"food": 1}, get={"wood": 1}))
                for s in seats:
                    try:
                        await s.client.act(gid, accept=A.AcceptAction(offer="o999"))
                    except ApiError as refused:
                        s.errors.append(refused)
                await seats[a].view(gid)
                await seats[b].view(gid)
            for s in seats:
                fresh = await s.view(gid)
                await s.client.submit_message(gid, fresh.version, "archipelago",
                                              orders_message("archipelago", choose_orders(fresh)))
            await wait_update(host, gid, since, lambda u: u.kind in ("round_opened", "game_over"))
        await asyncio.gather(*watchers)  # every stream ends after game_over

    # the engine alone replays the journal: the state and the last round's events at every version
    journal = await cluster.api.store.journal_read(gid)
    states, produced = replay_journal(GAME, journal)  # produced: version -> events of that journal entry

    checked = 0
    for s in seats:
        for v in s.views:
            st, events = states[v.version]
            if st is None:
                continue
            engine_view = GAME.view(st, s.seat, events)
            check_view(st, s.seat, engine_view, events, f"v{v.version}")
            assert v.archipelago == json_format.ParseDict(engine_view, A.ArchipelagoView()), f"v{v.version}"
            checked += 1
        got = [u for u in s.updates if u.seq]
        assert [u.seq for u in got] == list(range(1, len(got) + 1)) and got[-1].kind == "game_over"
        for u in got:
            if u.kind == "event":
                allowed = [plain({"kind": ev.kind, "data": dict(ev.data)}) for ev in produced[u.version]
                           if ev.visible_to(s.seat)]
                assert plain({"kind": u.event_kind, "data": json_format.MessageToDict(u.data)}) in allowed
            elif u.kind == "chat":
                assert not u.chat.HasField("to") or s.seat in (u.chat.to, u.chat.seat)
            elif u.kind == "submitted":
                assert set(json_format.MessageToDict(u.data)) == {"done"}
        for e in s.errors:
            assert e.message.startswith("accept.offer: rule A53: no pending offer 'o999' (taken, withdrawn"), e
    assert checked >= SEATS * ROUNDS
