"""Helpers of the end-to-end tests: games through the real gateway, waiting on Watch updates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from archipelago.v1 import game_pb2, salvo_pb2
from gateway.client import Client

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


@dataclass
class Game:
    game_id: str
    code: str
    host: Client
    guest: Client


async def new_game(address: str, *, deadline: float = 60.0, start: bool = True, public: bool = False,
                   **options: object) -> Game:
    host = Client(address)
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=deadline, public=public,
                                salvo=salvo_pb2.SalvoOptions(**options))  # type: ignore[arg-type]
    guest = Client(address)
    await guest.join(created.code, "guest")
    if start:
        await host.start(created.game_id)
    return Game(created.game_id, created.code, host, guest)


async def wait_update(client: Client, game_id: str, since: int,
                      pred: Callable[[game_pb2.Update], bool]) -> game_pb2.Update:
    """The first update after ``since`` that satisfies ``pred`` (fails after WAIT_S)."""
    async with asyncio.timeout(WAIT_S):
        async for update in client.watch(game_id, since):
            if pred(update):
                return update
    raise AssertionError("the update stream ended without the expected update")


def round_closed(round_: int) -> Callable[[game_pb2.Update], bool]:
    return lambda u: u.kind == "round_closed" and u.round == round_


async def submit_and_close(game: Game, host_orders: salvo_pb2.SalvoOrders,
                           guest_orders: salvo_pb2.SalvoOrders) -> game_pb2.Update:
    """Both players submit; returns the round_closed update (early close, A17)."""
    view = await game.host.view(game.game_id)
    since, rnd = view.version, view.round
    await game.host.submit(game.game_id, view.version, salvo=host_orders)
    await game.guest.submit(game.game_id, view.version, salvo=guest_orders)
    return await wait_update(game.host, game.game_id, since, round_closed(rnd))
