"""The engine's error tree (one table in the gateway maps it to gRPC and HTTP status codes).

Every error names what was wrong: the ``field`` (a path into the submitted orders such as
``shots[2]`` or ``orders.u3f9.path[1]``), the ``rule`` id of the spec it breaks (``S5``, ``A24``) and a
human-readable reason.  Errors are ``ValueError`` subclasses, as in python-chess.
"""

from __future__ import annotations

from typing import Any


class GameError(ValueError):
    """Base of every error a game engine (or a game actor) raises on a client's request."""

    code = "game/error"

    def __init__(self, message: str, *, rule: str | None = None, field: str | None = None) -> None:
        self.reason = message
        self.rule = rule
        self.field = field
        parts = []
        if field:
            parts.append(field)
        if rule:
            parts.append(f"rule {rule}")
        prefix = f"{', '.join(parts)}: " if parts else ""
        super().__init__(f"{prefix}{message}")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self), "rule": self.rule, "field": self.field}


class InvalidOrder(GameError):
    """The payload is malformed: a missing or unknown field, a bad square name, a wrong type."""

    code = "order/invalid"


class IllegalOrder(GameError):
    """The payload is well formed but breaks a rule of the game (shooting a square twice, ...)."""

    code = "order/illegal"


class NotYourTurn(GameError):
    """The player may not act now (not its turn, game not started or already over)."""

    code = "order/not_your_turn"


class StaleVersion(GameError):
    """The submission names a state version older than the current round's."""

    code = "action/stale_state_id"


class RateLimited(GameError):
    """A per-round limit was reached (offers, chat messages)."""

    code = "action/rate_limited"


class NotFound(GameError):
    """An unknown game, code, player or unit."""

    code = "lookup/not_found"


class Conflict(GameError):
    """A request that conflicts with the game's state (nickname taken, game full, already started)."""

    code = "lobby/conflict"


class PermissionDenied(GameError):
    """The caller is a player, but not one allowed to do this (not the host, not its game)."""

    code = "auth/permission_denied"


class AlreadyExists(Conflict):
    """Something that must be unique already exists (a nickname in a game)."""

    code = "lobby/already_exists"


class Unauthenticated(GameError):
    """No player secret, or one the server does not know."""

    code = "auth/unauthenticated"
