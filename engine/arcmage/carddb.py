"""The card database (package data ``data/cards.json``) and deck lists (M1, M2, M24).

Arcmage card data is CC BY-SA 4.0 by the Arcmage project (arcmage.org/license); see
``data/README.md``.  :data:`ATTRIBUTION` must accompany any card text shown to a player.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from engine.errors import IllegalOrder, InvalidOrder

DECK_SIZE = 45
MIN_CITIES = 3
MAX_COPIES = 3
HAND_LIMIT = 7
START_HAND = 7
CITIES_SET_ASIDE = 3
FACTIONS = ("Gaian", "Dark Legion", "Red Banner", "House of Nobles", "The Empire")
BUILT_IN_DECKS = ("Brothers in Arms", "Gaian love for life")


def _load() -> dict[str, Any]:
    text = resources.files("engine.arcmage").joinpath("data/cards.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


_DATA = _load()
ATTRIBUTION: str = _DATA["attribution"]
LICENSE: str = _DATA["license"]

#: card key -> its definition (``key, name, type, subtypes, faction, cost, loyalty, attack, defense,
#: text, keywords, token, implemented, levels?, salvage?``) plus ``subs``: the subtypes as a frozenset
DEFS: dict[str, dict[str, Any]] = {}
for _c in _DATA["cards"]:
    _c["subs"] = frozenset(_c["subtypes"])
    DEFS[_c["key"]] = _c
BY_NAME: dict[str, str] = {c["name"].lower(): k for k, c in DEFS.items()}
DECKS: dict[str, dict[str, int]] = {name: dict(d["cards"]) for name, d in _DATA["decks"].items()}
TOKEN_KEYS = frozenset(k for k, c in DEFS.items() if c["token"])


class DeckError(IllegalOrder):
    """An invalid deck list; ``problems`` names every problem (the message may be clipped)."""

    def __init__(self, problems: list[str], field: str) -> None:
        self.problems = list(problems)
        super().__init__("invalid deck: " + "; ".join(problems), rule="M1", field=field)


def card_key(name: Any) -> str | None:
    """The key of a card named ``name`` (a key or a printed name, any case), or None."""
    if not isinstance(name, str):
        return None
    if name in DEFS:
        return name
    return BY_NAME.get(name.strip().lower())


def parse_deck(value: Any, implemented: frozenset[str], field: str) -> dict[str, int]:
    """A deck: a built-in deck's name, or a list of card names (repeats, or ``{"card", "count"}``
    entries).  Returns key -> copies.  Raises IllegalOrder naming every problem (M1, M2, M24)."""
    if isinstance(value, str):
        if value in DECKS:
            return dict(DECKS[value])
        raise InvalidOrder(f"unknown built-in deck {value[:60]!r} (built-in: {', '.join(DECKS)}; or a list of "
                           "card names)", rule="M2", field=field)
    if not isinstance(value, list):
        raise InvalidOrder("a deck is a built-in deck's name or a list of card names", rule="M2", field=field)
    counts: dict[str, int] = {}
    problems: list[str] = []
    for i, ent in enumerate(value):
        name: Any = ent
        n = 1
        if isinstance(ent, Mapping):
            name, n = ent.get("card"), ent.get("count", 1)
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                problems.append(f"entry {i}: count must be a positive integer")
                continue
        key = card_key(name)
        if key is None:
            problems.append(f"entry {i}: {str(name)[:40]!r} is not a card of the Rebirth set")
            continue
        counts[key] = counts.get(key, 0) + n
    for key, n in counts.items():
        d = DEFS[key]
        if d["token"]:
            problems.append(f"{d['name']} is a token, not part of a deck")
        elif key not in implemented:
            problems.append(f"{d['name']} is not implemented yet (M24)")
        if n > MAX_COPIES and not d["token"]:
            problems.append(f"{d['name']}: {n} copies, at most {MAX_COPIES}")
    total = sum(n for k, n in counts.items() if not DEFS[k]["token"])
    if total != DECK_SIZE:
        problems.append(f"{total} cards, a deck has exactly {DECK_SIZE}")
    cities = sum(n for k, n in counts.items() if DEFS[k]["type"] == "city")
    if cities < MIN_CITIES:
        problems.append(f"{cities} cities, a deck has at least {MIN_CITIES}")
    if problems:
        raise DeckError(problems, field)
    return counts
