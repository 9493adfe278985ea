"""Notifications in the web client (issue 23): the service worker at /sw.js shows a Web Push message as
a notification (in English and in Hebrew, right to left, tagged "<game_id>:<kind>:<round>"), the game
screen's Notifications panel shows each channel's state as the server says it and changes it (Web Push
on and off, a webhook with its signing secret shown once, an email address confirmed by its link, the
kinds of each), the one-time offer after a game starts, and a page open but hidden telling its player
of its turn itself — replaced, not doubled, by the push for the same thing.

The browser vendor's push service cannot be reached here (and Chromium refuses the Push API in a
Playwright context, which is incognito: "Chrome currently does not support the Push API in incognito
mode"), so the pages below get a stand-in for ``PushManager.subscribe`` (an init script) that answers
a subscription of the test's own local push service (tests/notify/receivers.py: it decrypts what the
server sends it). A push reaches the service worker through the DevTools protocol
(``ServiceWorker.deliverPushMessage``), and the test reads what it showed with
``registration.getNotifications()``. One test keeps the real ``subscribe`` and checks that its refusal
is told in words.

This module serves its own cluster (the session's has no SMTP and refuses loopback push endpoints and
webhooks): email to a local SMTP server, pushes to the local push service, webhooks to a local HTTPS
receiver.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, expect

from services.notify import kinds
from tests.e2e.serving import serving, wait_healthy
from tests.notify.receivers import BrowserSubscription, PushService, SmtpServer, WebhookReceiver
from tests.web.conftest import ARTIFACTS, VIEWPORTS, Served, Watched, post, shot, until, words

pytestmark = pytest.mark.e2e

INCOGNITO = "does not support the Push API in incognito mode"  # Chromium's own console error



def said(lang: str, key: str, **params: Any) -> str:
    text = words(lang)[key]
    for k, v in params.items():
        text = text.replace(f"{{{k}}}", str(v))
    return text


# ------------------------------------------------------------------------------------- the cluster


class Receivers:
    def __init__(self, push: PushService, hooks: WebhookReceiver, smtp: SmtpServer) -> None:
        self.push, self.hooks, self.smtp = push, hooks, smtp


@pytest.fixture(scope="module")
def receivers() -> Iterator[Receivers]:
    with PushService() as push, WebhookReceiver() as hooks, SmtpServer() as smtp:
        yield Receivers(push, hooks, smtp)


@pytest.fixture(scope="module")
def notified(tmp_path_factory: pytest.TempPathFactory, receivers: Receivers) -> Iterator[Served]:
    """`archipelago serve` that delivers to the local receivers (loopback allowed, their CA trusted)."""
    env = {**receivers.push.env(), **receivers.hooks.env(), **receivers.smtp.env(),
           "ARCHIPELAGO_NOTIFY_BACKOFF_S": "0.2"}
    with serving(tmp_path_factory.mktemp("web-notify"), env) as (grpc, url, proc):
        wait_healthy(grpc, proc, timeout_s=180)
        yield Served(url, grpc, proc)


@pytest.fixture
def device(browser: Browser, notified: Served, watched: Watched) -> Iterator[Callable[..., BrowserContext]]:
    """device(viewport, locale) → a browser context on this module's server, notifications allowed."""

    def make(viewport: str = "laptop", locale: str = "en-US") -> BrowserContext:
        phone = viewport.startswith("phone")
        ctx = browser.new_context(viewport=VIEWPORTS[viewport], locale=locale, base_url=notified.url,
                                  has_touch=phone, is_mobile=phone)
        ctx.set_default_timeout(20_000)
        ctx.grant_permissions(["notifications"], origin=notified.url)
        watched.contexts.append(ctx)
        return ctx

    yield make
    watched.close_all()


ARCMAGE_DECKS = {"arcmage": {"decks": [{"built_in": "Brothers in Arms"}, {"built_in": "Brothers in Arms"}]}}


