"""Entering a contested tile in a movement sub-step (A21 step 3 (c); A29–A34, A61, A62, A93,
A97, A101, A102, A106): :func:`enter_tile`, called by :mod:`engine.archipelago.resolve_move` for
every tile entered that is not simply taken by one unit, in reading order.

On the tile, in order: an owner's land unit meeting its own flag carried by an enemy sends the flag
home (A62, A102); a flag lying there is lifted (the owner's land unit sends it home); the staying
occupant, or a parked aircraft, defends against the ground entrants in id order, else the entrants
duel in id order, all attacking (after a tie the next entrant takes the tile unopposed); the last
holder keeps the tile; then the flags lying, entering or dropped there are settled (A61, A62, A97,
A101, A106)."""

from __future__ import annotations

from engine.archipelago.board import Tile
from engine.archipelago.resolve_work import DOMAIN, Work
from engine.archipelago.units import AIR, LAND

__all__ = ["enter_tile"]


def enter_tile(w: Work, t: Tile, ents: list[str]) -> None:
    """Settle tile ``t`` entered by the movers ``ents`` (module docstring)."""
    units = w.units
    if len(ents) == 1 and t not in w.occ and not w.air.get(t) and t not in w.drops:
        typ = units[ents[0]].type
        if typ != "flag" and DOMAIN[typ] != AIR:  # the common case: one unit enters an empty tile
            w.occ[t] = ents[0]
            return
    ents = sorted(ents)
    aircraft = [m for m in ents if DOMAIN[units[m].type] == AIR]
    flags = [m for m in ents if units[m].type == "flag"]
    ground = [m for m in ents if m not in aircraft and m not in flags]
    occupant = w.occ.get(t)
    parked: str | None = None
    if occupant is None:
        lst = w.air.get(t)
        if lst and len(lst) == 1:
            parked = lst[0]
    _recover_carried_flags(w, t, ground, occupant)
    occupant, lying = _lift_lying_flag(w, t, ground, occupant)
    holder = _duels(w, t, ents, ground, occupant if occupant is not None else parked)
    # the tile's final holder
    if holder is not None and holder in units and DOMAIN[units[holder].type] != AIR:
        if w.occ.get(t) != holder:
            if t in w.occ and w.occ[t] not in units:
                del w.occ[t]
            w.occ[t] = holder
    for m in aircraft:
        if m in units:
            w.air.setdefault(t, []).append(m)
    _settle_flags(w, t, lying, flags, holder)


def _recover_carried_flags(w: Work, t: Tile, ground: list[str], occupant: str | None) -> None:
    """A62/A97: the owner's land unit meeting its own flag carried by an enemy on this tile (as
    entrant or as the staying occupant) sends it home before the tile's duels."""
    units = w.units
    meet = [m for m in ground if m in units]
    if occupant is not None and units[occupant].type != "flag":
        meet.append(occupant)
    for x in sorted(meet):
        xu = units[x]
        fid = xu.flag
        if fid is None or fid not in units:
            continue
        f = units[fid]
        if any(units[m].owner == f.owner and DOMAIN[units[m].type] == LAND
               and units[m].type not in ("flag", "landmine") for m in meet if m != x):
            xu.flag = None
            f.carrier = None
            w.home_queue.append(fid)
            w.event("flag_recovered", t, {f.owner}, {"units": [{"id": fid, "owner": f.owner}]})


def _lift_lying_flag(w: Work, t: Tile, ground: list[str], occupant: str | None) -> tuple[str | None, str | None]:
    """A flag lying on the tile when ground units enter: the owner's land unit sends it home, else
    it is lifted to be settled after the duels.  Returns (the occupant that defends, the lifted
    flag)."""
    units = w.units
    if occupant is None or units[occupant].type != "flag":
        return occupant, None
    fo = units[occupant].owner
    if not ground:  # only aircraft arrive: they do not touch the flag
        return None, None
    if any(units[m].owner == fo and DOMAIN[units[m].type] == LAND for m in ground):
        w.unplace(units[occupant])
        w.home_queue.append(occupant)
        w.event("flag_recovered", t, {fo}, {"units": [{"id": occupant, "owner": fo}]})
        return None, None
    w.unplace(units[occupant])
    return None, occupant


def _duels(w: Work, t: Tile, ents: list[str], ground: list[str], holder: str | None) -> str | None:
    """The tile's duels: the staying ``holder`` (occupant or parked aircraft) defends against each
    ground entrant in id order, else the entrants duel all attacking.  Returns the last holder."""
    units = w.units
    staying = holder is not None
    for m in ground:
        if m not in units:
            continue
        if holder is None or holder not in units:
            holder = m
            continue
        h_u, e_u = units[holder], units[m]
        if h_u.owner == e_u.owner:  # cannot happen after blocking; keep the tile's holder
            continue
        # a holder that entered this sub-step (after beating the occupant, or unopposed after
        # a tie) is killed "while entering" (A97), like any entrant
        holder = w.fight(h_u, e_u, not staying, True, t, True, entering_a=holder in ents)
    return holder


def _settle_flags(w: Work, t: Tile, lying: str | None, flags: list[str], holder: str | None) -> None:
    """The flags lying on the tile, entering it or dropped there by killed bearers (A61, A62, A97,
    A101, A106), in id order: picked up by an enemy land unit holding the tile, sent home by the
    owner's, left lying on an empty tile."""
    units = w.units
    cands: list[tuple[str, str]] = []
    if lying is not None:
        cands.append((lying, "lying"))
    for m in flags:
        cands.append((m, "enter"))
    for fid, was_entering in w.drops.pop(t, []):
        cands.append((fid, "dropped_entering" if was_entering else "dropped"))
    for fid, how in sorted(cands):
        f = units.get(fid)
        if f is None:
            continue
        hu = units.get(holder) if holder is not None else None
        if hu is not None and DOMAIN[hu.type] == LAND and hu.type not in ("flag", "landmine"):
            if hu.owner == f.owner:
                w.home_queue.append(fid)
            elif hu.flag is None:
                if how == "enter":
                    f.tile = t
                w.pickup(hu, f)
            else:
                w.home_queue.append(fid)
        elif hu is None and how in ("lying", "dropped") and t not in w.occ:
            w.place(f, t)
        elif hu is None and how == "enter" and t not in w.occ:
            w.place(f, t)  # an aircraft ending its step here does not send it home (A101)
        elif hu is not None and hu.type == "flag" and how != "dropped_entering":
            w.home_queue.append(fid)  # two flags on one tile: the smaller id stays
        else:
            w.home_queue.append(fid)
        if f.carrier is None and w.occ.get(t) == fid:
            holder = fid
