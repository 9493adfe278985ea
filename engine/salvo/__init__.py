"""Salvo: the pencil-and-paper ancestor of Battleship, for two players (``shared/spec/salvo.md``).

Rules implemented (ids of the spec):

- S1  Two players, each with a 10×10 grid, columns A–J, rows 1–10, A1 top-left.
- S2  Fleets: default battleship 5, cruiser 4, submarine 3, destroyer 2; variant battleship 5,
      cruiser 3, destroyer1 2, destroyer2 2 (the two destroyers reported separately).
- S3  Round 0: secret simultaneous placement, straight lines, inside the grid, no overlap, touching
      allowed. ``{"random_placement": true}`` or no orders at all: a random legal placement drawn from
      the game's seeded RNG (seat 0 first, ships largest first).
- S4  Modes. ``salvo``: both players fire at once; shots = battleship 3 + cruiser 2 + submarine 1 +
      each destroyer 1, for ships still afloat at the start of the round. ``classic``: one shot per
      turn, players alternate, the first player is seat 0 (the creator) or drawn from the RNG; one
      round is one turn and closes on the active player's shot.
- S5  No square shot twice, none named twice in a salvo; fewer shots than allowed is legal.
- S6  Salvo report to the shooter: number of hits and the ships hit how often, never which shots
      hit; classic mode reports each shot hit or miss; every sinking is announced to both players.
- S7  Sinking the whole enemy fleet wins; both fleets sunk by the same salvo is a draw.
- S8  Views: own fleet with hits, incoming shots, own shots with their round and the S6 reports;
      no enemy ship square and (salvo mode) no hit flag on own shots until the game is over, when
      both fleets are shown.
- S9  Autopilot for an absent player (:mod:`engine.salvo.autopilot`); deadlines and early close
      are the services' business. ``resolve`` itself runs the autopilot for an expected player
      missing from its orders.

Immediate actions (``act``): chat only, ``{"chat": {"text": str, "to"?: seat}}`` — 1..500
characters, not blank, ``to`` the other seat (left out: both players); at most 10 messages per player
per round (rule A53, which S9 borrows from Archipelago), in every phase, also once the game is over.
Event ``chat`` ``{"from", "text", "to"?}`` to the sender and addressee (everyone without ``to``).
``random_orders(view, seed)``: random legal orders from the view alone (bots, load tests).

Spectators (``spectator_view``): what both players know, in the view's shape seen from seat 0's side
(``you`` = -1): ``shots`` are seat 0's, ``incoming`` seat 1's, with their rounds (hit flags in
classic mode only), ``enemy_sunk`` seat 1's sunk ships and ``fleet`` seat 0's (name, size, sunk; no
squares); no reports, no ship squares, no ``shots_allowed``.  Once over: seat 0's view (both
fleets, every shot with its hit flag).

Our choice where the spec is silent: the game also ends after round ``max_rounds``; then the player
who has hit more enemy ship squares wins, equal counts are a draw (reason ``"max_rounds"``). The
outcome's ``scores`` are the enemy ship squares each player has hit.

Parameters (``normalize_config``):

- ``players``: 2 (only)
- ``mode``: ``"salvo"`` (default) or ``"classic"``
- ``fleet``: ``"default"`` (default) or ``"variant"``
- ``first_player``: ``"creator"`` (default, seat 0) or ``"random"`` (classic mode)
- ``max_rounds``: int >= 1, default 100; in classic mode, where a round is one player's turn, default 200
"""

from __future__ import annotations

from engine.salvo.autopilot import autopilot_orders
from engine.salvo.board import ALL_SQUARES, FLEETS, Ship, ShipSpec, parse_square
from engine.salvo.game import GAME, SalvoGame, SalvoState, Shot, salvo_report, shots_allowed

__all__ = ["ALL_SQUARES", "FLEETS", "GAME", "SalvoGame", "SalvoState", "Ship", "ShipSpec", "Shot",
           "autopilot_orders", "parse_square", "salvo_report", "shots_allowed"]
