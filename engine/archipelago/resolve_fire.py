"""Steps 1 and 2 of an Archipelago round (A21): spies reveal (A39), then bombardments and strikes
all at once against the start-of-round positions (A37, A38, A40).  Steps of
:func:`engine.archipelago.resolve.resolve_state` over its :class:`~.resolve_work.Work`."""

from __future__ import annotations

from typing import Any

from engine.archipelago.board import Tile, dist
from engine.archipelago.fog import sees_unit, watch_tiles
from engine.archipelago.resolve_work import Work, describe
from engine.archipelago.rules import (
    BOMBARD_RANGE,
    REVEAL_RANGE,
    STRIKE_COST,
    STRIKE_RANGE,
    bombard_hits,
    can_pay,
    pay,
    strike_hits,
)
from engine.archipelago.state import Unit
from engine.archipelago.units import LAND, UNIT_TYPES

__all__ = ["bombard_and_strike", "reveals"]


def reveals(w: Work) -> None:
    """Step 1 (A39): each spy's reveal of an enemy within reach shows its type to the spy's player."""
    units = w.units
    for p in range(w.s.players):
        for uid, (kind, target) in w.parsed[p].actions.items():
            if kind != "reveal":
                continue
            spy, tu = units.get(uid), units.get(target or "")
            if (spy is None or tu is None or spy.type != "spy" or spy.carrier is not None
                    or tu.owner == p or tu.carrier is not None or dist(spy.tile, tu.tile) > REVEAL_RANGE):
                continue
            w.s.pstates[p].revealed.add(tu.id)
            w.event("reveal", tu.tile, {p}, {"units": [{"id": tu.id, "owner": tu.owner,
                                                        "type": tu.type}], "by": uid})


class _StartSight:
    """Each seat's sight at the start of the round (tiles in sight, tiles a submarine is seen
    from), computed when first asked."""

    def __init__(self, w: Work, start_bits: list[int]) -> None:
        self.w = w
        self.start_bits = start_bits
        self.vis: dict[int, set[Tile]] = {}
        self.watch: dict[int, set[Tile]] = {}

    def sees(self, p: int, u: Unit) -> bool:
        if p not in self.watch:
            self.watch[p] = watch_tiles(self.w.s, p)
            self.vis[p] = set(self.w.b.tiles_of(self.start_bits[p]))
        return sees_unit(self.w.s, p, u, self.vis[p], self.watch[p])


def bombard_and_strike(w: Work, start_bits: list[int]) -> None:
    """Step 2 (A37, A38, A40): every bombardment and strike against the start-of-round positions,
    seats in order, each seat's orders by unit id; the units hit die together afterwards.
    ``start_bits``: each seat's sight at the start of the round as tile bits."""
    units = w.units
    sight = _StartSight(w, start_bits)
    kills: list[str] = []
    for p in range(w.s.players):
        for uid, (kind, target) in sorted(w.parsed[p].actions.items()):
            if kind not in ("bombard", "strike"):
                continue
            a, tu = units.get(uid), units.get(target or "")
            if a is None or tu is None or a.carrier is not None or tu.owner == p or tu.carrier is not None:
                continue
            hit = _bombard(w, a, tu) if kind == "bombard" else _strike(w, p, a, tu, sight)
            if hit is None:
                continue
            w.s.pstates[p].revealed.add(tu.id)
            _report(w, kind, p, a, tu, hit, sight)
            if hit:
                kills.append(tu.id)
    for uid in kills:
        w.kill(uid, cause="action")
    w.after_removals()


def _bombard(w: Work, a: Unit, tu: Unit) -> bool | None:
    """A37: whether the bombardment hits; ``None``: it does not happen (not a warship, not an
    adjacent land unit)."""
    if (not UNIT_TYPES[a.type].is_warship or dist(a.tile, tu.tile) != BOMBARD_RANGE
            or tu.tile not in w.b.land or UNIT_TYPES[tu.type].domain != LAND):
        return None
    return bombard_hits(a.type, tu.type)


def _strike(w: Work, p: int, a: Unit, tu: Unit, sight: _StartSight) -> bool | None:
    """A38: whether the strike hits (its fuel paid); ``None``: it does not happen (not a fighter,
    out of range, no fuel, a target the seat did not see at the start of the round)."""
    stock = w.s.pstates[p].stock
    if a.type != "fighter" or dist(a.tile, tu.tile) > STRIKE_RANGE or not can_pay(stock, STRIKE_COST):
        return None
    if not sight.sees(p, tu):
        return None
    pay(stock, STRIKE_COST)
    return strike_hits(tu.type)


def _report(w: Work, kind: str, p: int, a: Unit, tu: Unit, hit: bool, sight: _StartSight) -> None:
    """The events of a bombardment or strike: to the shooter (and, for a hit, to watchers and the
    victim, who learns the shooter's id only if it saw the shooter, A85)."""
    units_data: list[dict[str, Any]] = [{"id": tu.id, "owner": tu.owner, "type": tu.type,
                                         **({"died": True} if hit else {})}]
    if not hit:
        w.event(kind, tu.tile, {p}, {"by": a.id, "units": units_data})
        return
    obs = {"units": [describe(tu, True, False, w.s)]}
    w.event(kind, tu.tile, {p}, {"by": a.id, "units": units_data}, observed=obs, others={tu.owner})
    # The victim learns the shooter's id only if it saw the shooter (A85): a fighter strikes from
    # up to 5 tiles away, out of sight.
    seen = sight.sees(tu.owner, a)
    w.event(kind, tu.tile, {tu.owner}, {"by": a.id, "units": units_data} if seen else {"units": units_data})
