"""Chaos for Arcmage (issue 21): bots play Arcmage games through both doors while shards are killed
with a response window open; then every game's journal is checked against what each bot was
acknowledged.

Four 2-player games (seat 0 on gRPC, seat 1 on JSON + WebSocket; every seat stops at the opponents'
draw phase, M40, so windows open every turn besides the stack's), on the session's cluster (real
Ray, Redis, gRPC and HTTP gateway). Every bot acts as its autopilot would, with an idempotency key
per action and the retries a client may make (the same key and body again after an error that may
have hidden an answer; Watch resumed from the last seq received). Twice, the first bot to find
itself in an open window holds its answer while the shard of its game is killed (Ray restarts it,
retrying the calls in flight; the games reload from Redis); then every seat of that game resends its
last acknowledged action of the turn (same key, same body), which must answer ``replayed`` with the
first answer's version, and the bots go on.

Checked: 0 acknowledged actions lost (each is the journal entry at the version its answer named: an
``action`` of that seat and key), 0 applied twice (each seat's key once in its journal), every game
ended, each game's state (the shard's, reloaded) equals the engine's replay of its journal (every
entry applied, once), every Watch resumed with nothing missed (its seqs consecutive).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
import ray
from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2, lobby_pb2
from client.base import BaseClient
from client.errors import ApiError
from client.grpc_client import Client
from client.web_client import WebClient
from engine.arcmage import GAME as ARCMAGE
from engine.base import state_hash
from gateway.convert import to_json
from tests.chaos.bots import CHANNEL_OPTIONS, Ack, Record, follow, retrying, watch_gaps
from tests.conftest import NAMESPACE, Cluster
from tests.e2e.test_shard_restart import restarted

pytestmark = pytest.mark.e2e

GAMES = 4
TURNS = 4  # max_rounds: each game ends in a draw after this many turns, if nobody won before
KILLS = 2
LONG_S = 3600.0  # no deadline passes: every seat plays


@dataclass
class Sent:
    """A bot's last acknowledged action: what it sent and what it was answered."""

    key: str
    request: arcmage_pb2.ArcmageAction
    seen: int  # the version it was sent with
    version: int  # the answer's
    turn: int


@dataclass
class Chaos:
    """What the bots share with the test: the acknowledgements and the gate that holds a window."""

    record: Record = field(default_factory=Record)
    last: dict[tuple[str, int], Sent] = field(default_factory=dict)
    replayed: list[tuple[str, int, str, int]] = field(default_factory=list)  # answers that said replayed
    acked: asyncio.Event = field(default_factory=asyncio.Event)  # set at every acknowledgement
    armed: bool = False  # the next bot in a window holds it
    held: asyncio.Future[tuple[str, int, int]] | None = None  # (game, seat, version) of the window held
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def at_window(self, game_id: str, seat: int, version: int) -> None:
        if self.armed and self.held is not None and not self.held.done():
            self.armed = False
            self.held.set_result((game_id, seat, version))
            await self.release.wait()


def connect(cluster: Cluster, seat: int, secret: str) -> tuple[BaseClient, Callable[[], Any]]:
    """Seat 0 on gRPC (with the chaos bots' reconnect options), seat 1 on JSON + WebSocket."""
    if seat == 0:
        channel = grpc.aio.insecure_channel(cluster.address, options=CHANNEL_OPTIONS)
        return Client(cluster.address, secret, channel), channel.close
    web = WebClient(cluster.http_url, secret)
    return web, web.close


