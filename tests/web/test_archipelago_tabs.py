"""The Archipelago Trade tab (W6: offers, the bank, chat, per-round limits; rules A52, A53) and the
Standing orders tab (W7: posture, per-unit orders, build queue, bonus, automatic trade rules; A70–A74).

Every game here is slow (8-hour rounds), so no round closes in the middle of a test: everything
happens in round 0, where trading and chat are already open. The pages are checked against each
player's own view, read from the server with the secret of the page's rejoin link."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, Watched, join_by_link, post, shot, start

pytestmark = pytest.mark.e2e

RESOURCES = ("wood", "food", "iron", "fuel")


def open_slow_game(host: Page, nickname: str, players: int) -> str:
    """From the home page: open a slow Archipelago game; returns its invite link."""
    host.goto("/")
    host.fill("#nickname", nickname)
    host.select_option("#game-kind", "archipelago")
    host.select_option("#players", str(players))
    host.select_option("#speed", "SPEED_SLOW")
    host.click("#open")
    host.wait_for_selector("#game-code")
    return host.input_value("#invite-link")


def play(host: Page, *others: tuple[Page, str]) -> None:
    """ann hosts a game for 1 + len(others) players; the others join by the invite link; it starts."""
    invite = open_slow_game(host, "ann", 1 + len(others))
    for page, nickname in others:
        join_by_link(page, invite, nickname)
    start(host, *(p for p, _ in others))


def secret_of(page: Page) -> str:
    return unquote(page.input_value("#rejoin-link").split("#", 1)[1])


def server_view(url: str, page: Page) -> dict[str, Any]:
    game_id = page.url.rsplit("/", 1)[1]
    view: dict[str, Any] = post(url, "Game/GetView", {"game_id": game_id}, secret_of(page))
    return view


def stock(url: str, page: Page) -> dict[str, int]:
    return {r: int(n) for r, n in server_view(url, page)["archipelago"]["stock"].items()}


def reload(page: Page, watched: Watched) -> None:
    """Reload the page; a view read still in flight is cut by the reload itself (no fault of the page)."""
    if "GetView net::ERR_ABORTED" not in watched.allowed:
        watched.allowed.append("GetView net::ERR_ABORTED")
    page.reload()


def trade_tab(page: Page) -> None:
    page.click("#tab-trade")
    expect(page.locator("#offer-send")).to_be_visible()


def standing_tab(page: Page) -> None:
    page.click("#tab-standing")
    expect(page.locator("#standing-save")).to_be_visible()


def expect_have(page: Page, have: dict[str, int]) -> None:
    """The Trade tab's "you have" column shows this stock."""
    for r, n in have.items():
        expect(page.locator(f"td[data-have='{r}']")).to_have_text(str(n))


def offer(page: Page, to: str | None, give: dict[str, int], get: dict[str, int]) -> None:
    """Fill in and send an offer (to a nickname, or to everyone)."""
    if to:
        page.select_option("#offer-to", label=to)
    else:
        page.select_option("#offer-to", value="")
    for r in RESOURCES:
        page.fill(f"#offer-give-{r}", str(give.get(r, "")))
        page.fill(f"#offer-get-{r}", str(get.get(r, "")))
    expect(page.locator("#offer-send")).to_be_enabled()
    page.click("#offer-send")
    given = next(r for r in RESOURCES if give.get(r))
    expect(page.locator(f"#offer-give-{given}")).to_have_value("")  # sent: the form is cleared


