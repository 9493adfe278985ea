"""Movement and combat (A21–A35, A43, A91–A99), one situation per test, boards drawn in the test.

Legend: "." sea, "#" land, digits are the players' bases (land).  Coordinates are (x, y), x the
column, y the row from the top.
"""

from __future__ import annotations

from tests.engine.archipelago.boards import U, alive, at, fights, kinds, mv, orders, run, unit

# A neutral land strip on row 2 between sea rows; homes in the corners.
STRIP = [
    "0#........",
    "..........",
    "##########",
    "..........",
    "........#1",
]


# -- A25(c) entering and A29 duels --------------------------------------------------------------

def test_a29_higher_strength_wins_when_entering() -> None:
    r = run(STRIP, [U("a", 0, "rank5", 2, 2), U("b", 1, "rank3", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 2)
    assert not alive(r, "b")
    assert [f["winner"] for f in fights(r)] == ["a"]


def test_a29_weaker_entrant_is_destroyed() -> None:
    r = run(STRIP, [U("a", 0, "rank3", 2, 2), U("b", 1, "rank5", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a")
    assert at(r, "b") == (3, 2)


def test_a29_equal_strength_destroys_both() -> None:
    r = run(STRIP, [U("a", 0, "rank4", 2, 2), U("b", 1, "rank4", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and not alive(r, "b")
    assert "winner" not in fights(r)[0]


def test_a29_commando_beats_rav_aluf_when_attacking() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank13", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 2) and not alive(r, "b")


def test_a29_commando_loses_to_rav_aluf_when_defending() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank13", 3, 2)], {1: orders(mv("b", "W"))})
    assert at(r, "b") == (2, 2) and not alive(r, "a")


def test_a29_commando_only_special_against_rav_aluf() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank12", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and at(r, "b") == (3, 2)


def test_a29_swap_both_attack_so_commando_beats_rav_aluf() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank13", 3, 2)],
            {0: orders(mv("a", "E")), 1: orders(mv("b", "W"))})
    assert at(r, "a") == (2, 2) and not alive(r, "b")


SEA = [
    "0#........",
    "..........",
    "..........",
    "..........",
    "........#1",
]


def test_a29_submarine_beats_any_ship_when_attacking() -> None:
    r = run(SEA, [U("a", 0, "submarine", 2, 2), U("b", 1, "saar5", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 2) and not alive(r, "b")


def test_a29_submarine_defending_follows_strength() -> None:
    r = run(SEA, [U("a", 0, "submarine", 2, 2), U("b", 1, "saar45", 3, 2)], {1: orders(mv("b", "W"))})
    assert at(r, "b") == (2, 2) and not alive(r, "a")


def test_a29_submarine_against_submarine_is_strength() -> None:
    r = run(SEA, [U("a", 0, "submarine", 2, 2), U("b", 1, "submarine", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and not alive(r, "b")


def test_a29_naval_commando_sinks_saar6_when_attacking() -> None:
    r = run(SEA, [U("a", 0, "navcommando", 2, 2), U("b", 1, "saar6", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 2) and not alive(r, "b")


def test_a29_saar6_entering_naval_commando_wins() -> None:
    r = run(SEA, [U("a", 0, "navcommando", 2, 2), U("b", 1, "saar6", 3, 2)], {1: orders(mv("b", "W"))})
    assert at(r, "b") == (2, 2) and not alive(r, "a")


def test_a11_spy_loses_a_fight_it_starts() -> None:
    r = run(STRIP, [U("a", 0, "spy", 2, 2), U("b", 1, "rank1", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and at(r, "b") == (3, 2)


def test_a11_spy_loses_when_attacked() -> None:
    r = run(STRIP, [U("a", 0, "spy", 2, 2), U("b", 1, "rank1", 3, 2)], {1: orders(mv("b", "W"))})
    assert not alive(r, "a") and at(r, "b") == (2, 2)


def test_a93_two_zero_strength_units_destroy_each_other() -> None:
    r = run(STRIP, [U("a", 0, "spy", 2, 2), U("b", 1, "spy", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and not alive(r, "b")


# -- A30 / A27 / A93 stopping --------------------------------------------------------------------

def test_a30_entrant_that_wins_holds_the_tile_and_stops() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank1", 3, 2)], {0: orders(mv("a", "EE"))})
    assert at(r, "a") == (3, 2)


def test_a93_unopposed_entrant_does_not_stop() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2)], {0: orders(mv("a", "EE"))})
    assert at(r, "a") == (4, 2)


def test_a25_swap_winner_stays_on_its_own_tile_and_stops() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("b", 1, "rank1", 3, 2)],
            {0: orders(mv("a", "EE")), 1: orders(mv("b", "W"))})
    assert at(r, "a") == (2, 2) and not alive(r, "b")


def test_a25_swap_tie_destroys_both() -> None:
    r = run(STRIP, [U("a", 0, "rank2", 2, 2), U("b", 1, "rank2", 3, 2)],
            {0: orders(mv("a", "E")), 1: orders(mv("b", "W"))})
    assert not alive(r, "a") and not alive(r, "b")


def test_a27_held_unit_drops_the_rest_of_its_path() -> None:
    # a's first step is onto sea: held at (2,2) and does not try the second step later.
    r = run(STRIP, [U("a", 0, "commando", 2, 2)], {0: orders(mv("a", "SE"))})
    assert at(r, "a") == (2, 2)
    assert "held" in kinds(r)


def test_a22_substeps_move_all_units_one_tile_at_a_time() -> None:
    # The scout (move 3) reaches (5,2) at sub-step 3; the rank1 steps into (3,2) at sub-step 1, so the
    # scout's path through (3,2) meets it there at sub-step 1 (both entering the empty (3,2)).
    r = run(STRIP, [U("s", 0, "scout", 2, 2), U("b", 1, "rank1", 4, 2)],
            {0: orders(mv("s", "EEE")), 1: orders(mv("b", "W"))})
    assert not alive(r, "s") and not alive(r, "b")  # 1 vs 1 on the empty tile (3,2)


def test_a22_units_without_steps_left_are_plain_occupants() -> None:
    # b's path ends after sub-step 1 at (4,2); the commando arrives there at sub-step 2 and fights
    # b as the occupant of (4,2) (attacking the Rav-Aluf, it wins).
    r = run(STRIP, [U("s", 0, "commando", 2, 2), U("b", 1, "rank13", 5, 2)],
            {0: orders(mv("s", "EE")), 1: orders(mv("b", "W"))})
    assert at(r, "s") == (4, 2) and not alive(r, "b")
    assert [f["tile"] for f in fights(r)] == [{"x": 4, "y": 2}]


def test_a23_land_unit_cannot_step_onto_sea() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2)], {0: orders(mv("a", "S"))})
    assert at(r, "a") == (2, 2)


def test_a23_ship_cannot_step_onto_land() -> None:
    r = run(STRIP, [U("a", 0, "dvora", 2, 3)], {0: orders(mv("a", "N"))})
    assert at(r, "a") == (2, 3)


def test_a23_naval_commando_moves_on_land_and_sea() -> None:
    r = run(STRIP, [U("a", 0, "navcommando", 2, 2)], {0: orders(mv("a", "SE"))})
    assert at(r, "a") == (3, 3)


# -- A25(a) blocking, A91 ------------------------------------------------------------------------

def test_a25_friendly_unit_that_does_not_move_holds() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("b", 0, "rank1", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (2, 2) and at(r, "b") == (3, 2)


def test_a25_holds_propagate_along_a_chain() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("b", 0, "rank1", 3, 2), U("c", 0, "rank1", 4, 2)],
            {0: orders(mv("a", "E"), mv("b", "E"))})
    assert (at(r, "a"), at(r, "b"), at(r, "c")) == ((2, 2), (3, 2), (4, 2))


def test_a25_a_train_of_friendly_units_moves_together() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("b", 0, "rank1", 3, 2)],
            {0: orders(mv("a", "E"), mv("b", "E"))})
    assert (at(r, "a"), at(r, "b")) == ((3, 2), (4, 2))


def test_a25_smaller_id_friendly_mover_takes_the_tile() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("c", 0, "rank1", 4, 2)],
            {0: orders(mv("c", "W"), mv("a", "E"))})
    assert at(r, "a") == (3, 2) and at(r, "c") == (4, 2)


def test_a28_ids_compare_as_strings() -> None:
    # "10" < "9" as strings: unit "10" takes the tile.
    r = run(STRIP, [U("9", 0, "rank1", 2, 2), U("10", 0, "rank1", 4, 2)],
            {0: orders(mv("9", "E"), mv("10", "W"))})
    assert at(r, "10") == (3, 2) and at(r, "9") == (2, 2)


def test_a91_a_held_friendly_mover_never_holds_another() -> None:
    # a (land, smaller id) and c (ship) both target the sea tile (3,3); a is held by terrain, so it
    # does not hold c.
    r = run(STRIP, [U("a", 0, "rank1", 3, 2), U("c", 0, "dvora", 4, 3)],
            {0: orders(mv("a", "S"), mv("c", "W"))})
    assert at(r, "a") == (3, 2) and at(r, "c") == (3, 3)


def test_a91_own_units_swap_tiles_without_a_fight() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("b", 0, "rank5", 3, 2)],
            {0: orders(mv("a", "E"), mv("b", "W"))})
    assert at(r, "a") == (3, 2) and at(r, "b") == (2, 2)
    assert not fights(r)


RING4 = [
    "0.....1",
    ".......",
    "..##...",
    "..##...",
    ".......",
    "2.....3",
]


def test_a91_cycle_of_enemy_units_moves_without_a_fight() -> None:
    units = [U("a", 0, "rank1", 2, 2), U("b", 1, "rank1", 3, 2), U("c", 2, "rank1", 3, 3),
             U("d", 3, "rank1", 2, 3)]
    r = run(RING4, units, {0: orders(mv("a", "E")), 1: orders(mv("b", "S")), 2: orders(mv("c", "W")),
                           3: orders(mv("d", "N"))})
    assert (at(r, "a"), at(r, "b"), at(r, "c"), at(r, "d")) == ((3, 2), (3, 3), (2, 3), (2, 2))
    assert not fights(r)


def test_a91_steps_off_the_board_are_held() -> None:
    r = run(STRIP, [U("a", 0, "commando", 0, 2)], {0: orders(mv("a", "WE"))})
    assert at(r, "a") == (0, 2)


def test_a91_orders_to_mines_are_held() -> None:
    r = run(STRIP, [U("m", 0, "landmine", 2, 2)], {0: orders(mv("m", "E"))})
    assert at(r, "m") == (2, 2)


def test_a91_cargo_steps_are_held_when_the_carrier_moves() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1")]
    r = run(STRIP, units, {0: orders(mv("s", "E"), mv("a", "N"))})
    assert at(r, "s") == (3, 3)
    assert unit(r, "a")["carrier"] == "s" and at(r, "a") == (3, 3)


# -- A24 / A92 boarding and cargo ---------------------------------------------------------------

def test_a24_land_unit_boards_its_idle_ship_and_stops() -> None:
    units = [U("a", 0, "commando", 2, 2), U("s", 0, "dvora", 2, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "SS"))})
    assert unit(r, "a")["carrier"] == "s" and at(r, "a") == (2, 3)
    assert unit(r, "s")["cargo"] == ["a"]


def test_a24_cargo_moves_with_its_carrier() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1")]
    r = run(STRIP, units, {0: orders(mv("s", "EE"))})
    assert at(r, "s") == (4, 3) and at(r, "a") == (4, 3)


def test_a24_cargo_disembarks_onto_adjacent_land() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1")]
    r = run(STRIP, units, {0: orders(mv("a", "N"))})
    assert at(r, "a") == (2, 2) and "carrier" not in unit(r, "a")
    assert "cargo" not in unit(r, "s")


def test_a24_cargo_cannot_disembark_onto_sea() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1")]
    r = run(STRIP, units, {0: orders(mv("a", "E"))})
    assert unit(r, "a")["carrier"] == "s"


def test_a24_naval_commando_disembarks_onto_any_tile() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "navcommando")]
    r = run(STRIP, units, {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 3) and "carrier" not in unit(r, "a")


POCKET = [
    "0#.......",
    ".........",
    "..###....",
    "..#.#....",
    "..###...1",
]


def test_a92_boarders_fill_capacity_in_id_order() -> None:
    units = [U("s", 0, "dvora", 3, 3), U("a", 0, "rank1", 3, 2), U("b", 0, "rank1", 2, 3)]
    r = run(POCKET, units, {0: orders(mv("b", "E"), mv("a", "S"))})
    assert unit(r, "s")["cargo"] == ["a"]
    assert at(r, "b") == (2, 3) and "carrier" not in unit(r, "b")


def test_a92_capacity_counts_cargo_at_the_start_of_the_substep() -> None:
    units = [U("s", 0, "saar45", 3, 3, cargo=["c"]), U("c", 0, "rank1"),
             U("a", 0, "rank1", 3, 2), U("b", 0, "rank1", 2, 3)]
    r = run(POCKET, units, {0: orders(mv("b", "E"), mv("a", "S"))})
    assert unit(r, "s")["cargo"] == ["c", "a"]
    assert "carrier" not in unit(r, "b")


def test_a92_boarder_shares_carrier_fate() -> None:
    units = [U("s", 0, "dvora", 3, 3), U("a", 0, "rank5", 3, 2), U("e", 1, "saar45", 4, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "S")), 1: orders(mv("e", "W"))})
    assert not alive(r, "s") and not alive(r, "a")
    assert at(r, "e") == (3, 3)


