"""Replays and exports of finished games through the real gateway, once per door (community.proto
GetReplay and ExportGame): frames of a finished public Salvo game against the views its players had
at that time, the whole game at a frame mid-game, the export replayed by `archipelago replay FILE` (a
subprocess: the engine alone) to the shard's state hash, a running game refused (game/not_over), a
private game's replay for its players only."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.base import BaseClient
from client.bot import play_seat
from tests.conftest import Cluster
from tests.e2e.helpers import (
    FLEET_SQUARES,
    MISSING_SALVOS,
    SINKING_SALVOS,
    Game,
    new_game,
    placement,
    rpc_error,
    shots,
    submit_and_close,
)
from tests.e2e.serving import run

pytestmark = pytest.mark.e2e

Connect = Callable[[], BaseClient]
FRAMES = 1 + len(SINKING_SALVOS[1])  # the placement round, then the salvos that sink the guest's fleet
PRIVATE_FIELDS = {"secret_hash", "request", "key", "profile"}


@pytest.fixture
def connect(cluster: Cluster, door: str) -> Connect:
    return lambda: cluster.client(door)


async def finished_game(connect: Connect, *, public: bool
                        ) -> tuple[Game, list[tuple[game_pb2.GetViewResponse, game_pb2.GetViewResponse]]]:
    """A Salvo game the host wins in FRAMES rounds; (host's view, guest's view) at the start and after
    each round closed, as the players saw them then."""
    game = await new_game(connect, public=public)
    views = [(await game.host.view(game.game_id), await game.guest.view(game.game_id))]
    await submit_and_close(game, placement(0), placement(1))
    views.append((await game.host.view(game.game_id), await game.guest.view(game.game_id)))
    for mine, theirs in zip(SINKING_SALVOS[1], MISSING_SALVOS, strict=True):
        await submit_and_close(game, shots(mine), shots(theirs))
        views.append((await game.host.view(game.game_id), await game.guest.view(game.game_id)))
    assert views[-1][0].status == lobby_pb2.GAME_STATUS_OVER and len(views) == FRAMES + 1
    return game, views


def keys_in(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj).union(*(keys_in(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(keys_in(v) for v in obj))
    return set()


async def test_a_finished_public_game_replays_frame_by_frame_and_its_export_to_the_same_hash(
        cluster: Cluster, connect: Connect, door: str, tmp_path: Path) -> None:
    game, views = await finished_game(connect, public=True)
    anyone = connect()  # no secret: the game is public
    for n, seat in ((0, 0), (2, 1), (FRAMES, 0), (FRAMES, 1)):
        frame = await anyone.replay(game.game_id, n, seat)
        live = views[n][seat]
        assert (frame.game_id, frame.game, frame.frames, frame.frame, frame.seat) == (
            game.game_id, "salvo", FRAMES, n, seat)
        assert frame.round == live.round == frame.view.round and frame.view.you == seat
        assert frame.view.salvo == live.salvo, (n, seat)  # what that seat saw then
        assert frame.view.status == (lobby_pb2.GAME_STATUS_OVER if n == FRAMES else lobby_pb2.GAME_STATUS_RUNNING)
        assert [p.nickname for p in frame.view.players] == ["host", "guest"]
        assert not frame.view.HasField("salvo_pending") and frame.view.deadline_unix_ms == 0
    # the whole game mid-game: the guest's fleet, which the host saw only at the end, and every hit
    whole = await anyone.replay(game.game_id, 2, -1)
    assert whole.seat == -1 and whole.view.you == -1 and whole.view.status == lobby_pb2.GAME_STATUS_RUNNING
    assert {sq for ship in whole.view.salvo.enemy_fleet for sq in ship.squares} == FLEET_SQUARES[1]
    assert not views[2][0].salvo.enemy_fleet
    assert [s.hit for s in whole.view.salvo.shots] == [True] * len(SINKING_SALVOS[1][0])
    assert list((await anyone.replay(game.game_id, FRAMES, -1)).view.salvo.outcome.winners) == [0]
    for frame_no, seat, field in ((FRAMES + 1, 0, "frame"), (-1, 0, "frame"), (0, 2, "seat")):
        err = await rpc_error(anyone.replay(game.game_id, frame_no, seat))
        assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "order/invalid", field)

    exported = await anyone.export_game(game.game_id)
    assert exported.format == "archipelago-journal/1"
    records = [json.loads(r) for r in exported.records]
    assert [r["op"] for r in records] == ["create", "join", "start", *["submit", "submit", "close"] * FRAMES]
    assert not keys_in(records) & PRIVATE_FIELDS and isinstance(records[0]["seed"], int)
    assert exported.state_hash == (await cluster.api.router.game(game.game_id).state_hash(game.game_id))["hash"]
    # `archipelago replay FILE`: JSON lines (with the header line) and the door's own JSON answer
    lines = tmp_path / "game.jsonl"
    lines.write_text(json.dumps({"format": exported.format, "state_hash": exported.state_hash}) + "\n"
                     + "\n".join(exported.records) + "\n", encoding="utf-8")
    answer = tmp_path / "game.json"
    answer.write_text(await asyncio.to_thread(raw_export, cluster, door, game.game_id, exported), encoding="utf-8")
    for path in (lines, answer):
        code, out = await run("replay", str(path), timeout=120)
        assert code == 0, out
        assert re.search(rf"^state hash: {exported.state_hash}$", out, re.M), out
        assert "matches the export's state hash" in out and "host (seat 0) won" in out, out
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join(exported.records[:-1]) + "\n", encoding="utf-8")  # the last round left out
    code, out = await run("replay", str(bare), timeout=120)
    assert code == 0 and (m := re.search(r"^state hash: (\w+)$", out, re.M)) and m[1] != exported.state_hash, out


def raw_export(cluster: Cluster, door: str, game_id: str, exported: Any) -> str:
    """The ExportGame answer as JSON as the door gives it: the JSON door's body as sent; the gRPC
    door's message in protobuf's JSON mapping (camelCase: ``stateHash``). (Blocking: in a thread, the
    test cluster's HTTP door serves on the test's event loop.)"""
    if door == "grpc":
        return json_format.MessageToJson(exported)
    req = urllib.request.Request(f"{cluster.http_url}/v1/Community/ExportGame", method="POST",
                                 data=json.dumps({"game_id": game_id}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return str(resp.read().decode())


async def test_a_running_game_has_no_replay_yet(connect: Connect) -> None:
    game = await new_game(connect, public=True)
    await submit_and_close(game, placement(0), placement(1))
    for call in (connect().replay(game.game_id, 0, 0), game.host.export_game(game.game_id),
                 game.guest.replay(game.game_id, 1, -1)):
        err = await rpc_error(call)
        assert (err.status, err.code, err.field) == ("FAILED_PRECONDITION", "game/not_over", "game_id")
    err = await rpc_error(connect().replay("no-such-game", 0, 0))
    assert err.status == "NOT_FOUND" and err.field == "game_id"


async def test_a_private_games_replay_is_for_its_players(cluster: Cluster, connect: Connect, door: str) -> None:
    game, views = await finished_game(connect, public=False)
    other = await new_game(connect, public=False, start=False)
    outsiders = [connect(), cluster.client(door, "not-a-secret-of-anyone"), other.host,
                 cluster.client(door, "prf_" + "x" * 40)]
    for client in outsiders:
        for call in (client.replay(game.game_id, 1, 0), client.export_game(game.game_id)):
            err = await rpc_error(call)
            assert (err.status, err.code) == ("PERMISSION_DENIED", "auth/permission_denied"), err
            assert err.field == ("game_id" if client is other.host else "authorization"), err
    for player, seat in ((game.host, 0), (game.guest, 1)):
        frame = await player.replay(game.game_id, FRAMES, -1)
        assert frame.frames == FRAMES and frame.view.status == lobby_pb2.GAME_STATUS_OVER
        other_seat = await player.replay(game.game_id, 1, 1 - seat)  # a finished game hides nothing
        assert other_seat.view.salvo == views[1][1 - seat].salvo
        exported = await player.export_game(game.game_id)
        assert exported.state_hash and len(exported.records) == 3 + 3 * FRAMES


@pytest.mark.parametrize("kind", ["archipelago", "arcmage"])
async def test_every_kind_of_game_exports_to_the_shards_state_hash(cluster: Cluster, connect: Connect,
                                                                  kind: str, tmp_path: Path) -> None:
    """An Archipelago and an Arcmage game (the host's seat played by the bot, the others autopilot seats)
    exported and replayed by `archipelago replay` to the shard's hash; the last frame the host's last view."""
    host = connect()
    options: dict[str, Any] = ({"archipelago": A.ArchipelagoOptions(max_rounds=2)} if kind == "archipelago"
                               else {"arcmage": arcmage_pb2.ArcmageOptions(max_rounds=2)})
    created = await host.create(kind, seats=3 if kind == "archipelago" else 2, nickname="host", public=True,
                                deadline_seconds=60, **options)
    await host.start(created.game_id, fill=True)
    final = await asyncio.wait_for(play_seat(host, created.game_id, log=lambda _m: None), timeout=240)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    exported = await connect().export_game(created.game_id)
    live = (await cluster.api.router.game(created.game_id).state_hash(created.game_id))["hash"]
    assert exported.state_hash == live
    records = [json.loads(r) for r in exported.records]
    steps = sum(1 for r in records if r["op"] == ("close" if kind == "archipelago" else "action"))
    last = await connect().replay(created.game_id, steps, 0)
    assert last.frames == steps and last.view.status == lobby_pb2.GAME_STATUS_OVER
    shown, had = getattr(last.view, kind), getattr(final, kind)
    if kind == "arcmage":  # a frame shows its action's events; a live Arcmage view none
        shown.ClearField("events")
        had.ClearField("events")
    assert shown == had  # the host's last view, as it had it
    path = tmp_path / "game.jsonl"
    path.write_text("\n".join(exported.records) + "\n", encoding="utf-8")
    code, out = await run("replay", str(path), timeout=120)
    assert code == 0 and re.search(rf"^state hash: {live}$", out, re.M), out
