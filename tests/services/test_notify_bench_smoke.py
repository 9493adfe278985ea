"""The notification benchmark (bench/notify_bench.py) at smoke sizes: a few games on real parts (a
redis-server, a shard core, a sender process, a webhook receiver process); every queued notice
arrives, the figures are there, and the outbox's bound holds (issue 23)."""

from __future__ import annotations

from bench.notify_bench import bench, report

FIGURES = {"p50_ms", "p90_ms", "p99_ms", "max_ms", "per_second"}


async def test_notify_bench_delivers_every_round_opened_notice_and_reports_its_latency() -> None:
    res = await bench(3, players=2, senders=1, workers=4, durable=False, label="smoke")
    assert (res.queued, res.dropped) == (6, 0), "one 'your turn' per player, none dropped"
    assert (res.delivered, res.duplicates, res.wrong) == (6, 0, 0)
    assert len(res.latencies_ms) == 6 and res.sender_counts["sent"] == 6 and res.sender_counts["stale"] == 0
    f = res.figures()
    assert set(f) == FIGURES
    assert 0 < f["p50_ms"] <= f["p90_ms"] <= f["p99_ms"] <= f["max_ms"] < 30_000
    assert f["per_second"] > 0 and res.fire_s > 0 and res.setup_s > 0
    assert res.depth_samples > 0 and res.peak_depth <= res.max_queue and res.final_depth == 0
    text = "\n".join(report(res, "smoke"))
    for words in ("p50", "p99", "deliveries/s", "outbox peak depth", "stayed under max_queue"):
        assert words in text


async def test_notify_bench_a_full_outbox_drops_and_counts_and_delivers_the_rest() -> None:
    # max queue 1: each game's two notices are queued in one script, so the second one always finds the
    # outbox full (its first one is still there): at least one dropped per game
    res = await bench(3, players=2, senders=1, workers=4, max_queue=1, durable=False, label="smoke bound")
    assert res.dropped >= 3 and res.queued + res.dropped == 6
    assert res.delivered == res.queued and res.wrong == 0 and res.duplicates == 0
    assert res.peak_depth <= 1 and res.final_depth == 0
