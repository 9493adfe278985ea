"""Spectator views (``spectator_view``, :class:`engine.base.Core`) of Salvo, Archipelago and Arcmage.

The leak property: while a game runs, every fact of the spectator view is, identically, in EVERY
player's view at that moment (:func:`missing_facts` says what "is in" means; each game's
:data:`FRAMES` entry puts a view into the frame where the facts are compared: Archipelago's rows
as one fact per known tile, a Salvo view of seat 1 mirrored to seat 0's side as the spectator's
is).  Random games of many seeds (a 4-player Archipelago game among them) are checked after every
round, action and immediate action (chat to all and to one seat, Archipelago offers).  Also: the
whole game once over (every unit, ship, card of the state), determinism, the conversion into the
game's view message as GetViewResponse carries it, and the cost of an 8-player Archipelago
spectator view against a player view's.
"""

from __future__ import annotations

import functools
import json
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from engine import get_game
from engine.base import (
    OVER,
    SIMULTANEOUS,
    SPECTATOR,
    Core,
    Event,
    canonical_json,
    public_events,
    rounds_of,
    turns_of,
)
from engine.errors import GameError
from gateway.convert import to_json, view_response

Json = Any
#: the fields naming the viewer (a seat, or -1): not facts of the game
SEAT_KEYS = ("you", "player")


# -- what "appears in" means ------------------------------------------------------------------------

def missing_facts(spec: Json, seen: Json, path: str = "", ignore: tuple[str, ...] = SEAT_KEYS) -> list[str]:
    """The facts of ``spec`` that ``seen`` does not hold, as paths; ``[]``: every fact of ``spec``
    appears in ``seen``.

    A fact is a scalar leaf (a string, number, bool) at its path.  Empty containers and ``None``
    hold none.  ``spec`` appears in ``seen`` when:

    - a dict: for each key, its value appears in ``seen``'s value for that key (``seen`` is a dict;
      a key ``seen`` lacks holds a fact only if its value is not empty); root keys in ``ignore``
      (the viewer's seat) are skipped;
    - a list: each item appears in SOME item of ``seen``'s list at that path — lists compared as
      sets of their items, ``seen``'s may hold more (a player's own items), and an item's facts must
      all come from one item of ``seen`` (facts of two items are not mixed);
    - a scalar: ``seen`` is equal and of the same type (``True`` is not ``1``)."""
    if _empty(spec):
        return []
    if isinstance(spec, dict):
        if not isinstance(seen, dict):
            return [path or "."]
        out: list[str] = []
        for k, v in spec.items():
            if not path and k in ignore:
                continue
            if k not in seen:
                if not _empty(v):
                    out.append(f"{path}.{k}" if path else k)
                continue
            out.extend(missing_facts(v, seen[k], f"{path}.{k}" if path else k, ()))
        return out
    if isinstance(spec, list):
        if not isinstance(seen, list):
            return [path]
        out = []
        for i, item in enumerate(spec):
            if not any(not missing_facts(item, other, path, ()) for other in seen):
                out.append(f"{path}[{i}]")
        return out
    if type(spec) is not type(seen) or spec != seen:
        return [path]
    return []


def _empty(v: Json) -> bool:
    return v is None or (isinstance(v, (list, dict)) and not v)


def test_missing_facts_states_what_appears_in_means() -> None:
    assert missing_facts({"a": 1}, {"a": 1, "b": 2}) == []
    assert missing_facts({"a": 1}, {"a": 2}) == ["a"]
    assert missing_facts({"a": True}, {"a": 1}) == ["a"]  # the same type
    assert missing_facts({"a": 1}, {"b": 1}) == ["a"]
    assert missing_facts({"a": [], "b": {}, "c": None}, {}) == []  # no facts
    assert missing_facts({"a": {"b": "x"}}, {"a": {"b": "x", "c": 1}}) == []
    assert missing_facts({"a": {"b": "x"}}, {"a": "x"}) == ["a"]
    assert missing_facts({"x": [1, 3]}, {"x": [3, 2, 1]}) == []  # sets of items, extras allowed
    assert missing_facts({"x": [4]}, {"x": [3, 2, 1]}) == ["x[0]"]
    items = {"x": [{"id": 1, "t": 3}, {"id": 2, "t": 2}]}
    assert missing_facts({"x": [{"id": 2, "t": 2}]}, items) == []
    assert missing_facts({"x": [{"id": 2}]}, items) == []  # fewer facts of one item
    assert missing_facts({"x": [{"id": 1, "t": 2}]}, items) == ["x[0]"]  # facts of two items mixed
    assert missing_facts({"you": -1, "n": 2}, {"you": 0, "n": 2}) == []  # the viewer is no fact
    assert missing_facts({"a": {"you": -1}}, {"a": {"you": 0}}) == ["a.you"]  # ... at the root only
    assert missing_facts({"a": [[1, 2]]}, {"a": [[2, 1, 0]]}) == []


