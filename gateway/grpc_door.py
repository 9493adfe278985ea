"""The gRPC door: Lobby, Game and Community over grpc.aio, plus health and reflection (v1 and v1alpha).

Generic: every unary rpc of :data:`gateway.rpc.UNARY` becomes a method handler that takes the
secret from the ``authorization`` metadata, calls the rpc's handler and renders errors as a status
plus trailing metadata (``error-code``, ``error-field``, ``error-rule``, ``retry-after`` when a wait
is known).  A request over the door's size limit gets that answer too (INVALID_ARGUMENT,
``request/too_large``, field ``body``).  Watch streams the player API's updates.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.message import Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

from archipelago.v1 import community_pb2, game_pb2, lobby_pb2
from engine.errors import InvalidOrder, NotFound
from gateway import errors, rpc
from gateway.api import DOOR, MAX_REQUEST_BYTES, PlayerAPI, bearer
from gateway.limits import PEER, TooLarge, grpc_peer
from gateway.metrics import LATENCY, OK, REQUESTS, UNKNOWN, count, known
from services import tracing

__all__ = ["LATENCY", "REQUESTS", "build_server", "set_serving"]  # (REQUESTS, LATENCY: gateway.metrics')

SERVICES = {
    "Lobby": lobby_pb2.DESCRIPTOR.services_by_name["Lobby"],
    "Game": game_pb2.DESCRIPTOR.services_by_name["Game"],
    "Community": community_pb2.DESCRIPTOR.services_by_name["Community"],
}
SERVICE_NAMES = tuple(s.full_name for s in SERVICES.values())
MAX_PENDING_CALLS = 20_000
#: what gRPC itself accepts: above the door's own limit (MAX_REQUEST_BYTES), so that a request
#: between the two gets the door's answer (order/invalid, field body, with trailers); beyond this
#: one gRPC refuses it alone (RESOURCE_EXHAUSTED, "Received message larger than max", no trailers)
MAX_RECEIVE_BYTES = 4 * MAX_REQUEST_BYTES
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def _secret(context: grpc.aio.ServicerContext) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return bearer(value)
    return ""


class Malformed:
    """A request refused before parsing: its bytes are not a valid message, or there are too many of
    them. A deserializer that raises makes gRPC answer UNKNOWN with the parser's exception; the
    handler answers this one with the error's status and trailers instead."""

    __slots__ = ("err",)

    def __init__(self, err: InvalidOrder) -> None:
        self.err = err

    def error(self) -> InvalidOrder:
        return self.err


def deserializer(cls: type[Message]) -> Callable[[bytes], Message | Malformed]:
    def parse(raw: bytes) -> Message | Malformed:
        if len(raw) > MAX_REQUEST_BYTES:  # the door's limit, not gRPC's (that one has no trailers)
            return Malformed(TooLarge(MAX_REQUEST_BYTES, f"a {cls.DESCRIPTOR.name}"))
        try:
            return cls.FromString(raw)
        except Exception:  # DecodeError: corrupt wire format, bad UTF-8 in a string, nesting too deep
            return Malformed(InvalidOrder(f"not a valid {cls.DESCRIPTOR.name} in protobuf's wire format",
                                          field="body"))
    return parse


async def _abort(context: grpc.aio.ServicerContext, door_method: str, exc: BaseException) -> None:
    err = errors.as_game_error(exc)
    kind = errors.kind_of(err)
    count("grpc", door_method, err)
    context.set_trailing_metadata(errors.trailers(err))
    try:
        await context.abort(kind.grpc, str(err))
    finally:  # (after the tracing wrapper's own status, which would carry the refusal's words)
        tracing.failed(err.code)


async def _handled(api: PlayerAPI, r: rpc.Rpc | rpc.Stream, request: Message | Malformed,
                   context: grpc.aio.ServicerContext) -> tuple[Any, Exception | None]:
    """The rpc's handler run on ``request`` (a malformed one refused as it is), for the caller's client
    address: (its answer, None), or (None, the failure) — rendered by the caller outside any except block."""
    PEER.set(grpc_peer(context.peer() or ""))
    try:
        if isinstance(request, Malformed):
            raise request.error()
        return await r.handler(api, request, _secret(context)), None
    except Exception as exc:
        return None, exc


def _unary(api: PlayerAPI, r: rpc.Rpc) -> Callable[[Message, grpc.aio.ServicerContext], Awaitable[Message]]:
    latency, ok = LATENCY.labels("grpc", r.name), REQUESTS.labels("grpc", r.name, "OK", OK)  # once, not per call

    async def handle(request: Message, context: grpc.aio.ServicerContext) -> Message:
        start = time.perf_counter()
        result, failure = await _handled(api, r, request, context)
        latency.observe(time.perf_counter() - start)
        if failure is not None:
            # (aborted outside the except block: the abort's own exception, which tracing records,
            # chains nothing — not the refusal's words, which may name what the player sent)
            await _abort(context, r.name, failure)
            raise AssertionError("unreachable")  # abort raises
        ok.inc()
        answer: Message = result
        return answer
    return handle


