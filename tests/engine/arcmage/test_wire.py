"""The Arcmage view is ``ArcmageView`` (arcmage.proto) field for field, and a client that reads it back
from protobuf's JSON (the JSON doors) or its dict form (a gRPC client) gets the same legal actions and
autopilot choices as the engine (M26, M53)."""

from __future__ import annotations

from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2
from engine.arcmage import GAME
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
