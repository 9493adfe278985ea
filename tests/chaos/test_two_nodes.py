"""Two gateways on a two-node Ray cluster (issue 13): games played across both gateways while one
gateway stops gracefully and one Ray node is killed; every game finishes, nothing acknowledged is
lost, nothing is applied twice, and both gateways agree on the cluster's shard set.

Everything is real and separate, as an operator runs it: a durable redis-server, a Ray head node and
a second Ray node started with ``ray start`` on this host (each with its own temp dir; the node
address is the machine's non-loopback address, and ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1`` lets Ray
put two nodes on one host), and two ``archipelago serve`` processes joining them (``RAY_ADDRESS``,
``REDIS_URL``). Gateway A (``--shards 4``) is the cluster's first serve: it records the shard set in
Redis and creates the four detached shards, two on each node; gateway B (``--shards 2``, on purpose)
follows the recorded set. Each game is played through both gateways: one seat's channel prefers A,
the other's B, and each fails over to the other gateway when its own goes.

The chaos, in mid-play: SIGTERM to gateway B (it drains, its streams are cut, it exits 0), then
SIGKILL to every process of the second Ray node (raylet, agents, shard workers): Ray declares the
node dead within seconds (fast health checks on the head) and restarts its shards on the head
(detached, ``max_restarts=-1``); they reload their games from their journals.

Each Ray node's processes are found by their session id: every ``ray start`` runs in a new session,
and every process it starts (daemons, and the raylet's workers, which change only their process
group) stays in that session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from archipelago.v1 import salvo_pb2
from client.grpc_client import Client
from services.cluster import RedisProcess, free_port, shard_names, start_redis_server
from services.store import Store
from tests.chaos.bots import Record, lost_and_twice, play, watch_gaps

pytestmark = pytest.mark.e2e

GAMES = 20
# Classic Salvo (one shot a turn): a game lasts ~95 rounds with these bots (~100 acknowledgements a
# second for all games here), so with 20 games gateway B's graceful stop (~7 s: 1 s of drain, then up
# to 5 s for its open streams) ends a third to half-way through play and the node dies in mid-play
# with a margin of about two; with 10 games (or salvo mode, ~15 rounds a game) B's stop used up to 80 %
# of the play. Rounds have 15 s deadlines: a round left open by a shard's death closes at its
# deadline at the latest (see the note in the test on rounds closed at their deadline).
OPTIONS = salvo_pb2.SalvoOptions(mode="classic")
DEADLINE_S = 15
PREFIX = "arch:"  # `archipelago serve`'s own
BIN = Path(sys.executable).parent
# Ray's processes: two nodes on one host, no auth token files, no usage reports, no task events.
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           "RAY_task_events_report_interval_ms": "0"}
# The head's GCS checks each raylet every second and declares it dead after 5 failed checks in a row
# (Ray's defaults: every 3 s, 10 s timeout): a killed raylet refuses connections, so each check fails
# at once and the node is dead in ~5 s; a live but busy one still has 3 s to answer each.
FAST_NODE_DEATH = {"RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "1000",
                   "RAY_health_check_timeout_ms": "3000", "RAY_health_check_failure_threshold": "5"}
# Ray's SPREAD is best effort: 4 shards created back to back land all on one of two nodes about one
# time in six here. Capacity makes the spread certain: each shard asks one unit of a custom resource
# (ARCHIPELAGO_SHARD_RESOURCES, an operator's setting), the second node offers 2, the head 4 of which
# a placeholder holds 2 while the shards are created; released, they leave the head room for the
# second node's shards when Ray restarts them there.
SHARD_RESOURCES = {"archipelago_shard": 1}
HEAD_RESOURCES = {"archipelago_shard": 4, "placeholder": 1}
WORKER_RESOURCES = {"archipelago_shard": 2}
HOLD = """
import sys
import ray
ray.init(address=sys.argv[1], namespace="two-nodes-placeholder", log_to_driver=False)
@ray.remote(num_cpus=0, resources={"archipelago_shard": 2, "placeholder": 1})
class Placeholder:
    def ready(self) -> bool:
        return True
