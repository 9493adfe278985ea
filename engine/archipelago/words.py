"""How an error's reason names things for the player who reads it (A20): its own units by their English
type name and tile ("your Sergeant at (21, 10)"), an enemy unit by what the player sees of it ("the
enemy ship at (4, 2)", its type only once revealed, A82), tiles by coordinates — never an internal
unit or offer id. An id the player sent that names nothing it may use is echoed back clipped and
quoted: it is the player's own input, and the same words whether or not such a unit exists (so a
guess tells nothing). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import Tile
from engine.archipelago.state import State, Unit
from engine.archipelago.units import UNIT_TYPES

#: how much of an id the player sent an error echoes
ECHO_LEN = 24

_DOMAIN_NOUN = {"land": "unit", "sea": "ship", "air": "aircraft"}


def at(t: Tile | Mapping[str, Any]) -> str:
    """``"(21, 10)"``: a tile as the board's coordinates."""
    if isinstance(t, Mapping):
        return f"({t['x']}, {t['y']})"
    return f"({t[0]}, {t[1]})"


def type_name(type_id: str) -> str:
    """A unit type's English name ("Sergeant"); the id itself for an unknown one."""
    ut = UNIT_TYPES.get(type_id)
    return ut.name if ut is not None else type_id


def own_unit(type_id: str, tile: Tile | Mapping[str, Any], carrier_type: str | None = None) -> str:
    """``"your Sergeant at (21, 10)"``; cargo: ``"your Sergeant aboard your Dvora at (21, 11)"``."""
    where = f"aboard your {type_name(carrier_type)} at {at(tile)}" if carrier_type else f"at {at(tile)}"
    return f"your {type_name(type_id)} {where}"


def own(state: State, u: Unit) -> str:
    """:func:`own_unit` of a unit of the state (its carrier's type read from the state)."""
    carrier = state.units.get(u.carrier) if u.carrier is not None else None
    if carrier is not None and carrier.owner != u.owner:  # a flag an enemy carries (A61)
        carrier = None
    return own_unit(u.type, u.tile, carrier.type if carrier is not None else None)


def enemy_unit(domain: str, tile: Tile | Mapping[str, Any], type_id: str | None = None) -> str:
    """``"the enemy ship at (4, 2)"`` (what the player sees: its shown domain), or ``"the enemy
    Sergeant at (4, 2)"`` once its type is revealed."""
    noun = type_name(type_id) if type_id else _DOMAIN_NOUN.get(domain, "unit")
    return f"the enemy {noun} at {at(tile)}"


def enemy(state: State, player: int, u: Unit) -> str:
    """:func:`enemy_unit` of another player's unit the player sees now: its type only if revealed."""
    from engine.archipelago.fog import shown_domain

    revealed = state.outcome is not None or u.id in state.pstates[player].revealed  # as the view (A82)
    return enemy_unit(shown_domain(state, u), u.tile, u.type if revealed else None)


def echo(value: object) -> str:
    """The id the player sent, quoted and clipped: ``'e3fceb6aa2'``."""
    text = str(value)
    if len(text) > ECHO_LEN:
        text = text[:ECHO_LEN - 1] + "…"
    return repr(text)


__all__ = ["ECHO_LEN", "at", "echo", "enemy", "enemy_unit", "own", "own_unit", "type_name"]
