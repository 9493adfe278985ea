"""The notification channels against real receivers on loopback (tests/notify/receivers.py): a Web Push
service that verifies VAPID and decrypts, an HTTPS webhook receiver that checks signatures, aiosmtpd.
No Ray, no Redis: ``Channels.send`` one delivery at a time, and what arrived."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from engine.errors import InvalidOrder
from services.notify import kinds
from services.notify.channels import (
    Channels,
    Delivery,
    Outcome,
    check_email_address,
    check_subscription,
    check_target_url,
    mask_email,
    new_vapid_private_pem,
    sign,
)
from services.notify.config import NotifyConfig
from tests.notify.receivers import (
    HANG,
    PushService,
    Redirect,
    SmtpServer,
    WebhookReceiver,
    push_service,
    smtp_server,
    verify_signature,
    webhook_receiver,
)

__all__ = ["push_service", "smtp_server", "webhook_receiver"]  # the receivers' fixtures, used below

GAME_URL = "https://play.example/game/g-123"
SECRET = "whsec-test-9f2c"


def a_payload(kind: str = kinds.YOUR_TURN, language: str = "en", delivery_id: str = "g-123:0:your_turn:3",
              url: str = GAME_URL) -> dict[str, Any]:
    now_ms = int(time.time() * 1000)
    return kinds.payload(delivery_id=delivery_id, kind=kind, game_id="g-123", game="archipelago", round_=3,
                         url=url, deadline_ms=now_ms + 3_600_000, at_ms=now_ms, language=language)


def config(**overrides: Any) -> NotifyConfig:
    return NotifyConfig(**{"allow_private": True, "http_timeout_s": 2.0, **overrides})


@asynccontextmanager
async def open_channels(cfg: NotifyConfig, pem: str | None = None) -> AsyncIterator[Channels]:
    channels = Channels(cfg, pem or new_vapid_private_pem())
    await channels.start()
    try:
        yield channels
    finally:
        await channels.close()


def webhook(receiver: WebhookReceiver, name: str = "hook", *, secret: str = SECRET, url: str = "",
            payload: dict[str, Any] | None = None) -> Delivery:
    return Delivery(id=f"dlv-{name}", channel=kinds.WEBHOOK, payload=payload or a_payload(),
                    target={"url": url or receiver.url(name), "secret": secret})


# ---------------------------------------------------------------------------------------------
# Web Push


async def test_notify_web_push_arrives_encrypted_vapid_signed_and_decrypts_to_the_payload(
        push_service: PushService) -> None:
    cfg = config(vapid_subject="mailto:ops@archipelago.test")
    async with open_channels(cfg) as channels:
        sub = push_service.subscription(application_server_key=channels.vapid_public_key())
        payload = a_payload(language="he")
        out = await channels.send(Delivery("d-push-1", kinds.WEB_PUSH, payload, sub.target()))
    assert out == Outcome(ok=True)
    got = push_service.wait_for(1, subscription=sub)[0]
    assert got.vapid_error == "" and got.decrypt_error == ""
    assert got.payload == payload
    assert payload["title"].encode() not in got.body and b"g-123" not in got.body  # encrypted on the wire
    assert got.vapid_claims["aud"] == push_service.origin
    assert got.vapid_claims["sub"] == "mailto:ops@archipelago.test"
    assert got.vapid_claims["exp"] > time.time()
    assert got.vapid_key == channels.vapid_public_key()
    assert got.headers["content-encoding"] == "aes128gcm"
    assert got.headers["urgency"] == "high"
    assert 0 < int(got.headers["ttl"]) <= 3600


async def test_notify_web_push_game_over_is_not_urgent_and_vapid_is_checked_against_the_subscribed_key(
        push_service: PushService) -> None:
    async with open_channels(config()) as channels:
        ok_sub = push_service.subscription(application_server_key=channels.vapid_public_key())
        other_sub = push_service.subscription(application_server_key=Channels(config(), new_vapid_private_pem())
                                              .vapid_public_key())
        first = await channels.send(Delivery("d1", kinds.WEB_PUSH, a_payload(kinds.GAME_OVER), ok_sub.target()))
        second = await channels.send(Delivery("d2", kinds.WEB_PUSH, a_payload(kinds.GAME_OVER), other_sub.target()))
    assert first.ok and push_service.wait_for(1, subscription=ok_sub)[0].headers["urgency"] == "normal"
    assert second == Outcome(ok=False, reason="the push service answered 403")
    assert "applicationServerKey" in push_service.wait_for(1, subscription=other_sub)[0].vapid_error


@pytest.mark.parametrize("status", [404, 410])
async def test_notify_web_push_404_and_410_mean_the_subscription_is_gone(push_service: PushService,
                                                                         status: int) -> None:
    sub = push_service.subscription(status=status)
    async with open_channels(config()) as channels:
        out = await channels.send(Delivery("d-gone", kinds.WEB_PUSH, a_payload(), sub.target()))
    assert out.gone and not out.ok and not out.retry
    assert str(status) in out.reason
    assert push_service.wait_for(1, subscription=sub)[0].payload is not None


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_notify_web_push_429_and_5xx_are_retried(push_service: PushService, status: int) -> None:
    sub = push_service.subscription()
    push_service.answer(sub, status)
    async with open_channels(config()) as channels:
        first = await channels.send(Delivery("d-r", kinds.WEB_PUSH, a_payload(), sub.target()))
        again = await channels.send(Delivery("d-r", kinds.WEB_PUSH, a_payload(), sub.target()))
    assert first == Outcome(ok=False, retry=True, reason=f"the push service answered {status}")
    assert again == Outcome(ok=True)
    assert [d.status for d in push_service.wait_for(2, subscription=sub)] == [status, 201]


@pytest.mark.parametrize("status", [400, 403, 413])
async def test_notify_web_push_400_403_413_fail_without_retry(push_service: PushService, status: int) -> None:
    sub = push_service.subscription(status=status)
    async with open_channels(config()) as channels:
        out = await channels.send(Delivery("d-f", kinds.WEB_PUSH, a_payload(), sub.target()))
    assert out == Outcome(ok=False, reason=f"the push service answered {status}")


async def test_notify_web_push_to_a_loopback_endpoint_is_refused_without_allow_private(
        push_service: PushService) -> None:
    sub = push_service.subscription()
    async with open_channels(config(allow_private=False)) as channels:
        out = await channels.send(Delivery("d-p", kinds.WEB_PUSH, a_payload(), sub.target()))
    assert not out.ok and not out.retry and "https" in out.reason
    assert len(push_service.received) == 0  # refused before any request (one would be recorded by now)


async def test_notify_web_push_malformed_keys_fail_without_raising(push_service: PushService) -> None:
    sub = push_service.subscription()
    async with open_channels(config()) as channels:
        out = await channels.send(Delivery("d-k", kinds.WEB_PUSH, a_payload(), {**sub.target(), "p256dh": "AAAA"}))
    assert not out.ok and not out.retry and "P-256 public key" in out.reason


def test_notify_check_subscription_names_the_bad_part() -> None:
    point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    p256dh = base64.urlsafe_b64encode(point).rstrip(b"=").decode()
    auth = base64.urlsafe_b64encode(b"0123456789abcdef").rstrip(b"=").decode()
    check_subscription("https://push.example/x", p256dh, auth, allow_private=False, field="web_push.subscription")
    for endpoint, key, secret, bad in [("http://push.example/x", p256dh, auth, "endpoint"),
                                       ("https://push.example/x", "AAAA", auth, "p256dh"),
                                       ("https://push.example/x", p256dh[:-4], auth, "p256dh"),
                                       ("https://push.example/x", p256dh, "c2hvcnQ", "auth")]:
        with pytest.raises(InvalidOrder) as err:
            check_subscription(endpoint, key, secret, allow_private=False, field="web_push.subscription")
        assert err.value.field == f"web_push.subscription.{bad}"


def test_notify_vapid_public_key_is_the_uncompressed_point_of_the_private_key() -> None:
    pem = new_vapid_private_pem()
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1)
    public = Channels(config(), pem).vapid_public_key()
    raw = base64.urlsafe_b64decode(public + "=" * (-len(public) % 4))
    assert "=" not in public and len(raw) == 65 and raw[0] == 4
    assert raw == key.public_key().public_bytes(serialization.Encoding.X962,
                                                serialization.PublicFormat.UncompressedPoint)
    assert new_vapid_private_pem() != pem


def test_notify_a_vapid_key_that_is_not_p256_is_refused() -> None:
    other = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    with pytest.raises(ValueError, match="P-256"):
        Channels(config(), other)


# ---------------------------------------------------------------------------------------------
# Webhooks


async def test_notify_webhook_is_signed_and_verifiable_by_the_documented_recipe(
        webhook_receiver: WebhookReceiver) -> None:
    webhook_receiver.secret = SECRET
    d = webhook(webhook_receiver)
    async with open_channels(config(ca_file=webhook_receiver.ca_file)) as channels:
        out = await channels.send(d)
    assert out == Outcome(ok=True)
    got = webhook_receiver.wait_for(1)[0]
    assert got.signature_ok is True and got.answered == 200
    assert got.delivery_id == d.id
    assert got.headers["content-type"] == "application/json"
    assert got.headers["user-agent"] == "archipelago-notify/1"
    assert got.body == d.payload and got.body["content"] == got.body["text"]
    # the recipe of notify.proto, by hand: t=<t>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>
    fields = dict(part.split("=", 1) for part in got.signature.split(","))
    assert abs(int(fields["t"]) - time.time()) < 60
    expected = hmac.new(SECRET.encode(), fields["t"].encode() + b"." + got.raw, hashlib.sha256).hexdigest()
    assert fields["v1"] == expected
    assert got.verify("another secret") == "signature mismatch"
    assert "stale" in got.verify(SECRET, now=int(fields["t"]) + 301)


async def test_notify_webhook_with_a_wrong_secret_is_rejected_by_the_receiver(
        webhook_receiver: WebhookReceiver) -> None:
    webhook_receiver.set_secret("strict", "the receiver's secret")
    async with open_channels(config(ca_file=webhook_receiver.ca_file)) as channels:
        out = await channels.send(webhook(webhook_receiver, "strict", secret="not the same"))
    assert out == Outcome(ok=False, reason="the server answered 401")
    got = webhook_receiver.wait_for(1, name="strict")[0]
    assert got.signature_ok is False and got.signature_error == "signature mismatch"


async def test_notify_webhook_404_fails_at_once_naming_the_status_not_the_url(
        webhook_receiver: WebhookReceiver) -> None:
    name = "private-path-7c1e"
    webhook_receiver.answer(name, 404)
    async with open_channels(config(ca_file=webhook_receiver.ca_file)) as channels:
        out = await channels.send(webhook(webhook_receiver, name))
    assert not out.ok and not out.retry and not out.gone
    assert "404" in out.reason
    assert name not in out.reason and "127.0.0.1" not in out.reason and str(webhook_receiver.port) not in out.reason
    assert webhook_receiver.wait_for(1, name=name)[0].answered == 404


@pytest.mark.parametrize("status", [408, 429, 500, 503])
async def test_notify_webhook_408_429_and_5xx_are_retried(webhook_receiver: WebhookReceiver, status: int) -> None:
    webhook_receiver.answer("flaky", status)
    d = webhook(webhook_receiver, "flaky")
    async with open_channels(config(ca_file=webhook_receiver.ca_file)) as channels:
        first = await channels.send(d)
        again = await channels.send(d)
    assert first == Outcome(ok=False, retry=True, reason=f"the server answered {status}")
    assert again == Outcome(ok=True)
    got = webhook_receiver.wait_for(2, name="flaky")
    assert [g.answered for g in got] == [status, 200]
    assert got[0].delivery_id == got[1].delivery_id == d.id  # the same id on every retry


async def test_notify_webhook_timeout_is_retried(webhook_receiver: WebhookReceiver) -> None:
    webhook_receiver.hang_s = 10.0
    webhook_receiver.answer("slow", HANG)
    async with open_channels(config(ca_file=webhook_receiver.ca_file, http_timeout_s=0.5)) as channels:
        started = time.monotonic()
        out = await channels.send(webhook(webhook_receiver, "slow"))
        took = time.monotonic() - started
    assert out == Outcome(ok=False, retry=True, reason="no answer within 0.5 s")
    assert took < 5.0  # the client's timeout ended it, not the receiver
    assert webhook_receiver.wait_for(1, name="slow")[0].answered == HANG


async def test_notify_webhook_connection_refused_is_retried() -> None:
    with socket.socket() as sock:  # bound, not listening: connections to it are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        d = Delivery("d-c", kinds.WEBHOOK, a_payload(), {"url": f"https://127.0.0.1:{port}/h", "secret": SECRET})
        async with open_channels(config()) as channels:
            out = await channels.send(d)
    assert out == Outcome(ok=False, retry=True, reason="the connection was refused")


async def test_notify_webhook_redirect_is_not_followed(webhook_receiver: WebhookReceiver) -> None:
    webhook_receiver.answer("moved", Redirect(webhook_receiver.url("elsewhere")))
    async with open_channels(config(ca_file=webhook_receiver.ca_file)) as channels:
        out = await channels.send(webhook(webhook_receiver, "moved"))
    assert not out.ok and not out.retry and "302" in out.reason
    assert [d.name for d in webhook_receiver.received.items()] == ["moved"]  # a followed one would be here


async def test_notify_webhook_with_an_untrusted_certificate_fails(webhook_receiver: WebhookReceiver) -> None:
    async with open_channels(config()) as channels:  # no ca_file: the receiver's self-signed cert is unknown
        out = await channels.send(webhook(webhook_receiver))
    assert out == Outcome(ok=False, reason="its TLS certificate is not trusted")
    assert len(webhook_receiver.received) == 0


async def test_notify_webhook_to_a_literal_loopback_address_is_refused_at_send_time(
        webhook_receiver: WebhookReceiver) -> None:
    async with open_channels(config(ca_file=webhook_receiver.ca_file, allow_private=False)) as channels:
        out = await channels.send(webhook(webhook_receiver))
    assert out == Outcome(ok=False, reason="the URL points into a private network")
    assert len(webhook_receiver.received) == 0


async def test_notify_webhook_host_name_resolving_to_a_private_address_is_refused_unless_allowed(
        webhook_receiver: WebhookReceiver) -> None:
    url = webhook_receiver.localhost_url("named")
    assert check_target_url(url, allow_private=False, field="webhook.url") == url  # passes the static check
    async with open_channels(config(ca_file=webhook_receiver.ca_file, allow_private=False)) as channels:
        refused = await channels.send(webhook(webhook_receiver, "named", url=url))
    assert refused == Outcome(ok=False, reason="the URL points into a private network")
    assert len(webhook_receiver.received) == 0
    async with open_channels(config(ca_file=webhook_receiver.ca_file, allow_private=True)) as channels:
        allowed = await channels.send(webhook(webhook_receiver, "named", url=url))
    assert allowed == Outcome(ok=True)
    assert webhook_receiver.wait_for(1, name="named")[0].answered == 200


@pytest.mark.parametrize("url", [
    "http://example.com/hook",
    "ftp://example.com/hook",
    "https://127.0.0.1/hook",
    "https://10.1.2.3:8443/hook",
    "https://192.168.0.7/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.1.1/hook",
    "https://0.0.0.0/hook",
    "https://[::1]/hook",
    "https://[fe80::1%25eth0]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[64:ff9b::a00:1]/hook",
    "https://2130706433/hook",
    "https://127.1/hook",
    "https://0x7f.0.0.1/hook",
    "https://user:pw@example.com/hook",
    "https://token@example.com/hook",
    "https:///hook",
    "https://example.com:99999/hook",
    "https://example.com/ho ok",
    "https://example.com/" + "a" * 2048,
    "",
])
def test_notify_check_target_url_refuses_what_is_not_public_https(url: str) -> None:
    with pytest.raises(InvalidOrder) as err:
        check_target_url(url, allow_private=False, field="webhook.url")
    assert err.value.field == "webhook.url" and err.value.code == "order/invalid"
    assert url not in str(err.value) or url == ""


def test_notify_check_target_url_accepts_public_https_and_with_allow_private_loopback_http() -> None:
    for url in ["https://discord.com/api/webhooks/1/abc", "https://hooks.example.org:8443/x?y=1",
                "https://[2606:4700::1111]/hook", "https://93.184.215.14/h", "https://localhost/h"]:
        assert check_target_url(url, allow_private=False, field="webhook.url") == url
    for url in ["http://127.0.0.1:8080/h", "https://10.0.0.5/h", "http://[::1]:9/h"]:
        assert check_target_url(url, allow_private=True, field="webhook.url") == url
    for url in ["ftp://127.0.0.1/h", "http://u:p@127.0.0.1/h"]:  # never, even allowed private
        with pytest.raises(InvalidOrder):
            check_target_url(url, allow_private=True, field="webhook.url")


def test_notify_sign_matches_a_hand_computed_hmac() -> None:
    body = json.dumps({"v": 1, "title": "תורך"}, ensure_ascii=False).encode()
    t = 1_760_000_000
    mac = hmac.new(b"s3cret", b"1760000000." + body, hashlib.sha256).hexdigest()
    assert sign("s3cret", body, t) == f"t=1760000000,v1={mac}"
    assert verify_signature("s3cret", sign("s3cret", body, t), body, now=t + 10) == ""
    assert verify_signature("s3cret", sign("s3cret", body, t), body + b" ", now=t) == "signature mismatch"


# ---------------------------------------------------------------------------------------------
# Email


def smtp_config(smtp: SmtpServer, **overrides: Any) -> NotifyConfig:
    return config(smtp_host=smtp.host, smtp_port=smtp.port, smtp_starttls=False,
                  smtp_from="notify@archipelago.test", **overrides)


@pytest.mark.parametrize("language", ["en", "he"])
async def test_notify_email_has_subject_one_click_unsubscribe_and_the_game_link(smtp_server: SmtpServer,
                                                                                language: str) -> None:
    payload = a_payload(language=language)
    unsubscribe = "https://play.example/notify/unsubscribe/tok-42"
    d = Delivery("g-123:0:your_turn:3:email", kinds.EMAIL, payload,
                 {"address": "Player@Example.COM", "unsubscribe_url": unsubscribe})
    async with open_channels(smtp_config(smtp_server)) as channels:
        out = await channels.send(d)
    assert out == Outcome(ok=True)
    mail = smtp_server.wait_for(1)[0]
    msg = mail.message
    assert mail.rcpt_tos == ["Player@example.com"] and mail.mail_from == "notify@archipelago.test"
    assert msg["Subject"] == payload["title"]
    assert msg["List-Unsubscribe"] == f"<{unsubscribe}>"
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert msg["Message-ID"] == "<g-123-0-your_turn-3-email@archipelago>"
    assert msg["Content-Language"] == language
    text = mail.text()
    assert GAME_URL in text and payload["body"] in text and unsubscribe in text
    assert GAME_URL in mail.html() and payload["body"] in mail.html()
    if language == "he":
        assert "תורך" == msg["Subject"] and 'dir="rtl"' in mail.html()


async def test_notify_email_confirmation_carries_the_link_and_no_unsubscribe(smtp_server: SmtpServer) -> None:
    link = "https://play.example/notify/confirm/tok-7"
    payload = a_payload(kind=kinds.EMAIL_CONFIRM, url=link)
    async with open_channels(smtp_config(smtp_server)) as channels:
        out = await channels.send(Delivery("confirm-1", kinds.EMAIL, payload, {"address": "a@example.com"}))
    assert out.ok
    mail = smtp_server.wait_for(1)[0]
    assert mail.message["Subject"] == "Confirm your address"
    assert link in mail.text() and mail.message["List-Unsubscribe"] is None


async def test_notify_email_4xx_is_retried_and_5xx_fails(smtp_server: SmtpServer) -> None:
    smtp_server.answer("451 4.3.0 try again later", "550 5.1.1 no such user")
    d = Delivery("d-m", kinds.EMAIL, a_payload(), {"address": "b@example.com", "unsubscribe_url": GAME_URL})
    async with open_channels(smtp_config(smtp_server)) as channels:
        deferred = await channels.send(d)
        refused = await channels.send(d)
    assert deferred == Outcome(ok=False, retry=True, reason="the mail server answered 451")
    assert refused == Outcome(ok=False, reason="the mail server answered 550")
    assert [m.answered[:3] for m in smtp_server.wait_for(2)] == ["451", "550"]


async def test_notify_email_without_smtp_or_with_a_bad_address_fails_without_sending(
        smtp_server: SmtpServer) -> None:
    target = {"address": "c@example.com", "unsubscribe_url": GAME_URL}
    async with open_channels(config()) as channels:
        unconfigured = await channels.send(Delivery("d-n", kinds.EMAIL, a_payload(), target))
    async with open_channels(smtp_config(smtp_server)) as channels:
        bad = await channels.send(Delivery("d-b", kinds.EMAIL, a_payload(),
                                           {**target, "address": "c@example.com\r\nBcc: x@evil.example"}))
    assert unconfigured == Outcome(ok=False, reason="email is not configured on this server")
    assert bad == Outcome(ok=False, reason="the address is not valid")
    assert len(smtp_server.received) == 0


def test_notify_mask_email() -> None:
    assert mask_email("alice@example.com") == "a•••@example.com"
    assert mask_email("b@x.org") == "b•••@x.org"
    assert mask_email("not an address") == "•••"


def test_notify_check_email_address() -> None:
    assert check_email_address("first.last+tag@Mail.Example.org", "email.address") == "first.last+tag@mail.example.org"
    for bad in ["", "no-at-sign", "a@b", "@example.com", "a@", "a b@example.com", "a@example..com",
                "a@-x.com", "a@example.123", "a@[127.0.0.1]", "A <a@example.com>", "a@example.com\nBcc: b@c.de",
                "x" * 65 + "@example.com", "a@" + "b" * 250 + ".com"]:
        with pytest.raises(InvalidOrder) as err:
            check_email_address(bad, "email.address")
        assert err.value.field == "email.address"


# ---------------------------------------------------------------------------------------------
# Secrets stay out of the logs


async def test_notify_failures_are_logged_without_urls_endpoints_addresses_or_secrets(
        caplog: pytest.LogCaptureFixture, push_service: PushService, webhook_receiver: WebhookReceiver,
        smtp_server: SmtpServer) -> None:
    hook, address = "hook-secret-path-3b9", "secret.player@example.com"
    webhook_receiver.answer(hook, 404)
    sub = push_service.subscription(status=410)
    smtp_server.answer("550 5.1.1 no such user")
    caplog.set_level(logging.DEBUG)
    async with open_channels(smtp_config(smtp_server, ca_file=webhook_receiver.ca_file)) as channels:
        outs = [await channels.send(webhook(webhook_receiver, hook)),
                await channels.send(Delivery("d-p", kinds.WEB_PUSH, a_payload(), sub.target())),
                await channels.send(Delivery("d-e", kinds.EMAIL, a_payload(),
                                             {"address": address, "unsubscribe_url": GAME_URL + "/unsub"}))]
    assert not any(o.ok for o in outs)
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("archipelago")]
    assert any("404" in m for m in ours) and any("410" in m for m in ours) and any("550" in m for m in ours)
    everything = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail.log"))
    for secret in [hook, SECRET, sub.id, sub.p256dh, sub.auth, address, "secret.player"]:
        assert secret not in everything
