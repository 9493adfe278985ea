"""`archipelago play CODE`: a human plays in the terminal.

The game-neutral machinery lives here: the Watch stream (:class:`Feed`), cancellable terminal input
(:class:`StdinLines`), the screen, and the game loop (:func:`play`), which hands the rendering and the
round's prompt to the game kind's :class:`GameUI` (``view.game``, from :mod:`client.games`):
:class:`SalvoUI` below, :class:`client.play_archipelago.ArchipelagoUI` and
:class:`client.play_arcmage.ArcmageUI`.

Salvo shows the player's own grid (ships ``#``, hits ``X``, enemy misses ``o``), the enemy waters with the
player's shots marked by the round they were fired in (S8; in classic mode ``X``/``o``), the per-round
reports (S6), and when the round closes (a clock time, and the seconds left when the prompt is shown).

A Watch stream stays open for the whole game (:class:`Feed`): while it is open the player counts as
connected (A17), so the round waits for the human's orders until its deadline instead of closing as
soon as the others have submitted.  Reading the terminal (:class:`StdinLines`) is cancellable: when the
round closes or the game ends while the player is at the prompt, the prompt is abandoned, the close is
reported ("the autopilot played for you" when the player's orders were not in) and the new round shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client import views
from client.base import BaseClient as Client
from client.errors import ApiError

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
    lines = [f"{'your fleet':<24}  enemy waters", f"{head}   {head}"]
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
    return "\n".join(lines)


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
    """'[round 3 · closes 15:42:10 · 57 s left]' (local time; the seconds left as of ``now_ms``)."""
    if deadline_unix_ms <= 0:
        return f"[round {round_}]"
    now = time.time() * 1000 if now_ms is None else now_ms
    left = max(0, math.ceil((deadline_unix_ms - now) / 1000))
    clock = time.strftime("%H:%M:%S", time.localtime(deadline_unix_ms / 1000))
    return f"[round {round_} · closes {clock} · {left} s left]"


# ---------------------------------------------------------------------------------------- terminal
class Lines(Protocol):
    """Where the player's answers come from."""

    # A terminal echoes what is typed; other input is echoed by the client (a readable transcript).
    interactive: bool

    async def readline(self) -> str | None:
        """The next line without its newline, None at the end of input.  Cancellable: nothing typed
        is lost when a pending call is cancelled."""

    def discard_pending(self) -> None:
        """Forget what was typed but not yet entered (a prompt was abandoned)."""


class StdinLines:
    """Lines from a file descriptor (stdin: a tty or a pipe) read inside the event loop.

    Readiness comes from ``loop.add_reader``; a descriptor the loop cannot watch (a regular file,
    /dev/null) is read by a daemon thread instead.  Bytes read go to a buffer owned by this object, so
    cancelling :meth:`readline` never loses input."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.interactive = os.isatty(self.fd)
        self._buf = bytearray()
        self._eof = False
        self._watchable: bool | None = None  # None: not tried yet
        self._thread_read: asyncio.Future[None] | None = None

    async def readline(self) -> str | None:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                return line.decode(errors="replace").rstrip("\r")
            if self._eof:
                if not self._buf:
                    return None
                rest = bytes(self._buf)
                self._buf.clear()
                return rest.decode(errors="replace").rstrip("\r")
            await self._fill()

    def discard_pending(self) -> None:
        if not self.interactive:
            return  # piped input was written in advance on purpose: keep it
        self._buf.clear()
        with contextlib.suppress(ImportError, OSError):
            import termios

            termios.tcflush(self.fd, termios.TCIFLUSH)

    def _take(self, data: bytes) -> None:
        if data:
            self._buf += data
        else:
            self._eof = True

    def _read(self) -> bytes:
        try:
            return os.read(self.fd, 65536)
        except BlockingIOError:
            raise
        except OSError:  # e.g. EIO once the terminal hung up: the end of input
            return b""

    async def _fill(self) -> None:
        loop = asyncio.get_running_loop()
        if self._watchable is not False:
            ready: asyncio.Future[None] = loop.create_future()

            def readable() -> None:
                if ready.done():
                    return
                try:
                    self._take(self._read())
                except BlockingIOError:
                    return
                ready.set_result(None)

            try:
                loop.add_reader(self.fd, readable)
            except (OSError, ValueError, NotImplementedError):
                self._watchable = False  # epoll refuses regular files and /dev/null
            else:
                self._watchable = True
                try:
                    await ready
                finally:
                    loop.remove_reader(self.fd)
                return
        await self._fill_by_thread(loop)

    async def _fill_by_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._thread_read is None:
            done: asyncio.Future[None] = loop.create_future()
            self._thread_read = done

            def deliver(data: bytes) -> None:  # in the loop's thread
                self._take(data)
                self._thread_read = None
                if not done.done():
                    done.set_result(None)

            def run() -> None:
                data = self._read()
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                    loop.call_soon_threadsafe(deliver, data)

            threading.Thread(target=run, name="stdin-reader", daemon=True).start()
        await asyncio.shield(self._thread_read)


class Screen:
    """What the player sees; a line printed while a prompt waits starts on a fresh line."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.at_prompt = False
        self.last_prompt = ""

    def say(self, text: str) -> None:
        if self.at_prompt:
            self.out.write("\n")
            self.at_prompt = False
        self.out.write(text + "\n")
        self.out.flush()

    def prompt(self, text: str) -> None:
        if self.at_prompt:
            self.out.write("\n")
        self.out.write(text)
        self.out.flush()
        self.at_prompt = True
        self.last_prompt = text

    def notice(self, text: str) -> None:
        """Something that happened meanwhile (a chat message, an offer): shown at once; a waiting
        prompt is shown again below it."""
        waiting = self.at_prompt
        self.say(text)
        if waiting:
            self.prompt(self.last_prompt)

    def answered(self, echo: str | None = None) -> None:
        """The player answered the prompt; ``echo`` the answer when the terminal did not."""
        if self.at_prompt and echo is not None:
            self.out.write(echo + "\n")
            self.out.flush()
        self.at_prompt = False


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

    def __init__(self, client: Client, game_id: str, view: game_pb2.GetViewResponse) -> None:
        self.client = client
        self.game_id = game_id
        self.you = view.you
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
        # Called with every new update (after the first view), e.g. to show chat as it comes.
        self.on_update: Callable[[game_pb2.Update], None] | None = None
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
                            if u.seq == 0:
                                continue  # live presence notices
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


