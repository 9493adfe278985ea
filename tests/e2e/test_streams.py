"""The Watch stream: presence notices, resumption from a version, health and reflection."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import json_format
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, connected, new_game, placement, submit_and_close

pytestmark = pytest.mark.e2e


async def test_watch_resumes_after_a_reconnect_from_the_last_seq(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    await game.host.chat(game.game_id, "one")
    seen: list[game_pb2.Update] = []
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(game.host.watch(game.game_id, 0)) as stream:
        async for u in stream:
            seen.append(u)
            if u.kind == "chat":
                break  # the client goes away
    assert [u.kind for u in seen][:4] == ["joined", "joined", "started", "round_opened"]
    assert [u.seq for u in seen] == list(range(1, len(seen) + 1))
    last = seen[-1].seq
    await game.guest.chat(game.game_id, "two")
    view = await game.guest.view(game.game_id)
    await game.guest.submit(game.game_id, view.version, salvo=placement(1))
    resumed: list[game_pb2.Update] = []
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(game.host.watch(game.game_id, last)) as stream:
        async for u in stream:
            if u.kind in ("connected", "disconnected"):
                assert u.seq == 0
                continue
            resumed.append(u)
            if u.kind == "submitted":
                break
    assert [u.seq for u in resumed] == [last + 1, last + 2]
    assert [(u.kind, u.chat.text) for u in resumed] == [("chat", "two"), ("submitted", "")]
    assert resumed[-1].seat == 1 and resumed[-1].data["done"] is True


async def test_a17_watchers_see_who_connects_and_leaves(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    async with contextlib.aclosing(game.host.watch(game.game_id, view.seq - 1)) as host_stream:
        async with asyncio.timeout(WAIT_S):
            assert (await anext(host_stream)).seq == view.seq  # the host's stream is open
            async with connected(game.guest, game.game_id):
                first = await anext(host_stream)
                while not (first.kind == "connected" and first.seat == 1):
                    first = await anext(host_stream)
                view = await game.host.view(game.game_id)
                assert [p.connected for p in view.players] == [True, True]
            gone = await anext(host_stream)  # the guest's stream closed when the block ended
            while gone.kind != "disconnected":
                gone = await anext(host_stream)
    assert gone.seat == 1
    view = await game.host.view(game.game_id)
    assert [p.connected for p in view.players] == [False, False]  # nobody watches any more


async def test_reflection_lists_the_services(cluster: Cluster) -> None:
    async with grpc.aio.insecure_channel(cluster.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)

        async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(list_services="")

        async for resp in stub.ServerReflectionInfo(requests()):
            names = {s.name for s in resp.list_services_response.service}
            break
    assert {"archipelago.v1.Lobby", "archipelago.v1.Game", "grpc.health.v1.Health"} <= names


async def test_watch_of_a_finished_game_ends(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door), max_rounds=1)
    await submit_and_close(game, placement(0), placement(1))
    await submit_and_close(game, salvo_pb2.SalvoOrders(shots=["A9"]), salvo_pb2.SalvoOrders(shots=["A9"]))
    final = await game.host.view(game.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    async with asyncio.timeout(WAIT_S):
        late = [u async for u in game.host.watch(game.game_id, final.seq)]
    assert late == []  # the stream ends instead of waiting for updates that will never come
    async with asyncio.timeout(WAIT_S):
        ups = [u async for u in game.guest.watch(game.game_id, 0)]
    assert ups[-1].kind == "game_over" and ups[-1].status == lobby_pb2.GAME_STATUS_OVER
    outcome = json_format.MessageToDict(ups[-1].data)["outcome"]
    assert set(outcome) == {"winners", "draw", "reason", "scores"}
    assert list(final.salvo.outcome.scores) == list(outcome["scores"])  # the view says the same
