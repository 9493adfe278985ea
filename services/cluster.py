"""Starting the cluster's parts: Redis (real, private, or an in-process stand-in), Ray, the shards.

Embedded mode (the default): a local Ray, a private ``redis-server`` with its data under
``./var/redis`` when one is on PATH, else an in-process Redis stand-in (fakeredis over TCP) and a
loud "not durable" warning.  Cluster mode: ``RAY_ADDRESS`` and ``REDIS_URL`` point at existing ones.

Supervision of embedded mode ("processes you start, you own"):

* ``<data_dir>/serve.lock`` is held (``fcntl.flock``) by the one server using a data directory; a second
  one fails at once with :class:`DataDirInUse`.  The kernel drops the lock when its holder dies, even
  by SIGKILL, so a crashed server never blocks the next one.
* The private redis-server gets ``PR_SET_PDEATHSIG`` = SIGTERM: it shuts down (flushing its
  append-only file) when the process that started it dies, even by SIGKILL.  Linux delivers that
  signal when the *thread* that forked exits, so children are forked only from the main thread or from
  one long-lived spawner thread (:func:`spawn`), never from a pool or watchdog thread directly.
* Ray's local node fate-shares with its driver by itself (gcs_server, raylet, workers die within ~2 s
  of a SIGKILLed driver), but its dashboard and runtime-env agents linger for about a minute.  Every
  process of the local Ray node carries ``ARCHIPELAGO_SERVE_DIR=<data_dir>`` in its environment; once
  the next server holds the lock, :func:`reap_previous_run` stops whatever still carries that mark,
  and a live redis-server named by ``redis/redis.pid``, before starting anything.  (redis-server
  overwrites its environment block with its process title, so it is found by its pidfile instead.)
* A private redis-server that dies while the cluster runs is restarted on the same port and data
  directory by :class:`RedisWatchdog` (bounded restarts with backoff, a log line each).
* Nothing the server started may outlive it (Ray's agents lingered ~60 s after a SIGKILL: the
  raylet's children, with no death signal of their own): a small reaper process
  (:func:`start_reaper`, ``python -m services.cluster reap``) is started with the death signal and
  no mark; it notes the server's descendants each second, and when the server dies (or stops) it
  stops them and every process carrying the mark (SIGTERM, then SIGKILL 2 s later) and exits — all
  within a few seconds of a SIGKILL.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import dataclasses
import fcntl
import json
import logging
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Ray reads these at import: keep the node on loopback, no auth token files, no usage reports.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    # Task events (the dashboard's task table): every shard call is a task, and their events grew the
    # GCS by ~40 MB a minute under continuous play (bench/soak.py). Nothing here reads them.
    "RAY_task_events_report_interval_ms": "0",
}


def ray_environment() -> None:
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- supervision primitives ------------------------------------------------------------------------

SERVE_MARK = "ARCHIPELAGO_SERVE_DIR"  # in the environment of the local Ray node's processes
LOCK_NAME = "serve.lock"
REDIS_PIDFILE = "redis.pid"  # under <data_dir>/redis
_PR_SET_PDEATHSIG = 1
_libc: Any = None
if sys.platform.startswith("linux"):  # loaded before any fork: the child only calls into it
    with contextlib.suppress(OSError):
        _libc = ctypes.CDLL(None, use_errno=True)


class DataDirInUse(RuntimeError):
    """Another live process holds ``<data_dir>/serve.lock``."""

    def __init__(self, data_dir: Path, pid: int | None) -> None:
        self.data_dir, self.pid = data_dir, pid
        holder = f"pid {pid}" if pid else "pid unknown"
        super().__init__(f"data directory {data_dir} is in use by another archipelago serve ({holder}); "
                         "stop that one or choose another --data-dir")


@dataclass
class DataDirLock:
    """An exclusive flock on ``<data_dir>/serve.lock`` holding our pid; :meth:`release` drops it."""

    path: Path
    fd: int | None

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing our only descriptor drops the flock


def lock_data_dir(data_dir: Path) -> DataDirLock:
    """Take ``<data_dir>/serve.lock`` for the life of this process, or raise :class:`DataDirInUse`.

    The descriptor is close-on-exec (PEP 446), so no child we exec (redis-server, Ray) holds it.
    """
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        os.close(fd)
        raise DataDirInUse(data_dir, int(text) if text.isdigit() else None) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return DataDirLock(path=path, fd=fd)


def _die_with_parent(parent: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets SIGTERM when the thread that forked it exits (Linux)."""

    def preexec() -> None:
        if _libc is not None:
            _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


