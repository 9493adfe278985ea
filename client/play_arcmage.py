"""`archipelago play CODE` for Arcmage: the table as text and a numbered choice of the legal actions.

The table (:func:`render`): the turn, whose turn and phase; every seat's kingdoms (cities with their
defense, residents and enchantments), army, hand / deck / unbuilt counts, resource piles and
graveyard; the player's own hand with each card's cost, loyalty, type, attack/defense and text; its
unbuilt cities and resource cards; the stack (the last resolves first); the attack in progress; who
has priority (the step's seats) and the deadline's countdown; the pending decision; the card data's
licence line (Arcmage, CC BY-SA 4.0).  While the others act the screen is one line a step
(:func:`summary`), with the events of the game shown as they come (:meth:`ArcmageUI.notice`).

The prompt lists ``view.arcmage.legal`` numbered (:func:`describe_action` words each one); the player
types a number, ``pass``, ``card <id>`` (a card's whole face), ``table``, ``chat <text>``, ``help`` or
``quit``; while the others act, the same commands but the actions (chat, table, card, help, quit).
The chosen action goes to Game.Act with the view's version: a step that moved on meanwhile is
"too late", the new table is shown.  The game-neutral machinery is shared: the loop
(:mod:`client.play`), the Watch stream kept open all game (:mod:`client.feed`), the seat at the
terminal that abandons the prompt when the step moves on (:mod:`client.play_base`).
"""

from __future__ import annotations

import secrets
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.errors import ApiError
from client.play_base import COMMON_HELP, MOVED_ON, SUBMITTED, EmptyLine, Seat, clock_parts, common_command
from client.terminal import Leave
from client.views import view_dict

TEXT_WIDTH = 100  # a card's text in the hand is cut here ("card <id>" shows it whole)
HELP = """\
Type the number of an action from the list, or:
  pass                         pass: end this phase step, or let the stack resolve / the window close
  card <id>                    a card's whole face (e.g. card c12)
  table                        the table again, as it is now
  chat <text>                  a message to everyone
""" + COMMON_HELP
DRAWS = {"draw2": "draw 2 cards", "draw1": "draw 1 card (and put a card into a resource pile)",
         "draw0": "draw no card"}


