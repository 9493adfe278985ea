"""Draining a shard while bots play (issue 13): its games move to the other shards with no
acknowledged submission lost, none applied twice, no Watch update missed or repeated, and every
game finishes; the drained shard holds nothing, new games go elsewhere, and it can be activated.

Its own small cluster on the session's Ray and redis-server: three shards, the player API and the
gRPC door in this process (the router drives the drain, as the admin door does)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from client.grpc_client import Client
from engine.errors import NotFound
from gateway.api import ApiConfig, PlayerAPI
from gateway.grpc_door import build_server
from gateway.limits import Limits
from gateway.router import ShardRouter
from services.cluster import RedisProcess, shard_names, start_shards
from services.store import Store
from tests.chaos.bots import CHANNEL_OPTIONS, Record, lost_and_twice, play, two_player_games, watch_gaps

pytestmark = pytest.mark.e2e

GAMES = 20
SHARDS = 3


@dataclass
class Small:
    address: str
    api: PlayerAPI
    router: ShardRouter
    store: Store
    handles: list[Any]


@pytest.fixture
async def small(redis_server: RedisProcess, ray_local: None) -> AsyncIterator[Small]:
    import ray

    namespace, prefix = f"drain{secrets.token_hex(3)}", f"dr{secrets.token_hex(3)}:"
    handles = start_shards(SHARDS, redis_server.url, prefix=prefix, namespace=namespace)
    store = Store(redis_server.url, prefix)
    await store.ensure_shard_set(shard_names(SHARDS))
    router = ShardRouter(store, shard_names(SHARDS), namespace)
    await router.refresh()
    api = PlayerAPI(store, router, ApiConfig(public_url="http://test.invalid", limits=Limits.off()))
    await api.start()
    server, port = await build_server(api, "127.0.0.1:0")
    try:
        yield Small(f"127.0.0.1:{port}", api, router, store, handles)
    finally:
        await server.stop(grace=0.5)
        await api.stop()
        for h in handles:
            ray.kill(h, no_restart=True)


async def test_draining_a_shard_while_bots_play_moves_its_games_and_loses_nothing(small: Small) -> None:
    record = Record()
    seats = await two_player_games(small.address, GAMES)
    lobby = Client(small.address, channel=grpc.aio.insecure_channel(small.address, options=CHANNEL_OPTIONS))
    games = sorted({gid for gid, _, _ in seats})
    on = {gid: await small.store.placement(gid) for gid in games}
    victim = max(shard_names(SHARDS), key=lambda n: sum(s == n for s in on.values()))
    moving = [g for g in games if on[g] == victim]
    assert moving, "the drained shard has games"
    bots = [asyncio.get_running_loop().create_task(play(small.address, secret, gid, seat, record))
            for gid, seat, secret in seats]
    async with asyncio.timeout(300):
        while len(record.acks) < 40:  # in mid-play
            assert not all(b.done() for b in bots), "the games ended before the drain"
            await asyncio.sleep(0.05)  # watching the bots' progress
        drained = await small.router.drain(victim)
        at_drain = len(record.acks)
        held = await small.router.shard(victim).stats()
        assert held["games"] == 0 and held["draining"] is True
        assert await small.store.deadlines(victim) == []
        made = await lobby.create("salvo", seats=2, nickname="late")  # new games go elsewhere
        assert await small.store.placement(made.game_id) != victim
        rounds = await asyncio.gather(*bots)
    await lobby.close()
    assert all(r > 0 for r in rounds)
    assert len(record.acks) > at_drain, "the bots went on playing after the drain"
    assert drained["moved"] >= 1
    for gid in moving:
        assert await small.store.placement(gid) != victim, f"{gid} left the drained shard"
    journals = {gid: await small.store.journal_read(gid) for gid in games}
    lost, twice = lost_and_twice(journals, record.acks)
    assert lost == [] and twice == [], (lost[:3], twice[:3])
    assert all(j[-1]["op"] == "close" for j in journals.values()), "every game ended"
    assert watch_gaps(record) == {}, "a Watch missed or repeated an update across the move"
    back = await small.router.activate(victim)
    assert back["state"] == "active" and (await small.store.shard_set())[victim] == "active"
    assert (await small.router.shard(victim).stats())["draining"] is False


async def test_activating_a_new_name_adds_a_shard_and_removing_it_takes_it_out(small: Small) -> None:
    import ray

    added = await small.router.activate("shard-3")
    try:
        assert added["state"] == "active"
        assert await small.store.shard_set() == {f"shard-{i}": "active" for i in range(4)}
        assert small.router.names == [f"shard-{i}" for i in range(4)]
        assert (await small.router.shard("shard-3").stats())["name"] == "shard-3"
        with pytest.raises(NotFound):
            await small.router.activate("not-a-shard-name")
        host = Client(small.address)
        on_new = []
        for _ in range(12):  # some new games land on the new shard
            made = await host.create("salvo", seats=2, nickname="h", deadline_seconds=600)
            if await small.store.placement(made.game_id) == "shard-3":
                on_new.append(made)
        assert on_new, "rendezvous hashing gives the new shard its share"
        removed = await small.router.remove("shard-3")
        assert removed["removed"] and removed["moved"] >= len(on_new)
        assert await small.store.shard_set() == {f"shard-{i}": "active" for i in range(3)}
        with pytest.raises(ValueError):
            ray.get_actor("shard-3", namespace=small.router.namespace)
        for made in on_new:  # its games play on elsewhere
            assert (await host.with_secret(made.secret).view(made.game_id)).status
            assert await small.store.placement(made.game_id) != "shard-3"
        await host.close()
    finally:
        with contextlib.suppress(ValueError):
            ray.kill(ray.get_actor("shard-3", namespace=small.router.namespace), no_restart=True)
