"""`archipelago play CODE`: a human plays in the terminal.

The game-neutral machinery lives here: the Watch stream (:class:`Feed`), the player's seat at the
terminal (:class:`Seat`: the live status of the toolbar, reading a line unless the round closes first,
the local draft store, leaving with a word on how to come back) and the game loop (:func:`play`), which
hands the rendering and the round's prompt to the game kind's :class:`GameUI` (``view.game``, from
:mod:`client.games`): :class:`SalvoUI` below, :class:`client.play_archipelago.ArchipelagoUI` and
:class:`client.play_arcmage.ArcmageUI`.  The terminal itself (prompt_toolkit at a tty, a plain
transcript for pipes) is :mod:`client.terminal`'s.

Salvo shows the player's own grid (ships ``#``, hits ``X``, enemy misses ``o``), the enemy waters with the
player's shots marked by the round they were fired in (S8; in classic mode ``X``/``o``), the per-round
reports of its salvos (S6) and which of the player's own ships the enemy hit or sank.

A Watch stream stays open for the whole game (:class:`Feed`): while it is open the player counts as
connected (A17), so the round waits for the human's orders until its deadline instead of closing as
soon as the others have submitted.  When the round closes or the game ends while the player is at the
prompt, the prompt is abandoned (what was typed stays in the next prompt, never run), the close is
reported ("the autopilot played for you" when the player's orders were not in) and the new round shown.
A restart comes back: the Watch stream resumes from the last seq seen, the draft is restored
(:mod:`client.draft_store`), and what the autopilot played meanwhile is told (``autopilot_log``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client import views
from client.base import BaseClient as Client
from client.draft_store import DraftStore, secret_file
from client.errors import ApiError
from client.terminal import ABANDONED, Leave, Lines, PlainTerminal, StdinLines, Terminal, default_terminal

COLS = "ABCDEFGHIJ"
RETRY_S = 0.5
VIEW_TRIES = 60  # GetView attempts, RETRY_S apart, before giving up on an unreachable server
# Updates after which the screen is out of date: the lobby filled, the game started, a round closed
# or opened, a turn game's step moved on (who may act), the game ended, or the server dropped
# history (resync).
RELEVANT = frozenset({"joined", "started", "round_opened", "round_closed", "step", "game_over", "resync"})
# Stream errors that reconnecting cannot cure.
FATAL = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "INVALID_ARGUMENT"})


def _mark_round(r: int) -> str:
    return str(r) if r < 10 else chr(ord("a") + (r - 10) % 26)


def render(view: game_pb2.GetViewResponse) -> str:
    v: dict[str, Any] = views.view_dict(view)
    own: dict[str, str] = {}
    for ship in v.get("fleet", []):
        for sq in ship.get("squares", []):
            own[sq] = "#"
    for shot in v.get("incoming", []):
        own[shot["square"]] = "X" if shot.get("hit") else "o"
    enemy: dict[str, str] = {}
    for shot in v.get("shots", []):
        if "hit" in shot:
            enemy[shot["square"]] = "X" if shot["hit"] else "o"
        else:
            enemy[shot["square"]] = _mark_round(int(shot["round"]))
    for ship in v.get("enemy_fleet", []):
        for sq in ship.get("squares", []):
            enemy.setdefault(sq, "#")
    head = "   " + " ".join(COLS)
    title = f"Salvo · round {view.round} · you are seat {view.you}"
    if view.code:
        title += f" · game {view.code}"
    lines = [title, f"{'your fleet':<24}  enemy waters", f"{head}   {head}"]
    for row in range(1, 11):
        a = " ".join(own.get(f"{c}{row}", ".") for c in COLS)
        b = " ".join(enemy.get(f"{c}{row}", ".") for c in COLS)
        lines.append(f"{row:>2} {a}   {row:>2} {b}")
    for rep in v.get("reports", [])[-5:]:
        ships = ", ".join(f"{s['ship']} ×{s['count']}" for s in rep.get("ships", [])) or "nothing"
        sunk = f"; sunk: {', '.join(rep['sunk'])}" if rep.get("sunk") else ""
        lines.append(f"round {rep['round']}: {rep.get('hits', 0)} hit(s) — {ships}{sunk}")
    if v.get("enemy_sunk"):
        lines.append("enemy ships sunk: " + ", ".join(v["enemy_sunk"]))
    lines += own_damage(v)
    return "\n".join(lines)


def own_damage(v: dict[str, Any], last: int = 5) -> list[str]:
    """Which of the player's own ships the enemy hit or sank, by round (the latest ``last`` rounds
    with a hit), and the state of each damaged ship."""
    ship_of = {sq: s["name"] for s in v.get("fleet", []) for sq in s.get("squares", [])}
    by_round: dict[int, list[str]] = {}
    for shot in v.get("incoming", []):
        if shot.get("hit") and shot["square"] in ship_of:
            by_round.setdefault(int(shot.get("round", 0)), []).append(ship_of[shot["square"]])
    out = []
    for r in sorted(by_round)[-last:]:
        names = by_round[r]
        hit = ", ".join(f"{n} ×{names.count(n)}" if names.count(n) > 1 else n for n in dict.fromkeys(names))
        out.append(f"enemy round {r}: hit your {hit}")
    damaged = [s for s in v.get("fleet", []) if s.get("hits")]
    if damaged:
        out.append("your ships: " + ", ".join(
            f"{s['name']} sunk" if s.get("sunk") else f"{s['name']} hit {len(s['hits'])}/{s.get('size', 0)}"
            for s in damaged))
    return out


# ---------------------------------------------------------------------------------------- parsing
class EmptyLine(ValueError):
    """Nothing was typed: ask again (never submit an empty order by accident)."""


ORIENTATION = {"h": False, "horizontal": False, "v": True, "vertical": True}


def parse_placement(text: str) -> salvo_pb2.SalvoOrders:
    """S3: 'random' (or 'r'), or 'battleship A1 h, cruiser C3 v, ...' (h: rightwards, v: downwards).
    Raises EmptyLine for a blank line and ValueError naming the bad part otherwise."""
    if not text.strip():
        raise EmptyLine("nothing entered")
    if text.strip().lower() in ("random", "r"):
        return salvo_pb2.SalvoOrders(random_placement=True)
    orders = salvo_pb2.SalvoOrders()
    for part in text.split(","):
        words = part.split()
        if len(words) != 3:
            raise ValueError(f"expected '<ship> <bow square> h|v', got {part.strip()!r}")
        ship, bow, way = words
        if way.lower() not in ORIENTATION:
            raise ValueError(f"orientation must be h (rightwards) or v (downwards), got {way!r} in {part.strip()!r}")
        orders.placement.add(ship=ship.lower(), bow=bow.upper(), vertical=ORIENTATION[way.lower()])
    return orders


def parse_shots(text: str) -> salvo_pb2.SalvoOrders:
    """S5: the squares to fire at, separated by spaces or commas ('A1 b2, J10').  Raises EmptyLine for
    a blank line; the server checks the squares themselves (S5) and names the bad one."""
    squares = [w.upper() for w in text.replace(",", " ").split()]
    if not squares:
        raise EmptyLine("nothing entered")
    return salvo_pb2.SalvoOrders(shots=squares)


def deadline_label(round_: int, deadline_unix_ms: int, now_ms: int | None = None) -> str:
    """'[round 3 · closes 15:42:10 CET · 57 s left]' (local time and its zone; the seconds left as of ``now_ms``)."""
    if deadline_unix_ms <= 0:
        return f"[round {round_}]"
    now = time.time() * 1000 if now_ms is None else now_ms
    left = max(0, math.ceil((deadline_unix_ms - now) / 1000))
    clock = time.strftime("%H:%M:%S %Z", time.localtime(deadline_unix_ms / 1000))
    return f"[round {round_} · closes {clock} · {left} s left]"


# ---------------------------------------------------------------------------------------- the stream
@dataclass
class Closed:
    round: int
    early: bool


class Feed:
    """The player's Watch stream, open for the whole game (the player stays connected, A17), resumed
    from the last seq after a break.  It records what the screen needs: the seq of the latest update
    that makes the screen stale (``mark``), the rounds closed but not yet reported, and the rounds in
    which this player's orders were in."""

    def __init__(self, client: Client, game_id: str, view: game_pb2.GetViewResponse, resume_seq: int = 0) -> None:
        self.client = client
        self.game_id = game_id
        self.you = view.you
        if 0 < resume_seq <= view.seq:  # a restart: from the last seq seen (the rounds closed meanwhile are told)
            self.start_seq = resume_seq
            self.seq = min(resume_seq, view.seq - 1)  # (at least one update: it proves the stream is open)
        else:
            self.start_seq = view.seq  # the first view already shows everything up to here
            self.seq = max(0, view.seq - 1)  # from one before: the first update proves the stream is open
        self.mark = 0
        self.opened = False
        self.ended = False  # the stream ended after game_over
        self.error: BaseException | None = None
        self.mine: set[int] = set()  # rounds with this player's orders in
        self.drafted: set[int] = set()  # rounds with a draft of this player's (it stands at the close)
        self.expected: set[int] = set()  # rounds in which this player was to submit
        self.closed: list[Closed] = []
        # Called with every new update (after the first view), e.g. to show chat as it comes; and
        # with the live presence notices (seq 0: another seat connected or left).
        self.on_update: Callable[[game_pb2.Update], None] | None = None
        self.on_presence: Callable[[game_pb2.Update], None] | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def seen(self, view: game_pb2.GetViewResponse) -> None:
        """Note what a fresh view says about the current round."""
        if view.status != lobby_pb2.GAME_STATUS_RUNNING:
            return
        if view.expected or view.submitted:
            self.expected.add(view.round)
        if view.submitted:
            self.mine.add(view.round)
        elif view.WhichOneof("pending") is not None:
            self.drafted.add(view.round)

    def stale(self, view: game_pb2.GetViewResponse) -> bool:
        """Something happened since ``view`` (or can no longer happen): look again."""
        return self.mark > view.seq or self.ended

    async def wait(self, pred: Callable[[], bool]) -> None:
        """Until ``pred()`` holds; raises the stream's fatal error.  One waiter at a time."""
        while True:
            if self.error is not None:
                raise self.error
            if pred():
                return
            self._changed.clear()
            await self._changed.wait()

    async def until_stale(self, view: game_pb2.GetViewResponse) -> None:
        await self.wait(lambda: self.stale(view))

    async def until_open(self, view: game_pb2.GetViewResponse) -> None:
        """Until the stream is open (the player counts as connected) or ``view`` is out of date."""
        await self.wait(lambda: self.opened or self.stale(view))

    def reports(self, setup: str = "played the setup round for you") -> list[str]:
        """One line per round closed since the last call; ``setup`` says what the autopilot did when
        the player missed round 0."""
        out = []
        for c in self.closed:
            if c.round in self.expected and c.round not in self.mine and c.round in self.drafted:
                out.append(f"round {c.round} closed at its deadline — you were not done: your draft orders stood")
            elif c.round in self.expected and c.round not in self.mine:
                what = setup if c.round == 0 else "played for you"
                out.append(f"round {c.round} closed — your orders were not in: the autopilot {what}")
            elif c.early:
                out.append(f"round {c.round} closed: every connected player had submitted")
            else:
                out.append(f"round {c.round} closed at its deadline")
        self.closed.clear()
        return out

    def _take(self, u: game_pb2.Update) -> None:
        self.opened = True
        if u.seq <= self.start_seq:
            return
        if u.kind == "submitted" and u.seat == self.you:
            if json_format.MessageToDict(u.data).get("done", True):
                self.mine.add(u.round)
            else:
                self.drafted.add(u.round)
        elif u.kind == "round_closed":
            self.closed.append(Closed(u.round, bool(json_format.MessageToDict(u.data).get("early"))))
        if u.kind in RELEVANT:
            self.mark = u.seq
        if self.on_update is not None:
            self.on_update(u)

    async def _run(self) -> None:
        try:
            while True:
                try:
                    async with contextlib.aclosing(self.client.watch(self.game_id, self.seq)) as stream:
                        async for u in stream:
                            if u.seq == 0:  # live presence notices
                                self.opened = True
                                if self.on_presence is not None:
                                    self.on_presence(u)
                                continue
                            if u.kind != "resync" and u.seq != self.seq + 1:
                                break  # a broken stream (the protocol: reconnect from the last seq)
                            self.seq = u.seq
                            self._take(u)
                            self._changed.set()
                            if u.kind == "game_over":
                                self.ended = True
                    if self.ended:
                        return
                except (ApiError, OSError) as err:
                    if isinstance(err, ApiError) and err.status in FATAL:
                        raise
                await asyncio.sleep(RETRY_S)  # then resume from the last seq
        except Exception as exc:  # surfaces in wait() (cancellation is not an Exception: it propagates)
            self.error = exc
        finally:
            self._changed.set()




