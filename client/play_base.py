"""What every game's terminal UI shares (:mod:`client.play` runs the loop; :mod:`client.play_salvo`,
:mod:`client.play_archipelago` and :mod:`client.play_arcmage` are the games'): the player's seat at the
terminal (:class:`Seat`: the live status of the toolbar, reading a line unless the round closes first,
leaving with a word on how to come back), what a game's UI offers the loop (:class:`GameUI`, and
:class:`RoundUI` for the round games), the commands every game has (:func:`common_command`) and the
clock's words."""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient as Client
from client.draft_store import DraftStore, secret_file
from client.errors import ApiError
from client.feed import Feed
from client.seating import come_back_line
from client.terminal import ABANDONED, Leave, Terminal


class EmptyLine(ValueError):
    """Nothing was typed: ask again (never submit an empty order by accident)."""


MOVED_ON, SUBMITTED = "moved on", "submitted"
T = TypeVar("T")
#: how leaving ends the command: `quit` 0, the end of input (Ctrl-D) 1, Ctrl-C 130
LEAVE_RC = {"quit": 0, "eof": 1, "interrupt": 130}
COMMON_HELP = """\
  help                         this list
  quit                         leave (Ctrl-C and Ctrl-D too): your seat stays yours, the autopilot plays it while
                               you are away; the command to come back is shown"""


def clock_parts(deadline_unix_ms: int, now_ms: float | None = None) -> tuple[int, str]:
    """(whole seconds left, the local time of the deadline with its zone 'HH:MM:SS CET') of a deadline > 0."""
    now = time.time() * 1000 if now_ms is None else now_ms
    left = max(0, math.ceil((deadline_unix_ms - now) / 1000))
    return left, time.strftime("%H:%M:%S %Z", time.localtime(deadline_unix_ms / 1000))


def countdown(deadline_unix_ms: int, now_ms: float | None = None) -> str:
    """'47 s left (closes 15:42:10)', '' without a deadline."""
    if deadline_unix_ms <= 0:
        return ""
    left, at = clock_parts(deadline_unix_ms, now_ms)
    return f"{left} s left (closes {at})"


@dataclass
class Presence:
    """The players' strip, kept live from the updates: who submitted, who is connected."""

    submitted: dict[int, bool] = field(default_factory=dict)
    connected: dict[int, bool] = field(default_factory=dict)

    def of(self, view: game_pb2.GetViewResponse) -> None:
        self.submitted = {p.seat: p.submitted for p in view.players}
        self.connected = {p.seat: p.connected for p in view.players}

    def take(self, u: game_pb2.Update) -> bool:
        """An update's news for the strip; whether it changed."""
        if u.kind == "submitted" and u.seat >= 0:
            self.submitted[u.seat] = bool(json_format.MessageToDict(u.data).get("done", True))
        elif u.kind in ("connected", "disconnected") and u.seat >= 0:
            self.connected[u.seat] = u.kind == "connected"
        elif u.kind == "round_opened":
            self.submitted = {s: False for s in self.submitted}
        else:
            return False
        return True


