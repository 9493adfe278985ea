"""Standing orders and the autopilot (A70–A74), on small boards drawn here, plus seeded games.

Coordinates: x is the column, y the row (row 0 on top); ``.`` sea, ``#`` land, digits are bases,
``w f i u`` resources, ``W F I U`` ports (see :mod:`engine.archipelago.scenario`).  Multi-round
tests play seat 0 by ``GAME.autopilot`` with its standing orders (kept with
``GAME.standing_after_round``, as the services do) and seat 1 by scripted orders; every order given
is checked with ``GAME.validate`` first.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from engine.archipelago import GAME
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.viewmap import ViewMap
from engine.base import canonical_json, standing_of, state_hash
from engine.errors import GameError, IllegalOrder, InvalidOrder
from engine.salvo import GAME as SALVO
from tests.engine.archipelago.boards import TWO_HOMES, U, state

Tile = tuple[int, int]
P1Orders = Callable[[State, int], dict[str, Any]]

BOARD = TWO_HOMES
# p0's long home island on row 0 (base (0,0)); p1's home island bottom right
LONG = [
    "0#########..",  # y0
    "............",  # y1
    "............",  # y2
    "..........#1",  # y3
]


def tile_of(st: State, uid: str) -> Tile | None:
    u = st.units.get(uid)
    return None if u is None else u.tile


def entry(orders: dict[str, Any], uid: str) -> dict[str, Any] | None:
    return next((e for e in orders.get("units", []) if e["unit"] == uid), None)


def play(st: State, standing: dict[str, Any], rounds: int, p1: P1Orders | None = None,
         each: Callable[[State, dict[str, Any]], None] | None = None) -> tuple[State, dict[str, Any]]:
    """``rounds`` rounds: seat 0 by the autopilot with ``standing``, seat 1 by ``p1(state, k)``
    (nothing when left out); ``each(state, orders0)`` after every round."""
    for k in range(rounds):
        v = GAME.view(st, 0)
        o = GAME.autopilot(v, standing)
        GAME.validate(st, 0, o)
        o1 = p1(st, k) if p1 else {"units": []}
        GAME.validate(st, 1, o1)
        st, _ = GAME.resolve(st, {0: o, 1: o1})
        standing = GAME.standing_after_round(standing, o)
        if each:
            each(st, o)
    return st, standing


def refused(st: State, standing: Any, player: int = 0) -> GameError:
    """check_standing must refuse ``standing`` and leave the state as it was."""
    before = canonical_json(st.to_dict())
    with pytest.raises(GameError) as e:
        GAME.check_standing(st, player, standing)
    assert canonical_json(st.to_dict()) == before
    return e.value


# -- A70: nothing changes for a player without standing orders ---------------------------------------

def test_a71_hold_is_the_default_and_gives_todays_orders() -> None:
    st = state(BOARD, [U("a", 0, "rank3", 1, 1), U("s", 0, "dvora", 2, 1), U("e", 1, "rank1", 1, 0)])
    v = GAME.view(st, 0)
    norm = GAME.check_standing(st, 0, {})
    assert norm == {"posture": "hold", "units": [], "build_queue": [], "bank_rules": [], "accept_rules": []}
    for s in (None, {}, norm, {"posture": "hold"}):
        assert GAME.autopilot(v, s) == {"units": []}
    assert GAME.autopilot(v, {"bonus": "iron"}) == {"units": [], "bonus": "iron"}
    assert GAME.standing_actions(v, None) == [] and GAME.standing_actions(v, norm) == []


def test_a70_round_zero_and_game_over_are_unchanged() -> None:
    st = GAME.new_game({"players": 2}, 5)
    v = GAME.view(st, 0)
    aggressive = {"posture": "aggressive", "build_queue": [{"type": "rank1"}]}
    assert GAME.autopilot(v, aggressive) == {"deploy": []}
    assert GAME.complete_orders(v, aggressive, {"deploy": []}) == {"deploy": []}
    over = dict(v, outcome={"winners": [0], "draw": False, "reason": "target", "scores": [10, 0]})
    assert GAME.autopilot(over, aggressive) == {} and GAME.standing_actions(over, aggressive) == []


def test_check_standing_normalises() -> None:
    st = state(BOARD, [U("b", 0, "rank3", 1, 1), U("a", 0, "dvora", 2, 1)])
    got = GAME.check_standing(st, 0, {
        "accept_rules": [{"max_ratio": 1}], "bonus": "wood",
        "units": [{"unit": "b", "order": "stay"}, {"unit": "a", "order": "move", "tile": {"y": 2, "x": 5}}],
        "bank_rules": [{"give": "wood", "get": "iron"}],
        "build_queue": [{"type": "rank5"}, {"type": "landmine", "tile": {"x": 1, "y": 0}}]})
    assert list(got) == ["posture", "units", "build_queue", "bonus", "bank_rules", "accept_rules"]
    assert got["posture"] == "hold"
    assert got["units"] == [{"unit": "a", "order": "move", "tile": {"x": 5, "y": 2}},
                            {"unit": "b", "order": "stay"}]
    assert got["bank_rules"] == [{"give": "wood", "get": "iron", "keep": 0}]
    assert GAME.check_standing(st, 0, got) == got  # normalising is idempotent
    assert json.loads(canonical_json(got)) == got


# -- A71 postures -------------------------------------------------------------------------------------

def test_a71_defensive_falls_back_toward_the_base() -> None:
    st = state(LONG, [U("a", 0, "scout", 5, 0), U("b", 0, "rank3", 2, 0), U("e", 1, "rank5", 7, 0),
                      U("s", 0, "shaldag", 6, 2), U("f", 1, "dvora", 7, 2)])
    o = GAME.autopilot(GAME.view(st, 0), {"posture": "defensive"})
    GAME.validate(st, 0, o)
    # the scout (move 3, sight 3) sees an enemy 2 tiles away: back toward the base (0, 0), up to b
    assert entry(o, "a") == {"unit": "a", "path": ["W", "W"]}
    assert entry(o, "b") is None  # no enemy within 2: holds
    s = entry(o, "s")
    assert s is not None and len(s["path"]) == 3 and "E" not in s["path"]  # never toward the enemy
    assert GAME.autopilot(GAME.view(st, 0), {"posture": "hold"}) == {"units": []}


BATTLE = [
    "0###############",  # y0
    "................",  # y1
    "..............#1",  # y2
]


def battle(revealed: list[str]) -> State:
    return state(BATTLE, [U("a", 0, "rank5", 2, 0), U("w", 1, "rank2", 3, 0),      # known weaker: a wins
                          U("b", 0, "scout", 6, 0), U("x", 1, "rank1", 8, 0),      # unknown, 2 tiles away
                          U("c", 0, "rank3", 13, 0), U("y", 1, "rank9", 12, 0)],   # known stronger
                 revealed={"0": revealed})


def test_a71_balanced_attacks_only_enemies_known_to_be_weaker() -> None:
    st = battle(["w", "y"])
    o = GAME.autopilot(GAME.view(st, 0), {"posture": "balanced"})
    GAME.validate(st, 0, o)
    assert o["units"] == [{"unit": "a", "path": ["E"]}]
    new, _ = GAME.resolve(st, {0: o})
    assert tile_of(new, "a") == (3, 0) and tile_of(new, "w") is None


def test_a71_aggressive_attacks_any_enemy_within_two_but_not_a_known_stronger_one() -> None:
    st = battle(["w", "y"])
    o = GAME.autopilot(GAME.view(st, 0), {"posture": "aggressive"})
    GAME.validate(st, 0, o)
    assert entry(o, "a") == {"unit": "a", "path": ["E"]}
    assert entry(o, "b") == {"unit": "b", "path": ["E", "E"]}  # the scout (move 3) enters x's tile
    assert entry(o, "c") is None  # y (rank9) would win: no attack, nothing to take on the home island
    # once y's type is unknown, c attacks it too
    o2 = GAME.autopilot(GAME.view(battle(["w"]), 0), {"posture": "aggressive"})
    assert entry(o2, "c") == {"unit": "c", "path": ["W"]}


FERRY = [
    "0#..........",  # y0
    "##..........",  # y1
    "............",  # y2
    "....##......",  # y3: a ring island (4,3), (5,3)
    "............",  # y4
    "..........##",  # y5
    "..........#1",  # y6
]


def test_a71_aggressive_ferries_land_units_and_takes_the_ring_island() -> None:
    st = state(FERRY, [U("a", 0, "rank3", 1, 1), U("s", 0, "dvora", 2, 1)],
               stocks={"0": {"food": 4, "wood": 4}})
    seen: list[tuple[Tile | None, Tile | None]] = []
    st, _ = play(st, {"posture": "aggressive"}, 7,
                 each=lambda s, o: seen.append((tile_of(s, "a"), tile_of(s, "s"))))
    assert seen[0] == ((2, 1), (2, 1))  # the rank3 boarded the waiting Dvora (A24)
    assert seen[1][1] != (2, 1)  # then the Dvora sailed with it
    assert {t for t, p in st.outposts.items() if p == 0} == {(4, 3), (5, 3)}  # outposts, A36
    assert st.pstates[0].score > 0


# -- A72 per-unit orders ------------------------------------------------------------------------------

SEA = [
    "0#............",  # y0
    "..............",  # y1
    "..............",  # y2
    "..............",  # y3
    "..............",  # y4
    "............#1",  # y5
]


def test_a72_move_heads_for_a_far_tile_over_several_rounds() -> None:
    st = state(BOARD, [U("s", 0, "dvora", 2, 1), U("a", 0, "rank1", 4, 3)])
    standing = GAME.check_standing(st, 0, {"units": [
        {"unit": "s", "order": "move", "tile": {"x": 9, "y": 4}},
        {"unit": "a", "order": "move", "tile": {"x": 8, "y": 3}}]})
    trail: list[Tile | None] = []
    st, after = play(st, standing, 5, each=lambda s, o: trail.append(tile_of(s, "a")))
    assert tile_of(st, "s") == (9, 4)
    assert trail == [(5, 3), (6, 3), (7, 3), (8, 3), (8, 3)]  # move 1 a round, then holds there
    assert after == standing  # the order stays in force


def test_a72_patrol_cycles_through_its_waypoints() -> None:
    st = state(SEA, [U("s", 0, "shaldag", 3, 1)])  # move 3
    wps = [(3, 1), (9, 1), (9, 4), (3, 4)]
    standing = GAME.check_standing(st, 0, {"units": [
        {"unit": "s", "order": "patrol", "waypoints": [{"x": x, "y": y} for x, y in wps]}]})
    trail: list[Tile | None] = []
    st, _ = play(st, standing, 13, each=lambda s, o: trail.append(tile_of(s, "s")))
    # the route is 6 + 3 + 6 + 3 = 18 steps: a waypoint every 2, 1, 2, 1 rounds, in order, round and round
    assert trail == [(6, 1), (9, 1), (9, 4), (6, 4), (3, 4), (3, 1),
                     (6, 1), (9, 1), (9, 4), (6, 4), (3, 4), (3, 1), (6, 1)]


def test_a72_patrol_of_two_waypoints_goes_out_and_back() -> None:
    st = state(SEA, [U("s", 0, "dvora", 2, 2)])  # move 3; out and back is 2 × 9 steps
    standing = GAME.check_standing(st, 0, {"units": [
        {"unit": "s", "order": "patrol", "waypoints": [{"x": 2, "y": 2}, {"x": 11, "y": 2}]}]})
    trail: list[Tile | None] = []
    st, _ = play(st, standing, 24, each=lambda s, o: trail.append(tile_of(s, "s")))
    assert all(t is not None and t[1] == 2 and 2 <= t[0] <= 11 for t in trail)  # never off the route
    ends = [t for t in trail[6:] if t in ((2, 2), (11, 2))]
    assert ends.count((2, 2)) >= 2 and ends.count((11, 2)) >= 2  # in step with its schedule: cycles
    assert all(a != b for a, b in itertools.pairwise(ends))  # alternating ends


def test_a72_escort_stays_adjacent() -> None:
    st = state(SEA, [U("t", 0, "dvora", 2, 1), U("e", 0, "shaldag", 2, 2)])
    standing = GAME.check_standing(st, 0, {"units": [
        {"unit": "t", "order": "patrol", "waypoints": [{"x": 2, "y": 1}, {"x": 11, "y": 1},
                                                         {"x": 11, "y": 4}, {"x": 2, "y": 4}]},
        {"unit": "e", "order": "escort", "target": "t"}]})

    def adjacent(s: State, o: dict[str, Any]) -> None:
        t, e = tile_of(s, "t"), tile_of(s, "e")
        assert t is not None and e is not None
        assert abs(t[0] - e[0]) + abs(t[1] - e[1]) == 1, (t, e, o)

    play(st, standing, 12, each=adjacent)


def test_a72_guard_attacks_enemies_next_to_the_tile_and_comes_back() -> None:
    st = state(LONG, [U("g", 0, "rank9", 5, 0), U("e", 1, "rank2", 6, 0)])
    standing = GAME.check_standing(st, 0, {"units": [{"unit": "g", "order": "guard",
                                                      "tile": {"x": 5, "y": 0}}]})
    o = GAME.autopilot(GAME.view(st, 0), standing)
    assert entry(o, "g") == {"unit": "g", "path": ["E"]}  # the enemy next to (5, 0)
    st, _ = play(st, standing, 3)
    assert tile_of(st, "e") is None and tile_of(st, "g") == (6, 0)  # killed it; stays within 1 of (5, 0)
    st2 = state(LONG, [U("g", 0, "rank9", 8, 0)])
    o = GAME.autopilot(GAME.view(st2, 0), standing)
    assert entry(o, "g") == {"unit": "g", "path": ["W"]}  # more than 1 away: heads back


def test_a72_hunt_follows_a_moving_target() -> None:
    st = state(SEA, [U("h", 0, "saar45", 3, 2), U("t", 1, "dvora", 5, 2)])  # 3 beats 1; move 2 vs 1
    standing = GAME.check_standing(st, 0, {"units": [{"unit": "h", "order": "hunt", "target": "t"}]})
    gaps: list[int] = []

    def flee(s: State, k: int) -> dict[str, Any]:  # the target runs east, then south
        return {"units": [{"unit": "t", "path": ["E" if k < 3 else "S"]}]}

    def gap(s: State, o: dict[str, Any]) -> None:
        h, t = tile_of(s, "h"), tile_of(s, "t")
        if h and t:
            gaps.append(abs(h[0] - t[0]) + abs(h[1] - t[1]))

    st, _ = play(st, standing, 6, p1=lambda s, k: flee(s, k) if "t" in s.units else {"units": []}, each=gap)
    assert gaps == sorted(gaps, reverse=True)  # closing in every round
    assert tile_of(st, "t") is None and tile_of(st, "h") is not None  # caught and sunk


def test_a72_hunt_heads_for_the_last_known_tile_in_the_enemy_log() -> None:
    st = state(SEA, [U("h", 0, "shaldag", 1, 2), U("t", 1, "dvora", 12, 1), U("u", 1, "dvora", 5, 4)])
    st.pstates[0].log["t"] = ((9, 3), 0, None, 1)  # seen at (9, 3) a round ago, out of sight now
    v = GAME.view(st, 0)
    assert [e["id"] for e in v["enemy_log"]] == ["t"] and not v["enemies"]
    o = GAME.autopilot(v, {"units": [{"unit": "h", "order": "hunt", "target": "t"}]})
    assert entry(o, "h") == {"unit": "h", "path": ["E", "E", "E"]}
    st.pstates[0].log["t"] = ((2, 3), 0, None, 1)  # a log entry on a tile in sight is stale
    v = GAME.view(st, 0)
    o = GAME.autopilot(v, {"units": [{"unit": "h", "order": "hunt", "target": "t"}]})
    assert entry(o, "h") is None  # no known enemy: the hunter waits


# -- A73 build queue -----------------------------------------------------------------------------------

FARM = [
    "0ff#..........",  # y0: p0's home produces 2 food and 1 iron a round
    "#i##..........",  # y1
    "..............",  # y2
    "............#1",  # y3
]


def test_a73_queue_is_consumed_in_order_as_resources_allow() -> None:
    st = state(FARM, [], stocks={"0": {"food": 2, "iron": 1}})
    queue = [{"type": "rank4"}, {"type": "rank5"}, {"type": "rank1"}, {"type": "rank1"}]
    standing = GAME.check_standing(st, 0, {"build_queue": queue})
    built: list[list[str]] = []
    queues: list[list[str]] = []

    def note(s: State, o: dict[str, Any]) -> None:
        built.append([b["type"] for b in o.get("builds", [])])

    def track(s: State, k: int) -> dict[str, Any]:
        return {"units": []}

    for _ in range(5):
        st, standing = play(st, standing, 1, p1=track, each=note)
        queues.append([b["type"] for b in standing["build_queue"]])
    # round 1: 2 food 1 iron buys the rank4 (2 food, 1 iron); the rank5 (2 food, 2 iron) waits for
    # iron although the rank1s behind it (1 food) are affordable; in round 3 (4 food, 2 iron) it is
    # built, and the rank1s with it
    assert built[:4] == [["rank4"], [], ["rank5", "rank1", "rank1"], []]
    assert queues[:3] == [["rank5", "rank1", "rank1"], ["rank5", "rank1", "rank1"], []]
    assert sorted(u.type for u in st.units.values() if u.owner == 0) == ["rank1", "rank1", "rank4", "rank5"]


def test_a73_an_entry_that_cannot_be_built_now_is_passed_over_and_kept() -> None:
    st = state(FARM, [U("g", 0, "rank13", 1, 0), U("s", 0, "dvora", 4, 0)], stocks={"0": {"food": 9, "iron": 9,
                                                                                            "wood": 3}})
    standing = GAME.check_standing(st, 0, {"build_queue": [{"type": "rank13"}, {"type": "raft", "ship": "s"},
                                                           {"type": "rank3"}]})
    o = GAME.autopilot(GAME.view(st, 0), standing)
    GAME.validate(st, 0, o)
    assert o["builds"] == [{"type": "raft", "ship": "s"}, {"type": "rank3"}]  # one Rav-Aluf at most
    after = GAME.standing_after_round(standing, o)
    assert after["build_queue"] == [{"type": "rank13"}]


def test_a73_only_the_queues_own_builds_cross_entries_off() -> None:
    standing = {"build_queue": [{"type": "rank5"}, {"type": "dvora"}, {"type": "rank5"}]}
    after = GAME.standing_after_round(standing, {"builds": [{"type": "rank5"}, {"type": "rank5"}]})
    assert after["build_queue"] == [{"type": "dvora"}]
    mine = GAME.standing_after_round(standing, {"builds": [{"type": "rank5"}, {"type": "scout"}]})
    assert mine["build_queue"] == standing["build_queue"]  # the player's own builds: untouched
    assert GAME.standing_after_round(standing, {"units": []})["build_queue"] == standing["build_queue"]


# -- A70: completing a submission ---------------------------------------------------------------------

def test_a70_complete_orders_fills_only_what_the_submission_leaves_open() -> None:
    st = state(BATTLE, [U("a", 0, "rank5", 2, 0), U("w", 1, "rank2", 3, 0), U("b", 0, "rank5", 6, 0),
                        U("x", 1, "rank1", 7, 0)], stocks={"0": {"food": 9, "iron": 9}})
    standing = {"posture": "aggressive", "build_queue": [{"type": "rank1"}], "bonus": "fuel"}
    v = GAME.view(st, 0)
    sub = {"units": [{"unit": "a", "path": []}], "bonus": "wood"}
    o = GAME.complete_orders(v, standing, sub)
    GAME.validate(st, 0, o)
    assert o["units"] == [{"unit": "a", "path": []}, {"unit": "b", "path": ["E"]}]
    assert o["builds"] == [{"type": "rank1"}] and o["bonus"] == "wood"
    o = GAME.complete_orders(v, standing, {"units": [], "builds": [{"type": "rank2"}]})
    assert o["builds"] == [{"type": "rank2"}] and o["bonus"] == "fuel"
    assert sub == {"units": [{"unit": "a", "path": []}], "bonus": "wood"}  # input untouched


def test_a20_completed_orders_stay_affordable_together() -> None:
    st = state(FERRY, [U("a", 0, "rank3", 4, 3), U("b", 0, "rank3", 5, 3)], stocks={"0": {"food": 3, "wood": 2}})
    v = GAME.view(st, 0)
    o = GAME.autopilot(v, {"posture": "aggressive"})
    assert [e.get("action") for e in o["units"]] == ["outpost", "outpost"]  # A36 on the ring island
    sub = {"units": [], "builds": [{"type": "engineer"}]}  # 1 food, 1 wood: one outpost still fits
    o = GAME.complete_orders(v, {"posture": "aggressive"}, sub)
    GAME.validate(st, 0, o)
    assert [e.get("action") for e in o["units"]] == ["outpost"]


def test_a24_complete_orders_never_moves_a_carrier_the_submission_boards() -> None:
    st = state(FERRY, [U("a", 0, "rank3", 1, 1), U("s", 0, "dvora", 2, 1)])
    standing = {"units": [{"unit": "s", "order": "move", "tile": {"x": 8, "y": 1}}]}
    o = GAME.complete_orders(GAME.view(st, 0), standing, {"units": [{"unit": "a", "path": ["E"]}]})
    GAME.validate(st, 0, o)
    assert entry(o, "s") is None


# -- A74 trade rules ---------------------------------------------------------------------------------

PORTS = [
    "0#..........",  # y0
    "##..........",  # y1
    "....W.......",  # y2: a wood port
    "..........#1",  # y3
]


def test_a74_bank_rule_converts_the_surplus_above_keep() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 11, "food": 3}})
    standing = {"bank_rules": [{"give": "wood", "get": "iron", "keep": 2}, {"give": "food", "get": "iron"}]}
    acts = GAME.standing_actions(GAME.view(st, 0), standing)
    assert acts == [{"bank": {"give": "wood", "get": "iron", "times": 2}}]  # 9 above keep, 4:1; 3 food < 4
    for a in acts:
        st, _ = GAME.act(st, 0, a)
    assert st.pstates[0].stock == {"wood": 3, "food": 3, "iron": 2, "fuel": 0}
    ported = state(PORTS, [U("p", 0, "rank1", 4, 2)], stocks={"0": {"wood": 11}})  # holds the port: 2:1
    assert GAME.standing_actions(GAME.view(ported, 0), standing) == [
        {"bank": {"give": "wood", "get": "iron", "times": 4}}]


def test_a74_accept_rule_takes_offers_worth_it_at_bank_rates() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 5, "food": 1}, "1": {"iron": 9, "fuel": 3}})
    st, _ = GAME.act(st, 1, {"offer": {"to": 0, "give": {"iron": 2}, "get": {"wood": 2}}})   # o1: fair
    st, _ = GAME.act(st, 1, {"offer": {"give": {"fuel": 1}, "get": {"wood": 3}}})           # o2: to all, poor
    st, _ = GAME.act(st, 1, {"offer": {"to": 0, "give": {"iron": 5}, "get": {"food": 2}}})  # o3: can't pay
    st, _ = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 1}, "get": {"iron": 1}}})  # o4: own offer
    v = GAME.view(st, 0)
    assert GAME.standing_actions(v, {"accept_rules": [{"max_ratio": 1.0}]}) == [{"accept": {"offer": "o1"}}]
    generous = GAME.standing_actions(v, {"accept_rules": [{"max_ratio": 3}],
                                         "bank_rules": [{"give": "wood", "get": "food", "keep": 0}]})
    # o1 and o2 both worth it at ratio 3; wood left after giving 2 + 3: none to bank
    assert generous == [{"accept": {"offer": "o1"}}, {"accept": {"offer": "o2"}}]
    for a in generous:
        st, _ = GAME.act(st, 0, a)
    assert st.pstates[0].stock == {"wood": 0, "food": 1, "iron": 2, "fuel": 1}


# -- validation of standing orders (A72–A74) ---------------------------------------------------------

def small() -> State:
    return state(BOARD, [U("a", 0, "rank3", 1, 1), U("s", 0, "dvora", 2, 1), U("m", 0, "landmine", 0, 1),
                         U("e", 1, "rank1", 11, 5)])


def test_a72_patrol_of_one_waypoint_is_refused() -> None:
    e = refused(small(), {"units": [{"unit": "s", "order": "patrol", "waypoints": [{"x": 5, "y": 1}]}]})
    assert isinstance(e, IllegalOrder) and e.rule == "A72" and e.field == "units[0].waypoints"


def test_a73_a_twenty_first_queue_entry_is_refused() -> None:
    e = refused(small(), {"build_queue": [{"type": "rank1"}] * 21})
    assert isinstance(e, IllegalOrder) and e.rule == "A73" and e.field == "build_queue[20]"
    assert len(GAME.check_standing(small(), 0, {"build_queue": [{"type": "rank1"}] * 20})["build_queue"]) == 20


def test_a72_unknown_and_foreign_units_get_the_same_refusal() -> None:
    st = small()
    a = refused(st, {"units": [{"unit": "s", "order": "stay"}, {"unit": "zz", "order": "stay"}]})
    b = refused(st, {"units": [{"unit": "s", "order": "stay"}, {"unit": "e", "order": "stay"}]})
    assert isinstance(a, IllegalOrder) and isinstance(b, IllegalOrder)
    assert (a.rule, a.field) == (b.rule, b.field) == ("A72", "units[1].unit")
    assert (a.reason, b.reason) == ("no unit of yours is called 'zz'", "no unit of yours is called 'e'")
    c = refused(st, {"units": [{"unit": "s", "order": "escort", "target": "e"}]})
    assert isinstance(c, IllegalOrder) and (c.rule, c.field) == ("A72", "units[0].target")


def test_a72_unreachable_target_is_refused() -> None:
    st = small()
    e = refused(st, {"units": [{"unit": "a", "order": "move", "tile": {"x": 5, "y": 3}}]})  # another island
    assert isinstance(e, IllegalOrder) and (e.rule, e.field) == ("A72", "units[0].tile")
    e = refused(st, {"units": [{"unit": "s", "order": "guard", "tile": {"x": 5, "y": 3}}]})  # land, for a ship
    assert isinstance(e, IllegalOrder) and (e.rule, e.field) == ("A72", "units[0].tile")
    e = refused(st, {"units": [{"unit": "s", "order": "patrol",
                                "waypoints": [{"x": 2, "y": 2}, {"x": 40, "y": 2}]}]})
    assert isinstance(e, IllegalOrder) and (e.rule, e.field) == ("A72", "units[0].waypoints[1]")
    fog = state(BOARD, [U("s", 0, "dvora", 2, 1)], explored="sight")
    e = refused(fog, {"units": [{"unit": "s", "order": "move", "tile": {"x": 9, "y": 1}}]})  # unexplored
    assert isinstance(e, IllegalOrder) and e.rule == "A72"
    assert GAME.check_standing(st, 0, {"units": [{"unit": "s", "order": "move", "tile": {"x": 9, "y": 1}}]})


@pytest.mark.parametrize(("standing", "kind", "field", "rule"), [
    ("hold", InvalidOrder, "standing", None),
    ({"stance": "hold"}, InvalidOrder, "stance", None),
    ({"posture": "reckless"}, InvalidOrder, "posture", "A71"),
    ({"units": {"a": "stay"}}, InvalidOrder, "units", None),
    ({"units": [{"unit": "a", "order": "dance"}]}, InvalidOrder, "units[0].order", None),
    ({"units": [{"unit": "a", "order": "stay", "speed": 2}]}, InvalidOrder, "units[0].speed", None),
    ({"units": [{"unit": "a", "order": "stay", "tile": {"x": 1, "y": 1}}]}, InvalidOrder, "units[0].tile", None),
    ({"units": [{"unit": "a", "order": "move"}]}, InvalidOrder, "units[0].tile", None),
    ({"units": [{"unit": "a", "order": "guard"}]}, InvalidOrder, "units[0].tile", None),
    ({"units": [{"unit": "s", "order": "patrol", "waypoints": [{"x": 3, "y": 1}, {"x": 3, "y": 1}]}]},
     IllegalOrder, "units[0].waypoints[1]", "A72"),
    ({"units": [{"unit": "s", "order": "patrol", "waypoints": [{"x": 3, "y": 1 + k % 2} for k in range(11)]}]},
     IllegalOrder, "units[0].waypoints[10]", "A72"),
    ({"units": [{"unit": "a", "order": "stay"}, {"unit": "a", "order": "stay"}]}, IllegalOrder,
     "units[1].unit", "A72"),
    ({"units": [{"unit": "m", "order": "guard", "tile": {"x": 0, "y": 1}}]}, IllegalOrder, "units[0].order", "A72"),
    ({"units": [{"unit": "s", "order": "escort", "target": "s"}]}, IllegalOrder, "units[0].target", "A72"),
    ({"units": [{"unit": "s", "order": "hunt", "target": "nobody"}]}, IllegalOrder, "units[0].target", "A72"),
    ({"build_queue": [{"type": "flag"}]}, InvalidOrder, "build_queue[0].type", "A73"),
    ({"build_queue": [{"type": "battleship"}]}, InvalidOrder, "build_queue[0].type", "A73"),
    ({"build_queue": [{"type": "landmine"}]}, InvalidOrder, "build_queue[0].tile", None),
    ({"build_queue": [{"type": "rank1", "tile": {"x": 0, "y": 0}}]}, InvalidOrder, "build_queue[0].tile", None),
    ({"build_queue": [{"type": "landmine", "tile": {"x": 5, "y": 1}}]}, IllegalOrder, "build_queue[0].tile", "A42"),
    ({"build_queue": [{"type": "raft", "ship": "a"}]}, IllegalOrder, "build_queue[0].ship", "A33"),
    ({"bonus": "gold"}, InvalidOrder, "bonus", None),
    ({"bank_rules": [{"give": "wood", "get": "wood", "keep": 1}]}, InvalidOrder, "bank_rules[0].get", "A74"),
    ({"bank_rules": [{"give": "wood", "get": "iron", "keep": -1}]}, InvalidOrder, "bank_rules[0].keep", None),
    ({"accept_rules": [{"max_ratio": 0}]}, InvalidOrder, "accept_rules[0].max_ratio", "A74"),
    ({"accept_rules": [{"max_ratio": "1"}]}, InvalidOrder, "accept_rules[0].max_ratio", "A74"),
    ({"accept_rules": [{"max_ratio": 1}] * 5}, IllegalOrder, "accept_rules[4]", "A74"),
])
def test_a72_a74_malformed_standing_orders_are_refused(standing: Any, kind: type, field: str,
                                                       rule: str | None) -> None:
    e = refused(small(), standing)
    assert type(e) is kind and e.field == field and e.rule == rule, e


def test_salvo_accepts_only_empty_standing_orders() -> None:
    st = SALVO.new_game({"players": 2}, 1)
    salvo = standing_of(SALVO)  # Salvo has none: engine.base.NoStanding
    assert salvo.check_standing(st, 0, {}) == {}
    with pytest.raises(InvalidOrder) as e:
        salvo.check_standing(st, 0, {"posture": "hold"})
    assert e.value.field == "posture"
    v = SALVO.view(st, 0)
    assert salvo.standing_actions(v, {}) == [] and salvo.standing_after_round({}, {}) == {}
    assert salvo.complete_orders(v, {}, {"random_placement": True}) == {"random_placement": True}


# -- A70: the view and nothing else -------------------------------------------------------------------

def unseen_enemy(st: State, player: int) -> tuple[str, Tile] | None:
    """An enemy unit the player does not see, and an empty tile of its terrain the player does not see."""
    v = GAME.view(st, player)
    seen = {(t["x"], t["y"]) for t in v["visible"]}
    taken = {u.tile for u in st.units.values()}
    for uid in sorted(st.units):
        u = st.units[uid]
        if u.owner == player or u.carrier is not None or u.tile in seen or u.cargo or u.flag:
            continue
        land = u.tile in st.board.land
        for y in range(st.board.height):
            for x in range(st.board.width):
                t = (x, y)
                if t not in seen and t not in taken and (t in st.board.land) == land and t not in st.outposts:
                    if UNIT_TYPES[u.type].domain != "land" or st.board.home_owner(t) in (None, u.owner):
                        return uid, t
    return None


def test_a70_the_autopilot_cannot_use_hidden_information() -> None:
    standing = {"posture": "aggressive", "build_queue": [{"type": "rank5"}, {"type": "dvora"}],
                "bank_rules": [{"give": "wood", "get": "iron", "keep": 1}], "accept_rules": [{"max_ratio": 1}]}
    checked = 0
    for seed in range(1, 7):
        st = GAME.new_game({"players": 2}, seed)
        rnd = random.Random(seed)
        for _ in range(rnd.randint(4, 12)):
            st, _ = GAME.resolve(st, {p: GAME.random_orders(GAME.view(st, p), rnd.randint(0, 9999))
                                      for p in range(2)})
        found = unseen_enemy(st, 0)
        if found is None:
            continue
        uid, t = found
        other = st.clone()
        other.units[uid].tile = t  # the unseen enemy stands elsewhere...
        other.pstates[1].stock = {r: n + 7 for r, n in other.pstates[1].stock.items()}  # ...and is richer
        assert state_hash(other) != state_hash(st)
        v1, v2 = GAME.view(st, 0), GAME.view(other, 0)
        assert v1 == v2  # what player 0 may know is the same
        s = dict(standing, units=[{"unit": u["id"], "order": "hunt"} for u in v1["units"][:2]
                                  if UNIT_TYPES[u["type"]].move > 0 and u["type"] != "flag"])
        assert GAME.autopilot(v1, s) == GAME.autopilot(v2, s)
        assert GAME.standing_actions(v1, s) == GAME.standing_actions(v2, s)
        sub = GAME.random_orders(v1, seed)
        assert GAME.complete_orders(v1, s, sub) == GAME.complete_orders(v2, s, sub)
        checked += 1
    assert checked >= 3


# -- A70: always valid, deterministic -----------------------------------------------------------------

def random_standing(v: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """Random standing orders that check_standing accepts for the view's player."""
    vm = ViewMap(v)
    units: list[dict[str, Any]] = []
    own = sorted(vm.own)
    known = sorted({e["id"] for e in v["enemies"]} | {e["id"] for e in v["enemy_log"]})
    for uid in own:
        u = vm.own[uid]
        typ = u["type"]
        ut = UNIT_TYPES[typ]
        if rnd.random() < 0.4 or (typ == "flag" and "carrier" in u):
            continue
        if ut.move == 0:
            units.append({"unit": uid, "order": "stay"})
            continue
        start = (u["tile"]["x"], u["tile"]["y"])
        reach = [t for t in vm.reachable(typ, start, 12) if t != start]
        kinds = ["stay", "escort"] + (["move", "patrol"] if reach else [])
        if typ != "flag":
            kinds += ["hunt", "guard", "guard"]
        kind = rnd.choice(kinds)
        e: dict[str, Any] = {"unit": uid, "order": kind}
        if kind in ("move", "guard") and reach and (kind == "move" or rnd.random() < 0.5 or typ == "flag"):
            e["tile"] = {"x": (t := rnd.choice(reach))[0], "y": t[1]}
        elif kind == "guard":
            e["target"] = rnd.choice(own)
        elif kind == "escort":
            others = [x for x in own if x != uid]
            if not others:
                continue
            e["target"] = rnd.choice(others)
        elif kind == "hunt" and known and rnd.random() < 0.6:
            e["target"] = rnd.choice(known)
        elif kind == "patrol":
            pts = rnd.sample([start, *reach], min(len(reach) + 1, rnd.randint(2, 4)))
            if len(pts) < 2:
                continue
            e["waypoints"] = [{"x": x, "y": y} for x, y in pts]
        if kind == "guard" and "tile" not in e and "target" not in e:
            continue
        units.append(e)
    queue: list[dict[str, Any]] = []
    control = sorted(vm.control)
    ships = [uid for uid in own if UNIT_TYPES[vm.own[uid]["type"]].is_ship and vm.own[uid]["type"] != "raft"]
    for _ in range(rnd.randint(0, 8)):
        typ = rnd.choice([k for k, t in UNIT_TYPES.items() if t.buildable])
        b: dict[str, Any] = {"type": typ}
        if typ == "landmine":
            if not control:
                continue
            t = rnd.choice(control)
            b["tile"] = {"x": t[0], "y": t[1]}
        elif typ == "seamine":
            sea = sorted({(c[0] + dx, c[1] + dy) for c in control for dx, dy in ((0, 1), (1, 0), (0, -1), (-1, 0))
                          if vm.terrain((c[0] + dx, c[1] + dy)) == "."})
            if not sea:
                continue
            t = rnd.choice(sea)
            b["tile"] = {"x": t[0], "y": t[1]}
        elif typ == "raft":
            if not ships:
                continue
            b["ship"] = rnd.choice(ships)
        queue.append(b)
    give, get = rnd.sample(list(RESOURCES), 2)
    return {"posture": rnd.choice(["hold", "defensive", "balanced", "aggressive", "aggressive"]),
            "units": units, "build_queue": queue, "bonus": rnd.choice(RESOURCES),
            "bank_rules": [{"give": give, "get": get, "keep": rnd.randint(0, 6)}] if rnd.random() < 0.5 else [],
            "accept_rules": [{"max_ratio": rnd.choice([0.5, 1, 2.5])}] if rnd.random() < 0.5 else []}


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (2, 2), (2, 3), (3, 4), (3, 5), (4, 6)])
def test_a70_autopilot_and_completed_orders_always_validate(players: int, seed: int) -> None:
    """Seeded games: each round every seat gets fresh random standing orders now and then (kept,
    going stale, in between); the standing actions are applied, then the autopilot's orders (or a
    random submission completed by the standing orders) must validate and are played."""
    rnd = random.Random(seed)
    st = GAME.new_game({"players": players, "max_rounds": 30}, seed)
    standing: dict[int, dict[str, Any]] = {}
    rounds = trades = 0
    while GAME.outcome(st) is None:
        orders: dict[int, dict[str, Any]] = {}
        for p in range(players):  # offers, so that accept rules have something to judge
            give = sorted(r for r, n in st.pstates[p].stock.items() if n > 0)
            if rnd.random() < 0.5 and give:
                to = rnd.choice([q for q in range(players) if q != p] + [None])
                got = {rnd.choice(RESOURCES): rnd.randint(1, 2)}
                st, _ = GAME.act(st, p, {"offer": {"to": to, "give": {rnd.choice(give): 1}, "get": got}})
        accepted = 0
        for p in range(players):
            v = GAME.view(st, p)
            if p not in standing or rnd.random() < 0.25:
                raw = random_standing(v, rnd)
                standing[p] = GAME.check_standing(st, p, raw)
            s = standing[p]
            for a in GAME.standing_actions(v, s):
                try:
                    st, _ = GAME.act(st, p, a)
                    accepted += "accept" in a
                except GameError as e:  # an offer taken by a seat before, or its maker fell short
                    assert e.field == "accept.offer", e
            v = GAME.view(st, p)
            if rnd.random() < 0.5:
                o = GAME.autopilot(v, s)
            else:
                sub = GAME.random_orders(v, rnd.randint(0, 10**6))
                o = GAME.complete_orders(v, s, sub)
            GAME.validate(st, p, o)
            orders[p] = o
        st, _ = GAME.resolve(st, orders)
        for p in range(players):
            standing[p] = GAME.standing_after_round(standing[p], orders[p])
        rounds += 1
        trades += accepted
    assert rounds >= 2 and trades > 0


def test_a70_the_autopilot_is_deterministic() -> None:
    st = GAME.new_game({"players": 2}, 9)
    rnd = random.Random(9)
    for _ in range(6):
        st, _ = GAME.resolve(st, {p: GAME.random_orders(GAME.view(st, p), rnd.randint(0, 999)) for p in range(2)})
    v = GAME.view(st, 0)
    s = random_standing(v, rnd)
    again = json.loads(json.dumps(v))
    assert GAME.autopilot(v, s) == GAME.autopilot(again, s) == GAME.autopilot(v, json.loads(json.dumps(s)))
    assert GAME.standing_actions(v, s) == GAME.standing_actions(again, s)


def test_a4_default_standing_for_autopilot_seats_is_accepted_everywhere() -> None:
    for seed in (1, 2):
        st = GAME.new_game({"players": 3}, seed)
        for p in range(3):
            d = GAME.default_standing(st, p)
            assert GAME.check_standing(st, p, d) == d and d["posture"] == "aggressive"
            assert len(d["build_queue"]) <= 20
    assert standing_of(SALVO).default_standing(SALVO.new_game({"players": 2}, 1), 0) == {}