# -- frames: where the facts of a view are compared ----------------------------------------------------

def archipelago_frame(v: Json) -> Json:
    """The rows as one fact per known tile (``{"x", "y", "t"}``, "?" tiles hold none)."""
    out = {k: x for k, x in v.items() if k != "rows"}
    out["terrain"] = [{"x": x, "y": y, "t": c} for y, row in enumerate(v["rows"]) for x, c in enumerate(row)
                      if c != "?"]
    return out


def salvo_frame(v: Json) -> Json:
    """A view as seen from seat 0's side of the table, as the spectator's is: seat 1's view
    mirrored (its incoming shots are seat 0's shots, its shots seat 1's; the ships it sank are
    seat 0's sunk ships, its own sunk ships the ones seat 0 sank).  Seat 0's and the spectator's
    views as they are."""
    if v["you"] != 1:
        return v
    size = {s["name"]: s["size"] for s in v["fleet_spec"]}
    keep = ("phase", "round", "version", "mode", "active_player", "fleet_spec", "outcome")
    out = {k: v[k] for k in keep if k in v}
    out.update({
        "shots": v["incoming"], "incoming": v["shots"],
        "enemy_sunk": [s["name"] for s in v["fleet"] if s["sunk"]],
        "fleet": [{"name": n, "size": size[n], "sunk": True} for n in v["enemy_sunk"]],
    })
    if "enemy_fleet" in v:
        out["enemy_fleet"], out["fleet"] = v["fleet"], v["enemy_fleet"]
    return out


def same(v: Json) -> Json:
    return v


FRAMES: dict[str, Callable[[Json], Json]] = {"archipelago": archipelago_frame, "salvo": salvo_frame,
                                             "arcmage": same}


def leaks(game: Core, state: Any, events: list[Event], spectator: Json | None = None) -> dict[int, list[str]]:
    """Per seat, the facts of the spectator view (given, or the engine's) missing from its view."""
    frame = FRAMES[game.name]
    sv = frame(game.spectator_view(state, public_events(events, _players(state))) if spectator is None
               else spectator)
    out = {}
    for p in range(_players(state)):
        missing = missing_facts(sv, frame(game.view(state, p, events)))
        if missing:
            out[p] = missing
    return out


def _players(state: Any) -> int:
    if hasattr(state, "players"):
        return int(state.players)
    if hasattr(state, "data"):
        return int(state.data["n"])
    return 2  # Salvo


# -- random games ---------------------------------------------------------------------------------------

def _acts(game: Core, state: Any, k: int, players: int) -> Iterator[tuple[Any, list[Event]]]:
    """Immediate actions of seat ``k % players``: chat to all, chat to the next seat, and in
    Archipelago an offer to all and one to the next seat (refused ones skipped)."""
    p = k % players
    to = (p + 1) % players
    actions: list[dict[str, Any]] = [{"chat": {"text": f"all {k}"}}, {"chat": {"text": f"you {k}", "to": to}}]
    if game.name == "archipelago":
        actions += [{"offer": {"give": {"wood": 1}, "get": {"iron": 1}}},
                    {"offer": {"to": to, "give": {"food": 1}, "get": {"wood": 2}}}]
    for a in actions:
        try:
            state, events = game.act(state, p, a)
        except GameError:
            continue
        yield state, events