class _Spawner:
    """Forks children from one thread that lives as long as the process (see PDEATHSIG above)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], subprocess.Popen[bytes]],
                                             Future[subprocess.Popen[bytes]]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def run(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        if threading.current_thread() is threading.main_thread():
            return start()
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True, name="archipelago-spawner")
                self._thread.start()
        done: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((start, done))
        return done.result()

    def _loop(self) -> None:
        while True:
            start, done = self._jobs.get()
            try:
                done.set_result(start())
            except BaseException as e:  # handed to the caller
                done.set_exception(e)


_spawner = _Spawner()


SETPRIV = shutil.which("setpriv")  # util-linux: sets PDEATHSIG in C, then execs the command


def spawn(args: list[str], *, env: dict[str, str] | None = None, quiet: bool = True) -> subprocess.Popen[bytes]:
    """Start a child that dies with this process (even by SIGKILL), in its own session.

    Its own session: a Ctrl-C meant for us must not kill it before we shut down in order.  The
    death signal is set by ``setpriv --pdeathsig`` (util-linux, on every Debian) when present: no
    Python runs between fork and exec, which in a process with gRPC's or Ray's threads can deadlock
    the child before it ever execs (seen: a redis-server restart that never started).  Without
    setpriv, a ``preexec_fn`` does it. ``quiet=False``: it writes to our stdout and stderr.
    """
    out = subprocess.DEVNULL if quiet else None
    if SETPRIV is not None:
        return _spawner.run(lambda: subprocess.Popen(
            [SETPRIV, "--pdeathsig", "TERM", "--", *args], stdout=out, stderr=out,
            stdin=subprocess.DEVNULL, start_new_session=True, env=env))
    parent = os.getpid()
    return _spawner.run(lambda: subprocess.Popen(
        args, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
        start_new_session=True, env=env, preexec_fn=_die_with_parent(parent)))


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def _stop_pids(pids: list[int], timeout_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout_s``; returns when every pid is gone."""
    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, timeout_s)):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        pids = [p for p in pids if _alive(p)]
        if not pids:
            return
    log.error("could not stop processes %s", pids)


def _proc_label(pid: int) -> str:
    try:
        return f"{pid} ({Path(f'/proc/{pid}/comm').read_text().strip()})"
    except OSError:
        return str(pid)


def marked_processes(data_dir: Path) -> list[int]:
    """Processes (not this one) whose environment carries ``ARCHIPELAGO_SERVE_DIR=<data_dir>``."""
    needle = f"\0{SERVE_MARK}={data_dir.resolve()}\0".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = b"\0" + Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if needle in env and _alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def stale_redis_pid(redis_dir: Path) -> int | None:
    """The live redis-server named by ``<redis_dir>/redis.pid`` and running in that directory, if any."""
    try:
        pid = int((redis_dir / REDIS_PIDFILE).read_text().strip())
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))  # redis-server chdirs into --dir
    except (OSError, ValueError):
        return None
    return pid if comm.startswith("redis-server") and cwd == redis_dir.resolve() and _alive(pid) else None


def reap_previous_run(data_dir: Path) -> list[int]:
    """Stop what an earlier server on ``data_dir`` left running.  Call only while holding its lock:
    then nothing else legitimately runs for this directory.  Returns the pids stopped."""
    data_dir = data_dir.resolve()
    pids = set(marked_processes(data_dir))
    stale = stale_redis_pid(data_dir / "redis")
    if stale is not None:
        pids.add(stale)
    if pids:
        log.warning("stopping %d process(es) left by an earlier run on %s: %s", len(pids), data_dir,
                    ", ".join(_proc_label(p) for p in sorted(pids)))
        _stop_pids(sorted(pids))
    return sorted(pids)


REAP_GRACE_S = 2.0  # SIGTERM, then SIGKILL this long after


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, start time in clock ticks) of every live process."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            table[int(entry.name)] = (int(fields[1]), int(fields[19]))  # (stat fields 4 and 22)
    return table


