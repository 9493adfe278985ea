"""Capacity of the cluster on this machine: one command starts it and the load, and prints every figure
with how it was measured, then a summary table.

    python -m bench.capacity [--quick] [--only closed,open,watch,spectate,memory,deadlines] [--json FILE]
    python -m bench.capacity --address HOST:PORT --http HOST:PORT [--redis URL]   # a running cluster

Phases (each with a live progress line on stderr):

* ``closed`` — closed-loop submissions/s through the whole path (gRPC -> gateway -> Ray shard -> Redis
  journal -> ack) and p50/p99 latency; the same load client against a bare grpc.aio server of the same
  rpc (``bench.echo``) -> the ratio path/echo.
* ``open`` — open-loop arrivals at half the echo's closed-loop rate against the path: achieved rate and
  latency from each call's scheduled send time (target p99 <= 50 ms).
* ``watch`` — ``--streams`` Watch streams held on one gateway (two real players per game, both
  watching): the gateway's Redis connections and RSS, and the fan-out latency under that load (seat A's
  submission sent -> the ``submitted`` update for A arriving on seat B's stream).
* ``spectate`` — ``--spectators`` spectator streams (Community.Spectate) held on one gateway,
  ``--spectators-per-game`` on each public game: streams held (and the gateway's
  ``archipelago_spectator_streams``), its RSS per 1,000 of them and Redis connections, and the fan-out
  latency to spectators under them (a host's submission sent -> its ``submitted`` update on a
  spectator's stream).
* ``memory`` — shard memory (RSS, USS) and CPU per 1,000 games of three kinds (lobby, running Salvo,
  running 8-player Archipelago), games per GiB, and the comparison with one Ray actor per game.
* ``deadlines`` — ``--slow-games`` games whose round deadlines fall in a short window: how late each
  closes (a watched sample, and the shards' ``archipelago_deadline_lateness_seconds`` histogram).

The load runs in separate processes (``python -m bench.loadgen``), the cluster in ``archipelago serve``
(``ARCHIPELAGO_RATE_LIMITS=off``), stopped with SIGTERM at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
MiB = 1 << 20
PHASES = ("closed", "open", "watch", "spectate", "memory", "deadlines", "peer", "lobby")
# Run order: memory on fresh shards (a heap that earlier load freed would hide growth); watch and spectate
# before the open loop's overload has grown the gateway's heap; deadlines last (their games keep playing).
RUN_ORDER = ("memory", "watch", "spectate", "closed", "peer", "open", "lobby", "deadlines")
# stack.md, measured on this machine: one Ray actor is an OS process of ~80 MB RSS, ~40 MB unique.
STACK_ACTOR_RSS = 80 * MiB
STACK_ACTOR_USS = 40 * MiB
# issue 24's targets
CLOSED_RATIO_TARGET = 0.6  # whole path / bare echo, closed loop, same run
OPEN_P99_MS = {"path_open_1000": 50.0, "path_open": 100.0}  # p99 at 1,000/s offered; at half the echo's rate
FANOUT_P99_MS = 100.0
GC_P99_MS = 20.0  # every process's collector pauses during the bench
LOBBY_P99_MS = 1000.0  # every lobby call, under play
LOBBY_PLAY_RATE = 1000.0  # the submissions/s offered beside the lobby calls
GC_METRIC = "archipelago_gc_pause_seconds"
SPECTATOR_GAUGE = "archipelago_spectator_streams"  # a gateway's open Spectate streams


# ---------------------------------------------------------------------------------------------- settings
@dataclass
class Settings:
    seconds: float = 10.0  # closed and open loop, each
    concurrency: int = 64
    path_games: int = 800  # (<= 100 submissions per player and round: closed + open share these games)
    streams: int = 10_000
    spectators: int = 10_000
    spectators_per_game: int = 20
    fanout_seconds: float = 10.0
    fanout_rate: float = 100.0
    games_per_kind: int = 1000
    idle_seconds: float = 8.0  # each idle CPU window (scaled to a minute)
    slow_games: int = 10_000
    sample: int = 500
    deadline_window: float = 100.0  # 10,000 games: 100 rounds closing a second (an 8 h "slow" round: 0.35/s)
    jobs: int = 32
    peer_matches: int = 50
    peer_players: int = 4

    @classmethod
    def quick(cls) -> Settings:
        return cls(seconds=4.0, path_games=300, streams=1000, spectators=1000, fanout_seconds=4.0, games_per_kind=100,
                   idle_seconds=2.0, slow_games=600, sample=100, deadline_window=4.0, peer_matches=8)


# ---------------------------------------------------------------------------------------------- /proc
@dataclass
class Mem:
    rss: int = 0  # bytes
    pss: int = 0
    uss: int = 0  # private pages (Private_Clean + Private_Dirty)

    def __add__(self, other: Mem) -> Mem:
        return Mem(self.rss + other.rss, self.pss + other.pss, self.uss + other.uss)

    def __sub__(self, other: Mem) -> Mem:
        return Mem(self.rss - other.rss, self.pss - other.pss, self.uss - other.uss)


def _kb_fields(path: str, names: Sequence[str]) -> dict[str, int]:
    out = dict.fromkeys(names, 0)
    with open(path) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in out:
                out[key] = int(rest.split()[0]) * 1024
    return out


def proc_mem(pid: int) -> Mem:
    """VmRSS from /proc/PID/status; Pss and Private_* from /proc/PID/smaps_rollup."""
    rss = _kb_fields(f"/proc/{pid}/status", ["VmRSS"])["VmRSS"]
    roll = _kb_fields(f"/proc/{pid}/smaps_rollup", ["Pss", "Private_Clean", "Private_Dirty", "Private_Hugetlb"])
    return Mem(rss, roll["Pss"], roll["Private_Clean"] + roll["Private_Dirty"] + roll["Private_Hugetlb"])


def proc_cpu(pid: int) -> float:
    """utime + stime of /proc/PID/stat, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def mem_of(pids: Sequence[int]) -> Mem:
    total = Mem()
    for pid in pids:
        with contextlib.suppress(OSError):
            total = total + proc_mem(pid)
    return total