def play(game: Core, config: Mapping[str, Any], seed: int, max_steps: int, start: Any = None
         ) -> Iterator[tuple[Any, list[Event]]]:
    """A random game (each seat's ``random_orders`` / ``random_action`` from its view), yielding
    the state and the events after the start, every immediate action and every step; at most
    ``max_steps`` steps, or to the end.  ``start``: the first state (else a new game of ``config``)."""
    state = game.new_game(config, seed) if start is None else start
    players = _players(state)
    yield state, []
    n = 0
    while (step := game.step(state)).kind != OVER and n < max_steps:
        n += 1
        if n % 3 == 1:
            for acted in list(_acts(game, state, n, players)):
                state = acted[0]
                yield acted
        if step.kind == SIMULTANEOUS:
            rounds = rounds_of(game)
            orders = {p: rounds.random_orders(game.view(state, p), seed * 7919 + n * 31 + p) for p in step.players}
            state, events = rounds.resolve(state, orders)
        else:
            turns = turns_of(game)
            seat = step.players[(seed + n) % len(step.players)]
            action = turns.random_action(game.view(state, seat), seed * 7919 + n)
            state, events = turns.apply_action(state, seat, action)
        yield state, events


def final(game: Core, config: Mapping[str, Any], seed: int, max_steps: int = 5000) -> tuple[Any, list[Event]]:
    last: tuple[Any, list[Event]] = (None, [])
    for step in play(game, config, seed, max_steps):
        last = step
    assert game.outcome(last[0]) is not None, "the game ended"
    return last


# -- the leak property ----------------------------------------------------------------------------------

#: a crowded 4-seat board (bases in the corners, a centre island): the seats' units meet at once
CROWDED = ["0##....##1",
           "#w#....#i#",
           "..........",
           "....##....",
           "....#f....",
           "..........",
           "#u#....#F#",
           "2##....##3"]


def crowded(explored: str) -> Any:
    """Four seats on :data:`CROWDED`, each with a scout, a rank5, a dvora, a submarine and a fighter
    near the middle, stock to build; ``explored``: "all" (every seat explored the whole board) or
    "sight" (each only what it sees now)."""
    from engine.archipelago.scenario import state_from_scenario

    where = [((2, 1), (1, 1), (3, 2), (4, 2), (1, 0)), ((7, 1), (8, 1), (6, 2), (5, 2), (8, 0)),
             ((2, 6), (1, 6), (3, 5), (4, 5), (1, 7)), ((7, 6), (8, 6), (6, 5), (5, 5), (8, 7))]
    units = [{"id": f"{'abcd'[p]}{typ}", "owner": p, "type": typ, "tile": {"x": x, "y": y}}
             for p, tiles in enumerate(where)
             for typ, (x, y) in zip(("scout", "rank5", "dvora", "submarine", "fighter"), tiles, strict=True)]
    return state_from_scenario({"rows": CROWDED, "units": units, "round": 1, "max_rounds": 12, "explored": explored,
                                "stocks": {str(p): {"wood": 6, "food": 6, "iron": 6, "fuel": 4} for p in range(4)}})


LEAK_CASES = [
    *[("salvo", {"players": 2}, s, 40) for s in range(1, 11)],
    *[("salvo", {"players": 2, "mode": "classic", "fleet": "variant", "first_player": "random",
                 "max_rounds": 60}, s, 60) for s in range(1, 7)],
    *[("archipelago", {"players": 2, "max_rounds": 12}, s, 12) for s in range(1, 7)],
    *[("archipelago", {"players": 4, "max_rounds": 8}, s, 8) for s in range(1, 4)],
    ("archipelago", {"players": 3, "max_rounds": 8}, 5, 8),
    *[("archipelago", {"players": 4, "scenario": explored}, s, 10) for explored in ("all", "sight") for s in (1, 2, 3)],
    *[("arcmage", {"players": 2, "max_rounds": 14}, s, 120) for s in range(1, 7)],
    *[("arcmage", {"players": 3, "max_rounds": 9}, s, 80) for s in range(1, 3)],
]


