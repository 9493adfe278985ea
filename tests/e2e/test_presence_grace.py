"""A17's presence grace: a seat whose last Watch stream ended still counts as connected for
``presence_grace_s`` — the round waits for it meanwhile — and past it the seat is gone: the others
are told, the round closes without it, the autopilot plays its orders and its view says so.

Per door: gRPC and the WebSocket (a Watch stream cut); the MCP door, whose agent holds its player's
presence by its calls for ``agent_presence_s`` after the last one (A90): inside it the round waits,
past it the same happens as past a stream's grace."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

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
    assert [(t.round, t.source) for t in guest.autopilot_log] == [(0, "autopilot")], "and what it played"
    assert guest.autopilot_log[0].salvo.random_placement or guest.autopilot_log[0].salvo.placement
    host = await game.host.view(game.game_id)
    assert not host.autopilot_played
    assert not host.players[1].connected, "past its grace the guest is gone"


async def agent_call(url: str, token: str, tool: str, **args: object) -> str:
    """One MCP tool call of a player's agent; its text (fails on a tool error)."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as c:
        result = await c.call_tool(tool, dict(args))
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, text
    return text


@pytest.mark.parametrize("lease_s", [60.0, 1.0], ids=["inside", "past"])
async def test_a17_a90_an_agents_calls_hold_its_seat_and_past_its_lease_the_autopilot_plays(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch, lease_s: float) -> None:
    monkeypatch.setattr(cluster.api.config, "agent_presence_s", lease_s)
    game = await new_game(lambda: cluster.client("grpc"))
    token = (await game.guest.create_agent_token(game.game_id, "agent")).token
    view = await game.host.view(game.game_id)
    kinds: list[str] = []
    async with asyncio.timeout(WAIT_S), \
            contextlib.aclosing(game.host.watch(game.game_id, view.seq - 1)) as stream:
        assert (await anext(stream)).seq == view.seq  # the host is connected
        await agent_call(cluster.http_url, token, "get_view")  # the guest's agent is at work
        view = await game.host.view(game.game_id)
        assert [p.connected for p in view.players] == [True, True], "the agent's player is connected"
        await game.host.submit(game.game_id, view.version, salvo=placement(0))
        assert (await game.host.view(game.game_id)).round == 0, "the round waits for the agent's player"
        if lease_s > 10:  # inside the lease: the agent plays its round itself
            await agent_call(cluster.http_url, token, "submit_orders", round=0, orders={"random_placement": True})
        async for u in stream:
            kinds.append(u.kind)
            if u.kind == "round_closed":
                assert u.data["early"] is True  # long before the 60 s deadline
                break
    guest = await game.guest.view(game.game_id)
    assert guest.round == 1 and guest.salvo.fleet
    if lease_s > 10:
        assert not guest.autopilot_played and "disconnected" not in kinds, kinds
    else:
        assert guest.autopilot_played, "past the agent's lease the autopilot played the guest's round"
        assert "disconnected" in kinds and kinds.index("disconnected") < kinds.index("round_closed"), kinds
        told = json.loads(await agent_call(cluster.http_url, token, "get_view"))["autopilot_played_for_you"]
        assert [(t["round"], t["source"], "salvo" in t) for t in told] == [(0, "autopilot", True)], told