def descendants(roots: set[int], table: dict[int, tuple[int, int]] | None = None) -> dict[int, int]:
    """Every live descendant of ``roots`` (not the roots): pid -> start time (to tell a reused pid)."""
    table = _process_table() if table is None else table
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (ppid, _) in table.items():
        children[ppid].append(pid)
    found: dict[int, int] = {}
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found and child not in roots:
                found[child] = table[child][1]
                todo.append(child)
    return found


def reap(data_dir: Path, known: dict[int, int], rounds: int = 5) -> list[int]:
    """Stop ``known`` (pid -> start time: only while it is still that process), their descendants
    and every process carrying ``data_dir``'s mark, again while new ones appear (a raylet starting
    a worker as it goes). Returns the pids stopped."""
    stopped: list[int] = []
    for _ in range(rounds):
        table = _process_table()
        alive = {pid for pid, start in known.items() if table.get(pid, (0, -1))[1] == start}
        pids = sorted((alive | set(descendants(alive, table)) | set(marked_processes(data_dir)))
                      - {os.getpid()} - set(stopped))
        if not pids:
            break
        _stop_pids(pids, timeout_s=REAP_GRACE_S)
        stopped += pids
    return stopped


def reaper_main(data_dir: Path, parent: int) -> None:
    """The reaper: follows the processes ``parent`` started after it (a snapshot of its descendants
    each second: a raylet's children outlive it, re-parented), until SIGTERM (its death signal — sent
    when the parent's spawning thread ends, so also as the parent dies — or :meth:`Embedded.stop`)
    or until ``parent`` is gone; then stops all of them and whatever carries ``data_dir``'s mark."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (its own session; a stray Ctrl-C is not our stop)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    logging.basicConfig(filename=data_dir / "reaper.log", level=logging.INFO,
                        format="%(asctime)s reaper[%(process)d] %(message)s")
    me = os.getpid()
    born = _process_table()[me][1]
    known: dict[int, int] = {}

    def note() -> None:  # only what was started after us: the server's, not what its host ran before
        known.update({pid: start for pid, start in descendants({parent}).items() if start >= born and pid != me})

    while os.getppid() == parent:  # (the death signal may be lost if it was set late: look too)
        note()
        if signal.sigtimedwait({signal.SIGTERM}, 1.0) is not None:
            break
    note()
    stopped = reap(data_dir, known)
    log.info("stopped %d process(es) left by the server of %s: %s", len(stopped), data_dir,
             ", ".join(map(str, stopped)) or "none")


def start_reaper(data_dir: Path) -> subprocess.Popen[bytes]:
    """The reaper of ``data_dir``'s marked processes (see the module's notes); unmarked itself."""
    env = {k: v for k, v in os.environ.items() if k != SERVE_MARK}
    return spawn([sys.executable, "-m", "services.cluster", "reap", str(data_dir.resolve()), str(os.getpid())],
                 env=env)


@contextlib.contextmanager
def _marked_environment(data_dir: Path) -> Iterator[None]:
    """``ARCHIPELAGO_SERVE_DIR`` in os.environ while children (Ray's node) are started, then restored."""
    before = os.environ.get(SERVE_MARK)
    os.environ[SERVE_MARK] = str(data_dir.resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SERVE_MARK, None)
        else:
            os.environ[SERVE_MARK] = before


# --- Redis ---------------------------------------------------------------------------------------


@dataclass
class RedisProcess:
    """A private redis-server we started (stopped with :meth:`stop`)."""

    url: str
    proc: subprocess.Popen[bytes] | None = None
    fake_server: Any = None
    durable: bool = True
    args: list[str] = field(default_factory=list)  # to restart it exactly so (same port, same --dir)
    pidfile: Path | None = None

    def launch(self) -> None:
        """(Re)start the redis-server from :attr:`args` and wait until it answers."""
        proc = spawn(self.args)
        self.proc = proc
        if self.pidfile is not None:
            self.pidfile.write_text(f"{proc.pid}\n")
        try:
            wait_for_redis(self.url)
        except Exception:
            proc.kill()
            proc.wait()
            raise

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.pidfile is not None:
            self.pidfile.unlink(missing_ok=True)
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
    """Start a private redis-server on loopback (append-only file under ``data_dir`` if durable).

    It dies with this process, even by SIGKILL (see :func:`spawn`); its pid is in ``data_dir/redis.pid``.
    """
    exe = shutil.which("redis-server")
    if exe is None:
        raise FileNotFoundError("redis-server is not on PATH")
    data_dir = data_dir.resolve()  # redis-server chdirs into --dir before opening its log file
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    args = [exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir), "--save", "",
            "--protected-mode", "yes", "--logfile", str(data_dir / "redis.log")]
    # "always": Redis writes and fsyncs the append-only file before it answers (one fsync per event
    # loop turn, shared by every write of that turn). With "everysec" it may postpone the write while a
    # background fsync runs and answer meanwhile: a SIGKILL then loses acknowledged writes (seen in
    # tests/chaos). ARCHIPELAGO_REDIS_FSYNC=everysec trades that for speed.
    fsync = os.environ.get("ARCHIPELAGO_REDIS_FSYNC", "always")
    args += ["--appendonly", "yes", "--appendfsync", fsync] if durable else ["--appendonly", "no"]
    redis = RedisProcess(url=f"redis://127.0.0.1:{port}/0", durable=durable, args=args,
                         pidfile=data_dir / REDIS_PIDFILE)
    redis.launch()
    return redis


