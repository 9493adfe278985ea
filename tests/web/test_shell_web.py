"""The page around the games (W1, W2, W9, W13 and the real world): home, lobby, rejoin link, languages,
phone and desktop, network drops. Game screens have their own files."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import OpenPage, Served, Watched, create_game, join_by_link, post, shot, start, until
from tests.web.proxy import proxy_to

pytestmark = pytest.mark.e2e




def api_game(url: str, game: str = "archipelago", deadline_s: float = 600) -> dict[str, Any]:
    """A started 2-player game made over the JSON door: the host's and the second player's secrets."""
    made = post(url, "Lobby/CreateGame", {"game": game, "seats": 2, "nickname": "ann",
                                          "deadline_seconds": deadline_s})
    joined = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "code": made["code"], "ann": made["secret"], "bob": joined["secret"]}


def seat_of(url: str, game: dict[str, Any], who: str, seat: int) -> dict[str, Any]:
    view = post(url, "Game/GetView", {"game_id": game["id"]}, game[who])
    player: dict[str, Any] = next(p for p in view["players"] if p["seat"] == seat)
    return player


def bob_is_here(open_page: OpenPage, game: dict[str, Any], web_server: Served) -> None:
    """Bob's page is open (his stream counts him as connected, A17)."""
    bob = open_page()
    bob.goto(f"/rejoin#{game['bob']}")
    bob.wait_for_selector("#game-area:not([hidden])")
    until(lambda: seat_of(web_server.url, game, "ann", 1)["connected"], "bob's stream to open")


# ------------------------------------------------------------------------------------------- W1, W2

def test_w1_w2_invite_link_and_a_lobby_that_fills_live(open_page: OpenPage) -> None:
    host, guest = open_page(), open_page()
    host.context.grant_permissions(["clipboard-read", "clipboard-write"])
    invite = create_game(host, "ann", "archipelago", players=3)
    code = host.inner_text("#game-code")
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", code), code
    assert invite.endswith(f"/join/{code}")
    expect(host.locator("#start")).to_be_disabled()
    expect(host.locator("#seats li.taken")).to_have_count(1)

    host.click("#copy-code")
    assert host.evaluate("navigator.clipboard.readText()") == code
    host.click("#copy-invite")
    assert host.evaluate("navigator.clipboard.readText()") == invite

    guest.goto(invite)
    expect(guest.locator("#code")).to_have_value(code)
    guest.fill("#nickname", "bob")
    guest.click("#join")
    expect(guest.locator("#wait-host")).to_be_visible()
    expect(host.locator("#seats li.taken")).to_have_count(2)  # live, without a reload
    expect(host.locator("#seats li.taken").nth(1)).to_contain_text("bob")
    expect(host.locator("#start")).to_be_disabled()  # 2 of 3 seats
    shot(host, "lobby")
    host.click("#fill")
    for p in (host, guest):
        p.wait_for_selector("#game-area:not([hidden])")
        expect(p.locator("#players li")).to_have_count(3)
        expect(p.locator("#players li").nth(2)).to_contain_text(re.compile("autopilot"))


def test_w1_bad_input_shows_a_translated_error_next_to_its_button(open_page: OpenPage, watched: Watched) -> None:
    watched.allowed.append("status of 404")  # the unknown code below: the API's answer, shown to the player
    watched.allowed.append("HTTP 404: POST")
    page = open_page(locale="he-IL")
    page.goto("/join/ZZZZZ2")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    page.click("#join")  # no nickname yet
    expect(page.locator("#join + .error")).to_contain_text("כינוי")
    page.fill("#nickname", "דנה")
    page.click("#join")
    error = page.locator("#join + .error")
    expect(error).to_have_attribute("data-code", "lookup/not_found")
    expect(error).to_contain_text("לא נמצא")
    expect(error).to_contain_text("A2")
    assert page.url.endswith("/join/ZZZZZ2")  # nothing happened


# ------------------------------------------------------------------------------------------- W9

