"""The load client of the capacity bench: grpc.aio calls to a gateway from a process of its own.

    python -m bench.loadgen --address 127.0.0.1:PORT --seconds 10 --concurrency 64 [--rate R]

Modes (``--mode``):

* ``submit`` (default): creates Salvo games (2 seats, the host starts them with autopilot fill and a
  one-hour deadline, so rounds stay open), then submits ``SalvoOrders(random_placement=True)`` as
  drafts, rotating over the games (a player may resubmit 100 times a round: ``--games`` must exceed
  the submissions / 100), each with a unique idempotency key and the version GetView gave.
  Closed loop: ``--concurrency`` calls in flight, each worker sending its next call when its last
  returns. Open loop (``--rate R``): calls leave at Poisson (or ``--arrivals fixed``) times without
  waiting for each other; a call's latency runs from its *scheduled* send time (no coordinated
  omission). ``--echo``: no games (the target is ``bench.echo``); the same calls with made-up ids.
  ``--save-games FILE`` / ``--games-file FILE`` keep the games for another run.
* ``watch``: ``--streams`` Watch streams over two-player Salvo games whose both seats are real
  players (create, join by code, start), both watching; holds them and measures the fan-out: seat A
  submits a draft, the time until the ``submitted`` update for A arrives on B's stream.
* ``spectate``: ``--streams`` spectator streams (Community.Spectate, community.proto) over public Salvo
  games, ``--per-game`` each (the host a player of this process, seat B the autopilot, a one-hour
  deadline); each stream checks its seqs have no gap; holds them and measures the fan-out to
  spectators: the host submits a draft, the time until the ``submitted`` update for it arrives on
  each of the game's spectator streams (and on the last of them).
* ``create``: creates ``--games`` games of ``--kind`` lobby | salvo | archipelago and exits (they stay).
* ``lobby``: lobby calls in a closed loop (``--concurrency`` workers for ``--seconds``): create a game
  (Salvo, Archipelago of 4 and 8 seats, Arcmage in rotation), join it by code, start it with autopilot
  fill; each rpc's latency on its own.
* ``deadlines``: creates ``--games`` Salvo games (autopilot fill) whose round-0 deadlines fall in a
  window ``--lead`` .. ``--lead + --window`` seconds after the start of the run; watches a sample
  (``--sample``) and measures how late each ``round_closed`` arrives after the deadline its
  ``round_opened`` named.

A live progress line goes to stderr; the result to stdout (``--json``: one JSON object per line,
``{"event": ...}``; the last is ``"result"``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import resource
import secrets
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc

from archipelago.v1 import (
    archipelago_pb2,
    community_pb2,
    community_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    lobby_pb2,
    lobby_pb2_grpc,
    salvo_pb2,
)

ORDERS = salvo_pb2.SalvoOrders(random_placement=True)
SETUP_TIMEOUT_S = 120.0
RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED}


# ---------------------------------------------------------------------------------------------- output
class Out:
    """Where results go: JSON lines (for bench.capacity) or text, on stdout."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def event(self, name: str, **data: Any) -> None:
        if self.as_json:
            print(json.dumps({"event": name, **data}), flush=True)

    def text(self, line: str) -> None:
        if not self.as_json:
            print(line, flush=True)


class Progress:
    """A live ``\\r`` line on stderr, redrawn twice a second from ``render()`` until stopped."""

    def __init__(self, label: str, render: Callable[[float], str]) -> None:
        self.label, self.render = label, render
        self.t0 = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            self.draw()
            await asyncio.sleep(0.5)

    def draw(self) -> None:
        line = f"  {self.label}: {self.render(time.monotonic() - self.t0)}"
        print(f"\r{line:<110}", end="", file=sys.stderr, flush=True)

    def __enter__(self) -> Progress:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
        self.draw()
        print(file=sys.stderr, flush=True)


def percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    """count, mean, p50, p90, p99, p99.9 and max, in milliseconds (nearest rank)."""
    if not samples_s:
        return {"count": 0}
    xs = sorted(samples_s)
    n = len(xs)

    def q(p: float) -> float:
        return xs[min(n - 1, max(0, math.ceil(p * n) - 1))] * 1000.0

    return {"count": n, "mean_ms": sum(xs) / n * 1000.0, "p50_ms": q(0.50), "p90_ms": q(0.90),
            "p99_ms": q(0.99), "p999_ms": q(0.999), "max_ms": xs[-1] * 1000.0}


def error_code(err: grpc.aio.AioRpcError) -> str:
    for key, value in err.trailing_metadata() or ():
        if key == "error-code" and isinstance(value, str):
            return value
    return str(err.code().name)


