"""A peer in the capacity bench: boardgame.io's server under the same shape of load as ours (issue 24).

What is measured: moves/s that boardgame.io's own ``Server`` (npm ``boardgame.io``, pinned in
``bench/peer/package.json``) sustains for a simultaneous-move game of our shape — N players each submit
once per round, in any order (``activePlayers: ActivePlayers.ALL``); when all N have submitted the round
resolves (a sum into scores) and the next opens (``bench/peer/game.js``).  The load is real boardgame.io
clients (``boardgame.io/client`` ``Client`` with the ``SocketIO`` multiplayer transport, websocket) in a
process of their own (``bench/peer/driver.js``): M matches × N players, made through the server's lobby
API (every seat holds its credentials, checked on each move).  Closed loop: each client submits as soon
as its round opens; a move counts when the mover's client sees the server's update holding it (the move
runs on the server only, ``client: false``, so submit → seen is a full round trip; its latency is the
p50/p99).  After a warm-up the moves are counted over the window.

How: ``run_peer`` starts ``node bench/peer/server.js`` (storage ``memory``: boardgame.io's InMemory,
nothing durable; ``flatfile``: its FlatFile, node-persist files in a fresh temporary folder, the durable
variant) pinned to one core (``taskset -c 0`` by default, the earlier measurement's method) and the
driver on the machine's other cores, waits for the server's port by polling a connect, runs the driver,
and returns its JSON line with the server's CPU over the window added.  Both processes are its own: they
are killed when it returns or raises (KeyboardInterrupt too), and each also exits by itself when its
standard input — a pipe from this process — closes, so not even a killed parent leaves them behind.

Earlier measurement (the issue's): in-memory server, 50 four-player matches, real clients over
socket.io, 3,240–3,300 moves/s on one core of this machine; with FlatFile ~850/s.  Measured here
2026-12-02 (boardgame.io 0.50.2, node 20.20.2, server on core 0, driver on core 1, 20 s window after 3 s,
50 × 4): in-memory 2,902 / 3,602 / 3,146 moves/s on a quiet machine (the server ~97 % of its core,
270–310 µs of server CPU a move, p50 48–63 ms, p99 210–230 ms); 610–1,750/s while a CI run loaded both
cores (the server then got 25–58 % of its core: ``moves_per_server_cpu_s``, ~3,200–3,800, moves least).
FlatFile: 252/s, falling from ~480/s in the window's first second to ~120/s in its last — boardgame.io's
storages keep each match's whole action log and FlatFile reads and rewrites it on every move, so a match
grows slower the longer it runs (``per_second`` shows the trend); node-persist (≥ 3.1.1, which
boardgame.io's range resolves to) also holds writes in a queue flushed on a 1 s timer when busy, and
neither fsyncs, so it is durable only against a crash of the process, not of the machine.

    .venv/bin/python -m bench.peer_bench [--seconds 20] [--matches 50] [--players 4]
                                         [--storage memory|flatfile] [--cpu 0] [--json]

``--cpu -1`` runs the server unpinned.  Needs node and npm; the first run installs ``bench/peer``'s
packages (``npm ci``) from the npm registry.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

PEER_DIR = Path(__file__).resolve().parent / "peer"
SERVER_JS = PEER_DIR / "server.js"
DRIVER_JS = PEER_DIR / "driver.js"
REQUIRED_PACKAGES = ("boardgame.io", "node-persist")
STORAGES = ("memory", "flatfile")
DRIVER_FIELDS = ("moves_per_s", "p50_ms", "p99_ms", "moves", "matches", "players", "seconds")

SERVER_READY_S = 30.0
DRIVER_SETUP_S = 90.0  # making the matches and connecting every client, before the warm-up
STOP_GRACE_S = 5.0
INSTALL_TIMEOUT_S = 600.0


class PeerError(RuntimeError):
    """The peer could not be installed or run; the message says why."""


# ---------------------------------------------------------------------------------------------- install
def node_tools() -> tuple[str, str]:
    """Paths of node and npm, or PeerError saying which is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    missing = [name for name, path in (("node", node), ("npm", npm)) if path is None]
    if node is None or npm is None:
        raise PeerError(
            f"the boardgame.io peer needs Node.js: {' and '.join(missing)} not found on PATH "
            "(install Node.js ≥ 18 with npm, e.g. `apt-get install nodejs npm`)"
        )
    return node, npm