class Seat:
    """The player's seat at the terminal for the whole game: the client, the stream, the terminal, the
    local store, the latest view."""

    def __init__(self, client: Client, game_id: str, feed: Feed, term: Terminal, store: DraftStore,
                 ui: GameUI, view: game_pb2.GetViewResponse, *, title_of: Callable[[str], str] = str) -> None:
        self.client = client
        self.game_id = game_id
        self.feed = feed
        self.term = term
        self.store = store
        self.ui = ui
        self.view = view
        self.presence = Presence()
        self.presence.of(view)
        self.mine = ""  # the player's own status, as the UI last set it ("draft (3 orders)")
        self.secret_file: str | None = None  # where the seat's secret is, for the way back
        self.title_of = title_of  # a game kind's name for the toolbar ("Archipelago"; client.play.game_title)

    # ------------------------------------------------------------------ the live status
    def label(self) -> str:
        """The plain transcript's prompt label: '[round 3 · closes 15:42:10 · 57 s left]'."""
        return self.ui.label(self.view)

    def status(self) -> str:
        """The toolbar: the game, round, countdown, the player's status; the players' strip."""
        v = self.view
        kind = self.title_of(v.game)
        top = [f"{kind} · {self.ui.progress(v)}"]
        clock = countdown(self.ui.deadline(v))
        if clock and v.status == lobby_pb2.GAME_STATUS_RUNNING:
            top.append(clock)
        top.append(f"you: {self.mine or self.ui.my_status(v)}")
        scores = self.ui.scores(v)
        strip = []
        for p in v.players:
            me = p.seat == v.you
            on = self.feed.opened if me else self.presence.connected.get(p.seat, p.connected)
            done = self.presence.submitted.get(p.seat, p.submitted)
            bits = ["done" if done else "playing"] if v.status == lobby_pb2.GAME_STATUS_RUNNING else []
            bits.append("connected" if on else "away")
            if p.autopilot:
                bits.append("autopilot")
            if p.seat in scores:
                bits.append(scores[p.seat])
            strip.append(f"{p.seat} {p.nickname}{' (you)' if me else ''}: {', '.join(bits)}")
        return " · ".join(top) + "\n" + " │ ".join(strip)

    # ------------------------------------------------------------------ reading
    async def read(self, view: game_pb2.GetViewResponse, prompt: str) -> str | None:
        """The player's next line; None when the round closed (or the game ended) first: the prompt
        is abandoned, what was typed stays for the next prompt (never run).  Raises Leave."""
        ask = asyncio.ensure_future(self.term.ask(prompt))
        moved = asyncio.ensure_future(self.feed.until_stale(view))
        try:
            await asyncio.wait({ask, moved}, return_when=asyncio.FIRST_COMPLETED)
            if not ask.done():
                self.term.abandon()
                text = await ask
                moved.result()  # the stream's fatal error, if that is what happened
                return None if text == ABANDONED or moved.done() else text
            text = ask.result()
            return None if text == ABANDONED else text
        finally:
            for task in (ask, moved):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Leave):
                        await task

    async def read_parsed(self, view: game_pb2.GetViewResponse, prompt: Callable[[], str],
                          parse: Callable[[str], T],
                          refused: Callable[[str, ValueError], Awaitable[None]] | None = None) -> T | None:
        """The player's next line as ``parse`` reads it; None when the step moved on first (see
        :meth:`read`).  A blank line (:class:`EmptyLine`) is asked for again; so is a line ``parse``
        refuses with a ValueError, once ``refused(line, error)`` has run (by default: says
        ``error: ...``).  ``prompt()`` is asked anew before each line.  Raises Leave."""
        while True:
            text = await self.read(view, prompt())
            if text is None:
                return None
            try:
                return parse(text)
            except EmptyLine:
                continue
            except ValueError as exc:
                if refused is None:
                    self.say(f"error: {exc}")
                else:
                    await refused(text, exc)

    def say(self, text: str) -> None:
        self.term.say(text)

    def key(self) -> str:
        return f"play-{self.view.round}-{secrets.token_hex(6)}"

    # ------------------------------------------------------------------ leaving
    def comeback(self, how: str) -> str:
        """What the player reads when leaving: the seat stays, the command that comes back."""
        v = self.view
        why = {"quit": "you left", "eof": "end of input: leaving", "interrupt": "interrupted: leaving"}[how]
        path = self.secret_file
        if path is None and self.client.secret and v.code and self.term.interactive:  # kept (0600, never printed)
            kept = secret_file(v.code, self.client.secret)
            path = str(kept) if kept is not None else None
        back = come_back_line(v.code, secret_file=path, server=getattr(self.client, "address", "") or None)
        return (f"{why}. Your seat stays yours: come back within a few seconds and nothing is lost (your draft\n"
                f"is kept on this machine); while you are away, the autopilot plays for you once the others are done.\n"
                f"{back[:1].upper()}{back[1:]}")


def deadline_label(round_: int, deadline_unix_ms: int, now_ms: int | None = None) -> str:
    """'[round 3 · closes 15:42:10 CET · 57 s left]' (local time and its zone; the seconds left as of ``now_ms``)."""
    if deadline_unix_ms <= 0:
        return f"[round {round_}]"
    left, clock = clock_parts(deadline_unix_ms, now_ms)
    return f"[round {round_} · closes {clock} · {left} s left]"


