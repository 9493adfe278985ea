"""The web client's routes: the page (one HTML shell for every client path), its static files and the
rule tables it draws from (made from the engine, so the client never repeats a rule's numbers).

Client paths: ``/`` (home), ``/join/{code}`` (an invite link: home with the code filled in; a
non-browser gets a line of text saying how to join), ``/game/{game_id}`` (lobby, game, game over),
``/rejoin`` (a personal rejoin link: the secret is in the URL's fragment, which browsers never send);
the community pages (issue 26): ``/watch`` (public games being played), ``/watch/{game_id}`` (a
spectator's screen), ``/replay/{game_id}`` (a finished game's replay), ``/leaderboard``, ``/profile``
(the player's own profile; ``/profile#<secret>``, a profile link, carries its secret in the fragment
as the rejoin link does) and ``/players/{handle}`` (a profile's public page) — the same page, whose
router draws them (an unknown game or handle is told by the page, from the API's answer);
``/rules/{game}`` is a game's rules page (:mod:`gateway.rules_page`); ``/sw.js`` is the notifications'
service worker (at the root: its scope is the whole site; issue 23).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gateway import rules_page

STATIC = Path(__file__).with_name("static")
GAME_ID = re.compile(r"[0-9a-f]{16}")  # the gateway's game ids
log = logging.getLogger(__name__)
# The shell may change with every release; its modules are revalidated (ETag) on each load.
_NO_STORE = {"cache-control": "no-cache"}


def archipelago_rules() -> dict[str, Any]:
    """The tables and limits of the Archipelago rules the client draws and greys out by (A10, A36–A40, A52,
    A53, A70–A74), read from the engine."""
    from engine.archipelago import economy, orders, standing
    from engine.archipelago.units import RESOURCES, STARTING_UNITS, TARGETS, UNIT_TYPES, WARSHIPS

    units = [{"id": t.id, "name": t.name, "rank": t.rank, "domain": t.domain, "strength": t.strength, "move": t.move,
              "sight": t.sight, "cost": t.cost, "capacity": t.capacity, "limit": t.limit,
              "buildable": t.buildable, "warship": t.id in WARSHIPS}
             for t in UNIT_TYPES.values()]
    return {"resources": list(RESOURCES), "units": units, "starting_units": list(STARTING_UNITS),
            "targets": {str(k): v for k, v in TARGETS.items()}, "bank_rate": economy.BANK_RATE,
            "port_rate": economy.PORT_RATE, "max_offers": economy.MAX_OFFERS, "max_chat": economy.MAX_CHATS,
            "max_chat_length": economy.MAX_CHAT_LEN, "outpost_cost": orders.OUTPOST_COST,
            "strike_cost": orders.STRIKE_COST, "strike_range": orders.STRIKE_RANGE,
            "reveal_range": orders.REVEAL_RANGE, "max_build_queue": standing.MAX_QUEUE,
            "min_waypoints": standing.MIN_WAYPOINTS, "max_waypoints": standing.MAX_WAYPOINTS,
            "max_bank_rules": standing.MAX_BANK_RULES}


def routes(game_known: Callable[[str], Awaitable[bool]] | None = None) -> list[Any]:
    """The client's routes; ``game_known(game_id)`` (None: every id is) makes ``/game/{id}`` of a game
    that does not exist (or no longer) answer 404 — the same page, whose router then says "no such
    game" rather than "no seat on this device" (it asks with a HEAD: the page holds no seat to ask with)."""
    async def page(_request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_NO_STORE)

    async def game_page(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        status = 200
        if game_known is not None:
            try:
                known = GAME_ID.fullmatch(game_id) is not None and await game_known(game_id)
                status = 200 if known else 404
            except Exception as exc:  # the store is down: the page says what it can (never "no such game")
                log.warning("game page %s: cannot tell whether the game exists: %r", game_id[:32], exc)
        return FileResponse(STATIC / "index.html", status_code=status, headers=_NO_STORE)

    async def join(request: Request) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return FileResponse(STATIC / "index.html", headers=_NO_STORE)
        code = request.path_params["code"]
        return PlainTextResponse(f"Game code {code}: open this link in a browser, join with `archipelago bot "
                                 f"{code}`, any gRPC client, or POST /v1/Lobby/JoinGame "
                                 f"{{\"code\": \"{code}\", \"nickname\": …}}.\n")

    async def service_worker(_request: Request) -> Response:
        # the notifications' service worker (issue 23): at the root, so that its scope is the whole site
        return FileResponse(STATIC / "sw.js", media_type="text/javascript", headers=_NO_STORE)

    rules = archipelago_rules()

    async def rules_json(_request: Request) -> Response:
        return JSONResponse(rules, headers={"cache-control": "max-age=3600"})

    community = [Route(path, page) for path in ("/watch", "/watch/{game_id}", "/replay/{game_id}", "/leaderboard",
                                                 "/profile", "/players/{handle:path}")]
    return [Route("/", page), Route("/game/{game_id}", game_page), Route("/rejoin", page), *community,
            Route("/join/{code}", join), Route("/client/archipelago.json", rules_json),
            Route("/sw.js", service_worker),
            *rules_page.routes(), Mount("/static", StaticFiles(directory=STATIC), name="static")]


__all__ = ["STATIC", "archipelago_rules", "routes"]
