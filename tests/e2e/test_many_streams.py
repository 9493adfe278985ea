"""2,000 Watch streams on one gateway keep its Redis connections under a stated bound (issue 11, 12).

The gateway here is the player API with its own gRPC door and its own named Redis pool (so that
``CLIENT LIST`` counts its connections and nobody else's), over the session's shards and real
redis-server. 20 Salvo games, 50 streams for each of their 40 players: every stream gets its
updates, a chat reaches all of them, and when they all close nothing of them is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import grpc
import pytest
import redis.asyncio as aioredis

from archipelago.v1 import game_pb2, game_pb2_grpc, lobby_pb2
from client.grpc_client import Client
from gateway.api import ApiConfig, PlayerAPI
from gateway.grpc_door import build_server
from gateway.limits import Limits
from services.store import MAX_CONNECTIONS, Store
from tests.conftest import Cluster

pytestmark = pytest.mark.e2e

GAMES, STREAMS_PER_PLAYER, CHANNELS = 20, 50, 8
WAIT_S = 120.0


async def test_2000_watch_streams_share_a_bounded_set_of_redis_connections(cluster: Cluster) -> None:
    name = f"gw-many-{secrets.token_hex(3)}"
    api = PlayerAPI(Store(cluster.redis_url, cluster.prefix, client_name=name), cluster.api.router,
                    ApiConfig(public_url="http://test.invalid", limits=Limits.off()))
    await api.start()
    server, port = await build_server(api, "127.0.0.1:0")
    r = aioredis.Redis.from_url(cluster.redis_url, decode_responses=True)
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(CHANNELS)]
    peak = 0
    sampling = True

    async def ours() -> int:
        return sum(1 for c in await r.client_list() if c.get("name") == name)

    async def sample() -> None:
        nonlocal peak
        while sampling:
            peak = max(peak, await ours())
            await asyncio.sleep(0.05)  # a sampling period, not a synchronisation

    sampler = asyncio.get_running_loop().create_task(sample())
    tasks: list[asyncio.Task[None]] = []
    try:
        players: list[tuple[str, str]] = []  # (game id, secret)
        hosts = []
        for g in range(GAMES):
            host = Client(f"127.0.0.1:{port}", channel=channels[g % CHANNELS])
            made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=600)
            guest = Client(f"127.0.0.1:{port}", channel=channels[(g + 1) % CHANNELS])
            await guest.join(made.code, "guest")
            await host.start(made.game_id)
            players += [(made.game_id, str(host.secret)), (made.game_id, str(guest.secret))]
            hosts.append((made.game_id, host))

        opened = 0
        all_open = asyncio.Event()
        heard: dict[str, int] = {}
        all_heard = asyncio.Event()
        total = len(players) * STREAMS_PER_PLAYER

        async def stream(i: int, game_id: str, secret: str) -> None:
            nonlocal opened
            stub = game_pb2_grpc.GameStub(channels[i % CHANNELS])
            call = stub.Watch(game_pb2.WatchRequest(game_id=game_id, after_seq=0),
                              metadata=(("authorization", f"Bearer {secret}"),))
            first = True
            async for u in call:
                if first and u.kind == "joined":
                    first = False
                    opened += 1
                    if opened == total:
                        all_open.set()
                if u.kind == "chat" and u.chat.text == f"hello {game_id}":
                    heard[game_id] = heard.get(game_id, 0) + 1
                    if sum(heard.values()) == total:
                        all_heard.set()

        for n, (game_id, secret) in enumerate(players):
            for k in range(STREAMS_PER_PLAYER):
                tasks.append(asyncio.get_running_loop().create_task(stream(n * STREAMS_PER_PLAYER + k, game_id,
                                                                           secret)))
        try:
            async with asyncio.timeout(WAIT_S):
                await all_open.wait()
        except TimeoutError:
            raise AssertionError(f"{opened} of {total} streams opened; server has {api.open_streams()}; "
                                 f"{[t for t in tasks if t.done()][:3]}") from None
        assert api.open_streams() == total
        for game_id, host in hosts:
            await host.chat(game_id, f"hello {game_id}")
        async with asyncio.timeout(WAIT_S):
            await all_heard.wait()
        assert heard == {g: 2 * STREAMS_PER_PLAYER for g, _ in hosts}, "every stream of every game heard it"
        assert api.notices.subscriptions() == GAMES, "one pub/sub subscription per game, not per stream"
        now = await ours()
        sampling = False
        await sampler
        assert 1 <= now <= peak <= MAX_CONNECTIONS, (now, peak, MAX_CONNECTIONS)
        view = await hosts[0][1].view(hosts[0][0])
        assert view.status == lobby_pb2.GAME_STATUS_RUNNING and all(p.connected for p in view.players)
    finally:
        sampling = False
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, sampler, return_exceptions=True)
        for ch in channels:
            await ch.close()
        async with asyncio.timeout(WAIT_S):  # the server side of each cancelled stream cleans up
            while api.open_streams() or api.mailboxes():
                await asyncio.sleep(0.05)
        await server.stop(grace=1)
        await api.stop()
        with contextlib.suppress(Exception):
            await r.aclose()
    assert api.open_streams() == 0 and api.mailboxes() == 0
