"""Reference implementation of one round's step (3) — movement and combat — plus the landing check
(A34) and the flags step (A63), working on plain scenario data (engine/archipelago/scenario.py).

Test-only code: plain, readable and slow.  It deliberately shares nothing with the engine except
the scenario *format*; the unit table below is copied from the spec's table by hand.  It follows
the spec's text, including the points settled after differential testing (A100–A106): a moving
flag is held by a mine or a step off its home island from the start of the sub-step, and by an
aircraft, another flag or a flag bearer only while that unit stays on the tile (A100); aircraft
never send a flag home (A101); a bearer does not enter another enemy flag (A103); aircraft in
flight occupy no tile (A104); equal distances break by bearing clockwise from North (A105).
Where the text is silent the choice is said where it is made.

Only move orders given as ``path`` are understood (no actions, builds or planned ``to`` moves).

Result (compare with ``resolve_scenario``)::

    {"units": [{"id", "owner", "type", "tile": {"x", "y"}, "carrier"?, "cargo"?, "flag"?, "raft"?}],
     "fights": [{"tile": {"x", "y"}, "units": [id, id], "died": [ids], "swap": bool}]}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Tile = tuple[int, int]

# type -> (domain, strength or None for "–", move, capacity)   (spec table after A10)
TABLE: dict[str, tuple[str, int | None, int, int]] = {
    **{f"rank{n}": ("land", n, 1, 0) for n in range(1, 14)},
    "commando": ("land", 3, 2, 0),
    "engineer": ("land", 2, 1, 0),
    "scout": ("land", 1, 3, 0),
    "spy": ("land", 0, 2, 0),
    "navcommando": ("land", 1, 2, 0),
    "landmine": ("land", None, 0, 0),
    "seamine": ("sea", None, 0, 0),
    "flag": ("land", None, 1, 0),
    "saar6": ("sea", 5, 2, 4),
    "saar5": ("sea", 4, 2, 3),
    "saar45": ("sea", 3, 2, 2),
    "shaldag": ("sea", 2, 3, 1),
    "dvora": ("sea", 1, 3, 1),
    "submarine": ("sea", 2, 2, 0),
    "raft": ("sea", 0, 1, 0),
    "fighter": ("air", None, 5, 0),
    "transport": ("air", None, 4, 1),
}

DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
MINES = ("landmine", "seamine")
Rafts = list[tuple[str, int, Tile, list[str]]]  # (ship id, owner, last tile, cargo)


def domain(t: str) -> str:
    return TABLE[t][0]


def strength(t: str) -> int:
    s = TABLE[t][1]
    return -1 if s is None else s  # A11


def is_ship(t: str) -> bool:
    return domain(t) == "sea" and t not in MINES


def is_air(t: str) -> bool:
    return domain(t) == "air"


def is_fighting_land(t: str) -> bool:
    """A land unit that can pick up flags / controls tiles: land domain, not a mine or a flag."""
    return domain(t) == "land" and t not in MINES and t != "flag"


@dataclass
class RUnit:
    id: str
    owner: int
    type: str
    tile: Tile
    carrier: str | None = None  # cargo: its ship/plane; a carried flag: its bearer
    cargo: list[str] = field(default_factory=list)
    flag: str | None = None
    raft: bool = False


def _tile(v: Any) -> Tile:
    if isinstance(v, Mapping):
        return (int(v["x"]), int(v["y"]))
    return (int(v[0]), int(v[1]))


def a28_key(origin: Tile, t: Tile) -> tuple[int, float]:
    """A28/A105: Manhattan distance, then the bearing of ``t`` from ``origin`` measured clockwise
    from North in degrees (N 0, NE 45, E 90, ..., NW 315).  y grows South, so North is -y.
    Two tiles at one distance never share a bearing, and their bearings differ by far more than
    a float's error."""
    dx, dy = t[0] - origin[0], t[1] - origin[1]
    return (abs(dx) + abs(dy), math.degrees(math.atan2(dx, -dy)) % 360.0)