async def games(cluster: Cluster) -> list[tuple[str, int, str]]:
    """(game, seat, secret) for both seats of each game."""
    out = []
    stops = [arcmage_pb2.ArcmageStops(phases=["draw"]) for _ in range(2)]
    for i in range(GAMES):
        host = cluster.client("grpc")
        made = await host.create("arcmage", seats=2, nickname="host", deadline_seconds=LONG_S,
                                 arcmage=arcmage_pb2.ArcmageOptions(stops=stops, max_rounds=TURNS, turn_seconds=LONG_S,
                                                                    response_seconds=LONG_S))
        guest = cluster.client("web")
        joined = await guest.join(made.code, f"guest{i}")
        await host.start(made.game_id)
        out += [(made.game_id, 0, made.secret), (made.game_id, joined.seat, joined.secret)]
        await guest.close()
        await host.close()
    return out


async def play(cluster: Cluster, secret: str, game_id: str, seat: int, chaos: Chaos) -> int:
    """Play a seat to the end as its autopilot would; returns the turns played."""
    client, close = connect(cluster, seat, secret)
    wake = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, seat, wake, chaos.record))  # type: ignore[arg-type]
    try:
        while True:
            wake.clear()
            view = await retrying(chaos.record, lambda: client.view(game_id))
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view.arcmage.turn
            if seat in view.step.players:
                if view.step.kind == "window":
                    await chaos.at_window(game_id, seat, view.version)
                action = ARCMAGE.autopilot_action(to_json(view.arcmage))
                assert action, to_json(view.step)
                request = json_format.ParseDict(action, arcmage_pb2.ArcmageAction())
                key = f"s{seat}-v{view.version}"  # a retry sends the same key and body

                async def act(v: Any = view, r: Any = request, k: str = key) -> Any:
                    return await client.act(game_id, key=k, arcmage=r, version=v.version)
                try:
                    ack = await retrying(chaos.record, act)
                except ApiError as err:
                    if err.status not in ("ABORTED", "FAILED_PRECONDITION"):  # the step moved on: read again
                        raise
                    continue
                if ack.replayed:  # (a retry whose first try was journaled)
                    chaos.replayed.append((game_id, seat, key, ack.version))
                chaos.record.acks.append(Ack(game_id, seat, view.arcmage.turn, key, ack.version))
                chaos.last[(game_id, seat)] = Sent(key, request, view.version, ack.version, view.arcmage.turn)
                chaos.acked.set()
                continue
            if watcher.done():
                watcher.result()
            await wake.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, ApiError):
            await watcher
        await close()


def replay(journal: list[dict[str, Any]]) -> Any:
    """The game's final state, by the engine alone from its journal."""
    config: dict[str, Any] = {}
    state: Any = None
    for e in journal:
        if e["op"] == "create":
            config = dict(e["config"])
            seed = int(e["seed"])
        elif e["op"] == "join" and "config" in e:
            config = dict(e["config"])
        elif e["op"] == "start":
            state = ARCMAGE.new_game(config, seed)
        elif e["op"] == "action":
            state, _ = ARCMAGE.apply_action(state, int(e["seat"]), e["action"])
        elif e["op"] == "act":
            state, _ = ARCMAGE.act(state, int(e["seat"]), e["action"])
    return state


def lost_and_twice(journals: dict[str, list[dict[str, Any]]], acks: list[Ack]
                   ) -> tuple[list[Ack], list[tuple[str, int, str]]]:
    """The acknowledged actions that are not the journal entry at the version their answer named
    (lost), and the (game, seat, key) journaled more than once (applied twice)."""
    def at(a: Ack) -> dict[str, Any]:
        j = journals[a.game_id]
        return j[a.version - 1] if 0 < a.version <= len(j) else {}
    lost = [a for a in acks if not (at(a).get("op") == "action" and at(a)["seat"] == a.seat
                                    and at(a)["key"] == a.key and at(a)["auto"] is False)]
    twice = []
    for gid, journal in journals.items():
        seen: set[tuple[int, str]] = set()
        for e in journal:
            if e["op"] == "action" and e["key"]:
                if (e["seat"], e["key"]) in seen:
                    twice.append((gid, e["seat"], e["key"]))
                seen.add((e["seat"], e["key"]))
    return lost, twice


