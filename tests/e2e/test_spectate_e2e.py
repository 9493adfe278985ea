"""Spectators (community.proto, issue 26): a public game watched without a seat, on each door.

The leak test of spectators: four players play a public Archipelago game through the gateway while a
spectator (on the door under test) follows it with Spectate and asks GetSpectatorView after every
round. Then the game's journal is replayed by the engine alone, and:
- each spectator update is one that EVERY player received (the same version, kind, round, seat, event
  kind, data and chat), and the spectator's seqs run 1, 2, 3, … to game_over;
- each spectator view equals the engine's spectator view of the replayed state at that version, and
  every fact in it is in each player's own view at that version (``tests.engine.test_spectator.leaks``:
  what "is in" means is stated and tested there) — until the end, when the whole game is open: every
  unit of the final state is in it.
Also: a private game is NOT_FOUND to spectators (as an unknown one), a spectator never counts as
connected (A17), bad ``after_seq`` is refused with the field, a resumed stream misses nothing, and the
live list shows the game with its spectators.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.bot import choose_orders
from client.views import orders_message
from engine import get_game
from engine.base import public_events
from tests.aio import bounded
from tests.conftest import Cluster
from tests.e2e.helpers import connected, placement, replay_journal, rpc_error, wait_update
from tests.engine.test_spectator import leaks
from tests.waits import until_async

pytestmark = pytest.mark.e2e

GAME = get_game("archipelago")
SEATS = 4
ROUNDS = 4


def key(u: game_pb2.Update) -> tuple[Any, ...]:
    """An update as every receiver gets it (its seq aside)."""
    return (u.version, u.kind, u.round, u.seat, u.event_kind, json_format.MessageToJson(u.data, sort_keys=True),
            u.chat.SerializeToString(deterministic=True), u.status)


async def collect(stream: Any, into: list[game_pb2.Update], got: asyncio.Event | None = None, count: int = 0) -> None:
    """Keep every update of ``stream`` in ``into``; set ``got`` once it holds ``count``."""
    async with contextlib.aclosing(stream) as updates:
        async for u in updates:
            into.append(u)
            if got is not None and len(into) >= count:
                got.set()


async def test_issue26_a80_a85_a_spectator_receives_only_what_every_player_knows(cluster: Cluster,
                                                                                 door: str) -> None:
    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=SEATS, nickname="p0", deadline_seconds=600, public=True,
                                archipelago=A.ArchipelagoOptions(max_rounds=ROUNDS))
    gid = created.game_id
    players: list[BaseClient] = [host]
    for n in range(1, SEATS):
        c = cluster.client("grpc")
        await c.join(created.code, f"p{n}")
        players.append(c)
    received: list[list[game_pb2.Update]] = [[] for _ in range(SEATS)]
    watchers = [asyncio.ensure_future(collect(c.watch(gid, 0), received[n])) for n, c in enumerate(players)]
    spectator = cluster.client(door)
    seen: list[game_pb2.Update] = []
    views: list[game_pb2.GetViewResponse] = []
    joins = asyncio.Event()
    spectating = asyncio.ensure_future(collect(spectator.spectate(gid, 0), seen, joins, SEATS))
    async with asyncio.timeout(30):
        await joins.wait()  # the spectator's stream is open before the start, and has the joins
    await host.start(gid)
    async with asyncio.timeout(240):
        while True:
            views.append(await spectator.spectator_view(gid))
            first = await host.view(gid)
            if first.status == lobby_pb2.GAME_STATUS_OVER:
                break
            if first.round >= 1:  # chat to all (public) and to one seat (never to a spectator)
                await players[1].chat(gid, "hello all")
                await players[2].chat(gid, "psst", to=3)
                views.append(await spectator.spectator_view(gid))
            for c in players:
                fresh = await c.view(gid)
                await c.submit_message(gid, fresh.version, "archipelago",
                                       orders_message("archipelago", choose_orders(fresh)))
            await wait_update(host, gid, first.seq, lambda u: u.kind in ("round_opened", "game_over"))
        await asyncio.gather(*watchers, spectating)  # every stream ends after game_over

    # the stream: seqs without a gap to game_over, each update one every player received
    numbered = [u for u in seen if u.seq]
    assert [u.seq for u in numbered] == list(range(1, len(numbered) + 1))
    assert numbered[-1].kind == "game_over"
    everyone = [{key(u) for u in mine if u.seq} for mine in received]
    for u in numbered:
        assert all(key(u) in got for got in everyone), f"spectator update {u.seq} ({u.kind}) is not every player's"
    kinds = {u.kind for u in numbered}
    assert {"joined", "started", "round_opened", "submitted", "chat", "game_over"} <= kinds, kinds
    assert not any(u.kind == "chat" and u.chat.HasField("to") for u in numbered)  # the private one stayed so
    private_events = sum(1 for mine in received for u in mine if u.kind == "event") - SEATS * sum(
        1 for u in numbered if u.kind == "event")
    assert private_events > 0  # (the players had events of their own: a spectator got none of them)

    # the views: the engine's spectator view of the replayed state, every fact in every player's view
    journal = await cluster.api.store.journal_read(gid)
    states, _ = replay_journal(GAME, journal)
    running = 0
    for v in views:
        assert v.you == -1 and not v.HasField("archipelago_pending") and not v.autopilot_log
        state, events = states[v.version]
        engine_view = GAME.spectator_view(state, public_events(events, SEATS))
        assert v.archipelago == json_format.ParseDict(engine_view, A.ArchipelagoView()), f"v{v.version}"
        if v.status == lobby_pb2.GAME_STATUS_RUNNING:
            assert leaks(GAME, state, events, engine_view) == {}, f"v{v.version}"
            running += 1
    assert running >= ROUNDS
    final = views[-1]
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    state, _ = states[final.version]
    assert {u.id for u in final.archipelago.units} == {str(u.id) for u in state.units.values()} != set()


async def test_issue26_a_private_game_is_not_found_to_spectators(cluster: Cluster, door: str) -> None:
    host = cluster.client("grpc")
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=600)
    spectator = cluster.client(door)
    err = await rpc_error(spectator.spectator_view(created.game_id))
    assert (err.code, err.field) == ("lookup/not_found", "game_id")
    unknown = await rpc_error(spectator.spectator_view("0123456789abcdef"))
    assert (unknown.code, unknown.message.split("'")[0]) == (err.code, err.message.split("'")[0])  # alike
    stream_err = await rpc_error(spectator.spectate(created.game_id, 0).__anext__())
    assert (stream_err.code, stream_err.field) == ("lookup/not_found", "game_id")
    live = await spectator.live_games("salvo")
    assert created.game_id not in {g.summary.game_id for g in live.games}


async def test_issue26_a17_a_spectator_is_no_player_and_resumes_from_its_seq(cluster: Cluster, door: str) -> None:
    host = cluster.client("grpc")
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=600, public=True)
    gid = created.game_id
    guest = cluster.client("grpc")
    await guest.join(created.code, "guest")
    await host.start(gid)
    spectator = cluster.client(door)
    first: list[game_pb2.Update] = []
    stream = spectator.spectate(gid, 0)
    async with contextlib.aclosing(stream):
        async for u in stream:
            first.append(u)
            if u.kind == "round_opened":
                break
        # while it is open: counted on the live list, and nobody is connected (A17: no player watches)
        live = {g.summary.game_id: g for g in (await spectator.live_games("salvo")).games}
        assert live[gid].spectators == 1
        assert [(p.nickname, p.connected) for p in live[gid].players] == [("host", False), ("guest", False)]
        assert [p.connected for p in (await host.view(gid)).players] == [False, False]
    assert [u.seq for u in first] == list(range(1, len(first) + 1))
    async with bounded(20, "the closed spectator stream forgotten"):
        await until_async(lambda: cluster.api.spectators_of(gid) == 0, "the closed stream is forgotten")

    # the players play on (the host watching: a round closes early only for connected players, A17);
    # the spectator resumes from its last seq and misses nothing
    later: list[game_pb2.Update] = []
    async with connected(host, gid):
        await host.chat(gid, "psst", to=1)  # every seat receives it, yet it is private: no spectator's
        await host.chat(gid, "hello all")
        await guest.submit_message(gid, (await guest.view(gid)).version, "salvo", placement(1))
        await host.submit_message(gid, (await host.view(gid)).version, "salvo", placement(0))  # (closes it)
        resumed = spectator.spectate(gid, first[-1].seq)
        async with bounded(30, "the resumed stream to the next round"), contextlib.aclosing(resumed):
            async for u in resumed:
                if u.seq:  # (seq 0: live presence notices, as a player's)
                    later.append(u)
                if u.kind == "round_opened":
                    break
    assert [u.seq for u in later] == list(range(first[-1].seq + 1, first[-1].seq + 1 + len(later)))
    assert [u.kind for u in later if u.kind == "submitted"] == ["submitted", "submitted"]
    assert [u.chat.text for u in later if u.kind == "chat"] == ["hello all"]
    view = await spectator.spectator_view(gid)
    assert view.you == -1 and view.seq == later[-1].seq and view.round == 1
    assert not view.salvo.fleet and not view.salvo.enemy_fleet  # nobody's ships while it runs (S8)

    for bad, why in ((-1, "0 (from the start)"), (view.seq + 5, "beyond")):
        err = await rpc_error(spectator.spectate(gid, bad).__anext__())
        assert (err.code, err.field) == ("order/invalid", "after_seq") and why in err.message, err
