"""The rules settled after differential testing (A100–A106) and after the independent check of the
views (A107–A110), each on the spec's minimal case (plus a few contrasts drawn from the same text).

Coordinates: x grows East (the column), y grows South (the row, row 0 on top); rows are listed top
to bottom; ``.`` sea, ``#`` land, digits are the players' bases (see engine/archipelago/scenario.py).
The expected values come from the quoted clause, never from any implementation's output.
"""

from __future__ import annotations

from typing import Any

from tests.engine.archipelago.boards import U, alive, at, fights, mv, orders, run, unit
from tests.engine.archipelago.reference import reference_resolve

# The board of A100 and A101: p0's home island is the 3x2 block top left (base (0,0)); p1's home
# is the single tile (2,3).
A100_ROWS = ["0##", "###", "...", "..1"]


def both(rows: list[str], units: list[dict[str, Any]], o: dict[Any, Any], **kw: Any) -> dict[str, Any]:
    """Resolve with the engine, check the independent reference agrees, return the engine's result."""
    sc: dict[str, Any] = {"rows": rows, "units": units, **kw}
    eng = run(rows, units, o, **kw)
    ref = reference_resolve(sc, o)
    assert eng["units"] == ref["units"], (eng["units"], ref["units"])
    return eng


# -- A100: what holds a moving flag ---------------------------------------------------------------

def test_a100_flag_follows_its_own_transport_plane_leaving_the_tile() -> None:
    # "p0's flag at (1,0) ordered E, p0's transport plane at (2,0) ordered S: both move; the flag
    # ends on (2,0)" — an aircraft holds a flag only while it stays on the tile.
    units = [U("f", 0, "flag", 1, 0), U("t", 0, "transport", 2, 0)]
    r = both(A100_ROWS, units, {0: orders(mv("f", "E"), mv("t", "S"))})
    assert at(r, "f") == (2, 0)
    assert at(r, "t") == (2, 1)  # own home land, controlled at the start of the round: it lands


def test_a100_a_staying_aircraft_still_holds_the_flag() -> None:
    # the contrast: the same plane without an order stays on (2,0) and holds the flag
    units = [U("f", 0, "flag", 1, 0), U("t", 0, "transport", 2, 0)]
    r = both(A100_ROWS, units, {0: orders(mv("f", "E"))})
    assert at(r, "f") == (1, 0) and at(r, "t") == (2, 0)


def test_a100_a_staying_enemy_bearer_holds_the_flag() -> None:
    # a flag bearer (a unit carrying a flag) holds a moving flag while it stays on the tile: p1's
    # Samal on (2,0) carries p2's flag; p0's flag ordered E onto it is held (not picked up).
    rows = ["0##", "###", "...", "1.2"]
    units = [U("f", 0, "flag", 1, 0), U("b", 1, "rank3", 2, 0, flag="g"), U("g", 2, "flag")]
    r = both(rows, units, {0: orders(mv("f", "E"))})
    assert at(r, "f") == (1, 0) and "carrier" not in unit(r, "f")
    assert unit(r, "b")["flag"] == "g" and at(r, "b") == (2, 0)


def test_a100_a_bearer_that_left_the_tile_does_not_hold_the_flag() -> None:
    # "A unit that left the tile never holds a flag": the bearer steps S off (2,0) as the flag
    # steps E onto it; both move.
    rows = ["0##", "###", "...", "1.2"]
    units = [U("f", 0, "flag", 1, 0), U("b", 1, "rank3", 2, 0, flag="g"), U("g", 2, "flag")]
    r = both(rows, units, {0: orders(mv("f", "E")), 1: orders(mv("b", "S"))})
    assert at(r, "f") == (2, 0) and "carrier" not in unit(r, "f")
    assert at(r, "b") == (2, 1) and unit(r, "b")["flag"] == "g"


def test_a100_a_flag_dropped_by_a_swaps_loser_holds_from_the_next_pass() -> None:
    # p2's Samal on (2,0) carries p1's flag and swaps with p3's Sgan Aluf on (2,1): the Samal loses
    # and drops p1's flag on (2,0) (A61).  p0's flag, ordered E onto (2,0), was not held while the
    # bearer was leaving, but is held by the dropped flag once the swap is over (blocking again).
    rows = ["0##..", "###..", ".....", "1.2.3"]
    units = [U("f", 0, "flag", 1, 0), U("b", 2, "rank3", 2, 0, flag="g"), U("g", 1, "flag"),
             U("s", 3, "rank9", 2, 1)]
    r = both(rows, units, {0: orders(mv("f", "E")), 2: orders(mv("b", "S")), 3: orders(mv("s", "N"))})
    assert not alive(r, "b") and at(r, "s") == (2, 1)
    assert at(r, "g") == (2, 0) and "carrier" not in unit(r, "g")
    assert at(r, "f") == (1, 0)


