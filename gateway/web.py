"""The JSON + WebSocket door, on the gateway's HTTP port (Starlette).

- ``POST /v1/{Service}/{Rpc}`` (``/v1/Lobby/CreateGame``, ``/v1/Game/SubmitOrders``, …): the body
  is the rpc's request message in protobuf's JSON mapping, the answer its response message (field
  names as in the .proto; int64 values as JSON strings, enums by name; every field present).
  The player secret travels as ``Authorization: Bearer <secret>``.
- ``GET /v1/Game/Watch`` (and ``/v1/Community/Spectate``, a spectator's) upgraded to a WebSocket:
  the client's first text frame is
  ``{"authorization": "Bearer <secret>", "game_id": "…", "after_seq": "0"}`` (a WatchRequest plus the
  secret, which never goes in the URL: URLs land in logs), within ``HELLO_TIMEOUT_S``
  (``ARCHIPELAGO_WS_HELLO_S``, 10 s; else an error frame and close 4408 "hello timeout"); the
  server then sends one text frame per Update (JSON mapping) and closes with code 1000 after
  ``game_over``. A frame over 256 KiB: uvicorn closes with 1009 and a reason naming the limit.
- Errors: the HTTP status of :mod:`gateway.errors`' table and a body
  ``{"error": {"code", "field", "rule", "message", "status", "http_status", "retry"}}`` (a body
  over 256 KiB: 413; ``client/throttled``: a ``Retry-After`` header, whole seconds); on the
  WebSocket, that body as a text frame, then a close with code 4000 + the HTTP status (4401 …).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import Message
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from engine.errors import GameError, InvalidOrder, NotFound, Unauthenticated
from gateway import convert, errors, rpc
from gateway.api import DOOR, MAX_REQUEST_BYTES, PlayerAPI, bearer
from gateway.limits import TooLarge
from gateway.metrics import LATENCY, UNKNOWN, count
from gateway.metrics import known as known_methods
from services import tracing

MAX_BODY = MAX_REQUEST_BYTES
#: seconds a WebSocket may take to send its first (hello) frame before it is closed (4408)
HELLO_TIMEOUT_S = float(os.environ.get("ARCHIPELAGO_WS_HELLO_S") or 10.0)
HELLO_CLOSE = 4408


def to_json(msg: Message) -> dict[str, Any]:
    """A message in protobuf's JSON mapping, proto field names, every field present (:func:`convert.to_json`)."""
    return convert.to_json(msg)


def parse(raw: bytes | str | dict[str, Any], cls: type[Message]) -> Message:
    """A request message from JSON; InvalidOrder naming the snake_case field path (:func:`convert.parse_json`)."""
    return convert.parse_json(raw, cls)


def error_response(exc: BaseException, method: str) -> Response:
    err = errors.as_game_error(exc)
    body = errors.to_dict(err)
    count("http", method, err)
    return JSONResponse({"error": body}, status_code=body["http_status"], headers=errors.http_headers(err))


async def _body(request: Request) -> bytes:
    """The request's body, refused (without reading on) once it passes MAX_BODY."""
    too_big = TooLarge(MAX_BODY, "a request body")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def _unary(r: rpc.Rpc) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        api: PlayerAPI = request.app.state.api
        start = time.perf_counter()
        try:
            body = await _body(request)
            req = parse(body, r.request)
            result = await r.handler(api, req, bearer(request.headers.get("authorization")))
        except Exception as exc:
            LATENCY.labels("http", r.name).observe(time.perf_counter() - start)
            return error_response(exc, r.name)
        LATENCY.labels("http", r.name).observe(time.perf_counter() - start)
        count("http", r.name)
        return JSONResponse(to_json(result))
    return tracing.traced_endpoint(f"POST /v1/{r.service}/{r.name}", "http", endpoint)


