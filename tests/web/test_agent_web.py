"""The personal AI agent panel (W7 bottom; rule A90): at the bottom of the Archipelago Standing tab
and under the Salvo lists. A player creates an agent token, sees it once with a ready-to-paste MCP
client configuration, the token plays as that player (the same view) on the other doors, the list
shows the live tokens, and a revoked token is refused at once. The list is read when the panel is
first seen and after each change, not on every view."""

from __future__ import annotations

import json
import re
import urllib.error
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.sync_api import Page, Request, expect

from tests.web.conftest import OpenPage, Served, Watched, join_by_link, post, shot, start

pytestmark = pytest.mark.e2e

HEBREW = re.compile("[\u0590-\u05ff]")


def secret_of(page: Page) -> str:
    """The page's own secret, from its rejoin link."""
    return unquote(page.input_value("#rejoin-link").split("#", 1)[1])


def game_id_of(page: Page) -> str:
    return page.url.rsplit("/", 1)[1]


def refused(url: str, rpc: str, body: dict[str, Any], secret: str) -> int:
    """The HTTP status of a call that must be refused."""
    with pytest.raises(urllib.error.HTTPError) as caught:
        post(url, rpc, body, secret)
    with caught.value as err:  # (its response closed)
        return err.code


def count_lists(page: Page) -> list[str]:
    """Every ListAgentTokens request the page makes, as it makes it."""
    seen: list[str] = []

    def on_request(r: Request) -> None:
        if r.url.endswith("/v1/Game/ListAgentTokens"):
            seen.append(r.url)

    page.on("request", on_request)
    return seen


# ------------------------------------------------------------------------------------------------ A90
def test_a90_agent_token_is_shown_once_plays_as_the_player_and_is_revoked(open_page: OpenPage, web_server: Served,
                                                                           watched: Watched) -> None:
    ann, bob = open_page(), open_page("phone")
    lists = count_lists(ann)
    ann.goto("/")
    ann.fill("#nickname", "ann")
    ann.select_option("#game-kind", "archipelago")
    ann.select_option("#players", "2")
    ann.select_option("#speed", "SPEED_SLOW")  # 8-hour rounds: none closes during the test
    ann.click("#open")
    ann.wait_for_selector("#game-code")
    join_by_link(bob, ann.input_value("#invite-link"), "bob")
    start(ann, bob)
    game_id, secret = game_id_of(ann), secret_of(ann)
    ann.wait_for_selector("#tab-standing")
    assert lists == [], "the tokens are read when the panel is first seen, not before"

    # The Standing tab ends with the panel: the explanation, the MCP endpoint, no token yet.
    ann.click("#tab-standing")
    panel = ann.locator("#agent")
    panel.scroll_into_view_if_needed()
    expect(panel.locator("h3")).to_have_text("Personal AI agent")
    expect(panel).to_contain_text("MCP (the Model Context Protocol)")
    expect(panel).to_contain_text("Revoke its token to stop it at once")
    expect(ann.locator("#agent-empty")).to_be_visible()
    expect(ann.locator("#agent-count")).to_have_text("0 of 5")
    assert ann.input_value("#agent-url") == f"{web_server.url}/mcp"
    expect(ann.locator("#agent-url-copy")).to_be_visible()
    expect(ann.locator("#agent-new")).to_be_hidden()
    assert len(lists) == 1

    # Create one with a label: the token is shown with its warning and the MCP client configuration.
    ann.fill("#agent-label", "ann's laptop")
    ann.click("#agent-create")
    expect(ann.locator("#agent-new")).to_be_visible()
    expect(ann.locator("#agent-new")).to_contain_text("shown only this once")
    token = ann.input_value("#agent-new-token")
    assert token and token != secret
    expect(ann.locator("#agent-token-copy")).to_be_visible()
    config = json.loads(ann.inner_text("#agent-config"))
    server = config["mcpServers"]["archipelago"]
    assert server == {"url": f"{web_server.url}/mcp", "headers": {"Authorization": f"Bearer {token}"}}
    assert ann.input_value("#agent-label") == "", "the form is ready for the next one"

    # The list shows it (label, creation time); the server lists it without the token string.
    rows = ann.locator("#agent-tokens li[data-token-id]")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".agent-token-label")).to_have_text("ann's laptop")
    expect(rows.first.locator("time")).to_contain_text("created")
    expect(ann.locator("#agent-count")).to_have_text("1 of 5")
    listed = post(web_server.url, "Game/ListAgentTokens", {"game_id": game_id}, secret)["tokens"]
    assert [t["token_id"] for t in listed] == [rows.first.get_attribute("data-token-id")]
    assert listed[0]["label"] == "ann's laptop" and listed[0]["token"] == ""
    when = ann.get_attribute("#agent-tokens li time", "datetime") or ""
    assert abs(ann.evaluate("d => Date.parse(d)", when) - int(listed[0]["created_unix_ms"])) < 1000

    # The token plays as ann: the same view as her own secret gives.
    as_agent = post(web_server.url, "Game/GetView", {"game_id": game_id}, token)
    as_ann = post(web_server.url, "Game/GetView", {"game_id": game_id}, secret)
    assert as_agent["you"] == as_ann["you"] == 0
    assert as_agent["archipelago"]["stock"] == as_ann["archipelago"]["stock"]

    # Views go on arriving (a chat from bob); the list is not read again for them.
    reads = len(lists)
    with ann.expect_response(lambda r: r.url.endswith("/v1/Game/GetView")):
        post(web_server.url, "Game/Act", {"game_id": game_id, "chat": {"text": "hello"}},
             secret_of(bob))
    ann.wait_for_timeout(300)
    assert len(lists) == reads
    shot(ann, "agent")

    # Shown once: after a reload the token is nowhere on the page nor in its storage; the list stays.
    watched.allowed.append("GetView net::ERR_ABORTED")  # a view read cut by the reload itself
    ann.reload()
    ann.click("#tab-standing")
    expect(ann.locator("#agent-tokens li[data-token-id]")).to_have_count(1)
    expect(ann.locator("#agent-new")).to_be_hidden()
    assert token not in ann.content()
    assert token not in ann.evaluate("JSON.stringify(localStorage)")

    # Revoke: gone from the list at once, and the token is refused from the next call on.
    ann.click("#agent-tokens li[data-token-id] button.revoke")
    expect(ann.locator("#agent-tokens li[data-token-id]")).to_have_count(0)
    expect(ann.locator("#agent-status")).to_contain_text("revoked")
    expect(ann.locator("#agent-empty")).to_be_visible()
    assert refused(web_server.url, "Game/GetView", {"game_id": game_id}, token) == 401
    assert post(web_server.url, "Game/ListAgentTokens", {"game_id": game_id}, secret).get("tokens", []) == []
    assert post(web_server.url, "Game/GetView", {"game_id": game_id}, secret)["you"] == 0  # ann herself plays on


