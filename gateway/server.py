"""The gRPC gateway: Lobby and Game services over grpc.aio, plus health and reflection.

Stateless: it authenticates a player's secret (a hash looked up in Redis), routes the call to the
shard hosting the game, and converts engine dicts to protobuf messages.  It never holds a game's
state: views come from the actor, computed by the engine for that one player.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import Counter, Gauge, Histogram

from archipelago.v1 import game_pb2, game_pb2_grpc, lobby_pb2, lobby_pb2_grpc
from engine.errors import GameError, InvalidOrder
from gateway import convert
from gateway.errors import RemoteError
from gateway.pubsub import Notices
from gateway.router import ShardRouter
from services.game_actor import check_creation
from services.store import Store

log = logging.getLogger(__name__)

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # A2: no 0/O/1/I
PRESENCE_TTL_S = 20.0
HEARTBEAT_S = 5.0
SPEEDS = {lobby_pb2.SPEED_UNSPECIFIED: 60.0, lobby_pb2.SPEED_FAST: 60.0, lobby_pb2.SPEED_SLOW: 8 * 3600.0}

REQUESTS = Counter("archipelago_grpc_requests_total", "gRPC requests by method and status code",
                   ["method", "code"])
LATENCY = Histogram("archipelago_grpc_latency_seconds", "gRPC unary call latency", ["method"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))
WATCHERS = Gauge("archipelago_watch_streams", "open Watch streams on this gateway")

R = TypeVar("R")
K = TypeVar("K")
V = TypeVar("V")
CACHE_SIZE = 200_000


class LRU(Generic[K, V]):
    """A dict that forgets its least recently used entries beyond ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))


@dataclass
class GatewayConfig:
    public_url: str = "http://127.0.0.1:8080"


class Gateway:
    """Shared machinery of both services: store, router, notices, auth, presence."""

    def __init__(self, store: Store, router: ShardRouter, config: GatewayConfig) -> None:
        self.store = store
        self.router = router
        self.config = config
        self.notices = Notices(store)
        # Secrets never change seat and games never change kind: cache both, bounded.
        self._secrets: LRU[str, tuple[str, int]] = LRU(CACHE_SIZE)
        self._streams: dict[tuple[str, int], int] = {}
        self._kinds: LRU[str, str] = LRU(CACHE_SIZE)
        self._touched: dict[tuple[str, int], float] = {}

    async def kind_of(self, game_id: str) -> str:
        kind = self._kinds.get(game_id)
        if kind is None:
            summary = await self.store.summary(game_id)
            kind = summary["game"] if summary else ""
            self._kinds.put(game_id, kind)
        return kind

    async def start(self) -> None:
        await self.notices.start()

    async def stop(self) -> None:
        await self.notices.stop()
        await self.store.close()

    async def auth(self, context: grpc.aio.ServicerContext, game_id: str | None = None) -> tuple[str, int]:
        """The (game, seat) of the caller's secret; UNAUTHENTICATED / PERMISSION_DENIED otherwise."""
        secret = ""
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                secret = value[len("Bearer "):].strip()
        if not secret:
            raise RemoteError({"type": "Unauthenticated", "code": "auth/unauthenticated",
                               "message": "missing player secret (metadata 'authorization: Bearer <secret>')",
                               "rule": "A3"})
        h = hash_secret(secret)
        found = self._secrets.get(h)
        if found is None:
            found = await self.store.seat_of_secret(h)
            if found is None:
                raise RemoteError({"type": "Unauthenticated", "code": "auth/unauthenticated",
                                   "message": "unknown player secret", "rule": "A3"})
            self._secrets.put(h, found)
        if game_id is not None and game_id != found[0]:
            raise RemoteError({"type": "PermissionDenied", "code": "auth/permission_denied",
                               "field": "game_id", "rule": "A3",
                               "message": "game_id: this secret belongs to a player of another game"})
        await self.touch(found[0], found[1])
        return found

    async def touch(self, game_id: str, seat: int) -> None:
        """Refresh the player's presence, at most once per HEARTBEAT_S from this gateway."""
        now = time.monotonic()
        if now - self._touched.get((game_id, seat), -HEARTBEAT_S) >= HEARTBEAT_S:
            if len(self._touched) > 100_000:  # forget players not seen for a while
                self._touched = {k: t for k, t in self._touched.items() if now - t < HEARTBEAT_S}
            self._touched[(game_id, seat)] = now
            await self.store.touch_presence(game_id, seat, PRESENCE_TTL_S)


