"""A game shard's own memory per game, in-process: what a game costs once the collector has run.

``bench.capacity``'s memory phase reads a shard's unique memory right after creating 1,000 games,
garbage not yet collected included; that figure moves with when the collector last ran. This bench
holds the games in a :class:`services.shard.ShardCore` in this process (a private redis-server for its
journal), collects, and counts with ``tracemalloc`` what the games keep: bytes a game for 1,000 Salvo
lobbies (created, not started), then the same games started (a second seat joined). Also the process'
RSS growth a game, which includes the allocator's free lists.

    .venv/bin/python -m bench.game_memory [--games 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import sys
import tempfile
import tracemalloc
from pathlib import Path

from services.cluster import start_redis_server
from services.shard import ShardCore
from services.store import Store

HOST, GUEST = hashlib.sha256(b"host").hexdigest(), hashlib.sha256(b"guest").hexdigest()


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def counter(what: str, i: int, n: int) -> None:
    if i % 100 == 0 or i == n:
        sys.stderr.write(f"\r{what}: {i}/{n}")
        sys.stderr.flush()
        if i == n:
            sys.stderr.write("\n")


async def lobbies(core: ShardCore, prefix: str, n: int) -> None:
    for i in range(n):
        await core.create_game(f"{prefix}{i}", {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                                "secret_hash": HOST, "public": False, "deadline_s": 3600,
                                                "code": f"{prefix.upper()}{i:05d}"})
        counter(f"creating {n} lobbies", i + 1, n)


async def start(core: ShardCore, prefix: str, n: int) -> None:
    for i in range(n):
        await core.join(f"{prefix}{i}", "bob", GUEST)
        await core.start_game(f"{prefix}{i}", 0, False)
        counter(f"starting {n} games", i + 1, n)


def settled() -> tuple[int, int]:
    gc.collect()
    return tracemalloc.get_traced_memory()[0], rss()


async def run(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="game-memory-") as tmp:
        redis = start_redis_server(Path(tmp), durable=False)
        core = ShardCore("shard-m", Store(redis.url))
        try:
            warm = max(10, n // 20)  # one-time costs (code paths, the Redis pool) charged to no game
            await lobbies(core, "w", warm)
            await start(core, "w", warm)
            await core.flush()
            tracemalloc.start()
            m0, r0 = settled()
            await lobbies(core, "g", n)
            await core.flush()
            m1, r1 = settled()
            await start(core, "g", n)
            await core.flush()
            m2, r2 = settled()
            tracemalloc.stop()
        finally:
            await core.flush()
            await core.store.close()
            redis.stop()
    return {"lobby_bytes": (m1 - m0) / n, "lobby_rss": (r1 - r0) / n,
            "running_bytes": (m2 - m0) / n, "running_rss": (r2 - r0) / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000)
    a = ap.parse_args(argv)
    f = asyncio.run(run(a.games))
    print(f"a shard's memory per game, {a.games:,} Salvo games, after a collection (tracemalloc; process RSS)")
    print(f"  lobby (created)        {f['lobby_bytes']:8,.0f} B   RSS {f['lobby_rss']:8,.0f} B")
    print(f"  running (2 seats)      {f['running_bytes']:8,.0f} B   RSS {f['running_rss']:8,.0f} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
