"""Notifications under chaos (issue 23): Salvo games with deadlines played by bots while the gateway is
killed (SIGKILL) and restarted and a shard is killed (Ray restarts it); every player's webhook, a real
HTTPS receiver, must get exactly one "your turn" per round and exactly one deadline warning per round
it had not played by the warning's time, in order, and nothing twice.

In each game seat 0 plays every round at once; seat 1 keeps its Watch stream open and never plays (the
autopilot plays it at each deadline), so each round waits for its deadline and seat 1 is warned
``WARN_S`` before it. The gateway and shard are separate processes as in cluster mode (the parts of
tests/chaos/test_chaos.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from archipelago.v1 import notify_pb2
from client.grpc_client import Client
from services.cluster import RedisProcess, start_redis_server, wait_for_redis
from services.store import Store
from tests.chaos.bots import CHANNEL_OPTIONS, Record, follow, play
from tests.chaos.test_chaos import NAMESPACE, Gateway
from tests.notify.receivers import WebhookDelivery, WebhookReceiver

pytestmark = pytest.mark.e2e

GAMES = 3
DEADLINE_S = 9.0
WARN_S = 6.0  # the warning comes 3 s into a round; a gateway down for < 6 s still delivers it in time
ROUNDS = 5  # rounds 0 .. 4 closed and checked
SLACK_MS = 700  # a submission or close this near the warning time may fall on either side of it


@pytest.fixture
def parts(ray_local: None, tmp_path: Path) -> Iterator[tuple[RedisProcess, Gateway, WebhookReceiver]]:
    import ray

    redis = start_redis_server(tmp_path / "redis", durable=True)
    wait_for_redis(redis.url)
    with WebhookReceiver() as hooks:
        gateway = Gateway(redis.url, ray.get_runtime_context().gcs_address, tmp_path)
        gateway.env.update(hooks.env(), ARCHIPELAGO_NOTIFY_WARN_FAST_S=str(WARN_S),
                           ARCHIPELAGO_NOTIFY_FAST_FROM_S=str(DEADLINE_S - 1), ARCHIPELAGO_NOTIFY_CLAIM_S="2",
                           ARCHIPELAGO_NOTIFY_BACKOFF_S="0.2", ARCHIPELAGO_PRESENCE_GRACE_S="30")
        try:
            yield redis, gateway, hooks
        finally:
            gateway.stop()
            for i in range(2):
                with contextlib.suppress(Exception):
                    ray.kill(ray.get_actor(f"shard-{i}", namespace=NAMESPACE), no_restart=True)
            redis.stop()


async def games_with_webhooks(address: str, hooks: WebhookReceiver) -> list[tuple[str, int, str]]:
    lobby = Client(address, channel=grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS))
    seats: list[tuple[str, int, str]] = []
    try:
        for _ in range(GAMES):
            host = Client(address, channel=lobby.channel)
            made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=DEADLINE_S)
            joined = await lobby.join(made.code, "guest")
            for seat, secret in ((0, made.secret), (1, joined.secret)):
                name = f"{made.game_id}-{seat}"
                req = notify_pb2.SetNotificationsRequest(game_id=made.game_id, idempotency_key=f"n{seat}",
                                                         webhook=notify_pb2.WebhookSetting(url=hooks.url(name)))
                got = await Client(address, secret, lobby.channel).call("Game", "SetNotifications", req,
                                                                        notify_pb2.NotificationSettings)
                hooks.set_secret(name, got.webhook_signing_secret)
            await host.start(made.game_id)
            seats += [(made.game_id, 0, made.secret), (made.game_id, 1, joined.secret)]
    finally:
        await lobby.close()
    return seats


async def rounds_reached(store: Store, game_ids: list[str]) -> int:
    """The least number of rounds closed among the games (from their journals)."""
    closed = [sum(1 for e in await store.journal_read(g) if e["op"] == "close") for g in game_ids]
    return min(closed)


def expected_warnings(journal: list[dict[str, Any]], seat: int, chaos: list[tuple[float, float]],
                      ) -> tuple[set[int], set[int]]:
    """(rounds that must have exactly one warning, rounds that may have at most one) for ``seat``, from
    the journal: a round open at its warning time whose seat had not submitted by then must warn; one
    whose warning time falls near a submission, a close or a chaos window may go either way."""
    must, may = set(), set()
    opened, round_ = 0, 0
    submitted: int | None = None
    for e in journal:
        if e["op"] == "start":
            opened, round_, submitted = int(e["at"]), 0, None
        elif e["op"] == "submit" and int(e["seat"]) == seat and not e["draft"] and submitted is None:
            submitted = int(e["at"])
        elif e["op"] == "close":
            warn_at = opened + int((DEADLINE_S - WARN_S) * 1000)
            closed = int(e["at"])
            near = any(abs(t - warn_at) < SLACK_MS for t in (closed, submitted) if t is not None)
            in_chaos = any(a - SLACK_MS <= warn_at / 1000 <= b + SLACK_MS for a, b in chaos)
            open_then = closed > warn_at and (submitted is None or submitted > warn_at)
            if near or in_chaos:
                may.add(round_)
            elif open_then:
                must.add(round_)
            opened, round_, submitted = closed, round_ + 1, None
    return must, may


async def test_notify_chaos_one_round_opened_and_one_warning_per_round_across_gateway_and_shard_kills(
        parts: tuple[RedisProcess, Gateway, WebhookReceiver]) -> None:
    import ray

    redis, gateway, hooks = parts
    gateway.start()
    await gateway.health(health_pb2.HealthCheckResponse.SERVING)
    seats = await games_with_webhooks(gateway.address, hooks)
    game_ids = sorted({g for g, _, _ in seats})
    record = Record()
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task[Any]] = []
    for gid, seat, secret in seats:
        if seat == 0:
            tasks.append(loop.create_task(play(gateway.address, secret, gid, seat, record)))
        else:  # connected, never playing
            client = Client(gateway.address, secret, grpc.aio.insecure_channel(gateway.address,
                                                                               options=CHANNEL_OPTIONS))
            tasks.append(loop.create_task(follow(client, gid, seat, asyncio.Event(), record)))
    store = Store(redis.url, "arch:")
    chaos: list[tuple[float, float]] = []

    async def until_round(n: int) -> None:
        while await rounds_reached(store, game_ids) < n:
            assert not all(t.done() for t in tasks), "the bots stopped"
            await asyncio.sleep(0.2)  # polling the journals' progress

    try:
        async with asyncio.timeout(300):
            await until_round(1)
            began = time.time()
            gateway.kill()
            gateway.start()
            await gateway.health(health_pb2.HealthCheckResponse.SERVING)
            chaos.append((began, time.time()))
            await until_round(3)
            began = time.time()
            ray.kill(ray.get_actor("shard-0", namespace=NAMESPACE), no_restart=False)  # Ray restarts it
            await until_round(4)  # (the games on it go on once it is back)
            chaos.append((began, time.time()))
            await until_round(ROUNDS + 1)
            journals = {g: await store.journal_read(g) for g in game_ids}

            async def drained() -> None:
                stream, retries = store.key("notify", "outbox"), store.key("notify", "retry")
                while await store.redis.xlen(stream) or await store.redis.zcard(retries):
                    await asyncio.sleep(0.1)
            await drained()
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
        await store.close()

    problems = []
    for gid in game_ids:
        for seat in (0, 1):
            got: list[WebhookDelivery] = [d for d in hooks.received.items() if d.name == f"{gid}-{seat}"]
            assert all(d.signature_ok for d in got), "every delivery signed with the player's secret"
            ids = [d.delivery_id for d in got]
            if len(set(ids)) != len(ids):
                problems.append(f"{gid}/{seat}: a delivery twice {ids}")
            kinds = [(d.body["kind"], d.body["round"]) for d in got]
            turns = [r for k, r in kinds if k == "your_turn"]
            if turns[:ROUNDS] != list(range(ROUNDS)):
                problems.append(f"{gid}/{seat}: your_turn rounds {turns}")
            if [k for k, _ in kinds].count("game_started") != 1 or kinds[0] != ("game_started", 0):
                problems.append(f"{gid}/{seat}: the start {kinds[:2]}")
            warned = [r for k, r in kinds if k == "deadline"]
            must, may = expected_warnings(journals[gid], seat, chaos)
            for r in range(ROUNDS):
                n = warned.count(r)
                if (r in must and n != 1) or (r not in must and r not in may and n != 0) or n > 1:
                    problems.append(f"{gid}/{seat}: round {r} warned {n}× (must {sorted(must)}, may {sorted(may)})")
            for i, (k, r) in enumerate(kinds):  # in order: round r's turn, then its warning, then round r + 1
                if k == "deadline" and ("your_turn", r) not in kinds[:i]:
                    problems.append(f"{gid}/{seat}: warning of round {r} before its turn")
                if k == "your_turn" and any(kk == "deadline" and rr > r for kk, rr in kinds[:i]):
                    problems.append(f"{gid}/{seat}: round {r} opened after a later warning")
    assert problems == [], (problems, chaos, gateway.output()[-2000:])
    seat1 = [d for d in hooks.received.items() if d.name.endswith("-1") and d.body["kind"] == "deadline"]
    assert len(seat1) >= GAMES * (ROUNDS - 2), "the absent-minded seat was warned round after round"
