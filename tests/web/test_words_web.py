"""Errors a player reads (issue 22): every error code each screen can cause — the home page (open,
join), the lobby (start), an Archipelago round (Done, chat), a Salvo round (Done), an Arcmage turn
(pass) — answered by the server's error shape (Playwright's route stands in for the server, so that
each code comes exactly as the gateway sends it: {code, field, rule, message}), is shown as a
sentence in the page's language: what was refused (the code's sentence), about which of the
player's own units / squares / cards (the field read through the request the page sent), the rule's
short title with its id linked to /rules/<game>#<id>, and the server's reason (in Hebrew too, in a
left-to-right isolate) — never an internal id. Then the pages that say where the player is: no
such game, no seat on this device, a bad rejoin link, no such page; and "changed since sent".

The expected sentences are read from the page's own translation files (gateway/static/i18n), so a
reworded sentence does not break the test, and a sentence missing from a language does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from tests.web.conftest import OpenPage, Served, Watched, create_game, post, shot, words

pytestmark = pytest.mark.e2e

HEX_ID = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b")
GAME_OF = {"A": "archipelago", "S": "salvo", "M": "arcmage"}
FAKE_ID = "3fa9c2d1e4b5a6f7"  # an id of the shape the server's are (a game id here): never shown



@dataclass
class Refusal:
    """One error as the gateway sends it (gateway/errors.py to_dict) and what the page must say."""

    code: str
    http: int
    field: str = ""
    rule: str = ""
    reason: str = ""
    kind: str = ""  # the request's kind when the code's sentence depends on it: orders | action | standing
    shown: str = ""  # a part of the reason the page must keep (in both languages)
    about: tuple[str, dict[str, str]] | None = None  # i18n key + params of "about which of mine"

    def body(self) -> dict[str, Any]:
        message = ": ".join([p for p in (self.field, f"rule {self.rule}" if self.rule else "") if p] + [self.reason])
        return {
            "error": {
                "code": self.code,
                "field": self.field,
                "rule": self.rule,
                "message": message,
                "status": "",
                "http_status": self.http,
                "retry": False,
            }
        }

    def what_key(self, lang: str) -> str:
        """The key of the code's sentence the page picks (by field, then by request kind, then code)."""
        field = re.split(r"[.\[]", self.field)[0]
        for k in (
            f"error.{self.code}@{field}" if field else "",
            f"error.{self.code}#{self.kind}" if self.kind else "",
            f"error.{self.code}",
        ):
            if k and k in words(lang):
                return k
        raise AssertionError(f"no sentence for {self.code} in {lang}")


@cache
def rule_anchors(url: str, game: str) -> set[str]:
    """The rule ids the gateway's rules page of ``game`` anchors (where a rule link lands)."""
    import urllib.request

    with urllib.request.urlopen(f"{url}/rules/{game}", timeout=20) as r:
        return set(re.findall(r'id="([ASM][0-9]+)"', r.read().decode()))


def answer(page: Page, rpc: str, refusal: Refusal) -> None:
    """From now on the server's answer to ``rpc`` is this refusal."""
    page.unroute(f"**/v1/{rpc}")

    def handle(route: Route) -> None:
        route.fulfill(status=refusal.http, content_type="application/json", body=json.dumps(refusal.body()))

    page.route(f"**/v1/{rpc}", handle)


def fill(template: str, params: dict[str, str]) -> str:
    for k, v in params.items():
        template = template.replace("{" + k + "}", v)
    return template


