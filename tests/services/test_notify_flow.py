"""Notifications end to end inside one process: a game shard (real redis-server, fake clock) queues,
a gateway's NotifyService + Sender deliver to real receivers (HTTPS webhook, Web Push service, SMTP).
The served cluster's version (Ray, gateways, kills) is tests/e2e/test_notify_e2e.py."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import pytest

from engine.errors import Conflict, InvalidOrder, KeyReused, PermissionDenied
from gateway.notify_api import NotifyService
from services.cluster import RedisProcess
from services.notify.config import NotifyConfig
from services.shard import ShardCore
from services.store import Store
from tests.aio import bounded
from tests.fakes import FakeClock
from tests.notify.receivers import PushService, SmtpServer, WebhookReceiver

PAYLOAD_KEYS = {"v", "id", "kind", "game_id", "game", "round", "title", "body", "content", "text", "url",
                "deadline_unix_ms", "at_unix_ms", "language"}


@pytest.fixture
def hooks() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
async def rig(redis_server: RedisProcess,
              hooks: WebhookReceiver) -> AsyncIterator[tuple[ShardCore, FakeClock, NotifyService]]:
    """A shard core and a gateway's notification service on one Redis prefix; deliveries retried fast."""
    clock = FakeClock(int(time.time() * 1000))
    prefix = f"nf{secrets.token_hex(4)}:"
    core = ShardCore("shard-n", Store(redis_server.url, prefix=prefix), now_ms=clock)
    config = replace(NotifyConfig(), ca_file=hooks.ca_file, allow_private=True, backoff_s=0.05, attempts=3,
                     disable_after=4, claim_after_s=2.0, workers=4, smtp_host="", public_url="http://play.test")
    svc = NotifyService(Store(redis_server.url, prefix=prefix), "http://127.0.0.1:1", config)
    await svc.start()
    yield core, clock, svc
    await svc.stop()
    await svc.store.close()
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.store.close()


async def new_salvo(core: ShardCore, game_id: str, deadline_s: float = 120) -> None:
    await core.create_game(game_id, {"kind": "salvo", "config": {"players": 2}, "nickname": "ann",
                                     "secret_hash": "h0", "public": False, "deadline_s": deadline_s, "code": ""})
    await core.join(game_id, "bob", "h1")


async def hook_up(svc: NotifyService, hooks: WebhookReceiver, game_id: str, seat: int, **extra: Any) -> str:
    answer = await svc.set(game_id, seat, "salvo", "lobby", {"webhook": {"url": hooks.url(f"{game_id}-{seat}"),
                                                                         **extra}}, agent=False)
    assert answer["webhook"]["state"] == "active" and answer["webhook_signing_secret"].startswith("whsec_")
    hooks.set_secret(f"{game_id}-{seat}", answer["webhook_signing_secret"])
    return str(answer["webhook_signing_secret"])


async def wait_hooks(hooks: WebhookReceiver, n: int, name: str) -> list[Any]:
    return await asyncio.to_thread(hooks.wait_for, n, 15.0, name)


def kinds_of(deliveries: list[Any]) -> list[tuple[str, int]]:
    return [(d.body["kind"], d.body["round"]) for d in deliveries]


