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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.archipelago.board import DELTA, Tile, dist, tie_key, tile_dict
from engine.archipelago.fog import sees_unit, sight, update_memory, watch_tiles
from engine.archipelago.orders import Parsed, parse_orders
from engine.archipelago.rules import (
    BOMBARD_RANGE,
    ENTRANT,
    HOLDER,
    OUTPOST_COST,
    REVEAL_RANGE,
    STRIKE_COST,
    STRIKE_RANGE,
    bombard_hits,
    can_pay,
    duel,
    pay,
    strike_hits,
)
from engine.archipelago.state import State, Unit
from engine.archipelago.units import A66_TYPES, AIR, LAND, RESOURCES, SEA, UNIT_TYPES

RawEvent = dict[str, Any]
_NO_SEATS: frozenset[int] = frozenset()

SCORE_CENTRE = 3
SCORE_RING = 2
SCORE_OUTPOST = 1
FLAG_SCORE = 5
DOMAIN = {k: t.domain for k, t in UNIT_TYPES.items()}
CAPACITY = {k: t.capacity for k, t in UNIT_TYPES.items()}
SHIP_TYPES = frozenset(k for k, t in UNIT_TYPES.items() if t.is_ship)
#: the unit types settled in place when one enters an empty tile alone (not flags, not aircraft)
ENTER_ALONE_TYPES = frozenset(k for k, t in UNIT_TYPES.items() if k != "flag" and t.domain != AIR)
#: the unit types that control the land tile they stand on (A47): land units but mines and flags
CONTROLLING_TYPES = frozenset(k for k, t in UNIT_TYPES.items() if t.domain == LAND and not t.is_mine
                              and not t.is_flag)


def _desc(u: Unit, died: bool, full: bool, state: State) -> dict[str, Any]:
    d: dict[str, Any] = {"id": u.id, "owner": u.owner}
    if full:
        d["type"] = u.type
    else:
        d["domain"] = "air" if DOMAIN[u.type] == AIR else ("land" if u.tile in state.board.land else "sea")
    if died:
        d["died"] = True
    return d