async def test_m25_m40_chaos_a_shard_killed_while_a_window_is_open_loses_nothing_applies_nothing_twice(
        cluster: Cluster) -> None:
    chaos = Chaos()
    seats = await games(cluster)
    clients = {(gid, seat): connect(cluster, seat, secret) for gid, seat, secret in seats}
    bots = [asyncio.get_running_loop().create_task(play(cluster, secret, gid, seat, chaos))
            for gid, seat, secret in seats]

    async def progress(n: int) -> None:
        while len(chaos.record.acks) < n:
            assert not all(b.done() for b in bots), "the games ended before the chaos"
            chaos.acked.clear()
            await chaos.acked.wait()

    events: list[str] = []
    resent = 0
    try:
        async with asyncio.timeout(120):
            for _ in range(KILLS):
                await progress(len(chaos.record.acks) + 25)
                chaos.held = asyncio.get_running_loop().create_future()
                chaos.release.clear()
                chaos.armed = True
                game_id, seat, version = await chaos.held  # a bot holds its answer: the window stays open
                view = await clients[(game_id, seat)][0].view(game_id)
                assert view.step.kind == "window" and seat in view.step.players, "the window is open"
                shard = await cluster.api.store.placement(game_id)
                handle = ray.get_actor(shard, namespace=NAMESPACE)
                pid = (await handle.ping.remote())["pid"]
                ray.kill(handle, no_restart=False)  # Ray restarts it, retrying the calls in flight
                events.append(f"killed {shard} (pid {pid}) with a window of seat {seat} open in {game_id} "
                              f"at v{version}, {len(chaos.record.acks)} acks")
                await restarted(handle, pid)
                # every acknowledged action of this turn, sent again (same key, same body): replayed
                after = await clients[(game_id, seat)][0].view(game_id)
                assert after.step.kind == "window" and seat in after.step.players, "still open after the restart"
                for s in (0, 1):
                    sent = chaos.last.get((game_id, s))
                    if sent is None or sent.turn != after.arcmage.turn or sent.version < after.round_version:
                        continue
                    again = await clients[(game_id, s)][0].act(game_id, key=sent.key, arcmage=sent.request,
                                                                version=sent.seen)
                    assert again.replayed and again.version == sent.version, (s, sent, again)
                    resent += 1
                assert (await clients[(game_id, seat)][0].view(game_id)).version == after.version
                chaos.release.set()
            turns = await asyncio.gather(*bots)
    finally:
        chaos.armed = False
        chaos.release.set()
        for b in bots:
            b.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        for _, close in clients.values():
            await close()
    assert all(t > 0 for t in turns), turns
    assert resent >= KILLS, "each held window's turn had an acknowledged action to send again"

    game_ids = sorted({gid for gid, _, _ in seats})
    journals = {gid: await cluster.api.store.journal_read(gid) for gid in game_ids}
    lost, twice = lost_and_twice(journals, chaos.record.acks)
    assert lost == [] and twice == [], (lost[:3], twice[:3], events)
    for gid, journal in journals.items():
        assert journal[-1]["op"] == "action" and not [e for e in journal if e.get("auto")], gid
        acked = {(a.seat, a.key) for a in chaos.record.acks if a.game_id == gid}
        played = {(e["seat"], e["key"]) for e in journal if e["op"] == "action"}
        assert played == acked, "every journaled action was a bot's, acknowledged"
        final = replay(journal)
        assert ARCMAGE.outcome(final) is not None, gid
        shard = await cluster.api.router.call(gid, "state_hash", gid)
        assert shard == {"version": len(journal), "hash": state_hash(final)}, gid
    assert watch_gaps(chaos.record) == {}, "a Watch resumed with an update missed or repeated"
    print(f"arcmage chaos: {len(chaos.record.acks)} acks, {chaos.record.retries} retries, "
          f"{chaos.record.reconnects} reconnects, {len(chaos.replayed)} replayed by retries, {resent} resent; {events}")
