"""`archipelago play CODE` for Archipelago: the screen and the round's command prompt.

The screen (:func:`render`): the explored map from ``view.rows`` with its coordinates (x across, y
down, (0, 0) top left, as in the spec), own units drawn by a letter or digit, enemies in sight by a
capital letter, the enemy log, bases and outposts; then a legend: own units (label, id, type, tile,
cargo), enemies in sight (owner, shown domain, type once revealed, tile), the enemy log (owner, last
tile, seen N rounds ago, type if known), stock, score, every seat's public figures (A84), pending
offers, this round's chat and the last round's events (A85).

The prompt takes one command a line (:func:`parse_command`; ``help`` lists them).  Orders build up a
:class:`Draft` of the round's orders (A18: one order per unit, builds, the bonus choice; round 0:
deployments), submitted by ``done`` (or ``draft``, which keeps the prompt open); chat, bank and trade
commands are executed at once (A52, A53).  A unit is named by its label on the map or by its id (or a
unique start of its id); an enemy target by its capital letter or id.  A bad command is explained and
asked again; a refusal of the server is printed as the server words it (it names the field and rule).

The game-neutral machinery (the Watch stream kept open all game, cancellable input, abandoning the
prompt when the round closes) is :mod:`client.play`'s.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient as Client
from client.errors import ApiError
from client.play import (
    MOVED_ON,
    SUBMITTED,
    EmptyLine,
    Feed,
    Lines,
    RoundUI,
    Screen,
    answer,
    deadline_label,
)
from engine.archipelago.units import RESOURCES, UNIT_TYPES

DIRECTIONS = "NESW"
ACTIONS = ("outpost", "bombard", "strike", "reveal")
OWN_LABELS = "abcdefghijklmnopqrstuvwxyz0123456789"
ENEMY_LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
OWN_MORE = "&"  # an own unit beyond the labels
ENEMY_MORE = "$"  # an enemy in sight beyond the labels
LOG_MARK = "*"  # an enemy seen before, where it was last seen (A83)
OWN_BASE, OTHER_BASE = "@", "%"
OWN_OUTPOST, OTHER_OUTPOST = "+", "="
KEY = (f"a-z 0-9 your units · A-Z enemies in sight · {LOG_MARK} an enemy last seen there · # land · . sea · "
       f"? unexplored\n{OWN_BASE} your base · {OTHER_BASE} another base · {OWN_OUTPOST} your outpost · "
       f"{OTHER_OUTPOST} another's outpost")
EVENT_KINDS_SHOWN_LIVE = frozenset({"offer", "trade", "offer_declined", "offer_withdrawn", "offer_closed"})

HELP = f"""\
One command a line. <unit>: its letter or digit on the map, or its id; <target>: an enemy's capital
letter or id; <x> <y>: x across, y down (also "x,y").
Orders for this round (they build up until you submit them):
  move <unit> N E E            a path of steps N, E, S, W, at most the unit's move (A18)
  goto <unit> <x> <y>          a destination: the server plans the path over explored terrain (A18)
  act <unit> outpost           found an outpost on the unit's tile: 1 food, 1 wood (A36)
  act <unit> bombard <target>  shore bombardment by a warship (A37)
  act <unit> strike <target>   air strike by a fighter: 1 fuel (A38)
  act <unit> reveal <target>   a spy reveals a unit's type (A39)
  stay <unit>                  drop the unit's order (it stays where it is)
  build <type> [<x> <y>|<ship>]  a unit (A42): a mine names its tile, a raft its ship ('types' lists them)
  bonus <resource>             the activity-bonus choice (A51): {', '.join(RESOURCES)}
  deploy <unit> <x> <y>        round 0: where the unit starts (A14); units left out keep the default layout
  show                         the orders so far
  clear                        forget them
  draft                        submit them as a draft and keep planning (it stands if the deadline comes first)
  done                         submit them: you are done for this round
At once:
  chat <text>                  to everyone; chat @<seat> <text> to one player (A53)
  bank <give> <get> [times]    trade with the bank: 4 for 1, or 2 for 1 with a port (A52)
  offer <seat|all> give <res>=<n>,... get <res>=<n>,...   a trade offer (A53), e.g. offer 0 give wood=2 get iron=1
  accept <offer> · decline <offer> · withdraw <offer>
  map                          the screen again, as it is now
  types                        the unit types, their costs and moves
  help                         this list"""


# ---------------------------------------------------------------------------------------- the view
def _xy(t: A.Tile) -> str:
    return f"({t.x},{t.y})"


def _num(v: Any) -> Any:
    """Struct numbers are floats: whole ones shown as ints."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _goods(goods: Mapping[str, Any]) -> str:
    parts = [f"{_num(goods[r])} {r}" for r in RESOURCES if goods.get(r)]
    parts += [f"{_num(n)} {r}" for r, n in goods.items() if r not in RESOURCES]
    return " + ".join(parts) or "nothing"


def _stock(s: A.Stock) -> str:
    return " · ".join(f"{r} {getattr(s, r)}" for r in RESOURCES)


def _type_name(type_id: str) -> str:
    t = UNIT_TYPES.get(type_id)
    return f"{t.name} ({type_id})" if t is not None else type_id


