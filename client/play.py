"""`archipelago play CODE`: a human plays in the terminal.

The game loop lives here (:func:`play`): it hands the rendering and the round's prompt to the game
kind's :class:`~client.play_base.GameUI` (``view.game``, from :mod:`client.games`):
:class:`client.play_salvo.SalvoUI`, :class:`client.play_archipelago.ArchipelagoUI` and
:class:`client.play_arcmage.ArcmageUI`.  The Watch stream is :mod:`client.feed`'s (:class:`Feed`), the
player's seat at the terminal and what the UIs share :mod:`client.play_base`'s (:class:`Seat`: the live
status of the toolbar, reading a line unless the round closes first, the local draft store, leaving
with a word on how to come back); the terminal itself (prompt_toolkit at a tty, a plain transcript
for pipes) is :mod:`client.terminal`'s.

A Watch stream stays open for the whole game (:class:`Feed`): while it is open the player counts as
connected (A17), so the round waits for the human's orders until its deadline instead of closing as
soon as the others have submitted.  When the round closes or the game ends while the player is at the
prompt, the prompt is abandoned (what was typed stays in the next prompt, never run), the close is
reported ("the autopilot played for you" when the player's orders were not in) and the new round shown.
A restart comes back: the Watch stream resumes from the last seq seen, the draft is restored
(:mod:`client.draft_store`), and what the autopilot played meanwhile is told (``autopilot_log``).
"""

from __future__ import annotations

import sys
from typing import TextIO

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient as Client
from client.bot import describe_outcome
from client.draft_store import DraftStore
from client.errors import ApiError
from client.feed import Feed, fetch_view
from client.play_base import LEAVE_RC, GameUI, Seat
from client.terminal import Leave, Lines, PlainTerminal, Terminal, default_terminal


def game_title(kind: str) -> str:
    from client.games import GAMES, game_client

    return game_client(kind).title if kind in GAMES else kind or "game"


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
    view = await fetch_view(client, game_id, term)
    ui = game_ui(view.game)
    store = store if store is not None else DraftStore(game_id)
    resume = store.seq if store.loaded else 0
    seat = _seat_at(client, game_id, term, store, ui, view, resume, secret_file)
    seat.feed.start()
    shown: tuple[int, int] = (-1, -1)
    try:
        welcome = ""
        if 0 < resume <= view.seq:
            back = ui.welcome_back(seat, view)
            welcome = f"back in the game ({ui.progress(view)}), where you left it" + (f"; {back}" if back else "")
        while True:
            shown = _show(seat, view, shown, welcome)
            welcome = ""
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                term.say(describe_outcome(view))
                store.forget(view.code)
                return 0
            await _step(seat, view)
            view = await fetch_view(client, game_id, term)
    except Leave as leave:
        term.say(seat.comeback(leave.how))
        return LEAVE_RC[leave.how]
    finally:
        await seat.feed.stop()
        if view.status != lobby_pb2.GAME_STATUS_OVER:
            store.set_seq(seat.feed.seq)


def _seat_at(client: Client, game_id: str, term: Terminal, store: DraftStore, ui: GameUI,
             view: game_pb2.GetViewResponse, resume: int, secret_file: str | None) -> Seat:
    """The player's seat for the whole game: its stream (from ``resume``, not started yet), the
    terminal's live status, and every update's news for the players' strip and the UI's notices."""
    feed = Feed(client, game_id, view, resume_seq=resume)
    seat = Seat(client, game_id, feed, term, store, ui, view, title_of=game_title)
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
    return seat


def _show(seat: Seat, view: game_pb2.GetViewResponse, shown: tuple[int, int], welcome: str) -> tuple[int, int]:
    """``view`` on the screen (a fresh screen for a new round or status) with what happened since the
    last one: the rounds closed, what the autopilot played for the player; returns what is shown."""
    seat.feed.seen(view)
    seat.view = view
    seat.presence.of(view)
    seat.mine = ""
    lines = seat.feed.reports(seat.ui.setup_default) + autopilot_lines(seat, view)
    if welcome:
        lines.insert(0, welcome)
    if (view.round, view.status) != shown:
        seat.term.clear()  # a new round: a fresh screen (its title at the top)
        shown = (view.round, view.status)
    seat.term.say(seat.ui.render(view))
    for line in lines:
        seat.term.say(line)
    return shown


async def _step(seat: Seat, view: game_pb2.GetViewResponse) -> None:
    """The player's part until ``view`` is out of date: in the lobby (the host starts it once full),
    waiting for the others, or the round's orders (the turn's action)."""
    if view.status == lobby_pb2.GAME_STATUS_LOBBY:
        seat.term.say(f"waiting in the lobby: {len(view.players)}/{view.seats} players (code {view.code})")
        started = False
        if view.you == 0 and len(view.players) == view.seats:
            try:
                await seat.client.start(seat.game_id)
                started = True
            except ApiError as err:
                seat.term.say(f"could not start the game: {err}")
        if not started:
            await _wait(seat, view)
    elif not seat.ui.expected(view):
        if not seat.term.interactive:  # (at a terminal the prompt and the toolbar say it, live)
            seat.term.say(seat.ui.waiting(view))
        await _wait(seat, view)
    else:
        # connected (A17) before the prompt: the round now waits for this player
        await seat.feed.until_open(view)
        await seat.ui.orders(seat, view)


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


if __name__ == "__main__":
    sys.exit("use: archipelago play CODE")