def raise_fd_limit() -> int:
    """Raise the soft limit of open files to the hard limit (many streams); returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    return int(soft)


# ---------------------------------------------------------------------------------------------- channels
class Conn:
    """``n`` channels to one gateway, each its own TCP connection (a local subchannel pool), with stubs."""

    def __init__(self, address: str, n: int = 1) -> None:
        opts = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 16 << 20)]
        self.channels = [grpc.aio.insecure_channel(address, options=opts) for _ in range(max(1, n))]
        self.lobby: list[Any] = [lobby_pb2_grpc.LobbyStub(c) for c in self.channels]
        self.game: list[Any] = [game_pb2_grpc.GameStub(c) for c in self.channels]
        self.community: list[Any] = [community_pb2_grpc.CommunityStub(c)
                                     for c in self.channels]
        self._i = 0

    def pick(self) -> int:
        self._i += 1
        return self._i % len(self.channels)

    async def ready(self, timeout_s: float = 30.0) -> None:
        async with asyncio.timeout(timeout_s):
            await asyncio.gather(*(c.channel_ready() for c in self.channels))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.channels))


def auth(secret: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {secret}"),)


async def retried(make: Callable[[], Awaitable[Any]], ok_after_retry: set[grpc.StatusCode] | None = None,
                  attempts: int = 6) -> Any:
    """A setup call, retried on UNAVAILABLE / RESOURCE_EXHAUSTED / DEADLINE_EXCEEDED (the calls carry
    request ids, so a retry is safe). ``ok_after_retry``: codes that mean a lost first answer worked."""
    for i in range(attempts):
        try:
            return await make()
        except grpc.aio.AioRpcError as err:
            if i and ok_after_retry and err.code() in ok_after_retry:
                return None
            if err.code() not in RETRYABLE or i == attempts - 1:
                raise
            await asyncio.sleep(min(5.0, 0.2 * 2 ** i))
    raise AssertionError("unreachable")


@dataclass
class Seat:
    """A player of a game: what a submission needs."""

    game_id: str
    secret: str
    version: int
    seat: int = 0


@dataclass
class Setup:
    """Counts of what a setup created (for the players/games held figures)."""

    games: int = 0
    players: int = 0  # seats taken, autopilot seats included
    humans: int = 0  # seats with a secret held by this process
    failed: int = 0
    errors: Counter[str] = field(default_factory=Counter)


async def create_game(conn: Conn, kind: str, *, deadline_s: float, start: bool, fill: bool = True,
                      seats: int = 2, nickname: str = "host", public: bool = False
                      ) -> tuple[lobby_pb2.CreateGameResponse, int]:
    """Create (and start) one game (``public``: one spectators may follow); returns the creation
    answer and the seats it has."""
    i = conn.pick()
    opts: dict[str, Any] = {}
    game = "archipelago" if kind == "archipelago" else "salvo"
    if game == "archipelago":
        opts["archipelago"] = archipelago_pb2.ArchipelagoOptions()
    req = lobby_pb2.CreateGameRequest(game=game, seats=seats, nickname=nickname, deadline_seconds=deadline_s,
                                      request_id=secrets.token_hex(12), public=public, **opts)
    created: lobby_pb2.CreateGameResponse = await retried(
        lambda: conn.lobby[i].CreateGame(req, timeout=SETUP_TIMEOUT_S))
    if start:
        sreq = lobby_pb2.StartGameRequest(game_id=created.game_id, fill_with_autopilot=fill)
        await retried(lambda: conn.lobby[i].StartGame(sreq, metadata=auth(created.secret), timeout=SETUP_TIMEOUT_S),
                      ok_after_retry={grpc.StatusCode.FAILED_PRECONDITION})
    return created, seats


async def get_view(conn: Conn, game_id: str, secret: str) -> game_pb2.GetViewResponse:
    i = conn.pick()
    view: game_pb2.GetViewResponse = await retried(
        lambda: conn.game[i].GetView(game_pb2.GetViewRequest(game_id=game_id), metadata=auth(secret),
                                     timeout=SETUP_TIMEOUT_S))
    return view


async def bounded(n: int, jobs: int, make: Callable[[int], Awaitable[None]]) -> None:
    """Run ``make(0..n-1)`` with at most ``jobs`` at a time."""
    it = iter(range(n))

    async def runner() -> None:
        for i in it:
            await make(i)

    await asyncio.gather(*(runner() for _ in range(min(jobs, n))))


def creation_line(setup: Setup, total: int) -> Callable[[float], str]:
    def render(el: float) -> str:
        return (f"{el:5.1f}s  {setup.games:6d}/{total} games  {setup.games / max(el, 1e-9):6.0f} games/s"
                f"  failed {setup.failed}")
    return render


async def salvo_seats(conn: Conn, n: int, jobs: int = 32, label: str = "creating games") -> tuple[list[Seat], Setup]:
    """``n`` started Salvo games (autopilot seat B, one-hour deadline) and their hosts' seats."""
    setup = Setup()
    out: list[Seat] = []

    async def make(i: int) -> None:
        try:
            created, seats = await create_game(conn, "salvo", deadline_s=3600, start=True, nickname=f"h{i}")
            view = await get_view(conn, created.game_id, created.secret)
        except grpc.aio.AioRpcError as err:
            setup.failed += 1
            setup.errors[error_code(err)] += 1
            return
        out.append(Seat(created.game_id, created.secret, view.version))
        setup.games += 1
        setup.players += seats
        setup.humans += 1

    with Progress(label, creation_line(setup, n)):
        await bounded(n, jobs, make)
    return out, setup


# ---------------------------------------------------------------------------------------------- submit
@dataclass
class Stats:
    """What one run of submissions measured."""

    mode: str
    seconds: float = 0.0
    sent: int = 0
    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    offered_per_s: float = 0.0
    dropped: int = 0  # open loop: arrivals not sent because max_in_flight calls were pending
    drain_s: float = 0.0  # open loop: time after the last arrival until the last answer
    unfinished: int = 0

    def summary(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in ("latencies", "errors")}
        d["errors"] = dict(self.errors)
        d["per_second"] = self.ok / self.seconds if self.seconds else 0.0
        d["latency"] = percentiles(self.latencies)
        return d


