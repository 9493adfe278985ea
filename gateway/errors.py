"""The error table as the doors use it: each code with its gRPC status, HTTP status and MCP meaning.

The table itself is :data:`engine.errors.WIRE` (status *names*, so that clients read it without gRPC);
here its names become ``grpc.StatusCode`` and its rows gain their documentation.

Every door reports an error with the same four fields — ``code`` (stable, from this table),
``field`` (what in the request was wrong, or empty), ``rule`` (the spec's rule id, or empty) and
``message`` (``"<field>: rule <rule>: <reason>"``, clipped) — so a client handles errors the same
way whatever it speaks: gRPC (status + trailing metadata ``error-code``/``error-field``/
``error-rule``), HTTP (status + JSON body ``{"error": {...}}``) or MCP (a tool error). When the wait
before a retry is known (``client/throttled``), gRPC adds the trailer ``retry-after`` and HTTP the
header ``Retry-After``, both in whole seconds (:func:`retry_after_s`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc

from engine import errors as E
from services.errors import as_game_error


@dataclass(frozen=True)
class ErrorKind:
    code: str
    grpc: grpc.StatusCode
    http: int
    retry: bool  # may the same request succeed later unchanged? (MCP agents and clients back off)
    doc: str


#: error class -> its row; one row per code, every code of the engine's tree (:data:`engine.errors.WIRE`
#: with its gRPC status)
TABLE: dict[type[E.GameError], ErrorKind] = {
    cls: ErrorKind(cls.code, grpc.StatusCode[wire.status], wire.http, wire.retry, " ".join((cls.__doc__ or "").split()))
    for cls, wire in E.WIRE.items()
}
BY_CODE = E.BY_CODE
from_dict = E.from_dict  # an error a shard returned as data, rebuilt as the engine's error class of its code


def kind_of(err: E.GameError) -> ErrorKind:
    return TABLE[E.row_class(err)]


def to_dict(err: E.GameError) -> dict[str, Any]:
    """The four fields every door sends, plus the status names (:meth:`engine.errors.GameError.to_dict`)."""
    return err.to_dict()


def retry_after_s(err: E.GameError) -> int | None:
    """The whole seconds to wait before the same request can succeed, when the error knows them
    (``client/throttled`` of the per-address limits: :class:`gateway.limits.Wait`), else None."""
    wait = getattr(err, "retry_after_s", None)
    return int(wait) if isinstance(wait, int) and wait > 0 else None


def trailers(err: E.GameError) -> tuple[tuple[str, str], ...]:
    """gRPC trailing metadata: ``error-code``, ``error-field``, ``error-rule``, and ``retry-after``
    (whole seconds, as HTTP's header) when the wait is known."""
    out = (("error-code", err.code), ("error-field", err.field or ""), ("error-rule", err.rule or ""))
    wait = retry_after_s(err)
    return out if wait is None else (*out, ("retry-after", str(wait)))


def http_headers(err: E.GameError) -> dict[str, str]:
    """The HTTP headers of an error answer: ``Retry-After`` (whole seconds) when the wait is known."""
    wait = retry_after_s(err)
    return {} if wait is None else {"retry-after": str(wait)}


def markdown_table() -> str:
    """The README's table of error codes, made from this one."""
    rows = ["| code | gRPC status | HTTP | retry | meaning |", "|---|---|---|---|---|"]
    for k in TABLE.values():
        if k.code == E.GameError.code:
            continue
        rows.append(f"| `{k.code}` | {k.grpc.name} | {k.http} | {'yes' if k.retry else 'no'} | {k.doc} |")
    return "\n".join(rows)


__all__ = ["BY_CODE", "TABLE", "ErrorKind", "as_game_error", "from_dict", "http_headers", "kind_of", "markdown_table",
           "retry_after_s", "to_dict", "trailers"]