def test_a92_disembarking_cargo_survives_and_fights_where_it_enters() -> None:
    units = [U("s", 0, "dvora", 3, 3, cargo=["a"]), U("a", 0, "rank5"), U("b", 1, "rank3", 3, 2),
             U("e", 1, "saar45", 4, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "N")), 1: orders(mv("e", "W"))})
    assert not alive(r, "s") and not alive(r, "b")
    assert at(r, "a") == (3, 2)


def test_a92_disembarking_and_enemy_entering_the_carrier_tile_is_not_a_swap() -> None:
    units = [U("s", 0, "dvora", 3, 3, cargo=["a"]), U("a", 0, "rank1"), U("n", 1, "navcommando", 3, 2)]
    r = run(STRIP, units, {0: orders(mv("a", "N")), 1: orders(mv("n", "S"))})
    assert at(r, "a") == (3, 2)
    involved = [{u["id"] for u in f["units"]} for f in fights(r)]
    assert involved == [{"s", "n"}]  # navcommando (1) vs dvora (1): both destroyed
    assert not alive(r, "s") and not alive(r, "n")


def test_a92_no_unit_boards_a_raft() -> None:
    r = run(STRIP, [U("a", 0, "rank1", 2, 2), U("r", 0, "raft", 2, 3)], {0: orders(mv("a", "S"))})
    assert at(r, "a") == (2, 2) and "cargo" not in unit(r, "r")


