"""The web client's community screens (issue 26; community.proto): "Play now" on the home page, the
Watch list and the spectator's screen, the replay of a finished game, the leaderboard, a profile
(its own page, its link to another device, its reset) and a player's public page — in English and
Hebrew on a 390×844 phone, with screenshots in test-artifacts/community-*.png and axe-core's checks.

Each player and each spectator is a browser context of its own (a device). The test reads each
player's fleet from that player's own page and fires at it from the other's (as tests/web/
test_salvo_web.py does); the spectator's page is only looked at."""

from __future__ import annotations

import json
import re
import secrets
import urllib.error
import urllib.request
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, Watched, post, shot, until, words

pytestmark = pytest.mark.e2e

AXE = Axe()
HEBREW = re.compile("[\u0590-\u05ff]")
WORTH = {"battleship": 3, "cruiser": 2, "submarine": 1, "destroyer": 1}  # S4: shots per ship afloat
FLEET = 14  # squares of a Salvo fleet (5 + 4 + 3 + 2)


# ------------------------------------------------------------------------------------------- helpers

def device(open_page: OpenPage, lang: str = "en", viewport: str = "desktop", profile: dict[str, str] | None = None,
           ) -> Page:
    """A new device in ``lang`` (its choice remembered), holding ``profile`` ({secret, handle}) if given."""
    page = open_page(viewport=viewport, locale="he-IL" if lang == "he" else "en-US")
    script = f"localStorage.setItem('archipelago.lang', '{lang}');"
    if profile:
        script += f"localStorage.setItem('archipelago.profile', {json.dumps(json.dumps(profile))});"
    page.context.add_init_script(script)
    return page


def refused(url: str, rpc: str, body: dict[str, Any], secret: str = "") -> dict[str, Any]:
    """A call the server must refuse: its error body."""
    try:
        post(url, rpc, body, secret)
    except urllib.error.HTTPError as e:
        with e:
            error: dict[str, Any] = json.load(e)["error"]
        return error
    raise AssertionError(f"{rpc} was not refused")


def no_wider_than_the_screen(page: Page, what: str) -> None:
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sizes[0] <= sizes[1], f"{what}: the page is {sizes[0]} px wide on a {sizes[1]} px screen"


def nothing_cut_off(page: Page, selector: str, what: str) -> None:
    """Every element matching ``selector`` lies within the screen's width (none is cut at an edge)."""
    out = page.eval_on_selector_all(selector, """els => els.filter(e => e.offsetParent !== null).map(e => {
        const r = e.getBoundingClientRect(); return [e.textContent.trim().slice(0, 30), r.left, r.right]; })
        .filter(([, l, r]) => l < -0.5 || r > document.documentElement.clientWidth + 0.5)""")
    assert not out, f"{what}: cut off at the screen's edge: {out}"


def no_serious_axe_violation(page: Page, what: str) -> None:
    found = AXE.run(page).response["violations"]
    bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:4]]}"
           for v in found if v["impact"] in ("serious", "critical")]
    assert not bad, f"{what}: axe-core finds\n" + "\n".join(bad)


def look(page: Page, lang: str, name: str) -> None:
    """The checks every community page passes, and its screenshot (test-artifacts/community-<name>-<lang>.png)."""
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "he" else "ltr")
    page.evaluate("document.fonts.ready")
    shot(page, f"community-{name}-{lang}")
    no_wider_than_the_screen(page, f"{name} ({lang})")
    nothing_cut_off(page, "main h2, main h3, main th, main button, main a, main label, #nav a", f"{name} ({lang})")
    if lang == "he":
        text = page.locator("main").inner_text()
        assert HEBREW.search(text), f"{name}: no Hebrew on the Hebrew page"
    no_serious_axe_violation(page, f"{name} ({lang})")


def own_ships(page: Page) -> dict[str, list[str]]:
    """The page's own Salvo fleet as its grid shows it: ship name -> squares."""
    cells: list[dict[str, str]] = page.eval_on_selector_all(
        "#salvo-own .cell[data-vessel]", "cells => cells.map(c => ({sq: c.dataset.sq, ship: c.dataset.vessel}))")
    fleet: dict[str, list[str]] = {}
    for c in cells:
        fleet.setdefault(c["ship"], []).append(c["sq"])
    return fleet