def api_game(url: str, game: str = "salvo") -> dict[str, Any]:
    """ann (this page's player) and bob, started; 10-minute rounds (no deadline warning within a test)."""
    made = post(url, "Lobby/CreateGame", {"game": game, "seats": 2, "nickname": "ann", "deadline_seconds": 600,
                                          **(ARCMAGE_DECKS if game == "arcmage" else {})})
    bob = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "ann": made["secret"], "bob": bob["secret"], "kind": game,
            "seats": {"ann": 0, "bob": 1}}


def place_at_random(url: str, game: dict[str, Any], who: str) -> None:
    """Round 0 of Salvo: a random fleet (once every connected player has one, round 1 opens). ``who``'s
    page must have its Watch stream open first (A17: with nobody connected a round waits for its
    deadline, 10 minutes here): waited for here."""
    until(lambda: post(url, "Game/GetView", {"game_id": game["id"]}, game[who])["players"][game["seats"][who]]
          .get("connected"), f"{who}'s page connected (its Watch stream open)")
    v = post(url, "Game/GetView", {"game_id": game["id"]}, game[who])
    try:
        post(url, "Game/SubmitOrders", {"game_id": game["id"], "version": v["version"],
                                        "salvo": {"random_placement": True}}, game[who])
    except urllib.error.HTTPError as exc:
        with exc:
            raise AssertionError(f"{who}'s placement refused: {exc.read().decode()}") from exc


def settings(url: str, game: dict[str, Any]) -> dict[str, Any]:
    got: dict[str, Any] = post(url, "Game/GetNotifications", {"game_id": game["id"]}, game["ann"])
    return got


def seat(ctx: BrowserContext, game: dict[str, Any]) -> None:
    record = {game["id"]: {"secret": game["ann"], "seat": 0, "game": game["kind"]}}
    ctx.add_init_script(f"if (!localStorage.getItem('archipelago.seats')) "
                        f"localStorage.setItem('archipelago.seats', {json.dumps(json.dumps(record))});")


# The browser's push subscription, as the local push service made it (the vendor's cannot be reached).
STAND_IN = """
(() => {
  const FAKE = %s;
  let current = null;
  const make = (key) => ({
    endpoint: FAKE.endpoint, expirationTime: null, options: { userVisibleOnly: true, applicationServerKey: key },
    toJSON() {
      return { endpoint: FAKE.endpoint, expirationTime: null, keys: { p256dh: FAKE.p256dh, auth: FAKE.auth } };
    },
    unsubscribe() { current = null; return Promise.resolve(true); },
  });
  PushManager.prototype.subscribe = function (options) {
    const key = Array.from(new Uint8Array(options.applicationServerKey));
    window.__subscribeOptions = { userVisibleOnly: options.userVisibleOnly, key };
    current = make(new Uint8Array(options.applicationServerKey).buffer);
    return Promise.resolve(current);
  };
  PushManager.prototype.getSubscription = function () { return Promise.resolve(current); };
})();
"""

# A page whose visibility the test decides (window.__hidden), as a phone's background tab.
HIDDEN = """
Object.defineProperty(document, 'visibilityState',
                      { configurable: true, get: () => (window.__hidden ? 'hidden' : 'visible') });
Object.defineProperty(document, 'hidden', { configurable: true, get: () => Boolean(window.__hidden) });
"""


def stand_in(ctx: BrowserContext, sub: BrowserSubscription) -> None:
    ctx.add_init_script(STAND_IN % json.dumps({"endpoint": sub.endpoint, "p256dh": sub.p256dh, "auth": sub.auth}))


def open_game(ctx: BrowserContext, watched: Watched, game: dict[str, Any]) -> Page:
    page = watched.watch(ctx.new_page())
    page.goto(f"/game/{game['id']}")
    page.wait_for_selector("#game-area:not([hidden])")
    return page


def b64url_bytes(value: str) -> list[int]:
    return list(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))


# ------------------------------------------------------------------------ the service worker's side

NOTES = """navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) => ns.map((n) => ({
  title: n.title, body: n.body, tag: n.tag, lang: n.lang, dir: n.dir, icon: n.icon, url: n.data && n.data.url })))"""