def _stream(api: PlayerAPI, r: rpc.Stream) -> Callable[[Message, grpc.aio.ServicerContext], AsyncIterator[Message]]:
    async def handle(request: Message, context: grpc.aio.ServicerContext) -> AsyncIterator[Message]:
        DOOR.set("grpc")
        updates, failure = await _handled(api, r, request, context)
        if failure is not None:
            await _abort(context, r.name, failure)  # (outside the except block, as in _unary)
            return
        count("grpc", r.name)
        try:
            async with contextlib.aclosing(updates):
                async for update in updates:
                    yield update
        except Exception as exc:  # the stream ended on an error (a revoked agent token, say): render it
            failure = exc
        if failure is not None:
            await _abort(context, r.name, failure)
    return handle


class UnknownMethods(grpc.GenericRpcHandler):  # type: ignore[misc]
    """The last handler of the server: any method no other handler serves is answered UNIMPLEMENTED (as
    gRPC would) and counted as ``archipelago_requests_total{door="grpc", method="unknown"}`` (never the
    name asked). A stream-stream handler: it reads nothing, whatever kind of call the client made."""

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        return grpc.stream_stream_rpc_method_handler(self._refuse)

    @staticmethod
    async def _refuse(_requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        err = NotFound("no such method: see the .proto files (Lobby, Game, Community), health and reflection",
                       field="rpc")
        REQUESTS.labels("grpc", UNKNOWN, grpc.StatusCode.UNIMPLEMENTED.name, err.code).inc()  # (gRPC's own status)
        context.set_trailing_metadata(errors.trailers(err))
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, str(err))
        yield b""  # (unreachable: an async generator, as a stream handler is)


def handlers(api: PlayerAPI) -> list[grpc.GenericRpcHandler]:
    out: list[grpc.GenericRpcHandler] = []
    known("grpc", rpc.UNARY)
    known("grpc", tuple(rpc.STREAMS), timed=False)
    for service_name, service in SERVICES.items():
        methods: dict[str, Any] = {}
        for m in service.methods:
            response = message_factory.GetMessageClass(m.output_type)
            if m.server_streaming:
                streaming = rpc.STREAMS[m.name]
                assert streaming.service == service_name
                methods[m.name] = grpc.unary_stream_rpc_method_handler(
                    _stream(api, streaming), request_deserializer=deserializer(streaming.request),
                    response_serializer=response.SerializeToString)
            else:
                r = rpc.UNARY[m.name]
                assert r.service == service_name
                methods[m.name] = grpc.unary_unary_rpc_method_handler(
                    _unary(api, r), request_deserializer=deserializer(r.request),
                    response_serializer=response.SerializeToString)
        out.append(grpc.method_handlers_generic_handler(service.full_name, methods))
    return out


async def set_serving(health_servicer: health.aio.HealthServicer, serving: bool) -> None:
    """Every service of this server SERVING or NOT_SERVING (the overall "" one too)."""
    status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
    for name in ("", *SERVICE_NAMES):
        await health_servicer.set(name, status)


def enable_reflection(server: grpc.aio.Server, service_names: tuple[str, ...]) -> None:
    """Server reflection, both versions: ``grpc.reflection.v1alpha`` (grpcio-reflection's) and
    ``grpc.reflection.v1`` (what grpcurl and current tools ask first). grpcio-reflection has only
    v1alpha; the v1 service is the same messages under another package (identical wire format),
    so v1 is served by the same servicer with v1alpha's (de)serializers."""
    names = (*service_names, reflection.SERVICE_NAME, REFLECTION_V1)
    reflection.enable_server_reflection(names, server)
    servicer = reflection.aio.ReflectionServicer(names)
    method = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(REFLECTION_V1,
                                                                          {"ServerReflectionInfo": method}),))


async def build_server(api: PlayerAPI, address: str, health_servicer: health.aio.HealthServicer | None = None,
                       *, reuse_port: bool = False) -> tuple[grpc.aio.Server, int]:
    """A grpc.aio server with Lobby, Game, health and reflection, bound to ``address``; pass
    ``health_servicer`` to change its health later (:func:`set_serving`). ``reuse_port``: several
    gateway processes share the port (otherwise a second server on it fails to bind)."""
    server = grpc.aio.server(interceptors=tracing.grpc_interceptors(), options=[
        ("grpc.so_reuseport", int(reuse_port)),
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        # Calls arriving while the event loop is busy wait in gRPC's core until the server takes them;
        # beyond 1,000 waiting (the default) it cancels new ones (CANCELLED, before any handler runs),
        # which a burst of reconnecting Watch streams — a gateway restart — exceeds. Still bounded.
        ("grpc.server.max_pending_requests", MAX_PENDING_CALLS),
        ("grpc.server.max_pending_requests_hard_limit", 2 * MAX_PENDING_CALLS),
    ])
    server.add_generic_rpc_handlers(handlers(api))
    health_servicer = health_servicer or health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    await set_serving(health_servicer, True)
    enable_reflection(server, (*SERVICE_NAMES, health.SERVICE_NAME))
    server.add_generic_rpc_handlers((UnknownMethods(),))  # (last: asked only for the methods above do not serve)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind gRPC address {address}")
    await server.start()
    return server, port
