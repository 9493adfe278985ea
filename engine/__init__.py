"""Pure game rules, one package per game, behind the contract of :mod:`engine.base`.

``get_game(name)`` returns the engine of a game kind ("salvo", "archipelago", ...).
:mod:`engine.actions` holds what every game's ``act`` shares (the action envelope, chat).
"""

from __future__ import annotations

import importlib

from engine.base import Event, Game, Outcome
from engine.errors import GameError

__all__ = ["GAMES", "Event", "Game", "GameError", "Outcome", "get_game", "speed_deadlines"]

#: game kind -> module whose ``GAME`` attribute is the engine
GAMES: dict[str, str] = {
    "salvo": "engine.salvo",
    "archipelago": "engine.archipelago",
    "arcmage": "engine.arcmage",
}


def get_game(name: str) -> Game:
    """The engine for a game kind; raises ``KeyError`` for an unknown kind."""
    module = GAMES[name]
    game: Game = importlib.import_module(module).GAME
    return game


def speed_deadlines(name: str, speed: str) -> dict[str, float] | None:
    """A game's own deadlines for a speed (``{deadline kind: seconds}``, e.g. Arcmage's M25 turn and
    response lengths) when its engine declares ``speeds``; None for an unknown kind or speed, or a
    game that uses the platform's round speeds."""
    if name not in GAMES:
        return None
    table = getattr(get_game(name), "speeds", None)
    if not isinstance(table, dict) or speed not in table:
        return None
    return dict(table[speed])
