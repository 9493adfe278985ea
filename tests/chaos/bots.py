"""Bots for the chaos and drain tests: they play Salvo seats over gRPC with the retries a client may
make (the same idempotency key for the same round's orders, Watch resumed from the last seq
received) and record every acknowledgement, so the games' journals can be checked against them."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc

from archipelago.v1 import lobby_pb2
from client.bot import choose_orders
from client.errors import ApiError
from client.grpc_client import Client
from client.views import orders_message

T = TypeVar("T")
RETRYABLE = {"UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "UNKNOWN", "INTERNAL"}
CHANNEL_OPTIONS = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", 1000)]
GIVE_UP_S = 120.0


@dataclass
class Ack:
    game_id: str
    seat: int
    round: int
    key: str
    version: int


@dataclass
class Record:
    acks: list[Ack] = field(default_factory=list)
    seqs: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    reconnects: int = 0
    retries: int = 0


async def retrying(record: Record, call: Callable[[], Awaitable[T]]) -> T:
    """Retry a call while the cluster is (partly) down, with backoff; the same request each time."""
    delay, give_up = 0.1, time.monotonic() + GIVE_UP_S
    while True:
        try:
            return await call()
        except ApiError as err:
            if err.status not in RETRYABLE or time.monotonic() > give_up:
                raise
        record.retries += 1
        await asyncio.sleep(delay)  # a client's backoff
        delay = min(delay * 2, 1.0)


async def follow(client: Client, game_id: str, seat: int, wake: asyncio.Event, record: Record) -> None:
    """Watch to the end, resuming from the last seq after any break; keeps every seq received."""
    seqs = record.seqs.setdefault((game_id, seat), [])
    delay = 0.1
    while True:
        try:
            async for u in client.watch(game_id, seqs[-1] if seqs else 0):
                delay = 0.1
                if u.seq:
                    seqs.append(-u.seq if u.kind == "resync" else u.seq)
                wake.set()
            return
        except ApiError as err:
            if err.status not in RETRYABLE:
                raise
        finally:
            wake.set()
        record.reconnects += 1
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def play(address: str, secret: str, game_id: str, seat: int, record: Record) -> int:
    """Play a seat to the end; returns the rounds played."""
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    client = Client(address, secret, channel)
    wake = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, seat, wake, record))
    orders: dict[int, Any] = {}
    try:
        while True:
            wake.clear()
            view = await retrying(record, lambda: client.view(game_id))
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view.round
            if view.expected:
                o = orders.setdefault(view.round, choose_orders(view))  # a retry sends the same orders
                key = f"chaos-{view.round}"
                request = orders_message(view.game, o)

                async def submit(v: Any = view, r: Any = request, k: str = key) -> Any:
                    return await client.submit_message(game_id, v.version, v.game, r, key=k)
                try:
                    ack = await retrying(record, submit)
                except ApiError as err:
                    if err.status not in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed (or the game
                        raise                                                 # ended) meanwhile: read again
                    continue
                record.acks.append(Ack(game_id, seat, ack.round, key, ack.version))
                continue
            if watcher.done():
                watcher.result()
            await wake.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, ApiError):
            await watcher
        await channel.close()


def lost_and_twice(journals: dict[str, list[dict[str, Any]]], acks: list[Ack]
                   ) -> tuple[list[Ack], list[tuple[str, int, str]]]:
    """The acknowledged submissions that are not the journal entry at the version their answer named
    (lost), and the (game, seat, key) journaled twice in one round (applied twice)."""
    lost = [a for a in acks if not (0 < a.version <= len(journals[a.game_id])
                                    and journals[a.game_id][a.version - 1].get("op") == "submit"
                                    and journals[a.game_id][a.version - 1]["seat"] == a.seat
                                    and journals[a.game_id][a.version - 1]["key"] == a.key)]
    twice = []
    for gid, journal in journals.items():
        seen: set[tuple[int, str]] = set()
        for entry in journal:
            if entry["op"] == "close":
                seen = set()
            elif entry["op"] == "submit" and entry["key"]:
                if (entry["seat"], entry["key"]) in seen:
                    twice.append((gid, entry["seat"], entry["key"]))
                seen.add((entry["seat"], entry["key"]))
    return lost, twice


def watch_gaps(record: Record) -> dict[tuple[str, int], list[int]]:
    """The Watch streams whose seqs were not consecutive across their reconnects."""
    return {k: s for k, s in record.seqs.items()
            if [abs(x) for x in s] != list(range(1, len(s) + 1)) and not any(x < 0 for x in s)}


async def two_player_games(address: str, games: int, deadline_s: float = 15) -> list[tuple[str, int, str]]:
    """``games`` Salvo games created, joined and started through ``address``: (game, seat, secret)
    for both seats of each."""
    lobby = Client(address, channel=grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS))
    seats: list[tuple[str, int, str]] = []
    try:
        for _ in range(games):
            host = Client(address, channel=lobby.channel)
            made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=deadline_s)
            joined = await lobby.join(made.code, "guest")
            await host.start(made.game_id)
            seats += [(made.game_id, 0, made.secret), (made.game_id, 1, joined.secret)]
    finally:
        await lobby.close()
    return seats