def test_a92_cargo_may_step_onto_another_idle_carrier() -> None:
    units = [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1"), U("t", 0, "dvora", 3, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "E"))})
    assert unit(r, "a")["carrier"] == "t" and unit(r, "t")["cargo"] == ["a"]


def test_a24_boarding_a_moving_ship_is_not_boarding() -> None:
    # The ship leaves (2,3); the land unit's step onto sea is held by terrain.
    units = [U("a", 0, "rank1", 2, 2), U("s", 0, "dvora", 2, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "S"), mv("s", "E"))})
    assert at(r, "a") == (2, 2) and at(r, "s") == (3, 3) and "cargo" not in unit(r, "s")


# -- A32 / A33 / A95 ships sinking and rafts -----------------------------------------------------

def test_a32_sinking_ship_takes_its_cargo() -> None:
    units = [U("s", 0, "dvora", 3, 3, cargo=["a"]), U("a", 0, "rank5"), U("e", 1, "saar45", 4, 3)]
    r = run(STRIP, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "s") and not alive(r, "a")


def test_a33_raft_carries_the_cargo_off_a_sinking_ship() -> None:
    units = [U("s", 0, "dvora", 3, 3, cargo=["a"], raft=True), U("a", 0, "rank5"), U("e", 1, "saar45", 4, 3)]
    r = run(STRIP, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "s") and at(r, "e") == (3, 3)
    rafts = [u for u in r["units"] if u["type"] == "raft"]
    assert len(rafts) == 1
    raft = rafts[0]
    # last tile (3,3) is held by the winner; first empty sea neighbour in N, E, S, W order:
    # N (3,2) is land, E (4,3) was vacated by e, so E.
    assert (raft["tile"]["x"], raft["tile"]["y"]) == (4, 3)
    assert raft["cargo"] == ["a"] and unit(r, "a")["carrier"] == raft["id"]


