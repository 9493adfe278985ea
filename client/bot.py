"""`archipelago bot`: plays one seat with the engine's autopilot until the game ends."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2
from engine import get_game
from gateway import convert
from gateway.client import Client

WAKE_S = 5.0  # re-read the view at least this often even without updates


async def _watch(client: Client, game_id: str, wake: asyncio.Event) -> None:
    since = 0
    while True:
        try:
            async for update in client.watch(game_id, since):
                since = max(since, update.version)
                wake.set()
            return
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.5)


async def play_seat(client: Client, game_id: str, *, log: Any = print) -> game_pb2.GetViewResponse:
    """Play the client's seat until the game is over; returns the final view."""
    wake = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(_watch(client, game_id, wake))
    try:
        while True:
            wake.clear()
            view = await client.view(game_id)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                if view.you == 0 and len(view.players) == view.seats:
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await client.start(game_id)
                        continue
            elif view.expected and not view.submitted:
                engine = get_game(view.game)
                orders = engine.autopilot(convert.view_dict(view), None)
                gm = convert.messages(view.game)
                msg = json_format.ParseDict(orders, gm.orders_type())
                try:
                    await client.submit_message(game_id, view.version, gm.orders_field, msg,
                                                key=f"bot-{view.round}-{view.you}")
                    log(f"round {view.round}: submitted")
                except grpc.aio.AioRpcError as err:
                    if err.code() != grpc.StatusCode.ABORTED:  # stale: just read the view again
                        raise
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), WAKE_S)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


def describe_outcome(view: game_pb2.GetViewResponse) -> str:
    d = convert.view_dict(view)
    out = d.get("outcome") or {}
    if out.get("draw"):
        return f"game over after round {view.round}: draw ({out.get('reason', '')})"
    winners = out.get("winners", [])
    me = "you win" if view.you in winners else "you lose"
    return f"game over after round {view.round}: seat(s) {winners} won — {me} ({out.get('reason', '')})"
