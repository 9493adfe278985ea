"""A game's journal entries as types: one record per op, what the game actor writes and applies and what
a replay (:mod:`services.replay`) reads.

A journal entry is a JSON object with an ``op`` and the op's fields (``services.store``: the list
``g:{game}:journal``, keys sorted). Each op is a frozen dataclass here, ``OP`` its name:

======================  ==================================================================================
:class:`Create`         the game is made (kind, config, seed, host, public, deadline, code; the host's
                        profile and handle, the speed, a quick-play lobby's settings when given)
:class:`Join`           a seat taken (its nickname, profile, handle; ``config`` when the joiner chose
                        seat options)
:class:`Start`          play begins (``fill``: autopilot seats take the empty ones; ``by`` "quick")
:class:`Submit`         a seat's orders for the round (``draft`` or done)
:class:`Standing`       a seat's standing orders replaced (A70–A74)
:class:`Act`            an immediate action (chat, bank, trades), a player's or standing orders' (A74)
:class:`Close`          a round closed: the orders every seat played (``early``: A17)
:class:`Action`         a turn or window action (``auto``: the autopilot's, M25)
:class:`Rated`          a rated game's rating changes, after its end (services/actor_ratings.py)
:class:`Expire`         a lobby nobody started in time ends
:class:`End`            an operator ended the game (the admin door)
======================  ==================================================================================

``to_entry()`` is the JSON object journaled, ``from_entry(entry)`` (or :func:`parse`) the record of one
read back: the same fields, an optional one (default None) left out when it is None, as the writers
always did. ``EXPORTED`` names the fields an export keeps (docs/replay-format.md): never a secret's hash,
a request fingerprint, an idempotency key, a game code or a profile's id — those have a blank default,
so an export's record (:mod:`services.replay`) reads as the same type. ``play(engine, state)`` is what
the three ops that change the engine's state (:data:`PLAYED`: act, close, action) do to it — the game
actor, a replay and the tests' replays all play them so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from engine.base import Event, rounds_of, turns_of


@dataclass(frozen=True, kw_only=True)
class Entry:
    """What every journal record has: its op's name, the time it was written (Unix ms)."""

    OP: ClassVar[str]
    #: the fields an export keeps (besides ``op``), in the order docs/replay-format.md lists them
    EXPORTED: ClassVar[tuple[str, ...]]
    at: int = 0

    def to_entry(self) -> dict[str, Any]:
        """The JSON object journaled: ``op`` and every field, an optional one only when set."""
        entry: dict[str, Any] = {"op": self.OP}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None or f.default is not None:
                entry[f.name] = value
        return entry

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Self:
        """The record of a journal entry of this op (KeyError for a missing required field; fields of
        no record — a newer writer's — are not read)."""
        return cls(**{f.name: entry[f.name] for f in dataclasses.fields(cls)
                      if f.name in entry or f.default is dataclasses.MISSING})


@dataclass(frozen=True, kw_only=True)
class Create(Entry):
    OP: ClassVar[str] = "create"
    EXPORTED: ClassVar[tuple[str, ...]] = ("kind", "config", "seed", "nickname", "handle", "public", "deadline_s",
                                           "speed", "at")
    kind: str
    config: dict[str, Any]
    seed: int
    nickname: str
    public: bool
    deadline_s: float
    secret_hash: str = ""  # the host's secret's hash
    code: str = ""  # the game's code
    request: str = ""  # the create's fingerprint: a retried create must match it
    profile: str | None = None  # the host's profile id, and its handle
    handle: str | None = None
    speed: str | None = None  # "fast", "slow" (None: an explicit deadline only)
    quick: dict[str, Any] | None = None  # a quick-play lobby's settings (gateway.quickplay)


@dataclass(frozen=True, kw_only=True)
class Join(Entry):
    OP: ClassVar[str] = "join"
    EXPORTED: ClassVar[tuple[str, ...]] = ("seat", "nickname", "handle", "config", "at")
    seat: int
    nickname: str
    secret_hash: str = ""
    profile: str | None = None
    handle: str | None = None
    config: dict[str, Any] | None = None  # the game's config with the joiner's seat options (its deck)


@dataclass(frozen=True, kw_only=True)
class Start(Entry):
    OP: ClassVar[str] = "start"
    EXPORTED: ClassVar[tuple[str, ...]] = ("fill", "by", "at")
    fill: bool
    by: str | None = None  # "quick": the actor started its quick-play lobby itself