def water(page: Page) -> list[str]:
    """Squares of the page's own grid with no ship and no enemy shot yet."""
    squares: list[str] = page.eval_on_selector_all(
        "#salvo-own .cell:not([data-vessel]):not(.miss):not(.hit)", "cells => cells.map(c => c.dataset.sq)")
    return squares


def choose(page: Page, squares: list[str]) -> None:
    for sq in squares:
        page.click(f'#salvo-enemy [data-sq="{sq}"]')
        expect(page.locator(f'#salvo-enemy [data-sq="{sq}"]')).to_have_attribute("aria-pressed", "true")


def sink(first: Page, second: Page, watcher: Page | None = None) -> None:
    """From round 1 of a Salvo game: ``first`` sinks ``second``'s fleet (7 shots a round: the game ends
    in round 2) while ``second`` shoots at open water; ``watcher`` (a spectator) sees round 1's salvo."""
    fleet = own_ships(second)
    assert sum(map(len, fleet.values())) == FLEET, fleet
    targets = [sq for ship in WORTH for sq in fleet[ship]]
    fired: list[str] = []
    for rnd in (1, 2):
        for p in (first, second):  # (the round's first view is in: what is chosen now stays chosen)
            expect(p.locator(".salvo")).to_have_attribute("data-round", str(rnd))
        expect(first.locator("#shots-left")).to_have_attribute("data-left", "7")  # (never hit: 7 shots)
        aim = [sq for sq in targets if sq not in fired][:7]
        choose(first, aim)
        n = int(second.get_attribute("#shots-left", "data-allowed") or "0")
        choose(second, water(first)[:n])
        first.click("#done")
        second.click("#done")
        fired += aim
        if rnd == 1 and watcher:
            expect(watcher.locator(".salvo")).to_have_attribute("data-round", "2")
            # the spectator sees round 1's 7 shots on the second player's waters, numbered, as they land
            expect(watcher.locator("#salvo-enemy .cell.shot")).to_have_count(7)
            shot(watcher, "community-spectator-en")
    for p in (first, second):
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "over")


def place_at_random(*pages: Page) -> None:
    for p in pages:
        p.click("#random-placement")
        p.click("#done")
    for p in pages:
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "firing")


def play_now(page: Page, nickname: str, game: str = "salvo", speed: str = "SPEED_FAST") -> str:
    """From the home page: Play now; returns the game id of the page it lands on."""
    page.goto("/")
    page.fill("#nickname", nickname)
    page.select_option("#quick-game", game)
    page.select_option("#quick-speed", speed)
    expect(page.locator("#quick-autopilot")).to_be_checked()  # (computer players if nobody comes: the default)
    page.click("#play-now")
    page.wait_for_url(re.compile(r"/game/[0-9a-f]{16}$"))
    return page.url.rsplit("/", 1)[1]


def view_of(url: str, game_id: str, secret: str) -> dict[str, Any]:
    v: dict[str, Any] = post(url, "Game/GetView", {"game_id": game_id}, secret)
    return v


def secret_of(page: Page, game_id: str) -> str:
    """The player secret this device keeps for ``game_id`` (as the page stored it)."""
    seats = json.loads(page.evaluate("localStorage.getItem('archipelago.seats')") or "{}")
    secret: str = seats[game_id]["secret"]
    return secret


# ------------------------------------------------------------------------------------------ the paths

@pytest.mark.parametrize("path", ["/watch", "/watch/0123456789abcdef", "/replay/0123456789abcdef", "/leaderboard",
                                  "/profile", "/players/ann", "/players/a%2Fb%20c"])
def test_every_community_path_serves_the_page(web_server: Served, path: str) -> None:
    req = urllib.request.Request(f"{web_server.url}{path}", headers={"accept": "text/html"})
    with urllib.request.urlopen(req, timeout=20) as resp:
        assert resp.status == 200
        assert '<script type="module" src="/static/js/app.js">' in resp.read().decode()


