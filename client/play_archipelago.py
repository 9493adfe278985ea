"""`archipelago play CODE` for Archipelago: the screen and the round's command prompt.

The round's screen (:func:`screen`, at most 36 lines of 120 characters: it fits a 120×40 terminal with
the toolbar): the title, the explored map from ``view.rows`` with its ruler above and below (x across,
y down, (0, 0) top left, as in the spec; a board taller than 28 rows shows a window around your units),
own units drawn by a letter or digit, enemies in sight by a capital letter, the enemy log, bases and
outposts; beside the map the stock and score, your units with this round's orders, the enemies in
sight, the offers, this round's chat and the last round's events (A80-A85).  ``info`` shows
everything in full (:func:`render`): every seat's public figures (A84), resource tiles, ports.

A unit's label (:class:`Marks`) is given once and never moves to another unit: the labels are kept
for the whole game in the local store (:mod:`client.draft_store`), so that an order typed from memory
never hits another unit, also after a restart.  Nothing shown names a unit by its internal id: own
units are "b (Dvora at (1,2))", enemies by owner, type (once revealed) and tile.

The prompt takes one command a line (:func:`parse_command`; ``help`` lists them).  Orders build up a
:class:`Draft` of the round's orders (A18: one order per unit, builds, the bonus choice; round 0:
deployments), kept on this machine at every change and submitted by ``done`` (or ``draft``, which
keeps the prompt open); ``stay`` holds a unit still (an order to its own tile, so that no standing
order moves it, A70; in round 0 it drops the unit's deployment), ``drop <n>`` one build; ``standing``
and ``posture`` set the standing orders (A70-A74); chat, bank and trade commands are executed at
once (A52, A53).  A land unit sent to sea (or a ship ashore, or to an unexplored tile) is told so
before anything is sent, every such problem of the draft together at ``done``; a refusal of the
server is said about the player's own units (:func:`in_player_words`), with the rule's page.

The game-neutral machinery is shared: the loop (:mod:`client.play`), the Watch stream kept open all
game (:mod:`client.feed`), the seat at the terminal that abandons the prompt when the round closes
(:mod:`client.play_base`).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client.errors import ApiError
from client.play_base import COMMON_HELP, MOVED_ON, SUBMITTED, EmptyLine, RoundUI, Seat
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
       f"{OTHER_OUTPOST} another's outpost · Tab completes · help lists the commands")
EVENT_KINDS_SHOWN_LIVE = frozenset({"offer", "trade", "offer_declined", "offer_withdrawn", "offer_closed"})

HELP = f"""\
One command a line (Tab completes). <unit>: its letter on the map (a letter never moves to another unit);
<target>: an enemy's capital letter; <x> <y>: x across, y down (also "x,y").
Orders for this round (they build up, and are kept on this machine, until you are done):
  move <unit> N E E            a path of steps N, E, S, W, at most the unit's move (A18)
  goto <unit> <x> <y>          a destination: the server plans the path over explored terrain (A18)
  act <unit> outpost           found an outpost on the unit's tile: 1 food, 1 wood (A36)
  act <unit> bombard|strike|reveal <target>   warship bombardment (A37), air strike: 1 fuel (A38), spy (A39)
  stay <unit>                  the unit holds still this round (its order dropped; round 0: its deployment)
  build <type> [<x> <y>|<ship>]  a unit (A42): a mine names its tile, a raft its ship ('types' lists them)
  drop <n>                     drop build #n (show numbers them)
  bonus <resource>             the activity-bonus choice (A51): {', '.join(RESOURCES)}
  deploy <unit> <x> <y>        round 0: where the unit starts (A14); units left out keep the default layout
  show · clear · draft · done  the orders so far · forget them · send them as a draft · send them: done
Standing orders (what plays for you when you are away, and for units without an order, A70-A74):
  standing                     show them
  standing <unit> stay|guard <x> <y>|guard <unit>|patrol <x>,<y> <x>,<y>…|move <x> <y>|escort <unit>|hunt [<enemy>]
  standing <unit> clear        drop that unit's standing order
  posture hold|defensive|balanced|aggressive   how the others play (A71)
