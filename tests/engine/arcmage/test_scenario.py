"""The plain-data scenario format (engine.arcmage.scenario): positions, actions and expected zones
stated as JSON-like data, without engine internals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.arcmage.scenario import run_scenario, state_from_scenario, summary

#: (name, scenario, actions, expected: card id -> {field: value} of the summary's cards)
CASES: list[tuple[str, dict[str, Any], list[tuple[int, dict[str, Any]]], dict[str, dict[str, Any]]]] = [
    ("m20_equal_damage_kills",
     {"phase": "attack", "seats": [
         {"cities": [{"card": "armory", "id": "A"}], "army": [{"card": "mentor", "id": "m"}],
          "piles": {"The Empire": 3}, "deck": ["bearer"] * 3},
         {"cities": [{"card": "farmland", "id": "F"}], "army": [{"card": "elvish_archer", "id": "ar",
                                                                "counters": [1, 0]}], "deck": ["kolibri"] * 3}]},
     [(0, {"attack": {"attackers": ["m"], "city": "F"}}), (1, {"pass": {}}),
      (1, {"choose": {"option": ["ar", "m"]}}), (1, {"pass": {}}), (0, {"pass": {}})],
     {"ar": {"zone": "grave"}, "m": {"zone": "army", "damage": 2, "marked": True}, "F": {"defense": 7}}),
    ("m16_events_answer_events_last_in_first_out",
     {"seats": [
         {"cities": [{"card": "armory", "id": "A"}], "army": [{"card": "bearer", "id": "b"}],
          "piles": {"The Empire": 3}, "deck": ["bearer"] * 3},
         {"cities": [{"card": "farmland", "id": "F"}], "army": [{"card": "poison_ivy", "id": "iv"}],
          "hand": [{"card": "early_spring", "id": "es"}], "piles": {"Gaian": 4}, "deck": ["kolibri"] * 3}],
      "stack": [{"card": "dimensional_pocket", "id": "p", "p": 0, "mode": "creature", "targets": ["iv"]}]},
     # Early Spring (3/3 Ivy) resolves first, then the Pocket's 3 damage: equal damage kills
     [(1, {"play": {"card": "es"}}), (0, {"pass": {}}), (1, {"pass": {}})],
     {"iv": {"zone": "grave"}, "es": {"zone": "grave"}, "p": {"zone": "grave"}, "F": {"defense": 9}}),
    ("m34_a_crop_token_that_leaves_play_ceases_to_exist",
     {"active": 1, "seats": [
         {"cities": [{"card": "armory", "id": "A"}], "deck": ["bearer"] * 3},
         {"cities": [{"card": "farmland", "id": "F", "residents": [{"card": "crop_token", "id": "ct"}]}],
          "deck": ["kolibri"] * 3}]},
     [(1, {"ability": {"card": "ct"}})],
     {"F": {"residents": []}}),
]


@pytest.mark.parametrize(("name", "scenario", "actions", "expected"), CASES, ids=[c[0] for c in CASES])
def test_scenario_cases(name: str, scenario: dict[str, Any], actions: list[tuple[int, dict[str, Any]]],
                        expected: dict[str, dict[str, Any]]) -> None:
    json.dumps(scenario)  # plain data
    _, out, _ = run_scenario(scenario, actions)
    json.dumps(out)
    for cid, want in expected.items():
        got = out["cards"].get(cid)
        assert got is not None, cid
        for k, v in want.items():
            assert got[k] == v, (name, cid, k, got[k], v)
    assert "ct" not in out["cards"] or name != "m34_a_crop_token_that_leaves_play_ceases_to_exist"


def test_scenario_builds_the_zones_it_states() -> None:
    sc = {"seats": [
        {"cities": [{"card": "Armory", "id": "A", "defense": 5, "residents": [
            {"card": "bearer", "id": "b", "marked": True, "damage": 0, "devoted": True}]}],
         "army": [{"card": "mentor", "id": "m", "damage": 1}], "hand": ["footsoldier"], "grave": ["spearman"],
         "piles": {"The Empire": 4}, "marked_piles": {"The Empire": 1}, "unbuilt": ["barracks"]},
        {"cities": [{"card": "farmland", "id": "F"}]}]}
    out = summary(state_from_scenario(sc))
    assert out["cards"]["A"]["defense"] == 5 and out["cards"]["A"]["residents"] == ["b"]
    assert out["cards"]["b"]["marked"] and out["cards"]["m"]["damage"] == 1
    assert out["seats"][0]["resources"] == 4 and len(out["seats"][0]["hand"]) == 1
    assert out["step"]["kind"] == "turn" and out["step"]["players"] == [0]
    with pytest.raises(ValueError, match="unknown card"):
        state_from_scenario({"seats": [{"hand": ["no such card"]}, {}]})