def check(
    page: Page,
    box: Locator,
    r: Refusal,
    langs: tuple[str, ...] = ("en", "he"),
    ids: tuple[str, ...] = (),
    switch: bool = True,
) -> None:
    """The refusal on show in ``box``, in each language: its sentence, about what, its rule linked,
    its reason, no internal id. ``switch``: the language is changed under the shown error (a game
    page says it again in the new one); else the page is in ``langs[0]`` already."""
    for lang in langs:
        if switch:
            page.select_option("#lang", lang)
            expect(page.locator("html")).to_have_attribute("lang", lang)  # (the page redrawn in it)
        w = words(lang)
        expect(box).to_have_attribute("data-code", r.code)
        expect(box.locator(".err-what")).to_contain_text(w[r.what_key(lang)])
        if r.about:
            expect(box.locator(".err-what")).to_contain_text(fill(w[r.about[0]], r.about[1]))
        if r.rule:
            link = box.locator("a.rule-link")
            expect(link).to_have_attribute("href", f"/rules/{GAME_OF[r.rule[0]]}#{r.rule}")
            expect(link).to_contain_text(r.rule)
            expect(link).to_contain_text(w[f"rule.{r.rule}"])
            base = re.match(r"https?://[^/]+", page.url)
            assert base and r.rule in rule_anchors(base.group(0), GAME_OF[r.rule[0]]), f"no anchor {r.rule}"
        if r.reason:
            reason = box.locator(".err-reason")
            expect(reason).to_contain_text(r.shown or r.reason, ignore_case=True)
            if lang == "he":  # the server's English reason, kept, left to right inside the Hebrew sentence
                expect(reason.locator("bdi")).to_have_attribute("dir", "ltr")
        text = box.inner_text()
        assert not HEX_ID.search(text), f"an internal id in {text!r}"
        for i in ids:
            assert not re.search(rf"\b{re.escape(i)}\b", text), f"{i} in {text!r}"
    if switch:
        page.select_option("#lang", "en")
        expect(page.locator("html")).to_have_attribute("lang", "en")


# ------------------------------------------------------------------------------------ home and lobby

HOME = [  # (button, rpc, refusal): the lobby's requests (their sentences: field, then kind "lobby")
    (
        "#join",
        "Lobby/JoinGame",
        Refusal("order/invalid", 400, "nickname", "A2", "a nickname is 1–24 printable characters"),
    ),
    (
        "#join",
        "Lobby/JoinGame",
        Refusal(
            "lobby/already_exists",
            409,
            "nickname",
            "A2",
            f"the nickname 'ann' is taken in game {FAKE_ID}",
            shown="the nickname 'ann' is taken in",
        ),
    ),
    ("#join", "Lobby/JoinGame", Refusal("lookup/not_found", 404, "code", "A2", "no game with code 'ZZZZZ2'")),
    (
        "#join",
        "Lobby/JoinGame",
        Refusal("lobby/conflict", 409, "code", "A4", f"game {FAKE_ID} is full", shown="the game is full"),
    ),
    ("#open", "Lobby/CreateGame", Refusal("order/invalid", 400, "seats", "A1", "seats must be 2–8")),
    (
        "#open",
        "Lobby/CreateGame",
        Refusal("client/throttled", 429, "", "", "too many lobby calls from here: retry in 7 s"),
    ),
    ("#open", "Lobby/CreateGame", Refusal("request/too_large", 413, "body", "", "the request is over 262144 bytes")),
    (
        "#open",
        "Lobby/CreateGame",
        Refusal("request/key_reused", 422, "request_id", "", "this request id was used for another request"),
    ),
    (
        "#open",
        "Lobby/CreateGame",
        Refusal("server/unavailable", 503, "", "", "the game store does not answer right now"),
    ),
    ("#open", "Lobby/CreateGame", Refusal("server/internal", 500, "", "", "internal error (KeyError)")),
]
for _, _, _r in HOME:
    _r.kind = "lobby"


def test_a_reason_loses_every_unit_id_even_one_of_digits_alone(open_page: OpenPage) -> None:
    """A unit id is 10 hex digits, now and then with no letter among them: named as the player knows the
    unit, or dropped — never shown (the page's own cleaning of a server reason, js/errors.js)."""
    page = open_page()
    page.goto("/")
    known = {"5388884695": "your Dvora at (19, 10)", "1234567890": "your Sergeant at (19, 11)"}
    cleaned = page.evaluate("""async ([reason, known]) => {
        const { cleanReason } = await import('/static/js/errors.js');
        return cleanReason(reason, (id) => known[id] || '');
    }""", ["unit 5388884695: boarding 1234567890 needs it to have no move order; unit 9876543210 left; "
           "the request is over 262144 bytes", known])
    assert cleaned == ("your Dvora at (19, 10): boarding your Sergeant at (19, 11) needs it to have no move "
                       "order; the unit left; the request is over 262144 bytes"), cleaned