# ---------------------------------------------------------------------------------------- the game
MOVED_ON, SUBMITTED, EOF = "moved on", "submitted", "eof"


class RoundOver(Exception):
    """The round closed (or the game ended) while the player was at the prompt."""


class GameUI(Protocol):
    """What one game kind adds to the loop: its screen and its round prompt."""

    # what the autopilot did for a player who missed round 0 (for the close report)
    setup_default: str

    def render(self, view: game_pb2.GetViewResponse) -> str:
        """The whole screen for ``view``."""

    def expected(self, view: game_pb2.GetViewResponse) -> bool:
        """The player is to act now (round games: ``view.expected``; turn games: its seat is in the step)."""

    def waiting(self, view: game_pb2.GetViewResponse) -> str:
        """The line shown while the others act."""

    async def orders(self, client: Client, game_id: str, view: game_pb2.GetViewResponse, feed: Feed,
                     lines: Lines, screen: Screen) -> str:
        """Ask for this round's orders: SUBMITTED once they are in, MOVED_ON when the round closed
        first (the prompt abandoned, see :func:`read_unless`), EOF at the end of input."""

    def notice(self, update: game_pb2.Update) -> str | None:
        """A line to show at once for a live update (None: nothing to show)."""


class RoundUI:
    """What the UIs of round games share: the player acts while expected; the round's deadline."""

    def expected(self, view: game_pb2.GetViewResponse) -> bool:
        return view.expected

    def waiting(self, view: game_pb2.GetViewResponse) -> str:
        return f"{deadline_label(view.round, view.deadline_unix_ms)} waiting for the others"


class SalvoUI(RoundUI):
    """Salvo: the two grids and the placement / firing prompts."""

    setup_default = "placed your fleet at random"

    def render(self, view: game_pb2.GetViewResponse) -> str:
        return render(view)

    async def orders(self, client: Client, game_id: str, view: game_pb2.GetViewResponse, feed: Feed,
                     lines: Lines, screen: Screen) -> str:
        return await _orders(client, game_id, view, feed, lines, screen)

    def notice(self, update: game_pb2.Update) -> str | None:
        return None


def game_ui(kind: str) -> GameUI:
    """The terminal UI of a game kind (its :mod:`client.games` module's); SystemExit for a kind without one."""
    from client.games import GAMES, game_client

    if kind not in GAMES:
        raise SystemExit(f"archipelago play: no terminal client for {kind or 'this'} game")
    return game_client(kind).ui()