At once:
  chat <text> · chat @<seat> <text>   to everyone, or to one player (A53)
  bank <give> <get> [times]    trade with the bank: 4 for 1, or 2 for 1 with a port (A52)
  offer <seat|all> give <res>=<n>,... get <res>=<n>,...   a trade offer (A53), e.g. offer 0 give wood=2 get iron=1
  accept <offer> · decline <offer> · withdraw <offer>
  map · info · types           the screen again · everything in full · the unit types, costs and moves
{COMMON_HELP}"""


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


def _plain_type(type_id: str) -> str:
    t = UNIT_TYPES.get(type_id)
    return t.name if t is not None else type_id


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
    def of(cls, av: A.ArchipelagoView, labels: dict[str, str] | None = None) -> Marks:
        """``labels`` (unit id -> label, kept across rounds and restarts) is extended for new units
        with labels never used before in the game: a label never moves to another unit (an order
        typed from memory never hits another one).  Past the 36 labels a unit is named by its id."""
        m = cls()
        book = {} if labels is None else labels
        used = set(book.values())
        free = (c for c in OWN_LABELS if c not in used)
        for u in av.units:
            if u.id not in book:
                nxt = next(free, None)
                if nxt is None:
                    continue
                book[u.id] = nxt
            m.own[book[u.id]], m.own_label[u.id] = u.id, book[u.id]
        for label, e in zip(ENEMY_LABELS, av.enemies, strict=False):
            m.enemy[label], m.enemy_label[e.id] = e.id, label
        return m


@dataclass
class Context:
    """What the commands refer to: the current view and its labels."""

    view: game_pb2.GetViewResponse
    marks: Marks

    @classmethod
    def of(cls, view: game_pb2.GetViewResponse, labels: dict[str, str] | None = None) -> Context:
        return cls(view, Marks.of(view.archipelago, labels))

    @property
    def av(self) -> A.ArchipelagoView:
        return self.view.archipelago

    def who(self, seat: int) -> str:
        if seat == self.view.you:
            return "you"
        nick = next((p.nickname for p in self.view.players if p.seat == seat), "")
        return f"seat {seat} ({nick})" if nick else f"seat {seat}"

    def unit_name(self, uid: str) -> str:
        """'b (Dvora at (1,2))' for an own unit, "A (seat 1 (bob)'s Corporal at (5,2))" for an enemy in
        sight, "bob's unit last seen at (7,4)" for one in the enemy log: names and tiles, never an id."""
        u = next((u for u in self.av.units if u.id == uid), None)
        if u is not None:
            label = self.marks.own_label.get(uid)
            name = UNIT_TYPES[u.type].name if u.type in UNIT_TYPES else u.type
            return f"{label} ({name} at {_xy(u.tile)})" if label else f"your {name} at {_xy(u.tile)}"
        e = next((e for e in self.av.enemies if e.id == uid), None)
        if e is not None:
            what = UNIT_TYPES[e.type].name if e.HasField("type") and e.type in UNIT_TYPES else f"{e.domain} unit"
            desc = f"{self.whose(e.owner)} {what} at {_xy(e.tile)}"
            label = self.marks.enemy_label.get(uid)
            return f"{label} ({desc})" if label else desc
        g = next((g for g in self.av.enemy_log if g.id == uid), None)
        if g is not None:
            what = UNIT_TYPES[g.type].name if g.HasField("type") and g.type in UNIT_TYPES else "unit"
            return f"{self.whose(g.owner)} {what} last seen at {_xy(g.tile)}"
        return "a unit out of sight"

    def whose(self, seat: int) -> str:
        who = self.who(seat)
        return "your" if who == "you" else f"{who}'s"

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
        known = uid in ctx.marks.own_label or uid in ctx.marks.enemy_label
        what = _plain_type(str(u["type"])) if "type" in u else f"{u.get('domain', '')} unit".strip()
        if owner == ctx.view.you:
            text = f"your {ctx.unit_name(uid)}" if known else f"your {what}"
        else:
            text = ctx.unit_name(uid) if known else f"{ctx.who(int(owner))}'s {what}"
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


def render(view: game_pb2.GetViewResponse, labels: dict[str, str] | None = None) -> str:
    """Everything the view holds, in full (the ``info`` command; the round's screen is :func:`screen`)."""
    if not view.HasField("archipelago"):
        return f"Archipelago — no map yet (the game has not started; code {view.code})"
    av = view.archipelago
    ctx = Context.of(view, None if labels is None else dict(labels))
    m = ctx.marks
    out = [f"Archipelago · round {av.round} of {av.max_rounds} · first to {av.target} points wins · "
           f"you are seat {view.you}"]
    out += render_map(av, m)
    out.append(KEY)
    bonus = f" · bonus choice {av.bonus}" if av.HasField("bonus") else ""
    out.append(f"stock: {_stock(av.stock)}{bonus} · score {av.score} · flags captured {av.flags_captured}")

    out += _unit_lines(av, ctx)
    out += _enemy_lines(av, ctx)
    out += _place_lines(view, av, ctx)
    out += _player_lines(view, av, ctx)
    out += _table_talk_lines(av, ctx)
    return "\n".join(out)


def _unit_lines(av: A.ArchipelagoView, ctx: Context) -> list[str]:
    """The player's units: each one's letter, type, tile, carrier and cargo, flag and raft."""
    out: list[str] = []
    out.append("your units:")
    m = ctx.marks
    by_id = {u.id: u for u in av.units}
    for u in av.units:
        line = f"  {m.own_label.get(u.id, OWN_MORE)}  {_type_name(u.type):<30} {_xy(u.tile)}"
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
    return out


def _enemy_lines(av: A.ArchipelagoView, ctx: Context) -> list[str]:
    """The enemies in sight and the enemy log (those seen before, no longer in sight)."""
    out: list[str] = []
    m = ctx.marks
    if av.enemies:
        out.append("enemies in sight:")
        for e in av.enemies:
            typ = f"  {_type_name(e.type)}" if e.HasField("type") else ""
            out.append(f"  {m.enemy_label.get(e.id, ENEMY_MORE)}  {ctx.who(e.owner)}  {e.domain:<4} "
                       f"{_xy(e.tile)}{typ}")
    if av.enemy_log:
        out.append("enemy log (not in sight now):")
        for g in av.enemy_log:
            ago = "this round" if g.rounds_ago == 0 else \
                f"seen {g.rounds_ago} round{'s' if g.rounds_ago != 1 else ''} ago"
            typ = f"  {_type_name(g.type)}" if g.HasField("type") else ""
            out.append(f"  {LOG_MARK}  {ctx.who(g.owner)}  last at {_xy(g.tile)}, {ago} (round {g.round})"
                       f"{typ}")
    return out


def _place_lines(view: game_pb2.GetViewResponse, av: A.ArchipelagoView, ctx: Context) -> list[str]:
    """Bases, outposts, resource tiles and ports (✓: under the player's control)."""
    out: list[str] = []
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
    return out


def _player_lines(view: game_pb2.GetViewResponse, av: A.ArchipelagoView, ctx: Context) -> list[str]:
    """Every seat: its score, its resources and, while the game runs, done or planning."""
    out: list[str] = []
    out.append("players:")
    info = {p.seat: p for p in view.players}
    for s in av.seats:
        p = info.get(s.seat)
        name = p.nickname if p is not None else ""
        you = " (you)" if s.seat == view.you else ""
        flags = []
        if p is not None:
            flags.append("done" if p.submitted else "planning")
            if not p.connected and s.seat != view.you:  # (you are: this terminal's stream is open)
                flags.append("not connected")
            if p.autopilot:
                flags.append("autopilot")
        out.append(f"  seat {s.seat} {name}{you}: score {s.score}, {s.resource_total} resources"
                   + (f" · {', '.join(flags)}" if flags and view.status == lobby_pb2.GAME_STATUS_RUNNING else ""))
    return out


def _table_talk_lines(av: A.ArchipelagoView, ctx: Context) -> list[str]:
    """The open offers, the round's chat, the last round's events and the final scores."""
    out: list[str] = []
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
    return out


SCREEN_W = 120  # a terminal of 120×40: the screen, the toolbar (2 lines) and the prompt fit
SCREEN_LINES = 36  # the screen's lines at most (the rest of 40: the toolbar, the prompt, a notice)
MAP_ROWS = 28  # at most this many map rows shown (a taller board: a window around your units)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def screen(view: game_pb2.GetViewResponse, marks: Marks, draft: Draft | None = None) -> str:
    """What the terminal shows each round, at most 36 lines of at most 120 characters: the title,
    the map with its ruler above and below (left), beside it the stock, your units with their orders
    this round, the enemies in sight, the offers, this round's chat and the last round's events; the
    key under it.  ``info`` shows everything in full (:func:`render`)."""
    if not view.HasField("archipelago"):
        return f"Archipelago — no map yet (the game has not started; code {view.code})"
    av = view.archipelago
    ctx = Context(view, marks)
    nick = next((p.nickname for p in view.players if p.seat == view.you), "")
    title = (f"Archipelago · round {av.round} of {av.max_rounds} · first to {av.target} points wins · "
             f"you are seat {view.you}" + (f" ({nick})" if nick else "")
             + (f" · game {view.code}" if view.code else ""))
    full = render_map(av, marks)
    if not full:
        return title
    rows = full[2:]
    top = 0
    if len(rows) > MAP_ROWS:  # a window of the rows around your units (the ruler numbers every row)
        ys = [u.tile.y for u in av.units] or [av.base.y]
        centre = sum(ys) // len(ys)
        top = max(0, min(len(rows) - MAP_ROWS, centre - MAP_ROWS // 2))
        rows = rows[top: top + MAP_ROWS]
    left = full[:2] + rows + full[:2][::-1]  # the ruler above and below (units line nearest the map)
    map_w = max(len(x) for x in left)
    width = SCREEN_W - map_w - 3
    panel = _panel(av, ctx, draft)
    panel = [_cut(x, width) for x in panel]
    room = max(len(left), SCREEN_LINES - 1 - len(KEY.split("\n")))  # (a small map: the panel goes on below it)
    if len(panel) > room:
        cut = len(panel) - room + 1
        panel = [*panel[:room - 1], f"… {cut} more line{'s' if cut != 1 else ''}: type info"]
    out = [_cut(title, SCREEN_W)]
    for k in range(max(len(left), len(panel))):
        lhs = left[k] if k < len(left) else ""
        rhs = panel[k] if k < len(panel) else ""
        out.append(f"{lhs:<{map_w}} │ {rhs}".rstrip() if rhs else lhs)
    out += KEY.split("\n")
    if top:
        out[-1] += f" · map rows {top}-{top + MAP_ROWS - 1} of {av.height - 1}"
    return "\n".join(out)


def _panel(av: A.ArchipelagoView, ctx: Context, draft: Draft | None) -> list[str]:
    """The screen's panel beside the map (uncut): the stock, your units with this round's orders and
    builds, the enemies in sight, the offers, the last chat lines and the last round's events."""
    marks = ctx.marks
    panel: list[str] = []
    bonus = f" · bonus {av.bonus}" if av.HasField("bonus") else ""
    panel.append(f"stock: {_stock(av.stock)}{bonus} · score {av.score}" + (
        f" · flags {av.flags_captured}" if av.flags_captured else ""))
    if av.HasField("outcome") and av.outcome.scores:
        panel.append("final scores: " + ", ".join(f"{ctx.who(k)} {n}" for k, n in enumerate(av.outcome.scores)))
    orders = draft.units if draft is not None else {}
    deploys = draft.deploy if draft is not None else {}
    panel.append("your units (letter type (x,y): this round's order):")
    for u in av.units:
        label = marks.own_label.get(u.id, OWN_MORE)
        name = UNIT_TYPES[u.type].name if u.type in UNIT_TYPES else u.type
        line = f" {label} {name} {_xy(u.tile)}"
        if u.HasField("carrier"):
            line += f" in {marks.own_label.get(u.carrier, 'an enemy')}"
        if u.cargo:
            line += " carries " + ",".join(marks.own_label.get(c, OWN_MORE) for c in u.cargo)
        if u.id in orders:
            line += ": " + describe_order(orders[u.id], ctx).split(": ", 1)[-1]
        elif u.id in deploys:
            line += f": deploy at {_xy(deploys[u.id])}"
        panel.append(line)
    if draft is not None and draft.builds:
        panel.append("builds: " + "; ".join(f"#{i} {describe_build(b, ctx)}" for i, b in enumerate(draft.builds, 1)))
    if av.enemies:
        panel.append("enemies in sight: " + " · ".join(
            f"{marks.enemy_label.get(e.id, ENEMY_MORE)} {ctx.who(e.owner)} "
            f"{UNIT_TYPES[e.type].name if e.HasField('type') and e.type in UNIT_TYPES else e.domain} {_xy(e.tile)}"
            for e in av.enemies))
    if av.offers:
        panel.append("offers: " + " · ".join(
            f"{o.id} {ctx.who(o.from_seat)}→{ctx.who(o.to_seat) if o.HasField('to_seat') else 'all'}: "
            f"gives {_goods(o.give)} for {_goods(o.get)}" for o in av.offers))
    if av.chat:
        panel.append("chat:")
        panel += [f" {ctx.who(c.from_seat)}→{ctx.who(c.to_seat) if c.HasField('to_seat') else 'all'}: {c.text}"
                  for c in av.chat[-4:]]
    if av.events:
        panel.append("last round:")
        panel += [" " + describe_event(json_format.MessageToDict(ev), ctx) for ev in av.events]
    return panel


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
    """show, clear, done, draft, map, info, types, standing (shown), help or quit."""

    name: str


@dataclass
class DropCmd:
    """Drop build #``index`` (1-based) of the draft."""

    index: int


@dataclass
class StandingCmd:
    """Set (``order``) or clear (None) one unit's standing order (A72), or the posture (A71)."""

    unit: str = ""
    order: A.StandingUnitOrder | None = None
    posture: str = ""


Command = UnitCmd | StayCmd | BuildCmd | BonusCmd | DeployCmd | ActionCmd | ControlCmd | DropCmd | StandingCmd
CONTROLS = ("show", "clear", "done", "draft", "map", "info", "types", "help", "quit")
ALIASES = {"?": "help", "orders": "show", "submit": "done", "look": "map", "say": "chat", "exit": "quit",
           "leave": "quit", "units": "info", "unbuild": "drop", "so": "standing"}
POSTURES = ("hold", "defensive", "balanced", "aggressive")
STANDING_KINDS = ("stay", "guard", "patrol", "move", "escort", "hunt", "clear")
VERBS = ("move", "goto", "act", "stay", "build", "drop", "bonus", "deploy", "standing", "posture", "chat", "bank",
         "offer", "accept", "decline", "withdraw", *CONTROLS)


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
        if t.rank:
            out.setdefault(re.sub(r"[^a-z0-9]", "", t.rank.lower()), t.id)
    for t in UNIT_TYPES.values():
        out[t.id] = t.id
    return out


BUILD_TYPES = _build_types()


STEP_XY = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}


def _check_terrain(u: A.OwnUnit, steps: list[str], dest: A.Tile | None, ctx: Context) -> None:
    """A plain reason, before the server is asked, for a land unit sent to sea or a ship sent ashore
    (a step onto an own ship or plane boards it, which the server judges), and for unexplored tiles."""
    ut = UNIT_TYPES.get(u.type)
    rows = ctx.av.rows
    if ut is None or ut.domain == "air" or not rows:
        return
    carriers = {(o.tile.x, o.tile.y) for o in ctx.av.units if UNIT_TYPES.get(o.type) is not None
                and UNIT_TYPES[o.type].capacity and o.id != u.id}
    tiles: list[tuple[int, int]] = []
    x, y = u.tile.x, u.tile.y
    for d in steps:
        dx, dy = STEP_XY[d]
        x, y = x + dx, y + dy
        tiles.append((x, y))
    if dest is not None:
        tiles.append((dest.x, dest.y))
    name = ctx.unit_name(u.id)
    for k, (tx, ty) in enumerate(tiles):
        if not (0 <= ty < len(rows) and 0 <= tx < len(rows[ty])):
            raise ValueError(f"{name}: ({tx},{ty}) is off the board")
        cell = rows[ty][tx]
        last = k == len(tiles) - 1
        if cell == "?" and (dest is not None or last):
            raise ValueError(f"{name}: ({tx},{ty}) is unexplored — a unit goes only where you have seen (A18)")
        if ut.domain == "land" and cell == "." and not ((tx, ty) in carriers and last):
            raise ValueError(f"{name} walks on land only, and ({tx},{ty}) is sea: to cross, move it onto one of "
                             "your ships next to it (it boards), then move the ship (A24)")
        if ut.domain == "sea" and cell == "#":
            raise ValueError(f"{name} sails on the sea only, and ({tx},{ty}) is land")


def _standing(args: list[str], ctx: Context) -> StandingCmd:
    """standing <unit> stay | guard <x> <y> | guard <unit> | patrol <x>,<y> <x>,<y> ... | move <x> <y> |
    escort <unit> | hunt [<target>] | clear."""
    usage = ("standing <unit> stay|guard <x> <y>|guard <unit>|patrol <x>,<y> <x>,<y>…|move <x> <y>|escort <unit>|"
             "hunt [<enemy>]|clear (A72)")
    if len(args) < 2:
        raise ValueError(usage)
    u = ctx.own_unit(args[0])
    kind, rest = args[1].lower(), args[2:]
    if kind not in STANDING_KINDS:
        raise ValueError(f"standing: {args[1]!r} is not a standing order; {usage}")
    if kind == "clear":
        return StandingCmd(unit=u.id)
    order = A.StandingUnitOrder(unit=u.id, order=kind)
    if kind == "stay":
        if rest:
            raise ValueError("standing <unit> stay takes nothing more")
    elif kind == "guard":
        if len(rest) == 1 and not rest[0].replace(",", "").isdigit():
            order.target = ctx.own_unit(rest[0]).id
        else:
            order.tile.CopyFrom(_tile_args(rest, ctx, "standing guard"))
    elif kind == "move":
        order.tile.CopyFrom(_tile_args(rest, ctx, "standing move"))
    elif kind == "escort":
        if len(rest) != 1:
            raise ValueError("standing <unit> escort <unit>: the own unit it follows")
        order.target = ctx.own_unit(rest[0]).id
    elif kind == "hunt":
        if len(rest) > 1:
            raise ValueError("standing <unit> hunt [<enemy>]")
        if rest:
            order.target = ctx.enemy_unit(rest[0])
    elif kind == "patrol":
        words = " ".join(rest).replace("(", " ").replace(")", " ").replace(",", " ").split()
        if len(words) < 4 or len(words) % 2:
            raise ValueError("standing <unit> patrol <x>,<y> <x>,<y> …: 2-10 waypoints (A72)")
        for k in range(0, len(words), 2):
            order.waypoints.append(ctx.tile(words[k], words[k + 1], "standing patrol"))
    return StandingCmd(unit=u.id, order=order)


def describe_standing(o: A.StandingUnitOrder, ctx: Context) -> str:
    text = o.order
    if o.HasField("tile"):
        text += f" {_xy(o.tile)}"
    if o.target:
        text += f" {ctx.unit_name(o.target)}"
    if o.waypoints:
        text += " " + " ".join(_xy(t) for t in o.waypoints)
    return f"{ctx.unit_name(o.unit)}: {text}"


def parse_command(text: str, ctx: Context) -> Command:
    """One line of the prompt.  Raises EmptyLine for a blank line and ValueError (saying what is
    wrong and how it is written) for anything else it cannot take."""
    words = text.split()
    if not words:
        raise EmptyLine("nothing entered")
    verb = ALIASES.get(words[0].lower(), words[0].lower())
    args = words[1:]
    if verb in CONTROLS:
        return ControlCmd(verb)
    if verb in ("move", "goto", "act", "build") and _setup(ctx):
        raise ValueError(f"round 0 is for deployment (A13): use deploy <unit> <x> <y>, then done — not {verb}")
    parse = _PARSERS.get(verb)
    if parse is None:
        raise ValueError(f"unknown command {words[0]!r} (help lists the commands)")
    return parse(verb, args, text, ctx)


def _setup(ctx: Context) -> bool:
    """Round 0: deployment (A13)."""
    return ctx.av.round == 0 and ctx.view.HasField("archipelago")


def _standing_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """standing alone (the standing orders shown), or standing <unit> <order> … (A70)."""
    return ControlCmd("standing") if not args else _standing(args, ctx)


def _posture_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """posture <hold|defensive|balanced|aggressive> (A71)."""
    if len(args) != 1 or args[0].lower() not in POSTURES:
        raise ValueError(f"posture <{'|'.join(POSTURES)}>: how your standing orders play (A71)")
    return StandingCmd(posture=args[0].lower())


def _drop_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """drop <n>: one build of the draft."""
    if len(args) != 1 or not args[0].lstrip("#").isdigit() or int(args[0].lstrip("#")) < 1:
        raise ValueError("drop <n>: drops build #n of your orders (show lists them)")
    return DropCmd(int(args[0].lstrip("#")))


def _move_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """move <unit> N E …: a unit's steps (A18), checked against its type and the terrain."""
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
    _check_terrain(u, steps, None, ctx)
    return UnitCmd(A.UnitOrder(unit=u.id, path=steps))


def _goto_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """goto <unit> <x> <y>: a unit's destination."""
    if not args:
        raise ValueError("goto <unit> <x> <y>: name the unit and the tile")
    u = ctx.own_unit(args[0])
    dest = _tile_args(args[1:], ctx, "goto")
    _check_terrain(u, [], dest, ctx)
    return UnitCmd(A.UnitOrder(unit=u.id, to=dest))


def _act_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """act <unit> outpost|bombard|strike|reveal [target]."""
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


def _stay_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """stay <unit> (cancel): the unit holds still this round."""
    if len(args) != 1:
        raise ValueError("stay <unit>: the unit holds still this round (its order, or deployment, dropped)")
    return StayCmd(ctx.own_unit(args[0]).id)


def _build_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """build <type> [<x> <y> | <ship>] (A42; a raft on a ship, A33; a mine on a tile)."""
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


def _bonus_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """bonus <resource>: the activity-bonus choice (A51)."""
    if len(args) != 1:
        raise ValueError(f"bonus <resource>: one of {', '.join(RESOURCES)}")
    return BonusCmd(_resource(args[0], "bonus"))


def _deploy_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """deploy <unit> <x> <y>: round 0's deployment (A13)."""
    if not _setup(ctx):
        raise ValueError("deploy: deployment happens in round 0 only (A13)")
    if not args:
        raise ValueError("deploy <unit> <x> <y>")
    u = ctx.own_unit(args[0])
    return DeployCmd(A.Deployment(unit=u.id, tile=_tile_args(args[1:], ctx, "deploy")))


def _chat_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """chat <text>, or chat @<seat> <text> to one player (A53)."""
    rest = text.split(None, 1)[1].strip() if args else ""
    to: int | None = None
    if rest.startswith("@"):
        target, _, rest = rest[1:].partition(" ")
        rest = rest.strip()
        if target.lower() not in ("all", "everyone"):
            to = ctx.seat(target, "chat")
    if not rest:
        raise ValueError("chat <text>, or chat @<seat> <text> to one player")
    return ActionCmd("chat", game_pb2.ChatAction(text=rest, to=to))


def _bank_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """bank <give> <get> [times] (A52)."""
    if len(args) not in (2, 3):
        raise ValueError("bank <give> <get> [times], e.g. bank wood iron (4 wood for 1 iron, A52)")
    give, get = _resource(args[0], "bank"), _resource(args[1], "bank")
    if give == get:
        raise ValueError("bank: give and get must differ")
    times = _count(args[2], "bank") if len(args) == 3 else 1
    return ActionCmd("bank", A.BankAction(give=give, get=get, times=times))


def _offer_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """offer <seat|all> give <res>=<n>,… get <res>=<n>,… (A52)."""
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


def _answer_cmd(verb: str, args: list[str], text: str, ctx: Context) -> Command:
    """accept, decline or withdraw <offer>."""
    if len(args) != 1:
        raise ValueError(f"{verb} <offer>: the offer's id, e.g. {verb} o3")
    msg: Message = {"accept": A.AcceptAction, "decline": A.DeclineAction,
                    "withdraw": A.WithdrawAction}[verb](offer=args[0])
    return ActionCmd(verb, msg)


#: the commands but the controls, by verb (after ALIASES): each parser takes (verb, args, the line, ctx)
_PARSERS: dict[str, Callable[[str, list[str], str, Context], Command]] = {
    "standing": _standing_cmd, "posture": _posture_cmd, "drop": _drop_cmd, "move": _move_cmd, "goto": _goto_cmd,
    "act": _act_cmd, "stay": _stay_cmd, "cancel": _stay_cmd, "build": _build_cmd, "bonus": _bonus_cmd,
    "deploy": _deploy_cmd, "chat": _chat_cmd, "bank": _bank_cmd, "offer": _offer_cmd, "accept": _answer_cmd,
    "decline": _answer_cmd, "withdraw": _answer_cmd,
}


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

    def plain(self) -> dict[str, Any]:
        """The draft as plain data (the local store's)."""
        return json_format.MessageToDict(self.orders(), preserving_proto_field_name=True)

    @classmethod
    def of_plain(cls, data: Mapping[str, Any], ctx: Context | None = None) -> Draft:
        """A stored draft; orders of units no longer there are dropped."""
        d = cls.of(json_format.ParseDict(dict(data), A.ArchipelagoOrders(), ignore_unknown_fields=True))
        if ctx is not None:
            mine = {u.id for u in ctx.av.units}
            d.units = {k: o for k, o in d.units.items() if k in mine}
            d.deploy = {k: t for k, t in d.deploy.items() if k in mine}
        return d

    def apply(self, cmd: Command, ctx: Context) -> str:
        """Take an order command; returns what the player is told."""
        if isinstance(cmd, UnitCmd):
            self.units.pop(cmd.order.unit, None)  # a replaced order goes to the end, as given
            self.units[cmd.order.unit] = cmd.order
            return describe_order(cmd.order, ctx)
        if isinstance(cmd, StayCmd):
            name = ctx.unit_name(cmd.unit)
            if ctx.av.round == 0:
                had_dep = self.deploy.pop(cmd.unit, None)
                return (f"{name}: deployment dropped — it starts where the default layout puts it (A15)" if had_dep
                        else f"{name} had no deployment: it starts where the default layout puts it (A15)")
            self.units.pop(cmd.unit, None)
            u = next((x for x in ctx.av.units if x.id == cmd.unit), None)
            ut = UNIT_TYPES.get(u.type) if u is not None else None
            if u is None or ut is None or ut.move == 0 or u.HasField("carrier"):
                return f"{name}: stays (it had no order now)"
            # an order to its own tile: the unit holds still, and no standing order moves it (A70)
            self.units[cmd.unit] = A.UnitOrder(unit=cmd.unit, to=A.Tile(x=u.tile.x, y=u.tile.y))
            return f"{name}: stays this round (whatever its standing orders)"
        if isinstance(cmd, DropCmd):
            if not 1 <= cmd.index <= len(self.builds):
                which = f" (builds #1-#{len(self.builds)}; show lists them)" if self.builds else " (no builds yet)"
                raise ValueError(f"drop: no build #{cmd.index}{which}")
            gone = self.builds.pop(cmd.index - 1)
            return f"build #{cmd.index} dropped: {describe_build(gone, ctx)}" + (
                f" (the others are now #1-#{len(self.builds)})" if self.builds else "")
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
    u = next((x for x in ctx.av.units if x.id == o.unit), None)
    if o.HasField("to") and u is not None and (u.tile.x, u.tile.y) == (o.to.x, o.to.y):
        return f"{name}: stays"
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
ID_LIKE = re.compile(r"\b[0-9a-f]{10}\b")
FIELD_AT = re.compile(r"^(units|builds|deploy)\[(\d+)\]")


def in_player_words(err: ApiError, sent: A.ArchipelagoOrders | None, ctx: Context) -> str:
    """A refusal as the player reads it: which of its orders (by unit name and tile), the server's
    reason with any internal id replaced by the unit's name, the rule and where to read it."""
    subject = ""
    m = FIELD_AT.match(err.field or "")
    if m is not None and sent is not None:
        k = int(m[2])
        if m[1] == "units" and k < len(sent.units):
            subject = f"your order for {describe_order(sent.units[k], ctx)}"
        elif m[1] == "builds" and k < len(sent.builds):
            subject = f"build #{k + 1} ({describe_build(sent.builds[k], ctx)})"
        elif m[1] == "deploy" and k < len(sent.deploy):
            subject = f"the deployment of {ctx.unit_name(sent.deploy[k].unit)} at {_xy(sent.deploy[k].tile)}"
    known = {u.id for u in ctx.av.units} | {e.id for e in ctx.av.enemies} | {g.id for g in ctx.av.enemy_log}
    reason = ID_LIKE.sub(lambda mm: ctx.unit_name(mm[0]) if mm[0] in known else "a unit", err.message)
    reason = re.sub(r"^these orders break a rule \([^)]*\):\s*", "", reason, flags=re.I)
    rule = f" (rule {err.rule}: /rules/archipelago#{err.rule})" if err.rule else ""
    return f"refused: {subject + ': ' if subject else ''}{reason}{rule}"


def check_draft(draft: Draft, ctx: Context) -> list[str]:
    """Every problem the client can see in the draft before sending it (all together)."""
    problems = []
    by_id = {u.id: u for u in ctx.av.units}
    for o in draft.units.values():
        u = by_id.get(o.unit)
        if u is None:
            problems.append(f"{ctx.unit_name(o.unit)} is gone: its order is dropped")
            continue
        try:
            _check_terrain(u, list(o.path), o.to if o.HasField("to") else None, ctx)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


class ArchipelagoUI(RoundUI):
    """The Archipelago screen and prompt for :func:`client.play.play`."""

    setup_default = "deployed your units in the default layout (A15)"

    def __init__(self) -> None:
        self.last: game_pb2.GetViewResponse | None = None  # for the live notices' names
        self.labels: dict[str, str] = {}  # unit id -> label, for the whole game (the store's when bound)
        self.seat: Seat | None = None
        self.draft = Draft()
        self.draft_round = -1

    def bind(self, seat: Seat) -> None:
        self.seat = seat
        self.labels = seat.store.labels

    def context(self, view: game_pb2.GetViewResponse) -> Context:
        ctx = Context.of(view, self.labels)
        if self.seat is not None and self.seat.store.labels is self.labels:
            self.seat.store.save()
        return ctx

    def draft_for(self, view: game_pb2.GetViewResponse, ctx: Context) -> Draft:
        """This round's draft: the one being built, else the one kept on this machine, else the last
        submission of the round."""
        if self.draft_round == view.round:
            return self.draft
        stored = self.seat.store.draft(view.round) if self.seat is not None else None
        if stored is not None:
            self.draft = Draft.of_plain(stored.get("orders") or {}, ctx)
        elif view.HasField("archipelago_pending"):
            self.draft = Draft.of(view.archipelago_pending)
        else:
            self.draft = Draft()
        self.draft_round = view.round
        return self.draft

    def keep(self, view: game_pb2.GetViewResponse, draft: Draft, done: bool = False) -> None:
        if self.seat is not None:
            self.seat.store.set_draft(view.round, draft.plain(), done)

    def render(self, view: game_pb2.GetViewResponse) -> str:
        self.last = view
        if not view.HasField("archipelago"):
            return render(view)
        ctx = self.context(view)
        return screen(view, ctx.marks, self.draft_for(view, ctx))

    def progress(self, view: game_pb2.GetViewResponse) -> str:
        av = view.archipelago
        return f"round {view.round}" + (f" of {av.max_rounds}" if av.max_rounds else "")

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        return {s.seat: f"score {s.score}" for s in view.archipelago.seats}

    def words(self, view: game_pb2.GetViewResponse, before: Sequence[str]) -> Sequence[str]:
        if not before:
            return VERBS
        verb = ALIASES.get(before[0].lower(), before[0].lower())
        own = list(Marks.of(view.archipelago, dict(self.labels)).own)
        if len(before) == 1 and verb in ("move", "goto", "act", "stay", "deploy", "standing"):
            return own
        if verb == "build" and len(before) == 1:
            return sorted(k for k, t in BUILD_TYPES.items() if UNIT_TYPES[t].buildable and not k.startswith("rank"))
        if verb == "act" and len(before) == 2:
            return ACTIONS
        if verb == "act" and len(before) == 3:
            return list(Marks.of(view.archipelago).enemy)
        if verb == "standing" and len(before) == 2:
            return STANDING_KINDS
        if verb in ("bonus", "bank"):
            return RESOURCES
        if verb == "posture":
            return POSTURES
        if verb == "move":
            return list(DIRECTIONS)
        if verb in ("accept", "decline", "withdraw"):
            return [o.id for o in view.archipelago.offers]
        return []

    def my_status(self, view: game_pb2.GetViewResponse) -> str:
        base = super().my_status(view)
        if self.draft_round == view.round and len(self.draft) and base != "done":
            n = len(self.draft)
            return f"not done · draft of {n} order{'s' if n != 1 else ''} (done sends it)"
        return base

    def welcome_back(self, seat: Seat, view: game_pb2.GetViewResponse) -> str | None:
        stored = seat.store.draft(view.round)
        if stored is None or view.status != lobby_pb2.GAME_STATUS_RUNNING:
            return None
        n = len(Draft.of_plain(stored.get("orders") or {}))
        if stored.get("done"):
            return f"your orders for round {view.round} are in ({n})"
        return f"your draft is back ({n} order{'s' if n != 1 else ''}, not sent: done sends it)"

    def autopilot_turn(self, turn: game_pb2.AutopilotTurn, view: game_pb2.GetViewResponse) -> str:
        o = turn.archipelago
        ctx = self.context(view)
        parts = [describe_order(u, ctx) for u in o.units]
        parts += [f"build {describe_build(b, ctx)}" for b in o.builds]
        if o.bonus:
            parts.append(f"bonus {o.bonus}")
        if o.deploy:
            parts.append(f"{len(o.deploy)} deployment(s)")
        return "; ".join(parts) or "nothing (your units held still)"

    def notice(self, update: game_pb2.Update) -> str | None:
        """Chat, offers and trades of the others as they happen; who is done."""
        if self.last is None:
            return None
        ctx = Context.of(self.last, dict(self.labels))
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

    async def idle(self, seat: Seat, view: game_pb2.GetViewResponse) -> None:
        """Done, the round still open: the orders can still be changed and sent again (A16)."""
        if view.HasField("archipelago") and view.status == lobby_pb2.GAME_STATUS_RUNNING and view.submitted:
            await self.orders(seat, view)
        else:
            await super().idle(seat, view)

    async def orders(self, seat: Seat, view: game_pb2.GetViewResponse) -> str:
        """Commands until the orders are in (done), or the round closes (MOVED_ON); raises Leave."""
        if self.seat is None:
            self.bind(seat)
        ctx = self.context(view)
        draft = self.draft_for(view, ctx)
        setup = view.archipelago.round == 0
        if view.submitted:
            seat.say(f"you are done for round {view.round}; you may still change your orders and type done again")
        elif setup:
            seat.say("round 0, deployment: deploy <unit> <x> <y> on your home island (ships: on the sea next to it),\n"
                     "then done; units left out keep the default layout (A13-A15). help: all commands")
        else:
            seat.say("your orders, one a line: move <unit> N E · goto <unit> <x> <y> · act <unit> outpost · "
                     "build <type> · show · done")
        if len(draft) and not view.submitted:
            seat.say("\n".join(draft.describe(ctx)) + "\n(your orders so far this round: continue from them)")
        while True:
            cmd = await seat.read_parsed(view, lambda: f"{'deploy' if setup else 'orders'} ({len(draft)} so far)> ",
                                         functools.partial(parse_command, ctx=ctx))
            if cmd is None:
                return MOVED_ON
            try:
                if isinstance(cmd, ControlCmd):
                    outcome = await self._control(cmd.name, seat, view, ctx, draft)
                    if outcome is not None:
                        return outcome
                elif isinstance(cmd, ActionCmd):
                    fresh = await self._act(cmd, seat, view, ctx)
                    if fresh is not None:
                        ctx = self.context(fresh)
                elif isinstance(cmd, StandingCmd):
                    await self._standing(cmd, seat, view, ctx)
                else:
                    seat.say(draft.apply(cmd, ctx))
                    self.keep(view, draft)
            except ValueError as exc:
                seat.say(f"error: {exc}")

    async def _control(self, name: str, seat: Seat, view: game_pb2.GetViewResponse, ctx: Context,
                       draft: Draft) -> str | None:
        if name == "help":
            seat.say(HELP)
        elif name == "quit":
            from client.terminal import Leave

            raise Leave("quit")
        elif name == "types":
            seat.say(unit_types())
        elif name == "show":
            seat.say("\n".join(draft.describe(ctx)))
        elif name == "clear":
            draft.clear()
            self.keep(view, draft)
            seat.say("orders cleared")
        elif name in ("map", "info"):
            fresh = await self._fresh(seat, view)
            v = fresh if fresh is not None else ctx.view
            if name == "map":
                seat.term.clear()
                seat.say(screen(v, self.context(v).marks, draft))
            else:
                seat.say(render(v, self.labels))
        elif name == "standing":
            fresh = await self._fresh(seat, view)
            seat.say(describe_all_standing(fresh if fresh is not None else view, ctx))
        else:  # done, draft
            return await self._submit(seat, view, ctx, draft, done=name == "done")
        return None

    async def _submit(self, seat: Seat, view: game_pb2.GetViewResponse, ctx: Context, draft: Draft, *,
                      done: bool) -> str | None:
        problems = check_draft(draft, ctx)
        if problems:
            seat.say("not sent — " + ("these orders need a change:" if len(problems) > 1 else "this order needs a "
                                      "change:") + "".join(f"\n  {p}" for p in problems))
            return None
        sent = draft.orders()
        try:
            await seat.client.submit_message(seat.game_id, view.version, "archipelago", sent, key=seat.key(),
                                             draft=not done)
        except ApiError as err:
            if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed meanwhile
                seat.say(f"too late: {err.message}")
                return MOVED_ON
            seat.say(in_player_words(err, sent, ctx))
            return None
        n = len(draft)
        what = f"{n} order{'s' if n != 1 else ''}"
        if not done:
            seat.feed.drafted.add(view.round)
            self.keep(view, draft)
            seat.say(f"draft saved for round {view.round} ({what}); it stands if the round closes before you "
                     "are done (type done when you are)")
            return None
        seat.feed.mine.add(view.round)
        self.keep(view, draft, done=True)
        seat.say(f"orders in for round {view.round} ({what})")
        return SUBMITTED

    async def _standing(self, cmd: StandingCmd, seat: Seat, view: game_pb2.GetViewResponse, ctx: Context) -> None:
        fresh = await self._fresh(seat, view)
        now = A.ArchipelagoStandingOrders()
        src = fresh if fresh is not None else view
        if src.HasField("archipelago_standing"):
            now.CopyFrom(src.archipelago_standing)
        if cmd.posture:
            now.posture = cmd.posture
            said = f"posture: {cmd.posture} (A71)"
        else:
            kept = [o for o in now.units if o.unit != cmd.unit]
            del now.units[:]
            now.units.extend(kept)
            if cmd.order is not None:
                now.units.append(cmd.order)
                said = f"standing order: {describe_standing(cmd.order, ctx)}"
            else:
                said = f"standing order of {ctx.unit_name(cmd.unit)} cleared"
        try:
            await seat.client.set_standing(seat.game_id, key=seat.key(), archipelago=now)
        except ApiError as err:
            seat.say(in_player_words(err, None, ctx))
            return
        seat.say(said)

    async def _act(self, cmd: ActionCmd, seat: Seat, view: game_pb2.GetViewResponse,
                   ctx: Context) -> game_pb2.GetViewResponse | None:
        """An immediate action; the view after it (None when refused or not readable)."""
        try:
            await seat.client.act(seat.game_id, key=seat.key(), **{cmd.kind: cmd.message})
        except ApiError as err:
            seat.say(in_player_words(err, None, ctx))
            return None
        fresh = await self._fresh(seat, view)
        line = f"done: {describe_action(cmd, ctx)}"
        if fresh is not None and fresh.HasField("archipelago"):
            if cmd.kind in ("bank", "accept"):
                line += f" — stock: {_stock(fresh.archipelago.stock)}"
            if cmd.kind == "offer":
                mine = [o.id for o in fresh.archipelago.offers if o.from_seat == view.you]
                if mine:
                    line += f" (offer {mine[-1]})"
        seat.say(line)
        return fresh if fresh is not None and fresh.round == view.round else None

    @staticmethod
    async def _fresh(seat: Seat, view: game_pb2.GetViewResponse) -> game_pb2.GetViewResponse | None:
        with contextlib.suppress(ApiError, OSError):
            fresh = await seat.client.view(seat.game_id)
            if fresh.HasField("archipelago"):
                return fresh
        return None


def describe_all_standing(view: game_pb2.GetViewResponse, ctx: Context) -> str:
    if not view.HasField("archipelago_standing"):
        return "standing orders: none (posture hold: your units stay when you are away, A71)"
    so = view.archipelago_standing
    lines = [f"standing orders: posture {so.posture or 'hold'} (A71)"]
    lines += [f"  {describe_standing(o, ctx)}" for o in so.units] or ["  no unit has its own standing order"]
    if so.build_queue:
        lines.append("  build queue: " + ", ".join(describe_build(b, ctx) for b in so.build_queue))
    if so.HasField("bonus"):
        lines.append(f"  bonus: {so.bonus}")
    return "\n".join(lines)


__all__ = ["ArchipelagoUI", "Command", "Context", "Draft", "Marks", "describe_event", "in_player_words",
           "parse_command", "render", "render_map", "screen"]
