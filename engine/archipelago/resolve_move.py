"""Step 3 of an Archipelago round (A21): movement in sub-steps, then the aircraft landing check
(A22, A25, A34, A91–A97, A100–A106).  A step of :func:`engine.archipelago.resolve.resolve_state`
over its :class:`~.resolve_work.Work`; one sub-step is (a) blocking, (b) swaps, then (a) again, (c)
entering, as :mod:`engine.archipelago.resolve`'s docstring states them.  Entering a contested tile
is :func:`engine.archipelago.resolve_enter.enter_tile`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.archipelago.board import DELTA, Tile
from engine.archipelago.resolve_enter import enter_tile
from engine.archipelago.resolve_work import DOMAIN, Work, describe
from engine.archipelago.state import Unit
from engine.archipelago.units import AIR, LAND, SEA, UNIT_TYPES

__all__ = ["landing_check", "movement"]

CAPACITY = {k: t.capacity for k, t in UNIT_TYPES.items()}
#: the unit types settled in place when one enters an empty tile alone (not flags, not aircraft)
ENTER_ALONE_TYPES = frozenset(k for k, t in UNIT_TYPES.items() if k != "flag" and t.domain != AIR)


def movement(w: Work) -> None:
    """Step 3: every move order (not of a unit with an action), sub-step by sub-step, then the
    landing check."""
    _Movement(w).run()
    landing_check(w)


class _SubStep:
    """What one sub-step works on: its movers (in id order), where each stands and where it steps,
    who is held, who boards which carrier, the aircraft whose path ends here."""

    __slots__ = ("boarders", "held", "last", "movers", "mset", "pos", "tgt")

    def __init__(self, movers: list[str]) -> None:
        self.movers = movers
        self.mset = set(movers)
        self.pos: dict[str, Tile] = {}
        self.tgt: dict[str, Tile] = {}
        self.last: set[str] = set()  # the aircraft whose path ends with this step
        self.held: set[str] = set()
        self.boarders: dict[str, str] = {}


class _Movement:
    """The movement of one round: the paths, and the aircraft in mid-flight between sub-steps."""

    def __init__(self, w: Work) -> None:
        self.w = w
        units = w.units
        paths: dict[str, list[str]] = {}
        for p in range(w.s.players):
            for uid, path in w.parsed[p].moves.items():
                if uid in units and uid not in w.parsed[p].actions:
                    paths[uid] = path
        self.paths = paths
        self.moving_order = set(paths)
        self.inflight: set[str] = set()  # aircraft in mid-flight: on no tile (A104)

    def run(self) -> None:
        w, paths = self.w, self.paths
        units, stopped = w.units, w.stopped
        movers = sorted(paths)
        for s in range(1, max((len(p) for p in paths.values()), default=0) + 1):
            # the movers of this sub-step are among those of the last one (stopped only grows)
            movers = [m for m in movers if len(paths[m]) >= s and m not in stopped and m in units]
            if not movers:
                break
            self.sub_step(s, _SubStep(movers))
        for m in sorted(self.inflight):  # pragma: no cover - paths always end
            if m in units:
                w.air.setdefault(units[m].tile, []).append(m)

    def sub_step(self, s: int, st: _SubStep) -> None:
        w = self.w
        terrain = self.terrain_holds(s, st)
        self.hold(terrain, st)
        fixed_point(w, st, self.inflight)
        if self.swaps(st):
            w.settle_drops_outside()
            fixed_point(w, st, self.inflight)  # (a flag dropped there by a swap's loser now holds, A100)
        entering = [m for m in st.movers if m in w.units and m not in st.held]
        self.leave(entering)
        self.enter(self.arrive(entering, st))
        w.flush_rafts()
        w.flush_home()

    def terrain_holds(self, s: int, st: _SubStep) -> set[str]:
        """(a) each mover's target (``st.pos``, ``st.tgt``), boarders (``st.boarders``) and the
        movers the terrain holds: off the board, cargo whose carrier moves, a flag off its home
        island or onto a mine (A100), land units at sea and ships on land, boarders over capacity."""
        w, paths, moving_order = self.w, self.paths, self.moving_order
        units, occ, air = w.units, w.occ, w.air
        b = w.b
        land, width, height = b.land, b.width, b.height
        pos, tgt, last = st.pos, st.tgt, st.last
        terrain: set[str] = set()
        want: dict[str, list[str]] = {}
        for m in st.movers:
            u = units[m]
            x, y = pos[m] = u.tile
            dx, dy = DELTA[paths[m][s - 1]]
            x += dx
            y += dy
            t = tgt[m] = (x, y)
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
                if not b.is_home_of(t, u.owner) or w.mine_on(t):
                    terrain.add(m)
                continue
            if dom == LAND:
                c = self.idle_carrier(t, u.owner) if t in occ or t in air else None
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
                    st.boarders[m] = c
                else:
                    terrain.add(m)
        return terrain

    def idle_carrier(self, t: Tile, owner: int) -> str | None:
        """An own carrier with room on ``t`` that has no move order (A24): a ship, or a transport
        plane parked alone."""
        w = self.w
        o = w.occ.get(t)
        if o is not None:
            u = w.units[o]
            if (u.owner == owner and CAPACITY[u.type] > 0 and DOMAIN[u.type] == SEA
                    and o not in self.moving_order):
                return o
            return None
        lst = w.air.get(t)
        if lst and len(lst) == 1:
            u = w.units[lst[0]]
            if u.owner == owner and CAPACITY[u.type] > 0 and lst[0] not in self.moving_order:
                return lst[0]
        return None

    def hold(self, terrain: set[str], st: _SubStep) -> None:
        """The terrain holds: held and stopped, each told to its owner."""
        w = self.w
        st.held |= terrain
        for m in sorted(terrain):
            u = w.units[m]
            if m in self.inflight:
                self.inflight.discard(m)
                w.air.setdefault(u.tile, []).append(m)
            w.stopped.add(m)
            w.event("held", u.tile, {u.owner}, {"units": [{"id": m, "owner": u.owner}]})

    def swaps(self, st: _SubStep) -> bool:
        """(b) two unheld enemy movers on the ground (not aircraft, not cargo) targeting each
        other's tile fight, both attacking; a flag swapping with an enemy land unit is picked up
        in place.  Whether any swap happened."""
        w = self.w
        units, held, pos, tgt = w.units, st.held, st.pos, st.tgt
        cands: list[str] = []  # unheld movers on the ground (not aircraft, not cargo)
        by_pos: dict[Tile, str] = {}  # their tiles
        for m in st.movers:
            if m not in held and m not in st.boarders and m in units:
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
                w.stopped.update((m, o))
                if DOMAIN[xu.type] == LAND and xu.type != "flag" and xu.flag is None:
                    w.pickup(xu, fu)
                continue
            w.fight(um, uo, True, True, pos[m], False)
            for xid in (m, o):
                if xid in units:
                    held.add(xid)
        return swapped

    def leave(self, entering: list[str]) -> None:
        """(c) the entering movers leave their tiles (cargo its carrier)."""
        w = self.w
        units, occ = w.units, w.occ
        for m in entering:
            u = units[m]
            if u.carrier is not None:
                cu = units.get(u.carrier)
                if cu is not None and m in cu.cargo:
                    cu.cargo.remove(m)
                u.carrier = None
            elif m in self.inflight:
                pass
            elif DOMAIN[u.type] == AIR:
                w.unplace(u)
            elif occ.get(u.tile) == m:  # (unplace, in short)
                del occ[u.tile]

    def arrive(self, entering: list[str], st: _SubStep) -> dict[Tile, list[str]]:
        """(c) the entering movers step onto their targets: boarders become cargo, aircraft not at
        their path's end fly on; the others, by target tile (in id order)."""
        w = self.w
        units, boarders, inflight = w.units, st.boarders, self.inflight
        groups: dict[Tile, list[str]] = {}
        for m in entering:
            u = units[m]
            t = st.tgt[m]
            if u.cargo or u.flag is not None:
                w.move_unit(u, t)
            else:
                u.tile = t
            c_id = boarders.get(m) if boarders else None
            if c_id is not None:
                units[c_id].cargo.append(m)
                u.carrier = c_id
                w.stopped.add(m)
                w.event("board", t, {u.owner}, {"units": [{"id": m, "owner": u.owner}], "carrier": c_id})
                continue
            if DOMAIN[u.type] == AIR and m not in st.last:
                inflight.add(m)
                continue
            if inflight:
                inflight.discard(m)
            group = groups.get(t)
            if group is None:
                groups[t] = [m]
            else:
                group.append(m)
        return groups

    def enter(self, groups: dict[Tile, list[str]]) -> None:
        """(c) each tile entered is settled: one unit entering an empty tile alone takes it; the
        other tiles are contested (:func:`engine.archipelago.resolve_enter.enter_tile`), in reading
        order."""
        w = self.w
        units, occ, air, drops = w.units, w.occ, w.air, w.drops
        contested: list[Tile] = []
        for t, ents in groups.items():
            # the common case: one unit (not a flag, not an aircraft) enters an empty tile; it
            # touches nothing but this tile, so it is settled here, in any order
            if len(ents) == 1 and t not in occ and t not in drops and not air.get(t):
                if units[ents[0]].type in ENTER_ALONE_TYPES:
                    occ[t] = ents[0]
                    continue
            contested.append(t)
        for t in sorted(contested, key=_tile_yx):
            enter_tile(w, t, groups[t])


