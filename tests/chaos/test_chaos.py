"""Chaos (issue 11): 20 Salvo games played by bots while a shard is killed, the gateway is killed
(SIGKILL) and restarted, and the redis-server is killed (SIGKILL) and restarted; then every game's
journal is checked against what each bot was acknowledged.

The parts are real and separate, as in cluster mode: a durable redis-server this test owns (its
supervisor: it restarts it on the same port and data), the session's local Ray, and `archipelago
serve` as a subprocess joining both (``RAY_ADDRESS``, ``REDIS_URL``), whose detached shards outlive
it. Bots speak gRPC with the retries a client may make: the same idempotency key for the same
round's orders, Watch resumed from the last seq received.

Checked: 0 acknowledged submissions lost (each is the journal entry at the version its answer
named), 0 applied twice (one submission per seat and key in each round), every Watch resumed with
nothing missed (its seqs consecutive across every reconnect), every game ended (or still playable).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from archipelago.v1 import lobby_pb2
from client.bot import choose_orders
from client.errors import ApiError
from client.grpc_client import Client
from client.views import orders_message
from services.cluster import RedisProcess, free_port, start_redis_server, wait_for_redis
from services.store import Store

pytestmark = pytest.mark.e2e

GAMES = 20
NAMESPACE = "archipelago"  # `archipelago serve`'s own
EXE = str(Path(sys.executable).with_name("archipelago"))
RETRYABLE = {"UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "UNKNOWN", "INTERNAL"}
CHANNEL_OPTIONS = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", 1000)]
GIVE_UP_S = 120.0
T = TypeVar("T")


class Gateway:
    """`archipelago serve` joining the test's Ray and Redis, on fixed ports (kept across restarts)."""

    def __init__(self, redis_url: str, ray_address: str, cwd: Path) -> None:
        self.grpc_port, self.http_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.grpc_port}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
        self.env.update(REDIS_URL=redis_url, RAY_ADDRESS=ray_address, ARCHIPELAGO_RATE_LIMITS="off", ARCHIPELAGO_DRAIN_S="0")
        self.cwd = cwd
        self.proc: subprocess.Popen[str] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.cwd / f"gateway-{self.starts}.log", "w")  # the process writes it
        self.proc = subprocess.Popen([EXE, "serve", "--grpc-port", str(self.grpc_port), "--http-port",
                                      str(self.http_port), "--shards", "2", "--data-dir", "var"],
                                     env=self.env, cwd=self.cwd, text=True, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    async def health(self, want: int, timeout_s: float = 90.0) -> None:
        """Wait until gRPC health reports ``want`` (SERVING or NOT_SERVING)."""
        async with asyncio.timeout(timeout_s), grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS) as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            while True:
                assert self.proc is not None and self.proc.poll() is None, self.output()
                with contextlib.suppress(grpc.aio.AioRpcError):
                    got = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0, wait_for_ready=True)
                    if got.status == want:
                        return
                await asyncio.sleep(0.1)  # the health probe's period

    def output(self) -> str:
        return "\n".join(p.read_text()[-3000:] for p in sorted(self.cwd.glob("gateway-*.log")))


@dataclass
class Ack:
    game_id: str
    seat: int
    round: int
    key: str
    version: int


@dataclass
class Record:
    acks: list[Ack] = field(default_factory=list)
    seqs: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    reconnects: int = 0
    retries: int = 0


async def retrying(record: Record, call: Callable[[], Awaitable[T]]) -> T:
    """Retry a call while the cluster is (partly) down, with backoff; the same request each time."""
    delay, give_up = 0.1, time.monotonic() + GIVE_UP_S
    while True:
        try:
            return await call()
        except ApiError as err:
            if err.status not in RETRYABLE or time.monotonic() > give_up:
                raise
        record.retries += 1
        await asyncio.sleep(delay)  # a client's backoff
        delay = min(delay * 2, 1.0)


async def follow(client: Client, game_id: str, seat: int, wake: asyncio.Event, record: Record) -> None:
    """Watch to the end, resuming from the last seq after any break; keeps every seq received."""
    seqs = record.seqs.setdefault((game_id, seat), [])
    delay = 0.1
    while True:
        try:
            async for u in client.watch(game_id, seqs[-1] if seqs else 0):
                delay = 0.1
                if u.seq:
                    seqs.append(-u.seq if u.kind == "resync" else u.seq)
                wake.set()
            return
        except ApiError as err:
            if err.status not in RETRYABLE:
                raise
        finally:
            wake.set()
        record.reconnects += 1
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def play(address: str, secret: str, game_id: str, seat: int, record: Record) -> int:
    """Play a seat to the end; returns the rounds played."""
    channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    client = Client(address, secret, channel)
    wake = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, seat, wake, record))
    orders: dict[int, Any] = {}
    try:
        while True:
            wake.clear()
            view = await retrying(record, lambda: client.view(game_id))
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view.round
            if view.expected:
                o = orders.setdefault(view.round, choose_orders(view))  # a retry sends the same orders
                key = f"chaos-{view.round}"
                request = orders_message(view.game, o)

                async def submit(v: Any = view, r: Any = request, k: str = key) -> Any:
                    return await client.submit_message(game_id, v.version, v.game, r, key=k)
                try:
                    ack = await retrying(record, submit)
                except ApiError as err:
                    if err.status not in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed (or the game
                        raise                                                 # ended) meanwhile: read again
                    continue
                record.acks.append(Ack(game_id, seat, ack.round, key, ack.version))
                continue
            if watcher.done():
                watcher.result()
            await wake.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, ApiError):
            await watcher
        await channel.close()