def test_errors_of_the_home_page_in_both_languages(open_page: OpenPage, watched: Watched) -> None:
    watched.allowed += ["status of 4", "status of 5", "HTTP 4", "HTTP 5"]  # the refusals below, on purpose
    for lang, locale in (("en", "en-US"), ("he", "he-IL")):
        page = open_page("phone" if lang == "he" else "desktop", locale=locale)
        page.goto("/join/ABC234")
        page.fill("#nickname", "dana")
        for button, rpc, r in HOME:
            answer(page, rpc, r)
            page.click(button)
            check(page, page.locator(f"{button} + .error"), r, langs=(lang,), ids=(FAKE_ID,), switch=False)
        shot(page, f"words-home-{lang}")


def test_errors_of_the_lobby_in_both_languages(open_page: OpenPage, watched: Watched) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]
    host = open_page()
    create_game(host, "ann", "archipelago")
    for r in (
        Refusal("auth/permission_denied", 403, "game_id", "A4", "only the host starts the game"),
        Refusal("lobby/conflict", 409, "", "A4", f"game {FAKE_ID} has already started", shown="has already started"),
        Refusal("auth/unauthenticated", 401, "authorization", "A3", "unknown player secret"),
    ):
        r.kind = "lobby"
        answer(host, "Lobby/StartGame", r)
        host.click("#fill")
        check(host, host.locator("#lobby .actions + .error"), r, ids=(FAKE_ID,))
    # why Start is greyed out: a visible line, not only a tooltip
    expect(host.locator("#start")).to_be_disabled()
    expect(host.locator("#start-why")).to_be_visible()

    # the autopilot's seat, named in the page's language ("autopilot-2" is the server's nickname)
    host.unroute("**/v1/Lobby/StartGame")
    host.select_option("#lang", "he")
    expect(host.locator("html")).to_have_attribute("lang", "he")  # (the lobby redrawn in Hebrew)
    host.click("#fill")
    host.wait_for_selector("#game-area:not([hidden])")
    expect(host.locator("#players li[data-seat='1'] .nick")).to_have_text(
        fill(words("he")["players.autopilot_name"], {"n": "2"})
    )


# -------------------------------------------------------------------------------------- game screens


def api_game(url: str, kind: str, **extra: Any) -> dict[str, Any]:
    made = post(
        url, "Lobby/CreateGame", {"game": kind, "seats": 2, "nickname": "ann", "deadline_seconds": 600, **extra}
    )
    bob = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "ann": made["secret"], "bob": bob["secret"], "kind": kind}


def view_of(url: str, game: dict[str, Any], who: str = "ann") -> dict[str, Any]:
    view: dict[str, Any] = post(url, "Game/GetView", {"game_id": game["id"]}, game[who])
    return view


def open_seat(page: Page, game: dict[str, Any], ready: str, who: str = "ann") -> Page:
    record = {game["id"]: {"secret": game[who], "seat": 0 if who == "ann" else 1, "game": game["kind"]}}
    page.context.add_init_script(f"localStorage.setItem('archipelago.seats', {json.dumps(json.dumps(record))})")
    page.goto(f"/game/{game['id']}")
    page.wait_for_selector(ready)
    return page


