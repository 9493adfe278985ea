"""`archipelago bot`: plays one seat until the game ends (Salvo: the engine's autopilot; Archipelago:
random legal orders from the engine, computed from the view alone).

It keeps a Watch stream open the whole game (so its seat counts as connected, A17) and reads the
view again whenever an update arrives."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import Any

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.errors import ApiError
from client.views import orders_message, view_dict
from engine import get_game

RETRY_S = 0.5


async def follow(client: BaseClient, game_id: str, wake: asyncio.Event, after_seq: int = 0) -> None:
    """Keep a Watch stream open until the game ends, setting ``wake`` at every update; reconnects
    from the last seq after a broken stream."""
    since = after_seq
    try:
        while True:
            try:
                async for update in client.watch(game_id, since):
                    since = max(since, update.seq)
                    wake.set()
                return  # the stream ended after game_over
            except (ApiError, OSError) as err:
                if isinstance(err, ApiError) and err.status in ("UNAUTHENTICATED", "PERMISSION_DENIED",
                                                                "NOT_FOUND"):
                    raise
                await asyncio.sleep(RETRY_S)
    finally:
        wake.set()  # the player's loop looks again (and sees the end, or this task's error)


#: how the bot plays each game: the engine's autopilot (Salvo hunts ships), or random legal orders
#: (Archipelago: the autopilot only holds; random orders explore, fight and build)
RANDOM_ORDERS = frozenset({"archipelago"})


def choose_orders(view: game_pb2.GetViewResponse) -> dict[str, Any]:
    """The bot's orders for this round, from the player's view only."""
    engine = get_game(view.game)
    plain = view_dict(view)
    if view.game in RANDOM_ORDERS:
        return engine.random_orders(plain, secrets.randbits(32))
    return engine.autopilot(plain, None)


async def play_seat(client: BaseClient, game_id: str, *, log: Any = print) -> game_pb2.GetViewResponse:
    """Play the client's seat until the game is over; returns the final view."""
    wake = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, wake))
    try:
        while True:
            wake.clear()
            view = await client.view(game_id)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                if view.you == 0 and len(view.players) == view.seats:
                    with contextlib.suppress(ApiError):
                        await client.start(game_id)
                        continue
            elif view.expected:
                orders = choose_orders(view)
                try:
                    await client.submit_message(game_id, view.version, view.game, orders_message(view.game, orders),
                                                key=f"bot-{view.round}")
                    log(f"round {view.round}: submitted")
                except ApiError as err:
                    if err.status != "ABORTED":  # stale: just read the view again
                        raise
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
    if out.get("draw"):
        return f"game over after round {view.round}: draw ({out.get('reason', '')})"
    winners = out.get("winners", [])
    if not winners:  # (ended by an operator, or a lobby that expired)
        return f"game over after round {view.round}: no winner ({out.get('reason', '')})"
    me = "you win" if view.you in winners else "you lose"
    return f"game over after round {view.round}: seat(s) {winners} won — {me} ({out.get('reason', '')})"
