"""bench/peer_bench.py: the boardgame.io peer of the capacity bench (issue 24) — a short real run (node
server + driver of real boardgame.io clients over socket.io), and no node process left behind, after a
run, a failing driver, or a KeyboardInterrupt.

Needs node and npm; the first run installs bench/peer's packages from the npm registry (a failure to do
so fails these tests, with npm's message)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import bench.peer_bench as peer


def peer_processes() -> set[int]:
    """Pids of live processes running the peer's server.js or driver.js (of this tree)."""
    scripts = (str(peer.SERVER_JS).encode(), str(peer.DRIVER_JS).encode())
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if any(script in cmdline.split(b"\0") for script in scripts):
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def installed() -> None:
    try:
        peer.ensure_installed()
    except peer.PeerError as e:
        pytest.fail(f"the boardgame.io peer cannot be installed: {e}")


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every process run_peer starts, recorded."""
    procs: list[subprocess.Popen[bytes]] = []
    spawn = peer._spawn

    def recording(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        proc = spawn(*args, **kwargs)
        procs.append(proc)
        return proc

    monkeypatch.setattr(peer, "_spawn", recording)
    return procs


def assert_none_left(procs: list[subprocess.Popen[bytes]], before: set[int]) -> None:
    assert procs, "run_peer started no process"
    assert [p.pid for p in procs if alive(p.pid)] == []
    assert peer_processes() - before == set()


def test_short_run_measures_moves_and_leaves_no_node_process(
    installed: None, spawned: list[subprocess.Popen[bytes]]
) -> None:
    before = peer_processes()
    result = peer.run_peer(seconds=3, matches=4, players=2, live=False)

    for key in (*peer.DRIVER_FIELDS, "per_second", "stalled", "storage", "server_cpu_s", "boardgame_io"):
        assert key in result, key
    assert result["moves_per_s"] > 0
    assert result["moves"] > 0
    assert result["p50_ms"] is not None and 0 < result["p50_ms"] <= result["p99_ms"]
    assert (result["matches"], result["players"], result["storage"]) == (4, 2, "memory")
    assert 2.9 <= result["seconds"] < 6
    assert result["stalled"] == 0
    assert result["boardgame_io"] == "0.50.2"
    assert len(spawned) == 2  # the server and the driver
    assert_none_left(spawned, before)


def test_a_failing_driver_raises_and_stops_the_server(
    installed: None, spawned: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = peer_processes()
    monkeypatch.setattr(peer, "_driver_command", lambda node, *a: [node, str(peer.DRIVER_JS), "--no-such-flag"])
    with pytest.raises(peer.PeerError, match="driver exited 1"):
        peer.run_peer(seconds=1, matches=1, players=2, live=False)
    assert len(spawned) == 2
    assert_none_left(spawned, before)


def test_keyboard_interrupt_stops_the_server(
    installed: None, spawned: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = peer_processes()
    wait_port = peer._wait_port

    def interrupted(*args: Any) -> None:
        wait_port(*args)  # the server is up and listening ...
        raise KeyboardInterrupt  # ... when Ctrl-C comes

    monkeypatch.setattr(peer, "_wait_port", interrupted)
    with pytest.raises(KeyboardInterrupt):
        peer.run_peer(seconds=1, matches=1, players=2, storage="flatfile", live=False)
    assert len(spawned) == 1
    assert_none_left(spawned, before)