def _stream(r: rpc.Stream) -> Callable[[WebSocket], Awaitable[None]]:
    async def endpoint(ws: WebSocket) -> None:
        api: PlayerAPI = ws.app.state.api
        await ws.accept()
        try:
            try:
                async with asyncio.timeout(HELLO_TIMEOUT_S):
                    message = await ws.receive()
            except TimeoutError:
                late = Unauthenticated(f"the first frame (authorization, game_id, after_seq) did not come within "
                                       f"{HELLO_TIMEOUT_S:g} s", field="authorization", rule="A3")
                body = errors.to_dict(late) | {"http_status": HELLO_CLOSE - 4000}
                count("http", r.name, late)
                tracing.failed(late.code)
                with contextlib.suppress(Exception):
                    await ws.send_text(json.dumps({"error": body}))
                    await ws.close(code=HELLO_CLOSE, reason="hello timeout")
                return
            if message["type"] == "websocket.disconnect":
                return
            first = message.get("text")
            if first is None:  # a binary frame (receive_text would fail on it with a KeyError)
                raise InvalidOrder("the first frame is a text frame holding a JSON object", field="body")
            if len(first) > MAX_BODY:  # (uvicorn closes on a longer one first: 1009, see uvicorn_config)
                raise TooLarge(MAX_BODY, "the first frame")
            try:
                hello = json.loads(first)
            except (ValueError, RecursionError):  # RecursionError: nested too deep
                raise InvalidOrder("the first frame is a JSON object", field="body") from None
            if not isinstance(hello, dict):
                raise InvalidOrder("the first frame is a JSON object", field="body")
            authorization = hello.pop("authorization", None)
            if authorization is not None and not isinstance(authorization, str):
                raise InvalidOrder("authorization is a string: \"Bearer <secret>\"", field="authorization", rule="A3")
            secret = bearer(authorization) or bearer(ws.headers.get("authorization"))
            req = parse(hello, r.request)
            DOOR.set("http")
            updates = await r.handler(api, req, secret)
        except WebSocketDisconnect:
            return
        except Exception as exc:
            err = errors.as_game_error(exc)
            body = errors.to_dict(err)
            count("http", r.name, err)
            tracing.failed(err.code)
            with contextlib.suppress(Exception):
                await ws.send_text(json.dumps({"error": body}))
                await ws.close(code=4000 + body["http_status"], reason=body["code"])
            return
        count("http", r.name)

        async def pump() -> None:
            async with contextlib.aclosing(updates):
                async for update in updates:
                    await ws.send_text(json.dumps(to_json(update)))

        async def listen() -> None:  # a client that leaves is only seen by reading
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass

        loop = asyncio.get_running_loop()
        sending, reading = loop.create_task(pump()), loop.create_task(listen())
        try:
            await asyncio.wait({sending, reading}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (sending, reading):
                t.cancel()
            await asyncio.gather(sending, reading, return_exceptions=True)
        if sending.done() and not sending.cancelled():
            failure = sending.exception()
            if failure is not None:
                tracing.failed(errors.as_game_error(failure).code)
            with contextlib.suppress(Exception):
                if failure is None:
                    await ws.close(code=1000)  # after game_over
                elif isinstance(failure, GameError):
                    body = errors.to_dict(failure)
                    await ws.send_text(json.dumps({"error": body}))
                    await ws.close(code=4000 + body["http_status"], reason=body["code"])
    return tracing.traced_endpoint(f"WebSocket /v1/{r.service}/{r.name}", "http", endpoint)


async def _elsewhere(request: Request) -> Response:
    """Every other request under /v1/ gets the JSON error body too: an unknown rpc is 404
    ``lookup/not_found``; a known one with another method than POST is 405 (``Allow: POST``) with
    the ``order/invalid`` body; Watch over plain HTTP is 400 (it is a WebSocket)."""
    path = request.url.path
    service, _, name = path[len("/v1/"):].partition("/")
    known = rpc.UNARY.get(name)
    streaming = rpc.STREAMS.get(name)
    if streaming is not None and streaming.service == service:
        err: GameError = InvalidOrder(f"{name} is a WebSocket at this path: open one (GET with Upgrade)",
                                      field="method")
    elif known is not None and known.service == service:
        wrong = InvalidOrder(f"{service}/{name} takes POST, not {request.method}", field="method")
        count("http", name, wrong)
        body = errors.to_dict(wrong)
        body["http_status"] = 405
        return JSONResponse({"error": body}, status_code=405, headers={"allow": "POST"})
    else:
        err = NotFound(f"no rpc {path[len('/v1/'):][:60]!r}: see the README's list", field="rpc")
    count("http", name if streaming is not None and streaming.service == service else UNKNOWN, err)  # (never the path)
    body = errors.to_dict(err)
    return JSONResponse({"error": body}, status_code=body["http_status"])


def routes() -> list[Any]:
    """The door's routes; they use the player API in ``app.state.api`` (set by the app's lifespan)."""
    known_methods("http", rpc.UNARY)
    known_methods("http", tuple(rpc.STREAMS), timed=False)
    out: list[Any] = [Route(f"/v1/{r.service}/{r.name}", _unary(r), methods=["POST"])
                      for r in rpc.UNARY.values()]
    out += [WebSocketRoute(f"/v1/{r.service}/{r.name}", _stream(r)) for r in rpc.STREAMS.values()]
    out.append(Route("/v1/{rest:path}", _elsewhere,
                     methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    return out