def is_installed() -> bool:
    return all((PEER_DIR / "node_modules" / name / "package.json").is_file() for name in REQUIRED_PACKAGES)


def ensure_installed() -> None:
    """Install ``bench/peer``'s packages (``npm ci``; ``npm install`` without a lock file) unless they are
    there.  Raises PeerError with npm's last lines when that fails (e.g. no npm registry)."""
    if is_installed():
        return
    _, npm = node_tools()
    lock_path = Path(tempfile.gettempdir()) / "archipelago-bench-peer-install.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two benches at once install once
        if is_installed():
            return
        verb = "ci" if (PEER_DIR / "package-lock.json").is_file() else "install"
        cmd = [npm, verb, "--no-audit", "--no-fund", "--loglevel=error"]
        try:
            done = subprocess.run(
                cmd, cwd=PEER_DIR, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as e:
            raise PeerError(f"`npm {verb}` in {PEER_DIR} took over {INSTALL_TIMEOUT_S:.0f} s") from e
        if done.returncode != 0 or not is_installed():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise PeerError(
                f"`npm {verb}` in {PEER_DIR} failed (exit {done.returncode}); the peer's packages "
                f"({', '.join(REQUIRED_PACKAGES)}) come from the npm registry — is it reachable?\n{tail}"
            )


# ---------------------------------------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pinned(cmd: list[str], cpus: Sequence[int] | None) -> list[str]:
    if not cpus:
        return cmd
    taskset = shutil.which("taskset")
    if taskset is None:
        raise PeerError("pinning the peer to a core needs taskset (util-linux); run with cpu=None / --cpu -1")
    return [taskset, "-c", ",".join(map(str, cpus)), *cmd]


def _server_command(node: str, port: int, storage: str, data_dir: str | None) -> list[str]:
    cmd = [node, str(SERVER_JS), "--port", str(port), "--storage", storage, "--watch-stdin"]
    if data_dir is not None:
        cmd += ["--dir", data_dir]
    return cmd


def _driver_command(node: str, port: int, seconds: float, warmup: float, matches: int, players: int) -> list[str]:
    return [
        node, str(DRIVER_JS), "--url", f"http://127.0.0.1:{port}", "--matches", str(matches),
        "--players", str(players), "--seconds", repr(seconds), "--warmup", repr(warmup), "--watch-stdin",
    ]  # fmt: skip


def _spawn(cmd: list[str], stdout: int | IO[Any], stderr: int | IO[Any]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NODE_ENV": "production"}
    # A session of its own: the terminal's Ctrl-C reaches only this process, which then stops the
    # group; stdin a pipe from us, so the node process exits when we do (--watch-stdin).
    return subprocess.Popen(
        cmd, cwd=PEER_DIR, env=env, stdin=subprocess.PIPE, stdout=stdout, stderr=stderr, start_new_session=True
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a process this module started (and its group, which is its own), then reap it."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _wait_port(port: int, server: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    """Poll a TCP connect to the server's port until it accepts (or the server dies, or time runs out)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if server.poll() is not None:
            raise PeerError(f"the peer's server exited ({server.returncode}) before listening:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise PeerError(f"the peer's server did not listen on 127.0.0.1:{port} within {timeout_s:.0f} s")
        time.sleep(0.05)  # the poll's period, not a synchronisation


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class _StderrPump(threading.Thread):
    """Reads the driver's stderr: forwards it (the live counter) when asked, keeps the last lines for an
    error message, and samples the server's CPU when the driver opens and closes its window."""

    def __init__(self, stream: IO[bytes], server_pid: int, live: bool) -> None:
        super().__init__(daemon=True, name="peer-driver-stderr")
        self.stream, self.server_pid, self.live = stream, server_pid, live
        self.last: deque[str] = deque(maxlen=30)
        self.cpu_at_open: float | None = None
        self.cpu_at_close: float | None = None

    def run(self) -> None:
        for raw in iter(self.stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith("peer driver: window open"):
                self.cpu_at_open = self._cpu()
            elif line.startswith("peer driver: window closed"):
                self.cpu_at_close = self._cpu()
            self.last.append(line)
            if self.live:
                print(line, file=sys.stderr, flush=True)

    def _cpu(self) -> float | None:
        try:
            return proc_cpu_s(self.server_pid)
        except (OSError, IndexError, ValueError):
            return None


# ---------------------------------------------------------------------------------------------- run
def run_peer(
    seconds: float = 20,
    matches: int = 50,
    players: int = 4,
    storage: str = "memory",
    *,
    cpu: int | None = 0,
    warmup: float | None = None,
    live: bool = True,
) -> dict[str, Any]:
    """Run boardgame.io's server and the driver, return the driver's figures.

    ``cpu``: the core the server is pinned to (the driver then runs on the other cores); None: unpinned.
    ``warmup``: seconds played before the window opens (default min(3, seconds / 3)).  ``live``: forward
    the driver's once-a-second counter to stderr.

    Returns the driver's JSON — ``moves_per_s``, ``p50_ms``, ``p99_ms`` (submit → the mover sees its move),
    ``moves``, ``matches``, ``players``, ``seconds`` (the window), ``warmup_s``, ``per_second`` (moves in
    each whole second of the window), ``stalled`` (moves unseen after 5 s at the close; 0 when healthy),
    ``disconnects``, ``setup_s``, ``driver_cpu_s`` (the driver's CPU seconds over the window) — plus
    ``storage``, ``server_cpu`` (the pinned core or None), ``driver_cpus``, ``server_cpu_s`` (the server's
    CPU seconds over the window), ``server_cpu_us_per_move``, ``moves_per_server_cpu_s`` (moves per second
    of server CPU: what the server would do with its core to itself, the figure least moved by other load
    on the machine), ``boardgame_io`` (its version) and ``node`` (its version)."""
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {', '.join(STORAGES)}, not {storage!r}")
    if seconds <= 0 or matches < 1 or players < 2:
        raise ValueError(f"need seconds > 0, matches >= 1, players >= 2 (got {seconds}, {matches}, {players})")
    warmup_s = min(3.0, seconds / 3) if warmup is None else warmup
    node, _ = node_tools()
    ensure_installed()
    server_cpus: list[int] | None = None
    driver_cpus: list[int] | None = None
    if cpu is not None:
        allowed = sorted(os.sched_getaffinity(0))
        if cpu not in allowed:
            raise ValueError(f"cpu {cpu} is not one this process may run on ({allowed})")
        server_cpus = [cpu]
        driver_cpus = [c for c in allowed if c != cpu] or None

    procs: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arch-peer-")))
        data_dir = str(work / "flatfile") if storage == "flatfile" else None
        server_log = work / "server.log"
        log_file = stack.enter_context(open(server_log, "wb"))
        try:
            port = free_port()
            server = _spawn(_pinned(_server_command(node, port, storage, data_dir), server_cpus), log_file, log_file)
            procs.append(server)
            _wait_port(port, server, server_log, SERVER_READY_S)
            driver_cmd = _driver_command(node, port, seconds, warmup_s, matches, players)
            driver = _spawn(_pinned(driver_cmd, driver_cpus), subprocess.PIPE, subprocess.PIPE)
            procs.append(driver)
            assert driver.stderr is not None and driver.stdout is not None
            pump = _StderrPump(driver.stderr, server.pid, live)
            pump.start()
            budget = DRIVER_SETUP_S + warmup_s + seconds + 30
            try:
                code = driver.wait(budget)
            except subprocess.TimeoutExpired as e:
                raise PeerError(f"the peer's driver did not finish within {budget:.0f} s") from e
            out = driver.stdout.read().decode(errors="replace")
            pump.join(STOP_GRACE_S)
            if code != 0:
                detail = "\n".join(pump.last)
                raise PeerError(f"the peer's driver exited {code}:\n{detail}\nserver:\n{_tail(server_log)}")
            if server.poll() is not None:
                raise PeerError(f"the peer's server died during the run ({server.returncode}):\n{_tail(server_log)}")
            result = _parse_driver_output(out)
            cpu_s = (
                None
                if pump.cpu_at_open is None or pump.cpu_at_close is None
                else round(pump.cpu_at_close - pump.cpu_at_open, 3)
            )
        finally:
            for proc in reversed(procs):
                _stop(proc)

    moves = int(result["moves"])
    result.update(
        storage=storage,
        server_cpu=cpu,
        driver_cpus=driver_cpus,
        server_cpu_s=cpu_s,
        server_cpu_us_per_move=None if not cpu_s or moves == 0 else round(cpu_s / moves * 1e6, 1),
        moves_per_server_cpu_s=None if not cpu_s else round(moves / cpu_s),
        boardgame_io=_package_version("boardgame.io"),
        node=subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip(),
    )
    return result


def _parse_driver_output(out: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        raise PeerError("the peer's driver printed no result")
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        raise PeerError(f"the peer's driver printed no JSON result: {lines[-1][:200]!r}") from e
    if not isinstance(result, dict) or any(k not in result for k in DRIVER_FIELDS):
        raise PeerError(f"the peer's driver result lacks fields {DRIVER_FIELDS}: {lines[-1][:200]!r}")
    return result


def _package_version(name: str) -> str | None:
    try:
        data = json.loads((PEER_DIR / "node_modules" / name / "package.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    version = data.get("version")
    return version if isinstance(version, str) else None


# ---------------------------------------------------------------------------------------------- main
def describe(r: dict[str, Any]) -> str:
    pinned = "unpinned" if r["server_cpu"] is None else f"pinned to core {r['server_cpu']}"
    cpu = (
        ""
        if r["server_cpu_us_per_move"] is None
        else f", server CPU {r['server_cpu_us_per_move']:,.0f} µs/move (~{r['moves_per_server_cpu_s']:,} moves "
        "per server CPU-second)"
    )
    core = "" if r["server_cpu_s"] is None else f" ({r['server_cpu_s'] / r['seconds']:.0%} of a core)"
    if r.get("driver_cpu_s") is not None:
        core += f"; the driver used {r['driver_cpu_s'] / r['seconds']:.0%} of a core"
    return (
        f"boardgame.io {r['boardgame_io']} (node {r['node']}), {r['storage']} storage, server {pinned}: "
        f"{r['moves_per_s']:,.0f} moves/s over {r['seconds']:.1f} s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms; "
        f"{r['matches']} matches × {r['players']} players{cpu}{core}; stalled {r['stalled']}, "
        f"disconnects {r['disconnects']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peer_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="the measured window (default 20)")
    parser.add_argument("--matches", type=int, default=50)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--storage", choices=STORAGES, default="memory")
    parser.add_argument("--cpu", type=int, default=0, help="the server's core (default 0); -1: unpinned")
    parser.add_argument("--warmup", type=float, default=None, help="seconds before the window (default ≤ 3)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line as well")
    args = parser.parse_args(argv)
    try:
        result = run_peer(
            args.seconds, args.matches, args.players, args.storage,
            cpu=None if args.cpu < 0 else args.cpu, warmup=args.warmup,
        )  # fmt: skip
    except PeerError as e:
        print(f"peer bench: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("peer bench: interrupted (its node processes are stopped)", file=sys.stderr)
        return 130
    print(describe(result))
    print("per second: " + " ".join(str(n) for n in result.get("per_second", [])))
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