class Resolver:
    """Working data of one resolution; mutates its own clone of the state."""

    def __init__(self, state: State, parsed: dict[int, Parsed],
                 placed: tuple[dict[Tile, str], dict[Tile, list[str]]] | None = None) -> None:
        """``placed``: ``occ`` and ``air`` of ``state`` when already known (:func:`_round_clone`)."""
        self.s = state
        self.b = state.board
        self.units = state.units
        self.parsed = parsed
        self.events: list[RawEvent] = []
        self.won: set[int] = set()
        self.home_queue: list[str] = []
        self.rafts: list[tuple[str, int, Tile, list[str]]] = []
        self.drops: dict[Tile, list[tuple[str, bool]]] = {}
        self.stopped: set[str] = set()
        # (the clone's own control: control() replaces state.control, never changes it in place)
        self.start_control = state.control
        if placed is not None:
            self.occ, self.air = placed
            return
        self.occ = {}  # tile -> the unit standing there (not an aircraft, not cargo)
        self.air = {}  # tile -> the aircraft parked there (not cargo)
        for u in self.units.values():
            if u.carrier is None:
                if DOMAIN[u.type] == AIR:
                    self.air.setdefault(u.tile, []).append(u.id)
                else:
                    self.occ[u.tile] = u.id

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

    def home_tile(self, owner: int) -> Tile | None:
        """A64/A98: the base if empty, else the empty home tile nearest the base, else any land."""
        b = self.b
        base = b.bases[owner]
        if self.empty(base):
            return base
        home = [t for t in b.home_island(owner).tiles if self.empty(t)]
        if home:
            return min(home, key=lambda t: tie_key(base, t))
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
    def duel(self, a: Unit, b: Unit, a_att: bool, b_att: bool, tile: Tile, entering_b: bool,
             entering_a: bool = False) -> str | None:
        """Fight a (holder) against b (entrant).  Returns the winner's id or None for a tie."""
        won = duel(a.type, b.type, a_att, b_att)  # (a parked aircraft entered: A34, A93)
        win = a.id if won == HOLDER else b.id if won == ENTRANT else None
        self.s.pstates[a.owner].revealed.add(b.id)
        self.s.pstates[b.owner].revealed.add(a.id)
        died = [x for x in (a, b) if win != x.id]
        full: dict[str, Any] = {"units": [_desc(a, a in died, True, self.s), _desc(b, b in died, True, self.s)]}
        if win is not None:
            full["winner"] = win  # omitted on a tie
        obs = {"units": [_desc(a, a in died, False, self.s), _desc(b, b in died, False, self.s)]}
        self.event("fight", tile, {a.owner, b.owner}, full, observed=obs)
        if win is not None:
            self.won.add(self.units[win].owner)
            self.stopped.add(win)
        for x in died:
            self.kill(x.id, entering=(entering_b if x is b else entering_a))
        return win

    # -- step 1 and 2: actions --------------------------------------------------------------------
    def actions(self, start_bits: list[int]) -> None:
        """Spies reveal (A39), then bombardments and strikes (A37, A38, A40); ``start_bits``: each
        seat's sight at the start of the round as tile bits."""
        units = self.units
        start_vis: dict[int, set[Tile]] = {}
        for p in range(self.s.players):
            for uid, (kind, target) in self.parsed[p].actions.items():
                if kind != "reveal":
                    continue
                spy, tu = units.get(uid), units.get(target or "")
                if (spy is None or tu is None or spy.type != "spy" or spy.carrier is not None
                        or tu.owner == p or tu.carrier is not None or dist(spy.tile, tu.tile) > REVEAL_RANGE):
                    continue
                self.s.pstates[p].revealed.add(tu.id)
                self.event("reveal", tu.tile, {p}, {"units": [{"id": tu.id, "owner": tu.owner,
                                                                "type": tu.type}], "by": uid})
        kills: list[str] = []
        watch: dict[int, set[Tile]] = {}
        for p in range(self.s.players):
            ps = self.s.pstates[p]
            for uid, (kind, target) in sorted(self.parsed[p].actions.items()):
                if kind not in ("bombard", "strike"):
                    continue
                a, tu = units.get(uid), units.get(target or "")
                if a is None or tu is None or a.carrier is not None or tu.owner == p or tu.carrier is not None:
                    continue
                tt = UNIT_TYPES[tu.type]
                if kind == "bombard":
                    if (not UNIT_TYPES[a.type].is_warship or dist(a.tile, tu.tile) != BOMBARD_RANGE
                            or tu.tile not in self.b.land or tt.domain != LAND):
                        continue
                    hit = bombard_hits(a.type, tu.type)
                else:
                    if (a.type != "fighter" or dist(a.tile, tu.tile) > STRIKE_RANGE
                            or not can_pay(ps.stock, STRIKE_COST)):
                        continue
                    if p not in watch:
                        watch[p] = watch_tiles(self.s, p)
                        start_vis[p] = set(self.b.tiles_of(start_bits[p]))
                    if not sees_unit(self.s, p, tu, start_vis[p], watch[p]):
                        continue
                    pay(ps.stock, STRIKE_COST)
                    hit = strike_hits(tu.type)
                ps.revealed.add(tu.id)
                units_data = [{"id": tu.id, "owner": tu.owner, "type": tu.type, **({"died": True} if hit else {})}]
                if not hit:
                    self.event(kind, tu.tile, {p}, {"by": uid, "units": units_data})
                    continue
                kills.append(tu.id)
                obs = {"units": [_desc(tu, True, False, self.s)]}
                self.event(kind, tu.tile, {p}, {"by": uid, "units": units_data}, observed=obs,
                           others={tu.owner})
                # The victim learns the shooter's id only if it saw the shooter (A85): a fighter
                # strikes from up to 5 tiles away, out of sight.
                if tu.owner not in watch:
                    watch[tu.owner] = watch_tiles(self.s, tu.owner)
                    start_vis[tu.owner] = set(self.b.tiles_of(start_bits[tu.owner]))
                seen = sees_unit(self.s, tu.owner, a, start_vis[tu.owner], watch[tu.owner])
                self.event(kind, tu.tile, {tu.owner}, {"by": uid, "units": units_data} if seen
                           else {"units": units_data})
        for uid in kills:
            self.kill(uid, cause="action")
        self.flush_rafts()
        self.settle_drops_outside()
        self.flush_home()

    # -- step 3: movement -----------------------------------------------------------------------
    def movement(self) -> None:
        units = self.units
        occ, air = self.occ, self.air  # (never rebound; self.drops is)
        b = self.b
        land = b.land
        width, height = b.width, b.height
        paths: dict[str, list[str]] = {}
        for p in range(self.s.players):
            for uid, path in self.parsed[p].moves.items():
                if uid in units and uid not in self.parsed[p].actions:
                    paths[uid] = path
        moving_order = set(paths)
        inflight: set[str] = set()
        stopped = self.stopped
        movers = sorted(paths)
        for s in range(1, max((len(p) for p in paths.values()), default=0) + 1):
            # the movers of this sub-step are among those of the last one (stopped only grows)
            movers = [m for m in movers if len(paths[m]) >= s and m not in stopped and m in units]
            if not movers:
                break
            mset = set(movers)
            pos: dict[str, Tile] = {}
            tgt: dict[str, Tile] = {}
            last: set[str] = set()  # the aircraft whose path ends with this step
            held: set[str] = set()
            terrain: set[str] = set()
            boarders: dict[str, str] = {}
            want: dict[str, list[str]] = {}
            for m in movers:
                u = units[m]
                x, y = pos[m] = u.tile
                dx, dy = DELTA[paths[m][s - 1]]
                x += dx
                y += dy
                t = tgt[m] = (x, y)
                # (a) terrain holds
                typ = u.type
                dom = DOMAIN[typ]
                if not (0 <= x < width and 0 <= y < height):
                    terrain.add(m)
                    continue
                if u.carrier is not None and (typ == "flag" or u.carrier in moving_order):
                    terrain.add(m)  # carried flags never move; cargo holds while its carrier moves
                    continue
                if dom == AIR:
                    if len(paths[m]) == s:
                        last.add(m)
                    continue
                if typ == "flag":
                    # A100: off the home island or onto a mine: held from the start of the
                    # sub-step; aircraft, flags and bearers hold it in the fixed point
                    if not b.is_home_of(t, u.owner) or self._mine_on(t):
                        terrain.add(m)
                    continue
                if dom == LAND:
                    c = self._idle_carrier(t, u.owner, moving_order, mset) if t in occ or t in air else None
                    if c is not None and c != u.carrier:
                        want.setdefault(c, []).append(m)
                        continue
                    if typ != "navcommando" and t not in land:
                        terrain.add(m)
                elif dom == SEA and t in land:
                    terrain.add(m)
            for c, lst in want.items():
                free = CAPACITY[units[c].type] - len(units[c].cargo)
                for i, m in enumerate(lst):  # movers are in id order
                    if i < free:
                        boarders[m] = c
                    else:
                        terrain.add(m)
            held |= terrain
            for m in sorted(terrain):
                u = units[m]
                if m in inflight:
                    inflight.discard(m)
                    self.air.setdefault(u.tile, []).append(m)
                stopped.add(m)
                self.event("held", u.tile, {u.owner}, {"units": [{"id": m, "owner": u.owner}]})
            self._fixed_point(movers, mset, held, boarders, tgt, last, inflight)
            # (b) swaps
            cands: list[str] = []  # unheld movers on the ground (not aircraft, not cargo)
            by_pos: dict[Tile, str] = {}  # their tiles
            for m in movers:
                if m not in held and m not in boarders and m in units:
                    u = units[m]
                    if u.carrier is None and DOMAIN[u.type] != AIR:
                        cands.append(m)
                        by_pos[pos[m]] = m
            swapped = False
            for m in cands:
                if m not in units or m in held:
                    continue
                o = by_pos.get(tgt[m])
                if o is None or o <= m or o not in units or o in held or tgt[o] != pos[m]:
                    continue
                um, uo = units[m], units[o]
                if um.owner == uo.owner:
                    continue
                swapped = True
                if um.type == "flag" or uo.type == "flag":
                    fu, xu = (um, uo) if um.type == "flag" else (uo, um)
                    held.update((m, o))
                    stopped.update((m, o))
                    if DOMAIN[xu.type] == LAND and xu.type != "flag" and xu.flag is None:
                        self._pickup(xu, fu)
                    continue
                self.duel(um, uo, True, True, pos[m], False)
                for xid in (m, o):
                    if xid in units:
                        held.add(xid)
            if swapped:
                self.settle_drops_outside()
                self._fixed_point(movers, mset, held, boarders, tgt, last, inflight)
            # (c) entering
            entering = [m for m in movers if m in units and m not in held]
            for m in entering:
                u = units[m]
                if u.carrier is not None:
                    cu = units.get(u.carrier)
                    if cu is not None and m in cu.cargo:
                        cu.cargo.remove(m)
                    u.carrier = None
                elif m in inflight:
                    pass
                elif DOMAIN[u.type] == AIR:
                    self.unplace(u)
                elif occ.get(u.tile) == m:  # (unplace, in short)
                    del occ[u.tile]
            groups: dict[Tile, list[str]] = {}
            for m in entering:
                u = units[m]
                t = tgt[m]
                if u.cargo or u.flag is not None:
                    self.move_unit(u, t)
                else:
                    u.tile = t
                c_id = boarders.get(m) if boarders else None
                if c_id is not None:
                    units[c_id].cargo.append(m)
                    u.carrier = c_id
                    stopped.add(m)
                    self.event("board", t, {u.owner}, {"units": [{"id": m, "owner": u.owner}], "carrier": c_id})
                    continue
                if DOMAIN[u.type] == AIR and m not in last:
                    inflight.add(m)
                    continue
                if inflight:
                    inflight.discard(m)
                group = groups.get(t)
                if group is None:
                    groups[t] = [m]
                else:
                    group.append(m)
            contested: list[Tile] = []
            drops = self.drops
            for t, ents in groups.items():
                # the common case: one unit (not a flag, not an aircraft) enters an empty tile; it
                # touches nothing but this tile, so it is settled here, in any order
                if len(ents) == 1 and t not in occ and t not in drops and not air.get(t):
                    if units[ents[0]].type in ENTER_ALONE_TYPES:
                        occ[t] = ents[0]
                        continue
                contested.append(t)
            for t in sorted(contested, key=_tile_yx):
                self._enter_tile(t, groups[t])
            self.flush_rafts()
            self.flush_home()
        for m in sorted(inflight):  # pragma: no cover - paths always end
            if m in units:
                self.air.setdefault(units[m].tile, []).append(m)
        self._landing_check()

    def _mine_on(self, t: Tile) -> bool:
        o = self.occ.get(t)
        return o is not None and UNIT_TYPES[self.units[o].type].is_mine

    def _idle_carrier(self, t: Tile, owner: int, moving_order: set[str], mset: set[str]) -> str | None:
        o = self.occ.get(t)
        if o is not None:
            u = self.units[o]
            if (u.owner == owner and CAPACITY[u.type] > 0 and DOMAIN[u.type] == SEA
                    and o not in moving_order):
                return o
            return None
        lst = self.air.get(t)
        if lst and len(lst) == 1:
            u = self.units[lst[0]]
            if u.owner == owner and CAPACITY[u.type] > 0 and lst[0] not in moving_order:
                return lst[0]
        return None

    def _fixed_point(self, movers: list[str], mset: set[str], held: set[str], boarders: dict[str, str],
                     tgt: dict[str, Tile], last: set[str], inflight: set[str]) -> None:
        """Blocking (a): passes until no mover is newly held, each judged against the previous
        pass's holds.  A pass judges again only the movers whose judgement a new hold can change:
        those with the newly held mover's owner and target (the first of them may change) and
        those targeting its tile (it no longer leaves it); the others would judge as before."""
        units = self.units
        occ, air = self.occ, self.air
        # active mover -> (its unit, its target, the active movers with its owner and target in id
        # order: its group), in id order
        info: dict[str, tuple[Unit, Tile, list[str]]] = {}
        same: dict[tuple[int, Tile], list[str]] = {}  # (owner, target) -> a group
        into: dict[Tile, list[str]] = {}  # target -> active movers
        for m in movers:
            if m in units and m not in held and m not in boarders:
                u = units[m]
                if DOMAIN[u.type] != AIR or m in last:
                    t = tgt[m]
                    key = (u.owner, t)
                    group = same.get(key)
                    if group is None:
                        group = same[key] = []
                    group.append(m)
                    info[m] = (u, t, group)
                    to_t = into.get(t)
                    if to_t is None:
                        into[t] = [m]
                    else:
                        to_t.append(m)
        judge: Iterable[str] = info
        while True:
            new: list[str] = []
            for m in judge:
                u, t, group = info[m]
                if group[0] != m and _unheld_before(group, m, held):
                    new.append(m)  # an unheld friendly mover with a smaller id targets the tile
                    continue
                o = occ.get(t)
                lst = air.get(t)
                if o is None:
                    if not lst:
                        continue
                    here: Sequence[str] = lst
                else:
                    here = [o, *lst] if lst else (o,)
                for o in here:
                    ou = units[o]
                    if o in mset and o not in held:
                        continue  # it leaves the tile: it holds nobody (A100)
                    if u.type == "flag" and (DOMAIN[ou.type] == AIR or ou.type == "flag"
                                             or ou.flag is not None):
                        new.append(m)  # A100: a staying aircraft, flag or flag bearer
                        break
                    if u.flag is not None and ou.type == "flag" and ou.owner != u.owner:
                        new.append(m)  # A103: a bearer does not enter another enemy flag
                        break
                    if ou.owner != u.owner:
                        continue
                    if ou.type == "flag" and DOMAIN[u.type] == LAND and u.type != "flag":
                        continue  # A62: the owner's land unit sends its flag home
                    new.append(m)
                    break
            if not new:
                return
            held.update(new)
            self.stopped.update(new)
            again: set[str] = set()
            for m in new:
                u, _, group = info[m]
                if m in inflight:
                    inflight.discard(m)
                    air.setdefault(u.tile, []).append(m)
                if len(group) > 1:
                    again.update(group)
                to_here = into.get(u.tile)
                if to_here is not None:
                    again.update(to_here)
            judge = sorted(again - held)  # (the movers are in id order)

    def _pickup(self, x: Unit, f: Unit) -> None:
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

    def _enter_tile(self, t: Tile, ents: list[str]) -> None:
        units = self.units
        if len(ents) == 1 and t not in self.occ and not self.air.get(t) and t not in self.drops:
            typ = units[ents[0]].type
            if typ != "flag" and DOMAIN[typ] != AIR:  # the common case: one unit enters an empty tile
                self.occ[t] = ents[0]
                return
        ents = sorted(ents)
        aircraft = [m for m in ents if DOMAIN[units[m].type] == AIR]
        flags = [m for m in ents if units[m].type == "flag"]
        ground = [m for m in ents if m not in aircraft and m not in flags]
        occupant = self.occ.get(t)
        parked: str | None = None
        if occupant is None:
            lst = self.air.get(t)
            if lst and len(lst) == 1:
                parked = lst[0]
        # A62/A97: the owner's land unit meeting its own flag carried by an enemy on this tile (as
        # entrant or as the staying occupant) sends it home before the tile's duels
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
                self.home_queue.append(fid)
                self.event("flag_recovered", t, {f.owner}, {"units": [{"id": fid, "owner": f.owner}]})
        lying: str | None = None
        if occupant is not None and units[occupant].type == "flag":
            fo = units[occupant].owner
            if not ground:  # only aircraft arrive: they do not touch the flag
                occupant = None
            elif any(units[m].owner == fo and DOMAIN[units[m].type] == LAND for m in ground):
                self.unplace(units[occupant])
                self.home_queue.append(occupant)
                self.event("flag_recovered", t, {fo}, {"units": [{"id": occupant, "owner": fo}]})
                occupant = None
            else:
                lying = occupant
                self.unplace(units[occupant])
                occupant = None
        holder = occupant if occupant is not None else parked
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
            win = self.duel(h_u, e_u, not staying, True, t, True, entering_a=holder in ents)
            holder = win
        # the tile's final holder
        if holder is not None and holder in units and DOMAIN[units[holder].type] != AIR:
            if self.occ.get(t) != holder:
                if t in self.occ and self.occ[t] not in units:
                    del self.occ[t]
                self.occ[t] = holder
        for m in aircraft:
            if m in units:
                self.air.setdefault(t, []).append(m)
        # flags: lying here, entering, dropped by killed bearers (A61, A62, A97)
        cands: list[tuple[str, str]] = []
        if lying is not None:
            cands.append((lying, "lying"))
        for m in flags:
            cands.append((m, "enter"))
        for fid, was_entering in self.drops.pop(t, []):
            cands.append((fid, "dropped_entering" if was_entering else "dropped"))
        for fid, how in sorted(cands):
            fl = units.get(fid)
            if fl is None:
                continue
            f = fl
            hu = units.get(holder) if holder is not None else None
            if hu is not None and DOMAIN[hu.type] == LAND and hu.type not in ("flag", "landmine"):
                if hu.owner == f.owner:
                    self.home_queue.append(fid)
                elif hu.flag is None:
                    if how == "enter":
                        f.tile = t
                    self._pickup(hu, f)
                else:
                    self.home_queue.append(fid)
            elif hu is None and how in ("lying", "dropped") and t not in self.occ:
                self.place(f, t)
            elif hu is None and how == "enter" and t not in self.occ:
                self.place(f, t)  # an aircraft ending its step here does not send it home (A101)
            elif hu is not None and hu.type == "flag" and how != "dropped_entering":
                self.home_queue.append(fid)  # two flags on one tile: the smaller id stays
            else:
                self.home_queue.append(fid)
            if f.carrier is None and self.occ.get(t) == fid:
                holder = fid

    def _landing_check(self) -> None:
        """A34/A94: every aircraft must stand alone on land its owner controlled at round start."""
        doomed = []
        for t, lst in self.air.items():
            for a in lst:
                u = self.units[a]
                if not (t in self.b.land and self.start_control.get(t) == u.owner
                        and t not in self.occ and len(lst) == 1):
                    doomed.append(a)
        for a in sorted(doomed):
            u = self.units[a]
            self.event("crashed", u.tile, {u.owner}, {"units": [{"id": a, "owner": u.owner, "type": u.type,
                                                                  "died": True}]},
                       observed={"units": [_desc(u, True, False, self.s)]})
            self.kill(a, cause="landing")
        self.flush_rafts()
        self.settle_drops_outside()
        self.flush_home()

    # -- step 4 ---------------------------------------------------------------------------------
    def outposts(self) -> None:
        s = self.s
        for p in range(s.players):
            stock = s.pstates[p].stock
            for uid, (kind, _) in self.parsed[p].actions.items():
                if kind != "outpost":
                    continue
                u = self.units.get(uid)
                if u is None or u.carrier is not None:
                    continue
                t = u.tile
                ut = UNIT_TYPES[u.type]
                if (ut.domain != LAND or ut.is_mine or ut.is_flag or t not in self.b.land
                        or self.b.is_home_of(t, p) or t in s.outposts):
                    continue
                if not can_pay(stock, OUTPOST_COST):
                    self.event("outpost_skipped", t, {p}, {"units": [{"id": uid, "owner": p}]})
                    continue
                pay(stock, OUTPOST_COST)
                s.outposts[t] = p
                self.event("outpost", t, {p}, {"units": [{"id": uid, "owner": p}], "owner": p},
                           observed={"owner": p})

    def builds(self) -> None:
        s = self.s
        b = self.b
        a66: list[int] = []
        limited: set[tuple[int, str]] | None = None  # (seat, type) of the living units of a limited type
        for p in range(s.players):
            stock = s.pstates[p].stock
            for bl in self.parsed[p].builds:
                ut = UNIT_TYPES[bl.type]
                data: dict[str, Any] = {"type": bl.type}
                if ut.limit is not None:
                    if limited is None:
                        limited = {(u.owner, u.type) for u in self.units.values()
                                   if UNIT_TYPES[u.type].limit is not None}
                    if (p, bl.type) in limited:
                        self.event("build_skipped", None, {p}, {**data, "reason": "limit"})
                        continue
                if not can_pay(stock, ut.cost):
                    self.event("build_skipped", None, {p}, {**data, "reason": "unaffordable"})
                    continue
                spot: Tile | None = None
                ship: Unit | None = None
                if bl.type == "raft":
                    ship = self.units.get(bl.ship or "")
                    if (ship is None or ship.owner != p or ship.type not in SHIP_TYPES or ship.type == "raft"
                            or ship.raft):
                        self.event("build_refunded", None, {p}, {**data, "reason": "no ship"})
                        continue
                elif ut.is_mine:
                    t = bl.tile
                    ok = t is not None and self.empty(t) and (
                        (bl.type == "landmine" and t in b.land and self.start_control.get(t) == p)
                        or (bl.type == "seamine" and b.is_sea(t)
                            and any(self.start_control.get(nb) == p for nb in b.neighbours(t))))
                    if not ok:
                        self.event("build_refunded", None, {p}, {**data, "reason": "tile not free"})
                        continue
                    spot = t
                elif ut.domain == SEA:
                    for nb in b.neighbours(b.bases[p]):
                        if b.is_sea(nb) and self.empty(nb):
                            spot = nb
                            break
                else:
                    base = b.bases[p]
                    if self.empty(base):
                        spot = base
                    else:
                        free = [t for t in b.home_island(p).tiles if self.empty(t)]
                        if free:
                            spot = min(free, key=lambda t: tie_key(base, t))
                if bl.type != "raft" and spot is None:
                    self.event("build_refunded", None, {p}, {**data, "reason": "no free tile"})
                    continue
                pay(stock, ut.cost)
                if ship is not None:
                    ship.raft = True
                    self.event("build", ship.tile, {p}, {**data, "ship": ship.id})
                    continue
                assert spot is not None
                uid = s.new_id()
                nu = Unit(uid, p, bl.type, spot)
                self.units[uid] = nu
                if limited is not None and ut.limit is not None:
                    limited.add((p, bl.type))
                self.place(nu, spot)
                self.event("build", spot, {p}, {**data, "units": [{"id": uid, "owner": p, "type": bl.type}]})
                if bl.type in A66_TYPES and p not in a66:
                    a66.append(p)
        if a66 and not s.a66_done:
            s.a66_done = True
            for p in a66:
                s.pstates[p].score += 1
                self.event("first_big_build", None, None, {"player": p, "points": 1})

    def flags(self) -> None:
        s = self.s
        for uid in sorted(uid for uid, u in self.units.items() if u.flag is not None):  # the bearers
            u = self.units.get(uid)
            if u is None or u.flag is None or u.carrier is not None:
                continue
            if u.tile != self.b.bases[u.owner]:
                continue
            f = self.units[u.flag]
            s.pstates[u.owner].score += FLAG_SCORE
            s.pstates[u.owner].flags_captured += 1
            loser = s.pstates[f.owner]
            loser.score = max(0, loser.score - FLAG_SCORE)
            self.event("flag_scored", u.tile, None, {"player": u.owner, "from": f.owner, "points": FLAG_SCORE})
            self.home_queue.append(f.id)
        self.flush_home()

    def control(self, capture: bool = True) -> set[int]:
        """A47 (with outpost capture) and the A51 gains; returns seats that gained a tile abroad."""
        s = self.s
        b = self.b
        ctl: dict[Tile, int] = {}
        standing: dict[Tile, Unit] = {}
        units, land = self.units, b.land
        for t, uid in self.occ.items():
            u = units[uid]
            if u.type in CONTROLLING_TYPES and t in land:
                standing[t] = u
        for t, owner in sorted(s.outposts.items(), key=_yx) if capture else ():
            cap = standing.get(t)
            if cap is not None and cap.owner != owner and not self.air.get(t):
                s.outposts[t] = cap.owner
                self.event("outpost_captured", t, {owner, cap.owner}, {"owner": cap.owner, "from": owner},
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
            if self.start_control.get(t) != p and not b.is_home_of(t, p):
                gained.add(p)
        s.control = ctl
        return gained

    def scoring(self) -> None:
        s = self.s
        for isl in self.b.islands:
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


def _unheld_before(group: list[str], m: str, held: set[str]) -> bool:
    """Whether a mover before ``m`` in ``group`` (movers in id order) is not in ``held``."""
    for x in group:
        if x == m:
            return False
        if x not in held:
            return True
    return False  # pragma: no cover - m is in its group


def _tile_yx(t: Tile) -> tuple[int, int]:
    return (t[1], t[0])


def _yx(item: tuple[Tile, Any]) -> tuple[int, int]:
    return (item[0][1], item[0][0])


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


def default_bonus(stock: Mapping[str, int]) -> str:
    """A51 default: the resource held least, ties in order wood, food, iron, fuel."""
    return min(RESOURCES, key=lambda r: (stock.get(r, 0), RESOURCES.index(r)))


def compute_control(state: State) -> dict[Tile, int]:
    """A47 on a state as it stands (used for deployment and scenarios)."""
    r = Resolver(state.clone(), {p: Parsed() for p in range(state.players)})
    return _control_only(r)


def _control_only(r: Resolver) -> dict[Tile, int]:
    r.control(capture=False)
    return r.s.control


def resolve_state(state: State, orders_by_player: Mapping[int, Mapping[str, Any]]
                  ) -> tuple[State, list[RawEvent], list[int], list[int]]:
    """Resolve one round.  Returns the new state, raw events and the start/end sight per seat
    (tile bits, :func:`engine.archipelago.fog.visible_bits`)."""
    s, occ, air = _round_clone(state)
    parsed = {p: parse_orders(state, p, orders_by_player.get(p) or {}, strict=False)
              for p in range(s.players)}
    for p, po in parsed.items():
        if po.bonus is not None:
            s.pstates[p].bonus = po.bonus
    start_vis = sight(state)
    r = Resolver(s, parsed, (occ, air))
    if s.round == 0:
        _deploy(r)
        r.control()
    else:
        r.actions(start_vis)
        r.movement()
        r.outposts()
        r.builds()
        r.flags()
        gained = r.control()
        r.scoring()
        _end_check(r)
        if s.outcome is None:
            for p in sorted(r.won | gained):
                ps = s.pstates[p]
                res = ps.bonus or default_bonus(ps.stock)
                ps.stock[res] += 1
                r.event("bonus", None, {p}, {"player": p, "resource": res})
    if s.outcome is None:
        for p, got in sorted(production(s).items()):
            r.event("production", None, {p}, {"player": p, "resources": got})
    s.round += 1
    s.version += 1
    s.offers = []
    s.chat = []
    for ps in s.pstates:
        ps.offers_made = 0
        ps.chats = 0
        ps.opening_total = sum(ps.stock.values())
    end_vis = update_memory(s)
    return s, r.events, start_vis, end_vis


def _round_clone(state: State) -> tuple[State, dict[Tile, str], dict[Tile, list[str]]]:
    """``state.clone()`` for a resolution with the clone's ``occ`` and ``air`` (:class:`Resolver`),
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


def _deploy(r: Resolver) -> None:
    s = r.s
    for p in range(s.players):
        for uid, t in r.parsed[p].deploy:
            u = s.units.get(uid)
            if u is None or u.owner != p or u.carrier is not None:
                continue
            if u.tile == t:
                continue
            other_id = r.occ.get(t)
            if other_id is None and r.air.get(t):
                continue
            other = s.units.get(other_id) if other_id is not None else None
            if other is not None and (other.owner != p or DOMAIN[other.type] != DOMAIN[u.type]):
                continue
            src = u.tile
            r.unplace(u)
            if other is not None:
                r.unplace(other)
                r.place(other, src)
            r.place(u, t)


def _end_check(r: Resolver) -> None:
    s = r.s
    scores = [ps.score for ps in s.pstates]
    reason = None
    if max(scores) >= s.target:
        reason = "target"
    elif s.round >= s.max_rounds:
        reason = "max_rounds"
    if reason is None:
        return
    s.outcome = decide(s, reason)
    r.event("game_over", None, None, dict(s.outcome))


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


__all__ = ["Resolver", "compute_control", "decide", "default_bonus", "island_controller",
           "production", "resolve_state"]
