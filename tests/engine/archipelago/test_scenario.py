"""The scenario API (plain-data boards for tests and for comparison with other implementations)."""

from __future__ import annotations

import json

import pytest

from engine.archipelago.scenario import resolve_scenario, state_from_scenario


def test_a7_scenario_rows_make_islands_bases_resources_and_ports() -> None:
    st = state_from_scenario({
        "rows": ["0w#....", ".......", "..fUx..", ".......", "....##1"],
        "legend": {"x": {"resource": "iron", "port": "food"}},
        "islands": [{"tile": [2, 2], "kind": "centre"}],
        "units": [],
    })
    b = st.board
    assert b.bases == ((0, 0), (6, 4))
    assert b.resources[(1, 0)] == "wood" and b.resources[(2, 2)] == "food" and b.resources[(4, 2)] == "iron"
    assert b.ports == {(3, 2): "fuel", (4, 2): "food"}
    kinds = sorted((i.kind, i.owner) for i in b.islands)
    assert kinds == [("centre", None), ("home", 0), ("home", 1)]
    assert st.players == 2 and st.round == 1 and st.target == 10


def test_a24_scenario_cargo_and_carried_flags_take_their_carriers_tile() -> None:
    st = state_from_scenario({
        "rows": ["0#.....", ".......", "#####..", ".......", "......1"],
        "units": [{"id": "s", "owner": 0, "type": "dvora", "tile": {"x": 3, "y": 3}, "cargo": ["a"]},
                  {"id": "a", "owner": 0, "type": "rank2", "flag": "F"},
                  {"id": "F", "owner": 1, "type": "flag"}],
        "stocks": {"0": {"wood": 2}}, "scores": {"1": 4}, "round": 7,
        "outposts": [{"tile": {"x": 2, "y": 2}, "owner": 1}],
    })
    assert st.units["a"].tile == (3, 3) and st.units["a"].carrier == "s"
    assert st.units["F"].tile == (3, 3) and st.units["F"].carrier == "a" and st.units["a"].flag == "F"
    assert st.pstates[0].stock["wood"] == 2 and st.pstates[1].score == 4 and st.round == 7
    assert st.control[(2, 2)] == 1 and st.outposts == {(2, 2): 1}


def test_a21_resolve_scenario_returns_plain_json_data() -> None:
    out = resolve_scenario({
        "rows": ["0#.....", ".......", "#####..", ".......", "......1"],
        "units": [{"id": "a", "owner": 0, "type": "rank5", "tile": [1, 2]},
                  {"id": "b", "owner": 1, "type": "rank3", "tile": [2, 2]}],
    }, {"0": {"units": [{"unit": "a", "path": ["E"]}]}})
    assert set(out) == {"units", "events", "stocks", "scores"}
    assert out["units"] == [{"id": "a", "owner": 0, "type": "rank5", "tile": {"x": 2, "y": 2}}]
    fight = next(e for e in out["events"] if e["kind"] == "fight")
    assert fight["tile"] == {"x": 2, "y": 2} and fight["winner"] == "a"
    assert {u["id"]: u.get("died", False) for u in fight["units"]} == {"a": False, "b": True}
    assert json.loads(json.dumps(out)) == out


def test_a12_units_created_in_a_scenario_get_fresh_ids() -> None:
    out = resolve_scenario({
        "rows": ["0#.....", ".......", "#####..", ".......", "......1"],
        "units": [{"id": "n1", "owner": 0, "type": "rank1", "tile": [1, 0]}],
        "stocks": {"0": {"food": 2}},
    }, {0: {"builds": [{"type": "rank1"}]}})
    assert sorted(u["id"] for u in out["units"]) == ["n1", "n2"]


def test_a7_scenario_dialect_is_lenient_and_numbers_islands_in_reading_order() -> None:
    """Scenario rows go through the board's one reader (``parse_board``, ``dialect="scenario"``):
    ragged rows, digits for bases, any other character plain land, islands by their first tile."""
    from engine.archipelago.board import parse_board

    rows = ["..B#", "1...", "....", "..#0", "x"]
    b = parse_board(rows, dialect="scenario")
    assert (b.width, b.height) == (4, 5)
    assert b.bases == ((3, 3), (0, 1))  # digit = seat; "B" is plain land here
    assert [(i.id, i.kind, i.owner, i.tiles) for i in b.islands] == [
        (0, "ring", None, ((2, 0), (3, 0))), (1, "home", 1, ((0, 1),)),
        (2, "home", 0, ((2, 3), (3, 3))), (3, "ring", None, ((0, 4),))]
    b = parse_board(rows, dialect="scenario", bases=[(2, 0), (0, 4)], kinds={(3, 3): "centre"})
    assert b.bases == ((2, 0), (0, 4))
    assert [(i.kind, i.owner) for i in b.islands] == [("home", 0), ("ring", None), ("centre", None),
                                                      ("home", 1)]
    # these rows are no map drawing: digits and other letters, rows of unequal length are errors there
    with pytest.raises(ValueError, match="row 1, column 0: unknown character '1'"):
        parse_board(rows)
    with pytest.raises(ValueError, match="row 1: 2 characters, expected 4"):
        parse_board(["..B#", "#."])
