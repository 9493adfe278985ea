"""The generated parts of ``docs/rules/salvo.md``: every number a player needs, from the engine.

:func:`blocks` maps each part's name to its content (markers: :mod:`engine.rules_doc`): the
``fleets`` table and inline numbers (grid, shots at the start, round caps, chat limits).  Pure.
"""

from __future__ import annotations

from engine.actions import MAX_CHAT_LEN, MAX_CHATS
from engine.rules_doc import table
from engine.salvo.board import ALL_SQUARES, COLUMNS, FLEETS, GRID_SIZE
from engine.salvo.game import CLASSIC_MAX_ROUNDS, DEFAULT_CONFIG, PLAYERS

__all__ = ["blocks"]


def _fleets() -> str:
    rows = []
    for fleet, specs in FLEETS.items():
        for s in specs:
            rows.append((f"`{fleet}`", f"`{s.name}`", s.size, s.shots))
        rows.append((f"`{fleet}`", "**total**", sum(s.size for s in specs), sum(s.shots for s in specs)))
    return table(("fleet", "ship", "squares", "shots while afloat (salvo mode)"), rows)


def blocks() -> dict[str, str]:
    """Every generated part of the Salvo rules, by name."""
    default = FLEETS["default"]
    return {
        "fleets": _fleets(),
        "players": str(PLAYERS),
        "grid": f"{GRID_SIZE}×{GRID_SIZE}",
        "columns": f"{COLUMNS[0]}–{COLUMNS[-1]}",
        "rows": f"1–{GRID_SIZE}",
        "first_square": ALL_SQUARES[0],
        "last_square": ALL_SQUARES[-1],
        "shots_worth": ", ".join(f"{s.name} {s.shots}" for s in default),
        "start_shots": str(sum(s.shots for s in default)),
        "max_rounds": str(DEFAULT_CONFIG["max_rounds"]),
        "classic_max_rounds": str(CLASSIC_MAX_ROUNDS),
        "max_chats": str(MAX_CHATS),
        "max_chat_len": str(MAX_CHAT_LEN),
    }
