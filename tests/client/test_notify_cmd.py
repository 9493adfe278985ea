"""`archipelago notify` without a server: the words it prints for a NotificationSettings message, the
request its flags make (and the combinations it refuses before any call), the idempotency key."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2, notify_pb2
from client import cli
from client.base import BaseClient, M
from client.cli import build_parser
from client.errors import ApiError
from client.notify_cmd import SIGNATURE_RECIPE, describe, parse_kinds, run, settings_request

GAME = "0123456789abcdef"
T_SENT = 1_780_000_000_000  # 2026-05-28 20:26:40 UTC
T_FAILED = T_SENT + 60_000


def settings(**over: Any) -> notify_pb2.NotificationSettings:
    base: dict[str, Any] = {
        "language": "en", "vapid_public_key": "BPk",
        "kinds_available": ["game_started", "your_turn", "deadline", "trade_offer", "private_chat", "game_over"],
        "web_push": notify_pb2.ChannelState(state="active", kinds=["your_turn", "deadline"]),
        "web_push_devices": [notify_pb2.WebPushDevice(service="https://fcm.googleapis.com", device_id="ab12cd34ef56")],
        "webhook": notify_pb2.ChannelState(state="disabled", kinds=["your_turn"], failures=10,
                                           reason="the server answered 404 (disabled after 10 failed attempts)",
                                           last_sent_unix_ms=T_SENT, last_failure_unix_ms=T_FAILED),
        "webhook_host": "discord.com",
        "email": notify_pb2.ChannelState(state="pending", kinds=["game_started", "your_turn", "game_over"]),
        "email_address": "a•••@example.com", "email_available": True,
    }
    base.update(over)
    return notify_pb2.NotificationSettings(**base)


def test_the_settings_in_words_each_channel_its_state_kinds_masked_target_and_why_disabled() -> None:
    assert describe(settings(), GAME) == [
        f"notifications of game {GAME} (their words in English):",
        "  web push:  active — https://fcm.googleapis.com (device ab12cd34ef56)",
        "             kinds: your_turn, deadline",
        "  webhook:   disabled — discord.com",
        "             kinds: your_turn",
        "             why: the server answered 404 (disabled after 10 failed attempts) — set it again to turn it "
        "back on",
        "             last sent: 2026-05-28 20:26 UTC",
        "  email:     pending (waiting for its confirmation link to be followed) — a•••@example.com",
        "             kinds: game_started, your_turn, game_over",
        "kinds this game can notify: game_started, your_turn, deadline, trade_offer, private_chat, game_over",
    ]


def test_channels_off_a_failure_in_a_row_and_a_server_without_email_are_said() -> None:
    off = notify_pb2.ChannelState(state="off")
    lines = describe(settings(language="he", web_push=off, web_push_devices=[], email=off, email_address="",
                              email_available=False,
                              webhook=notify_pb2.ChannelState(state="active", kinds=["game_over"], failures=2,
                                                              reason="the server answered 503",
                                                              last_failure_unix_ms=T_FAILED)), GAME)
    assert lines[0].endswith("(their words in Hebrew):")
    assert lines[1:] == [
        "  web push:  off",
        "             (a browser adds itself: the web client's Notifications panel)",
        "  webhook:   active — discord.com",
        "             kinds: game_over",
        "             last failure: the server answered 503 (2 in a row), at 2026-05-28 20:27 UTC",
        "  email:     off",
        "             (this server sends no email: its operator has not configured SMTP)",
        "kinds this game can notify: game_started, your_turn, deadline, trade_offer, private_chat, game_over",
    ]
    assert not any("a•••" in line or "https://fcm" in line for line in lines)


def args(*argv: str) -> Any:
    return build_parser().parse_args(["notify", GAME, *argv])


def test_the_flags_make_one_request_and_a_channel_set_replaces_its_kinds() -> None:
    assert settings_request(args(), GAME) is None  # (only show)
    req = settings_request(args("--webhook", "https://h.example/x", "--kinds", "webhook=your_turn",
                                "--kinds", "webhook=deadline,your_turn", "--kinds", "web-push=game_over",
                                "--email-off", "--language", "he"), GAME, "k1")
    assert req is not None
    assert req.game_id == GAME and req.idempotency_key == "k1" and req.language == "he"
    assert list(req.webhook.kinds) == ["your_turn", "deadline"] and req.webhook.url == "https://h.example/x"
    assert req.HasField("email") and req.email.address == "" and list(req.web_push.kinds) == ["game_over"]
    off = settings_request(args("--webhook-off"), GAME)
    assert off is not None and off.HasField("webhook") and off.webhook.url == "" and not off.HasField("email")
    assert parse_kinds(["email="]) == {"email": []}  # (the channel's defaults)
    kinds_only = settings_request(args("--kinds", "webhook=your_turn"), GAME)
    assert kinds_only is not None and list(kinds_only.webhook.kinds) == ["your_turn"]
    assert not kinds_only.webhook.HasField("url"), "the URL absent: it stays (notify.proto)"


@pytest.mark.parametrize(("argv", "said"), [
    (["--kinds", "email=your_turn", "--email-off"], "--kinds email=… and --email-off: give one of them"),
    (["--kinds", "sms=your_turn"], "CHANNEL one of web_push, webhook, email"),
    (["--kinds", "your_turn"], "expected CHANNEL=kind,kind"),
    (["--webhook", "https://h.example/x", "--webhook-off"], "--webhook and --webhook-off: give one of them"),
    (["--email", "a@b.example", "--email-off"], "--email and --email-off: give one of them"),
    (["--webhook", ""], "--webhook: give the https URL"),
])
def test_a_combination_of_flags_the_request_cannot_carry_is_refused_naming_the_flag(argv: list[str], said: str
                                                                                    ) -> None:
    with pytest.raises(SystemExit) as refused:
        settings_request(args(*argv), GAME)
    assert said in str(refused.value)


class Door(BaseClient):
    """The Game service's two notification rpcs, recorded; the first SetNotifications reply is lost."""

    def __init__(self, answer: notify_pb2.NotificationSettings, lose_first: bool = False) -> None:
        super().__init__("secret")
        self.answer = answer
        self.lose_first = lose_first
        self.calls: list[tuple[str, Message]] = []

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        assert service == "Game" and response is notify_pb2.NotificationSettings
        self.calls.append((method, request))
        if self.lose_first:
            self.lose_first = False
            raise ApiError("UNAVAILABLE", "", "", "", "connection reset", 503)
        out = response()
        out.MergeFromString(self.answer.SerializeToString())
        return out

    async def rejoin(self) -> lobby_pb2.RejoinResponse:
        return lobby_pb2.RejoinResponse(game_id=GAME, code="K7Q2ZP", seat=1)

    def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        raise NotImplementedError

    def with_secret(self, secret: str) -> BaseClient:
        raise NotImplementedError

    async def close(self) -> None:
        pass


