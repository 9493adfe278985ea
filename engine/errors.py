"""The engine's error tree (one table in the gateway maps each code to gRPC, HTTP and MCP).

Every error names what was wrong: the ``field`` (a path into the request such as ``shots[2]`` or
``orders.u3f9.path[1]``), the ``rule`` id of the spec it breaks (``S5``, ``A24``) and a
human-readable ``reason``.  Its message reads ``"<field>: rule <rule>: <reason>"`` (a part left out
when the error has no field or no rule).  Errors are ``ValueError`` subclasses, as in python-chess.
Each class has a stable ``code`` (``order/illegal``): clients branch on codes, never on messages.
"""

from __future__ import annotations

from typing import Any

MAX_FIELD_LEN = 80
MAX_REASON_LEN = 300


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (a client may send megabytes; errors echo a little)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def format_message(field: str | None, rule: str | None, reason: str) -> str:
    parts = [p for p in (field, f"rule {rule}" if rule else None) if p]
    return ": ".join([*parts, reason])


class GameError(ValueError):
    """Base of every error a game engine (or a game actor) raises on a client's request."""

    code = "game/error"

    def __init__(self, message: str, *, rule: str | None = None, field: str | None = None) -> None:
        self.reason = clip(message, MAX_REASON_LEN)
        self.rule = rule
        self.field = clip(field, MAX_FIELD_LEN) if field else field
        super().__init__(format_message(self.field, self.rule, self.reason))

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": str(self), "rule": self.rule, "field": self.field,
                "reason": self.reason}


class InvalidOrder(GameError):
    """The payload is malformed: a missing or unknown field, a wrong type, a value of no valid form (a
    square name that is not one, such as 'Z'; an addressee that is no other player's seat)."""

    code = "order/invalid"


class TooLarge(InvalidOrder):
    """The request (a body, a message, a frame) is over the size limit every door sets (256 KiB):
    field ``body``; nothing of it was read."""

    code = "request/too_large"


class IllegalOrder(GameError):
    """The payload is well formed but breaks a rule of the game (a square off the grid such as 'K1',
    shooting a square twice, ...)."""

    code = "order/illegal"


class NotYourTurn(GameError):
    """The player may not act now (another player's turn)."""

    code = "order/not_your_turn"


class NotStarted(NotYourTurn):
    """The game is still in its lobby: nothing can be played yet."""

    code = "game/not_started"


class GameOver(NotYourTurn):
    """The game has ended: no more orders or actions that change it."""

    code = "game/over"


class NotOver(GameError):
    """The game is still being played: a finished game's replay or export waits for its end."""

    code = "game/not_over"


class StaleVersion(GameError):
    """The submission names a state version older than the current round's."""

    code = "action/stale_state_id"


class KeyReused(GameError):
    """An idempotency key (or request id) sent again with a different request."""

    code = "request/key_reused"


class RateLimited(GameError):
    """A per-round limit was reached (offers, chat messages, resubmissions)."""

    code = "action/rate_limited"


class Throttled(GameError):
    """Too many requests from this client address (lobby calls, failed authentications, open lobbies):
    wait the seconds the message names, then retry."""

    code = "client/throttled"


class NotFound(GameError):
    """An unknown game, code, player, unit, agent token or rpc, or an offer id no offer ever had."""

    code = "lookup/not_found"


class Conflict(GameError):
    """A request that conflicts with the game's state (game full, already started)."""

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


class Unavailable(GameError):
    """A part of the cluster (a shard, Redis) does not answer now; the request may be retried."""

    code = "server/unavailable"


class Internal(GameError):
    """A bug on the server's side; the request changed nothing the client was told about."""

    code = "server/internal"
