"""The capacity bench's ``spectate`` phase (issue 26) at a smoke size, against the suite's served cluster:
its load process (``bench.loadgen --mode spectate``) holds spectator streams on public games, the
gateway's ``archipelago_spectator_streams`` gauge agrees, every stream's seqs run without a gap, the
fan-out to spectators is measured on every stream, the summary states the spectator streams per
gateway, and the streams are gone from the gateway once the phase is over."""

from __future__ import annotations

import asyncio
import shutil
import time
from typing import Any

import pytest

from bench.capacity import PHASES, RUN_ORDER, Bench, Settings, summary_rows
from bench.capacity import Cluster as BenchCluster

pytestmark = pytest.mark.e2e

SPECTATORS, PER_GAME = 30, 10


async def test_spectate_phase_holds_spectators_and_measures_their_fanout(cluster: Any) -> None:
    assert "spectate" in PHASES and "spectate" in RUN_ORDER
    before = set(cluster.api.presence.spectators)
    target = BenchCluster(cluster.address, cluster.http_url.removeprefix("http://"), cluster.redis_url)
    bench = Bench(Settings(spectators=SPECTATORS, spectators_per_game=PER_GAME, fanout_seconds=2.0,
                           fanout_rate=20.0, jobs=4), target)
    try:
        await bench.phase_spectate()
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)
    r = bench.results["spectate"]
    assert (r["streams_held"], r["streams_held_at_end"], r["games"], r["per_game"]) == (SPECTATORS, SPECTATORS, 3,
                                                                                         PER_GAME), r
    assert (r["seq_gaps"], r["stream_errors"], r["setup_failed"]) == (0, {}, 0), r
    assert r["spectator_gauge_holding"] - (r["spectator_gauge_before"] or 0.0) == SPECTATORS, r
    assert r["redis_gateway_connections_holding"] is not None
    every, last = r["fanout"], r["fanout_last"]
    assert last["count"] > 0 and r["fanout_missing"] == 0, r
    assert every["count"] == PER_GAME * last["count"], r  # each submission seen on every stream of its game
    assert 0 < every["p50_ms"] <= every["p99_ms"] <= last["max_ms"] < 10_000, r
    assert r["submissions"]["errors"] == {}, r
    rows = {row[0]: row for row in summary_rows(bench)}
    stated = rows["spectator streams per gateway"]
    assert stated[1].startswith(f"{SPECTATORS} held; fan-out p50 ") and "seq gaps 0" in stated[3], stated
    assert {"gateway RSS per 1,000 spectators", "gateway Redis connections, spectating"} <= set(rows)
    # the load process cancelled its streams at the end: the gateway lets them go
    end = time.monotonic() + 20
    while set(cluster.api.presence.spectators) - before:
        assert time.monotonic() < end, "spectator streams still open on the gateway 20 s after the phase"
        await asyncio.sleep(0.05)
