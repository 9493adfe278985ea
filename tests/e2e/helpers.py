"""Helpers of the end-to-end tests: games through the real gateway (either door), waiting on Watch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from archipelago.v1 import game_pb2, salvo_pb2
from client.base import BaseClient
from client.errors import ApiError
from engine.base import Event
from services.journal import Act, Close, Create, Start, parse

WAIT_S = 60.0

# The fleet layouts of scripted games: the host's in rows 1-4 from column A, the guest's in rows
# 7-10 from column F (all horizontal).
FLEET = {0: [("battleship", "A1"), ("cruiser", "A2"), ("submarine", "A3"), ("destroyer", "A4")],
         1: [("battleship", "F7"), ("cruiser", "F8"), ("submarine", "F9"), ("destroyer", "F10")]}
FLEET_SQUARES = {0: {"A1", "B1", "C1", "D1", "E1", "A2", "B2", "C2", "D2", "A3", "B3", "C3", "A4", "B4"},
                 1: {"F7", "G7", "H7", "I7", "J7", "F8", "G8", "H8", "I8", "F9", "G9", "H9", "F10", "G10"}}
# Salvos that sink a seat's fleet exactly: 7, then 4, 2, 1 shots as the shooter's ships go down
# in the same rhythm (S4).
SINKING_SALVOS = {
    0: [["A1", "B1", "C1", "D1", "E1", "A2", "B2"], ["C2", "D2", "A3", "B3"], ["C3", "A4"], ["B4"]],
    1: [["F7", "G7", "H7", "I7", "J7", "F8", "G8"], ["H8", "I8", "F9", "G9"], ["H9", "F10"], ["G10"]],
}
# Salvos that miss both fleets (rows 5 and 6).
MISSING_SALVOS = [["A5", "B5", "C5", "D5", "E5", "F5", "G5"], ["H5", "I5", "J5", "A6"], ["B6", "C6"], ["D6"]]


def placement(seat: int) -> salvo_pb2.SalvoOrders:
    return salvo_pb2.SalvoOrders(placement=[salvo_pb2.ShipPlacement(ship=s, bow=b, vertical=False)
                                            for s, b in FLEET[seat]])


def shots(squares: list[str]) -> salvo_pb2.SalvoOrders:
    return salvo_pb2.SalvoOrders(shots=squares)


@dataclass
class Game:
    game_id: str
    code: str
    host: BaseClient
    guest: BaseClient


async def new_game(connect: Callable[[], BaseClient], *, deadline: float = 60.0, start: bool = True,
                   public: bool = False, **options: object) -> Game:
    """A Salvo game of two players ("host", "guest"), each with its own client from ``connect``."""
    host = connect()
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=deadline, public=public,
                                salvo=salvo_pb2.SalvoOptions(**options))  # type: ignore[arg-type]
    guest = connect()
    await guest.join(created.code, "guest")
    if start:
        await host.start(created.game_id)
    return Game(created.game_id, created.code, host, guest)


async def wait_update(client: BaseClient, game_id: str, after_seq: int,
                      pred: Callable[[game_pb2.Update], bool]) -> game_pb2.Update:
    """The first update after ``after_seq`` that satisfies ``pred`` (fails after WAIT_S)."""
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(client.watch(game_id, after_seq)) as stream:
        async for update in stream:
            if pred(update):
                return update
    raise AssertionError("the update stream ended without the expected update")


def round_closed(round_: int) -> Callable[[game_pb2.Update], bool]:
    return lambda u: u.kind == "round_closed" and u.round == round_


async def submit_and_close(game: Game, host_orders: salvo_pb2.SalvoOrders,
                           guest_orders: salvo_pb2.SalvoOrders) -> game_pb2.Update:
    """Both players submit; returns the round_closed update (early close, A17)."""
    view = await game.host.view(game.game_id)
    await game.host.submit(game.game_id, view.version, salvo=host_orders)
    await game.guest.submit(game.game_id, view.version, salvo=guest_orders)
    return await wait_update(game.host, game.game_id, view.seq, round_closed(view.round))


@contextlib.asynccontextmanager
async def connected(client: BaseClient, game_id: str) -> AsyncIterator[asyncio.Task[list[game_pb2.Update]]]:
    """Hold a Watch stream open for ``client`` (its player counts as connected, A17) while inside;
    the task collects the live updates."""
    opened = asyncio.Event()
    view = await client.view(game_id)

    async def run() -> list[game_pb2.Update]:
        got: list[game_pb2.Update] = []
        # from one before the latest: the first update arrives once the stream is registered
        async with contextlib.aclosing(client.watch(game_id, view.seq - 1)) as stream:
            async for u in stream:
                opened.set()
                got.append(u)
        return got

    task = asyncio.get_running_loop().create_task(run())
    waiter = asyncio.get_running_loop().create_task(opened.wait())
    try:
        async with asyncio.timeout(WAIT_S):
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if task.done():
            task.result()  # the stream failed: raise its error
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ApiError):
            await task


def replay_journal(engine: Any, journal: list[dict[str, Any]]
                   ) -> tuple[dict[int, tuple[Any, list[Event]]], dict[int, list[Event]]]:
    """A game's journal replayed by the engine alone: at every version the state and the last round's
    events, and the events each entry (an action, a close) produced."""
    states: dict[int, tuple[Any, list[Event]]] = {}
    produced: dict[int, list[Event]] = {}
    state: Any = None
    last: list[Event] = []
    for version, e in enumerate(journal, start=1):
        record = parse(e)
        if isinstance(record, Start):
            create = Create.from_entry(journal[0])
            state = engine.new_game(create.config, int(create.seed))
        elif isinstance(record, Act):
            state, produced[version] = record.play(engine, state)
        elif isinstance(record, Close):
            state, last = record.play(engine, state)
            produced[version] = last
        states[version] = (state, last)
    return states, produced


async def rpc_error(coro: Any) -> ApiError:
    """The ApiError a call raises (fails if it succeeds)."""
    try:
        await coro
    except ApiError as err:
        return err
    raise AssertionError("the call succeeded; an error was expected")
