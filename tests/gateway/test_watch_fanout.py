"""The Watch fan-out latency (archipelago_watch_fanout_seconds{door}): from a journal entry's append (the
time its shard stamps on the pub/sub notice, services/store.py) to a Watch stream having written the
update it made (gateway/watch.py, gateway/pubsub.py Mailbox) — through the session cluster's real shards,
Redis pub/sub and doors: a player joining moves the histogram of the door the host watches on by one
plausible observation (above 0, under 2.5 s)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from gateway.metrics import WATCH_DOORS, fanned_out
from gateway.pubsub import MAX_APPENDS, Mailbox
from services.store import NOTICE_AT
from tests.conftest import Cluster

pytestmark = pytest.mark.e2e

NAME = "archipelago_watch_fanout_seconds"
PLAUSIBLE = "2.5"  # a bucket bound (seconds): on one machine the fan-out takes milliseconds


def figures(door: str) -> tuple[float, float, float]:
    """(count, sum, observations at most PLAUSIBLE seconds) of the door's histogram."""
    def sample(suffix: str, extra: dict[str, str] | None = None) -> float:
        return REGISTRY.get_sample_value(NAME + suffix, {"door": door, **(extra or {})}) or 0.0
    return sample("_count"), sample("_sum"), sample("_bucket", {"le": PLAUSIBLE})


async def grown(door: str, before: tuple[float, float, float], timeout_s: float = 20.0) -> tuple[float, float, float]:
    """The door's figures once its count grew past ``before``'s (the door writes the update, then
    observes: its client may read the update a moment before)."""
    end = time.monotonic() + timeout_s
    while (now := figures(door))[0] <= before[0]:
        assert time.monotonic() < end, f"no {door} fan-out observed within {timeout_s:g} s"
        await asyncio.sleep(0.01)
    return now


def check(door: str, before: tuple[float, float, float], after: tuple[float, float, float]) -> None:
    count, total, plausible = (a - b for a, b in zip(after, before, strict=True))
    assert count >= 1
    assert plausible == count, f"every new {door} observation is under {PLAUSIBLE} s: {total / count:.3f} s mean"
    assert total > 0, "the fan-out took some time (the append's stamp is in microseconds)"


async def next_update(stream: AsyncGenerator[Any, None], kind: str, timeout_s: float = 30.0) -> Any:
    async with asyncio.timeout(timeout_s):
        async for u in stream:
            if (u["kind"] if isinstance(u, dict) else u.kind) == kind:
                return u
    raise AssertionError(f"the stream ended before a {kind!r} update")


async def test_a_join_moves_the_fanout_histogram_of_the_door_the_host_watches_on(cluster: Cluster, door: str) -> None:
    label = {"web": "http"}.get(door, door)
    host = cluster.client(door)
    guest = cluster.client(door)
    try:
        created = await host.create("salvo", seats=2, nickname="host")
        async with contextlib.aclosing(host.watch(created.game_id)) as stream:
            await next_update(stream, "joined")  # the host's own seat: the stream is open and read
            before = figures(label)
            await guest.join(created.code, "guest")
            await next_update(stream, "joined")  # the guest's (the web client parses it strictly: no
            check(label, before, await grown(label, before))  # unknown field such as the append's time)
    finally:
        await guest.close()
        await host.close()


async def test_an_agents_wait_that_stops_at_the_update_is_measured_on_the_mcp_door(cluster: Cluster) -> None:
    """The MCP door's waits read the player's stream inside the gateway and stop at the update they
    wait for: taking it is its sending (the stream is closed at it, never resumed)."""
    host = cluster.client("grpc")
    guest = cluster.client("grpc")
    try:
        created = await host.create("salvo", seats=2, nickname="host")
        stream = await cluster.api.watch(created.secret, created.game_id)  # (no door set: an MCP tool's)
        try:
            await next_update(stream, "joined")
            before = figures("mcp")
            await guest.join(created.code, "guest")
            await next_update(stream, "joined")
            check("mcp", before, figures("mcp"))  # at once: observed before the update was handed over
        finally:
            await stream.aclose()
    finally:
        await guest.close()
        await host.close()


def test_a_mailbox_keeps_the_append_times_until_sent_bounded_and_ignores_notices_without_one() -> None:
    box = Mailbox()
    box.put({"version": 3, NOTICE_AT: 1000.5})
    box.put({"version": 4})  # (a shard of an older release: no time, not measured)
    box.put({"version": 5, NOTICE_AT: 1002})
    box.put({"presence": 1, "connected": True})
    assert box.version == 5
    assert box.sent(4) == [1000.5] and box.sent(4) == [], "each notice measured once"
    assert box.sent(9) == [1002.0]
    for v in range(1, MAX_APPENDS + 10):
        box.put({"version": v, NOTICE_AT: float(v)})
    assert len(box.appended) == MAX_APPENDS, "bounded: a stream that never sends keeps the newest only"
    assert box.sent(10**6)[0] == 10.0


def test_fanned_out_clamps_a_clock_skew_at_zero_and_keeps_the_door_label_bounded() -> None:
    skewed = figures("grpc")
    fanned_out("grpc", [2000.0], now_ms=1000.0)  # appended "after" it was sent: the shard's clock ahead
    count, total, _ = (a - b for a, b in zip(figures("grpc"), skewed, strict=True))
    assert (count, total) == (1, 0)
    fanned_out("made-up", [1.0], now_ms=2.0)
    doors = {s.labels["door"] for m in REGISTRY.collect() if m.name == NAME for s in m.samples}
    assert doors == set(WATCH_DOORS)
