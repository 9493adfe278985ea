"""A turn-based game (the toy count game of :mod:`tests.engine.toygame`) in a ShardCore on a real
redis-server with a fake clock: actions through the shard, step deadlines armed in the shard's heap
and recorded in the deadline index, the autopilot firing at them, and a restarted shard going on
from the journal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.errors import NotYourTurn
from services.cluster import RedisProcess
from services.shard import ShardCore
from services.store import Store
from tests.engine import toygame
from tests.fakes import FakeClock

DEADLINE_S = 16  # a turn: 16 s; a response window: 2 s


@pytest.fixture(autouse=True, scope="module")
def toy_registered() -> Iterator[None]:
    with toygame.registered():
        yield


async def new_game(core: ShardCore, game_id: str) -> None:
    await core.create_game(game_id, {"kind": toygame.NAME, "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": "h0", "public": False, "deadline_s": DEADLINE_S,
                                     "code": "TOYTOY"})
    await core.join(game_id, "bob", "h1")
    await core.start_game(game_id, 0, False)


async def test_m25_turn_and_window_deadlines_fire_in_the_shard(shard: tuple[ShardCore, FakeClock],
                                                               redis_server: RedisProcess) -> None:
    core, clock = shard
    await new_game(core, "t1")
    with pytest.raises(NotYourTurn):
        await core.action("t1", 1, {"add": {"n": 1}}, "")
    ack = await core.action("t1", 0, {"add": {"n": 2}}, "k")
    assert ack == {"version": ack["version"], "replayed": False}
    view = await core.view("t1", 1)
    assert view["step"]["kind"] == "window" and view["step"]["players"] == [1] and view["expected"]
    assert view["step"]["deadline_unix_ms"] == clock() + DEADLINE_S * 1000 // 8
    await core.flush()
    assert await core.store.deadlines("shard-t") == [("t1", view["step"]["deadline_unix_ms"])]
    clock.advance(DEADLINE_S / 8 - 1)
    assert await core.fire_due() == 0
    clock.advance(1)
    assert await core.fire_due() == 1  # seat 1 lets the window pass: seat 1's turn
    view = await core.view("t1", 1)
    assert view["round"] == 2 and view["step"] == {"kind": "turn", "players": [1], "active": 1, "deadline": "turn",
                                                   "deadline_unix_ms": clock() + DEADLINE_S * 1000}
    await core.flush()
    again = ShardCore("shard-t", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    await again.start()  # a restarted shard: the deadline index re-armed, the game loads on its deadline
    try:
        clock.advance(DEADLINE_S)
        assert await again.fire_due() == 1  # the autopilot adds for seat 1
        view = await again.view("t1", 0)
        assert view["step"]["kind"] == "window" and view["step"]["players"] == [0]
        assert view["view"]["count"] == 3 and view["version"] == (await again.state_hash("t1"))["version"]
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()