# --------------------------------------------------------------- Play now, watch live, replay, download

def test_play_now_lands_two_devices_in_one_game_a_third_watches_it_live_then_replays_it(
        open_page: OpenPage, web_server: Served) -> None:
    url = web_server.url
    ann = device(open_page)
    bob = device(open_page, "he", "phone")

    # Play now from two devices: the first opens a public quick-play lobby and waits …
    game_id = play_now(ann, "ann")
    expect(ann.locator("#quick-waiting")).to_contain_text("1 of 2")
    expect(ann.locator("#quick-waiting")).to_contain_text(re.compile(r"\d\d:\d\d"))  # when computer players come
    shot(ann, "community-quick-waiting-en")
    # … the second lands in the same game, which starts by itself once full (no Start pressed)
    assert play_now(bob, "bob") == game_id
    for p in (ann, bob):
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "placement")
    assert view_of(url, game_id, secret_of(ann, game_id))["status"] == "GAME_STATUS_RUNNING"

    # A third device finds it in the Watch list and watches it: the game's own screen, read-only.
    carol = device(open_page)
    carol.goto("/")
    carol.click("#nav a[href='/watch']")
    row = carol.locator(f'#live-games li[data-game="{game_id}"]')
    expect(row).to_contain_text("ann")
    expect(row).to_contain_text("bob")
    expect(row).to_contain_text("Salvo")
    row.locator("a").click()
    carol.wait_for_url(f"**/watch/{game_id}")
    expect(carol.locator("#spectating")).to_contain_text("You are watching — you cannot play")
    expect(carol.locator(".salvo")).to_have_attribute("data-phase", "placement")
    expect(carol.locator("#salvo-own-title")).to_have_text("ann's waters")
    expect(carol.locator("#salvo-enemy-title")).to_have_text("bob's waters")
    for hidden in ("#done", "#salvo-place", "#salvo-chat-text"):  # no order form, no own placement tools
        expect(carol.locator(hidden)).to_be_hidden()
    expect(carol.locator("#agent-title")).to_have_count(0)  # no agent panel
    expect(carol.locator("#salvo-own .cell:not([disabled])")).to_have_count(0)  # nothing to press
    expect(carol.locator("#players li")).to_have_count(2)

    # A fourth, on a phone in Hebrew: the Watch list and the spectator's screen, right to left.
    dave = device(open_page, "he", "phone")
    dave.goto("/watch")
    expect(dave.locator(f'#live-games li[data-game="{game_id}"]')).to_contain_text(words("he")["game.salvo"])
    look(dave, "he", "watch")
    dave.click(f'#live-games li[data-game="{game_id}"] a')
    expect(dave.locator("#spectating strong")).to_have_text(words("he")["community.spectate.banner"])
    expect(dave.locator("#salvo-own")).to_have_css("direction", "ltr")  # A–J left to right in Hebrew too
    look(dave, "he", "spectator")

    # Round 0 → 1 happens while carol watches: both place their fleets.
    place_at_random(ann, bob)
    for p in (ann, bob, carol):
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "firing")
        expect(p.locator(".salvo")).to_have_attribute("data-round", "1")
    expect(carol.locator("#round")).to_have_text("Round 1")
    assert not own_ships(carol), "a spectator sees no ship while the game runs"

    # A message to everyone reaches the spectator's chat.
    ann.fill("#salvo-chat-text", "good luck")
    ann.click("#salvo-chat-send")
    expect(carol.locator("#spectate-chat-log")).to_contain_text("good luck")

    # Ann sinks bob's fleet (round 2 ends it); bob shoots at open water.
    sink(ann, bob, carol)

    # The end, live: the outcome, every ship revealed, and a Replay button.
    expect(carol.locator("#game-over")).to_be_visible()
    expect(carol.locator("#winner")).to_contain_text("ann")
    expect(carol.locator("#spectating")).to_contain_text("finished")
    expect(carol.locator("#salvo-enemy .cell[data-vessel]")).to_have_count(FLEET)
    expect(carol.locator("#salvo-own .cell[data-vessel]")).to_have_count(FLEET)
    carol.click("#replay-button")
    carol.wait_for_url(f"**/replay/{game_id}")

    # The replay: frame 0 is the start; frames step forward; the whole game shows both fleets.
    where = carol.locator("#replay-where")
    expect(where).to_have_attribute("data-frame", "0")
    frames = int(where.get_attribute("data-frames") or "0")
    assert frames >= 3, f"placement and two rounds: {frames} frames"
    expect(carol.locator("#replay-seat")).to_have_value("-1")
    expect(carol.locator("#replay-prev")).to_be_disabled()
    carol.click("#replay-next")
    expect(where).to_have_attribute("data-frame", "1")
    expect(carol.locator("#replay-round")).to_have_text("Round 1")
    expect(carol.locator("#salvo-own .cell[data-vessel]")).to_have_count(FLEET)
    expect(carol.locator("#salvo-enemy .cell[data-vessel]")).to_have_count(FLEET)
    carol.click("#replay-next")
    expect(where).to_have_attribute("data-frame", "2")
    expect(carol.locator("#salvo-enemy .cell.shot")).to_have_count(7)  # ann's first salvo
    # the keyboard: the arrows and End step through it too
    carol.locator("#replay-next").focus()
    carol.keyboard.press("ArrowLeft")
    expect(where).to_have_attribute("data-frame", "1")
    carol.keyboard.press("End")
    expect(where).to_have_attribute("data-frame", str(frames))
    expect(carol.locator("#game-over #winner")).to_contain_text("ann")
    expect(carol.locator("#replay-next")).to_be_disabled()
    # one seat's view: bob's, his own fleet on "his" grid, the whole of it hit
    carol.select_option("#replay-seat", "1")
    expect(carol.locator("#salvo-own-title")).to_have_text("bob's waters")
    expect(carol.locator("#salvo-own .cell.hit")).to_have_count(FLEET)
    shot(carol, "community-replay-en")

    # The game's records as a .jsonl file: one JSON object a line.
    with carol.expect_download() as got:
        carol.click("#replay-download")
    download = got.value
    assert download.suggested_filename.endswith(".jsonl")
    lines = [json.loads(line) for line in download.path().read_text(encoding="utf-8").splitlines() if line]
    assert lines and all(isinstance(x, dict) for x in lines)