def notifications(page: Page, tag: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = page.evaluate(NOTES)
    return [n for n in got if n["tag"] == tag]


class Worker:
    """The page's service worker as the DevTools protocol sees it."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.events: list[dict[str, Any]] = []
        self.cdp: CDPSession = page.context.new_cdp_session(page)
        self.cdp.on("ServiceWorker.workerRegistrationUpdated", lambda p: self.events.append(p))
        self.cdp.send("ServiceWorker.enable")

    def registration_id(self, origin: str) -> str:
        # ``ready`` resolves while the worker may still be "activating"; a push the DevTools protocol
        # hands to a registration whose worker is not yet activated can be dropped without a word
        # (seen once on a loaded machine), so wait for "activated" first.
        until(lambda: self.page.evaluate("navigator.serviceWorker.ready.then((r) => r.active && r.active.state)")
              == "activated", "the service worker activated")

        def find() -> str:
            self.page.evaluate("0")  # (a round trip: Playwright hands over the protocol's events meanwhile)
            for e in reversed(self.events):
                for r in e["registrations"]:
                    if r["scopeURL"] == f"{origin}/" and not r["isDeleted"]:
                        return str(r["registrationId"])
            return ""

        rid: str = until(find, "the service worker's registration in the DevTools protocol")
        return rid

    def push(self, origin: str, payload: dict[str, Any]) -> None:
        self.cdp.send("ServiceWorker.deliverPushMessage",
                      {"origin": origin, "registrationId": self.registration_id(origin), "data": json.dumps(payload)})

    def push_until(self, origin: str, payload: dict[str, Any], check: Callable[[], Any], what: str) -> Any:
        """Deliver ``payload`` and wait until ``check()`` holds; if it does not within 10 s, deliver it
        once more (the DevTools protocol's delivery has no answer to say it reached the worker, and a
        loaded CI machine lost one once: a second delivery of the same push replaces, by its tag, what
        the first showed, so it cannot make a wrong result right)."""
        self.push(origin, payload)
        try:
            return until(check, what, timeout_s=10)
        except AssertionError:
            self.push(origin, payload)
            return until(check, f"{what} (delivered twice)")


# ------------------------------------------------------------------------------------------- tests


def test_the_pages_words_for_a_notification_are_the_servers() -> None:
    """The page's own notifications (a hidden page) say what the server's push would (kinds.py)."""
    for lang in kinds.LANGUAGES:
        w = words(lang)
        for kind in (kinds.YOUR_TURN, kinds.YOUR_DECISION):
            assert (w[f"notify.push.{kind}.title"], w[f"notify.push.{kind}.body"]) == kinds.WORDS[lang][kind]
        for game, name in kinds.GAME_NAMES[lang].items():
            assert w[f"notify.game.{game}"] == name
        for kind in kinds.KINDS:
            assert w[f"notify.kind.{kind}"], (lang, kind)


def test_sw_js_is_served_at_the_root_as_a_script_not_cached_and_the_policy_allows_it(notified: Served) -> None:
    with urllib.request.urlopen(f"{notified.url}/sw.js", timeout=10) as resp:
        body = resp.read().decode()
        headers = {k.lower(): v for k, v in resp.headers.items()}
    assert headers["content-type"].startswith("text/javascript")
    assert headers["cache-control"] == "no-cache"
    policy = dict((p.split()[0], p.split()[1:]) for p in headers["content-security-policy"].split(";") if p.strip())
    assert policy["worker-src"] == ["'self'"]
    assert "addEventListener('push'" in body and "addEventListener('notificationclick'" in body


@pytest.mark.parametrize(("lang", "locale", "viewport"), [("en", "en-US", "laptop"), ("he", "he-IL", "phone")])
def test_the_offer_turns_web_push_on_and_a_push_shows_its_notification_in_the_players_language(
        device: Callable[..., BrowserContext], notified: Served, receivers: Receivers, watched: Watched,
        lang: str, locale: str, viewport: str) -> None:
    url = notified.url
    game = api_game(url)
    vapid = settings(url, game)["vapid_public_key"]
    assert vapid, "the server has a VAPID key"
    sub = receivers.push.subscription(application_server_key=vapid)
    ctx = device(viewport, locale)
    seat(ctx, game)
    stand_in(ctx, sub)
    page = open_game(ctx, watched, game)
    worker = Worker(page)

    # The offer, once the game runs: "Get notified when it is your turn?" → Turn on
    offer = page.locator("#notify-offer")
    expect(offer).to_be_visible()
    expect(offer.locator("h3")).to_have_text(said(lang, "notify.offer.title"))
    page.click("#notify-offer-on")
    expect(offer).to_be_hidden()
    assert page.evaluate("localStorage.getItem('archipelago.notify.offer')") == "on"
    asked = page.evaluate("window.__subscribeOptions")
    assert asked == {"userVisibleOnly": True, "key": b64url_bytes(vapid)}, "subscribed with the server's VAPID key"
    got = until(lambda: settings(url, game)["web_push"]["state"] == "active" and settings(url, game), "web push on")
    assert len(got["web_push_devices"]) == 1 and got["language"] == lang

    # A push, as the server sends it (kinds.payload), delivered to the service worker
    deadline = 1_900_000_000_000
    payload = kinds.payload(delivery_id="d1", kind=kinds.YOUR_TURN, game_id=game["id"], game="salvo", round_=3,
                            url=f"{url}/game/{game['id']}", deadline_ms=deadline, at_ms=deadline - 600_000,
                            language=lang)
    tag = f"{game['id']}:your_turn:3"
    shown = worker.push_until(url, payload, lambda: notifications(page, tag), "the service worker's notification")
    title, body = kinds.WORDS[lang][kinds.YOUR_TURN]
    assert shown == [{"title": title, "body": body.format(game=kinds.GAME_NAMES[lang]["salvo"], round=3,
                                                          when=kinds.hhmm_utc(deadline)),
                      "tag": tag, "lang": lang, "dir": "rtl" if lang == "he" else "ltr",
                      "icon": f"{url}/static/img/icon.svg", "url": f"{url}/game/{game['id']}"}]
    # the same thing again (a retry, another delivery id): it replaces, never doubles
    worker.push_until(url, {**payload, "id": "d2", "body": "again"},
                      lambda: [n["body"] for n in notifications(page, tag)] == ["again"],
                      "the second push replaced the first")

    # The panel says so, in words
    page.click("#notify-open")
    panel = page.locator("#notify")
    expect(panel).to_be_visible()
    expect(panel.locator("#notify-push-state")).to_have_text(said(lang, "notify.push.on_device_one"))
    expect(panel.locator("#notify-push-on")).to_be_hidden()  # (this browser is the device)
    expect(panel.locator("#notify-push-off")).to_be_visible()
    panel.scroll_into_view_if_needed()
    shot(page, f"notify-push-{lang}-{viewport}")


@pytest.mark.parametrize(("lang", "locale", "viewport"), [("en", "en-US", "laptop"), ("he", "he-IL", "phone")])
def test_the_panel_shows_each_channels_state_from_the_server_and_changes_it(
        device: Callable[..., BrowserContext], notified: Served, receivers: Receivers, watched: Watched,
        lang: str, locale: str, viewport: str) -> None:
    url = notified.url
    game = api_game(url)
    sub = receivers.push.subscription(application_server_key=settings(url, game)["vapid_public_key"])
    ctx = device(viewport, locale)
    seat(ctx, game)
    stand_in(ctx, sub)
    page = open_game(ctx, watched, game)

    # "Not now" is remembered: no offer after a reload
    expect(page.locator("#notify-offer")).to_be_visible()
    page.click("#notify-offer-later")
    expect(page.locator("#notify-offer")).to_be_hidden()
    page.reload()
    page.wait_for_selector("#game-area:not([hidden])")
    expect(page.locator("#notify-open")).to_be_visible()
    expect(page.locator("#notify-offer")).to_be_hidden()

    page.click("#notify-open")
    panel = page.locator("#notify")
    expect(panel.locator("#notify-title")).to_have_text(said(lang, "notify.title"))
    off = said(lang, "notify.state.off")
    expect(panel.locator("#notify-push-state")).to_have_text(off)
    expect(panel.locator("#notify-webhook-state")).to_have_text(off)
    expect(panel.locator("#notify-email-state")).to_have_text(off)
    available = settings(url, game)["kinds_available"]
    assert available == list(kinds.KINDS_OF_GAME["salvo"])
    expect(panel.locator("#notify-push-kinds input[type=checkbox]:checked")).to_have_count(len(available))
    expect(panel.locator("#notify-push-kinds label")).to_have_text([said(lang, f"notify.kind.{k}") for k in available])

    # Web Push on, from the panel; then one kind fewer
    panel.locator("#notify-push-on").click()
    expect(panel.locator("#notify-push-state")).to_have_text(said(lang, "notify.push.on_device_one"))
    panel.locator("#notify-push-kinds input[data-kind='private_chat']").uncheck()
    until(lambda: settings(url, game)["web_push"]["kinds"] == [k for k in available if k != "private_chat"],
          "the server took the kinds")
    expect(panel.locator("#notify-status")).to_have_text(said(lang, "notify.saved"))

    # A webhook the server refuses: the refusal in words, next to it
    watched.allowed += ["HTTP 400: POST /v1/Game/SetNotifications".replace("POST ", f"POST {url}"),
                        "status of 400 (Bad Request)"]  # (this refusal, on purpose)
    panel.locator("#notify-webhook-url").fill("ftp://127.0.0.1/hook")
    panel.locator("#notify-webhook-set").click()
    refusal = panel.locator("#notify-webhook .notify-actions + .error")
    expect(refusal).to_contain_text(said(lang, "error.order/invalid@webhook"))
    # …and one it takes: the signing secret, shown once
    name = f"ann-{lang}"
    panel.locator("#notify-webhook-url").fill(receivers.hooks.url(name))
    panel.locator("#notify-webhook-kinds input[data-kind='game_started']").uncheck()
    panel.locator("#notify-webhook-set").click()
    expect(refusal).to_have_count(0)
    expect(panel.locator("#notify-secret-box")).to_be_visible()
    expect(panel.locator("#notify-secret-hint")).to_have_text(said(lang, "notify.webhook.secret_hint"))
    secret = panel.locator("#notify-secret").input_value()
    assert len(secret) >= 16
    now = settings(url, game)
    assert now["webhook"]["state"] == "active" and now["webhook_signing_secret"] == ""
    assert now["webhook"]["kinds"] == [k for k in available if k != "game_started"]
    host = now["webhook_host"]
    expect(panel.locator("#notify-webhook-state")).to_have_text(said(lang, "notify.webhook.to", host=host))

    # Email: pending until the link mailed is followed, then on
    panel.locator("#notify-email-address").fill(f"ann-{lang}@example.com")
    panel.locator("#notify-email-set").click()
    masked = until(lambda: settings(url, game)["email_address"], "the masked address")
    assert "ann-" not in masked and masked.endswith("@example.com")
    expect(panel.locator("#notify-email-state")).to_have_text(said(lang, "notify.email.to_pending", address=masked))
    mail = receivers.smtp.wait_for(1, timeout=20, to=f"ann-{lang}@example.com")[0]
    link = re.search(r"https?://\S+/notify/confirm/\S+", mail.text())
    assert link, mail.text()
    # the player follows the link (a page with a button; not watched: the page has no icon link, and
    # the browser asks for /favicon.ico, a 404 that is no fault of the game page)
    confirming = ctx.new_page()
    confirming.goto(link.group(0))
    confirming.click("form button")
    expect(confirming.locator("form")).to_have_count(0)  # (the answer: confirmed, no button)
    expect(confirming.locator("html")).to_have_attribute("lang", lang)
    confirming.close()
    page.click("#notify-close")
    page.click("#notify-open")  # (the panel reads the settings again when it opens)
    expect(panel.locator("#notify-email-state")).to_have_text(said(lang, "notify.email.to_active", address=masked))

    # A round opens: the webhook gets it, signed with the secret the panel showed
    place_at_random(url, game, "ann")  # (bob has no stream open: ann alone, done, closes round 0)
    hook = receivers.hooks.wait_for(1, timeout=20, name=name)[0]
    assert hook.verify(secret) == "", "signed with the secret shown once"
    assert hook.body["kind"] == "your_turn" and hook.body["language"] == lang

    panel.scroll_into_view_if_needed()
    shot(page, f"notify-panel-{lang}-{viewport}")  # what the screen shows
    page.screenshot(path=str(ARTIFACTS / f"notify-panel-{lang}-{viewport}-whole.png"), full_page=True)
    for part in ("webhook", "email"):  # (each channel as the screen shows it, under the status strip)
        page.evaluate(f"document.getElementById('notify-{part}').scrollIntoView({{block: 'start'}})")
        shot(page, f"notify-panel-{lang}-{viewport}-{part}")

    # Off again: the webhook removed, Web Push off
    panel.locator("#notify-secret-hide").click()
    expect(panel.locator("#notify-secret-box")).to_be_hidden()
    panel.locator("#notify-webhook-remove").click()
    expect(panel.locator("#notify-webhook-state")).to_have_text(off)
    panel.locator("#notify-push-off").click()
    expect(panel.locator("#notify-push-state")).to_have_text(off)
    final = settings(url, game)
    assert final["webhook"]["state"] == "off" and final["web_push"]["state"] == "off"
    assert final["web_push_devices"] == [] and final["email"]["state"] == "active"

    # The page's language changes: the panel says so in the new one, and that the notifications still
    # come in the old one until switched
    other = "he" if lang == "en" else "en"
    expect(panel.locator("#notify-lang")).to_have_text(said(lang, "notify.language"))
    page.select_option("#lang", other)
    expect(panel.locator("#notify-title")).to_have_text(said(other, "notify.title"))
    expect(panel.locator("#notify-lang")).to_have_text(said(other, "notify.language_other"))
    panel.locator("#notify-lang-switch").click()
    expect(panel.locator("#notify-lang")).to_have_text(said(other, "notify.language"))
    assert settings(url, game)["language"] == other
    expect(panel.locator("#notify-lang-switch")).to_be_hidden()


@pytest.mark.parametrize(("lang", "locale"), [("en", "en-US"), ("he", "he-IL")])
def test_a_hidden_page_tells_its_player_the_round_opened_and_the_push_for_it_replaces_that(
        device: Callable[..., BrowserContext], notified: Served, receivers: Receivers, watched: Watched,
        lang: str, locale: str) -> None:
    url = notified.url
    game = api_game(url)
    sub = receivers.push.subscription(application_server_key=settings(url, game)["vapid_public_key"])
    ctx = device("phone", locale)
    seat(ctx, game)
    stand_in(ctx, sub)
    ctx.add_init_script(HIDDEN)
    page = open_game(ctx, watched, game)
    worker = Worker(page)
    page.click("#notify-open")
    page.locator("#notify-push-on").click()
    expect(page.locator("#notify-push-state")).to_have_text(said(lang, "notify.push.on_device_one"))

    # Hidden (a background tab): round 0 done, round 1 opens
    page.evaluate("window.__hidden = true")
    place_at_random(url, game, "ann")  # (bob has no stream open: ann alone, done, closes round 0)
    tag = f"{game['id']}:your_turn:1"
    try:
        mine = until(lambda: notifications(page, tag), "the hidden page's own notification", timeout_s=60)
    except AssertionError as exc:  # (what the page and the server were in, for whoever reads the failure)
        state = page.evaluate("""navigator.serviceWorker.getRegistration().then((r) => ({
            visibility: document.visibilityState, permission: Notification.permission,
            worker: r ? (r.active ? r.active.state : r.installing ? 'installing' : r.waiting ? 'waiting' : 'none')
                      : 'no registration',
            header: (document.querySelector('header') || document.body).innerText.slice(0, 300) }))""")
        server = post(url, "Game/GetView", {"game_id": game["id"]}, game["ann"])
        raise AssertionError(f"{exc}; page: {state}; server: round {server.get('round')}, "
                             f"status {server.get('status')}") from None
    view = post(url, "Game/GetView", {"game_id": game["id"]}, game["ann"])
    assert view["round"] == 1
    title, body = kinds.WORDS[lang][kinds.YOUR_TURN]
    expected_body = body.format(game=kinds.GAME_NAMES[lang]["salvo"], round=1,
                                when=kinds.hhmm_utc(int(view["deadline_unix_ms"])))
    direction = "rtl" if lang == "he" else "ltr"
    assert [(n["title"], n["body"], n["dir"]) for n in mine] == [(title, expected_body, direction)]

    # The server's push for the same thing (decrypted by the local push service) replaces it
    pushed = receivers.push.received.wait_until(
        lambda items: any(d.subscription_id == sub.id and d.payload and d.payload.get("kind") == "your_turn"
                          for d in items), timeout=20, what="the server's your_turn push")
    payload = next(d.payload for d in pushed if d.subscription_id == sub.id and d.payload
                   and d.payload.get("kind") == "your_turn")
    assert payload["round"] == 1 and payload["language"] == lang and payload["game_id"] == game["id"]
    worker.push_until(url, {**payload, "body": f"{payload['body']} (push)"},
                      lambda: [n["body"] for n in notifications(page, tag)] == [f"{payload['body']} (push)"],
                      "the push replaced the page's notification: one, not two")
    assert payload["body"] == expected_body, "the page and the server say the same"


@pytest.mark.parametrize(("game", "lang", "locale"), [("archipelago", "he", "he-IL"), ("arcmage", "en", "en-US")])
def test_every_games_screen_has_the_panel_with_that_games_kinds(
        device: Callable[..., BrowserContext], notified: Served, watched: Watched, game: str, lang: str,
        locale: str) -> None:
    made = api_game(notified.url, game)
    ctx = device("phone", locale)
    seat(ctx, made)
    page = open_game(ctx, watched, made)
    expect(page.locator("#notify-offer")).to_be_visible()
    page.click("#notify-open")
    expect(page.locator("#notify-open")).to_have_attribute("aria-expanded", "true")
    available = settings(notified.url, made)["kinds_available"]
    assert available == list(kinds.KINDS_OF_GAME[game])
    for channel in ("push", "webhook", "email"):
        expect(page.locator(f"#notify-{channel}-kinds label")).to_have_text(
            [said(lang, f"notify.kind.{k}") for k in available])
    expect(page.locator("#notify-email-kinds input:checked")).to_have_count(
        len([k for k in available if k in kinds.DEFAULT_KINDS[kinds.EMAIL]]))
    page.click("#notify-close")
    expect(page.locator("#notify")).to_be_hidden()
    shot(page, f"notify-offer-{game}-{lang}-phone")


def test_without_a_push_service_the_page_says_so_in_words_and_keeps_its_service_worker(
        device: Callable[..., BrowserContext], notified: Served, watched: Watched) -> None:
    """The real PushManager.subscribe of this Chromium (incognito, no vendor service): refused."""
    watched.allowed.append(INCOGNITO)
    game = api_game(notified.url)
    ctx = device()
    seat(ctx, game)
    page = open_game(ctx, watched, game)
    page.click("#notify-open")
    page.locator("#notify-push-on").click()
    failed = said("en", "notify.push.failed", reason="§").split("§")[0]
    expect(page.locator("#notify-push .notify-actions + .error")).to_contain_text(failed)
    assert page.evaluate("navigator.serviceWorker.getRegistration().then((r) => Boolean(r && r.active))")
    assert settings(notified.url, game)["web_push"]["state"] == "off"
