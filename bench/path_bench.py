"""Order submissions through the whole path: gRPC client -> gateway -> Ray shard -> Redis journal -> ack.

Starts what `archipelago serve` starts (a private redis-server, a local Ray, GameShard actors and the
gateway on loopback), creates games, then has concurrent clients submit orders (Salvo placements,
as drafts so rounds stay open) for a fixed time. Prints submissions/s and p50/p99 latency, with a
live counter while it runs.

    python -m bench.path_bench [--seconds 20] [--games 600] [--concurrency 64] [--shards 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from services.cluster import init_ray, ray_environment, shard_names, start_redis_server, start_shards

ray_environment()


async def bench(seconds: float, games: int, concurrency: int, shards: int) -> dict[str, float]:
    from archipelago.v1 import salvo_pb2
    from client.grpc_client import Client
    from gateway.api import ApiConfig, PlayerAPI
    from gateway.grpc_door import build_server
    from gateway.limits import Limits
    from gateway.router import ShardRouter
    from services.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="arch-bench-"))
    redis = start_redis_server(tmp / "redis", durable=True)  # appendfsync as `serve` runs it (always)
    init_ray(None, namespace="archipelago-bench", num_cpus=os.cpu_count() or 2,
             tmpdir=tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    handles = start_shards(shards, redis.url, namespace="archipelago-bench")  # keep: dropped handles kill actors
    store = Store(redis.url)
    # (the per-address lobby limits are for people: this bench creates hundreds of games from one address)
    gw = PlayerAPI(store, ShardRouter(store, shard_names(shards), "archipelago-bench"),
                   ApiConfig(limits=Limits.off()))
    await gw.start()
    server, port = await build_server(gw, "127.0.0.1:0")
    address = f"127.0.0.1:{port}"
    host_client = Client(address)
    seats: list[tuple[Client, str, int]] = []
    gate = asyncio.Semaphore(32)

    async def make(i: int) -> None:
        async with gate:
            c = Client(address, channel=host_client.channel)
            created = await c.create("salvo", seats=2, nickname=f"h{i}", deadline_seconds=3600)
            await c.start(created.game_id, fill=True)
            view = await c.view(created.game_id)
            seats.append((c, created.game_id, view.version))
            print(f"\r  creating games {len(seats)}/{games}", end="", file=sys.stderr, flush=True)

    await asyncio.gather(*(make(i) for i in range(games)))
    print(file=sys.stderr)
    orders = salvo_pb2.SalvoOrders(random_placement=True)
    latencies: list[float] = []
    stop_at = time.monotonic() + seconds
    counter = 0

    async def worker(w: int) -> None:
        nonlocal counter
        n = 0
        while time.monotonic() < stop_at:
            c, game_id, version = seats[(w + n * concurrency) % len(seats)]
            t0 = time.perf_counter()
            await c.submit(game_id, version, key=f"w{w}-{n}", draft=True, salvo=orders)
            latencies.append(time.perf_counter() - t0)
            counter += 1
            n += 1

    async def progress() -> None:
        start = time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            el = time.monotonic() - start
            print(f"\r  {el:5.1f}s  {counter:8d} submissions  {counter / el:8.0f}/s", end="", file=sys.stderr,
                  flush=True)

    ticker = asyncio.get_running_loop().create_task(progress())
    t0 = time.monotonic()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.monotonic() - t0
    ticker.cancel()
    print(file=sys.stderr)
    await server.stop(0)
    await gw.stop()
    import ray

    del handles
    ray.shutdown()
    redis.stop()
    qs = statistics.quantiles(latencies, n=100)
    return {"submissions": len(latencies), "seconds": elapsed, "per_second": len(latencies) / elapsed,
            "p50_ms": qs[49] * 1000, "p99_ms": qs[98] * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--seconds", type=float, default=20)
    # A player may resubmit at most 100 times a round (A16): spread the submissions over enough games.
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--shards", type=int, default=2)
    a = ap.parse_args()
    r = asyncio.run(bench(a.seconds, a.games, a.concurrency, a.shards))
    print(f"path bench: {a.games} games, {a.concurrency} concurrent clients, {a.shards} shards, "
          f"{os.cpu_count()} cores")
    print(f"  {r['submissions']:.0f} submissions in {r['seconds']:.1f} s = {r['per_second']:.0f} submissions/s")
    print(f"  latency p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms")


if __name__ == "__main__":
    main()
