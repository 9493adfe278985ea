"""Personal AI agent tokens (A90) on the message doors: created, listed and revoked with the player's
secret; a token acts as its player and only as that player; a revoked token is refused at once and a
stream opened with it ends. Every test runs once per door (gRPC, JSON + WebSocket)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import pytest

from archipelago.v1 import game_pb2
from client.base import BaseClient
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, new_game, placement, rpc_error

pytestmark = pytest.mark.e2e

Connect = Callable[[], BaseClient]


@pytest.fixture
def connect(cluster: Cluster, door: str) -> Connect:
    return lambda: cluster.client(door)


async def test_a90_a_token_acts_as_its_player(connect: Connect) -> None:
    game = await new_game(connect)
    made = await game.guest.create_agent_token(game.game_id, "my laptop")
    assert made.token.startswith("agt_") and made.token_id and made.label == "my laptop"
    assert made.mcp_url.endswith("/mcp")
    agent = game.guest.with_secret(made.token)
    mine, theirs = await game.guest.view(game.game_id), await agent.view(game.game_id)
    assert theirs.you == mine.you == 1
    await agent.submit(game.game_id, theirs.version, salvo=placement(1))
    await agent.chat(game.game_id, "hello from seat 1")
    host_view = await game.host.view(game.game_id)
    guest = next(p for p in host_view.players if p.seat == 1)
    assert guest.submitted and guest.nickname == "guest"  # nothing says "agent"
    history = [u async for u in _history(game.host, game.game_id)]
    chat = next(u for u in history if u.kind == "chat")
    assert chat.seat == 1 and chat.chat.nickname == "guest" and chat.chat.text == "hello from seat 1"
    who = await agent.rejoin()
    assert (who.game_id, who.seat, who.nickname) == (game.game_id, 1, "guest")


async def _history(client: BaseClient, game_id: str) -> AsyncIterator[game_pb2.Update]:
    """Every update the client has so far (its stream from the start, up to its view's seq)."""
    view = await client.view(game_id)
    async with asyncio.timeout(WAIT_S), contextlib.aclosing(client.watch(game_id, 0)) as stream:
        async for u in stream:
            yield u
            if u.seq >= view.seq:
                return


async def test_a90_only_the_players_secret_manages_tokens(connect: Connect) -> None:
    game = await new_game(connect)
    made = await game.guest.create_agent_token(game.game_id)
    agent = game.guest.with_secret(made.token)
    for call in (agent.create_agent_token(game.game_id), agent.list_agent_tokens(game.game_id),
                 agent.revoke_agent_token(game.game_id, made.token_id)):
        err = await rpc_error(call)
        assert (err.status, err.field, err.rule) == ("PERMISSION_DENIED", "authorization", "A90")
    listed = await game.guest.list_agent_tokens(game.game_id)
    assert listed.max_tokens == 5, "the limit is told, so a client need not know it"
    assert [(t.token_id, t.token) for t in listed.tokens] == [(made.token_id, "")]  # never the token again
    assert not (await game.host.list_agent_tokens(game.game_id)).tokens  # the host has none


async def test_a90_a_token_only_reaches_its_own_game(connect: Connect) -> None:
    one, other = await new_game(connect), await new_game(connect)
    token = (await one.host.create_agent_token(one.game_id)).token
    err = await rpc_error(one.host.with_secret(token).view(other.game_id))
    assert (err.status, err.rule) == ("PERMISSION_DENIED", "A90")


async def test_a90_at_most_five_live_tokens(connect: Connect) -> None:
    game = await new_game(connect)
    made = [await game.host.create_agent_token(game.game_id, f"t{i}") for i in range(5)]
    err = await rpc_error(game.host.create_agent_token(game.game_id, "sixth"))
    # issue 19: not a rate (retry: true could never succeed) — revoking one is what helps
    assert (err.status, err.code, err.rule) == ("FAILED_PRECONDITION", "lobby/conflict", "A90")
    assert "revoke one" in err.message
    await game.host.revoke_agent_token(game.game_id, made[0].token_id)
    await game.host.create_agent_token(game.game_id, "sixth")  # room again
    assert len((await game.host.list_agent_tokens(game.game_id)).tokens) == 5


async def test_a90_bad_labels_and_unknown_ids_change_nothing(connect: Connect) -> None:
    game = await new_game(connect)
    for label in ("x" * 41, "tab\there"):
        err = await rpc_error(game.host.create_agent_token(game.game_id, label))
        assert (err.status, err.field, err.rule) == ("INVALID_ARGUMENT", "label", "A90")
    err = await rpc_error(game.host.revoke_agent_token(game.game_id, "nope"))
    assert (err.status, err.field) == ("NOT_FOUND", "token_id")
    assert not (await game.host.list_agent_tokens(game.game_id)).tokens


async def test_a90_revoked_token_is_refused_at_once_and_its_stream_ends(connect: Connect) -> None:
    game = await new_game(connect)
    made = await game.host.create_agent_token(game.game_id)
    agent = game.host.with_secret(made.token)
    view = await agent.view(game.game_id)
    got: list[game_pb2.Update] = []
    first = asyncio.Event()

    async def follow() -> None:
        async with contextlib.aclosing(agent.watch(game.game_id, view.seq - 1)) as stream:
            async for u in stream:
                got.append(u)
                first.set()

    task = asyncio.get_running_loop().create_task(follow())
    async with asyncio.timeout(WAIT_S):
        await first.wait()  # the stream is open
        await game.host.revoke_agent_token(game.game_id, made.token_id)
        with pytest.raises(Exception) as ended:
            await task
    assert getattr(ended.value, "status", "") == "UNAUTHENTICATED", ended.value
    err = await rpc_error(agent.view(game.game_id))
    assert (err.status, err.rule) == ("UNAUTHENTICATED", "A90")
    await game.host.view(game.game_id)  # the player's own secret still works