def test_w9_rejoin_link_continues_as_the_same_player_on_another_device(open_page: OpenPage) -> None:
    host, guest = open_page(), open_page()
    invite = create_game(host, "ann", "archipelago")
    join_by_link(guest, invite, "bob")
    start(host, guest)
    expect(guest.locator("#side .rejoin .warning")).to_be_visible()
    link = guest.input_value("#rejoin-link")
    assert "/rejoin#" in link
    game_url = guest.url
    guest.context.close()  # the tab (and its device) is gone

    other = open_page(viewport="phone")
    other.goto(link)
    other.wait_for_url(game_url)
    assert "#" not in other.url, "the secret leaves the address bar"
    me = other.locator("#players li.me")
    expect(me).to_contain_text("bob")
    expect(other.locator("#rejoin-link")).to_have_value(link)


def test_w9_a_device_without_the_seat_is_told_how_to_get_it_back(open_page: OpenPage) -> None:
    host, stranger = open_page(), open_page()
    create_game(host, "ann", "salvo")
    stranger.goto(host.url)
    expect(stranger.locator("main")).to_contain_text("rejoin link")
    expect(stranger.locator("#game-area")).to_have_count(0)


# ------------------------------------------------------------------------------------------- W13

@pytest.mark.parametrize("viewport", ["phone", "desktop"])
@pytest.mark.parametrize(("locale", "direction", "open_label"), [("he-IL", "rtl", "פתח משחק"),
                                                                 ("en-GB", "ltr", "Open game")])
def test_w13_language_follows_the_browser_and_sets_the_direction(
        open_page: OpenPage, viewport: str, locale: str, direction: str, open_label: str) -> None:
    page = open_page(viewport=viewport, locale=locale)
    page.goto("/")
    expect(page.locator("#open")).to_have_text(open_label)
    expect(page.locator("html")).to_have_attribute("dir", direction)
    assert page.evaluate("getComputedStyle(document.querySelector('#open-card')).direction") == direction
    # the card's content starts on the reading side: in rtl its button hugs the card's right edge
    box = page.evaluate("""() => { const c = document.querySelector('#open-card').getBoundingClientRect();
        const t = document.querySelector('#open').getBoundingClientRect();
        return {gapStart: t.left - c.left, gapEnd: c.right - t.right}; }""")
    if direction == "rtl":
        assert box["gapEnd"] < box["gapStart"], box
    else:
        assert box["gapStart"] < box["gapEnd"], box
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"
    shot(page, f"home-{locale[:2]}-{viewport}")


def test_w13_language_switch_is_remembered(open_page: OpenPage, watched: Watched) -> None:
    watched.allowed.append("Lobby/ListGames net::ERR_ABORTED")  # the reload aborts a listing still in flight
    page = open_page(locale="en-US")
    page.goto("/")
    page.select_option("#lang", "he")
    expect(page.locator("#open")).to_have_text("פתח משחק")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    page.reload()
    expect(page.locator("#open")).to_have_text("פתח משחק")
    page.select_option("#lang", "en")
    expect(page.locator("html")).to_have_attribute("dir", "ltr")
    expect(page.locator("#open")).to_have_text("Open game")


# ------------------------------------------------------------------------------------------- the real world