def whole(v: Any) -> Any:
    """Struct numbers are floats: whole ones as ints, inside lists and objects too."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, list):
        return [whole(x) for x in v]
    if isinstance(v, dict):
        return {k: whole(x) for k, x in v.items()}
    return v


@dataclass
class Table:
    """The view as plain data, and the names of what it refers to."""

    view: game_pb2.GetViewResponse
    v: dict[str, Any]

    @classmethod
    def of(cls, view: game_pb2.GetViewResponse) -> Table:
        return cls(view, whole(view_dict(view)))

    @property
    def cards(self) -> dict[str, Any]:
        return dict(self.v.get("cards") or {})

    def face(self, cid: str) -> dict[str, Any]:
        card = self.cards.get(cid) or {}
        return dict((self.v.get("faces") or {}).get(str(card.get("key", "")), {}))

    def name(self, cid: Any) -> str:
        """'Footsoldier (c21)'; a card the player cannot see: its id."""
        if isinstance(cid, Mapping):
            return f"{cid.get('name', '?')} ({cid.get('id', '?')})" if cid.get("id") else str(cid.get("name", "?"))
        cid = str(cid)
        card = self.cards.get(cid)
        if cid == "army":
            return "the army"
        return f"{card.get('name') or self.face(cid).get('name') or '?'} ({cid})" if card else cid

    def who(self, seat: Any) -> str:
        try:
            s = int(seat)
        except (TypeError, ValueError):
            return str(seat)
        if s == self.view.you:
            return "you"
        nick = next((p.nickname for p in self.view.players if p.seat == s), "")
        return f"seat {s} ({nick})" if nick else f"seat {s}"

    def whose(self, seat: Any) -> str:
        """'your' or "seat 1 (bob)'s"."""
        who = self.who(seat)
        return "your" if who == "you" else f"{who}'s"

    def stats(self, cid: str) -> str:
        """A creature's 'attack/defense' in play (with its damage), a city's defense."""
        c = self.cards.get(cid) or {}
        if c.get("zone") == "city":
            return f"defense {c.get('city_defense', 0)}"
        if self.face(cid).get("type") == "city":  # (an unbuilt city: its printed defense)
            return f"defense {self.face(cid).get('defense', '?')}"
        if "attack" in c or "defense" in c:
            dmg = f", {c['damage']} damage" if c.get("damage") else ""
            return f"{c.get('attack', 0)}/{c.get('defense', 0)}{dmg}"
        return ""

    def in_play(self, cid: str) -> str:
        """'Footsoldier (c21) 1/1 marked [flying]' with its enchantments."""
        c = self.cards.get(cid) or {}
        parts = [self.name(cid)]
        if self.stats(cid):
            parts.append(self.stats(cid))
        if c.get("marked"):
            parts.append("marked")
        if c.get("keywords"):
            parts.append("[" + ", ".join(map(str, c["keywords"])) + "]")
        if c.get("enchantments"):
            parts.append("enchanted by " + ", ".join(self.name(e) for e in c["enchantments"]))
        return " ".join(parts)


SCREEN_W = 120  # the terminal's width: a line of the table is wrapped (hand lines cut) to it


def fit(lines: Sequence[str]) -> str:
    """The table's lines within SCREEN_W: a card of the hand cut (``card <id>`` shows it whole), any
    other long line wrapped under itself."""
    out: list[str] = []
    for line in lines:
        if len(line) <= SCREEN_W:
            out.append(line)
        elif line.startswith("  ") and " — " in line and "(c" in line.split(":", 1)[0]:
            out.append(line[: SCREEN_W - 1] + "…")
        else:
            indent = " " * (len(line) - len(line.lstrip()) + 2)
            out += textwrap.wrap(line, SCREEN_W, subsequent_indent=indent, break_on_hyphens=False)
    return "\n".join(out)


def cost_text(face: Mapping[str, Any]) -> str:
    """'cost 3 (loyalty 1)', 'cost X', '' for a card without cost (a city)."""
    cost = str(face.get("cost") or "")
    if not cost:
        return ""
    loyal = f" (loyalty {face['loyalty']})" if face.get("loyalty") else ""
    return f"cost {cost}{loyal}"


def face_line(face: Mapping[str, Any], width: int | None = TEXT_WIDTH) -> str:
    """'creature · Soldier · The Empire · cost 2 (loyalty 1) · 2/1 — text'."""
    bits = [str(face.get("type") or "?")]
    if face.get("subtypes"):
        bits.append(" ".join(map(str, face["subtypes"])))
    if face.get("faction"):
        bits.append(str(face["faction"]))
    if cost_text(face):
        bits.append(cost_text(face))
    if face.get("type") == "city" and face.get("defense") is not None:
        bits.append(f"defense {face['defense']}")
    elif face.get("attack") is not None or face.get("defense") is not None:
        bits.append(f"{face.get('attack', 0)}/{face.get('defense', 0)}")
    text = " ".join(str(face.get("text") or "").split())
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return " · ".join(bits) + (f" — {text}" if text else "")


def countdown(deadline_unix_ms: int, now_ms: float | None = None) -> str:
    """'closes 15:42:10 · 57 s left' (local time), '' without a deadline."""
    if deadline_unix_ms <= 0:
        return ""
    left, at = clock_parts(deadline_unix_ms, now_ms)
    return f"closes {at} · {left} s left"


def priority(t: Table, now_ms: float | None = None) -> str:
    """Who may act now and until when: 'priority: you (turn deadline: closes … · 57 s left)'."""
    step = t.view.step
    if step.kind == "over" or t.view.status == lobby_pb2.GAME_STATUS_OVER:
        return "the game is over"
    who = ", ".join(t.who(p) for p in step.players) or "nobody"
    clock = countdown(step.deadline_unix_ms, now_ms)
    what = f"{step.kind or '?'}" + (f", {step.deadline} deadline" if step.deadline else "")
    return f"priority: {who} ({what}{': ' + clock if clock else ''})"


def describe_option(option: Any, kind: str, t: Table) -> str:
    """A decision's option in words (card ids named; an interception as 'blocker intercepts attacker')."""
    if option is None:
        return "none / done"
    if isinstance(option, bool):
        return "yes" if option else "no"
    if isinstance(option, str):
        return t.name(option)
    if isinstance(option, list):
        if kind == "intercept" and len(option) == 2:
            return f"{t.name(option[0])} intercepts {t.name(option[1])}"
        if kind == "split":
            return "damage " + ", ".join(map(str, option))
        return ", ".join(describe_option(o, kind, t) for o in option)
    return str(option)