def test_a_private_game_is_not_watched_and_a_running_one_is_not_replayed(
        open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]  # the refusals below, on purpose
    url = web_server.url
    games = {}
    for public in (False, True):
        made = post(url, "Lobby/CreateGame", {"game": "salvo", "seats": 2, "nickname": "ann", "public": public})
        post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
        post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
        games[public] = made["game_id"]
    page = device(open_page)
    page.goto(f"/watch/{games[False]}")  # private: as if it did not exist
    expect(page.locator("#not-found")).to_contain_text(words("en")["community.spectate.not_found_title"])
    page.goto(f"/replay/{games[True]}")  # still being played: watch it live instead
    expect(page.locator("#replay-unavailable")).to_have_attribute("data-code", "game/not_over")
    page.click("#replay-unavailable a[href^='/watch/']")
    expect(page.locator("#spectating")).to_be_visible()


# ------------------------------------------------------------- profiles, ratings, the leaderboard

@pytest.mark.parametrize("lang", ["en", "he"])
def test_the_home_page_offers_play_now_on_a_phone(open_page: OpenPage, lang: str) -> None:
    page = device(open_page, lang, "phone")
    page.goto("/")
    card = page.locator("#quick-card")
    expect(card.locator("h2")).to_have_text(words(lang)["community.quick.title"])
    expect(page.locator("#quick-game")).to_have_value("archipelago")
    expect(page.locator("#quick-seats")).to_have_value("4")  # Archipelago: 2–8 players, 4 at first
    expect(page.locator("#quick-seats option")).to_have_count(7)
    page.select_option("#quick-game", "salvo")
    expect(page.locator("#quick-seats")).to_be_hidden()  # Salvo: always two
    page.select_option("#quick-game", "archipelago")
    look(page, lang, "home")