# ---------------------------------------------------------------------------------------- the seat
MOVED_ON, SUBMITTED = "moved on", "submitted"
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
                 ui: GameUI, view: game_pb2.GetViewResponse) -> None:
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

    # ------------------------------------------------------------------ the live status
    def label(self) -> str:
        """The plain transcript's prompt label: '[round 3 · closes 15:42:10 · 57 s left]'."""
        return self.ui.label(self.view)

    def status(self) -> str:
        """The toolbar: the game, round, countdown, the player's status; the players' strip."""
        v = self.view
        kind = game_title(v.game)
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

    def say(self, text: str) -> None:
        self.term.say(text)

    def key(self) -> str:
        return f"play-{self.view.round}-{secrets.token_hex(6)}"

    # ------------------------------------------------------------------ leaving
    def comeback(self, how: str) -> str:
        """What the player reads when leaving: the seat stays, the command that comes back."""
        from client.cli import come_back_line

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


def game_title(kind: str) -> str:
    from client.games import GAMES, game_client

    return game_client(kind).title if kind in GAMES else kind or "game"


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


SALVO_WORDS = ("help", "quit", "chat", "random")


class SalvoUI(RoundUI):
    """Salvo: the two grids and the placement / firing prompts."""

    setup_default = "placed your fleet at random"

    def __init__(self) -> None:
        self.you = -1
        self.names: dict[int, str] = {}

    def render(self, view: game_pb2.GetViewResponse) -> str:
        self.you = view.you
        self.names = {p.seat: p.nickname for p in view.players}
        return render(view)

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        sv = view.salvo
        if not sv.phase:
            return {}
        hits = sum(r.hits for r in sv.reports)
        taken = sum(1 for s in sv.incoming if s.hit)
        return {view.you: f"{hits} hit(s)", **{p.seat: f"{taken} hit(s)" for p in view.players if p.seat != view.you}}

    def words(self, view: game_pb2.GetViewResponse, before: Sequence[str]) -> Sequence[str]:
        if view.salvo.phase == "placement":
            if not before:
                return ["random", *[s.name for s in view.salvo.fleet_spec], "help", "quit"]
            return ["h", "v"] if len(before) % 3 == 2 else [s.name for s in view.salvo.fleet_spec]
        return list(SALVO_WORDS) if not before else []

    async def orders(self, seat: Seat, view: game_pb2.GetViewResponse) -> str:
        return await _salvo_orders(seat, view)

    def notice(self, update: game_pb2.Update) -> str | None:
        if update.kind == "chat" and update.chat.seat != self.you and update.chat.text:
            who = self.names.get(update.chat.seat) or update.chat.nickname or f"seat {update.chat.seat}"
            return f"[chat] {who}: {update.chat.text}"
        return None

    def autopilot_turn(self, turn: game_pb2.AutopilotTurn, view: game_pb2.GetViewResponse) -> str:
        o = turn.salvo
        if o.shots:
            return f"fired at {' '.join(o.shots)}"
        if o.placement or o.random_placement:
            return "placed your fleet" + (" at random" if o.random_placement else "")
        return "played"