def describe_pending(t: Table) -> str:
    p = dict(t.v.get("pending") or {})
    if not p:
        return ""
    op, kind = p.get("op"), str(p.get("kind") or "").replace("_", " ")
    if op == "await":
        return f"pending: {t.who(t.v.get('active'))} to act in phase {p.get('phase', t.v.get('phase', '?'))}"
    if op == "decide":
        detail = p.get("detail") or {}
        extra = ("; " + ", ".join(f"{k} {describe_option(x, '', t)}" for k, x in detail.items())) if detail else ""
        return f"pending: {t.who(p.get('seat'))} to decide: {kind}{extra}"
    if op == "window":
        return f"pending: a window ({kind}): {', '.join(t.who(s) for s in p.get('players') or []) or 'nobody'} " \
               "may answer or pass"
    return f"pending: {op} {kind}".rstrip()


def describe_action(a: Mapping[str, Any], t: Table) -> str:
    """One legal action (an ArcmageAction as plain data) in words."""
    if not a:
        return "nothing"
    kind = next(iter(a))
    f = dict(a[kind] or {})
    if kind == "pass":
        return "pass"
    if kind == "choose":
        pkind = str((t.v.get("pending") or {}).get("kind") or "")
        return f"{pkind.replace('_', ' ') or 'choose'}: {describe_option(f.get('option'), pkind, t)}"
    if kind == "build":
        return f"build {t.name(f.get('card'))} instead of drawing"
    if kind == "draw":
        return DRAWS.get(str(f.get("option")), f"draw: {f.get('option')}")
    if kind == "resource":
        return f"resource: {t.name(f.get('card'))} into the {f.get('faction')} pile"
    if kind == "devote":
        return f"devote {t.name(f.get('card'))}" + (f" targeting {t.name(f['target'])}" if f.get("target") else "")
    if kind == "play":
        cid = str(f.get("card"))
        cost = cost_text(t.face(cid))
        text = f"cast {t.name(cid)}" + (f" ({cost})" if cost else "")
        if f.get("to"):
            text += " to the army" if f["to"] == "army" else f" into {t.name(f['to'])}"
        if f.get("x") is not None:
            text += f" with X = {f['x']}"
        if f.get("mode"):
            text += f" as {f['mode']}"
        if f.get("targets"):
            text += " targeting " + ", ".join(t.name(x) for x in f["targets"])
        if f.get("pay"):
            text += " paying " + ", ".join(f"{n} {fac}" for fac, n in f["pay"].items())
        return text
    if kind == "ability":
        text = f"use {t.name(f.get('card'))}'s ability"
        if f.get("targets"):
            text += " targeting " + ", ".join(t.name(x) for x in f["targets"])
        if f.get("with"):
            text += " with " + ", ".join(t.name(x) for x in f["with"])
        return text
    if kind == "move":
        return f"move {t.name(f.get('card'))} to {t.name(f.get('to'))}"
    if kind == "salvage":
        return f"salvage {t.name(f.get('card'))}"
    if kind == "attack":
        city = str(f.get("city"))
        owner = (t.cards.get(city) or {}).get("owner")
        return (f"attack {t.name(city)}" + (f" of {t.who(owner)}" if owner is not None else "")
                + " with " + ", ".join(t.name(x) for x in f.get("attackers") or []))
    return f"{kind} {f}"


def describe_event(kind: str, data: Mapping[str, Any], t: Table) -> str:
    """One event of the game (a Watch "event" update) in words, card ids named."""
    parts: list[str] = []
    for k, x in data.items():
        if k in ("player", "owner", "defender", "seat") and isinstance(x, (int, float)):
            parts.append(f"{k} {t.who(x)}")
        elif k in ("card", "city", "source", "target", "blocker", "attacker", "at") and isinstance(x, (str, Mapping)):
            parts.append(f"{k} {t.name(x)}")
        elif isinstance(x, list):
            parts.append(f"{k} " + (", ".join(t.name(c) if isinstance(c, (str, Mapping)) else str(c) for c in x)
                                    or "none"))
        elif isinstance(x, Mapping):
            parts.append(f"{k} " + (", ".join(f"{a}: {whole(b)}" for a, b in x.items()) or "none"))
        else:
            parts.append(f"{k} {whole(x)}")
    return f"{kind.replace('_', ' ')}: {'; '.join(parts)}" if parts else kind.replace("_", " ")


