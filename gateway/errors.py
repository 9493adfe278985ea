"""The one error table: each error code with its gRPC status, HTTP status and MCP meaning.

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
from services.store import is_outage as store_outage


@dataclass(frozen=True)
class ErrorKind:
    code: str
    grpc: grpc.StatusCode
    http: int
    retry: bool  # may the same request succeed later unchanged? (MCP agents and clients back off)
    doc: str


def _kind(cls: type[E.GameError], status: grpc.StatusCode, http: int, retry: bool = False) -> ErrorKind:
    return ErrorKind(cls.code, status, http, retry, " ".join((cls.__doc__ or "").split()))


S = grpc.StatusCode
#: error class -> its row; one row per code, every code of the engine's tree
TABLE: dict[type[E.GameError], ErrorKind] = {
    cls: _kind(cls, status, http, retry) for cls, status, http, retry in (
        (E.InvalidOrder, S.INVALID_ARGUMENT, 400, False),
        (E.TooLarge, S.INVALID_ARGUMENT, 413, False),
        (E.IllegalOrder, S.INVALID_ARGUMENT, 422, False),
        (E.KeyReused, S.INVALID_ARGUMENT, 422, False),
        (E.NotYourTurn, S.FAILED_PRECONDITION, 409, True),
        (E.NotStarted, S.FAILED_PRECONDITION, 409, True),
        (E.GameOver, S.FAILED_PRECONDITION, 409, False),
        (E.NotOver, S.FAILED_PRECONDITION, 409, True),
        (E.StaleVersion, S.ABORTED, 409, False),
        (E.RateLimited, S.RESOURCE_EXHAUSTED, 429, True),
        (E.Throttled, S.RESOURCE_EXHAUSTED, 429, True),
        (E.NotFound, S.NOT_FOUND, 404, False),
        (E.Conflict, S.FAILED_PRECONDITION, 409, False),
        (E.AlreadyExists, S.ALREADY_EXISTS, 409, False),
        (E.PermissionDenied, S.PERMISSION_DENIED, 403, False),
        (E.Unauthenticated, S.UNAUTHENTICATED, 401, False),
        (E.Unavailable, S.UNAVAILABLE, 503, True),
        (E.Internal, S.INTERNAL, 500, True),
        (E.GameError, S.INVALID_ARGUMENT, 400, False),
    )
}
BY_CODE: dict[str, type[E.GameError]] = {cls.code: cls for cls in TABLE}


def kind_of(err: E.GameError) -> ErrorKind:
    for cls in type(err).__mro__:
        if cls in TABLE:
            return TABLE[cls]
    return TABLE[E.Internal]


def from_dict(d: dict[str, Any]) -> E.GameError:
    """An error a shard returned as data, rebuilt as the engine's error class of its code."""
    cls = BY_CODE.get(str(d.get("code") or ""), E.Internal)
    reason = str(d.get("reason") or d.get("message") or "")
    return cls(reason, rule=d.get("rule") or None, field=d.get("field") or None)


def as_game_error(exc: BaseException) -> E.GameError:
    """Any exception as an error a client may see: an outage of a dependency is Unavailable (retry
    later; never its address), anything else unexpected a bare Internal."""
    if isinstance(exc, E.GameError):
        return exc
    if store_outage(exc):
        return E.Unavailable("the game store does not answer right now; retry in a few seconds")
    return E.Internal(f"internal error ({type(exc).__name__})")


def to_dict(err: E.GameError) -> dict[str, Any]:
    """The four fields every door sends, plus the status names."""
    k = kind_of(err)
    return {"code": err.code, "field": err.field or "", "rule": err.rule or "", "message": str(err),
            "status": k.grpc.name, "http_status": k.http, "retry": k.retry}


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
