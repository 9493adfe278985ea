"""M38/M39 in a player's words: a refused Arcmage action's reason names cards by their card name and
players by seat — never by a card id ("c12") unless it is the id the player itself sent, echoed quoted.

Seeded random games (random legal actions) are stopped at every step; every seat then sends actions of
every kind naming random card ids (its own, others' hidden ones, made-up ones) and every refusal is
checked against the state's card ids."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any

import pytest

from engine.arcmage.actions import KINDS
from engine.arcmage.game import GAME, ArcState
from engine.errors import GameError

CARD_ID = re.compile(r"(?<![\w'])c\d+(?!\w)")


def check_reason(state: ArcState, sent: Any, err: GameError) -> None:
    sent_text = json.dumps(sent)
    for m in re.finditer(r"\bc\d+\b", err.reason):
        cid = m.group()
        quoted = err.reason[m.start() - 1:m.start()] == "'" and err.reason[m.end():m.end() + 1] == "'"
        assert quoted and f'"{cid}"' in sent_text, (err.reason, cid)
    assert not CARD_ID.search(err.reason), err.reason
    assert not re.search(r"\[\d+(, \d+)*\]", err.reason), err.reason  # no raw Python list of seats


def broken(state: ArcState, rnd: random.Random) -> list[dict[str, Any]]:
    ids = sorted(state.data["cards"])
    def pick() -> str:
        return str(rnd.choice([*ids, "c99999", "nope"]))
    out: list[dict[str, Any]] = [{"pass": {}}, {"choose": {"option": 99}}, {"draw": {"option": "draw2"}}]
    for kind, fields in KINDS.items():
        f: dict[str, Any] = {}
        for k in fields:
            if k in ("card", "to", "city", "target"):
                f[k] = pick()
            elif k in ("targets", "attackers", "with"):
                f[k] = [pick(), pick()]
        out.append({kind: f})
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_m38_m39_no_reason_names_a_card_id_it_was_not_sent(seed: int) -> None:
    rnd = random.Random(seed)
    state = GAME.new_game({"players": 2}, seed)
    refused = 0
    rules: Counter[str | None] = Counter()
    for step_no in range(120):
        if GAME.outcome(state) is not None:
            break
        step = GAME.step(state)
        for p in range(2):
            for action in broken(state, rnd):
                try:
                    GAME.apply_action(state, p, action)
                except GameError as e:
                    refused += 1
                    rules[e.rule] += 1
                    check_reason(state, action, e)
        actor = step.players[0]
        action = GAME.random_action(GAME.view(state, actor), rnd.randrange(1 << 30))
        assert action, (step_no, step)
        state, _ = GAME.apply_action(state, actor, action)
    assert refused > 500 and {"M38", "M8"} <= set(rules), (refused, rules)


def test_m38_not_your_turn_names_the_seat_waited_for() -> None:
    state = GAME.new_game({"players": 2}, 4)
    waiting = GAME.step(state).players
    other = next(p for p in range(2) if p not in waiting)
    with pytest.raises(GameError) as e:
        GAME.apply_action(state, other, {"pass": {}})
    assert e.value.reason == f"it is not your turn to act: waiting for seat {waiting[0]}"
