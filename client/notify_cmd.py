"""`archipelago notify GAME_ID`: where a player's notifications of one game go (notify.proto's
GetNotifications / SetNotifications over gRPC), shown in words or changed.

Without an option it shows the settings: each channel's state, kinds, masked target, why it is
disabled, and whether the server sends email. ``--webhook URL`` / ``--webhook-off``, ``--email
ADDRESS`` / ``--email-off``, ``--kinds CHANNEL=kind,kind`` (repeatable) and ``--language en|he``
change them in one SetNotifications call carrying a random idempotency key (a reply lost on the way
is asked again once with the same key: the server answers it as the first, a new webhook secret is
not made twice). A new webhook URL's signing secret is printed once, with how to check a request's
``Archipelago-Signature``. ``--json`` prints the NotificationSettings message in protobuf's JSON
mapping (proto field names), as the JSON door answers it. Imports nothing of the server.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import json_format

from archipelago.v1 import notify_pb2
from client.base import BaseClient
from client.seating import retry_once

CHANNELS = ("web_push", "webhook", "email")  # notify.proto's channels (SetNotificationsRequest's fields)
CHANNEL_NAMES = {"web_push": "web push", "webhook": "webhook", "email": "email"}
LANGUAGES = {"en": "English", "he": "Hebrew"}
STATES = {"off": "off", "active": "active", "pending": "pending (waiting for its confirmation link to be followed)",
          "disabled": "disabled"}
CODE_LEN = 6  # a game's code (create prints it) rather than its id
SIGNATURE_RECIPE = ("to check a request: its header Archipelago-Signature is t=<unix seconds>,v1=<hex>; compute "
                    "HMAC-SHA256 with this secret over \"<t>.<raw body>\" (hex) and compare it with v1, and "
                    "reject a t more than 300 s from your clock (a replay); Archipelago-Delivery is the same on "
                    "every retry of one notification (dedupe on it)")


def parse_kinds(values: Iterable[str]) -> dict[str, list[str]]:
    """``--kinds CHANNEL=kind,kind`` values as {channel: kinds} (the same channel twice: both lists;
    ``CHANNEL=`` alone: the channel's defaults). SystemExit naming the flag for a bad value; the
    kinds themselves are the server's to check (they depend on the game)."""
    out: dict[str, list[str]] = {}
    for value in values:
        channel, eq, kinds = value.partition("=")
        channel = channel.strip().replace("-", "_")
        if not eq or channel not in CHANNELS:
            raise SystemExit(f"--kinds: expected CHANNEL=kind,kind with CHANNEL one of {', '.join(CHANNELS)}, "
                             f"got {value!r}")
        got = out.setdefault(channel, [])
        for kind in (k.strip() for k in kinds.split(",")):
            if kind and kind not in got:
                got.append(kind)
    return out


def settings_request(args: argparse.Namespace, game_id: str,
                     key: str = "") -> notify_pb2.SetNotificationsRequest | None:
    """The SetNotificationsRequest the options ask for (None: nothing to change, only show).
    ``--kinds webhook=…`` alone changes the webhook's kinds and keeps its URL (notify.proto: the URL
    absent), likewise for email; web push's kinds apply to its devices as they are (a device is added
    from a browser)."""
    kinds = parse_kinds(args.kinds or ())
    if args.webhook is not None and args.webhook_off:
        raise SystemExit("--webhook and --webhook-off: give one of them")
    if args.email is not None and args.email_off:
        raise SystemExit("--email and --email-off: give one of them")
    for channel, off in (("webhook", args.webhook_off), ("email", args.email_off)):
        if channel in kinds and off:
            raise SystemExit(f"--kinds {channel}=… and --{channel}-off: give one of them")
    if args.webhook == "":
        raise SystemExit("--webhook: give the https URL to POST to (--webhook-off turns the webhook off)")
    if args.email == "":
        raise SystemExit("--email: give the address (--email-off turns email off)")
    req = notify_pb2.SetNotificationsRequest(game_id=game_id, idempotency_key=key, language=args.language or "")
    changed = bool(args.language)
    if "web_push" in kinds:
        req.web_push.CopyFrom(notify_pb2.WebPushSetting(kinds=kinds["web_push"]))
        changed = True
    channels: list[tuple[str, Any, str, str | None, bool]] = [
        ("webhook", notify_pb2.WebhookSetting, "url", args.webhook, args.webhook_off),
        ("email", notify_pb2.EmailSetting, "address", args.email, args.email_off)]
    for channel, setting, target, given, off in channels:
        if given is not None or off:
            getattr(req, channel).CopyFrom(setting(kinds=kinds.get(channel, []), **{target: "" if off else given}))
            changed = True
        elif channel in kinds:  # (the target absent: it stays, only the kinds change)
            getattr(req, channel).CopyFrom(setting(kinds=kinds[channel]))
            changed = True
    return req if changed else None


def _when(unix_ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(unix_ms / 1000))


def describe_channel(name: str, ch: notify_pb2.ChannelState, target: str = "") -> list[str]:
    """One channel in words: its state, target (masked), kinds, and the failures it had."""
    head = f"  {CHANNEL_NAMES[name] + ':':<10} {STATES.get(ch.state, ch.state or 'off')}"
    if ch.state in ("", "off"):
        return [head]
    lines = [head + (f" — {target}" if target else "")]
    lines.append(f"{'':13}kinds: {', '.join(ch.kinds) or '(the defaults)'}")
    if ch.state == "disabled":
        lines.append(f"{'':13}why: {ch.reason or 'it failed too often'} — set it again to turn it back on")
    elif ch.failures or ch.reason:
        lines.append(f"{'':13}last failure: {ch.reason or '?'}"
                     + (f" ({ch.failures} in a row)" if ch.failures else "")
                     + (f", at {_when(ch.last_failure_unix_ms)}" if ch.last_failure_unix_ms else ""))
    if ch.last_sent_unix_ms:
        lines.append(f"{'':13}last sent: {_when(ch.last_sent_unix_ms)}")
    return lines


def describe(settings: notify_pb2.NotificationSettings, game_id: str) -> list[str]:
    """The settings in words (English), as `archipelago notify` prints them."""
    lang = settings.language or "en"
    lines = [f"notifications of game {game_id} (their words in {LANGUAGES.get(lang, lang)}):"]
    devices = ", ".join(f"{d.service} (device {d.device_id})" for d in settings.web_push_devices)
    lines += describe_channel("web_push", settings.web_push, devices)
    if settings.web_push.state in ("", "off"):
        lines.append(f"{'':13}(a browser adds itself: the web client's Notifications panel)")
    lines += describe_channel("webhook", settings.webhook, settings.webhook_host)
    lines += describe_channel("email", settings.email, settings.email_address)
    if not settings.email_available:
        lines.append(f"{'':13}(this server sends no email: its operator has not configured SMTP)")
    lines.append(f"kinds this game can notify: {', '.join(settings.kinds_available)}")
    return lines


def describe_change(req: notify_pb2.SetNotificationsRequest, settings: notify_pb2.NotificationSettings) -> list[str]:
    """What a change did, said once, before the settings: a new webhook's signing secret (the server
    cannot show it again) and how to check a signature; the confirmation mail; a web push change with
    no device to apply to."""
    lines: list[str] = []
    if req.HasField("webhook") and req.webhook.url:
        if settings.webhook_signing_secret:
            lines.append(f"webhook signing secret (shown only now: keep it): {settings.webhook_signing_secret}")
            lines.append(SIGNATURE_RECIPE)
        else:
            lines.append("webhook: the same URL as before, so the same signing secret as before (set another URL "
                         "for a new one)")
    if req.HasField("email") and req.email.address and settings.email.state == "pending":
        lines.append(f"a confirmation mail was sent to {settings.email_address}: follow its link, and this game's "
                     "notifications come by email")
    if req.HasField("web_push") and settings.web_push.state in ("", "off"):
        lines.append("web push: no device gets notifications yet, so its kinds were not kept (a browser adds "
                     "itself in the web client's Notifications panel)")
    return lines


def as_json(settings: notify_pb2.NotificationSettings) -> str:
    """The NotificationSettings message in protobuf's JSON mapping, proto field names, every field."""
    return json_format.MessageToJson(settings, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True, indent=2, ensure_ascii=False)


async def game_of(c: BaseClient, given: str) -> str:
    """The game's id: ``given`` itself, or, for a 6-character code, the id of the secret's game with
    that code (SystemExit if the secret is of another game)."""
    if len(given) != CODE_LEN:
        return given
    who = await c.rejoin()
    if who.code != given.upper():
        raise SystemExit(f"this secret belongs to game {who.code} ({who.game_id}), not {given}")
    return who.game_id


async def run(c: BaseClient, args: argparse.Namespace) -> int:
    """`archipelago notify` with a client authenticated with the seat's secret."""
    settings_request(args, "")  # (a bad combination of flags is refused before any call)
    game_id = await game_of(c, args.game)
    req = settings_request(args, game_id, secrets.token_urlsafe(18))
    if req is None:
        settings = await c.call("Game", "GetNotifications", notify_pb2.GetNotificationsRequest(game_id=game_id),
                                notify_pb2.NotificationSettings)
        said: list[str] = []
    else:
        change = req
        settings = await retry_once(lambda: c.call("Game", "SetNotifications", change,
                                                   notify_pb2.NotificationSettings))
        said = describe_change(req, settings)
    if args.json:
        print(as_json(settings), flush=True)
        if req is not None and req.HasField("webhook") and settings.webhook_signing_secret:
            print(SIGNATURE_RECIPE, file=sys.stderr, flush=True)
        return 0
    out: Sequence[str] = [*said, *describe(settings, game_id)]
    print("\n".join(out), flush=True)
    return 0


__all__ = ["SIGNATURE_RECIPE", "as_json", "describe", "describe_change", "game_of", "parse_kinds", "run",
           "settings_request"]