#: per game, the parts of a spectator view that must show something in some step of each game
#: (so the leak property is not checked on empty views)
SHOWN: dict[str, Callable[[Json], int]] = {
    "salvo": lambda v: len(v["shots"]) + len(v["incoming"]),
    "archipelago": lambda v: len(v["events"]) + len(v["chat"]),
    "arcmage": lambda v: len(v["cards"]),
}


@pytest.mark.parametrize(("name", "config", "seed", "steps"), LEAK_CASES,
                         ids=lambda v: json.dumps(v, separators=(",", ":")) if isinstance(v, dict) else str(v))
def test_every_fact_of_the_spectator_view_is_in_every_players_view(name: str, config: dict[str, Any],
                                                                    seed: int, steps: int) -> None:
    game = get_game(name)
    shown = 0
    checked = 0
    start = crowded(config["scenario"]) if "scenario" in config else None
    for state, events in play(game, config, seed, steps, start):
        if game.outcome(state) is not None:
            break
        players = _players(state)
        public = public_events(events, players)
        sv = game.spectator_view(state, public)
        assert sv == game.spectator_view(state, events), "the engine keeps only the public events itself"
        assert leaks(game, state, events, sv) == {}, f"round {state.round}, events {events}"
        shown += SHOWN[name](sv)
        checked += 1
    assert checked >= 3 and shown, f"{name}: the spectator views showed nothing to check"


def test_archipelago_spectators_see_the_terrain_every_seat_explored() -> None:
    """The map is the intersection of the seats' explored tiles: with two seats, after some random
    rounds, a tile explored by both is on the spectator's map, one explored by one seat only is not."""
    game = get_game("archipelago")
    both = one = 0
    for seed in range(1, 7):
        state, _ = list(play(game, {"players": 2, "max_rounds": 12}, seed, 11))[-1]
        sv = game.spectator_view(state)
        known = {(t["x"], t["y"]) for t in archipelago_frame(sv)["terrain"]}
        mine = [{(t["x"], t["y"]) for t in archipelago_frame(game.view(state, p))["terrain"]} for p in range(2)]
        assert known == mine[0] & mine[1]
        both += len(known)
        one += len(mine[0] ^ mine[1])
        assert {b["seat"] for b in sv["bases"]} <= {0, 1}
    assert both and one


# -- leaking views are caught -----------------------------------------------------------------------------

def _mid(name: str, config: dict[str, Any], seed: int, steps: int) -> tuple[Core, Any, list[Event]]:
    game = get_game(name)
    state, events = list(play(game, config, seed, steps))[-1]
    assert game.outcome(state) is None
    return game, state, events


def test_a_leaking_archipelago_view_is_caught() -> None:
    game, state, events = _mid("archipelago", {"players": 2, "max_rounds": 12}, 3, 6)
    good = game.spectator_view(state, public_events(events, 2))
    assert leaks(game, state, events, good) == {}
    own = game.view(state, 0, events)
    unit = dict(own["units"][0])
    private_tile = next((x, y) for y, row in enumerate(own["rows"]) for x, c in enumerate(row)
                        if c != "?" and game.view(state, 1)["rows"][y][x] == "?")
    x, y = private_tile
    rows = list(good["rows"])
    rows[y] = rows[y][:x] + own["rows"][y][x] + rows[y][x + 1:]
    bad_views = [
        {**good, "units": [unit]},                       # a unit of seat 0
        {**good, "rows": rows},                          # a tile only seat 0 explored
        {**good, "stock": own["stock"]},                 # seat 0's stock
        {**good, "score": own["score"] + 1},             # a made-up figure
        {**good, "seats": [{**good["seats"][0], "resource_total": 999}]},
        {**good, "chat": [{"from_seat": 0, "to_seat": 1, "text": "secret", "round": state.round}]},
    ]
    for bad in bad_views:
        assert leaks(game, state, events, bad), bad


