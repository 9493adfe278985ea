"""Who a request is (A3, A90): a player's secret, or an agent token its player made, as a :class:`Caller`.

A secret maps to (game, seat) through its SHA-256 in Redis (cached here, bounded: a secret never changes
seat); it is never stored. An agent token (``agt_…``) is looked up on every call, never cached, so that a
revoked one is refused at once. Creation and joining carry a client-chosen ``request_id`` from which the
game id and the secret are *derived* (:meth:`Secrets.derive`: HMAC with the gateways' shared key), so a
retried create or join — after a lost reply — returns the same game, seat and secret without the secret
being stored.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from engine.errors import InvalidOrder, PermissionDenied, Unauthenticated
from gateway.cache import CACHE_ENTRIES, LRU
from gateway.limits import Limiter
from services.store import Store

AGENT_PREFIX = "agt_"  # agent tokens (A90) look like "agt_…"; player secrets never start so
MIN_REQUEST_ID, MAX_REQUEST_ID = 16, 64


@dataclass(frozen=True)
class Caller:
    game_id: str
    seat: int
    # The hash of the agent token the call came with (A90), "" for the player's own secret.
    agent: str = ""


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def bearer(value: str | None) -> str:
    """The secret in an ``authorization`` value ``"Bearer <secret>"`` ("" when absent). The scheme is
    case-insensitive (RFC 7235: ``bearer``, ``BEARER``) and may be followed by several spaces."""
    scheme, _, rest = (value or "").strip().partition(" ")
    if scheme.lower() == "bearer":
        return rest.strip()
    return ""


def check_request_id(request_id: str) -> None:
    """InvalidOrder unless ``request_id`` is empty or 16–64 printable characters."""
    if request_id and not (MIN_REQUEST_ID <= len(request_id) <= MAX_REQUEST_ID and request_id.isprintable()):
        raise InvalidOrder(f"a request id is {MIN_REQUEST_ID}–{MAX_REQUEST_ID} printable characters, "
                           "random and kept secret", field="request_id")


class Secrets:
    """The callers of secrets and agent tokens, and the values derived from request ids."""

    def __init__(self, store: Store, limiter: Limiter) -> None:
        self.store = store
        self.limiter = limiter
        self.cache: LRU[str, Caller] = LRU(CACHE_ENTRIES)  # secret hash -> its caller (secrets never change seat)
        self._key: bytes | None = None

    async def caller(self, secret: str, game_id: str | None = None) -> Caller:
        """The (game, seat) of a player secret or agent token; Unauthenticated / PermissionDenied otherwise."""
        if not secret:
            raise Unauthenticated("missing player secret (send 'authorization: Bearer <secret>')",
                                  field="authorization", rule="A3")
        self.limiter.before_auth()
        h = hash_secret(secret)
        if secret.startswith(AGENT_PREFIX):  # never cached: a revoked token is refused at once
            token_seat = await self.store.seat_of_agent_token(h)
            if token_seat is None:
                self.limiter.auth_failed()
                raise Unauthenticated("unknown or revoked agent token", field="authorization", rule="A90")
            agent = Caller(*token_seat, agent=h)
            if game_id is not None and game_id != agent.game_id:
                raise PermissionDenied("this token belongs to a player of another game", field="game_id",
                                       rule="A90")
            return agent
        who = self.cache.get(h)
        if who is None:
            found = await self.store.seat_of_secret(h)
            if found is None:
                self.limiter.auth_failed()
                raise Unauthenticated("unknown player secret", field="authorization", rule="A3")
            who = Caller(*found)
            self.cache.put(h, who)
        if game_id is not None and game_id != who.game_id:
            raise PermissionDenied("this secret belongs to a player of another game", field="game_id", rule="A3")
        return who

    async def derive(self, label: str, request_id: str) -> str:
        """HMAC-SHA256 (hex) of ``label`` and ``request_id`` with the gateways' shared key: the same on
        every gateway, so a retry derives the same game id, secret or token."""
        if self._key is None:
            self._key = await self.store.server_key()
        return hmac.new(self._key, f"{label}\0{request_id}".encode(), hashlib.sha256).hexdigest()


__all__ = ["AGENT_PREFIX", "MAX_REQUEST_ID", "MIN_REQUEST_ID", "Caller", "Secrets", "bearer", "check_request_id",
           "hash_secret"]
