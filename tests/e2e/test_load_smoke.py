"""A smoke load test (issue 12): 200 simulated users (locust, ``loadtest/locustfile.py``: gRPC and
JSON + WebSocket players, a share of them entering games with "Play now", and spectators, issue 26)
play and watch for 60 s (``ARCHIPELAGO_LOAD_SMOKE_S``) against `archipelago serve`, with zero
failures (a spectator's seq gap is one); locust exits on its own at its run time, and the two doors'
rows of one rpc agree (issue 24: the gRPC players measured their own client's queue, and locust could
stay idle after its run time)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtest.compare import pairs, table
from tests.e2e.serving import serving, wait_healthy

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
LOCUST = str(Path(sys.executable).with_name("locust"))
USERS = 200
#: a quick-play lobby not full by then starts with autopilot seats (its opener allows them): the
#: last quick player of a run is not left waiting the default 300 s
QUICK_WAIT_S = 5
SECONDS = int(os.environ.get("ARCHIPELAGO_LOAD_SMOKE_S", "60"))  # a longer run: set it higher
#: locust exits this long after its run time at most: start-up, --stop-timeout (5 s), a killed
#: player's bounded on_stop (5 s), its report
EXIT_WITHIN_S = 30
#: the gRPC row of an rpc may be this much slower than its JSON row (medians; the same server, the
#: same run; rows of 100 calls or more on both doors: a median of a few dozen swings): measured
#: 0.9–1.4× for GetView and SubmitOrders on a loaded 2-core machine, 2.6–8× before issue 24
RATIO, SLACK_MS = 3.0, 50.0


def test_200_players_for_a_while_with_no_failure(tmp_path: Path) -> None:
    with serving(tmp_path, {"ARCHIPELAGO_QUICK_WAIT_FAST_S": str(QUICK_WAIT_S)}) as (address, url, proc):
        wait_healthy(address, proc)
        locust = subprocess.Popen([LOCUST, "-f", str(ROOT / "loadtest" / "locustfile.py"), "--headless",
                                   "-u", str(USERS), "-r", "50", "-t", f"{SECONDS}s", "--host", url,
                                   "--grpc-address", address, "--deadline", "20", "--csv", str(tmp_path / "load"),
                                   "--quick-share", "0.3", "--spectator-share", "0.1",
                                   "--only-summary", "--stop-timeout", "5", "--loglevel", "WARNING"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = time.monotonic()
        try:
            out, err = locust.communicate(timeout=SECONDS + EXIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            locust.kill()  # (no SIGTERM to help it: it has to stop by itself)
            out, err = locust.communicate()
            raise AssertionError(f"locust still running {EXIT_WITHIN_S} s after its run time of {SECONDS} s: "
                                 f"{err[-3000:]}") from None
        took = time.monotonic() - started
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
                   ("POST", "Game/SubmitOrders"), ("ws", "Watch update"), ("game", "salvo over"),
                   ("grpc", "QuickPlay"), ("POST", "Community/QuickPlay"), ("POST", "Community/ListLiveGames"),
                   ("POST", "Community/GetSpectatorView"), ("ws", "Spectate update")]:
        assert count.get(needed, 0) > 0, (needed, sorted(count))
    assert count[("game", "salvo over")] >= SECONDS // 3, count  # (games finish all along the run)
    # spectators followed whole games: their seqs checked up to game_over (26 games in a 60 s run seen)
    assert sum(n for (kind, name), n in count.items() if kind == "game" and name.endswith(" spectated to the end")), \
        sorted(count)
    assert SECONDS <= took <= SECONDS + EXIT_WITHIN_S, took
    doors = [p for p in pairs(tmp_path / "load_stats.csv") if min(p.grpc.count, p.json.count) >= 100]
    assert {p.rpc for p in doors} >= {"GetView", "SubmitOrders"}, table(doors)
    slower = [p.rpc for p in doors if p.grpc.median_ms > RATIO * p.json.median_ms + SLACK_MS]
    assert slower == [], f"gRPC rows slower than {RATIO}× the JSON ones + {SLACK_MS} ms:\n{table(doors)}"