@dataclass
class Marks:
    """The labels of the screen: own units a-z then 0-9, enemies in sight A-Z (in the view's order,
    by id), the same for the screen and the commands."""

    own: dict[str, str] = field(default_factory=dict)  # label -> unit id
    own_label: dict[str, str] = field(default_factory=dict)  # unit id -> label
    enemy: dict[str, str] = field(default_factory=dict)
    enemy_label: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, av: A.ArchipelagoView) -> Marks:
        m = cls()
        for label, u in zip(OWN_LABELS, av.units, strict=False):
            m.own[label], m.own_label[u.id] = u.id, label
        for label, e in zip(ENEMY_LABELS, av.enemies, strict=False):
            m.enemy[label], m.enemy_label[e.id] = e.id, label
        return m


@dataclass
class Context:
    """What the commands refer to: the current view and its labels."""

    view: game_pb2.GetViewResponse
    marks: Marks

    @classmethod
    def of(cls, view: game_pb2.GetViewResponse) -> Context:
        return cls(view, Marks.of(view.archipelago))

    @property
    def av(self) -> A.ArchipelagoView:
        return self.view.archipelago

    def who(self, seat: int) -> str:
        if seat == self.view.you:
            return "you"
        nick = next((p.nickname for p in self.view.players if p.seat == seat), "")
        return f"seat {seat} ({nick})" if nick else f"seat {seat}"

    def unit_name(self, uid: str) -> str:
        """'b (c4049d6f9a, Dvora)' for an own unit, 'A (1234567890)' for an enemy in sight."""
        u = next((u for u in self.av.units if u.id == uid), None)
        if u is not None:
            label = self.marks.own_label.get(uid, OWN_MORE)
            name = UNIT_TYPES[u.type].name if u.type in UNIT_TYPES else u.type
            return f"{label} ({uid}, {name})"
        if uid in self.marks.enemy_label:
            return f"{self.marks.enemy_label[uid]} ({uid})"
        return uid

    def own_unit(self, word: str, what: str = "unit") -> A.OwnUnit:
        """An own unit by its label, id or the unique start of its id (2 characters or more)."""
        uid = self.marks.own.get(word)
        if uid is None:
            ids = [u.id for u in self.av.units if u.id == word]
            if not ids and len(word) >= 2:
                ids = [u.id for u in self.av.units if u.id.startswith(word.lower())]
            if len(ids) > 1:
                raise ValueError(f"{word!r} is the start of several of your units' ids: {', '.join(ids)}")
            if not ids:
                hint = " (that is an enemy: yours are a-z, 0-9)" if word in self.marks.enemy else ""
                raise ValueError(f"no {what} {word!r} of yours{hint}; use its letter on the map or its id")
            uid = ids[0]
        return next(u for u in self.av.units if u.id == uid)

    def enemy_unit(self, word: str) -> str:
        """An enemy unit's id: its capital letter, its id, or the unique start of an id in sight or in
        the enemy log."""
        if word in self.marks.enemy:
            return self.marks.enemy[word]
        known = [e.id for e in self.av.enemies] + [e.id for e in self.av.enemy_log]
        if word in known:
            return word
        starts = [i for i in known if len(word) >= 2 and i.startswith(word.lower())]
        if len(starts) == 1:
            return starts[0]
        if word in self.marks.own or any(u.id == word for u in self.av.units):
            raise ValueError(f"{word!r} is one of your units, not an enemy")
        raise ValueError(f"no enemy unit {word!r} in sight; use its capital letter on the map or its id")

    def tile(self, xs: str, ys: str, what: str) -> A.Tile:
        try:
            x, y = int(xs), int(ys)
        except ValueError:
            raise ValueError(f"{what}: x and y are whole numbers, got {xs!r} {ys!r}") from None
        w, h = self.av.width, self.av.height
        if w and h and not (0 <= x < w and 0 <= y < h):
            raise ValueError(f"{what}: ({x},{y}) is off the board (x 0-{w - 1}, y 0-{h - 1})")
        return A.Tile(x=x, y=y)

    def seat(self, word: str, what: str) -> int:
        """A seat by number or nickname."""
        if word.isdigit():
            seat = int(word)
            if not 0 <= seat < max(self.view.seats, self.av.players, 1):
                raise ValueError(f"{what}: no seat {seat} (seats are 0-{max(self.view.seats, self.av.players) - 1})")
            return seat
        for p in self.view.players:
            if p.nickname.lower() == word.lower():
                return p.seat
        raise ValueError(f"{what}: {word!r} is neither a seat number nor a player's nickname")


