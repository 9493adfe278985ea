"""Where a submission's CPU goes: the whole path and a bare echo, split by process, with flame graphs.

    python -m bench.cpu_profile [--seconds 20] [--out var/profiles] [--no-flame]

Starts ``archipelago serve`` (as ``bench.capacity`` does), runs the same closed-loop load client
(``bench.loadgen``, 64 calls in flight, its own process) against it and then against the bare
grpc.aio echo (``bench.echo``), and reads every process's CPU time (``/proc/PID/stat``) over the
load: the load client, the gateway, each shard, redis-server, and the echo server — as microseconds of
CPU per call. With py-spy (a dev dependency) it also records a flame graph of the gateway and of one
shard over the middle of the run (``OUT/gateway.svg``, ``OUT/shard.svg``) and writes the figures to
``OUT/profile.json``. On a 2-core machine the processes share two cores, so the sum of the CPU per
call bounds the throughput: 2 cores / (sum µs) calls per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.capacity import Cluster, EchoServer, cpu_of, loadgen, say

ROOT = Path(__file__).resolve().parents[1]
PY_SPY = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))


def redis_pids(cluster: Cluster) -> list[int]:
    """The cluster's private redis-server (its command line names the cluster's data directory)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(entry, "comm").read_text().strip() != "redis-server":
                continue
            if cluster.data_dir is not None and str(cluster.data_dir) in os.readlink(entry / "cwd") + \
                    Path(entry, "cmdline").read_text(errors="replace"):
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def loadgen_pid(address: str) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = Path(entry, "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"bench.loadgen" in cmd and address.encode() in cmd:
                return int(entry.name)
    return None


async def measure(args: list[str], address: str, processes: dict[str, list[int]], flame: dict[str, int],
                  out: Path, seconds: float, setup: bool) -> dict[str, Any]:
    """Run the load client with ``args`` (``setup``: it creates games first and says so); the CPU µs per
    call of each named process group and of the client, over the load."""
    created = asyncio.Event()
    if not setup:
        created.set()

    async def on_event(ev: dict[str, Any], _proc: asyncio.subprocess.Process) -> None:
        if ev.get("event") == "created":
            created.set()

    async def window() -> tuple[dict[str, float], dict[str, float], float]:
        await created.wait()
        await asyncio.sleep(1.0)  # (the load up to speed)
        pid = loadgen_pid(address)
        groups = {**processes, "load client": [pid] if pid else []}
        t0 = time.monotonic()
        first = {name: cpu_of(pids) for name, pids in groups.items()}
        recorders = [subprocess.Popen([PY_SPY, "record", "-p", str(p), "-d", str(max(2, int(seconds / 2))),
                                       "-r", "200", "--nonblocking", "-o", str(out / f"{name}.svg")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for name, p in flame.items() if Path(PY_SPY).exists()]
        await asyncio.sleep(max(1.0, seconds - 3.0))
        last = {name: cpu_of(pids) for name, pids in groups.items()}
        for r in recorders:
            await asyncio.to_thread(r.wait)
        return first, last, time.monotonic() - t0

    task = asyncio.get_running_loop().create_task(window())
    result = await loadgen(args, on_event)
    first, last, _ = await task
    per_s = float(result.get("per_second", 0.0))
    per_call = {name: (last[name] - first[name]) / (per_s * max(1.0, seconds - 3.0)) * 1e6 if per_s else 0.0
                for name in first}
    latency = result.get("latency") or {}
    return {"calls": int(result.get("ok", 0)), "per_s": per_s, "p50_ms": float(latency.get("p50_ms", 0.0)),
            "p99_ms": float(latency.get("p99_ms", 0.0)), "cpu_us_per_call": per_call}


def table(title: str, r: dict[str, Any]) -> None:
    say(f"\n{title}: {r['calls']:,} calls, {r['per_s']:,.0f}/s, p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms")
    total = sum(r["cpu_us_per_call"].values())
    for name, us in sorted(r["cpu_us_per_call"].items(), key=lambda kv: -kv[1]):
        say(f"  {name:<14} {us:7.0f} µs CPU per call  ({us / total:5.1%})")
    say(f"  {'all':<14} {total:7.0f} µs  -> at most {2e6 / total:,.0f} calls/s on 2 cores")


async def main_async(a: argparse.Namespace) -> int:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cluster = Cluster()
    try:
        await cluster.start(2, 1)
        shards = await cluster.shard_pids()
        gateway = cluster.gateway_pids()
        groups = {"gateway": gateway, "shards": shards, "redis-server": redis_pids(cluster)}
        flame = {"gateway": gateway[0], "shard": shards[0]} if not a.no_flame else {}
        path = await measure(["--address", cluster.grpc, "--seconds", str(a.seconds), "--games", "1000"],
                             cluster.grpc, groups, flame, out, a.seconds, setup=True)
    finally:
        await cluster.stop(False)
    async with EchoServer() as echo:
        assert echo.proc is not None
        echo_r = await measure(["--address", echo.address, "--echo", "--seconds", str(a.seconds)],
                               echo.address, {"echo server": [echo.proc.pid]}, {}, out, a.seconds, setup=False)
    table("whole path (gRPC -> gateway -> shard -> Redis journal -> ack)", path)
    table("bare grpc.aio echo, same client", echo_r)
    say(f"\nratio path/echo: {path['per_s'] / echo_r['per_s']:.2f}")
    (out / "profile.json").write_text(json.dumps({"path": path, "echo": echo_r}, indent=2))
    flames = sorted(out.glob("*.svg"))
    say(f"wrote {out / 'profile.json'}" + (f" and flame graphs {', '.join(map(str, flames))}" if flames else ""))
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.cpu_profile", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--out", default=str(ROOT / "var" / "profiles"))
    ap.add_argument("--no-flame", action="store_true", help="no py-spy flame graphs")
    raise SystemExit(asyncio.run(main_async(ap.parse_args())))


if __name__ == "__main__":
    main()