held = Placeholder.remote()
print(ray.get(held.ready.remote()), flush=True)
sys.stdin.read()  # held until the test closes our stdin; then we exit and the placeholder dies with us
"""


def node_address() -> str:
    """This machine's non-loopback address (the one its default route leaves from), else the first of
    ``hostname -I``, else its host name (Ray accepts a name mapped to 127.0.0.1, not the literal)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 1))  # UDP: sends nothing, only picks the route
        ip = str(s.getsockname()[0])
        if not ip.startswith("127."):
            return ip
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
        for ip in out:
            if "." in ip and not ip.startswith("127."):
                return ip
    return socket.gethostname()


def port_outside_ray_ranges() -> int:
    """A free port outside 10001-19999 (Ray's client server and default worker ports)."""
    while True:
        port = free_port()
        if not 10001 <= port <= 19999:
            return port


def session_of(pid: int) -> int | None:
    """The session id of a live (not zombie) process, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else int(fields[3])


def pids_in_session(sid: int) -> list[int]:
    return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and session_of(int(e.name)) == sid]


def kill_session(sid: int, timeout_s: float = 20.0) -> None:
    """SIGKILL every process of session ``sid`` until none is left (new ones may appear meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while pids := pids_in_session(sid):
        assert time.monotonic() < deadline, f"processes of session {sid} survive SIGKILL: {pids}"
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)  # (the kernel tearing them down)


