"""The one table mapping the error tree to gRPC status codes and HTTP status codes."""

from __future__ import annotations

from typing import Any

import grpc

from engine import errors as E

#: error class name -> (gRPC status, HTTP status)
STATUS: dict[str, tuple[grpc.StatusCode, int]] = {
    "InvalidOrder": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "IllegalOrder": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "NotYourTurn": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "StaleVersion": (grpc.StatusCode.ABORTED, 409),
    "RateLimited": (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    "NotFound": (grpc.StatusCode.NOT_FOUND, 404),
    "Conflict": (grpc.StatusCode.FAILED_PRECONDITION, 409),
    "AlreadyExists": (grpc.StatusCode.ALREADY_EXISTS, 409),
    "PermissionDenied": (grpc.StatusCode.PERMISSION_DENIED, 403),
    "Unauthenticated": (grpc.StatusCode.UNAUTHENTICATED, 401),
    "GameError": (grpc.StatusCode.INVALID_ARGUMENT, 400),
    "Internal": (grpc.StatusCode.INTERNAL, 500),
    "Unavailable": (grpc.StatusCode.UNAVAILABLE, 503),
}

_CLASSES: dict[str, type[E.GameError]] = {
    name: cls for name, cls in vars(E).items() if isinstance(cls, type) and issubclass(cls, E.GameError)
}


class RemoteError(Exception):
    """An error a shard returned as data: keeps its class name, code, field, rule and message."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.type = str(d.get("type") or "Internal")
        self.code = str(d.get("code") or "internal")
        self.field = d.get("field")
        self.rule = d.get("rule")
        self.message = str(d.get("message") or "")
        super().__init__(self.message)

    @classmethod
    def from_game_error(cls, exc: E.GameError) -> RemoteError:
        return cls({"type": type(exc).__name__, **exc.to_dict()})

    def status(self) -> tuple[grpc.StatusCode, int]:
        return STATUS.get(self.type, STATUS["Internal"])

    def to_game_error(self) -> E.GameError:
        cls = _CLASSES.get(self.type, E.GameError)
        return cls(self.message)

    def trailers(self) -> tuple[tuple[str, str], ...]:
        return (("error-code", self.code), ("error-field", self.field or ""), ("error-rule", self.rule or ""))

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "field": self.field, "rule": self.rule}