@pytest.fixture
def parts(ray_local: None, tmp_path: Path) -> Iterator[tuple[RedisProcess, Gateway]]:
    import ray

    redis = start_redis_server(tmp_path / "redis", durable=True)
    wait_for_redis(redis.url)
    gateway = Gateway(redis.url, ray.get_runtime_context().gcs_address, tmp_path)
    try:
        yield redis, gateway
    finally:
        gateway.stop()
        for i in range(2):  # the detached shards of this test's cluster
            with contextlib.suppress(Exception):
                ray.kill(ray.get_actor(f"shard-{i}", namespace=NAMESPACE), no_restart=True)
        redis.stop()


def kill_redis(redis: RedisProcess) -> None:
    assert redis.proc is not None
    redis.proc.send_signal(signal.SIGKILL)
    redis.proc.wait()


async def test_chaos_nothing_acknowledged_is_lost_nothing_applied_twice(
        parts: tuple[RedisProcess, Gateway]) -> None:
    import ray

    redis, gateway = parts
    gateway.start()
    await gateway.health(health_pb2.HealthCheckResponse.SERVING)
    record = Record()
    lobby = Client(gateway.address, channel=grpc.aio.insecure_channel(gateway.address, options=CHANNEL_OPTIONS))
    seats: list[tuple[str, int, str]] = []
    for _ in range(GAMES):
        host = Client(gateway.address, channel=lobby.channel)
        made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=15)
        joined = await lobby.join(made.code, "guest")
        await host.start(made.game_id)
        seats += [(made.game_id, 0, made.secret), (made.game_id, 1, joined.secret)]
    await lobby.close()
    bots = [asyncio.get_running_loop().create_task(play(gateway.address, secret, gid, seat, record))
            for gid, seat, secret in seats]

    async def progress(n: int) -> None:
        while len(record.acks) < n:
            assert not all(b.done() for b in bots), "the games ended before the chaos"
            await asyncio.sleep(0.05)  # watching the bots' progress

    rnd = random.Random(11)
    events = []
    async with asyncio.timeout(600):
        await progress(60)
        victim = f"shard-{rnd.randrange(2)}"
        ray.kill(ray.get_actor(victim, namespace=NAMESPACE), no_restart=False)  # Ray restarts it
        events.append(f"killed {victim} at {len(record.acks)} acks")
        await progress(len(record.acks) + 60)
        gateway.kill()
        events.append(f"killed the gateway at {len(record.acks)} acks")
        gateway.start()
        await gateway.health(health_pb2.HealthCheckResponse.SERVING)
        await progress(len(record.acks) + 60)
        kill_redis(redis)
        events.append(f"killed redis at {len(record.acks)} acks")
        await gateway.health(health_pb2.HealthCheckResponse.NOT_SERVING)
        try:
            redis.launch()  # its supervisor restarts it: same port, same append-only file
        except Exception as exc:
            log = Path(redis.args[redis.args.index("--logfile") + 1])
            raise AssertionError(f"redis did not come back: {exc!r}; its log: {log.read_text()[-2000:]}") from exc
        await gateway.health(health_pb2.HealthCheckResponse.SERVING)
        events.append("redis back")
        rounds = await asyncio.gather(*bots)
    assert all(r > 0 for r in rounds)

    store = Store(redis.url, "arch:")
    try:
        games = {gid for gid, _, _ in seats}
        journals = {gid: await store.journal_read(gid) for gid in games}
    finally:
        await store.close()
    lost = [a for a in record.acks if not (0 < a.version <= len(journals[a.game_id])
                                           and journals[a.game_id][a.version - 1].get("op") == "submit"
                                           and journals[a.game_id][a.version - 1]["seat"] == a.seat
                                           and journals[a.game_id][a.version - 1]["key"] == a.key)]
    twice = []
    for gid, journal in journals.items():
        seen: set[tuple[int, str]] = set()
        for entry in journal:
            if entry["op"] == "close":
                seen = set()
            elif entry["op"] == "submit" and entry["key"]:
                if (entry["seat"], entry["key"]) in seen:
                    twice.append((gid, entry["seat"], entry["key"]))
                seen.add((entry["seat"], entry["key"]))
    def around(a: Ack) -> list[tuple[Any, ...]]:
        j = journals[a.game_id]
        return [(v + 1, e["op"], e.get("seat"), e.get("key"), e.get("round")) for v, e in enumerate(j)
                if a.version - 6 <= v + 1 <= a.version + 3]
    if lost or twice:
        (Path(tempfile.gettempdir()) / "chaos-failure.txt").write_text(
            f"{events}\nlost {lost}\ntwice {twice}\n" + "\n".join(f"{g}: {around(a)}" for g, a in
                                                                   {a.game_id: a for a in lost}.items())
            + "\n" + "\n".join(f"{g}: {[(e['op'], e.get('seat'), e.get('key')) for e in j]}"
                                for g, j in journals.items() if g in {a.game_id for a in lost}))
    assert lost == [] and twice == [], (lost[:3], around(lost[0]) if lost else [], twice[:5], events)
    assert all(j[-1]["op"] == "close" for j in journals.values()), "every game ended (its last entry closes it)"
    gaps = {k: s for k, s in record.seqs.items()
            if [abs(x) for x in s] != list(range(1, len(s) + 1)) and not any(x < 0 for x in s)}
    assert gaps == {}, "a Watch resumed with an update missed or repeated"
    assert record.reconnects >= 2 * GAMES, "every stream was cut by the gateway's death, and came back"
    print(f"chaos: {len(record.acks)} acks, {record.retries} retries, {record.reconnects} reconnects; {events}")