def test_w6_an_offer_accepted_moves_the_goods_on_both_pages(open_page: OpenPage, web_server: Served) -> None:
    ann, bob = open_page(), open_page(viewport="phone", locale="he-IL")
    play(ann, (bob, "bob"))
    trade_tab(ann)
    trade_tab(bob)
    before_ann, before_bob = stock(web_server.url, ann), stock(web_server.url, bob)
    assert before_ann["wood"] >= 1 and before_bob["food"] >= 1  # the starting stock (guide: 1 wood, 2 food)
    expect_have(ann, before_ann)
    expect_have(bob, before_bob)

    # ann offers bob alone 1 wood for 1 food: her page lists it as hers, his as one to him alone
    offer(ann, "bob", {"wood": 1}, {"food": 1})
    mine = ann.locator("#offers li[data-offer]")
    expect(mine).to_have_count(1)
    expect(mine).to_contain_text("Your offer to bob")
    expect(mine.locator("button.withdraw")).to_be_visible()
    expect(ann.locator("#offers-left")).to_have_text("2 of 3 offers left this round")
    assert ann.input_value("#offer-give-wood") == "" and ann.input_value("#offer-get-food") == ""  # cleared
    incoming = bob.locator("#offers li[data-offer]")
    expect(incoming).to_have_count(1)
    expect(incoming).to_contain_text("ann")
    expect(incoming.locator("button.decline")).to_be_visible()
    shot(bob, "w6-offer-phone-he")

    # bob accepts: the goods move at once, on both pages and on the server
    incoming.locator("button.accept").click()
    expect(ann.locator("#offers li[data-offer]")).to_have_count(0)
    expect(bob.locator("#offers li[data-offer]")).to_have_count(0)
    after_ann = {**before_ann, "wood": before_ann["wood"] - 1, "food": before_ann["food"] + 1}
    after_bob = {**before_bob, "wood": before_bob["wood"] + 1, "food": before_bob["food"] - 1}
    expect_have(ann, after_ann)
    expect_have(bob, after_bob)
    assert stock(web_server.url, ann) == after_ann
    assert stock(web_server.url, bob) == after_bob


def test_w6_a_bank_trade_at_the_rate_shown(open_page: OpenPage, web_server: Served) -> None:
    ann, bob = open_page(), open_page()
    play(ann, (bob, "bob"))
    trade_tab(ann)
    trade_tab(bob)
    view = server_view(web_server.url, ann)["archipelago"]
    control = {(c["x"], c["y"]) for c in view["control"]}
    port = any(p["resource"] == "food" and (p["tile"]["x"], p["tile"]["y"]) in control for p in view["ports"])
    rate = 2 if port else 4  # A52
    have = stock(web_server.url, ann)

    ann.select_option("#bank-give", "food")
    ann.select_option("#bank-get", "iron")
    ann.fill("#bank-times", "1")
    expect(ann.locator("#bank-rate")).to_have_text(f"{rate}:1")
    if have["food"] < rate:  # not enough food yet: the button says no, and why
        expect(ann.locator("#bank-send")).to_be_disabled()
        expect(ann.locator("#bank-summary")).to_contain_text(f"{rate} food")
        # bob sells ann the food she lacks for 1 wood
        offer(ann, "bob", {"wood": 1}, {"food": rate - have["food"]})
        bob.locator("#offers li[data-offer] button.accept").click()
        expect(ann.locator("td[data-have='food']")).to_have_text(str(rate))
        have = stock(web_server.url, ann)
    expect(ann.locator("#bank-send")).to_be_enabled()
    expect(ann.locator("#bank-summary")).to_have_text(f"You pay {rate} food and get 1 iron.")
    ann.click("#bank-send")
    expect(ann.locator("td[data-have='iron']")).to_have_text(str(have["iron"] + 1))
    expect(ann.locator("td[data-have='food']")).to_have_text(str(have["food"] - rate))
    assert stock(web_server.url, ann) == {**have, "food": have["food"] - rate, "iron": have["iron"] + 1}
    expect(ann.locator("#bank-send")).to_be_disabled()  # the food is gone


