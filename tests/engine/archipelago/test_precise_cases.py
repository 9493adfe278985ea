"""Precise resolution cases found by the differential test (test_differential.py), one per engine fix.

Each test is a small hand-drawn board where the spec's text fixes the outcome; the expected values
are derived from the quoted clause, not copied from any implementation's output.

Legend: "." sea, "#" land, digits are the players' bases (land).  Coordinates are (x, y), x the
column, y the row from the top.
"""

from __future__ import annotations

from tests.engine.archipelago.boards import U, alive, at, fights, mv, orders, run, unit

# Two players: homes are the one-tile islands in the corners; a neutral land strip on row 2.
STRIP = [
    "0#.....",
    ".......",
    "#######",
    ".......",
    "......1",
]

# Four players, one-tile home islands in the corners, the same neutral strip on row 2.
STRIP4 = [
    "0.....1",
    ".......",
    "#######",
    ".......",
    "2.....3",
]


def test_a62_owner_unit_entering_the_bearers_tile_sends_its_flag_home_even_when_it_loses() -> None:
    # A62: "A player's own land unit entering its own flag's tile (a dropped flag, or its flag
    # anywhere) sends the flag home at once"; A97: "A62 applies wherever the owner's unit meets its
    # own flag, before that tile's duels".  a (rank1) enters b's tile and loses the duel, but the
    # flag b carries was already sent home to player 0's (empty) base (0, 0).
    units = [U("a", 0, "rank1", 2, 2), U("b", 1, "rank8", 3, 2, flag="F"), U("F", 0, "flag")]
    r = run(STRIP, units, {0: orders(mv("a", "E"))})
    assert not alive(r, "a")
    assert at(r, "b") == (3, 2) and "flag" not in unit(r, "b")
    assert at(r, "F") == (0, 0) and "carrier" not in unit(r, "F")
    assert [(f["winner"], sorted(u["id"] for u in f["units"])) for f in fights(r)] == [("b", ["a", "b"])]


def test_a97_bearer_entering_the_tile_of_the_flags_owner_loses_the_flag_before_the_duel() -> None:
    # A97: "A62 applies wherever the owner's unit meets its own flag, before that tile's duels":
    # the bearer b enters the tile held by a (player 0, the flag's owner) and wins, but the flag
    # has gone home first: b stands on (2, 2) without it; the flag is on player 0's base (0, 0).
    units = [U("a", 0, "rank1", 2, 2), U("b", 1, "rank8", 3, 2, flag="F"), U("F", 0, "flag")]
    r = run(STRIP, units, {1: orders(mv("b", "W"))})
    assert not alive(r, "a")
    assert at(r, "b") == (2, 2) and "flag" not in unit(r, "b")
    assert at(r, "F") == (0, 0) and "carrier" not in unit(r, "F")


def test_a97_bearer_killed_on_a_tile_it_entered_this_substep_sends_the_flag_home() -> None:
    # A97: "A carrier killed while entering drops the flag on the fight tile: a surviving enemy land
    # unit there picks it up, the owner's unit sends it home (A62), otherwise it goes home."
    # q (player 1's engineer, carrying player 0's flag F) enters player 2's land mine at (3, 2) and
    # destroys it (A43); in the same sub-step t (player 3's engineer) enters too and the two
    # engineers (strength 2) destroy each other (A29).  q died while entering, with no survivor on
    # the tile: F goes home to player 0's base (0, 0) instead of lying on (3, 2).
    units = [U("F", 0, "flag"), U("q", 1, "engineer", 2, 2, flag="F"), U("m", 2, "landmine", 3, 2),
             U("t", 3, "engineer", 4, 2)]
    r = run(STRIP4, units, {1: orders(mv("q", "E")), 3: orders(mv("t", "W"))})
    assert not alive(r, "q") and not alive(r, "t") and not alive(r, "m")
    assert at(r, "F") == (0, 0) and "carrier" not in unit(r, "F")
    assert [sorted(u["id"] for u in f["units"]) for f in fights(r)] == [["m", "q"], ["q", "t"]]


def test_a97_bearer_killed_defending_the_tile_it_stood_on_drops_the_flag_there() -> None:
    # The contrast to the case above (A61: "A carrier killed on land drops the flag on the tile it
    # last stood on"): q stood on (3, 2) when the round began and dies there in a tie with the
    # entrant t; nobody survives to pick the flag up, so it lies on (3, 2).
    units = [U("F", 0, "flag"), U("q", 1, "engineer", 3, 2, flag="F"), U("t", 3, "engineer", 4, 2)]
    r = run(STRIP4, units, {3: orders(mv("t", "W"))})
    assert not alive(r, "q") and not alive(r, "t")
    assert at(r, "F") == (3, 2) and "carrier" not in unit(r, "F")
