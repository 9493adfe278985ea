"""Salvo through the whole path: a client over loopback -> gateway -> Ray shard -> real Redis.

Every test runs once per door of the player API — gRPC and JSON + WebSocket — from the same body
(the ``door`` fixture), with clients that share one interface (``client.base.BaseClient``).
Rule ids in names: S1–S9 (spec/salvo.md), A2–A4, A16, A17 (lobby and rounds, spec/archipelago.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client.base import BaseClient
from client.bot import play_seat
from tests.conftest import Cluster
from tests.e2e.helpers import (
    FLEET_SQUARES,
    MISSING_SALVOS,
    SINKING_SALVOS,
    connected,
    new_game,
    placement,
    round_closed,
    rpc_error,
    shots,
    submit_and_close,
    wait_update,
)

pytestmark = pytest.mark.e2e

Connect = Callable[[], BaseClient]


@pytest.fixture
def connect(cluster: Cluster, door: str) -> Connect:
    return lambda: cluster.client(door)


def strings(obj: Any) -> set[str]:
    if isinstance(obj, str):
        return {obj}
    if isinstance(obj, dict):
        return set().union(*(strings(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(strings(v) for v in obj)) if obj else set()
    return set()


def assert_no_secret_leak(view: game_pb2.GetViewResponse) -> None:
    """S8: before the end a view holds no enemy ship square and no 'hit' on the player's salvo shots."""
    sv = view.salvo
    assert sv.phase != "over"
    assert not sv.enemy_fleet
    assert not any(s.HasField("hit") for s in sv.shots), "which salvo square hit leaked (S8)"
    known = {s.square for s in sv.shots} | {s.square for s in sv.incoming}
    leaked = (strings(json_format.MessageToDict(view)) & FLEET_SQUARES[1 - view.you]) - known
    assert not leaked, f"enemy ship squares {leaked} leaked"


async def test_a2_a4_create_list_join_start(connect: Connect) -> None:
    game = await new_game(connect, start=False, public=True)
    assert len(game.code) == 6 and not set(game.code) & set("0O1I")
    listed = await game.host.list_games("salvo")
    assert game.game_id not in {g.game_id for g in listed.games}, "a full game is not open for joining"
    err = await rpc_error(game.guest.start(game.game_id))
    assert err.status == "PERMISSION_DENIED"
    summary = await game.host.start(game.game_id)
    assert summary.status == lobby_pb2.GAME_STATUS_RUNNING
    view = await game.guest.view(game.game_id)
    assert view.status == lobby_pb2.GAME_STATUS_RUNNING and view.you == 1 and view.salvo.phase == "placement"
    assert [p.nickname for p in view.players] == ["host", "guest"]


async def test_a1_bad_creation_is_refused_before_anything_is_stored(cluster: Cluster, connect: Connect) -> None:
    codes_before = set(await cluster.api.store.redis.keys(cluster.api.store.key("code", "*")))
    c = connect()
    err = await rpc_error(c.create("salvo", seats=3, nickname="many", deadline_seconds=60))
    assert err.status == "INVALID_ARGUMENT" and err.field == "players"
    err = await rpc_error(c.create("salvo", seats=2, nickname="", deadline_seconds=60))
    assert err.field == "nickname" and err.rule == "A2"
    err = await rpc_error(c.create("salvo", seats=2, nickname="slow", deadline_seconds=-5))
    assert err.field == "deadline_seconds"
    err = await rpc_error(c.create("chess", seats=2, nickname="x", deadline_seconds=60))
    assert err.field == "game"
    assert set(await cluster.api.store.redis.keys(cluster.api.store.key("code", "*"))) == codes_before


async def test_a2_public_game_is_listed_until_full(connect: Connect) -> None:
    c = connect()
    created = await c.create("salvo", seats=2, nickname="lonely", public=True, deadline_seconds=60)
    listed = await c.list_games("salvo")
    assert created.game_id in {g.game_id for g in listed.games}
    err = await rpc_error(connect().join("ZZZZZZ", "x"))
    assert err.status == "NOT_FOUND" and err.field == "code"
    err = await rpc_error(connect().join(created.code, "lonely"))
    assert err.status == "ALREADY_EXISTS" and err.rule == "A2"