def test_a95_raft_goes_on_the_fight_tile_when_it_is_empty() -> None:
    units = [U("s", 0, "dvora", 3, 3, raft=True), U("e", 1, "dvora", 4, 3)]
    r = run(STRIP, units, {0: orders(mv("s", "E"))})
    assert not alive(r, "s") and not alive(r, "e")
    rafts = [u for u in r["units"] if u["type"] == "raft"]
    assert [(x["tile"]["x"], x["tile"]["y"]) for x in rafts] == [(4, 3)]


def test_a95_lost_raft_loses_its_cargo() -> None:
    # a walled sea corridor (3..6, 3): the sub sinks s on (3,3) and holds it, the enemy dvora
    # following it fills (4,3): no empty tile for the raft.
    board = ["0#........", "..........", "########..", "###....#..", "########.1"]
    units = [U("s", 0, "dvora", 3, 3, cargo=["a"], raft=True), U("a", 0, "rank1"),
             U("e", 1, "submarine", 4, 3), U("d", 1, "dvora", 5, 3)]
    r = run(board, units, {1: orders(mv("e", "W"), mv("d", "W"))})
    assert at(r, "e") == (3, 3) and at(r, "d") == (4, 3)
    assert not alive(r, "s") and not alive(r, "a")
    assert not [u for u in r["units"] if u["type"] == "raft"]
    assert "raft_lost" in kinds(r)