def cpu_of(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += proc_cpu(pid)
    return total


def children_running(parent: int, needle: str) -> list[int]:
    """Processes whose parent is ``parent`` and whose command line contains ``needle``."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat[1]) == parent and needle in cmd:
            out.append(int(entry.name))
    return out


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                            "python": platform.python_version(), "cpu_count": os.cpu_count(),
                            "platform": platform.platform()}
    model, cores, sockets = "", 0, set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, val = (x.strip() for x in line.partition(":"))
            if key == "model name" and not model:
                model = val
            elif key == "cpu cores" and not cores:
                cores = int(val)
            elif key == "physical id":
                sockets.add(val)
    info["cpu_model"] = model
    info["cores"] = cores * max(1, len(sockets)) if cores else os.cpu_count()
    with contextlib.suppress(OSError):
        info["mem_total_gib"] = _kb_fields("/proc/meminfo", ["MemTotal"])["MemTotal"] / GiB
    info["loadavg_at_start"] = os.getloadavg()
    info["open_files_limit"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return info


# ---------------------------------------------------------------------------------------------- output
def err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def say(line: str = "") -> None:
    print(line, flush=True)


def progress(line: str) -> None:
    print(f"\r  {line:<108}", end="", file=sys.stderr, flush=True)


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x:,.1f} ms" if x < 100 else f"{x:,.0f} ms"


def le_text(le: float) -> str:
    """A histogram bucket's upper edge as a bound: '<= 2.5 s', or '> 10 s' past the last edge."""
    return f"<= {le:g} s" if math.isfinite(le) else "> 10 s (past the last bucket)"


def hq(stats: dict[str, Any], key: str) -> str:
    """A quantile of a histogram: interpolated in its bucket, with the bucket's edge."""
    lo, hi = stats[f"{key}_gt_s"], stats[f"{key}_le_s"]
    if not math.isfinite(hi):
        return f"> {lo:g} s (past the last bucket)"
    return f"~{stats[f'{key}_s'] * 1000:,.0f} ms (bucket {lo:g}-{hi:g} s)"


def mib(x: float) -> str:
    return f"{x / MiB:,.1f} MiB"


# ---------------------------------------------------------------------------------------------- cluster
def free_port() -> int:
    """A free loopback port outside Ray's 10001-19999."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if not 10001 <= port <= 19999:
            return port


async def http_get(url: str, timeout_s: float = 15.0) -> tuple[int, bytes]:
    def get() -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as r:
                return int(r.status), bytes(r.read())
        except urllib.error.HTTPError as e:
            return int(e.code), bytes(e.read())

    return await asyncio.to_thread(get)


class Cluster:
    """The cluster under test: an ``archipelago serve`` we start (and stop), or one already running."""

    def __init__(self, grpc_addr: str = "", http_addr: str = "", redis_url: str | None = None) -> None:
        self.grpc, self.http, self.redis_url = grpc_addr, http_addr, redis_url
        self.proc: asyncio.subprocess.Process | None = None
        self.data_dir: Path | None = None
        self.lines: list[str] = []
        self._drain: asyncio.Task[None] | None = None
        self.started_s = 0.0

    @property
    def owned(self) -> bool:
        return self.proc is not None

    async def start(self, shards: int, gateways: int) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix="arch-capacity-"))
        gport, hport = free_port(), free_port()
        exe = Path(sys.executable).with_name("archipelago")
        cmd = [str(exe) if exe.exists() else "archipelago", "serve", "--data-dir", str(self.data_dir),
               "--grpc-port", str(gport), "--http-port", str(hport), "--shards", str(shards)]
        if gateways > 1:
            cmd += ["--gateways", str(gateways)]
        env = {**os.environ, "ARCHIPELAGO_RATE_LIMITS": "off"}
        say(f"cluster: {' '.join(cmd)}  (ARCHIPELAGO_RATE_LIMITS=off; its log: {self.data_dir}/serve.log)")
        t0 = time.monotonic()
        log = open(self.data_dir / "serve.log", "wb")  # the child writes to it; ours closes below
        self.proc = await asyncio.create_subprocess_exec(*cmd, cwd=str(ROOT), env=env, stdout=asyncio.subprocess.PIPE,
                                                         stderr=log, start_new_session=True)
        log.close()
        assert self.proc.stdout is not None
        need = {"gRPC": False, "HTTP": False}
        async with asyncio.timeout(180):
            while not all(need.values()):
                raw = await self.proc.stdout.readline()
                if not raw:
                    tail = (self.data_dir / "serve.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"archipelago serve exited before it listened:\n{tail}")
                line = raw.decode(errors="replace").rstrip()
                self.lines.append(line)
                progress(f"starting the cluster: {line[:90]}")
                if m := re.match(r"gRPC\s+listening on (\S+)", line):
                    self.grpc, need["gRPC"] = m.group(1), True
                elif m := re.match(r"HTTP\s+listening on http://(\S+)", line):
                    self.http, need["HTTP"] = m.group(1), True
                elif m := re.search(r"(redis://\S+)", line):
                    self.redis_url = m.group(1)
        err("")
        self.started_s = time.monotonic() - t0
        self._drain = asyncio.get_running_loop().create_task(self._drain_stdout())
        await self.wait_serving()
        say(f"cluster up in {self.started_s:.1f} s: gRPC {self.grpc}, HTTP {self.http}, Redis {self.redis_url}")

    async def _drain_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for raw in self.proc.stdout:
            self.lines.append(raw.decode(errors="replace").rstrip())

    async def wait_serving(self) -> None:
        """gRPC health SERVING (waits for the channel, then asks once)."""
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        async with grpc.aio.insecure_channel(self.grpc) as ch:
            await asyncio.wait_for(ch.channel_ready(), 60)
            resp = await health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=30)
            if resp.status != health_pb2.HealthCheckResponse.SERVING:
                raise RuntimeError(f"gRPC health is {resp.status}")

    async def health(self) -> dict[str, Any]:
        status, body = await http_get(f"http://{self.http}/healthz")
        data: dict[str, Any] = json.loads(body) if body.startswith(b"{") else {}
        data["http_status"] = status
        return data

    async def metrics(self) -> str:
        _, body = await http_get(f"http://{self.http}/metrics", timeout_s=30)
        return body.decode(errors="replace")

    def gateway_pids(self, health: dict[str, Any] | None = None) -> list[int]:
        """The serve process (the first gateway) and its extra gateway processes; else /healthz's gateway."""
        if self.proc is not None:
            return [self.proc.pid, *children_running(self.proc.pid, "gateway.app")]
        pid = ((health or {}).get("gateway") or {}).get("pid")
        return [int(pid)] if pid and proc_alive(int(pid)) else []

    async def shard_pids(self) -> list[int]:
        h = await self.health()
        pids = [int(s["pid"]) for s in h.get("shards", []) if s.get("pid")]
        return [p for p in pids if proc_alive(p)]

    def redis_clients(self) -> dict[str, int] | None:
        """Redis' CLIENT LIST, counted by client name."""
        if not self.redis_url:
            return None
        import redis

        r = redis.Redis.from_url(self.redis_url, socket_timeout=10)
        try:
            counts: dict[str, int] = {}
            clients: list[dict[str, Any]] = r.client_list()  # type: ignore[assignment]
            for c in clients:
                name = str(c.get("name") or "(unnamed)")
                counts[name] = counts.get(name, 0) + 1
            return counts
        finally:
            r.close()

    def gateway_redis_connections(self) -> int | None:
        counts = self.redis_clients()
        return None if counts is None else sum(v for k, v in counts.items() if k.startswith("archipelago-gateway"))

    async def stop(self, keep_data: bool = False) -> list[str]:
        """SIGTERM, wait for the exit, then check nothing of the run is left (stopping what is); the data
        directory is removed unless ``keep_data``."""
        if self.proc is None or self.data_dir is None:
            return []
        from services.cluster import marked_processes, stale_redis_pid

        progress("stopping the cluster (SIGTERM)")
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 60)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._drain is not None:
            self._drain.cancel()
        left: list[int] = []
        t_end = time.monotonic() + 15
        while time.monotonic() < t_end:  # Ray's helpers exit shortly after the driver: give them a moment
            left = marked_processes(self.data_dir)
            redis_pid = stale_redis_pid(self.data_dir / "redis")
            if redis_pid is not None:
                left.append(redis_pid)
            if not left:
                break
            await asyncio.sleep(0.5)
        names = []
        for pid in left:
            with contextlib.suppress(OSError):
                names.append(f"{pid} {Path(f'/proc/{pid}/comm').read_text().strip()}")
                os.kill(pid, signal.SIGKILL)
        err("")
        say(f"cluster stopped (exit code {self.proc.returncode}); "
            + (f"LEFT BEHIND and killed: {', '.join(names)}" if names else "no process of it left"))
        if keep_data:
            say(f"its data directory (Redis' append-only file, serve.log) is kept: {self.data_dir}")
        else:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        return names


# ---------------------------------------------------------------------------------------------- loadgen
class LoadError(RuntimeError):
    pass


OnEvent = Callable[[dict[str, Any], asyncio.subprocess.Process], Awaitable[None]]


