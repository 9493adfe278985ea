"""The Watch stream: presence notices, resumption from a version, health and reflection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, new_game, placement, submit_and_close

pytestmark = pytest.mark.e2e


async def test_watch_resumes_after_a_reconnect_from_the_last_version(cluster: Cluster) -> None:
    game = await new_game(cluster.address)
    await game.host.chat(game.game_id, "one")
    seen: list[game_pb2.Update] = []
    async with asyncio.timeout(WAIT_S):
        async for u in game.host.watch(game.game_id, 0):
            seen.append(u)
            if u.kind == "chat":
                break  # the client goes away
    assert [u.kind for u in seen][:3] == ["joined", "joined", "started"]
    last = seen[-1].version
    await game.guest.chat(game.game_id, "two")
    view = await game.guest.view(game.game_id)
    await game.guest.submit(game.game_id, view.version, salvo=placement(1))
    resumed: list[game_pb2.Update] = []
    async with asyncio.timeout(WAIT_S):
        async for u in game.host.watch(game.game_id, last):
            if u.kind in ("connected", "disconnected"):
                continue
            resumed.append(u)
            if u.kind == "submitted":
                break
    assert all(u.version > last for u in resumed)
    assert [(u.kind, u.chat.text) for u in resumed] == [("chat", "two"), ("submitted", "")]
    assert resumed[-1].seat == 1


async def test_a17_watchers_see_who_connects_and_leaves(cluster: Cluster) -> None:
    game = await new_game(cluster.address)
    host_stream = game.host.watch(game.game_id, 10**9)  # only live notices
    guest_call = game.guest.game.Watch(game_pb2.WatchRequest(game_id=game.game_id, from_version=10**9),
                                       metadata=game.guest.metadata)
    async with asyncio.timeout(WAIT_S):
        first = await host_stream.__anext__()
        while not (first.kind == "connected" and first.seat == 1):
            first = await host_stream.__anext__()
        view = await game.host.view(game.game_id)
        assert [p.connected for p in view.players] == [True, True]
        guest_call.cancel()
        gone = await host_stream.__anext__()
        while gone.kind != "disconnected":
            gone = await host_stream.__anext__()
    assert gone.seat == 1
    view = await game.host.view(game.game_id)
    assert [p.connected for p in view.players] == [True, False]


async def test_reflection_lists_the_services(cluster: Cluster) -> None:
    async with grpc.aio.insecure_channel(cluster.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)

        async def requests() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(list_services="")

        async for resp in stub.ServerReflectionInfo(requests()):
            names = {s.name for s in resp.list_services_response.service}
            break
    assert {"archipelago.v1.Lobby", "archipelago.v1.Game", "grpc.health.v1.Health"} <= names


async def test_watch_of_a_finished_game_ends(cluster: Cluster) -> None:
    game = await new_game(cluster.address, max_rounds=1)
    await submit_and_close(game, placement(0), placement(1))
    await submit_and_close(game, salvo_pb2.SalvoOrders(shots=["A9"]), salvo_pb2.SalvoOrders(shots=["A9"]))
    final = await game.host.view(game.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    async with asyncio.timeout(WAIT_S):
        late = [u async for u in game.host.watch(game.game_id, final.version)]
    assert late == []  # the stream ends instead of waiting for updates that will never come
    async with asyncio.timeout(WAIT_S):
        kinds = [u.kind async for u in game.guest.watch(game.game_id, 0)]
    assert kinds[-1] == "game_over"
