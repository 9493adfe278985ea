"""`archipelago notify` against `archipelago serve`, as a user runs them: a webhook set with the command
gets the game's notifications, signed with the secret the command printed once, at a real HTTPS
receiver (tests/notify/receivers.py) that the served cluster trusts (its CA file, private addresses
allowed: the receiver's ``env()``)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.grpc_client import Client
from client.notify_cmd import SIGNATURE_RECIPE
from tests.e2e.serving import ServeProcess, run, serving, wait_healthy
from tests.notify.receivers import WebhookReceiver

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def served_notify(tmp_path_factory: pytest.TempPathFactory, hooks: WebhookReceiver
                  ) -> Iterator[tuple[str, ServeProcess]]:
    """`archipelago serve` whose delivery workers trust the receiver (module-wide: one server)."""
    with serving(tmp_path_factory.mktemp("notify-serve"), hooks.env()) as (address, _http, proc):
        wait_healthy(address, proc)
        yield address, proc


async def test_notify_cli_sets_a_webhook_whose_deliveries_are_signed_with_the_secret_it_printed_once(
        served_notify: tuple[str, ServeProcess], hooks: WebhookReceiver, tmp_path: Path) -> None:
    address, _proc = served_notify
    code_, out = await run("create", "salvo", "--speed", "120", "--server", address)
    assert code_ == 0, out
    game = re.search(r"^game: (\w+)$", out, re.M)
    code = re.search(r"^code: (\w{6})$", out, re.M)
    secret = re.search(r"^secret: (\S+)$", out, re.M)
    assert game and code and secret, out
    gid = game[1]
    seat = tmp_path / "seat.txt"
    seat.write_text(secret[1] + "\n", encoding="utf-8")
    me = ("--secret-file", str(seat), "--server", address)

    # before: every channel off, in words
    code_, out = await run("notify", gid, *me)
    assert code_ == 0, out
    assert re.search(r"^  webhook: +off$", out, re.M) and "kinds this game can notify: game_started, your_turn" in out
    # a kind this game has not: refused as every command prints a refusal, naming the field; nothing set
    code_, out = await run("notify", gid, "--webhook", hooks.url("cli"), "--kinds", "webhook=trade_offer", *me)
    assert code_ == 2 and re.search(r"^error: webhook\.kinds\[0\]: 'trade_offer' is not a notification of a salvo "
                                    r"game .*\(order/invalid\)$", out, re.M), out
    # set: the signing secret once, with how to check a signature (a new secret: the refusal set no URL)
    code_, out = await run("notify", gid, "--webhook", hooks.url("cli"), "--kinds", "webhook=game_started,your_turn",
                           "--language", "he", *me)
    assert code_ == 0, out
    signing = re.search(r"^webhook signing secret \(shown only now: keep it\): (whsec_\S+)$", out, re.M)
    assert signing and SIGNATURE_RECIPE in out, out
    assert re.search(r"^  webhook: +active — 127\.0\.0\.1$", out, re.M) and "kinds: game_started, your_turn" in out
    assert "(their words in Hebrew)" in out and hooks.url("cli") not in out, "the URL is never shown back"
    hooks.set_secret("cli", signing[1])  # (the receiver checks each delivery with it, and refuses a bad one)
    # the same URL again: the same secret, not printed again
    code_, again = await run("notify", gid, "--webhook", hooks.url("cli"), "--kinds",
                             "webhook=game_started,your_turn", "--json", *me)
    assert code_ == 0, again
    shown = json.loads(again)
    assert shown["webhook"]["state"] == "active" and shown["webhook_signing_secret"] == "", shown
    assert shown["webhook"]["kinds"] == ["game_started", "your_turn"] and shown["language"] == "he", shown

    # a second player, the start: game_started and the first round's your_turn arrive, signed
    async with Client(address) as guest, Client(address, secret[1]) as host:
        await guest.join(code[1], "guest")
        await host.start(gid)
        view = await host.view(gid)
    got = await asyncio.to_thread(hooks.wait_for, 2, 30.0, "cli")
    assert [(d.body["kind"], d.body["round"]) for d in got] == [("game_started", 0), ("your_turn", 0)], got
    for d in got:
        assert d.signature_ok and d.verify(signing[1]) == "" and d.answered == 200, d.signature_error
        assert d.body["game_id"] == gid and d.body["game"] == "salvo" and d.body["language"] == "he"
        assert d.delivery_id == d.body["id"] and d.headers["content-type"].startswith("application/json")
    assert got[1].body["title"] == "תורך" and got[1].body["deadline_unix_ms"] == view.deadline_unix_ms
    assert got[0].verify("whsec_not-the-one") == "signature mismatch"

    # shown again: the webhook delivered; then off
    code_, out = await run("notify", gid, *me)
    assert code_ == 0 and re.search(r"^ +last sent: \d{4}-\d\d-\d\d \d\d:\d\d UTC$", out, re.M), out
    code_, out = await run("notify", gid, "--webhook-off", *me)
    assert code_ == 0 and re.search(r"^  webhook: +off$", out, re.M) and "signing secret" not in out, out