@dataclass(frozen=True, kw_only=True)
class Submit(Entry):
    OP: ClassVar[str] = "submit"
    EXPORTED: ClassVar[tuple[str, ...]] = ("seat", "round", "orders", "draft", "at")
    seat: int
    round: int
    orders: dict[str, Any]
    draft: bool
    key: str = ""  # the idempotency key ("" for none)
    request: str = ""  # the request's fingerprint: a retry under the key must match it


@dataclass(frozen=True, kw_only=True)
class Standing(Entry):
    OP: ClassVar[str] = "standing"
    EXPORTED: ClassVar[tuple[str, ...]] = ("seat", "standing", "at")
    seat: int
    standing: dict[str, Any]
    key: str = ""
    request: str = ""


@dataclass(frozen=True, kw_only=True)
class Act(Entry):
    OP: ClassVar[str] = "act"
    EXPORTED: ClassVar[tuple[str, ...]] = ("seat", "action", "at")
    seat: int
    action: dict[str, Any]
    key: str = ""  # "" for an automatic trade of standing orders (A74)
    request: str = ""

    def play(self, engine: Any, state: Any) -> tuple[Any, list[Event]]:
        """The engine's ``act``: the new state and its events."""
        played: tuple[Any, list[Event]] = engine.act(state, int(self.seat), self.action)
        return played


@dataclass(frozen=True, kw_only=True)
class Close(Entry):
    OP: ClassVar[str] = "close"
    EXPORTED: ClassVar[tuple[str, ...]] = ("round", "orders", "early", "at")
    orders: dict[str, Any]  # seat (a string: a JSON key) -> the orders it played
    round: int = 0  # the round closed (a replay needs only the orders)
    early: bool = False

    def seat_orders(self) -> dict[int, Any]:
        """The orders by seat number."""
        return {int(seat): orders for seat, orders in self.orders.items()}

    def play(self, engine: Any, state: Any) -> tuple[Any, list[Event]]:
        """The engine's ``resolve`` of the round: the new state and the round's events."""
        return rounds_of(engine).resolve(state, self.seat_orders())


@dataclass(frozen=True, kw_only=True)
class Action(Entry):
    OP: ClassVar[str] = "action"
    EXPORTED: ClassVar[tuple[str, ...]] = ("seat", "action", "auto", "at")
    seat: int
    action: dict[str, Any]
    key: str = ""
    request: str = ""
    auto: bool = False  # the autopilot's (M25), or an autopilot seat's

    def play(self, engine: Any, state: Any) -> tuple[Any, list[Event]]:
        """The engine's ``apply_action``: the new state and its events."""
        return turns_of(engine).apply_action(state, int(self.seat), self.action)


@dataclass(frozen=True, kw_only=True)
class Rated(Entry):
    OP: ClassVar[str] = "rated"
    EXPORTED: ClassVar[tuple[str, ...]] = ("ratings", "at")
    ratings: list[dict[str, Any]]  # services.community_store's RatingChange dicts


@dataclass(frozen=True, kw_only=True)
class Expire(Entry):
    OP: ClassVar[str] = "expire"
    EXPORTED: ClassVar[tuple[str, ...]] = ("at",)


@dataclass(frozen=True, kw_only=True)
class End(Entry):
    OP: ClassVar[str] = "end"
    EXPORTED: ClassVar[tuple[str, ...]] = ("at",)


#: any journal record
Op = Create | Join | Start | Submit | Standing | Act | Close | Action | Rated | Expire | End
#: the records that change the engine's state (each has ``play``)
Played = Act | Close | Action
#: op name -> its record type, in the order of a game's life
OPS: dict[str, type[Op]] = {cls.OP: cls for cls in (Create, Join, Start, Submit, Standing, Act, Close, Action,
                                                     Rated, Expire, End)}
#: the ops that change the engine's state -> their record type
PLAYED_OPS: dict[str, type[Played]] = {cls.OP: cls for cls in (Act, Close, Action)}
#: the names of the ops that change the engine's state
PLAYED: frozenset[str] = frozenset(PLAYED_OPS)


def parse(entry: Mapping[str, Any]) -> Op:
    """The record of a journal entry; KeyError for an unknown op or a missing required field."""
    return OPS[entry["op"]].from_entry(entry)


def parse_played(entry: Mapping[str, Any]) -> Played:
    """The record of an entry that changes the engine's state (act, close, action); KeyError for any
    other op or a missing required field."""
    return PLAYED_OPS[entry["op"]].from_entry(entry)


__all__ = ["OPS", "PLAYED", "PLAYED_OPS", "Act", "Action", "Close", "Create", "End", "Entry", "Expire", "Join",
           "Op", "Played", "Rated", "Standing", "Start", "Submit", "parse", "parse_played"]
