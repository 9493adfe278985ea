"""`archipelago bot`: plays one seat until the game ends, as its game module (:mod:`client.games`)
says — Salvo: the engine's autopilot orders; Archipelago: random legal orders from the engine;
Arcmage: the engine's autopilot action whenever the bot's seat is among the step's players — each
computed from the bot's own view.

It keeps a Watch stream open the whole game (so its seat counts as connected, A17) and reads the
view again when an update may concern it: not for an engine event, a chat or a step update of a
turn game that names other seats (the bot acts when a step names its seat)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.errors import ApiError
from client.games import RoundGame, game_client
from client.views import view_dict

RETRY_S = 0.5
#: refusals of a move that lost a race (the step or round moved on, the game ended): read the view again
LATE = frozenset({"ABORTED", "FAILED_PRECONDITION"})
#: updates after which the bot's view has not changed in a way that concerns it
QUIET = frozenset({"event", "chat", "connected", "disconnected"})


async def follow(client: BaseClient, game_id: str, wake: asyncio.Event, after_seq: int = 0,
                 concerns: Callable[[game_pb2.Update], bool] | None = None) -> None:
    """Keep a Watch stream open until the game ends, setting ``wake`` at every update (or those for
    which ``concerns`` holds); reconnects from the last seq after a broken stream."""
    since = after_seq
    try:
        while True:
            try:
                async for update in client.watch(game_id, since):
                    since = max(since, update.seq)
                    if concerns is None or concerns(update):
                        wake.set()
                return  # the stream ended after game_over
            except (ApiError, OSError) as err:
                if isinstance(err, ApiError) and err.status in ("UNAUTHENTICATED", "PERMISSION_DENIED",
                                                                "NOT_FOUND"):
                    raise
                await asyncio.sleep(RETRY_S)
    finally:
        wake.set()  # the player's loop looks again (and sees the end, or this task's error)


def concerns_seat(seat: Callable[[], int]) -> Callable[[game_pb2.Update], bool]:
    """Whether an update may change what the player of ``seat()`` (-1: not known yet) should do."""
    def concerns(update: game_pb2.Update) -> bool:
        if update.kind in QUIET:
            return False
        if update.kind == "step" and seat() >= 0:
            players = json_format.MessageToDict(update.data).get("players") or []
            return seat() in {int(p) for p in players}
        return True

    return concerns


def choose_orders(view: game_pb2.GetViewResponse) -> dict[str, Any]:
    """The bot's orders for this round of a round game, from the player's view only."""
    game = game_client(view.game)
    if not isinstance(game, RoundGame):
        raise ValueError(f"{view.game} has no rounds of orders")
    return game.orders(view)


async def play_seat(client: BaseClient, game_id: str, *, log: Any = print) -> game_pb2.GetViewResponse:
    """Play the client's seat until the game is over; returns the final view."""
    wake = asyncio.Event()
    you = -1
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, wake, concerns=concerns_seat(lambda: you)))
    refused_at = -1  # the version at which a move was refused as too late: wait for the next update
    try:
        while True:
            wake.clear()
            view = await client.view(game_id)
            you = view.you
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                if view.you == 0 and len(view.players) == view.seats:
                    with contextlib.suppress(ApiError):
                        await client.start(game_id)
                        continue
            elif view.version != refused_at and (move := game_client(view.game).bot_move(view)) is not None:
                try:
                    await client.call("Game", move.rpc, move.request, move.response)
                    log(move.label)
                except ApiError as err:
                    if err.status not in LATE:  # too late: read the view again (once it has moved on)
                        raise
                    refused_at = view.version
                continue
            if watcher.done():
                watcher.result()  # a fatal stream error surfaces here
            await wake.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


def describe_outcome(view: game_pb2.GetViewResponse) -> str:
    out = view_dict(view).get("outcome") or {}
    head = game_client(view.game).game_over_line(view) if view.game else f"game over after round {view.round}"
    if out.get("draw"):
        return f"{head}: draw ({out.get('reason', '')})"
    winners = [int(w) for w in out.get("winners", [])]
    if not winners:  # (ended by an operator, or a lobby that expired)
        return f"{head}: no winner ({out.get('reason', '')})"
    me = "you win" if view.you in winners else "you lose"
    return f"{head}: seat(s) {winners} won — {me} ({out.get('reason', '')})"
