"""The working set of one Archipelago round's resolution (:mod:`engine.archipelago.resolve`).

:class:`Work` holds the state being resolved (a clone: the caller's state is never changed) and
what the steps of A21 share while they run: where units stand (``occ``: the unit on a tile, not an
aircraft or cargo; ``air``: the aircraft parked there), the raw events, and what a step leaves for
later (flags to send home, rafts to place, flags dropped by killed bearers, units that stopped,
seats that won a fight).  The steps (:mod:`.resolve_fire`, :mod:`.resolve_move`,
:mod:`.resolve_enter`, :mod:`.resolve_close`) change units only through it: :meth:`Work.place`,
:meth:`Work.unplace`, :meth:`Work.move_unit`, :meth:`Work.kill`, :meth:`Work.fight`,
:meth:`Work.pickup`, and report through :meth:`Work.event`.
"""

from __future__ import annotations

from typing import Any

from engine.archipelago.board import Tile, tie_key, tile_dict
from engine.archipelago.orders import Parsed
from engine.archipelago.rules import ENTRANT, HOLDER, duel
from engine.archipelago.state import State, Unit
from engine.archipelago.units import AIR, UNIT_TYPES

__all__ = ["DOMAIN", "RawEvent", "Work", "describe"]

#: a raw event: {"ev": the event's data, "parts": the seats that took part (None: public), "tile",
#: "observed": what watchers see, "others": seats told by an event of their own}
RawEvent = dict[str, Any]
_NO_SEATS: frozenset[int] = frozenset()
#: unit type -> its domain ("land", "sea", "air")
DOMAIN = {k: t.domain for k, t in UNIT_TYPES.items()}


def describe(u: Unit, died: bool, full: bool, state: State) -> dict[str, Any]:
    """A unit in an event: with its type (``full``: the parties) or the domain it shows (watchers)."""
    d: dict[str, Any] = {"id": u.id, "owner": u.owner}
    if full:
        d["type"] = u.type
    else:
        d["domain"] = "air" if DOMAIN[u.type] == AIR else ("land" if u.tile in state.board.land else "sea")
    if died:
        d["died"] = True
    return d


