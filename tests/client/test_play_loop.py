"""`archipelago play`'s loop against a scripted game: the Watch stream stays open (and resumes from the
last seq), a round that closes while the player is at the prompt abandons the prompt and is reported,
an empty line is asked again, the end of input leaves."""

from __future__ import annotations

import asyncio
import io
import re
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client import feed as feed_mod
from client.base import BaseClient, M
from client.errors import ApiError
from client.play import play

WAIT_S = 10.0
GAME = "g1"


class Transcript(io.StringIO):
    """The player's screen; ``expect`` waits until a text has been shown."""

    def __init__(self) -> None:
        super().__init__()
        self.wrote = asyncio.Event()

    def write(self, s: str) -> int:
        self.wrote.set()
        return super().write(s)

    async def expect(self, text: str, start: int = 0) -> int:
        """Wait until ``text`` appears after position ``start``; returns the position after it."""
        try:
            async with asyncio.timeout(WAIT_S):
                while (at := self.getvalue().find(text, start)) < 0:
                    self.wrote.clear()
                    await self.wrote.wait()
        except TimeoutError:
            raise AssertionError(f"{text!r} never shown; the screen:\n{self.getvalue()}") from None
        return at + len(text)


class Keyboard:
    """Lines typed by the test; counts the abandoned prompts."""

    interactive = False

    def __init__(self) -> None:
        self.typed: asyncio.Queue[str | None] = asyncio.Queue()
        self.discarded = 0

    async def readline(self) -> str | None:
        return await self.typed.get()

    def discard_pending(self) -> None:
        self.discarded += 1


class ScriptedGame(BaseClient):
    """One game, seat 1's side: the view the test sets, the updates it pushes, the orders submitted."""

    def __init__(self) -> None:
        super().__init__("secret")
        self.current = game_pb2.GetViewResponse()
        self.updates: list[game_pb2.Update] = []
        self.new = asyncio.Condition()
        self.watches: list[int] = []  # after_seq of every Watch call
        self.open_streams = 0
        self.lose_streams = 0  # break this many streams after their first update
        self.submitted: list[game_pb2.SubmitOrdersRequest] = []
        self.unreachable = 0  # fail this many GetView calls with UNAVAILABLE

    def set_view(self, round_: int, *, status: lobby_pb2.GameStatus = lobby_pb2.GAME_STATUS_RUNNING,
                 expected: bool = True, submitted: bool = False, phase: str = "firing", **salvo: Any) -> None:
        self.current = game_pb2.GetViewResponse(
            game_id=GAME, game="salvo", version=len(self.updates) + 10, round_version=len(self.updates) + 10,
            status=status, round=round_, you=1, deadline_unix_ms=int(time.time() * 1000) + 60_000,
            deadline_seconds=60, seats=2, expected=expected, submitted=submitted, seq=len(self.updates),
            salvo=salvo_pb2.SalvoView(phase=phase, round=round_, mode="salvo", you=1, **salvo))

    async def push(self, kind: str, round_: int, seat: int = -1, **data: Any) -> None:
        u = game_pb2.Update(version=len(self.updates) + 10, kind=kind, round=round_, seat=seat,
                            seq=len(self.updates) + 1)
        u.data.update(data)
        async with self.new:
            self.updates.append(u)
            self.new.notify_all()

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        if method == "GetView" and self.unreachable:
            self.unreachable -= 1
            raise ApiError("UNAVAILABLE", "", "", "", "connection refused", 503)
        if method == "GetView":
            view = game_pb2.GetViewResponse()
            view.CopyFrom(self.current)
            return view  # type: ignore[return-value]
        assert method == "SubmitOrders" and isinstance(request, game_pb2.SubmitOrdersRequest)
        if request.version < self.current.round_version:
            raise ApiError("ABORTED", "action/stale_state_id", "version", "A16", "stale", 409)
        bad = [sq for sq in request.salvo.shots if not re.fullmatch(r"[A-J](10|[1-9])", sq)]
        if bad:
            raise ApiError("INVALID_ARGUMENT", "order/invalid", "shots", "S5", f"shots: rule S5: {bad[0]!r} is not "
                           "a square", 400)
        self.submitted.append(request)
        self.current.expected, self.current.submitted = False, True
        await self.push("submitted", self.current.round, seat=1, done=True)
        self.current.seq = len(self.updates)
        return game_pb2.SubmitOrdersResponse(version=len(self.updates) + 10, round=self.current.round,  # type: ignore[return-value]
                                             submitted=True)

    async def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        self.watches.append(after_seq)
        self.open_streams += 1
        try:
            sent = after_seq
            while True:
                async with self.new:
                    while len(self.updates) <= sent:
                        await self.new.wait()
                    batch = self.updates[sent:]
                for u in batch:
                    yield u
                    sent = u.seq
                    if self.lose_streams:
                        self.lose_streams -= 1
                        raise ApiError("UNAVAILABLE", "", "", "", "connection reset", 503)
                    if u.kind == "game_over":
                        return
        finally:
            self.open_streams -= 1

    def with_secret(self, secret: str) -> BaseClient:
        return self

    async def close(self) -> None:
        pass