def test_websocket_cut_mid_round_the_page_catches_up_by_itself(
        open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    game = api_game(web_server.url)
    with proxy_to(web_server.url) as proxy:
        page = open_page(base_url=f"http://127.0.0.1:{proxy.port}")
        page.goto(f"/rejoin#{game['ann']}")
        page.wait_for_selector("#game-area:not([hidden])")
        expect(page.locator("#round")).to_contain_text("Round 0")
        until(lambda: seat_of(web_server.url, game, "bob", 0)["connected"], "ann's stream to open")

        bob_is_here(open_page, game, web_server)  # bob plays on, straight to the gateway

        proxy.hold()  # new connections wait …
        assert proxy.cut() == 1  # … and the open stream drops
        expect(page.locator("#net")).to_have_attribute("data-state", "offline")
        expect(page.locator("#net")).to_contain_text("Offline")
        until(lambda: not seat_of(web_server.url, game, "bob", 0)["connected"], "the server to see ann leave")

        # the round goes on without her: bob is the only one connected, his orders close it (A17)
        view = post(web_server.url, "Game/GetView", {"game_id": game["id"]}, game["bob"])
        post(web_server.url, "Game/SubmitOrders", {"game_id": game["id"], "version": view["version"],
                                                   "archipelago": {}}, game["bob"])
        post(web_server.url, "Game/Act", {"game_id": game["id"], "chat": {"text": "still there?"}}, game["bob"])
        until(lambda: post(web_server.url, "Game/GetView", {"game_id": game["id"]}, game["bob"])["round"] == 1,
              "round 1")
        expect(page.locator("#round")).to_contain_text("Round 0")  # the page cannot know yet

        proxy.release()
        expect(page.locator("#round")).to_contain_text("Round 1")
        expect(page.locator("#net")).to_have_attribute("data-state", "online")
        assert proxy.websockets_seen == 2, "one reconnection, not a storm"
        until(lambda: seat_of(web_server.url, game, "bob", 0)["connected"], "ann to count as connected again")
        expect(page.locator("#players li.me")).to_contain_text("online")
        problems = watched.unexpected()
        watched.closing = True  # the proxy goes before the page: what the page asks then is refused
    assert not problems, "\n".join(problems)


def test_orders_entered_offline_are_sent_when_the_network_is_back(
        open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    # Going offline makes the browser log and fail the requests it tries: that is the point here.
    watched.allowed += ["ERR_INTERNET_DISCONNECTED", "WebSocket connection to"]
    game = api_game(web_server.url)
    page = open_page()
    page.goto(f"/rejoin#{game['ann']}")
    page.wait_for_selector("#done")
    bob_is_here(open_page, game, web_server)  # so that ann's orders alone do not close the round
    page.context.set_offline(True)
    page.click("#done")
    expect(page.locator("#queued")).to_be_visible()
    expect(page.locator("#net")).to_have_attribute("data-state", "offline")
    assert not seat_of(web_server.url, game, "bob", 0)["submitted"]
    page.context.set_offline(False)
    expect(page.locator("#queued")).to_have_count(0)
    until(lambda: seat_of(web_server.url, game, "bob", 0)["submitted"], "ann's queued orders to arrive")
    expect(page.locator("#done")).to_have_text("Update orders")


def test_a_queued_submission_survives_a_reload(open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    # offline on purpose, and a reload aborts whatever request the page had in flight
    watched.allowed += ["ERR_INTERNET_DISCONNECTED", "WebSocket connection to", "net::ERR_ABORTED"]
    game = api_game(web_server.url)
    page = open_page()
    page.goto(f"/rejoin#{game['ann']}")
    page.wait_for_selector("#done")
    bob_is_here(open_page, game, web_server)
    game_url = page.url
    page.context.set_offline(True)
    page.click("#done")
    expect(page.locator("#queued")).to_be_visible()
    # the network comes back but the send keeps failing, and the player reloads the page
    page.route("**/v1/Game/SubmitOrders", lambda route: route.abort("internetdisconnected"))
    page.context.set_offline(False)
    page.goto(game_url)
    expect(page.locator("#queued")).to_be_visible()
    assert not seat_of(web_server.url, game, "bob", 0)["submitted"]
    page.unroute("**/v1/Game/SubmitOrders")  # the page keeps trying by itself
    until(lambda: seat_of(web_server.url, game, "bob", 0)["submitted"], "the orders kept across the reload")
    expect(page.locator("#queued")).to_have_count(0)


def test_page_needs_no_network_but_the_gateway(open_page: OpenPage, web_server: Served) -> None:
    page = open_page()
    hosts: set[str] = set()
    page.on("request", lambda r: hosts.add(r.url.split("/")[2]))
    create_game(page, "ann", "salvo")
    assert hosts == {web_server.url.removeprefix("http://")}, hosts
