"""Traces cross the Ray call: a shard call continues its caller's trace down to the journal write."""

from __future__ import annotations

import secrets
from typing import Any

from opentelemetry import trace

from services import tracing
from services.cluster import RedisProcess
from services.shard import GameShard


async def test_a_shard_call_continues_the_callers_trace(redis_server: RedisProcess, spans: Any) -> None:
    shard = GameShard("shard-trace", redis_server.url, prefix=f"tr{secrets.token_hex(4)}:")
    spans.clear()
    with trace.get_tracer("test").start_as_current_span("client call") as parent:
        parent_carrier = tracing.carrier()
    assert "traceparent" in parent_carrier
    spec = {"kind": "salvo", "config": {"players": 2}, "nickname": "ann", "secret_hash": "h0", "public": False,
            "deadline_s": 30, "code": "TRACE1"}
    replies = await shard.call_many([("create_game", ("gt", spec), parent_carrier),
                                     ("list_games", (), {})])
    assert "ok" in replies[0] and "ok" in replies[1]
    by_name = {s.name: s for s in spans.get_finished_spans()}
    call, write = by_name["shard.create_game"], by_name["journal.write"]
    trace_id = parent.get_span_context().trace_id
    assert call.context.trace_id == trace_id and call.parent.span_id == parent.get_span_context().span_id
    assert write.context.trace_id == trace_id and write.parent.span_id == call.context.span_id
    assert write.attributes["op"] == "create"
    # a call without a carrier starts a trace of its own
    assert by_name["shard.list_games"].context.trace_id != trace_id
    await shard.core.flush()  # (its pending writes: none may run on a closed store)
    await shard.core.stop()
    await shard.core.store.close()


def test_tracing_is_off_unless_the_standard_variable_turns_it_on(monkeypatch: Any) -> None:
    for value in ("none", "", "zipkin-typo"):
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", value)
        assert tracing.setup("archipelago-test") is False
    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    assert tracing.setup("archipelago-test") is False
