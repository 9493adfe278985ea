"""Arcmage's response windows through the real gateway, shards and Redis (M25, M40; issue 21).

A window opens at a stop (ArcmageOptions.stops: every seat stops at the start of the opponents'
draw phase) and closes as soon as every seat in it has passed (M40) — at once, with no wait for its
deadline — or at its deadline (M25), when the autopilot passes for the seats left. Both are checked
as they happen live and with the shard killed while the window is open (Ray restarts it; it reloads
the game from its journal): the window's deadline stands across the restart, the last pass still
closes it at once, and a deadline that passed while the shard was down fires once.

Three seats: the host on gRPC, the second on JSON + WebSocket, the third on gRPC. Who plays first is
the game's secret seed; the tests read it from the first step. Until the window, every present seat
plays its autopilot's choice through the doors; an absent seat never acts and never watches.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import ray
from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2, game_pb2
from client.base import BaseClient
from engine.arcmage import GAME as ARCMAGE
from gateway.convert import to_json
from services.game_actor import wall_ms
from tests.conftest import NAMESPACE, Cluster
from tests.e2e.helpers import WAIT_S
from tests.e2e.test_shard_restart import restarted

pytestmark = pytest.mark.e2e

LONG_S = 3600.0  # a deadline no test waits for
SHORT_S = 2.0  # the response window of the absent-player test
PASS: dict[str, Any] = {"pass": {}}


@dataclass
class Table:
    game_id: str
    clients: dict[int, BaseClient]  # seat -> its player's client
    first: int  # who plays first (the seed's choice)

    def client(self, seat: int) -> BaseClient:
        return self.clients[seat]


async def table(cluster: Cluster, *, response_s: float) -> Table:
    """A started 3-seat game in which every seat stops at the opponents' draw phase (M40)."""
    host = cluster.client("grpc")
    stops = [arcmage_pb2.ArcmageStops(phases=["draw"]) for _ in range(3)]
    created = await host.create("arcmage", seats=3, nickname="seat0", deadline_seconds=LONG_S,
                                arcmage=arcmage_pb2.ArcmageOptions(stops=stops, turn_seconds=LONG_S,
                                                                   response_seconds=response_s))
    clients = {0: host}
    for name, door in (("seat1", "web"), ("seat2", "grpc")):
        c = cluster.client(door)
        clients[(await c.join(created.code, name)).seat] = c
    await host.start(created.game_id)
    first = (await host.view(created.game_id)).step.active
    return Table(created.game_id, clients, first)


async def act_autopilot(t: Table, seat: int) -> game_pb2.ActResponse:
    """``seat`` plays what its autopilot would, through its door, from its own view."""
    v = await t.client(seat).view(t.game_id)
    action = ARCMAGE.autopilot_action(to_json(v.arcmage))
    assert action, (seat, to_json(v.step))
    return await t.client(seat).act(t.game_id, arcmage=json_format.ParseDict(action, arcmage_pb2.ArcmageAction()),
                                    version=v.version)


async def pass_(t: Table, seat: int) -> game_pb2.ActResponse:
    v = await t.client(seat).view(t.game_id)
    return await t.client(seat).act(t.game_id, arcmage=json_format.ParseDict(PASS, arcmage_pb2.ArcmageAction()),
                                    version=v.version)


def is_draw_stop(v: game_pb2.GetViewResponse) -> bool:
    p = v.arcmage.pending
    return v.step.kind == "window" and p.op == "window" and p.kind == "phase" and p.phase == "draw"


async def updates_until(client: BaseClient, game_id: str, after_seq: int,
                        pred: Callable[[game_pb2.Update], bool]) -> list[game_pb2.Update]:
    """Every update after ``after_seq`` up to the first that satisfies ``pred`` (fails after WAIT_S)."""
    got: list[game_pb2.Update] = []
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(client.watch(game_id, after_seq)) as stream:
        async for u in stream:
            got.append(u)
            if pred(u):
                return got
    raise AssertionError(f"the stream ended without the expected update: {[u.kind for u in got]}")


