"""The rules settled after differential testing (A100–A106) and after the independent check of the
views (A107–A110), each on the spec's minimal case (plus a few contrasts drawn from the same text).

Coordinates: x grows East (the column), y grows South (the row, row 0 on top); rows are listed top
to bottom; ``.`` sea, ``#`` land, digits are the players' bases (see engine/archipelago/scenario.py).
The expected values come from the quoted clause, never from any implementation's output.
"""

from __future__ import annotations

from typing import Any

from engine.archipelago import GAME
from engine.archipelago.scenario import state_from_scenario
from engine.archipelago.state import State
from engine.archipelago.view import view
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


# -- A102: A62 and a carried flag ------------------------------------------------------------------

def test_a102_owner_unit_meeting_the_bearer_sends_the_flag_home_before_the_duel() -> None:
    # "p1's engineer at (4,0) stays, p0's Sgan Aluf (rank9) at (5,0) carrying p1's flag ordered W:
    # the flag goes home to p1's base, then the Sgan Aluf destroys the engineer."
    rows = ["0...##.1"]
    units = [U("e", 1, "engineer", 4, 0), U("s", 0, "rank9", 5, 0, flag="f"), U("f", 1, "flag")]
    r = both(rows, units, {0: orders(mv("s", "W"))})
    assert at(r, "f") == (7, 0) and "carrier" not in unit(r, "f")
    assert at(r, "s") == (4, 0) and "flag" not in unit(r, "s")
    assert not alive(r, "e")
    assert [(f["winner"], sorted(u["id"] for u in f["units"])) for f in fights(r)] == [("s", ["e", "s"])]
    kinds = [e["kind"] for e in r["events"]]
    assert kinds.index("flag_recovered") < kinds.index("fight")


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


# -- A104: aircraft in flight occupy no tile -------------------------------------------------------

def test_a104_flag_goes_home_to_a_base_an_aircraft_is_flying_over() -> None:
    # p0's scout walks E from its base (0,0)... it leaves the base (2,0) in sub-step 3 and enters
    # (3,0), where p1's spy stands carrying p0's flag: the flag goes home (A62) at the end of
    # sub-step 3.  p1's fighter is then over p0's base in mid-flight (its 3rd of 5 steps): the base
    # counts as empty and the flag goes there, not to the next home tile.
    rows = ["##0##", ".....", ".....", "..1.."]
    units = [U("s", 0, "scout", 0, 0), U("p", 1, "spy", 3, 0, flag="f"), U("f", 0, "flag"),
             U("g", 1, "fighter", 2, 3)]
    r = both(rows, units, {0: orders(mv("s", "EEE")), 1: orders(mv("g", "NNNSS"))})
    assert at(r, "s") == (3, 0) and not alive(r, "p")
    assert at(r, "f") == (2, 0) and "carrier" not in unit(r, "f")


def test_a104_raft_is_placed_under_an_aircraft_in_flight() -> None:
    # p0's Dvora (with a raft, carrying a Turai) enters p1's Sa'ar 5 on (4,2) and sinks: its last
    # tile is the fight tile (A95), held by the Sa'ar 5, so the raft goes to the first empty
    # adjacent sea tile (A33, A28): N (4,1), where p1's fighter is in mid-flight.
    rows = ["0...1", ".....", ".....", "....."]
    units = [U("d", 0, "dvora", 3, 2, raft=True, cargo=["c"]), U("c", 0, "rank1"),
             U("s", 1, "saar5", 4, 2), U("g", 1, "fighter", 4, 0)]
    r = both(rows, units, {0: orders(mv("d", "E")), 1: orders(mv("g", "SN"))})
    assert not alive(r, "d")
    rafts = [u for u in r["units"] if u["type"] == "raft"]
    assert len(rafts) == 1 and (rafts[0]["tile"]["x"], rafts[0]["tile"]["y"]) == (4, 1)
    assert rafts[0]["cargo"] == ["c"]
    assert at(r, "g") == (4, 0)


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


# -- A106: a flag and a bearer entering together ---------------------------------------------------

