"""OpenTelemetry tracing of a request's path: a door of the gateway -> the hop to the shard -> journal / engine.

Off unless ``OTEL_TRACES_EXPORTER`` says otherwise (the standard variable): ``console`` prints spans,
``otlp`` sends them over OTLP/HTTP (protobuf) to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
``http://localhost:4318``; ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS`` and the
exporter's other standard variables apply). ``OTEL_SERVICE_NAME`` overrides the service names
``archipelago-gateway`` and ``archipelago-shard``. Each process exports its own spans: the gateway's,
and each Ray shard actor's from its worker process.

The spans: a SERVER span per call of every door — gRPC (:func:`grpc_interceptors`), the JSON door and its
WebSocket Watch, each MCP tool call, the admin door (:func:`server_span`); a CLIENT span per shard call
the gateway sends (:func:`hop_span`: its time in the batcher's queue and on the stream, the batch's size),
whose context crosses the hop as a W3C ``traceparent`` carrier carried with the call (:func:`carrier` in
the gateway, :func:`span_from` in the shard); a root span per deadline the shard's timer fires
(:func:`root_span`). A call that fails has status ERROR, described by its error code alone (the error
table's, :func:`failed`) — never the refusal's words, which may name what a player sent.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

log = logging.getLogger(__name__)

tracer = trace.get_tracer("archipelago")

#: the span attribute naming a failed call's error code (the error table's: bounded)
ERROR_CODE = "archipelago.error.code"
#: the hop span's attribute: how many calls left in the batch this one went in
BATCH_SIZE = "archipelago.hop.batch_size"


def setup(service_name: str) -> bool:
    """Install a tracer provider as the OTEL_* variables say; False when tracing stays off."""
    kind = os.environ.get("OTEL_TRACES_EXPORTER", "none").strip().lower()
    if kind in ("", "none"):
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    exporter: SpanExporter
    if kind == "console":
        exporter = ConsoleSpanExporter()
    elif kind == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("OTEL_TRACES_EXPORTER=otlp needs `pip install opentelemetry-exporter-otlp-proto-http`; "
                        "tracing stays off")
            return False
        exporter = OTLPSpanExporter()
    else:
        log.warning("unknown OTEL_TRACES_EXPORTER %r (console, otlp, none); tracing stays off", kind)
        return False
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return True


# ---------------------------------------------------------------------------------------------- gRPC door
_grpc_traced = False


def instrument_grpc_server() -> None:
    """Server spans for every gRPC call of servers made from now on (:func:`grpc_interceptors`)."""
    global _grpc_traced
    _grpc_traced = True


def grpc_interceptors() -> list[Any]:
    """The interceptors a grpc.aio server of the gateway takes: the tracing one once
    :func:`instrument_grpc_server` ran, else none."""
    return [_aio_server_interceptor()] if _grpc_traced else []


def _aio_server_interceptor() -> Any:
    """OpenTelemetry's grpc.aio server interceptor, with its streaming calls fixed.

    Its stream wrapper is an async generator that makes its span current across its ``yield``s: when a
    client closes a stream while the server is sending (the generator suspended at a ``yield``), grpc
    drops the generator unfinished and asyncio finalises it later in a task of its own, where detaching
    a context attached in the call's task fails — two ERROR "Failed to detach context" tracebacks per
    closed stream. Here the span is current only while the handler runs (each step attached and
    detached in the task that runs it), never across a ``yield``; the span ends however the stream ends."""
    from opentelemetry.instrumentation.grpc import _aio_server
    from opentelemetry.instrumentation.grpc._aio_server import _OpenTelemetryAioServicerContext

    class Interceptor(_aio_server.OpenTelemetryAioServerInterceptor):
        def _intercept_aio_server_stream(self, behavior: Any, details: Any) -> Any:
            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                metadata = {md.key: md.value for md in context.invocation_metadata() or ()}
                parent = propagate.extract(metadata)
                service, _, method = (details.method or "").lstrip("/").partition("/")
                span = self._tracer.start_span(details.method, context=parent, kind=SpanKind.SERVER, attributes={
                    "rpc.system": "grpc", "rpc.service": service, "rpc.method": method,
                    "rpc.grpc.status_code": 0})
                current = trace.set_span_in_context(span, parent)
                responses = behavior(request, _OpenTelemetryAioServicerContext(context, span))
                try:
                    while True:
                        token = otel_context.attach(current)
                        try:
                            response = await anext(responses)
                        except StopAsyncIteration:
                            return
                        except Exception as error:
                            if type(error) is not Exception:  # (a bare Exception: an abort, in the status)
                                span.record_exception(error)
                            raise
                        finally:
                            otel_context.detach(token)
                        yield response
                finally:
                    try:
                        await responses.aclose()
                    finally:
                        span.end()
            return stream

    # (a subclass of OpenTelemetry's untyped interceptor: its __init__ has no type hints)
    return Interceptor(trace.get_tracer("opentelemetry.instrumentation.grpc"))  # type: ignore[no-untyped-call]


# ---------------------------------------------------------------------------------------------- spans
def carrier() -> dict[str, str]:
    """The current trace context as a W3C carrier (empty when no span is recording)."""
    out: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:  # (injecting nothing costs ~10 µs a call)
        propagate.inject(out)
    return out


def enabled() -> bool:
    """Whether this process has a tracer provider (else every span is a no-op)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


