"""Shard metrics reach the gateway's Prometheus exposition with a shard label; the gateway's own (Watch
streams, connected players, placements, Redis) move as a game does.

The shards and this process's gateway are shared with other tests: every check is a difference
before/after for this test's own game, and where other games could move a figure meanwhile (a
round closed by its deadline, a game evicted from memory), the test sees it and plays its steps
again, or leaves the other games out of the count."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
import redis.asyncio as aioredis
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.api import WATCH_DOORS, stream_census
from gateway.metrics import ShardCollector
from services.metrics import PHASES
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, connected, new_game, placement, submit_and_close

pytestmark = pytest.mark.e2e

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


class Scraper:
    """The gateway's /metrics as its app serves them: this process's registry plus every shard's."""

    def __init__(self, cluster: Cluster) -> None:
        self.collector = ShardCollector(cluster.api.router)
        self.registry = CollectorRegistry()
        self.registry.register(self.collector)

    async def __call__(self) -> Samples:
        await self.collector.refresh()
        return {**samples(generate_latest(REGISTRY).decode()), **samples(generate_latest(self.registry).decode())}


def change(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def rounds_closed(s: Samples, shard: str) -> float:
    return sum(s.get(("archipelago_rounds_closed_total", (("how", how), ("shard", shard))), 0.0)
               for how in ("early", "deadline"))


async def test_rounds_resolution_and_journal_metrics_per_shard(cluster: Cluster) -> None:
    collector = ShardCollector(cluster.api.router)
    registry = CollectorRegistry()
    registry.register(collector)
    await collector.refresh()
    before = samples(generate_latest(registry).decode())

    game = await new_game(lambda: cluster.client("grpc"))
    await submit_and_close(game, placement(0), placement(1))
    shard = await cluster.api.store.placement(game.game_id)
    await collector.refresh()
    after = samples(generate_latest(registry).decode())

    def delta(name: str, **labels: str) -> float:
        key = (name, tuple(sorted({**labels, "shard": shard}.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("archipelago_rounds_closed_total", how="early") == 1
    # (other tests' games may close rounds by their deadlines on this shard meanwhile: each is counted)
    assert delta("archipelago_round_resolution_seconds_count") == 1 + delta("archipelago_rounds_closed_total",
                                                                            how="deadline")
    assert delta("archipelago_journal_write_seconds_count") >= 5  # create, join, start, 2 submissions, close
    assert after[("archipelago_shard_games", (("shard", shard),))] >= 1
    assert {dict(k[1]).get("shard") for k in after} >= set(cluster.shards)


async def test_games_by_kind_and_phase_follow_a_game_from_lobby_to_running(cluster: Cluster) -> None:
    """archipelago_games{kind, phase, shard}: a Salvo game created counts in its shard's lobby, started
    it moves to running. Other tests' games on that shard may end or leave memory meanwhile; when
    one did (a round closed, or the shard holds another number of games than this test made), the
    test plays its steps again with a new game."""
    scrape = Scraper(cluster)
    for _attempt in range(5):
        s0 = await scrape()
        game = await new_game(lambda: cluster.client("grpc"), start=False)
        shard = await cluster.api.store.placement(game.game_id)
        assert shard is not None
        s1 = await scrape()
        await game.host.start(game.game_id)
        s2 = await scrape()
        await asyncio.gather(game.host.close(), game.guest.close())
        steady = (rounds_closed(s0, shard) == rounds_closed(s1, shard) == rounds_closed(s2, shard)
                  and change(s0, s1, "archipelago_shard_games", shard=shard) == 1
                  and change(s1, s2, "archipelago_shard_games", shard=shard) == 0)
        if steady:
            break
    else:
        pytest.fail("other games kept changing on the shard: nothing could be measured")

    def moved(before: Samples, after: Samples, kind: str) -> list[float]:
        return [change(before, after, "archipelago_games", kind=kind, phase=p, shard=shard) for p in PHASES]

    assert moved(s0, s1, "salvo") == [1, 0, 0], "created: one more game in the lobby"
    assert moved(s1, s2, "salvo") == [-1, 1, 0], "started: from the lobby to running"
    assert moved(s0, s2, "archipelago") == [0, 0, 0]
    for kind in ("salvo", "archipelago"):
        for phase in PHASES:
            assert ("archipelago_games", (("kind", kind), ("phase", phase), ("shard", shard))) in s2


class PresenceNotices:
    """The game's pub/sub channel, read directly: a ``disconnected`` notice for a seat is published
    once its last stream is closed and unregistered on the gateway."""

    def __init__(self, cluster: Cluster, game_id: str) -> None:
        self.redis = aioredis.from_url(cluster.redis_url, decode_responses=True)
        self.pubsub = self.redis.pubsub()
        self.channel = cluster.api.store.channel(game_id)

    async def __aenter__(self) -> PresenceNotices:
        await self.pubsub.subscribe(self.channel)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.pubsub.aclose()
        await self.redis.aclose()

    async def gone(self, seat: int) -> None:
        async with asyncio.timeout(WAIT_S):
            while True:
                msg = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if msg is not None and msg["type"] == "message":
                    notice = json.loads(msg["data"])
                    if notice.get("presence") == seat and notice.get("connected") is False:
                        return


def presence_of(game_id: str) -> tuple[dict[str, float], float]:
    """This game's share of the gateway's archipelago_watch_streams{door} and
    archipelago_connected_players: the scraped figures less what every other game holds now (read in
    the same step: nothing runs in between)."""
    got = samples(generate_latest(REGISTRY).decode())
    others, other_players = stream_census(exclude_game=game_id)
    doors = {d: got[("archipelago_watch_streams", (("door", d),))] - others[d] for d in WATCH_DOORS}
    return doors, got[("archipelago_connected_players", ())] - other_players


async def test_watch_streams_by_door_and_connected_players_follow_the_streams(cluster: Cluster) -> None:
    game = await new_game(lambda: cluster.client("grpc"))
    guest_web = cluster.client("web", game.guest.secret)
    nobody = ({"grpc": 0, "http": 0, "mcp": 0}, 0)
    try:
        assert presence_of(game.game_id) == nobody
        async with PresenceNotices(cluster, game.game_id) as notices:
            async with connected(guest_web, game.game_id):
                assert presence_of(game.game_id) == ({"grpc": 0, "http": 1, "mcp": 0}, 1)
                async with contextlib.AsyncExitStack() as host:
                    await host.enter_async_context(connected(game.host, game.game_id))
                    assert presence_of(game.game_id) == ({"grpc": 1, "http": 1, "mcp": 0}, 2)
                    await host.enter_async_context(connected(game.host, game.game_id))
                    assert presence_of(game.game_id) == ({"grpc": 2, "http": 1, "mcp": 0}, 2), \
                        "a second stream of one player is one more stream, not one more player"
                await notices.gone(0)  # the host's last stream closed on the gateway
                assert presence_of(game.game_id) == ({"grpc": 0, "http": 1, "mcp": 0}, 1)
            await notices.gone(1)
            assert presence_of(game.game_id) == nobody
    finally:
        await asyncio.gather(game.host.close(), game.guest.close(), guest_web.close())


async def test_actions_placements_and_redis_move_with_a_game(cluster: Cluster) -> None:
    scrape = Scraper(cluster)
    before = await scrape()
    game = await new_game(lambda: cluster.client("grpc"))
    await game.guest.chat(game.game_id, "good luck")
    await submit_and_close(game, placement(0), placement(1))
    after = await scrape()
    shard = await cluster.api.store.placement(game.game_id)
    assert shard is not None
    # (only this test chats; other games' standing orders may trade with the bank meanwhile: not chat)
    assert change(before, after, "archipelago_actions_total", kind="chat", shard=shard) == 1
    assert change(before, after, "archipelago_placements_total") == 1, "one game placed by this gateway"
    assert change(before, after, "archipelago_placement_moves_total") == 0
    # The shard's journal appends (create, join, start, chat, two submissions, close) leave in pipelines:
    assert change(before, after, "archipelago_redis_command_seconds_count", command="PIPELINE", shard=shard) >= 1
    assert change(before, after, "archipelago_redis_command_seconds_sum", command="PIPELINE", shard=shard) > 0
    # ... and the gateway's own commands (the game's code, its placement) show without a shard label:
    assert change(before, after, "archipelago_redis_command_seconds_count", command="SET") >= 2
    for kind in ("outage", "other"):
        assert ("archipelago_redis_errors_total", (("kind", kind),)) in after
        assert ("archipelago_redis_errors_total", (("kind", kind), ("shard", shard))) in after
    await asyncio.gather(game.host.close(), game.guest.close())
