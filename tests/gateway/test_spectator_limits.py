"""Spectators are counted, bounded and rate-limited (community.proto, issue 26): at most
``spectators_per_game`` spectator streams of one game on one gateway, ``spectate_per_address`` per client
address, community reads per address on a token bucket; a stream that ends frees its place at once and
the ``archipelago_spectator_streams`` gauge counts what is open. A player API with tight limits over the
session's real Redis and shards, called as from several addresses (as tests/gateway/test_limits.py)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from engine.errors import Throttled
from gateway.api import ApiConfig, PlayerAPI
from gateway.limits import Limits
from services.store import Store
from tests.conftest import Cluster
from tests.gateway.test_limits import as_peer, throttled

TIGHT = Limits(lobby_per_min=600, lobby_burst=100, reads_per_min=6, reads_burst=8, spectators_per_game=3,
               spectate_per_address=2)


@pytest.fixture
async def tight(cluster: Cluster) -> AsyncIterator[PlayerAPI]:
    store = Store(cluster.redis_url, cluster.prefix)
    api = PlayerAPI(store, cluster.api.router, ApiConfig(public_url="http://test.invalid", limits=TIGHT))
    await api.start()
    yield api
    await api.stop()


async def public_game(api: PlayerAPI) -> str:
    made: Any = await as_peer("10.6.0.1", lambda: api.create(game="salvo", seats=2, nickname="host", public=True,
                                                               deadline_seconds=600))
    return str(made["game_id"])


async def first_update(stream: AsyncGenerator[dict[str, Any], None]) -> dict[str, Any]:
    """The stream's first update: it is registered (its place taken) once this returns."""
    return await anext(stream)


def gauge() -> float:
    return REGISTRY.get_sample_value("archipelago_spectator_streams") or 0.0


async def test_issue26_spectator_streams_are_bounded_per_game_and_per_address(tight: PlayerAPI) -> None:
    game = await public_game(tight)
    async with contextlib.AsyncExitStack() as open_streams:
        base = gauge()
        for peer in ("10.6.1.1", "10.6.1.1", "10.6.1.2"):  # two from one address, one from another
            stream: Any = await as_peer(peer, lambda: tight.spectate(game, 0))
            open_streams.push_async_callback(stream.aclose)
            assert (await first_update(stream))["kind"] == "joined"
        assert tight.spectators_of(game) == 3 and gauge() == base + 3
        before = throttled("spectators")
        with pytest.raises(Throttled, match="3 spectators on this gateway") as full:
            await as_peer("10.6.1.3", lambda: tight.spectate(game, 0))
        assert full.value.field == "game_id" and throttled("spectators") == before + 1
        other = await public_game(tight)  # the per-address cap counts every game's streams of the address
        with pytest.raises(Throttled, match="at most 2 spectator streams per client address"):
            await as_peer("10.6.1.1", lambda: tight.spectate(other, 0))
        elsewhere: Any = await as_peer("10.6.1.3", lambda: tight.spectate(other, 0))
        open_streams.push_async_callback(elsewhere.aclose)
        assert (await first_update(elsewhere))["kind"] == "joined"
    assert tight.spectators_of(game) == 0 and gauge() == base, "a closed stream frees its place at once"
    again: Any = await as_peer("10.6.1.3", lambda: tight.spectate(game, 0))
    async with contextlib.aclosing(again):
        assert (await first_update(again))["kind"] == "joined"


async def test_issue26_community_reads_are_rate_limited_per_address(tight: PlayerAPI) -> None:
    game = await public_game(tight)
    for _ in range(TIGHT.reads_burst):
        await as_peer("10.6.2.1", lambda: tight.spectator_view(game))
    before = throttled("reads")
    with pytest.raises(Throttled, match=r"too many reads from this address: retry in 10 s"):
        await as_peer("10.6.2.1", lambda: tight.live_games())
    assert throttled("reads") == before + 1
    assert (await as_peer("10.6.2.2", lambda: tight.spectator_view(game)))["you"] == -1  # type: ignore[index]
