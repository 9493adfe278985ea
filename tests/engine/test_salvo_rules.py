"""Rule tests for the Salvo engine, named after the rule ids of shared/spec/salvo.md (S1–S9)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import get_game
from engine.base import Event, Game, GameState, state_hash
from engine.errors import GameError, GameOver, IllegalOrder, InvalidOrder, NotYourTurn, RateLimited
from engine.salvo import GAME, SalvoState
from engine.salvo.board import ALL_SQUARES, FLEETS, coords, neighbours

Layout = list[dict[str, Any]]

# Seat 0's fleet: everything horizontal in the top-left corner, rows 1, 3, 5, 7.
LAYOUT_0: Layout = [
    {"ship": "battleship", "bow": "A1", "vertical": False},  # A1 B1 C1 D1 E1
    {"ship": "cruiser", "bow": "A3", "vertical": False},  # A3 B3 C3 D3
    {"ship": "submarine", "bow": "A5", "vertical": False},  # A5 B5 C5
    {"ship": "destroyer", "bow": "A7", "vertical": False},  # A7 B7
]
SQUARES_0 = ["A1", "B1", "C1", "D1", "E1", "A3", "B3", "C3", "D3", "A5", "B5", "C5", "A7", "B7"]
# Seat 1's fleet.
LAYOUT_1: Layout = [
    {"ship": "battleship", "bow": "J1", "vertical": True},  # J1 J2 J3 J4 J5
    {"ship": "cruiser", "bow": "H1", "vertical": True},  # H1 H2 H3 H4
    {"ship": "submarine", "bow": "F8"},  # F8 G8 H8 (vertical omitted = horizontal)
    {"ship": "destroyer", "bow": "A10", "vertical": False},  # A10 B10
]
SQUARES_1 = ["J1", "J2", "J3", "J4", "J5", "H1", "H2", "H3", "H4", "F8", "G8", "H8", "A10", "B10"]
MISSES_AT_0 = [sq for sq in reversed(ALL_SQUARES) if sq not in SQUARES_0]  # J10, I10, ...
MISSES_AT_1 = [sq for sq in ALL_SQUARES if sq not in SQUARES_1]  # A1, B1, ...

# Four salvos that sink a whole fleet exactly, each within the shots the shooter then has (S4):
# 7 = battleship + 2 cruiser squares; 4 (battleship gone) = rest of cruiser + 2 submarine squares;
# 2 (submarine and destroyer afloat) = last submarine square + 1 destroyer square; 1 = last square.
SINK_1 = [SQUARES_1[0:7], SQUARES_1[7:11], SQUARES_1[11:13], SQUARES_1[13:14]]
SINK_0 = [SQUARES_0[0:7], SQUARES_0[7:11], SQUARES_0[11:13], SQUARES_0[13:14]]


def new(config: dict[str, Any] | None = None, seed: int = 7) -> SalvoState:
    return GAME.new_game(config or {}, seed)


def placed(config: dict[str, Any] | None = None, seed: int = 7,
           layout_0: Layout | None = None, layout_1: Layout | None = None
           ) -> SalvoState:
    state, _ = GAME.resolve(new(config, seed), {0: {"placement": layout_0 or LAYOUT_0},
                                                1: {"placement": layout_1 or LAYOUT_1}})
    return state


def fire(state: SalvoState, shots: dict[int, list[str]]) -> tuple[SalvoState, list[Event]]:
    return GAME.resolve(state, {p: {"shots": list(squares)} for p, squares in shots.items()})


def refused(state: SalvoState, player: int, orders: Any, error: type[GameError]) -> GameError:
    """Assert that ``orders`` are refused with ``error`` by validate AND resolve, changing nothing."""
    before = state.to_dict()
    with pytest.raises(error) as info:
        GAME.validate(state, player, orders)
    with pytest.raises(error):
        GAME.resolve(state, {player: orders})
    assert state.to_dict() == before
    return info.value


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def fleet_squares(view: dict[str, Any]) -> dict[str, list[str]]:
    return {ship["name"]: ship["squares"] for ship in view["fleet"]}


# --- S1: two players, a 10×10 grid A–J × 1–10 ------------------------------------------------------

def test_s1_grid_is_ten_by_ten_with_a1_top_left() -> None:
    assert len(ALL_SQUARES) == 100 and len(set(ALL_SQUARES)) == 100
    assert coords("A1") == (0, 0) and coords("J1") == (9, 0) and coords("A10") == (0, 9)
    assert sorted(neighbours("A1")) == ["A2", "B1"]
    assert sorted(neighbours("E5")) == ["D5", "E4", "E6", "F5"]


def test_s1_square_off_the_grid_is_refused() -> None:
    state = placed()
    for square in ("K1", "A11", "A0", "Z9"):
        err = refused(state, 0, {"shots": ["B2", square]}, IllegalOrder)
        assert err.rule == "S1" and err.field == "shots[1]"
        assert f"square {square} is off the grid (A–J, 1–10)" in str(err)


def test_s1_malformed_square_is_invalid() -> None:
    state = placed()
    for bad in ("hello", "", "B", "7B", "B 7", 7, None, ["B7"]):
        err = refused(state, 0, {"shots": ["C3", bad]}, InvalidOrder)
        assert err.field == "shots[1]"


def test_s1_lowercase_square_names_are_accepted_as_the_same_square() -> None:
    state, _ = fire(placed(), {0: ["j1"], 1: []})
    assert [s["square"] for s in GAME.view(state, 0)["shots"]] == ["J1"]
    err = refused(state, 0, {"shots": ["J1"]}, IllegalOrder)
    assert err.rule == "S5"


def test_s1_only_two_players() -> None:
    assert GAME.min_players == GAME.max_players == 2
    for players in (1, 3, True, "2"):
        with pytest.raises(InvalidOrder) as info:
            GAME.normalize_config({"players": players})
        assert info.value.field == "players"


# --- config ---------------------------------------------------------------------------------------

def test_config_defaults_are_filled() -> None:
    assert GAME.normalize_config({}) == {"players": 2, "mode": "salvo", "fleet": "default",
                                         "first_player": "creator", "max_rounds": 100}
    assert GAME.normalize_config({"mode": "classic", "max_rounds": 7})["max_rounds"] == 7


@pytest.mark.parametrize(("config", "field"), [
    ({"mode": "turbo"}, "mode"), ({"fleet": "armada"}, "fleet"), ({"first_player": "last"}, "first_player"),
    ({"max_rounds": 0}, "max_rounds"), ({"max_rounds": True}, "max_rounds"),
    ({"max_rounds": "9"}, "max_rounds"),
    ({"colour": "red"}, "colour"),
])
def test_config_rejects_bad_values_naming_the_field(config: Any, field: str) -> None:
    with pytest.raises(InvalidOrder) as info:
        GAME.normalize_config(config)
    assert info.value.field == field
    with pytest.raises(InvalidOrder):
        GAME.new_game(config, 1)


def test_get_game_returns_the_salvo_engine() -> None:
    game: Game = GAME  # mypy checks the protocol here
    assert get_game("salvo") is game
    assert GAME.name == "salvo"
    assert isinstance(new(), GameState)


# --- S2: fleets -------------------------------------------------------------------------------------

def test_s2_default_fleet_is_battleship_cruiser_submarine_destroyer() -> None:
    view = GAME.view(new(), 0)
    assert view["fleet_spec"] == [{"name": "battleship", "size": 5}, {"name": "cruiser", "size": 4},
                                  {"name": "submarine", "size": 3}, {"name": "destroyer", "size": 2}]


def test_s2_variant_fleet_has_two_numbered_destroyers() -> None:
    view = GAME.view(new({"fleet": "variant"}), 1)
    assert view["fleet_spec"] == [{"name": "battleship", "size": 5}, {"name": "cruiser", "size": 3},
                                  {"name": "destroyer1", "size": 2}, {"name": "destroyer2", "size": 2}]


def test_s2_variant_destroyers_are_reported_and_sunk_separately() -> None:
    variant_1: Layout = [{"ship": "battleship", "bow": "J1", "vertical": True},
                         {"ship": "cruiser", "bow": "H1", "vertical": True},
                         {"ship": "destroyer1", "bow": "A10"}, {"ship": "destroyer2", "bow": "D10"}]
    variant_0: Layout = [{"ship": "battleship", "bow": "A1"}, {"ship": "cruiser", "bow": "A3"},
                 {"ship": "destroyer1", "bow": "A5"}, {"ship": "destroyer2", "bow": "A7"}]
    state = placed({"fleet": "variant"}, layout_0=variant_0, layout_1=variant_1)
    assert GAME.view(state, 0)["shots_allowed"] == 3 + 2 + 1 + 1
    state, events = fire(state, {0: ["A10", "D10", "E5"], 1: []})
    report = GAME.view(state, 0)["reports"][0]
    assert report == {"round": 1, "hits": 2, "sunk": [],
                      "ships": [{"ship": "destroyer1", "count": 1}, {"ship": "destroyer2", "count": 1}]}
    state, events = fire(state, {0: ["B10"], 1: []})
    sunk = [e.data for e in events if e.kind == "ship_sunk"]
    assert sunk == [{"round": 2, "owner": 1, "ship": "destroyer1"}]
    assert GAME.view(state, 0)["enemy_sunk"] == ["destroyer1"]
    assert GAME.view(state, 1)["shots_allowed"] == 3 + 2 + 1  # destroyer2 still afloat


def test_s2_ship_not_in_the_fleet_is_refused() -> None:
    state = new({"fleet": "variant"})
    layout = [{"ship": "battleship", "bow": "A1"}, {"ship": "submarine", "bow": "A3"}]
    err = refused(state, 0, {"placement": layout}, IllegalOrder)
    assert err.rule == "S2" and err.field == "placement[1].ship" and "submarine" in str(err)


# --- S3: placement --------------------------------------------------------------------------------

def test_s3_ships_go_right_or_down_from_the_bow() -> None:
    state = placed()
    assert fleet_squares(GAME.view(state, 0)) == {
        "battleship": ["A1", "B1", "C1", "D1", "E1"], "cruiser": ["A3", "B3", "C3", "D3"],
        "submarine": ["A5", "B5", "C5"], "destroyer": ["A7", "B7"]}
    assert fleet_squares(GAME.view(state, 1)) == {
        "battleship": ["J1", "J2", "J3", "J4", "J5"], "cruiser": ["H1", "H2", "H3", "H4"],
        "submarine": ["F8", "G8", "H8"], "destroyer": ["A10", "B10"]}


def test_s3_touching_ships_are_allowed() -> None:
    touching: Layout = [{"ship": "battleship", "bow": "A1"}, {"ship": "cruiser", "bow": "A2"},
                {"ship": "submarine", "bow": "F1", "vertical": True}, {"ship": "destroyer", "bow": "G1"}]
    GAME.validate(new(), 0, {"placement": touching})
    state = placed(layout_0=touching)
    assert fleet_squares(GAME.view(state, 0))["destroyer"] == ["G1", "H1"]


def test_s3_overlapping_ships_are_refused() -> None:
    layout = [{"ship": "cruiser", "bow": "A2"}, {"ship": "destroyer", "bow": "B2"},
              {"ship": "battleship", "bow": "A5"}, {"ship": "submarine", "bow": "A7"}]
    err = refused(new(), 0, {"placement": layout}, IllegalOrder)
    assert err.rule == "S3" and err.field == "placement[1]"
    assert "destroyer at B2 overlaps cruiser" in str(err)


def test_s3_ship_running_off_the_grid_is_refused() -> None:
    layout = [{"ship": "battleship", "bow": "H1"}, *LAYOUT_0[1:]]
    err = refused(new(), 0, {"placement": layout}, IllegalOrder)
    assert err.rule == "S3" and err.field == "placement[0].bow" and "battleship at H1" in str(err)
    layout = [*LAYOUT_0[:3], {"ship": "destroyer", "bow": "C10", "vertical": True}]
    err = refused(new(), 0, {"placement": layout}, IllegalOrder)
    assert err.field == "placement[3].bow" and "destroyer at C10" in str(err)


def test_s3_every_ship_exactly_once() -> None:
    err = refused(new(), 0, {"placement": LAYOUT_0[:3]}, IllegalOrder)
    assert err.rule == "S3" and "destroyer" in str(err)
    twice = [*LAYOUT_0, {"ship": "destroyer", "bow": "H9"}]
    err = refused(new(), 0, {"placement": twice}, IllegalOrder)
    assert err.field == "placement[4].ship" and "destroyer is placed twice" in str(err)


@pytest.mark.parametrize(("orders", "field"), [
    ({"placement": "A1"}, "placement"),
    ({"placement": ["battleship A1"]}, "placement[0]"),
    ({"placement": [{"ship": "battleship", "bow": "A1", "angle": 90}]}, "placement[0].angle"),
    ({"placement": [{"ship": 5, "bow": "A1"}]}, "placement[0].ship"),
    ({"placement": [{"ship": "battleship"}]}, "placement[0].bow"),
    ({"placement": [{"ship": "battleship", "bow": "A1", "vertical": "yes"}]}, "placement[0].vertical"),
    ({"random_placement": "yes"}, "random_placement"),
    ({"random_placement": True, "placement": LAYOUT_0}, "random_placement"),
    ({"shots": ["A1"]}, "shots"),
    ({"moves": []}, "moves"),
    ("A1", "orders"),
])
def test_s3_malformed_placement_orders_are_invalid(orders: Any, field: str) -> None:
    err = refused(new(), 0, orders, InvalidOrder)
    assert err.field == field


def test_s3_placement_is_refused_after_round_0() -> None:
    state = placed()
    for key, value in (("placement", LAYOUT_0), ("random_placement", True)):
        err = refused(state, 0, {key: value}, InvalidOrder)
        assert err.field == key and err.rule == "S3"


def _assert_legal_fleet(view: dict[str, Any], fleet: str) -> None:
    sizes = {spec.name: spec.size for spec in FLEETS[fleet]}
    assert [ship["name"] for ship in view["fleet"]] == list(sizes)
    seen: set[str] = set()
    for ship in view["fleet"]:
        cells = [coords(sq) for sq in ship["squares"]]
        assert len(cells) == sizes[ship["name"]]
        cols, rows = {c for c, _ in cells}, {r for _, r in cells}
        assert len(cols) == 1 or len(rows) == 1  # a straight line ...
        span = (max(rows) - min(rows)) if len(cols) == 1 else (max(cols) - min(cols))
        assert span == len(cells) - 1  # ... without gaps
        assert seen.isdisjoint(ship["squares"])
        seen.update(ship["squares"])


@pytest.mark.parametrize("fleet", ["default", "variant"])
def test_s3_random_placement_is_legal_and_comes_from_the_seed(fleet: Any) -> None:
    fleets = set()
    for seed in range(20):
        state, events = GAME.resolve(new({"fleet": fleet}, seed), {0: {"random_placement": True}, 1: {}})
        assert kinds(events) == ["placement_done"]
        for player in (0, 1):
            _assert_legal_fleet(GAME.view(state, player), fleet)
        again, _ = GAME.resolve(new({"fleet": fleet}, seed), {0: {"random_placement": True}, 1: {}})
        assert state_hash(again) == state_hash(state)
        fleets.add(json.dumps(GAME.view(state, 0)["fleet"]))
    assert len(fleets) > 1  # different seeds, different fleets


def test_s3_player_without_orders_gets_a_random_placement() -> None:
    state, _ = GAME.resolve(new(), {0: {"placement": LAYOUT_0}})
    _assert_legal_fleet(GAME.view(state, 1), "default")
    assert fleet_squares(GAME.view(state, 0))["battleship"] == ["A1", "B1", "C1", "D1", "E1"]
    empty, _ = GAME.resolve(new(), {0: {"placement": LAYOUT_0}, 1: {}})
    assert state_hash(empty) == state_hash(state)  # {} is "no orders": the same random placement


def test_s3_placement_is_secret_and_simultaneous() -> None:
    state = new()
    assert GAME.expected_players(state) == [0, 1]
    view = GAME.view(state, 0)
    assert view["phase"] == "placement" and view["fleet"] == [] and view["shots_allowed"] == 0
    shots_err = refused(state, 1, {"shots": ["A1"]}, InvalidOrder)
    assert shots_err.field == "shots"


# --- S4: modes and the number of shots --------------------------------------------------------------

def test_s4_salvo_mode_gives_seven_shots_at_the_start() -> None:
    state = placed()
    assert GAME.expected_players(state) == [0, 1]
    for player in (0, 1):
        view = GAME.view(state, player)
        assert view["phase"] == "firing" and view["shots_allowed"] == 3 + 2 + 1 + 1
        assert "active_player" not in view


def test_s4_shots_allowed_shrink_as_ships_sink() -> None:
    state = placed()
    expected_after = [4, 2, 1]  # battleship (3) sunk; cruiser (2) sunk; submarine (1) sunk
    for rnd, squares in enumerate(SINK_1[:3]):
        state, _ = fire(state, {0: squares, 1: []})
        assert GAME.view(state, 1)["shots_allowed"] == expected_after[rnd]
        assert GAME.view(state, 0)["shots_allowed"] == 7  # nothing of seat 0 was hit


def test_s4_too_many_shots_are_refused() -> None:
    state = placed()
    err = refused(state, 0, {"shots": MISSES_AT_1[:8]}, IllegalOrder)
    assert err.rule == "S4" and err.field == "shots" and "7 shots allowed, 8 given" in str(err)
    state, _ = fire(state, {0: SINK_1[0], 1: []})
    err = refused(state, 1, {"shots": MISSES_AT_0[:5]}, IllegalOrder)
    assert "4 shots allowed, 5 given" in str(err)


def test_s4_classic_players_alternate_one_shot_per_turn() -> None:
    state = placed({"mode": "classic"})
    assert GAME.expected_players(state) == [0]
    assert GAME.view(state, 0)["active_player"] == 0 and GAME.view(state, 1)["active_player"] == 0
    assert GAME.view(state, 0)["shots_allowed"] == 1 and GAME.view(state, 1)["shots_allowed"] == 0
    err = refused(state, 1, {"shots": ["A1"]}, NotYourTurn)
    assert err.rule == "S4" and not isinstance(err, GameOver)
    err = refused(state, 0, {"shots": ["J1", "J2"]}, IllegalOrder)
    assert err.rule == "S4" and "exactly one" in str(err)
    err = refused(state, 0, {}, IllegalOrder)
    assert err.rule == "S4"
    rnd = state.round
    state, _ = fire(state, {0: ["J1"]})
    assert state.round == rnd + 1
    assert GAME.expected_players(state) == [1] and GAME.view(state, 0)["active_player"] == 1
    refused(state, 0, {"shots": ["J2"]}, NotYourTurn)
    state, _ = fire(state, {1: ["J10"]})
    assert GAME.expected_players(state) == [0]


def test_s4_classic_game_to_a_win() -> None:
    state = placed({"mode": "classic"})
    turns = 0
    for i, square in enumerate(SQUARES_1):
        state, events = fire(state, {0: [square]})
        turns += 1
        if i < len(SQUARES_1) - 1:
            assert GAME.outcome(state) is None
            state, events = fire(state, {1: [MISSES_AT_0[i]]})
            turns += 1
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,) and not outcome.draw
    assert turns == 2 * len(SQUARES_1) - 1 and state.round == 1 + turns
    assert events[-1].kind == "game_over"


def test_s4_classic_first_player_creator_or_random() -> None:
    for seed in range(10):
        assert GAME.view(placed({"mode": "classic"}, seed), 0)["active_player"] == 0
    firsts = set()
    for seed in range(30):
        state = placed({"mode": "classic", "first_player": "random"}, seed)
        first = GAME.view(state, 0)["active_player"]
        assert GAME.expected_players(state) == [first]
        firsts.add(first)
    assert firsts == {0, 1}


# --- S5: one shot per square ----------------------------------------------------------------------

def test_s5_shooting_a_square_twice_is_refused() -> None:
    state, _ = fire(placed(), {0: ["A1"], 1: []})
    state, _ = fire(state, {0: ["C4"], 1: []})
    err = refused(state, 0, {"shots": ["E5", "C4"]}, IllegalOrder)
    assert err.rule == "S5" and err.field == "shots[1]"
    assert "square C4 was already shot in round 2" in str(err)
    GAME.validate(state, 1, {"shots": ["C4"]})  # the other player's grid is another grid


def test_s5_naming_a_square_twice_in_one_salvo_is_refused() -> None:
    err = refused(placed(), 0, {"shots": ["B7", "C3", "B7"]}, IllegalOrder)
    assert err.rule == "S5" and err.field == "shots[2]" and "B7" in str(err)


def test_s5_fewer_shots_than_allowed_are_legal() -> None:
    state = placed()
    few: list[dict[str, Any]] = [{"shots": ["A1"]}, {"shots": []}, {}]
    for orders in few:
        GAME.validate(state, 0, orders)
    state, _ = GAME.resolve(state, {0: {"shots": ["A1"]}, 1: {}})
    assert len(GAME.view(state, 0)["shots"]) == 1 and GAME.view(state, 1)["shots"] == []
    assert GAME.view(state, 0)["reports"] == [{"round": 1, "hits": 0, "ships": [], "sunk": []}]


def test_s5_shots_must_be_a_list() -> None:
    err = refused(placed(), 0, {"shots": "A1"}, InvalidOrder)
    assert err.field == "shots"


# --- S6: reports ----------------------------------------------------------------------------------

def test_s6_report_names_ships_not_squares() -> None:
    state = placed()
    shots = ["J1", "J2", "H1", "A1", "B2", "F8", "C3"]  # battleship ×2, cruiser ×1, submarine ×1
    state, events = fire(state, {0: shots, 1: []})
    expected = {"round": 1, "hits": 4, "sunk": [],
                "ships": [{"ship": "battleship", "count": 2}, {"ship": "cruiser", "count": 1},
                          {"ship": "submarine", "count": 1}]}
    assert GAME.view(state, 0)["reports"] == [expected]
    report_events = [e for e in events if e.kind == "salvo_report"]
    mine = [(e.audience, dict(e.data)) for e in report_events if e.visible_to(0)]
    assert mine == [(frozenset({0}), expected)]
    assert [e.audience for e in report_events] == [frozenset({0}), frozenset({1})]
    assert not any(sq in json.dumps(expected) for sq in shots)


def test_s6_target_is_told_which_squares_were_shot() -> None:
    state, events = fire(placed(), {0: ["J1", "A1"], 1: ["J10"]})
    received = [e for e in events if e.kind == "shots_received"]
    assert {(e.audience, tuple(e.data["squares"])) for e in received} == {
        (frozenset({1}), ("J1", "A1")), (frozenset({0}), ("J10",))}
    incoming = GAME.view(state, 1)["incoming"]
    assert incoming == [{"square": "J1", "round": 1, "hit": True}, {"square": "A1", "round": 1, "hit": False}]
    assert GAME.view(state, 1)["fleet"][0]["hits"] == ["J1"]


def test_s6_sinking_is_announced_to_both_players() -> None:
    state, _ = fire(placed(), {0: ["A10"], 1: []})
    state, events = fire(state, {0: ["B10"], 1: []})
    sunk = [e for e in events if e.kind == "ship_sunk"]
    assert len(sunk) == 1 and sunk[0].audience is None
    assert dict(sunk[0].data) == {"round": 2, "owner": 1, "ship": "destroyer"}
    assert GAME.view(state, 0)["reports"][1]["sunk"] == ["destroyer"]
    assert GAME.view(state, 0)["enemy_sunk"] == ["destroyer"]
    own = {ship["name"]: ship for ship in GAME.view(state, 1)["fleet"]}
    assert own["destroyer"]["sunk"] and not own["battleship"]["sunk"]


def test_s6_classic_mode_reports_each_shot_hit_or_miss() -> None:
    state = placed({"mode": "classic"})
    state, events = fire(state, {0: ["J1"]})
    assert [(e.kind, e.audience, dict(e.data)) for e in events] == [
        ("shot", None, {"round": 1, "shooter": 0, "square": "J1", "hit": True})]
    state, events = fire(state, {1: ["J10"]})
    assert dict(events[0].data)["hit"] is False
    assert GAME.view(state, 0)["shots"] == [{"square": "J1", "round": 1, "hit": True}]
    assert GAME.view(state, 1)["shots"] == [{"square": "J10", "round": 2, "hit": False}]
    assert GAME.view(state, 0)["reports"] == []


# --- S7: the end ----------------------------------------------------------------------------------

def test_s7_whole_game_to_a_win() -> None:
    state = placed()
    for rnd, squares in enumerate(SINK_1):
        assert GAME.outcome(state) is None
        state, events = fire(state, {0: squares, 1: [MISSES_AT_0[rnd]]})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,) and not outcome.draw
    assert outcome.reason == "fleet_sunk" and outcome.scores == (14, 0)
    assert events[-1].kind == "game_over" and events[-1].audience is None
    assert dict(events[-1].data) == {"winners": [0], "draw": False, "reason": "fleet_sunk", "scores": [14, 0]}
    assert GAME.expected_players(state) == []
    for player in (0, 1):
        view = GAME.view(state, player)
        assert view["phase"] == "over" and view["shots_allowed"] == 0
        assert view["outcome"] == {"winners": [0], "draw": False, "reason": "fleet_sunk", "scores": [14, 0]}
    err = refused(state, 1, {"shots": ["A1"]}, GameOver)
    assert err.rule == "S7" and err.code == "game/over" and str(err) == "rule S7: the game is over"


def test_s7_both_fleets_sunk_by_the_same_salvo_is_a_draw() -> None:
    state = placed()
    for rnd in range(4):
        assert GAME.outcome(state) is None
        state, events = fire(state, {0: SINK_1[rnd], 1: SINK_0[rnd]})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.draw and outcome.winners == ()
    assert outcome.reason == "both_fleets_sunk"
    assert sorted((e.data["owner"], e.data["ship"]) for e in events if e.kind == "ship_sunk") == [
        (0, "destroyer"), (1, "destroyer")]


def test_s7_max_rounds_more_squares_hit_wins_else_draw() -> None:
    state = placed({"max_rounds": 2})
    state, _ = fire(state, {0: ["J1", "A1"], 1: ["J10"]})
    assert GAME.outcome(state) is None
    state, _ = fire(state, {0: ["B2"], 1: ["J9"]})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,) and outcome.reason == "max_rounds"
    assert outcome.scores == (1, 0)
    state = placed({"max_rounds": 1})
    state, _ = fire(state, {0: ["J1"], 1: ["A1"]})
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.draw and outcome.reason == "max_rounds"


# --- S8: what a player sees -----------------------------------------------------------------------

def test_s8_salvo_view_hides_which_shots_hit_and_the_enemy_ships() -> None:
    state, _ = fire(placed(), {0: ["J1", "J2", "A1"], 1: ["A1", "J10"]})
    view = GAME.view(state, 0)
    assert view["shots"] == [{"square": "J1", "round": 1}, {"square": "J2", "round": 1},
                             {"square": "A1", "round": 1}]
    assert "enemy_fleet" not in view and "outcome" not in view
    text = json.dumps({k: v for k, v in view.items() if k not in ("fleet", "incoming")})
    for square in SQUARES_1:
        if square not in ("J1", "J2"):
            assert f'"{square}"' not in text


def test_s8_view_depends_on_the_enemy_fleet_only_through_reports() -> None:
    # Two enemy fleets that share only J5 (in the battleship) among the squares seat 0 shoots.
    other_1: Layout = [{"ship": "battleship", "bow": "F5"},
                       {"ship": "cruiser", "bow": "A1", "vertical": True},
                       {"ship": "submarine", "bow": "C1"},
                       {"ship": "destroyer", "bow": "C9", "vertical": True}]
    salvo = ["J5", "D7", "E9", "B6", "G2", "I9", "F3"]
    a, b = placed(layout_1=LAYOUT_1), placed(layout_1=other_1)
    assert GAME.view(a, 0) == GAME.view(b, 0)
    a, events_a = fire(a, {0: salvo, 1: MISSES_AT_0[:7]})
    b, events_b = fire(b, {0: salvo, 1: MISSES_AT_0[:7]})
    assert GAME.view(a, 0) == GAME.view(b, 0)
    assert GAME.view(a, 0)["reports"][0]["ships"] == [{"ship": "battleship", "count": 1}]
    seen_a = [e.to_dict() for e in events_a if e.visible_to(0)]
    assert seen_a == [e.to_dict() for e in events_b if e.visible_to(0)]
    assert GAME.view(a, 1) != GAME.view(b, 1)  # seat 1 does see its own (different) fleet


def test_s8_game_over_shows_both_fleets_and_hits() -> None:
    state = placed()
    for rnd, squares in enumerate(SINK_1):
        state, _ = fire(state, {0: squares, 1: [MISSES_AT_0[rnd]]})
    view = GAME.view(state, 1)
    enemy = {ship["name"]: ship["squares"] for ship in view["enemy_fleet"]}
    assert enemy == fleet_squares(GAME.view(state, 0))
    assert all(not s["hit"] for s in view["shots"])
    assert all(s["hit"] for s in GAME.view(state, 0)["shots"])
    assert all(ship["sunk"] for ship in GAME.view(state, 0)["enemy_fleet"])


def test_s8_view_has_exactly_the_documented_keys_and_no_nulls() -> None:
    base = {"phase", "round", "version", "mode", "you", "shots_allowed", "fleet_spec", "fleet", "incoming",
            "shots", "reports", "enemy_sunk"}
    state = placed()
    assert set(GAME.view(state, 0)) == base
    assert set(GAME.view(placed({"mode": "classic"}), 0)) == base | {"active_player"}
    for rnd, squares in enumerate(SINK_1):
        state, _ = fire(state, {0: squares, 1: [MISSES_AT_0[rnd]]})
    view = GAME.view(state, 0)
    assert set(view) == base | {"enemy_fleet", "outcome"}
    assert "null" not in json.dumps(view)


# --- S9: autopilot and who is expected --------------------------------------------------------------

def test_s9_expected_players() -> None:
    assert GAME.expected_players(new()) == [0, 1]
    assert GAME.expected_players(new({"mode": "classic"})) == [0, 1]  # placement is simultaneous
    assert GAME.expected_players(placed()) == [0, 1]
    assert GAME.expected_players(placed({"mode": "classic"})) == [0]


def test_s9_autopilot_places_at_random_in_round_0() -> None:
    assert GAME.autopilot(GAME.view(new(), 0)) == {"random_placement": True}


def test_s9_autopilot_produces_valid_orders_for_an_absent_player() -> None:
    for config in ({}, {"fleet": "variant"}, {"mode": "classic"}):
        state = GAME.new_game(config, 3)
        while GAME.outcome(state) is None:
            orders = {}
            for player in GAME.expected_players(state):
                orders[player] = GAME.autopilot(GAME.view(state, player))
                GAME.validate(state, player, orders[player])
                if state.round > 0:
                    assert len(orders[player]["shots"]) == GAME.view(state, player)["shots_allowed"]
            state, _ = GAME.resolve(state, orders)
        assert state.round <= 101


def test_s9_resolve_runs_the_autopilot_for_a_missing_player() -> None:
    state = placed()
    after, _ = GAME.resolve(state, {0: {"shots": ["A1"]}})
    auto = GAME.autopilot(GAME.view(state, 1))
    explicit, _ = GAME.resolve(state, {0: {"shots": ["A1"]}, 1: auto})
    assert len(GAME.view(after, 1)["shots"]) == 7
    assert state_hash(after) == state_hash(explicit)


def test_s9_autopilot_is_deterministic() -> None:
    state, _ = fire(placed(), {0: ["J3", "A1"], 1: ["J10"]})
    view = GAME.view(state, 0)
    assert GAME.autopilot(view) == GAME.autopilot(json.loads(json.dumps(view)))


def test_s9_classic_autopilot_hunts_around_a_hit() -> None:
    state, _ = fire(placed({"mode": "classic"}), {0: ["J3"]})
    state, _ = fire(state, {1: ["J10"]})
    shot = GAME.autopilot(GAME.view(state, 0))["shots"]
    assert shot[0] in {"J2", "J4", "I3"}
    state, _ = fire(state, {0: ["J4"]})
    state, _ = fire(state, {1: ["J9"]})
    shot = GAME.autopilot(GAME.view(state, 0))["shots"]
    assert shot[0] in {"J2", "J5"}  # extends the line of hits J3–J4


def test_s9_salvo_autopilot_shoots_next_to_rounds_that_hit() -> None:
    spread = ["J3", "B2", "E2", "C6", "F5", "B9", "E9"]  # J3 hits the battleship, the rest miss
    state, _ = fire(placed(), {0: spread, 1: []})
    assert GAME.view(state, 0)["reports"][0]["hits"] == 1
    shots = GAME.autopilot(GAME.view(state, 0))["shots"]
    near = {n for sq in spread for n in neighbours(sq)} - set(spread)
    assert len(shots) == 7 and set(shots) <= near
    # a round that hit nothing gives no lead: seat 1's salvo is not followed up around its misses
    misses = ["J10", "F10", "J6", "G3", "C9", "H8", "E6"]
    state, _ = fire(placed(), {0: [], 1: misses})
    assert GAME.view(state, 1)["reports"][0]["hits"] == 0
    shots = GAME.autopilot(GAME.view(state, 1))["shots"]
    assert len(shots) == 7 and not set(shots) <= {n for sq in misses for n in neighbours(sq)}


# --- contract: immutability, determinism, serialisation ------------------------------------------

def test_resolve_does_not_mutate_its_input_and_bumps_version_and_round() -> None:
    state = new()
    before = state.to_dict()
    after, _ = GAME.resolve(state, {0: {"placement": LAYOUT_0}, 1: {"placement": LAYOUT_1}})
    assert state.to_dict() == before
    assert (after.version, after.round) == (state.version + 1, state.round + 1)
    before = after.to_dict()
    later, _ = fire(after, {0: ["J1"], 1: ["A1"]})
    assert after.to_dict() == before
    assert (later.version, later.round) == (after.version + 1, after.round + 1)


def test_same_seed_and_orders_give_the_same_state_hash() -> None:
    def play(seed: int) -> list[str]:
        state = new({}, seed)
        hashes = []
        while GAME.outcome(state) is None:
            state, _ = GAME.resolve(state, {p: GAME.autopilot(GAME.view(state, p))
                                            for p in GAME.expected_players(state)})
            hashes.append(state_hash(state))
        return hashes

    assert play(11) == play(11)
    assert play(11) != play(12)


def test_state_round_trips_through_to_dict() -> None:
    states = [new({"mode": "classic", "first_player": "random", "fleet": "variant", "max_rounds": 40}, 5)]
    while GAME.outcome(states[-1]) is None:
        state = states[-1]
        auto = {p: GAME.autopilot(GAME.view(state, p)) for p in GAME.expected_players(state)}
        nxt, _ = GAME.resolve(state, auto)
        states.append(nxt)
    for state in states:
        d = state.to_dict()
        again = GAME.state_from_dict(json.loads(json.dumps(d)))
        assert again.to_dict() == d
        assert state_hash(again) == state_hash(state)
        assert GAME.view(again, 0) == GAME.view(state, 0)


def test_events_are_plain_data() -> None:
    _, events = fire(placed(), {0: SINK_1[0], 1: ["A1"]})
    for event in events:
        d = event.to_dict()
        assert Event.from_dict(json.loads(json.dumps(d))) == Event.from_dict(d)
        assert "null" not in json.dumps(d["data"])


# --- chat between rounds (act; A53 limit, which S9 borrows from Archipelago) ------------------------

def chat(state: SalvoState, player: int, text: str = "hello", to: int | None = None
         ) -> tuple[SalvoState, list[Event]]:
    fields: dict[str, Any] = {"text": text}
    if to is not None:
        fields["to"] = to
    return GAME.act(state, player, {"chat": fields})


def test_a53_chat_to_everyone_or_to_the_other_player() -> None:
    state = placed()
    before = state_hash(state)
    after, events = chat(state, 0, "good luck")
    assert [e.to_dict() for e in events] == [
        {"kind": "chat", "data": {"from": 0, "text": "good luck"}, "audience": None}]
    _, events = chat(state, 1, "thanks", to=0)
    assert [e.to_dict() for e in events] == [
        {"kind": "chat", "data": {"from": 1, "text": "thanks", "to": 0}, "audience": [0, 1]}]
    assert state_hash(state) == before  # act never mutates its input
    assert (after.round, after.version, after.chats) == (state.round, state.version, (1, 0))


@pytest.mark.parametrize(("action", "field"), [
    ({"chat": {"text": ""}}, "chat.text"),
    ({"chat": {"text": "   \n"}}, "chat.text"),
    ({"chat": {"text": "x" * 501}}, "chat.text"),
    ({"chat": {"text": 5}}, "chat.text"),
    ({"chat": {}}, "chat.text"),
    ({"chat": {"text": "hi", "to": 0}}, "chat.to"),
    ({"chat": {"text": "hi", "to": 2}}, "chat.to"),
    ({"chat": {"text": "hi", "to": "1"}}, "chat.to"),
    ({"chat": {"text": "hi", "loud": True}}, "chat.loud"),
    ({"chat": "hi"}, "chat"),
    ({"bank": {"give": "wood", "get": "iron"}}, "action"),
    ({"shots": ["A1"]}, "action"),
    ({}, "action"),
    ({"chat": {"text": "hi"}, "shots": ["A1"]}, "action"),
    (["chat"], "action"),
])
def test_a53_malformed_chat_and_unknown_actions_are_refused(action: Any, field: str) -> None:
    state = placed()
    before = state.to_dict()
    with pytest.raises(InvalidOrder) as info:
        GAME.act(state, 0, action)
    assert info.value.field == field
    assert state.to_dict() == before


def test_a53_chat_of_500_characters_is_accepted() -> None:
    _, events = chat(new(), 1, "é" * 500)
    assert events[0].data["text"] == "é" * 500


def test_a53_eleventh_chat_message_in_a_round_is_rate_limited() -> None:
    state = placed()
    for i in range(10):
        state, _ = chat(state, 0, f"message {i}")
    before = state_hash(state)
    with pytest.raises(RateLimited) as info:
        chat(state, 0, "one too many")
    assert info.value.rule == "A53" and info.value.field == "chat"
    assert state_hash(state) == before
    state, _ = chat(state, 1, "the other player still may")  # the limit is per player
    state, _ = fire(state, {0: ["A1"], 1: ["J10"]})
    assert state.chats == (0, 0)
    chat(state, 0, "a new round")


def test_a53_chat_counter_round_trips_and_leaves_chatless_states_unchanged() -> None:
    state = placed()
    d = state.to_dict()
    assert "chats" not in d  # states without chat serialise (and hash) as before the counter
    state, _ = chat(state, 1)
    d = state.to_dict()
    assert d["chats"] == [0, 1]
    again = GAME.state_from_dict(json.loads(json.dumps(d)))
    assert again.chats == (0, 1) and state_hash(again) == state_hash(state)


def test_s7_chat_is_allowed_after_the_game_is_over_orders_are_not() -> None:
    state = placed()
    for rnd, squares in enumerate(SINK_1):
        state, _ = fire(state, {0: squares, 1: [MISSES_AT_0[rnd]]})
    assert GAME.outcome(state) is not None
    _, events = chat(state, 1, "well played", to=0)
    assert events[0].audience == frozenset({0, 1})
    with pytest.raises(GameOver):
        GAME.validate(state, 0, {"shots": []})
    assert GAME.random_orders(GAME.view(state, 0), 1) == {}


# --- random legal orders from the view (bots, load tests, an agent's legal moves) -----------------

@pytest.mark.parametrize("config", [{}, {"fleet": "variant"}, {"mode": "classic", "first_player": "random"}])
def test_s3_s5_random_orders_are_legal_and_deterministic(config: dict[str, Any]) -> None:
    state = new(config, 4)
    placements = set()
    while GAME.outcome(state) is None:
        orders: dict[int, dict[str, Any]] = {}
        for p in (0, 1):
            view = GAME.view(state, p)
            o = GAME.random_orders(view, state.round * 10 + p)
            assert o == GAME.random_orders(json.loads(json.dumps(view)), state.round * 10 + p)
            if p not in GAME.expected_players(state):
                assert o == {}  # classic mode: not its turn
                continue
            GAME.validate(state, p, o)
            if state.round == 0:
                placements.add(json.dumps(o, sort_keys=True))
            else:
                shots = o["shots"]
                assert 1 <= len(shots) <= view["shots_allowed"]
                assert not set(shots) & {s["square"] for s in view["shots"]}
            orders[p] = o
        state, _ = GAME.resolve(state, orders)
    assert len(placements) == 2  # two seats, two different placements
    assert state.round <= state.max_rounds + 1


def test_s3_random_orders_place_explicitly_or_ask_for_a_random_placement() -> None:
    view = GAME.view(new(), 0)
    seen = {next(iter(GAME.random_orders(view, seed))) for seed in range(40)}
    assert seen == {"placement", "random_placement"}
