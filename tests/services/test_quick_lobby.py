"""A quick-play lobby in its game actor (services/actor_lobby.py): it starts by itself when a join takes
its last seat, or at the end of its wait with autopilot seats if its opener allowed that (else it waits
until the lobby expires), leaves its bucket when it starts or ends, and reloads from its journal to
the same state. ShardCore on a real redis-server with a fake clock."""

from __future__ import annotations

from typing import Any

from services.shard import ShardCore
from services.store import Store
from tests.fakes import FakeClock

TTL_S = 24 * 3600  # the shard fixture's lobby time to live (Retention's default)


def spec(kind: str, players: int, *, wait_s: float = 300.0, autopilot: bool = False, code: str = "QUICK1"
         ) -> dict[str, Any]:
    bucket = f"{kind}:fast:{players}"
    return {"kind": kind, "config": {"players": players}, "nickname": "ann", "secret_hash": "h0", "public": True,
            "deadline_s": 60, "code": code, "speed": "fast",
            "quick": {"wait_s": wait_s, "autopilot": autopilot, "bucket": bucket}}


async def opened(core: ShardCore, game_id: str, kind: str, players: int, **kw: Any) -> str:
    """A quick-play lobby opened and put in its bucket, as the gateway does; its bucket."""
    s = spec(kind, players, **kw)
    await core.create_game(game_id, s)
    bucket = str(s["quick"]["bucket"])
    await core.store.quick_add(bucket, game_id, 1, 60)
    return bucket


async def ops(core: ShardCore, game_id: str) -> list[tuple[str, Any, Any]]:
    return [(e["op"], e.get("fill"), e.get("by")) for e in await core.store.journal_read(game_id)]


async def test_the_join_that_takes_the_last_seat_starts_the_game(shard: tuple[ShardCore, FakeClock]) -> None:
    core, _ = shard
    bucket = await opened(core, "q-full", "archipelago", 3)
    first = await core.join("q-full", "bob", "h1")
    assert (first["status"], first["starts_ms"]) == ("lobby", 0)
    assert await core.store.quick_lobbies(bucket) == ["q-full"], "a lobby with a free seat stays in its bucket"
    last = await core.join("q-full", "cy", "h2")
    assert (last["seat"], last["status"]) == (2, "running"), "nobody had to press Start"
    assert await ops(core, "q-full") == [("create", None, None), ("join", None, None), ("join", None, None),
                                         ("start", False, "quick")]
    view = await core.view("q-full", 2)
    assert view["status"] == "running" and [p["nickname"] for p in view["players"]] == ["ann", "bob", "cy"]
    assert not any(p["autopilot"] for p in view["players"])
    assert await core.store.quick_lobbies(bucket) == [], "a started lobby leaves its bucket"
    again = await core.join("q-full", "cy", "h2")  # a retried join: the same seat, the game running
    assert (again["seat"], again["status"]) == (2, "running")
    assert len(await ops(core, "q-full")) == 4


async def test_at_the_end_of_its_wait_a_lobby_with_the_autopilot_allowed_starts_with_autopilot_seats(
        shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    bucket = await opened(core, "q-auto", "archipelago", 4, wait_s=60, autopilot=True)
    created_ms = clock()
    joined = await core.join("q-auto", "bob", "h1")
    assert joined["starts_ms"] == created_ms + 60_000
    assert (await core.view("q-auto", 0))["deadline_unix_ms"] == created_ms + 60_000
    clock.advance(59)
    assert await core.fire_due() == 0
    assert (await core.view("q-auto", 0))["status"] == "lobby"
    clock.advance(1)
    assert await core.fire_due() == 1
    view = await core.view("q-auto", 1)
    assert view["status"] == "running" and view["round"] == 0
    assert [(p["nickname"], p["autopilot"]) for p in view["players"]] == [
        ("ann", False), ("bob", False), ("autopilot-3", True), ("autopilot-4", True)]
    assert (await ops(core, "q-auto"))[-1] == ("start", True, "quick"), "the actor started it, no player"
    assert await core.store.quick_lobbies(bucket) == []


async def test_without_the_autopilot_a_lobby_waits_for_players_until_it_expires(
        shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    bucket = await opened(core, "q-wait", "archipelago", 4, wait_s=60, autopilot=False)
    assert (await core.join("q-wait", "bob", "h1"))["starts_ms"] == 0
    clock.advance(61)
    assert await core.fire_due() == 0
    assert (await core.view("q-wait", 0))["status"] == "lobby", "no autopilot: it still waits for players"
    assert await core.store.quick_lobbies(bucket) == ["q-wait"]
    clock.advance(TTL_S)
    assert await core.fire_due() == 1
    view = await core.view("q-wait", 0)
    assert view["status"] == "over" and view["players"][0]["nickname"] == "ann"
    assert (await ops(core, "q-wait"))[-1][0] == "expire"
    assert await core.store.quick_lobbies(bucket) == [], "an ended lobby leaves its bucket"


def fresh(core: ShardCore, clock: FakeClock) -> ShardCore:
    """Another shard on the same Redis: the games reload from their journals."""
    return ShardCore(core.name, Store(core.store.url, prefix=core.store.prefix), now_ms=clock)


async def test_a_reloaded_quick_lobby_keeps_its_wait_and_starts_the_same(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await opened(core, "q-reload", "archipelago", 4, wait_s=60, autopilot=True)
    await core.join("q-reload", "bob", "h1")
    before = await core.view("q-reload", 1)
    again = fresh(core, clock)
    try:
        assert await again.view("q-reload", 1) == before
        clock.advance(60)
        assert await again.fire_due() == 1, "the reloaded lobby's wait is armed from its journal"
        started = await again.view("q-reload", 1)
        assert started["status"] == "running"
        third = fresh(core, clock)
        try:
            assert await third.view("q-reload", 1) == started, "the start replays to the same game"
        finally:
            await third.flush()  # (its pending writes: none may run on a closed store)
            await third.store.close()
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()


async def test_a_full_lobby_whose_start_was_not_journaled_starts_when_reloaded(
        shard: tuple[ShardCore, FakeClock]) -> None:
    """A shard that stopped between the join that filled a quick-play lobby and its start: the reloaded
    lobby's deadline is the join's time, so it starts at once (it would else wait, or expire)."""
    core, clock = shard
    bucket = await opened(core, "q-lost", "salvo", 2)
    journal = await core.store.journal_read("q-lost")
    entry = {"op": "join", "seat": 1, "nickname": "bob", "secret_hash": "h1", "at": clock()}
    await core.store.journal_append_publish("q-lost", entry, {"version": 2}, expected=len(journal))
    again = fresh(core, clock)
    try:
        assert (await again.view("q-lost", 1))["status"] == "lobby"
        assert await again.fire_due() == 1
        view = await again.view("q-lost", 1)
        assert view["status"] == "running" and not any(p["autopilot"] for p in view["players"])
        assert (await ops(again, "q-lost"))[-1] == ("start", False, "quick")
        assert await again.store.quick_lobbies(bucket) == []
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()


async def test_any_other_lobby_is_untouched(shard: tuple[ShardCore, FakeClock]) -> None:
    """No ``quick``: a full lobby waits for its host's Start, and its deadline expires it."""
    core, clock = shard
    plain = {k: v for k, v in spec("salvo", 2).items() if k != "quick"}
    await core.create_game("q-plain", plain)
    assert (await core.join("q-plain", "bob", "h1"))["status"] == "lobby"
    clock.advance(TTL_S)
    assert await core.fire_due() == 1
    assert (await core.view("q-plain", 0))["status"] == "over"
