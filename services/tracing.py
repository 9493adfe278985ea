"""OpenTelemetry tracing of one order's path: gateway RPC -> Ray shard call -> journal / engine.

Off unless ``OTEL_TRACES_EXPORTER`` says otherwise (the standard variable): ``console`` prints spans,
``otlp`` sends them to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (needs the opentelemetry-exporter-otlp
package). ``OTEL_SERVICE_NAME`` overrides the service names ``archipelago-gateway`` and
``archipelago-shard``. The trace context crosses the Ray call as a W3C ``traceparent`` carrier
carried with each batched call (:func:`carrier` in the gateway, :func:`span_from` in the shard).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import propagate, trace

log = logging.getLogger(__name__)

tracer = trace.get_tracer("archipelago")


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
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("OTEL_TRACES_EXPORTER=otlp needs `pip install opentelemetry-exporter-otlp`; "
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


def instrument_grpc_server() -> None:
    """Server spans for every gRPC call (call before creating the grpc.aio server)."""
    from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorServer

    GrpcAioInstrumentorServer().instrument()


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


@contextlib.contextmanager
def _span_from(parent: Mapping[str, str] | None, name: str, **attributes: Any) -> Iterator[trace.Span]:
    ctx = propagate.extract(dict(parent)) if parent else None
    with tracer.start_as_current_span(name, context=ctx, attributes=attributes) as span:
        yield span
