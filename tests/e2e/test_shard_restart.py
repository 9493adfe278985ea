"""Nothing acknowledged is lost: a killed shard restarts and resumes its games from the journal."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import ray

from archipelago.v1 import salvo_pb2
from tests.conftest import NAMESPACE, Cluster
from tests.e2e.helpers import new_game, placement, round_closed, submit_and_close, wait_update

pytestmark = pytest.mark.e2e


async def restarted(handle: Any, pid: int, timeout_s: float = 60.0) -> int:
    """The new pid of a killed shard once Ray has restarted it (ray.kill returns before the process
    is gone: a call right after it may still reach the old one)."""
    async with asyncio.timeout(timeout_s):
        while True:
            try:
                now = int((await handle.ping.remote())["pid"])
            except ray.exceptions.RayActorError:
                now = pid  # between the two processes
            if now != pid:
                return now
            await asyncio.sleep(0.05)  # polling the restart


async def test_killed_shard_resumes_the_game_with_every_acknowledged_submission(cluster: Cluster) -> None:
    game = await new_game(lambda: cluster.client("grpc"), deadline=600)
    await submit_and_close(game, placement(0), placement(1))
    view = await game.host.view(game.game_id)
    ack = await game.host.submit(game.game_id, view.version, key="before-kill",
                                 salvo=salvo_pb2.SalvoOrders(shots=["F7", "G7", "A9"]))
    chat = await game.guest.chat(game.game_id, "still there?")

    shard = await cluster.api.store.placement(game.game_id)
    handle = ray.get_actor(shard, namespace=NAMESPACE)
    pid_before = (await handle.ping.remote())["pid"]
    ray.kill(handle, no_restart=False)

    # The next calls reach the restarted shard, which reloads the game from Redis.
    after = await game.host.view(game.game_id)
    await restarted(handle, pid_before)  # the shard process was really replaced
    after = await game.host.view(game.game_id)  # (and this view is surely the new process's)
    assert after.version == chat.version and after.round == view.round
    assert after.submitted and list(after.salvo_pending.shots) == ["F7", "G7", "A9"]
    # the same submission again is recognised as already applied
    again = await game.host.submit(game.game_id, view.version, key="before-kill",
                                   salvo=salvo_pb2.SalvoOrders(shots=["F7", "G7", "A9"]))
    assert again.replayed and again.version == ack.version

    await game.guest.submit(game.game_id, after.version, salvo=salvo_pb2.SalvoOrders(shots=["J1"]))
    await wait_update(game.host, game.game_id, after.seq, round_closed(view.round))
    final = await game.host.view(game.game_id)
    assert {s.square for s in final.salvo.shots} == {"F7", "G7", "A9"}
    assert final.salvo.reports[-1].hits == 2


async def test_killed_shard_rearms_deadlines(cluster: Cluster) -> None:
    game = await new_game(lambda: cluster.client("grpc"), deadline=3)
    view = await game.host.view(game.game_id)
    await game.host.submit(game.game_id, view.version, salvo=placement(0))
    shard = await cluster.api.store.placement(game.game_id)
    handle = ray.get_actor(shard, namespace=NAMESPACE)
    pid_before = (await handle.ping.remote())["pid"]
    ray.kill(handle, no_restart=False)
    # Nobody calls the game: the restarted shard's timer (re-armed from the deadline index,
    # woken by the gateway's ping) must close the round by itself. The test listens on the game's
    # Redis channel directly, so that no call reaches the game before the round closes.
    pubsub = cluster.api.store.redis.pubsub()
    await pubsub.subscribe(cluster.api.store.channel(game.game_id))
    try:
        await restarted(handle, pid_before)  # (its pings wake the new process, as the gateway's monitor does)
        async with asyncio.timeout(60):
            while True:
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
                if msg and json.loads(msg["data"]).get("version", 0) > view.version + 1:
                    break  # the submission was view.version + 1; the close is the next one
    finally:
        await pubsub.aclose()
    closed = await wait_update(game.host, game.game_id, view.seq, round_closed(0))
    assert closed.data["early"] is False


async def test_an_archipelago_game_reloaded_from_its_journal_has_the_same_state_hash(cluster: Cluster) -> None:
    from archipelago.v1 import archipelago_pb2 as A
    from client.bot import choose_orders
    from client.views import orders_message

    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=3, nickname="ann", deadline_seconds=600,
                                archipelago=A.ArchipelagoOptions(max_rounds=20))
    gid = created.game_id
    players = [host]
    for name in ("bob", "cat"):
        c = cluster.client("grpc")
        await c.join(created.code, name)
        players.append(c)
    await host.start(gid)
    for _ in range(3):  # deployment and two rounds of random legal orders, bank and chat between
        since = (await host.view(gid)).seq
        for c in players:
            v = await c.view(gid)
            await c.submit_message(gid, v.version, "archipelago", orders_message("archipelago", choose_orders(v)))
        await host.chat(gid, "still here")
        await wait_update(host, gid, since, lambda u: u.kind == "round_opened")
    shard = await cluster.api.store.placement(gid)
    before = await cluster.api.router.call(gid, "state_hash", gid)
    handle = ray.get_actor(shard, namespace=NAMESPACE)
    pid = (await handle.ping.remote())["pid"]
    ray.kill(handle, no_restart=False)
    await restarted(handle, pid)
    after = await cluster.api.router.call(gid, "state_hash", gid)  # reloaded from Redis by the new process
    assert after == before and before["hash"]