def is_step(u: game_pb2.Update) -> bool:
    return u.kind == "step"


def window_closed(u: game_pb2.Update) -> bool:
    return u.kind == "step" and data(u)["kind"] != "window"


async def to_draw_stop(t: Table, watcher: int, absent: int | None = None) -> game_pb2.GetViewResponse:
    """Play on until the first draw-phase stop window is open; an absent seat's own decisions (its
    setup city) wait for their deadline. Returns ``watcher``'s view of the window."""
    async with asyncio.timeout(WAIT_S):
        while True:
            v = await t.client(watcher).view(t.game_id)
            if is_draw_stop(v):
                return v
            seats = [s for s in v.step.players if s != absent]
            if seats:
                await act_autopilot(t, seats[0])
            else:  # only the absent seat may act: its deadline makes the autopilot act for it
                await updates_until(t.client(watcher), t.game_id, v.seq, is_step)


async def shard_of(cluster: Cluster, game_id: str) -> tuple[Any, int]:
    """The game's shard (its Ray actor handle) and its process id."""
    handle = ray.get_actor(await cluster.api.store.placement(game_id), namespace=NAMESPACE)
    return handle, int((await handle.ping.remote())["pid"])


async def kill_shard(cluster: Cluster, game_id: str) -> None:
    """Kill the game's shard (Ray restarts it) and wait until the new process answers."""
    handle, pid = await shard_of(cluster, game_id)
    ray.kill(handle, no_restart=False)
    await restarted(handle, pid)


def data(u: game_pb2.Update) -> dict[str, Any]:
    return json_format.MessageToDict(u.data)


@pytest.mark.parametrize("restart", [False, True], ids=["live", "shard-restarted"])
async def test_m40_a_window_every_player_passes_closes_at_once(cluster: Cluster, restart: bool) -> None:
    t = await table(cluster, response_s=LONG_S)
    window = await to_draw_stop(t, t.first)
    w = window.step
    answering = list(w.players)
    assert w.deadline == "response" and w.active == t.first and sorted(answering) == sorted(
        s for s in range(3) if s != t.first)
    assert w.deadline_unix_ms - wall_ms() > (LONG_S - 60) * 1000  # only the passes can close it

    first_pass = await pass_(t, answering[0])
    if restart:
        await kill_shard(cluster, t.game_id)
    still = await t.client(t.first).view(t.game_id)  # (after a restart: the new process reloaded it)
    assert is_draw_stop(still) and list(still.step.players) == answering[1:]
    assert still.step.deadline_unix_ms == w.deadline_unix_ms, "a window losing seats that answered keeps its deadline"
    assert still.version == first_pass.version

    last_pass = await pass_(t, answering[1])
    got = await updates_until(t.client(t.first), t.game_id, still.seq, window_closed)
    closed_at = wall_ms()
    step = data(got[-1])
    assert got[-1].version == last_pass.version, "the last pass itself closed the window"
    assert step["kind"] == "turn" and step["active"] == t.first and step["deadline"] == "turn", step
    assert closed_at < w.deadline_unix_ms, "closed before its deadline"
    passed = [data(u)["player"] for u in got if u.kind == "event" and u.event_kind == "passed"]
    assert passed == [answering[1]], passed  # (the first pass's event came before still.seq)

    journal = await cluster.api.store.journal_read(t.game_id)
    assert len(journal) == last_pass.version
    entry = journal[last_pass.version - 1]
    assert (entry["op"], entry["seat"], entry["action"], entry["auto"]) == ("action", answering[1], PASS, False)
    assert not [e for e in journal if e.get("auto")], "the autopilot never acted: every seat played"
    after = await t.client(answering[0]).view(t.game_id)
    assert after.step.kind == "turn" and after.arcmage.pending.phase == "draw" and after.version == last_pass.version