class Work:
    """The working set of one resolution (module docstring); mutates its own clone of the state."""

    def __init__(self, state: State, parsed: dict[int, Parsed], occ: dict[Tile, str],
                 air: dict[Tile, list[str]]) -> None:
        """``parsed``: each seat's orders; ``occ`` and ``air``: where ``state``'s units stand
        (:func:`engine.archipelago.resolve.round_clone` gives a state's clone with them)."""
        self.s = state
        self.b = state.board
        self.units = state.units
        self.parsed = parsed
        self.occ = occ  # tile -> the unit standing there (not an aircraft, not cargo)
        self.air = air  # tile -> the aircraft parked there (not cargo)
        self.events: list[RawEvent] = []
        self.won: set[int] = set()  # seats that won a fight (A51)
        self.home_queue: list[str] = []  # flags to send home (A64, A98)
        self.rafts: list[tuple[str, int, Tile, list[str]]] = []  # rafted ships lost: to place (A95)
        self.drops: dict[Tile, list[tuple[str, bool]]] = {}  # flags dropped by killed bearers (A97)
        self.stopped: set[str] = set()  # units that move no more this round
        # (the clone's own control: control() replaces state.control, never changes it in place)
        self.start_control = state.control

    # -- events ---------------------------------------------------------------------------------
    def event(self, kind: str, tile: Tile | None, parts: set[int] | None, data: dict[str, Any],
              observed: dict[str, Any] | None = None, others: set[int] | None = None) -> None:
        """``parts``: the seats that took part (None = public); ``observed``: what watchers see;
        ``others``: seats told by an event of their own, so never counted as watchers of this one."""
        ev: RawEvent = {"kind": kind, **data}
        if tile is not None:
            ev["tile"] = tile_dict(tile)
        self.events.append({"ev": ev, "parts": parts, "tile": tile, "observed": observed,
                            "others": others or _NO_SEATS})

    # -- placement helpers ----------------------------------------------------------------------
    def empty(self, t: Tile) -> bool:
        return t not in self.occ and not self.air.get(t)

    def place(self, u: Unit, t: Tile) -> None:
        self.move_unit(u, t)
        if DOMAIN[u.type] == AIR:
            self.air.setdefault(t, []).append(u.id)
        else:
            self.occ[t] = u.id

    def unplace(self, u: Unit) -> None:
        if u.carrier is not None:
            return
        if DOMAIN[u.type] == AIR:
            lst = self.air.get(u.tile)
            if lst and u.id in lst:
                lst.remove(u.id)
                if not lst:
                    del self.air[u.tile]
        elif self.occ.get(u.tile) == u.id:
            del self.occ[u.tile]

    def move_unit(self, u: Unit, t: Tile) -> None:
        u.tile = t
        units = self.units
        for cid in u.cargo:
            c = units[cid]
            c.tile = t
            if c.flag is not None:
                units[c.flag].tile = t
        if u.flag is not None:
            units[u.flag].tile = t

    def home_tile(self, owner: int, *, anywhere: bool = True) -> Tile | None:
        """A64/A98: the base if empty, else the empty home tile nearest the base (A28, A105), else
        (``anywhere``) the empty land tile nearest it; ``None``: none is empty."""
        b = self.b
        base = b.bases[owner]
        if self.empty(base):
            return base
        home = [t for t in b.home_island(owner).tiles if self.empty(t)]
        if home:
            return min(home, key=lambda t: tie_key(base, t))
        if not anywhere:
            return None
        rest = [t for t in b.land if self.empty(t)]
        if rest:
            return min(rest, key=lambda t: tie_key(base, t))
        return None

    def flush_home(self) -> None:
        queue, self.home_queue = sorted(set(self.home_queue)), []
        for fid in queue:
            f = self.units.get(fid)
            if f is None:
                continue
            if f.carrier is not None:
                bearer = self.units.get(f.carrier)
                if bearer is not None and bearer.flag == fid:
                    bearer.flag = None
                f.carrier = None
            else:
                self.unplace(f)
            t = self.home_tile(f.owner)
            if t is None:  # pragma: no cover - a board without a free land tile
                continue
            self.place(f, t)
            self.event("flag_home", t, {f.owner}, {"units": [{"id": f.id, "owner": f.owner}]},
                       observed={"units": [{"id": f.id, "owner": f.owner, "domain": "land"}]})

    def flush_rafts(self) -> None:
        rafts, self.rafts = sorted(self.rafts), []
        for ship_id, owner, last, cargo in rafts:
            spot: Tile | None = None
            if self.empty(last) and self.b.is_sea(last):
                spot = last
            else:
                for n in self.b.neighbours(last):
                    if self.b.is_sea(n) and self.empty(n):
                        spot = n
                        break
            if spot is None:
                for cid in cargo:
                    if cid in self.units:
                        self.kill(cid, cause="raft_lost")
                self.event("raft_lost", last, {owner}, {"ship": ship_id})
                continue
            rid = self.s.new_id()
            raft = Unit(rid, owner, "raft", spot)
            self.units[rid] = raft
            self.place(raft, spot)
            for cid in cargo:
                c = self.units.get(cid)
                if c is None:
                    continue
                c.carrier = rid
                raft.cargo.append(cid)
                self.stopped.add(cid)
            self.move_unit(raft, spot)
            self.event("raft", spot, {owner}, {"ship": ship_id, "units": [{"id": rid, "owner": owner,
                                                                          "type": "raft"}],
                                                "cargo": list(raft.cargo)},
                       observed={"units": [{"id": rid, "owner": owner, "domain": "sea"}]})

    # -- death ----------------------------------------------------------------------------------
    def kill(self, uid: str, *, entering: bool = False, cause: str = "fight") -> None:
        u = self.units.get(uid)
        if u is None:
            return
        was_cargo = u.carrier is not None
        if was_cargo:
            c = self.units.get(u.carrier or "")
            if c is not None and uid in c.cargo:
                c.cargo.remove(uid)
        else:
            self.unplace(u)
        del self.units[uid]
        self.stopped.add(uid)
        t = u.tile
        if u.flag is not None:
            f = self.units.get(u.flag)
            u.flag = None
            if f is not None:
                f.carrier = None
                if was_cargo or t not in self.b.land:
                    self.home_queue.append(f.id)
                else:
                    self.drops.setdefault(t, []).append((f.id, entering))
        if u.type == "flag":
            return
        if u.raft:
            self.rafts.append((uid, u.owner, t, list(u.cargo)))
        else:
            for cid in list(u.cargo):
                self.kill(cid, cause="sunk")

    def after_removals(self) -> None:
        """After units were removed outside entering (strikes, bombardments, the landing check):
        rafts are placed, dropped flags settled, flags sent home."""
        self.flush_rafts()
        self.settle_drops_outside()
        self.flush_home()

    def settle_drops_outside(self) -> None:
        """Dropped flags outside entering (swaps, strikes): lie on the tile if empty, else go home."""
        drops, self.drops = self.drops, {}
        for t, lst in sorted(drops.items(), key=lambda i: (i[0][1], i[0][0])):
            for fid, _ in sorted(lst):
                f = self.units.get(fid)
                if f is None:
                    continue
                if self.empty(t):
                    self.place(f, t)
                else:
                    self.home_queue.append(fid)

    # -- duels (A29, A43, A34, A93) -------------------------------------------------------------
    def fight(self, a: Unit, b: Unit, a_att: bool, b_att: bool, tile: Tile, entering_b: bool,
              entering_a: bool = False) -> str | None:
        """Fight a (holder) against b (entrant) (:func:`engine.archipelago.rules.duel`), told to both
        and to watchers, both revealed to each other, the loser killed.  Returns the winner's id or
        None for a tie."""
        won = duel(a.type, b.type, a_att, b_att)  # (a parked aircraft entered: A34, A93)
        win = a.id if won == HOLDER else b.id if won == ENTRANT else None
        self.s.pstates[a.owner].revealed.add(b.id)
        self.s.pstates[b.owner].revealed.add(a.id)
        died = [x for x in (a, b) if win != x.id]
        full: dict[str, Any] = {"units": [describe(a, a in died, True, self.s), describe(b, b in died, True, self.s)]}
        if win is not None:
            full["winner"] = win  # omitted on a tie
        obs = {"units": [describe(a, a in died, False, self.s), describe(b, b in died, False, self.s)]}
        self.event("fight", tile, {a.owner, b.owner}, full, observed=obs)
        if win is not None:
            self.won.add(self.units[win].owner)
            self.stopped.add(win)
        for x in died:
            self.kill(x.id, entering=(entering_b if x is b else entering_a))
        return win

    def mine_on(self, t: Tile) -> bool:
        o = self.occ.get(t)
        return o is not None and UNIT_TYPES[self.units[o].type].is_mine

    def pickup(self, x: Unit, f: Unit) -> None:
        """A61: ``x`` picks up flag ``f`` and stops (not a fight, A99)."""
        self.unplace(f)
        f.carrier = x.id
        f.tile = x.tile
        x.flag = f.id
        self.stopped.add(x.id)
        self.event("flag_taken", x.tile, {x.owner, f.owner},  # not a fight: no reveal (A99)
                   {"units": [{"id": x.id, "owner": x.owner, "domain": "land"},
                              {"id": f.id, "owner": f.owner, "type": "flag"}]},
                   observed={"units": [{"id": x.id, "owner": x.owner, "domain": "land"},
                                       {"id": f.id, "owner": f.owner, "domain": "land"}]})
