"""The journal's record types (services/journal.py): each op's record writes the exact JSON the game actor
journaled before the types existed, reads back every entry it wrote, and an export's record reads as the
same type."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import get_game
from engine.base import canonical_json
from services import journal
from services.game_actor import GameActor
from services.replay import RECORD_FIELDS, record_of
from tests.fakes import FakeClock, MemoryJournal

GID = "j1"

#: an entry of each op as the writers journaled it before services/journal.py (their dict literals), with
#: and without each optional field
WRITTEN: list[dict[str, Any]] = [
    {"op": "create", "kind": "salvo", "config": {"players": 2}, "seed": 2 ** 100 + 7, "nickname": "ann",
     "secret_hash": "h0", "public": True, "deadline_s": 30.0, "code": "ABCDEF", "at": 1, "request": "r0"},
    {"op": "create", "kind": "salvo", "config": {"players": 2}, "seed": 5, "nickname": "ann", "secret_hash": "h0",
     "public": False, "deadline_s": 30, "code": "ABCDEF", "at": 1, "request": "", "profile": "p0", "handle": "Ann",
     "speed": "fast", "quick": {"bucket": "b", "autopilot": True, "wait_s": 20}},
    {"op": "create", "kind": "salvo", "config": {"players": 2}, "seed": 5, "nickname": "ann", "secret_hash": "h0",
     "public": True, "deadline_s": 30.0, "code": "ABCDEF", "at": 1, "request": "r", "profile": "p0", "handle": "Ann",
     "speed": "slow"},
    {"op": "join", "seat": 1, "nickname": "bob", "secret_hash": "h1", "at": 2},
    {"op": "join", "seat": 1, "nickname": "bob", "secret_hash": "h1", "at": 2, "profile": "p1", "handle": "Bob"},
    {"op": "join", "seat": 1, "nickname": "bob", "secret_hash": "h1", "at": 2, "profile": "p1", "handle": "Bob",
     "config": {"players": 2, "decks": ["a", "b"]}},
    {"op": "start", "fill": False, "at": 3},
    {"op": "start", "fill": True, "at": 3, "by": "quick"},
    {"op": "submit", "seat": 0, "round": 1, "orders": {"shots": ["A1"]}, "draft": True, "key": "k", "request": "r",
     "at": 4},
    {"op": "standing", "seat": 1, "standing": {"builds": []}, "key": "", "request": "r", "at": 5},
    {"op": "act", "seat": 0, "action": {"chat": {"text": "hi"}}, "key": "k2", "request": "r", "at": 6},
    {"op": "act", "seat": 1, "action": {"bank": {"give": "wood", "get": "ore"}}, "key": "", "request": "", "at": 6},
    {"op": "close", "round": 1, "orders": {"0": {}, "1": {"shots": ["B2"]}}, "early": True, "at": 7},
    {"op": "action", "seat": 0, "action": {"add": {"n": 1}}, "key": "a", "request": "r", "auto": False, "at": 8},
    {"op": "action", "seat": 2, "action": {"pass": {}}, "key": "", "request": "", "auto": True, "at": 9},
    {"op": "rated", "ratings": [{"seat": 0, "handle": "Ann", "before": 0.0, "after": 1.5}], "at": 10},
    {"op": "expire", "at": 11},
    {"op": "end", "at": 12},
]


@pytest.mark.parametrize("entry", WRITTEN, ids=[f"{i}-{e['op']}" for i, e in enumerate(WRITTEN)])
def test_a_record_writes_back_the_exact_entry_it_was_read_from(entry: dict[str, Any]) -> None:
    record = journal.parse(entry)
    assert type(record) is journal.OPS[entry["op"]] and record.OP == entry["op"]
    assert record.to_entry() == entry
    assert canonical_json(record.to_entry()) == canonical_json(entry)
    assert journal.parse(json.loads(json.dumps(record.to_entry()))) == record


def test_every_op_has_a_record_and_an_export_keeps_its_documented_fields() -> None:
    assert set(journal.OPS) == {e["op"] for e in WRITTEN} == set(RECORD_FIELDS)
    assert journal.PLAYED == {"act", "close", "action"}
    for op, cls in journal.OPS.items():
        assert RECORD_FIELDS[op] == ("op", *cls.EXPORTED)
    with pytest.raises(KeyError):
        journal.parse({"op": "launch_missiles", "at": 1})
    with pytest.raises(KeyError, match="seat"):
        journal.parse({"op": "act", "action": {}, "at": 1})


@pytest.mark.parametrize("entry", [e for e in WRITTEN if e["op"] in journal.PLAYED], ids=lambda e: e["op"])
def test_an_export_record_reads_as_the_same_type_with_the_same_play(entry: dict[str, Any]) -> None:
    record = record_of(entry)
    assert not {"key", "request", "secret_hash"} & set(record)
    read, whole = journal.parse_played(record), journal.parse_played(entry)
    assert type(read) is type(whole)
    assert {f: getattr(read, f) for f in read.EXPORTED} == {f: getattr(whole, f) for f in whole.EXPORTED}


async def test_every_entry_a_played_game_journals_reads_back_as_written() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind="salvo", config={"players": 2, "max_rounds": 3}, nickname="ann", secret_hash="h0",
                       public=True, deadline_s=30, code="ABCDEF", profile={"id": "p0", "handle": "Ann"}, speed="fast")
    await actor.join("bob", "h1", profile={"id": "p1", "handle": "Bob"})
    await actor.start(0, False)
    await actor.act(0, {"chat": {"text": "hello"}}, key="c1")
    engine: Any = get_game("salvo")
    while actor.status != "over":
        orders = engine.autopilot(engine.view(actor.state, 0))
        await actor.submit(0, orders, version=actor.version, key=f"s{actor.version}")
        clock.advance(31)
        await actor.deadline_passed()
    entries = [json.loads(e) for e in store.journals[GID]]
    assert [e["op"] for e in entries[:4]] == ["create", "join", "start", "act"] and entries[-1]["op"] == "close"
    assert {e["op"] for e in entries} == {"create", "join", "start", "act", "submit", "close"}
    shapes = {(e["op"], frozenset(e)) for e in WRITTEN}
    for entry in entries:
        assert (entry["op"], frozenset(entry)) in shapes, entry  # the fields the writers always wrote
        assert journal.parse(entry).to_entry() == entry
    again = await GameActor.load(GID, store, now_ms=clock)
    assert again.version == actor.version and again.state.to_dict() == actor.state.to_dict()
    assert again.outcome == actor.outcome
