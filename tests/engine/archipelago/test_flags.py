"""Flags (A60–A64, A97, A98): pick-ups, drops, going home, scoring."""

from __future__ import annotations

from tests.engine.archipelago.boards import U, alive, at, fights, mv, orders, run, unit

# Player 0's home island is the 4x2 block in the top-left corner (base (0,0)); player 1's home is
# bottom-right (base (9,4)); player 2 has a one-tile home at (0,4).
F = [
    "0###......",
    "####......",
    "..........",
    "......####",
    "2.....###1",
]


def test_a61_enemy_entering_the_flag_tile_picks_it_up_and_stops() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("e", 1, "commando", 3, 1)], {1: orders(mv("e", "WN"))})
    assert at(r, "e") == (2, 0) and unit(r, "e")["flag"] == "F0"
    assert unit(r, "F0")["carrier"] == "e" and at(r, "F0") == (2, 0)


def test_a61_stops_after_pickup() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("e", 1, "commando", 3, 0)], {1: orders(mv("e", "WW"))})
    assert at(r, "e") == (2, 0) and unit(r, "e")["flag"] == "F0"


def test_a61_flag_stepping_onto_an_enemy_is_picked_up() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("e", 1, "rank1", 3, 0)], {0: orders(mv("F0", "E"))})
    assert at(r, "e") == (3, 0) and unit(r, "e")["flag"] == "F0"


def test_a97_flag_swapping_with_an_enemy_is_picked_up_in_place() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("e", 1, "rank1", 3, 0)],
            {0: orders(mv("F0", "E")), 1: orders(mv("e", "W"))})
    assert at(r, "e") == (3, 0) and unit(r, "e")["flag"] == "F0"
    assert not fights(r)


def test_a60_flag_moves_one_tile_on_its_home_island() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0)], {0: orders(mv("F0", "S"))})
    assert at(r, "F0") == (2, 1)


def test_a97_flag_step_off_its_home_island_is_held() -> None:
    r = run(F, [U("F0", 0, "flag", 3, 1)], {0: orders(mv("F0", "E"))})
    assert at(r, "F0") == (3, 1)


def test_a97_moving_flag_is_held_rather_than_step_onto_a_mine() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("m", 1, "landmine", 3, 0)], {0: orders(mv("F0", "E"))})
    assert at(r, "F0") == (2, 0) and at(r, "m") == (3, 0)


def test_a97_moving_flag_is_held_rather_than_step_onto_an_aircraft() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("g", 1, "fighter", 3, 0)], {0: orders(mv("F0", "E"))},
            control=[{"tile": {"x": 3, "y": 0}, "owner": 1}])
    assert at(r, "F0") == (2, 0) and "flag" not in unit(r, "g")


def test_a97_moving_flag_is_held_rather_than_step_onto_another_flag() -> None:
    r = run(F, [U("F0", 0, "flag", 2, 0), U("F1", 1, "flag", 3, 0)], {0: orders(mv("F0", "E"))})
    assert at(r, "F0") == (2, 0) and at(r, "F1") == (3, 0)


def test_a62_own_unit_entering_its_dropped_flag_sends_it_home_and_does_not_stop() -> None:
    r = run(F, [U("F0", 0, "flag", 3, 1), U("a", 0, "commando", 3, 0)], {0: orders(mv("a", "SW"))})
    assert at(r, "F0") == (0, 0)
    assert at(r, "a") == (2, 1)


def test_a62_overrides_friendly_blocking() -> None:
    r = run(F, [U("F0", 0, "flag", 3, 1), U("a", 0, "rank1", 3, 0)], {0: orders(mv("a", "S"))})
    assert at(r, "a") == (3, 1) and at(r, "F0") == (0, 0)


def test_a97_bearer_killed_entering_drops_the_flag_for_the_surviving_enemy() -> None:
    # e (player 1) carries player 0's flag into (2,1) held by player 2's rank5: e dies, c picks it up.
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 3, 1, flag="F0"), U("c", 2, "rank5", 2, 1)]
    r = run(F, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "e")
    assert unit(r, "c")["flag"] == "F0" and at(r, "F0") == (2, 1)


def test_a97_owners_unit_killing_the_bearer_sends_the_flag_home() -> None:
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 3, 1, flag="F0"), U("a", 0, "rank5", 2, 1)]
    r = run(F, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "e") and at(r, "F0") == (0, 0) and "carrier" not in unit(r, "F0")


def test_a97_bearer_killed_entering_with_no_survivor_sends_the_flag_home() -> None:
    units = [U("F0", 0, "flag"), U("e", 1, "rank2", 3, 1, flag="F0"), U("c", 2, "rank2", 2, 1)]
    r = run(F, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "e") and not alive(r, "c")
    assert at(r, "F0") == (0, 0)


def test_a61_bearer_killed_on_land_drops_the_flag_where_it_stood() -> None:
    # a defending bearer dies in a tie: the flag lies on its tile
    units = [U("F0", 0, "flag"), U("e", 1, "rank2", 3, 1, flag="F0"), U("c", 2, "rank2", 2, 1)]
    r = run(F, units, {2: orders(mv("c", "E"))})
    assert not alive(r, "e") and not alive(r, "c")
    assert at(r, "F0") == (3, 1) and "carrier" not in unit(r, "F0")


def test_a61_bearer_killed_at_sea_sends_the_flag_home() -> None:
    units = [U("F0", 0, "flag"), U("s", 1, "dvora", 5, 2, cargo=["e"]), U("e", 1, "rank1", flag="F0"),
             U("d", 0, "saar45", 4, 2)]
    r = run(F, units, {0: orders(mv("d", "E"))})
    assert not alive(r, "s") and not alive(r, "e")
    assert at(r, "F0") == (0, 0)