# -- A101: an aircraft never sends a flag home ----------------------------------------------------

def test_a101_flag_and_enemy_fighter_ending_on_one_tile_the_flag_stays() -> None:
    # "p0's flag at (1,0) ordered E, p1's fighter at (2,1) ordered N: the flag ends on (2,0), the
    # fighter is lost."
    units = [U("f", 0, "flag", 1, 0), U("g", 1, "fighter", 2, 1)]
    r = both(A100_ROWS, units, {0: orders(mv("f", "E")), 1: orders(mv("g", "N"))})
    assert at(r, "f") == (2, 0)
    assert not alive(r, "g")
    assert not fights(r)  # flags never fight; a landing-check loss is not a fight (A99)


# -- A103: a bearer meets another flag -------------------------------------------------------------

def test_a103_bearer_is_held_rather_than_enter_another_enemy_flag() -> None:
    # "p0's flag at (0,0); p1's Samal (rank3) at (1,0) carrying p2's flag ordered W: it is held at
    # (1,0) and p0's flag stays."
    rows = ["0#...1", "......", ".....2"]
    units = [U("f", 0, "flag", 0, 0), U("m", 1, "rank3", 1, 0, flag="g"), U("g", 2, "flag")]
    r = both(rows, units, {1: orders(mv("m", "W"))})
    assert at(r, "m") == (1, 0) and unit(r, "m")["flag"] == "g"
    assert at(r, "f") == (0, 0) and "carrier" not in unit(r, "f")


def test_a103_a_flag_stepping_away_does_not_hold_the_bearer() -> None:
    # read like A100 (the flag must stay on the tile to hold): p0's flag steps W off (1,0) as the
    # bearer steps onto it; both move.
    rows = ["0##..1", "......", ".....2"]
    units = [U("f", 0, "flag", 1, 0), U("m", 1, "rank3", 2, 0, flag="g"), U("g", 2, "flag")]
    r = both(rows, units, {0: orders(mv("f", "W")), 1: orders(mv("m", "W"))})
    assert at(r, "f") == (0, 0) and "carrier" not in unit(r, "f")
    assert at(r, "m") == (1, 0) and unit(r, "m")["flag"] == "g"


def test_a103_a_unit_without_a_flag_picks_the_flag_up() -> None:
    # the contrast (A61): the same Samal carrying nothing enters and picks p0's flag up
    rows = ["0#...1", "......", ".....2"]
    units = [U("f", 0, "flag", 0, 0), U("m", 1, "rank3", 1, 0)]
    r = both(rows, units, {1: orders(mv("m", "W"))})
    assert at(r, "m") == (0, 0) and unit(r, "m")["flag"] == "f"


# -- A105: direction order -------------------------------------------------------------------------

def test_a105_equally_near_tiles_ordered_by_bearing_clockwise_from_north() -> None:
    # "p0's flag going home with its base (1,1) occupied and the free home tiles (0,0) (NW) and
    # (3,1) (2 E) both at distance 2: it goes to (3,1)."  p1's Turai carries p0's flag on p1's base
    # (3,3): it scores at the flags step (A63) and the flag goes home.
    rows = ["##..", "#0##", "....", "...1"]
    units = [U("a", 0, "rank1", 1, 1), U("b", 0, "rank1", 1, 0), U("c", 0, "rank1", 0, 1),
             U("d", 0, "rank1", 2, 1), U("e", 1, "rank1", 3, 3, flag="f"), U("f", 0, "flag")]
    r = both(rows, units, {})
    assert r["scores"]["1"] == 5
    assert at(r, "f") == (3, 1)


def test_a105_bearing_order_of_the_eight_directions() -> None:
    # "among tiles at equal Manhattan distance, the one whose bearing ... is smallest comes first —
    # for neighbours N, NE, E, SE, S, SW, W, NW"; distance still comes first (A28)
    from engine.archipelago.board import tie_key

    o = (5, 5)
    one = [(5, 4), (6, 5), (5, 6), (4, 5)]  # N E S W
    assert sorted(reversed(one), key=lambda t: tie_key(o, t)) == one
    two = [(5, 3), (6, 4), (7, 5), (6, 6), (5, 7), (4, 6), (3, 5), (4, 4)]  # N NE E SE S SW W NW
    assert sorted(reversed(two), key=lambda t: tie_key(o, t)) == two
    three = [(5, 2), (6, 3), (7, 4), (8, 5), (7, 6), (6, 7), (5, 8), (4, 7), (3, 6), (2, 5), (3, 4), (4, 3)]
    assert sorted(reversed(three), key=lambda t: tie_key(o, t)) == three  # clockwise from N
    assert max(one, key=lambda t: tie_key(o, t)) == (4, 5)
    assert tie_key(o, (4, 5)) < tie_key(o, (5, 3))  # W at 1 before N at 2
    assert tie_key(o, o) < tie_key(o, (5, 4))
