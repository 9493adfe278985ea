"""ShardCore (the logic inside a GameShard actor) on a real redis-server with a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from services.cluster import RedisProcess
from services.shard import GameShard, ShardCore
from services.store import Store
from tests.fakes import FakeClock


async def new_game(core: ShardCore, game_id: str) -> None:
    await core.create_game(game_id, {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": "h0", "public": False, "deadline_s": 30, "code": "ABCDEF"})
    await core.join(game_id, "bob", "h1")
    await core.start_game(game_id, 0, False)


async def test_s9_a_passed_deadline_closes_the_round(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "g1")
    assert await core.fire_due() == 0
    clock.advance(29)
    assert await core.fire_due() == 0
    clock.advance(1)
    assert await core.fire_due() == 1
    view = await core.view("g1", 1)
    assert view["round"] == 1 and view["view"]["fleet"], "the autopilot placed the fleet"
    await core.flush()
    # the index holds the game's next wake-up: round 2's deadline warning, 15 s before its 30 s deadline
    assert await core.store.deadlines("shard-t") == [("g1", view["deadline_unix_ms"] - 15_000)]


async def test_idle_games_leave_memory_and_come_back_from_the_journal(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "g2")
    before = await core.view("g2", 0)
    clock.advance(601)
    async with core.using("g2"):  # a call in progress: the game stays
        assert core.evict_idle(600_000) == 0
    clock.advance(601)
    assert core.evict_idle(600_000) == 1 and "g2" not in core.games
    after = await core.view("g2", 0)
    assert after == before


async def test_restarted_shard_rearms_deadlines_from_redis(shard: tuple[ShardCore, FakeClock],
                                                           redis_server: RedisProcess) -> None:
    core, clock = shard
    await new_game(core, "g3")
    version = (await core.view("g3", 0))["version"]
    await core.submit("g3", 0, {"random_placement": True}, version, "", False)
    await core.flush()
    again = ShardCore("shard-t", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    await again.start()  # re-arms from the deadline index, loads nothing yet
    assert again.games == {}
    clock.advance(31)
    assert await again.fire_due() == 1  # loads the game from its journal and closes the round
    view = await again.view("g3", 0)
    assert view["round"] == 1 and view["players"][0]["submitted"] is False
    await again.stop()


async def test_two_writers_of_one_game_never_both_append(shard: tuple[ShardCore, FakeClock]) -> None:
    """A shard being killed may still finish a call while its restarted self serves the game: the
    journal takes an entry only from a writer whose state ends where the journal does; the other one
    reloads the game and tries again — no entry twice, every entry's position its version."""
    core, clock = shard
    await new_game(core, "g-fence")
    other = ShardCore(core.name, Store(core.store.url, core.store.prefix), now_ms=clock)
    try:
        stale = await other.game("g-fence")  # loaded now; the first shard then writes on
        first = await core.submit("g-fence", 0, {"random_placement": True}, 3, "k0", False)
        assert stale.version == first["version"] - 1
        wrapper = GameShard.__new__(GameShard)
        wrapper.core = other
        got = await wrapper.call("submit", "g-fence", 1, {"random_placement": True}, 3, "k1", False)
        assert "ok" in got, got
        journal = await core.store.journal_read("g-fence")
        assert [(e["op"], e.get("seat"), e.get("key")) for e in journal[3:5]] == [("submit", 0, "k0"),
                                                                              ("submit", 1, "k1")]
        assert got["ok"]["version"] == 5, "the reloaded game wrote at the journal's end"
        again = await wrapper.call("submit", "g-fence", 0, {"random_placement": True}, 3, "k0", False)
        assert again == {"ok": {**first, "replayed": True}}, "the other writer's entry is known after the reload"
    finally:
        await other.flush()  # (its pending writes: none may run on a closed store)
        await other.store.close()