def test_errors_of_an_archipelago_round_name_the_players_own_units(
    open_page: OpenPage, web_server: Served, watched: Watched
) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]
    url = web_server.url
    game = api_game(url, "archipelago")
    page = open_seat(open_page(), game, "#arch-board rect.tile")
    page.click("#done")  # round 0 as laid out; bob is not connected: the round closes
    expect(page.locator("#round")).to_have_text(re.compile(r"\b1\b"))

    # a move order, entered on the board: the refusals' field paths point into it
    view = view_of(url, game)["archipelago"]
    ship = next(u for u in view["units"] if u["type"] == "dvora")
    other = next(u for u in view["units"] if u["type"] == "rank3")
    page.click("#tab-units")
    page.click(f"#unit-list li[data-unit='{ship['id']}'] button")
    page.click("#move")
    page.locator("#arch-board rect.tile.hl").first.click()
    expect(page.locator(f"#unit-list li[data-unit='{ship['id']}']")).to_contain_text("Moves to")
    sx, sy = ship["tile"]["x"], ship["tile"]["y"]
    mine = ("arch.err.your_unit", {"unit": "Dvora", "tile": f"\u2066({sx}, {sy})\u2069"})
    mine_he = ("arch.err.your_unit", {"unit": "דבורה", "tile": f"\u2066({sx}, {sy})\u2069"})
    ids = (ship["id"], other["id"], FAKE_ID, game["id"])

    submit = [
        Refusal(
            "order/illegal",
            422,
            "units[0].to",
            "A24",
            f"unit {ship['id']}: boarding {other['id']} needs it to have no move order",
            kind="orders",
            shown="needs it to have no move order",
            about=mine,
        ),
        Refusal(
            "order/invalid",
            400,
            "units[0].path",
            "",
            f"unit {ship['id']}: path is a list of N, E, S, W",
            kind="orders",
            shown="path is a list of N, E, S, W",
            about=mine,
        ),
        Refusal("order/not_your_turn", 409, "orders", "A16", "this player is not expected to act now"),
        Refusal("game/not_started", 409, "orders", "", "the game has not started"),
        Refusal("game/over", 409, "orders", "A67", "the game is over"),
        Refusal("action/stale_state_id", 409, "version", "A16", "version 12 is older than the round's 14"),
        Refusal("request/key_reused", 422, "idempotency_key", "A16", "this key was used with other orders"),
        Refusal("action/rate_limited", 429, "orders", "A16", "at most 100 submissions per round"),
        Refusal("request/too_large", 413, "body", "", "the request is over 262144 bytes"),
        Refusal("lookup/not_found", 404, "game_id", "", f"no game '{game['id']}'", shown="no such game"),
        Refusal("auth/permission_denied", 403, "game_id", "A3", "this secret belongs to a player of another game"),
        Refusal("auth/unauthenticated", 401, "authorization", "A3", "unknown player secret"),
    ]
    for r in submit:
        answer(page, "Game/SubmitOrders", r)
        page.click("#done")
        box = page.locator("#done + .error")
        if r.about:  # in Hebrew the unit keeps its Hebrew name
            check(page, box, r, langs=("en",), ids=ids)
            check(page, box, Refusal(**{**r.__dict__, "about": mine_he}), langs=("he",), ids=ids)
        else:
            check(page, box, r, ids=ids)
    # the reason names the player's own units as the player knows them
    expect(page.locator("#done + .error")).to_have_attribute("data-code", "auth/unauthenticated")
    answer(page, "Game/SubmitOrders", submit[0])
    page.click("#done")
    expect(page.locator("#done + .error .err-reason")).to_contain_text(f"your Dvora at ({sx}, {sy})", ignore_case=True)
    shot(page, "words-archipelago-en")
    page.unroute("**/v1/Game/SubmitOrders")

    # chat (Game/Act): its own sentence (an action, not orders)
    page.click("#tab-trade")
    for r in (
        Refusal("order/invalid", 400, "chat.text", "A53", "text must be 1–500 characters", kind="action"),
        Refusal("action/rate_limited", 429, "chat", "A53", "at most 10 chat messages per round"),
    ):
        answer(page, "Game/Act", r)
        page.fill("#chat-text", "hello")
        page.press("#chat-text", "Enter")
        check(page, page.locator(f".error[data-code='{r.code}']"), r, ids=ids)
    page.unroute("**/v1/Game/Act")

    # a unit's card, one tap from the unit and from the build list: strength, moves, sight, cost, what
    # it can do; the English name with the Hebrew rank beside it (in Hebrew: the Hebrew rank name)
    table = {u["id"]: u for u in rules_table(url)["units"]}
    page.click("#tab-units")
    page.click(f"#unit-list li[data-unit='{ship['id']}'] button")
    page.click("#unit-card-open")
    card = page.locator("#unit-card")
    expect(card.locator("h3")).to_have_text("Dvora")
    for label, value in (("arch.card.move", table["dvora"]["move"]), ("arch.card.sight", table["dvora"]["sight"])):
        expect(card.locator("dl")).to_contain_text(f"{words('en')[label]}{value}")
    expect(card.locator(".card-can")).to_contain_text(words("en")["arch.card.act.bombard"])
    # a greyed-out action says why, in a line a phone shows
    expect(page.locator("#why-disabled li[data-for='action-bombard']")).to_be_visible()
    page.click("#tab-build")
    # (by the keyboard: the sticky Done bar, with the last refusal still in it, covers the list's end)
    page.locator("[data-card='rank3']").press("Enter")
    expect(card.locator("h3")).to_have_text("Sergeant")
    expect(card.locator(".rank")).to_contain_text("Samal")
    expect(page.locator("[data-build='rank3'] .rank")).to_have_text("Samal")
    food = table["rank3"]["cost"]["food"]
    expect(card.locator("dl")).to_contain_text(f"{food}🌾")

    # the resources arrow reads the page's way: a build's cost shown as "now → after" (Hebrew: ←)
    page.locator("[data-build='rank1']:not([disabled])").press("Enter")
    after = page.locator("#stock [data-res='food'] .after")
    expect(after).to_have_text(re.compile(r"^→\d+$"))
    page.select_option("#lang", "he")
    expect(after).to_have_text(re.compile(r"^←\d+$"))
    expect(card.locator("h3")).to_have_text("סמל")
    expect(card.locator(".rank")).to_have_count(0)
    shot(page, "words-unit-card-he")
    page.select_option("#lang", "en")


