"""The notification settings of a player (GetNotifications / SetNotifications on every door), the
email confirmation and unsubscribe pages, and this gateway's delivery workers (:mod:`services.notify`).

Settings (``cfg``, kept in ``notify:{game}:{seat}``, secret data)::

    {"language": "en",
     "web_push": {"kinds": [...], "devices": [{"id", "endpoint", "p256dh", "auth"}]},
     "webhook": {"kinds": [...], "url": "...", "secret": "..."},
     "email": {"kinds": [...], "address": "...", "confirmed": false}}
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from engine.errors import Conflict, GameOver, InvalidOrder, KeyReused, PermissionDenied
from services.notify import kinds as nk
from services.notify.channels import check_email_address, check_subscription, check_target_url, mask_email
from services.notify.config import NotifyConfig
from services.notify.outbox import Outbox, now_ms
from services.notify.sender import Sender, parse_unsubscribe_token, unsubscribe_token
from services.store import Store

MAX_DEVICES = 5
KEY_TTL_S = 3600
MAX_KEY_LEN = 64


def _device_id(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode()).hexdigest()[:12]


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.hostname}" + (f":{p.port}" if p.port else "")


class NotifyService:
    """Settings, pages and the sender of one gateway process."""

    def __init__(self, store: Store, public_url: str, config: NotifyConfig | None = None) -> None:
        self.store = store
        self.config = config or NotifyConfig.from_env()
        self.public_url = self.config.public_url or public_url
        self.outbox: Outbox = store.outbox
        self.sender = Sender(self.outbox, self.config, public_url=self.public_url,
                             unsubscribe_url=self._unsubscribe_url)
        self._key: bytes | None = None
        self.sending = os.environ.get("ARCHIPELAGO_NOTIFY_SENDERS", "1") not in ("0", "false", "no")

    async def start(self) -> None:
        self._key = await self.store.server_key()
        if self.sending:
            await self.sender.start()
        else:
            await self.sender.prepare()

    async def stop(self) -> None:
        await self.sender.stop()

    def _unsubscribe_url(self, game_id: str, seat: int, address: str) -> str:
        assert self._key is not None
        return f"{self.public_url}/notify/unsubscribe/{unsubscribe_token(self._key, game_id, seat, address)}"

    # ------------------------------------------------------------------ settings
    def answer(self, game: str, cfg: Mapping[str, Any], status: Mapping[str, Mapping[str, Any]],
               new_secret: str = "") -> dict[str, Any]:
        """NotificationSettings as a dict (no secret data but a new webhook's signing secret, once)."""
        assert self.sender.channels is not None

        def state(channel: str) -> dict[str, Any]:
            ch, st = cfg.get(channel), status.get(channel) or {}
            if not ch:
                return {"state": "off", "kinds": [], "reason": "", "failures": 0, "last_sent_unix_ms": 0,
                        "last_failure_unix_ms": 0}
            name = "active"
            if st.get("disabled"):
                name = "disabled"
            elif channel == nk.EMAIL and not ch.get("confirmed"):
                name = "pending"
            return {"state": name, "kinds": list(ch.get("kinds") or nk.DEFAULT_KINDS[channel]),
                    "reason": str(st.get("reason", "")), "failures": int(st.get("failures", 0)),
                    "last_sent_unix_ms": int(st.get("last_sent", 0)),
                    "last_failure_unix_ms": int(st.get("last_failure", 0))}

        push, hook, mail = cfg.get(nk.WEB_PUSH) or {}, cfg.get(nk.WEBHOOK) or {}, cfg.get(nk.EMAIL) or {}
        return {"language": cfg.get("language") or "en", "kinds_available": list(nk.KINDS_OF_GAME.get(game, nk.KINDS)),
                "vapid_public_key": self.sender.channels.vapid_public_key(),
                "web_push": state(nk.WEB_PUSH),
                "web_push_devices": [{"service": _origin(d["endpoint"]), "device_id": d["id"]}
                                     for d in push.get("devices") or []],
                "webhook": state(nk.WEBHOOK), "webhook_host": urlsplit(hook["url"]).hostname or "" if hook else "",
                "webhook_signing_secret": new_secret,
                "email": state(nk.EMAIL), "email_address": mask_email(mail["address"]) if mail else "",
                "email_available": self.config.email_available}

    async def get(self, game_id: str, seat: int, game: str) -> dict[str, Any]:
        cfg, status = await self.outbox.settings(game_id, seat)
        return self.answer(game, cfg, status)

    def _kinds(self, game: str, given: list[str], field: str) -> list[str]:
        allowed = nk.KINDS_OF_GAME.get(game, nk.KINDS)
        for i, k in enumerate(given):
            if k not in allowed:
                raise InvalidOrder(f"{k[:40]!r} is not a notification of a {game} game (one of: "
                                   f"{', '.join(allowed)})", field=f"{field}.kinds[{i}]")
        return list(dict.fromkeys(given))

    def _target(self, cfg: dict[str, Any], reset: dict[str, dict[str, Any]], game: str, req: Mapping[str, Any],
                channel: str, key: str, unset: str) -> tuple[list[str], str]:
        """(kinds, target) of a channel of the request whose target is ``req[key]`` (a webhook's URL, an email
        address). The target "": nothing more to do — left out of the request, the target stays and only
        its kinds change (``unset``: the error when the channel has none); empty, the channel is removed."""
        kinds = self._kinds(game, list(req.get("kinds") or []), channel)
        if key not in req:
            if not cfg.get(channel):
                raise InvalidOrder(unset, field=f"{channel}.{key}")
            cfg[channel] = {**cfg[channel], "kinds": kinds}
            return kinds, ""
        target = str(req.get(key) or "")
        if not target:
            cfg.pop(channel, None)
            reset[channel] = {}
        return kinds, target

    async def set(self, game_id: str, seat: int, game: str, status_of_game: str, req: Mapping[str, Any],
                  *, agent: bool) -> dict[str, Any]:
        """Apply a SetNotificationsRequest (a dict in the proto JSON mapping's snake_case field names)."""
        if agent:
            raise PermissionDenied("only the player's own secret changes where its notifications go",
                                   field="authorization", rule="A90")
        key = str(req.get("idempotency_key") or "")
        if len(key) > MAX_KEY_LEN or not key.isprintable():
            raise InvalidOrder(f"an idempotency key is at most {MAX_KEY_LEN} printable characters",
                               field="idempotency_key", rule="A16")
        body = {k: v for k, v in req.items() if k not in ("idempotency_key", "game_id")}
        fingerprint = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:32]
        marker = self.store.key("notify", "key", game_id, str(seat), hashlib.sha256(key.encode()).hexdigest()[:32])
        if key:
            seen = await self.store.redis.get(marker)
            if seen is not None:
                first = json.loads(seen)
                if first["fingerprint"] != fingerprint:
                    raise KeyReused("this idempotency key was used for other notification settings",
                                    field="idempotency_key", rule="A16")
                return dict(first["answer"])
        if status_of_game == "over":
            raise GameOver("the game is over: it sends no more notifications", field="game_id")
        cfg, status = await self.outbox.settings(game_id, seat)
        cfg = json.loads(json.dumps(cfg))  # (a copy to change)
        reset: dict[str, dict[str, Any]] = {}
        new_secret = ""
        confirm: str = ""
        language = str(req.get("language") or "")
        if language and language not in nk.LANGUAGES:
            raise InvalidOrder(f"a language is one of {', '.join(nk.LANGUAGES)}", field="language")
        if language:
            cfg["language"] = language
        if req.get("web_push") is not None:
            self._set_web_push(cfg, reset, game, dict(req["web_push"]))
        if req.get("webhook") is not None:
            new_secret = self._set_webhook(cfg, reset, game, dict(req["webhook"]))
        if req.get("email") is not None:
            confirm = self._set_email(cfg, reset, status, game, dict(req["email"]))
        await self.outbox.put_settings(game_id, seat, cfg, reset)
        if confirm:
            await self.outbox.put_confirmation(confirm, game_id, seat, cfg[nk.EMAIL]["address"])
            await self._queue_confirmation(game_id, seat, game, cfg, confirm)
        status.update(reset)
        answer = self.answer(game, cfg, status, new_secret)
        if key:  # (first writer wins: a concurrent retry answers what the first one stored)
            await self.store.redis.set(marker, json.dumps({"fingerprint": fingerprint, "answer": answer}),
                                       nx=True, ex=KEY_TTL_S)
            first = json.loads(await self.store.redis.get(marker) or "null") or {"answer": answer}
            return dict(first["answer"])
        return answer

    def _set_web_push(self, cfg: dict[str, Any], reset: dict[str, dict[str, Any]], game: str,
                      wp: Mapping[str, Any]) -> None:
        """The request's ``web_push`` applied to ``cfg`` (the channels to start afresh into ``reset``)."""
        kinds = self._kinds(game, list(wp.get("kinds") or []), "web_push")
        if wp.get("off"):
            cfg.pop(nk.WEB_PUSH, None)
            reset[nk.WEB_PUSH] = {}
        else:
            ch = dict(cfg.get(nk.WEB_PUSH) or {"devices": []})
            ch["kinds"] = kinds
            devices = list(ch.get("devices") or [])
            gone = str(wp.get("remove_endpoint") or "")
            if gone:
                devices = [d for d in devices if d["endpoint"] != gone]
            sub = wp.get("subscription")
            if sub and sub.get("endpoint"):
                endpoint, p256dh, auth = str(sub["endpoint"]), str(sub.get("p256dh", "")), str(sub.get("auth", ""))
                check_subscription(endpoint, p256dh, auth, allow_private=self.config.allow_private,
                                   field="web_push.subscription")
                devices = [d for d in devices if d["endpoint"] != endpoint]
                if len(devices) >= MAX_DEVICES:
                    raise Conflict(f"at most {MAX_DEVICES} devices get web push notifications: remove one first")
                devices.append({"id": _device_id(endpoint), "endpoint": endpoint, "p256dh": p256dh, "auth": auth})
                reset[nk.WEB_PUSH] = {}  # (a device (re)registered: the channel starts afresh)
            ch["devices"] = devices
            if devices:
                cfg[nk.WEB_PUSH] = ch
            else:
                cfg.pop(nk.WEB_PUSH, None)

    def _set_webhook(self, cfg: dict[str, Any], reset: dict[str, dict[str, Any]], game: str,
                     wh: Mapping[str, Any]) -> str:
        """The request's ``webhook`` applied to ``cfg``; the new signing secret, if one was made ("")."""
        new_secret = ""
        kinds, url = self._target(cfg, reset, game, wh, nk.WEBHOOK, "url", "no webhook is set: give its URL")
        if url:
            check_target_url(url, allow_private=self.config.allow_private, field="webhook.url")
            old = cfg.get(nk.WEBHOOK) or {}
            secret = old.get("secret") if old.get("url") == url else None
            if secret is None:
                secret = new_secret = "whsec_" + secrets.token_urlsafe(24)
            cfg[nk.WEBHOOK] = {"kinds": kinds, "url": url, "secret": secret}
            reset[nk.WEBHOOK] = {}  # (set again: enabled again)
        return new_secret

    def _set_email(self, cfg: dict[str, Any], reset: dict[str, dict[str, Any]], status: Mapping[str, Any],
                   game: str, em: Mapping[str, Any]) -> str:
        """The request's ``email`` applied to ``cfg``; the confirmation token to send, if any ("")."""
        confirm = ""
        kinds, address = self._target(cfg, reset, game, em, nk.EMAIL, "address", "no email address is set: give one")
        if address:
            if not self.config.email_available:
                raise Conflict("this server sends no email (its operator has not configured SMTP)")
            address = check_email_address(address, "email.address")
            old = cfg.get(nk.EMAIL) or {}
            same = str(old.get("address", "")).lower() == address.lower()
            cfg[nk.EMAIL] = {"kinds": kinds, "address": address, "confirmed": bool(same and old.get("confirmed"))}
            if not same or status.get(nk.EMAIL, {}).get("disabled"):
                reset[nk.EMAIL] = {}
            if not cfg[nk.EMAIL]["confirmed"] and not same:
                confirm = secrets.token_urlsafe(24)
        return confirm

    async def _queue_confirmation(self, game_id: str, seat: int, game: str, cfg: Mapping[str, Any],
                                  token: str) -> None:
        """The confirmation mail goes through the outbox like any notification (durable, retried)."""
        entry = {"game_id": game_id, "game": game, "seat": seat, "kind": nk.EMAIL_CONFIRM, "round": 0, "key": token[:8],
                 "deadline_ms": 0, "who": "", "at": now_ms(), "address": cfg[nk.EMAIL]["address"],
                 "url": f"{self.public_url}/notify/confirm/{token}?lang={cfg.get('language') or 'en'}",
                 "language": cfg.get("language") or "en"}
        await self.store.redis.xadd(self.outbox.stream, {"e": json.dumps(entry, ensure_ascii=False)})

    # ------------------------------------------------------------------ pages (the links in mails)
    async def confirm(self, token: str) -> tuple[bool, str]:
        """Follow a confirmation link: (confirmed, language). Idempotent (a retried POST, a second click);
        a link for an address the player has since replaced confirms nothing."""
        rec = await self.outbox.confirmation(token)
        if rec is None:
            return False, "en"
        game_id, seat = str(rec["game"]), int(rec["seat"])
        cfg, _ = await self.outbox.settings(game_id, seat)
        mail = cfg.get(nk.EMAIL)
        if not mail or str(mail["address"]).lower() != str(rec["address"]).lower():
            return False, str(cfg.get("language") or "en")
        mail["confirmed"] = True
        await self.outbox.put_settings(game_id, seat, cfg, {nk.EMAIL: {}})
        return True, str(cfg.get("language") or "en")

    async def unsubscribe(self, token: str) -> tuple[bool, str]:
        parsed = parse_unsubscribe_token(token)
        if parsed is None or self._key is None:
            return False, "en"
        game_id, seat, mac = parsed
        cfg, _ = await self.outbox.settings(game_id, seat)
        mail = cfg.get(nk.EMAIL)
        if not mail:
            return True, str(cfg.get("language") or "en")  # (gone already: the same answer)
        good = unsubscribe_token(self._key, game_id, seat, str(mail["address"])).rsplit(".", 1)[1]
        if not hmac.compare_digest(good, mac):
            return False, str(cfg.get("language") or "en")
        cfg.pop(nk.EMAIL)
        await self.outbox.put_settings(game_id, seat, cfg, {nk.EMAIL: {}})
        return True, str(cfg.get("language") or "en")