class Submitter:
    """One draft submission per call, rotating over the seats (and channels)."""

    def __init__(self, conn: Conn, seats: Sequence[Seat]) -> None:
        self.conn, self.seats = conn, seats
        self.run = secrets.token_hex(4)
        self.metadata = [auth(s.secret) for s in seats]
        self.n = 0

    async def one(self, stats: Stats) -> float | None:
        """Send one submission; returns the perf_counter time its answer came, or None on an error."""
        i = self.n
        self.n += 1
        k = i % len(self.seats)
        seat = self.seats[k]
        req = game_pb2.SubmitOrdersRequest(game_id=seat.game_id, version=seat.version,
                                           idempotency_key=f"{self.run}-{i}", draft=True, salvo=ORDERS)
        stats.sent += 1
        try:
            await self.conn.game[i % len(self.conn.channels)].SubmitOrders(req, metadata=self.metadata[k])
        except grpc.aio.AioRpcError as err:
            stats.errors[error_code(err)] += 1
            return None
        stats.ok += 1
        return time.perf_counter()


def rate_line(stats: Stats, extra: Callable[[], str] = lambda: "") -> Callable[[float], str]:
    def render(el: float) -> str:
        errs = sum(stats.errors.values())
        return f"{el:5.1f}s  {stats.ok:8d} ok  {stats.ok / max(el, 1e-9):7.0f}/s  errors {errs}{extra()}"
    return render


async def closed_loop(sub: Submitter, seconds: float, concurrency: int, label: str = "closed loop") -> Stats:
    stats = Stats("closed")
    stop_at = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            done = await sub.one(stats)
            if done is not None:
                stats.latencies.append(done - t0)

    with Progress(label, rate_line(stats)):
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        stats.seconds = time.perf_counter() - t0
    return stats


async def open_loop(sub: Submitter, seconds: float, rate: float, *, poisson: bool = True,
                    max_in_flight: int = 20_000, label: str = "open loop", seed: int = 1) -> Stats:
    """Calls leave at their scheduled times whatever the answers do; latency from the scheduled time."""
    stats = Stats("open", offered_per_s=rate)
    rng = random.Random(seed)
    pending: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()

    async def call(scheduled: float) -> None:
        done = await sub.one(stats)
        if done is not None:
            stats.latencies.append(done - scheduled)

    def extra() -> str:
        return f"  in flight {len(pending)}  offered {rate:.0f}/s"

    with Progress(label, rate_line(stats, extra)):
        t0 = time.perf_counter()
        end = t0 + seconds
        next_at = t0
        while next_at < end:
            now = time.perf_counter()
            while next_at <= now and next_at < end:
                if len(pending) >= max_in_flight:
                    stats.dropped += 1
                else:
                    task = loop.create_task(call(next_at))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
                next_at += rng.expovariate(rate) if poisson else 1.0 / rate
            if next_at < end:
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        arrivals_end = time.perf_counter()
        if pending:
            _, still = await asyncio.wait(set(pending), timeout=max(30.0, seconds))
            stats.unfinished = len(still)
            for t in still:
                t.cancel()
        finished = time.perf_counter()
        stats.drain_s = finished - arrivals_end
        # The achieved rate: answers over the time from the first arrival to the last answer.
        stats.seconds = finished - t0
    return stats


# ---------------------------------------------------------------------------------------------- fan-out
class Fanned(Protocol):
    """A game the fan-out submits to: its sender's seat and the submission on its way."""

    game_id: str
    sent_at: float | None  # perf_counter time of the outstanding submission (None: none)
    seen: int  # the game's streams that have seen it

    @property
    def sender(self) -> Seat: ...


class FanOut:
    """Drafts submitted at a fixed rate to games taken in turn, one outstanding per game, each timed
    from its sending until the game's streams saw it (the streams' readers call :meth:`settle`)."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.stats = Stats("fanout")
        self.run = secrets.token_hex(4)
        self.sent = 0
        self.busy = 0  # turns skipped: the game's last submission not yet seen
        self.outstanding = 0
        self.sending_done = False
        self.all_seen = asyncio.Event()

    def settle(self, g: Fanned) -> None:
        """``g``'s submission was seen (or will never be): its next may go."""
        g.sent_at = None
        self.outstanding -= 1
        if self.sending_done and self.outstanding == 0:
            self.all_seen.set()

    async def submit(self, g: Fanned, i: int) -> None:
        seat = g.sender
        req = game_pb2.SubmitOrdersRequest(game_id=g.game_id, version=seat.version,
                                           idempotency_key=f"{self.run}-{i}", draft=True, salvo=ORDERS)
        g.sent_at, g.seen = time.perf_counter(), 0
        self.outstanding += 1
        self.stats.sent += 1
        try:
            await self.conn.game[i % len(self.conn.channels)].SubmitOrders(req, metadata=auth(seat.secret))
            self.stats.ok += 1
        except grpc.aio.AioRpcError as err:
            self.stats.errors[error_code(err)] += 1
            if g.sent_at is not None:
                self.settle(g)

    async def paced(self, games: Sequence[Fanned], rate: float, seconds: float) -> int:
        """Submit to ``games`` in turn at ``rate`` a second for ``seconds``, then wait until every
        submission was seen (10 s at most); returns how many were never seen."""
        loop = asyncio.get_running_loop()
        pend: set[asyncio.Task[None]] = set()
        t0 = time.perf_counter()
        end = t0 + seconds
        next_at = t0
        while next_at < end and games:
            g = games[self.sent % len(games)]
            if g.sent_at is None:
                task = loop.create_task(self.submit(g, self.sent))
                pend.add(task)
                task.add_done_callback(pend.discard)
            else:
                self.busy += 1
            self.sent += 1
            next_at += 1.0 / rate
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        self.sending_done = True
        if self.outstanding == 0:
            self.all_seen.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.all_seen.wait(), timeout=10.0)
        return sum(1 for g in games if g.sent_at is not None)


