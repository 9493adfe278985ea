"""Steps 4 to 6 of an Archipelago round (A21), after the movement: outposts (paid first, A36),
builds (in submission order, seats in order, A42), flags scored (A63), control (A47), scoring (A65,
A66); the game-end check (A67); the activity bonus (A51) and production opening the next round
(A50).  Steps of :func:`engine.archipelago.resolve.resolve_state` over its
:class:`~.resolve_work.Work`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import Tile
from engine.archipelago.orders import Build
from engine.archipelago.resolve_work import Work
from engine.archipelago.rules import (
    FLAG_SCORE,
    OUTPOST_COST,
    SCORE_CENTRE,
    SCORE_OUTPOST,
    SCORE_RING,
    can_pay,
    pay,
)
from engine.archipelago.state import State, Unit
from engine.archipelago.units import A66_TYPES, LAND, RESOURCES, SEA, UNIT_TYPES, UnitType

__all__ = ["activity_bonus", "builds", "control", "decide", "default_bonus", "end_check", "flags",
           "island_controller", "outposts", "production", "scoring"]

#: the unit types that control the land tile they stand on (A47): land units but mines and flags
CONTROLLING_TYPES = frozenset(k for k, t in UNIT_TYPES.items() if t.domain == LAND and not t.is_mine
                              and not t.is_flag)


def _yx(item: tuple[Tile, Any]) -> tuple[int, int]:
    return (item[0][1], item[0][0])


# -- step 4 ------------------------------------------------------------------------------------------

def outposts(w: Work) -> None:
    """A36: each outpost order of a land unit on land outside its home island where there is none,
    paid when the stock allows (else skipped and told)."""
    s = w.s
    for p in range(s.players):
        stock = s.pstates[p].stock
        for uid, (kind, _) in w.parsed[p].actions.items():
            if kind != "outpost":
                continue
            u = w.units.get(uid)
            if u is None or u.carrier is not None:
                continue
            t = u.tile
            ut = UNIT_TYPES[u.type]
            if (ut.domain != LAND or ut.is_mine or ut.is_flag or t not in w.b.land
                    or w.b.is_home_of(t, p) or t in s.outposts):
                continue
            if not can_pay(stock, OUTPOST_COST):
                w.event("outpost_skipped", t, {p}, {"units": [{"id": uid, "owner": p}]})
                continue
            pay(stock, OUTPOST_COST)
            s.outposts[t] = p
            w.event("outpost", t, {p}, {"units": [{"id": uid, "owner": p}], "owner": p},
                    observed={"owner": p})


class _Limited:
    """(seat, type) of the living units of a type with a limit (A42), gathered when first asked."""

    def __init__(self, w: Work) -> None:
        self.w = w
        self.have: set[tuple[int, str]] | None = None

    def reached(self, p: int, typ: str) -> bool:
        if self.have is None:
            self.have = {(u.owner, u.type) for u in self.w.units.values() if UNIT_TYPES[u.type].limit is not None}
        return (p, typ) in self.have

    def add(self, p: int, typ: str) -> None:
        if self.have is not None:
            self.have.add((p, typ))


def builds(w: Work) -> None:
    """A42: every seat's builds in submission order, seats in order; then the one-time point of
    A66 for the seats that built one of its types first."""
    s = w.s
    a66: list[int] = []
    limited = _Limited(w)
    for p in range(s.players):
        for bl in w.parsed[p].builds:
            if _build(w, p, bl, limited) and p not in a66:
                a66.append(p)
    if a66 and not s.a66_done:
        s.a66_done = True
        for p in a66:
            s.pstates[p].score += 1
            w.event("first_big_build", None, None, {"player": p, "points": 1})


def _build(w: Work, p: int, bl: Build, limited: _Limited) -> bool:
    """One build: paid and placed (a raft: given to its ship), or skipped or refunded with its
    event.  Whether it placed a unit of an A66 type."""
    ut = UNIT_TYPES[bl.type]
    stock = w.s.pstates[p].stock
    data: dict[str, Any] = {"type": bl.type}
    if ut.limit is not None and limited.reached(p, bl.type):
        w.event("build_skipped", None, {p}, {**data, "reason": "limit"})
        return False
    if not can_pay(stock, ut.cost):
        w.event("build_skipped", None, {p}, {**data, "reason": "unaffordable"})
        return False
    if bl.type == "raft":
        ship = w.units.get(bl.ship or "")
        if ship is None or ship.owner != p or not UNIT_TYPES[ship.type].is_ship or ship.type == "raft" or ship.raft:
            w.event("build_refunded", None, {p}, {**data, "reason": "no ship"})
            return False
        pay(stock, ut.cost)
        ship.raft = True
        w.event("build", ship.tile, {p}, {**data, "ship": ship.id})
        return False
    spot = _build_spot(w, p, bl, ut)
    if spot is None:
        w.event("build_refunded", None, {p}, {**data, "reason": "tile not free" if ut.is_mine else "no free tile"})
        return False
    pay(stock, ut.cost)
    uid = w.s.new_id()
    nu = Unit(uid, p, bl.type, spot)
    w.units[uid] = nu
    if ut.limit is not None:
        limited.add(p, bl.type)
    w.place(nu, spot)
    w.event("build", spot, {p}, {**data, "units": [{"id": uid, "owner": p, "type": bl.type}]})
    return bl.type in A66_TYPES


def _build_spot(w: Work, p: int, bl: Build, ut: UnitType) -> Tile | None:
    """Where a new unit goes (A42): a mine on its tile if empty (a land mine on land the seat
    controlled at the round's start, a sea mine on sea next to such land); a ship on the first
    empty sea tile next to the base (N, E, S, W); any other unit on the base or the empty home
    tile nearest it.  ``None``: nowhere."""
    b = w.b
    if ut.is_mine:
        t = bl.tile
        ok = t is not None and w.empty(t) and (
            (bl.type == "landmine" and t in b.land and w.start_control.get(t) == p)
            or (bl.type == "seamine" and b.is_sea(t)
                and any(w.start_control.get(nb) == p for nb in b.neighbours(t))))
        return t if ok else None
    if ut.domain == SEA:
        return next((nb for nb in b.neighbours(b.bases[p]) if b.is_sea(nb) and w.empty(nb)), None)
    return w.home_tile(p, anywhere=False)


def flags(w: Work) -> None:
    """A63: a bearer standing on its own base scores the flag it carries (the flag's owner loses
    as much), and the flag goes home."""
    s = w.s
    for uid in sorted(uid for uid, u in w.units.items() if u.flag is not None):  # the bearers
        u = w.units.get(uid)
        if u is None or u.flag is None or u.carrier is not None:
            continue
        if u.tile != w.b.bases[u.owner]:
            continue
        f = w.units[u.flag]
        s.pstates[u.owner].score += FLAG_SCORE
        s.pstates[u.owner].flags_captured += 1
        loser = s.pstates[f.owner]
        loser.score = max(0, loser.score - FLAG_SCORE)
        w.event("flag_scored", u.tile, None, {"player": u.owner, "from": f.owner, "points": FLAG_SCORE})
        w.home_queue.append(f.id)
    w.flush_home()


def control(w: Work, capture: bool = True) -> set[int]:
    """A47 (with outpost capture) and the A51 gains; returns seats that gained a tile abroad."""
    s = w.s
    b = w.b
    ctl: dict[Tile, int] = {}
    standing: dict[Tile, Unit] = {}
    units, land = w.units, b.land
    for t, uid in w.occ.items():
        u = units[uid]
        if u.type in CONTROLLING_TYPES and t in land:
            standing[t] = u
    for t, owner in sorted(s.outposts.items(), key=_yx) if capture else ():
        cap = standing.get(t)
        if cap is not None and cap.owner != owner and not w.air.get(t):
            s.outposts[t] = cap.owner
            w.event("outpost_captured", t, {owner, cap.owner}, {"owner": cap.owner, "from": owner},
                    observed={"owner": cap.owner})
    for t, u in standing.items():
        ctl[t] = u.owner
    for t, owner in s.outposts.items():
        ctl.setdefault(t, owner)
    for isl in b.islands:
        if isl.kind == "home" and isl.owner is not None:
            for t in isl.tiles:
                ctl.setdefault(t, isl.owner)
    gained = set()
    for t, p in ctl.items():
        if w.start_control.get(t) != p and not b.is_home_of(t, p):
            gained.add(p)
    s.control = ctl
    return gained


def scoring(w: Work) -> None:
    """A65: each ring and centre island's controller scores; each outpost scores its owner."""
    s = w.s
    for isl in w.b.islands:
        if isl.kind not in ("ring", "centre"):
            continue
        owner = island_controller(s, isl.tiles)
        if owner is not None:
            s.pstates[owner].score += SCORE_CENTRE if isl.kind == "centre" else SCORE_RING
    for p in s.outposts.values():
        s.pstates[p].score += SCORE_OUTPOST


def island_controller(state: State, tiles: tuple[Tile, ...]) -> int | None:
    """A48: the player controlling more than half of the island's tiles."""
    counts: dict[int, int] = {}
    for t in tiles:
        p = state.control.get(t)
        if p is not None:
            counts[p] = counts.get(p, 0) + 1
    for p, n in counts.items():
        if 2 * n > len(tiles):
            return p
    return None


# -- step 5 ------------------------------------------------------------------------------------------

def end_check(w: Work) -> None:
    """A67: the game ends when a seat reaches the target or the last round is played."""
    s = w.s
    scores = [ps.score for ps in s.pstates]
    reason = None
    if max(scores) >= s.target:
        reason = "target"
    elif s.round >= s.max_rounds:
        reason = "max_rounds"
    if reason is None:
        return
    s.outcome = decide(s, reason)
    w.event("game_over", None, None, dict(s.outcome))


def decide(s: State, reason: str) -> dict[str, Any]:
    """A67: most points, then flags captured, then controlled land tiles; a remaining tie is shared."""
    tiles = [0] * s.players
    for t, p in s.control.items():
        if t in s.board.land:
            tiles[p] += 1
    keys = [(ps.score, ps.flags_captured, tiles[p]) for p, ps in enumerate(s.pstates)]
    best = max(keys)
    winners = [p for p, k in enumerate(keys) if k == best]
    return {"winners": winners, "draw": False, "reason": reason, "scores": [ps.score for ps in s.pstates]}


# -- step 6 ------------------------------------------------------------------------------------------

def activity_bonus(w: Work, seats: set[int]) -> None:
    """A51: each of ``seats`` (it won a fight or gained a tile abroad) gets 1 of its chosen resource
    (else :func:`default_bonus`)."""
    for p in sorted(seats):
        ps = w.s.pstates[p]
        res = ps.bonus or default_bonus(ps.stock)
        ps.stock[res] += 1
        w.event("bonus", None, {p}, {"player": p, "resource": res})


def default_bonus(stock: Mapping[str, int]) -> str:
    """A51 default: the resource held least, ties in order wood, food, iron, fuel."""
    return min(RESOURCES, key=lambda r: (stock.get(r, 0), RESOURCES.index(r)))


def production(state: State) -> dict[int, dict[str, int]]:
    """A50: every controlled resource tile yields 1 to its controller (mutates ``state``)."""
    got: dict[int, dict[str, int]] = {}
    for t, r in sorted(state.board.resources.items(), key=_yx):
        p = state.control.get(t)
        if p is not None:
            state.pstates[p].stock[r] += 1
            g = got.setdefault(p, {})
            g[r] = g.get(r, 0) + 1
    return got