SALVO_HELP = """\
Placement (round 0): 'random', or every ship with its bow square and h (rightwards) or v (downwards):
  battleship A1 h, cruiser C3 v, submarine E5 h, destroyer J1 v
Firing: the squares to fire at, separated by spaces or commas: A1 B2 J10
Also:
  chat <text>                  to everyone
""" + COMMON_HELP


async def _salvo_orders(seat: Seat, view: game_pb2.GetViewResponse) -> str:
    """Ask for this round's orders until they are in, the round closes (MOVED_ON); raises Leave."""
    sv = view.salvo
    placing = sv.phase == "placement"
    seat.mine = "not done"
    while True:
        if placing:
            ships = ", ".join(f"{s.name} {s.size}" for s in sv.fleet_spec)
            prompt = f"place your fleet ({ships}): random, or <ship> <bow> h|v, … (help)> "
        else:
            prompt = f"fire up to {sv.shots_allowed} shots (e.g. A1 B2): "
        text = await seat.read(view, prompt)
        if text is None:
            return MOVED_ON
        verb = text.split()[0].lower() if text.split() else ""
        if verb in ("help", "?", "quit", "exit", "leave", "chat", "say"):
            await common_command(seat, text, SALVO_HELP)
            continue
        try:
            orders = parse_placement(text) if placing else parse_shots(text)
        except EmptyLine:
            seat.say("nothing entered" + (" (type 'random' to let the server place your fleet)" if placing
                                          else " (type the squares to fire at, e.g. A1 B2)"))
            continue
        except ValueError as exc:
            seat.say(f"error: {exc}")
            continue
        try:
            await seat.client.submit(seat.game_id, view.version, key=seat.key(), salvo=orders)
        except ApiError as err:
            if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed meanwhile
                seat.say(f"too late: {err.message}")
                return MOVED_ON
            seat.say(f"refused: {err.message}")
            continue
        seat.feed.mine.add(view.round)
        seat.mine = "done"
        seat.say(f"orders in for round {view.round}")
        return SUBMITTED