# ------------------------------------------------------------------------------------------------ W7
def test_w7_salvo_players_have_the_agent_panel_too(open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    """On a phone in Hebrew (right to left): the panel under the Salvo lists, the endpoint and the token
    left to right, the limit of 5 live tokens and its refusal shown next to the control."""
    made = post(web_server.url, "Lobby/CreateGame", {"game": "salvo", "seats": 2, "nickname": "ann",
                                                     "deadline_seconds": 600})
    post(web_server.url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(web_server.url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    game_id, secret = made["game_id"], made["secret"]
    for i in range(4):  # four made elsewhere (another device of ann's)
        post(web_server.url, "Game/CreateAgentToken", {"game_id": game_id, "label": f"agent {i}"}, secret)

    ann = open_page("phone", locale="he-IL")
    record = json.dumps({game_id: {"secret": secret, "seat": 0, "game": "salvo"}})
    ann.context.add_init_script(f"localStorage.setItem('archipelago.seats', {json.dumps(record)})")
    ann.goto(f"/game/{game_id}")
    ann.wait_for_selector("#salvo-own .cell")
    assert ann.get_attribute("html", "dir") == "rtl"

    panel = ann.locator(".salvo-info #agent")
    panel.scroll_into_view_if_needed()
    expect(panel.locator("h3")).to_have_text("סוכן AI אישי")
    expect(panel).to_contain_text("שרת MCP")
    expect(ann.locator("#agent-tokens li[data-token-id]")).to_have_count(4)
    expect(ann.locator("#agent-create")).to_be_enabled()
    for sel in ("#agent-url", "#agent-new-token", "#agent-config"):
        assert ann.eval_on_selector(sel, "e => getComputedStyle(e).direction") == "ltr", sel
    assert ann.eval_on_selector("#agent", "e => getComputedStyle(e).direction") == "rtl"

    # A fifth made elsewhere meanwhile: the page's create is refused (409 lobby/conflict), in Hebrew,
    # next to the button; the list is read again and the button waits for a revocation.
    post(web_server.url, "Game/CreateAgentToken", {"game_id": game_id, "label": "agent 4"}, secret)
    watched.allowed += ["status of 409", "HTTP 409: POST"]  # the refusal below is the API's answer, shown
    ann.click("#agent-create")
    error = ann.locator("#agent .agent-create-row + .error")
    expect(error).to_contain_text("לכל היותר 5 טוקנים פעילים")
    expect(ann.locator("#agent-tokens li[data-token-id]")).to_have_count(5)
    expect(ann.locator("#agent-create")).to_be_disabled()
    expect(ann.locator("#agent-full")).to_be_visible()

    # One revoked elsewhere meanwhile: revoking it here is refused (404) next to the list, which is
    # read again; with 4 left the button is back.
    first = ann.locator("#agent-tokens li[data-token-id]").first
    gone = first.get_attribute("data-token-id")
    post(web_server.url, "Game/RevokeAgentToken", {"game_id": game_id, "token_id": gone}, secret)
    watched.allowed += ["status of 404", "HTTP 404: POST"]
    first.locator("button.revoke").click()
    expect(ann.locator("#agent-tokens + .error")).to_have_text("הטוקן הזה כבר בוטל")
    expect(ann.locator("#agent-tokens li[data-token-id]")).to_have_count(4)
    expect(ann.locator("#agent-create")).to_be_enabled()
    expect(ann.locator("#agent-full")).to_be_hidden()

    # A token without a label gets a name in the list.
    ann.click("#agent-create")
    expect(ann.locator("#agent-new")).to_be_visible()
    expect(error).to_have_count(0)
    token = ann.input_value("#agent-new-token")
    expect(ann.locator("#agent-tokens li.new .agent-token-label")).to_have_text("טוקן ללא שם")
    assert HEBREW.search(ann.inner_text("#agent-new .warning") or "")
    assert post(web_server.url, "Game/GetView", {"game_id": game_id}, token)["you"] == 0
    ann.locator("#agent-new").scroll_into_view_if_needed()
    shot(ann, "agent-salvo-phone-he")

    # Hiding the token takes it off the page.
    ann.click("#agent-new-hide")
    expect(ann.locator("#agent-new")).to_be_hidden()
    assert token not in ann.content()