async def test_notify_a_round_game_tells_each_player_the_start_each_round_and_each_deadline_once(
        rig: tuple[ShardCore, FakeClock, NotifyService], hooks: WebhookReceiver) -> None:
    core, clock, svc = rig
    await new_salvo(core, "gs1")
    for seat in (0, 1):
        await hook_up(svc, hooks, "gs1", seat)
    await core.start_game("gs1", 0, False)
    for seat in (0, 1):
        got = await wait_hooks(hooks, 2, f"gs1-{seat}")
        assert kinds_of(got) == [("game_started", 0), ("your_turn", 0)], "the start first, then the first round"
    # seat 0 plays round 1; 15 s before the deadline (a 120 s round: "fast") only seat 1 is warned
    view = await core.view("gs1", 0)
    await core.submit("gs1", 0, {"random_placement": True}, view["version"], "k1", False)
    clock.advance(105)
    assert await core.fire_due() == 0, "a warning is no deadline"
    got1 = await wait_hooks(hooks, 3, "gs1-1")
    assert kinds_of(got1)[2] == ("deadline", 0)
    assert got1[2].body["deadline_unix_ms"] == view["deadline_unix_ms"]
    clock.advance(15)
    assert await core.fire_due() == 1  # the placement round (Salvo's round 0) closes at its deadline
    got0 = await wait_hooks(hooks, 3, "gs1-0")
    got1 = await wait_hooks(hooks, 4, "gs1-1")
    assert kinds_of(got0) == [("game_started", 0), ("your_turn", 0), ("your_turn", 1)], "seat 0 was not warned"
    assert kinds_of(got1) == [("game_started", 0), ("your_turn", 0), ("deadline", 0), ("your_turn", 1)]
    for got in (got0, got1):
        for d in got:
            assert d.signature_ok, d.signature_error
            assert set(d.body) == PAYLOAD_KEYS, "the documented payload, nothing of the view"
            assert d.body["url"] == "http://play.test/game/gs1" and d.body["game"] == "salvo"
            assert d.delivery_id == d.body["id"]
    assert len({d.delivery_id for d in got0 + got1}) == len(got0 + got1)
    # the shard's memory is dropped, its outbox mark lost, and the game reloads from its journal: the
    # notices of the current round are derived again, and the outbox's dedup queues none of them
    clock.advance(601)
    assert core.evict_idle(600_000) == 1
    await core.store.redis.delete(core.store.key("notify", "mark", "gs1"))
    queued: list[list[int]] = []
    real = core.store.notify

    async def spy(*a: Any, **k: Any) -> tuple[list[int], int]:
        got, dropped = await real(*a, **k)
        queued.append(got)
        return got, dropped

    core.store.notify = spy  # type: ignore[method-assign]
    await core.view("gs1", 0)
    assert queued == [[]], "derived again on load, queued never twice"


async def test_notify_queued_again_after_a_failed_enqueue_when_the_game_reloads(
        rig: tuple[ShardCore, FakeClock, NotifyService], hooks: WebhookReceiver,
        monkeypatch: pytest.MonkeyPatch, redis_server: RedisProcess) -> None:
    """At least once: the outbox refused the start's notices (an outage between the journal write and
    the queue); the shard dies; the game loaded again queues what came after its mark."""
    core, clock, svc = rig
    await new_salvo(core, "gs2")
    await hook_up(svc, hooks, "gs2", 1)

    async def down(*_a: Any, **_k: Any) -> Any:
        raise ConnectionError("outbox down")

    monkeypatch.setattr(core.store, "notify", down)
    await core.start_game("gs2", 0, False)
    monkeypatch.undo()
    again = ShardCore("shard-n", Store(redis_server.url, prefix=core.store.prefix), now_ms=clock)
    try:
        await again.view("gs2", 1)  # (loads it)
        got = await wait_hooks(hooks, 2, "gs2-1")
        assert kinds_of(got) == [("game_started", 0), ("your_turn", 0)]
        await again.view("gs2", 0)
        assert len(hooks.received) == 2
    finally:
        await again.flush()  # (its pending writes: none may run on a closed store)
        await again.store.close()


async def test_notify_a_failing_webhook_is_retried_then_disabled_with_its_reason(
        rig: tuple[ShardCore, FakeClock, NotifyService], hooks: WebhookReceiver) -> None:
    core, _, svc = rig
    await new_salvo(core, "gs3")
    hooks.answer("gs3-0", 503, 503, 503, 503, 503, 503)
    await hook_up(svc, hooks, "gs3", 0)
    await core.start_game("gs3", 0, False)
    # game_started and your_turn, each tried twice (all 503): the 4th failure in a row disables the channel
    got = await wait_hooks(hooks, 4, "gs3-0")
    assert [d.answered for d in got] == [503, 503, 503, 503]
    ids = [d.delivery_id for d in got]
    assert len(set(ids)) == 2 and all(ids.count(i) == 2 for i in ids), "a retry carries the same delivery id"

    async def disabled() -> dict[str, Any]:
        while True:
            state = (await svc.get("gs3", 0, "salvo"))["webhook"]
            if state["state"] == "disabled":
                return dict(state)
            await asyncio.sleep(0.02)
    state = await asyncio.wait_for(disabled(), 10)

    async def no_retries_left() -> None:
        while (await svc.outbox.depth())[1]:
            await asyncio.sleep(0.02)
    await asyncio.wait_for(no_retries_left(), 10)
    assert len(hooks.received) == 4, "a disabled channel is not tried again (its 3rd attempts were dropped)"
    assert "503" in state["reason"] and "disabled after 4" in state["reason"] and "/hook/" not in state["reason"]
    failing = await svc.outbox.failing()
    assert [(g, s, c) for g, s, c, _ in failing] == [("gs3", 0, "webhook")]
    # set again: enabled again, the same secret
    again = await svc.set("gs3", 0, "salvo", "running", {"webhook": {"url": hooks.url("gs3-0")}}, agent=False)
    assert again["webhook"]["state"] == "active" and again["webhook_signing_secret"] == ""