async def run_unary(method: str, context: grpc.aio.ServicerContext, fn: Callable[[], Awaitable[R]]) -> R:
    """Run a handler: count it, time it, and map errors to a status with field/rule trailers."""
    start = time.perf_counter()
    try:
        result = await fn()
    except GameError as exc:
        err = RemoteError.from_game_error(exc)
    except RemoteError as exc:
        err = exc
    else:
        REQUESTS.labels(method, "OK").inc()
        return result
    finally:
        LATENCY.labels(method).observe(time.perf_counter() - start)
    status, _http = err.status()
    REQUESTS.labels(method, status.name).inc()
    context.set_trailing_metadata(err.trailers())
    await context.abort(status, err.message)
    raise AssertionError("unreachable")  # abort raises


class LobbyService(lobby_pb2_grpc.LobbyServicer):
    def __init__(self, gw: Gateway) -> None:
        self.gw = gw

    async def CreateGame(self, request: lobby_pb2.CreateGameRequest,
                         context: grpc.aio.ServicerContext) -> lobby_pb2.CreateGameResponse:
        async def go() -> lobby_pb2.CreateGameResponse:
            config = convert.options_dict(request)  # also checks the game kind
            config["players"] = request.seats or 2
            deadline = request.deadline_seconds or SPEEDS.get(request.speed, 0.0)
            if not deadline:
                raise InvalidOrder("unknown speed", field="speed", rule="A1")
            check_creation(request.game, config, request.nickname, deadline)  # before any side effect
            game_id = secrets.token_hex(8)
            code = new_code()
            while not await self.gw.store.claim_code(code, game_id):
                code = new_code()
            secret = secrets.token_urlsafe(24)
            shard = await self.gw.router.place_new(game_id)
            await self.gw.router.call_shard(
                shard, "create_game", game_id,
                {"kind": request.game, "config": config, "nickname": request.nickname,
                 "secret_hash": hash_secret(secret), "public": request.public, "deadline_s": deadline,
                 "code": code})
            await self.gw.store.touch_presence(game_id, 0, PRESENCE_TTL_S)
            return lobby_pb2.CreateGameResponse(
                game_id=game_id, code=code, invite_link=f"{self.gw.config.public_url}/join/{code}",
                secret=secret, seat=0)
        return await run_unary("CreateGame", context, go)

    async def JoinGame(self, request: lobby_pb2.JoinGameRequest,
                       context: grpc.aio.ServicerContext) -> lobby_pb2.JoinGameResponse:
        async def go() -> lobby_pb2.JoinGameResponse:
            code = request.code.strip().upper()
            game_id = await self.gw.store.game_of_code(code) if len(code) == 6 else None
            if game_id is None:
                raise RemoteError({"type": "NotFound", "code": "lookup/not_found", "field": "code",
                                   "rule": "A2", "message": f"code: rule A2: no game with code {code!r}"})
            secret = secrets.token_urlsafe(24)
            joined = await self.gw.router.call(game_id, "join", game_id, request.nickname, hash_secret(secret))
            await self.gw.store.touch_presence(game_id, joined["seat"], PRESENCE_TTL_S)
            return lobby_pb2.JoinGameResponse(game_id=game_id, seat=joined["seat"], secret=secret,
                                              game=joined["game"])
        return await run_unary("JoinGame", context, go)

    async def StartGame(self, request: lobby_pb2.StartGameRequest,
                        context: grpc.aio.ServicerContext) -> lobby_pb2.GameSummary:
        async def go() -> lobby_pb2.GameSummary:
            game_id, seat = await self.gw.auth(context, request.game_id)
            s = await self.gw.router.call(game_id, "start_game", game_id, seat, request.fill_with_autopilot)
            return convert.summary_message(s)
        return await run_unary("StartGame", context, go)

    async def ListGames(self, request: lobby_pb2.ListGamesRequest,
                        context: grpc.aio.ServicerContext) -> lobby_pb2.ListGamesResponse:
        async def go() -> lobby_pb2.ListGamesResponse:
            games = await self.gw.store.open_games()
            return lobby_pb2.ListGamesResponse(games=[
                convert.summary_message(s) for s in games if not request.game or s["game"] == request.game])
        return await run_unary("ListGames", context, go)

    async def Rejoin(self, request: lobby_pb2.RejoinRequest,
                     context: grpc.aio.ServicerContext) -> lobby_pb2.RejoinResponse:
        async def go() -> lobby_pb2.RejoinResponse:
            game_id, seat = await self.gw.auth(context)
            who = await self.gw.router.call(game_id, "whoami", game_id, seat)
            return lobby_pb2.RejoinResponse(
                game_id=who["game_id"], seat=who["seat"], nickname=who["nickname"], game=who["game"],
                code=who["code"], host=who["host"], status=convert.STATUS[who["status"]])
        return await run_unary("Rejoin", context, go)