def test_a33_raft_moves_as_its_own_unit_from_the_next_round() -> None:
    board = ["0#........", "..........", "##########", "..........", "........#1"]
    units = [U("r", 0, "raft", 3, 3, cargo=["a"]), U("a", 0, "rank1")]
    r = run(board, units, {0: orders(mv("r", "E"))})
    assert at(r, "r") == (4, 3) and at(r, "a") == (4, 3)
    r = run(board, units, {0: orders(mv("a", "N"))})
    assert at(r, "a") == (3, 2)


def test_a95_raft_is_a_ship_for_sea_mines() -> None:
    r = run(STRIP, [U("r", 0, "raft", 2, 3), U("m", 1, "seamine", 3, 3)], {0: orders(mv("r", "E"))})
    assert not alive(r, "r") and at(r, "m") == (3, 3)


# -- A43 / A96 mines ---------------------------------------------------------------------------

def test_a43_land_mine_destroys_an_entrant_and_survives() -> None:
    r = run(STRIP, [U("a", 0, "rank13", 2, 2), U("m", 1, "landmine", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and at(r, "m") == (3, 2)
    assert fights(r)[0]["winner"] == "m"


def test_a43_engineer_destroys_land_mine_and_takes_the_tile() -> None:
    r = run(STRIP, [U("a", 0, "engineer", 2, 2), U("m", 1, "landmine", 3, 2)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 2) and not alive(r, "m")


def test_a43_commando_destroys_land_mine() -> None:
    r = run(STRIP, [U("a", 0, "commando", 2, 2), U("m", 1, "landmine", 3, 2)], {0: orders(mv("a", "EE"))})
    assert at(r, "a") == (3, 2) and not alive(r, "m")


def test_a43_sea_mine_sinks_any_ship() -> None:
    r = run(STRIP, [U("a", 0, "saar6", 2, 3), U("m", 1, "seamine", 3, 3)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and at(r, "m") == (3, 3)


def test_a43_naval_commando_destroys_sea_mine() -> None:
    r = run(STRIP, [U("a", 0, "navcommando", 2, 3), U("m", 1, "seamine", 3, 3)], {0: orders(mv("a", "E"))})
    assert at(r, "a") == (3, 3) and not alive(r, "m")


def test_a96_naval_commando_dies_on_a_land_mine() -> None:
    r = run(STRIP, [U("a", 0, "navcommando", 2, 2), U("m", 1, "landmine", 3, 2)], {0: orders(mv("a", "E"))})
    assert not alive(r, "a") and at(r, "m") == (3, 2)


def test_a43_mine_meets_several_entrants_in_id_order() -> None:
    units = [U("a", 0, "rank5", 2, 2), U("b", 2, "engineer", 4, 2), U("m", 1, "landmine", 3, 2)]
    ring = ["0#....1", ".......", "#######", ".......", "2......"]
    r = run(ring, units, {0: orders(mv("a", "E")), 2: orders(mv("b", "W"))})
    assert not alive(r, "a") and not alive(r, "m") and at(r, "b") == (3, 2)


# -- A25(c) several entrants, A93 duel roles ----------------------------------------------------

THREE = ["0#....1", ".......", "#######", ".......", "2......"]


def test_a25_occupant_fights_entrants_one_by_one_in_id_order() -> None:
    units = [U("o", 0, "rank5", 3, 2), U("b", 1, "rank3", 2, 2), U("c", 2, "rank7", 4, 2)]
    r = run(THREE, units, {1: orders(mv("b", "E")), 2: orders(mv("c", "W"))})
    assert not alive(r, "b") and not alive(r, "o") and at(r, "c") == (3, 2)
    assert [f.get("winner") for f in fights(r)] == ["o", "c"]


def test_a25_after_a_tie_the_next_entrant_takes_the_tile_unopposed() -> None:
    units = [U("o", 0, "rank5", 3, 2), U("b", 1, "rank5", 2, 2), U("c", 2, "scout", 4, 2)]
    r = run(THREE, units, {1: orders(mv("b", "E")), 2: orders(mv("c", "WW"))})
    assert not alive(r, "o") and not alive(r, "b")
    assert at(r, "c") == (2, 2)  # took (3,2) unopposed, did not stop


def test_a25_entrants_on_an_empty_tile_duel_in_id_order() -> None:
    units = [U("a", 0, "rank3", 2, 2), U("b", 1, "rank1", 4, 2), U("c", 2, "rank2", 3, 3)]
    water = ["0#....1", ".......", "#######", "...#...", "2......"]
    r = run(water, units, {0: orders(mv("a", "E")), 1: orders(mv("b", "W")), 2: orders(mv("c", "N"))})
    assert [f["winner"] for f in fights(r)] == ["a", "a"]
    assert at(r, "a") == (3, 2)


def test_a93_on_an_empty_tile_all_entrants_attack() -> None:
    # no staying occupant: rank1 a takes the tile, commando b beats it, then rank13 c meets the
    # commando and both attack: the commando's rule applies.
    units = [U("a", 0, "rank1", 2, 2), U("b", 1, "commando", 4, 2), U("c", 2, "rank13", 3, 3)]
    water = ["0#....1", ".......", "#######", "...#...", "2......"]
    r = run(water, units, {0: orders(mv("a", "E")), 1: orders(mv("b", "W")), 2: orders(mv("c", "N"))})
    assert at(r, "b") == (3, 2) and not alive(r, "c")


def test_a93_survivor_of_an_earlier_duel_holds_and_defends() -> None:
    # occupant a stays: commando b beats it and now defends, so rank13 c wins.
    units = [U("a", 0, "rank1", 3, 2), U("b", 1, "commando", 4, 2), U("c", 2, "rank13", 3, 3)]
    water = ["0#....1", ".......", "#######", "...#...", "2......"]
    r = run(water, units, {1: orders(mv("b", "W")), 2: orders(mv("c", "N"))})
    assert at(r, "c") == (3, 2) and not alive(r, "b")


def test_a26_winning_a_fight_earns_the_activity_bonus() -> None:
    r = run(STRIP, [U("a", 0, "rank5", 2, 2), U("b", 1, "rank3", 3, 2)], {0: orders(mv("a", "E"), bonus="iron")})
    assert r["stocks"]["0"]["iron"] == 1
    assert r["stocks"]["1"] == {"wood": 0, "food": 0, "iron": 0, "fuel": 0}


def test_a99_boarding_is_not_a_fight() -> None:
    units = [U("a", 0, "commando", 2, 2), U("s", 0, "dvora", 2, 3)]
    r = run(STRIP, units, {0: orders(mv("a", "S"))})
    assert not fights(r) and sum(r["stocks"]["0"].values()) == 0


# -- A34 / A35 / A94 aircraft -------------------------------------------------------------------

AIRB = [
    "0###......",
    "####......",
    "..........",
    "......####",
    "......###1",
]


def test_a34_aircraft_fly_over_units_without_fighting() -> None:
    units = [U("f", 0, "fighter", 1, 1), U("e", 1, "rank1", 2, 1)]
    r = run(AIRB, units, {0: orders(mv("f", "EE"))})
    assert at(r, "f") == (3, 1) and at(r, "e") == (2, 1)
    assert not fights(r)


def test_a34_aircraft_landing_on_own_empty_land_survives() -> None:
    r = run(AIRB, [U("f", 0, "fighter", 1, 1)], {0: orders(mv("f", "ESSNN"))})
    # over the sea (2,2), (2,3) and back to (2,1), own home land
    assert at(r, "f") == (2, 1)


def test_a34_aircraft_ending_at_sea_is_destroyed() -> None:
    r = run(AIRB, [U("f", 0, "fighter", 1, 1)], {0: orders(mv("f", "S"))})
    assert not alive(r, "f")
    assert "crashed" in kinds(r)


def test_a34_aircraft_must_end_on_land_controlled_at_round_start() -> None:
    # (6,3) is land of player 1's home island
    r = run(AIRB, [U("f", 0, "fighter", 2, 2)], {0: orders(mv("f", "EEEES"))})
    assert not alive(r, "f")
    r = run(AIRB, [U("f", 0, "fighter", 2, 2)], {0: orders(mv("f", "WNN"))})
    assert at(r, "f") == (1, 0)


def test_a34_enemy_entering_a_parked_aircraft_wins() -> None:
    r = run(AIRB, [U("f", 0, "fighter", 2, 1), U("e", 1, "rank1", 3, 1)], {1: orders(mv("e", "W"))})
    assert not alive(r, "f") and at(r, "e") == (2, 1)
    assert fights(r)[0]["winner"] == "e"


def test_a93_spy_entering_a_parked_aircraft_wins() -> None:
    r = run(AIRB, [U("f", 0, "transport", 2, 1), U("e", 1, "spy", 3, 1)], {1: orders(mv("e", "W"))})
    assert not alive(r, "f") and at(r, "e") == (2, 1)


def test_a94_aircraft_ending_on_an_enemy_tile_does_not_fight_and_is_destroyed() -> None:
    units = [U("f", 0, "fighter", 0, 1), U("e", 1, "rank1", 2, 1)]
    r = run(AIRB, units, {0: orders(mv("f", "EE"))})
    assert not fights(r)
    assert not alive(r, "f") and at(r, "e") == (2, 1)


def test_a94_parked_enemy_aircraft_no_longer_alone_is_destroyed_too() -> None:
    units = [U("f", 0, "fighter", 0, 1), U("g", 1, "fighter", 2, 1)]
    r = run(AIRB, units, {0: orders(mv("f", "EE"))}, control=[
        {"tile": {"x": 2, "y": 1}, "owner": 1}, {"tile": {"x": 1, "y": 1}, "owner": 0}])
    assert not alive(r, "f") and not alive(r, "g")


def test_a94_landing_check_covers_unmoved_aircraft() -> None:
    r = run(AIRB, [U("f", 0, "fighter", 2, 2)])
    assert not alive(r, "f")


def test_a94_friendly_blocking_applies_at_the_last_step() -> None:
    units = [U("f", 0, "fighter", 0, 1), U("a", 0, "rank1", 2, 1)]
    r = run(AIRB, units, {0: orders(mv("f", "EE"))})
    assert at(r, "f") == (1, 1) and at(r, "a") == (2, 1)


def test_a94_aircraft_take_no_part_in_blocking_before_their_last_step() -> None:
    units = [U("f", 0, "fighter", 0, 1), U("a", 0, "rank1", 2, 1)]
    r = run(AIRB, units, {0: orders(mv("f", "EEE"), mv("a", "W"))})
    assert at(r, "a") == (1, 1) and at(r, "f") == (3, 1)


def test_a35_transport_plane_carries_one_land_unit() -> None:
    units = [U("t", 0, "transport", 1, 1), U("a", 0, "rank1", 2, 1), U("b", 0, "rank1", 1, 0)]
    r = run(AIRB, units, {0: orders(mv("a", "W"), mv("b", "S"))})
    assert unit(r, "t")["cargo"] == ["a"]
    assert at(r, "b") == (1, 0)


def test_a35_transport_flies_its_cargo_and_it_disembarks_later() -> None:
    units = [U("t", 0, "transport", 1, 1, cargo=["a"]), U("a", 0, "rank1")]
    r = run(AIRB, units, {0: orders(mv("t", "EE"))})
    assert at(r, "t") == (3, 1) and at(r, "a") == (3, 1)


def test_a92_parked_transport_destroyed_by_an_enemy_takes_its_cargo() -> None:
    units = [U("t", 0, "transport", 2, 1, cargo=["a"]), U("a", 0, "rank13"), U("e", 1, "rank1", 3, 1)]
    r = run(AIRB, units, {1: orders(mv("e", "W"))})
    assert not alive(r, "t") and not alive(r, "a")


def test_a34_aircraft_destroyed_at_landing_check_loses_cargo() -> None:
    units = [U("t", 0, "transport", 1, 1, cargo=["a"]), U("a", 0, "rank1")]
    r = run(AIRB, units, {0: orders(mv("t", "S"))})
    assert not alive(r, "t") and not alive(r, "a")
    assert not fights(r)