@dataclass
class RayNode:
    """A node started with ``ray start`` in a session of its own (its id: ``sid``)."""

    name: str
    temp_dir: Path
    log: Path
    sid: int = 0

    def start(self, args: list[str], env: dict[str, str]) -> None:
        self.temp_dir.mkdir(parents=True)
        with open(self.log, "w") as out:
            proc = subprocess.Popen([str(BIN / "ray"), "start", f"--temp-dir={self.temp_dir}", *args], env=env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.sid = proc.pid
        try:
            code = proc.wait(timeout=120)  # it returns once the node runs (its daemons stay)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(f"ray start ({self.name}) took > 120 s: {self.log.read_text()[-3000:]}") from None
        assert code == 0, f"ray start ({self.name}) failed: {self.log.read_text()[-3000:]}"

    def pids(self) -> list[int]:
        return pids_in_session(self.sid) if self.sid else []

    def kill(self) -> None:
        if self.sid:
            kill_session(self.sid)


@dataclass
class Gateway:
    """``archipelago serve`` joining the Ray cluster and Redis, in a session of its own."""

    name: str
    cwd: Path
    env: dict[str, str]
    shards: int
    grpc_port: int = field(default_factory=port_outside_ray_ranges)
    http_port: int = field(default_factory=port_outside_ray_ranges)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def log(self) -> Path:
        return self.cwd / f"gateway-{self.name}.log"

    def start(self) -> None:
        self.cwd.mkdir(parents=True, exist_ok=True)
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [str(BIN / "archipelago"), "serve", "--grpc-port", str(self.grpc_port), "--http-port",
                 str(self.http_port), "--shards", str(self.shards), "--data-dir", "var"],
                cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)

    def output(self) -> str:
        return self.log.read_text()[-4000:] if self.log.exists() else ""

    async def serving(self, timeout_s: float = 90.0) -> None:
        """Wait until its gRPC health is SERVING."""
        async with asyncio.timeout(timeout_s), grpc.aio.insecure_channel(self.address) as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            while True:
                assert self.proc is not None and self.proc.poll() is None, self.output()
                with contextlib.suppress(grpc.aio.AioRpcError):
                    got = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0, wait_for_ready=True)
                    if got.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                await asyncio.sleep(0.1)  # the health probe's period

    async def healthz(self) -> tuple[int, dict[str, Any]]:
        def get() -> tuple[int, dict[str, Any]]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=10) as r:
                    return int(r.status), json.loads(r.read())
            except urllib.error.HTTPError as err:
                with err:
                    return err.code, json.loads(err.read() or b"{}")
        return await asyncio.to_thread(get)

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """SIGTERM (a graceful stop: it drains), wait; SIGKILL its session if it outlives ``timeout_s``."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                kill_session(self.proc.pid)
                self.proc.wait()
        kill_session(self.proc.pid)  # anything it left in its session
        return self.proc.returncode


@dataclass
class TwoNodes:
    ip: str
    ray_address: str
    redis: RedisProcess
    head: RayNode
    worker: RayNode
    gateways: list[Gateway] = field(default_factory=list)
    drivers: list[subprocess.Popen[str]] = field(default_factory=list)  # the placeholder's

    def gateway(self, name: str, shards: int, root: Path) -> Gateway:
        env = ray_env()
        env.update(RAY_ADDRESS=self.ray_address, REDIS_URL=self.redis.url, ARCHIPELAGO_RATE_LIMITS="off",
                   ARCHIPELAGO_DRAIN_S="1", ARCHIPELAGO_SHARD_RESOURCES=json.dumps(SHARD_RESOURCES))
        gateway = Gateway(name, root / name, env, shards)
        self.gateways.append(gateway)
        return gateway

    async def hold(self, log: Path) -> subprocess.Popen[str]:
        """A driver holding the placeholder on the head (held once this returns)."""
        with open(log, "w") as err:
            proc = subprocess.Popen([sys.executable, "-c", HOLD, self.ray_address], env=ray_env(), text=True,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        self.drivers.append(proc)
        assert proc.stdout is not None
        async with asyncio.timeout(60):
            line = await asyncio.to_thread(proc.stdout.readline)
        assert line.strip() == "True", f"no placeholder: {log.read_text()[-3000:]}"
        return proc

    @staticmethod
    async def release(proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None
        proc.stdin.close()
        assert await asyncio.to_thread(proc.wait, 30) == 0

    def stop(self) -> None:
        for g in self.gateways:
            g.stop()
        for d in self.drivers:
            kill_session(d.pid)
            d.wait()
            for stream in (d.stdin, d.stdout):
                if stream is not None:
                    stream.close()

    def left(self) -> list[int]:
        return [p for x in [*(g.proc for g in self.gateways), *self.drivers] if x for p in pids_in_session(x.pid)]


def ray_env() -> dict[str, str]:
    """Our environment for Ray's processes and drivers: no inherited cluster, Ray's settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "REDIS_URL", "RAY_TMPDIR")}
    env.update(RAY_ENV)
    return env


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[TwoNodes]:
    """A redis-server and a two-node Ray cluster on this host; everything stopped afterwards, and
    checked gone."""
    ip = node_address()
    short = Path(tempfile.mkdtemp(prefix="r2n-", dir="/tmp"))  # Ray's socket paths are bounded: keep it short
    head = RayNode("head", short / "h", tmp_path / "ray-head.log")
    worker = RayNode("worker", short / "w", tmp_path / "ray-worker.log")
    redis: RedisProcess | None = None
    parts: TwoNodes | None = None
    env = ray_env()
    common = [f"--node-ip-address={ip}", "--num-cpus=1", "--disable-usage-stats", "--min-worker-port=0",
              "--max-worker-port=0", "--object-store-memory=100000000"]
    try:
        redis = start_redis_server(tmp_path / "redis", durable=True)
        port = port_outside_ray_ranges()
        head.start(["--head", f"--port={port}", "--include-dashboard=false",
                    f"--resources={json.dumps(HEAD_RESOURCES)}", *common], {**env, **FAST_NODE_DEATH})
        worker.start([f"--address={ip}:{port}", f"--resources={json.dumps(WORKER_RESOURCES)}", *common], env)
        parts = TwoNodes(ip, f"{ip}:{port}", redis, head, worker)
        yield parts
    finally:
        if parts is not None:
            parts.stop()
        worker.kill()
        head.kill()
        if redis is not None:
            redis.stop()
        shutil.rmtree(short, ignore_errors=True)
    left = {"head": head.pids(), "worker": worker.pids(),
            "gateways and drivers": parts.left() if parts else [],
            "redis": [redis.proc.pid] if redis and redis.proc and redis.proc.poll() is None else []}
    assert not any(left.values()), f"processes left behind: {left}"