@cache
def rules_table(url: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(f"{url}/client/archipelago.json", timeout=20) as r:
        table: dict[str, Any] = json.load(r)
        return table


def test_errors_of_a_salvo_round_name_the_players_own_squares(
    open_page: OpenPage, web_server: Served, watched: Watched
) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]
    url = web_server.url
    game = api_game(url, "salvo")
    for who in ("ann", "bob"):
        v = view_of(url, game, who)
        post(
            url,
            "Game/SubmitOrders",
            {"game_id": game["id"], "version": v["version"], "salvo": {"random_placement": True}},
            game[who],
        )
    page = open_seat(open_page("phone", locale="he-IL"), game, "#salvo-own .cell")
    expect(page.locator(".salvo")).to_have_attribute("data-phase", "firing")
    page.click('#salvo-enemy [data-sq="A1"]')
    page.click('#salvo-enemy [data-sq="B2"]')
    r = Refusal(
        "order/illegal",
        422,
        "shots[1]",
        "S5",
        "square B2 was already shot in round 1",
        kind="orders",
        about=("salvo.err.your_shot", {"sq": "B2"}),
    )
    answer(page, "Game/SubmitOrders", r)
    page.click("#done")
    check(page, page.locator("#done + .error"), r, langs=("he", "en"))
    r2 = Refusal("order/not_your_turn", 409, "shots", "S4", "it is bob's turn", kind="orders")
    answer(page, "Game/SubmitOrders", r2)
    page.click("#done")
    check(page, page.locator("#done + .error"), r2, langs=("he", "en"))
    shot(page, "words-salvo-he")


def test_errors_of_an_arcmage_turn_name_the_players_own_cards(
    open_page: OpenPage, web_server: Served, watched: Watched
) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]
    url = web_server.url
    deck = "Brothers in Arms"
    game = api_game(url, "arcmage", arcmage={"decks": [{"built_in": deck}, {"built_in": deck}]})
    # the seat asked to act first: its page offers a card action (the table's legal list)
    who, act = next(
        (w, a) for w in ("ann", "bob") for a in view_of(url, game, w)["arcmage"].get("legal") or [] if card_of(a)
    )
    page = open_seat(open_page(), game, ".arc .arc-seat", who=who)
    v = view_of(url, game, who)["arcmage"]
    cid = card_of(act)
    name = v["cards"][cid]["name"]
    kind = next(iter(act))
    for r in (
        Refusal(
            "order/illegal",
            422,
            f"{kind}.targets",
            "M39",
            f"card {cid} waits on the stack for your answer; no card of yours is called '{cid}'",
            kind="action",
            shown=f'"{name}" waits on the stack',
            about=("arcmage.err.your_card", {"card": name}) if "card" in act[kind] else None,
        ),
        Refusal("order/not_your_turn", 409, "action", "M25", "it is bob's turn", kind="action"),
        Refusal("action/stale_state_id", 409, "version", "M25", "the table has changed since version 3", kind="action"),
    ):
        answer(page, "Game/Act", r)
        tile = page.locator(f'.arc-card[data-card="{cid}"].legal').first
        tile.click()
        buttons = page.locator("#arc-card-actions button")
        expect(buttons.first).to_be_visible()
        buttons.first.click()
        check(page, page.locator("#arc-pass + .error"), r, ids=(cid, game["id"]))
    shot(page, "words-arcmage-en")


