"""Soak test: does a served cluster level off under continuous play, or does something keep growing?

Starts `archipelago serve` as a subprocess (free ports, its own temporary data directory, a private
redis-server, a local Ray) with short retention settings, so that the steady state shows within
minutes:

    ARCHIPELAGO_RETENTION_S=60    finished games leave Redis after this     (--retention-s)
    ARCHIPELAGO_LOBBY_TTL_S=60    lobbies never started expire after this   (--lobby-ttl-s)
    ARCHIPELAGO_RATE_LIMITS=off   no lobby rate limits: this is load        (--rate-limits)
    ARCHIPELAGO_EVICT_IDLE_S=60   shards drop idle games from memory        (--evict-idle-s)
    ARCHIPELAGO_GATEWAY_CACHE=2000  entries per gateway cache               (--gateway-cache)

Then it plays, from this process (asyncio, the gRPC client), for ``--minutes``:

* ``--concurrency`` Salvo games at a time, 2 players each, fast round deadline (``--deadline``),
  orders from the bot logic (the engine's autopilot, from each player's own view); every player on
  its own channel.  Each seat follows the game with a Watch stream and behaves one of three ways:
  *steady* (one stream to the end), *churn* (the stream is cancelled mid-game and reopened with
  ``after_seq``), *abrupt* (its channel is closed under the open stream; the player reconnects on a
  new channel and resumes with ``after_seq``).  Some guests walk away mid-game (channel closed, no
  more orders: the standing orders play for them), some send no orders for 1-3 rounds with their
  stream open (the round deadline closes those rounds).  Every resumed stream
  is checked: the updates must continue at ``after_seq + 1`` — nothing missed, nothing twice.
* every ``--lobby-every`` seconds an abandoned lobby: created (Salvo or Archipelago, public or not),
  sometimes joined, sometimes watched for a moment (stream cancelled or channel closed), never started.

Every ``--interval`` seconds it samples the gateway (the `archipelago serve` process: RSS, open file
descriptors, threads), the GameShard Ray workers and the other processes of the run (found as
descendants of the serve process through /proc), the private redis-server (INFO used_memory, DBSIZE,
connected_clients — this benchmark holds one of those connections), the gateway's /metrics (open Watch
streams, games in shard memory) and ListGames (open public lobbies), and the load itself (games/min,
submit latency).  A live progress line goes to stderr.

At the end a table: per series the first and last value and the slope of a least-squares fit over the
SECOND half of the run (warm-up excluded), per hour, with a verdict: "levels off" when that slope
over one hour is below ``--threshold`` (10 %) of the series' second-half mean, "GROWS" / "falls" when
it is beyond it by more than two standard errors, "unclear" otherwise.  Then the server is stopped with
SIGTERM and every process of the run is checked gone (exit status 1 if one survives, or the server died).

    .venv/bin/python -m bench.soak [--minutes 5] [--concurrency 8] [--interval 5] [--json samples.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, deque
from collections.abc import Awaitable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import grpc
import redis.asyncio as aioredis

from archipelago.v1 import lobby_pb2, salvo_pb2
from client.bot import choose_orders
from client.errors import ApiError
from client.grpc_client import Client
from client.views import orders_message
from services.cluster import free_port, marked_processes

EXE = str(Path(sys.executable).with_name("archipelago"))
T = TypeVar("T")

# How the seats of a game behave (weights) and how often a guest walks away mid-game.
SEAT_MODES = {"steady": 0.4, "churn": 0.4, "abrupt": 0.2}
WALKAWAY_SHARE = 0.1
AFK_SHARE = 0.1  # guests that send no orders for 1-3 rounds, stream open: the round deadline closes those

# The series sampled, in the order of the table; "load" ones are measured on this side.
SERIES = [
    "gateway RSS MB", "gateway fds", "gateway threads",
    "shards RSS MB", "shards fds",
    "other Ray RSS MB", "processes of the run",
    "redis used_memory MB", "redis keys (DBSIZE)", "redis connected_clients",
    "Watch streams open (gw)", "Watch streams open (load)", "games in shard memory", "open public lobbies",
    "games/min (load)", "submit p50 ms (load)", "submit p99 ms (load)",
]

PER_PROCESS = "RSS MB: "  # then a process's label: one series per process of the run (the breakdown)

# --- the server ------------------------------------------------------------------------------------

_libc: Any = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError):
        _libc = ctypes.CDLL(None, use_errno=True)


def _die_with_us() -> None:
    """preexec_fn: the server gets SIGTERM if this benchmark dies (even by SIGKILL)."""
    if _libc is not None:
        _libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG


class Server:
    """`archipelago serve` in ``root`` on free ports; its output is drained by a thread and kept."""

    def __init__(self, root: Path, shards: int, env_extra: dict[str, str]) -> None:
        self.root = root
        self.grpc_port, self.http_port = free_port(), free_port()
        self.ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are bounded
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
        self.env["RAY_TMPDIR"] = self.ray_tmp
        self.env.update(env_extra)
        self.shards = shards
        self.lines: deque[str] = deque(maxlen=400)
        self.problems: deque[str] = deque(maxlen=20)
        self.line_count = 0
        self.problem_count = 0
        self.redis_url = ""
        self.ready = threading.Event()
        self.proc: subprocess.Popen[str] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def data_dir(self) -> Path:
        return self.root / "var"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [EXE, "serve", "--grpc-port", str(self.grpc_port), "--http-port", str(self.http_port),
             "--shards", str(self.shards), "--data-dir", str(self.data_dir)],
            env=self.env, cwd=self.root, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_us)
        threading.Thread(target=self._drain, daemon=True, name="serve-output").start()

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.rstrip("\n")
            self.lines.append(line)
            self.line_count += 1
            if line.startswith("redis:"):
                found = re.search(r"redis://\S+", line)
                self.redis_url = found.group(0) if found else ""
            elif line.startswith("gRPC  listening"):
                self.ready.set()
            if re.search(r"\b(WARNING|ERROR|CRITICAL)\b|Traceback|[Ee]xception", line):
                self.problem_count += 1
                self.problems.append(line)
        self.ready.set()  # the output ended: the server is gone

    async def wait_ready(self, timeout_s: float = 180.0) -> float:
        t0 = time.monotonic()
        ok = await asyncio.to_thread(self.ready.wait, timeout_s)
        assert self.proc is not None
        if not ok or self.proc.poll() is not None or not self.redis_url:
            tail = "\n".join(list(self.lines)[-40:])
            raise RuntimeError(f"archipelago serve did not come up (exit code {self.proc.poll()}):\n{tail}")
        return time.monotonic() - t0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s: float = 60.0) -> tuple[int | None, float]:
        """SIGTERM, then SIGKILL after ``timeout_s``: (exit code, seconds it took)."""
        assert self.proc is not None
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                print(f"serve did not stop within {timeout_s:.0f} s of SIGTERM: SIGKILL", file=sys.stderr)
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode, time.monotonic() - t0


# --- /proc -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    comm: str
    start: int  # start time in clock ticks since boot: tells a reused pid apart
    cmd: str


def proc_info(pid: int) -> ProcInfo | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2:].split()
    if rest[0] in ("Z", "X"):
        return None
    return ProcInfo(pid=pid, ppid=int(rest[1]), comm=comm, start=int(rest[19]), cmd=cmd)


def process_table() -> dict[int, ProcInfo]:
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            info = proc_info(int(entry.name))
            if info is not None:
                table[info.pid] = info
    return table


def descendants(root: int, table: dict[int, ProcInfo]) -> list[ProcInfo]:
    children: dict[int, list[ProcInfo]] = {}
    for p in table.values():
        children.setdefault(p.ppid, []).append(p)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child.pid)
    return out


def proc_status(pid: int) -> tuple[float, int, int]:
    """(RSS in MB, open file descriptors, threads) of a process; zeros if it is gone."""
    rss_kb, threads = 0, 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0.0, 0, 0
    return rss_kb / 1024, fds, threads


def label(p: ProcInfo) -> str:
    """A short name for a process of the run: ``GameShard (pid)``, ``gcs_server``, ``dashboard.py``…"""
    if p.cmd.startswith("ray::"):
        name = p.cmd.split()[0][5:].split(".")[0]  # a worker's title names the method it runs: drop that
        return f"{name} ({p.pid})" if name == "GameShard" else name
    if p.comm.startswith("python"):
        script = next((w for w in p.cmd.split()[1:] if w.endswith(".py")), p.comm)
        return Path(script).name
    return p.comm


def still_there(seen: dict[int, ProcInfo]) -> list[ProcInfo]:
    """The processes of ``seen`` that still run (same pid and start time)."""
    out = []
    for p in seen.values():
        now = proc_info(p.pid)
        if now is not None and now.start == p.start:
            out.append(p)
    return out


# --- the load --------------------------------------------------------------------------------------


@dataclass
class Stats:
    games_started: int = 0
    games_finished: int = 0
    games_failed: int = 0
    rounds_submitted: int = 0
    stale_submits: int = 0  # ABORTED: the game moved on since the view was read
    late_submits: int = 0  # the game ended since the view was read
    afk_rounds: int = 0  # rounds a seat let its deadline pass
    lobbies_abandoned: int = 0
    watches_opened: int = 0
    watches_cut: int = 0  # cancelled mid-game, then reopened with after_seq
    channels_closed_abruptly: int = 0  # with a Watch stream open on them
    walkaways: int = 0
    resumes_checked: int = 0  # reopened streams whose first update was checked against after_seq
    seq_gaps: int = 0  # updates missed by a stream (counted in updates)
    seq_repeats: int = 0  # updates received twice
    updates: int = 0
    streams_open: int = 0  # Watch streams this side holds now
    rounds_per_game: list[int] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # submit latencies since the last sample
    finished_at: list[float] = field(default_factory=list)  # monotonic times of finished games

    def error(self, where: str, exc: BaseException) -> None:
        kind = exc.status if isinstance(exc, ApiError) else type(exc).__name__
        self.errors[f"{where}: {kind}"] += 1
        if len(self.error_examples) < 12:
            self.error_examples.append(f"{where}: {exc!r}"[:300])


async def timed(stats: Stats, call: Awaitable[T]) -> T:
    t0 = time.perf_counter()
    result = await call
    stats.latencies.append(time.perf_counter() - t0)
    return result


class Seat:
    """One player of one game, on its own gRPC channel, following the game with a Watch stream."""

    def __init__(self, address: str, stats: Stats) -> None:
        self.address = address
        self.stats = stats
        self.client = Client(address)
        self.game_id = ""
        self.since = 0  # the last update seq received
        self.wake = asyncio.Event()
        self.watcher: asyncio.Task[None] | None = None
        self.dropping: set[asyncio.Task[None]] = set()  # streams whose channel we closed on purpose

    def open_watch(self) -> None:
        self.watcher = asyncio.get_running_loop().create_task(self._watch(self.client, self.since))
        self.stats.watches_opened += 1

    async def _watch(self, client: Client, after: int) -> None:
        expect = after + 1
        first = True
        self.stats.streams_open += 1
        try:
            async for update in client.watch(self.game_id, after):
                self.stats.updates += 1
                if update.seq:  # 0: a live-only presence notice
                    if first and after:
                        self.stats.resumes_checked += 1
                    first = False
                    if update.seq > expect:
                        self.stats.seq_gaps += update.seq - expect
                    elif update.seq < expect:
                        self.stats.seq_repeats += 1
                    expect = max(expect, update.seq + 1)
                    self.since = max(self.since, update.seq)
                self.wake.set()
        except (ApiError, grpc.aio.AioRpcError, OSError) as exc:
            task = asyncio.current_task()
            if task not in self.dropping:
                self.stats.error("watch", exc)
        finally:
            self.stats.streams_open -= 1
            self.wake.set()

    async def cut_watch(self) -> None:
        """Cancel the open stream (the client goes away politely)."""
        if self.watcher is not None:
            self.watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watcher
            self.watcher = None

    async def close_abruptly(self) -> None:
        """Close the channel under the open stream, without cancelling it first."""
        if self.watcher is not None:
            self.dropping.add(self.watcher)
        await self.client.channel.close()  # no grace: every call on it ends at once
        self.stats.channels_closed_abruptly += 1
        if self.watcher is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.watcher
            self.dropping.discard(self.watcher)
            self.watcher = None

    async def reconnect(self) -> None:
        """A new channel, as the same player."""
        self.client = Client(self.address, self.client.secret)

    async def close(self) -> None:
        await self.cut_watch()
        await self.client.close()

    async def play(self, rng: random.Random, plan: Plan, wait_s: float) -> int:
        """Play until the game is over (or until walking away); returns the rounds submitted."""
        act_round = rng.randint(1, 6)  # when the seat's mode acts (if the game lasts that long)
        acted = 0
        submitted = 0
        while True:
            self.wake.clear()
            view = await self.client.view(self.game_id)
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return submitted
            if plan.walkaway is not None and view.round >= plan.walkaway:
                self.stats.walkaways += 1
                await self.close_abruptly()
                return submitted
            if plan.mode != "steady" and acted < 2 and view.round >= act_round:
                acted += 1
                act_round = view.round + rng.randint(1, 4)
                if plan.mode == "churn":
                    await self.cut_watch()
                    self.stats.watches_cut += 1
                    await asyncio.sleep(rng.uniform(0.0, 0.6))  # updates may come meanwhile: replayed after
                else:
                    await self.close_abruptly()
                    await asyncio.sleep(rng.uniform(0.0, 0.6))
                    await self.reconnect()
                self.open_watch()
                continue  # the game may have moved on meanwhile
            afk = plan.afk is not None and plan.afk <= view.round < plan.afk + plan.afk_rounds
            if view.expected and not afk:
                orders = orders_message(view.game, choose_orders(view))
                try:
                    await timed(self.stats, self.client.submit_message(
                        self.game_id, view.version, view.game, orders, key=f"soak-{view.round}"))
                    submitted += 1
                    self.stats.rounds_submitted += 1
                except ApiError as err:
                    if err.status == "ABORTED":  # stale version: read the view again
                        self.stats.stale_submits += 1
                    elif err.code == "game/over":  # the round closed without us (we were away a moment)
                        self.stats.late_submits += 1
                    else:
                        raise
                continue
            if afk and view.expected:
                self.stats.afk_rounds += 1
            with contextlib.suppress(TimeoutError):  # a stream being reopened: look again anyway
                await asyncio.wait_for(self.wake.wait(), wait_s)


@dataclass(frozen=True)
class Plan:
    """How one seat behaves in one game."""

    mode: str  # steady, churn or abrupt (SEAT_MODES)
    walkaway: int | None = None  # from this round on: channel closed, no more orders
    afk: int | None = None  # from this round on, ``afk_rounds`` rounds without orders (stream kept open)
    afk_rounds: int = 0

    @staticmethod
    def draw(rng: random.Random, guest: bool) -> Plan:
        mode = rng.choices(list(SEAT_MODES), list(SEAT_MODES.values()))[0]
        if guest and rng.random() < WALKAWAY_SHARE:
            return Plan(mode, walkaway=rng.randint(1, 6))
        if guest and rng.random() < AFK_SHARE:
            return Plan(mode, afk=rng.randint(1, 6), afk_rounds=rng.randint(1, 3))
        return Plan(mode)


@dataclass
class LoadConfig:
    address: str
    deadline_s: float
    max_rounds: int
    concurrency: int
    lobby_every_s: float
    seed: int


class Load:
    """The games and lobbies played against the server."""

    def __init__(self, cfg: LoadConfig) -> None:
        self.cfg = cfg
        self.stats = Stats()
        self.rng = random.Random(cfg.seed)
        self.tasks: set[asyncio.Task[None]] = set()
        self.count = 0

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def start(self) -> None:
        for w in range(self.cfg.concurrency):
            self._spawn(self._games(w))
        self._spawn(self._lobbies())

    async def stop(self) -> None:
        tasks = list(self.tasks)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _games(self, worker: int) -> None:
        rng = random.Random(self.cfg.seed * 1000 + worker)
        timeout_s = 120 + self.cfg.deadline_s * (self.cfg.max_rounds + 2) * 1.5
        while True:
            self.count += 1
            try:
                await asyncio.wait_for(self.game(self.count, rng), timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.stats.games_failed += 1
                self.stats.error("game", exc)
                await asyncio.sleep(1.0)

    async def game(self, n: int, rng: random.Random) -> None:
        stats, cfg = self.stats, self.cfg
        host, guest = Seat(cfg.address, stats), Seat(cfg.address, stats)
        try:
            created = await host.client.create("salvo", seats=2, nickname=f"soak-h{n}", deadline_seconds=cfg.deadline_s,
                                               salvo=salvo_pb2.SalvoOptions(max_rounds=cfg.max_rounds))
            host.game_id = guest.game_id = created.game_id
            await guest.client.join(created.code, f"soak-g{n}")
            host.open_watch()
            guest.open_watch()
            await host.client.start(created.game_id)
            stats.games_started += 1
            wait_s = cfg.deadline_s + 2.0
            rounds = await asyncio.gather(host.play(rng, Plan.draw(rng, guest=False), wait_s),
                                          guest.play(rng, Plan.draw(rng, guest=True), wait_s))
            stats.games_finished += 1
            stats.rounds_per_game.append(max(rounds))
            stats.finished_at.append(time.monotonic())
        finally:
            await asyncio.gather(host.close(), guest.close(), return_exceptions=True)

    async def _lobbies(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(self.cfg.lobby_every_s)
            n += 1
            self._spawn(self.lobby(n))

    async def lobby(self, n: int) -> None:
        """A lobby created and left: sometimes joined, sometimes watched a moment; never started."""
        rng, stats = self.rng, self.stats
        host = Seat(self.cfg.address, stats)
        guest: Seat | None = None
        try:
            kind = rng.choice(["salvo", "archipelago"])
            seats = 2 if kind == "salvo" else rng.randint(2, 4)
            created = await host.client.create(kind, seats=seats, nickname=f"soak-l{n}", public=rng.random() < 0.5,
                                               deadline_seconds=self.cfg.deadline_s)
            host.game_id = created.game_id
            if rng.random() < 0.5:
                guest = Seat(self.cfg.address, stats)
                guest.game_id = created.game_id
                await guest.client.join(created.code, f"soak-lg{n}")
            if rng.random() < 0.5:
                host.open_watch()
                await asyncio.sleep(rng.uniform(0.5, 2.0))
                if rng.random() < 0.5:
                    await host.close_abruptly()
                else:
                    await host.cut_watch()
            stats.lobbies_abandoned += 1
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            stats.error("lobby", exc)
        finally:
            await asyncio.gather(host.close(), *([guest.close()] if guest else []), return_exceptions=True)


# --- sampling --------------------------------------------------------------------------------------


def scrape_metrics(url: str) -> dict[str, float]:
    """Sums of the gateway's /metrics samples we follow (a missing one is absent)."""
    wanted = {"archipelago_watch_streams": "Watch streams open (gw)",
              "archipelago_shard_games": "games in shard memory"}
    out: dict[str, float] = {}
    with urllib.request.urlopen(url, timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("#"):
                continue
            name = re.split(r"[{ ]", line, maxsplit=1)[0]
            if name in wanted:
                with contextlib.suppress(ValueError, IndexError):
                    out[wanted[name]] = out.get(wanted[name], 0.0) + float(line.rsplit(" ", 1)[1])
    return out


class Sampler:
    def __init__(self, server: Server, load: Load, redis_client: aioredis.Redis, lister: Client) -> None:
        self.server = server
        self.load = load
        self.redis = redis_client
        self.lister = lister
        self.samples: list[dict[str, float]] = []
        self.shard_samples: list[dict[str, float]] = []  # per shard pid: RSS MB
        self.seen: dict[int, ProcInfo] = {}  # every process of the run seen
        self.t0 = time.monotonic()
        self.last_t = self.t0
        self.last_finished = 0
        self.failures: Counter[str] = Counter()

    async def sample(self) -> dict[str, float]:
        now = time.monotonic()
        s: dict[str, float] = {"t": round(now - self.t0, 2)}
        table = await asyncio.to_thread(process_table)
        tree = descendants(self.server.pid, table)
        for p in tree:
            self.seen.setdefault(p.pid, p)
        s["processes of the run"] = len(tree)
        s["gateway RSS MB"], s["gateway fds"], s["gateway threads"] = proc_status(self.server.pid)
        shard_rss: dict[str, float] = {}
        shards_fds, other_rss = 0, 0.0
        for p in tree:
            rss, fds, _ = proc_status(p.pid)
            s[PER_PROCESS + label(p)] = rss
            if p.cmd.startswith("ray::GameShard"):
                shard_rss[str(p.pid)] = rss
                shards_fds += fds
            elif p.comm != "redis-server":
                other_rss += rss
        s["shards RSS MB"], s["shards fds"], s["other Ray RSS MB"] = sum(shard_rss.values()), shards_fds, other_rss
        self.shard_samples.append(shard_rss)
        try:
            mem, clients = await self.redis.info("memory"), await self.redis.info("clients")
            s["redis used_memory MB"] = int(mem["used_memory"]) / 2**20
            s["redis connected_clients"] = int(clients["connected_clients"])
            s["redis keys (DBSIZE)"] = int(await self.redis.dbsize())
        except Exception as exc:
            self.failures[f"redis: {type(exc).__name__}"] += 1
        try:
            s.update(await asyncio.to_thread(scrape_metrics, f"http://127.0.0.1:{self.server.http_port}/metrics"))
        except Exception as exc:
            self.failures[f"/metrics: {type(exc).__name__}"] += 1
        try:
            listed = await self.lister.list_games()
            s["open public lobbies"] = sum(1 for g in listed.games if g.status == lobby_pb2.GAME_STATUS_LOBBY)
        except Exception as exc:
            self.failures[f"ListGames: {type(exc).__name__}"] += 1
        stats = self.load.stats
        s["Watch streams open (load)"] = stats.streams_open
        finished = stats.games_finished
        if self.samples:
            s["games/min (load)"] = (finished - self.last_finished) / max(now - self.last_t, 1e-6) * 60
        lat, stats.latencies = stats.latencies, []
        if len(lat) >= 2:
            qs = statistics.quantiles(lat, n=100)
            s["submit p50 ms (load)"], s["submit p99 ms (load)"] = qs[49] * 1000, qs[98] * 1000
        self.last_t, self.last_finished = now, finished
        self.samples.append(s)
        return s


async def redis_key_families(client: aioredis.Redis, limit: int = 200_000) -> list[tuple[str, int]]:
    """Keys grouped by shape (id-like parts of the name replaced by ``*``), most numerous first."""
    families: Counter[str] = Counter()
    n = 0
    async for key in client.scan_iter(count=1000):
        name = key.decode(errors="replace") if isinstance(key, bytes) else str(key)
        families[":".join(p if re.fullmatch(r"[a-z_]{1,16}", p) else "*" for p in name.split(":"))] += 1
        n += 1
        if n >= limit:
            break
    return families.most_common()


# --- the verdict -----------------------------------------------------------------------------------


@dataclass
class Row:
    series: str
    n: int
    first: float
    last: float
    low: float
    high: float
    level: float  # mean over the second half
    slope_h: float  # per hour, second half
    se_h: float  # its standard error
    pct_h: float  # slope_h as a percentage of level
    verdict: str


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope and its standard error."""
    n = len(xs)
    xm, ym = sum(xs) / n, sum(ys) / n
    sxx = sum((x - xm) ** 2 for x in xs)
    if n < 2 or sxx == 0:
        return 0.0, math.inf
    slope = sum((x - xm) * (y - ym) for x, y in zip(xs, ys, strict=True)) / sxx
    if n < 3:
        return slope, math.inf
    resid = sum((y - ym - slope * (x - xm)) ** 2 for x, y in zip(xs, ys, strict=True))
    return slope, math.sqrt(resid / (n - 2) / sxx)


def summarize(samples: list[dict[str, float]], threshold: float, series: list[str]) -> list[Row]:
    rows: list[Row] = []
    if not samples:
        return rows
    half = samples[-1]["t"] / 2
    for name in series:
        pts = [(s["t"], s[name]) for s in samples if name in s]
        if not pts:
            continue
        second = [(t, v) for t, v in pts if t >= half]
        ys = [v for _, v in second]
        level = sum(ys) / len(ys) if ys else 0.0
        slope, se = fit([t for t, _ in second], ys) if len(second) >= 2 else (0.0, math.inf)
        slope_h, se_h = slope * 3600, se * 3600
        allowed = threshold * max(abs(level), 1.0)
        if len(second) < 3:
            verdict = "too few samples"
        elif abs(slope_h) < allowed:
            verdict = "levels off"
        elif slope_h - 2 * se_h > allowed:
            verdict = "GROWS"
        elif slope_h + 2 * se_h < -allowed:
            verdict = "falls"
        else:
            verdict = "unclear (noisy)"
        rows.append(Row(series=name, n=len(second), first=pts[0][1], last=pts[-1][1],
                        low=min(v for _, v in pts), high=max(v for _, v in pts), level=level,
                        slope_h=slope_h, se_h=se_h, pct_h=100 * slope_h / max(abs(level), 1.0), verdict=verdict))
    return rows


def fmt(v: float) -> str:
    if math.isinf(v) or math.isnan(v):
        return "-"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.1f}" if abs(v) >= 10 or v == int(v) else f"{v:.2f}"


def print_table(rows: list[Row], title: str = "series", strip: str = "") -> None:
    head = (f"{title:<28} {'first':>9} {'last':>9} {'min..max':>19} {'2nd-half mean':>13} {'slope/h':>11} "
            f"{'±se/h':>9} {'%/h':>8}  verdict")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r.series.removeprefix(strip)[:28]:<28} {fmt(r.first):>9} {fmt(r.last):>9} "
              f"{fmt(r.low) + '..' + fmt(r.high):>19} {fmt(r.level):>13} {fmt(r.slope_h):>11} {fmt(r.se_h):>9} "
              f"{r.pct_h:>7.0f}%  {r.verdict}")


# --- the run ---------------------------------------------------------------------------------------


def progress_line(elapsed: float, total: float, load: Load, s: dict[str, float] | None) -> str:
    st = load.stats
    line = (f"{elapsed:5.0f}/{total:.0f}s games {st.games_finished} done {st.games_failed} failed "
            f"{len(load.tasks) - 1} live, lobbies {st.lobbies_abandoned}")
    if s:
        line += (f" | gw {s.get('gateway RSS MB', 0):.0f}MB {s.get('gateway fds', 0):.0f}fd"
                 f" | shards {s.get('shards RSS MB', 0):.0f}MB"
                 f" | redis {s.get('redis used_memory MB', 0):.1f}MB {s.get('redis keys (DBSIZE)', 0):.0f}keys"
                 f" {s.get('redis connected_clients', 0):.0f}cl"
                 f" | streams {s.get('Watch streams open (gw)', 0):.0f}")
    return line


async def soak(a: argparse.Namespace) -> int:
    env_extra = {"ARCHIPELAGO_RETENTION_S": str(a.retention_s), "ARCHIPELAGO_LOBBY_TTL_S": str(a.lobby_ttl_s),
                 "ARCHIPELAGO_RATE_LIMITS": a.rate_limits, "ARCHIPELAGO_EVICT_IDLE_S": str(a.evict_idle_s),
                 "ARCHIPELAGO_GATEWAY_CACHE": str(a.gateway_cache)}
    for item in a.env:
        key, _, value = item.partition("=")
        env_extra[key] = value
    root = Path(tempfile.mkdtemp(prefix="arch-soak-"))
    server = Server(root, a.shards, env_extra)
    total_s = a.minutes * 60
    print(f"soak: {a.minutes:g} min, {a.concurrency} concurrent Salvo games (deadline {a.deadline:g} s, "
          f"max {a.max_rounds} rounds), an abandoned lobby every {a.lobby_every:g} s, sample every {a.interval:g} s, "
          f"{a.shards} shards, {os.cpu_count()} cores", flush=True)
    print("serve env: " + " ".join(f"{k}={v}" for k, v in env_extra.items()), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    server.start()
    code = 0
    sampler: Sampler | None = None
    load: Load | None = None
    families: list[tuple[str, int]] = []
    redis_client: aioredis.Redis | None = None
    lister: Client | None = None
    server_died = False
    try:
        up = await server.wait_ready()
        print(f"serve pid {server.pid} up in {up:.1f} s: gRPC {server.address}, HTTP :{server.http_port}, "
              f"redis {server.redis_url}, data {server.data_dir}", flush=True)
        redis_client = aioredis.Redis.from_url(server.redis_url)
        lister = Client(server.address)
        load = Load(LoadConfig(address=server.address, deadline_s=a.deadline, max_rounds=a.max_rounds,
                               concurrency=a.concurrency, lobby_every_s=a.lobby_every, seed=a.seed))
        sampler = Sampler(server, load, redis_client, lister)
        await sampler.sample()  # t = 0: before any load
        load.start()
        tty = sys.stderr.isatty()
        width = 0
        next_sample = sampler.t0 + a.interval
        while not stop.is_set():
            now = time.monotonic()
            if now - sampler.t0 >= total_s:
                break
            if not server.alive():
                server_died = True
                break
            if now >= next_sample:
                next_sample += a.interval
                s = await sampler.sample()
                if not tty:
                    print(progress_line(s["t"], total_s, load, s), file=sys.stderr, flush=True)
            if tty:
                line = progress_line(time.monotonic() - sampler.t0, total_s, load,
                                     sampler.samples[-1] if sampler.samples else None)
                print("\r" + line.ljust(width), end="", file=sys.stderr, flush=True)
                width = len(line)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
        if tty:
            print(file=sys.stderr)
        if server.alive():
            await sampler.sample()  # the last one, still under load
            families = await redis_key_families(redis_client)
        await load.stop()
    except Exception as exc:
        print(f"\nsoak failed: {exc}", file=sys.stderr)
        code = 1
    finally:
        if load is not None:
            await load.stop()
        if lister is not None:
            await lister.close()
        if redis_client is not None:
            with contextlib.suppress(Exception):
                await redis_client.aclose()
        seen_before = dict(sampler.seen) if sampler else {}
        # the whole tree once more, right before the stop
        if server.alive():
            for p in descendants(server.pid, process_table()):
                seen_before.setdefault(p.pid, p)
        exit_code, took = await asyncio.to_thread(server.stop)
        print(f"\nserve stopped by SIGTERM in {took:.1f} s, exit code {exit_code}"
              + ("  (it had died during the run!)" if server_died else ""), flush=True)
        if server_died:
            code = 1
        # no orphans: every process the run had, and anything marked with its data directory, goes
        deadline = time.monotonic() + a.orphan_wait
        left = still_there(seen_before)
        marked: list[int] = []
        while time.monotonic() < deadline:
            left = still_there(seen_before)
            marked = [p for p in marked_processes(server.data_dir) if p not in {q.pid for q in left}]
            if not left and not marked:
                break
            await asyncio.sleep(0.5)
        kinds = Counter(p.comm for p in seen_before.values())
        if left or marked:
            code = 1
            print(f"ORPHANS: {len(left) + len(marked)} process(es) of the run survive "
                  f"{a.orphan_wait:g} s after the server's exit:", flush=True)
            for p in left:
                print(f"  pid {p.pid} {p.comm}: {p.cmd[:120]}")
            for pid in marked:
                print(f"  pid {pid} (marked with {server.data_dir})")
            for pid in [p.pid for p in left] + marked:  # ours: stop them
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        else:
            print(f"no orphans: all {len(seen_before)} processes of the run are gone ("
                  + ", ".join(f"{n} {c}" for c, n in sorted(kinds.items())) + ")", flush=True)
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(server.ray_tmp, ignore_errors=True)
        else:
            print(f"kept: {root} and {server.ray_tmp}")
    if sampler is None or load is None:
        print("\n".join(list(server.lines)[-40:]), file=sys.stderr)
        return code or 1
    report(a, server, sampler, load, families, env_extra, code)
    return code


def report(a: argparse.Namespace, server: Server, sampler: Sampler, load: Load,
           families: list[tuple[str, int]], env_extra: dict[str, str], code: int) -> None:
    st = load.stats
    elapsed = sampler.samples[-1]["t"] if sampler.samples else 0.0
    rows = summarize(sampler.samples, a.threshold, SERIES)
    per_process = sorted({k for s in sampler.samples for k in s if k.startswith(PER_PROCESS)})
    breakdown = summarize(sampler.samples, a.threshold, per_process)
    print(f"\nload over {elapsed / 60:.1f} min: {st.games_finished} Salvo games finished "
          f"({st.games_finished / max(elapsed, 1) * 60:.0f}/min, {st.games_failed} failed, "
          f"{st.games_started} started), {st.rounds_submitted} orders submitted ({st.stale_submits} stale, "
          f"{st.late_submits} after the end), {st.afk_rounds} rounds left to the deadline, "
          f"mean {statistics.fmean(st.rounds_per_game) if st.rounds_per_game else 0:.1f} rounds a game, "
          f"{st.walkaways} players walked away mid-game, {st.lobbies_abandoned} lobbies abandoned")
    print(f"streams: {st.watches_opened} Watch streams opened, {st.watches_cut} cancelled mid-game and reopened, "
          f"{st.channels_closed_abruptly} channels closed under an open stream; {st.updates} updates received; "
          f"{st.resumes_checked} resumes checked against after_seq: {st.seq_gaps} updates missed, "
          f"{st.seq_repeats} received twice")
    if st.errors:
        print("client errors: " + ", ".join(f"{k} ×{n}" for k, n in st.errors.most_common()))
        for ex in st.error_examples[:6]:
            print(f"  e.g. {ex}")
    if sampler.failures:
        print("sampling failures: " + ", ".join(f"{k} ×{n}" for k, n in sampler.failures.items()))
    print(f"server output: {server.line_count} lines, {server.problem_count} with WARNING/ERROR/Traceback")
    for line in list(server.problems)[-5:]:
        print(f"  {line[:200]}")
    print(f"\nper series: first and last sample, min..max, and a least-squares fit over the second half of the run "
          f"(the last {elapsed / 120:.1f} min);\n'levels off' = that slope over 1 h is below {a.threshold:.0%} of the "
          f"series' second-half mean (or of 1, if smaller); 'GROWS'/'falls' = beyond it by > 2 standard errors\n")
    print_table(rows)
    print()
    print_table(breakdown, "RSS MB by process of the run", PER_PROCESS)
    if families:
        print(f"\nRedis keys at the end by shape ({sum(n for _, n in families)} keys):")
        for name, n in families[:12]:
            print(f"  {n:>8}  {name}")
    grows = [r.series for r in rows if r.verdict == "GROWS"]
    grows += [f"RSS of {r.series.removeprefix(PER_PROCESS)}" for r in breakdown if r.verdict == "GROWS"]
    print("\nverdict: " + (f"still growing in the second half: {', '.join(grows)}" if grows
                           else "nothing grows beyond the threshold in the second half"))
    if a.json:
        Path(a.json).write_text(json.dumps({
            "args": vars(a), "serve_env": env_extra, "series": SERIES, "samples": sampler.samples,
            "shard_rss_mb_by_pid": sampler.shard_samples, "summary": [asdict(r) for r in rows + breakdown],
            "load": {**{f.name: getattr(st, f.name) for f in fields(st)
                        if f.name not in ("latencies", "finished_at", "errors")}, "errors": dict(st.errors)},
            "redis_key_families": families, "exit_code": code}, indent=1, default=str))
        print(f"samples written to {a.json}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--minutes", type=float, default=5.0, help="how long to play")
    ap.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--concurrency", type=int, default=8, help="Salvo games played at once")
    ap.add_argument("--deadline", type=float, default=3.0, help="round deadline of the games, seconds")
    ap.add_argument("--max-rounds", type=int, default=40, help="Salvo round cap")
    ap.add_argument("--lobby-every", type=float, default=2.0, help="seconds between abandoned lobbies")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--retention-s", type=float, default=60, help="ARCHIPELAGO_RETENTION_S for the server")
    ap.add_argument("--lobby-ttl-s", type=float, default=60, help="ARCHIPELAGO_LOBBY_TTL_S for the server")
    ap.add_argument("--rate-limits", default="off", help="ARCHIPELAGO_RATE_LIMITS for the server")
    ap.add_argument("--evict-idle-s", type=float, default=60, help="ARCHIPELAGO_EVICT_IDLE_S for the server")
    ap.add_argument("--gateway-cache", type=int, default=2000,
                    help="ARCHIPELAGO_GATEWAY_CACHE for the server: entries per gateway cache (default 50,000 "
                         "takes hours of play to fill; a small bound shows it levelling off within minutes)")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="more environment for the server (repeatable)")
    ap.add_argument("--threshold", type=float, default=0.10,
                    help="'levels off' below this fraction of the series' level per hour")
    ap.add_argument("--orphan-wait", type=float, default=20.0, help="seconds the run's processes get to exit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="PATH", help="write the samples and the summary here")
    ap.add_argument("--keep", action="store_true", help="keep the server's data and Ray directories")
    a = ap.parse_args()
    sys.exit(asyncio.run(soak(a)))


if __name__ == "__main__":
    main()