def render_map(av: A.ArchipelagoView, marks: Marks) -> list[str]:
    """The explored map with coordinates: a tens line and a units line above, y on both sides."""
    rows = [list(r) for r in av.rows]
    if not rows:
        return []
    you = av.player

    def put(t: A.Tile, ch: str) -> None:
        if 0 <= t.y < len(rows) and 0 <= t.x < len(rows[t.y]):
            rows[t.y][t.x] = ch

    for b in av.bases:
        put(b.tile, OWN_BASE if b.seat == you else OTHER_BASE)
    for o in av.outposts:
        put(o.tile, OWN_OUTPOST if o.owner == you else OTHER_OUTPOST)
    for g in av.enemy_log:
        put(g.tile, LOG_MARK)
    for e in av.enemies:
        put(e.tile, marks.enemy_label.get(e.id, ENEMY_MORE))
    for u in av.units:
        if not u.HasField("carrier"):  # cargo rides in its carrier (and a carried flag with its bearer)
            put(u.tile, marks.own_label.get(u.id, OWN_MORE))
    width = max(len(r) for r in rows)
    tens = "".join(str(x // 10 % 10) if x % 10 == 0 else " " for x in range(width)).rstrip()
    units = "".join(str(x % 10) for x in range(width))
    lines = [f"    {tens}", f"    {units}"]
    lines += [f"{y:>3} {''.join(r)} {y}" for y, r in enumerate(rows)]
    return lines


def describe_event(ev: Mapping[str, Any], ctx: Context) -> str:
    """One line for an event of the last round (A85), e.g. 'fight at (4,5): ...'."""
    kind = str(ev.get("kind", "event"))
    head = kind.replace("_", " ")
    if isinstance(ev.get("tile"), Mapping):
        t = ev["tile"]
        head += f" at ({_num(t.get('x', 0))},{_num(t.get('y', 0))})"
    parts: list[str] = []
    for u in ev.get("units") or []:
        if not isinstance(u, Mapping):
            continue
        uid = str(u.get("id", "?"))
        owner = _num(u.get("owner", -1))
        if owner == ctx.view.you:
            text = f"your {_type_name(str(u['type']))} {ctx.unit_name(uid)}" if "type" in u \
                else f"your unit {ctx.unit_name(uid)}"
        else:
            what = _type_name(str(u["type"])) if "type" in u else f"{u.get('domain', '')} unit".strip()
            text = f"{ctx.who(int(owner))}'s {what} {ctx.unit_name(uid)}"
        if u.get("died"):
            text += " (destroyed)"
        if "winner" in ev and ev["winner"] == uid:
            text += " (won)"
        parts.append(text)
    rest = sorted(ev.items(), key=lambda kv: (kv[0] != "type", kv[0] == "reason"))  # the type first, why last
    for k, v in rest:
        if k in ("kind", "tile", "units", "winner") or (k == "player" and _num(v) == ctx.view.you):
            continue
        if k in ("player", "owner", "from", "to") and isinstance(v, (int, float)):
            parts.append(f"{k} {ctx.who(int(v))}")
        elif k in ("by", "ship", "carrier") and isinstance(v, str):
            parts.append(f"{k} {ctx.unit_name(v)}")
        elif k == "type" and isinstance(v, str):
            parts.append(_type_name(v))
        elif isinstance(v, Mapping):
            parts.append(f"{k} {_goods(v)}")
        elif isinstance(v, list):
            parts.append(f"{k} {', '.join(str(_num(x)) for x in v) or 'none'}")
        else:
            parts.append(f"{k} {_num(v)}")
    return f"{head}: {'; '.join(parts)}" if parts else head


def render(view: game_pb2.GetViewResponse) -> str:
    """The whole Archipelago screen for ``view``."""
    if not view.HasField("archipelago"):
        return f"Archipelago — no map yet (the game has not started; code {view.code})"
    av = view.archipelago
    ctx = Context.of(view)
    m = ctx.marks
    out = [f"Archipelago · round {av.round} of {av.max_rounds} · first to {av.target} points wins · "
           f"you are seat {view.you}"]
    out += render_map(av, m)
    out.append(KEY)
    bonus = f" · bonus choice {av.bonus}" if av.HasField("bonus") else ""
    out.append(f"stock: {_stock(av.stock)}{bonus} · score {av.score} · flags captured {av.flags_captured}")

    out.append("your units:")
    by_id = {u.id: u for u in av.units}
    for u in av.units:
        line = f"  {m.own_label.get(u.id, OWN_MORE)}  {u.id}  {_type_name(u.type):<22} {_xy(u.tile)}"
        if u.HasField("carrier"):
            carrier = u.carrier
            line += f"  in {ctx.unit_name(carrier)}" if carrier in by_id \
                else f"  carried by the enemy {ctx.unit_name(carrier)}"
        if u.cargo:
            line += "  cargo: " + ", ".join(ctx.unit_name(c) for c in u.cargo)
        if u.HasField("flag"):
            line += f"  carries the flag {u.flag}"
        if u.raft:
            line += "  with a raft"
        out.append(line)
    if not av.units:
        out.append("  none")
    if av.enemies:
        out.append("enemies in sight:")
        for e in av.enemies:
            typ = f"  {_type_name(e.type)}" if e.HasField("type") else ""
            out.append(f"  {m.enemy_label.get(e.id, ENEMY_MORE)}  {e.id}  {ctx.who(e.owner)}  {e.domain:<4} "
                       f"{_xy(e.tile)}{typ}")
    if av.enemy_log:
        out.append("enemy log (not in sight now):")
        for g in av.enemy_log:
            ago = "this round" if g.rounds_ago == 0 else \
                f"seen {g.rounds_ago} round{'s' if g.rounds_ago != 1 else ''} ago"
            typ = f"  {_type_name(g.type)}" if g.HasField("type") else ""
            out.append(f"  {LOG_MARK}  {g.id}  {ctx.who(g.owner)}  last at {_xy(g.tile)}, {ago} (round {g.round})"
                       f"{typ}")
    bases = [f"{OWN_BASE} yours {_xy(b.tile)}" if b.seat == view.you
             else f"{OTHER_BASE} {ctx.who(b.seat)} {_xy(b.tile)}" for b in av.bases]
    if bases:
        out.append("bases: " + " · ".join(bases))
    if av.outposts:
        out.append("outposts: " + " · ".join(
            f"{OWN_OUTPOST} yours {_xy(o.tile)}" if o.owner == view.you
            else f"{OTHER_OUTPOST} {ctx.who(o.owner)} {_xy(o.tile)}" for o in av.outposts))
    control = {(t.x, t.y) for t in av.control}
    if av.resource_tiles:
        groups: dict[str, list[str]] = {}
        for rt in av.resource_tiles:
            mark = "✓" if (rt.tile.x, rt.tile.y) in control else ""
            groups.setdefault(rt.resource, []).append(_xy(rt.tile) + mark)
        out.append("resource tiles (✓ yours): " + " · ".join(f"{r} {' '.join(ts)}" for r, ts in groups.items()))
    if av.ports:
        out.append("ports: " + " · ".join(f"{p.resource} {_xy(p.tile)}{'✓' if (p.tile.x, p.tile.y) in control else ''}"
                                          for p in av.ports))

    out.append("players:")
    info = {p.seat: p for p in view.players}
    for s in av.seats:
        p = info.get(s.seat)
        name = p.nickname if p is not None else ""
        you = " (you)" if s.seat == view.you else ""
        flags = []
        if p is not None:
            flags.append("done" if p.submitted else "planning")
            if not p.connected:
                flags.append("not connected")
            if p.autopilot:
                flags.append("autopilot")
        out.append(f"  seat {s.seat} {name}{you}: score {s.score}, {s.resource_total} resources"
                   + (f" · {', '.join(flags)}" if flags and view.status == lobby_pb2.GAME_STATUS_RUNNING else ""))
    if av.offers:
        out.append("offers:")
        for o in av.offers:
            to = ctx.who(o.to_seat) if o.HasField("to_seat") else "everyone"
            out.append(f"  {o.id}  {ctx.who(o.from_seat)} → {to}: gives {_goods(o.give)} for {_goods(o.get)}")
    if av.chat:
        out.append(f"chat (round {av.round}):")
        for c in av.chat:
            to = ctx.who(c.to_seat) if c.HasField("to_seat") else "all"
            out.append(f"  {ctx.who(c.from_seat)} → {to}: {c.text}")
    if av.events:
        out.append("last round:")
        for ev in av.events:
            out.append("  " + describe_event(json_format.MessageToDict(ev), ctx))
    if av.HasField("outcome") and av.outcome.scores:
        out.append("final scores: " + ", ".join(f"{ctx.who(s)} {n}" for s, n in enumerate(av.outcome.scores)))
    return "\n".join(out)


def unit_types() -> str:
    """The buildable unit types (for ``types``)."""
    lines = ["type          name             domain  strength  move  sight  cost"]
    for t in UNIT_TYPES.values():
        if not t.buildable:
            continue
        strength = "–" if t.strength is None else str(t.strength)
        cost = ", ".join(f"{n} {r}" for r, n in t.cost.items())
        extra = f"  carries {t.capacity}" if t.capacity else ""
        lines.append(f"{t.id:<13} {t.name:<16} {t.domain:<7} {strength:>8}  {t.move:>4}  {t.sight:>5}  {cost}{extra}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- commands
@dataclass
class UnitCmd:
    """A unit's order for the round (move, goto, act: A18)."""

    order: A.UnitOrder


@dataclass
class StayCmd:
    unit: str


@dataclass
class BuildCmd:
    build: A.Build


@dataclass
class BonusCmd:
    resource: str


@dataclass
class DeployCmd:
    deployment: A.Deployment


@dataclass
class ActionCmd:
    """An immediate action: ``kind`` names the ActRequest member (chat, bank, offer, accept, ...)."""

    kind: str
    message: Message


@dataclass
class ControlCmd:
    """show, clear, done, draft, map, types or help."""

    name: str


Command = UnitCmd | StayCmd | BuildCmd | BonusCmd | DeployCmd | ActionCmd | ControlCmd
CONTROLS = ("show", "clear", "done", "draft", "map", "types", "help")
ALIASES = {"?": "help", "orders": "show", "submit": "done", "look": "map", "say": "chat"}


def _resource(word: str, what: str) -> str:
    r = word.lower()
    if r not in RESOURCES:
        raise ValueError(f"{what}: {word!r} is not a resource ({', '.join(RESOURCES)})")
    return r


def _count(word: str, what: str) -> int:
    if not word.isdigit() or int(word) < 1:
        raise ValueError(f"{what}: expected a whole number ≥ 1, got {word!r}")
    return int(word)


def _tile_args(args: list[str], ctx: Context, what: str) -> A.Tile:
    """'<x> <y>' or 'x,y' (also '(x,y)')."""
    words = " ".join(args).replace("(", " ").replace(")", " ").replace(",", " ").split()
    if len(words) != 2:
        raise ValueError(f"{what}: give the tile as <x> <y>, e.g. {what} … 5 7")
    return ctx.tile(words[0], words[1], what)


def _steps(args: list[str]) -> list[str]:
    steps: list[str] = []
    for word in args:
        for ch in word.replace(",", ""):
            if ch.upper() not in DIRECTIONS:
                raise ValueError(f"move: step {ch!r} is not one of N, E, S, W")
            steps.append(ch.upper())
    return steps


def _goods_arg(text: str, what: str) -> dict[str, int]:
    """'wood=2,food=1' (also 'wood=2 food', 'iron:1'; a bare resource is 1 of it)."""
    goods: dict[str, int] = {}
    for part in text.replace(",", " ").split():
        res, sep, n = part.partition("=") if "=" in part else part.partition(":")
        r = _resource(res, what)
        count = _count(n, what) if sep else 1
        if r in goods:
            raise ValueError(f"{what}: {r} named twice")
        goods[r] = count
    if not goods:
        raise ValueError(f"{what}: name the goods, e.g. wood=2,food=1")
    return goods


def _build_types() -> dict[str, str]:
    """Unit type ids and single-word names (lowercase, letters and digits only) -> type id."""
    out: dict[str, str] = {}
    for t in UNIT_TYPES.values():
        out[re.sub(r"[^a-z0-9]", "", t.name.lower())] = t.id
    for t in UNIT_TYPES.values():
        out[t.id] = t.id
    return out


BUILD_TYPES = _build_types()


def parse_command(text: str, ctx: Context) -> Command:
    """One line of the prompt.  Raises EmptyLine for a blank line and ValueError (saying what is
    wrong and how it is written) for anything else it cannot take."""
    words = text.split()
    if not words:
        raise EmptyLine("nothing entered")
    verb = ALIASES.get(words[0].lower(), words[0].lower())
    args = words[1:]
    setup = ctx.av.round == 0 and ctx.view.HasField("archipelago")
    if verb in CONTROLS:
        return ControlCmd(verb)

    if verb in ("move", "goto", "act", "build") and setup:
        raise ValueError(f"round 0 is for deployment (A13): use deploy <unit> <x> <y>, then done — not {verb}")
    if verb == "move":
        if not args:
            raise ValueError("move <unit> N E E ...: name the unit and its steps")
        u = ctx.own_unit(args[0])
        steps = _steps(args[1:])
        if not steps:
            raise ValueError("move: give the steps, e.g. move a N E (or goto <unit> <x> <y>)")
        ut = UNIT_TYPES.get(u.type)
        if ut is not None and ut.move == 0:
            raise ValueError(f"move: {ctx.unit_name(u.id)} never moves (A91)")
        if ut is not None and len(steps) > ut.move:
            raise ValueError(f"move: {ctx.unit_name(u.id)} moves at most {ut.move} tile(s) a round (A18); "
                             f"{len(steps)} steps given")
        return UnitCmd(A.UnitOrder(unit=u.id, path=steps))
    if verb == "goto":
        if not args:
            raise ValueError("goto <unit> <x> <y>: name the unit and the tile")
        u = ctx.own_unit(args[0])
        return UnitCmd(A.UnitOrder(unit=u.id, to=_tile_args(args[1:], ctx, "goto")))
    if verb == "act":
        if len(args) < 2:
            raise ValueError("act <unit> outpost|bombard|strike|reveal [target]")
        u = ctx.own_unit(args[0])
        action = args[1].lower()
        if action not in ACTIONS:
            raise ValueError(f"act: {args[1]!r} is not an action; one of {', '.join(ACTIONS)}")
        if action == "outpost":
            if len(args) > 2:
                raise ValueError("act: an outpost has no target (act <unit> outpost)")
            return UnitCmd(A.UnitOrder(unit=u.id, action=action))
        if len(args) != 3:
            raise ValueError(f"act: {action} needs one target: act <unit> {action} <target>")
        return UnitCmd(A.UnitOrder(unit=u.id, action=action, target=ctx.enemy_unit(args[2])))
    if verb in ("stay", "cancel"):
        if len(args) != 1:
            raise ValueError("stay <unit>: drops that unit's order")
        return StayCmd(ctx.own_unit(args[0]).id)
    if verb == "build":
        if not args:
            raise ValueError("build <type> [<x> <y> | <ship>] ('types' lists the unit types)")
        key = re.sub(r"[^a-z0-9]", "", args[0].lower())
        typ = BUILD_TYPES.get(key)
        if typ is None or not UNIT_TYPES[typ].buildable:
            raise ValueError(f"build: {args[0]!r} is not a unit type you can build ('types' lists them)")
        if typ in ("landmine", "seamine"):
            return BuildCmd(A.Build(type=typ, tile=_tile_args(args[1:], ctx, "build")))
        if typ == "raft":
            if len(args) != 2:
                raise ValueError("build raft <ship>: name the ship that gets the raft (A33)")
            return BuildCmd(A.Build(type=typ, ship=ctx.own_unit(args[1], "ship").id))
        if len(args) > 1:
            raise ValueError(f"build: a {UNIT_TYPES[typ].name} takes no tile or ship (it appears at your base, A42)")
        return BuildCmd(A.Build(type=typ))
    if verb == "bonus":
        if len(args) != 1:
            raise ValueError(f"bonus <resource>: one of {', '.join(RESOURCES)}")
        return BonusCmd(_resource(args[0], "bonus"))
    if verb == "deploy":
        if not setup:
            raise ValueError("deploy: deployment happens in round 0 only (A13)")
        if not args:
            raise ValueError("deploy <unit> <x> <y>")
        u = ctx.own_unit(args[0])
        return DeployCmd(A.Deployment(unit=u.id, tile=_tile_args(args[1:], ctx, "deploy")))

    if verb == "chat":
        rest = text.split(None, 1)[1].strip() if len(words) > 1 else ""
        to: int | None = None
        if rest.startswith("@"):
            target, _, rest = rest[1:].partition(" ")
            rest = rest.strip()
            if target.lower() not in ("all", "everyone"):
                to = ctx.seat(target, "chat")
        if not rest:
            raise ValueError("chat <text>, or chat @<seat> <text> to one player")
        return ActionCmd("chat", game_pb2.ChatAction(text=rest, to=to))
    if verb == "bank":
        if len(args) not in (2, 3):
            raise ValueError("bank <give> <get> [times], e.g. bank wood iron (4 wood for 1 iron, A52)")
        give, get = _resource(args[0], "bank"), _resource(args[1], "bank")
        if give == get:
            raise ValueError("bank: give and get must differ")
        times = _count(args[2], "bank") if len(args) == 3 else 1
        return ActionCmd("bank", A.BankAction(give=give, get=get, times=times))
    if verb == "offer":
        usage = "offer <seat|all> give <res>=<n>,... get <res>=<n>,..., e.g. offer 0 give wood=2 get iron=1"
        if not args:
            raise ValueError(usage)
        rest = " ".join(args[1:])
        found = re.fullmatch(r"\s*give\s+(.+?)\s+get\s+(.+?)\s*", rest, re.IGNORECASE) or \
            re.fullmatch(r"\s*get\s+(.+?)\s+give\s+(.+?)\s*", rest, re.IGNORECASE)
        if found is None:
            raise ValueError(usage)
        give_text, get_text = (found[1], found[2]) if rest.strip().lower().startswith("give") else (found[2], found[1])
        offer = A.OfferAction(give=_goods_arg(give_text, "offer"), get=_goods_arg(get_text, "offer"))
        if args[0].lower() not in ("all", "everyone", "*"):
            seat = ctx.seat(args[0], "offer")
            if seat == ctx.view.you:
                raise ValueError("offer: that is your own seat")
            offer.to = seat
        return ActionCmd("offer", offer)
    if verb in ("accept", "decline", "withdraw"):
        if len(args) != 1:
            raise ValueError(f"{verb} <offer>: the offer's id, e.g. {verb} o3")
        msg: Message = {"accept": A.AcceptAction, "decline": A.DeclineAction,
                        "withdraw": A.WithdrawAction}[verb](offer=args[0])
        return ActionCmd(verb, msg)
    raise ValueError(f"unknown command {words[0]!r} (help lists the commands)")


# ---------------------------------------------------------------------------------------- the draft
class Draft:
    """The round's orders as they are built up (A18: the last order given to a unit stands)."""

    def __init__(self) -> None:
        self.units: dict[str, A.UnitOrder] = {}
        self.builds: list[A.Build] = []
        self.bonus = ""
        self.deploy: dict[str, A.Tile] = {}

    @classmethod
    def of(cls, orders: A.ArchipelagoOrders) -> Draft:
        """The draft that continues a submission (the pending orders of this round)."""
        d = cls()
        for o in orders.units:
            d.units[o.unit] = o
        d.builds = list(orders.builds)
        d.bonus = orders.bonus
        for dep in orders.deploy:
            d.deploy[dep.unit] = dep.tile
        return d

    def __len__(self) -> int:
        return len(self.units) + len(self.builds) + bool(self.bonus) + len(self.deploy)

    def clear(self) -> None:
        self.units.clear()
        self.builds.clear()
        self.bonus = ""
        self.deploy.clear()

    def orders(self) -> A.ArchipelagoOrders:
        return A.ArchipelagoOrders(units=list(self.units.values()), builds=self.builds, bonus=self.bonus,
                                   deploy=[A.Deployment(unit=u, tile=t) for u, t in self.deploy.items()])

    def apply(self, cmd: Command, ctx: Context) -> str:
        """Take an order command; returns what the player is told."""
        if isinstance(cmd, UnitCmd):
            self.units.pop(cmd.order.unit, None)  # a replaced order goes to the end, as given
            self.units[cmd.order.unit] = cmd.order
            return describe_order(cmd.order, ctx)
        if isinstance(cmd, StayCmd):
            had = self.units.pop(cmd.unit, None)
            return f"{ctx.unit_name(cmd.unit)}: stays" + ("" if had else " (it had no order)")
        if isinstance(cmd, BuildCmd):
            self.builds.append(cmd.build)
            return f"build #{len(self.builds)}: {describe_build(cmd.build, ctx)}"
        if isinstance(cmd, BonusCmd):
            self.bonus = cmd.resource
            return f"bonus choice: {cmd.resource} (A51)"
        if isinstance(cmd, DeployCmd):
            self.deploy[cmd.deployment.unit] = cmd.deployment.tile
            return f"{ctx.unit_name(cmd.deployment.unit)}: deploy at {_xy(cmd.deployment.tile)}"
        raise TypeError(f"not an order: {cmd!r}")

    def describe(self, ctx: Context) -> list[str]:
        if not len(self):
            return ["no orders yet (units without an order stay; round 0: the default layout, A15)"]
        lines = [f"  {describe_order(o, ctx)}" for o in self.units.values()]
        lines += [f"  build #{i}: {describe_build(b, ctx)}" for i, b in enumerate(self.builds, 1)]
        if self.bonus:
            lines.append(f"  bonus choice: {self.bonus}")
        lines += [f"  {ctx.unit_name(u)}: deploy at {_xy(t)}" for u, t in self.deploy.items()]
        return [f"orders for round {ctx.av.round}:", *lines]


def describe_order(o: A.UnitOrder, ctx: Context) -> str:
    name = ctx.unit_name(o.unit)
    if o.path:
        return f"{name}: move {' '.join(o.path)}"
    if o.HasField("to"):
        return f"{name}: go to {_xy(o.to)}"
    if o.action:
        return f"{name}: {o.action}" + (f" {ctx.unit_name(o.target)}" if o.target else "")
    return f"{name}: stays"


def describe_build(b: A.Build, ctx: Context) -> str:
    text = _type_name(b.type)
    if b.HasField("tile"):
        text += f" at {_xy(b.tile)}"
    if b.ship:
        text += f" for {ctx.unit_name(b.ship)}"
    return text


def describe_action(cmd: ActionCmd, ctx: Context) -> str:
    m = cmd.message
    if isinstance(m, game_pb2.ChatAction):
        return f"chat to {ctx.who(m.to) if m.HasField('to') else 'everyone'}: {m.text}"
    if isinstance(m, A.BankAction):
        return f"bank: {m.get} ×{m.times or 1} for your {m.give}"
    if isinstance(m, A.OfferAction):
        to = ctx.who(m.to) if m.HasField("to") else "everyone"
        return f"offer to {to}: you give {_goods(m.give)} for {_goods(m.get)}"
    return f"{cmd.kind} {getattr(m, 'offer', '')}".strip()


# ---------------------------------------------------------------------------------------- the prompt
class ArchipelagoUI(RoundUI):
    """The Archipelago screen and prompt for :func:`client.play.play`."""

    setup_default = "deployed your units in the default layout (A15)"

    def __init__(self) -> None:
        self.last: game_pb2.GetViewResponse | None = None  # for the live notices' names

    def render(self, view: game_pb2.GetViewResponse) -> str:
        self.last = view
        return render(view)

    def notice(self, update: game_pb2.Update) -> str | None:
        """Chat, offers and trades of the others as they happen; who is done."""
        if self.last is None:
            return None
        ctx = Context.of(self.last)
        you = self.last.you
        if update.kind == "chat" and update.chat.seat != you:
            to = "you" if update.chat.HasField("to") else "all"
            return f"[chat] {ctx.who(update.chat.seat)} → {to}: {update.chat.text}"
        if update.kind == "submitted" and update.seat != you and update.seat >= 0:
            if json_format.MessageToDict(update.data).get("done", True):
                return f"[{ctx.who(update.seat)} is done for round {update.round}]"
            return None
        if update.kind != "event" or update.event_kind not in EVENT_KINDS_SHOWN_LIVE:
            return None
        d = json_format.MessageToDict(update.data)
        oid = str(d.get("id") or d.get("offer") or "")
        if update.event_kind == "offer" and _num(d.get("from")) != you:
            to = "you" if "to" in d else "everyone"
            hint = f"accept {oid} / decline {oid}" if "to" in d else f"accept {oid}"
            return (f"[offer {oid}] {ctx.who(int(_num(d.get('from', -1))))} offers {to} "
                    f"{_goods(d.get('give') or {})} for {_goods(d.get('get') or {})} — {hint}")
        if update.event_kind == "trade" and _num(d.get("from")) == you:
            return (f"[trade] {ctx.who(int(_num(d.get('to', -1))))} accepted your offer {oid}: you gave "
                    f"{_goods(d.get('give') or {})} and got {_goods(d.get('get') or {})}")
        if update.event_kind in ("offer_declined", "offer_withdrawn") and _num(d.get("by")) != you:
            how = "declined" if update.event_kind == "offer_declined" else "withdrawn"
            return f"[offer {oid} {how} by {ctx.who(int(_num(d.get('by', -1))))}]"
        if update.event_kind == "offer_closed":
            return f"[offer {oid} was taken by another player]"
        return None

    async def orders(self, client: Client, game_id: str, view: game_pb2.GetViewResponse, feed: Feed,
                     lines: Lines, screen: Screen) -> str:
        """Commands until the orders are in (done), the round closes (MOVED_ON) or the input ends."""
        ctx = Context.of(view)
        draft = Draft.of(view.archipelago_pending) if view.HasField("archipelago_pending") else Draft()
        setup = view.archipelago.round == 0
        if setup:
            screen.say("round 0, deployment: deploy <unit> <x> <y> on your home island (ships on the sea next to "
                       "it), then done; units left out keep the default layout (A13-A15). help: all commands")
        else:
            screen.say("your orders, one a line: move <unit> N E · goto <unit> <x> <y> · act <unit> outpost · "
                       "build <type> · chat <text> · bank <give> <get> · show · done (help: all commands)")
        if len(draft):
            screen.say("\n".join(draft.describe(ctx)) + "\n(your last submission this round: continue from it)")
        while True:
            label = deadline_label(view.round, view.deadline_unix_ms)
            screen.prompt(f"{label} {'deploy' if setup else 'orders'} ({len(draft)} so far)> ")
            text, ended = await answer(screen, lines, feed, view)
            if ended:
                return ended
            try:
                cmd = parse_command(text, ctx)
            except EmptyLine:
                continue
            except ValueError as exc:
                screen.say(f"error: {exc}")
                continue
            if isinstance(cmd, ControlCmd):
                outcome = await self._control(cmd.name, client, game_id, view, feed, ctx, draft, screen)
                if outcome is not None:
                    return outcome
            elif isinstance(cmd, ActionCmd):
                fresh = await self._act(cmd, client, game_id, view, ctx, screen)
                if fresh is not None:
                    ctx = Context.of(fresh)
            else:
                screen.say(draft.apply(cmd, ctx))

    async def _control(self, name: str, client: Client, game_id: str, view: game_pb2.GetViewResponse,
                       feed: Feed, ctx: Context, draft: Draft, screen: Screen) -> str | None:
        if name == "help":
            screen.say(HELP)
        elif name == "types":
            screen.say(unit_types())
        elif name == "show":
            screen.say("\n".join(draft.describe(ctx)))
        elif name == "clear":
            draft.clear()
            screen.say("orders cleared")
        elif name == "map":
            fresh = await self._fresh(client, game_id, view)
            screen.say(render(fresh if fresh is not None else ctx.view))
        else:  # done, draft
            return await self._submit(client, game_id, view, feed, draft, screen, done=name == "done")
        return None

    async def _submit(self, client: Client, game_id: str, view: game_pb2.GetViewResponse, feed: Feed,
                      draft: Draft, screen: Screen, *, done: bool) -> str | None:
        try:
            await client.submit_message(game_id, view.version, "archipelago", draft.orders(),
                                        key=f"play-{view.round}-{secrets.token_hex(6)}", draft=not done)
        except ApiError as err:
            if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed meanwhile
                screen.say(f"too late: {err.message}")
                return MOVED_ON
            screen.say(f"refused: {err.message}")
            return None
        n = len(draft)
        what = f"{n} order{'s' if n != 1 else ''}"
        if not done:
            feed.drafted.add(view.round)
            screen.say(f"draft saved for round {view.round} ({what}); it stands if the round closes before you "
                       "are done (type done when you are)")
            return None
        feed.mine.add(view.round)
        screen.say(f"orders in for round {view.round} ({what})")
        return SUBMITTED

    async def _act(self, cmd: ActionCmd, client: Client, game_id: str, view: game_pb2.GetViewResponse,
                   ctx: Context, screen: Screen) -> game_pb2.GetViewResponse | None:
        """An immediate action; the view after it (None when refused or not readable)."""
        try:
            await client.act(game_id, key=f"play-{view.round}-{secrets.token_hex(6)}", **{cmd.kind: cmd.message})
        except ApiError as err:
            screen.say(f"refused: {err.message}")
            return None
        fresh = await self._fresh(client, game_id, view)
        line = f"done: {describe_action(cmd, ctx)}"
        if fresh is not None and fresh.HasField("archipelago"):
            if cmd.kind in ("bank", "accept"):
                line += f" — stock: {_stock(fresh.archipelago.stock)}"
            if cmd.kind == "offer":
                mine = [o.id for o in fresh.archipelago.offers if o.from_seat == view.you]
                if mine:
                    line += f" (offer {mine[-1]})"
        screen.say(line)
        return fresh if fresh is not None and fresh.round == view.round else None

    @staticmethod
    async def _fresh(client: Client, game_id: str, view: game_pb2.GetViewResponse) -> game_pb2.GetViewResponse | None:
        with contextlib.suppress(ApiError, OSError):
            fresh = await client.view(game_id)
            if fresh.HasField("archipelago"):
                return fresh
        return None


__all__ = ["ArchipelagoUI", "Command", "Context", "Draft", "Marks", "describe_event", "parse_command", "render",
           "render_map"]
