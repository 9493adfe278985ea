"""The gateway's gRPC server spans, and their trace context handed to the shard call."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Cluster
from tests.e2e.helpers import new_game

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