class GameService(game_pb2_grpc.GameServicer):
    def __init__(self, gw: Gateway) -> None:
        self.gw = gw

    async def GetView(self, request: game_pb2.GetViewRequest,
                      context: grpc.aio.ServicerContext) -> game_pb2.GetViewResponse:
        async def go() -> game_pb2.GetViewResponse:
            game_id, seat = await self.gw.auth(context, request.game_id)
            return convert.view_response(await self.gw.router.call(game_id, "view", game_id, seat))
        return await run_unary("GetView", context, go)

    async def SubmitOrders(self, request: game_pb2.SubmitOrdersRequest,
                           context: grpc.aio.ServicerContext) -> game_pb2.SubmitOrdersResponse:
        async def go() -> game_pb2.SubmitOrdersResponse:
            game_id, seat = await self.gw.auth(context, request.game_id)
            orders = convert.orders_dict(await self.gw.kind_of(game_id), request)
            ack = await self.gw.router.call(game_id, "submit", game_id, seat, orders, request.version,
                                            request.idempotency_key, request.draft)
            return game_pb2.SubmitOrdersResponse(**ack)
        return await run_unary("SubmitOrders", context, go)

    async def SendChat(self, request: game_pb2.SendChatRequest,
                       context: grpc.aio.ServicerContext) -> game_pb2.SendChatResponse:
        async def go() -> game_pb2.SendChatResponse:
            game_id, seat = await self.gw.auth(context, request.game_id)
            return game_pb2.SendChatResponse(**await self.gw.router.call(game_id, "chat", game_id, seat,
                                                                         request.text))
        return await run_unary("SendChat", context, go)

    async def Watch(self, request: game_pb2.WatchRequest,
                    context: grpc.aio.ServicerContext) -> AsyncIterator[game_pb2.Update]:
        try:
            game_id, seat = await self.gw.auth(context, request.game_id)
        except RemoteError as err:
            status, _ = err.status()
            context.set_trailing_metadata(err.trailers())
            await context.abort(status, err.message)
            return
        REQUESTS.labels("Watch", "OK").inc()
        queue = await self.gw.notices.subscribe(game_id)
        key = (game_id, seat)
        self.gw._streams[key] = self.gw._streams.get(key, 0) + 1
        WATCHERS.inc()
        heartbeat = asyncio.get_running_loop().create_task(self._heartbeat(game_id, seat))
        await self.gw.store.publish(game_id, {"presence": seat, "connected": True})
        await self.gw.router.call(game_id, "presence_changed", game_id)
        since = request.from_version
        try:
            while True:
                got = await self.gw.router.call(game_id, "updates", game_id, seat, since)
                for u in got["updates"]:
                    yield convert.update_message(u)
                    since = max(since, int(u["version"]))
                if got["over"]:
                    return  # nothing will ever follow
                notice = await queue.get()
                while "presence" in notice:
                    if notice["presence"] != seat:
                        yield game_pb2.Update(version=since, kind="connected" if notice["connected"]
                                              else "disconnected", seat=int(notice["presence"]))
                    if queue.empty():
                        notice = await queue.get()
                    else:
                        notice = queue.get_nowait()
                while not queue.empty():
                    queue.get_nowait()
        finally:
            heartbeat.cancel()
            WATCHERS.dec()
            await self.gw.notices.unsubscribe(game_id, queue)
            left = self.gw._streams[key] - 1
            if left:
                self.gw._streams[key] = left
            else:
                del self.gw._streams[key]
                self.gw._touched.pop(key, None)
                with contextlib.suppress(Exception):
                    await self.gw.store.clear_presence(game_id, seat)
                    await self.gw.store.publish(game_id, {"presence": seat, "connected": False})
                    await self.gw.router.call(game_id, "presence_changed", game_id)

    async def _heartbeat(self, game_id: str, seat: int) -> None:
        while True:
            with contextlib.suppress(Exception):
                await self.gw.store.touch_presence(game_id, seat, PRESENCE_TTL_S)
            await asyncio.sleep(HEARTBEAT_S)


SERVICE_NAMES = (
    lobby_pb2.DESCRIPTOR.services_by_name["Lobby"].full_name,
    game_pb2.DESCRIPTOR.services_by_name["Game"].full_name,
)


async def build_server(gw: Gateway, address: str) -> tuple[grpc.aio.Server, int]:
    """A grpc.aio server with Lobby, Game, health and reflection, bound to ``address``."""
    server = grpc.aio.server()
    lobby_pb2_grpc.add_LobbyServicer_to_server(LobbyService(gw), server)
    game_pb2_grpc.add_GameServicer_to_server(GameService(gw), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", *SERVICE_NAMES):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection((*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind gRPC address {address}")
    await server.start()
    return server, port

