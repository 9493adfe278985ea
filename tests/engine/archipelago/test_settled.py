"""The rules settled after differential testing (A100–A106) and after the independent check of the
views (A107–A110), each on the spec's minimal case (plus a few contrasts drawn from the same text).

Coordinates: x grows East (the column), y grows South (the row, row 0 on top); rows are listed top
to bottom; ``.`` sea, ``#`` land, digits are the players' bases (see engine/archipelago/scenario.py).
The expected values come from the quoted clause, never from any implementation's output.
"""

from __future__ import annotations

from typing import Any

from tests.engine.archipelago.boards import U, at, run
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