@pytest.mark.parametrize("restart", [False, True], ids=["live", "shard-restarted"])
async def test_m25_a_window_with_an_absent_player_closes_at_its_deadline_with_the_autopilots_pass(
        cluster: Cluster, restart: bool) -> None:
    t = await table(cluster, response_s=SHORT_S)
    absent = (t.first + 2) % 3  # answers last in the first turn's windows; never acts, never watches
    present = (t.first + 1) % 3
    handle, pid = await shard_of(cluster, t.game_id)  # (now: after the pass, only the kill)
    window = await to_draw_stop(t, present, absent)
    w = window.step
    assert w.deadline == "response" and list(w.players) == [present, absent]

    ack = await t.client(present).act(t.game_id, arcmage=json_format.ParseDict(PASS, arcmage_pb2.ArcmageAction()),
                                      version=window.version)
    if restart:
        # The shard stops at once (SIGSTOP: it serves nothing more), stays down until the window's deadline
        # has passed — the case under test is a deadline that passes while its shard is down, whatever
        # the time Ray takes to restart one — then dies (SIGKILL), and Ray restarts it.
        kill_ms = wall_ms()
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(max(0.0, (w.deadline_unix_ms - wall_ms()) / 1000) + 0.05)  # (the clock, not a race)
        finally:
            os.kill(pid, signal.SIGKILL)
        await restarted(handle, pid)
        back_ms = wall_ms()
        assert kill_ms < w.deadline_unix_ms < back_ms, "the deadline passed while the shard was down"
    got = await updates_until(t.client(present), t.game_id, window.seq, window_closed)
    closed_at = wall_ms()
    journal = await cluster.api.store.journal_read(t.game_id)

    passed = [u for u in got if u.kind == "event" and u.event_kind == "passed"]
    assert [data(u)["player"] for u in passed] == [present, absent], [(u.kind, u.event_kind, data(u)) for u in got]
    left = [data(u) for u in got if u.kind == "step" and u.version == ack.version]
    assert [(d["players"], d["deadline_unix_ms"]) for d in left] == [([absent], w.deadline_unix_ms)], \
        "after the present seat's pass the window waits for the absent one, on its own deadline"
    step = data(got[-1])
    assert step["kind"] == "turn" and step["active"] == t.first and step["players"] == [t.first], step
    assert got[-1].version == passed[1].version == ack.version + 1, "the autopilot's pass closed the window"
    assert closed_at >= w.deadline_unix_ms
    auto = journal[passed[1].version - 1]
    assert (auto["op"], auto["seat"], auto["action"], auto["auto"]) == ("action", absent, PASS, True)
    assert auto["at"] >= w.deadline_unix_ms, "not before its deadline"
    # exactly once: nothing more of the absent seat's after the window opened (no second deadline fired)
    late = [e for e in journal[ack.version:] if e.get("seat") == absent]
    assert late == [auto], late
    assert [e["seat"] for e in journal if e.get("auto")] == [absent, absent], \
        "the autopilot acted for the absent seat only: its setup city and this pass"
    if restart:  # it fired once, from the restarted shard (which reloaded the game from its journal)
        assert auto["at"] > kill_ms
    again = await t.client(t.first).view(t.game_id)
    assert again.version == len(journal) and again.step.kind == "turn"
    # the absent seat's view (through its own door) lists what the autopilot did for it, and only its view
    log = (await t.client(absent).view(t.game_id)).autopilot_log
    assert {(turn.source, turn.WhichOneof("played")) for turn in log} == {("autopilot", "arcmage")}
    assert [json_format.MessageToDict(a, preserving_proto_field_name=True) for turn in log
            for a in turn.arcmage.actions] == [e["action"] for e in journal if e.get("auto")]
    assert not (await t.client(present).view(t.game_id)).autopilot_log
