"""Archipelago: simultaneous-turn island war (rules: shared/spec/archipelago.md, A1–A110).

This package implements the engine core: the unit table (:mod:`.units`), the rule constants and
computations the other parts share (:mod:`.rules`: actions, costs, ranges, scores, the duel, A18's
terrain by type), the immutable board with its direction and neighbour tables and its text drawing
(:mod:`.board`, A6–A8), the map generator (:mod:`.mapgen`, A9), the state (:mod:`.state`), orders
(:mod:`.orders`, A16–A20, A24, A91), the round resolution (:mod:`.resolve`, A21–A67, A91–A99: its
steps in :mod:`.resolve_fire`, :mod:`.resolve_move`, :mod:`.resolve_enter`, :mod:`.resolve_close`
over the working set of :mod:`.resolve_work`), sight and fog memory (:mod:`.fog`, A80–A83), each
player's view (:mod:`.view`, A80–A85) and the view read back as a map with the view-side reach
(:mod:`.viewmap`), the planning-time operations (:mod:`.economy`, A52–A53; ``GAME.act`` runs them as
actions), what a player may do from its view (:mod:`.legal`, A90), random legal orders from a view
(:mod:`.randplay`), standing orders (:mod:`.standing`, A70–A74) and the autopilot that plays them
from a view (:mod:`.autopilot`, with its parts :mod:`.autopilot_plan`, :mod:`.autopilot_paths`,
:mod:`.autopilot_orders`, :mod:`.autopilot_postures`, :mod:`.autopilot_builds`), and hand-made
scenarios (:mod:`.scenario`).

``GAME`` is the engine object (:class:`engine.base.Game`).  Parameters: ``players`` 2–8,
``max_rounds`` (60), ``target`` (A5 by player count).
"""

from __future__ import annotations

from engine.archipelago.economy import accept_offer, bank, chat, offer
from engine.archipelago.fog import visible_tiles
from engine.archipelago.game import GAME, ArchipelagoGame, initial_state, new_game
from engine.archipelago.scenario import resolve_scenario, state_from_scenario
from engine.archipelago.state import State, Unit
from engine.archipelago.units import UNIT_TYPES, UnitType

__all__ = ["GAME", "UNIT_TYPES", "ArchipelagoGame", "State", "Unit", "UnitType", "accept_offer", "bank",
           "chat", "initial_state", "new_game", "offer", "resolve_scenario", "state_from_scenario",
           "visible_tiles"]
