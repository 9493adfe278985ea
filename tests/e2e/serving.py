"""`archipelago serve` as a user runs it, as a fixture: a subprocess on free ports, healthy, then stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cluster import free_port

EXE = str(Path(sys.executable).with_name("archipelago"))


class ServeProcess(subprocess.Popen[str]):
    """`archipelago serve` with its output (stdout and stderr) read line by line as it comes, so the pipe
    never fills and is closed at its end: :attr:`lines` so far, :meth:`output` whole once it exited."""

    def __init__(self, args: list[str], **kwargs: Any) -> None:
        super().__init__(args, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, name="serve-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.stdout is not None
        with self.stdout:
            for line in self.stdout:
                self.lines.append(line)

    def output(self, wait_s: float = 30.0) -> str:
        """What serve wrote so far; once it has exited, all of it (its pipe read to the end)."""
        if self.poll() is not None:
            self._reader.join(wait_s)
        return "".join(self.lines)


def wait_healthy(address: str, proc: ServeProcess, timeout_s: float = 60.0) -> float:
    """Seconds until the server answers gRPC health SERVING (fails if it exits or takes > timeout)."""
    start = time.monotonic()
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited with {proc.returncode}: {proc.output()}")
            try:
                resp = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0, wait_for_ready=True)
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.monotonic() - start
            except grpc.RpcError:
                pass
            assert time.monotonic() - start < timeout_s, "no gRPC health answer within 60 s"


@contextlib.contextmanager
def serving(cwd: Path, extra_env: dict[str, str] | None = None, args: tuple[str, ...] = ()
            ) -> Iterator[tuple[str, str, ServeProcess]]:
    """`archipelago serve` started in ``cwd`` on free ports (not yet waited for): (gRPC address, HTTP
    URL, process); stopped with SIGTERM (killed after 30 s) on the way out. The per-address limits
    are off (every test calls from 127.0.0.1) unless ``extra_env`` sets them."""
    grpc_port, http_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
    env["ARCHIPELAGO_RATE_LIMITS"] = "off"
    env["ARCHIPELAGO_DRAIN_S"] = "0"  # stopped with SIGTERM: no drain wait (tests of the drain set it)
    env["ARCHIPELAGO_PRESENCE_GRACE_S"] = "0"  # a closed stream is gone at once (A17 grace: its own tests)
    # Ray's own metrics on a port the OS picks: two servers started at once by the suite's two processes
    # must not both find the default (8090) free and both bind it (tests of that port set it themselves)
    env["ARCHIPELAGO_RAY_METRICS_PORT"] = "0"
    env.update(extra_env or {})
    env["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are bounded
    proc = ServeProcess([EXE, "serve", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
                         "--data-dir", "var", *args], env=env, cwd=cwd)  # (data dir relative, as make run)
    try:
        yield f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{http_port}", proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.output()  # (the reader has met the pipe's end and closed it)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, ServeProcess]]:
    with serving(tmp_path) as parts:
        yield parts


async def run(*args: str, timeout: float = 240) -> tuple[int, str]:
    """``archipelago ARGS…`` as a subprocess: (exit code, output). Past ``timeout`` the process is
    killed (never left running) and the test fails with what it had printed."""
    p = await asyncio.create_subprocess_exec(EXE, *args, stdout=asyncio.subprocess.PIPE,
                                             stderr=asyncio.subprocess.STDOUT)
    assert p.stdout is not None
    reading = asyncio.ensure_future(p.stdout.read())
    try:
        out: bytes = await asyncio.wait_for(asyncio.shield(reading), timeout)
    except TimeoutError:
        p.kill()
        out = await reading  # (what it printed until then: the pipe closes with the process)
        await p.wait()
        raise AssertionError(f"archipelago {args[0]} still running after {timeout:g} s; its output:\n"
                             f"{out.decode(errors='replace')[-4000:]}") from None
    await p.wait()
    return p.returncode or 0, out.decode()
