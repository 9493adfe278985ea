"""Parsing and validating one player's orders for one round (A13–A20, A24, A36–A39, A42, A91).

Orders (JSON)::

    {"units": [{"unit": id, "path": ["N", "E", ...]}          # move by steps (A18)
               | {"unit": id, "to": {"x": .., "y": ..}}       # destination, server plans (A18, A28)
               | {"unit": id, "action": "outpost"|"bombard"|"strike"|"reveal", "target": id}],
     "builds": [{"type": "rank5", "tile": {...}?, "ship": id?}],
     "bonus": "wood"|"food"|"iron"|"fuel",
     "deploy": [{"unit": id, "tile": {...}}]}                   # round 0 only

:func:`parse_orders` with ``strict=True`` is validation (A20: errors name the field, the rule and
the unit; the first error refuses the whole submission).  With ``strict=False`` (resolution)
malformed entries are skipped and rule questions are left to the resolution, which holds, skips or
refunds as the rules say (A27, A42, A91).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.archipelago.board import DELTA, Board, Tile, dist, parse_tile, step
from engine.archipelago.fog import sees_unit, visible_tiles, watch_tiles
from engine.archipelago.rules import (
    ACTION_COST,
    ACTION_RULE,
    ACTIONS,
    BOMBARD_RANGE,
    OUTPOST_COST,
    PLAN_TERRAIN,
    REVEAL_RANGE,
    STRIKE_COST,
    STRIKE_RANGE,
)
from engine.archipelago.state import State, Unit
from engine.archipelago.units import LAND, RESOURCES, SEA, UNIT_TYPES
from engine.archipelago.words import at, echo, enemy, own, type_name
from engine.errors import GameError, GameOver, IllegalOrder, InvalidOrder

_TOP_KEYS = frozenset({"units", "builds", "bonus", "deploy"})
_UNIT_KEYS = frozenset({"unit", "path", "to", "action", "target"})
_BUILD_KEYS = frozenset({"type", "tile", "ship"})
#: unit type -> how many steps it moves in a round (``UnitType.move``)
_MOVE: dict[str, int] = {k: t.move for k, t in UNIT_TYPES.items()}


@dataclass
class Build:
    type: str
    tile: Tile | None = None
    ship: str | None = None


@dataclass
class Parsed:
    """One player's orders, checked and normalised."""

    moves: dict[str, list[str]] = field(default_factory=dict)
    actions: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    builds: list[Build] = field(default_factory=list)
    bonus: str | None = None
    deploy: list[tuple[str, Tile]] = field(default_factory=list)


def _own_unit(state: State, player: int, uid: Any, fld: str) -> Unit:
    if not isinstance(uid, str) or not uid:
        raise InvalidOrder("must be a unit id (string)", field=fld)
    u = state.units.get(uid)
    if u is None or u.owner != player:
        raise IllegalOrder(f"no unit of yours is called {echo(uid)}", rule="A18", field=fld)
    return u


def _tile(v: Any, fld: str, what: str = "a tile") -> Tile:
    """A tile of the orders, ``{"x": int, "y": int}``: InvalidOrder naming what is missing or wrong
    (``<fld>.x`` for a missing x), never a bare KeyError."""
    if type(v) is dict:  # the usual case, in short
        x, y = v.get("x"), v.get("y")
        if type(x) is int and type(y) is int:
            return (x, y)
    if type(v) is dict or isinstance(v, Mapping):
        for k in ("x", "y"):
            if v.get(k) is None:
                raise InvalidOrder(f"{what} is {{\"x\": int, \"y\": int}}: {k} is missing", field=f"{fld}.{k}")
    try:
        return parse_tile(v)
    except (KeyError, TypeError, ValueError):
        raise InvalidOrder(f"{what} is {{\"x\": int, \"y\": int}} with whole-number coordinates",
                           field=fld) from None


def passable(state: State, u: Unit, t: Tile) -> bool:
    """Terrain a unit may move over (A23, A60)."""
    ut = UNIT_TYPES[u.type]
    b = state.board
    if not b.in_bounds(t):
        return False
    if ut.id == "flag":
        return b.is_home_of(t, u.owner)
    if ut.domain == LAND:
        return ut.id == "navcommando" or t in b.land
    if ut.domain == SEA:
        return t not in b.land
    return True


