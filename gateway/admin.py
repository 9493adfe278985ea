"""The operators' door (issue 13): JSON over HTTP under ``/admin/`` on the gateway's HTTP port.

It opens with the operators' token — env ``ARCHIPELAGO_ADMIN_TOKEN``, at least ``MIN_TOKEN`` printable
ASCII characters, read once when the HTTP app is built — sent as ``Authorization: Bearer <token>`` and
compared in constant time. Player secrets and agent tokens never open it. A refused token counts
toward the per-address limit on failed authentications (:mod:`gateway.limits`), as a refused player
secret does. Without a usable token (unset, too short) every path under ``/admin`` answers 404
"admin door off". The token is never logged; the door logs each change it makes (a game ended, a
shard drained or activated) and counts it in ``archipelago_admin_actions_total{action, outcome}``.

- ``GET /admin/shards``: the shards — name, state ("active", "draining"; "unavailable" when it does
  not answer), pid, games in memory (``games``: ``live`` ones, in a lobby or running, and ``finished``
  ones kept until they are evicted idle), deadlines armed and fired.
- ``GET /admin/games?shard=NAME``: a shard's games, those in its memory and those in its deadline
  index: id, game, status, round, deadline (Unix ms) and time left, journal length, players.
- ``GET /admin/games/{game_id}``: one game's public state — its summary, status, round, deadline and
  time left, journal length, its shard, its players (seat, nickname, connected, submitted this round,
  autopilot), its outcome once over. Never anything hidden from its players.
- ``POST /admin/games/{game_id}/end`` (body ``{"reason": "…"}``, optional): end the game now — no
  winner, reason "ended" for its players (the operator's reason goes to this answer and the log
  only); journaled before the answer; ending a game already over answers its outcome again.
- ``POST /admin/shards/{name}/remove``: drain it, stop its actor, take it out of the shard set.
- ``POST /admin/shards/{name}/drain``, ``POST /admin/shards/{name}/activate``: move a shard's games
  to the other shards, and take it back into service.

Errors have the JSON door's body: ``{"error": {"code", "field", "rule", "message", "status",
"http_status", "retry"}}`` (:mod:`gateway.errors`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from prometheus_client import Counter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine.errors import GameError, InvalidOrder, NotFound, Unauthenticated
from gateway import errors
from gateway.api import PlayerAPI, bearer
from gateway.metrics import UNKNOWN, count, known
from services import tracing
from services.store import is_outage

log = logging.getLogger(__name__)

ENV = "ARCHIPELAGO_ADMIN_TOKEN"
MIN_TOKEN = 16
MAX_BODY = 4096
MAX_REASON = 200
MAX_ID = 64
PING_TIMEOUT_S = 3.0

#: the operators' actions (changes) and how each ended: done; refused (the operator's mistake: no such
#: game or shard, a bad body, draining the last active shard); failed (the cluster could not: a
#: shard or Redis unavailable, an internal error). Every series exists from 0.
ACTIONS = ("end", "drain", "activate", "remove")
OUTCOMES = ("done", "refused", "failed")
ADMIN_ACTIONS = Counter("archipelago_admin_actions", "Operators' actions through the admin door (end a game, "
                        "drain, activate or remove a shard), by how each ended: done, refused (no such game or "
                        "shard, a bad request, the last active shard) or failed (the cluster could not)",
                        ["action", "outcome"])
for _action in ACTIONS:
    for _outcome in OUTCOMES:
        ADMIN_ACTIONS.labels(_action, _outcome)

ApiGetter = Callable[[], PlayerAPI]
Handler = Callable[[Request, PlayerAPI], Awaitable[Any]]


def token_from_env(env: Mapping[str, str] | None = None) -> str:
    """The operators' token in the environment ("" when unset)."""
    env = os.environ if env is None else env
    return env.get(ENV, "").strip()


def off_reason(token: str) -> str:
    """Why the door stays shut with this token ("" when it opens)."""
    if not token:
        return f"admin door off: set {ENV} (at least {MIN_TOKEN} characters) in the gateway's environment"
    if len(token) < MIN_TOKEN:
        return f"admin door off: {ENV} is shorter than {MIN_TOKEN} characters"
    if not (token.isascii() and token.isprintable()) or " " in token:
        return f"admin door off: {ENV} must be printable ASCII without spaces"
    return ""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


def _error(exc: BaseException, request: Request) -> Response:
    if not isinstance(exc, GameError) and not is_outage(exc):
        log.error("admin %s %s failed", request.method, request.url.path, exc_info=exc)
    err = errors.as_game_error(exc)
    body = errors.to_dict(err)
    return JSONResponse({"error": body}, status_code=body["http_status"], headers=errors.http_headers(err))


def _left(deadline_ms: int | None, now_ms: int) -> int:
    return max(0, deadline_ms - now_ms) if deadline_ms else 0


