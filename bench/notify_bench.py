"""Notification latency, from the journaled event to delivery, for many slow games whose rounds open
together, with the outbox bounded (issue 23).

Real parts on one machine:

- a private redis-server (append-only, fsync as ``archipelago serve`` runs it; ``--no-fsync`` turns it off);
- one :class:`~services.shard.ShardCore` in this process holding ``--games`` two-player slow games
  (Salvo by default, ``--game archipelago``; deadline 8 h) — the game actors queue their notices in the
  outbox right after each journaled entry, as in a served shard;
- every player with a webhook, set with :meth:`gateway.notify_api.NotifyService.set` (the
  SetNotifications handler's code), to a plain-HTTP aiohttp receiver in a process of its own
  (``allow_private``: no TLS, loopback);
- ``--senders`` processes, each a gateway's :class:`~gateway.notify_api.NotifyService` with its
  :class:`~services.notify.sender.Sender` (``--workers`` lanes each), delivering from the outbox.

How the rounds open together: while the games are made and started, the shard's clock runs 8 h
behind real time, so round 0's deadline is "now"; the webhooks are set after the start (nothing of
the setup is queued). Then the clock is put to real time: every game's deadline has passed, and one
``fire_due()`` of the shard closes all the rounds (as its timer would), each opening round 1 — one
"your turn" per player. From then on the shard's clock is the wall clock, so each outbox entry's
``at`` (the payload's ``at_unix_ms``: the actor's clock just after the entry was journaled) is real
time; the receiver takes its own wall clock when a POST arrives, and the latency is the difference
(one machine: one clock). The outbox's depth (:meth:`Outbox.depth`: stream entries, retry jobs) is
sampled every 20 ms meanwhile.

Then a variant with a small queue (``ARCHIPELAGO_NOTIFY_MAX_QUEUE=--small-queue``, default 200, on a
fifth of the games): the notices beyond the bound are dropped and counted
(``archipelago_notifications_dropped``), the depth never exceeds the bound, every queued one arrives.

Measured on this 2-core machine (2026-12-02, shared with other test runs: load average 5-9), the default
(10,000 Salvo games, 20,000 deliveries, 1 sender process of 16 workers) takes about 9 minutes, not 3:
setup 245 s (10,000 games made, placed and started, 20,000 webhooks set), the 10,000 rounds closed by
one ``fire_due()`` in 108 s, the 20,000 deliveries done 257 s after the first event (78/s: p50 129 s,
p99 149 s — the backlog of one sender process), outbox peak 16,536 entries; the variant (2,000 games,
bound 200) about 40 s: 724 queued, 3,276 dropped, peak depth 200. ``--games 2000`` runs in ~1.5 min.

    .venv/bin/python -m bench.notify_bench [--games 10000] [--players 2] [--senders 1] [--workers 16]
        [--max-queue 200000] [--small-queue 200] [--game salvo|archipelago] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import multiprocessing
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

SLOW_DEADLINE_S = 8 * 3600
PUBLIC_URL = "http://play.bench"
SAMPLE_EVERY_S = 0.02
SETUP_AT_ONCE = 64
#: a legal placement of Salvo's default fleet (placed by the player: the server's random placement of an
#: absent player costs ~17 ms of engine time, which is not what this bench measures)
SALVO_FLEET = [{"ship": "battleship", "bow": "A1"}, {"ship": "cruiser", "bow": "A3"},
               {"ship": "submarine", "bow": "A5"}, {"ship": "destroyer", "bow": "A7"}]


def _progress(msg: str) -> None:
    sys.stderr.write(f"\r\033[K{msg}")
    sys.stderr.flush()


def _pct(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


# ---------------------------------------------------------------------------------------------- receiver
def _receiver_main(conn: Connection) -> None:
    """The webhook receiver (its own process): records (arrival, at, delivery id, path) per POST; sends
    its count to ``conn`` as it grows (at most every 50 ms), everything it got on ``"report"``."""
    asyncio.run(_receiver(conn))


async def _receiver(conn: Connection) -> None:
    from aiohttp import web

    got: list[tuple[float, int, str, str, str, int]] = []  # arrival ms, at ms, delivery id, path, kind, round
    stop = asyncio.Event()
    report = asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        raw = await request.read()
        arrived = time.time() * 1000.0
        body = json.loads(raw)
        got.append((arrived, int(body["at_unix_ms"]), request.headers.get("Archipelago-Delivery", ""),
                    request.path, str(body["kind"]), int(body["round"])))
        return web.Response(status=204)

    app = web.Application(client_max_size=64 * 1024)
    app.router.add_post("/hook/{game}/{seat}", hook)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    conn.send(("port", port))
    loop = asyncio.get_running_loop()

    def command() -> None:
        try:
            while conn.poll():
                what = conn.recv()
                if what == "report":
                    report.set()
                elif what == "stop":
                    stop.set()
        except (EOFError, OSError):  # the bench is gone
            loop.remove_reader(conn.fileno())
            stop.set()

    loop.add_reader(conn.fileno(), command)
    sent = -1
    while not stop.is_set():
        if len(got) != sent:
            sent = len(got)
            conn.send(("count", sent))
        if report.is_set():
            report.clear()
            conn.send(("got", list(got)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.05)
    with contextlib.suppress(Exception):
        loop.remove_reader(conn.fileno())
    await runner.cleanup()


# ---------------------------------------------------------------------------------------------- senders
def _sender_main(conn: Connection, redis_url: str, prefix: str, workers: int, max_queue: int) -> None:
    """One gateway's delivery workers (its own process) until ``"stop"``; then its counters."""
    asyncio.run(_sender(conn, redis_url, prefix, workers, max_queue))


