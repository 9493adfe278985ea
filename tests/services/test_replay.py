"""Replays and exports of finished games (services/replay.py, ShardCore.replay_frame / export_game) on
a real redis-server with a fake clock: a game of each kind played to its end by the autopilot through
the shard, exported, replayed by the engine alone (the recipe of docs/replay-format.md) to the
shard's own state hash; each frame's view against the view the shard gave at that time."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import get_game
from engine.base import state_hash
from engine.errors import InvalidOrder, NotFound, NotOver, NotStarted
from gateway.convert import view_response
from services import actor_core, replay
from services.replay import FORMAT, RECORD_FIELDS, Replay, ReplayCache, ReplayError, parse_export, record_of
from services.shard import ShardCore
from tests.fakes import FakeClock

DEADLINE_S = 30
#: the journal fields no export may hold, anywhere (secrets' hashes, request fingerprints, keys, profile ids)
PRIVATE_FIELDS = {"secret_hash", "request", "key", "profile"}
CONFIGS: dict[str, dict[str, Any]] = {
    "salvo": {"players": 2, "max_rounds": 5},
    "archipelago": {"players": 3, "max_rounds": 3},
    "arcmage": {"players": 2, "max_rounds": 2},
}

Seen = dict[int, dict[int, dict[str, Any]]]  # seat -> version -> the view the shard gave


async def new_game(core: ShardCore, game_id: str, kind: str, **spec: Any) -> None:
    """A game of ``kind``: seat 0 a player (with a profile), the others autopilot seats, started."""
    await core.create_game(game_id, {"kind": kind, "config": CONFIGS[kind], "nickname": "ann", "secret_hash": "h0",
                                     "public": True, "deadline_s": DEADLINE_S, "code": "REPLAY", "request": "r0",
                                     "profile": {"id": "profile-id-0", "handle": "Ann"}, **spec})
    await core.start_game(game_id, 0, True)


async def play_to_the_end(core: ShardCore, clock: FakeClock, game_id: str) -> Seen:
    """Fire the game's deadlines until it is over (the autopilot plays seat 0 at each); every seat's view
    after each, by version."""
    seats = core.games[game_id].seats_total
    seen: Seen = {s: {} for s in range(seats)}
    for _ in range(2000):
        for s in range(seats):
            v = await core.view(game_id, s)
            seen[s][v["version"]] = v
        if v["status"] == "over":
            return seen
        deadline = core.games[game_id].deadline_ms
        assert deadline is not None
        clock.ms = max(clock.ms, deadline)
        await core.fire_due()
    raise AssertionError("the game did not end")


def keys_in(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj).union(*(keys_in(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(keys_in(v) for v in obj))
    return set()


def bare_replay(records: list[dict[str, Any]]) -> Any:
    """docs/replay-format.md's recipe, with the engine alone (not services.replay)."""
    create = records[0]
    engine: Any = get_game(create["kind"])
    config, state = create["config"], None
    for r in records:
        if r["op"] == "join" and "config" in r:
            config = r["config"]
        elif r["op"] == "start":
            state = engine.new_game(config, create["seed"])
        elif r["op"] == "act":
            state, _ = engine.act(state, r["seat"], r["action"])
        elif r["op"] == "close":
            state, _ = engine.resolve(state, {int(seat): orders for seat, orders in r["orders"].items()})
        elif r["op"] == "action":
            state, _ = engine.apply_action(state, r["seat"], r["action"])
    return state


