"""Pure game rules, one package per game, behind the contract of :mod:`engine.base`.

``get_game(name)`` returns the engine of a game kind ("salvo", "archipelago", ...).
:mod:`engine.actions` holds what every game's ``act`` shares (the action envelope, chat).
"""

from __future__ import annotations

import importlib

from engine.base import Event, Game, Outcome
from engine.errors import GameError

__all__ = ["GAMES", "Event", "Game", "GameError", "Outcome", "get_game"]

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