class Ref:
    """One scenario being resolved."""

    def __init__(self, scenario: Mapping[str, Any]) -> None:
        rows = list(scenario["rows"])
        self.h = len(rows)
        self.w = max(len(r) for r in rows)
        self.land: set[Tile] = {(x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c != "."}
        if scenario.get("bases"):
            self.bases = [_tile(b) for b in scenario["bases"]]
        else:
            digits = {int(c): (x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if c.isdigit()}
            self.bases = [digits[k] for k in sorted(digits)]
        self.players = int(scenario.get("players") or len(self.bases))
        # home island of each seat: the 4-connected land group holding its base
        self.home: dict[int, set[Tile]] = {}
        for p, b in enumerate(self.bases):
            comp = {b}
            todo = [b]
            while todo:
                t = todo.pop()
                for n in self.nbrs(t):
                    if n in self.land and n not in comp:
                        comp.add(n)
                        todo.append(n)
            self.home[p] = comp
        self.units: dict[str, RUnit] = {}
        # aircraft between two steps of their path: over a tile, but on none of them (A104: they do
        # not make a tile occupied for rafts, A33, or flags going home, A98)
        self.inflight: set[str] = set()
        for e in scenario.get("units") or ():
            tile = _tile(e["tile"]) if e.get("tile") is not None else (-1, -1)
            self.units[str(e["id"])] = RUnit(str(e["id"]), int(e["owner"]), str(e["type"]), tile,
                                             raft=bool(e.get("raft", False)))
        for e in scenario.get("units") or ():
            u = self.units[str(e["id"])]
            for c in e.get("cargo") or ():
                self.units[c].carrier = u.id
                u.cargo.append(c)
            if e.get("flag"):
                self.units[e["flag"]].carrier = u.id
                u.flag = e["flag"]
        self.sync()
        self.outposts = {_tile(o["tile"]): int(o["owner"]) for o in scenario.get("outposts") or ()}
        if scenario.get("control") is not None:
            self.control0 = {_tile(c["tile"]): int(c["owner"]) for c in scenario["control"]}
        else:
            self.control0 = self.compute_control()
        self.fights: list[dict[str, Any]] = []
        self.counter = 0
        self.dead: set[str] = set()
        self.home_queue: list[str] = []

    # -- geometry ---------------------------------------------------------------------------
    def inb(self, t: Tile) -> bool:
        return 0 <= t[0] < self.w and 0 <= t[1] < self.h

    def nbrs(self, t: Tile) -> list[Tile]:
        out = []
        for d in "NESW":
            n = (t[0] + DIRS[d][0], t[1] + DIRS[d][1])
            if self.inb(n):
                out.append(n)
        return out

    def is_sea(self, t: Tile) -> bool:
        return self.inb(t) and t not in self.land

    # -- units ------------------------------------------------------------------------------
    def sync(self) -> None:
        """Cargo and carried flags take their (outermost) carrier's tile."""
        for u in self.units.values():
            c = u
            while c.carrier is not None:
                c = self.units[c.carrier]
            u.tile = c.tile

    def standing(self, t: Tile) -> list[RUnit]:
        """Units on ``t`` (not cargo, not a carried flag, not an aircraft in mid-flight)."""
        return sorted((u for u in self.units.values()
                       if u.carrier is None and u.tile == t and u.id not in self.inflight), key=lambda u: u.id)

    def empty(self, t: Tile) -> bool:
        return not self.standing(t)

    def compute_control(self) -> dict[Tile, int]:
        """A47 (mines and flags never count; cargo does not stand on a tile)."""
        out: dict[Tile, int] = {}
        for t in self.land:
            lu = [u for u in self.standing(t) if is_fighting_land(u.type)]
            if lu:
                out[t] = lu[0].owner
            elif t in self.outposts:
                out[t] = self.outposts[t]
            else:
                for p, isl in self.home.items():
                    if t in isl:
                        out[t] = p
        return out

    def kill(self, uid: str) -> None:
        """Destroy a unit with its cargo (rafts and flags dropped on land are handled by the caller);
        a flag carried by cargo goes home (A61: "a carrier killed at sea or as cargo")."""
        u = self.units.pop(uid, None)
        if u is None:
            return
        self.dead.add(uid)
        for c in list(u.cargo):
            cu = self.units.get(c)
            if cu is not None:
                cu.carrier = None
                self.kill(c)
        if u.flag is not None and u.flag in self.units:  # a carrier killed at sea or as cargo
            f = self.units[u.flag]
            f.carrier = None
            self.go_home(f)
        if u.carrier is not None and u.carrier in self.units:
            car = self.units[u.carrier]
            if uid in car.cargo:
                car.cargo.remove(uid)
            if car.flag == uid:
                car.flag = None

    def go_home(self, f: RUnit) -> None:
        """Send a flag home (A64): it leaves the board now and lands at the end of the sub-step."""
        if f.carrier is not None:
            car = self.units.get(f.carrier)
            if car is not None and car.flag == f.id:
                car.flag = None
            f.carrier = None
        f.tile = (-9, -9)
        self.home_queue.append(f.id)

    def flush_home(self) -> None:
        """Land the flags sent home, in id order.  Which tiles are empty is judged at the end of the
        sub-step, after the rafts (A95 places rafts then; A62's "at once" does not say against
        which positions a flag lands, A104 only that aircraft in flight do not count)."""
        queue, self.home_queue = sorted(set(self.home_queue)), []
        for fid in queue:
            if fid in self.units:
                self._land_home(self.units[fid])

    def _land_home(self, f: RUnit) -> None:
        """A64/A98: the base if empty, else the empty home-island tile nearest the base (A28),
        else the nearest empty land tile anywhere."""
        base = self.bases[f.owner]
        if self.empty(base):
            f.tile = base
            return
        cands = [t for t in self.home[f.owner] if self.empty(t)]
        if not cands:
            cands = [t for t in self.land if self.empty(t)]
        if cands:
            f.tile = min(cands, key=lambda t: a28_key(base, t))

    def new_id(self) -> str:
        while True:
            self.counter += 1
            uid = f"n{self.counter}"
            if uid not in self.units and uid not in self.dead:
                return uid


def duel(a: RUnit, a_attacks: bool, b: RUnit, b_attacks: bool) -> str | None:
    """A29: the winner's id, or None when both die."""
    def special(x: RUnit, x_att: bool, y: RUnit) -> bool:
        if not x_att:
            return False
        if x.type == "commando" and y.type == "rank13":
            return True
        if x.type == "submarine" and is_ship(y.type) and y.type != "submarine":
            return True
        return x.type == "navcommando" and y.type == "saar6"

    sa, sb = special(a, a_attacks, b), special(b, b_attacks, a)
    if sa and not sb:
        return a.id
    if sb and not sa:
        return b.id
    if strength(a.type) > strength(b.type):
        return a.id
    if strength(b.type) > strength(a.type):
        return b.id
    return None


def reference_resolve(scenario: Mapping[str, Any], orders: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any]:
    """Resolve movement, combat, the landing check and the flags step of one round."""
    r = Ref(scenario)
    paths: dict[str, list[str]] = {}
    for p, o in orders.items():
        for e in (o or {}).get("units") or ():
            uid = e.get("unit")
            u = r.units.get(uid) if isinstance(uid, str) else None
            if u is None or u.owner != int(p) or uid in paths or "path" not in e:
                continue
            path = e["path"]
            if not isinstance(path, list) or any(d not in DIRS for d in path):
                continue
            steps = list(path[: TABLE[u.type][2]])
            if steps:
                paths[u.id] = steps
    stopped: set[str] = set()
    for s in range(1, 6):
        _substep(r, s, paths, stopped)
    # -- the landing check (A34, A94) ----------------------------------------------------------
    doomed = [u.id for u in sorted(r.units.values(), key=lambda u: u.id)
              if is_air(u.type) and not (u.tile in r.land and r.control0.get(u.tile) == u.owner
                                         and all(o.id == u.id for o in r.standing(u.tile)))]
    for uid in doomed:  # judged all at once, then destroyed
        r.kill(uid)
    r.flush_home()
    # -- the flags step (A63) ------------------------------------------------------------------
    for f in sorted(r.units.values(), key=lambda u: u.id):
        if f.type != "flag" or f.carrier is None:
            continue
        bearer = r.units[f.carrier]
        if bearer.carrier is None and bearer.tile == r.bases[bearer.owner]:
            r.go_home(f)
    r.flush_home()
    return {
        "units": [_udict(r.units[k]) for k in sorted(r.units)],
        "fights": r.fights,
    }


def _udict(u: RUnit) -> dict[str, Any]:
    d: dict[str, Any] = {"id": u.id, "owner": u.owner, "type": u.type, "tile": {"x": u.tile[0], "y": u.tile[1]}}
    if u.carrier is not None:
        d["carrier"] = u.carrier
    if u.cargo:
        d["cargo"] = list(u.cargo)
    if u.flag is not None:
        d["flag"] = u.flag
    if u.raft:
        d["raft"] = True
    return d


def _substep(r: Ref, s: int, paths: dict[str, list[str]], stopped: set[str]) -> None:
    # A22: the movers of this sub-step and their targets
    movers: dict[str, Tile] = {}
    for uid in sorted(r.units):
        u = r.units[uid]
        p = paths.get(uid)
        if uid in stopped or not p or len(p) < s:
            continue
        if u.type == "flag" and u.carrier is not None:
            continue  # a carried flag does not move on its own
        d = DIRS[p[s - 1]]
        movers[uid] = (u.tile[0] + d[0], u.tile[1] + d[1])
    if not movers:
        return
    src = {uid: r.units[uid].tile for uid in movers}
    rafts: Rafts = []  # sunk ships with a raft, placed at the end of the sub-step (A33, A95)

    def last_air(uid: str) -> bool:
        return len(paths[uid]) == s

    def flying(uid: str) -> bool:  # an aircraft before its last step: no blocking at all (A34, A94)
        return is_air(r.units[uid].type) and not last_air(uid)

    def parked(u: RUnit) -> bool:  # A94
        others = [o for o in r.standing(u.tile) if o.id != u.id and o.id not in movers]
        return is_air(u.type) and u.id not in movers and not others

    def idle_carrier(t: Tile, owner: int) -> RUnit | None:
        for o in r.standing(t):
            if o.owner != owner or TABLE[o.type][3] == 0 or o.id in paths:
                continue
            if is_air(o.type) and not parked(o):
                continue
            return o
        return None

    # -- (a) terrain holds and boarding (A24, A91, A92, A97) -------------------------------------
    held: set[str] = set()
    boarders: dict[str, str] = {}  # boarder -> carrier
    cap_left: dict[str, int] = {}
    for uid in sorted(movers):
        u, t = r.units[uid], movers[uid]
        if not r.inb(t):
            held.add(uid)
            continue
        if u.carrier is not None and u.carrier in paths:  # cargo whose carrier moves
            held.add(uid)
            continue
        dom = domain(u.type)
        if u.type == "flag":
            # A100: a step off the home island and a mine on the target hold a flag from the start
            # of the sub-step, with the terrain holds; aircraft, flags and bearers only while they
            # stay (judged in the blocking passes below)
            if t not in r.home[u.owner] or any(o.type in MINES for o in r.standing(t)):
                held.add(uid)
            continue
        if dom == "land":
            c = idle_carrier(t, u.owner)
            if c is not None and c.id != u.carrier:
                if c.id not in cap_left:
                    cap_left[c.id] = TABLE[c.type][3] - len(c.cargo)
                if cap_left[c.id] > 0:
                    cap_left[c.id] -= 1
                    boarders[uid] = c.id
                else:
                    held.add(uid)
                continue
            if u.type != "navcommando" and t not in r.land:
                held.add(uid)
        elif dom == "sea":
            if t in r.land:
                held.add(uid)
    terrain = set(held)

    def on_tile(t: Tile, cur: set[str]) -> list[RUnit]:
        """Units on ``t`` in this pass: standing ones, and an aircraft in mid-flight over ``t``
        once it is held there (a held unit stops where it is, A27)."""
        return [o for o in r.units.values()
                if o.carrier is None and o.tile == t and (o.id not in r.inflight or o.id in cur)]

    def fixed_point(live: dict[str, Tile], start: set[str]) -> set[str]:
        cur = set(start)
        for _ in range(200):
            new = set(cur)  # a held unit stops (A27): holds only accumulate
            for uid, t in live.items():
                if uid in start or uid in boarders or flying(uid):
                    continue
                u = r.units[uid]
                for o in on_tile(t, cur):
                    if o.id == uid:
                        continue
                    stays = o.id not in live or o.id in cur  # not moving, or itself held
                    if not stays:
                        continue  # a unit that leaves the tile holds nobody (A100)
                    if u.type == "flag" and (is_air(o.type) or o.type == "flag" or o.flag is not None):
                        new.add(uid)  # A100: an aircraft, another flag or a bearer holds a flag
                    if (u.flag is not None and o.type == "flag" and o.carrier is None
                            and o.owner != u.owner):
                        new.add(uid)  # A103: a bearer is held rather than enter another enemy flag
                    if o.owner != u.owner:
                        continue
                    if o.type == "flag" and is_fighting_land(u.type):
                        continue  # A62 overrides friendly blocking
                    new.add(uid)
                for oid, ot in live.items():
                    if (oid < uid and ot == t and r.units[oid].owner == u.owner and oid not in cur
                            and oid not in boarders and not flying(oid)):
                        new.add(uid)
            if new == cur:
                return cur
            cur = new
        raise RuntimeError("blocking does not reach a fixed point")

    held = fixed_point(movers, terrain)
    stopped |= held
    r.inflight -= held
    live = {k: v for k, v in movers.items() if k not in held}

    # -- (b) swaps (A25(b), A29, A91, A97) -------------------------------------------------------
    for a in sorted(live):
        if a not in live:
            continue
        ua = r.units[a]
        if ua.carrier is not None or is_air(ua.type) or a in boarders:
            continue
        for b in sorted(live):
            if b <= a or b not in live:
                continue
            ub = r.units[b]
            if ub.owner == ua.owner or ub.carrier is not None or is_air(ub.type) or b in boarders:
                continue
            if live[a] != src[b] or live[b] != src[a]:
                continue
            if ua.type == "flag" or ub.type == "flag":
                f, o = (ua, ub) if ua.type == "flag" else (ub, ua)
                # picked up in place, neither moves (A97); a bearer cannot take a second flag
                # (A61): then neither moves and nothing else happens (the spec is silent)
                if o.type != "flag" and is_fighting_land(o.type) and o.flag is None:
                    o.flag = f.id
                    f.carrier = o.id
                    f.tile = o.tile
                stopped.update((a, b))
                del live[a], live[b]
                break
            w = duel(ua, True, ub, True)
            died = [x for x in (a, b) if x != w]
            r.fights.append({"tile": None, "units": sorted((a, b)), "died": sorted(died), "swap": True})
            for x in died:
                _die(r, x, rafts=rafts)
            stopped.update((a, b))
            del live[a], live[b]
            break
    held2 = fixed_point(live, set())  # (a) again after the swaps
    stopped |= held2
    r.inflight -= held2
    live = {k: v for k, v in live.items() if k not in held2}
    # a bearer killed in a swap left its flag lying on its own tile (A61); rafts of ships sunk in
    # swaps are placed with the others at the end of the sub-step
    # -- (c) entering (A25(c), A29–A34, A43, A61–A62, A92–A97) ------------------------------------
    stay: dict[Tile, list[RUnit]] = {}
    for u in r.units.values():
        if u.carrier is None and u.id not in live:
            stay.setdefault(u.tile, []).append(u)
    for bid, cid in sorted(boarders.items()):  # boarders become cargo and stop (A24, A92)
        if bid not in live:
            continue
        bu, cu = r.units[bid], r.units[cid]
        if bu.carrier is not None and bu.carrier in r.units:
            r.units[bu.carrier].cargo.remove(bid)
        bu.carrier = cid
        cu.cargo.append(bid)
        bu.tile = cu.tile
        stopped.add(bid)
    entrants: dict[Tile, list[str]] = {}
    for uid in sorted(live):
        if uid in boarders:
            continue
        u = r.units[uid]
        if u.carrier is not None:  # disembarking (A24, A92)
            car = r.units[u.carrier]
            car.cargo.remove(uid)
            u.carrier = None
        u.tile = live[uid]
        entrants.setdefault(live[uid], []).append(uid)
        if is_air(u.type):
            if last_air(uid):
                r.inflight.discard(uid)
            else:
                r.inflight.add(uid)
    r.sync()
    for t in sorted(entrants):
        _enter_tile(r, t, stay.get(t, []), entrants[t], stopped, rafts)
    _place_rafts(r, rafts)
    r.sync()
    r.flush_home()


def _die(r: Ref, uid: str, *, rafts: Rafts | None, at: Tile | None = None) -> str | None:
    """Destroy ``uid``; returns the id of a flag it dropped on land (caller decides its fate)."""
    u = r.units.get(uid)
    if u is None:
        return None
    tile = at if at is not None else u.tile
    dropped = None
    if u.flag is not None and u.flag in r.units:
        f = r.units[u.flag]
        u.flag = None
        f.carrier = None
        f.tile = tile
        if tile in r.land:
            dropped = f.id
        else:
            r.go_home(f)
    if u.raft and is_ship(u.type) and rafts is not None:
        cargo = list(u.cargo)
        u.cargo = []
        for c in cargo:
            r.units[c].carrier = None
            r.units[c].tile = (-5, -5)
        rafts.append((uid, u.owner, tile, cargo))
    r.kill(uid)
    return dropped


def _enter_tile(r: Ref, t: Tile, stay: list[RUnit], ents: list[str], stopped: set[str],
                rafts: Rafts) -> None:
    ents = sorted(ents)
    # A62: the owner's land unit meeting its own flag sends it home, before the duels
    present = [u for u in stay if u.id in r.units] + [r.units[e] for e in ents if e in r.units]
    pids = {u.id for u in present}
    for f in sorted((u for u in r.units.values() if u.type == "flag"), key=lambda u: u.id):
        on_tile = (f.carrier is None and f.id in pids) or (f.carrier is not None and f.carrier in pids)
        if not on_tile:
            continue
        if any(p.owner == f.owner and is_fighting_land(p.type) for p in present):
            r.go_home(f)
    occ = [u for u in stay if u.id in r.units and u.type != "flag" and u.carrier is None]
    occ_ids = {u.id for u in occ}
    fighters = [e for e in ents if e in r.units and r.units[e].type != "flag" and not is_air(r.units[e].type)]
    holder: RUnit | None = None
    occupied = False
    ground_occ = [u for u in occ if not is_air(u.type)]
    if ground_occ:
        holder = ground_occ[0]
        occupied = True
    elif len(occ) == 1 and len([u for u in stay if u.id in r.units]) == 1:
        # a parked aircraft: the only staying unit on its tile, a flag counting too (A94)
        holder = occ[0]
        occupied = True
    dropped: list[tuple[str, bool]] = []  # (flag, dropped while entering)
    for e in fighters:
        eu = r.units.get(e)
        if eu is None:
            continue
        if holder is None or holder.id not in r.units:
            holder = eu
            continue
        if holder.owner == eu.owner:
            continue  # cannot happen after blocking
        h = holder
        w: str | None
        if h.type in MINES:
            if h.type == "landmine":
                w = e if eu.type in ("engineer", "commando") else h.id
            else:
                w = e if eu.type == "navcommando" else h.id
        elif is_air(h.type):
            w = e
        else:
            w = duel(h, not occupied, eu, True)
        died = [x for x in (h.id, e) if x != w]
        r.fights.append({"tile": {"x": t[0], "y": t[1]}, "units": sorted((h.id, e)), "died": sorted(died),
                         "swap": False})
        for x in died:
            fl = _die(r, x, rafts=rafts, at=t)
            if fl is not None:
                dropped.append((fl, x not in occ_ids))
        if w is not None:
            stopped.add(w)
            holder = r.units[w]
        else:
            holder = None
    # flags lying on the tile now: dropped ones, a standing one, one that moved here
    final = holder if holder is not None and holder.id in r.units else None
    if final is None:
        alive_here = [u for u in r.standing(t) if u.type != "flag" and not is_air(u.type)]
        final = alive_here[0] if len(alive_here) == 1 else None
    flags_here = sorted(u.id for u in r.units.values() if u.type == "flag" and u.carrier is None and u.tile == t)
    entering_drop = {f for f, ent in dropped if ent}
    for fid in flags_here:
        f = r.units[fid]
        if final is not None and is_fighting_land(final.type) and final.owner != f.owner and final.flag is None:
            final.flag = fid
            f.carrier = final.id
            f.tile = final.tile
            stopped.add(final.id)
        elif final is not None and is_fighting_land(final.type):
            # the owner's unit sends it home (A62); a bearer holding the tile cannot take a second
            # flag (A61) and the flag goes home (A106)
            r.go_home(f)
        elif fid in entering_drop:
            r.go_home(f)  # A97: a carrier killed while entering, no land unit to take the flag
        # otherwise the flag lies here; an aircraft ending its step here never sends it home (A101)
    rest = sorted(u.id for u in r.units.values() if u.type == "flag" and u.carrier is None and u.tile == t)
    for fid in rest[1:]:  # A97: two flags ending on one tile: the smaller id stays
        r.go_home(r.units[fid])


def _place_rafts(r: Ref, rafts: Rafts) -> None:
    """A33/A95: at the end of the sub-step, in ship id order."""
    for _ship, owner, last, cargo in sorted(rafts):
        spot = None
        if r.is_sea(last) and r.empty(last):
            spot = last
        else:
            for n in r.nbrs(last):
                if r.is_sea(n) and r.empty(n):
                    spot = n
                    break
        if spot is None:
            for c in cargo:
                if c in r.units:
                    r.units[c].carrier = None
                    _die(r, c, rafts=None)
            continue
        rid = r.new_id()
        raft = RUnit(rid, owner, "raft", spot, cargo=[c for c in cargo if c in r.units])
        r.units[rid] = raft
        for c in raft.cargo:
            r.units[c].carrier = rid
            r.units[c].tile = spot