def test_w6_chat_to_all_and_a_private_message_the_third_player_never_sees(open_page: OpenPage) -> None:
    ann, bob, cat = open_page(), open_page(), open_page(viewport="phone")
    play(ann, (bob, "bob"), (cat, "cat"))
    for page in (ann, bob, cat):
        trade_tab(page)
    expect(ann.locator("#chat-left")).to_have_text("10 of 10 messages left this round")

    ann.fill("#chat-text", "hello everyone")
    ann.press("#chat-text", "Enter")  # Enter sends
    for page in (ann, bob, cat):
        last = page.locator("#chat-log li").last
        expect(last).to_contain_text("hello everyone")
        expect(last.locator(".nick")).to_have_text("ann")
    expect(ann.locator("#chat-text")).to_have_value("")

    ann.select_option("#chat-to", label="bob")
    ann.fill("#chat-text", "psst, only for bob")
    ann.click("#chat-send")
    private = bob.locator("#chat-log li.priv")
    expect(private).to_have_count(1)
    expect(private).to_contain_text("psst, only for bob")
    expect(ann.locator("#chat-log li.priv")).to_contain_text("bob")  # the sender sees whom it went to

    # cat sees a later message to all, and still not the private one
    bob.fill("#chat-text", "hi all, bob here")
    bob.press("#chat-text", "Enter")
    expect(cat.locator("#chat-log li").last).to_contain_text("bob here")
    expect(cat.locator("#chat-log li")).to_have_count(2)
    expect(cat.locator("#chat-log")).not_to_contain_text("psst")
    expect(ann.locator("#chat-left")).to_have_text("8 of 10 messages left this round")
    expect(cat.locator("#chat-left")).to_have_text("10 of 10 messages left this round")
    shot(cat, "w6-chat-phone")


def test_w6_offer_limit_counts_withdrawn_and_declined_offers(open_page: OpenPage, watched: Watched) -> None:
    ann, bob = open_page(), open_page()
    play(ann, (bob, "bob"))
    trade_tab(ann)
    trade_tab(bob)
    expect(ann.locator("#offers-left")).to_have_text("3 of 3 offers left this round")
    offer(ann, "bob", {"food": 1}, {"wood": 1})
    offer(ann, "bob", {"food": 1}, {"iron": 1})
    offer(ann, None, {"food": 1}, {"fuel": 1})
    expect(ann.locator("#offers-left")).to_have_text("0 of 3 offers left this round")
    expect(ann.locator("#offer-send")).to_be_disabled()
    expect(ann.locator("#offer-hint")).to_be_visible()

    # bob may decline the two made to him alone, not the one to everyone
    offers = bob.locator("#offers li[data-offer]")
    expect(offers).to_have_count(3)
    expect(offers.locator("button.decline")).to_have_count(2)
    expect(offers.locator("button.accept")).to_have_count(3)
    offers.locator("button.decline").first.click()
    expect(ann.locator("#offers li[data-offer]")).to_have_count(2)
    ann.locator("#offers li[data-offer] button.withdraw").first.click()
    expect(bob.locator("#offers li[data-offer]")).to_have_count(1)

    # the server counted all three (A53): still none left, also after a reload
    expect(ann.locator("#offers-left")).to_have_text("0 of 3 offers left this round")
    reload(ann, watched)
    trade_tab(ann)
    expect(ann.locator("#offers li[data-offer]")).to_have_count(1)
    expect(ann.locator("#offers-left")).to_have_text("0 of 3 offers left this round")
    expect(ann.locator("#offer-send")).to_be_disabled()


