"""Done-when of the web client for Archipelago: two devices create and join a fast game by invite link,
deploy, play two rounds with moves and a build, chat and trade; one closes its tab and comes back by
its rejoin link to the same game. Every step through the page; the server's own view (read with the
secret from the page's rejoin link) confirms what the page claims."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, create_game, join_by_link, post, shot, start

pytestmark = pytest.mark.e2e


def secret_of(page: Page) -> str:
    return unquote(page.input_value("#rejoin-link").split("#", 1)[1])


def server_view(url: str, page: Page) -> dict[str, Any]:
    game_id = page.url.rsplit("/", 1)[1]
    view: dict[str, Any] = post(url, "Game/GetView", {"game_id": game_id}, secret_of(page))
    return view


def tile_of(el: Any) -> tuple[int, int]:
    return int(el.get_attribute("data-x")), int(el.get_attribute("data-y"))


def wait_round(page: Page, n: int) -> None:
    expect(page.locator("#round")).to_have_text(re.compile(rf"\b{n}\b"))


def test_w3_w4_w6_w9_two_devices_play_archipelago_in_the_browser(open_page: OpenPage, web_server: Served) -> None:
    ann, bob = open_page(), open_page(viewport="phone")
    invite = create_game(ann, "ann", "archipelago")
    join_by_link(bob, invite, "bob")
    start(ann, bob)

    # Round 0 (W3): ann places her first land unit on another highlighted tile of her island
    wait_round(ann, 0)
    before = {u["id"]: u["tile"] for u in server_view(web_server.url, ann)["archipelago"]["units"]}
    ann.click("#tab-units")
    first = ann.locator("#unit-list li[data-unit]").first
    unit_id = first.get_attribute("data-unit")
    first.click()
    ann.click("#place")
    targets = ann.locator("#arch-board .tile.hl")
    assert targets.count() > 1
    target = next(t for t in targets.all() if tile_of(t) != (before[unit_id]["x"], before[unit_id]["y"]))
    dest = tile_of(target)
    target.click()
    ann.click("#done")
    bob.click("#done")
    wait_round(ann, 1)
    wait_round(bob, 1)
    units = server_view(web_server.url, ann)["archipelago"]["units"]
    placed = {u["id"]: (u["tile"]["x"], u["tile"]["y"]) for u in units}
    assert placed[unit_id] == dest

    # Round 1 (W4): ann moves a unit to a highlighted tile and builds what she can afford
    view = server_view(web_server.url, ann)["archipelago"]
    occupied = {(u["tile"]["x"], u["tile"]["y"]) for u in view["units"]}
    free = None
    # a unit with a free tile in reach (land units can be boxed in by their own on a small island)
    movable = [u for u in view["units"] if u["type"] not in ("flag", "landmine")]
    for unit in sorted(movable, key=lambda u: not u["type"].startswith("rank")):
        ann.click(f"#unit-list li[data-unit='{unit['id']}']")
        ann.click("#move")
        expect(ann.locator("#cancel-mode")).to_be_visible()  # in move mode: its tiles are highlighted
        reach = ann.locator("#arch-board .tile.hl")
        free = next((t for t in reach.all() if tile_of(t) not in occupied), None)
        if free is not None:
            mover = unit["id"]
            break
        ann.click("#cancel-mode")
    assert free is not None, "some unit can reach a free tile"
    goal = tile_of(free)
    free.click()
    ann.click("#tab-build")
    affordable = ann.locator("#panel-build button[data-build]:not([disabled])")
    assert affordable.count() >= 1
    built = affordable.first.get_attribute("data-build")
    affordable.first.click()
    expect(ann.locator("#build-list li")).to_have_count(1)
    shot(ann, "board")
    ann.click("#done")
    expect(ann.locator("#done")).to_have_text("Update orders")
    bob.click("#done")
    wait_round(ann, 2)
    after = server_view(web_server.url, ann)["archipelago"]
    moved = next(u for u in after["units"] if u["id"] == mover)
    assert (moved["tile"]["x"], moved["tile"]["y"]) == goal
    assert sum(u["type"] == built for u in after["units"]) > sum(u["type"] == built for u in view["units"])

    # Round 2 (W6): chat and a trade, then both are done
    ann.click("#tab-trade")
    bob.click("#tab-trade")
    ann.fill("#chat-text", "shalom bob")
    ann.click("#chat-send")
    expect(bob.locator("#chat-log li").last).to_contain_text("shalom bob")
    stock_ann = server_view(web_server.url, ann)["archipelago"]["stock"]
    stock_bob = server_view(web_server.url, bob)["archipelago"]["stock"]
    give = next(r for r in ("wood", "food", "iron", "fuel") if stock_ann[r] > 0)
    get = next(r for r in ("wood", "food", "iron", "fuel") if stock_bob[r] > 0 and r != give)
    ann.fill(f"#offer-give-{give}", "1")
    ann.fill(f"#offer-get-{get}", "1")
    ann.click("#offer-send")
    offer = bob.locator("#offers li[data-offer]")
    expect(offer).to_have_count(1)
    shot(bob, "trade")
    offer.locator("button.accept").click()
    expect(ann.locator("#offers li[data-offer]")).to_have_count(0)
    new_ann = server_view(web_server.url, ann)["archipelago"]["stock"]
    assert new_ann[give] == stock_ann[give] - 1 and new_ann[get] == stock_ann[get] + 1
    expect(ann.locator(f"#stock [data-res='{get}']")).to_contain_text(str(new_ann[get]))
    ann.click("#done")
    bob.click("#done")
    wait_round(ann, 3)

    # W9: bob closes his tab and comes back on another device by his rejoin link
    link = bob.input_value("#rejoin-link")
    game_url = bob.url
    bob.context.close()
    again = open_page(viewport="phone")
    again.goto(link)
    again.wait_for_url(game_url)
    wait_round(again, 3)
    expect(again.locator("#players li.me")).to_contain_text("bob")
    expect(again.locator("#arch-board [data-unit]").first).to_be_visible()
