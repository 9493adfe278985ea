"""Immediate operations during planning (A52 bank, A53 trades and chat).

Each function checks its request and returns a NEW state (the input is never mutated); errors are
:class:`engine.errors.GameError` subclasses naming the field and rule.  Bank, offer and accept
raise :class:`engine.errors.GameOver` (A67) once the game is over; chat stays allowed.  Offers and
per-round counters are cleared when the round resolves.  ``GAME.act`` wraps these functions (the
action envelope, field names inside the action, and the events with their audiences).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.actions import MAX_CHAT_LEN, MAX_CHATS, check_chat
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES
from engine.errors import GameError, GameOver, IllegalOrder, InvalidOrder, NotFound, RateLimited

BANK_RATE = 4
PORT_RATE = 2
MAX_OFFERS = 3

__all__ = ["BANK_RATE", "MAX_CHATS", "MAX_CHAT_LEN", "MAX_OFFERS", "PORT_RATE", "accept_offer", "bank",
           "bank_rate", "chat", "offer"]


def _seat(state: State, player: Any, fld: str = "player") -> int:
    if isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < state.players:
        raise InvalidOrder(f"must be a seat number 0..{state.players - 1}", field=fld)
    return player


def _open(state: State, player: Any) -> int:
    p = _seat(state, player)
    if state.outcome is not None:
        raise GameOver("the game is over", rule="A67")
    return p


def _resource(v: Any, fld: str) -> str:
    if v not in RESOURCES:
        raise InvalidOrder(f"must be one of {', '.join(RESOURCES)}", field=fld)
    return str(v)


def bank_rate(state: State, player: int, give: str) -> int:
    """A52: 2 when the player controls a port of ``give``, else 4."""
    for t, r in state.board.ports.items():
        if r == give and state.control.get(t) == player:
            return PORT_RATE
    return BANK_RATE


def bank(state: State, player: int, give: str, get: str, times: int = 1) -> State:
    """A52: give ``rate * times`` of ``give`` for ``times`` of ``get``."""
    p = _open(state, player)
    give = _resource(give, "give")
    get = _resource(get, "get")
    if give == get:
        raise InvalidOrder("give and get must differ", field="get")
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise InvalidOrder("must be a positive integer", field="times")
    rate = bank_rate(state, p, give)
    need = rate * times
    if state.pstates[p].stock[give] < need:
        raise IllegalOrder(f"the bank wants {need} {give} ({rate} for 1), you have "
                           f"{state.pstates[p].stock[give]}", rule="A52", field="give")
    new = state.light_clone()
    new.pstates[p].stock[give] -= need
    new.pstates[p].stock[get] += times
    return new


def _goods(v: Any, fld: str) -> dict[str, int]:
    if not isinstance(v, Mapping) or not v:
        raise InvalidOrder("goods are a non-empty {resource: count} object", field=fld)
    out: dict[str, int] = {}
    for r, n in v.items():
        _resource(r, f"{fld}.{r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidOrder("counts are positive integers", field=f"{fld}.{r}")
        out[str(r)] = n
    return {r: out[r] for r in RESOURCES if r in out}


def _holds(state: State, p: int, goods: Mapping[str, int]) -> bool:
    stock = state.pstates[p].stock
    return all(stock[r] >= n for r, n in goods.items())


def offer(state: State, player: int, to: int | None, give: Mapping[str, int],
          get: Mapping[str, int]) -> State:
    """A53: offer ``give`` for ``get`` to one player (``to``) or to all (``None``)."""
    p = _open(state, player)
    if to is not None:
        _seat(state, to, "to")
        if to == p:  # as a chat message to oneself (engine.actions.check_chat): a malformed addressee
            raise InvalidOrder("an offer goes to another player (leave out to for everyone)", rule="A53",
                               field="to")
    g = _goods(give, "give")
    w = _goods(get, "get")
    if state.pstates[p].offers_made >= MAX_OFFERS:
        raise RateLimited(f"at most {MAX_OFFERS} offers per round", rule="A53", field="offer")
    if not _holds(state, p, g):
        raise IllegalOrder("you do not hold what you offer", rule="A53", field="give")
    new = state.light_clone()
    new.offer_counter += 1
    o: dict[str, Any] = {"id": f"o{new.offer_counter}", "from": p, "give": g, "get": w}
    if to is not None:
        o["to"] = to
    new.offers.append(o)
    new.pstates[p].offers_made += 1
    return new


def _missing(state: State, offer_id: str) -> GameError:
    """The error for an offer id that is not pending (A53): taken, withdrawn, declined, expired with its
    round or never made are one answer, ``lookup/not_found`` — telling them apart would tell a player
    about offers between others. ("Offer no longer valid" is A53's answer when the goods fell short.)"""
    if not isinstance(offer_id, str):
        return InvalidOrder("an offer id is a string such as 'o3'", rule="A53", field="offer")
    return NotFound(f"no pending offer {offer_id[:20]!r} (taken, withdrawn, declined, expired with its round, "
                    "or never made); the pending ones are in your view's offers", rule="A53", field="offer")


def accept_offer(state: State, player: int, offer_id: str) -> State:
    """A53: execute an offer at once if both sides still hold the goods."""
    p = _open(state, player)
    idx = next((i for i, x in enumerate(state.offers) if x["id"] == offer_id), None)
    if idx is None:
        raise _missing(state, offer_id)
    o = state.offers[idx]
    if o["from"] == p or ("to" in o and o["to"] != p):
        raise IllegalOrder("this offer is not addressed to you", rule="A53", field="offer")
    if not _holds(state, o["from"], o["give"]) or not _holds(state, p, o["get"]):
        raise IllegalOrder("offer no longer valid", rule="A53", field="offer")
    new = state.light_clone()
    a, b = new.pstates[o["from"]].stock, new.pstates[p].stock
    for r, n in o["give"].items():
        a[r] -= n
        b[r] += n
    for r, n in o["get"].items():
        b[r] -= n
        a[r] += n
    del new.offers[idx]
    return new


def _offer_index(state: State, offer_id: Any) -> int:
    if not isinstance(offer_id, str):
        raise InvalidOrder("an offer id is a string such as 'o3'", rule="A53", field="offer")
    idx = next((i for i, x in enumerate(state.offers) if x["id"] == offer_id), None)
    if idx is None:
        raise _missing(state, offer_id)
    return idx


def decline_offer(state: State, player: int, offer_id: str) -> State:
    """A53: the player an offer was made to alone declines it; it is removed."""
    p = _open(state, player)
    idx = _offer_index(state, offer_id)
    if state.offers[idx].get("to") != p:
        raise IllegalOrder("only an offer made to you alone can be declined", rule="A53", field="offer")
    new = state.light_clone()
    del new.offers[idx]
    return new


def withdraw_offer(state: State, player: int, offer_id: str) -> State:
    """A53: the maker of an offer withdraws it; it is removed (its per-round count stays spent)."""
    p = _open(state, player)
    idx = _offer_index(state, offer_id)
    if state.offers[idx]["from"] != p:
        raise IllegalOrder("only the maker of an offer can withdraw it", rule="A53", field="offer")
    new = state.light_clone()
    del new.offers[idx]
    return new


def chat(state: State, player: int, text: str, to: int | None = None) -> State:
    """A53: a chat message to another player or all (:func:`engine.actions.check_chat`); at most
    :data:`engine.actions.MAX_CHATS` per player per round (refused naming ``chat``, as in every
    game); allowed also once the game is over."""
    p = _seat(state, player)
    text, to = check_chat(text, to, p, state.players, where="")
    if state.pstates[p].chats >= MAX_CHATS:
        raise RateLimited(f"at most {MAX_CHATS} chat messages per round", rule="A53", field="chat")
    new = state.light_clone()
    m: dict[str, Any] = {"from": p, "text": text, "round": state.round}
    if to is not None:
        m["to"] = to
    new.chat.append(m)
    new.pstates[p].chats += 1
    return new