def game_ui(kind: str) -> GameUI:
    """The terminal UI of a game kind (its :mod:`client.games` module's); SystemExit for a kind without one."""
    from client.games import GAMES, game_client

    if kind not in GAMES:
        raise SystemExit(f"archipelago play: no terminal client for {kind or 'this'} game")
    return game_client(kind).ui()


async def play(client: Client, game_id: str, *, lines: Lines | None = None, out: TextIO | None = None,
               terminal: Terminal | None = None, store: DraftStore | None = None,
               secret_file: str | None = None) -> int:
    """Play the client's seat at the terminal until the game ends (0) or the player leaves (`quit` 0,
    the end of input 1, Ctrl-C 130).  ``lines``/``out``: a plain transcript (tests, scripts);
    ``secret_file``: where the seat's secret is (the way back names it; else it is kept, 0600, in the
    local state folder)."""
    if terminal is not None:
        term = terminal
    elif lines is not None or out is not None:
        term = PlainTerminal(lines, out)
    else:
        term = default_terminal()
    with term.session():
        return await _play(client, game_id, term, store, secret_file)


async def _play(client: Client, game_id: str, term: Terminal, store: DraftStore | None,
                secret_file: str | None = None) -> int:
    view = await _view(client, game_id, term)
    ui = game_ui(view.game)
    store = store if store is not None else DraftStore(game_id)
    resume = store.seq if store.loaded else 0
    feed = Feed(client, game_id, view, resume_seq=resume)
    seat = Seat(client, game_id, feed, term, store, ui, view)
    seat.secret_file = secret_file
    term.label = seat.label
    term.status = seat.status
    term.words = lambda before: ui.words(seat.view, before)

    def live(update: game_pb2.Update) -> None:
        seat.presence.take(update)
        store.set_seq(update.seq)
        line = ui.notice(update)
        if line:
            term.say(line)

    feed.on_update = live
    def presence(update: game_pb2.Update) -> None:
        seat.presence.take(update)

    feed.on_presence = presence
    ui.bind(seat)
    feed.start()
    shown: tuple[int, int] = (-1, -1)
    try:
        welcome = ""
        if 0 < resume <= view.seq:
            back = ui.welcome_back(seat, view)
            welcome = f"back in the game ({ui.progress(view)}), where you left it" + (f"; {back}" if back else "")
        while True:
            feed.seen(view)
            seat.view = view
            seat.presence.of(view)
            seat.mine = ""
            lines = feed.reports(ui.setup_default) + autopilot_lines(seat, view)
            if welcome:
                lines.insert(0, welcome)
                welcome = ""
            if (view.round, view.status) != shown:
                term.clear()  # a new round: a fresh screen (its title at the top)
                shown = (view.round, view.status)
            term.say(ui.render(view))
            for line in lines:
                term.say(line)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                from client.bot import describe_outcome

                term.say(describe_outcome(view))
                store.forget(view.code)
                return 0
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                term.say(f"waiting in the lobby: {len(view.players)}/{view.seats} players (code {view.code})")
                started = False
                if view.you == 0 and len(view.players) == view.seats:
                    try:
                        await client.start(game_id)
                        started = True
                    except ApiError as err:
                        term.say(f"could not start the game: {err}")
                if not started:
                    await _wait(seat, view)
            elif not ui.expected(view):
                if not term.interactive:  # (at a terminal the prompt and the toolbar say it, live)
                    term.say(ui.waiting(view))
                await _wait(seat, view)
            else:
                # connected (A17) before the prompt: the round now waits for this player
                await feed.until_open(view)
                await ui.orders(seat, view)
            view = await _view(client, game_id, term)
    except Leave as leave:
        term.say(seat.comeback(leave.how))
        return LEAVE_RC[leave.how]
    finally:
        await feed.stop()
        if view.status != lobby_pb2.GAME_STATUS_OVER:
            store.set_seq(feed.seq)