@pytest.fixture
def game(monkeypatch: pytest.MonkeyPatch) -> ScriptedGame:
    monkeypatch.setattr(feed_mod, "RETRY_S", 0.0)
    return ScriptedGame()


async def start_round_1(game: ScriptedGame) -> None:
    await game.push("joined", 0, seat=0)
    await game.push("joined", 0, seat=1)
    await game.push("started", 0)
    await game.push("round_opened", 0, deadline_unix_ms=0)
    await game.push("round_closed", 0, early=True)
    await game.push("round_opened", 1, deadline_unix_ms=0)
    game.set_view(1, shots_allowed=7)


async def test_a_round_closing_at_the_prompt_is_reported_and_the_new_round_shown(game: ScriptedGame) -> None:
    await start_round_1(game)
    game.lose_streams = 1  # the first stream breaks: the client resumes from the last seq
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("[round 1 · closes ")
    at = await screen.expect("fire up to 7 shots (e.g. A1 B2): ", at)
    assert game.open_streams == 1  # at the prompt the player is connected (A17)

    # the deadline passes while the player thinks: the round closes, the autopilot played seat 1
    await game.push("round_closed", 1, early=False)
    await game.push("round_opened", 2, deadline_unix_ms=0)
    game.set_view(2, shots_allowed=7)
    at = await screen.expect("your fleet", at)  # the new screen, then what happened under it
    at = await screen.expect("round 1 closed — your orders were not in: the autopilot played for you", at)
    at = await screen.expect("[round 2 · closes ", at)
    assert keys.discarded == 1 and game.submitted == []

    keys.typed.put_nowait("   ")  # an empty line fires nothing: asked again
    at = await screen.expect("nothing entered", at)
    at = await screen.expect("[round 2 · closes ", at)
    keys.typed.put_nowait("A1 K11")  # the server refuses (S5): asked again
    at = await screen.expect("(e.g. A1 B2): A1 K11\nrefused: shots: rule S5: 'K11' is not a square", at)
    at = await screen.expect("[round 2 · closes ", at)
    keys.typed.put_nowait("a1, b2")
    at = await screen.expect("orders in for round 2", at)
    at = await screen.expect("waiting for the others", at)
    assert [list(r.salvo.shots) for r in game.submitted] == [["A1", "B2"]]

    await game.push("round_closed", 2, early=True)
    game.set_view(2, status=lobby_pb2.GAME_STATUS_OVER, expected=False, phase="over",
                  outcome=salvo_pb2.SalvoOutcome(winners=[1], reason="fleet_sunk"))
    await game.push("game_over", 2, status=lobby_pb2.GAME_STATUS_OVER)
    async with asyncio.timeout(WAIT_S):
        assert await player == 0
    text = screen.getvalue()
    assert "round 2 closed: every connected player had submitted" in text[at:]
    assert "game over after round 2: seat 1 won (every ship of the other fleet was sunk) — you win" in text[at:]
    assert "[1]" not in text and "False" not in text  # no raw Python
    assert game.watches[:2] == [5, 6]  # from one before the first view's seq, then from the last seq
    assert game.open_streams == 0


async def test_a_placement_the_player_misses_is_the_autopilots(game: ScriptedGame) -> None:
    game.unreachable = 1  # a blip: the view is read again
    for kind in ("joined", "joined", "started"):
        await game.push(kind, 0)
    await game.push("round_opened", 0, deadline_unix_ms=0)
    game.set_view(0, phase="placement", fleet_spec=[salvo_pb2.SalvoShipSpec(name="battleship", size=5)])
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("cannot reach the server (UNAVAILABLE : connection refused); trying again")
    at = await screen.expect("place your fleet (battleship 5)", at)
    keys.typed.put_nowait("battleship A1 x")
    at = await screen.expect("error: orientation must be h (rightwards) or v (downwards), got 'x'", at)
    at = await screen.expect("[round 0 · closes ", at)
    await game.push("round_closed", 0, early=False)
    await game.push("round_opened", 1, deadline_unix_ms=0)
    game.set_view(1, shots_allowed=7)
    at = await screen.expect("round 0 closed — your orders were not in: the autopilot placed your fleet at random",
                             at)
    await screen.expect("[round 1 · closes ", at)
    keys.typed.put_nowait(None)  # the end of input
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    assert "end of input" in screen.getvalue() and game.submitted == []
    assert game.open_streams == 0