class RedisWatchdog:
    """Restarts a private redis-server that dies on the same port and data directory.

    At most ``max_restarts`` within ``window_s`` (then it gives up, loudly), waiting ``backoff_s``
    doubled per recent restart (capped at ``max_backoff_s``) before each; one log line per restart.
    """

    def __init__(self, redis: RedisProcess, *, max_restarts: int = 5, window_s: float = 60.0,
                 backoff_s: float = 0.1, max_backoff_s: float = 5.0, poll_s: float = 0.1) -> None:
        self.redis = redis
        self.max_restarts, self.window_s = max_restarts, window_s
        self.backoff_s, self.max_backoff_s, self.poll_s = backoff_s, max_backoff_s, poll_s
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="redis-watchdog")

    def start(self) -> RedisWatchdog:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        recent: collections.deque[float] = collections.deque()
        while not self._stop.wait(self.poll_s):
            proc = self.redis.proc
            if proc is None or proc.poll() is None:
                continue
            now = time.monotonic()
            while recent and now - recent[0] > self.window_s:
                recent.popleft()
            if len(recent) >= self.max_restarts:
                log.error("redis-server at %s died %d times within %.0f s; not restarting it again",
                          self.redis.url, len(recent) + 1, self.window_s)
                return
            delay = min(self.backoff_s * 2 ** len(recent), self.max_backoff_s)
            recent.append(now)
            if self._stop.wait(delay):
                return
            try:
                self.redis.launch()  # forked via the spawner thread, not this one
            except Exception as e:
                log.error("redis-server (pid %d, exit code %s) could not be restarted at %s: %s",
                          proc.pid, proc.returncode, self.redis.url, e)
                continue
            self.restarts += 1
            new_pid = self.redis.proc.pid if self.redis.proc else None
            log.warning("redis-server (pid %d) exited with code %s; restarted at %s as pid %s (restart %d)",
                        proc.pid, proc.returncode, self.redis.url, new_pid, self.restarts)


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


RAY_METRICS_PORT_ENV = "ARCHIPELAGO_RAY_METRICS_PORT"
DEFAULT_RAY_METRICS_PORT = 8090  # (outside Ray's 10001-19999 and beside our 8080)


