"""Orders: parsing and validation at submission (A6, A13–A20, A24, A28, A91)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from engine.archipelago import GAME
from engine.archipelago.orders import parse_orders, plan_path
from engine.errors import GameError, GameOver, IllegalOrder, InvalidOrder, NotYourTurn
from tests.engine.archipelago.boards import U, state

B = [
    "0#........",
    "..........",
    "##########",
    "..........",
    "........#1",
]


def refuse(st: Any, player: int, o: Any) -> Any:
    with pytest.raises(GameError) as e:
        GAME.validate(st, player, o)
    return e.value


def test_a18_one_order_per_unit() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["E"]}, {"unit": "a", "path": ["W"]}]})
    assert isinstance(e, IllegalOrder) and e.rule == "A18" and e.field == "units[1].unit" and "a" in e.reason


def test_a18_path_no_longer_than_move() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2), U("s", 0, "scout", 5, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["E", "E"]}]})
    assert e.rule == "A18" and e.field == "units[0].path[1]"
    GAME.validate(st, 0, {"units": [{"unit": "s", "path": ["E", "E", "E"]}]})


def test_a18_unknown_or_enemy_unit_is_refused_the_same_way() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2), U("b", 1, "rank1", 4, 2)])
    e1 = refuse(st, 0, {"units": [{"unit": "b", "path": ["E"]}]})
    e2 = refuse(st, 0, {"units": [{"unit": "zz", "path": ["E"]}]})
    assert e1.reason.replace("b", "?") == e2.reason.replace("zz", "?")


def test_a6_steps_are_orthogonal_only() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["NE"]}]})
    assert isinstance(e, InvalidOrder) and e.field == "units[0].path[0]"


def test_a18_exactly_one_of_path_to_action() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["E"], "action": "outpost"}]})
    assert isinstance(e, InvalidOrder)


def test_a18_destination_is_planned_as_a_shortest_path_over_explored_terrain() -> None:
    st = state(B, [U("a", 0, "scout", 2, 2)])
    p = parse_orders(st, 0, {"units": [{"unit": "a", "to": {"x": 5, "y": 2}}]}, strict=True)
    assert p.moves == {"a": ["E", "E", "E"]}


def test_a18_destination_beyond_move_is_truncated_to_move() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    p = parse_orders(st, 0, {"units": [{"unit": "a", "to": {"x": 6, "y": 2}}]}, strict=True)
    assert p.moves == {"a": ["E"]}


def test_a18_unreachable_destination_is_refused() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "to": {"x": 2, "y": 3}}]})
    assert e.rule == "A18"


def test_a28_path_ties_break_north_east_south_west() -> None:
    # open sea: from (2,1) to (3,2) both E-then-S and S-then-E are shortest; E comes first at step 1.
    sea = ["0.......", "........", "........", "........", ".......1"]
    st = state(sea, [U("s", 0, "dvora", 2, 1)])
    assert plan_path(st, 0, st.units["s"], (3, 2)) == ["E", "S"]
    assert plan_path(st, 0, st.units["s"], (1, 0)) == ["N", "W"]
    assert plan_path(st, 0, st.units["s"], (1, 2)) == ["S", "W"]


def test_a18_planning_uses_only_explored_tiles() -> None:
    sea = ["0.......", "........", "........", "........", ".......1"]
    st = state(sea, [U("s", 0, "dvora", 2, 1)], explored="sight")
    assert plan_path(st, 0, st.units["s"], (6, 3)) is None


def test_a20_a_step_into_an_unexplored_tile_is_accepted() -> None:
    st = state(B, [U("a", 0, "scout", 2, 2)], explored="sight")
    GAME.validate(st, 0, {"units": [{"unit": "a", "path": ["E", "E", "E"]}]})


def test_a20_wrong_terrain_is_found_at_resolution_not_at_submission() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    GAME.validate(st, 0, {"units": [{"unit": "a", "path": ["S"]}]})


def test_a20_builds_outposts_and_strikes_must_be_affordable_together() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)], stocks={"0": {"food": 2, "wood": 1}})
    GAME.validate(st, 0, {"units": [{"unit": "a", "action": "outpost"}], "builds": [{"type": "rank1"}]})
    e = refuse(st, 0, {"units": [{"unit": "a", "action": "outpost"}], "builds": [{"type": "rank2"}]})
    assert e.rule == "A20"


def test_a20_errors_name_the_field_rule_and_unit() -> None:
    st = state(B, [U("m", 0, "landmine", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "m", "path": ["E"]}]})
    assert e.field == "units[0].path" and e.rule == "A91" and "m" in e.reason
    assert e.to_dict()["code"] == "order/illegal"


def test_a16_validation_keeps_nothing_of_a_refused_submission() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    before = st.to_dict()
    refuse(st, 0, {"units": [{"unit": "a", "path": ["E"]}, {"unit": "zz", "path": ["E"]}]})
    GAME.validate(st, 0, {"units": [{"unit": "a", "path": ["E"]}]})
    assert st.to_dict() == before


def test_a91_steps_off_the_board_are_refused_at_validation() -> None:
    st = state(B, [U("a", 0, "rank1", 0, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["W"]}]})
    assert e.rule == "A91" and e.field == "units[0].path[0]"


def test_a91_orders_to_mines_are_refused() -> None:
    st = state(B, [U("m", 0, "landmine", 2, 2)])
    assert refuse(st, 0, {"units": [{"unit": "m", "to": {"x": 3, "y": 2}}]}).rule == "A91"


def test_a24_cargo_step_while_its_carrier_moves_is_refused() -> None:
    st = state(B, [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1")])
    e = refuse(st, 0, {"units": [{"unit": "s", "path": ["E"]}, {"unit": "a", "path": ["N"]}]})
    assert e.rule == "A24"


def test_a24_boarding_a_ship_with_a_move_order_is_refused() -> None:
    st = state(B, [U("s", 0, "dvora", 2, 3), U("a", 0, "rank1", 2, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["S"]}, {"unit": "s", "path": ["E"]}]})
    assert e.rule == "A24" and e.field == "units[0].path[0]"
    GAME.validate(st, 0, {"units": [{"unit": "a", "path": ["S"]}]})


def test_a24_cargo_takes_no_action() -> None:
    st = state(B, [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "spy"), U("e", 1, "rank1", 3, 2)])
    e = refuse(st, 0, {"units": [{"unit": "a", "action": "reveal", "target": "e"}]})
    assert e.rule == "A24"


def test_a39_reveal_target_within_two_and_visible() -> None:
    st = state(B, [U("s", 0, "spy", 2, 2), U("e", 1, "rank1", 5, 2), U("f", 1, "rank1", 4, 2)])
    assert refuse(st, 0, {"units": [{"unit": "s", "action": "reveal", "target": "e"}]}).rule == "A39"
    GAME.validate(st, 0, {"units": [{"unit": "s", "action": "reveal", "target": "f"}]})


def test_a13_round_zero_takes_only_deployment() -> None:
    st = state(B, [U("a", 0, "rank1", 1, 0)], round=0)
    e = refuse(st, 0, {"units": [{"unit": "a", "path": ["W"]}]})
    assert e.rule == "A13"
    st1 = state(B, [U("a", 0, "rank1", 1, 0)], round=1)
    assert refuse(st1, 0, {"deploy": [{"unit": "a", "tile": {"x": 0, "y": 0}}]}).rule == "A13"


def test_a14_land_units_deploy_on_the_home_island_ships_next_to_it() -> None:
    st = state(B, [U("a", 0, "rank1", 1, 0), U("d", 0, "dvora", 2, 0)], round=0)
    GAME.validate(st, 0, {"deploy": [{"unit": "a", "tile": {"x": 0, "y": 0}},
                                     {"unit": "d", "tile": {"x": 0, "y": 1}}]})
    assert refuse(st, 0, {"deploy": [{"unit": "a", "tile": {"x": 3, "y": 2}}]}).rule == "A14"
    assert refuse(st, 0, {"deploy": [{"unit": "d", "tile": {"x": 3, "y": 1}}]}).rule == "A14"


def test_orders_must_be_an_object_with_known_fields() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    assert isinstance(refuse(st, 0, {"moves": []}), InvalidOrder)
    assert isinstance(refuse(st, 0, {"units": "x"}), InvalidOrder)
    assert isinstance(refuse(st, 0, {"bonus": "gold"}), InvalidOrder)
    assert isinstance(refuse(st, 0, {"builds": [{"type": "flag"}]}), InvalidOrder)
    assert isinstance(refuse(st, 0, {"builds": [{"type": "landmine"}]}), InvalidOrder)


def test_a67_no_orders_once_the_game_is_over() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    st.outcome = {"winners": [0], "draw": False, "reason": "target", "scores": [10, 0]}
    err = refuse(st, 0, {})
    assert isinstance(err, GameOver) and isinstance(err, NotYourTurn) and err.rule == "A67"


def test_a20_lenient_parse_skips_bad_entries_keeps_good_ones() -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2), U("b", 0, "rank1", 4, 2)])
    p = parse_orders(st, 0, {"units": [{"unit": "zz", "path": ["E"]}, {"unit": "a", "path": ["X"]},
                                       {"unit": "b", "path": ["E"]}]}, strict=False)
    assert p.moves == {"b": ["E"]}


# -- A20 property: any client input is either accepted or refused with a GameError ---------------

_json = hs.recursive(
    hs.none() | hs.booleans() | hs.integers(-3, 12) | hs.sampled_from(["N", "E", "S", "W", "a", "b", "s", "zz",
                                                                      "rank1", "landmine", "raft", "outpost",
                                                                      "strike", "bombard", "reveal", "wood"]),
    lambda kids: hs.lists(kids, max_size=4) | hs.dictionaries(
        hs.sampled_from(["unit", "path", "to", "action", "target", "type", "tile", "ship", "x", "y",
                         "units", "builds", "bonus", "deploy"]), kids, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(o=hs.dictionaries(hs.sampled_from(["units", "builds", "bonus", "deploy"]), _json, max_size=3))
def test_a20_validation_refuses_malformed_input_with_game_errors_only(o: Any) -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2), U("s", 0, "dvora", 2, 3), U("b", 1, "rank1", 3, 2)],
               stocks={"0": {"food": 3, "iron": 3, "wood": 3, "fuel": 1}})
    try:
        GAME.validate(st, 0, o)
    except GameError as e:
        assert e.field is not None
    new, _ = GAME.resolve(st, {0: o})  # resolution tolerates what validation refuses
    assert new.round == st.round + 1
