"""docs/rules/arcmage.md cannot drift from the engine: its marked numbers, action kinds, decision
kinds and attribution are checked here."""

from __future__ import annotations

import re
from pathlib import Path

from engine.arcmage import GAME, carddb, core
from engine.arcmage.actions import DRAW_OPTIONS, KINDS
from engine.arcmage.game import DEFAULT_MAX_ROUNDS

DOC = Path(__file__).resolve().parents[3] / "docs" / "rules" / "arcmage.md"
SOURCES = {"DECK_SIZE": carddb.DECK_SIZE, "MIN_CITIES": carddb.MIN_CITIES, "MAX_COPIES": carddb.MAX_COPIES,
           "HAND_LIMIT": carddb.HAND_LIMIT, "START_HAND": carddb.START_HAND,
           "CITIES_SET_ASIDE": carddb.CITIES_SET_ASIDE, "min_players": GAME.min_players,
           "max_players": GAME.max_players, "DEFAULT_MAX_ROUNDS": DEFAULT_MAX_ROUNDS}


def text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_m1_m13_marked_numbers_match_the_engine_constants() -> None:
    found = dict(re.findall(r"<!-- n: (\w+) -->(\d+)<!-- /n -->", text()))
    assert set(found) == set(SOURCES)
    for name, value in found.items():
        assert int(value) == SOURCES[name], (name, value, SOURCES[name])
    assert carddb.HAND_LIMIT == 7 and carddb.DECK_SIZE == 45 and carddb.MAX_COPIES == 3


def test_m16_every_action_and_decision_kind_is_documented() -> None:
    t = text()
    for kind in KINDS:
        assert f'`{{"{kind}": {{' in t, kind
    for opt in DRAW_OPTIONS:
        assert f"`{opt}`" in t
    for kind in core.DECIDE:
        assert f"`{kind}`" in t, kind


def test_m23_the_attribution_is_there_and_every_card_is_named() -> None:
    t = " ".join(text().split())
    assert "CC BY-SA 4.0" in t and "arcmage.org" in t
    assert carddb.LICENSE == "CC BY-SA 4.0" and "Creative Commons" in carddb.ATTRIBUTION
    for deck in carddb.DECKS.values():
        for key in deck:
            assert carddb.DEFS[key]["name"] in t, key
    assert "M1–M58" in t
    ids = {int(n) for n in re.findall(r"\bM(\d+)\b", t)}
    assert ids and min(ids) >= 1 and max(ids) <= 58
