"""The error every client call raises, whichever door it used (gRPC or HTTP)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ApiError(Exception):
    """An error answer of the server: its gRPC status name (``INVALID_ARGUMENT``), HTTP status, stable
    ``code`` (``order/illegal``), the ``field`` and ``rule`` it names ("" when none) and the message."""

    status: str
    code: str
    field: str
    rule: str
    message: str
    http_status: int = 0

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"