def fixed_point(w: Work, st: _SubStep, inflight: set[str]) -> None:
    """Blocking (a): passes until no mover is newly held, each judged against the previous
    pass's holds (A25, A62, A100, A103).  A pass judges again only the movers whose judgement a
    new hold can change: those with the newly held mover's owner and target (the first of them
    may change) and those targeting its tile (it no longer leaves it); the others would judge as
    before."""
    units, occ, air, held, mset = w.units, w.occ, w.air, st.held, st.mset
    # active mover -> (its unit, its target, the active movers with its owner and target in id
    # order: its group), in id order
    info: dict[str, tuple[Unit, Tile, list[str]]] = {}
    into: dict[Tile, list[str]] = {}  # target -> active movers
    same: dict[tuple[int, Tile], list[str]] = {}  # (owner, target) -> a group
    for m in st.movers:
        if m in units and m not in held and m not in st.boarders:
            u = units[m]
            if DOMAIN[u.type] != AIR or m in st.last:
                t = st.tgt[m]
                group = same.setdefault((u.owner, t), [])
                group.append(m)
                info[m] = (u, t, group)
                into.setdefault(t, []).append(m)
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
                if u.type == "flag" and (DOMAIN[ou.type] == AIR or ou.type == "flag" or ou.flag is not None):
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
        w.stopped.update(new)
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


def landing_check(w: Work) -> None:
    """A34/A94: every aircraft must stand alone on land its owner controlled at round start."""
    doomed = []
    for t, lst in w.air.items():
        for a in lst:
            u = w.units[a]
            if not (t in w.b.land and w.start_control.get(t) == u.owner
                    and t not in w.occ and len(lst) == 1):
                doomed.append(a)
    for a in sorted(doomed):
        u = w.units[a]
        w.event("crashed", u.tile, {u.owner}, {"units": [{"id": a, "owner": u.owner, "type": u.type,
                                                          "died": True}]},
                observed={"units": [describe(u, True, False, w.s)]})
        w.kill(a, cause="landing")
    w.after_removals()