def test_a97_a_unit_carries_at_most_one_flag() -> None:
    # A103: a bearer is held rather than enter a tile holding another enemy flag
    units = [U("F0", 0, "flag", 2, 1), U("F2", 2, "flag"), U("e", 1, "rank1", 3, 1, flag="F2")]
    r = run(F, units, {1: orders(mv("e", "W"))})
    assert at(r, "e") == (3, 1) and unit(r, "e")["flag"] == "F2"
    assert at(r, "F0") == (2, 1) and "carrier" not in unit(r, "F0")


def test_a100_flag_held_by_a_staying_bearer_that_dies_in_the_same_substep() -> None:
    # fa (player 0's) is ordered onto (3,1), where the bearer e (carrying fb) stays: the flag is
    # held (A100).  c, player 2's own unit, enters: fb goes home first (A102), then e and c die
    # in a tie; fa does not move into the tile the bearer left by dying.
    units = [U("fa", 0, "flag", 2, 1), U("fb", 2, "flag"), U("e", 1, "rank1", 3, 1, flag="fb"),
             U("c", 2, "rank1", 3, 0)]
    r = run(F, units, {0: orders(mv("fa", "E")), 2: orders(mv("c", "S"))})
    assert not alive(r, "e") and not alive(r, "c")
    assert at(r, "fa") == (2, 1)
    assert at(r, "fb") == (0, 4)  # player 2's base


def test_a63_bearer_on_its_own_base_scores_five_and_the_flag_goes_home() -> None:
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 8, 4, flag="F0")]
    r = run(F, units, {1: orders(mv("e", "E"))}, scores={"0": 3, "1": 1})
    assert r["scores"] == {"0": 0, "1": 6, "2": 0}
    assert at(r, "F0") == (0, 0) and "flag" not in unit(r, "e")


def test_a63_flag_owner_loses_five() -> None:
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 8, 4, flag="F0")]
    r = run(F, units, {1: orders(mv("e", "E"))}, scores={"0": 8})
    assert r["scores"]["0"] == 3


def test_a63_bearer_as_cargo_on_its_base_tile_does_not_score() -> None:
    # a bearer standing elsewhere does not score
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 8, 4, flag="F0")]
    r = run(F, units, {}, scores={"0": 8})
    assert r["scores"]["0"] == 8 and unit(r, "e")["flag"] == "F0"


def test_a64_flag_goes_home_to_the_nearest_empty_home_tile_when_the_base_is_taken() -> None:
    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 8, 4, flag="F0"), U("b", 0, "rank1", 0, 0)]
    r = run(F, units, {1: orders(mv("e", "E"))})
    assert at(r, "F0") == (1, 0)  # distance 1: E before S (A28)
    units.append(U("c", 0, "rank1", 1, 0))
    r = run(F, units, {1: orders(mv("e", "E"))})
    assert at(r, "F0") == (0, 1)


def test_a97_flag_stepping_onto_a_staying_enemy_bearer_is_held() -> None:
    # A100: a flag bearer staying on the tile holds a moving flag (it cannot carry a second one)
    units = [U("F0", 0, "flag", 2, 1), U("F2", 2, "flag"), U("e", 1, "rank1", 3, 1, flag="F2")]
    r = run(F, units, {0: orders(mv("F0", "E"))})
    assert unit(r, "e")["flag"] == "F2" and at(r, "F0") == (2, 1)


def test_a98_going_home_falls_back_to_the_nearest_empty_land_tile() -> None:
    # player 2's home island is the single base tile (0,4): when it is occupied the flag goes to the
    # nearest empty land anywhere; from (0,4) that is (0,1)? no: distance 3 (0,1) vs ... compute.
    units = [U("F2", 2, "flag"), U("e", 1, "rank1", 8, 4, flag="F2"), U("b", 2, "rank1", 0, 4)]
    r = run(F, units, {1: orders(mv("e", "E"))})
    # land tiles nearest to (0,4): (0,1) at distance 3 (N steps only) beats (1,1) at distance 4
    assert at(r, "F2") == (0, 1)


def test_a61_a_carried_flag_does_not_move() -> None:
    from engine.archipelago import GAME
    from engine.errors import IllegalOrder
    from tests.engine.archipelago.boards import state

    units = [U("F0", 0, "flag"), U("e", 1, "rank1", 2, 0, flag="F0")]
    r = run(F, units, {0: orders(mv("F0", "S"))})
    assert at(r, "F0") == (2, 0) and unit(r, "F0")["carrier"] == "e"
    st = state(F, units)
    try:
        GAME.validate(st, 0, orders(mv("F0", "S")))
    except IllegalOrder as e:
        assert e.rule == "A61"
    else:
        raise AssertionError("a carried flag's move was accepted")


def test_a34_aircraft_landing_on_a_lying_flag_leaves_it_there() -> None:
    units = [U("F0", 0, "flag", 2, 1), U("g", 1, "fighter", 0, 3)]
    r = run(F, units, {1: orders(mv("g", "NNEE"))})
    assert at(r, "F0") == (2, 1) and "carrier" not in unit(r, "F0")
    assert not alive(r, "g")  # not its own land, not alone


def test_a99_a_flag_pickup_reveals_nothing() -> None:
    from tests.engine.archipelago.boards import resolve_st

    st, ev = resolve_st(F, [U("F0", 0, "flag", 2, 0), U("e", 1, "commando", 3, 0)], {1: orders(mv("e", "W"))})
    assert st.units["e"].flag == "F0"
    assert "e" not in st.pstates[0].revealed
    taken = [x for x in ev if x["kind"] == "flag_taken"]
    assert taken and all(u.get("type") != "commando" for u in taken[0]["units"])
    assert not [x for x in ev if x["kind"] == "fight"]