def without(d: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


@pytest.mark.parametrize("kind", ["salvo", "archipelago", "arcmage"])
async def test_a_finished_game_exports_and_replays_to_the_shards_state(shard: tuple[ShardCore, FakeClock],
                                                                        kind: str) -> None:
    core, clock = shard
    await new_game(core, f"r-{kind}", kind)
    seen = await play_to_the_end(core, clock, f"r-{kind}")
    live_hash = (await core.state_hash(f"r-{kind}"))["hash"]

    exported = await core.export_game(f"r-{kind}")
    assert exported["format"] == FORMAT == "archipelago-journal/1"
    records = [json.loads(r) for r in exported["records"]]
    journal = await core.store.journal_read(f"r-{kind}")
    assert [r["op"] for r in records] == [e["op"] for e in journal]  # every entry, in order
    assert not keys_in(records) & PRIVATE_FIELDS, "no secret's hash, fingerprint, key or profile id leaves"
    assert all(set(r) <= set(RECORD_FIELDS[r["op"]]) for r in records)
    assert records[0]["seed"] == journal[0]["seed"] and records[0]["config"] == journal[0]["config"]
    assert records[0]["handle"] == "Ann"
    # the engine alone reaches the shard's state; so does services.replay from the records
    assert state_hash(bare_replay(records)) == live_hash == exported["state_hash"]
    assert Replay(records).state_hash == live_hash

    # frames: 0 = the start, then one per round closed (Salvo, Archipelago) or per action (Arcmage)
    steps = sum(1 for r in records if r["op"] == ("action" if kind == "arcmage" else "close"))
    first = await core.replay_frame(f"r-{kind}", 0, 0)
    frames = first["frames"]
    assert frames == steps > 0
    final_live = seen[0][max(seen[0])]
    if kind != "arcmage":
        assert frames == final_live["round"] + 1  # rounds 0 .. the last closed one

    matched = 0
    for s, by_version in seen.items():
        for n in range(frames + 1):
            got = await core.replay_frame(f"r-{kind}", n, s)
            assert got["frame"] == n and got["frames"] == frames and got["seat"] == s and got["game"] == kind
            view = got["view"]
            view_response(view)  # the player API's shape: it converts to GetViewResponse
            assert got["round"] == view["round"]
            assert "pending" not in view and "standing" not in view and view["autopilot_log"] == []
            live = by_version.get(view["version"])
            if live is None:  # (a version this test did not look at: several actions in one deadline)
                continue
            matched += 1
            for key in ("round", "round_version", "status", "you", "seats", "game"):
                assert view[key] == live[key], (n, s, key)
            assert without(view["step"], "deadline_unix_ms") == without(live["step"], "deadline_unix_ms")
            if kind == "arcmage":  # the frame shows its action's events; the live view had none
                assert without(view["view"], "events") == without(live["view"], "events")
            else:
                assert view["view"] == live["view"], (n, s)
    if kind == "arcmage":
        assert matched >= 2 * 2
        await check_action_events(core, f"r-{kind}", frames)
    else:
        assert matched == (frames + 1) * len(seen), "a round game's every frame was seen live"
    last = await core.replay_frame(f"r-{kind}", frames, 0)
    assert last["view"]["status"] == "over" and last["view"]["view"]["outcome"] == final_live["view"]["outcome"]
    assert (await core.replay_frame(f"r-{kind}", frames - 1, 0))["view"]["status"] == "running"


async def check_action_events(core: ShardCore, game_id: str, frames: int) -> None:
    """An Arcmage frame's events are those its action sent each seat as updates."""
    for s in (0, 1):
        updates = (await core.updates(game_id, s, 0))["updates"]
        for n in range(1, frames + 1):
            view = (await core.replay_frame(game_id, n, s))["view"]
            events = [(e["kind"], e["data"]) for e in view["view"]["events"] if e["kind"] not in ("game_over", "chat")]
            sent = [(u["event_kind"], u.get("data", {})) for u in updates
                    if u["version"] == view["version"] and u["kind"] == "event"]
            assert events == sent, (s, n)


async def test_the_whole_game_frame_shows_what_no_seat_saw_alone(shard: tuple[ShardCore, FakeClock]) -> None:
    """Seat -1: everything at that moment, even mid-game — every seat's own things at once."""
    core, clock = shard
    for kind in ("salvo", "archipelago", "arcmage"):
        await new_game(core, f"w-{kind}", kind)
        seen = await play_to_the_end(core, clock, f"w-{kind}")
        n = 1
        whole = (await core.replay_frame(f"w-{kind}", n, -1))["view"]
        assert whole["you"] == -1 and whole["status"] == "running"
        view_response(whole)
        mine = [(await core.replay_frame(f"w-{kind}", n, s))["view"]["view"] for s in seen]
        shown = whole["view"]
        if kind == "salvo":
            final = seen[0][max(seen[0])]["view"]  # the end reveals seat 1's fleet to seat 0
            assert shown["enemy_fleet"] == mine[1]["fleet"]
            assert {sq for ship in shown["enemy_fleet"] for sq in ship["squares"]} == \
                {sq for ship in final["enemy_fleet"] for sq in ship["squares"]}
            assert "enemy_fleet" not in (await core.replay_frame(f"w-{kind}", n, 0))["view"]["view"]
        elif kind == "archipelago":
            own = {u["id"] for v in mine for u in v["units"]}
            assert own and {u["id"] for u in shown["units"]} == own
        else:
            every = set(shown["cards"])
            assert every >= set().union(*(set(v["cards"]) for v in mine))
            over = (await core.view(f"w-{kind}", -1))["view"]  # a spectator's, once over: every card
            assert every == set(over["cards"])
            assert every > set(mine[0]["cards"]) | set(mine[1]["cards"])  # the decks too
        # the last frame's whole game is what a spectator sees once the game is over (the engine's definition)
        end = (await core.replay_frame(f"w-{kind}", (await core.replay_frame(f"w-{kind}", 0, 0))["frames"], -1))
        spectator = (await core.view(f"w-{kind}", -1))["view"]
        assert without(end["view"]["view"], "events") == without(spectator, "events")
        # the same frame number of any seat and the whole game is the same moment
        assert {(await core.replay_frame(f"w-{kind}", n, s))["view"]["version"] for s in [-1, *seen]} == \
            {whole["version"]}


async def test_bad_frames_and_seats_are_refused_naming_the_field(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "b1", "salvo")
    await play_to_the_end(core, clock, "b1")
    frames = (await core.replay_frame("b1", 0, -1))["frames"]
    for frame, seat, field in ((frames + 1, 0, "frame"), (-1, 0, "frame"), (0, 2, "seat"), (0, 7, "seat")):
        with pytest.raises(InvalidOrder) as err:
            await core.replay_frame("b1", frame, seat)
        assert err.value.field == field
    assert (await core.replay_frame("b1", frames, -5))["seat"] == -1  # any seat below 0: the whole game
    with pytest.raises(NotFound):
        await core.export_game("no-such-game")


async def test_a_running_game_is_not_over_in_memory_or_from_its_journal(shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "run1", "salvo")
    with pytest.raises(NotOver) as err:
        await core.export_game("run1")
    assert err.value.code == "game/not_over" and err.value.field == "game_id"
    fresh = ShardCore("shard-u", core.store, now_ms=clock)  # not loaded there: its journal is replayed
    with pytest.raises(NotOver):
        await fresh.replay_frame("run1", 0, 0)
    assert "run1" not in fresh.replays and "run1" not in fresh.games


async def test_an_ended_game_ends_on_a_frame_of_its_own_and_an_expired_lobby_has_none(
        shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    await new_game(core, "e1", "archipelago")
    clock.ms = core.games["e1"].deadline_ms or 0
    await core.fire_due()  # round 0 closes
    await core.act("e1", 0, {"chat": {"text": "gg"}}, "")
    await core.end_game("e1", "operator")
    exported = await core.export_game("e1")
    assert exported["state_hash"] == (await core.state_hash("e1"))["hash"]
    assert [json.loads(r)["op"] for r in exported["records"]][-3:] == ["close", "act", "end"]
    last = await core.replay_frame("e1", 2, 0)
    assert last["frames"] == 2 and last["view"]["status"] == "over"
    assert last["view"]["view"]["outcome"]["reason"] == "ended" and last["round"] == 1
    assert [m["text"] for m in last["view"]["view"]["chat"]] == ["gg"]
    assert not (await core.replay_frame("e1", 1, 0))["view"]["view"]["chat"]

    await core.create_game("x1", {"kind": "salvo", "config": {"players": 2}, "nickname": "ann", "secret_hash": "h0",
                                  "public": False, "deadline_s": DEADLINE_S, "code": "EXPIRE"})
    clock.ms = core.games["x1"].deadline_ms or 0
    await core.fire_due()  # the lobby expires
    assert core.games["x1"].status == "over"
    exported = await core.export_game("x1")
    assert [json.loads(r)["op"] for r in exported["records"]] == ["create", "expire"]
    assert exported["state_hash"] == ""
    with pytest.raises(NotStarted):
        await core.replay_frame("x1", 0, -1)


async def test_the_cache_keeps_the_last_games_asked_and_replays_each_once(
        shard: tuple[ShardCore, FakeClock]) -> None:
    core, clock = shard
    for g in ("c1", "c2", "c3"):
        await new_game(core, g, "salvo")
        await play_to_the_end(core, clock, g)
    reads: list[str] = []

    async def read(game_id: str) -> list[dict[str, Any]]:
        reads.append(game_id)
        return await core.store.journal_read(game_id)

    cache = ReplayCache(read, kept=2)
    got = await asyncio.gather(*(cache.get("c1") for _ in range(3)))  # asked at once: replayed once
    assert got[0] is got[1] is got[2] and reads == ["c1"]
    await cache.get("c2")
    await cache.get("c1")  # c1 is now the last asked
    await cache.get("c3")  # c2 leaves
    assert reads == ["c1", "c2", "c3"] and len(cache) == 2 and "c1" in cache and "c2" not in cache
    await cache.get("c1")
    await cache.get("c2")
    assert reads == ["c1", "c2", "c3", "c2"]
    assert replay.REPLAYS_KEPT == core.replays.kept


async def test_a_long_game_keeps_checkpoints_only_and_every_frame_is_the_same() -> None:
    """A replay keeping a state every 3 frames gives every frame as one keeping them all, in any order."""
    engine: Any = get_game("salvo")
    config = engine.normalize_config({"players": 2, "max_rounds": 12})
    state = engine.new_game(config, 7)
    records: list[dict[str, Any]] = [
        {"op": "create", "kind": "salvo", "config": config, "seed": 7, "nickname": "ann", "public": True,
         "deadline_s": 30, "at": 1, "secret_hash": "h", "request": "r", "profile": "p"},
        {"op": "start", "fill": True, "at": 2}]
    while engine.outcome(state) is None:
        orders = {p: engine.autopilot(engine.view(state, p)) for p in (0, 1)}
        records.append({"op": "close", "round": state.round, "orders": {str(p): o for p, o in orders.items()},
                        "early": False, "at": 3})
        state, _ = engine.resolve(state, orders)
    every, sparse = Replay(records, "g"), Replay(records, "g", checkpoints=4)
    assert len(sparse._kept) < every.frames + 1 == len(every._kept)
    assert sparse.state_hash == every.state_hash == state_hash(state)
    order = [*range(every.frames, -1, -1), *range(every.frames + 1), 5, 2, 9, 3]
    for n in order:
        for seat in (-1, 0, 1):
            assert sparse.frame(n, seat) == every.frame(n, seat), (n, seat)


def test_records_keep_only_their_documented_fields() -> None:
    entry = {"op": "join", "seat": 1, "nickname": "bob", "secret_hash": "abc", "profile": "p1", "handle": "Bob",
             "at": 5, "later": "a field added later"}
    assert record_of(entry) == {"op": "join", "seat": 1, "nickname": "bob", "handle": "Bob", "at": 5}
    for op in ("submit", "act", "action", "standing"):
        assert "key" not in RECORD_FIELDS[op] and "request" not in RECORD_FIELDS[op]
    with pytest.raises(ReplayError):
        record_of({"op": "launch_missiles"})
    # the status names are the game actor's
    assert (replay.LOBBY, replay.RUNNING, replay.OVER, replay.ENDED) == (
        actor_core.LOBBY, actor_core.RUNNING, actor_core.OVER, actor_core.ENDED)


@pytest.fixture
def finished_records() -> Iterator[list[dict[str, Any]]]:
    engine: Any = get_game("salvo")
    config = engine.normalize_config({"players": 2, "max_rounds": 2})
    state, records = engine.new_game(config, 11), [
        {"op": "create", "kind": "salvo", "config": config, "seed": 11, "nickname": "ann", "public": True,
         "deadline_s": 30, "at": 1}, {"op": "start", "fill": True, "at": 2}]
    while engine.outcome(state) is None:
        orders = {p: engine.autopilot(engine.view(state, p)) for p in (0, 1)}
        records.append({"op": "close", "round": state.round, "orders": {str(p): o for p, o in orders.items()},
                        "early": False, "at": 3})
        state, _ = engine.resolve(state, orders)
    yield records


def test_an_export_file_is_the_answer_or_json_lines(finished_records: list[dict[str, Any]]) -> None:
    exported = Replay(finished_records).export()
    as_answer = json.dumps(exported)
    lines = "\n".join(exported["records"]) + "\n"
    header = json.dumps({"format": FORMAT, "state_hash": exported["state_hash"]}) + "\n"
    assert parse_export(as_answer) == (finished_records, exported["state_hash"])
    assert parse_export(lines) == (finished_records, "")
    assert parse_export(header + lines) == (finished_records, exported["state_hash"])
    web = json.dumps({**exported, "stateHash": exported["state_hash"], "state_hash": None,
                      "records": [json.loads(r) for r in exported["records"]]})
    assert parse_export(web) == (finished_records, exported["state_hash"])
    for bad, said in (("", "empty"), ("{\"op\": \"create\"}\nnot json\n", "line 2"),
                      (json.dumps({**exported, "format": "other/2"}), "other/2"), ("[1, 2]", "line 1")):
        with pytest.raises(ReplayError, match=said):
            parse_export(bad)


def test_records_that_do_not_replay_name_the_record(finished_records: list[dict[str, Any]]) -> None:
    bad = [dict(r) for r in finished_records]
    bad[2] = {**bad[2], "orders": {"0": {"placement": "everywhere"}}}
    with pytest.raises(ReplayError, match=r"^record 3 \(close\): the engine refused it"):
        Replay(bad)
    with pytest.raises(ReplayError, match=r"^record 2 \(close\): only while the game is running"):
        Replay([finished_records[0], finished_records[2]])
    with pytest.raises(ReplayError, match=r"^record 1: a game's records begin with its create"):
        Replay(finished_records[1:])
    with pytest.raises(ReplayError, match=r"after the game's end"):
        Replay([*finished_records, finished_records[-1]])


DOC = Path(__file__).resolve().parents[2] / "docs" / "replay-format.md"


def test_the_format_doc_names_every_record_kind_and_field_and_its_example_replays() -> None:
    text = DOC.read_text(encoding="utf-8")
    sections = re.split(r"^### ", text, flags=re.M)
    for op, fields in RECORD_FIELDS.items():
        section = next((s for s in sections if s.startswith(f"`{op}`")), None)
        assert section is not None, f"no section for {op}"
        for f in fields:
            assert f in ("op", "at") or f"| `{f}` |" in section, (op, f)
    assert "Every record has `at`" in text and FORMAT in text
    example = text.split("## Example", 1)[1]
    block = example.split("```", 2)[1]
    records, _ = parse_export(block)
    said = re.search(r"state hash: ([0-9a-f]{64})", example)
    assert said and Replay(records).state_hash == said[1]
    assert Replay(records).frames == 2 and Replay(records).outcome == {
        "winners": [], "draw": True, "reason": "max_rounds", "scores": [0, 0]}


def test_a_rated_games_rating_changes_come_after_its_end(finished_records: list[dict[str, Any]]) -> None:
    rated = {"op": "rated", "ratings": [{"seat": 0, "handle": "Ann", "before": 0.0, "after": 1.5, "mu": 27.1,
                                          "sigma": 7.9}], "at": 9}
    plain, with_ratings = Replay(finished_records), Replay([*finished_records, rated])
    assert with_ratings.state_hash == plain.state_hash and with_ratings.frames == plain.frames
    assert json.loads(with_ratings.export()["records"][-1]) == rated
    with pytest.raises(ReplayError, match=r"\(rated\): only while the game is over \(it is running\)"):
        Replay([*finished_records[:-1], rated, finished_records[-1]])
