"""Malformed and illegal actions get an engine error naming a field (never another exception), and
change nothing (M16, M38: bad input gets a clear error)."""

from __future__ import annotations

import random
from typing import Any

from engine.arcmage import GAME
from engine.base import canonical_json
from engine.errors import GameError

VALUES: list[Any] = [None, 0, 1, -1, 99, True, "x", "army", [], [1], ["?"], {}, {"a": 1}, "draw1", "Gaian",
                     [0, 1], 2.5, [[1]], {"Gaian": -1}]
KINDS = ["pass", "choose", "build", "draw", "resource", "devote", "play", "ability", "move", "salvage", "attack",
         "chat", "nope"]
FIELDS = ["card", "option", "faction", "target", "to", "x", "mode", "targets", "pay", "with", "attackers", "city"]


def test_m38_garbage_actions_raise_game_errors_and_change_nothing() -> None:
    rnd = random.Random(7)
    for seed in range(8):
        s = GAME.new_game({"players": 2 + seed % 3}, seed)
        for _ in range(60):
            if GAME.outcome(s) is not None:
                break
            p = GAME.step(s).players[0]
            v = GAME.view(s, p)
            ids = list(v["cards"])[:10]
            before = canonical_json(s.data)
            for _ in range(6):
                f = {rnd.choice(FIELDS): rnd.choice(VALUES + ids) for _ in range(rnd.randint(0, 3))}
                a: Any = {rnd.choice(KINDS): f} if rnd.random() < 0.9 else rnd.choice(VALUES)
                seat = rnd.choice([p, (p + 1) % s.data["n"], -1, True])
                try:
                    GAME.apply_action(s, seat, a)
                except GameError as e:
                    assert e.field, (a, str(e))
            assert canonical_json(s.data) == before
            s, _ = GAME.apply_action(s, p, rnd.choice(GAME.legal_actions(v)))
