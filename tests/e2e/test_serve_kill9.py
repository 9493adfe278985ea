"""Nothing ``archipelago serve`` started outlives it, even by SIGKILL (issue 19): before, Ray's
``DashboardAgent`` and ``RuntimeEnvAgent`` (children of the raylet) ran on for about a minute."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from services.cluster import marked_processes
from tests.e2e.serving import serving, wait_healthy

pytestmark = pytest.mark.e2e

DEADLINE_S = 10.0


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def test_nothing_serve_started_outlives_its_sigkill(tmp_path: Path) -> None:
    with serving(tmp_path) as (address, _url, proc):
        wait_healthy(address, proc)
        serve = psutil.Process(proc.pid)
        started = {p.pid: p for p in serve.children(recursive=True)}
        started.update({pid: psutil.Process(pid) for pid in marked_processes(tmp_path / "var")})
        names = {p.name() for p in started.values()}
        assert {"redis-server", "raylet", "ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names, names
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + DEADLINE_S
        while (left := _alive(list(started.values()))) and time.monotonic() < deadline:
            time.sleep(0.1)  # (polling the process table: no event tells us a stranger's process ended)
        log = tmp_path / "var" / "reaper.log"
        assert not left, (f"alive {DEADLINE_S:g} s after serve's SIGKILL: {[(p.pid, p.name()) for p in left]}; "
                          f"reaper: {log.read_text() if log.exists() else 'no log'}")