def render_seat(seat: Mapping[str, Any], t: Table) -> list[str]:
    s = int(seat.get("seat", 0))
    piles = ", ".join(f"{fac} {n}" + (f" ({seat.get('pile_marked', {}).get(fac)} marked)"
                                      if seat.get("pile_marked", {}).get(fac) else "")
                      for fac, n in (seat.get("pile_counts") or {}).items() if n) or "none"
    head = (f"{t.who(s)} (seat {s})" if s == t.view.you else t.who(s)) + (" — out" if seat.get("out") else "")
    lines = [f"{head}: hand {seat.get('hand_count', 0)} · deck {seat.get('deck_count', 0)} · unbuilt cities "
             f"{seat.get('unbuilt_count', 0)} · resources: {piles} · graveyard {len(seat.get('grave') or [])}"
             + (f" · removed {len(seat['removed'])}" if seat.get("removed") else "")]
    for city in seat.get("cities") or []:
        c = t.cards.get(city) or {}
        line = f"  kingdom {t.in_play(city)}"
        if c.get("residents"):
            line += " · residents: " + ", ".join(t.in_play(r) for r in c["residents"])
        lines.append(line)
    if not seat.get("cities"):
        lines.append("  no kingdom")
    army = seat.get("army") or []
    lines.append("  army: " + (", ".join(t.in_play(c) for c in army) if army else "none"))
    return lines


def render(view: game_pb2.GetViewResponse, now_ms: float | None = None) -> str:
    """The whole Arcmage table for ``view``."""
    if not view.HasField("arcmage"):
        return f"Arcmage — no table yet (the game has not started; code {view.code})"
    t = Table.of(view)
    v = t.v
    out = [f"Arcmage · turn {v.get('turn', 0)} · {t.whose(v.get('active'))} turn · phase {v.get('phase', '?')} · "
           f"you are seat {view.you}"]
    for seat in v.get("seats") or []:
        out += render_seat(seat, t)
    out.append("your hand:")
    for cid in v.get("hand") or []:
        out.append(f"  {t.name(cid)}: {face_line(t.face(cid))}")
    if not v.get("hand"):
        out.append("  empty")
    if v.get("unbuilt"):
        out.append("your unbuilt cities: " + ", ".join(f"{t.name(c)} {t.stats(c)}".rstrip() for c in v["unbuilt"]))
    mine = [(fac, p.get("cards") or []) for fac, p in (v.get("piles") or {}).items() if p.get("cards")]
    if mine:
        out.append("your resource piles: " + " · ".join(
            f"{fac}: " + ", ".join(t.name(c) + (" marked" if (t.cards.get(c) or {}).get("marked") else "")
                                   for c in cards) for fac, cards in mine))
    stack = v.get("stack") or []
    if stack:
        out.append("the stack (the last resolves first):")
        for i, item in enumerate(stack, 1):
            line = f"  {i}. {t.name(item.get('card'))} cast by {t.who(item.get('player'))}"
            if item.get("to"):
                line += f" to {t.name(item['to'])}"
            if item.get("targets"):
                line += " targeting " + ", ".join(t.name(x) for x in item["targets"])
            if item.get("x") is not None:
                line += f" (X = {item['x']})"
            out.append(line)
    combat = v.get("combat")
    if combat:
        line = (f"attack on {t.name(combat.get('city'))} of {t.who(combat.get('defender'))} by "
                + (", ".join(t.in_play(a) for a in combat.get("attackers") or []) or "nobody left"))
        blocks = combat.get("blocks") or {}
        if blocks:
            line += " · intercepted: " + "; ".join(
                f"{t.name(a)} by {', '.join(t.name(b) for b in (bl or {}).get('cards') or [])}"
                for a, bl in blocks.items())
        out.append(line)
    out.append(priority(t, now_ms))
    if describe_pending(t):
        out.append(describe_pending(t))
    if v.get("attribution"):
        out.append(str(v["attribution"]))
    return fit(out)


def summary(view: game_pb2.GetViewResponse, now_ms: float | None = None) -> str:
    """One line while the others act: the turn, the phase, the stack's height, who has priority (wrapped
    under itself when wider than the terminal: long nicknames)."""
    if not view.HasField("arcmage"):
        return render(view, now_ms)
    t = Table.of(view)
    stack = len(t.v.get("stack") or [])
    return fit([f"[turn {t.v.get('turn', 0)} · {t.whose(t.v.get('active'))} turn · {t.v.get('phase', '?')}"
                + (f" · stack {stack}" if stack else "") + f"] {priority(t, now_ms)}"])