def test_a_leaking_salvo_view_is_caught() -> None:
    game, state, events = _mid("salvo", {"players": 2}, 2, 4)
    good = game.spectator_view(state, events)
    assert good["shots"] and leaks(game, state, events, good) == {}
    hit_flags = {**good, "shots": [{**s, "hit": False} for s in good["shots"]]}  # salvo mode: never told
    ship = game.view(state, 1)["fleet"][0]
    bad_views = [
        hit_flags,
        {**good, "enemy_fleet": [ship]},                             # a ship's squares
        {**good, "fleet": [{"name": ship["name"], "size": ship["size"], "sunk": True}]} if not ship["sunk"]
        else {**good, "fleet": [{"name": ship["name"], "squares": ship["squares"]}]},
        {**good, "shots_allowed": 7},
        {**good, "reports": game.view(state, 0)["reports"]},         # seat 0's reports (S6: its own)
    ]
    for bad in bad_views:
        assert leaks(game, state, events, bad), bad


def test_a_leaking_arcmage_view_is_caught() -> None:
    game, state, events = _mid("arcmage", {"players": 2, "max_rounds": 14}, 4, 40)
    good = game.spectator_view(state, public_events(events, 2))
    assert leaks(game, state, events, good) == {}
    own = game.view(state, 0, events)
    hand = own["hand"]
    assert hand
    bad_views = [
        {**good, "hand": hand},                                          # seat 0's hand
        {**good, "cards": {**good["cards"], hand[0]: own["cards"][hand[0]]}},  # one hand card
        {**good, "seats": [{**good["seats"][0], "hand_count": 99}]},
        {**good, "legal": own["legal"] or [{"pass": {}}]},
    ]
    for bad in bad_views:
        assert leaks(game, state, events, bad), bad


# -- over: the whole game --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_over_the_archipelago_spectator_sees_every_unit_and_the_whole_map(seed: int) -> None:
    game = get_game("archipelago")
    state, events = final(game, {"players": 3, "max_rounds": 5}, seed)
    sv = game.spectator_view(state, public_events(events, 3))
    assert sv["units"] == [state.units[u].to_dict() for u in sorted(state.units)] and sv["units"]
    assert not any("?" in row for row in sv["rows"])
    assert len(sv["visible"]) == sv["width"] * sv["height"]
    assert {b["seat"] for b in sv["bases"]} == {0, 1, 2}
    assert sv["outcome"] == game.view(state, 0)["outcome"] and sv["player"] == SPECTATOR
    assert len(sv["outposts"]) == len(state.outposts)
    for p in range(3):  # what any player sees once over, the spectator sees too
        pv = game.view(state, p, events)
        assert missing_facts(pv["rows"], sv["rows"]) == []
        assert missing_facts({k: pv[k] for k in ("bases", "islands", "resource_tiles", "ports", "seats")},
                             sv) == []


@pytest.mark.parametrize("config", [{"players": 2}, {"players": 2, "mode": "classic", "max_rounds": 400}])
def test_over_the_salvo_spectator_sees_both_fleets_and_every_shot(config: dict[str, Any]) -> None:
    game = get_game("salvo")
    state, _ = final(game, config, 5)
    sv = game.spectator_view(state)
    assert sv["you"] == SPECTATOR and sv["outcome"]
    squares = [{sq for ship in state.fleets[p] for sq in ship.squares} for p in range(2)]
    assert {sq for s in sv["fleet"] for sq in s["squares"]} == squares[0]
    assert {sq for s in sv["enemy_fleet"] for sq in s["squares"]} == squares[1]
    assert [(s["square"], s["round"], s["hit"]) for s in sv["shots"]] == [
        (s.square, s.round, s.square in squares[1]) for s in state.shots[0]]
    assert [(s["square"], s["round"], s["hit"]) for s in sv["incoming"]] == [
        (s.square, s.round, s.square in squares[0]) for s in state.shots[1]]


@pytest.mark.parametrize("seed", [1, 2])
def test_over_the_arcmage_spectator_sees_every_card(seed: int) -> None:
    game = get_game("arcmage")
    state, events = final(game, {"players": 2, "max_rounds": 6}, seed)
    sv = game.spectator_view(state, events)
    data = state.data
    assert set(sv["cards"]) == set(data["cards"])
    hands = [cid for s in data["seats"] for cid in s["hand"]]
    assert hands and all(sv["cards"][c]["zone"] == "hand" for c in hands)
    assert sv["legal"] == [] and sv["you"] == SPECTATOR and sv["outcome"]
    for p in range(2):  # every card any player saw, the spectator sees as it did
        pv = game.view(state, p, events)
        assert missing_facts(pv["cards"], sv["cards"]) == []


