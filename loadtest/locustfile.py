"""Locust users that behave like players (issue 12) and spectators (issue 26). Players create or join
games by code, or press "Play now" (Community.QuickPlay), start them, watch, make the moves their
game's bot makes (:mod:`client.games`: the engine's autopilot orders in Salvo, random legal orders in
Archipelago, the autopilot's actions in Arcmage when their seat is in the step) from their own view,
chat, disconnect and come back, until the game ends; then play another.

Three kinds of user:

* ``GrpcPlayer`` — the gRPC door (sync gRPC on gevent, see "gRPC under gevent" below); every call
  is one row of locust's statistics, named after its rpc (``grpc`` type); Watch updates count as
  ``Watch update``.
* ``WebPlayer`` — the JSON door (``POST /v1/{Service}/{Rpc}``) and Watch on a WebSocket.
* ``Spectator`` — lists the live games (``Community/ListLiveGames``), picks a running one, reads
  what a spectator sees (``Community/GetSpectatorView``) and follows it from that view's seq on the
  ``/v1/Community/Spectate`` WebSocket until its ``game_over`` (each update a ``Spectate update``
  row; a seq that does not follow the last one is a failure, ``Spectate gap``); then picks another.
  It uses the JSON door and a WebSocket, as the web client's spectators do (a person with a browser,
  not a program: the gRPC door's spectators would be bots), and it costs the gRPC players nothing (a
  gRPC stream holds a thread of gevent's hub while it is quiet, see below).

A share of the players' games (``--quick-share``, default 0.3) is entered with "Play now": a
two-seat quick-play lobby of the kind picked (fast speed; the opener allows autopilot seats), which
the server starts once full, or once its wait (``ARCHIPELAGO_QUICK_WAIT_FAST_S``) is over with
autopilot seats; nobody calls StartGame. A quick-play game has the server's default length (not the
short options of the games created here). ``--public-share`` (default 0.5) of the games created are
public (quick-play games always are): spectators follow public games only. ``--spectator-share``
(default 0.1) of the users are spectators.

Run against ``make run`` (gRPC on 50051, HTTP on 8080) or any gateway::

    locust -f loadtest/locustfile.py --host http://127.0.0.1:8080 --grpc-address 127.0.0.1:50051
    locust -f loadtest/locustfile.py --host http://127.0.0.1:8080 --grpc-address 127.0.0.1:50051 \\
        --headless -u 200 -r 20 -t 2m --csv var/load --html var/load.html

``--host`` is the gateway's HTTP address (web players), ``--grpc-address`` its gRPC one (by default
the host's name on port 50051). ``--games`` (env ``ARCHIPELAGO_LOAD_GAMES``) is the mix of games
created, ``kind=share,...`` (default ``salvo=0.7,archipelago=0.2,arcmage=0.1``; shares are relative);
``--deadline`` is the round (Arcmage: turn) deadline of the games created (default 30 s: a round
closes early once every connected player is done; an Arcmage step moves on as soon as its seats
have acted). The gateway's per-address lobby, read and spectator limits are meant for people, not
for one machine playing thousands: run the server with ``ARCHIPELAGO_RATE_LIMITS=off`` (or raise
``ARCHIPELAGO_LOBBY_PER_MIN`` / ``_OPEN_LOBBIES``, ``ARCHIPELAGO_READS_PER_MIN`` and
``ARCHIPELAGO_SPECTATE_PER_ADDRESS``). A short ``ARCHIPELAGO_QUICK_WAIT_FAST_S`` (the smoke test: 5 s)
keeps the last quick player of a run from waiting the default 300 s for its lobby to fill.

gRPC under gevent (issue 24). With ``init_gevent()`` grpcio waits for every completion queue in a
thread of gevent's hub threadpool (10 threads unless raised): a blocking unary call holds one for the
whole call, and a channel with a stream open holds one for as long as its streams are quiet (its
"spin" waits there for the next event of any of its calls, one at a time). With one channel per
player, each with its Watch open, the streams held every thread and the calls queued behind updates
that could take a round to come: the gRPC rows measured that queue (``CreateGame`` 23 s p50 against
0.6 s on the JSON door). So:

* the pool has a thread for every gRPC player and every channel (:func:`room_in_threadpool`): each
  unary call is a blocking call waiting in a thread of its own, answered as soon as it is (a
  ``.future()`` would be answered by its channel's spin, one event at a time behind the streams'
  updates: measured slower, see the README);
* the gRPC players share ``--grpc-channels`` channels (default 16, each its own TCP connection),
  taken in turn: a player's Watch is on one of them, and coming back (``reconnect``) takes the next;
* every unary call has a deadline (``CALL_TIMEOUT_S``) and every Watch is cancelled when its player
  leaves its game or stops, and no channel is closed while locust runs: a player stopped at the run
  time used to close its channel in ``on_stop``, and that close waited for ever for a cancelled
  Watch to drain (locust waits for every stopped player without a timeout: it never exited). A
  stopping player now waits on nothing that cannot end, and locust exits at its run time.

A refusal that is part of play is not a failure: a submission that lost the race with the round's
close (ABORTED, stale version) or with the game's end (FAILED_PRECONDITION) is reported under its own
name (``SubmitOrders (too late)``, ``Act (too late)``: an Arcmage action whose step moved on). Everything
else that fails is a failure.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import time
import uuid
from collections import deque
from typing import Any
from urllib.parse import urlparse

import gevent
import gevent.pool
import grpc
import grpc.experimental.gevent as grpc_gevent
from gevent.event import Event
from google.protobuf import json_format
from locust import HttpUser, User, between, events, task
from locust.env import Environment

grpc_gevent.init_gevent()  # after locust's monkey patching, before any gRPC object

from archipelago.v1 import (  # noqa: E402
    community_pb2,
    community_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
)
from client.games import GAMES, game_client  # noqa: E402

LATE = {"ABORTED", "FAILED_PRECONDITION"}  # a move that lost the race with the close (the step) or the end
#: open lobbies of this locust process by kind: [code, seats still free]
LOBBIES: dict[str, deque[list[Any]]] = {kind: deque() for kind in GAMES}
DEFAULT_MIX = "salvo=0.7,archipelago=0.2,arcmage=0.1"
#: updates that never change what a player is to do (a step update is looked at: see ``on_update``)
QUIET = frozenset({"event", "chat", "connected", "disconnected"})
CALL_TIMEOUT_S = 60.0  # the deadline of every unary gRPC call: a stopping player never waits longer
GIVE_UP_S = 600.0  # a game not over by then is left (the Watch's deadline: this and a minute)
DEFAULT_CHANNELS = 16
#: gRPC players started in this locust process (each may hold one thread of the hub's threadpool)
GRPC_PLAYERS = [0]
QUICK_SHARE, PUBLIC_SHARE, SPECTATOR_SHARE = 0.3, 0.5, 0.1  # the defaults of the options below


@events.init_command_line_parser.add_listener  # type: ignore[untyped-decorator]
def _arguments(parser: Any) -> None:
    parser.add_argument("--grpc-address", default="", help="the gateway's gRPC address (host:port)")
    parser.add_argument("--games", default=os.environ.get("ARCHIPELAGO_LOAD_GAMES", DEFAULT_MIX),
                        help=f"the mix of games created: kind=share,... (env ARCHIPELAGO_LOAD_GAMES; {DEFAULT_MIX})")
    parser.add_argument("--deadline", type=float, default=30.0, help="round deadline of created games (s)")
    parser.add_argument("--grpc-channels", type=int, default=DEFAULT_CHANNELS,
                        help=f"gRPC channels (TCP connections) the gRPC players share ({DEFAULT_CHANNELS})")
    parser.add_argument("--quick-share", type=float, default=QUICK_SHARE,
                        help=f"share of the players' games entered with Play now (QuickPlay) ({QUICK_SHARE})")
    parser.add_argument("--public-share", type=float, default=PUBLIC_SHARE,
                        help=f"share of the games created that are public: spectators see them ({PUBLIC_SHARE})")
    parser.add_argument("--spectator-share", type=float, default=SPECTATOR_SHARE,
                        help=f"share of the users that are spectators ({SPECTATOR_SHARE})")


def share(env: Environment, name: str, default: float, below_one: bool = False) -> float:
    """The option ``name`` (a share: 0 ≤ x ≤ 1, or < 1 with ``below_one``); ValueError naming it otherwise."""
    value = float(getattr(env.parsed_options, name, default) if env.parsed_options is not None else default)
    if not 0.0 <= value <= 1.0 or (below_one and value >= 1.0):
        raise ValueError(f"--{name.replace('_', '-')}: a share ≥ 0 and {'< 1' if below_one else '≤ 1'}, got {value}")
    return value


@events.init.add_listener  # type: ignore[untyped-decorator]
def _weights(environment: Environment, **_kw: Any) -> None:
    """Spectators are ``--spectator-share`` of the users (the players' weights stay as they are)."""
    Spectator.weight = spectator_weight(share(environment, "spectator_share", SPECTATOR_SHARE, below_one=True))
    for name, default in (("quick_share", QUICK_SHARE), ("public_share", PUBLIC_SHARE)):
        share(environment, name, default)  # (checked once, at the start)


def game_mix(text: str) -> dict[str, float]:
    """``kind=share,...`` as {kind: share} (shares ≥ 0, not all 0; kinds of :data:`client.games.GAMES`;
    a kind without ``=share``: 1); ValueError naming what is wrong."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, eq, share = part.partition("=")
        kind = kind.strip()
        if kind not in GAMES:
            raise ValueError(f"--games: unknown game {kind!r} (one of {', '.join(GAMES)})")
        try:
            mix[kind] = float(share) if eq else 1.0
        except ValueError:
            raise ValueError(f"--games: {kind}'s share must be a number, got {share!r}") from None
        if mix[kind] < 0:
            raise ValueError(f"--games: {kind}'s share must be ≥ 0, got {share!r}")
    if not mix or not sum(mix.values()):
        raise ValueError(f"--games: no game with a share above 0 in {text!r}")
    return mix


def grpc_address(env: Environment) -> str:
    given = str(getattr(env.parsed_options, "grpc_address", "") or "")
    if given:
        return given
    host = urlparse(env.host or "http://127.0.0.1:8080").hostname or "127.0.0.1"
    return f"{host}:50051"


#: the gRPC channels of this locust process, shared by its gRPC players (see "gRPC under gevent")
CHANNELS: list[grpc.Channel] = []
_turns = itertools.count()


def grpc_channel(env: Environment) -> grpc.Channel:
    """The next channel of :data:`CHANNELS` in turn (made at the first call: ``--grpc-channels`` of
    them, each on its own TCP connection — a local subchannel pool — to :func:`grpc_address`)."""
    if not CHANNELS:
        count = max(1, int(getattr(env.parsed_options, "grpc_channels", DEFAULT_CHANNELS) or DEFAULT_CHANNELS))
        address = grpc_address(env)
        CHANNELS.extend(grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1),
                                                                ("grpc.max_receive_message_length", 2**22)])
                        for _ in range(count))
    return CHANNELS[next(_turns) % len(CHANNELS)]


def room_in_threadpool() -> None:
    """Grow gevent's hub threadpool so that no gRPC wait queues for a thread: one for each gRPC
    player's call, one for each channel's spin, and some for the rest (DNS lookups of the web players
    run there too)."""
    pool = gevent.get_hub().threadpool
    pool.maxsize = max(pool.maxsize, GRPC_PLAYERS[0] + len(CHANNELS) + 16)


class Game:
    """What one player of one game knows: its secret, the last update seen, and a wake-up event."""

    def __init__(self, kind: str, game_id: str, secret: str, seat: int, seats: int) -> None:
        self.kind, self.game_id, self.secret, self.seat, self.seats = kind, game_id, secret, seat, seats
        self.seq = 0
        self.joined = 1
        self.started = False
        self.over = False
        self.wake = Event()
        self.since = time.monotonic()
        self.code = ""
        self.quick = False  # a quick-play game: the server starts it, nobody calls StartGame
        self.refused_at = -1  # the version at which a move was too late: the next move waits for an update


def pick_kind(env: Environment) -> str:
    opts = env.parsed_options
    mix = game_mix(str(getattr(opts, "games", None) or DEFAULT_MIX))
    return random.choices(list(mix), weights=list(mix.values()))[0]


def deadline(env: Environment) -> float:
    return float(getattr(env.parsed_options, "deadline", 30.0))


def play_now(env: Environment) -> bool:
    """This game is entered with "Play now" (a ``--quick-share`` of them)."""
    return random.random() < float(getattr(env.parsed_options, "quick_share", QUICK_SHARE))


def public(env: Environment) -> bool:
    """The game about to be created is public (a ``--public-share`` of them)."""
    return random.random() < float(getattr(env.parsed_options, "public_share", PUBLIC_SHARE))


QUICK_SEATS = 2  # a quick-play lobby's seats (as the games created here: its players find each other)


def quick_game(kind: str, got: Any) -> Game:
    """The Game of a QuickPlayResponse (a message or its JSON mapping)."""
    def field(name: str) -> Any:
        return got.get(name) if isinstance(got, dict) else getattr(got, name)

    game = Game(kind, str(field("game_id")), str(field("secret")), int(field("seat") or 0), QUICK_SEATS)
    game.quick, game.code = True, str(field("code") or "")
    status = field("status")
    game.started = status in (lobby_pb2.GAME_STATUS_RUNNING, "GAME_STATUS_RUNNING")  # this seat filled it
    return game


LOBBY_WAIT_S = 10.0  # a host whose lobby has not filled by then starts with autopilot seats


def time_to_start(game: Game) -> bool:
    """The host starts once every seat is taken or after ``LOBBY_WAIT_S``; its lobby then leaves the list
    (never a quick-play game's: the server starts it)."""
    if game.quick or game.seat != 0 or (game.joined < game.seats and time.monotonic() - game.since <= LOBBY_WAIT_S):
        return False
    for entry in list(LOBBIES[game.kind]):
        if entry[0] == game.code:
            LOBBIES[game.kind].remove(entry)
    return True


def take_lobby(kind: str) -> str | None:
    """A code of an open lobby of ``kind`` with a free seat (claims the seat), or None."""
    lobbies = LOBBIES[kind]
    while lobbies:
        entry = lobbies[0]
        entry[1] -= 1
        if entry[1] <= 0:
            lobbies.popleft()
        return str(entry[0])
    return None


def on_update(game: Game, kind: str, seq: int, seat: int, players: list[Any] | None = None) -> None:
    """Note an update; wake the player unless it cannot concern it (an engine event, a chat, a
    turn game's step naming other seats: ``players`` is a "step" update's data.players)."""
    game.seq = max(game.seq, seq)
    if kind == "joined":
        game.joined = max(game.joined, seat + 1)
    elif kind == "started":
        game.started = True
    elif kind == "game_over":
        game.over = True
    if kind in QUIET or (kind == "step" and game.seat not in {int(p) for p in players or ()}):
        return
    game.wake.set()


def game_over(env: Environment, game: Game) -> None:
    """One row per kind of game played to its end ("game" type), so a report shows games, not only calls."""
    if game.over:
        env.events.request.fire(request_type="game", name=f"{game.kind} over",
                                response_time=0, response_length=0, exception=None, context={})


class GrpcPlayer(User):
    """A player on the gRPC door."""

    wait_time = between(1, 3)
    weight = 4

    def on_start(self) -> None:
        self.channel = grpc_channel(self.environment)
        GRPC_PLAYERS[0] += 1
        room_in_threadpool()
        self.followers = gevent.pool.Group()  # this player's Watch greenlets: ended with it
        self._call: Any = None  # the Watch of the moment

    def on_stop(self) -> None:
        self.stop_watching()  # (the channel stays: it is shared, and closing one can wait for ever)

    def stop_watching(self) -> None:
        """Cancel the Watch of the moment and end its greenlet (bounded: a cancelled stream ends at once)."""
        call, self._call = getattr(self, "_call", None), None  # (None too if on_start did not finish)
        if call is not None:
            call.cancel()
        followers = getattr(self, "followers", None)
        if followers is not None:
            followers.kill(timeout=5)

    def call(self, name: str, method: Any, request: Any, *, late_ok: bool = False, secret: str = "") -> Any:
        """One unary rpc with a deadline (a blocking call: it waits in a thread of the hub's threadpool,
        which has one for it), reported to locust's statistics under ``name``."""
        metadata = (("authorization", f"Bearer {secret}"),) if secret else ()
        start = time.perf_counter()
        try:
            result = method(request, metadata=metadata, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as err:
            code = err.code().name if hasattr(err, "code") else "UNKNOWN"
            late = late_ok and code in LATE
            self.environment.events.request.fire(
                request_type="grpc", name=f"{name} (too late)" if late else name,
                response_time=(time.perf_counter() - start) * 1000, response_length=0,
                exception=None if late else err, context={})
            raise
        size = result.ByteSize() if hasattr(result, "ByteSize") else 0
        self.environment.events.request.fire(request_type="grpc", name=name,
                                             response_time=(time.perf_counter() - start) * 1000,
                                             response_length=size, exception=None, context={})
        return result

    def stubs(self) -> tuple[Any, Any]:
        lobby: Any = lobby_pb2_grpc.LobbyStub(self.channel)
        game: Any = game_pb2_grpc.GameStub(self.channel)
        return lobby, game

    def quick_play(self, kind: str) -> Game:
        """Play now: a seat in a quick-play lobby of ``kind`` (the opener allows autopilot seats)."""
        community: Any = community_pb2_grpc.CommunityStub(self.channel)
        got = self.call("QuickPlay", community.QuickPlay, community_pb2.QuickPlayRequest(
            game=kind, speed=lobby_pb2.SPEED_FAST, seats=QUICK_SEATS, nickname=f"q{uuid.uuid4().hex[:8]}",
            request_id=uuid.uuid4().hex, allow_autopilot=True))
        return quick_game(kind, got)

    def follow(self, game: Game) -> None:
        """The Watch stream (a greenlet): resumes from the last seq when the player comes back."""
        _, stub = self.stubs()
        call = stub.Watch(game_pb2.WatchRequest(game_id=game.game_id, after_seq=game.seq),
                          metadata=(("authorization", f"Bearer {game.secret}"),), timeout=GIVE_UP_S + 60)
        self._call = call
        try:
            for u in call:
                self.environment.events.request.fire(request_type="grpc", name="Watch update", response_time=0,
                                                     response_length=u.ByteSize(), exception=None, context={})
                on_update(game, u.kind, u.seq, u.seat, list(json_format.MessageToDict(u.data).get("players") or ())
                          if u.kind == "step" else None)
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                self.environment.events.request.fire(request_type="grpc", name="Watch", response_time=0,
                                                     response_length=0, exception=err, context={})
        finally:
            game.wake.set()

    def take_a_seat(self, kind: str) -> Game:
        """Play now (a ``--quick-share`` of the games), else join an open lobby of this process by code,
        else create a game (and list its lobby)."""
        if play_now(self.environment):
            return self.quick_play(kind)
        lobby, _ = self.stubs()
        seats = 2
        code = take_lobby(kind)
        if code is not None:
            try:  # the host may have started with autopilot seats meanwhile: too late, then make one
                joined = self.call("JoinGame", lobby.JoinGame, lobby_pb2.JoinGameRequest(
                    code=code, nickname=f"p{uuid.uuid4().hex[:8]}", request_id=uuid.uuid4().hex), late_ok=True)
                return Game(kind, joined.game_id, joined.secret, joined.seat, seats)
            except grpc.RpcError as err:
                if err.code().name not in LATE:
                    raise
        options: dict[str, Any] = dict(game_client(kind).load_options())
        made = self.call("CreateGame", lobby.CreateGame, lobby_pb2.CreateGameRequest(
            game=kind, seats=seats, nickname=f"h{uuid.uuid4().hex[:8]}", public=public(self.environment),
            deadline_seconds=deadline(self.environment), request_id=uuid.uuid4().hex, **options))
        game = Game(kind, made.game_id, made.secret, 0, seats)
        game.code = made.code
        LOBBIES[kind].append([made.code, seats - 1])
        return game

    @task
    def play_a_game(self) -> None:
        game = self.take_a_seat(pick_kind(self.environment))
        self.followers.spawn(self.follow, game)
        try:
            self.play(game)
            game_over(self.environment, game)
        finally:
            self.stop_watching()

    def play(self, game: Game) -> None:
        give_up = time.monotonic() + GIVE_UP_S
        while not game.over and time.monotonic() < give_up:
            lobby, stub = self.stubs()  # (on the channel of the moment: the player may have reconnected)
            game.wake.clear()
            if not game.started:
                if time_to_start(game):
                    start = lobby_pb2.StartGameRequest(game_id=game.game_id,
                                                       fill_with_autopilot=game.joined < game.seats)
                    try:
                        self.call("StartGame", lobby.StartGame, start, secret=game.secret)
                        game.started = True
                    except grpc.RpcError:
                        pass
                game.wake.wait(timeout=2)
                continue
            view = self.call("GetView", stub.GetView, game_pb2.GetViewRequest(game_id=game.game_id),
                             secret=game.secret)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                game.over = True
                return
            move = game_client(view.game).bot_move(view) if view.version != game.refused_at else None
            if move is not None:
                try:
                    self.call(move.rpc, getattr(stub, move.rpc), move.request, late_ok=True, secret=game.secret)
                except grpc.RpcError as err:
                    if err.code().name not in LATE:
                        raise
                    game.refused_at = view.version
                if random.random() < 0.05:
                    with contextlib.suppress(grpc.RpcError):  # (the game may have ended meanwhile)
                        chat = game_pb2.ActRequest(game_id=game.game_id, chat=game_pb2.ChatAction(text="gg"))
                        self.call("Act (chat)", stub.Act, chat, late_ok=True, secret=game.secret)
                if random.random() < 0.03:
                    self.reconnect(game)
                continue
            game.wake.wait(timeout=max(5.0, deadline(self.environment)))

    def reconnect(self, game: Game) -> None:
        """Drop the Watch, come back on the next shared channel (another TCP connection when there are
        several), resume from the last seq."""
        self.stop_watching()
        self.channel = grpc_channel(self.environment)
        self.followers.spawn(self.follow, game)


class JsonUser(HttpUser):
    """A user of the JSON door (``--host`` is the gateway's HTTP URL)."""

    abstract = True

    def post(self, rpc: str, body: dict[str, Any], secret: str = "", *, late_ok: bool = False) -> dict[str, Any]:
        """``POST /v1/{rpc}`` (a row named ``rpc``): the answer; a refusal is a failure (raised) unless
        ``late_ok`` and it lost a race with the game's close or end (then {})."""
        headers = {"authorization": f"Bearer {secret}"} if secret else {}
        with self.client.post(f"/v1/{rpc}", json=body, headers=headers, name=rpc, catch_response=True) as r:
            if r.status_code == 200:
                r.success()
                return dict(r.json())
            code = ""
            try:
                code = str(r.json()["error"]["status"])
            except Exception:  # a body that is not the documented error: a failure below
                pass
            if late_ok and code in LATE:
                r.success()
                return {}
            r.failure(f"{r.status_code} {r.text[:200]}")
            raise RuntimeError(f"{rpc}: {r.status_code}")

    def ws_url(self, path: str) -> str:
        return str(self.host).replace("http", "ws", 1) + path


class WebPlayer(JsonUser):
    """A player on the JSON door, with Watch on a WebSocket."""

    wait_time = between(1, 3)
    weight = 1

    def follow(self, game: Game) -> None:
        from websockets.sync.client import connect

        url = self.ws_url("/v1/Game/Watch")
        start = time.perf_counter()
        try:
            # (no keepalive pings: the server needs none, and 200 players on one core have better to do)
            with connect(url, max_size=2**22, open_timeout=60, ping_interval=None) as ws:
                self._ws = ws
                ws.send(json.dumps({"game_id": game.game_id, "after_seq": str(game.seq),
                                    "authorization": f"Bearer {game.secret}"}))
                for raw in ws:
                    u = json.loads(raw)
                    if "error" in u:
                        raise RuntimeError(str(u["error"]))
                    self.environment.events.request.fire(request_type="ws", name="Watch update", response_time=0,
                                                         response_length=len(raw), exception=None, context={})
                    on_update(game, str(u.get("kind", "")), int(u.get("seq", 0)), int(u.get("seat", 0)),
                              list((u.get("data") or {}).get("players") or ()))
        except Exception as exc:  # every failure of the stream is reported
            if not game.over and not getattr(self, "_closing", False):
                self.environment.events.request.fire(request_type="ws", name="Watch",
                                                     response_time=(time.perf_counter() - start) * 1000,
                                                     response_length=0, exception=exc, context={})
        finally:
            game.wake.set()

    def take_a_seat(self, kind: str) -> Game:
        """As :meth:`GrpcPlayer.take_a_seat`, on the JSON door."""
        if play_now(self.environment):
            return quick_game(kind, self.post("Community/QuickPlay", {
                "game": kind, "speed": "SPEED_FAST", "seats": QUICK_SEATS, "nickname": f"q{uuid.uuid4().hex[:8]}",
                "request_id": uuid.uuid4().hex, "allow_autopilot": True}))
        code = take_lobby(kind)
        if code is not None:  # (empty when the host started meanwhile: then make one)
            joined = self.post("Lobby/JoinGame", {"code": code, "nickname": f"w{uuid.uuid4().hex[:8]}"}, late_ok=True)
            if joined:
                return Game(kind, joined["game_id"], joined["secret"], int(joined.get("seat", 0)), 2)
        body: dict[str, Any] = {"game": kind, "seats": 2, "nickname": f"w{uuid.uuid4().hex[:8]}",
                                "deadline_seconds": deadline(self.environment), "public": public(self.environment)}
        for member, message in game_client(kind).load_options().items():
            body[member] = json_format.MessageToDict(message, preserving_proto_field_name=True)
        made = self.post("Lobby/CreateGame", body)
        game = Game(kind, made["game_id"], made["secret"], 0, 2)
        game.code = made["code"]
        LOBBIES[kind].append([made["code"], 1])
        return game

    @task
    def play_a_game(self) -> None:
        game = self.take_a_seat(pick_kind(self.environment))
        self._closing = False
        watcher = gevent.spawn(self.follow, game)
        try:
            self.play(game)
            game_over(self.environment, game)
        finally:
            self._closing = True
            ws = getattr(self, "_ws", None)
            if ws is not None:
                ws.close()
            watcher.kill(timeout=5)

    def play(self, game: Game) -> None:
        give_up = time.monotonic() + GIVE_UP_S
        while not game.over and time.monotonic() < give_up:
            game.wake.clear()
            if not game.started:
                if time_to_start(game):
                    try:
                        self.post("Lobby/StartGame", {"game_id": game.game_id,
                                                      "fill_with_autopilot": game.joined < game.seats}, game.secret)
                        game.started = True
                    except RuntimeError:
                        pass
                game.wake.wait(timeout=2)
                continue
            raw = self.post("Game/GetView", {"game_id": game.game_id}, game.secret)
            view = json_format.ParseDict(raw, game_pb2.GetViewResponse(), ignore_unknown_fields=True)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                game.over = True
                return
            move = game_client(view.game).bot_move(view) if view.version != game.refused_at else None
            if move is not None:
                if not self.post(f"Game/{move.rpc}", move.json(), game.secret, late_ok=True):
                    game.refused_at = view.version  # too late ({}): the next move waits for an update
                continue
            game.wake.wait(timeout=max(5.0, deadline(self.environment)))


def spectator_weight(spectators: float) -> float:
    """The Spectator class's weight that makes spectators ``spectators`` of the users (0 ≤ share < 1)."""
    return (GrpcPlayer.weight + WebPlayer.weight) * spectators / (1.0 - spectators)


class Spectator(JsonUser):
    """A spectator on the JSON door: picks a running public game from ListLiveGames, reads its spectator
    view and follows it on the Spectate WebSocket from that view's seq until its game_over (its seqs
    checked: each one the last one + 1); then picks another."""

    wait_time = between(1, 3)
    weight = spectator_weight(SPECTATOR_SHARE)  # (set from --spectator-share at locust's init)

    @task
    def follow_a_game(self) -> None:
        live = self.post("Community/ListLiveGames", {})
        running = [g["summary"] for g in live.get("games") or ()
                   if (g.get("summary") or {}).get("status") == "GAME_STATUS_RUNNING"]
        if not running:
            return  # (none yet: look again after the wait)
        summary = random.choice(running)
        view = self.post("Community/GetSpectatorView", {"game_id": summary["game_id"]})
        if view.get("status") == "GAME_STATUS_RUNNING":  # (else it ended meanwhile: pick another)
            self.spectate(str(summary["game_id"]), str(summary.get("game", "")), int(view.get("seq") or 0))

    def row(self, name: str, length: int = 0, exception: Exception | None = None, started: float = 0.0) -> None:
        self.environment.events.request.fire(
            request_type="ws", name=name, response_length=length, exception=exception, context={},
            response_time=(time.perf_counter() - started) * 1000 if started else 0)

    def spectate(self, game_id: str, kind: str, after_seq: int) -> None:
        """Follow ``game_id`` from ``after_seq`` until its game_over (at most ``GIVE_UP_S``): a row per
        update, a failure row per gap in its seqs, and for a stream that fails or ends early."""
        from websockets.sync.client import connect

        last, over = after_seq, False
        give_up = time.monotonic() + GIVE_UP_S
        start = time.perf_counter()
        try:
            with connect(self.ws_url("/v1/Community/Spectate"), max_size=2**22, open_timeout=60, close_timeout=5,
                         ping_interval=None) as ws:
                ws.send(json.dumps({"game_id": game_id, "after_seq": str(after_seq)}))
                while not over and (left := give_up - time.monotonic()) > 0:
                    try:
                        raw = ws.recv(timeout=left)
                    except TimeoutError:
                        return  # a game longer than GIVE_UP_S: left, as a player leaves it
                    u = json.loads(raw)
                    if "error" in u:
                        raise RuntimeError(str(u["error"]))
                    self.row("Spectate update", len(raw))
                    seq, what = int(u.get("seq") or 0), str(u.get("kind", ""))
                    if what == "resync":  # (history before it no longer kept: said, so not a gap)
                        last = seq
                    elif seq:  # (0: a player's presence, no seq)
                        if seq != last + 1:
                            self.row("Spectate gap", exception=RuntimeError(
                                f"game {game_id}: seq {seq} after {last} (from after_seq {after_seq})"))
                        last = max(last, seq)
                    over = what == "game_over"
        except Exception as exc:  # a refused, failed or closed stream before game_over
            self.row("Spectate", exception=exc, started=start)
            return
        if over:
            self.environment.events.request.fire(request_type="game", name=f"{kind} spectated to the end",
                                                 response_time=0, response_length=0, exception=None, context={})
