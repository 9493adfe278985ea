"""Traces: a SERVER span for every door's call (gRPC, JSON, WebSocket Watch, MCP tool, admin), the gateway's
CLIENT span of each shard call (the hop, with its batch's size) whose context travels with the call, the
shard's spans under it, deadline closes as one trace, failed calls marked by their error code alone, no
context-detach tracebacks on a closed stream, and the OTLP exporter sending to an OTLP/HTTP receiver.

The shard runs in this process in most of these (a Ray actor's spans go to its own process's exporter),
reached through the router's batch exactly as over the stream (``send_batch`` replaced): the game is created
through it, so the Ray shards never hold it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import grpc
import httpx2 as httpx
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from client.errors import ApiError
from client.web_client import WebClient
from tests.conftest import Cluster
from tests.e2e.helpers import FLEET, WAIT_S, Game, connected, new_game, placement, shots

pytestmark = pytest.mark.e2e

ERROR_CODE = "archipelago.error.code"


@contextlib.asynccontextmanager
async def local_shard(cluster: Cluster) -> AsyncIterator[Any]:
    """Every shard call of the gateway goes to a GameShard in this process (its spans are this process's)."""
    from services.shard import GameShard

    local = GameShard("shard-local", cluster.redis_url, prefix=cluster.prefix)

    async def in_process(_shard: str, calls: list[Any]) -> list[dict[str, Any]]:
        return await local.call_many(calls)

    router = cluster.api.router
    original = router.send_batch
    setattr(router, "send_batch", in_process)  # noqa: B010
    try:
        yield local
    finally:
        # the gateway's calls go back to the cluster's shards first: a call after the store closed
        # would open a connection nobody closes
        setattr(router, "send_batch", original)  # noqa: B010
        await local.core.flush()  # (its pending writes: none may run on a closed store)
        await local.core.stop()
        await local.core.store.close()


def trace_of(spans: Any, root: Any) -> dict[str, list[Any]]:
    """The finished spans of ``root``'s trace, by name."""
    by_name: dict[str, list[Any]] = {}
    for s in spans.get_finished_spans():
        if s.context.trace_id == root.context.trace_id:
            by_name.setdefault(s.name, []).append(s)
    return by_name


def one_span(spans: Any, name: str) -> Any:
    found = [s for s in spans.get_finished_spans() if s.name == name]
    assert len(found) == 1, (name, sorted({s.name for s in spans.get_finished_spans()}))
    return found[0]


def assert_failed(span: Any, code: str) -> None:
    """ERROR status, described by the error code alone (never the refusal's words), the code an attribute."""
    assert span.status.status_code.name == "ERROR", (span.name, span.status)
    assert span.status.description == code and span.attributes[ERROR_CODE] == code, (span.name, span.status)


async def wait_finished(spans: Any, name: str) -> Any:
    async with asyncio.timeout(WAIT_S):
        while not [s for s in spans.get_finished_spans() if s.name == name]:
            await asyncio.sleep(0.01)  # (the span ends when its call's task finishes)
    return one_span(spans, name)


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
    server = one_span(spans, "/archipelago.v1.Game/GetView")
    assert server.kind.name == "SERVER"
    hops = trace_of(spans, server)["hop view"]
    assert all(h.kind.name == "CLIENT" and h.parent.span_id == server.context.span_id for h in hops)
    trace_id = format(server.context.trace_id, "032x")
    # each call carries its hop span as the parent of the shard's span
    assert sent and {c["traceparent"].split("-")[2] for c in sent} == {format(h.context.span_id, "016x") for h in hops}
    assert all(c["traceparent"].split("-")[1] == trace_id for c in sent)


async def _mcp_submit(cluster: Cluster, game: Game, round_: int) -> None:
    token = (await game.guest.create_agent_token(game.game_id, "tracing")).token
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, McpClient(streamable_http_client(f"{cluster.http_url}/mcp", http_client=http)) as agent:
        orders = {"placement": [{"ship": s, "bow": b, "vertical": False} for s, b in FLEET[1]]}
        result = await agent.call_tool("submit_orders", {"round": round_, "orders": orders})
        assert not result.is_error, result.content


SERVER_SPANS = {"grpc": "/archipelago.v1.Game/SubmitOrders", "web": "POST /v1/Game/SubmitOrders",
                "mcp": "mcp submit_orders"}


@pytest.mark.parametrize("door", ["grpc", "web", "mcp"])
async def test_one_order_through_each_door_is_one_trace_from_its_server_span_over_the_hop_to_the_journal_and_engine(
        cluster: Cluster, spans: Any, door: str) -> None:
    """The round's last order (it closes the round early, A17), through the gRPC, JSON or MCP door: the
    door's SERVER span, the gateway's CLIENT span of the shard call (its batch's size), the shard's span of
    the call, both journal writes (the submission, the close) and the engine's resolution, one trace."""
    async with local_shard(cluster):
        game = await new_game(lambda: cluster.client("grpc"), deadline=600)
        async with connected(game.host, game.game_id), connected(game.guest, game.game_id):
            view = await game.host.view(game.game_id)
            await game.host.submit(game.game_id, view.version, salvo=placement(0))
            spans.clear()
            if door == "grpc":
                await game.guest.submit(game.game_id, view.version, salvo=placement(1))
            elif door == "web":
                async with WebClient(cluster.http_url, game.guest.secret) as web:
                    await web.submit(game.game_id, view.version, salvo=placement(1))
            else:
                await _mcp_submit(cluster, game, view.round)
            assert (await game.host.view(game.game_id)).round == view.round + 1, "the order closed the round"
    server = one_span(spans, SERVER_SPANS[door])
    assert server.kind.name == "SERVER" and server.status.status_code.name == "UNSET"
    ours = trace_of(spans, server)
    (hop,) = [h for h in ours["hop submit"] if h.parent.span_id == server.context.span_id]
    assert hop.kind.name == "CLIENT" and hop.attributes["archipelago.hop.batch_size"] >= 1
    assert [e.name for e in hop.events] == ["batch sent"]
    (call,) = ours["shard.submit"]
    assert call.kind.name == "SERVER" and call.parent.span_id == hop.context.span_id, "the shard continues the hop"
    writes = {w.attributes["op"]: w for w in ours["journal.write"]}
    assert set(writes) == {"submit", "close"} and all(w.parent.span_id == call.context.span_id
                                                      for w in writes.values())
    (resolve,) = ours["engine.resolve"]
    assert resolve.parent.span_id == call.context.span_id and resolve.attributes["round"] == view.round
    assert writes["submit"].attributes["game"] == game.game_id


async def test_a_deadline_close_is_one_trace_under_the_shards_deadline_span(
        cluster: Cluster, spans: Any) -> None:
    """Nobody submits in time: the shard's timer closes the round. Its root span (no parent: not the call
    that started the timer loop), the close's journal write and the engine's resolution are one trace."""
    async with local_shard(cluster):
        game = await new_game(lambda: cluster.client("grpc"), deadline=1)
        view = await game.host.view(game.game_id)
        spans.clear()
        async with asyncio.timeout(WAIT_S):
            while (await game.host.view(game.game_id)).round == view.round:
                await asyncio.sleep(0.05)  # (the deadline passes; its timer closes the round)
    fired = [s for s in spans.get_finished_spans()
             if s.name == "shard.deadline" and s.attributes["archipelago.deadline.passed"]]
    (root,) = [s for s in fired if s.attributes["game"] == game.game_id]
    assert root.parent is None and root.attributes["shard"] == "shard-local"
    ours = trace_of(spans, root)
    (close,) = [w for w in ours["journal.write"] if w.attributes["op"] == "close"]
    (resolve,) = ours["engine.resolve"]
    assert close.parent.span_id == root.context.span_id and resolve.parent.span_id == root.context.span_id
    assert resolve.attributes["round"] == view.round and set(ours) == {"shard.deadline", "journal.write",
                                                                       "engine.resolve"}


async def test_refused_calls_mark_their_spans_failed_with_the_error_code_alone(
        cluster: Cluster, spans: Any) -> None:
    """A rule refusal on the JSON door (the door's span, the hop and the shard's span: order/invalid), a
    made-up secret on gRPC and on the WebSocket Watch (auth/unauthenticated): status ERROR described by
    the code, never the refusal's words (they may name what the player sent)."""
    async with local_shard(cluster):
        game = await new_game(lambda: cluster.client("grpc"), deadline=600)
        view = await game.host.view(game.game_id)
        spans.clear()
        async with WebClient(cluster.http_url, game.host.secret) as web:
            with pytest.raises(ApiError) as refused:  # (the engine's refusal: S3, no shots in the placement round)
                await web.submit(game.game_id, view.version, salvo=shots(["A5"]))
        assert (refused.value.code, refused.value.rule) == ("order/invalid", "S3"), refused.value
        server = one_span(spans, "POST /v1/Game/SubmitOrders")
        assert_failed(server, "order/invalid")
        assert server.attributes["http.response.status_code"] == 400
        ours = trace_of(spans, server)
        (hop,), (call,) = ours["hop submit"], ours["shard.submit"]
        assert_failed(hop, "order/invalid")
        assert_failed(call, "order/invalid")

        stranger = cluster.client("grpc", "s3cret-nobody-has-0123456789")
        with pytest.raises(ApiError):
            await stranger.view(game.game_id)
        grpc_span = one_span(spans, "/archipelago.v1.Game/GetView")
        assert_failed(grpc_span, "auth/unauthenticated")
        assert grpc_span.attributes["rpc.grpc.status_code"] == grpc.StatusCode.UNAUTHENTICATED.value[0]

        async with WebClient(cluster.http_url, "s3cret-nobody-has-0123456789") as web_stranger:
            with pytest.raises(ApiError):
                async for _ in web_stranger.watch(game.game_id, 0):
                    pass
        assert_failed(await wait_finished(spans, "WebSocket /v1/Game/Watch"), "auth/unauthenticated")


async def test_the_admin_door_traces_each_action_and_its_shard_calls(cluster: Cluster, spans: Any) -> None:
    """An operator's call is a SERVER span named by its action (never the path), the parent of its shard
    call's hop span; a refused token marks it failed."""
    from starlette.applications import Starlette

    from gateway import admin

    game = await new_game(lambda: cluster.client("grpc"))
    token = "t" * 32
    app = Starlette(routes=admin.routes(lambda: cluster.api, token))
    spans.clear()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway.test") as http:
        ok = await http.get(f"/admin/games/{game.game_id}", headers={"authorization": f"Bearer {token}"})
        refused = await http.get("/admin/shards", headers={"authorization": "Bearer wrong"})
    assert ok.status_code == 200 and refused.status_code == 401
    server = one_span(spans, "admin game")
    assert server.kind.name == "SERVER" and server.attributes["archipelago.door"] == "admin"
    (hop,) = trace_of(spans, server)["hop inspect"]
    assert hop.kind.name == "CLIENT" and hop.parent.span_id == server.context.span_id
    assert_failed(one_span(spans, "admin shards"), "auth/unauthenticated")


async def test_a_closed_grpc_watch_ends_its_server_span_without_a_context_detach_error(
        cluster: Cluster, spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A Watch the client closes mid-stream: its server span ends, and OpenTelemetry logs no "Failed to
    detach context"."""
    game = await new_game(lambda: cluster.client("grpc"))
    spans.clear()
    with caplog.at_level(logging.ERROR, logger="opentelemetry.context"):
        async with connected(game.host, game.game_id):
            pass  # (its first update arrived: the stream is open; leaving cancels it)
        watch = await wait_finished(spans, "/archipelago.v1.Game/Watch")
    assert watch.kind.name == "SERVER"
    detach = [r for r in caplog.records if "detach" in r.getMessage().lower()]
    assert not detach, [r.getMessage() for r in detach]


async def test_a_stream_closed_while_the_server_sends_logs_no_detach_traceback(
        spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The cause of the "Failed to detach context" tracebacks: a client that closes a stream while the server
    is blocked sending (the handler's generator suspended at a ``yield``, as a Watch is when an update goes
    out). grpc drops the generator unfinished; asyncio finalises it in another task. OpenTelemetry's own
    wrapper then detached there a context attached in the call's task (two tracebacks per stream); the
    gateway's (services.tracing) attaches only while the handler runs, and the span still ends."""
    from services import tracing

    async def flood(_request: bytes, _context: Any) -> AsyncIterator[bytes]:
        while True:
            yield b"x" * 100_000  # (the client reads one: the server blocks on flow control)

    server = grpc.aio.server(interceptors=tracing.grpc_interceptors())
    method = grpc.unary_stream_rpc_method_handler(flood, request_deserializer=bytes, response_serializer=bytes)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.Flood", {"Flood": method}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    spans.clear()
    try:
        with caplog.at_level(logging.ERROR, logger="opentelemetry.context"):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = channel.unary_stream("/t.Flood/Flood", request_serializer=bytes,
                                            response_deserializer=bytes)(b"")
                assert len(await call.read()) == 100_000
                call.cancel()
            span = await wait_finished(spans, "/t.Flood/Flood")
    finally:
        await server.stop(0)
    assert span.kind.name == "SERVER" and span.end_time is not None
    detach = [r for r in caplog.records if "detach" in r.getMessage().lower()]
    assert not detach, [r.getMessage() for r in detach]


class OtlpReceiver(BaseHTTPRequestHandler):
    """A tiny OTLP/HTTP receiver: each POST /v1/traces body decoded as an ExportTraceServiceRequest."""

    got: ClassVar[list[Any]] = []
    arrived: ClassVar[threading.Event] = threading.Event()

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        body = self.rfile.read(int(self.headers["content-length"]))
        request = ExportTraceServiceRequest.FromString(body)
        type(self).got.append((self.path, self.headers.get("content-type"), request))
        type(self).arrived.set()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@contextlib.contextmanager
def otlp_receiver() -> Iterator[tuple[str, type[OtlpReceiver]]]:
    handler = type("Receiver", (OtlpReceiver,), {"got": [], "arrived": threading.Event()})
    httpd = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


SPAN_SCRIPT = """
from opentelemetry import trace
from services import tracing
assert tracing.setup("archipelago-gateway")
with tracing.server_span("POST /v1/Game/GetView", "http") as span:
    tracing.failed("lookup/not_found")
trace.get_tracer_provider().shutdown()  # (flushes the batch)
"""


def test_otlp_exporter_sends_a_processes_spans_to_the_otlp_endpoint() -> None:
    """OTEL_TRACES_EXPORTER=otlp with OTEL_EXPORTER_OTLP_ENDPOINT: the installed exporter posts the spans
    as OTLP/HTTP protobuf to <endpoint>/v1/traces, with the service's name."""
    with otlp_receiver() as (endpoint, got):
        env = {**os.environ, "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
               "OTEL_SERVICE_NAME": "gateway-under-test"}
        run = subprocess.run([sys.executable, "-c", SPAN_SCRIPT], env=env, capture_output=True, text=True,
                             timeout=60, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
        assert run.returncode == 0, run.stderr
        assert got.arrived.wait(WAIT_S), "nothing reached the OTLP receiver"
    ((path, content_type, request),) = got.got
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    (resource_spans,) = request.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}["service.name"]
    sent = [s for scope in resource_spans.scope_spans for s in scope.spans]
    assert service == "gateway-under-test" and [s.name for s in sent] == ["POST /v1/Game/GetView"]
    (span,) = sent
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert span.kind == span.SPAN_KIND_SERVER and span.status.code == span.status.STATUS_CODE_ERROR
    assert attributes["archipelago.door"] == "http" and attributes[ERROR_CODE] == "lookup/not_found"
