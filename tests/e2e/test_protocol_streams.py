"""The Watch protocol under real concurrency, through `archipelago serve` as a user runs it.

Many Salvo games (``ARCHIPELAGO_PROTOCOL_GAMES``, default 30) are played at once, half through the
gRPC door and half through JSON + WebSocket. Every player keeps a Watch stream open and plays from
it: when a round opens it reads its view and submits random legal orders (the engine's
``random_orders``). Every other player breaks its stream once, mid-game, and resumes from the last
seq it received. Then, for every player:
- its stream received seq 1, 2, … N with no gap and no duplicate, N being its final view's seq,
  every round it saw opened and closed, and the last update was game_over;
- resuming from any point k (0, N and random points) yields exactly updates k+1 … N, equal to those
  first received.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
from dataclasses import dataclass, field

import pytest
from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client.base import BaseClient
from client.grpc_client import Client
from client.views import view_dict
from client.web_client import WebClient
from engine import get_game
from tests.e2e.serving import ServeProcess, served, wait_healthy

__all__ = ["served"]  # the fixture

pytestmark = pytest.mark.e2e

GAMES = int(os.environ.get("ARCHIPELAGO_PROTOCOL_GAMES", "30"))  # (100: some 3 minutes of the suite)
AT_ONCE = 25  # games in flight together
MAX_ROUNDS = 12  # keeps each game short: at the cap, more squares hit wins (S7)
WAIT_S = 300.0


@dataclass
class Player:
    client: BaseClient
    game_id: str
    breaks_at: int | None  # break the stream after this many updates (once), then resume
    got: list[game_pb2.Update] = field(default_factory=list)
    submitted: int = 0


async def play(p: Player, seed: int) -> None:
    """Watch from the start; on every round this player must act in, submit random legal orders."""
    engine = get_game("salvo")
    since = 0
    while True:
        broke = False
        async with contextlib.aclosing(p.client.watch(p.game_id, since)) as stream:
            async for u in stream:
                if u.seq == 0:
                    continue  # live presence notices: not part of the history
                p.got.append(u)
                since = u.seq
                if u.kind in ("round_opened", "round_closed"):
                    view = await p.client.view(p.game_id)
                    if view.expected and view.status == lobby_pb2.GAME_STATUS_RUNNING:
                        orders = engine.random_orders(view_dict(view), seed * 1000 + view.round)
                        msg = json_format.ParseDict(orders, salvo_pb2.SalvoOrders())
                        try:
                            await p.client.submit(p.game_id, view.version, key=f"r{view.round}", salvo=msg)
                            p.submitted += 1
                        except Exception as exc:  # the round closed meanwhile: fine, it moves on
                            assert getattr(exc, "status", "") in ("ABORTED", "FAILED_PRECONDITION"), exc
                if p.breaks_at is not None and len(p.got) == p.breaks_at:
                    p.breaks_at, broke = None, True
                    break
        if not broke:
            return  # the stream ended after game_over


async def one_game(i: int, address: str, http: str) -> list[Player]:
    def connect() -> BaseClient:
        return Client(address) if i % 2 == 0 else WebClient(http)
    host = connect()
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60,
                                salvo=salvo_pb2.SalvoOptions(max_rounds=MAX_ROUNDS))
    guest = connect()
    await guest.join(created.code, "guest")
    rnd = random.Random(i)
    players = [Player(host, created.game_id, None if i % 4 else rnd.randint(3, 30)),
               Player(guest, created.game_id, rnd.randint(3, 30) if i % 4 == 1 else None)]
    tasks = [asyncio.ensure_future(play(p, i * 2 + s)) for s, p in enumerate(players)]
    await host.start(created.game_id)
    await asyncio.gather(*tasks)
    return players


async def check_player(p: Player, rnd: random.Random) -> None:
    final = await p.client.view(p.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    seqs = [u.seq for u in p.got]
    assert seqs == list(range(1, final.seq + 1)), f"gap or duplicate in {seqs}"
    assert p.got[-1].kind == "game_over"
    opened = {u.round for u in p.got if u.kind == "round_opened"}
    closed = {u.round for u in p.got if u.kind == "round_closed"}
    assert opened == closed == set(range(final.round + 1)), (opened, closed)
    for k in {0, final.seq, *rnd.sample(range(final.seq + 1), 3)}:
        async with contextlib.aclosing(p.client.watch(p.game_id, k)) as stream:
            again = [u async for u in stream if u.seq]
        assert again == p.got[k:], f"resuming after {k}"


async def test_every_stream_gets_every_update_once_and_resumes_exactly(
        served: tuple[str, str, ServeProcess]) -> None:
    address, http, proc = served
    await asyncio.to_thread(wait_healthy, address, proc)
    players: list[Player] = []
    rnd = random.Random(2026)
    gate = asyncio.Semaphore(AT_ONCE)
    done = 0

    async def run(i: int) -> None:
        nonlocal done
        async with gate:
            got = await one_game(i, address, http)
            for p in got:
                await check_player(p, rnd)
            players.extend(got)
            done += 1
            print(f"\r  protocol games {done}/{GAMES}", end="", file=sys.stderr, flush=True)

    async with asyncio.timeout(WAIT_S):
        await asyncio.gather(*(run(i) for i in range(GAMES)))
    print(file=sys.stderr)
    assert len(players) == 2 * GAMES
    assert sum(1 for p in players if p.breaks_at is None and p.submitted) == len(players)
    for p in players:
        await p.client.close()
