"""Resolution of one Archipelago round (A21–A67, A91–A106).

Order (A21): (1) spies reveal; (2) air strikes and shore bombardments, all at once against the
start-of-round positions (A40); (3) movement in sub-steps, then the aircraft landing check (A34,
A94); (4) outposts (paid first), builds (in submission order, seats in order), flags (A63),
control (A47), scoring (A65, A66); (5) the game-end check (A67); (6) production opening the next
round (A50) and the activity bonus (A51).  Round 0 resolves the deployment (A13–A15) and opens
round 1 with production.

Movement, one sub-step (A22, A25, A91–A97, A100–A106):

(a) *blocking*: terrain holds first (wrong terrain, off the board, cargo whose carrier moves, a
    flag off its home island or onto a mine (A100), boarders over capacity), then a fixed point in
    which each pass is judged against the previous pass's holds: a mover is held if a friendly
    unit on its target is not moving or held (own flags never block their owner's land units,
    A62), or if an unheld friendly mover with a smaller id targets the same tile; a moving flag
    is held by an aircraft, another flag or a flag bearer that stays on its target (not moving,
    or held: A100); a flag bearer is held by another enemy flag staying on its target (A103).
    Aircraft take part only at their last step; boarders are exempt.
(b) *swaps*: two unheld enemy movers (not aircraft, not cargo) targeting each other's tile fight,
    both attacking; a flag swapping with an enemy land unit is picked up in place.  Then (a) again
    (a flag dropped there by a swap's loser now holds, A100).
(c) *entering*: movers leave their tiles; boarders become cargo; on each tile the staying occupant
    (or parked aircraft) defends against the entrants in id order, else the entrants duel in id order
    all attacking; after a tie the next entrant takes the tile unopposed.  Flags lying on the tile,
    entering it or dropped there are settled after its duels (A61, A62, A97, A102, A106); an
    aircraft ending its step on a flag's tile never sends it home (A101).  Rafts are placed at the
    end of the sub-step in ship id order (A95), then flags go home in flag id order (A98); aircraft
    in mid-flight occupy no tile for either (A104).

Judgement calls, each with the rule that settles it (documented for the independent implementation):
- A100: "carrier" in A97 means a flag bearer, not a ship or transport plane; an aircraft, flag or
  bearer holds a moving flag only while it stays on the tile, judged in the blocking fixed point
  and again after the swaps; a mine or a step off the home island holds it with the terrain holds;
- A101: a flag and an enemy aircraft ending a step on one tile: the flag stays, the aircraft is
  lost at the landing check (not alone on its tile);
- A102: the owner's land unit meeting an enemy carrying its flag (either one entering) sends the
  flag home before the tile's duels; the two units then fight;
- A103: a bearer is held rather than enter a tile holding another enemy flag (lying there, not
  carried), judged like A100 in the fixed point: a flag that steps away unheld holds nobody;
- A104: an aircraft in mid-flight does not make a tile occupied for rafts or flags going home;
- A105: ties between tiles (nearest empty tile) follow :func:`engine.archipelago.board.tie_key`:
  distance, then bearing clockwise from North;
- A106: a moving flag and an enemy bearer entering one tile together: the duels run as usual and,
  if the bearer holds the tile, the flag goes home;
- A97/A61: a flag dropped by a defender killed on land with no survivor stays on the tile; one
  dropped by a killed entrant goes home.

Choices where the text still leaves room:
- flags sent home during a sub-step are placed at its end, in flag id order, after rafts;
- a flag "swapping" with an enemy bearer (who cannot carry a second flag): neither moves, nothing
  else happens;
- a unit killed by a bombardment or strike drops a carried flag on its tile if it is empty.

How it is built: :func:`resolve_state` clones the state into a :class:`~.resolve_work.Work` (the
working set the steps share) and runs the steps in the order above — :mod:`.resolve_fire` (1, 2),
:mod:`.resolve_move` with :mod:`.resolve_enter` (3), :mod:`.resolve_close` (4–6); round 0 is
:func:`deploy`.  The rule computations they use are stated in :mod:`engine.archipelago.rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import Tile
from engine.archipelago.fog import sight, update_memory
from engine.archipelago.orders import Parsed, parse_orders
from engine.archipelago.resolve_close import (
    activity_bonus,
    builds,
    control,
    decide,
    default_bonus,
    end_check,
    flags,
    island_controller,
    outposts,
    production,
    scoring,
)
from engine.archipelago.resolve_fire import bombard_and_strike, reveals
from engine.archipelago.resolve_move import movement
from engine.archipelago.resolve_work import DOMAIN, RawEvent, Work
from engine.archipelago.state import State, Unit
from engine.archipelago.units import AIR

__all__ = ["RawEvent", "compute_control", "decide", "default_bonus", "deploy", "island_controller",
           "production", "resolve_state", "round_clone"]


def resolve_state(state: State, orders_by_player: Mapping[int, Mapping[str, Any]]
                  ) -> tuple[State, list[RawEvent], list[int], list[int]]:
    """Resolve one round.  Returns the new state, raw events and the start/end sight per seat
    (tile bits, :func:`engine.archipelago.fog.visible_bits`)."""
    s, occ, air = round_clone(state)
    parsed = {p: parse_orders(state, p, orders_by_player.get(p) or {}, strict=False)
              for p in range(s.players)}
    for p, po in parsed.items():
        if po.bonus is not None:
            s.pstates[p].bonus = po.bonus
    start_vis = sight(state)
    w = Work(s, parsed, occ, air)
    if s.round == 0:
        deploy(w)
        control(w)
    else:
        reveals(w)  # 1
        bombard_and_strike(w, start_vis)  # 2
        movement(w)  # 3
        outposts(w)  # 4
        builds(w)
        flags(w)
        gained = control(w)
        scoring(w)
        end_check(w)  # 5
        if s.outcome is None:
            activity_bonus(w, w.won | gained)  # 6
    if s.outcome is None:
        for p, got in sorted(production(s).items()):
            w.event("production", None, {p}, {"player": p, "resources": got})
    s.round += 1
    s.version += 1
    s.offers = []
    s.chat = []
    for ps in s.pstates:
        ps.offers_made = 0
        ps.chats = 0
        ps.opening_total = sum(ps.stock.values())
    end_vis = update_memory(s)
    return s, w.events, start_vis, end_vis


def compute_control(state: State) -> dict[Tile, int]:
    """A47 on a state as it stands (used for deployment and scenarios)."""
    s, occ, air = round_clone(state)
    w = Work(s, {p: Parsed() for p in range(state.players)}, occ, air)
    control(w, capture=False)
    return w.s.control


def round_clone(state: State) -> tuple[State, dict[Tile, str], dict[Tile, list[str]]]:
    """``state.clone()`` for a resolution with the clone's ``occ`` and ``air`` (:class:`Work`),
    from one pass over the units."""
    units: dict[str, Unit] = {}
    occ: dict[Tile, str] = {}
    air: dict[Tile, list[str]] = {}
    for k, u in state.units.items():
        units[k] = c = Unit(u.id, u.owner, u.type, u.tile, u.carrier, list(u.cargo), u.flag, u.raft)  # u.clone()
        if c.carrier is None:
            if DOMAIN[c.type] == AIR:
                air.setdefault(c.tile, []).append(c.id)
            else:
                occ[c.tile] = c.id
    return state.clone(units), occ, air


def deploy(w: Work) -> None:
    """Round 0 (A13–A15): each seat's deployment moves, in order; placing a unit where another own
    unit of its domain stands swaps the two."""
    s = w.s
    for p in range(s.players):
        for uid, t in w.parsed[p].deploy:
            u = s.units.get(uid)
            if u is None or u.owner != p or u.carrier is not None:
                continue
            if u.tile == t:
                continue
            other_id = w.occ.get(t)
            if other_id is None and w.air.get(t):
                continue
            other = s.units.get(other_id) if other_id is not None else None
            if other is not None and (other.owner != p or DOMAIN[other.type] != DOMAIN[u.type]):
                continue
            src = u.tile
            w.unplace(u)
            if other is not None:
                w.unplace(other)
                w.place(other, src)
            w.place(u, t)
