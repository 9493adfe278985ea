"""A17's presence grace: a seat whose last Watch stream ended still counts as connected for
``presence_grace_s`` — the round waits for it meanwhile — and past it the seat is gone: the others
are told, the round closes without it, the autopilot plays its orders and its view says so.

Per door (gRPC and the WebSocket); the MCP door's agents hold presence by their calls (their lease,
A90), tested with the agent tokens."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import pytest

from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, connected, new_game, placement

pytestmark = pytest.mark.e2e


async def until(pred: Callable[[], bool], what: str) -> None:
    """Wait (bounded) for a condition of this process's gateway."""
    async with asyncio.timeout(WAIT_S):
        while not pred():
            await asyncio.sleep(0.01)
    assert pred(), what


def lingering(cluster: Cluster) -> int:
    """Seats in their grace on this gateway (each has its end-of-grace timer)."""
    return len(cluster.api.presence._timers)


async def test_a17_a_stream_cut_and_resumed_inside_the_grace_keeps_the_round_waiting(
        cluster: Cluster, door: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster.api.config, "presence_grace_s", 30.0)
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    before = lingering(cluster)
    kinds: list[str] = []
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(game.host.watch(game.game_id, view.seq - 1)) as stream:
        assert (await anext(stream)).seq == view.seq  # the host's stream is open: it is connected
        async with connected(game.guest, game.game_id):
            pass  # the guest's stream drops (a reload, a lost connection)
        await until(lambda: lingering(cluster) == before + 1, "the guest's stream to end")
        view = await game.host.view(game.game_id)
        assert [p.connected for p in view.players] == [True, True], "the guest is in its grace"
        await game.host.submit(game.game_id, view.version, salvo=placement(0))
        view = await game.host.view(game.game_id)
        assert view.round == 0 and view.submitted, "the round waits for the guest (A17)"

        async with connected(game.guest, game.game_id):  # back inside the grace
            guest_view = await game.guest.view(game.game_id)
            assert guest_view.round == 0 and not guest_view.autopilot_played
            await game.guest.submit(game.game_id, guest_view.version, salvo=placement(1))
            async for u in stream:
                kinds.append(u.kind)
                if u.kind == "round_closed":
                    break
            after = await game.guest.view(game.game_id)
    assert after.round == 1 and not after.autopilot_played, "the guest's own orders closed the round"
    assert "disconnected" not in kinds, f"nobody was told the guest left: it came back in its grace: {kinds}"
    assert {s.name for s in after.salvo.fleet} == {"battleship", "cruiser", "submarine", "destroyer"}


async def test_a17_past_the_grace_the_round_closes_and_the_autopilot_plays_the_seat(
        cluster: Cluster, door: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster.api.config, "presence_grace_s", 1.0)
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    kinds: list[str] = []
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(game.host.watch(game.game_id, view.seq - 1)) as stream:
        assert (await anext(stream)).seq == view.seq  # the host's stream is open: it is connected
        async with connected(game.guest, game.game_id):
            pass  # the guest's stream drops and does not come back
        await game.host.submit(game.game_id, view.version, salvo=placement(0))
        assert (await game.host.view(game.game_id)).round == 0, "inside the grace the round waits"
        async for u in stream:
            kinds.append(u.kind)
            if u.kind == "round_closed":
                assert u.data["early"] is True  # closed by presence, long before the 60 s deadline
                break
    assert "disconnected" in kinds and kinds.index("disconnected") < kinds.index("round_closed"), kinds
    guest = await game.guest.view(game.game_id)
    assert guest.round == 1 and guest.autopilot_played, "the guest's view says the autopilot played"
    assert guest.salvo.fleet, "the autopilot placed the guest's fleet"
    host = await game.host.view(game.game_id)
    assert not host.autopilot_played
    assert not host.players[1].connected, "past its grace the guest is gone"
