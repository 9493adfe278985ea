"""Ratings and history of finished games in a ShardCore on a real redis-server (the toy count game of
:mod:`tests.engine.toygame`, 3 players): a rated game's result applied once, its game_over carrying the
changes, a restarted shard applying nothing again, a shard stopped between the end and the ratings
finishing on load, store failures retried, concurrent games of one profile, unrated games."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from services.actor_ratings import RETRY_MS
from services.cluster import RedisProcess
from services.community_store import CommunityStore
from services.ratings import Skill, rate
from services.shard import ShardCore
from services.store import Store
from tests.engine import toygame
from tests.fakes import FakeClock

DEADLINE_S = 16
HANDLES = ("ann", "bob", "cat")
# seat 0 adds 3, seat 1 answers (a point), seat 0 adds 3 more; seat 1 adds 3; seat 2 adds 2: 10, it wins.
# Scores (0, 1, 0): places seat 2 first, seat 1 second, seat 0 third.
SCRIPT: list[tuple[int, dict[str, Any]]] = [
    (0, {"add": {"n": 3}}), (1, {"answer": {}}), (2, {"pass": {}}), (0, {"add": {"n": 3}}), (2, {"pass": {}}),
    (1, {"add": {"n": 3}}), (2, {"pass": {}}), (0, {"pass": {}}), (2, {"add": {"n": 2}})]
PLACES = [3, 2, 1]


@pytest.fixture(autouse=True, scope="module")
def toy_registered() -> Iterator[None]:
    with toygame.registered():
        yield


def community(core: ShardCore) -> CommunityStore:
    return CommunityStore(core.store)


async def make_profiles(core: ShardCore) -> list[dict[str, str]]:
    out = []
    for handle in HANDLES:
        status, pid = await community(core).create_profile(secrets.token_hex(8), handle,
                                                           hashlib.sha256(handle.encode()).hexdigest(), 1)
        assert status == "created"
        out.append({"id": pid, "handle": handle})
    return out


async def new_game(core: ShardCore, gid: str, profiles: list[dict[str, str]], *, public: bool = True) -> None:
    await core.create_game(gid, {"kind": toygame.NAME, "config": {"players": 3}, "nickname": "ann-nick",
                                 "secret_hash": f"{gid}-0", "public": public, "deadline_s": DEADLINE_S,
                                 "code": "TOYTOY", "profile": profiles[0], "speed": "fast"})
    for seat in (1, 2):
        await core.join(gid, f"{HANDLES[seat]}-nick", f"{gid}-{seat}", None, profiles[seat])
    await core.start_game(gid, 0, False)


async def play(core: ShardCore, gid: str, script: list[tuple[int, dict[str, Any]]], keys: str = "k") -> None:
    for i, (seat, action) in enumerate(script):
        await core.action(gid, seat, action, f"{keys}{i}")


def expected_changes(places: list[int], before: list[Skill] | None = None) -> list[dict[str, Any]]:
    old = before or [Skill()] * len(places)
    new = rate(old, places)
    return [{"seat": s, "handle": HANDLES[s], "before": old[s].ordinal, "after": new[s].ordinal, "mu": new[s].mu,
             "sigma": new[s].sigma} for s in range(len(places))]


def assert_changes(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert [(c["seat"], c["handle"]) for c in got] == [(c["seat"], c["handle"]) for c in want]
    for g, w in zip(got, want, strict=True):
        assert [g[k] for k in ("before", "after", "mu", "sigma")] == pytest.approx(
            [w[k] for k in ("before", "after", "mu", "sigma")])


async def game_over(core: ShardCore, gid: str, seat: int = 0) -> tuple[dict[str, Any] | None, bool]:
    """(the game_over update seat ``seat`` has, or None; whether the shard reports the game over)."""
    got = await core.updates(gid, seat, 0)
    over = [u for u in got["updates"] if u["kind"] == "game_over"]
    assert len(over) <= 1
    if over:
        assert got["updates"][-1] is over[0] or got["updates"][-1] == over[0]  # (the last update)
    return (over[0] if over else None), bool(got["over"])


async def ops(core: ShardCore, gid: str) -> list[str]:
    return [e["op"] for e in await core.store.journal_read(gid)]


async def test_a_3_player_rated_game_updates_three_ratings_once(shard: tuple[ShardCore, FakeClock]) -> None:
    core, _ = shard
    profiles = await make_profiles(core)
    await new_game(core, "r1", profiles)
    await play(core, "r1", SCRIPT)

    over, reported = await game_over(core, "r1")
    assert over is not None and reported
    assert over["data"]["outcome"] == {"winners": [2], "draw": False, "reason": "target", "scores": [0, 1, 0]}
    want = expected_changes(PLACES)
    assert_changes(over["data"]["ratings"], want)
    assert (await ops(core, "r1")).count("rated") == 1 and (await ops(core, "r1"))[-1] == "rated"
    # a spectator's game_over carries them too
    spectator = [u for u in (await core.updates("r1", -1, 0))["updates"] if u["kind"] == "game_over"]
    assert spectator[0]["data"] == over["data"]

    cs = community(core)
    for seat, p in enumerate(profiles):
        (rating,) = await cs.ratings_of(p["id"])
        assert rating["game"] == toygame.NAME and rating["speed"] == "fast" and rating["games"] == 1
        assert [rating["mu"], rating["sigma"], rating["ordinal"]] == pytest.approx(
            [want[seat]["mu"], want[seat]["sigma"], want[seat]["after"]])
        assert rating["rank"] == 1 + sorted(PLACES).index(PLACES[seat])
        assert (await cs.profile(p["id"]) or {})["games"] == 1
        (entry,), total = await cs.history(p["id"], 0, 50)
        assert total == 1
        assert {k: entry[k] for k in ("game_id", "game", "speed", "seat", "nickname", "seats", "place", "won",
                                      "reason", "rated")} == {
            "game_id": "r1", "game": toygame.NAME, "speed": "fast", "seat": seat, "nickname": f"{HANDLES[seat]}-nick",
            "seats": 3, "place": PLACES[seat], "won": seat == 2, "reason": "target", "rated": True}
        assert entry["rating"] == next(c for c in over["data"]["ratings"] if c["seat"] == seat)
        assert entry["ended_unix_ms"] > 0
    entries, total = await cs.leaderboard(toygame.NAME, "fast", 0, 50)
    assert total == 3 and [e["handle"] for e in entries] == ["cat", "bob", "ann"]
    assert [e["rank"] for e in entries] == [1, 2, 3] and all(e["games"] == 1 for e in entries)
    assert (await cs.leaderboard(toygame.NAME, "slow", 0, 50)) == ([], 0)


async def test_a_restarted_shard_does_not_apply_a_result_again(shard: tuple[ShardCore, FakeClock],
                                                               redis_server: RedisProcess) -> None:
    core, clock = shard
    profiles = await make_profiles(core)
    await new_game(core, "r2", profiles)
    await play(core, "r2", SCRIPT)
    first, _ = await game_over(core, "r2")
    cs = community(core)
    before = [await cs.ratings_of(p["id"]) for p in profiles]

    again = ShardCore("shard-t", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    try:
        reloaded, reported = await game_over(again, "r2")  # loaded from the (retired) journal
        assert reported and reloaded == first
        assert [await cs.ratings_of(p["id"]) for p in profiles] == before
        assert (await ops(again, "r2")).count("rated") == 1
        # the store itself answers a second application with the first's changes, and changes nothing
        actor = await again.game("r2")
        assert await cs.record_game(actor._result(), 3600) == first["data"]["ratings"]  # type: ignore[index]
        assert [await cs.ratings_of(p["id"]) for p in profiles] == before
        assert [(await cs.history(p["id"], 0, 50))[1] for p in profiles] == [1, 1, 1]
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()


def failing_store(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """CommunityStore.record_game fails (Redis does not answer) its first ``times`` calls; the calls made."""
    real = CommunityStore.record_game
    calls: list[int] = []

    async def record_game(self: CommunityStore, result: Any, retention_s: float) -> list[dict[str, Any]]:
        calls.append(1)
        if len(calls) <= times:
            raise RedisConnectionError("no answer")
        return await real(self, result, retention_s)

    monkeypatch.setattr(CommunityStore, "record_game", record_game)
    return calls


async def test_a_shard_stopped_between_the_end_and_the_ratings_finishes_on_load(
        shard: tuple[ShardCore, FakeClock], redis_server: RedisProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    core, clock = shard
    profiles = await make_profiles(core)
    await new_game(core, "r3", profiles)
    failing_store(monkeypatch, times=1000)
    await play(core, "r3", SCRIPT)
    # the end is journaled, the ratings are not: no game_over yet, and the game is not reported over
    over, reported = await game_over(core, "r3")
    assert over is None and not reported
    assert "rated" not in await ops(core, "r3") and (await ops(core, "r3"))[-1] == "action"
    assert [await community(core).ratings_of(p["id"]) for p in profiles] == [[], [], []]
    monkeypatch.undo()

    again = ShardCore("shard-t", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    try:
        over, reported = await game_over(again, "r3")  # the new shard loads the game and finishes it
        assert over is not None and reported
        assert_changes(over["data"]["ratings"], expected_changes(PLACES))
        assert (await ops(again, "r3")).count("rated") == 1
        assert [len(await community(again).ratings_of(p["id"])) for p in profiles] == [1, 1, 1]
        assert await again.store.redis.exists(again.store.key("g", "r3", "archive"))  # then retired
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()


async def test_a_store_failure_is_retried_at_the_shards_timer(shard: tuple[ShardCore, FakeClock],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    core, clock = shard
    profiles = await make_profiles(core)
    await new_game(core, "r4", profiles)
    calls = failing_store(monkeypatch, times=2)
    await play(core, "r4", SCRIPT)
    assert calls == [1] and (await game_over(core, "r4"))[0] is None
    clock.advance(RETRY_MS / 1000 - 1)
    await core.fire_due()
    assert calls == [1]
    clock.advance(1)
    await core.fire_due()
    assert calls == [1, 1] and (await game_over(core, "r4"))[0] is None  # failed again: armed again
    clock.advance(RETRY_MS / 1000)
    await core.fire_due()
    over, reported = await game_over(core, "r4")
    assert calls == [1, 1, 1] and over is not None and reported
    assert_changes(over["data"]["ratings"], expected_changes(PLACES))
    await core.flush()
    assert await core.store.deadlines("shard-t") == []  # nothing left armed


async def test_two_games_ending_at_once_for_one_profile_both_count(shard: tuple[ShardCore, FakeClock]) -> None:
    core, _ = shard
    profiles = await make_profiles(core)
    for gid in ("c1", "c2"):
        await new_game(core, gid, profiles)
        await play(core, gid, SCRIPT[:-1])
    (seat, last), i = SCRIPT[-1], len(SCRIPT) - 1
    await asyncio.gather(core.action("c1", seat, last, f"k{i}"), core.action("c2", seat, last, f"k{i}"))
    once = rate([Skill()] * 3, PLACES)
    twice = rate(once, PLACES)
    cs = community(core)
    for s, p in enumerate(profiles):
        (rating,) = await cs.ratings_of(p["id"])
        assert rating["games"] == 2 and [rating["mu"], rating["sigma"]] == pytest.approx([twice[s].mu, twice[s].sigma])
        assert (await cs.history(p["id"], 0, 50))[1] == 2
    changes = [(await game_over(core, gid))[0]["data"]["ratings"] for gid in ("c1", "c2")]  # type: ignore[index]
    # one of the two games was applied first: the other's "before" is its "after"
    firsts = [c for c in changes if c[0]["before"] == pytest.approx(Skill().ordinal)]
    assert len(firsts) == 1
    second = changes[1 - changes.index(firsts[0])]
    assert [c["before"] for c in second] == pytest.approx([c["after"] for c in firsts[0]])


async def test_an_unrated_game_ends_at_once_and_still_goes_to_the_history(shard: tuple[ShardCore, FakeClock]) -> None:
    core, _ = shard
    profiles = await make_profiles(core)
    await new_game(core, "u1", profiles, public=False)
    await play(core, "u1", SCRIPT)
    over, reported = await game_over(core, "u1")
    assert over is not None and reported and "ratings" not in over["data"]
    assert "rated" not in await ops(core, "u1")
    cs = community(core)
    for seat, p in enumerate(profiles):
        assert await cs.ratings_of(p["id"]) == []
        (entry,), _ = await cs.history(p["id"], 0, 50)
        assert entry["rated"] is False and entry["rating"] is None and entry["place"] == PLACES[seat]
    assert await cs.leaderboard(toygame.NAME, "fast", 0, 50) == ([], 0)


async def test_a_seat_the_autopilot_played_most_is_not_rated(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    profiles = await make_profiles(core)
    await new_game(core, "a1", profiles)
    await play(core, "a1", [(0, {"add": {"n": 3}}), (1, {"pass": {}}), (2, {"pass": {}})])
    clock.advance(DEADLINE_S)  # seat 1's only turn: the autopilot adds 1 for it (M25)
    assert await core.fire_due() == 1
    await play(core, "a1", [(2, {"pass": {}}), (0, {"pass": {}}), (2, {"add": {"n": 3}}), (0, {"pass": {}}),
                            (1, {"pass": {}}), (0, {"add": {"n": 3}})], keys="later")
    over, _ = await game_over(core, "a1")
    assert over is not None and over["data"]["outcome"]["winners"] == [0]
    # seats 0 and 2 rated (places 1 and 2: equal scores after the winner), seat 1 not
    new = rate([Skill(), Skill()], [1, 2])
    got = over["data"]["ratings"]
    assert [c["seat"] for c in got] == [0, 2]
    assert [got[0]["mu"], got[1]["mu"]] == pytest.approx([new[0].mu, new[1].mu])
    cs = community(core)
    assert await cs.ratings_of(profiles[1]["id"]) == []
    (entry,), _ = await cs.history(profiles[1]["id"], 0, 50)
    assert entry["rated"] is False and entry["place"] == 2 and entry["rating"] is None
