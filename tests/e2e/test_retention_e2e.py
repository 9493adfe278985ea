"""Retention through the whole path (issue 11): a game played to its end through the gateway leaves
no key in Redis without a time to live, and none beyond the stated retention."""

from __future__ import annotations

import hashlib

import pytest
import redis.asyncio as aioredis

from archipelago.v1 import lobby_pb2
from tests.conftest import Cluster
from tests.e2e.helpers import MISSING_SALVOS, SINKING_SALVOS, new_game, placement, rpc_error, shots, submit_and_close

pytestmark = pytest.mark.e2e

WEEK_S = 7 * 24 * 3600


async def keys_without_expiry(r: aioredis.Redis, prefix: str) -> set[str]:
    out = set()
    async for key in r.scan_iter(match=prefix + "*", count=1000):
        if await r.ttl(key) == -1:
            out.add(str(key))
    return out


async def test_a_finished_game_leaves_no_key_without_an_expiry(cluster: Cluster) -> None:
    r = aioredis.Redis.from_url(cluster.redis_url, decode_responses=True)
    try:
        before = await keys_without_expiry(r, cluster.prefix)
        game = await new_game(lambda: cluster.client("grpc"))
        token = await game.host.create_agent_token(game.game_id, "bot")
        await submit_and_close(game, placement(0), placement(1))
        for mine, theirs in zip(SINKING_SALVOS[1], MISSING_SALVOS, strict=True):
            await submit_and_close(game, shots(mine), shots(theirs))
        view = await game.host.view(game.game_id)
        assert view.status == lobby_pb2.GAME_STATUS_OVER
        err = await rpc_error(game.host.submit(game.game_id, view.version, salvo=shots(["A1"])))
        assert err.code == "game/over"  # (taken after the game's lock: its retirement is done)

        assert await keys_without_expiry(r, cluster.prefix) - before == set(), "every key the game made expires"
        p = cluster.prefix
        secrets_ = [game.host.secret, game.guest.secret, token.token]
        mine = [f"{p}g:{game.game_id}:archive", f"{p}g:{game.game_id}:summary", f"{p}place:{game.game_id}",
                f"{p}code:{game.code}", f"{p}agents:{game.game_id}:0"]
        mine += [f"{p}secret:{hashlib.sha256(str(s).encode()).hexdigest()}" for s in secrets_[:2]]
        mine.append(f"{p}agent:{hashlib.sha256(str(secrets_[2]).encode()).hexdigest()}")
        ttls = {k: await r.ttl(k) for k in mine}
        assert all(0 < t <= WEEK_S for t in ttls.values()), ttls
        assert await r.exists(f"{p}g:{game.game_id}:journal") == 0, "the journal is compacted"
        assert await r.zscore(f"{p}open", game.game_id) is None
        for shard in cluster.shards:
            assert await r.zscore(f"{p}deadlines:{shard}", game.game_id) is None
        late = await game.guest.create_agent_token(game.game_id, "after the end")
        late_key = f"{p}agent:{hashlib.sha256(late.token.encode()).hexdigest()}"
        assert 0 < await r.ttl(late_key) <= WEEK_S and 0 < await r.ttl(f"{p}agents:{game.game_id}:1") <= WEEK_S, \
            "a token made after the end leaves with the game"
        again = await game.guest.view(game.game_id)
        assert again.status == lobby_pb2.GAME_STATUS_OVER and again.salvo.outcome.winners == [0]
    finally:
        await r.aclose()