async def test_s9_deadlines_due_together_close_concurrently_and_their_lateness_is_measured(
        shard: tuple[ShardCore, FakeClock], monkeypatch: pytest.MonkeyPatch) -> None:
    """Many rounds due at one moment close side by side (up to FIRE_AT_ONCE), not one journal write
    after the other; each closing records how late it was in archipelago_deadline_lateness_seconds."""
    from services import metrics

    core, clock = shard
    for i in range(6):
        await new_game(core, f"gd{i}")
    in_flight = peak = 0
    original = core._deadline_of

    async def watched(game_id: str) -> int | None:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(game_id)
        finally:
            in_flight -= 1

    monkeypatch.setattr(core, "_deadline_of", watched)
    before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_count")
    le1_before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_bucket", le="1.0")
    late_before = metrics.value(metrics.snapshot(), "archipelago_deadline_lateness_seconds_bucket", le="2.5")
    clock.advance(32)  # 2 s after the deadline
    assert await core.fire_due() == 6
    assert peak == 6, "the six rounds closed side by side"
    after = metrics.snapshot()
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_count") == before + 6
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_bucket", le="1.0") == le1_before, \
        "2 s late: not within 1 s"
    assert metrics.value(after, "archipelago_deadline_lateness_seconds_bucket", le="2.5") == late_before + 6
    for i in range(6):
        assert (await core.view(f"gd{i}", 0))["round"] == 1


async def test_games_are_counted_by_kind_and_phase_and_actions_by_kind(shard: tuple[ShardCore, FakeClock]) -> None:
    """archipelago_games{kind, phase}: the games this shard holds in memory, counted when scraped
    (every kind and phase shown, 0 included); archipelago_actions_total{kind}: each journaled action."""
    from services import metrics

    core, _clock = shard
    wrapper = GameShard.__new__(GameShard)
    wrapper.core = core

    async def games(kind: str, phase: str) -> float | None:
        snap = await wrapper.metrics()
        found = [v for fam in snap for name, labels, v in fam[3]
                 if name == "archipelago_games" and labels == {"kind": kind, "phase": phase}]
        return found[0] if found else None

    spec = {"config": {"players": 2}, "nickname": "ann", "secret_hash": "h0", "public": False, "deadline_s": 30}
    await core.create_game("gk1", {**spec, "kind": "salvo", "code": "KKKKK1"})
    await core.create_game("gk2", {**spec, "kind": "archipelago", "code": "KKKKK2"})
    assert [await games("salvo", p) for p in metrics.PHASES] == [1, 0, 0]
    assert [await games("archipelago", p) for p in metrics.PHASES] == [1, 0, 0]
    await core.join("gk1", "bob", "h1")
    await core.start_game("gk1", 0, False)
    assert [await games("salvo", p) for p in metrics.PHASES] == [0, 1, 0], "started: from lobby to running"

    chats = metrics.value(metrics.snapshot(), "archipelago_actions_total", kind="chat")
    await core.act("gk1", 1, {"chat": {"text": "hello"}}, "")
    await core.act("gk1", 1, {"chat": {"text": "hello"}}, "")  # (no key: a second message)
    assert metrics.value(metrics.snapshot(), "archipelago_actions_total", kind="chat") == chats + 2

    core.evict_idle(0)
    assert [await games("salvo", p) for p in metrics.PHASES] == [0, 0, 0], "evicted: no longer in memory"
    assert await games("archipelago", "lobby") == 0


def test_an_action_counts_under_its_kind_else_other() -> None:
    from services import metrics

    def count(kind: str) -> float:
        return metrics.value(metrics.snapshot(), "archipelago_actions_total", kind=kind)

    before = {k: count(k) for k in (*metrics.ACTION_KINDS, "other")}
    metrics.count_action({"bank": {"give": "wood", "get": "iron"}})
    metrics.count_action({"no-such-kind": {}})
    metrics.count_action("not an action")
    after = {k: count(k) for k in before}
    assert {k: after[k] - before[k] for k in before if after[k] != before[k]} == {"bank": 1, "other": 2}


def test_the_action_kinds_are_the_act_rpc_s() -> None:
    from archipelago.v1 import game_pb2
    from services import metrics

    oneof = game_pb2.ActRequest.DESCRIPTOR.oneofs_by_name["action"]
    assert set(metrics.ACTION_KINDS) == {f.name for f in oneof.fields}