def profile_of(page: Page) -> dict[str, str]:
    """The profile this device holds ({secret, handle}), as the page stored it."""
    held: dict[str, str] = json.loads(page.evaluate("localStorage.getItem('archipelago.profile')") or "null") or {}
    return held


def test_leaderboard_profile_and_player_page_after_a_rated_game_in_english_and_hebrew_on_a_phone(
        open_page: OpenPage, web_server: Served) -> None:
    url = web_server.url
    tag = secrets.token_hex(2)
    made = {who: post(url, "Community/CreateProfile", {"handle": handle})
            for who, handle in (("ann", f"ann {tag}"), ("dana", f"דנה {tag}"))}
    handle = {who: m["profile"]["handle"] for who, m in made.items()}
    held = {who: {"secret": m["secret"], "handle": handle[who]} for who, m in made.items()}

    # Two devices that hold profiles press Play now: their nicknames are their handles, their seats
    # count for their profiles; ann wins, and both are rated (a public game between two profiles).
    ann = device(open_page, profile=held["ann"])
    dana = device(open_page, "he", profile=held["dana"])
    for p, who in ((ann, "ann"), (dana, "dana")):
        p.goto("/")
        expect(p.locator("#nickname")).to_have_value(handle[who])
        expect(p.locator("#home-profile")).to_contain_text(handle[who])
    game_id = play_now(ann, handle["ann"])
    assert play_now(dana, handle["dana"]) == game_id
    seated = view_of(url, game_id, secret_of(ann, game_id))["players"]
    assert [p["handle"] for p in seated] == [handle["ann"], handle["dana"]], seated
    place_at_random(ann, dana)
    sink(ann, dana)
    until(lambda: all(post(url, "Community/GetProfile", {"handle": handle[w]})["ratings"] for w in ("ann", "dana")),
          "both profiles rated", 30)
    # each player's game-over screen shows both changes (game_over's ratings): ann up, dana down
    for p in (ann, dana):
        table = p.locator("#rating-changes")
        expect(table).to_be_visible()
        expect(table.locator("tbody tr")).to_have_count(2)
        expect(table.locator("tr[data-seat='0'] td").nth(2)).to_have_text(re.compile(r"^\+\d"))
        expect(table.locator("tr[data-seat='1'] td").nth(2)).to_have_text(re.compile(r"^−\d"))
    expect(dana.locator("#rating-changes caption")).to_have_text(words("he")["over.ratings"])

    for lang in ("en", "he"):
        w = words(lang)
        page = device(open_page, lang, "phone", profile=held["ann"])
        # The leaderboard of Salvo, fast: ann above dana, her own row marked.
        page.goto("/")
        page.click("#nav a[href='/leaderboard']")
        page.select_option("#board-game", "salvo")
        page.select_option("#board-speed", "SPEED_FAST")
        rows = page.locator("#leaderboard tbody tr")
        expect(rows.filter(has_text=handle["dana"])).to_have_count(1)
        order = rows.evaluate_all("rs => rs.map(r => r.dataset.handle)")
        assert order.index(handle["ann"]) < order.index(handle["dana"]), order
        expect(page.locator(f'#leaderboard tr[data-handle="{handle["ann"]}"]')).to_have_class("me")
        expect(page.locator("#leaderboard th").first).to_have_text(w["community.col.rank"])
        expect(page.locator("#nav a[href='/leaderboard']")).to_have_attribute("aria-current", "page")
        look(page, lang, "leaderboard")

        # Her own profile: handle, the Salvo rating (1 game), the game in her history, won, with a
        # Replay link; the profile link is hidden until asked for.
        page.click("#nav a[href='/profile']")
        expect(page.locator("#profile-handle")).to_have_text(handle["ann"])
        rating = page.locator('#ratings tr[data-game="salvo"][data-speed="SPEED_FAST"]')
        expect(rating).to_contain_text(w["game.salvo"])
        expect(rating.locator("td").nth(4)).to_have_text("1")  # games
        for col in (1, 2, 3):  # rating, μ, σ: on a phone too
            expect(rating.locator("td").nth(col)).to_have_text(re.compile(r"^-?\d+[.,]\d+$"))
        item = page.locator(f'#history li[data-game="{game_id}"]')
        expect(item).to_contain_text(w["community.history.won"].replace("{place}", "1").replace("{n}", "2"))
        expect(item.locator(".change")).to_have_class(re.compile("up"))
        expect(item.locator("a.replay-link")).to_have_attribute("href", f"/replay/{game_id}")
        expect(page.locator("#profile-link")).to_have_attribute("type", "password")
        look(page, lang, "profile")

        # Dana's public page (from the leaderboard's link): second, her rating down.
        page.goto("/leaderboard?game=salvo&speed=SPEED_FAST")
        page.click(f'#leaderboard tr[data-handle="{handle["dana"]}"] a')
        expect(page.locator("#player-handle")).to_have_text(handle["dana"])
        item = page.locator(f'#history li[data-game="{game_id}"]')
        expect(item).to_contain_text(w["community.history.place"].replace("{place}", "2").replace("{n}", "2"))
        expect(item.locator(".change")).to_have_class(re.compile("down"))
        expect(page.locator('#ratings tr[data-game="salvo"]')).to_be_visible()
        look(page, lang, "player")


