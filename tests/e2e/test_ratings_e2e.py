"""Ratings through each door (real Ray, real redis-server): three profiles play a public 3-player
Archipelago game to its end; its game_over carries the three rating changes (OpenSkill's Plackett–Luce
from the outcome's places); GetProfile, GetLeaderboard and ListProfileGames show them; then the game's
shard is killed and restarted, and nothing is applied twice."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

import pytest
import ray
from google.protobuf import json_format
from openskill.models import PlackettLuce

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import lobby_pb2
from client.base import BaseClient
from client.bot import choose_orders
from client.views import orders_message
from services.ratings import places
from tests.conftest import NAMESPACE, Cluster
from tests.e2e.helpers import WAIT_S, connected, round_closed, wait_update
from tests.e2e.test_shard_restart import restarted

pytestmark = pytest.mark.e2e

NICKS = ("ann", "bob", "cat")


async def play_to_the_end(gid: str, players: list[BaseClient]) -> None:
    """Every player submits the bot's orders each round (nobody autoplayed) until the game is over."""
    while (first := await players[0].view(gid)).status == lobby_pb2.GAME_STATUS_RUNNING:
        for p in players:
            v = await p.view(gid)
            await p.submit_message(gid, v.version, "archipelago", orders_message("archipelago", choose_orders(v)))
        await wait_update(players[0], gid, first.seq, round_closed(first.round))


def expected(outcome: dict[str, Any], handles: list[str]) -> list[dict[str, Any]]:
    """The changes OpenSkill's own Plackett–Luce model makes of three new profiles at these places."""
    model = PlackettLuce()
    ranks = places(outcome, 3)
    new = model.rate([[model.rating()] for _ in range(3)], ranks=[float(r) for r in ranks])
    start = model.rating().ordinal()
    return [{"seat": s, "handle": handles[s], "before": start, "after": new[s][0].ordinal(), "mu": new[s][0].mu,
             "sigma": new[s][0].sigma, "place": ranks[s]} for s in range(3)]


def same_changes(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert [(int(c.get("seat", 0)), c["handle"]) for c in got] == [(w["seat"], w["handle"]) for w in want]
    for c, w in zip(got, want, strict=True):
        assert [c.get(k, 0.0) for k in ("before", "after", "mu", "sigma")] == pytest.approx(
            [w[k] for k in ("before", "after", "mu", "sigma")], abs=1e-9)


async def community_state(reader: BaseClient, handles: list[str]) -> dict[str, Any]:
    """What the profile reads show of the three profiles (to compare before and after a restart)."""
    board = await reader.leaderboard("archipelago", lobby_pb2.SPEED_FAST, limit=200)
    return {"profiles": [json_format.MessageToDict(await reader.profile(h)) for h in handles],
            "games": [json_format.MessageToDict(await reader.profile_games(h)) for h in handles],
            "board": [json_format.MessageToDict(e) for e in board.entries if e.handle in handles]}


async def test_a_rated_3_player_game_is_applied_once_even_across_a_shard_restart(cluster: Cluster, door: str) -> None:
    token = secrets.token_hex(3)
    handles = [f"{n}-{token}" for n in NICKS]
    async with cluster.client(door) as anon:
        profile_secrets = [(await anon.create_profile(h)).secret for h in handles]
    profile_clients = [cluster.client(door, s) for s in profile_secrets]
    try:
        created = await profile_clients[0].create("archipelago", seats=3, nickname=NICKS[0], deadline_seconds=600,
                                                  public=True, archipelago=A.ArchipelagoOptions(max_rounds=1))
        gid = created.game_id
        players = [profile_clients[0].with_secret(created.secret)]
        for seat in (1, 2):
            joined = await profile_clients[seat].join(created.code, NICKS[seat])
            players.append(profile_clients[seat].with_secret(joined.secret))
        await players[0].start(gid)
        async with contextlib.AsyncExitStack() as stack:  # every player connected: rounds close when all are done
            streams = [await stack.enter_async_context(connected(p, gid)) for p in players]
            await play_to_the_end(gid, players)
            seen = [await asyncio.wait_for(s, WAIT_S) for s in streams]  # each stream ends after game_over

        overs = [json_format.MessageToDict(updates[-1].data) for updates in seen]
        assert all(u[-1].kind == "game_over" for u in seen)
        assert overs[1] == overs[0] and overs[2] == overs[0]  # every seat sees the same
        want = expected(overs[0]["outcome"], handles)
        same_changes(overs[0]["ratings"], want)

        reader = cluster.client(door)
        try:
            for seat, h in enumerate(handles):
                prof = await reader.profile(h)
                assert prof.handle == h and prof.games == 1
                (rating,) = prof.ratings
                assert (rating.game, rating.speed, rating.games) == ("archipelago", lobby_pb2.SPEED_FAST, 1)
                assert [rating.mu, rating.sigma, rating.ordinal] == pytest.approx(
                    [want[seat]["mu"], want[seat]["sigma"], want[seat]["after"]])
                listed = await reader.profile_games(h)
                assert listed.total == 1
                (played,) = listed.games
                assert (played.game_id, played.game, played.speed, played.seat, played.nickname, played.seats) == (
                    gid, "archipelago", lobby_pb2.SPEED_FAST, seat, NICKS[seat], 3)
                assert played.place == want[seat]["place"] and played.rated and played.reason == "max_rounds"
                assert played.won == (seat in overs[0]["outcome"]["winners"])
                assert played.rating.after == pytest.approx(want[seat]["after"]) and played.rating.handle == h
                assert (await profile_clients[seat].my_profile()).games == 1
            board = await reader.leaderboard("archipelago", lobby_pb2.SPEED_FAST, limit=200)
            ours = [e for e in board.entries if e.handle in handles]
            assert len(ours) == 3 and board.total >= 3
            assert [e.ordinal for e in ours] == sorted((e.ordinal for e in ours), reverse=True)
            for e in ours:  # rank: the place on the board, as each profile says
                assert e.rank == list(board.entries).index(e) + 1 and e.games == 1
                assert e.rank == (await reader.profile(e.handle)).ratings[0].rank
            before = await community_state(reader, handles)

            # the game's shard is killed and restarted: it reloads the game, and applies nothing again
            shard = await cluster.api.store.placement(gid)
            handle = ray.get_actor(shard, namespace=NAMESPACE)
            pid = (await handle.ping.remote())["pid"]
            ray.kill(handle, no_restart=False)
            await restarted(handle, pid)
            final = await players[0].view(gid)  # loaded from Redis by the new process
            assert final.status == lobby_pb2.GAME_STATUS_OVER
            again = await wait_update(players[1], gid, 0, lambda u: u.kind == "game_over")
            assert json_format.MessageToDict(again.data) == overs[0]
            assert await community_state(reader, handles) == before
        finally:
            await reader.close()
    finally:
        for c in profile_clients:
            await c.close()
