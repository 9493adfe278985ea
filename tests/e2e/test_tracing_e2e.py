"""The gateway's gRPC server spans, and their trace context handed to the shard call."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Cluster
from tests.e2e.helpers import connected, new_game, placement

pytestmark = pytest.mark.e2e


async def test_a_grpc_call_is_traced_and_its_context_travels_with_the_shard_call(
        cluster: Cluster, spans: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    game = await new_game(lambda: cluster.client("grpc"))
    router = cluster.api.router
    sent: list[dict[str, str]] = []
    real = router.send_batch

    async def spy(shard: str, calls: list[Any]) -> list[dict[str, Any]]:
        sent.extend(c for _m, _a, c in calls)
        replies: list[dict[str, Any]] = await real(shard, calls)
        return replies

    monkeypatch.setattr(router, "send_batch", spy)
    spans.clear()
    await game.host.view(game.game_id)
    server = [s for s in spans.get_finished_spans() if s.name == "/archipelago.v1.Game/GetView"]
    assert len(server) == 1 and server[0].kind.name == "SERVER"
    trace_id = format(server[0].context.trace_id, "032x")
    assert sent and all(c["traceparent"].split("-")[1] == trace_id for c in sent)


async def test_one_order_is_one_trace_from_the_grpc_call_through_the_shard_to_the_journal_and_the_engine(
        cluster: Cluster, spans: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The round's last order (it closes the round early, A17): the gRPC server span, the shard call,
    both journal writes (the submission, the close) and the engine's resolution share one trace. The
    shard runs in this process here (a Ray actor's spans go to its own exporter), reached through the
    router's batch as a Ray call would."""
    from services.shard import GameShard

    game = await new_game(lambda: cluster.client("grpc"), deadline=600)
    local = GameShard("shard-local", cluster.redis_url, prefix=cluster.prefix)

    async def in_process(_shard: str, calls: list[Any]) -> list[dict[str, Any]]:
        return await local.call_many(calls)

    monkeypatch.setattr(cluster.api.router, "send_batch", in_process)
    try:
        async with connected(game.host, game.game_id), connected(game.guest, game.game_id):
            view = await game.host.view(game.game_id)
            await game.host.submit(game.game_id, view.version, salvo=placement(0))
            spans.clear()
            ack = await game.guest.submit(game.game_id, view.version, salvo=placement(1))
            assert (await game.guest.view(game.game_id)).round == view.round + 1, "the order closed the round"
    finally:
        await local.core.stop()
    finished = spans.get_finished_spans()
    (server,) = [s for s in finished if s.name == "/archipelago.v1.Game/SubmitOrders"]
    trace_id = server.context.trace_id
    ours = [s for s in finished if s.context.trace_id == trace_id]
    by_name: dict[str, list[Any]] = {}
    for s in ours:
        by_name.setdefault(s.name, []).append(s)
    (call,) = by_name["shard.submit"]
    assert call.parent.span_id == server.context.span_id, "the shard call continues the gRPC call's span"
    writes = {w.attributes["op"]: w for w in by_name["journal.write"]}
    assert set(writes) == {"submit", "close"} and all(w.parent.span_id == call.context.span_id
                                                      for w in writes.values())
    (resolve,) = by_name["engine.resolve"]
    assert resolve.parent.span_id == call.context.span_id and resolve.attributes["round"] == view.round
    assert writes["submit"].attributes["game"] == game.game_id and ack.version > view.version
