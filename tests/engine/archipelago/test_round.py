"""Actions, economy and the end of a round (A19, A21, A36–A42, A47–A51, A65–A67)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.archipelago.orders import parse_orders
from engine.errors import IllegalOrder
from tests.engine.archipelago.boards import U, alive, at, orders, resolve_st, run, state

# Player 0's home: the 3x2 block top-left, base (2,0) on the coast; a 3-tile ring island on row 3
# with wood in the middle; player 1's home bottom-right, base (7,5).
R = [
    "##0.......",
    "###.......",
    "..........",
    "...#w#....",
    "..........",
    ".......1##",
]
NONE = {"wood": 0, "food": 0, "iron": 0, "fuel": 0}


def act(uid: str, action: str, target: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"unit": uid, "action": action}
    if target is not None:
        d["target"] = target
    return d


# -- A36 outposts -------------------------------------------------------------------------------

def test_a36_outpost_is_founded_and_paid() -> None:
    st, ev = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: orders(act("a", "outpost"), bonus="fuel")},
                        stocks={"0": {"food": 1, "wood": 1}})
    assert st.outposts == {(3, 3): 0}
    assert st.pstates[0].stock["food"] == 0 and st.pstates[0].stock["wood"] == 0
    assert "outpost" in [e["kind"] for e in ev]


def test_a36_no_outpost_on_own_home_island() -> None:
    st, _ = resolve_st(R, [U("a", 0, "rank1", 1, 1)], {0: orders(act("a", "outpost"))},
                       stocks={"0": {"food": 1, "wood": 1}})
    assert st.outposts == {}
    s0 = state(R, [U("a", 0, "rank1", 1, 1)], stocks={"0": {"food": 1, "wood": 1}})
    with pytest.raises(IllegalOrder) as e:
        parse_orders(s0, 0, orders(act("a", "outpost")), strict=True)
    assert e.value.rule == "A36" and "a" in str(e.value)


def test_a36_founder_must_be_alive_at_the_outposts_step() -> None:
    units = [U("a", 0, "rank1", 3, 3), U("e", 1, "rank5", 3, 4)]
    board = [*R[:4], "...#......", R[5]]
    st, _ = resolve_st(board, units, {0: orders(act("a", "outpost")), 1: orders({"unit": "e", "path": ["N"]})},
                       stocks={"0": {"food": 1, "wood": 1}})
    assert st.outposts == {} and st.pstates[0].stock["food"] == 1


def test_a36_one_outpost_per_tile() -> None:
    st, _ = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: orders(act("a", "outpost"))},
                       stocks={"0": {"food": 1, "wood": 1}}, outposts=[{"tile": [3, 3], "owner": 1}])
    assert st.outposts == {(3, 3): 0}  # not a new outpost: player 1's was captured by a (A47)
    assert st.pstates[0].stock["food"] == 1


def test_a36_outpost_unaffordable_at_resolution_is_skipped() -> None:
    st, ev = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: orders(act("a", "outpost"))},
                        stocks={"0": {"food": 1}})
    assert st.outposts == {} and "outpost_skipped" in [e["kind"] for e in ev]


# -- A37 bombardment ------------------------------------------------------------------------------

def test_a37_bombardment_destroys_a_weaker_land_unit() -> None:
    r = run(R, [U("s", 0, "saar6", 3, 2), U("x", 1, "rank3", 3, 3)], {0: orders(act("s", "bombard", "x"))})
    assert not alive(r, "x") and at(r, "s") == (3, 2)


def test_a37_bombardment_of_a_stronger_unit_only_reveals_it() -> None:
    st, _ = resolve_st(R, [U("s", 0, "saar6", 3, 2), U("x", 1, "rank7", 3, 3)],
                       {0: orders(act("s", "bombard", "x"))})
    assert "x" in st.units and "x" in st.pstates[0].revealed
    assert "s" not in st.pstates[1].revealed


def test_a37_bombardment_of_a_mine_reveals_it() -> None:
    st, _ = resolve_st(R, [U("s", 0, "saar6", 3, 2), U("m", 1, "landmine", 3, 3)],
                       {0: orders(act("s", "bombard", "m"))})
    assert "m" in st.units and "m" in st.pstates[0].revealed


def test_a37_only_warships_bombard() -> None:
    s0 = state(R, [U("s", 0, "submarine", 3, 2), U("x", 1, "rank1", 3, 3)])
    with pytest.raises(IllegalOrder) as e:
        parse_orders(s0, 0, orders(act("s", "bombard", "x")), strict=True)
    assert e.value.rule == "A37"


# -- A38 air strikes --------------------------------------------------------------------------------

def test_a38_air_strike_spends_fuel_and_destroys_a_ship() -> None:
    units = [U("f", 0, "fighter", 1, 1), U("x", 1, "saar6", 3, 1)]
    st, _ = resolve_st(R, units, {0: orders(act("f", "strike", "x"))}, stocks={"0": {"fuel": 2}})
    assert "x" not in st.units and st.pstates[0].stock["fuel"] == 1


def test_a38_air_strike_needs_fuel() -> None:
    units = [U("f", 0, "fighter", 1, 1), U("x", 1, "saar6", 3, 1)]
    st, _ = resolve_st(R, units, {0: orders(act("f", "strike", "x"))})
    assert "x" in st.units


@pytest.mark.parametrize("typ", ["submarine", "fighter", "landmine", "seamine"])
def test_a38_air_strike_does_not_harm_mines_submarines_or_aircraft(typ: str) -> None:
    tile = (2, 2) if typ in ("submarine", "seamine") else (1, 0)
    units = [U("f", 0, "fighter", 1, 1), U("x", 1, typ, *tile), U("w", 0, "rank1", 2, 1)]
    st, _ = resolve_st(R, units, {0: orders(act("f", "strike", "x"))}, stocks={"0": {"fuel": 1}},
                       control=[{"tile": [1, 1], "owner": 0}, {"tile": [1, 0], "owner": 1}])
    assert "x" in st.units and "x" in st.pstates[0].revealed
    assert st.pstates[0].stock["fuel"] == 0


def test_a38_air_strike_target_must_be_visible() -> None:
    units = [U("f", 0, "fighter", 1, 1), U("x", 1, "rank1", 5, 3)]
    s0 = state(R, units, stocks={"0": {"fuel": 1}})
    with pytest.raises(IllegalOrder) as e:
        parse_orders(s0, 0, orders(act("f", "strike", "x")), strict=True)
    assert e.value.rule == "A38"
    st, _ = resolve_st(R, units, {0: orders(act("f", "strike", "x"))}, stocks={"0": {"fuel": 1}})
    assert "x" in st.units and st.pstates[0].stock["fuel"] == 1


# -- A39 spies, A40 simultaneous actions, A21 order ------------------------------------------------

def test_a39_spy_reveals_a_unit_within_distance_two_for_its_owner() -> None:
    units = [U("s", 0, "spy", 3, 3), U("x", 1, "rank9", 5, 3)]
    st, _ev = resolve_st(R, units, {0: orders(act("s", "reveal", "x"))})
    assert "x" in st.pstates[0].revealed and "s" not in st.pstates[1].revealed
    assert st.pstates[0].log["x"][2] == "rank9"


def test_a39_reveal_lasts_while_the_unit_lives() -> None:
    units = [U("s", 0, "spy", 3, 3), U("x", 1, "rank1", 5, 3), U("k", 0, "rank5", 5, 4)]
    board = [*R[:4], ".....#....", R[5]]
    st, _ = resolve_st(board, units, {0: orders(act("s", "reveal", "x"), {"unit": "k", "path": ["N"]})})
    assert "x" not in st.units and "x" not in st.pstates[0].revealed


def test_a40_a_struck_ships_own_bombardment_still_fires() -> None:
    units = [U("f", 0, "fighter", 1, 1), U("b", 1, "saar6", 3, 1), U("y", 0, "rank3", 2, 1)]
    st, _ = resolve_st(R, units, {0: orders(act("f", "strike", "b")), 1: orders(act("b", "bombard", "y"))},
                       stocks={"0": {"fuel": 1}})
    assert "b" not in st.units and "y" not in st.units


def test_a21_actions_use_start_of_round_positions() -> None:
    units = [U("s", 0, "saar6", 3, 2), U("x", 1, "rank3", 3, 3)]
    r = run(R, units, {0: orders(act("s", "bombard", "x")), 1: orders({"unit": "x", "path": ["E"]})})
    assert not alive(r, "x")


def test_a19_a_unit_with_an_action_does_not_move() -> None:
    s0 = state(R, [U("a", 0, "rank1", 3, 3)], stocks={"0": {"food": 1, "wood": 1}})
    p = parse_orders(s0, 0, orders(act("a", "outpost")), strict=True)
    assert p.moves == {} and "a" in p.actions
    r = run(R, [U("a", 0, "rank1", 3, 3)], {0: orders(act("a", "outpost"))}, stocks={"0": {"food": 1, "wood": 1}})
    assert at(r, "a") == (3, 3)


# -- A42 builds, A41 stocks ---------------------------------------------------------------------------

def build(typ: str, **kw: Any) -> dict[str, Any]:
    return {"type": typ, **kw}


def test_a42_new_land_unit_appears_on_the_base() -> None:
    st, _ = resolve_st(R, [], {0: {"builds": [build("rank1")], "bonus": "fuel"}}, stocks={"0": {"food": 1}})
    new = [u for u in st.units.values() if u.owner == 0]
    assert [(u.type, u.tile) for u in new] == [("rank1", (2, 0))]


def test_a42_base_taken_unit_appears_on_the_nearest_empty_home_tile() -> None:
    st, _ = resolve_st(R, [U("a", 0, "rank1", 2, 0)], {0: {"builds": [build("rank2")]}}, stocks={"0": {"food": 2}})
    new = [u for u in st.units.values() if u.type == "rank2"]
    # distance 1: W (1,0) and S (2,1); A28 orders N, E, S, W, so S (2,1) first
    assert [u.tile for u in new] == [(2, 1)]


def test_a42_new_ship_appears_on_a_sea_tile_next_to_the_base() -> None:
    st, _ = resolve_st(R, [], {0: {"builds": [build("dvora")]}}, stocks={"0": {"wood": 2, "iron": 1}})
    assert [(u.type, u.tile) for u in st.units.values()] == [("dvora", (3, 0))]


def test_a42_builds_are_paid_in_submission_order_and_unaffordable_ones_skipped() -> None:
    st, ev = resolve_st(R, [], {0: {"builds": [build("rank2"), build("rank1"), build("scout")]}},
                        stocks={"0": {"food": 3}})
    assert sorted(u.type for u in st.units.values()) == ["rank1", "rank2"]
    assert "build_skipped" in [e["kind"] for e in ev]
    assert st.pstates[0].stock["food"] >= 0


def test_a41_stocks_never_go_negative() -> None:
    st, _ = resolve_st(R, [], {0: {"builds": [build("rank13")]}}, stocks={"0": {"food": 7, "iron": 6}})
    assert st.units == {}
    assert all(v >= 0 for v in st.pstates[0].stock.values())


def test_a42_no_free_tile_refunds_the_build() -> None:
    units = [U(f"u{i}", 0, "rank1", x, y) for i, (x, y) in enumerate([(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)])]
    st, ev = resolve_st(R, units, {0: {"builds": [build("rank1")]}}, stocks={"0": {"food": 1}})
    assert len(st.units) == 6 and "build_refunded" in [e["kind"] for e in ev]
    assert st.pstates[0].stock["food"] >= 1


def test_a42_land_mine_goes_on_a_named_controlled_empty_tile() -> None:
    st, _ = resolve_st(R, [], {0: {"builds": [build("landmine", tile={"x": 0, "y": 1})]}}, stocks={"0": {"iron": 2}})
    assert [(u.type, u.tile) for u in st.units.values()] == [("landmine", (0, 1))]


def test_a42_mine_on_a_tile_no_longer_empty_is_refunded() -> None:
    units = [U("a", 0, "rank1", 1, 0)]
    st, ev = resolve_st(R, units, {0: {"builds": [build("landmine", tile={"x": 0, "y": 1})],
                                       "units": [{"unit": "a", "path": ["W"]}]}},
                        stocks={"0": {"iron": 2}})
    assert sorted(u.type for u in st.units.values()) == ["landmine", "rank1"]
    units = [U("a", 0, "rank1", 0, 0)]
    st, ev = resolve_st(R, units, {0: {"builds": [build("landmine", tile={"x": 0, "y": 1})],
                                       "units": [{"unit": "a", "path": ["S"]}]}},
                        stocks={"0": {"iron": 2}})
    assert [u.type for u in st.units.values()] == ["rank1"]
    assert st.pstates[0].stock["iron"] == 2 and "build_refunded" in [e["kind"] for e in ev]


def test_a42_sea_mine_goes_next_to_controlled_land() -> None:
    st, _ = resolve_st(R, [], {0: {"builds": [build("seamine", tile={"x": 3, "y": 1})]}},
                       stocks={"0": {"wood": 1, "iron": 2}})
    assert [(u.type, u.tile) for u in st.units.values()] == [("seamine", (3, 1))]
    st, _ = resolve_st(R, [], {0: {"builds": [build("seamine", tile={"x": 5, "y": 1})]}},
                       stocks={"0": {"wood": 1, "iron": 2}})
    assert st.units == {}


def test_a42_at_most_one_rav_aluf_counting_living_and_pending() -> None:
    s0 = state(R, [U("g", 0, "rank13", 0, 0)], stocks={"0": {"food": 14, "iron": 14}})
    with pytest.raises(IllegalOrder) as e:
        parse_orders(s0, 0, {"builds": [build("rank13")]}, strict=True)
    assert e.value.rule == "A42"
    s1 = state(R, [], stocks={"0": {"food": 14, "iron": 14}})
    with pytest.raises(IllegalOrder):
        parse_orders(s1, 0, {"builds": [build("rank13"), build("rank13")]}, strict=True)
    st, _ = resolve_st(R, [], {0: {"builds": [build("rank13"), build("rank13")]}},
                       stocks={"0": {"food": 14, "iron": 14}})
    assert [u.type for u in st.units.values()] == ["rank13"]


def test_a33_raft_joins_its_named_ship() -> None:
    st, _ = resolve_st(R, [U("s", 0, "dvora", 3, 1)], {0: {"builds": [build("raft", ship="s")]}},
                       stocks={"0": {"wood": 1}})
    assert st.units["s"].raft and st.pstates[0].stock["wood"] == 0


def test_a33_raft_for_a_ship_that_died_this_round_is_refunded() -> None:
    units = [U("s", 0, "dvora", 3, 1), U("e", 1, "saar5", 4, 1)]
    st, _ = resolve_st(R, units, {0: {"builds": [build("raft", ship="s")], "bonus": "food"},
                                  1: orders({"unit": "e", "path": ["W"]})}, stocks={"0": {"wood": 1}})
    assert "s" not in st.units and st.pstates[0].stock["wood"] == 1


# -- A47 / A48 control, A50 production, A51 bonus --------------------------------------------------

def test_a47_land_unit_controls_its_tile_then_outpost_then_home_owner() -> None:
    units = [U("a", 0, "rank1", 3, 3), U("e", 1, "rank1", 0, 0)]
    st, _ = resolve_st(R, units, {}, outposts=[{"tile": [5, 3], "owner": 1}])
    assert st.control[(3, 3)] == 0
    assert st.control[(5, 3)] == 1
    assert (4, 3) not in st.control
    assert st.control[(0, 0)] == 1  # enemy land unit on a home tile
    assert st.control[(1, 0)] == 0


def test_a47_mines_and_flags_never_control() -> None:
    units = [U("m", 1, "landmine", 0, 0), U("F", 1, "flag", 3, 3)]
    st, _ = resolve_st(R, units, {})
    assert st.control[(0, 0)] == 0 and (3, 3) not in st.control


def test_a47_enemy_alone_on_an_outpost_captures_it() -> None:
    st, ev = resolve_st(R, [U("e", 1, "rank1", 3, 3)], {}, outposts=[{"tile": [3, 3], "owner": 0}])
    assert st.outposts == {(3, 3): 1}
    assert "outpost_captured" in [e["kind"] for e in ev]


def test_a48_island_controlled_by_more_than_half() -> None:
    from engine.archipelago.resolve import island_controller

    st = state(R, [U("a", 0, "rank1", 3, 3), U("b", 0, "rank1", 4, 3)])
    assert island_controller(st, ((3, 3), (4, 3), (5, 3))) == 0
    st = state(R, [U("a", 0, "rank1", 3, 3)])
    assert island_controller(st, ((3, 3), (4, 3), (5, 3))) is None
    assert island_controller(st, ((3, 3), (4, 3))) is None  # 50/50 is nobody's


def test_a50_production_yields_controlled_resource_tiles() -> None:
    st, _ = resolve_st(R, [U("a", 0, "rank1", 4, 3)], {0: {"bonus": "fuel"}})
    assert st.pstates[0].stock == {"wood": 1, "food": 0, "iron": 0, "fuel": 0}


def test_a51_bonus_for_a_tile_gained_outside_the_home_island() -> None:
    st, _ev = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: {"bonus": "iron"}},
                        control=[{"tile": [x, y], "owner": 0} for x in range(3) for y in range(2)])
    assert st.pstates[0].stock["iron"] == 1
    st, _ = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: {"bonus": "iron"}})
    assert st.pstates[0].stock["iron"] == 0  # already controlled at the start of the round


def test_a51_default_bonus_is_the_resource_held_least() -> None:
    from engine.archipelago.resolve import default_bonus

    assert default_bonus({"wood": 2, "food": 1, "iron": 1, "fuel": 3}) == "food"
    assert default_bonus({"wood": 0, "food": 0, "iron": 0, "fuel": 0}) == "wood"
    st, _ = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {}, stocks={"0": {"wood": 2, "food": 2, "iron": 1, "fuel": 1}},
                       control=[])
    assert st.pstates[0].stock["iron"] == 2


def test_a51_bonus_choice_stands_for_later_rounds() -> None:
    st, _ = resolve_st(R, [], {0: {"bonus": "fuel"}})
    assert st.pstates[0].bonus == "fuel"


# -- A65 scoring, A66 first big build, A67 end ------------------------------------------------------

def test_a65_ring_island_scores_two_and_outposts_one() -> None:
    units = [U("a", 0, "rank1", 3, 3), U("b", 0, "rank1", 4, 3)]
    st, _ = resolve_st(R, units, {}, outposts=[{"tile": [5, 3], "owner": 1}])
    assert st.pstates[0].score == 2 and st.pstates[1].score == 1


def test_a65_centre_island_scores_three() -> None:
    units = [U("a", 0, "rank1", 3, 3), U("b", 0, "rank1", 4, 3)]
    st, _ = resolve_st(R, units, {}, islands=[{"tile": [4, 3], "kind": "centre"}])
    assert st.pstates[0].score == 3


def test_a66_first_big_build_scores_once_per_game() -> None:
    res = {"wood": 9, "iron": 9}
    st, _ = resolve_st(R, [], {0: {"builds": [build("shaldag")]}, 1: {"builds": [build("shaldag")]}},
                       stocks={"0": res, "1": res})
    assert (st.pstates[0].score, st.pstates[1].score) == (1, 1) and st.a66_done
    st, _ = resolve_st(R, [], {0: {"builds": [build("shaldag")]}}, stocks={"0": res}, a66_done=True)
    assert st.pstates[0].score == 0
    st, _ = resolve_st(R, [], {0: {"builds": [build("dvora")]}}, stocks={"0": res})
    assert st.pstates[0].score == 0 and not st.a66_done


def test_a67_game_ends_when_a_player_reaches_the_target() -> None:
    units = [U("a", 0, "rank1", 3, 3), U("b", 0, "rank1", 4, 3)]
    st, _ev = resolve_st(R, units, {}, scores={"0": 8})
    assert st.outcome is not None and st.outcome["winners"] == [0]
    assert st.outcome["reason"] == "target"
    st, _ = resolve_st(R, units, {}, scores={"0": 7})
    assert st.outcome is None


def test_a67_ties_break_on_flags_captured_then_controlled_tiles() -> None:
    from engine.archipelago.resolve import decide

    st = state(R, [U("a", 0, "rank1", 3, 3)], scores={"0": 10, "1": 10})
    out = decide(st, "target")
    assert out["winners"] == [0]  # 7 tiles against 3
    st.pstates[1].flags_captured = 1
    assert decide(st, "target")["winners"] == [1]
    st = state(R, [], scores={"0": 10, "1": 10}, control=[])
    assert decide(st, "target")["winners"] == [0, 1]  # shared win


def test_a67_game_ends_after_max_rounds() -> None:
    st, _ = resolve_st(R, [], {}, round=60)
    assert st.outcome is not None and st.outcome["reason"] == "max_rounds"
    st, _ = resolve_st(R, [], {}, round=59)
    assert st.outcome is None


def test_a21_round_steps_run_in_order_outpost_then_control_then_scoring() -> None:
    # the outpost founded this round already scores (+1) at this round's scoring step
    st, _ = resolve_st(R, [U("a", 0, "rank1", 3, 3)], {0: orders(act("a", "outpost"))},
                       stocks={"0": {"food": 1, "wood": 1}})
    assert st.pstates[0].score == 1
