"""A smoke load test (issue 12): 200 simulated players (locust, ``loadtest/locustfile.py``: gRPC and
JSON + WebSocket players) play for 60 s (``ARCHIPELAGO_LOAD_SMOKE_S``) against `archipelago serve`,
with zero failures."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.serving import serving, wait_healthy

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
LOCUST = str(Path(sys.executable).with_name("locust"))
USERS = 200
SECONDS = int(os.environ.get("ARCHIPELAGO_LOAD_SMOKE_S", "60"))  # a longer run: set it higher


def test_200_players_for_a_while_with_no_failure(tmp_path: Path) -> None:
    with serving(tmp_path) as (address, url, proc):
        wait_healthy(address, proc)
        locust = subprocess.Popen([LOCUST, "-f", str(ROOT / "loadtest" / "locustfile.py"), "--headless",
                                   "-u", str(USERS), "-r", "50", "-t", f"{SECONDS}s", "--host", url,
                                   "--grpc-address", address, "--deadline", "20", "--csv", str(tmp_path / "load"),
                                   "--only-summary", "--stop-timeout", "5", "--loglevel", "WARNING"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = locust.communicate(timeout=SECONDS + 25)  # (its users stop within --stop-timeout)
        except subprocess.TimeoutExpired:
            # Known: one run in a few, locust (gevent + sync gRPC) stays idle after its run time instead of
            # exiting; SIGTERM makes it stop its users and write its report as usual (issue 12, open).
            locust.terminate()
            out, err = locust.communicate(timeout=60)
        run = subprocess.CompletedProcess(locust.args, locust.returncode, out, err)
    with open(tmp_path / "load_stats.csv") as f:
        rows = {(r["Type"], r["Name"]): r for r in csv.DictReader(f)}
    failures = {k: r["Failure Count"] for k, r in rows.items() if int(r["Failure Count"])}
    assert failures == {}, (failures, run.stdout[-3000:], run.stderr[-3000:])
    with open(tmp_path / "load_exceptions.csv") as f:
        crashed = list(csv.DictReader(f))  # a player's task that raised (not a refused call: a bug)
    assert crashed == [], crashed[:3]
    assert run.returncode == 0, run.stderr[-3000:]
    count = {k: int(r["Request Count"]) for k, r in rows.items()}
    for needed in [("grpc", "CreateGame"), ("grpc", "JoinGame"), ("grpc", "SubmitOrders"), ("grpc", "Watch update"),
                   ("POST", "Game/SubmitOrders"), ("ws", "Watch update"), ("game", "salvo over")]:
        assert count.get(needed, 0) > 0, (needed, sorted(count))
    assert count[("game", "salvo over")] >= SECONDS // 3, count  # (games finish all along the run)