async def _sender(conn: Connection, redis_url: str, prefix: str, workers: int, max_queue: int) -> None:
    from prometheus_client import REGISTRY

    from gateway.notify_api import NotifyService
    from services.notify.config import NotifyConfig
    from services.store import Store

    store = Store(redis_url, prefix=prefix, client_name="bench-sender")
    config = replace(NotifyConfig(), allow_private=True, workers=workers, max_queue=max_queue,
                     public_url=PUBLIC_URL, smtp_host="")
    svc = NotifyService(store, PUBLIC_URL, config)
    svc.sending = True
    await svc.start()
    conn.send(("ready", os.getpid()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(conn.fileno(), stop.set)
    await stop.wait()
    loop.remove_reader(conn.fileno())
    await svc.stop()
    await store.close()

    def value(name: str, **labels: str) -> float:
        return float(REGISTRY.get_sample_value(name, labels) or 0.0)

    conn.send(("counts", {"sent": value("archipelago_notifications_sent_total", channel="webhook"),
                          "failed": sum(value("archipelago_notifications_failed_total", channel="webhook", outcome=o)
                                        for o in ("retry", "failed", "gone")),
                          "stale": sum(value("archipelago_notifications_stale_total", reason=r)
                                       for r in ("age", "deadline_passed"))}))


# ---------------------------------------------------------------------------------------------- the bench
class ShiftedClock:
    """The shard's clock: the wall clock, ``behind_ms`` behind (0: real time)."""

    def __init__(self, behind_ms: int) -> None:
        self.behind_ms = behind_ms

    def __call__(self) -> int:
        return int(time.time() * 1000) - self.behind_ms


@dataclass
class Result:
    games: int
    players: int
    senders: int
    workers: int
    max_queue: int
    setup_s: float = 0.0
    fire_s: float = 0.0  # fire_due(): every round closed, every notice queued
    queued: int = 0
    dropped: int = 0
    delivered: int = 0  # distinct deliveries received
    duplicates: int = 0
    wrong: int = 0  # deliveries that were not round 1's "your turn" of one of the players
    latencies_ms: list[float] = field(default_factory=list)  # sorted
    span_s: float = 0.0  # first event .. last arrival
    peak_depth: int = 0
    peak_retries: int = 0
    depth_samples: int = 0
    final_depth: int = 0
    sender_counts: dict[str, float] = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        return self.delivered / self.span_s if self.span_s > 0 else 0.0

    def figures(self) -> dict[str, float]:
        xs = self.latencies_ms
        return {"p50_ms": _pct(xs, 0.50), "p90_ms": _pct(xs, 0.90), "p99_ms": _pct(xs, 0.99),
                "max_ms": xs[-1] if xs else 0.0, "per_second": self.throughput}


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _metric(name: str, **labels: str) -> float:
    """A sample of this process's shard registry (where a game actor counts its notices)."""
    from services.metrics import REGISTRY

    return float(REGISTRY.get_sample_value(name, labels) or 0.0)


def _fsync(redis_url: str, value: str) -> str:
    """Set the redis-server's ``appendfsync``; returns what it was."""
    import redis

    client: Any = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        old = str(client.config_get("appendfsync")["appendfsync"])
        client.config_set("appendfsync", value)
        return old
    finally:
        client.close()


class _Pipe:
    """A child's pipe read on the event loop: the newest message of each kind, and an event per kind."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.last: dict[str, Any] = {}
        self.events: dict[str, asyncio.Event] = {}
        self.on_count: Any = None
        asyncio.get_running_loop().add_reader(conn.fileno(), self._read)

    def _read(self) -> None:
        try:
            while self.conn.poll():
                kind, value = self.conn.recv()
                self.last[kind] = value
                self.event(kind).set()
                if kind == "count" and self.on_count is not None:
                    self.on_count(value)
        except EOFError:  # the child is gone
            asyncio.get_running_loop().remove_reader(self.conn.fileno())
            self.event("eof").set()

    def event(self, kind: str) -> asyncio.Event:
        return self.events.setdefault(kind, asyncio.Event())

    async def wait(self, kind: str, timeout: float) -> Any:
        ev, eof = self.event(kind), self.event("eof")
        waiters = [asyncio.ensure_future(ev.wait()), asyncio.ensure_future(eof.wait())]
        done, pending = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for w in pending:
            w.cancel()
        if not ev.is_set():
            raise RuntimeError(f"no {kind!r} from the child within {timeout:g} s" if not done else
                               f"the child exited before sending {kind!r}")
        ev.clear()
        return self.last[kind]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.conn.fileno())
        self.conn.close()


async def bench(games: int, players: int = 2, senders: int = 1, workers: int = 16, max_queue: int = 200_000,
                game: str = "salvo", durable: bool = True, label: str = "",
                deliver_timeout_s: float = 0.0) -> Result:
    """One run (see the module docstring): ``games`` games whose rounds open together, delivered by
    ``senders`` processes of ``workers`` lanes, the outbox bounded by ``max_queue``. Waits for the
    deliveries up to ``deliver_timeout_s`` (0: 0.1 s per queued notice, at least 2 minutes); what did
    not arrive by then shows as ``delivered < queued``."""
    from gateway.notify_api import NotifyService
    from services.cluster import start_redis_server
    from services.notify.config import NotifyConfig
    from services.shard import ShardCore
    from services.store import Store

    res = Result(games, players, senders, workers, max_queue)
    quiet = logging.getLogger("services.actor_notify")  # (one "outbox full" line per game: counted instead)
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    tag = f"{label}: " if label else ""
    tmp = Path(tempfile.mkdtemp(prefix="arch-notify-bench-"))
    redis = start_redis_server(tmp / "redis", durable=durable)
    ctx = multiprocessing.get_context("spawn")
    procs: list[Any] = []
    pipes: list[_Pipe] = []
    prefix = f"nb{secrets.token_hex(3)}:"
    core: ShardCore | None = None
    svc: NotifyService | None = None
    try:
        # the receiver and the senders start while the games are made
        here, there = ctx.Pipe()
        receiver = ctx.Process(target=_receiver_main, args=(there,), daemon=True, name="bench-receiver")
        receiver.start()
        procs.append(receiver)
        rpipe = _Pipe(here)
        pipes.append(rpipe)
        spipes = []
        for _ in range(senders):
            here, there = ctx.Pipe()
            p = ctx.Process(target=_sender_main, args=(there, redis.url, prefix, workers, max_queue), daemon=True,
                            name="bench-sender")
            p.start()
            procs.append(p)
            spipes.append(_Pipe(here))
        pipes += spipes

        t_setup = time.perf_counter()
        fsync = _fsync(redis.url, "no") if durable else None  # (the setup is not measured: no fsync while it runs)
        clock = ShiftedClock(SLOW_DEADLINE_S * 1000)
        with _env("ARCHIPELAGO_NOTIFY_MAX_QUEUE", str(max_queue)):
            core = ShardCore("bench-shard", Store(redis.url, prefix=prefix, client_name="bench-shard"), now_ms=clock)
            assert core.store.outbox.max_queue == max_queue  # (read from the environment on first use)
        config = replace(NotifyConfig(), allow_private=True, public_url=PUBLIC_URL, smtp_host="", max_queue=max_queue)
        svc = NotifyService(Store(redis.url, prefix=prefix, client_name="bench-settings"), PUBLIC_URL, config)
        await svc.sender.prepare()  # (this process only answers the settings: it sends nothing)
        port = await rpipe.wait("port", 60)
        gate = asyncio.Semaphore(SETUP_AT_ONCE)
        made = 0
        spec = {"kind": game, "config": {"players": players}, "nickname": "p0", "secret_hash": "h0", "public": False,
                "deadline_s": float(SLOW_DEADLINE_S), "code": ""}
        ids = [f"g{i:05d}" for i in range(games)]

        async def make(game_id: str) -> None:
            nonlocal made
            assert core is not None and svc is not None
            async with gate:
                await core.create_game(game_id, spec)
                for seat in range(1, players):
                    await core.join(game_id, f"p{seat}", f"h{seat}")
                await core.start_game(game_id, 0, False)
                if game == "salvo":  # every player places its fleet; the round closes at its deadline
                    version = (await core.view(game_id, 0))["version"]
                    for seat in range(players):
                        await core.submit(game_id, seat, {"placement": SALVO_FLEET}, version, f"place{seat}", False)
                for seat in range(players):
                    answer = await svc.set(game_id, seat, game, "running",
                                           {"webhook": {"url": f"http://127.0.0.1:{port}/hook/{game_id}/{seat}"}},
                                           agent=False)
                    assert answer["webhook"]["state"] == "active"
            made += 1
            if made % 100 == 0 or made == games:
                _progress(f"{tag}making games {made}/{games}")

        await asyncio.gather(*(make(g) for g in ids))
        await core.flush()
        for sp in spipes:
            await sp.wait("ready", 60)
        if fsync is not None:
            _fsync(redis.url, fsync)  # as `archipelago serve` runs it, from here on
        res.setup_s = time.perf_counter() - t_setup
        expected = games * players

        # ---- the rounds open together
        peak = [0, 0, 0]
        sampling = True

        async def sample() -> None:
            assert core is not None
            while sampling:
                entries, retries = await core.store.outbox.depth()
                peak[0], peak[1], peak[2] = max(peak[0], entries), max(peak[1], retries), peak[2] + 1
                await asyncio.sleep(SAMPLE_EVERY_S)

        target = [expected]
        rpipe.on_count = lambda n: _progress(f"{tag}deliveries received {n}/{target[0]}  outbox peak {peak[0]}")
        queued0 = _metric("archipelago_notifications_queued_total", kind="your_turn")
        dropped0 = _metric("archipelago_notifications_dropped_total")
        sampler = asyncio.get_running_loop().create_task(sample())
        clock.behind_ms = 0  # real time: every round's deadline has passed
        t_fire = time.perf_counter()
        closed = await core.fire_due()
        res.fire_s = time.perf_counter() - t_fire
        if closed != games:
            raise RuntimeError(f"{closed} rounds closed of {games}")
        res.queued = int(_metric("archipelago_notifications_queued_total", kind="your_turn") - queued0)
        res.dropped = int(_metric("archipelago_notifications_dropped_total") - dropped0)
        target[0] = res.queued
        if res.queued + res.dropped != expected:
            raise RuntimeError(f"{res.queued} queued + {res.dropped} dropped != {expected} players")

        # ---- every queued notice delivered
        give_up = time.monotonic() + (deliver_timeout_s or max(120.0, 0.1 * res.queued))
        while int(rpipe.last.get("count", 0)) < res.queued and time.monotonic() < give_up:
            with contextlib.suppress(RuntimeError):
                await rpipe.wait("count", max(0.01, give_up - time.monotonic()))
        # (the last entries leave the stream once their sender recorded the channel's state)
        while sum(await core.store.outbox.depth()) and time.monotonic() < give_up:
            await asyncio.sleep(SAMPLE_EVERY_S)
        sampling = False
        await sampler
        sys.stderr.write("\r\033[K")
        res.peak_depth, res.peak_retries, res.depth_samples = peak
        res.final_depth = sum(await core.store.outbox.depth())
        here_conn = rpipe.conn
        here_conn.send("report")
        got: list[tuple[float, int, str, str, str, int]] = await rpipe.wait("got", 60)
        seen: set[str] = set()
        firsts: list[tuple[float, int]] = []
        for arrived, at, delivery_id, path, kind, round_ in got:
            if delivery_id in seen:
                res.duplicates += 1
                continue
            seen.add(delivery_id)
            _, _, game_id, seat = path.split("/")
            if kind != "your_turn" or round_ != 1 or game_id not in ids or not 0 <= int(seat) < players:
                res.wrong += 1
            firsts.append((arrived, at))
        res.delivered = len(firsts)
        res.latencies_ms = sorted(arrived - at for arrived, at in firsts)
        if firsts:
            res.span_s = (max(a for a, _ in firsts) - min(at for _, at in firsts)) / 1000.0
        for sp in spipes:
            sp.conn.send("stop")
        counts: dict[str, float] = {}
        for sp in spipes:
            for k, v in (await sp.wait("counts", 60)).items():
                counts[k] = counts.get(k, 0.0) + float(v)
        res.sender_counts = counts
        return res
    finally:
        for pipe in pipes:
            with contextlib.suppress(Exception):
                pipe.conn.send("stop")
        for pipe in pipes:
            pipe.close()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join()
        if svc is not None:
            await svc.stop()
            await svc.store.close()
        if core is not None:
            await core.store.close()
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        quiet.setLevel(level)


def report(res: Result, title: str) -> list[str]:
    f = res.figures()
    bound = "stayed under" if res.peak_depth <= res.max_queue else "EXCEEDED"
    lines = [
        f"{title}: {res.games} games x {res.players} players, {res.senders} sender process"
        f"{'es' if res.senders != 1 else ''} x {res.workers} workers, max queue {res.max_queue}",
        f"  setup {res.setup_s:.1f} s; the rounds closed (fire_due) in {res.fire_s:.2f} s; "
        f"{res.queued} notices queued, {res.dropped} dropped (outbox full)",
        f"  delivered {res.delivered}/{res.queued} (duplicates {res.duplicates}, wrong {res.wrong}) "
        f"in {res.span_s:.2f} s = {f['per_second']:.0f} deliveries/s",
        f"  latency event -> receiver: p50 {f['p50_ms']:.0f} ms, p90 {f['p90_ms']:.0f} ms, "
        f"p99 {f['p99_ms']:.0f} ms, max {f['max_ms']:.0f} ms",
        f"  outbox peak depth {res.peak_depth} ({bound} max_queue {res.max_queue}; {res.depth_samples} samples), "
        f"retry jobs peak {res.peak_retries}, left at the end {res.final_depth}",
        f"  senders: sent {res.sender_counts.get('sent', 0):.0f}, failed {res.sender_counts.get('failed', 0):.0f}, "
        f"stale {res.sender_counts.get('stale', 0):.0f}",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--senders", type=int, default=1, help="sender processes (gateways' delivery workers)")
    ap.add_argument("--workers", type=int, default=16, help="lanes per sender process (ARCHIPELAGO_NOTIFY_WORKERS)")
    ap.add_argument("--max-queue", type=int, default=200_000, help="the main run's outbox bound")
    ap.add_argument("--small-queue", type=int, default=200, help="the variant's outbox bound (0: no variant)")
    ap.add_argument("--small-games", type=int, default=0, help="the variant's games (default: a fifth of --games)")
    ap.add_argument("--game", choices=("salvo", "archipelago"), default="salvo")
    ap.add_argument("--no-fsync", action="store_true", help="redis-server without its append-only file")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    a = ap.parse_args(argv)
    if a.quick:
        a.games, a.small_games, a.small_queue = min(a.games, 20), min(a.small_games or 10, 10), min(a.small_queue, 5)
    small_games = a.small_games or max(1, a.games // 5)
    print(f"notify bench: {a.game}, deadline {SLOW_DEADLINE_S // 3600} h, webhooks over loopback HTTP, "
          f"redis {'without fsync' if a.no_fsync else 'appendfsync always'}, {os.cpu_count()} cores, "
          f"python {sys.version.split()[0]}")
    t0 = time.perf_counter()
    res = asyncio.run(bench(a.games, a.players, a.senders, a.workers, a.max_queue, a.game, not a.no_fsync,
                            label="main"))
    print("\n".join(report(res, "rounds open together")), flush=True)
    ok = res.delivered == res.queued and res.wrong == 0 and res.peak_depth <= a.max_queue
    if a.small_queue:
        small = asyncio.run(bench(small_games, a.players, a.senders, a.workers, a.small_queue, a.game,
                                  not a.no_fsync, label="small queue"))
        print("\n".join(report(small, "bounded: ARCHIPELAGO_NOTIFY_MAX_QUEUE small")), flush=True)
        ok = ok and small.delivered == small.queued and small.peak_depth <= a.small_queue and small.wrong == 0
    print(f"total {time.perf_counter() - t0:.0f} s; {'all queued notices delivered, bounds held' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