async def loadgen(args: Sequence[str], on_event: OnEvent | None = None, stdin: bool = False) -> dict[str, Any]:
    """Run ``python -m bench.loadgen --json ARGS`` (its progress line shares our stderr); its result."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.loadgen", "--json", *args, cwd=str(ROOT), stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL)
    result: dict[str, Any] | None = None
    try:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            if ev.get("event") == "result":
                result = ev
            elif on_event is not None:
                await on_event(ev, proc)
        rc = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if rc != 0 or result is None:
        raise LoadError(f"bench.loadgen {' '.join(args)} exited with {rc}")
    return result


class EchoServer:
    """``python -m bench.echo`` in a process of its own."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.address = ""

    async def __aenter__(self) -> EchoServer:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.echo", "--port", str(free_port()), cwd=str(ROOT),
            stdout=asyncio.subprocess.PIPE, start_new_session=True)
        assert self.proc.stdout is not None
        async with asyncio.timeout(30):
            line = (await self.proc.stdout.readline()).decode().strip()
        if not line.startswith("echo listening on "):
            raise RuntimeError(f"bench.echo did not start: {line!r}")
        self.address = line.rsplit(" ", 1)[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


# ---------------------------------------------------------------------------------------------- metrics
def histogram(text: str, name: str) -> dict[float, float] | None:
    """A Prometheus histogram's cumulative buckets summed over every label set but ``le``; None if absent."""
    from prometheus_client.parser import text_string_to_metric_families

    buckets: dict[float, float] = {}
    for fam in text_string_to_metric_families(text):
        if fam.name != name:
            continue
        for s in fam.samples:
            if s.name == f"{name}_bucket":
                le = float(s.labels["le"])
                buckets[le] = buckets.get(le, 0.0) + s.value
    return buckets or None


def gc_by_process(text: str) -> dict[str, dict[float, float]]:
    """``archipelago_gc_pause_seconds`` buckets per process (every generation summed): ``gateway`` for the
    gateway's own samples, the shard's name for each shard's."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, dict[float, float]] = {}
    for fam in text_string_to_metric_families(text):
        if fam.name != GC_METRIC:
            continue
        for sm in fam.samples:
            if sm.name == f"{GC_METRIC}_bucket":
                who = sm.labels.get("shard") or "gateway"
                le = float(sm.labels["le"])
                out.setdefault(who, {})[le] = out.setdefault(who, {}).get(le, 0.0) + sm.value
    return out


def gauge(text: str, name: str) -> float | None:
    from prometheus_client.parser import text_string_to_metric_families

    vals = [s.value for fam in text_string_to_metric_families(text) for s in fam.samples if s.name == name]
    return sum(vals) if vals else None


def histogram_stats(after: dict[float, float], before: dict[float, float] | None) -> dict[str, Any]:
    """Count, p50/p99 (linear within a bucket; an upper bound from the bucket edge), the share within
    1 s and the highest non-empty bucket of the observations between two scrapes."""
    les = sorted(after)
    cum = [after[le] - (before or {}).get(le, 0.0) for le in les]
    total = cum[-1] if cum else 0.0
    out: dict[str, Any] = {"count": int(total), "buckets": {str(le): c for le, c in zip(les, cum, strict=True)}}
    if total <= 0:
        return out

    def q(p: float) -> tuple[float, float, float]:
        """(estimate, bucket's lower edge, bucket's upper edge) of the p-quantile."""
        rank = p * total
        lo_le, lo_c = 0.0, 0.0
        for le, c in zip(les, cum, strict=True):
            if c >= rank:
                if math.isinf(le):
                    return lo_le, lo_le, math.inf
                frac = (rank - lo_c) / (c - lo_c) if c > lo_c else 1.0
                return lo_le + (le - lo_le) * frac, lo_le, le
            lo_le, lo_c = le, c
        return lo_le, lo_le, math.inf

    for p, key in ((0.5, "p50"), (0.99, "p99")):
        est, lo, hi = q(p)
        out[f"{key}_s"] = est
        out[f"{key}_gt_s"] = lo
        out[f"{key}_le_s"] = hi
    within = [c for le, c in zip(les, cum, strict=True) if le == 1.0]
    out["within_1s"] = within[0] / total if within else None
    prev = 0.0
    top = 0.0
    for le, c in zip(les, cum, strict=True):
        if c > prev:
            top = le
        prev = c
    out["max_le_s"] = top  # the max lies in the bucket ending here (inf: beyond the last edge)
    return out


# ---------------------------------------------------------------------------------------------- the bench
@dataclass
class Bench:
    cfg: Settings
    cluster: Cluster
    results: dict[str, Any] = field(default_factory=dict)
    peak: dict[str, float] = field(default_factory=dict)
    held_games: int = 0  # games the bench created (none is ended by it)
    held_players: int = 0  # their seats (autopilot included)
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="arch-capacity-load-")))
    echo_rate: float | None = None
    shard_idle: Mem | None = None  # a shard with no game yet: one Ray actor with our code loaded

    def bump(self, key: str, value: float | None) -> None:
        if value is not None:
            self.peak[key] = max(self.peak.get(key, 0.0), value)

    def add_held(self, games: int, players: int) -> None:
        self.held_games += games
        self.held_players += players
        self.bump("games_created_by_bench", self.held_games)
        self.bump("players_seated_by_bench", self.held_players)

    async def sampler(self) -> None:
        """Every 2 s: the shards' games (from /healthz) and the gateways' RSS — for the peaks."""
        while True:
            with contextlib.suppress(Exception):
                h = await self.cluster.health()
                self.bump("games_in_shards", sum(int(s.get("games", 0)) for s in h.get("shards", [])))
                self.bump("gateway_rss", mem_of(self.cluster.gateway_pids(h)).rss or None)
            await asyncio.sleep(2.0)

    # ------------------------------------------------------------------ closed
    async def echo_closed(self) -> dict[str, Any]:
        c = self.cfg
        async with EchoServer() as echo:
            err(f"echo: bench.echo on {echo.address}")
            r = await loadgen(["--address", echo.address, "--echo", "--seconds", str(c.seconds),
                               "--concurrency", str(c.concurrency), "--games", str(c.path_games)])
        self.echo_rate = float(r["per_second"])
        self.results["echo_closed"] = r
        return r

    def games_file(self) -> Path:
        return self.tmp / "path-games.json"

    async def phase_closed(self) -> None:
        c = self.cfg
        say(f"\n== closed loop: {c.concurrency} calls in flight for {c.seconds:g} s, echo then the whole path")
        echo = await self.echo_closed()

        async def created(ev: dict[str, Any], _: asyncio.subprocess.Process) -> None:
            if ev["event"] == "created":
                self.add_held(int(ev["games"]), int(ev["players"]))

        path = await loadgen(["--address", self.cluster.grpc, "--seconds", str(c.seconds), "--concurrency",
                              str(c.concurrency), "--games", str(c.path_games), "--save-games",
                              str(self.games_file())], created)
        self.results["path_closed"] = path
        ratio = path["per_second"] / echo["per_second"] if echo["per_second"] else 0.0
        self.results["closed_ratio"] = ratio
        pl, el = path["latency"], echo["latency"]
        say(f"  whole path: {path['per_second']:,.0f} submissions/s, p50 {ms(pl.get('p50_ms'))}, "
            f"p99 {ms(pl.get('p99_ms'))}; errors {path['errors'] or 0}")
        say(f"  bare echo : {echo['per_second']:,.0f} calls/s, p50 {ms(el.get('p50_ms'))}, p99 {ms(el.get('p99_ms'))}")
        say(f"  ratio path/echo: {ratio:.2f}")
        say(f"  how: one load process (bench.loadgen, grpc.aio, 1 channel) keeps {c.concurrency} SubmitOrders calls "
            f"in flight for {c.seconds:g} s; each is a draft SalvoOrders(random_placement) with a unique "
            f"idempotency key, rotating over {path['games']} started Salvo games (host + autopilot, 3600 s "
            "deadline); latency = call start -> answer (journaled in Redis, appendfsync always). The echo "
            "(bench.echo, a grpc.aio server of the same rpc and messages answering a canned response) gets "
            "the same calls from the same client code.")

    # ------------------------------------------------------------------ open
    async def phase_open(self) -> None:
        c = self.cfg
        say("\n== open loop: Poisson arrivals against the whole path, latency from the scheduled send time")
        if self.echo_rate is None:
            await self.echo_closed()
        assert self.echo_rate is not None
        points: list[tuple[str, float, str]] = [("path_open_1000", 1000.0, "1,000/s")]
        if pc := self.results.get("path_closed"):  # a reference point the path can carry
            points.append(("path_open_half_path", pc["per_second"] / 2,
                           f"half the path's closed-loop rate ({pc['per_second']:,.0f}/s / 2)"))
        points.append(("path_open", self.echo_rate / 2, f"half the echo's closed-loop rate "
                       f"({self.echo_rate:,.0f}/s / 2)"))

        async def created(ev: dict[str, Any], _: asyncio.subprocess.Process) -> None:
            if ev["event"] == "created":
                self.add_held(int(ev["games"]), int(ev["players"]))

        for key, rate, why in points:
            args = ["--address", self.cluster.grpc, "--seconds", str(c.seconds), "--rate", f"{rate:.1f}"]
            if self.games_file().exists():
                args += ["--games-file", str(self.games_file())]
            else:
                args += ["--games", str(c.path_games), "--save-games", str(self.games_file())]
            r = await loadgen(args, created)
            r["why"] = why
            self.results[key] = r
            lat = r["latency"]
            bound = OPEN_P99_MS.get(key)
            ok = lat.get("p99_ms") is not None and bound is not None and lat["p99_ms"] <= bound
            goal = f" (target <= {bound:g} ms: {'met' if ok else 'NOT met'})" if bound else ""
            say(f"  offered {r['offered_per_s']:,.0f}/s = {why}: {r['sent']:,} sent, achieved "
                f"{r['per_second']:,.0f}/s; p50 {ms(lat.get('p50_ms'))}, p99 {ms(lat.get('p99_ms'))}{goal}; "
                f"errors {r['errors'] or 0}, dropped {r['dropped']}, last answer {r['drain_s']:.2f} s after the "
                "last arrival")
        say(f"  how: one load process sends SubmitOrders (as in the closed loop) at Poisson arrival times for "
            f"{c.seconds:g} s, calls not waiting for each other; latency = scheduled send time -> answer (no "
            "coordinated omission); achieved = answers / (first arrival -> last answer).")

    # ------------------------------------------------------------------ lobby
    async def phase_lobby(self) -> None:
        """Lobby calls (create, join by code, start with fill; Salvo, Archipelago of 4 and 8, Arcmage)
        from 8 workers while another load process submits at 1,000/s: each lobby rpc's latency."""
        c = self.cfg
        say(f"\n== lobby under play: 8 workers creating, joining and starting games for {c.seconds:g} s beside "
            f"{LOBBY_PLAY_RATE:,.0f} submissions/s")
        play = ["--address", self.cluster.grpc, "--seconds", str(c.seconds), "--rate", f"{LOBBY_PLAY_RATE:.0f}"]
        play += (["--games-file", str(self.games_file())] if self.games_file().exists()
                 else ["--games", str(c.path_games), "--save-games", str(self.games_file())])
        lobby, played = await asyncio.gather(
            loadgen(["--address", self.cluster.grpc, "--mode", "lobby", "--seconds", str(c.seconds),
                     "--concurrency", "8"]),
            loadgen(play))
        self.results["lobby"] = lobby
        self.results["lobby_play"] = played
        self.add_held(int(lobby["games"]), int(lobby["games"]) * 2)
        for rpc, q in lobby["latency"].items():
            say(f"  {rpc}: {q.get('count', 0):,} calls, p50 {ms(q.get('p50_ms'))}, p99 {ms(q.get('p99_ms'))}, "
                f"max {ms(q.get('max_ms'))}")
        pl = played["latency"]
        say(f"  beside them: {played['per_second']:,.0f} submissions/s, p99 {ms(pl.get('p99_ms'))}; lobby errors "
            f"{lobby['errors'] or 0}")

    # ------------------------------------------------------------------ peer
    async def phase_peer(self) -> None:
        """boardgame.io's server (in memory, then with its file storage) in the same run, driven by real
        boardgame.io clients from a process of their own (bench.peer_bench)."""
        from bench import peer_bench

        c = self.cfg
        say(f"\n== peer: boardgame.io, {c.peer_matches} matches x {c.peer_players} players of a simultaneous-move "
            f"game, {c.seconds:g} s each storage")
        for storage in ("memory", "flatfile"):
            try:
                r = await asyncio.to_thread(peer_bench.run_peer, seconds=c.seconds, matches=c.peer_matches,
                                            players=c.peer_players, storage=storage)
            except Exception as exc:  # (node or npm missing: said, and the phase fails)
                raise LoadError(f"the boardgame.io peer did not run: {exc}") from exc
            self.results[f"peer_{storage}"] = r
            say(f"  boardgame.io, {storage} storage: {float(r['moves_per_s']):,.0f} moves/s, p50 "
                f"{ms(r.get('p50_ms'))}, p99 {ms(r.get('p99_ms'))}")
        say("  how: bench/peer (Node): boardgame.io's Server, a game whose every player moves once a round (the "
            "round resolves when all have), real boardgame.io clients over socket.io in a process of their own, "
            "each moving as soon as its round opens; moves counted when the mover sees the new state.")

    # ------------------------------------------------------------------ collector pauses
    async def gc_scrape(self) -> dict[str, dict[float, float]]:
        """Every process's collector-pause buckets on /metrics: the gateway's own (no shard label) and
        each shard's."""
        with contextlib.suppress(Exception):
            return gc_by_process(await self.cluster.metrics())
        return {}

    # ------------------------------------------------------------------ watch
    async def phase_watch(self) -> None:
        c = self.cfg
        say(f"\n== watch: {c.streams:,} Watch streams on one gateway, fan-out latency under them")
        h = await self.cluster.health()
        gw = self.cluster.gateway_pids(h)
        g0 = mem_of(gw)
        redis0 = self.cluster.gateway_redis_connections()
        seen: dict[str, Any] = {}

        async def on_event(ev: dict[str, Any], proc: asyncio.subprocess.Process) -> None:
            if ev["event"] == "holding":
                self.add_held(int(ev["games"]), int(ev["players"]))
                self.bump("connected_players", float(ev["streams"]))
                text = await self.cluster.metrics()
                seen["holding"] = {"streams": ev["streams"], "gateway": mem_of(gw),
                                   "redis": self.cluster.gateway_redis_connections(),
                                   "redis_by_name": self.cluster.redis_clients(),
                                   "gauge": gauge(text, "archipelago_watch_streams")}
                self.bump("watch_streams_gauge", seen["holding"]["gauge"])
            elif ev["event"] == "fanout_done":
                seen["end"] = {"gateway": mem_of(gw), "redis": self.cluster.gateway_redis_connections(),
                               "gauge": gauge(await self.cluster.metrics(), "archipelago_watch_streams")}
                assert proc.stdin is not None
                proc.stdin.write(b"go\n")
                await proc.stdin.drain()

        r = await loadgen(["--address", self.cluster.grpc, "--mode", "watch", "--streams", str(c.streams),
                           "--seconds", str(c.fanout_seconds), "--fanout-rate", str(c.fanout_rate),
                           "--jobs", str(c.jobs), "--wait-stdin"], on_event, stdin=True)
        hold, end = seen.get("holding", {}), seen.get("end", {})
        g1: Mem = hold.get("gateway", Mem())
        g2: Mem = end.get("gateway", Mem())
        redis_max = max((x for x in (hold.get("redis"), end.get("redis")) if x is not None), default=None)
        f = r["fanout"]
        out = {**r, "gateway_rss_before": g0.rss, "gateway_rss_holding": g1.rss, "gateway_rss_end": g2.rss,
               "gateway_uss_holding": g1.uss, "redis_gateway_connections_before": redis0,
               "redis_gateway_connections_holding": hold.get("redis"),
               "redis_gateway_connections_end": end.get("redis"),
               "redis_gateway_connections_max": redis_max, "redis_clients_by_name": hold.get("redis_by_name"),
               "watch_streams_gauge": hold.get("gauge"), "gateway_pids": gw}
        self.results["watch"] = out
        per_stream = (g1.rss - g0.rss) / r["streams_held"] if r["streams_held"] else 0.0
        say(f"  streams held: {r['streams_held']:,} of {r['streams_wanted']:,} over {r['games']:,} games "
            f"(gateway's archipelago_watch_streams: {hold.get('gauge')}); stream errors {r['stream_errors'] or 0}")
        say(f"  gateway Redis connections (CLIENT LIST, names archipelago-gateway*): {redis0} before, "
            f"{hold.get('redis')} holding, {end.get('redis')} after the fan-out")
        say(f"  gateway RSS: {mib(g0.rss)} before, {mib(g1.rss)} holding, {mib(g2.rss)} at the end "
            f"(~{per_stream / 1024:,.1f} KiB per stream held)")
        say(f"  fan-out: p50 {ms(f.get('p50_ms'))}, p99 {ms(f.get('p99_ms'))}, max {ms(f.get('max_ms'))} "
            f"({f.get('count', 0):,} samples, {r['fanout_missing']} not seen); submissions errors "
            f"{r['submissions']['errors'] or 0}")
        say(f"  how: two-seat Salvo games created, joined by code and started (both seats real players), both "
            f"seats on a Watch stream (8 channels from one load process); held while seat A of the games in "
            f"turn submits a draft at {c.fanout_rate:g}/s for {c.fanout_seconds:g} s; fan-out = A's call sent -> "
            "the 'submitted' update for A on B's stream. Redis and RSS read while the streams are held "
            f"(RSS: /proc/PID/status of the gateway process{'es' if len(gw) > 1 else ''} {gw}).")

    # ------------------------------------------------------------------ spectate
    async def phase_spectate(self) -> None:
        """``spectators`` Spectate streams held on one gateway, ``spectators_per_game`` a public game: the
        gauge, the gateway's RSS and Redis connections, and the fan-out to spectators under them."""
        c = self.cfg
        say(f"\n== spectate: {c.spectators:,} spectator streams on one gateway ({c.spectators_per_game} a game), "
            "fan-out latency to spectators under them")
        h = await self.cluster.health()
        gw = self.cluster.gateway_pids(h)
        g0 = mem_of(gw)
        redis0 = self.cluster.gateway_redis_connections()
        gauge0 = gauge(await self.cluster.metrics(), SPECTATOR_GAUGE)
        seen: dict[str, Any] = {}

        async def on_event(ev: dict[str, Any], proc: asyncio.subprocess.Process) -> None:
            if ev["event"] == "holding":
                self.add_held(int(ev["games"]), int(ev["players"]))
                seen["holding"] = {"gateway": mem_of(gw), "redis": self.cluster.gateway_redis_connections(),
                                   "redis_by_name": self.cluster.redis_clients(),
                                   "gauge": gauge(await self.cluster.metrics(), SPECTATOR_GAUGE)}
                self.bump("spectator_streams_gauge", seen["holding"]["gauge"])
            elif ev["event"] == "fanout_done":
                seen["end"] = {"gateway": mem_of(gw), "redis": self.cluster.gateway_redis_connections(),
                               "gauge": gauge(await self.cluster.metrics(), SPECTATOR_GAUGE)}
                assert proc.stdin is not None
                proc.stdin.write(b"go\n")
                await proc.stdin.drain()

        r = await loadgen(["--address", self.cluster.grpc, "--mode", "spectate", "--streams", str(c.spectators),
                           "--per-game", str(c.spectators_per_game), "--seconds", str(c.fanout_seconds),
                           "--fanout-rate", str(c.fanout_rate), "--jobs", str(c.jobs), "--wait-stdin"],
                          on_event, stdin=True)
        hold, end = seen.get("holding", {}), seen.get("end", {})
        g1: Mem = hold.get("gateway", Mem())
        g2: Mem = end.get("gateway", Mem())
        redis_max = max((x for x in (hold.get("redis"), end.get("redis")) if x is not None), default=None)
        held = int(r["streams_held"])
        per_1000 = (g1.rss - g0.rss) * 1000 / held if held else None
        out = {**r, "gateway_rss_before": g0.rss, "gateway_rss_holding": g1.rss, "gateway_rss_end": g2.rss,
               "gateway_uss_holding": g1.uss, "gateway_rss_per_1000_spectators": per_1000,
               "redis_gateway_connections_before": redis0, "redis_gateway_connections_holding": hold.get("redis"),
               "redis_gateway_connections_end": end.get("redis"), "redis_gateway_connections_max": redis_max,
               "redis_clients_by_name": hold.get("redis_by_name"), "spectator_gauge_before": gauge0,
               "spectator_gauge_holding": hold.get("gauge"), "spectator_gauge_end": end.get("gauge"),
               "gateway_pids": gw}
        self.results["spectate"] = out
        f, last = r["fanout"], r["fanout_last"]
        agree = hold.get("gauge") is not None and hold["gauge"] - (gauge0 or 0.0) == held
        say(f"  spectator streams held: {held:,} of {r['streams_wanted']:,} over {r['games']:,} public games "
            f"(gateway's {SPECTATOR_GAUGE}: {gauge0} before, {hold.get('gauge')} holding"
            f"{'' if agree else ' — DOES NOT AGREE'}); seq gaps {r['seq_gaps']}; stream errors "
            f"{r['stream_errors'] or 0}; opened in {r['open_s']:.1f} s")
        say(f"  gateway Redis connections (CLIENT LIST, names archipelago-gateway*): {redis0} before, "
            f"{hold.get('redis')} holding, {end.get('redis')} after the fan-out")
        say(f"  gateway RSS: {mib(g0.rss)} before, {mib(g1.rss)} holding, {mib(g2.rss)} at the end "
            f"(~{mib(per_1000) if per_1000 is not None else '—'} per 1,000 spectator streams)")
        say(f"  fan-out to spectators: p50 {ms(f.get('p50_ms'))}, p99 {ms(f.get('p99_ms'))}, max {ms(f.get('max_ms'))} "
            f"({f.get('count', 0):,} arrivals); to a game's last spectator p50 {ms(last.get('p50_ms'))}, "
            f"p99 {ms(last.get('p99_ms'))} ({last.get('count', 0):,} submissions, {r['fanout_missing']} not seen "
            f"by all); submission errors {r['submissions']['errors'] or 0}")
        say(f"  how: public two-seat Salvo games (the host a player of the load process, seat B the autopilot, "
            f"3600 s deadline), {c.spectators_per_game} Community.Spectate streams on each from after_seq 0 (8 "
            "channels from one load process), each checking its seqs run 1, 2, 3, … with no gap; held while the "
            f"hosts of the games in turn submit a draft at {c.fanout_rate:g}/s for {c.fanout_seconds:g} s (a game's "
            "next once all its spectators saw the last); fan-out = the host's call sent -> the 'submitted' update "
            "for the host on a spectator's stream (every stream's arrival; 'last': the game's slowest). RSS and "
            f"Redis read while the streams are held (RSS: /proc/PID/status of {gw}).")

    # ------------------------------------------------------------------ memory
    async def idle_cpu(self, pids: list[int], label: str) -> float:
        """Shard CPU seconds per minute over an idle window of ``idle_seconds``."""
        w = self.cfg.idle_seconds
        c0, t0 = cpu_of(pids), time.monotonic()
        while (el := time.monotonic() - t0) < w:
            progress(f"memory: idle window after {label}: {el:4.1f}/{w:g} s, shard CPU {cpu_of(pids) - c0:.2f} s")
            await asyncio.sleep(min(0.5, w - el))
        c1, el = cpu_of(pids), time.monotonic() - t0
        err("")
        return (c1 - c0) / el * 60.0

    async def phase_memory(self) -> None:
        c = self.cfg
        k = c.games_per_kind
        say(f"\n== memory and CPU per 1,000 games: {k:,} games of each kind, shards' /proc")
        pids = await self.cluster.shard_pids()
        if not pids:
            say("  not measured: /healthz names no shard pid on this machine (a cluster elsewhere?)")
            self.results["memory"] = {"skipped": "no shard pid readable here"}
            return
        kinds = [("lobby", "lobby games (created, not started)", 1),
                 ("salvo", "running Salvo (2 seats, autopilot fill)", 2),
                 ("archipelago", "running Archipelago (8 seats, autopilot fill)", 8)]
        rows: dict[str, Any] = {}
        # Warm up with a few games of each kind first, so that one-time costs (code paths, connection pools,
        # the neighbour and sight tables shared by every board of one size) are not charged to a kind.
        warm = max(5, min(50, k // 20))
        for kind, _, seats in kinds:
            r = await loadgen(["--address", self.cluster.grpc, "--mode", "create", "--kind", kind, "--games",
                               str(warm), "--jobs", str(c.jobs)])
            self.add_held(int(r["games"]), int(r["games"]) * seats if kind != "lobby" else int(r["players"]))
        base_rate = await self.idle_cpu(pids, "the warm-up")
        for kind, label, seats in kinds:
            m0, cpu0 = mem_of(pids), cpu_of(pids)
            r = await loadgen(["--address", self.cluster.grpc, "--mode", "create", "--kind", kind, "--games", str(k),
                               "--jobs", str(c.jobs)])
            cpu_create = cpu_of(pids) - cpu0
            m1 = mem_of(pids)
            self.add_held(int(r["games"]), int(r["games"]) * seats if kind != "lobby" else int(r["players"]))
            rate = await self.idle_cpu(pids, f"{r['games']:,} {kind} games")
            n = max(1, int(r["games"]))
            d = m1 - m0
            per_k = Mem(d.rss * 1000 // n, d.pss * 1000 // n, d.uss * 1000 // n)
            rows[kind] = {"label": label, "games": r["games"], "failed": r["failed"], "create_s": r["seconds"],
                          "create_per_s": r["games_per_s"], "rss_before": m0.rss, "rss_after": m1.rss,
                          "uss_before": m0.uss, "uss_after": m1.uss,
                          "rss_per_1000": per_k.rss, "pss_per_1000": per_k.pss, "uss_per_1000": per_k.uss,
                          "games_per_gib_uss": GiB / (d.uss / n) if d.uss > 0 else None,
                          "games_per_gib_rss": GiB / (d.rss / n) if d.rss > 0 else None,
                          "cpu_s_create_per_1000": cpu_create * 1000 / n,
                          "idle_cpu_s_per_min": rate, "idle_cpu_s_per_min_baseline": base_rate,
                          "idle_cpu_s_per_min_per_1000": (rate - base_rate) * 1000 / n}
            base_rate = rate
        # One Ray actor per game instead: a shard before its first game is one Ray actor with our code.
        actor_uss, actor_rss, actor_src = STACK_ACTOR_USS, STACK_ACTOR_RSS, "stack.md (~40 MB unique, ~80 MB RSS)"
        if self.shard_idle is not None and self.shard_idle.uss > 0:
            actor_uss, actor_rss = self.shard_idle.uss, self.shard_idle.rss
            actor_src = "a shard measured before its first game (one Ray actor, engine loaded)"
        for row in rows.values():
            if row["games_per_gib_uss"]:
                per_game_uss = row["uss_per_1000"] / 1000
                row["games_per_gib_one_actor_per_game"] = GiB / (actor_uss + per_game_uss)
                row["ratio_vs_one_actor_per_game"] = row["games_per_gib_uss"] / row["games_per_gib_one_actor_per_game"]
        self.results["memory"] = {"kinds": rows, "shard_pids": pids, "actor_uss": actor_uss, "actor_rss": actor_rss,
                                  "actor_source": actor_src, "stack_md_actor_uss": STACK_ACTOR_USS,
                                  "idle_seconds": c.idle_seconds}
        say(f"  {'kind':<46} {'RSS/1k':>10} {'USS/1k':>10} {'games/GiB':>10} {'vs actor/game':>13} "
            f"{'CPU create/1k':>13} {'idle CPU/min/1k':>15}")
        for row in rows.values():
            gpg = row["games_per_gib_uss"]
            ratio = row.get("ratio_vs_one_actor_per_game")
            say(f"  {row['label']:<46} {mib(row['rss_per_1000']):>10} {mib(row['uss_per_1000']):>10} "
                f"{(f'{gpg:,.0f}' if gpg else '—'):>10} {(f'{ratio:,.0f}x' if ratio else '—'):>13} "
                f"{row['cpu_s_create_per_1000']:>11.1f} s {row['idle_cpu_s_per_min_per_1000']:>13.2f} s")
        say(f"  one Ray actor per game: {mib(actor_uss)} unique ({mib(actor_rss)} RSS) per actor, from {actor_src}"
            + ("" if actor_src.startswith("stack.md") else "; stack.md says ~40 MB unique / ~80 MB RSS"))
        say(f"  how: the shard processes (pids {pids} from /healthz) summed: VmRSS (/proc/PID/status) and USS = "
            f"Private_Clean + Private_Dirty (/proc/PID/smaps_rollup) before and after creating {k:,} games of a "
            "kind (bench.loadgen --mode create); games/GiB = 1 GiB / USS growth per game; 'vs actor/game' = that "
            "/ (1 GiB / (one actor's USS + the game's)). CPU = utime+stime (/proc/PID/stat) of the shards: "
            f"while creating, and over an idle {c.idle_seconds:g} s window after, minus the window before "
            f"(scaled to a minute). {warm} games of each kind were made first, uncounted (warm-up).")

    # ------------------------------------------------------------------ deadlines
    async def phase_deadlines(self) -> None:
        c = self.cfg
        n = c.slow_games
        # The deadlines start once the games are likely all made: the creation rates seen so far guide.
        mem = self.results.get("memory", {}).get("kinds", {}).get("salvo", {})
        watch = self.results.get("watch", {})
        seen = [float(mem.get("create_per_s") or 0.0), float(watch.get("games_per_s") or 0.0)]
        rate = max([x for x in seen if x > 0] or [150.0])
        lead = max(8.0, n / rate * 1.1 + 5.0)
        say(f"\n== deadlines: {n:,} Salvo games due {lead:.0f}-{lead + c.deadline_window:.0f} s after the "
            f"phase starts; {c.sample} watched")
        h0 = await self.cluster.health()
        fired0 = sum(int(s.get("deadlines_fired", 0)) for s in h0.get("shards", []))
        hist0 = histogram(await self.cluster.metrics(), "archipelago_deadline_lateness_seconds")
        t0 = time.monotonic()

        async def created(ev: dict[str, Any], _: asyncio.subprocess.Process) -> None:
            if ev["event"] == "created":
                self.add_held(int(ev["games"]), int(ev["players"]))

        r = await loadgen(["--address", self.cluster.grpc, "--mode", "deadlines", "--games", str(n), "--sample",
                           str(c.sample), "--lead", f"{lead:.1f}", "--window", str(c.deadline_window), "--jobs",
                           str(c.jobs)], created)
        # Every game's round-0 deadline has fired when the shards' counters have grown by the games created.
        want = int(r["games"])
        limit = t0 + lead + c.deadline_window + 180.0
        fired = 0
        while time.monotonic() < limit:
            h = await self.cluster.health()
            fired = sum(int(s.get("deadlines_fired", 0)) for s in h.get("shards", [])) - fired0
            progress(f"deadlines: {fired:,}/{want:,} deadlines fired (shards' /healthz)")
            if fired >= want:
                break
            await asyncio.sleep(1.0)
        err("")
        hist1 = histogram(await self.cluster.metrics(), "archipelago_deadline_lateness_seconds")
        shard = histogram_stats(hist1, hist0) if hist1 is not None else None
        self.results["deadlines"] = {**r, "deadlines_fired": fired, "shard_histogram": shard,
                                     "shard_histogram_missing": hist1 is None}
        lat = r["lateness"]
        say(f"  created {r['games']:,} games in {r['creation_seconds']:.0f} s ({r['clamped_to_1s']} had to be "
            f"given the 1 s minimum: created after their slot); {fired:,} deadlines fired")
        if lat.get("count"):
            say(f"  watched ({lat['count']} games): lateness p50 {ms(lat['p50_ms'])}, p99 {ms(lat['p99_ms'])}, "
                f"max {ms(lat['max_ms'])}; within 1 s: {r['within_1s']:.1%}; closed early: {r['closed_early']}")
        if shard is None:
            say("  shard histogram archipelago_deadline_lateness_seconds: MISSING from /metrics")
        elif shard["count"]:
            say(f"  shards ({shard['count']:,} closes): p50 {hq(shard, 'p50')}, p99 {hq(shard, 'p99')}, "
                f"max {le_text(shard['max_le_s'])}; within 1 s: {shard['within_1s']:.1%}")
        say("  how: each game is created with deadline_seconds = its slot (uniform over the window) - now, and "
            "started at once (autopilot fill; the host watching in the sample, never submitting, so the round "
            "waits for its deadline); watched: round_closed (early=false) arrival on the host's stream - "
            "round_opened's data.deadline_unix_ms (same machine clock; includes the fan-out). Shards: the "
            "histogram's growth over the phase (closing journaled - deadline), quantiles interpolated in buckets.")


# ---------------------------------------------------------------------------------------------- summary
def summary_rows(b: Bench) -> list[tuple[str, str, str, str]]:
    """(figure, value, target, how) rows of what was measured."""
    r = b.results
    rows: list[tuple[str, str, str, str]] = []
    if pc := r.get("path_closed"):
        lat = pc["latency"]
        rows.append(("closed loop, whole path", f"{pc['per_second']:,.0f}/s; p50 {ms(lat.get('p50_ms'))}, "
                     f"p99 {ms(lat.get('p99_ms'))}", "", f"{b.cfg.concurrency} in flight, {pc['games']} games"))
    if ec := r.get("echo_closed"):
        lat = ec["latency"]
        rows.append(("closed loop, bare grpc.aio echo", f"{ec['per_second']:,.0f}/s; p50 {ms(lat.get('p50_ms'))}, "
                     f"p99 {ms(lat.get('p99_ms'))}", "", "same client, same rpc"))
    if "closed_ratio" in r:
        rows.append(("ratio path / echo", f"{r['closed_ratio']:.2f}", "", "closed-loop rates"))
    for key, what in (("path_open", "echo/2"), ("path_open_half_path", "path/2")):
        if po := r.get(key):
            lat = po["latency"]
            rows.append((f"open loop, whole path, {what}", f"{po['per_second']:,.0f}/s of {po['offered_per_s']:,.0f}/s "
                         f"offered; p50 {ms(lat.get('p50_ms'))}, p99 {ms(lat.get('p99_ms'))}", "p99 <= 50 ms",
                         "Poisson, from scheduled time"))
    if w := r.get("watch"):
        f = w["fanout"]
        rows.append(("Watch streams held (one gateway)", f"{w['streams_held']:,}", "10,000", f"{w['games']:,} games"))
        rows.append(("gateway Redis connections", f"{w['redis_gateway_connections_max']}", "<= 32 (pool)",
                     "CLIENT LIST, holding"))
        rows.append(("gateway RSS holding streams", mib(w["gateway_rss_holding"]), "",
                     f"before {mib(w['gateway_rss_before'])}"))
        rows.append(("fan-out latency under streams", f"p50 {ms(f.get('p50_ms'))}, p99 {ms(f.get('p99_ms'))}", "",
                     f"{w['fanout_rate']:g}/s submissions"))
    if sp := r.get("spectate"):
        f = sp["fanout"]
        g = sp.get("spectator_gauge_holding")
        gauge_text = "" if g is None else f"; gauge {g:,.0f}"
        rows.append(("spectator streams per gateway", f"{sp['streams_held']:,} held; fan-out p50 "
                     f"{ms(f.get('p50_ms'))}, p99 {ms(f.get('p99_ms'))}", "",
                     f"{sp['games']:,} public games x {sp['per_game']}; {sp['fanout_rate']:g}/s submissions; "
                     f"seq gaps {sp['seq_gaps']}{gauge_text}"))
        per_1000 = sp.get("gateway_rss_per_1000_spectators")
        rows.append(("gateway RSS per 1,000 spectators", "—" if per_1000 is None else mib(per_1000), "",
                     f"{mib(sp['gateway_rss_before'])} -> {mib(sp['gateway_rss_holding'])} holding"))
        rows.append(("gateway Redis connections, spectating", f"{sp['redis_gateway_connections_max']}",
                     "<= 32 (pool)", "CLIENT LIST, holding"))
    pk = b.peak
    if pk:
        rows.append(("peak games held", f"{pk.get('games_in_shards', 0):,.0f} in shards "
                     f"({pk.get('games_created_by_bench', 0):,.0f} created)", "", "/healthz every 2 s"))
        rows.append(("peak players", f"{pk.get('players_seated_by_bench', 0):,.0f} seated, "
                     f"{pk.get('connected_players', 0):,.0f} connected", "", "seats incl. autopilot; streams"))
    if (m := r.get("memory")) and "kinds" in m:
        for row in m["kinds"].values():
            gpg = row.get("games_per_gib_uss")
            ratio = row.get("ratio_vs_one_actor_per_game")
            rows.append((f"per 1,000 {row['label'].split(' (')[0]}",
                         f"USS {mib(row['uss_per_1000'])}, RSS {mib(row['rss_per_1000'])}; "
                         f"{(f'{gpg:,.0f}' if gpg else '—')} games/GiB; {(f'{ratio:,.0f}x' if ratio else '—')} "
                         f"actor/game; idle CPU {row['idle_cpu_s_per_min_per_1000']:.2f} s/min",
                         ">= 50x", f"create CPU {row['cpu_s_create_per_1000']:.1f} s"))
    if d := r.get("deadlines"):
        lat = d["lateness"]
        if lat.get("count"):
            rows.append(("deadline lateness, watched", f"p50 {ms(lat['p50_ms'])}, p99 {ms(lat['p99_ms'])}, max "
                         f"{ms(lat['max_ms'])}; {d['within_1s']:.1%} within 1 s", "", f"{lat['count']} of "
                         f"{d['games']:,} games"))
        sh = d.get("shard_histogram")
        if sh is None:
            rows.append(("deadline lateness, shards", "MISSING (no histogram on /metrics)", "", ""))
        elif sh.get("count"):
            rows.append(("deadline lateness, shards", f"p50 {hq(sh, 'p50')}, p99 {hq(sh, 'p99')}, "
                         f"max {le_text(sh['max_le_s'])}; "
                         f"{sh['within_1s']:.1%} within 1 s", "", f"{sh['count']:,} closes, histogram"))
    return rows


def target_rows(b: Bench) -> list[tuple[str, str, bool | None]]:
    """(issue 24's target, the figure measured, met?) — None where the run did not measure it."""
    r = b.results
    out: list[tuple[str, str, bool | None]] = []
    ratio = r.get("closed_ratio")
    out.append((f"closed loop >= {CLOSED_RATIO_TARGET} x the bare echo, same run",
                f"{ratio:.2f}" if ratio is not None else "not measured",
                None if ratio is None else ratio >= CLOSED_RATIO_TARGET))
    path, peer = r.get("path_closed"), r.get("peer_memory")
    if path and peer:
        rel = path["per_second"] / max(1e-9, float(peer["moves_per_s"]))
        out.append(("closed loop ahead of boardgame.io's in-memory server, same run, while durable",
                    f"{path['per_second']:,.0f}/s vs {float(peer['moves_per_s']):,.0f} moves/s ({rel:.2f}x)",
                    rel > 1.0))
    else:
        out.append(("closed loop ahead of boardgame.io's in-memory server, same run", "not measured", None))
    for key, what in (("path_open_1000", "at 1,000/s offered"), ("path_open", "at half the echo's closed-loop rate")):
        bound = OPEN_P99_MS[key]
        po = r.get(key)
        p99 = po["latency"].get("p99_ms") if po else None
        out.append((f"p99 <= {bound:g} ms {what}", ms(p99) if po else "not measured",
                    None if p99 is None else p99 <= bound))
    w = r.get("watch")
    f99 = w["fanout"].get("p99_ms") if w else None
    out.append((f"fan-out under {b.cfg.streams:,} Watch streams p99 <= {FANOUT_P99_MS:g} ms",
                ms(f99) if w else "not measured", None if f99 is None else f99 <= FANOUT_P99_MS))
    lob = r.get("lobby")
    if lob:
        worst = max((q.get("p99_ms", 0.0) for q in lob["latency"].values() if q.get("count")), default=None)
        text = ", ".join(f"{rpc} {ms(q.get('p99_ms'))}" for rpc, q in lob["latency"].items())
        out.append((f"lobby calls p99 <= {LOBBY_P99_MS:,.0f} ms under {LOBBY_PLAY_RATE:,.0f} submissions/s",
                    f"p99 {text}", None if worst is None else worst <= LOBBY_P99_MS))
    else:
        out.append((f"lobby calls p99 <= {LOBBY_P99_MS:,.0f} ms under play", "not measured", None))
    pauses = r.get("gc_pauses") or {}
    if pauses:
        worst = max(pauses.items(), key=lambda kv: kv[1].get("p99_s", 0.0))
        text = ", ".join(f"{who} {ms(st.get('p99_s', 0.0) * 1000)} ({st['count']:,})"
                         for who, st in sorted(pauses.items()))
        out.append((f"collector pauses p99 <= {GC_P99_MS:g} ms in every process", f"p99 {text}",
                    worst[1].get("p99_s", 0.0) * 1000 <= GC_P99_MS))
    else:
        out.append((f"collector pauses p99 <= {GC_P99_MS:g} ms in every process", "not measured", None))
    return out


def print_summary(b: Bench, info: dict[str, Any], elapsed: float) -> None:
    targets = target_rows(b)
    say("\n== targets (issue 24)")
    for what, figure, ok in targets:
        say(f"  {'met    ' if ok else 'NOT met' if ok is False else '—      '}  {what}: {figure}")
    rows = summary_rows(b)
    say(f"\n== summary ({info['cores']} cores, {info['cpu_model']}; {info['date']}; run {elapsed:.0f} s)")
    w0 = max((len(r[0]) for r in rows), default=10)
    w1 = max((len(r[1]) for r in rows), default=10)
    w2 = max((len(r[2]) for r in rows), default=6)
    say(f"  {'figure':<{w0}}  {'value':<{w1}}  {'target':<{w2}}  notes")
    say(f"  {'-' * w0}  {'-' * w1}  {'-' * w2}  -----")
    for a, v, t, n in rows:
        say(f"  {a:<{w0}}  {v:<{w1}}  {t:<{w2}}  {n}")


def jsonable(x: Any) -> Any:
    if isinstance(x, Mem):
        return {"rss": x.rss, "pss": x.pss, "uss": x.uss}
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


# ---------------------------------------------------------------------------------------------- main
async def main_async(a: argparse.Namespace) -> int:
    cfg = Settings.quick() if a.quick else Settings()
    for name in ("streams", "spectators", "spectators_per_game", "games_per_kind", "slow_games", "concurrency",
                 "seconds", "sample", "deadline_window"):
        val = getattr(a, name)
        if val is not None:
            setattr(cfg, name, val)
    phases = [p.strip() for p in a.only.split(",")] if a.only else list(PHASES)
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise SystemExit(f"unknown phase(s) {sorted(unknown)}: choose from {', '.join(PHASES)}")
    info = machine()
    say(f"capacity bench{' (quick)' if a.quick else ''}: phases {', '.join(phases)}")
    say(f"machine: {info['cores']} cores (os.cpu_count() {info['cpu_count']}), {info['cpu_model']}, "
        f"{info.get('mem_total_gib', 0):.1f} GiB; Python {info['python']}; {info['date']}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in info['loadavg_at_start'])}")
    t_start = time.monotonic()
    if a.address:
        if not a.http:
            raise SystemExit("--address needs --http HOST:PORT (for /healthz and /metrics)")
        cluster = Cluster(a.address, a.http, a.redis)
        await cluster.wait_serving()
        say(f"cluster: already running at gRPC {a.address}, HTTP {a.http}, Redis {a.redis or '(not given)'}")
    else:
        cluster = Cluster()
    bench = Bench(cfg, cluster)
    sampler: asyncio.Task[None] | None = None
    failed: list[str] = []
    try:
        if not cluster.owned and not a.address:
            await cluster.start(a.shards, a.gateways)
        pids = await cluster.shard_pids()
        if cluster.owned and pids:
            bench.shard_idle = mem_of(pids[:1])
        sampler = asyncio.get_running_loop().create_task(bench.sampler())
        gc_before = await bench.gc_scrape()
        steps: dict[str, Callable[[], Awaitable[None]]] = {
            "closed": bench.phase_closed, "open": bench.phase_open, "watch": bench.phase_watch,
            "spectate": bench.phase_spectate,
            "memory": bench.phase_memory, "deadlines": bench.phase_deadlines, "peer": bench.phase_peer,
            "lobby": bench.phase_lobby}
        for p in RUN_ORDER:
            if p in phases:
                try:
                    await steps[p]()
                except LoadError as exc:
                    failed.append(p)
                    say(f"  phase {p} FAILED: {exc}")
        gc_after = await bench.gc_scrape()
        bench.results["gc_pauses"] = {who: histogram_stats(b, gc_before.get(who)) for who, b in gc_after.items()}
    finally:
        if sampler is not None:
            sampler.cancel()
        left = await cluster.stop(a.keep_data) if cluster.owned else []
        shutil.rmtree(bench.tmp, ignore_errors=True)
    elapsed = time.monotonic() - t_start
    print_summary(bench, info, elapsed)
    if a.json:
        doc = {"machine": info, "settings": cfg.__dict__, "phases": phases, "failed_phases": failed,
               "results": bench.results, "peaks": bench.peak, "cluster_start_s": cluster.started_s,
               "left_behind": left, "elapsed_s": elapsed,
               "summary": [dict(zip(("figure", "value", "target", "notes"), r, strict=True))
                           for r in summary_rows(bench)],
               "targets": [{"target": t, "figure": f, "met": ok} for t, f, ok in target_rows(bench)]}
        Path(a.json).write_text(json.dumps(jsonable(doc), indent=2))
        say(f"\nwrote {a.json}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.capacity", description=(__doc__ or "").split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--quick", action="store_true", help="a ~1-minute smoke run (smaller counts)")
    ap.add_argument("--only", help=f"comma-separated phases: {','.join(PHASES)}")
    ap.add_argument("--json", help="also write every figure to this JSON file")
    ap.add_argument("--address", help="target a running cluster's gRPC HOST:PORT instead of starting one")
    ap.add_argument("--http", help="with --address: its HTTP HOST:PORT (/healthz, /metrics)")
    ap.add_argument("--redis", help="with --address: its Redis URL (for CLIENT LIST)")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--keep-data", action="store_true", help="keep the started cluster's data directory")
    ap.add_argument("--gateways", type=int, default=1, help="gateway processes (passed to serve when > 1)")
    ap.add_argument("--concurrency", type=int, help="closed loop: calls in flight (64)")
    ap.add_argument("--seconds", type=float, help="closed and open loop: seconds each (10; quick 4)")
    ap.add_argument("--streams", type=int, help="watch: streams to hold (10,000; quick 1,000)")
    ap.add_argument("--spectators", type=int, help="spectate: spectator streams to hold (10,000; quick 1,000)")
    ap.add_argument("--spectators-per-game", dest="spectators_per_game", type=int,
                    help="spectate: spectator streams on each game (20)")
    ap.add_argument("--games-per-kind", dest="games_per_kind", type=int, help="memory: games per kind (1,000)")
    ap.add_argument("--slow-games", dest="slow_games", type=int, help="deadlines: games (10,000; quick 600)")
    ap.add_argument("--sample", type=int, help="deadlines: games watched (500; quick 100)")
    ap.add_argument("--deadline-window", dest="deadline_window", type=float,
                    help="deadlines: seconds over which the games' deadlines are spread (100; quick 4)")
    a = ap.parse_args(argv)
    try:
        code = asyncio.run(main_async(a))
    except KeyboardInterrupt:
        code = 130
    raise SystemExit(code)


if __name__ == "__main__":
    main()