def legal(view: game_pb2.GetViewResponse) -> list[dict[str, Any]]:
    """The player's legal actions now (ArcmageView.legal as plain data, whole numbers as ints)."""
    return [whole(json_format.MessageToDict(a)) for a in view.arcmage.legal]


def parse_choice(text: str, actions: Sequence[Mapping[str, Any]]) -> dict[str, Any] | tuple[str, str]:
    """The player's answer: an action (a number of the list, or ``pass``), or a command
    (``("card", id)``, ``("table", "")``, ``("help", "")``, ``("chat", text)``).  EmptyLine for a blank
    line, ValueError explaining a bad one."""
    words = text.split()
    if not words:
        raise EmptyLine("nothing entered")
    verb = words[0].lower()
    if verb.isdigit():
        n = int(verb)
        if not 1 <= n <= len(actions):
            raise ValueError(f"no action {n}: choose 1-{len(actions)}" if actions else "no action to choose now")
        return dict(actions[n - 1])
    if verb in ("pass", "p"):
        return {"pass": {}}
    if verb in ("table", "t", "help", "h", "?", "quit", "exit", "leave"):
        return ({"t": "table", "h": "help", "?": "help", "exit": "quit", "leave": "quit"}.get(verb, verb), "")
    if verb == "card":
        if len(words) != 2:
            raise ValueError("card <id>, e.g. card c12")
        return ("card", words[1])
    if verb == "chat":
        rest = text.split(None, 1)[1].strip() if len(words) > 1 else ""
        if not rest:
            raise ValueError("chat <text>")
        return ("chat", rest)
    raise ValueError(f"unknown command {words[0]!r}: type a number from the list, pass, or help")


def action_list(view: game_pb2.GetViewResponse, actions: Sequence[Mapping[str, Any]]) -> str:
    t = Table.of(view)
    lines = [f"  {i:>2}. {describe_action(a, t)}" for i, a in enumerate(actions, 1)]
    if {"pass": {}} not in actions:
        lines.append("      (pass is not legal now)")
    return fit(["your actions:", *lines])