def plan_path(state: State, player: int, u: Unit, dest: Tile) -> list[str] | None:
    """A18: the shortest path over ``player``'s explored terrain, ignoring units, A28 ties.

    The first shortest path in direction order N, E, S, W at each step; ``None`` if unreachable.
    A land unit may end on its own idle carrier's tile (boarding)."""
    return PathPlanner(state, player).plan(u, dest)


class _Rings:
    """The breadth-first rings around a destination over open tiles (tile bits, board.py), grown
    on demand: ``rings[k]`` holds the open tiles ``k`` steps away."""

    __slots__ = ("edges", "rings", "todo", "width")

    def __init__(self, b: Board, dest_bit: int, open_bits: int, edges: tuple[int, int]) -> None:
        self.rings = [dest_bit]
        self.todo = open_bits & ~dest_bit
        self.width = b.width
        self.edges = edges  # Board.edge_bits

    def first_touching(self, bits: int) -> int | None:
        """The smallest ``k`` whose ring holds one of ``bits`` (None: no ring does)."""
        rings = self.rings
        for k, ring in enumerate(rings):
            if ring & bits:
                return k
        w, todo, (not_west, not_east) = self.width, self.todo, self.edges
        ring = rings[-1]
        while ring:
            # the todo tiles next to the last ring: it shifted by a column (not wrapping) and a row
            ring = (((ring << 1) & not_west) | ((ring >> 1) & not_east) | (ring << w) | (ring >> w)) & todo
            todo ^= ring
            rings.append(ring)
            if ring & bits:
                break
        self.todo = todo
        return len(rings) - 1 if ring else None


class PathPlanner:
    """A18 planning (:func:`plan_path`) for one player on one state.  The rings around a
    destination are searched once per kind of terrain and shared by every unit sent there.

    A unit's start is outside the terrain rules (it may stand anywhere) but is never a step of a
    path, so it does not change the rings: its distance is one more than its nearest neighbour's."""

    def __init__(self, state: State, player: int) -> None:
        b = state.board
        self.state = state
        self.player = player
        self.board = b
        self.width, self.height = b.width, b.height
        self.explored = state.pstates[player].explored
        self.nbrs = b.neighbour_indices()
        self.around = b.around_bits()
        self.edges = b.edge_bits()
        self._rings: dict[tuple[str, int, int], _Rings | None] = {}
        self._open: dict[tuple[str, int], int] = {}  # (kind, flag owner) -> its explored terrain
        self._carriers: set[Tile] | None = None

    def _terrain(self, kind: str, owner: int) -> int:
        """The tiles of a kind of terrain (:data:`engine.archipelago.rules.PLAN_TERRAIN`; ``owner``:
        the flag's seat) as tile bits: the state side's reading of it, the whole board's terrain
        (the planner keeps the player's explored part)."""
        b = self.board
        if kind == "home":
            return b.home_bits(owner)
        if kind == "land":
            return b.land_bits()
        if kind == "sea":
            return b.sea_bits()
        return b.all_bits()  # aircraft and naval commandos: any terrain

    def _carrier_tiles(self) -> set[Tile]:
        """The tiles an own carrier stands on (:func:`_carrier_on` is not None there)."""
        if self._carriers is None:
            player = self.player
            self._carriers = {u.tile for u in self.state.units.values()
                              if u.owner == player and u.carrier is None and UNIT_TYPES[u.type].is_carrier}
        return self._carriers

    def plan(self, u: Unit, dest: Tile, steps: int | None = None) -> list[str] | None:
        """:func:`plan_path` for ``u``; ``steps``: only the path's first steps (as many as it has
        when None)."""
        start = u.tile
        if dest == start:
            return []
        w, h = self.width, self.height
        dx, dy = dest
        sx, sy = start
        if not (0 <= dx < w and 0 <= dy < h and 0 <= sx < w and 0 <= sy < h):
            return None
        d_i = dy * w + dx
        if not self.explored >> d_i & 1:
            return None
        kind = PLAN_TERRAIN[u.type]
        key = (kind, u.owner if kind == "home" else -1, d_i)
        if key in self._rings:
            rings = self._rings[key]
        else:
            open_key = (kind, key[1])
            open_bits = self._open.get(open_key)
            if open_bits is None:
                open_bits = self._open[open_key] = self._terrain(kind, u.owner) & self.explored
            # (the destination is explored) a destination off the unit's terrain: only a land unit
            # boarding an own carrier there
            ok = open_bits >> d_i & 1 or (kind == "land" and dest in self._carrier_tiles())
            rings = self._rings[key] = _Rings(self.board, 1 << d_i, open_bits, self.edges) if ok else None
        if rings is None:
            return None
        cur = sy * w + sx
        k = rings.first_touching(self.around[cur])  # the start is k + 1 steps away
        if k is None:
            return None
        nbrs = self.nbrs
        ring_at = rings.rings
        path: list[str] = []
        stop = -1 if steps is None or k < steps else k - steps
        for d in range(k, stop, -1):
            ring = ring_at[d]
            for dname, j in nbrs[cur]:  # N, E, S, W: the first shortest path (A28)
                if ring >> j & 1:
                    path.append(dname)
                    cur = j
                    break
        return path