async def test_notify_web_push_is_encrypted_to_the_device_and_a_gone_device_is_forgotten(
        rig: tuple[ShardCore, FakeClock, NotifyService]) -> None:
    core, _, svc = rig
    await new_salvo(core, "gs4")
    with PushService() as push:
        vapid = (await svc.get("gs4", 0, "salvo"))["vapid_public_key"]
        phone = push.subscription(application_server_key=vapid)
        old = push.subscription(application_server_key=vapid, status=410)
        for sub in (phone, old):
            answer = await svc.set("gs4", 0, "salvo", "lobby", {"language": "he", "web_push": {
                "kinds": ["your_turn"], "subscription": sub.target()}}, agent=False)
        assert answer["web_push"]["state"] == "active" and len(answer["web_push_devices"]) == 2
        await core.start_game("gs4", 0, False)
        got = await asyncio.to_thread(push.wait_for, 1, 15.0, phone)
        msg = got[0].payload
        assert msg["kind"] == "your_turn" and msg["language"] == "he" and msg["title"] == "תורך"
        assert set(msg) == PAYLOAD_KEYS

        async def forgotten() -> None:
            while len((await svc.get("gs4", 0, "salvo"))["web_push_devices"]) != 1:
                await asyncio.sleep(0.02)
        await asyncio.wait_for(forgotten(), 10)


async def test_notify_email_is_confirmed_first_and_every_mail_unsubscribes_in_one_click(
        redis_server: RedisProcess) -> None:
    with SmtpServer() as smtp:  # (bounded: a hang says where each task waited; it hung once in CI, unexplained)
        clock = FakeClock(int(time.time() * 1000))
        prefix = f"nm{secrets.token_hex(4)}:"
        core = ShardCore("shard-m", Store(redis_server.url, prefix=prefix), now_ms=clock)
        config = replace(NotifyConfig(), smtp_host="127.0.0.1", smtp_port=smtp.port, smtp_starttls=False,
                         backoff_s=0.05, public_url="http://play.test")
        svc = NotifyService(Store(redis_server.url, prefix=prefix), "http://127.0.0.1:1", config)
        await svc.start()
        try:
            async with bounded(120, "the mail flow"):
                await new_salvo(core, "gm1")
                answer = await svc.set("gm1", 1, "salvo", "lobby", {"email": {"address": "Bob@Example.com"}},
                                       agent=False)
                assert answer["email"]["state"] == "pending" and answer["email_address"] == "B•••@example.com"
                mail = (await asyncio.to_thread(smtp.wait_for, 1, 15.0))[0]
                text = mail.text()
                token = text.split("/notify/confirm/")[1].split("?")[0].split()[0]
                await core.start_game("gm1", 0, False)  # nothing mailed before the confirmation
                ok, _ = await svc.confirm(token)
                assert ok and (await svc.get("gm1", 1, "salvo"))["email"]["state"] == "active"
                assert (await svc.confirm(token))[0] is True, "a second click (a retried POST) confirms again"
                assert (await svc.confirm(token + "x"))[0] is False, "a made-up link confirms nothing"
                view = await core.view("gm1", 0)
                await core.submit("gm1", 0, {"random_placement": True}, view["version"], "k", False)
                clock.advance(120)
                await core.fire_due()  # round 1 opens: mailed
                mails = await asyncio.to_thread(smtp.wait_for, 2, 15.0)
                turn = mails[1]
                assert "Round 1 " in turn.text() and turn.rcpt_tos == ["Bob@example.com"]
                link = str(turn.message["List-Unsubscribe"]).strip("<>")
                assert turn.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
                ok, _ = await svc.unsubscribe(link.split("/notify/unsubscribe/")[1].split("?")[0])
                assert ok and (await svc.get("gm1", 1, "salvo"))["email"]["state"] == "off"
        finally:
            async with bounded(30, "stopping the sender"):
                await svc.stop()
            await svc.store.close()
            await core.flush()  # (its pending writes: none may run on a closed store)
            await core.store.close()


