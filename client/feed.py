"""The game's updates from the server for a player at the terminal: the first view (:func:`fetch_view`,
tried again while the gateway cannot be reached) and the Watch stream (:class:`Feed`), open for the
whole game so that the player counts as connected (A17) and resumed from the last seq after a break."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient as Client
from client.errors import ApiError
from client.terminal import Terminal

RETRY_S = 0.5
VIEW_TRIES = 60  # GetView attempts, RETRY_S apart, before giving up on an unreachable server
# Updates after which the screen is out of date: the lobby filled, the game started, a round closed
# or opened, a turn game's step moved on (who may act), the game ended, or the server dropped
# history (resync).
RELEVANT = frozenset({"joined", "started", "round_opened", "round_closed", "step", "game_over", "resync"})
# Stream errors that reconnecting cannot cure.
FATAL = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "INVALID_ARGUMENT"})


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


async def fetch_view(client: Client, game_id: str, term: Terminal) -> game_pb2.GetViewResponse:
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