def test_a_profile_made_here_moves_by_its_link_and_a_reset_stops_the_old_link(
        open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    watched.allowed += ["status of 4", "HTTP 4"]  # a taken handle and a reset secret, refused on purpose
    url = web_server.url
    name = f"Zoë {secrets.token_hex(2)}"
    page = device(open_page)
    page.goto("/")
    page.click("#nav a[href='/profile']")
    page.fill("#handle", name)
    page.click("#create-profile")
    expect(page.locator("#profile-made")).to_be_visible()
    expect(page.locator("#profile-handle")).to_have_text(name)
    first = profile_of(page)
    assert first["secret"].startswith("prf_") and first["handle"] == name
    expect(page.locator("#profile-link")).to_have_attribute("type", "password")
    page.click("#show-profile-link")
    expect(page.locator("#profile-link")).to_have_attribute("type", "text")
    link = page.input_value("#profile-link")
    assert link.endswith(f"/profile#{first['secret']}"), link

    # The same handle (in other letters' case) cannot be taken again.
    again = device(open_page)
    again.goto("/profile")
    again.fill("#handle", name.upper())
    again.click("#create-profile")
    expect(again.locator("#create-profile + .error")).to_contain_text(words("en")["error.lobby/already_exists@handle"])
    assert not profile_of(again)

    # The link opened on another device (a phone, in Hebrew) moves the profile there; the secret
    # leaves the address bar at once.
    phone = device(open_page, "he", "phone")
    phone.goto(link)
    expect(phone.locator("#profile-moved")).to_be_visible()
    assert phone.url.endswith("/profile"), phone.url
    expect(phone.locator("#profile-handle")).to_have_text(name)
    assert profile_of(phone)["secret"] == first["secret"]
    phone.goto("/")
    expect(phone.locator("#nickname")).to_have_value(name)

    # Reset, asked and cancelled, then asked and confirmed: a new secret; the old link stops working.
    page.click("#reset-secret")
    expect(page.locator("#reset-confirm")).to_contain_text("stops working")
    page.click("#reset-no")
    expect(page.locator("#reset-confirm")).to_be_hidden()
    assert profile_of(page)["secret"] == first["secret"]
    page.click("#reset-secret")
    page.click("#reset-yes")
    expect(page.locator("#profile-reset-done")).to_be_visible()
    second = profile_of(page)
    assert second["secret"].startswith("prf_") and second["secret"] != first["secret"]
    assert refused(url, "Community/GetMyProfile", {}, first["secret"])["code"] == "auth/unauthenticated"
    assert post(url, "Community/GetMyProfile", {}, second["secret"])["handle"] == name

    # The phone, holding the old secret, is told so and forgets it; the old link says it no longer works.
    phone.goto("/profile")
    expect(phone.locator("#profile-revoked")).to_be_visible()
    assert not profile_of(phone)
    phone.goto(link)
    expect(phone.locator("#profile-bad")).to_be_visible()
    assert not profile_of(phone)


# ------------------------------------------------------------------ the other games, read-only

def public_game(url: str, kind: str, **body: Any) -> str:
    """A public game of two, started, over the JSON door; its id."""
    made = post(url, "Lobby/CreateGame", {"game": kind, "seats": 2, "nickname": "ann", "public": True, **body})
    post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    game_id: str = made["game_id"]
    return game_id


def test_an_archipelago_game_watched_then_replayed_read_only(open_page: OpenPage, web_server: Served) -> None:
    """Two rounds of 4 s that the autopilot plays (nobody is connected): the spectator sees the map
    every seat explored and no orders, stock or tabs; at the end every unit, in its owner's colour;
    the replay steps through it from the whole game's view and from a seat's."""
    url = web_server.url
    game_id = public_game(url, "archipelago", deadline_seconds=4, archipelago={"max_rounds": 2})
    page = device(open_page, "he", "phone")
    page.goto(f"/watch/{game_id}")
    expect(page.locator("#arch-board")).to_be_visible()
    expect(page.locator("#spectating")).to_be_visible()
    if page.get_attribute("#over-slot", "data-over") is None and not page.locator("#game-over").count():
        for hidden in (".arch-bar", "#stock", ".arch-tabcard", "#done"):
            expect(page.locator(hidden)).to_be_hidden()
        expect(page.locator("#arch-board .u")).to_have_count(0)  # no unit is every player's knowledge
    expect(page.locator("#game-over")).to_be_visible(timeout=40_000)
    units = post(url, "Community/GetSpectatorView", {"game_id": game_id})["archipelago"]["units"]
    owners = {u["owner"] for u in units}
    assert owners == {0, 1}, owners
    on_board = [u for u in units if not u.get("carrier")]
    expect(page.locator("#arch-board .u")).to_have_count(len(on_board))
    fills = set(page.eval_on_selector_all("#arch-board .u rect", "rs => rs.map(r => r.getAttribute('fill'))"))
    assert len(fills) == 2, f"the units in their two owners' colours: {fills}"
    expect(page.locator("#tab-units")).to_be_visible()
    expect(page.locator(".arch-bar")).to_be_hidden()
    look(page, "he", "spectator-archipelago")

    page.click("#replay-button")
    where = page.locator("#replay-where")
    expect(where).to_have_attribute("data-frame", "0")
    assert int(where.get_attribute("data-frames") or "0") == 3, "a frame after each of rounds 0, 1 and 2 (the last)"
    page.click("#replay-next")
    expect(where).to_have_attribute("data-frame", "1")
    expect(page.locator("#arch-board .u").first).to_be_visible()
    page.select_option("#replay-seat", "0")
    expect(page.locator("#stock")).to_be_visible()  # a seat's view: its stock, read-only
    expect(page.locator(".arch-bar")).to_be_hidden()
    look(page, "he", "replay-archipelago")


def test_an_arcmage_game_watched_read_only(open_page: OpenPage, web_server: Served) -> None:
    url = web_server.url
    game_id = public_game(url, "arcmage", speed="SPEED_SLOW", arcmage={"decks": [{"built_in": "Gaian love for life"}]})
    page = device(open_page, "en", "phone")
    page.goto(f"/watch/{game_id}")
    expect(page.locator("#game-area .arc .arc-seat")).to_have_count(2)  # both seats' sides, by name
    expect(page.locator(".arc-seat.me")).to_have_count(0)
    for hidden in ("#arc-bar", "#arc-hand-box", "#arc-autopilot"):
        expect(page.locator(hidden)).to_be_hidden()
    expect(page.locator("#game-area .arc-card.legal")).to_have_count(0)
    look(page, "en", "spectator-arcmage")
