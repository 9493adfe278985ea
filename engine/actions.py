"""Immediate actions shared by every game (``Game.act``): the action envelope and chat.

An action is a dict with exactly one key naming its kind, whose value is an object holding the
kind's fields (keys are the protobuf field names, snake_case)::

    {"chat": {"text": "hi", "to": 1}}          # "to" optional: everyone

:func:`parse_action` checks the envelope; :func:`check_chat` the chat fields (the same rules in
every game: 1..500 characters, not blank, ``to`` a seat other than the sender; at most
:data:`MAX_CHATS` messages per player per round, A53); :func:`chat_event` builds the event with its
audience (the two parties of a private message, everyone otherwise).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from engine.base import Event, player_seat
from engine.errors import InvalidOrder

MAX_CHATS = 10
MAX_CHAT_LEN = 500


def check_keys(value: Any, keys: Sequence[str], fld: str, what: str, noun: str = "field"
               ) -> Mapping[str, Any]:
    """``value`` if it is an object whose keys are all among ``keys``; else :class:`InvalidOrder`
    saying "``what`` must be an object" (field ``fld``, or ``what`` when ``fld`` is empty) or naming the
    unknown key (field ``<fld>.<key>``, or ``<key>`` alone when ``fld`` is empty)."""
    if not isinstance(value, Mapping):
        raise InvalidOrder(f"{what} must be an object", field=fld or what)
    for key in value:
        if key not in keys:
            raise InvalidOrder(f"unknown {noun} {str(key)[:40]!r} (expected {', '.join(keys)})",
                               field=f"{fld}.{key}" if fld else str(key))
    return value


def parse_action(action: Any, kinds: Mapping[str, Collection[str]]) -> tuple[str, dict[str, Any]]:
    """``(kind, fields)`` of an action whose kind is one of ``kinds`` (kind -> its allowed fields).

    Raises :class:`InvalidOrder` naming ``action`` (not an object, zero or several keys, an unknown
    kind), ``<kind>`` (its value is not an object) or ``<kind>.<field>`` (an unknown field)."""
    expected = ", ".join(kinds)
    if not isinstance(action, Mapping):
        raise InvalidOrder(f"an action is an object with one key naming its kind ({expected})",
                           field="action")
    if len(action) != 1:
        raise InvalidOrder(f"an action has exactly one key naming its kind ({expected}), "
                           f"not {len(action)}", field="action")
    kind, fields = next(iter(action.items()))
    if not isinstance(kind, str) or kind not in kinds:
        raise InvalidOrder(f"unknown action {str(kind)[:40]!r} (expected {expected})", field="action")
    if not isinstance(fields, Mapping):
        raise InvalidOrder(f"the {kind} action's value must be an object of its fields", field=kind)
    allowed = kinds[kind]
    for key in fields:
        if key not in allowed:
            raise InvalidOrder(f"unknown field {str(key)[:40]!r} (expected {', '.join(allowed)})",
                               field=f"{kind}.{key}"[:80])
    return kind, {str(k): v for k, v in fields.items() if v is not None}


def check_chat(text: Any, to: Any, player: int, players: int, where: str = "chat"
               ) -> tuple[str, int | None]:
    """The message text and addressee (None: everyone) of a chat message from ``player``.

    Fields are named ``<where>.text`` and ``<where>.to`` (plain ``text`` / ``to`` when ``where`` is
    empty)."""
    def fld(name: str) -> str:
        return f"{where}.{name}" if where else name

    if not isinstance(text, str):
        raise InvalidOrder(f"a message is a string of 1..{MAX_CHAT_LEN} characters", field=fld("text"))
    if not text.strip():
        raise InvalidOrder("a message may not be empty or blank", field=fld("text"))
    if len(text) > MAX_CHAT_LEN:
        raise InvalidOrder(f"a message is at most {MAX_CHAT_LEN} characters, not {len(text)}",
                           field=fld("text"))
    if not text.isprintable():
        raise InvalidOrder("a message is one line of printable text: no control characters (newlines, tabs, "
                           "escape sequences)", rule="A53", field=fld("text"))
    if to is None:
        return text, None
    seat = player_seat(to, players, fld("to"))
    if seat == player:
        raise InvalidOrder("a message goes to another player (leave out to for everyone)", rule="A53",
                           field=fld("to"))
    return text, seat


def chat_event(player: int, text: str, to: int | None) -> Event:
    """``chat`` to the sender and the addressee, or to everyone when ``to`` is None."""
    data: dict[str, Any] = {"from": player, "text": text}
    if to is None:
        return Event("chat", data, None)
    data["to"] = to
    return Event("chat", data, frozenset({player, to}))