PAGE_WORDS = {
    "en": {"confirm_q": "Get this game's notifications by email?", "confirm_b": "Confirm",
           "confirmed": "Your address is confirmed: notifications of this game will come by email.",
           "unsub_q": "Stop this game's email notifications?", "unsub_b": "Unsubscribe",
           "unsubscribed": "Done: this game sends you no more email.",
           "bad": "This link is not valid any more (used, expired or replaced)."},
    "he": {"confirm_q": "לקבל את התראות המשחק בדוא\"ל?", "confirm_b": "אישור",
           "confirmed": "הכתובת אושרה: התראות המשחק יגיעו בדוא\"ל.",
           "unsub_q": "להפסיק את התראות הדוא\"ל של המשחק?", "unsub_b": "הסרה",
           "unsubscribed": "בוצע: המשחק לא ישלח לך עוד דוא\"ל.",
           "bad": "הקישור אינו תקף עוד (נוצל, פג או הוחלף)."},
}


def _page(lang: str, text: str, button: str = "", status: int = 200) -> HTMLResponse:
    lang = lang if lang in PAGE_WORDS else "en"
    direction = "rtl" if lang == "he" else "ltr"
    form = (f'<form method="post"><button type="submit">{html.escape(button)}</button></form>' if button else "")
    body = (f'<!doctype html><html lang="{lang}" dir="{direction}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Archipelago</title><link rel="icon" href="/static/img/icon.svg">'
            '<link rel="stylesheet" href="/static/css/app.css"></head>'
            f'<body><main class="notify-page"><h1>Archipelago</h1><p>{html.escape(text)}</p>{form}'
            '<p><a href="/">Archipelago</a></p></main></body></html>')
    return HTMLResponse(body, status_code=status)


