"""Any exception as an error a client may see, and as the data a shard answers with.

The shard and the gateway's doors both turn what went wrong into the engine's error tree here (an outage
of a dependency is :class:`~engine.errors.Unavailable`, anything else unexpected a bare
:class:`~engine.errors.Internal`); the error travels as :meth:`engine.errors.GameError.to_dict` and is
rebuilt by :func:`engine.errors.from_dict`.
"""

from __future__ import annotations

from typing import Any

from engine.errors import GameError, Internal, Unavailable
from services.store import is_outage

OUTAGE = "the game store does not answer right now; retry in a few seconds"


def as_game_error(exc: BaseException, internal_note: str = "") -> GameError:
    """``exc`` as an error a client may see: a :class:`GameError` as it is, an outage of a dependency (Redis
    down: a state of the world, not a bug) Unavailable without its address, anything else a bare Internal
    naming only the exception's type (then ``internal_note``)."""
    if isinstance(exc, GameError):
        return exc
    if is_outage(exc):
        return Unavailable(OUTAGE)
    return Internal(f"internal error ({type(exc).__name__}){internal_note}")


def error_dict(exc: BaseException) -> dict[str, Any]:
    """A shard's answer for a failed call: the wire dict of :func:`as_game_error` with the ``reason`` (so the
    gateway rebuilds the same error) and ``type``, the class's name (``Internal``: a bug, logged)."""
    err = as_game_error(exc, "; the request may not have been applied")
    return {"type": type(err).__name__, **err.to_dict(), "reason": err.reason}


__all__ = ["OUTAGE", "as_game_error", "error_dict"]