async def test_a_draining_shard_refuses_calls_drops_idle_games_and_fires_no_deadline(
        shard: tuple[ShardCore, FakeClock]) -> None:
    from services.shard import Moved

    core, clock = shard
    await new_game(core, "gdr")
    async with core.using("gdr"):  # a call in flight: the game stays until it ends
        held = await core.set_draining(True)
        assert held == {"draining": True, "held": 1}
        with pytest.raises(Moved):
            async with core.using("gdr"):
                pass
    assert await core.release() == 0 and core.games == {}
    with pytest.raises(Moved):
        await core.create_game("gnew", {})
    clock.advance(31)
    assert await core.fire_due() == 0, "its deadlines are the new owner's now"
    await core.store.set_shard_state("shard-t", "draining")
    again = ShardCore("shard-t", core.store, now_ms=clock)
    await again.start()
    assert again.draining, "a restarted draining shard goes on draining"
    assert again._timer is not None
    again._timer.cancel()  # (this test fires deadlines itself)
    await again.set_draining(False)
    assert (await again.adopt("gdr"))["version"] > 0
    assert await again.fire_due() == 1, "active again: the adopted game's passed deadline fires"


async def test_a17_a_replayed_submission_closes_the_round_its_first_try_left_open(
        shard: tuple[ShardCore, FakeClock], monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard that died after journaling a round's last submission but before closing it early: the
    client's retry (same key) is answered from the journal — and closes the round; a game loaded from
    such a journal closes it too (found by the chaos test of two Ray nodes)."""
    from services.game_actor import GameActor

    core, _ = shard
    await new_game(core, "gre")
    await core.store.touch_streams([("gre", 0, "s0"), ("gre", 1, "s1")], 60)  # both players connected
    v = (await core.view("gre", 0))["version"]
    await core.submit("gre", 0, {"random_placement": True}, v, "k0", False)
    real = GameActor._maybe_close_early

    async def dies_before_closing(self: GameActor) -> None:
        return None

    monkeypatch.setattr(GameActor, "_maybe_close_early", dies_before_closing)
    first = await core.submit("gre", 1, {"random_placement": True}, v, "k1", False)
    assert (await core.view("gre", 1))["round"] == 0, "journaled, not closed (the shard 'died')"
    monkeypatch.setattr(GameActor, "_maybe_close_early", real)
    again = await core.submit("gre", 1, {"random_placement": True}, v, "k1", False)
    assert again["replayed"] and again["version"] == first["version"]
    assert (await core.view("gre", 1))["round"] == 1, "the retry closed the round"


async def test_a17_a_game_loaded_with_every_connected_player_done_closes_its_round(
        shard: tuple[ShardCore, FakeClock], monkeypatch: pytest.MonkeyPatch) -> None:
    from services.game_actor import GameActor

    core, clock = shard
    await new_game(core, "grl")
    await core.store.touch_streams([("grl", 0, "s0"), ("grl", 1, "s1")], 60)
    v = (await core.view("grl", 0))["version"]

    async def dies_before_closing(self: GameActor) -> None:
        return None

    with monkeypatch.context() as m:
        m.setattr(GameActor, "_maybe_close_early", dies_before_closing)
        await core.submit("grl", 0, {"random_placement": True}, v, "k0", False)
        await core.submit("grl", 1, {"random_placement": True}, v, "k1", False)
    again = ShardCore("shard-t", core.store, now_ms=clock)  # the restarted shard
    assert (await again.view("grl", 0))["round"] in (0, 1)
    await again.flush()  # (the check after the load)
    assert (await again.view("grl", 0))["round"] == 1, "closed after the load, not at the deadline"


def test_the_shard_implements_the_typed_interface_the_gateway_calls() -> None:
    """services.shard_api.ShardApi is what both sides import: every method of it is ShardCore's, with
    the same parameters; the gateway's typed handle refuses a name the interface does not have."""
    import inspect

    from services.shard_api import METHODS, ShardApi, typed

    assert {"create_game", "join", "view", "submit", "act", "action", "updates", "set_standing"} <= METHODS
    for name in METHODS:
        ours, theirs = inspect.signature(getattr(ShardCore, name)), inspect.signature(getattr(ShardApi, name))
        assert list(ours.parameters) == list(theirs.parameters), name
    handle = typed(lambda method, args: asyncio.sleep(0, (method, args)))
    with pytest.raises(AttributeError):
        handle.no_such_call  # type: ignore[attr-defined]  # noqa: B018


async def test_a_shard_refuses_a_call_the_interface_does_not_have(shard: tuple[ShardCore, FakeClock]) -> None:
    core, _ = shard
    wrapper = GameShard.__new__(GameShard)
    wrapper.core = core
    got = await wrapper.call("evict_idle", 0)  # a ShardCore method, but not one a gateway may call
    assert got["error"]["code"] == "lookup/not_found" and got["error"]["field"] == "method"