async def test_a16_a_change_carries_a_random_key_per_invocation_kept_by_its_retry_and_prints_the_secret_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    made = settings(webhook=notify_pb2.ChannelState(state="active", kinds=list(settings().kinds_available)),
                    webhook_signing_secret="whsec_abc")
    first, second = Door(made, lose_first=True), Door(made)
    for door in (first, second):
        assert await run(door, args("--webhook", "https://h.example/x")) == 0
    out = capsys.readouterr().out
    assert [m for m, _ in first.calls] == ["SetNotifications", "SetNotifications"]
    lost, again = (r for _, r in first.calls)
    assert lost == again, "the retry of a lost reply is the same request, key included"
    key = again.idempotency_key  # type: ignore[attr-defined]
    assert 16 <= len(key) <= 64 and key != second.calls[0][1].idempotency_key  # type: ignore[attr-defined]
    assert out.count("webhook signing secret (shown only now: keep it): whsec_abc\n") == 2
    assert out.count(SIGNATURE_RECIPE) == 2 and "Archipelago-Signature" in SIGNATURE_RECIPE


async def test_without_a_flag_it_only_reads_and_json_is_the_settings_message(capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    door = Door(settings())
    assert await run(door, args("--json")) == 0
    assert [m for m, _ in door.calls] == ["GetNotifications"]
    shown = json.loads(capsys.readouterr().out)
    assert shown["webhook"]["state"] == "disabled" and shown["email_address"] == "a•••@example.com"
    assert shown["webhook_signing_secret"] == "" and "web_push_devices" in shown  # (proto field names, every field)


async def test_a_code_names_the_secrets_game_and_another_games_code_is_refused() -> None:
    door = Door(settings())
    await run(door, build_parser().parse_args(["notify", "k7q2zp"]))
    assert door.calls[0][1].game_id == GAME  # type: ignore[attr-defined]
    with pytest.raises(SystemExit, match="belongs to game K7Q2ZP"):
        await run(door, build_parser().parse_args(["notify", "ZZZZZZ"]))


def test_notify_without_a_secret_says_how_to_give_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCHIPELAGO_SECRET", raising=False)
    with pytest.raises(SystemExit, match="--secret-file FILE, env ARCHIPELAGO_SECRET or --secret"):
        cli.main(["notify", GAME, "--server", "127.0.0.1:1"])
