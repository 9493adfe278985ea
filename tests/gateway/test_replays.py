"""The player API's replays and exports (gateway/replays.py) over an in-process shard on a real
redis-server with a fake clock: who may ask, in which order the refusals come (nothing about a private
game told to anyone else), and every call counted as a community read."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from engine.errors import GameError, InvalidOrder, NotFound, NotOver, PermissionDenied, Throttled
from gateway.api import ApiConfig, PlayerAPI
from gateway.limits import PEER, Limits
from services.cluster import RedisProcess
from services.shard import ShardCore
from services.store import Store
from tests.fakes import FakeClock
from tests.gateway.test_api import LocalRouter

READS_BURST = 16


@pytest.fixture
async def api(redis_server: RedisProcess) -> AsyncIterator[tuple[PlayerAPI, ShardCore, FakeClock]]:
    prefix = f"rp{secrets.token_hex(4)}:"
    clock = FakeClock()
    core = ShardCore("local", Store(redis_server.url, prefix), now_ms=clock)
    the_api = PlayerAPI(Store(redis_server.url, prefix), LocalRouter(core),  # type: ignore[arg-type]
                        ApiConfig(presence_grace_s=0, limits=Limits(reads_burst=READS_BURST, reads_per_min=1e-6)))
    await the_api.start()
    PEER.set("10.0.0.7")
    yield the_api, core, clock
    await the_api.stop()
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.store.close()


async def refused(coro: Any) -> GameError:
    try:
        await coro
    except GameError as exc:
        return exc
    raise AssertionError("the call succeeded; a refusal was expected")


async def test_a_private_game_is_refused_to_others_before_anything_else_and_reads_are_counted(
        api: tuple[PlayerAPI, ShardCore, FakeClock]) -> None:
    the_api, core, clock = api
    made = await the_api.create(game="salvo", seats=2, nickname="ann", options={"max_rounds": 1})
    gid, secret = made["game_id"], made["secret"]
    await the_api.start_game(secret, gid, fill_with_autopilot=True)
    other = await the_api.create(game="salvo", seats=2, nickname="cat")
    reads = 0
    # running: others are refused as for a finished game (its state is not told), its player hears not_over
    for who in ("", "no-such-secret", other["secret"]):
        err = await refused(the_api.replays.frame(who, gid, 0, 0))
        assert isinstance(err, PermissionDenied), err
        reads += 1
    err = await refused(the_api.replays.export(secret, gid))
    assert isinstance(err, NotOver) and err.code == "game/not_over"
    reads += 1
    while core.games[gid].status != "over":
        clock.ms = core.games[gid].deadline_ms or clock.ms
        await core.fire_due()
    got = await the_api.replays.frame(secret, gid, 0, -1)
    assert got["frames"] == 2 and got["view"]["you"] == -1
    assert (await the_api.replays.export(secret, gid))["state_hash"] == (await core.state_hash(gid))["hash"]
    reads += 2
    for who in ("", other["secret"]):
        assert isinstance(await refused(the_api.replays.export(who, gid)), PermissionDenied)
        reads += 1
    for frame, seat, field in ((3, 0, "frame"), (-1, 0, "frame"), (0, 2, "seat")):
        err = await refused(the_api.replays.frame(secret, gid, frame, seat))
        assert isinstance(err, InvalidOrder) and err.field == field
        if frame >= 0:  # (a negative frame is refused before the read is counted)
            reads += 1
    for gone in ("nope", "x" * 65):
        assert isinstance(await refused(the_api.replays.export("", gone)), NotFound)
        reads += 1
    assert reads < READS_BURST
    for _ in range(READS_BURST - reads):
        await the_api.replays.frame(secret, gid, 1, 1)
    err = await refused(the_api.replays.frame(secret, gid, 1, 1))  # the reads' burst is spent
    assert isinstance(err, Throttled) and err.code == "client/throttled"
