"""`archipelago serve` owns what it starts: one server per data directory, no orphans after a crash
(even kill -9), a private redis-server that dies is restarted with its data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from services.cluster import (
    SERVE_MARK,
    DataDirInUse,
    RedisWatchdog,
    _alive,
    free_port,
    lock_data_dir,
    marked_processes,
    reap_previous_run,
    start_redis_server,
    wait_for_redis,
)

pytestmark = pytest.mark.e2e

HELPER = Path(__file__).with_name("supervision_helper.py")
ROOT = Path(__file__).resolve().parents[2]


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0, what: str = "condition") -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} not reached within {timeout_s} s"
        time.sleep(0.02)


@pytest.fixture
def helper() -> Iterator[Callable[..., tuple[subprocess.Popen[str], str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(mode: str, data_dir: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen([sys.executable, str(HELPER), mode, str(data_dir)], cwd=ROOT, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        started.append(proc)
        assert proc.stdout is not None
        for line in proc.stdout:  # status lines, then READY [payload]; or it exits
            if line.startswith("READY"):
                return proc, line.removeprefix("READY").strip()
        raise AssertionError(f"helper {mode} exited with {proc.wait()}")

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def test_a_second_server_on_a_data_directory_is_refused_until_the_first_dies(
        tmp_path: Path, helper: Callable[..., tuple[subprocess.Popen[str], str]]) -> None:
    first, _ = helper("lock", tmp_path)
    with pytest.raises(DataDirInUse) as refused:
        lock_data_dir(tmp_path)
    assert refused.value.pid == first.pid
    assert str(tmp_path.resolve()) in str(refused.value) and f"pid {first.pid}" in str(refused.value)

    first.kill()  # kill -9: the kernel drops its flock
    first.wait()
    lock = lock_data_dir(tmp_path)
    try:
        assert (tmp_path / "serve.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(DataDirInUse):  # held by us now, for as long as we keep it
            lock_data_dir(tmp_path)
    finally:
        lock.release()
    lock_data_dir(tmp_path).release()


@pytest.mark.parametrize("mode", ["redis", "redis-from-thread"])
def test_a_private_redis_server_dies_with_the_process_that_started_it(
        tmp_path: Path, helper: Callable[..., tuple[subprocess.Popen[str], str]], mode: str) -> None:
    parent, line = helper(mode, tmp_path / "redis")
    pid_text, url = line.split()
    pid = int(pid_text)
    assert redis.Redis.from_url(url).ping()  # alive, even when the thread that forked it has ended
    assert (tmp_path / "redis" / "redis.pid").read_text().strip() == pid_text

    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_until(lambda: not _alive(pid), 5.0, f"redis-server {pid} gone after its parent's kill -9")


def test_a_killed_private_redis_server_comes_back_on_its_port_with_its_data(tmp_path: Path) -> None:
    server = start_redis_server(tmp_path / "redis", durable=True)
    watchdog = RedisWatchdog(server, backoff_s=0.05).start()
    try:
        client = redis.Redis.from_url(server.url)
        client.set("game:1", "round 3")
        assert server.proc is not None
        old = server.proc.pid
        os.kill(old, signal.SIGKILL)

        def back() -> bool:
            if watchdog.restarts < 1 or server.proc is None or server.proc.pid == old:
                return False
            try:
                return bool(client.ping())
            except redis.exceptions.ConnectionError:
                return False

        wait_until(back, 10.0, "redis-server restarted")
        assert client.get("game:1") == b"round 3"
        assert watchdog.restarts == 1
        assert (tmp_path / "redis" / "redis.pid").read_text().strip() == str(server.proc.pid)
    finally:
        watchdog.stop()
        server.stop()
    assert server.proc is not None and server.proc.poll() is not None  # a clean stop is not restarted


def test_processes_left_by_a_killed_server_are_stopped_by_the_next_one(
        helper: Callable[..., tuple[subprocess.Popen[str], str]]) -> None:
    with tempfile.TemporaryDirectory(prefix="sup-", dir="/tmp") as d:  # short: Ray's socket paths are bounded
        data_dir = Path(d) / "var"
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS", SERVE_MARK)}
        env["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="ray-", dir=d)
        server, _ = helper("embedded", data_dir, env)
        ours = marked_processes(data_dir)
        names = {Path(f"/proc/{p}/comm").read_text().strip() for p in ours}
        assert {"gcs_server", "raylet", "ray::GameShard"} <= names, names
        ours.append(int((data_dir / "redis" / "redis.pid").read_text()))  # dies by PDEATHSIG, found by pidfile

        server.kill()  # kill -9 of `archipelago serve`
        server.wait()
        lock = lock_data_dir(data_dir)  # free at once
        try:
            reaped = reap_previous_run(data_dir)
            # Ray's node mostly dies with its driver, but its dashboard and runtime-env agents linger ~1 min.
            assert reaped and set(reaped) <= set(ours)
            assert marked_processes(data_dir) == []
            assert not [p for p in ours if _alive(p)]
        finally:
            lock.release()


def test_a_redis_server_left_running_on_the_data_directory_is_stopped_before_a_new_one_starts(
        tmp_path: Path) -> None:
    """An orphan from before supervision (or started by hand): found by redis/redis.pid and its directory."""
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    port = free_port()
    orphan = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(redis_dir),
                               "--save", "", "--appendonly", "yes"], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_redis(f"redis://127.0.0.1:{port}/0")
        (redis_dir / "redis.pid").write_text(f"{orphan.pid}\n")
        lock = lock_data_dir(tmp_path)
        try:
            assert reap_previous_run(tmp_path) == [orphan.pid]
            assert orphan.wait(timeout=5) is not None
        finally:
            lock.release()
    finally:
        if orphan.poll() is None:
            orphan.kill()
        orphan.wait()