class GameUI(Protocol):
    """What one game kind adds to the loop: its screen and its round prompt."""

    # what the autopilot did for a player who missed round 0 (for the close report)
    setup_default: str

    def render(self, view: game_pb2.GetViewResponse) -> str:
        """The whole screen for ``view`` (at most 36 lines of at most 120 characters: with the toolbar
        and the prompt it fits a 120×40 terminal)."""

    def expected(self, view: game_pb2.GetViewResponse) -> bool:
        """The player is to act now (round games: ``view.expected``; turn games: its seat is in the step)."""

    def waiting(self, view: game_pb2.GetViewResponse) -> str:
        """The line shown while the others act."""

    def label(self, view: game_pb2.GetViewResponse) -> str:
        """The prompt's label in a plain transcript ('[round 3 · closes … · 57 s left]')."""

    def progress(self, view: game_pb2.GetViewResponse) -> str:
        """'round 3 of 60' for the toolbar."""

    def deadline(self, view: game_pb2.GetViewResponse) -> int:
        """The deadline the countdown counts to (unix ms, 0: none)."""

    def my_status(self, view: game_pb2.GetViewResponse) -> str:
        """The player's own status ('done', 'not done')."""

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        """Each seat's score for the strip ('score 3')."""

    def words(self, view: game_pb2.GetViewResponse, before: Sequence[str]) -> Sequence[str]:
        """Completion candidates after the words ``before``."""

    async def orders(self, seat: Seat, view: game_pb2.GetViewResponse) -> str:
        """Ask for this round's orders: SUBMITTED once they are in, MOVED_ON when the round closed
        first (the prompt abandoned, see :meth:`Seat.read`); raises Leave."""

    async def idle(self, seat: Seat, view: game_pb2.GetViewResponse) -> None:
        """At a terminal while the others act: commands that need no turn (chat, help, quit) until the
        view is out of date; raises Leave."""

    def notice(self, update: game_pb2.Update) -> str | None:
        """A line to show at once for a live update (None: nothing to show)."""

    def autopilot_turn(self, turn: game_pb2.AutopilotTurn, view: game_pb2.GetViewResponse) -> str:
        """What the autopilot (or the standing orders) played for the player in one round, in words."""

    def welcome_back(self, seat: Seat, view: game_pb2.GetViewResponse) -> str | None:
        """After a restart: what was restored (the draft), or None."""

    def bind(self, seat: Seat) -> None:
        """The seat the UI plays for the whole game (its local store)."""


class RoundUI:
    """What the UIs of round games share: the player acts while expected; the round's deadline."""

    def expected(self, view: game_pb2.GetViewResponse) -> bool:
        return view.expected

    def waiting(self, view: game_pb2.GetViewResponse) -> str:
        return f"{deadline_label(view.round, view.deadline_unix_ms)} waiting for the others"

    def label(self, view: game_pb2.GetViewResponse) -> str:
        return deadline_label(view.round, view.deadline_unix_ms)

    def progress(self, view: game_pb2.GetViewResponse) -> str:
        return f"round {view.round}"

    def deadline(self, view: game_pb2.GetViewResponse) -> int:
        return view.deadline_unix_ms

    def my_status(self, view: game_pb2.GetViewResponse) -> str:
        if view.status != lobby_pb2.GAME_STATUS_RUNNING:
            return "waiting" if view.status == lobby_pb2.GAME_STATUS_LOBBY else "game over"
        if view.submitted:
            return "done"
        if view.WhichOneof("pending") is not None:
            return "draft sent, not done"
        return "not done" if view.expected else "waiting"

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        return {}

    def welcome_back(self, seat: Seat, view: game_pb2.GetViewResponse) -> str | None:
        return None

    def bind(self, seat: Seat) -> None:
        pass

    async def idle(self, seat: Seat, view: game_pb2.GetViewResponse) -> None:
        while True:
            text = await seat.read(view, "waiting for the others (chat <text> · help · quit)> ")
            if text is None:
                return
            await common_command(seat, text, "Waiting for the others. Commands:\n  chat <text>                  to "
                                 "everyone\n" + COMMON_HELP)


async def common_command(seat: Seat, text: str, help_text: str) -> bool:
    """help, quit, exit and chat, for every game; whether ``text`` was one of them."""
    words = text.split()
    if not words:
        return True
    verb = words[0].lower()
    if verb in ("help", "?"):
        seat.say(help_text)
    elif verb in ("quit", "exit", "leave"):
        raise Leave("quit")
    elif verb in ("chat", "say"):
        rest = text.split(None, 1)[1].strip() if len(words) > 1 else ""
        if not rest:
            seat.say("chat <text>: a message to everyone")
            return True
        try:
            await seat.client.chat(seat.game_id, rest, key=f"chat-{secrets.token_hex(6)}")
            seat.say(f"chat sent: {rest}")
        except ApiError as err:
            seat.say(f"refused: {err.message}")
    else:
        seat.say(f"unknown command {words[0]!r} (help lists the commands)")
        return False
    return True
