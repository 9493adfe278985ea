"""The Archipelago autopilot (A70–A73): orders from one player's view and standing orders, nothing else.

``GAME.autopilot(view, standing)`` plays a player who submitted nothing; ``GAME.complete_orders(view,
standing, orders)`` adds standing orders to a submission for every unit it leaves without an order
(an entry with an empty path is an order: "stay"), plus the queue's builds when the submission has
no builds and the standing bonus when it has no bonus (A70).  Both read only the view
(:mod:`engine.archipelago.view`) and the standing orders (:mod:`engine.archipelago.standing`, read
leniently: entries for units that are gone are skipped), are deterministic for equal inputs, and
return orders that pass ``GAME.validate`` for that player.  In round 0 the autopilot keeps the
default deployment (``{"deploy": []}``); once the game is over it gives ``{}``.  With no standing
orders (``None``, ``{}``, or only "hold") it gives ``{"units": []}`` (plus the bonus): units stay.

Every move is given as an explicit ``path`` planned here over the player's explored terrain (A18:
the unit's domain; a flag only on its home island), around tiles holding known enemies (unless
attacking them) and, for land units, around own ships and planes (a step onto one would board it,
A24).  Ties between equally near tiles follow A28 (distance, then bearing from the unit, A105).

**Per-unit orders (A72)** — a unit with a standing order follows it and not the posture:

- ``stay``: no order.
- ``move`` (a tile): heads for the tile, ``move`` steps a round, over as many rounds as it takes;
  there it holds (the order stays in force: a unit pushed off heads back).
- ``guard`` (a tile, or an own unit's tile): attacks any enemy in sight on the guarded tile or next
  to it; else, if more than 1 tile away, heads back next to it; else holds.  A guarded unit that is
  gone leaves the guard to the posture.
- ``patrol`` (waypoints): the route is the closed walk through the waypoints in order and back to
  the first, each leg the shortest path over explored terrain.  The reading that needs no memory:
  a unit on its route takes the next ``move`` steps along it; a unit off its route heads for the
  nearest waypoint (A28 ties), which puts it on the route.  Where the walk passes the unit's tile
  more than once (legs that retrace each other — two waypoints are an out-and-back), the view cannot
  say which pass the unit is on: it takes the pass that puts it least behind the round's schedule
  position ``(round × move) mod length`` (the earlier pass on a tie).  Following its pass keeps a
  unit's lag constant and switching passes only ever lowers it, so the unit soon keeps to one pass
  and goes round the whole route, again and again.
- ``escort`` (an own unit): ends the round next to the escorted unit's tile after that unit's own
  order this round (its path, as far as this player orders it); holds while already there.  An
  escorted unit that is gone leaves the escort to the posture.
- ``hunt`` (an enemy, or the nearest known one): heads for the target's tile — in sight now, else
  its last tile in the enemy log (A83) — entering it when in reach (an attack), and with steps to
  spare runs on past it the same way (a target that stays stops it there, A30; one that flees
  straight on is caught).  Log entries on
  tiles in sight now are stale (the unit is not there) and ignored; a target that is gone or
  stale falls back to the nearest known enemy the unit can reach.

**Postures (A71)**, for units without a standing order (never flags, mines, cargo — cargo only
lands, see below — or aircraft, which must end each round on land their owner controls, A34):

- ``hold``: units stay (the default).
- ``defensive``: hold; a unit with an enemy in sight within 2 tiles falls back toward the base
  (land units toward the base tile, ships toward the sea next to it), never into an enemy.
- ``balanced``: attack (enter the tile of, or step toward) an enemy within 2 tiles that is known to
  be weaker — its type is revealed (A31, A37–A39) and the unit wins the duel as attacker by A29/A43
  (a flag is picked up, A61; a parked aircraft is beaten, A34); else hold.  Also: a warship holding
  still bombards an adjacent enemy land unit known to be weaker than it (A37), a spy reveals an
  unrevealed enemy within 2 (A39), a fighter strikes a known enemy unit that a strike destroys within
  5 tiles when fuel allows (A38).
- ``aggressive``: attack any enemy within 2 tiles except one known to beat the unit (a known equal
  is attacked: both die).  Warships bombard any adjacent enemy land unit, spies reveal, fighters
  strike any enemy in range not known to be immune.  The spec gives aggressive no "else hold", and
  an aggressive player takes ground; the reading here: a unit with no enemy in reach **advances**.
  A land unit on land outside its home island founds an outpost where there is none (A36: 1 food,
  1 wood, when the stock allows it, before the queue's builds) and otherwise heads for the nearest
  land tile its player does not control; a naval commando walks there over land and sea.  Ships
  ferry the others: an empty ship sails to the nearest sea tile next to an own land unit at home and
  waits there, land units next to a waiting ship board it (A24), land units at home walk toward
  such a ship, a ship with cargo sails (once full, or when nobody is left next to it to board) to
  the nearest sea tile next to land its player does not control and holds there, and cargo next to
  such land lands on it.  With no such land known, ships explore: they head for the nearest tile
  next to unexplored ones.

**Builds (A73)**: see :mod:`engine.archipelago.standing` (the queue's entries from the front while
affordable, after this round's outposts and strikes; entries that cannot be built this round as far
as the view shows are passed over).  **Bonus (A51)**: the standing choice, when the orders have
none.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from engine.archipelago.board import tie_key
from engine.archipelago.standing import parse_standing
from engine.archipelago.units import RESOURCES, UNIT_TYPES, UnitType

__all__ = ["autopilot", "complete_orders"]

_DIRS: tuple[tuple[str, int, int], ...] = (("N", 0, -1), ("E", 1, 0), ("S", 0, 1), ("W", -1, 0))
_NB_CACHE: dict[tuple[int, int], list[tuple[tuple[str, int], ...]]] = {}
_LAND = bytes.maketrans(b"#.?", b"\x01\x00\x00")
_SEA = bytes.maketrans(b"#.?", b"\x00\x01\x00")
_ANY = bytes.maketrans(b"#.?", b"\x01\x01\x00")
OUTPOST_COST: dict[str, int] = {"food": 1, "wood": 1}
STRIKE_COST: dict[str, int] = {"fuel": 1}
STRIKE_RANGE = 5
REVEAL_RANGE = 2
ATTACK_RANGE = 2  # A71: "enemies within 2 tiles"
_LAND_C, _SEA_C = ord("#"), ord(".")
_IMMUNE_TO_STRIKE = frozenset({"landmine", "seamine", "flag", "submarine", "fighter", "transport"})


def _neighbours(w: int, h: int) -> list[tuple[tuple[str, int], ...]]:
    """By tile index ``y * w + x``: (direction, neighbour index) in N, E, S, W order, in bounds."""
    got = _NB_CACHE.get((w, h))
    if got is None:
        got = []
        for y in range(h):
            for x in range(w):
                got.append(tuple((d, (y + dy) * w + x + dx) for d, dx, dy in _DIRS
                                 if 0 <= x + dx < w and 0 <= y + dy < h))
        _NB_CACHE[(w, h)] = got
    return got


def duel(att: str, dfn: str | None) -> str | None:
    """The attacker's result entering a unit of type ``dfn`` (A29, A11, A34, A43, A61, A96):
    "win", "tie" or "lose"; ``None`` for an unknown type."""
    if dfn is None or dfn not in UNIT_TYPES:
        return None
    if dfn == "flag":
        return "win"  # picked up (A61)
    if dfn == "landmine":
        return "win" if att in ("engineer", "commando") else "lose"
    if dfn == "seamine":
        return "win" if att == "navcommando" else "lose"
    d = UNIT_TYPES[dfn]
    if d.domain == "air":
        return "win"  # a parked aircraft (A34)
    a = UNIT_TYPES[att]
    if ((att == "commando" and dfn == "rank13") or (att == "submarine" and d.is_ship and dfn != "submarine")
            or (att == "navcommando" and dfn == "saar6")):
        return "win"
    sa, sd = a.duel_strength, d.duel_strength
    return "win" if sa > sd else "tie" if sa == sd else "lose"


class _Planner:
    """One autopilot decision: the view read once into flat tile indices, then unit by unit."""

    def __init__(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None) -> None:
        self.v = view
        self.s = parse_standing(standing, strict=False)
        self.posture: str = self.s["posture"]
        w = self.w = int(view["width"])
        self.h = int(view["height"])
        self.me = int(view["player"])
        self.round = int(view["round"])
        self.nb = _neighbours(w, self.h)
        terr = "".join(view["rows"]).encode()
        self.terr = terr
        self._pass: dict[str, bytes | bytearray] = {}
        self.own: dict[str, Mapping[str, Any]] = {}
        self.at: dict[str, int] = {}  # unit id -> tile index (cargo: its carrier's tile)
        self.own_at: dict[int, str] = {}  # tile -> own unit standing there (not cargo)
        self.carrier_at: dict[int, str] = {}  # tile -> own carrier standing there
        for u in view["units"]:
            uid = u["id"]
            self.own[uid] = u
            i = self.ix(u["tile"])
            self.at[uid] = i
            if "carrier" not in u:
                self.own_at[i] = uid
                if UNIT_TYPES[u["type"]].capacity > 0:
                    self.carrier_at[i] = uid
        self.enemy_at: dict[int, Mapping[str, Any]] = {self.ix(e["tile"]): e for e in view["enemies"]}
        self.visible: set[int] = {self.ix(t) for t in view["visible"]}
        self.log_at: dict[int, Mapping[str, Any]] = {}
        for e in view["enemy_log"]:
            i = self.ix(e["tile"])
            if i not in self.visible and i not in self.log_at:
                self.log_at[i] = e
        self.home: set[int] = set()
        for isl in view["islands"]:
            if isl["kind"] == "home" and isl.get("owner") == self.me:
                self.home.update(self.ix(t) for t in isl["tiles"])
        self.control: set[int] = {self.ix(t) for t in view["control"]}
        self.outposts: dict[int, int] = {self.ix(o["tile"]): int(o["owner"]) for o in view["outposts"]}
        self.base = self.ix(view["base"])
        self.stock = {r: int(view["stock"].get(r, 0)) for r in RESOURCES}
        self.spent = dict.fromkeys(RESOURCES, 0)
        # decisions
        self.entries: dict[str, dict[str, Any]] = {}  # unit id -> the order entry we add
        self.fixed: set[str] = set()  # units the submission orders
        self.paths: dict[str, list[str]] = {}  # unit id -> its path this round (submitted or ours)
        self.pinned: set[str] = set()  # carriers that must not move (boarded or left this round)
        self.boarders: dict[str, int] = {}  # carrier id -> units boarding it this round
        self.boarding: dict[str, str] = {}  # unit id -> the waiting carrier it boards (ours)
        self.enemy_tiles: frozenset[int] = frozenset(self.enemy_at)
        self._fields: dict[str, list[int]] = {}
        self._targets: set[int] | None = None

    # -- tiles --------------------------------------------------------------------------------------
    def ix(self, t: Mapping[str, Any]) -> int:
        return int(t["y"]) * self.w + int(t["x"])

    def tix(self, t: Any) -> int | None:
        """The index of a tile from stored standing orders; ``None`` off the board."""
        try:
            x, y = int(t["x"]), int(t["y"])
        except (KeyError, TypeError, ValueError):
            return None
        return y * self.w + x if 0 <= x < self.w and 0 <= y < self.h else None

    def xy(self, i: int) -> tuple[int, int]:
        return (i % self.w, i // self.w)

    def dist(self, a: int, b: int) -> int:
        return abs(a % self.w - b % self.w) + abs(a // self.w - b // self.w)

    def passable(self, typ: str) -> bytes | bytearray:
        """1 where a unit of ``typ`` may plan a path: explored tiles of its terrain (A18, A23, A60)."""
        ut = UNIT_TYPES[typ]
        key = "flag" if typ == "flag" else "any" if typ == "navcommando" or ut.domain == "air" else ut.domain
        got = self._pass.get(key)
        if got is None:
            if key == "flag":
                m = bytearray(self.w * self.h)
                for i in self.home:
                    m[i] = 1
                got = m
            else:
                got = self.terr.translate(_ANY if key == "any" else _LAND if key == "land" else _SEA)
            self._pass[key] = got
        return got

    def blocked_for(self, typ: str) -> set[int]:
        """Tiles a planned path goes around: known enemies; for land units also own carriers."""
        b = set(self.enemy_tiles)
        ut = UNIT_TYPES[typ]
        if ut.domain == "land" and typ != "flag":
            b.update(self.carrier_at)
        return b

    def path_to(self, start: int, typ: str, goals: Collection[int], limit: int = 10_000,
                blocked: Collection[int] = ()) -> list[str] | None:
        """A shortest path from ``start`` to the nearest of ``goals`` (entered whatever stands on
        them; the caller passes only goals the unit may enter), over tiles passable for ``typ`` and
        not ``blocked``; ties: A28 from ``start``.  ``None``: none within ``limit`` steps."""
        if not goals:
            return None
        if start in goals:
            return []
        pas = self.passable(typ)
        nb = self.nb
        parent: dict[int, tuple[int, str]] = {start: (-1, "")}
        frontier = [start]
        depth = 0
        while frontier and depth < limit:
            depth += 1
            nxt: list[int] = []
            found: list[int] = []
            for i in frontier:
                for d, j in nb[i]:
                    if j in parent:
                        continue
                    if j in goals:
                        parent[j] = (i, d)
                        found.append(j)
                    elif pas[j] and j not in blocked:
                        parent[j] = (i, d)
                        nxt.append(j)
            if found:
                origin = self.xy(start)
                best = min(found, key=lambda j: tie_key(origin, self.xy(j)))
                path: list[str] = []
                while best != start:
                    best, d = parent[best]
                    path.append(d)
                path.reverse()
                return path
            frontier = nxt
        return None

    def field(self, name: str, sources: Collection[int], typ: str, blocked: Collection[int] = ()) -> list[int]:
        """Distances (−1: unreachable) to the nearest of ``sources`` over tiles passable for ``typ``
        and not ``blocked``; cached under ``name`` for this decision."""
        got = self._fields.get(name)
        if got is not None:
            return got
        pas = self.passable(typ)
        nb = self.nb
        dist = [-1] * (self.w * self.h)
        frontier = sorted(sources)
        for i in frontier:
            dist[i] = 0
        d = 0
        while frontier:
            d += 1
            nxt: list[int] = []
            for i in frontier:
                for _, j in nb[i]:
                    if dist[j] < 0 and pas[j] and j not in blocked:
                        dist[j] = d
                        nxt.append(j)
            frontier = nxt
        self._fields[name] = dist
        return dist

    def descend(self, start: int, fld: list[int], steps: int, avoid: Collection[int] = ()) -> list[str]:
        """Up to ``steps`` steps downhill on a field (N, E, S, W first among equals), never onto
        ``avoid``; stops at a source."""
        path: list[str] = []
        cur = start
        for _ in range(steps):
            here = fld[cur] if fld[cur] >= 0 else 1 << 30
            if here == 0:
                break
            best: tuple[int, str, int] | None = None
            for d, j in self.nb[cur]:
                fj = fld[j]
                if 0 <= fj < here and j not in avoid and (best is None or fj < best[0]):
                    best = (fj, d, j)
            if best is None:
                break
            path.append(best[1])
            cur = best[2]
        return path

    def walk(self, start: int, path: list[str]) -> int:
        w = self.w
        i = start
        for d in path:
            i += -w if d == "N" else 1 if d == "E" else w if d == "S" else -1
        return i

    # -- bookkeeping --------------------------------------------------------------------------------
    def afford(self, cost: Mapping[str, int]) -> bool:
        if all(self.spent[r] + cost.get(r, 0) <= self.stock[r] for r in RESOURCES):
            for r, n in cost.items():
                self.spent[r] += n
            return True
        return False

    def order_path(self, uid: str, path: list[str]) -> None:
        if path:
            self.entries[uid] = {"unit": uid, "path": path}
            self.paths[uid] = path

    def order_action(self, uid: str, action: str, target: str | None = None) -> None:
        e: dict[str, Any] = {"unit": uid, "action": action}
        if target is not None:
            e["target"] = target
        self.entries[uid] = e

    def moving(self, uid: str) -> bool:
        return bool(self.paths.get(uid))

    def end_tile(self, uid: str) -> int:
        """Where an own unit should stand after this round's orders (its path walked out)."""
        u = self.own[uid]
        c = u.get("carrier")
        if c is not None and c in self.own and not self.paths.get(uid):
            return self.end_tile(c)
        return self.walk(self.at[uid], self.paths.get(uid, []))

    # -- the submission -----------------------------------------------------------------------------
    def take_submitted(self, orders: Mapping[str, Any]) -> None:
        """Units the submission orders keep their orders; note their paths, spending and carriers."""
        for b in orders.get("builds") or ():  # paid from the same stock as our outposts and strikes (A20)
            ut = UNIT_TYPES.get(str(b.get("type"))) if isinstance(b, Mapping) else None
            if ut is not None:
                for r, n in ut.cost.items():
                    self.spent[r] += n
        for ent in orders.get("units") or ():
            if not isinstance(ent, Mapping):
                continue
            uid = ent.get("unit")
            if not isinstance(uid, str) or uid not in self.own:
                continue
            self.fixed.add(uid)
            u = self.own[uid]
            typ = u["type"]
            path: list[str] | None = None
            if isinstance(ent.get("path"), list):
                path = [str(d) for d in ent["path"]][: UNIT_TYPES[typ].move]
            elif isinstance(ent.get("to"), Mapping):
                try:
                    dest = self.ix(ent["to"])
                except (KeyError, TypeError, ValueError):
                    dest = -1
                if 0 <= dest < self.w * self.h:
                    path = (self.path_to(self.at[uid], typ, {dest}) or [])[: UNIT_TYPES[typ].move]
            elif ent.get("action") == "outpost":
                self.spent["food"] += OUTPOST_COST["food"]
                self.spent["wood"] += OUTPOST_COST["wood"]
            elif ent.get("action") == "strike":
                self.spent["fuel"] += STRIKE_COST["fuel"]
            if not path:
                continue
            self.paths[uid] = path
            c = u.get("carrier")
            if c is not None:
                self.pinned.add(str(c))  # cargo leaving: its carrier holds still (A24)
            if UNIT_TYPES[typ].domain == "land" and typ != "flag":
                i = self.at[uid]
                for d in path:
                    i = self.walk(i, [d])
                    cid = self.carrier_at.get(i)
                    if cid is not None and cid != c:
                        self.pinned.add(cid)  # boarding: the carrier holds still (A24)
                        break

    # -- the decision -------------------------------------------------------------------------------
    def run(self, submitted: Mapping[str, Any]) -> dict[str, Any]:
        self.take_submitted(submitted)
        sorders = {e["unit"]: e for e in self.s["units"] if e["unit"] in self.own}
        free = [uid for uid in sorted(self.own) if uid not in self.fixed]

        def follows(uid: str) -> bool:  # escorts and unit guards go after the units they follow
            so = sorders.get(uid)
            return so is not None and (so["order"] == "escort" or (so["order"] == "guard" and "target" in so))

        first = sorted((uid for uid in free if "carrier" not in self.own[uid] and not follows(uid)),
                       key=lambda k: (UNIT_TYPES[self.own[k]["type"]].capacity == 0, k))
        for uid in first:  # carriers first: boarders need to know whether they move
            self.decide(uid, sorders.get(uid))
        for uid in free:
            if "carrier" not in self.own[uid] and follows(uid):
                self.decide(uid, sorders.get(uid))
        for uid in free:  # cargo: lands only while its carrier holds still (A24)
            if "carrier" in self.own[uid]:
                self.decide(uid, sorders.get(uid))
        self.check_boarding()
        out: dict[str, Any] = dict(submitted)
        units = list(submitted["units"]) if isinstance(submitted.get("units"), list) else []
        out["units"] = units + [self.entries[k] for k in sorted(self.entries)]
        if not submitted.get("builds"):
            builds = self.builds()
            if builds:
                out["builds"] = builds
        if submitted.get("bonus") is None and "bonus" in self.s:
            out["bonus"] = self.s["bonus"]
        return out

    def decide(self, uid: str, so: Mapping[str, Any] | None) -> None:
        u = self.own[uid]
        typ = u["type"]
        ut = UNIT_TYPES[typ]
        if ut.move == 0 or (typ == "flag" and "carrier" in u):
            return
        cargo = "carrier" in u
        if cargo:
            c = str(u["carrier"])
            if c not in self.own or self.moving(c):
                return  # an enemy bears this flag, or the carrier moves (A24)
        if so is not None:
            kind = so["order"]
            if kind == "stay":
                return
            handlers = {"move": self._order_move, "guard": self._order_guard, "patrol": self._order_patrol,
                        "escort": self._order_escort, "hunt": self._order_hunt}
            if handlers[kind](uid, u, ut, so):
                return
        if cargo:
            if self.posture == "aggressive" and typ != "flag":
                self.land_cargo(uid, u, ut)
            return
        if typ == "flag" or ut.domain == "air":
            if ut.id == "fighter" and self.posture in ("balanced", "aggressive"):
                self.strike(uid, u)
            return
        if self.posture == "hold":
            return
        if self.posture == "defensive":
            self.fall_back(uid, u, ut)
            return
        if typ == "spy" and self.reveal(uid, u):
            return
        has_cargo = bool(u.get("cargo"))
        if not has_cargo and self.attack(uid, u, ut, self.posture):
            return
        if self.posture == "aggressive":
            self.advance(uid, u, ut)
        if ut.is_warship and not self.moving(uid):
            self.bombard(uid, u, ut)

    def move_along(self, uid: str, typ: str, path: list[str] | None) -> None:
        """Order the first ``move`` steps of ``path``; aircraft only to a safe landing (A34)."""
        if not path or uid in self.pinned:
            return
        ut = UNIT_TYPES[typ]
        path = path[: ut.move]
        if ut.domain == "air":
            i = self.at[uid]
            best = 0
            for k, d in enumerate(path):
                i = self.walk(i, [d])
                if i in self.control and self.terr[i] == _LAND_C and i not in self.own_at and i not in self.enemy_at:
                    best = k + 1
            path = path[:best]
        self.order_path(uid, path)

    # -- A72 ----------------------------------------------------------------------------------------
    def _order_move(self, uid: str, u: Mapping[str, Any], ut: UnitType, so: Mapping[str, Any]) -> bool:
        dest = self.tix(so["tile"])
        start = self.at[uid]
        if dest is not None and dest != start:
            self.move_along(uid, ut.id, self.route(start, ut.id, {dest}))
        return True

    def head_for(self, uid: str, typ: str, goals: Collection[int]) -> None:
        """Move toward the nearest goal not held by an own unit, around own units and known enemies
        (own units that stay would hold it, A25); failing that, through own units."""
        start = self.at[uid]
        goals = {g for g in goals if g not in self.own_at or g == start}
        if start in goals:
            return
        blocked = self.blocked_for(typ) | set(self.own_at)
        path = self.path_to(start, typ, goals, blocked=blocked)
        if path is None:
            path = self.path_to(start, typ, goals, blocked=self.blocked_for(typ))
        self.move_along(uid, typ, path)

    def route(self, start: int, typ: str, goals: Collection[int]) -> list[str] | None:
        """A path to the nearest goal around enemies and own carriers; failing that, through them."""
        goals = {g for g in goals if self.passable(typ)[g] or g in self.enemy_at}
        got = self.path_to(start, typ, goals, blocked=self.blocked_for(typ))
        if got is None:
            got = self.path_to(start, typ, goals)
        return got

    def _order_guard(self, uid: str, u: Mapping[str, Any], ut: UnitType, so: Mapping[str, Any]) -> bool:
        if "target" in so:
            if so["target"] not in self.own:
                return False
            centre = self.end_tile(so["target"])
        else:
            got = self.tix(so["tile"])
            if got is None:
                return True
            centre = got
        start = self.at[uid]
        typ = ut.id
        pas = self.passable(typ)
        near = {centre, *(k for _, k in self.nb[centre])}
        foes = {j for j in near if j in self.enemy_at and pas[j]}
        if foes:
            self.move_along(uid, typ, self.path_to(start, typ, foes, blocked=self.blocked_for(typ)))
            return True
        if self.dist(start, centre) > 1:
            goals = {j for j in near if pas[j] and j not in self.enemy_at}
            self.move_along(uid, typ, self.route(start, typ, goals))
        return True

    def _order_escort(self, uid: str, u: Mapping[str, Any], ut: UnitType, so: Mapping[str, Any]) -> bool:
        tid = so["target"]
        if tid not in self.own or tid == uid:
            return False
        start = self.at[uid]
        typ = ut.id
        goal = self.end_tile(tid)
        if self.dist(start, goal) == 1:
            return True
        pas = self.passable(typ)
        taken = {self.end_tile(k) for k in self.own if k != uid and "carrier" not in self.own[k]}
        near = {j for _, j in self.nb[goal] if pas[j] and j not in self.enemy_at}
        blocked = self.blocked_for(typ)
        path = self.path_to(start, typ, near - taken, limit=ut.move, blocked=blocked)
        if path is None:
            path = self.route(start, typ, near)
        self.move_along(uid, typ, path)
        return True

    def _order_hunt(self, uid: str, u: Mapping[str, Any], ut: UnitType, so: Mapping[str, Any]) -> bool:
        typ = ut.id
        start = self.at[uid]
        pas = self.passable(typ)
        tid = so.get("target")
        goals: set[int] = set()
        if tid is not None:
            goals = {i for i, e in self.enemy_at.items() if e["id"] == tid}
            if not goals:
                goals = {i for i, e in self.log_at.items() if e["id"] == tid}
            goals = {i for i in goals if pas[i]}
        if not goals:
            goals = {i for i in (*self.enemy_at, *self.log_at) if pas[i]}
        if not goals:
            return True
        blocked = self.blocked_for(typ)
        path = self.path_to(start, typ, goals, blocked=blocked)
        if path and len(path) < ut.move and self.walk(start, path) in self.enemy_at:
            # steps to spare: run on past its tile the same way, in case it flees (if it stays, the
            # fight there stops the hunter, A30)
            i = self.walk(start, path)
            while len(path) < ut.move:
                j = self.walk(i, [path[-1]])
                if self.dist(i, j) != 1 or not 0 <= j < len(pas) or not pas[j] or j in blocked:
                    break
                path.append(path[-1])
                i = j
        self.move_along(uid, typ, path)
        return True

    def _order_patrol(self, uid: str, u: Mapping[str, Any], ut: UnitType, so: Mapping[str, Any]) -> bool:
        typ = ut.id
        got = [self.tix(t) for t in so["waypoints"]]
        wps = [i for i in got if i is not None]
        if len(wps) != len(got):
            return True
        walk: list[int] = []
        steps: list[str] = []
        for k, a in enumerate(wps):
            b = wps[(k + 1) % len(wps)]
            leg = self.path_to(a, typ, {b})
            if leg is None:
                return True  # a waypoint out of reach: the patrol waits
            i = a
            for d in leg:
                walk.append(i)
                steps.append(d)
                i = self.walk(i, [d])
        start = self.at[uid]
        passes = [k for k, i in enumerate(walk) if i == start]
        if not passes:
            self.move_along(uid, typ, self.route(start, typ, set(wps)))
            return True
        n = len(walk)
        k = passes[0]
        if len(passes) > 1:  # the pass that puts it least behind the schedule (module docstring)
            sched = (self.round * ut.move) % n
            k = min(passes, key=lambda p: ((sched - p) % n, p))
        self.move_along(uid, typ, [steps[(k + j) % n] for j in range(ut.move)])
        return True

    # -- A71 ----------------------------------------------------------------------------------------
    def fall_back(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        start = self.at[uid]
        if not any(self.dist(start, j) <= ATTACK_RANGE for j in self.enemy_at):
            return
        typ = ut.id
        if ut.domain == "sea":
            src = {j for _, j in self.nb[self.base] if self.terr[j] == _SEA_C} or {self.base}
            fld = self.field("home-sea", src, typ, self.enemy_tiles)
        elif typ == "navcommando":
            fld = self.field("home-any", {self.base}, typ, self.enemy_tiles)
        else:
            fld = self.field("home-land", {self.base}, typ, self.enemy_tiles)
        self.move_along(uid, typ, self.descend(start, fld, ut.move, self.enemy_tiles | set(self.own_at)))

    def enterable(self, typ: str, j: int) -> bool:
        """Whether a unit of ``typ`` may step onto tile ``j`` at all (its terrain, A23)."""
        return bool(self.passable(typ)[j])

    def attack(self, uid: str, u: Mapping[str, Any], ut: UnitType, mode: str) -> bool:
        typ = ut.id
        start = self.at[uid]
        sure: set[int] = set()
        maybe: set[int] = set()
        for j, e in self.enemy_at.items():
            if self.dist(start, j) > ATTACK_RANGE or not self.enterable(typ, j):
                continue
            res = duel(typ, e.get("type"))
            if res == "win":
                sure.add(j)
            elif mode == "aggressive" and res != "lose":
                maybe.add(j)
        blocked = self.blocked_for(typ)
        for goals in (sure, maybe):
            path = self.path_to(start, typ, goals, limit=ATTACK_RANGE, blocked=blocked)
            if path:
                self.move_along(uid, typ, path)
                return True
        return False

    def reveal(self, uid: str, u: Mapping[str, Any]) -> bool:
        start = self.at[uid]
        for j in sorted(self.enemy_at, key=lambda j: (self.dist(start, j), self.enemy_at[j]["id"])):
            e = self.enemy_at[j]
            if self.dist(start, j) <= REVEAL_RANGE and "type" not in e:
                self.order_action(uid, "reveal", e["id"])
                return True
        return False

    def strike(self, uid: str, u: Mapping[str, Any]) -> None:
        start = self.at[uid]
        for j in sorted(self.enemy_at, key=lambda j: (self.dist(start, j), self.enemy_at[j]["id"])):
            e = self.enemy_at[j]
            if self.dist(start, j) > STRIKE_RANGE or e.get("domain") == "air":
                continue
            typ = e.get("type")
            if typ in _IMMUNE_TO_STRIKE or (typ is None and self.posture != "aggressive"):
                continue
            if self.afford(STRIKE_COST):
                self.order_action(uid, "strike", e["id"])
            return

    def bombard(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        start = self.at[uid]
        for _, j in self.nb[start]:
            e = self.enemy_at.get(j)
            if e is None or self.terr[j] != _LAND_C or e.get("domain") == "air":
                continue
            typ = e.get("type")
            if typ is not None and (UNIT_TYPES[typ].domain == "air"
                                    or UNIT_TYPES[typ].duel_strength >= ut.duel_strength):
                continue  # not weaker: nothing happens (A37)
            if typ is None and self.posture != "aggressive":
                continue
            self.order_action(uid, "bombard", e["id"])
            return

    # -- aggressive: taking ground --------------------------------------------------------------------
    def targets(self) -> set[int]:
        """Explored land outside the home island that the player does not control."""
        if self._targets is None:
            t = self.terr
            self._targets = {i for i in range(len(t)) if t[i] == _LAND_C and i not in self.home
                             and i not in self.control and self.outposts.get(i) != self.me}
        return self._targets

    def drops(self) -> list[int]:
        """The sea tiles next to a target, where cargo lands."""
        if "drops" not in self._fields:
            sea = self.passable("dvora")
            self._fields["drops"] = sorted({j for i in self.targets() for _, j in self.nb[i] if sea[j]})
        return self._fields["drops"]

    def troops_home(self) -> list[str]:
        """Own land units at home that may go abroad (not flags or mines, not ordered elsewhere)."""
        got = []
        for uid, u in self.own.items():
            if "carrier" in u or self.at[uid] not in self.home:
                continue
            ut = UNIT_TYPES[u["type"]]
            if ut.domain == "land" and not ut.is_mine and not ut.is_flag and u["type"] != "navcommando":
                got.append(uid)
        return got

    def room(self, cid: str) -> int:
        c = self.own[cid]
        return UNIT_TYPES[c["type"]].capacity - len(c.get("cargo") or ()) - self.boarders.get(cid, 0)

    def advance(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        typ = ut.id
        start = self.at[uid]
        if ut.domain == "land":
            abroad = self.terr[start] == _LAND_C and start not in self.home
            if abroad and start not in self.outposts and self.afford(OUTPOST_COST):
                self.order_action(uid, "outpost")
            elif typ == "navcommando" or abroad:
                self.head_for(uid, typ, self.targets() - {start})
            elif start in self.home:
                self.go_aboard(uid, start)
            return
        if ut.domain == "sea" and ut.capacity > 0:
            self.ferry(uid, u, ut)

    def waiting_carriers(self) -> list[str]:
        return [c for i, c in sorted(self.carrier_at.items())
                if UNIT_TYPES[self.own[c]["type"]].domain == "sea" and not self.moving(c) and self.room(c) > 0
                and any(j in self.home for _, j in self.nb[i])]

    def go_aboard(self, uid: str, start: int) -> None:
        if not self.targets():
            return
        for d, j in self.nb[start]:
            c = self.carrier_at.get(j)
            if c is not None and c in self.waiting_carriers():
                self.boarders[c] = self.boarders.get(c, 0) + 1
                self.pinned.add(c)
                self.boarding[uid] = c
                self.order_path(uid, [d])
                return
        waiting = self.waiting_carriers()
        if not waiting:
            return
        self.head_for(uid, self.own[uid]["type"], {j for c in waiting for _, j in self.nb[self.at[c]]
                                                   if j in self.home})

    def ferry(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        start = self.at[uid]
        if uid in self.pinned:
            return
        cargo = [c for c in (u.get("cargo") or ())
                 if c in self.own and UNIT_TYPES[self.own[c]["type"]].domain == "land"]
        troops = self.troops_home()
        near = any(self.dist(self.at[t], start) == 1 for t in troops)  # could board next round
        if cargo:
            if start in self.drops():
                return  # hold: the cargo lands
            if self.room(uid) > 0 and near:
                return  # wait for more passengers
            self.head_for(uid, ut.id, self.drops())
            return
        if not self.targets():
            self.explore(uid, ut)
            return
        if not troops or near:
            return  # nobody to carry, or waiting for passengers
        self.head_for(uid, ut.id, {j for t in troops for _, j in self.nb[self.at[t]] if self.terr[j] == _SEA_C})

    def explore(self, uid: str, ut: UnitType) -> None:
        """No land to take is known: head for the nearest tile next to unexplored ones."""
        if "frontier" not in self._fields:
            t = self.terr
            q = ord("?")
            self._fields["frontier"] = [i for i in range(len(t)) if t[i] != q
                                        and any(t[j] == q for _, j in self.nb[i])]
        pas = self.passable(ut.id)
        goals = {i for i in self._fields["frontier"] if pas[i] and i not in self.own_at}
        self.move_along(uid, ut.id, self.path_to(self.at[uid], ut.id, goals,
                                                 blocked=self.enemy_tiles | set(self.own_at)))

    def land_cargo(self, uid: str, u: Mapping[str, Any], ut: UnitType) -> None:
        start = self.at[uid]
        tg = self.targets()
        goals = [j for _, j in self.nb[start] if j in tg and j not in self.own_at and self.passable(ut.id)[j]]
        foes = [j for j in goals if j in self.enemy_at and duel(ut.id, self.enemy_at[j].get("type")) != "lose"]
        calm = [j for j in goals if j not in self.enemy_at]
        pick = (foes or calm)
        if not pick:
            return
        origin = self.xy(start)
        j = min(pick, key=lambda j: tie_key(origin, self.xy(j)))
        d = next(d for d, k in self.nb[start] if k == j)
        self.order_path(uid, [d])

    # -- A24 ----------------------------------------------------------------------------------------
    def check_boarding(self) -> None:
        """A24/A91: a land unit's path stops before an own carrier, unless it is a boarding we
        ordered onto a waiting carrier (which holds still)."""
        for uid in sorted(self.entries):
            path = self.paths.get(uid)
            u = self.own[uid]
            if not path or UNIT_TYPES[u["type"]].domain != "land" or u["type"] == "flag":
                continue
            i = self.at[uid]
            for k, d in enumerate(path):
                i = self.walk(i, [d])
                c = self.carrier_at.get(i)
                if c is None or c == u.get("carrier"):
                    continue
                if self.boarding.get(uid) == c and k == len(path) - 1 and not self.moving(c):
                    break
                if k:
                    self.entries[uid] = {"unit": uid, "path": path[:k]}
                    self.paths[uid] = path[:k]
                else:
                    del self.entries[uid]
                    self.paths.pop(uid, None)
                break

    # -- A73 ----------------------------------------------------------------------------------------
    def builds(self) -> list[dict[str, Any]]:
        queue = self.s["build_queue"]
        if not queue:
            return []
        have: dict[str, int] = {}
        for u in self.own.values():
            have[u["type"]] = have.get(u["type"], 0) + 1
        # occupied after this round's moves (or before them, should a move be held): A42 placement
        ends = {self.end_tile(k) for k, u in self.own.items() if "carrier" not in u or self.paths.get(k)}
        busy = ends | set(self.enemy_at) | set(self.own_at)
        free_home = len([i for i in self.home if i not in busy])
        free_sea = len([j for _, j in self.nb[self.base] if self.terr[j] == _SEA_C and j not in busy])
        rafted: set[str] = set()
        mine_tiles: set[int] = set()
        out: list[dict[str, Any]] = []
        for b in queue:
            typ = b["type"]
            ut = UNIT_TYPES[typ]
            if ut.limit is not None and have.get(typ, 0) >= ut.limit:
                continue
            t = self.tix(b["tile"]) if ut.is_mine else None
            if ut.is_mine:
                if t is None or t in busy or t in mine_tiles:
                    continue
                if typ == "landmine" and (self.terr[t] != _LAND_C or t not in self.control):
                    continue
                if typ == "seamine" and (self.terr[t] != _SEA_C or not any(j in self.control for _, j in self.nb[t])):
                    continue
            elif typ == "raft":
                s = self.own.get(b["ship"])
                if (s is None or not UNIT_TYPES[s["type"]].is_ship or s["type"] == "raft" or s.get("raft")
                        or b["ship"] in rafted):
                    continue
            elif ut.domain == "sea":
                if free_sea <= 0:
                    continue
            elif free_home <= 0:
                continue
            if not self.afford(ut.cost):
                break  # in order: the queue waits for this one
            have[typ] = have.get(typ, 0) + 1
            if t is not None:
                mine_tiles.add(t)
            elif typ == "raft":
                rafted.add(b["ship"])
            elif ut.domain == "sea":
                free_sea -= 1
            else:
                free_home -= 1
            out.append(dict(b))
        return out


def complete_orders(view: Mapping[str, Any], standing: Mapping[str, Any] | None,
                    orders: Mapping[str, Any]) -> dict[str, Any]:
    """A70: ``orders`` (a submission that passed ``validate``) plus standing orders for every unit
    it leaves without an order, the queue's builds when it has none, the standing bonus when it has
    none (module docstring)."""
    if view.get("outcome") is not None:
        return dict(orders)
    if view.get("round", 0) == 0:
        return dict(orders)
    return _Planner(view, standing).run(orders if isinstance(orders, Mapping) else {})


def autopilot(view: Mapping[str, Any], standing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A70: the orders of a player who submitted nothing (module docstring)."""
    if view.get("outcome") is not None:
        return {}
    if view.get("round", 0) == 0:
        return {"deploy": []}
    return _Planner(view, standing).run({"units": []})