def _carrier_on(state: State, player: int, t: Tile) -> Unit | None:
    """An own carrier (ship with capacity or transport plane) standing on ``t``."""
    for u in state.units.values():
        if u.tile == t and u.owner == player and u.carrier is None and UNIT_TYPES[u.type].is_carrier:
            return u
    return None


def unreachable(state: State, player: int, u: Unit, dest: Tile) -> str:
    """Why :func:`plan_path` found no way to ``dest``, in the player's words (what it knows of the
    terrain only: an unexplored tile is just that)."""
    b = state.board
    ut = UNIT_TYPES[u.type]
    if not b.in_bounds(dest):
        return f"{at(dest)} is off the board"
    w = b.width
    if not state.pstates[player].explored >> (dest[1] * w + dest[0]) & 1:
        return (f"{at(dest)} is not explored yet — a destination must be reachable over explored terrain to be "
                "planned; steps sent as a path are checked against the terrain at the resolution instead (A20)")
    if ut.is_flag and not b.is_home_of(dest, u.owner):
        return f"a flag moves only on its home island, and {at(dest)} is not on it"
    if ut.domain == LAND and ut.id != "navcommando" and dest not in b.land and _carrier_on(state, player, dest) is None:
        return f"a land unit cannot go to sea: {at(dest)} is sea"
    if ut.domain == SEA and dest in b.land:
        return f"a ship cannot go on land: {at(dest)} is land"
    return (f"no path over explored terrain to {at(dest)} — a destination must be reachable to be planned; steps "
            "sent as a path are checked against the terrain at the resolution instead (A20)")


def parse_orders(state: State, player: int, orders: Mapping[str, Any], *, strict: bool) -> Parsed:
    """Check and normalise ``orders`` (see module docstring)."""
    if strict:
        if state.outcome is not None:
            raise GameOver("the game is over", rule="A67")
        if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < state.players:
            raise InvalidOrder(f"must be a seat number 0..{state.players - 1}", field="player")
    if not isinstance(orders, Mapping):
        if strict:
            raise InvalidOrder("orders must be an object", field="orders")
        return Parsed()
    out = Parsed()
    if strict:
        for k in orders:
            if k not in _TOP_KEYS:
                raise InvalidOrder(f"unknown field {k!r}", field=str(k))
    lazy = _Lazy(state, player)
    if "bonus" in orders and orders["bonus"] is not None:
        _parse_bonus(orders["bonus"], out, strict)
    # -- deployment (round 0) --------------------------------------------------------------------
    if orders.get("deploy"):
        if state.round != 0:
            if strict:
                raise IllegalOrder("deployment happens in round 0 only", rule="A13", field="deploy")
        else:
            _each(state, player, orders, "deploy", out, strict, _parse_deploy)
    units = orders.get("units")
    builds = orders.get("builds")
    if state.round == 0 and (units or builds):
        if strict:
            raise IllegalOrder("round 0 is for deployment: no moves, actions or builds", rule="A13",
                               field="units" if units else "builds")
        return out
    # -- unit orders ----------------------------------------------------------------------------
    if strict:
        _each(state, player, orders, "units", out, strict, _parse_unit_order, strict, lazy.sight, lazy.paths)
        _check_carriers(state, player, out, units if isinstance(units, list) else [])
    else:
        _parse_units_lenient(state, player, units, out, lazy.sight, lazy.paths)
    # -- builds ---------------------------------------------------------------------------------
    _each(state, player, orders, "builds", out, strict, _parse_build, strict, lazy.sight)
    if strict:
        _check_affordable(state, player, out)
    return out