def test_w7_standing_orders_saved_and_shown_again_after_a_reload(open_page: OpenPage, web_server: Served,
                                                                 watched: Watched) -> None:
    ann, bob = open_page(), open_page()
    play(ann, (bob, "bob"))
    standing_tab(ann)
    trade_tab(bob)
    units = server_view(web_server.url, ann)["archipelago"]["units"]
    soldier = next(u for u in units if u["type"] == "rank1")
    expect(ann.locator("#standing-units > li[data-unit]")).to_have_count(len(units))

    ann.select_option("#posture", "aggressive")
    row = ann.locator(f"#standing-units > li[data-unit='{soldier['id']}']")
    row.locator("select.order").select_option("guard")  # guard a tile: here, filled in
    ann.select_option("#queue-add-type", "rank1")
    ann.click("#queue-add")
    ann.select_option("#queue-add-type", "dvora")
    ann.click("#queue-add")
    expect(ann.locator("#queue li")).to_have_count(2)
    ann.locator("#queue li").nth(1).locator("button.up").click()  # the Dvora first
    expect(ann.locator("#queue li").first).to_contain_text("Dvora")
    ann.select_option("#standing-bonus", "fuel")
    ann.click("#bank-rule-add")
    rule = ann.locator("#bank-rules li").first
    rule.locator("input.keep").fill("5")
    rule.locator("select.give").select_option("food")
    rule.locator("select.get").select_option("iron")
    ann.fill("#accept-ratio", "1.5")
    expect(ann.locator("#standing-saved")).to_have_text("Unsaved changes")

    # another player's message re-renders ann's page, and she looks at it: her edits stay
    bob.fill("#chat-text", "hi from bob")
    bob.press("#chat-text", "Enter")
    trade_tab(ann)
    expect(ann.locator("#chat-log li").last).to_contain_text("hi from bob")
    standing_tab(ann)
    expect(ann.locator("#posture")).to_have_value("aggressive")
    expect(ann.locator("#accept-ratio")).to_have_value("1.5")
    expect(ann.locator("#queue li")).to_have_count(2)
    expect(ann.locator("#standing-saved")).to_have_text("Unsaved changes")

    ann.click("#standing-save")
    expect(ann.locator("#standing-saved")).to_have_text("Saved")
    saved = server_view(web_server.url, ann)["archipelago_standing"]
    assert saved["posture"] == "aggressive"
    assert [(u["unit"], u["order"], u.get("tile")) for u in saved["units"]] == [
        (soldier["id"], "guard", soldier["tile"])]
    assert [b["type"] for b in saved["build_queue"]] == ["dvora", "rank1"]
    assert saved["bonus"] == "fuel"
    assert [(r["give"], r["get"], r["keep"]) for r in saved["bank_rules"]] == [("food", "iron", 5)]
    assert [r["max_ratio"] for r in saved["accept_rules"]] == [1.5]

    reload(ann, watched)
    standing_tab(ann)
    expect(ann.locator("#posture")).to_have_value("aggressive")
    row = ann.locator(f"#standing-units > li[data-unit='{soldier['id']}']")
    expect(row.locator("select.order")).to_have_value("guard")
    expect(row.locator("input").nth(0)).to_have_value(str(soldier["tile"]["x"]))
    expect(row.locator("input").nth(1)).to_have_value(str(soldier["tile"]["y"]))
    expect(ann.locator("#queue li")).to_have_count(2)
    expect(ann.locator("#queue li").first).to_contain_text("Dvora")
    expect(ann.locator("#standing-bonus")).to_have_value("fuel")
    expect(ann.locator("#bank-rules li input.keep")).to_have_value("5")
    expect(ann.locator("#bank-rules li select.give")).to_have_value("food")
    expect(ann.locator("#accept-ratio")).to_have_value("1.5")
    expect(ann.locator("#agent h3")).to_have_text("Personal AI agent")
    shot(ann, "w7-standing")


def test_w7_a_refused_standing_order_is_shown_at_its_unit(open_page: OpenPage, web_server: Served,
                                                          watched: Watched) -> None:
    watched.allowed += ["status of 422", "HTTP 422: POST"]  # the refusal below is the API's answer, shown
    ann, bob = open_page(locale="he-IL"), open_page()
    play(ann, (bob, "bob"))
    standing_tab(ann)
    view = server_view(web_server.url, ann)["archipelago"]
    soldier = next(u for u in view["units"] if u["type"] == "rank1")
    # an unexplored tile: no unit can be sent there (A72, over the player's explored terrain)
    x, y = next((x, y) for y, row in enumerate(view["rows"]) for x, c in enumerate(row) if c == "?")
    row = ann.locator(f"#standing-units > li[data-unit='{soldier['id']}']")
    row.locator("select.order").select_option("move")
    row.locator("input").nth(0).fill(str(x))
    row.locator("input").nth(1).fill(str(y))
    ann.click("#standing-save")
    error = ann.locator(".save-row + .error")
    expect(error).to_contain_text("A72")
    expect(error).to_have_attribute("data-code", "order/illegal")
    expect(row).to_have_class(re.compile(r"\bbad\b"))
    assert "archipelago_standing" not in server_view(web_server.url, ann)  # nothing was stored

    # an incomplete tile is refused by the page itself, in the player's language
    row.locator("input").nth(1).fill("")
    ann.click("#standing-save")
    expect(error).to_contain_text("קואורדינטות")
    shot(ann, "w7-refusal-he")
