"""Personal AI agent tokens (A90): a player makes, lists and revokes the tokens its agent plays with
through the MCP door (:mod:`gateway.mcp_door`).

A token (``agt_…``) is shown once, at its creation; only its hash is stored. A creation retried with the
same idempotency key answers the same token — *derived* from the key and a nonce kept for
``AGENT_KEY_TTL_S`` (:meth:`gateway.auth.Secrets.derive`), never stored — and a revoked token never comes
back. Revoking ends every stream open with the token, on every gateway, and its agent's presence.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.errors import Conflict, InvalidOrder, KeyReused, NotFound, PermissionDenied
from gateway.auth import AGENT_PREFIX, Caller, hash_secret

if TYPE_CHECKING:
    from gateway.api import PlayerAPI

MAX_AGENT_TOKENS = 5  # live agent tokens per player
MAX_LABEL = 40
AGENT_KEY_TTL_S = 3600  # a CreateAgentToken idempotency key gives the same token this long
MAX_AGENT_KEY = 64  # characters of that key, printable (as the other doors' idempotency keys)


class AgentTokens:
    """The agent tokens of a player API's players."""

    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def _owner(self, secret: str, game_id: str) -> Caller:
        who = await self.api.auth(secret, game_id)
        if who.agent:
            raise PermissionDenied("only the player's own secret manages agent tokens", field="authorization",
                                   rule="A90")
        return who

    def _token_info(self, token_id: str, rec: Mapping[str, Any], token: str = "") -> dict[str, Any]:
        return {"token_id": token_id, "label": rec["label"], "created_unix_ms": int(rec["created_ms"]),
                "token": token, "mcp_url": f"{self.api.config.public_url}/mcp"}

    async def create(self, secret: str, game_id: str, label: str = "", key: str = "") -> dict[str, Any]:
        """A new agent token for the caller's seat; the token string is in this answer only.

        ``key`` (optional idempotency key, <= 64 printable characters, scoped to the player): within
        ``AGENT_KEY_TTL_S`` of the first call, the same key with the same label answers the same token
        again — *derived* (HMAC with the gateways' shared key, from the key and a nonce kept for that
        time), never stored — and makes no second one; with another label it is
        ``request/key_reused``; once that token is revoked, the key is ``request/key_reused`` too (a
        revoked token never comes back)."""
        store = self.api.store
        who = await self._owner(secret, game_id)
        if len(label) > MAX_LABEL or not label.isprintable():
            raise InvalidOrder(f"a label is 0–{MAX_LABEL} printable characters", field="label", rule="A90")
        if len(key) > MAX_AGENT_KEY or not key.isprintable():
            raise InvalidOrder(f"an idempotency key is at most {MAX_AGENT_KEY} printable characters",
                               field="idempotency_key", rule="A16")
        if key:
            token, token_id, created = await self._keyed(who, key)
            live = (await store.agent_tokens(who.game_id, who.seat)).get(token_id)
            if live is not None:
                if live["label"] != label:
                    raise KeyReused("this idempotency key made a token with another label", field="idempotency_key",
                                    rule="A16")
                return self._token_info(token_id, live, token)  # a retry: the same token, nothing new
            if await store.agent_token_revoked(who.game_id, who.seat, token_id):
                raise KeyReused("the token this idempotency key made was revoked: use a new key",
                                field="idempotency_key", rule="A16")
        else:
            token, token_id, created = AGENT_PREFIX + secrets.token_urlsafe(24), secrets.token_hex(6), 0
        created = created or int(time.time() * 1000)
        if not await store.add_agent_token(who.game_id, who.seat, token_id, hash_secret(token), label, created,
                                           MAX_AGENT_TOKENS):
            # (not a rate: waiting never helps, revoking does — retry false)
            raise Conflict(f"at most {MAX_AGENT_TOKENS} live agent tokens per player: revoke one first",
                           rule="A90")
        return self._token_info(token_id, {"label": label, "created_ms": created}, token)

    async def _keyed(self, who: Caller, key: str) -> tuple[str, str, int]:
        """(token, token id, created ms) of an idempotency key of ``who``: the first call keeps a random
        nonce and the creation time for ``AGENT_KEY_TTL_S`` (SET NX: concurrent retries agree), and
        the token is derived from the key and that nonce."""
        mine = json.dumps({"nonce": secrets.token_hex(16), "created_ms": int(time.time() * 1000)})
        first = json.loads(await self.api.store.agent_key(who.game_id, who.seat, hash_secret(key)[:32], mine,
                                                          AGENT_KEY_TTL_S))
        seed = await self.api.secrets.derive(f"agent\0{who.game_id}\0{who.seat}\0{first['nonce']}", key)
        return AGENT_PREFIX + seed[:40], seed[40:52], int(first["created_ms"])

    async def tokens(self, secret: str, game_id: str) -> list[dict[str, Any]]:
        who = await self._owner(secret, game_id)
        tokens = await self.api.store.agent_tokens(who.game_id, who.seat)
        return sorted((self._token_info(tid, rec) for tid, rec in tokens.items()),
                      key=lambda t: (t["created_unix_ms"], t["token_id"]))

    async def revoke(self, secret: str, game_id: str, token_id: str) -> None:
        """Revoke a token: every later call with it is refused, and streams open with it end."""
        store = self.api.store
        who = await self._owner(secret, game_id)
        tokens = await store.agent_tokens(who.game_id, who.seat)
        rec = tokens.get(token_id)
        if rec is None or not await store.revoke_agent_token(who.game_id, who.seat, token_id):
            raise NotFound("no live agent token with this id", field="token_id", rule="A90")
        # a retried CreateAgentToken with the key that made it must not bring it back (create)
        await store.mark_agent_token_revoked(who.game_id, who.seat, token_id, AGENT_KEY_TTL_S)
        await store.publish(game_id, {"revoked": rec["hash"]})  # every gateway ends its streams
        self.api.presence.end_lease(rec["hash"])


__all__ = ["AGENT_KEY_TTL_S", "MAX_AGENT_KEY", "MAX_AGENT_TOKENS", "MAX_LABEL", "AgentTokens"]
