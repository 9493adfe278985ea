"""Starting the cluster's parts: Redis (real, private, or an in-process stand-in), Ray, the shards.

Embedded mode (the default): a local Ray, a private ``redis-server`` with its data under
``./var/redis`` when one is on PATH, else an in-process Redis stand-in (fakeredis over TCP) and a
loud "not durable" warning.  Cluster mode: ``RAY_ADDRESS`` and ``REDIS_URL`` point at existing ones.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Ray reads these at import: keep the node on loopback, no auth token files, no usage reports.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
}


def ray_environment() -> None:
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RedisProcess:
    """A private redis-server we started (stopped with :meth:`stop`)."""

    url: str
    proc: subprocess.Popen[bytes] | None = None
    fake_server: Any = None
    durable: bool = True

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.fake_server is not None:
            self.fake_server.shutdown()
            self.fake_server.server_close()


def wait_for_redis(url: str, timeout_s: float = 10.0) -> None:
    import redis

    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            client.ping()
            client.close()
            return
        except redis.exceptions.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def start_redis_server(data_dir: Path, port: int | None = None, *, durable: bool = True) -> RedisProcess:
    """Start a private redis-server on loopback (append-only file under ``data_dir`` if durable)."""
    exe = shutil.which("redis-server")
    if exe is None:
        raise FileNotFoundError("redis-server is not on PATH")
    data_dir = data_dir.resolve()  # redis-server chdirs into --dir before opening its log file
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    args = [exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir), "--save", "",
            "--protected-mode", "yes", "--logfile", str(data_dir / "redis.log")]
    args += ["--appendonly", "yes", "--appendfsync", "everysec"] if durable else ["--appendonly", "no"]
    # Its own session: a Ctrl-C meant for us must not kill Redis before we shut down in order.
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        wait_for_redis(url)
    except Exception:
        proc.kill()
        raise
    return RedisProcess(url=url, proc=proc, durable=durable)


def start_fake_redis() -> RedisProcess:
    """An in-process Redis stand-in reachable over TCP by every process of this machine."""
    from fakeredis import TcpFakeServer

    port = free_port()
    server = TcpFakeServer(("127.0.0.1", port), server_type="redis")
    threading.Thread(target=server.serve_forever, daemon=True, name="fakeredis").start()
    url = f"redis://127.0.0.1:{port}/0"
    wait_for_redis(url)
    return RedisProcess(url=url, fake_server=server, durable=False)


NOT_DURABLE_WARNING = """
###########################################################################
#  WARNING: redis-server not found — using an in-process Redis stand-in.  #
#  NOTHING IS DURABLE: every game is lost when this process stops.        #
#  Install redis-server (apt-get install redis-server) or set REDIS_URL.  #
###########################################################################
"""


def start_redis(data_dir: Path, redis_url: str | None, port: int | None = None
                ) -> tuple[RedisProcess | None, str]:
    """The given Redis, else a private redis-server, else the stand-in with a loud warning."""
    if redis_url is not None:
        wait_for_redis(redis_url)
        print(f"redis: {redis_url}", flush=True)
        return None, redis_url
    if shutil.which("redis-server"):
        proc = start_redis_server(data_dir / "redis", port)
        print(f"redis: private redis-server at {proc.url} (data in {data_dir / 'redis'})", flush=True)
    else:
        proc = start_fake_redis()
        print(NOT_DURABLE_WARNING, file=sys.stderr, flush=True)
    return proc, proc.url


def init_ray(address: str | None = None, *, namespace: str = "archipelago", num_cpus: int | None = None,
             tmpdir: str | None = None) -> None:
    ray_environment()
    if tmpdir:
        os.environ["RAY_TMPDIR"] = tmpdir
    import ray

    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"namespace": namespace, "log_to_driver": False,
                              "logging_level": logging.ERROR}
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False, **kwargs)


def shard_names(count: int) -> list[str]:
    return [f"shard-{i}" for i in range(count)]


def start_shards(count: int, redis_url: str, *, prefix: str = "arch:", namespace: str = "archipelago",
                 detached: bool = False) -> list[Any]:
    """Create (or find) the named GameShard actors ``shard-0 .. shard-{count-1}``."""
    import ray

    from services.shard import GameShard

    actor_cls: Any = ray.remote(GameShard)
    handles = []
    for name in shard_names(count):
        opts: dict[str, Any] = {
            "name": name, "namespace": namespace, "get_if_exists": True, "num_cpus": 0,
            "max_restarts": -1, "max_task_retries": -1, "max_concurrency": 1000,
        }
        if detached:
            opts["lifetime"] = "detached"
        handles.append(actor_cls.options(**opts).remote(name, redis_url, prefix))
    ray.get([h.ping.remote() for h in handles])
    return handles


@dataclass
class Embedded:
    """Everything ``archipelago serve`` needs before the gateway starts."""

    redis_url: str
    shards: list[str]
    namespace: str
    prefix: str
    redis: RedisProcess | None = None
    handles: list[Any] = field(default_factory=list)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            import ray

            ray.shutdown()
        if self.redis is not None:
            self.redis.stop()


def start_embedded(*, shards: int, data_dir: Path, namespace: str = "archipelago", prefix: str = "arch:",
                   redis_url: str | None = None, ray_address: str | None = None,
                   redis_port: int | None = None) -> Embedded:
    ray_address = ray_address or os.environ.get("RAY_ADDRESS") or None
    proc, redis_url = start_redis(data_dir, redis_url or os.environ.get("REDIS_URL") or None, redis_port)
    init_ray(ray_address, namespace=namespace)
    print(f"ray: {'joined ' + ray_address if ray_address else 'local node started'}", flush=True)
    handles = start_shards(shards, redis_url, prefix=prefix, namespace=namespace,
                           detached=bool(ray_address))
    print(f"shards: {shards} GameShard actors up", flush=True)
    return Embedded(redis_url=redis_url, shards=shard_names(shards), namespace=namespace, prefix=prefix,
                    redis=proc, handles=handles)