# -- determinism and the wire -----------------------------------------------------------------------------

WIRE_CASES = [("salvo", {"players": 2}, 4), ("salvo", {"players": 2, "mode": "classic", "max_rounds": 400}, 6),
              ("archipelago", {"players": 4, "max_rounds": 4}, 4), ("arcmage", {"players": 2, "max_rounds": 6}, 12)]


def _response(name: str, state: Any, sv: Json, over: bool) -> Json:
    """The services' GetViewResponse dict for a spectator (services/actor_reads.py)."""
    return {"game_id": "g1", "game": name, "version": 3, "round_version": 2, "status": "over" if over else "running",
            "round": state.round, "you": SPECTATOR, "deadline_unix_ms": 0, "deadline_seconds": 60.0, "code": "",
            "submitted": False, "seats": _players(state), "expected": False, "seq": 1, "autopilot_played": False,
            "autopilot_log": [], "players": [], "view": sv}


@pytest.mark.parametrize(("name", "config", "steps"), WIRE_CASES, ids=lambda v: str(v))
def test_spectator_views_are_deterministic_and_convert_into_the_view_message(name: str, config: dict[str, Any],
                                                                            steps: int) -> None:
    """Same state, same bytes (also after a JSON round trip of the state); the keys a subset of the
    player view's, each of the same type; GetViewResponse carries it (gateway.convert.view_response,
    strict: an unknown key fails), running and over, and reads back as the engine made it."""
    game = get_game(name)
    running, events = list(play(game, config, 1, steps))[-1]
    assert game.outcome(running) is None
    done, last = final(game, config, 1)
    for state, evs, over in ((running, events, False), (done, last, True)):
        public = public_events(evs, _players(state))
        sv = game.spectator_view(state, public)
        again = game.state_from_dict(json.loads(canonical_json(state.to_dict())))
        assert canonical_json(sv) == canonical_json(game.spectator_view(state, public))
        assert canonical_json(sv) == canonical_json(game.spectator_view(again, public))
        pv = game.view(state, 0, evs)
        assert set(sv) <= set(pv)
        assert all(type(sv[k]) is type(pv[k]) for k in sv), [k for k in sv if type(sv[k]) is not type(pv[k])]
        resp = view_response(_response(name, state, sv, over))
        assert resp.WhichOneof("view") == name and resp.you == SPECTATOR
        back = to_json(getattr(resp, name))  # as a JSON door sends it: every field, int64 as strings
        assert back.get("you", back.get("player")) == SPECTATOR
        if "tiebreak" in sv:
            assert int(back.pop("tiebreak")) == sv["tiebreak"]
        assert missing_facts({k: v for k, v in sv.items() if k != "tiebreak"}, back) == [], \
            "the message holds every fact of the engine's view"
        for key in ("units", "shots", "incoming", "fleet", "enemy_fleet", "cards", "seats", "events", "rows"):
            if sv.get(key):
                assert len(back[key]) == len(sv[key]), key


# -- speed -------------------------------------------------------------------------------------------------

def _median_s(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def test_an_8_player_archipelago_spectator_view_costs_no_more_than_a_player_view() -> None:
    """The bench's mid-game 8-player state (320 units): a spectator view, running and over, takes
    at most a player view's time (medians of interleaved runs)."""
    from bench.engine_bench import mid_game_state
    from engine.archipelago.view import spectator_view, view

    state = mid_game_state(8)
    over = state.clone()
    over.outcome = {"winners": [0], "draw": False, "reason": "target", "scores": [0] * 8}
    for st in (state, over):
        spectator_view(st)
        view(st, 3)
        spec = player = 0.0
        for _ in range(5):  # interleaved, so a busy machine slows both alike
            spec += _median_s(functools.partial(spectator_view, st), 20)
            player += _median_s(functools.partial(view, st, 3), 20)
        assert spec <= player, f"spectator {spec / 5 * 1e3:.3f} ms, player {player / 5 * 1e3:.3f} ms"