async def play(client: Client, game_id: str, *, lines: Lines | None = None, out: TextIO | None = None) -> int:
    """Play the client's seat at the terminal until the game ends (0) or the input ends (1)."""
    screen = Screen(out)
    source: Lines = lines if lines is not None else StdinLines()
    view = await _view(client, game_id, screen)
    ui = game_ui(view.game)
    feed = Feed(client, game_id, view)

    def live(update: game_pb2.Update) -> None:
        line = ui.notice(update)
        if line:
            screen.notice(line)

    feed.on_update = live
    feed.start()
    try:
        while True:
            feed.seen(view)
            for line in feed.reports(ui.setup_default):
                screen.say(line)
            screen.say("\n" + ui.render(view))
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                from client.bot import describe_outcome

                screen.say(describe_outcome(view))
                return 0
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                screen.say(f"waiting in the lobby: {len(view.players)}/{view.seats} players (code {view.code})")
                started = False
                if view.you == 0 and len(view.players) == view.seats:
                    try:
                        await client.start(game_id)
                        started = True
                    except ApiError as err:
                        screen.say(f"could not start the game: {err}")
                if not started:
                    await feed.until_stale(view)
            elif not ui.expected(view):
                screen.say(ui.waiting(view))
                await feed.until_stale(view)
            else:
                # connected (A17) before the prompt: the round now waits for this player
                await feed.until_open(view)
                if await ui.orders(client, game_id, view, feed, source, screen) == EOF:
                    screen.say("end of input: leaving (the autopilot plays your seat from now on)")
                    return 1
            view = await _view(client, game_id, screen)
    finally:
        await feed.stop()


async def _view(client: Client, game_id: str, screen: Screen) -> game_pb2.GetViewResponse:
    """GetView, tried again for a while when the gateway cannot be reached."""
    for attempt in range(VIEW_TRIES):
        try:
            return await client.view(game_id)
        except (ApiError, OSError) as err:
            if (isinstance(err, ApiError) and err.status != "UNAVAILABLE") or attempt == VIEW_TRIES - 1:
                raise
            if attempt == 0:
                screen.say(f"cannot reach the server ({err}); trying again")
            await asyncio.sleep(RETRY_S)
    raise AssertionError("unreachable")


async def _orders(client: Client, game_id: str, view: game_pb2.GetViewResponse, feed: Feed, lines: Lines,
                  screen: Screen) -> str:
    """Ask for this round's orders until they are in, the round closes (MOVED_ON) or the input ends."""
    sv = view.salvo
    placing = sv.phase == "placement"
    while True:
        label = deadline_label(view.round, view.deadline_unix_ms)
        if placing:
            ships = ", ".join(f"{s.name} {s.size}" for s in sv.fleet_spec)
            screen.prompt(f"{label} place your fleet ({ships}): 'random' or 'battleship A1 h, cruiser C3 v, ...': ")
        else:
            screen.prompt(f"{label} fire up to {sv.shots_allowed} shots (e.g. A1 B2): ")
        text, ended = await answer(screen, lines, feed, view)
        if ended:
            return ended
        try:
            orders = parse_placement(text) if placing else parse_shots(text)
        except EmptyLine:
            screen.say("nothing entered" + (" (type 'random' to let the server place your fleet)" if placing
                                            else " (type the squares to fire at, e.g. A1 B2)"))
            continue
        except ValueError as exc:
            screen.say(f"error: {exc}")
            continue
        try:
            await client.submit(game_id, view.version, key=f"play-{view.round}-{secrets.token_hex(6)}",
                                salvo=orders)
        except ApiError as err:
            if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed meanwhile
                screen.say(f"too late: {err.message}")
                return MOVED_ON
            screen.say(f"refused: {err.message}")
            continue
        feed.mine.add(view.round)
        screen.say(f"orders in for round {view.round}")
        return SUBMITTED


async def answer(screen: Screen, lines: Lines, feed: Feed, view: game_pb2.GetViewResponse
                 ) -> tuple[str, str]:
    """(the player's next line at the prompt just shown, ""), or ("", MOVED_ON) when the round closed
    (or the game ended) first — the prompt is abandoned and what was typed ahead at a terminal
    dropped — or ("", EOF) at the end of input."""
    try:
        text = await read_unless(lines, feed, view)
    except RoundOver:
        screen.say("")  # the prompt is abandoned: the close is reported with the new round
        lines.discard_pending()
        return "", MOVED_ON
    if text is None:
        return "", EOF
    screen.answered(None if lines.interactive else text)
    return text, ""


async def read_unless(lines: Lines, feed: Feed, view: game_pb2.GetViewResponse) -> str | None:
    """The next line (None at the end of input); RoundOver when the round closes (or the game ends) first."""
    read = asyncio.ensure_future(lines.readline())
    moved = asyncio.ensure_future(feed.until_stale(view))
    try:
        await asyncio.wait({read, moved}, return_when=asyncio.FIRST_COMPLETED)
        if read.done():
            return read.result()
        moved.result()  # the stream's fatal error, if that is what happened
        raise RoundOver
    finally:
        for task in (read, moved):
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


if __name__ == "__main__":
    sys.exit("use: archipelago play CODE")
