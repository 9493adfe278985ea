"""The README's path, for real: `archipelago serve`, then `create` and two `bot`s play Salvo to the end."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cluster import free_port

pytestmark = pytest.mark.e2e

EXE = str(Path(sys.executable).with_name("archipelago"))


def wait_healthy(address: str, proc: subprocess.Popen[str], timeout_s: float = 60.0) -> float:
    """Seconds until the server answers gRPC health SERVING (fails if it exits or takes > timeout)."""
    start = time.monotonic()
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc.poll() is not None:
                output = proc.stdout.read() if proc.stdout else ""
                raise AssertionError(f"serve exited with {proc.returncode}: {output}")
            try:
                resp = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0, wait_for_ready=True)
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.monotonic() - start
            except grpc.RpcError:
                pass
            assert time.monotonic() - start < timeout_s, "no gRPC health answer within 60 s"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    grpc_port, http_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
    env["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are bounded
    proc = subprocess.Popen([EXE, "serve", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
                             "--data-dir", "var"], env=env, text=True, cwd=tmp_path,  # relative, as make run
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        yield f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{http_port}", proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def run(*args: str, timeout: float = 180) -> tuple[int, str]:
    p = await asyncio.create_subprocess_exec(EXE, *args, stdout=asyncio.subprocess.PIPE,
                                             stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(p.communicate(), timeout)
    return p.returncode or 0, out.decode()


async def test_serve_create_and_two_bots_play_salvo_to_the_end(
        served: tuple[str, str, subprocess.Popen[str]]) -> None:
    address, http, proc = served
    await asyncio.to_thread(wait_healthy, address, proc)
    code_, out = await run("create", "salvo", "--speed", "20", "--server", address)
    assert code_ == 0, out
    code = re.search(r"^code: (\w{6})$", out, re.M)
    secret = re.search(r"^secret: (\S+)$", out, re.M)
    assert code and secret and re.search(r"^invite: \S+/join/" + code[1], out, re.M), out
    host, guest = await asyncio.gather(run("bot", code[1], "--secret", secret[1], "--server", address),
                                       run("bot", code[1], "--server", address))
    assert host[0] == 0 and guest[0] == 0, (host, guest)
    assert "game over" in host[1] and "game over" in guest[1]
    # the operator's view: one scrape shows the gateway's and every shard's metrics
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{http}/metrics", timeout=30).read().decode())
    closed = [line for line in text.splitlines() if line.startswith("archipelago_rounds_closed_total{")]
    assert closed and all('shard="shard-' in line for line in closed)
    assert sum(float(line.rsplit(" ", 1)[1]) for line in closed) >= 2  # placement and at least one salvo
    assert 'archipelago_requests_total{code="OK",door="grpc",method="SubmitOrders"}' in text
    health = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{http}/healthz", timeout=30).read().decode())
    assert '"status":"ok"' in health