async def streams_done(out: Out, result: dict[str, Any], wait_stdin: bool, calls: Sequence[Any],
                       tasks: Sequence[asyncio.Task[None]]) -> dict[str, Any]:
    """A streams mode's end: its figures said (``fanout_done``), the streams held until bench.capacity,
    which measures the gateway meanwhile, says go (``wait_stdin``), then cancelled and their readers
    awaited."""
    out.event("fanout_done", **result)
    if wait_stdin:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for call in calls:
        call.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result


# ---------------------------------------------------------------------------------------------- watch
@dataclass
class Pair:
    """A two-player game with both seats real: A submits, B watches for A's ``submitted``."""

    game_id: str
    a: Seat
    b_secret: str
    sent_at: float | None = None  # perf_counter time of A's outstanding submission
    seen: int = 0  # (B's stream alone is measured: settled at its first sight)

    @property
    def sender(self) -> Seat:
        return self.a


async def watch_mode(conn: Conn, streams: int, seconds: float, fanout_rate: float, jobs: int, out: Out,
                     wait_stdin: bool) -> dict[str, Any]:
    n_games = max(1, math.ceil(streams / 2))
    setup = Setup()
    pairs: list[Pair] = []

    async def make(i: int) -> None:
        try:
            created, _ = await create_game(conn, "salvo", deadline_s=3600, start=False, nickname=f"a{i}")
            j = conn.pick()
            jreq = lobby_pb2.JoinGameRequest(code=created.code, nickname=f"b{i}", request_id=secrets.token_hex(12))
            joined = await retried(lambda: conn.lobby[j].JoinGame(jreq, timeout=SETUP_TIMEOUT_S))
            sreq = lobby_pb2.StartGameRequest(game_id=created.game_id)
            await retried(lambda: conn.lobby[j].StartGame(sreq, metadata=auth(created.secret),
                                                          timeout=SETUP_TIMEOUT_S),
                          ok_after_retry={grpc.StatusCode.FAILED_PRECONDITION})
            view = await get_view(conn, created.game_id, created.secret)
        except grpc.aio.AioRpcError as err:
            setup.failed += 1
            setup.errors[error_code(err)] += 1
            return
        pairs.append(Pair(created.game_id, Seat(created.game_id, created.secret, view.version, 0), joined.secret))
        setup.games += 1
        setup.players += 2
        setup.humans += 2

    t_create = time.perf_counter()
    with Progress("watch: creating games (create, join by code, start)", creation_line(setup, n_games)):
        await bounded(n_games, jobs, make)
    create_s = time.perf_counter() - t_create

    # Open the streams: both seats of every game (B's stream is the one measured).
    fanout: list[float] = []
    held = 0
    opened_fail: Counter[str] = Counter()
    by_game: dict[str, Pair] = {p.game_id: p for p in pairs}
    first_update: dict[int, asyncio.Future[None]] = {}
    calls: list[Any] = []
    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    fan = FanOut(conn)  # A submits a draft in games taken in turn, at a fixed rate, one outstanding per game

    async def reader(k: int, pair: Pair, secret: str, is_b: bool) -> None:
        nonlocal held
        call = conn.game[k % len(conn.channels)].Watch(game_pb2.WatchRequest(game_id=pair.game_id, after_seq=0),
                                                       metadata=auth(secret))
        calls.append(call)
        fut = first_update[k]
        try:
            async for upd in call:
                if not fut.done():
                    held += 1
                    fut.set_result(None)
                if is_b and upd.kind == "submitted" and upd.seat == pair.a.seat and pair.sent_at is not None:
                    fanout.append(time.perf_counter() - pair.sent_at)
                    fan.settle(pair)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                opened_fail[error_code(err)] += 1
        finally:
            if fut.done():
                held -= 1
            else:
                fut.set_result(None)

    want = len(pairs) * 2
    with Progress("watch: opening streams",
                  lambda el: f"{el:5.1f}s  {held:6d}/{want} streams held  failed {sum(opened_fail.values())}"):
        # Open them in waves of a few hundred, each stream counted once its first update arrived.
        k = 0
        wave = 500
        for start in range(0, len(pairs), wave // 2):
            futs = []
            for pair in pairs[start:start + wave // 2]:
                for is_b, secret in ((False, pair.a.secret), (True, pair.b_secret)):
                    first_update[k] = loop.create_future()
                    futs.append(first_update[k])
                    tasks.append(loop.create_task(reader(k, pair, secret, is_b)))
                    k += 1
            await asyncio.gather(*futs)
    streams_held = held
    out.event("holding", streams=streams_held, games=setup.games, players=setup.players)

    def fan_line(el: float) -> str:
        p = percentiles(fanout[-2000:])
        return (f"{el:5.1f}s  {fan.stats.ok:6d} submitted  {len(fanout):6d} seen on B  "
                f"p50 {p.get('p50_ms', 0):.1f} ms  p99 {p.get('p99_ms', 0):.1f} ms  streams {held}")

    with Progress(f"watch: fan-out at {fanout_rate:.0f}/s under {streams_held} streams", fan_line):
        missing = await fan.paced(list(by_game.values()), fanout_rate, seconds)
    result = {"mode": "watch", "streams_wanted": want, "streams_held": streams_held, "streams_held_at_end": held,
              "stream_errors": dict(opened_fail), "games": setup.games, "players": setup.players,
              "setup_failed": setup.failed, "setup_errors": dict(setup.errors), "create_s": create_s,
              "games_per_s": setup.games / create_s if create_s else 0.0,
              "fanout_rate": fanout_rate, "fanout_seconds": seconds, "submissions": fan.stats.summary(),
              "fanout": percentiles(fanout), "fanout_missing": missing, "fanout_skipped_busy": fan.busy}
    return await streams_done(out, result, wait_stdin, calls, tasks)


# ---------------------------------------------------------------------------------------------- spectate
@dataclass
class Spectated:
    """A public game with spectators: its host submits, its spectators' streams wait for the ``submitted``."""

    game_id: str
    host: Seat
    streams: int = 0  # its spectator streams open (first update seen, not ended)
    sent_at: float | None = None  # perf_counter time of the host's outstanding submission
    seen: int = 0  # spectator streams that have seen the outstanding submission's update

    @property
    def sender(self) -> Seat:
        return self.host


async def spectate_mode(conn: Conn, streams: int, per_game: int, seconds: float, fanout_rate: float, jobs: int,
                        out: Out, wait_stdin: bool) -> dict[str, Any]:
    """``streams`` Spectate streams, ``per_game`` on each public game (started: the host here, the
    autopilot seat B, one-hour deadline); then the fan-out to them under that load."""
    n_games = max(1, math.ceil(streams / max(1, per_game)))
    setup = Setup()
    games: list[Spectated] = []

    async def make(i: int) -> None:
        try:
            created, seats = await create_game(conn, "salvo", deadline_s=3600, start=True, public=True,
                                               nickname=f"s{i}")
            view = await get_view(conn, created.game_id, created.secret)
        except grpc.aio.AioRpcError as err:
            setup.failed += 1
            setup.errors[error_code(err)] += 1
            return
        games.append(Spectated(created.game_id, Seat(created.game_id, created.secret, view.version)))
        setup.games += 1
        setup.players += seats
        setup.humans += 1

    t_create = time.perf_counter()
    with Progress("spectate: creating public games (host + autopilot, started)", creation_line(setup, n_games)):
        await bounded(n_games, jobs, make)
    create_s = time.perf_counter() - t_create
    if not games:
        raise SystemExit(f"spectate: no game created ({dict(setup.errors)})")

    fanout: list[float] = []  # every spectator stream's arrival of a submission's update
    fanout_last: list[float] = []  # the arrival on the last of its game's streams
    held = 0
    gaps = 0
    stream_errors: Counter[str] = Counter()
    first_update: dict[int, asyncio.Future[None]] = {}
    calls: list[Any] = []
    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    fan = FanOut(conn)  # the host submits a draft in games taken in turn, at a fixed rate

    def saw(g: Spectated, now: float) -> None:
        """One more of ``g``'s streams saw the outstanding submission (or ended): settled once all have."""
        if g.sent_at is None:
            return
        g.seen += 1
        if g.seen >= g.streams:
            fanout_last.append(now - g.sent_at)
            fan.settle(g)

    async def reader(k: int, g: Spectated) -> None:
        nonlocal held, gaps
        call = conn.community[k % len(conn.channels)].Spectate(
            community_pb2.SpectateRequest(game_id=g.game_id, after_seq=0))
        calls.append(call)
        fut = first_update[k]
        last = 0
        try:
            async for upd in call:
                if not fut.done():
                    held += 1
                    g.streams += 1
                    fut.set_result(None)
                if upd.seq:  # (0: a player's presence, no seq)
                    if upd.kind != "resync" and upd.seq != last + 1:
                        gaps += 1
                    last = upd.seq
                if upd.kind == "submitted" and upd.seat == g.host.seat and g.sent_at is not None:
                    now = time.perf_counter()
                    fanout.append(now - g.sent_at)
                    saw(g, now)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                stream_errors[error_code(err)] += 1
        finally:
            if fut.done():
                held -= 1
                g.streams -= 1
                if g.sent_at is not None and g.seen >= g.streams:  # the others have all seen it (unmeasured)
                    fan.settle(g)
            else:
                fut.set_result(None)

    t_open = time.perf_counter()
    with Progress("spectate: opening spectator streams",
                  lambda el: f"{el:5.1f}s  {held:6d}/{streams} spectator streams held over {len(games)} games  "
                             f"failed {sum(stream_errors.values())}  seq gaps {gaps}"):
        wave = 500  # opened in waves, each stream counted once its first update arrived
        for start in range(0, streams, wave):
            futs = []
            for k in range(start, min(streams, start + wave)):
                first_update[k] = loop.create_future()
                futs.append(first_update[k])
                tasks.append(loop.create_task(reader(k, games[k % len(games)])))
            await asyncio.gather(*futs)
    open_s = time.perf_counter() - t_open
    streams_held = held
    out.event("holding", streams=streams_held, games=setup.games, players=setup.players)

    def fan_line(el: float) -> str:
        p = percentiles(fanout[-5000:])
        return (f"{el:5.1f}s  {fan.stats.ok:6d} submitted  {len(fanout):7d} seen by spectators  "
                f"p50 {p.get('p50_ms', 0):.1f} ms  p99 {p.get('p99_ms', 0):.1f} ms  streams {held}  gaps {gaps}")

    watched = [g for g in games if g.streams > 0]
    with Progress(f"spectate: fan-out at {fanout_rate:.0f}/s under {streams_held} spectator streams", fan_line):
        missing = await fan.paced(watched, fanout_rate, seconds)
    result = {"mode": "spectate", "streams_wanted": streams, "streams_held": streams_held,
              "streams_held_at_end": held, "stream_errors": dict(stream_errors), "seq_gaps": gaps,
              "games": setup.games, "per_game": per_game, "players": setup.players, "setup_failed": setup.failed,
              "setup_errors": dict(setup.errors), "create_s": create_s, "open_s": open_s,
              "games_per_s": setup.games / create_s if create_s else 0.0, "fanout_rate": fanout_rate,
              "fanout_seconds": seconds, "submissions": fan.stats.summary(), "fanout": percentiles(fanout),
              "fanout_last": percentiles(fanout_last), "fanout_missing": missing, "fanout_skipped_busy": fan.busy}
    return await streams_done(out, result, wait_stdin, calls, tasks)


# ---------------------------------------------------------------------------------------------- create
async def create_mode(conn: Conn, kind: str, n: int, jobs: int, deadline_s: float) -> dict[str, Any]:
    """``n`` games of ``kind``: lobby (created, not started), salvo or archipelago (8 seats) started with fill."""
    setup = Setup()
    seats = 8 if kind == "archipelago" else 2

    async def make(i: int) -> None:
        try:
            _, s = await create_game(conn, kind, deadline_s=deadline_s, start=kind != "lobby", seats=seats,
                                     nickname=f"m{i}")
        except grpc.aio.AioRpcError as err:
            setup.failed += 1
            setup.errors[error_code(err)] += 1
            return
        setup.games += 1
        setup.players += s if kind != "lobby" else 1
        setup.humans += 1

    t0 = time.perf_counter()
    with Progress(f"creating {n} {kind} games", creation_line(setup, n)):
        await bounded(n, jobs, make)
    el = time.perf_counter() - t0
    return {"mode": "create", "kind": kind, "games": setup.games, "players": setup.players,
            "failed": setup.failed, "errors": dict(setup.errors), "seconds": el,
            "games_per_s": setup.games / el if el else 0.0}


# ---------------------------------------------------------------------------------------------- lobby
LOBBY_MIX = (("salvo", 2), ("archipelago", 4), ("arcmage", 2), ("salvo", 2), ("archipelago", 8))


async def lobby_mode(conn: Conn, seconds: float, concurrency: int) -> dict[str, Any]:
    """Lobby calls in a closed loop: each worker creates a game (kinds and sizes in ``LOBBY_MIX``
    rotation), joins it by code with a second player and starts it with autopilot fill; each rpc's
    latency is its own row. Meant to run beside play (the capacity bench's ``lobby`` phase)."""
    lat: dict[str, list[float]] = {"CreateGame": [], "JoinGame": [], "StartGame": []}
    errors: Counter[str] = Counter()
    games = 0
    stop = time.monotonic() + seconds
    turn = 0

    async def timed(rpc: str, make: Callable[..., Awaitable[Any]], *args: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await make(*args, **kw)
        finally:
            lat[rpc].append(time.perf_counter() - t0)

    async def worker() -> None:
        nonlocal games, turn
        while time.monotonic() < stop:
            game, seats = LOBBY_MIX[turn % len(LOBBY_MIX)]
            turn += 1
            i = conn.pick()
            try:
                req = lobby_pb2.CreateGameRequest(game=game, seats=seats, nickname="host", deadline_seconds=3600,
                                                  request_id=secrets.token_hex(12))
                made = await timed("CreateGame", conn.lobby[i].CreateGame, req, timeout=SETUP_TIMEOUT_S)
                jreq = lobby_pb2.JoinGameRequest(code=made.code, nickname="guest", request_id=secrets.token_hex(12))
                await timed("JoinGame", conn.lobby[i].JoinGame, jreq, timeout=SETUP_TIMEOUT_S)
                sreq = lobby_pb2.StartGameRequest(game_id=made.game_id, fill_with_autopilot=True)
                await timed("StartGame", conn.lobby[i].StartGame, sreq, metadata=auth(made.secret),
                            timeout=SETUP_TIMEOUT_S)
                games += 1
            except grpc.aio.AioRpcError as err:
                errors[error_code(err)] += 1

    def line(el: float) -> str:
        return f"lobby calls: {games:,} games created, joined and started; {sum(errors.values())} errors"

    t0 = time.perf_counter()
    with Progress("lobby calls", line):
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    el = time.perf_counter() - t0
    return {"mode": "lobby", "games": games, "seconds": el, "errors": dict(errors),
            "latency": {rpc: percentiles(xs) for rpc, xs in lat.items()}}


# ---------------------------------------------------------------------------------------------- deadlines
async def deadlines_mode(conn: Conn, n: int, sample: int, lead: float, window: float, jobs: int,
                         out: Out) -> dict[str, Any]:
    """Games whose round-0 deadlines fall uniformly in [t0 + lead, t0 + lead + window]."""
    setup = Setup()
    t0 = time.time()
    rng = random.Random(7)
    targets = [t0 + lead + window * rng.random() for _ in range(n)]
    every = max(1, n // max(1, sample)) if sample else 0
    clamped = 0
    lateness: list[float] = []
    early: list[str] = []
    watch_errors: Counter[str] = Counter()
    watchers: list[asyncio.Task[None]] = []
    opened = 0
    loop = asyncio.get_running_loop()

    async def watch(game_id: str, secret: str) -> None:
        nonlocal opened
        deadline_ms = 0
        call = conn.game[conn.pick()].Watch(game_pb2.WatchRequest(game_id=game_id, after_seq=0),
                                            metadata=auth(secret))
        opened += 1
        try:
            async for upd in call:
                if upd.kind == "round_opened" and upd.round == 0:
                    deadline_ms = int(upd.data["deadline_unix_ms"])
                elif upd.kind == "round_closed" and upd.round == 0:
                    arrived = time.time()
                    if upd.data["early"]:
                        early.append(game_id)
                    elif deadline_ms:
                        lateness.append(arrived - deadline_ms / 1000.0)
                    break
        except grpc.aio.AioRpcError as err:
            watch_errors[error_code(err)] += 1
        finally:
            call.cancel()

    async def make(i: int) -> None:
        nonlocal clamped
        deadline_s = targets[i] - time.time()
        if deadline_s < 1.0:
            clamped += 1
            deadline_s = 1.0
        try:
            created, s = await create_game(conn, "salvo", deadline_s=deadline_s, start=True, nickname=f"d{i}")
        except grpc.aio.AioRpcError as err:
            setup.failed += 1
            setup.errors[error_code(err)] += 1
            return
        setup.games += 1
        setup.players += s
        if every and i % every == 0 and len(watchers) < sample:
            watchers.append(loop.create_task(watch(created.game_id, created.secret)))

    def line(el: float) -> str:
        return (f"{el:5.1f}s  {setup.games:6d}/{n} games  clamped {clamped}  watched {opened}  "
                f"closed seen {len(lateness) + len(early)}")

    with Progress(f"deadlines: creating {n} games due {lead:.0f}-{lead + window:.0f} s from now", line):
        await bounded(n, jobs, make)
    created_s = time.time() - t0
    out.event("created", games=setup.games, players=setup.players, seconds=created_s)
    with Progress("deadlines: waiting for the round-0 deadlines", line):
        if watchers:
            await asyncio.wait(watchers, timeout=max(30.0, lead + window + 170.0 - (time.time() - t0)))
        for w in watchers:
            w.cancel()
    lat = percentiles(lateness)
    within_1s = sum(1 for x in lateness if x <= 1.0) / len(lateness) if lateness else 0.0
    return {"mode": "deadlines", "games": setup.games, "players": setup.players, "failed": setup.failed,
            "errors": dict(setup.errors), "creation_seconds": created_s, "clamped_to_1s": clamped,
            "lead_s": lead, "window_s": window, "sample": len(watchers), "lateness": lat,
            "within_1s": within_1s, "closed_early": len(early), "watch_errors": dict(watch_errors),
            "min_ms": min(lateness) * 1000.0 if lateness else 0.0}


# ---------------------------------------------------------------------------------------------- main
def echo_seats(n: int) -> list[Seat]:
    return [Seat(f"echo{i:05d}", f"echo-secret-{i}", 1) for i in range(n)]


def save_seats(path: Path, seats: Sequence[Seat]) -> None:
    path.write_text(json.dumps([asdict(s) for s in seats]))


def load_seats(path: Path) -> list[Seat]:
    return [Seat(**d) for d in json.loads(path.read_text())]


def print_stats(out: Out, s: dict[str, Any], what: str) -> None:
    lat = s["latency"]
    out.text(f"{what}: {s['ok']} ok in {s['seconds']:.1f} s = {s['per_second']:.0f}/s; errors {s['errors'] or 0}")
    if lat.get("count"):
        out.text(f"  latency p50 {lat['p50_ms']:.1f} ms  p90 {lat['p90_ms']:.1f} ms  p99 {lat['p99_ms']:.1f} ms  "
                 f"max {lat['max_ms']:.1f} ms")
    if s["mode"] == "open":
        out.text(f"  offered {s['offered_per_s']:.0f}/s; dropped {s['dropped']}, unfinished {s['unfinished']}, "
                 f"drain {s['drain_s']:.1f} s after the last arrival")


async def run(a: argparse.Namespace) -> dict[str, Any]:
    out = Out(a.json)
    fds = raise_fd_limit()
    conn = Conn(a.address, a.channels)
    try:
        await conn.ready()
        if a.mode == "watch":
            r = await watch_mode(conn, a.streams, a.seconds, a.fanout_rate, a.jobs, out, a.wait_stdin)
            f = r["fanout"]
            out.text(f"watch: {r['streams_held']} streams held over {r['games']} games (open files limit {fds})")
            if f.get("count"):
                out.text(f"  fan-out (A's submission sent -> its 'submitted' on B's stream): {f['count']} samples, "
                         f"p50 {f['p50_ms']:.1f} ms  p99 {f['p99_ms']:.1f} ms  max {f['max_ms']:.1f} ms")
            return r
        if a.mode == "spectate":
            r = await spectate_mode(conn, a.streams, a.per_game, a.seconds, a.fanout_rate, a.jobs, out, a.wait_stdin)
            f, last = r["fanout"], r["fanout_last"]
            out.text(f"spectate: {r['streams_held']} spectator streams held over {r['games']} games "
                     f"({r['per_game']} a game; open files limit {fds}); seq gaps {r['seq_gaps']}; stream errors "
                     f"{r['stream_errors'] or 0}")
            if f.get("count"):
                out.text(f"  fan-out (the host's submission sent -> its 'submitted' on a spectator's stream): "
                         f"{f['count']} samples, p50 {f['p50_ms']:.1f} ms  p99 {f['p99_ms']:.1f} ms  "
                         f"max {f['max_ms']:.1f} ms")
            if last.get("count"):
                out.text(f"  to the last spectator of the game: p50 {last['p50_ms']:.1f} ms  "
                         f"p99 {last['p99_ms']:.1f} ms")
            return r
        if a.mode == "create":
            r = await create_mode(conn, a.kind, a.games, a.jobs, a.deadline)
            out.text(f"created {r['games']} {a.kind} games in {r['seconds']:.1f} s ({r['games_per_s']:.0f}/s); "
                     f"failed {r['failed']}")
            return r
        if a.mode == "lobby":
            r = await lobby_mode(conn, a.seconds, a.concurrency)
            out.text(f"lobby: {r['games']} games created, joined and started in {r['seconds']:.1f} s; errors "
                     f"{r['errors'] or 0}")
            for rpc, q in r["latency"].items():
                if q.get("count"):
                    out.text(f"  {rpc}: p50 {q['p50_ms']:.1f} ms  p99 {q['p99_ms']:.1f} ms  max {q['max_ms']:.1f} ms")
            return r
        if a.mode == "deadlines":
            r = await deadlines_mode(conn, a.games, a.sample, a.lead, a.window, a.jobs, out)
            lat = r["lateness"]
            out.text(f"deadlines: {r['games']} games; {lat.get('count', 0)} of {r['sample']} watched closed at "
                     f"the deadline; within 1 s: {r['within_1s']:.1%}")
            if lat.get("count"):
                out.text(f"  lateness p50 {lat['p50_ms']:.0f} ms  p99 {lat['p99_ms']:.0f} ms  "
                         f"max {lat['max_ms']:.0f} ms")
            return r
        # submit
        setup: Setup | None = None
        if a.echo:
            seats = echo_seats(a.games)
        elif a.games_file:
            seats = load_seats(Path(a.games_file))
        else:
            seats, setup = await salvo_seats(conn, a.games, a.jobs)
            if a.save_games:
                save_seats(Path(a.save_games), seats)
            out.event("created", games=setup.games, players=setup.players, failed=setup.failed,
                      errors=dict(setup.errors))
        if not seats:
            raise SystemExit("no games to submit to")
        sub = Submitter(conn, seats)
        result: dict[str, Any] = {"mode": "submit", "games": len(seats), "echo": a.echo}
        if a.rate:
            s = (await open_loop(sub, a.seconds, a.rate, poisson=a.arrivals == "poisson",
                                 max_in_flight=a.max_in_flight)).summary()
            print_stats(out, s, f"open loop, {a.arrivals} arrivals at {a.rate:.0f}/s")
        else:
            s = (await closed_loop(sub, a.seconds, a.concurrency)).summary()
            print_stats(out, s, f"closed loop, {a.concurrency} in flight")
        result.update(s)
        if setup is not None:
            result["players"] = setup.players
        return result
    finally:
        await conn.close()


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.loadgen", description=(__doc__ or "").split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--address", default="127.0.0.1:50051", help="the gateway's gRPC HOST:PORT")
    ap.add_argument("--mode", choices=["submit", "watch", "spectate", "create", "deadlines", "lobby"],
                    default="submit")
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="submit: duration; watch, spectate: fan-out duration")
    ap.add_argument("--concurrency", type=int, default=64, help="closed loop: calls in flight")
    ap.add_argument("--rate", type=float, default=0.0, help="open loop at this many calls/s (0: closed loop)")
    ap.add_argument("--arrivals", choices=["poisson", "fixed"], default="poisson")
    ap.add_argument("--max-in-flight", type=int, default=20_000, help="open loop: beyond this, arrivals are dropped")
    ap.add_argument("--games", type=int, default=0,
                    help="submit: games to rotate over (default 600); create/deadlines: games to create")
    ap.add_argument("--channels", type=int, default=0,
                    help="gRPC channels (TCP connections); default 1, watch and spectate 8")
    ap.add_argument("--jobs", type=int, default=32, help="setup calls in flight")
    ap.add_argument("--echo", action="store_true", help="submit to bench.echo: no games, made-up ids")
    ap.add_argument("--save-games", help="submit: write the games created to this file")
    ap.add_argument("--games-file", help="submit: use the games of this file instead of creating them")
    ap.add_argument("--streams", type=int, default=10_000, help="watch, spectate: streams to hold")
    ap.add_argument("--per-game", dest="per_game", type=int, default=20, help="spectate: spectator streams a game")
    ap.add_argument("--fanout-rate", type=float, default=100.0,
                    help="watch: A's submissions per second; spectate: the hosts'")
    ap.add_argument("--wait-stdin", action="store_true",
                    help="watch, spectate: hold the streams until a line on stdin")
    ap.add_argument("--kind", choices=["lobby", "salvo", "archipelago"], default="salvo", help="create: kind")
    ap.add_argument("--deadline", type=float, default=3600.0, help="create: round deadline in seconds")
    ap.add_argument("--sample", type=int, default=500, help="deadlines: games watched")
    ap.add_argument("--lead", type=float, default=60.0, help="deadlines: first deadline, s after the start")
    ap.add_argument("--window", type=float, default=30.0, help="deadlines: deadlines spread over this many s")
    ap.add_argument("--json", action="store_true", help="JSON lines on stdout (for bench.capacity)")
    a = ap.parse_args(argv)
    if not a.games:
        a.games = {"submit": 600, "create": 1000, "deadlines": 10_000}.get(a.mode, 0)
    if not a.channels:
        a.channels = 8 if a.mode in ("watch", "spectate") else 1
    return a


def main(argv: Sequence[str] | None = None) -> None:
    a = parse(argv)
    result = asyncio.run(run(a))
    Out(a.json).event("result", **result)


if __name__ == "__main__":
    main()