def _counted(action: str, handler: Handler) -> Handler:
    """``handler``, each call counted in ``archipelago_admin_actions_total`` by how it ended."""
    async def counted(request: Request, api: PlayerAPI) -> Any:
        try:
            result = await handler(request, api)
        except Exception as exc:
            server = is_outage(exc) or not isinstance(exc, GameError) or exc.code.startswith("server/")
            ADMIN_ACTIONS.labels(action, "failed" if server else "refused").inc()
            raise
        ADMIN_ACTIONS.labels(action, "done").inc()
        return result
    counted.__name__ = handler.__name__
    return counted


class AdminDoor:
    """The door's routes over the player API that ``api()`` returns (set by the app's lifespan)."""

    def __init__(self, api: ApiGetter, token: str) -> None:
        self.api = api
        self.off = off_reason(token)
        self._digest = _digest(token)
        if token and self.off:
            log.warning("%s", self.off)  # (never the token itself)

    # ---------------------------------------------------------------- authentication
    def authorize(self, request: Request) -> PlayerAPI:
        """The player API if the request carries the operators' token; NotFound when the door is off,
        Unauthenticated (counted as a failed authentication) or Throttled otherwise."""
        if self.off:
            raise NotFound(self.off)
        api = self.api()
        given = request.headers.get("authorization")
        if not given:
            raise Unauthenticated("missing operator token: send 'Authorization: Bearer <token>' with the gateway's "
                                  f"{ENV}", field="authorization")
        api.limiter.before_auth()
        if not hmac.compare_digest(_digest(bearer(given)), self._digest):
            api.limiter.auth_failed()
            raise Unauthenticated(f"not the operator token ({ENV}); player secrets and agent tokens never open "
                                  "the admin door", field="authorization")
        return api

    def _endpoint(self, handlers: dict[str, Handler]) -> Callable[[Request], Awaitable[Response]]:
        action = next(iter(handlers.values())).__name__  # (archipelago_requests_total{door="admin", method})
        if action != UNKNOWN:
            known("admin", (action,), timed=False)

        async def endpoint(request: Request) -> Response:
            try:
                api = self.authorize(request)
                handler = handlers.get(request.method)
                if handler is None:
                    wrong = InvalidOrder(
                        f"{request.url.path[:80]} takes {', '.join(handlers) or 'nothing'}, not {request.method}",
                        field="method")
                    count("admin", action, wrong)
                    body = errors.to_dict(wrong)
                    body["http_status"] = 405
                    return JSONResponse({"error": body}, status_code=405, headers={"allow": ", ".join(handlers)})
                result = await handler(request, api)
            except Exception as exc:
                count("admin", action, exc)
                return _error(exc, request)
            count("admin", action)
            return JSONResponse(result)
        return tracing.traced_endpoint(f"admin {next(iter(handlers.values())).__name__}", "admin", endpoint)

    # ---------------------------------------------------------------- checks
    @staticmethod
    def _shard_name(api: PlayerAPI, name: str) -> str:
        if name not in api.router.names:
            raise NotFound(f"no shard {name[:40]!r}; the shards are {', '.join(api.router.names)}", field="shard")
        return name

    @staticmethod
    def _game_id(request: Request) -> str:
        game_id = str(request.path_params["game_id"])
        if not 0 < len(game_id) <= MAX_ID or not game_id.isprintable():
            raise InvalidOrder(f"a game id is 1–{MAX_ID} printable characters", field="game_id")
        return game_id

    @staticmethod
    async def _reason(request: Request) -> str:
        """The optional ``{"reason": "…"}`` body of an end."""
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise InvalidOrder(f"a request body is at most {MAX_BODY} bytes", field="body")
        if not raw.strip():
            return ""
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise InvalidOrder('the body is a JSON object: {"reason": "…"} (or nothing)', field="body") from None
        if not isinstance(body, dict) or set(body) - {"reason"}:
            raise InvalidOrder('the body is a JSON object: {"reason": "…"} (or nothing)', field="body")
        reason = body.get("reason", "")
        if not isinstance(reason, str) or len(reason) > MAX_REASON or not reason.isprintable():
            raise InvalidOrder(f"a reason is 0–{MAX_REASON} printable characters", field="reason")
        return reason

    # ---------------------------------------------------------------- endpoints
    async def shards(self, _request: Request, api: PlayerAPI) -> dict[str, Any]:
        router = api.router

        async def one(name: str) -> dict[str, Any]:
            try:
                async with asyncio.timeout(PING_TIMEOUT_S):
                    stats: dict[str, Any] = await router.handle(name).ping.remote()
            except Exception as exc:  # the operator wants to see which one does not answer
                return {"name": name, "state": "unavailable", "pid": 0, "games": 0, "live": 0, "finished": 0,
                        "armed": 0, "deadlines_fired": 0, "error": type(exc).__name__}
            draining = stats.get("draining") or router.states.get(name) == "draining"
            games, finished = int(stats.get("games", 0)), int(stats.get("finished", 0))
            return {"name": name, "state": "draining" if draining else "active",
                    "pid": stats.get("pid", 0), "games": games, "live": games - finished, "finished": finished,
                    "armed": stats.get("armed", 0), "deadlines_fired": stats.get("deadlines_fired", 0)}

        return {"shards": list(await asyncio.gather(*(one(n) for n in router.names)))}

    async def games(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        name = request.query_params.get("shard", "")
        if not name:
            raise InvalidOrder("name the shard: /admin/games?shard=NAME (see /admin/shards)", field="shard")
        self._shard_name(api, name)
        listing: dict[str, Any] = await api.router.shard(name).list_games()
        now = int(time.time() * 1000)
        indexed = {str(d["game_id"]): int(d["deadline_unix_ms"]) for d in listing["deadlines"]}
        rows = [{**g, "time_left_ms": _left(g["deadline_unix_ms"], now), "in_memory": True,
                 "indexed": g["game_id"] in indexed} for g in listing["games"]]
        loaded = {g["game_id"] for g in rows}
        others = [g for g in indexed if g not in loaded]  # known by their summary: not loaded to be listed
        for game_id, summary in zip(others, await api.store.summaries(others), strict=True):
            s = summary or {}
            rows.append({"game_id": game_id, "game": s.get("game", ""), "status": s.get("status", ""),
                         "round": None, "deadline_unix_ms": indexed[game_id],
                         "time_left_ms": _left(indexed[game_id], now), "journal_length": None,
                         "players": s.get("taken"), "autopilot": None, "seats": s.get("seats"),
                         "in_memory": False, "indexed": True})
        return {"shard": name, "games": rows, "in_memory": len(loaded), "indexed": len(indexed)}

    async def game(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        game_id = self._game_id(request)
        result: dict[str, Any] = await api.router.game(game_id).inspect(game_id)
        return result

    async def end(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        game_id = self._game_id(request)
        reason = await self._reason(request)
        result: dict[str, Any] = await api.router.game(game_id).end_game(game_id, reason)
        if result["ended"]:
            log.warning("admin: game %s ended by an operator (reason: %r)", game_id, reason)
        return {**result, "reason": reason}

    async def drain(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        name = self._shard_name(api, str(request.path_params["name"]))
        result = await api.router.drain(name)
        log.warning("admin: shard %s drained (%s game(s) moved to the active shards)", name, result.get("moved"))
        return {"shard": name, "action": "drain", "result": json.loads(json.dumps(result, default=str))}

    async def remove(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        name = self._shard_name(api, str(request.path_params["name"]))
        result = await api.router.remove(name)
        log.warning("admin: shard %s removed (%s game(s) moved to the active shards)", name, result.get("moved"))
        return {"shard": name, "action": "remove", "result": json.loads(json.dumps(result, default=str))}

    async def activate(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        name = str(request.path_params["name"])  # a new name shard-N adds a shard (the router checks it)
        result = await api.router.activate(name)
        log.warning("admin: shard %s activated", name)
        return {"shard": name, "action": "activate", "result": json.loads(json.dumps(result, default=str))}

    async def notifications(self, request: Request, api: PlayerAPI) -> dict[str, Any]:
        """The outbox's depth and the players' channels that fail or were disabled lately (newest first):
        the game, seat and channel, never a URL, address or subscription."""
        outbox = api.notify.outbox
        queued, retrying = await outbox.depth()
        rows = [{"game_id": g, "seat": seat, "channel": channel, "state": "disabled" if st.get("disabled") else
                 "failing", "failures": int(st.get("failures", 0)), "reason": str(st.get("reason", "")),
                 "last_failure_unix_ms": int(st.get("last_failure", 0))}
                for g, seat, channel, st in await outbox.failing(100)]
        return {"outbox": queued, "retrying": retrying, "max_queue": api.notify.config.max_queue,
                "email_available": api.notify.config.email_available, "failing": rows}

    async def unknown(self, request: Request, _api: PlayerAPI) -> dict[str, Any]:
        raise NotFound(f"no admin endpoint {request.url.path[:80]!r}: see the README, \"Operating it\"",
                       field="path")

    def routes(self) -> list[Route]:
        every = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
        fallback = self._endpoint(dict.fromkeys(every, self.unknown))
        return [
            Route("/admin/shards", self._endpoint({"GET": self.shards}), methods=every),
            Route("/admin/games", self._endpoint({"GET": self.games}), methods=every),
            Route("/admin/games/{game_id}", self._endpoint({"GET": self.game}), methods=every),
            Route("/admin/games/{game_id}/end", self._endpoint({"POST": _counted("end", self.end)}), methods=every),
            Route("/admin/shards/{name}/drain", self._endpoint({"POST": _counted("drain", self.drain)}),
                  methods=every),
            Route("/admin/shards/{name}/activate", self._endpoint({"POST": _counted("activate", self.activate)}),
                  methods=every),
            Route("/admin/shards/{name}/remove", self._endpoint({"POST": _counted("remove", self.remove)}),
                  methods=every),
            Route("/admin/notifications", self._endpoint({"GET": self.notifications}), methods=every),
            Route("/admin", fallback, methods=every),
            Route("/admin/{rest:path}", fallback, methods=every),
        ]


def routes(api: ApiGetter, token: str) -> list[Route]:
    """The door's routes; ``token`` is the operators' token ("" or too short: the door is off)."""
    return AdminDoor(api, token).routes()


__all__ = ["ENV", "MIN_TOKEN", "AdminDoor", "off_reason", "routes", "token_from_env"]