def node_of(nodes: TwoNodes, pid: int) -> str:
    sid = session_of(pid)
    return "head" if sid == nodes.head.sid else "worker" if sid == nodes.worker.sid else f"session {sid}"


async def shards_on_nodes(nodes: TwoNodes, gateway: Gateway) -> dict[str, tuple[int, str]]:
    """Each shard's pid and node, from the gateway's /healthz (each shard reports its pid)."""
    status, body = await gateway.healthz()
    assert status == 200, body
    return {s["name"]: (s["pid"], node_of(nodes, s["pid"])) for s in body["shards"]}


async def test_two_gateways_two_ray_nodes_a_gateway_stops_and_a_node_dies(
        two_nodes: TwoNodes, tmp_path: Path) -> None:
    nodes = two_nodes
    events: list[str] = []
    t0 = time.monotonic()

    def note(what: str) -> None:
        events.append(f"{time.monotonic() - t0:5.1f}s {what}")

    placeholder = await nodes.hold(tmp_path / "placeholder.log")
    a = nodes.gateway("a", 4, tmp_path)
    a.start()
    await a.serving()
    await nodes.release(placeholder)  # (room on the head for the shards Ray will move there)
    b = nodes.gateway("b", 2, tmp_path)  # another --shards on purpose: it follows the recorded set
    b.start()
    await b.serving()
    note("both gateways serving")
    assert "does not change it" in b.output(), b.output()
    store = Store(nodes.redis.url, PREFIX)
    players: dict[tuple[str, int], asyncio.Task[int]] = {}
    try:
        assert await store.shard_set() == dict.fromkeys(shard_names(4), "active")
        on_a, on_b = await shards_on_nodes(nodes, a), await shards_on_nodes(nodes, b)
        assert on_a == on_b and sorted(on_a) == shard_names(4), (on_a, on_b)
        assert {n for _, n in on_a.values()} == {"head", "worker"}, f"shards spread over both nodes: {on_a}"
        doomed = {name for name, (_, n) in on_a.items() if n == "worker"}

        # Games: created, joined and started half through each gateway, until both nodes host two.
        record = Record()
        seats: list[tuple[str, int, str]] = []
        lobbies = [Client(g.address) for g in (a, b)]
        hosted = {"head": 0, "worker": 0}
        while len(seats) < 2 * GAMES or min(hosted.values()) < 2:
            assert len(seats) < 6 * GAMES, f"games placed on one node only: {hosted}"
            lobby = lobbies[len(seats) // 2 % 2]
            host = Client(lobby.address, channel=lobby.channel)
            made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=DEADLINE_S, salvo=OPTIONS)
            joined = await lobby.join(made.code, "guest")
            await host.start(made.game_id)
            seats += [(made.game_id, 0, made.secret), (made.game_id, 1, joined.secret)]
            hosted["worker" if await store.placement(made.game_id) in doomed else "head"] += 1
        for lobby in lobbies:
            await lobby.close()
        games = sorted({gid for gid, _, _ in seats})
        on_worker = [g for g in games if await store.placement(g) in doomed]
        note(f"{len(games)} games, {len(on_worker)} on the second node's shards {sorted(doomed)}")
        # Every bot's channel targets both gateways, its seat's first (pick_first: one seat of each game
        # plays through A, the other through B); when its gateway goes, it fails over to the other.
        # (With round_robin the first call of every channel — the Watch — went to whichever gateway
        # answered first: all to one of them.)
        first_b = {(gid, seat) for i, gid in enumerate(games) for seat in (0, 1) if (i + seat) % 2}
        loop = asyncio.get_running_loop()

        for gid, seat, secret in seats:
            one, other = (b, a) if (gid, seat) in first_b else (a, b)
            players[gid, seat] = loop.create_task(play(f"ipv4:{one.address},{other.address}", secret, gid, seat,
                                                       record))

        async def until(done: Callable[[], bool]) -> None:
            while not done():
                assert not all(p.done() for p in players.values()), f"the games ended before the chaos: {events}"
                await asyncio.sleep(0.05)  # watching the bots' progress

        async with asyncio.timeout(150):
            await until(lambda: len(record.acks) >= len(players))  # each seat about once: in mid-play
            note(f"SIGTERM to gateway B at {len(record.acks)} acks")
            assert b.proc is not None
            b.proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(b.proc.wait, 30)
            note(f"gateway B exited with {code} at {len(record.acks)} acks")
            assert code == 0, b.output()
            assert "draining: NOT_SERVING for 1 s" in b.output(), b.output()
            cut = sum(not players[s].done() for s in first_b)  # (their streams on B were cut)
            assert cut, f"every game on gateway B ended before its stop cut their streams: {events}"
            n = len(record.acks) + GAMES
            await until(lambda: len(record.acks) >= n)  # (the games go on through gateway A alone)
            running = [g for g in on_worker if not all(players[g, s].done() for s in (0, 1))]
            assert running, f"the second node's games ended before it died: {events}"
            note(f"SIGKILL to the second Ray node ({len(nodes.worker.pids())} processes) at "
                 f"{len(record.acks)} acks, {len(running)} of its games running")
            await asyncio.to_thread(nodes.worker.kill)
            rounds = await asyncio.gather(*players.values())
            note(f"every game over at {len(record.acks)} acks")
        assert all(r > 0 for r in rounds)
        assert a.proc is not None and a.proc.poll() is None, f"gateway A lives on: {a.output()}"

        # The second node's shards were restarted by Ray on the head; gateway A still sees the same set.
        async with asyncio.timeout(60):
            while True:
                status, body = await a.healthz()
                if status == 200:
                    after = {s["name"]: (s["pid"], node_of(nodes, s["pid"])) for s in body["shards"]}
                    if all(n == "head" for _, n in after.values()):
                        break
                await asyncio.sleep(0.2)  # (polling the shards' health)
        assert sorted(after) == shard_names(4)
        assert all(after[s][0] != on_a[s][0] for s in doomed), (on_a, after)
        assert await store.shard_set() == dict.fromkeys(shard_names(4), "active")

        journals = {gid: await store.journal_read(gid) for gid in games}
    finally:
        for p in players.values():  # (after a failure: no bot left playing in the session's event loop)
            p.cancel()
        await asyncio.gather(*players.values(), return_exceptions=True)
        await store.close()
    # A submission the dying shard journaled but had not yet closed its round on is answered again by
    # the restarted shard from its idempotency record, without the early-close check (A17): that
    # round waits for its deadline. Counted here, not asserted (a product issue, reported).
    late = sum(1 for j in journals.values() for e in j if e["op"] == "close" and not e.get("early"))
    print(f"two nodes: {len(record.acks)} acks, {record.retries} retries, {record.reconnects} reconnects, "
          f"{late} rounds closed at their deadline; " + "; ".join(events))
    lost, twice = lost_and_twice(journals, record.acks)
    assert lost == [] and twice == [], (lost[:3], twice[:3], events)
    assert all(j[-1]["op"] == "close" for j in journals.values()), "every game ended (its last entry closes it)"
    assert watch_gaps(record) == {}, "a Watch resumed with an update missed or repeated"
    assert record.reconnects >= cut, "every stream on gateway B was cut by its stop, and resumed on A"
