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

    def said(self) -> str:
        """The error as a command prints it: the server's reason first, then the field and rule it
        names (when the reason does not already) and its code — "no game with code ZZZZZZ
        (game/not_found)"; a gateway that cannot be reached says so."""
        if self.status == "UNAVAILABLE" and not self.code:
            return f"cannot reach the gateway ({self.message or self.status}); is it running, and is --server right?"
        text = self.message or self.status
        named = []  # (the engine's reasons read "<field>: rule <rule>: <reason>")
        if self.field and not text.startswith(f"{self.field}:") and f"field {self.field}" not in text:
            named.append(f"field {self.field}")
        if self.rule and f"rule {self.rule}" not in text:
            named.append(f"rule {self.rule}")
        return f"{text} ({', '.join([*named, self.code or self.status])})"
