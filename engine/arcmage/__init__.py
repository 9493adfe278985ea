"""Arcmage, the platform's card game of sequential turns (spec ``shared/spec/arcmage.md``, M1–M58).

2–4 players, each with a 45-card deck (a built-in deck, "Brothers in Arms" or "Gaian love for
life", or a Rebirth list of implemented cards).  Turns are sequential; any player may answer on the
stack and in response windows.  Arcmage and its card texts are by the Arcmage project (arcmage.org),
licensed CC BY-SA 4.0 (https://arcmage.org/license/); :data:`ATTRIBUTION` goes with any card text.

Steps (``GAME.step(state)``): ``TURN`` (the active player acts in its phase, or makes its own pending
decision), ``WINDOW`` (stack rounds, response windows at stops, dying windows — and pending decisions
of a non-active seat, e.g. interceptors or where its residents go: a WINDOW of that one seat with the
response deadline), ``OVER``.

Actions (``GAME.apply_action(state, seat, action)``), one key naming the kind::

    {"pass": {}}                          end the phase step / pass in a window / decline an optional choice
    {"choose": {"option": <value>}}       answer the pending decision (one of ``pending.options``; a split
                                          is any list of amounts totalling the attack, M43)
    {"build": {"card": id}}               Build instead (M8)
    {"draw": {"option": "draw2"|"draw1"|"draw0"}}                      M9, M44
    {"resource": {"card": id, "faction": "Gaian"}}                     M9
    {"devote": {"card": id, "target"?: id}}                            M10, M27 (Nightingale's target)
    {"play": {"card": id, "to"?: city id|"army", "x"?: n, "mode"?: str, "targets"?: [ids],
              "pay"?: {faction: n}}}                                   M14, M15, M32, M39
    {"ability": {"card": id, "targets"?: [ids], "with"?: [ids]}}       M29 (resource, play, dying)
    {"move": {"card": id, "to": city id|"army"}}                       M17
    {"salvage": {"card": id}}                                          M50
    {"attack": {"attackers": [ids], "city": id}}                       M18, M41

Decision kinds (``pending.kind``): setup_build, intercept (option ``[blocker, attacker]`` or null when
done), split, discard, resident_to, unmark_pay, sacrifice_resource, barracks5, spirit3, spirit7,
bearer, conscript, footsoldier_pay, footsoldier_pick, mentor.  Chat goes through ``act``.

Config: ``{"players": 2..4, "decks": [deck per seat], "stops"?: [[phase, ...] per seat], "max_rounds"?:
turns (default 500), "deadlines"?: {"turn"?: s, "response"?: s}}`` — a deck is a built-in deck's name
or a list of Rebirth card names; ``stops`` adds windows for that seat at the start of the opponents'
phases (build, draw, tactics, play1, attack, play2, discard; M40); past ``max_rounds`` turns the game
is a draw (a safety bound of this project, as Salvo has; no real game gets near it).

Choices made here where the spec is silent: the three cities set aside are the default (highest
defense); a player's simultaneous triggers, its dying cards going to the graveyard and its cities'
levels (M27) go in board order; a payment without ``pay`` takes the loyalty from the card's faction
and the rest from the largest other piles (produced resources first); Squad Leader's non-Soldiers go
to the bottom in revealed order; Borg's Keep 3's unmarking never pays unmark conditions (the default
of M49); sacrificing resource cards for an ability takes marked cards first, from the largest pile.
"""

from __future__ import annotations

from engine.arcmage import cards as _cards  # noqa: F401  (registers the card rules)
from engine.arcmage.carddb import ATTRIBUTION, DECK_SIZE, HAND_LIMIT, MAX_COPIES, MIN_CITIES
from engine.arcmage.game import GAME, ArcmageGame, ArcState

__all__ = ["ATTRIBUTION", "DECK_SIZE", "GAME", "HAND_LIMIT", "MAX_COPIES", "MIN_CITIES", "ArcState", "ArcmageGame"]
