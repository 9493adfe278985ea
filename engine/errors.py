"""The engine's error tree, and the one table of how each code travels (:data:`WIRE`).

Every error names what was wrong: the ``field`` (a path into the request such as ``shots[2]`` or
``orders.u3f9.path[1]``), the ``rule`` id of the spec it breaks (``S5``, ``A24``) and a
human-readable ``reason``.  Its message reads ``"<field>: rule <rule>: <reason>"`` (a part left out
when the error has no field or no rule).  Errors are ``ValueError`` subclasses, as in python-chess.
Each class has a stable ``code`` (``order/illegal``): clients branch on codes, never on messages.

:data:`WIRE` gives each code its gRPC status *name*, HTTP status and whether a retry may help, as plain
data (no gRPC here: the clients import it too; :mod:`gateway.errors` maps the names to gRPC's codes).
An error travels as the dict of :meth:`GameError.to_dict` (what every door sends; a shard adds the
``reason``) and comes back as its class through :func:`from_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
        """The error as every door sends it: ``code``, ``field`` and ``rule`` ("" when none), ``message``,
        and its :data:`WIRE` row (``status``: the gRPC status name, ``http_status``, ``retry``)."""
        wire = wire_of(self)
        return {"code": self.code, "field": self.field or "", "rule": self.rule or "", "message": str(self),
                "status": wire.status, "http_status": wire.http, "retry": wire.retry}


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


@dataclass(frozen=True)
class Wire:
    """How an error code travels: its gRPC status name, its HTTP status, and whether the same request
    may succeed later unchanged (MCP agents and clients back off)."""

    status: str
    http: int
    retry: bool


#: error class -> its row; one row per code, every code of the tree (the README's table is made from it)
WIRE: dict[type[GameError], Wire] = {
    InvalidOrder: Wire("INVALID_ARGUMENT", 400, False),
    TooLarge: Wire("INVALID_ARGUMENT", 413, False),
    IllegalOrder: Wire("INVALID_ARGUMENT", 422, False),
    KeyReused: Wire("INVALID_ARGUMENT", 422, False),
    NotYourTurn: Wire("FAILED_PRECONDITION", 409, True),
    NotStarted: Wire("FAILED_PRECONDITION", 409, True),
    GameOver: Wire("FAILED_PRECONDITION", 409, False),
    NotOver: Wire("FAILED_PRECONDITION", 409, True),
    StaleVersion: Wire("ABORTED", 409, False),
    RateLimited: Wire("RESOURCE_EXHAUSTED", 429, True),
    Throttled: Wire("RESOURCE_EXHAUSTED", 429, True),
    NotFound: Wire("NOT_FOUND", 404, False),
    Conflict: Wire("FAILED_PRECONDITION", 409, False),
    AlreadyExists: Wire("ALREADY_EXISTS", 409, False),
    PermissionDenied: Wire("PERMISSION_DENIED", 403, False),
    Unauthenticated: Wire("UNAUTHENTICATED", 401, False),
    Unavailable: Wire("UNAVAILABLE", 503, True),
    Internal: Wire("INTERNAL", 500, True),
    GameError: Wire("INVALID_ARGUMENT", 400, False),
}
#: code -> its class
BY_CODE: dict[str, type[GameError]] = {cls.code: cls for cls in WIRE}
#: gRPC status name -> the HTTP status of its first row (its general meaning): for an error whose code
#: is not known, such as one of the transport
HTTP_OF_STATUS: dict[str, int] = {}
for _wire in WIRE.values():
    HTTP_OF_STATUS.setdefault(_wire.status, _wire.http)


def row_class(err: GameError) -> type[GameError]:
    """The class whose row of :data:`WIRE` ``err`` travels by: its own, or its nearest ancestor's that has
    one (a class of another module, such as a deck's error, subclasses one of the tree)."""
    for cls in type(err).__mro__:
        if cls in WIRE:
            return cls
    return Internal


def wire_of(err: GameError) -> Wire:
    """The row of ``err`` in :data:`WIRE`."""
    return WIRE[row_class(err)]


def from_dict(d: Mapping[str, Any]) -> GameError:
    """An error sent as data (:meth:`GameError.to_dict`, a shard's with its ``reason``) rebuilt as the class
    of its code (an unknown code: :class:`Internal`)."""
    cls = BY_CODE.get(str(d.get("code") or ""), Internal)
    reason = str(d.get("reason") or d.get("message") or "")
    return cls(reason, rule=d.get("rule") or None, field=d.get("field") or None)