_NO_SPAN = contextlib.nullcontext(trace.INVALID_SPAN)


def span_from(parent: Mapping[str, str] | None, name: str, **attributes: Any
              ) -> contextlib.AbstractContextManager[trace.Span]:
    """A span continuing the trace of ``parent`` (a carrier from :func:`carrier`); nothing at all
    (not even a no-op span's context switch) when this process does not trace."""
    if not parent and not enabled():
        return _NO_SPAN
    return _span_from(parent, name, **attributes)


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[trace.Span]:
    """A child span of the current one, or nothing when this process does not trace."""
    if not enabled():
        return _NO_SPAN
    return tracer.start_as_current_span(name, attributes=attributes)


def root_span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[trace.Span]:
    """A span starting a trace of its own, whatever is current (a task inherits its creator's context:
    the shard's timer loop was started inside the first call it served); nothing when not tracing."""
    if not enabled():
        return _NO_SPAN
    return tracer.start_as_current_span(name, context=otel_context.Context(), attributes=attributes)


def server_span(name: str, door: str, headers: Mapping[str, str] | None = None, **attributes: Any
                ) -> contextlib.AbstractContextManager[trace.Span]:
    """A door's SERVER span for one call (``name``: the rpc, tool or admin action — bounded, never a path
    the client chose), continuing a W3C ``traceparent`` among the request's ``headers`` if it has one;
    nothing when this process does not trace."""
    if not enabled():
        return _NO_SPAN
    parent = propagate.extract(dict(headers)) if headers is not None and "traceparent" in headers else None
    return tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER,
                                        attributes={"archipelago.door": door, **attributes},
                                        record_exception=False, set_status_on_exception=False)


def traced_endpoint(name: str, door: str, endpoint: Callable[[Any], Awaitable[Any]]
                    ) -> Callable[[Any], Awaitable[Any]]:
    """A Starlette endpoint (HTTP or WebSocket) run inside its door's :func:`server_span` ``name``. An
    HTTP answer of status 400 or more marks the span failed with the code of its error body
    (``{"error": {"code": …}}``, every door's); a WebSocket endpoint marks its failures itself
    (:func:`failed`). The endpoint itself when this process does not trace (decided per call)."""
    async def traced(conn: Any) -> Any:
        if not enabled():
            return await endpoint(conn)
        with server_span(name, door, conn.headers) as s:
            try:
                answer = await endpoint(conn)
            except Exception:  # (a bug: its words stay out of the span)
                failed("server/internal", s)
                raise
            status = getattr(answer, "status_code", 200)
            if status >= 400:
                s.set_attribute("http.response.status_code", status)
                failed(_body_code(getattr(answer, "body", b"")), s)
            return answer
    return traced


def _body_code(body: Any) -> str:
    import json

    try:
        code = json.loads(bytes(body))["error"]["code"]
    except (ValueError, TypeError, KeyError):
        return "server/internal"
    return str(code)[:40]


def hop_span(shard: str, method: str) -> contextlib.AbstractContextManager[trace.Span]:
    """The gateway's CLIENT span of one shard call, around its time queued in the batcher and on the
    stream (the shard's span is its child); the batch's size is set as the batch leaves
    (:func:`batch_left`). Nothing when no span is current (a call outside any traced request)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return _NO_SPAN
    return tracer.start_as_current_span(f"hop {method}", kind=SpanKind.CLIENT, attributes={
        "rpc.system": "archipelago-hop", "rpc.service": "shard", "rpc.method": method, "archipelago.shard": shard},
        record_exception=False, set_status_on_exception=False)  # (its caller marks a failure: :func:`failed`)


def batch_left(spans: list[trace.Span]) -> None:
    """Each span of a batch's calls (their :func:`hop_span`) learns the batch's size, and when it left."""
    for s in spans:
        if s.is_recording():
            s.set_attribute(BATCH_SIZE, len(spans))
            s.add_event("batch sent")


def failed(code: str, span_: trace.Span | None = None) -> None:
    """Mark ``span_`` (else the current span) failed: status ERROR described by the error ``code`` alone
    (the error table's, e.g. ``order/illegal``), which is also its :data:`ERROR_CODE` attribute."""
    s = span_ if span_ is not None else trace.get_current_span()
    if s.is_recording():
        s.set_attribute(ERROR_CODE, code)
        s.set_status(Status(StatusCode.ERROR, code))


def error_code(reply: Mapping[str, Any]) -> str | None:
    """The error code of a shard call's reply (``{"error": {...}}``), None when it did not fail."""
    err = reply.get("error")
    return str(err.get("code") or "server/internal") if isinstance(err, Mapping) else None


@contextlib.contextmanager
def _span_from(parent: Mapping[str, str] | None, name: str, **attributes: Any) -> Iterator[trace.Span]:
    ctx = propagate.extract(dict(parent)) if parent else None
    with tracer.start_as_current_span(name, context=ctx, kind=SpanKind.SERVER if parent else SpanKind.INTERNAL,
                                      attributes=attributes) as span:
        yield span


__all__ = ["BATCH_SIZE", "ERROR_CODE", "batch_left", "carrier", "enabled", "error_code", "failed",
           "grpc_interceptors", "hop_span", "instrument_grpc_server", "root_span", "server_span", "setup",
           "span", "span_from", "traced_endpoint"]