class _Lazy:
    """What checking orders may need of the state, computed once when first asked: the player's
    sight (tiles in sight, tiles a submarine is seen from) and its path planner."""

    __slots__ = ("planner", "player", "state", "vis", "watch")

    def __init__(self, state: State, player: int) -> None:
        self.state, self.player = state, player
        self.vis: set[Tile] | None = None
        self.watch: set[Tile] | None = None
        self.planner: PathPlanner | None = None

    def paths(self) -> PathPlanner:
        if self.planner is None:
            self.planner = PathPlanner(self.state, self.player)
        return self.planner

    def sight(self) -> tuple[set[Tile], set[Tile]]:
        if self.vis is None or self.watch is None:
            self.vis = visible_tiles(self.state, self.player)
            self.watch = watch_tiles(self.state, self.player)
        return self.vis, self.watch


def _parse_bonus(bonus: Any, out: Parsed, strict: bool) -> None:
    """A51: the bonus choice (a bad one: refused when ``strict``, else left out)."""
    if bonus in RESOURCES:
        out.bonus = str(bonus)
    elif strict:
        raise InvalidOrder(f"bonus must be one of {', '.join(RESOURCES)}", field="bonus")


def _each(state: State, player: int, orders: Mapping[str, Any], key: str, out: Parsed, strict: bool,
          parse: Callable[..., None], *extra: Any) -> None:
    """Parse every entry of the list ``orders[key]``; a value that is not a list is refused (when
    ``strict``; else an entry refused is skipped)."""
    entries = orders.get(key)
    if entries is None:
        return
    if not isinstance(entries, list):
        if strict:
            raise InvalidOrder("must be a list", field=key)
        return
    for i, ent in enumerate(entries):
        if strict:
            parse(state, player, ent, f"{key}[{i}]", out, *extra)
            continue
        try:
            parse(state, player, ent, f"{key}[{i}]", out, *extra)
        except (GameError, KeyError, TypeError, ValueError):
            pass


def _parse_deploy(state: State, player: int, ent: Any, f: str, out: Parsed) -> None:
    if not isinstance(ent, Mapping) or set(ent) - {"unit", "tile"}:
        raise InvalidOrder("a deployment is {\"unit\": id, \"tile\": {x, y}}", field=f)
    u = _own_unit(state, player, ent.get("unit"), f + ".unit")
    t = _tile(ent.get("tile"), f + ".tile", "a deployment's tile")
    b = state.board
    ut = UNIT_TYPES[u.type]
    if ut.domain == LAND:
        if not b.is_home_of(t, player):
            raise IllegalOrder(f"{own(state, u)}: land units deploy on your home island, and {at(t)} is not on it",
                               rule="A14", field=f + ".tile")
    elif ut.domain == SEA:
        if not b.is_sea(t) or not any(b.is_home_of(n, player) for n in b.neighbours(t)):
            raise IllegalOrder(f"{own(state, u)}: ships deploy on sea next to your home island, and {at(t)} is not "
                               "such a tile", rule="A14", field=f + ".tile")
    else:
        if not b.is_home_of(t, player):
            raise IllegalOrder(f"{own(state, u)}: aircraft deploy on your home island, and {at(t)} is not on it",
                               rule="A14", field=f + ".tile")
    out.deploy.append((u.id, t))


def _check_entry(ent: Any, f: str, what: str, keys: Any, strict: bool) -> None:
    """An entry of an orders list must be an object; when strict, with only the known ``keys``."""
    if type(ent) is not dict and not isinstance(ent, Mapping):  # (the isinstance of an ABC is slow)
        raise InvalidOrder(f"{what} is an object", field=f)
    if strict:
        for k in ent:
            if k not in keys:
                raise InvalidOrder(f"unknown field {k!r}", field=f"{f}.{k}")