def test_a106_flag_and_bearer_entering_together_the_flag_goes_home() -> None:
    # "p1's flag at (1,0) ordered W, p2's Sgan Aluf (rank9) at (0,1) carrying p0's flag ordered N:
    # both enter (0,0); the Sgan Aluf keeps its flag and p1's flag goes home to (1,0)."
    rows = ["#1..####", "#.......", ".....##0", ".#2...#.", "........"]
    units = [U("f1", 1, "flag", 1, 0), U("s", 2, "rank9", 0, 1, flag="f0"), U("f0", 0, "flag")]
    r = both(rows, units, {1: orders(mv("f1", "W")), 2: orders(mv("s", "N"))})
    assert at(r, "s") == (0, 0) and unit(r, "s")["flag"] == "f0"
    assert at(r, "f1") == (1, 0) and "carrier" not in unit(r, "f1")


# -- A107–A110: readings the views follow ---------------------------------------------------------

def make(rows: list[str], units: list[dict[str, Any]], **kw: Any) -> State:
    return state_from_scenario({"rows": rows, "units": units, **kw})


def all_ids(obj: Any) -> set[str]:
    """Every string value anywhere in a JSON value (keys excluded)."""
    if isinstance(obj, dict):
        return set().union(*(all_ids(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(all_ids(v) for v in obj)) if obj else set()
    return {obj} if isinstance(obj, str) else set()


def _tiles(lst: list[dict[str, int]]) -> set[tuple[int, int]]:
    return {(t["x"], t["y"]) for t in lst}


FIRE_ROWS = [
    "0#.....",  # y0
    "##.....",  # y1
    ".......",  # y2
    "...###.",  # y3: a ring island (3..5, 3)
    ".......",  # y4
    "1.....2",  # y5
]


def test_a107_a_kill_by_fire_names_the_victims_type_to_the_shooter() -> None:
    # p0's Sa'ar 5 at (4,2) bombards p1's Samal on (4,3) (3 < 4: destroyed, A37); p0's fighter at
    # (1,1) strikes p1's Sagam on (3,3), distance 4, in sight of the Sa'ar 5 (A38).  p2's Dvora at
    # (6,3) sees (4,3) but took no part.
    units = [U("a", 0, "saar5", 4, 2), U("f", 0, "fighter", 1, 1), U("t", 1, "rank3", 4, 3),
             U("v", 1, "rank5", 3, 3), U("w", 2, "dvora", 6, 3)]
    st = make(FIRE_ROWS, units, stocks={"0": {"fuel": 1}})
    order = {"units": [{"unit": "a", "action": "bombard", "target": "t"},
                       {"unit": "f", "action": "strike", "target": "v"}]}
    GAME.validate(st, 0, order)
    new, events = GAME.resolve(st, {0: order})
    assert "t" not in new.units and "v" not in new.units
    mine = {e["kind"]: e for e in view(new, 0, events)["events"] if e["kind"] in ("bombard", "strike")}
    assert mine["bombard"]["by"] == "a"
    assert mine["bombard"]["units"] == [{"id": "t", "owner": 1, "type": "rank3", "died": True}]
    assert mine["strike"]["by"] == "f"
    assert mine["strike"]["units"] == [{"id": "v", "owner": 1, "type": "rank5", "died": True}]
    # the onlooker sees owner, domain and the death only (A31, A85)
    seen = [e for e in view(new, 2, events)["events"] if e["kind"] == "bombard"]
    assert len(seen) == 1 and seen[0]["units"][0].get("died") and "type" not in seen[0]["units"][0]
    assert "rank3" not in all_ids(view(new, 2, events))


def test_a108_control_list_covers_every_controlled_tile_in_sight_or_not() -> None:
    # p0's home island is the row y0 (base (0,0), food on (4,0)); p0 sees (0..2, 0) from its base.
    rows = ["0###f", ".....", ".....", "....1"]
    st = make(rows, [U("fl", 0, "flag", 1, 0), U("n", 1, "navcommando", 4, 1)])
    v = view(st, 0)
    assert (4, 0) not in _tiles(v["visible"]) and (3, 0) not in _tiles(v["visible"])
    assert _tiles(v["control"]) == {(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)}
    assert "n" not in all_ids(v)
    # p1's naval commando, unseen by p0, lands on p0's food tile: the tile leaves p0's control list
    # (A47), and its food goes to p1 at the production opening the next round (A50)
    new, events = GAME.resolve(st, {1: {"units": [{"unit": "n", "path": ["N"]}]}})
    assert new.units["n"].tile == (4, 0)
    v2 = view(new, 0, events)
    assert (4, 0) not in _tiles(v2["visible"])
    assert _tiles(v2["control"]) == {(0, 0), (1, 0), (2, 0), (3, 0)}
    assert v2["stock"]["food"] == st.pstates[0].stock["food"]
    assert new.pstates[1].stock["food"] == st.pstates[1].stock["food"] + 1
    assert "n" not in all_ids(v2)  # no leak: p0 knows the tile is lost, not who stands there
    assert (4, 0) in _tiles(view(new, 1, events)["control"])


def test_a109_only_units_with_sight_outposts_and_the_base_spot_a_submarine() -> None:
    # p2's submarine at (2,0) is 2 from p0's base (in sight, not adjacent).  Its neighbours: p0's
    # land mine on (1,0) and p0's flag lying on (3,0), both without sight: not spotters.
    rows = ["0#.#", "##..", "....", "1..2"]
    sub = U("s", 2, "submarine", 2, 0)
    st = make(rows, [sub, U("m", 0, "landmine", 1, 0), U("fl", 0, "flag", 3, 0)])
    v = view(st, 0)
    assert (2, 0) in _tiles(v["visible"])
    assert "s" not in all_ids(v)
    # a unit with sight on the same tile spots it
    st = make(rows, [sub, U("r", 0, "rank1", 1, 0), U("fl", 0, "flag", 3, 0)])
    assert [e["id"] for e in view(st, 0)["enemies"]] == ["s"]
    # so does an own outpost next to it
    st = make(rows, [sub, U("m", 0, "landmine", 1, 0)], outposts=[{"tile": {"x": 3, "y": 0}, "owner": 0}])
    assert [e["id"] for e in view(st, 0)["enemies"]] == ["s"]
    # cargo sees nothing (A80): a Turai inside p0's Dvora two tiles off does not spot it either
    st = make(rows, [sub, U("d", 0, "dvora", 2, 2, cargo=["c"]), U("c", 0, "rank1")])
    assert "s" not in all_ids(view(st, 0))


def test_a110_cargo_and_enemy_carried_flags_are_never_shown() -> None:
    # p0's scout at (4,2) sees everything here; p1's Dvora, raft and transport plane carry cargo,
    # p1's Samal carries p2's flag, p1's Turai carries p0's own flag.
    rows = ["0#.#.#.", "##.....", "...##..", ".......", "1.....2"]
    units = [U("sc", 0, "scout", 4, 2),
             U("d", 1, "dvora", 2, 2, cargo=["c1"]), U("c1", 1, "rank5"),
             U("r", 1, "raft", 5, 2, cargo=["c2", "c3"]), U("c2", 1, "rank1"), U("c3", 1, "spy"),
             U("t", 1, "transport", 3, 2, cargo=["c4"]), U("c4", 1, "commando"),
             U("b", 1, "rank3", 3, 0, flag="f2"), U("f2", 2, "flag"),
             U("q", 1, "rank1", 5, 0, flag="f0"), U("f0", 0, "flag")]
    st = make(rows, units)
    v = view(st, 0)
    assert {e["id"] for e in v["enemies"]} == {"d", "r", "t", "b", "q"}
    assert all(set(e) == {"id", "owner", "domain", "tile"} for e in v["enemies"])
    hidden = {"c1", "c2", "c3", "c4", "f2"}
    assert not hidden & all_ids(v)
    # the exception: a player's own flag, carried by an enemy in sight (A82)
    assert {u["id"]: u.get("carrier") for u in v["units"]}["f0"] == "q"
    # the Dvora sails out of sight with its cargo: the log remembers the Dvora only (A83)
    new, events = GAME.resolve(st, {1: {"units": [{"unit": "d", "path": ["S", "S"]}]}})
    v2 = view(new, 0, events)
    assert "d" in {e["id"] for e in v2["enemy_log"]}
    assert not hidden & all_ids(v2)
