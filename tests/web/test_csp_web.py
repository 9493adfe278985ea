"""The page defends itself (issue 22): under the gateway's strict Content-Security-Policy (scripts, styles
and connections only from the gateway, no inline script, no framing) the home page, a lobby and a game
of each kind work — a move is made, the WebSocket stream brings the next round — and the browser
reports no violation: none through ``securitypolicyviolation`` events (listened to from an init script,
before any of the page's own), none on the console (the watched pages fail on any console error). The
rules pages and the not-found page load under the same policy, and the personal agent panel works."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, Response, expect

from tests.web.conftest import OpenPage, Served, Watched, post, until

pytestmark = pytest.mark.e2e

LISTEN = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push({directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile,
                     line: e.lineNumber, sample: e.sample});
});
"""


def defended(page: Page) -> Page:
    page.context.add_init_script(LISTEN)
    return page


def violations(page: Page) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = page.evaluate("window.__csp || null")
    assert got is not None, "the listener ran before the page's scripts"
    return got


def seat_of(page: Page) -> tuple[str, str]:
    """The game id and the secret the page keeps for it."""
    record: dict[str, Any] = page.evaluate("JSON.parse(localStorage.getItem('archipelago.seats'))")
    game_id = page.url.split("#", 1)[0].rsplit("/", 1)[1]
    return game_id, record[game_id]["secret"]


def view(served: Served, page: Page) -> dict[str, Any]:
    game_id, secret = seat_of(page)
    return post(served.url, "Game/GetView", {"game_id": game_id}, secret)


def open_lobby_with_autopilot(page: Page, game: str) -> None:
    """Home → open a game → the lobby → fill the other seat with the autopilot: the game shows."""
    page.goto("/")
    expect(page.locator("#nickname")).to_be_visible()
    page.fill("#nickname", "ann")
    page.select_option("#game-kind", game)
    if game != "salvo":
        page.select_option("#players", "2")
    page.click("#open")
    page.wait_for_selector("#game-code")
    assert violations(page) == [], "home and lobby"
    page.click("#fill")
    page.wait_for_selector("#game-area:not([hidden])")




def policy_of(resp: Response) -> str:
    return resp.headers.get("content-security-policy", "")


def test_the_page_works_under_the_policy_with_no_violation_in_each_game(open_page: OpenPage, web_server: Served,
                                                                        watched: Watched) -> None:
    page = defended(open_page())
    answers: list[Response] = []
    page.on("response", lambda r: answers.append(r))
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))

    # Salvo: the server places the fleet; the round closes (the autopilot is done) and a shot is fired.
    open_lobby_with_autopilot(page, "salvo")
    expect(page.locator(".salvo")).to_have_attribute("data-phase", "placement")
    page.click("#random-placement")
    page.click("#done")
    expect(page.locator(".salvo")).to_have_attribute("data-round", "1")
    page.click('#salvo-enemy [data-sq="E5"]')
    expect(page.locator('#salvo-enemy [data-sq="E5"]')).to_have_attribute("aria-pressed", "true")
    page.click("#done")
    expect(page.locator(".salvo")).to_have_attribute("data-round", "2")
    assert "E5" in json.dumps(view(web_server, page)["salvo"]), "the shot reached the server"
    assert violations(page) == [], "salvo"

    # Archipelago: round 0 is deployed as it stands (Done), round 1 opens; the agent panel works.
    open_lobby_with_autopilot(page, "archipelago")
    expect(page.locator("#round")).to_have_text(re.compile(r"\b0\b"))
    page.click("#done")
    expect(page.locator("#round")).to_have_text(re.compile(r"\b1\b"))
    assert view(web_server, page)["round"] == 1
    page.click("#tab-standing")
    page.fill("#agent-label", "csp check")
    page.click("#agent-create")
    expect(page.locator("#agent-new")).to_be_visible()
    assert page.input_value("#agent-new-token")
    assert violations(page) == [], "archipelago"

    # Arcmage: the player's first choice of its turn is taken by the server.
    open_lobby_with_autopilot(page, "arcmage")
    expect(page.locator("#arc-hand .arc-card").first).to_be_visible()
    before = int(view(web_server, page)["version"])
    choice = page.locator("#arc-choices button:not([disabled]), #arc-pass:not([disabled])").first
    expect(choice).to_be_visible()
    choice.click()
    until(lambda: int(view(web_server, page)["version"]) > before, "the server to take the page's choice")
    assert violations(page) == [], "arcmage"

    # Every answer the page got carried the policy: the page, its modules and styles, the JSON API.
    same_host = web_server.url.split("//", 1)[1]
    kinds = {"page": False, "script": False, "style": False, "api": False}
    for r in answers:
        if not r.url.startswith(web_server.url):
            continue
        csp = policy_of(r)
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, (r.url, csp)
        assert f"ws://{same_host}" in csp and r.headers.get("x-content-type-options") == "nosniff", r.url
        kinds["page"] |= r.request.resource_type == "document"
        kinds["script"] |= r.url.endswith(".js")
        kinds["style"] |= r.url.endswith(".css")
        kinds["api"] |= "/v1/" in r.url
    assert all(kinds.values()), kinds
    assert sockets and all(s.startswith(f"ws://{same_host}/v1/Game/Watch") for s in sockets), sockets
    assert not watched.unexpected(), watched.unexpected()


def test_rules_and_not_found_pages_load_under_the_policy(open_page: OpenPage, watched: Watched) -> None:
    watched.allowed.append("HTTP 404: GET")  # the not-found page's own status
    watched.allowed.append("status of 404")
    page = defended(open_page("phone"))
    for game, rule in (("archipelago", "A24"), ("salvo", "S5"), ("arcmage", "M18")):
        page.goto(f"/rules/{game}#{rule}")
        anchor = page.locator(f"[id='{rule}']")
        expect(anchor).to_have_count(1)
        expect(page.locator("html")).to_have_attribute("lang", "en")
        # the page landed on the rule: its passage is in the viewport, highlighted by the stylesheet
        assert page.evaluate(f"""() => {{ const r = document.getElementById('{rule}').parentElement
                                  .getBoundingClientRect(); return r.top >= -1 && r.top < innerHeight; }}""")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways page"
        assert violations(page) == [], game
    resp = page.goto("/no/such/page")
    assert resp is not None and resp.status == 404
    expect(page.locator("[data-testid=not-found] h1")).to_have_text("Page not found")
    page.click("[data-testid=home-link]")
    expect(page.locator("#nickname")).to_be_visible()
    assert violations(page) == []