async def test_notify_settings_refuse_bad_input_and_change_nothing(
        rig: tuple[ShardCore, FakeClock, NotifyService], hooks: WebhookReceiver) -> None:
    core, _, svc = rig
    await new_salvo(core, "gs5")
    strict = NotifyService(svc.store, "http://x", replace(svc.config, allow_private=False))
    await strict.sender.prepare()
    cases: list[tuple[NotifyService, dict[str, Any], type[Exception], str]] = [
        (svc, {"webhook": {"url": hooks.url(), "kinds": ["trade_offer"]}}, InvalidOrder, "webhook.kinds[0]"),
        (strict, {"webhook": {"url": "http://example.com/x"}}, InvalidOrder, "webhook.url"),
        (strict, {"webhook": {"url": "https://10.0.0.8/x"}}, InvalidOrder, "webhook.url"),
        (svc, {"language": "fr"}, InvalidOrder, "language"),
        (svc, {"web_push": {"subscription": {"endpoint": "https://push.example/1", "p256dh": "xx", "auth": "yy"}}},
         InvalidOrder, "web_push.subscription.p256dh"),
        (svc, {"email": {"address": "a@b.example"}}, Conflict, ""),  # (no SMTP configured)
    ]
    for service, req, error, field in cases:
        with pytest.raises(error) as info:
            await service.set("gs5", 0, "salvo", "lobby", req, agent=False)
        assert (getattr(info.value, "field", "") or "") == field
    await strict.sender.stop()
    assert (await svc.get("gs5", 0, "salvo"))["webhook"]["state"] == "off", "nothing changed"
    with pytest.raises(PermissionDenied):
        await svc.set("gs5", 0, "salvo", "lobby", {"webhook": {"url": hooks.url()}}, agent=True)
    first = await svc.set("gs5", 0, "salvo", "lobby", {"idempotency_key": "k1", "webhook": {"url": hooks.url()}},
                          agent=False)
    again = await svc.set("gs5", 0, "salvo", "lobby", {"idempotency_key": "k1", "webhook": {"url": hooks.url()}},
                          agent=False)
    assert again == first and first["webhook_signing_secret"], "a retry answers the same secret"
    kinds_only = await svc.set("gs5", 0, "salvo", "lobby", {"webhook": {"kinds": ["your_turn", "deadline"]}},
                               agent=False)
    assert kinds_only["webhook"]["kinds"] == ["your_turn", "deadline"] and kinds_only["webhook_signing_secret"] == ""
    assert kinds_only["webhook_host"] == "127.0.0.1", "no URL given: the URL (and its secret) stay"
    with pytest.raises(InvalidOrder) as info:
        await svc.set("gs5", 1, "salvo", "lobby", {"email": {"kinds": ["your_turn"]}}, agent=False)
    assert info.value.field == "email.address", "kinds alone for a channel that is not set"
    with pytest.raises(KeyReused):
        await svc.set("gs5", 0, "salvo", "lobby", {"idempotency_key": "k1", "webhook": {"url": hooks.url("x")}},
                      agent=False)


async def test_notify_an_entry_a_live_gateway_is_working_on_is_never_taken_over_only_a_dead_ones(
        redis_server: RedisProcess) -> None:
    """Two gateways share the outbox: one that still works on an entry renews it (Outbox.keep), so the
    other's take-over of entries idle too long (a dead gateway's) leaves it alone."""
    store = Store(redis_server.url, prefix=f"nk{secrets.token_hex(4)}:")
    try:
        outbox = store.outbox
        await outbox.ensure_group()
        await store.redis.xadd(outbox.stream, {"e": '{"game_id": "g", "seat": 0, "kind": "your_turn"}'})
        [(entry_id, _)] = await outbox.read("gateway-a", count=10, block_ms=100)
        await asyncio.sleep(0.3)  # (time passing is what is tested: the entry's idle time)
        await outbox.keep("gateway-a", [entry_id])
        assert await outbox.claim_stale("gateway-b", idle_ms=250, count=10) == [], "a's, renewed"
        await asyncio.sleep(0.3)  # gateway-a died: no more renewals
        taken = await outbox.claim_stale("gateway-b", idle_ms=250, count=10)
        assert [i for i, _ in taken] == [entry_id], "a dead gateway's entry is taken over"
    finally:
        await store.close()