def _parse_unit_order(state: State, player: int, ent: Any, f: str, out: Parsed, strict: bool,
                      sight: Any, paths: Callable[[], PathPlanner]) -> None:
    _check_entry(ent, f, "a unit order", _UNIT_KEYS, strict)
    u = _own_unit(state, player, ent.get("unit"), f + ".unit")
    if u.id in out.moves or u.id in out.actions:
        if strict:
            raise IllegalOrder(f"{own(state, u)} has an order already: at most one order per unit", rule="A18",
                               field=f + ".unit")
        return
    has_path, has_to, has_action = "path" in ent, "to" in ent, "action" in ent
    if has_path + has_to + has_action != 1:
        raise InvalidOrder(f"{own(state, u)}: give exactly one of path, to, action", field=f)
    ut = UNIT_TYPES[u.type]
    kind = "path" if has_path else "to" if has_to else "action"
    if strict and ut.is_flag and u.carrier is not None and kind != "action":
        raise IllegalOrder(f"{own(state, u)} is carried by an enemy: it cannot move", rule="A61",
                           field=f"{f}.{kind}")
    if kind != "action" and "target" in ent:
        raise InvalidOrder(f"{own(state, u)}: a target belongs to an action", field=f + ".target")
    if kind == "path":
        path = ent["path"]
        if not isinstance(path, list):
            raise InvalidOrder(f"{own(state, u)}: a path is a list of N, E, S, W", field=f + ".path")
        for k, d in enumerate(path):
            if d not in DELTA:
                raise InvalidOrder(f"{own(state, u)}: step {str(d)[:20]!r} is not one of N, E, S, W",
                                   field=f"{f}.path[{k}]")
        if strict:
            if ut.move == 0 and path:
                raise IllegalOrder(f"{own(state, u)} never moves", rule="A91", field=f + ".path")
            if len(path) > ut.move:
                tiles = "tile" if ut.move == 1 else "tiles"
                raise IllegalOrder(f"{own(state, u)} moves at most {ut.move} {tiles} a round; "
                                   f"the path has {len(path)} steps",
                                   rule="A18", field=f"{f}.path[{ut.move}]")
            t = u.tile
            for k, d in enumerate(path):
                t = step(t, d)
                if not state.board.in_bounds(t):
                    raise IllegalOrder(f"{own(state, u)}: step {k + 1} of the path leaves the board", rule="A91",
                                       field=f"{f}.path[{k}]")
        steps = list(map(str, path[: ut.move]))
        if steps:
            out.moves[u.id] = steps
        return
    if kind == "to":
        dest = _tile(ent["to"], f + ".to", "a destination")
        if ut.move == 0:
            raise IllegalOrder(f"{own(state, u)} never moves", rule="A91", field=f + ".to")
        planned = paths().plan(u, dest, ut.move)
        if planned is None:
            raise IllegalOrder(f"{own(state, u)}: {unreachable(state, player, u, dest)}", rule="A18",
                               field=f + ".to")
        if planned:
            out.moves[u.id] = planned
        return
    action = ent["action"]
    if action not in ACTIONS:
        raise InvalidOrder(f"{own(state, u)}: an action is one of {', '.join(ACTIONS)}", field=f + ".action")
    target = ent.get("target")
    if action == "outpost":
        if target is not None:
            raise InvalidOrder(f"{own(state, u)}: an outpost has no target", field=f + ".target")
        if strict:
            _check_outpost(state, player, u, f)
        out.actions[u.id] = ("outpost", None)
        return
    if not isinstance(target, str) or not target:
        raise InvalidOrder(f"{own(state, u)}: {action} needs a target (an enemy unit's id)", field=f + ".target")
    if strict:
        _check_targeted(state, player, u, str(action), target, f, sight)
    out.actions[u.id] = (str(action), target)


def _parse_units_lenient(state: State, player: int, entries: Any, out: Parsed, sight: Any,
                         paths: Callable[[], PathPlanner]) -> None:
    """The unit orders of a resolution (``strict=False``): what :func:`_parse_unit_order` makes of
    each entry, skipping the entries it refuses.  The usual entries, ``{"unit", "path"}`` with
    steps among N, E, S, W and ``{"unit", "to": {"x": int, "y": int}}``, are read here in short;
    any other goes through :func:`_parse_unit_order`."""
    if not isinstance(entries, list):
        return
    units = state.units
    moves, actions = out.moves, out.actions
    for i, ent in enumerate(entries):
        if type(ent) is dict and len(ent) == 2:
            uid = ent.get("unit")
            u = units.get(uid) if type(uid) is str and uid else None
            if u is not None and u.owner == player:
                if u.id in moves or u.id in actions:
                    continue  # at most one order per unit: the first one counts
                path = ent.get("path")
                if type(path) is list:
                    for d in path:
                        if type(d) is not str or d not in DELTA:
                            break
                    else:
                        steps = path[:_MOVE[u.type]]
                        if steps:
                            moves[u.id] = steps
                        continue
                else:
                    to = ent.get("to")
                    if type(to) is dict:
                        x, y = to.get("x"), to.get("y")
                        if type(x) is int and type(y) is int:
                            move = _MOVE[u.type]
                            planned = paths().plan(u, (x, y), move) if move else None
                            if planned:
                                moves[u.id] = planned
                            continue
        try:
            _parse_unit_order(state, player, ent, f"units[{i}]", out, False, sight, paths)
        except (GameError, KeyError, TypeError, ValueError):
            pass