def routes(service_of: Callable[[Request], NotifyService]) -> list[Route]:
    """``/notify/confirm/{token}`` and ``/notify/unsubscribe/{token}``: GET shows a page with a button
    (a mail scanner that follows links changes nothing), POST does it (RFC 8058 one-click: a POST of
    ``List-Unsubscribe=One-Click`` unsubscribes)."""

    def lang_of(request: Request) -> str:
        return "he" if request.query_params.get("lang") == "he" else "en"

    def page(act: str, ask: str, button: str, done: str) -> Callable[[Request], Awaitable[Response]]:
        """The page of one token link: GET asks (``ask``, ``button``), POST does ``act`` (a method of
        the service) and says ``done`` (or that the link is bad: 410)."""
        async def answer(request: Request) -> Response:
            svc = service_of(request)
            if request.method == "GET":
                lang = lang_of(request)
                return _page(lang, PAGE_WORDS[lang][ask], PAGE_WORDS[lang][button])
            ok, lang = await getattr(svc, act)(request.path_params["token"])
            w = PAGE_WORDS[lang]
            return _page(lang, w[done] if ok else w["bad"], status=200 if ok else 410)
        return answer

    confirm = page("confirm", "confirm_q", "confirm_b", "confirmed")
    unsubscribe = page("unsubscribe", "unsub_q", "unsub_b", "unsubscribed")
    return [Route("/notify/confirm/{token}", confirm, methods=["GET", "POST"]),
            Route("/notify/unsubscribe/{token}", unsubscribe, methods=["GET", "POST"])]

