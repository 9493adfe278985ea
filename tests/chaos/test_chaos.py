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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cluster import RedisProcess, free_port, start_redis_server, wait_for_redis
from services.store import Store
from tests.chaos.bots import CHANNEL_OPTIONS, Ack, Record, lost_and_twice, play, two_player_games, watch_gaps

pytestmark = pytest.mark.e2e

GAMES = 20
NAMESPACE = "archipelago"  # `archipelago serve`'s own
EXE = str(Path(sys.executable).with_name("archipelago"))


class Gateway:
    """`archipelago serve` joining the test's Ray and Redis, on fixed ports (kept across restarts)."""

    def __init__(self, redis_url: str, ray_address: str, cwd: Path) -> None:
        self.grpc_port, self.http_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.grpc_port}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
        self.env.update(REDIS_URL=redis_url, RAY_ADDRESS=ray_address, ARCHIPELAGO_RATE_LIMITS="off",
                        ARCHIPELAGO_DRAIN_S="0")
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
    seats = await two_player_games(gateway.address, GAMES)
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
    lost, twice = lost_and_twice(journals, record.acks)

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
    gaps = watch_gaps(record)
    assert gaps == {}, "a Watch resumed with an update missed or repeated"
    assert record.reconnects >= 2 * GAMES, "every stream was cut by the gateway's death, and came back"
    print(f"chaos: {len(record.acks)} acks, {record.retries} retries, {record.reconnects} reconnects; {events}")