def _check_outpost(state: State, player: int, u: Unit, f: str) -> None:
    ut = UNIT_TYPES[u.type]
    if ut.domain != LAND or ut.is_mine or ut.is_flag:
        raise IllegalOrder(f"{own(state, u)}: only a land unit (not a mine or flag) founds an outpost",
                           rule="A36", field=f + ".action")
    if u.carrier is not None or u.tile not in state.board.land:
        raise IllegalOrder(f"{own(state, u)}: an outpost needs the unit on land", rule="A36", field=f + ".action")
    if state.board.is_home_of(u.tile, player):
        raise IllegalOrder(f"{own(state, u)}: no outposts on your own home island", rule="A36",
                           field=f + ".action")
    if u.tile in state.outposts:
        raise IllegalOrder(f"{own(state, u)}: its tile already has an outpost", rule="A36", field=f + ".action")


def _check_targeted(state: State, player: int, u: Unit, action: str, target: str, f: str,
                    sight: Any) -> None:
    ut = UNIT_TYPES[u.type]
    if u.carrier is not None:
        raise IllegalOrder(f"{own(state, u)}: cargo takes no action", rule="A24", field=f + ".action")
    vis, watch = sight()
    tu = state.units.get(target)
    if tu is None or tu.owner == player or not sees_unit(state, player, tu, vis, watch):
        raise IllegalOrder(f"{own(state, u)}: no enemy unit you see now is called {echo(target)}",
                           rule=ACTION_RULE[action], field=f + ".target")
    if action in _RANGED:
        who, reach, only = _RANGED[action]
        if ut.id != who:
            raise IllegalOrder(f"{own(state, u)}: {only}", rule=ACTION_RULE[action], field=f + ".action")
        if dist(u.tile, tu.tile) > reach:
            raise IllegalOrder(f"{own(state, u)}: {enemy(state, player, tu)} is beyond distance {reach}",
                               rule=ACTION_RULE[action], field=f + ".target")
    elif action == "bombard":
        if not ut.is_warship:
            raise IllegalOrder(f"{own(state, u)}: only a warship bombards", rule="A37", field=f + ".action")
        if dist(u.tile, tu.tile) != BOMBARD_RANGE or tu.tile not in state.board.land:
            raise IllegalOrder(f"{own(state, u)}: {enemy(state, player, tu)} is not on an adjacent land tile",
                               rule="A37", field=f + ".target")
        if UNIT_TYPES[tu.type].domain == "air":
            raise IllegalOrder(f"{own(state, u)}: {enemy(state, player, tu)} is an aircraft, not a land unit",
                               rule="A37",
                               field=f + ".target")


#: the actions with a reach (A38, A39): the one unit type that takes it, its reach, the refusal
#: for another type
_RANGED: dict[str, tuple[str, int, str]] = {"reveal": ("spy", REVEAL_RANGE, "only a spy reveals ranks"),
                                            "strike": ("fighter", STRIKE_RANGE, "only a fighter strikes")}


def _check_carriers(state: State, player: int, out: Parsed, units: list[Any]) -> None:
    """A24/A91: cargo moves and boardings only while the carrier holds still; A19."""
    index: dict[str, int] = {}
    for i, ent in enumerate(units):
        if isinstance(ent, Mapping) and isinstance(ent.get("unit"), str):
            index.setdefault(ent["unit"], i)
    for uid, path in out.moves.items():
        u = state.units[uid]
        f = f"units[{index.get(uid, 0)}]"
        if u.carrier is not None and u.carrier in out.moves:
            raise IllegalOrder(f"{own(state, u)}: cargo cannot step while its carrier moves",
                               rule="A24", field=f + ".path[0]")
        ut = UNIT_TYPES[u.type]
        if ut.domain != LAND or ut.is_flag:
            continue
        t = u.tile
        for k, d in enumerate(path):
            t = step(t, d)
            c = _carrier_on(state, player, t)
            if c is not None and c.id != u.carrier:
                if c.id in out.moves:
                    raise IllegalOrder(f"{own(state, u)}: boarding your {type_name(c.type)} at {at(c.tile)} "
                                       "needs it to have no move order",
                                       rule="A24", field=f"{f}.path[{k}]")
                break