async def test_s7_whole_game_to_a_win(connect: Connect) -> None:
    game = await new_game(connect)
    await submit_and_close(game, placement(0), placement(1))
    for mine, theirs in zip(SINKING_SALVOS[1], MISSING_SALVOS, strict=True):
        for client in (game.host, game.guest):
            assert_no_secret_leak(await client.view(game.game_id))
        await submit_and_close(game, shots(mine), shots(theirs))
    final = await game.guest.view(game.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    assert list(final.salvo.outcome.winners) == [0] and not final.salvo.outcome.draw
    assert {sq for ship in final.salvo.enemy_fleet for sq in ship.squares} == FLEET_SQUARES[0]  # S8: end


async def test_s7_both_fleets_sunk_by_the_same_salvo_is_a_draw(connect: Connect) -> None:
    game = await new_game(connect)
    await submit_and_close(game, placement(0), placement(1))
    for host_salvo, guest_salvo in zip(SINKING_SALVOS[1], SINKING_SALVOS[0], strict=True):
        await submit_and_close(game, shots(host_salvo), shots(guest_salvo))
    final = await game.host.view(game.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER and final.salvo.outcome.draw
    assert list(final.salvo.outcome.winners) == []


async def test_s6_s8_reports_name_ships_and_updates_leak_nothing(connect: Connect) -> None:
    game = await new_game(connect)
    await submit_and_close(game, placement(0), placement(1))
    await submit_and_close(game, shots(["F7", "F8", "J1", "F10", "B2"]), shots(["J1"]))
    view = await game.host.view(game.game_id)
    assert_no_secret_leak(view)
    report = view.salvo.reports[-1]
    assert report.hits == 3
    assert {s.ship: s.count for s in report.ships} == {"battleship": 1, "cruiser": 1, "destroyer": 1}
    # every update the host may see: reports carry counts and ship names, never squares that hit
    await game.guest.chat(game.game_id, "gg")  # a last update, after everything to check
    ups = []
    async with asyncio.timeout(30), contextlib.aclosing(game.host.watch(game.game_id, 0)) as stream:
        async for u in stream:
            ups.append(u)
            if u.kind == "chat":
                assert u.chat.text == "gg" and u.chat.nickname == "guest"
                break
    kinds = {u.event_kind for u in ups if u.kind == "event"}
    assert "salvo_report" in kinds
    for u in ups:
        data = json_format.MessageToDict(u.data)
        if u.event_kind == "salvo_report":
            assert set(data) <= {"round", "shooter", "hits", "ships", "sunk"}
        if u.event_kind == "shots_received":
            assert set(data.get("squares", [])) <= {"J1"}


async def test_a17_early_close_when_both_submitted(connect: Connect) -> None:
    game = await new_game(connect, deadline=600)
    closed = await submit_and_close(game, placement(0), placement(1))
    assert closed.data["early"] is True
    view = await game.host.view(game.game_id)
    assert view.round == 1 and view.salvo.phase == "firing"


async def test_s9_deadline_passes_and_the_autopilot_plays_the_absent_player(connect: Connect) -> None:
    game = await new_game(connect, deadline=2)
    view = await game.host.view(game.game_id)
    await game.host.submit(game.game_id, view.version, salvo=placement(0))
    async with connected(game.guest, game.game_id):  # the guest is there but does not play: the deadline
        closed = await wait_update(game.host, game.game_id, view.seq, round_closed(0))
    assert closed.data["early"] is False
    guest_view = await game.guest.view(game.game_id)
    assert len(guest_view.salvo.fleet) == 4, "the autopilot placed the guest's fleet (S3)"
    view = await game.host.view(game.game_id)
    await game.host.submit(game.game_id, view.version, salvo=shots(["J10"]))
    async with connected(game.guest, game.game_id):
        await wait_update(game.host, game.game_id, view.seq, round_closed(1))
    guest_view = await game.guest.view(game.game_id)
    assert len(guest_view.salvo.shots) == 7, "the autopilot fired a full salvo for the guest (S4, S9)"


async def test_a3_rejoin_with_the_secret_from_a_second_client(connect: Connect) -> None:
    game = await new_game(connect)
    other = connect().with_secret(game.guest.secret or "")
    who = await other.rejoin()
    assert (who.game_id, who.seat, who.nickname, who.code) == (game.game_id, 1, "guest", game.code)
    view = await other.view(game.game_id)
    assert view.you == 1
    await other.submit(game.game_id, view.version, salvo=placement(1))
    assert (await game.guest.view(game.game_id)).submitted


async def test_a3_wrong_or_missing_secret_is_unauthenticated(connect: Connect) -> None:
    game = await new_game(connect)
    for secret in ("not-a-secret", None):
        client = connect()
        client.secret = secret
        err = await rpc_error(client.view(game.game_id))
        assert err.status == "UNAUTHENTICATED"
    other = await new_game(connect)
    err = await rpc_error(other.host.view(game.game_id))
    assert err.status == "PERMISSION_DENIED"


async def check_refused(game: Any, orders: salvo_pb2.SalvoOrders, field: str, rule: str, words: list[str]) -> None:
    before = await game.host.view(game.game_id)
    err = await rpc_error(game.host.submit(game.game_id, before.version, salvo=orders))
    assert err.status == "INVALID_ARGUMENT"
    assert err.rule == rule and err.field.startswith(field), err
    assert err.message.startswith(f"{err.field}: rule {rule}: "), err.message  # the documented format
    for w in words:
        assert w in err.message, err.message
    after = await game.host.view(game.game_id)
    assert after.version == before.version and after.submitted == before.submitted
    assert after.salvo_pending == before.salvo_pending


async def test_s3_overlapping_fleet_is_refused(connect: Connect) -> None:
    game = await new_game(connect)
    bad = placement(0)
    bad.placement[1].bow = "C1"  # the cruiser over the battleship
    await check_refused(game, bad, "placement", "S3", ["C1"])


async def test_s1_s4_s5_bad_shots_are_refused_naming_square_and_rule(connect: Connect) -> None:
    game = await new_game(connect)
    await submit_and_close(game, placement(0), placement(1))
    await submit_and_close(game, shots(["F5"]), shots(["J1"]))
    await check_refused(game, shots(["F5"]), "shots[0]", "S5", ["F5"])  # already shot
    await check_refused(game, shots(["G5", "G5"]), "shots[1]", "S5", ["G5"])  # twice in one salvo
    await check_refused(game, shots(["K1"]), "shots[0]", "S1", ["K1"])  # off the grid
    eight = ["A5", "B5", "C5", "D5", "E5", "F6", "G6", "H6"]
    await check_refused(game, shots(eight), "shots", "S4", ["7", "8"])  # too many


async def test_stale_version_is_aborted(connect: Connect) -> None:
    game = await new_game(connect)
    first = await game.host.view(game.game_id)
    await submit_and_close(game, placement(0), placement(1))
    err = await rpc_error(game.host.submit(game.game_id, first.version, salvo=shots(["A1"])))
    assert err.status == "ABORTED" and err.field == "version"
    assert not (await game.host.view(game.game_id)).submitted


async def test_same_idempotency_key_is_applied_once(connect: Connect) -> None:
    game = await new_game(connect)
    view = await game.host.view(game.game_id)
    a = await game.host.submit(game.game_id, view.version, key="once", draft=True, salvo=placement(0))
    b = await game.host.submit(game.game_id, view.version, key="once", draft=True, salvo=placement(0))
    assert not a.replayed and b.replayed and a.version == b.version
    assert (await game.host.view(game.game_id)).version == a.version


async def test_s9_two_autopilot_bots_play_a_game_to_the_end(connect: Connect) -> None:
    game = await new_game(connect, deadline=30, start=False)
    finals = await asyncio.wait_for(asyncio.gather(play_seat(game.host, game.game_id, log=lambda m: None),
                                                   play_seat(game.guest, game.game_id, log=lambda m: None)),
                                    timeout=120)
    for final in finals:
        assert final.status == lobby_pb2.GAME_STATUS_OVER
        assert final.salvo.outcome.reason
    assert finals[0].salvo.outcome == finals[1].salvo.outcome


@pytest.mark.parametrize(("speed", "seconds"), [(lobby_pb2.SPEED_FAST, 60.0), (lobby_pb2.SPEED_SLOW, 8 * 3600.0)])
async def test_a1_speed_sets_the_round_deadline(connect: Connect, speed: int, seconds: float) -> None:
    c = connect()
    created = await c.create("salvo", seats=2, nickname="timer", speed=speed)
    await c.start(created.game_id, fill=True)
    view = await c.view(created.game_id)
    assert view.deadline_seconds == seconds
    assert abs(view.deadline_unix_ms / 1000 - time.time() - seconds) < 30  # the round opened just now


async def test_s4_classic_mode_only_the_active_player_shoots(connect: Connect) -> None:
    game = await new_game(connect, mode="classic")
    await submit_and_close(game, placement(0), placement(1))
    view = await game.guest.view(game.game_id)
    assert not view.expected and view.salvo.active_player == 0
    err = await rpc_error(game.guest.submit(game.game_id, view.version, salvo=shots(["A1"])))
    assert err.status == "FAILED_PRECONDITION" and err.rule == "S4"
    await game.host.submit(game.game_id, view.version, salvo=shots(["F7"]))  # closes the turn at once
    closed = await wait_update(game.host, game.game_id, view.seq, round_closed(view.round))
    assert closed.data["early"] is True
    after = await game.host.view(game.game_id)
    assert after.salvo.active_player == 1 and [(s.square, s.hit) for s in after.salvo.shots] == [("F7", True)]