async def _wait(seat: Seat, view: game_pb2.GetViewResponse) -> None:
    """Until the view is out of date; at a terminal the player may chat, ask for help or quit meanwhile."""
    if seat.term.interactive and view.status != lobby_pb2.GAME_STATUS_OVER:
        await seat.ui.idle(seat, view)
    else:
        await seat.feed.until_stale(view)


def autopilot_lines(seat: Seat, view: game_pb2.GetViewResponse) -> list[str]:
    """What the autopilot or the standing orders played for the player that it was not told yet
    (``autopilot_log``; each round told once, also across restarts)."""
    out = []
    for turn in view.autopilot_log:
        if seat.store.reported(turn.round):
            continue
        seat.store.set_reported(turn.round)
        who = "your standing orders" if turn.source == "standing_orders" else "the autopilot"
        from client.games import game_client

        unit = game_client(view.game).progress
        out.append(f"{unit} {turn.round}: {who} played for you: {seat.ui.autopilot_turn(turn, view)}")
    return out


async def _view(client: Client, game_id: str, term: Terminal) -> game_pb2.GetViewResponse:
    """GetView, tried again for a while when the gateway cannot be reached."""
    for attempt in range(VIEW_TRIES):
        try:
            return await client.view(game_id)
        except (ApiError, OSError) as err:
            if (isinstance(err, ApiError) and err.status != "UNAVAILABLE") or attempt == VIEW_TRIES - 1:
                raise
            if attempt == 0:
                term.say(f"cannot reach the server ({err}); trying again")
            await asyncio.sleep(RETRY_S)
    raise AssertionError("unreachable")


__all__ = ["LEAVE_RC", "MOVED_ON", "SUBMITTED", "EmptyLine", "Feed", "GameUI", "Leave", "RoundUI", "SalvoUI", "Seat",
           "StdinLines", "common_command", "countdown", "deadline_label", "game_ui", "parse_placement", "parse_shots",
           "play", "render"]


if __name__ == "__main__":
    sys.exit("use: archipelago play CODE")