def _check_affordable(state: State, player: int, out: Parsed) -> None:
    need = {r: 0 for r in RESOURCES}
    for kind, _ in out.actions.values():
        for r, n in ACTION_COST.get(kind, {}).items():
            need[r] += n
    for b in out.builds:
        for r, n in UNIT_TYPES[b.type].cost.items():
            need[r] += n
    stock = state.pstates[player].stock
    for r in RESOURCES:
        if need[r] > stock[r]:
            raise IllegalOrder(f"builds, outposts and strikes need {need[r]} {r}, you have {stock[r]}",
                               rule="A20", field="builds")


def _parse_build(state: State, player: int, ent: Any, f: str, out: Parsed, strict: bool,
                 sight: Any) -> None:
    _check_entry(ent, f, "a build", _BUILD_KEYS, strict)
    typ = ent.get("type")
    if not isinstance(typ, str) or typ not in UNIT_TYPES or not UNIT_TYPES[typ].buildable:
        raise InvalidOrder(f"unknown or unbuildable unit type {typ!r}", field=f + ".type")
    ut = UNIT_TYPES[typ]
    b = Build(typ)
    if ut.is_mine:
        if ent.get("tile") is None:
            raise InvalidOrder(f"a {ut.name} build names its tile", field=f + ".tile")
        b.tile = _tile(ent.get("tile"), f + ".tile", f"a {ut.name} build's tile")
    elif strict and ent.get("tile") is not None:
        raise InvalidOrder(f"a {ut.name} build takes no tile", field=f + ".tile")
    if typ == "raft":
        ship = ent.get("ship")
        if not isinstance(ship, str) or not ship:
            raise InvalidOrder("a raft build names its ship", field=f + ".ship")
        b.ship = ship
    elif strict and ent.get("ship") is not None:
        raise InvalidOrder(f"a {ut.name} build takes no ship", field=f + ".ship")
    if strict:
        _check_build(state, player, b, f, out, sight)
    out.builds.append(b)


def _check_build(state: State, player: int, b: Build, f: str, out: Parsed, sight: Any) -> None:
    ut = UNIT_TYPES[b.type]
    board = state.board
    if ut.limit is not None:
        have = sum(1 for u in state.units.values() if u.owner == player and u.type == b.type)
        have += sum(1 for x in out.builds if x.type == b.type)
        if have >= ut.limit:
            raise IllegalOrder(f"at most {ut.limit} {ut.name} per player, and you have {have} (living or being built)",
                               rule="A42", field=f + ".type")
    if ut.is_mine:
        assert b.tile is not None
        t = b.tile
        vis, watch = sight()
        seen = [u for u in state.units.values() if u.tile == t and u.carrier is None
                and sees_unit(state, player, u, vis, watch)]
        if b.type == "landmine":
            if t not in board.land or state.control.get(t) != player:
                raise IllegalOrder("a land mine goes on a land tile you control", rule="A42", field=f + ".tile")
        else:
            if not board.is_sea(t) or not any(state.control.get(n) == player for n in board.neighbours(t)):
                raise IllegalOrder("a sea mine goes on a sea tile next to land you control", rule="A42",
                                   field=f + ".tile")
        if seen or any(x.tile == t for x in out.builds):
            raise IllegalOrder("the mine's tile is not empty", rule="A42", field=f + ".tile")
    if b.type == "raft":
        s = state.units.get(b.ship or "")
        if s is None or s.owner != player or not UNIT_TYPES[s.type].is_ship or s.type == "raft":
            raise IllegalOrder(f"no ship of yours is called {echo(b.ship)}", rule="A33", field=f + ".ship")
        if s.raft or any(x.ship == s.id for x in out.builds):
            raise IllegalOrder(f"{own(state, s)} already has a raft", rule="A33", field=f + ".ship")


# (OUTPOST_COST ... STRIKE_RANGE: the action rules of engine.archipelago.rules, which the web client's
# tables read here)
__all__ = ["OUTPOST_COST", "REVEAL_RANGE", "STRIKE_COST", "STRIKE_RANGE", "Build", "Parsed", "PathPlanner",
           "parse_orders", "passable", "plan_path", "unreachable"]
