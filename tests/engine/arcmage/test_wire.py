"""The Arcmage view is ``ArcmageView`` (arcmage.proto) field for field, and a client that reads it back
from protobuf's JSON (the JSON doors) or its dict form (a gRPC client) gets the same legal actions and
autopilot choices as the engine (M26, M53)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2
from engine.arcmage import GAME
from engine.errors import GameError, InvalidOrder
from gateway.convert import to_json

GAMES = 3
EVERY = 6  # check the wire form of every 6th step's views (protobuf's Python JSON mapping is slow)


def _playout(seed: int, n: int, turns: int = 500) -> None:
    cfg = GAME.normalize_config({"players": n, "max_rounds": turns})
    s = GAME.new_game(cfg, seed)
    for i in range(3000):
        step = GAME.step(s)
        if step.kind == "over":
            break
        for p in range(n) if i % EVERY == 0 or s.data["combat"] else ():
            v = GAME.view(s, p)
            msg = json_format.ParseDict(v, arcmage_pb2.ArcmageView())  # raises on any field not in the proto
            wire = to_json(msg)
            sparse = json_format.MessageToDict(msg, preserving_proto_field_name=True)
            if p in step.players:
                assert GAME.legal_actions(wire) == v["legal"] == GAME.legal_actions(sparse)
                assert GAME.autopilot_action(wire) == GAME.autopilot_action(v) == GAME.autopilot_action(sparse)
                for a in v["legal"]:
                    json_format.ParseDict(a, arcmage_pb2.ArcmageAction())  # every legal action is an ArcmageAction
            else:
                assert v["legal"] == []
        seat = step.players[0]
        s, _ = GAME.apply_action(s, seat, GAME.autopilot_action(GAME.view(s, seat)))
    assert GAME.step(s).kind == "over"


def test_M26_every_view_is_an_ArcmageView_and_reads_back_the_same_two_players() -> None:
    for seed in range(GAMES):
        _playout(seed, 2)


def test_M26_every_view_is_an_ArcmageView_and_reads_back_the_same_four_players() -> None:
    _playout(99, 4, turns=24)


def test_M1_M2_M25_M40_the_options_as_the_proto_writes_them() -> None:
    """ArcmageOptions' JSON (decks as ArcmageDeck, stops as ArcmageStops, turn and response seconds)
    reads as the engine's config; seats without a deck play the built-in decks by seat."""
    cfg = GAME.normalize_config({"players": 3, "decks": [{"built_in": "Gaian love for life"}],
                                 "stops": [{"phases": ["attack", "draw"]}], "max_rounds": 0,
                                 "turn_seconds": 30, "response_seconds": 0})
    assert cfg["decks"] == ["Gaian love for life", "Gaian love for life", "Brothers in Arms"]
    assert cfg["stops"] == [["draw", "attack"], [], []] and cfg["max_rounds"] == 500
    assert cfg["deadlines"] == {"turn": 30}  # 0: from the speed
    with pytest.raises(GameError) as err:  # a Rebirth list is read as one: every problem named
        GAME.normalize_config({"players": 2, "decks": [{"cards": [{"card": "Footsoldier", "count": 3}] * 15}]})
    assert err.value.field == "decks[0]" and "cities" in str(err.value)


def test_M25_a_deadline_outside_1_s_to_7_days_is_refused_naming_its_field() -> None:
    for field, seconds in (("turn_seconds", float("inf")), ("response_seconds", 0.5), ("turn_seconds", 8 * 86400)):
        with pytest.raises(InvalidOrder) as err:
            GAME.normalize_config({"players": 2, field: seconds})
        assert err.value.field == field and err.value.rule == "M25"


def test_M1_M2_a_joiner_chooses_its_own_deck_and_a_bad_one_is_named() -> None:
    cfg = GAME.seat_config({"players": 2}, 1, {"deck": {"built_in": "Brothers in Arms"}})
    assert cfg["decks"] == ["Brothers in Arms", "Brothers in Arms"]
    with pytest.raises(GameError) as err:
        GAME.seat_config({"players": 2}, 1, {"deck": {"cards": [{"card": "Footsoldier", "count": 45}]}})
    assert err.value.field == "deck" and "at most 3" in str(err.value)
    with pytest.raises(InvalidOrder):
        GAME.seat_config({"players": 2}, 1, {"colour": "red"})