class ArcmageUI:
    """The Arcmage table and prompt for :func:`client.play.play`."""

    setup_default = "made your setup choice"

    def __init__(self) -> None:
        self.last: game_pb2.GetViewResponse | None = None  # for the live notices' names

    def expected(self, view: game_pb2.GetViewResponse) -> bool:
        return view.status == lobby_pb2.GAME_STATUS_RUNNING and view.you in view.step.players

    def waiting(self, view: game_pb2.GetViewResponse) -> str:
        return "waiting for " + (", ".join(Table.of(view).who(p) for p in view.step.players) or "the others")

    def render(self, view: game_pb2.GetViewResponse) -> str:
        first = self.last is None
        self.last = view
        if first or self.expected(view) or view.status != lobby_pb2.GAME_STATUS_RUNNING:
            return render(view)
        return summary(view)

    def notice(self, update: game_pb2.Update) -> str | None:
        """The game's events as they happen (only those the player may see: the server sends no other),
        and the others' chat; a line wider than the terminal wrapped under itself."""
        if self.last is None or not self.last.HasField("arcmage"):
            return None
        t = Table.of(self.last)
        if update.kind == "chat" and update.chat.seat != self.last.you:
            return fit([f"[chat] {t.who(update.chat.seat)}: {update.chat.text}"])
        if update.kind != "event":
            return None
        return fit([f"[{describe_event(update.event_kind, whole(json_format.MessageToDict(update.data)), t)}]"])

    def label(self, view: game_pb2.GetViewResponse) -> str:
        t = Table.of(view)
        clock = countdown(view.step.deadline_unix_ms)
        return f"[turn {t.v.get('turn', 0)} · {view.step.kind}{' · ' + clock if clock else ''}]"

    def progress(self, view: game_pb2.GetViewResponse) -> str:
        if not view.HasField("arcmage"):
            return "lobby"
        t = Table.of(view)
        return f"turn {t.v.get('turn', 0)} · {t.whose(t.v.get('active'))} turn · {t.v.get('phase', '?')}"

    def deadline(self, view: game_pb2.GetViewResponse) -> int:
        return view.step.deadline_unix_ms

    def my_status(self, view: game_pb2.GetViewResponse) -> str:
        if view.status != lobby_pb2.GAME_STATUS_RUNNING:
            return "waiting" if view.status == lobby_pb2.GAME_STATUS_LOBBY else "game over"
        return "your move" if self.expected(view) else "waiting for " + (
            ", ".join(Table.of(view).who(p) for p in view.step.players) or "the others")

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        out = {}
        for seat in (view_dict(view).get("seats") or []):
            n = len(seat.get("cities") or [])
            out[int(seat.get("seat", 0))] = f"{n} kingdom{'s' if n != 1 else ''}" + (
                " (out)" if seat.get("out") else "")
        return out

    def words(self, view: game_pb2.GetViewResponse, before: Sequence[str]) -> Sequence[str]:
        if not before:
            numbers = [str(i) for i in range(1, len(view.arcmage.legal) + 1)]
            return ["pass", "card", "table", "chat", "help", "quit", *numbers]
        if before[0].lower() == "card" and len(before) == 1:
            return sorted(Table.of(view).cards)
        return []

    def welcome_back(self, seat: Seat, view: game_pb2.GetViewResponse) -> str | None:
        return None

    def bind(self, seat: Seat) -> None:
        pass

    def autopilot_turn(self, turn: game_pb2.AutopilotTurn, view: game_pb2.GetViewResponse) -> str:
        t = Table.of(view)
        acts = [describe_action(whole(json_format.MessageToDict(a)), t) for a in turn.arcmage.actions]
        return "; ".join(acts) or "nothing"

    async def idle(self, seat: Seat, view: game_pb2.GetViewResponse) -> None:
        async def other(text: str, _: ValueError) -> None:
            await common_command(seat, text, HELP)

        while True:
            choice = await seat.read_parsed(view, lambda: "waiting (chat <text> · table · card <id> · help · quit)> ",
                                            lambda text: parse_choice(text, []), other)
            if choice is None:
                return
            if isinstance(choice, tuple):
                await self._command(choice, seat, view, [])
            else:
                seat.say("not your move now: wait for your turn (or chat, table, card <id>, help, quit)")

    async def orders(self, seat: Seat, view: game_pb2.GetViewResponse) -> str:
        """A numbered action until one is in (SUBMITTED) or the step moves on (MOVED_ON); raises Leave."""
        actions = legal(view)
        seat.say(action_list(view, actions))
        t = Table.of(view)
        async def refused(_: str, exc: ValueError) -> None:
            seat.say(fit([f"error: {exc}"]))

        while True:
            choice = await seat.read_parsed(view, lambda: f"action (1-{len(actions)}, pass, help)> ",
                                            lambda text: parse_choice(text, actions), refused)
            if choice is None:
                return MOVED_ON
            if isinstance(choice, tuple):
                await self._command(choice, seat, view, actions)
                continue
            try:
                await seat.client.act(seat.game_id, key=f"play-{view.version}-{secrets.token_hex(6)}",
                                      version=view.version,
                                      arcmage=json_format.ParseDict(choice, arcmage_pb2.ArcmageAction()))
            except ApiError as err:
                if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the step moved on meanwhile
                    seat.say(fit([f"too late: {err.message}"]))
                    return MOVED_ON
                seat.say(fit([f"refused: {err.message}" + (f" (rule {err.rule}: /rules/arcmage#{err.rule})"
                                                           if err.rule else "")]))
                continue
            seat.say(fit([f"done: {describe_action(choice, t)}"]))
            return SUBMITTED

    async def _command(self, cmd: tuple[str, str], seat: Seat, view: game_pb2.GetViewResponse,
                       actions: Sequence[Mapping[str, Any]]) -> None:
        name, arg = cmd
        if name == "help":
            seat.say(HELP)
        elif name == "quit":
            raise Leave("quit")
        elif name == "table":
            seat.say(render(view) + ("\n" + action_list(view, actions) if actions else ""))
        elif name == "card":
            t = Table.of(view)
            if arg not in t.cards:
                seat.say(f"error: no card {arg!r} you can see")
            else:
                seat.say(fit([f"{t.name(arg)}: {face_line(t.face(arg), None)}"
                              + (f" · artist {t.face(arg)['artist']}" if t.face(arg).get("artist") else "")]))
        elif name == "chat":
            await common_command(seat, f"chat {arg}", HELP)


__all__ = ["ArcmageUI", "Table", "action_list", "describe_action", "describe_event", "describe_pending", "legal",
           "parse_choice", "render", "summary"]