def card_of(action: dict[str, Any]) -> str:
    """The card an Arcmage action is about (its subject), or ''."""
    kind = next(iter(action))
    body = action[kind] or {}
    option = body.get("option") if kind == "choose" else body.get("card")
    return option if isinstance(option, str) else ""


# --------------------------------------------------------------------------------- where the player is


def test_no_such_game_no_seat_a_bad_rejoin_link_and_no_such_page_are_told_apart(
    open_page: OpenPage, web_server: Served, watched: Watched
) -> None:
    watched.allowed += ["status of 401", "HTTP 401: POST",  # the bad rejoin link: the server's answer, shown
                        "status of 404", "HTTP 404: GET", "HTTP 404: HEAD"]  # the unknown game's page
    game = api_game(web_server.url, "salvo")
    for lang, locale in (("en", "en-US"), ("he", "he-IL")):
        w = words(lang)
        page = open_page("phone" if lang == "he" else "desktop", locale=locale)
        page.goto("/game/not-a-game")
        expect(page.locator("#not-found")).to_have_attribute("data-kind", "game")
        expect(page.locator("#not-found h2")).to_have_text(w["notfound.game_title"])
        page.goto("/game/0123456789abcdef")  # a game id, but no game has it (the gateway's page: 404)
        expect(page.locator("#not-found")).to_have_attribute("data-kind", "game")
        expect(page.locator("#not-found h2")).to_have_text(w["notfound.game_title"])
        page.goto(f"/game/{game['id']}")  # a real game, but this device holds no seat of it
        expect(page.locator("#no-seat h2")).to_have_text(w["game.no_seat_title"])
        expect(page.locator("#no-seat")).to_contain_text(w["game.no_seat"])
        expect(page.locator("#not-found")).to_have_count(0)  # (its HEAD answered 200: the game exists)
        page.goto("/rejoin#not-a-secret-of-anyone-at-all")
        expect(page.locator("#rejoin-bad")).to_have_text(w["rejoin.bad"])
        assert "#" not in page.url, "the secret leaves the address bar"
        page.goto("/rejoin")
        expect(page.locator("main")).to_contain_text(w["rejoin.missing"])
        # an address the page's own router does not know (a link inside the page; the server answers
        # such an address typed in the bar with its own not-found page)
        page.evaluate(
            "() => { history.pushState({}, '', '/no/such/page'); dispatchEvent(new PopStateEvent('popstate')) }"
        )
        expect(page.locator("#not-found")).to_have_attribute("data-kind", "page")
        expect(page.locator("#not-found h2")).to_have_text(w["notfound.page_title"])
        expect(page.locator("#not-found a[href='/']")).to_be_visible()
        shot(page, f"words-not-found-{lang}")


def test_a16_changed_after_done_says_press_done_again_not_orders_sent(open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url, "salvo")
    for who in ("ann", "bob"):
        v = view_of(web_server.url, game, who)
        post(
            web_server.url,
            "Game/SubmitOrders",
            {"game_id": game["id"], "version": v["version"], "salvo": {"random_placement": True}},
            game[who],
        )
    page = open_seat(open_page(), game, "#salvo-own .cell")
    open_seat(open_page(), game, "#salvo-own .cell", who="bob")  # connected: the round waits for bob (A17)
    expect(page.locator(".salvo")).to_have_attribute("data-phase", "firing")
    status = page.locator("#my-status")
    expect(status).to_have_text(words("en")["game.waiting_for_you"])
    page.click('#salvo-enemy [data-sq="C3"]')
    page.click("#done")
    expect(status).to_have_text(words("en")["game.submitted"])
    expect(status).to_have_attribute("data-state", "ok")
    page.click('#salvo-enemy [data-sq="D4"]')  # changed after Done
    expect(status).to_have_text(words("en")["game.changed_since_sent"])
    expect(status).to_have_attribute("data-state", "changed")
    page.select_option("#lang", "he")
    expect(status).to_have_text(words("he")["game.changed_since_sent"])
    page.click("#done")
    expect(status).to_have_text(words("he")["game.submitted"])
    assert view_of(web_server.url, game)["salvo_pending"]["shots"] == ["C3", "D4"]