def port_taken(port: int) -> bool:
    """True when something listens on ``port`` (Ray's metrics agent binds every interface)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (a port in TIME_WAIT is free to a server)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def ray_metrics_port(env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """The port the embedded Ray node exports its own metrics on (``ray_*`` series, Prometheus text),
    and a note for the log ("" when all is as asked).

    ``ARCHIPELAGO_RAY_METRICS_PORT``: a port, or 0 for one the OS picks; not a port, or taken: SystemExit
    with the reason (``serve`` stops before starting anything).
    Unset: :data:`DEFAULT_RAY_METRICS_PORT`, or — when that one is taken (another server on this
    machine) — a free port, said in the note. Ray left alone picks a random port on every start."""
    env = os.environ if env is None else env
    raw = env.get(RAY_METRICS_PORT_ENV, "").strip()
    if not raw:
        if not port_taken(DEFAULT_RAY_METRICS_PORT):
            return DEFAULT_RAY_METRICS_PORT, ""
        port = free_port()
        return port, (f"port {DEFAULT_RAY_METRICS_PORT} is taken (another server?): Ray's metrics on {port} this "
                      f"time; set {RAY_METRICS_PORT_ENV} to fix it")
    if not raw.isdigit() or int(raw) > 65535:
        raise SystemExit(f"error: {RAY_METRICS_PORT_ENV}: expected a port number (0: any free port), got {raw[:20]!r}")
    if int(raw) == 0:
        return free_port(), ""
    if port_taken(int(raw)):
        raise SystemExit(f"error: {RAY_METRICS_PORT_ENV}={raw}: that port is taken; choose another (0: any free port)")
    return int(raw), ""


# Ray's processes write their logs (the raylet's and GCS's [state-dump] blocks every 10 s, the core
# workers' event stats with their heartbeats every minute) to files under its session directory,
# unless RAY_LOG_TO_STDERR=1 — set in many container images — sends them to the stderr of whoever
# started them: in embedded mode, the gateway's own log. The gateway keeps its stderr to itself.
RAY_STDERR_ENV = "RAY_LOG_TO_STDERR"


def init_ray(address: str | None = None, *, namespace: str = "archipelago", num_cpus: int | None = None,
             tmpdir: str | None = None, metrics_port: int | None = None) -> None:
    """Start a local Ray node (``address`` None) or join one, as a driver whose stderr Ray's processes
    never write to (:data:`RAY_STDERR_ENV` dropped; ``log_to_driver`` off: the shards' output stays in
    Ray's worker files). ``metrics_port``: where a local node exports Ray's own metrics."""
    ray_environment()
    if tmpdir:
        os.environ["RAY_TMPDIR"] = tmpdir
    import ray

    if ray.is_initialized():
        return
    if os.environ.pop(RAY_STDERR_ENV, None) not in (None, "", "0"):
        log.warning("%s ignored: Ray's logs go to its session directory's logs/, not the gateway's stderr",
                    RAY_STDERR_ENV)
    kwargs: dict[str, Any] = {"namespace": namespace, "log_to_driver": False,
                              "logging_level": logging.ERROR}
    if address:
        ray.init(address=address, **kwargs)
    else:
        if metrics_port is not None:
            kwargs["_metrics_export_port"] = metrics_port
        ray.init(num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False, **kwargs)


def ray_logs_dir() -> str:
    """The local Ray node's log directory ("" when unknown)."""
    with contextlib.suppress(Exception):
        from ray._private import worker

        node = worker._global_node
        return str(node.get_logs_dir_path()) if node is not None else ""
    return ""


def shard_names(count: int) -> list[str]:
    return [f"shard-{i}" for i in range(count)]


def shard_resources() -> dict[str, float]:
    """Custom Ray resources each shard asks for (``ARCHIPELAGO_SHARD_RESOURCES``, JSON, e.g.
    ``{"archipelago_shard": 1}`` where only the worker nodes offer that resource): none by default."""
    raw = os.environ.get("ARCHIPELAGO_SHARD_RESOURCES", "").strip()
    return {str(k): float(v) for k, v in json.loads(raw).items()} if raw else {}


def start_shards(count: int | list[str], redis_url: str, *, prefix: str = "arch:", namespace: str = "archipelago",
                 detached: bool = False) -> list[Any]:
    """Create (or find) the named GameShard actors (``count`` of them, ``shard-0 …``, or these names),
    spread over the Ray nodes."""
    import ray

    from services.game_actor import Retention
    from services.notify.config import WarnPolicy
    from services.shard import GameShard

    retention = dataclasses.asdict(Retention.from_env())  # the starting process's environment
    warn = dataclasses.asdict(WarnPolicy.from_env())  # (when deadline warnings come)
    actor_cls: Any = ray.remote(GameShard)
    handles = []
    resources = shard_resources()
    for name in shard_names(count) if isinstance(count, int) else count:
        opts: dict[str, Any] = {
            "name": name, "namespace": namespace, "get_if_exists": True, "num_cpus": 0,
            "max_restarts": -1, "max_task_retries": -1, "max_concurrency": 1000,
            "scheduling_strategy": "SPREAD",
        }
        if resources:
            opts["resources"] = resources
        if detached:
            opts["lifetime"] = "detached"
        handles.append(actor_cls.options(**opts).remote(name, redis_url, prefix, retention, warn))
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
    lock: DataDirLock | None = None
    watchdog: RedisWatchdog | None = None
    ray_owned: bool = False  # we called ray.init (shutdown is ours to do)
    reaper: subprocess.Popen[bytes] | None = None  # stops the local Ray node's leftovers (start_reaper)

    def stop(self) -> None:
        """Watchdog first (so it does not restart what we stop), then Ray, Redis, what the reaper
        finds left, and the lock."""
        if self.watchdog is not None:
            self.watchdog.stop()
        if self.ray_owned:
            with contextlib.suppress(Exception):
                import ray

                ray.shutdown()
        if self.redis is not None:
            self.redis.stop()
        if self.reaper is not None and self.reaper.poll() is None:  # last: it stops what is left
            self.reaper.terminate()
            try:
                self.reaper.wait(timeout=5 * (REAP_GRACE_S * 2 + 1))
            except subprocess.TimeoutExpired:
                self.reaper.kill()
                self.reaper.wait()
        if self.lock is not None:
            self.lock.release()


def the_shard_set(redis_url: str, prefix: str, wanted: list[str]) -> list[str]:
    """The cluster's shard names: the set recorded in Redis, or ``wanted`` recorded now (the first
    ``serve`` of a cluster decides; a later one with another ``--shards`` says so and follows it)."""
    from services.store import Store

    async def ensure() -> dict[str, str]:
        store = Store(redis_url, prefix, client_name="archipelago-serve")
        try:
            return await store.ensure_shard_set(wanted)
        finally:
            await store.close()

    names = sorted(asyncio.run(ensure()), key=lambda n: (len(n), n))
    if names != wanted:
        print(f"shards: the cluster's shard set (in Redis) is {', '.join(names)}; --shards {len(wanted)} "
              "does not change it (see `archipelago admin shards`)", flush=True)
    return names


def start_embedded(*, shards: int, data_dir: Path, namespace: str = "archipelago", prefix: str = "arch:",
                   redis_url: str | None = None, ray_address: str | None = None,
                   redis_port: int | None = None) -> Embedded:
    """Start what ``archipelago serve`` needs; raises :class:`DataDirInUse` if another server has ``data_dir``.

    Call it from the main thread or a thread that lives as long as the process (``asyncio.to_thread``
    is fine): Ray forks its node from the calling thread and ties it to that thread's life.
    """
    ray_address = ray_address or os.environ.get("RAY_ADDRESS") or None
    redis_url = redis_url or os.environ.get("REDIS_URL") or None
    ray_environment()  # before Ray's import
    import ray

    private = redis_url is None or (ray_address is None and not ray.is_initialized())
    data_dir = data_dir.resolve()
    cluster = Embedded(redis_url="", shards=shard_names(shards), namespace=namespace, prefix=prefix)
    local_node = ray_address is None and not ray.is_initialized()  # we start one (its processes marked)
    metrics_port, note = ray_metrics_port() if local_node else (None, "")
    try:
        if private:  # something of ours lives in data_dir: own it, and clear what a crashed run left
            cluster.lock = lock_data_dir(data_dir)
            reap_previous_run(data_dir)
        cluster.redis, cluster.redis_url = start_redis(data_dir, redis_url, redis_port)
        if cluster.redis is not None and cluster.redis.proc is not None:
            cluster.watchdog = RedisWatchdog(cluster.redis).start()
        cluster.ray_owned = not ray.is_initialized()
        if local_node and private:
            cluster.reaper = start_reaper(data_dir)
        with _marked_environment(data_dir) if local_node else contextlib.nullcontext():
            init_ray(ray_address, namespace=namespace, metrics_port=metrics_port)
        print(f"ray: {'joined ' + ray_address if ray_address else 'local node started'}", flush=True)
        if metrics_port is not None:
            print(f"ray: Ray's own metrics on http://127.0.0.1:{metrics_port}/metrics (every interface; "
                  f"{RAY_METRICS_PORT_ENV}); its logs in {ray_logs_dir() or 'its session directory'}", flush=True)
        if note:
            print(f"ray: {note}", flush=True)
        cluster.shards = the_shard_set(cluster.redis_url, prefix, shard_names(shards))
        cluster.handles = start_shards(cluster.shards, cluster.redis_url, prefix=prefix, namespace=namespace,
                                       detached=bool(ray_address))
    except BaseException:
        cluster.stop()
        raise
    print(f"shards: {len(cluster.shards)} GameShard actors up", flush=True)
    return cluster


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "reap":
        reaper_main(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        raise SystemExit("usage: python -m services.cluster reap DATA_DIR PARENT_PID")
