"""The Salvo screen (W12; rules S1–S9): placement by hand and at random, salvos chosen on the enemy grid,
shots left, numbered shots, reports, chat, game over with the enemy fleet revealed; local refusals next
to the Done button; classic mode's turns.

The test is omniscient, the pages are not: it reads each player's fleet from that player's own page
and fires at it from the other page."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, create_game, join_by_link, post, shot, start

pytestmark = pytest.mark.e2e

WORTH = {"battleship": 3, "cruiser": 2, "submarine": 1, "destroyer": 1}  # S4: shots per ship afloat
HEBREW = re.compile("[\u0590-\u05ff]")


def own_ships(page: Page) -> dict[str, list[str]]:
    """The page's own fleet as its grid shows it: ship name -> squares."""
    cells: list[dict[str, str]] = page.eval_on_selector_all(
        "#salvo-own .cell[data-vessel]", "cells => cells.map(c => ({sq: c.dataset.sq, ship: c.dataset.vessel}))")
    fleet: dict[str, list[str]] = {}
    for c in cells:
        fleet.setdefault(c["ship"], []).append(c["sq"])
    return fleet


def water(page: Page) -> list[str]:
    """Squares of the page's own grid with no ship and no enemy shot yet."""
    squares: list[str] = page.eval_on_selector_all(
        "#salvo-own .cell:not([data-vessel]):not(.miss)", "cells => cells.map(c => c.dataset.sq)")
    return squares


def numbered(page: Page, rnd: int) -> list[str]:
    """Squares of the enemy grid marked with round number ``rnd``."""
    squares: list[str] = page.eval_on_selector_all(
        "#salvo-enemy .cell.shot", f"cells => cells.filter(c => c.textContent === '{rnd}').map(c => c.dataset.sq)")
    return squares


def left(page: Page) -> int:
    return int(page.get_attribute("#shots-left", "data-left") or "-1")


def allowed(page: Page) -> int:
    return int(page.get_attribute("#shots-left", "data-allowed") or "-1")


def choose(page: Page, squares: list[str]) -> None:
    """Click squares of the enemy grid, checking the shots-left count at every click."""
    start_left = left(page)
    for i, sq in enumerate(squares):
        page.click(f'#salvo-enemy [data-sq="{sq}"]')
        expect(page.locator(f'#salvo-enemy [data-sq="{sq}"]')).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#shots-left")).to_have_attribute("data-left", str(start_left - i - 1))


def place(page: Page, ship: str, bow: str) -> None:
    page.click(f'[data-ship="{ship}"]')
    page.click(f'#salvo-own [data-sq="{bow}"]')


def seat_page(page: Page, game_id: str, secret: str, seat: int) -> Page:
    """Give this browser a seat in a game made over the API and open the game page."""
    record = json.dumps({game_id: {"secret": secret, "seat": seat, "game": "salvo"}})
    page.context.add_init_script(f"localStorage.setItem('archipelago.seats', {json.dumps(record)})")
    page.goto(f"/game/{game_id}")
    page.wait_for_selector("#salvo-own .cell")
    return page


def api_salvo(url: str, **options: Any) -> dict[str, Any]:
    made = post(url, "Lobby/CreateGame", {"game": "salvo", "seats": 2, "nickname": "ann", "deadline_seconds": 600,
                                          **({"salvo": options} if options else {})})
    joined = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "ann": made["secret"], "bob": joined["secret"]}


def view_of(url: str, game: dict[str, Any], who: str) -> dict[str, Any]:
    return post(url, "Game/GetView", {"game_id": game["id"]}, game[who])


def random_placement(url: str, game: dict[str, Any], who: str) -> None:
    v = view_of(url, game, who)
    post(url, "Game/SubmitOrders", {"game_id": game["id"], "version": v["version"],
                                    "salvo": {"random_placement": True}}, game[who])


# ------------------------------------------------------------------------------------------------ W12

def test_w12_salvo_played_to_the_end(open_page: OpenPage) -> None:
    ann = open_page()  # desktop, English
    bob = open_page("phone", locale="he-IL")  # phone, Hebrew (right to left)
    invite = create_game(ann, "ann", "salvo")
    join_by_link(bob, invite, "bob")
    start(ann, bob)
    for p in (ann, bob):
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "placement")
    expect(bob.locator("html")).to_have_attribute("dir", "rtl")
    expect(bob.locator("#salvo-own")).to_have_css("direction", "ltr")  # A–J left to right in Hebrew too

    # Ann places her fleet by hand (S3), trying an overlap and an off-grid square on the way.
    place(ann, "battleship", "A1")
    expect(ann.locator('#salvo-own [data-vessel="battleship"]')).to_have_count(5)
    ann.click("#rotate")
    expect(ann.locator("#rotate")).to_have_attribute("aria-pressed", "true")
    place(ann, "cruiser", "J1")
    place(ann, "submarine", "C1")  # vertical from C1: runs into the battleship
    expect(ann.locator("#done + .error")).to_contain_text("overlap the Battleship at C1")
    ann.click('#salvo-own [data-sq="C9"]')  # C9–C11: off the grid
    expect(ann.locator("#done + .error")).to_contain_text("off the grid")
    expect(ann.locator('#salvo-own [data-vessel="submarine"]')).to_have_count(0)
    ann.click('#salvo-own [data-sq="C3"]')
    expect(ann.locator("#done + .error")).to_have_count(0)
    expect(ann.locator('[data-ship="destroyer"]')).to_have_attribute("aria-pressed", "true")  # next to place
    ann.click("#rotate")  # horizontal again
    ann.click('#salvo-own [data-sq="F6"]')
    placed = own_ships(ann)
    assert placed == {"battleship": ["A1", "B1", "C1", "D1", "E1"], "cruiser": ["J1", "J2", "J3", "J4"],
                      "submarine": ["C3", "C4", "C5"], "destroyer": ["F6", "G6"]}, placed
    ann.click("#done")
    expect(ann.locator("#done")).to_have_text("Update orders")

    # Bob lets the server place his fleet.
    bob.click("#random-placement")
    expect(bob.locator("#random-placement")).to_have_attribute("aria-pressed", "true")
    bob.click("#done")

    # Round 1 opens once both are done (both are connected: early close).
    for p in (ann, bob):
        expect(p.locator(".salvo")).to_have_attribute("data-round", "1")
        expect(p.locator(".salvo")).to_have_attribute("data-phase", "firing")
    assert own_ships(ann) == placed, "the server kept ann's placement"
    bob_fleet = own_ships(bob)
    assert sorted(bob_fleet) == sorted(WORTH) and sum(map(len, bob_fleet.values())) == 14, bob_fleet
    expect(ann.locator("#shots-left")).to_have_text("7 shots left this round")
    expect(bob.locator("#shots-left")).to_have_attribute("data-left", "7")

    targets = [sq for ship in WORTH for sq in bob_fleet[ship]]  # ann sinks ship after ship
    ann_fired: list[str] = []
    hits = bob_fired = 0
    rnd = 1
    while True:
        # Ann fires at bob's ships; bob fires at open water on ann's grid (he never hits).
        n = allowed(ann)
        assert n == 7, "ann's fleet is never hit: all 7 shots every round"
        aim = [sq for sq in targets if sq not in ann_fired][:n]
        choose(ann, aim)
        if rnd == 1:
            expect(ann.locator("#shots-left")).to_have_text("No shots left this round")
        afloat = bob.locator("#salvo-fleet li[data-ship]:not(.sunk)").evaluate_all("ls => ls.map(l => l.dataset.ship)")
        assert allowed(bob) == sum(WORTH[s] for s in afloat), (afloat, allowed(bob))  # S4
        bob_aim = water(ann)[:allowed(bob)]
        choose(bob, bob_aim)
        if rnd == 1:
            ann.fill("#salvo-chat-text", "fire!")
            ann.click("#salvo-chat-send")
            expect(bob.locator("#salvo-chat-log li")).to_contain_text(["fire!"])
            expect(ann.locator("#salvo-chat-text")).to_have_value("")
        ann.click("#done")
        bob.click("#done")
        ann_fired += aim
        bob_fired += len(bob_aim)
        hits += len(aim)
        for p in (ann, bob):
            p.wait_for_selector(f'.salvo[data-round="{rnd + 1}"], .salvo[data-phase="over"]')

        # S8: my shots numbered by round; S6: the report says how many hit and which ships.
        assert sorted(numbered(ann, rnd)) == sorted(aim)
        report = ann.locator(f'#salvo-reports li[data-round="{rnd}"]')
        expect(report).to_have_attribute("data-hits", str(len(aim)))
        expect(report).to_contain_text(f"Round {rnd}: {len(aim)} hits — ")
        expect(bob.locator(f'#salvo-reports li[data-round="{rnd}"]')).to_have_attribute("data-hits", "0")
        bob_hits = bob.locator("#salvo-fleet li[data-ship]").evaluate_all(
            "ls => ls.reduce((n, l) => n + Number(l.dataset.hits), 0)")
        assert bob_hits == hits
        expect(bob.locator("#salvo-own .cell.hit")).to_have_count(hits)
        expect(ann.locator("#salvo-own .cell.miss")).to_have_count(bob_fired)
        if rnd == 1:
            expect(ann.locator("#salvo-reports li")).to_have_count(1)
            expect(report).to_contain_text("sunk: Battleship")
            expect(ann.locator("#salvo-enemy-sunk li")).to_have_text(["Battleship"])
            expect(bob.locator('#salvo-fleet li[data-ship="battleship"]')).to_have_class(re.compile("sunk"))
            shot(ann, "salvo")
            shot(bob, "salvo-phone-he")
        if ann.get_attribute(".salvo", "data-phase") == "over":
            break
        rnd += 1
        assert rnd <= 3, "14 squares at 7 shots a round: over in round 2"

    # Game over (S7): the shell shows the winner and scores, the enemy fleet is revealed.
    assert rnd == 2
    expect(ann.locator("#game-over")).to_be_visible()
    expect(ann.locator("#winner")).to_have_text("You won!")
    expect(ann.locator("#final-scores tbody tr")).to_have_count(2)
    expect(ann.locator("#final-scores tbody tr").nth(0)).to_contain_text("14")
    expect(ann.locator("#final-scores tbody tr").nth(1)).to_contain_text("0")
    expect(bob.locator("#winner")).to_contain_text("ann")
    expect(ann.locator("#salvo-enemy-sunk li")).to_have_count(4)
    expect(ann.locator("#salvo-enemy .cell.shot.hit")).to_have_count(14)
    revealed = bob.eval_on_selector_all("#salvo-enemy .cell[data-vessel]", "cs => cs.map(c => c.dataset.sq)")
    assert sorted(revealed) == sorted(sq for sqs in placed.values() for sq in sqs)
    for p in (ann, bob):
        expect(p.locator("#done")).to_be_hidden()
        expect(p.locator("#salvo-chat-text")).to_be_hidden()
    shot(ann, "game-over")
    shot(bob, "game-over-phone-he")


def test_w12_illegal_choices_are_refused_next_to_done_and_change_nothing(open_page: OpenPage,
                                                                          web_server: Served) -> None:
    game = api_salvo(web_server.url)
    ann = seat_page(open_page(), game["id"], game["ann"], 0)
    seat_page(open_page("phone"), game["id"], game["bob"], 1)  # connected: rounds wait for bob too

    # An incomplete placement: a translated refusal next to Done; nothing is sent.
    place(ann, "battleship", "A1")
    ann.click("#done")
    error = ann.locator("#done + .error")
    expect(error).to_have_text("Place every ship first (still to place: Cruiser, Submarine, Destroyer). (rule S3)")
    ann.select_option("#lang", "he")
    expect(error).to_contain_text("הציבו קודם את כל הספינות")  # the same refusal, in Hebrew
    ann.click("#done")
    expect(error).to_contain_text("(כלל S3)")
    assert HEBREW.search(error.inner_text()) and "Place" not in error.inner_text()
    ann.select_option("#lang", "en")
    expect(ann.locator("#done")).to_have_text("Done with my turn")
    assert not view_of(web_server.url, game, "ann")["submitted"]

    # Off the grid: refused locally, the ship stays where it was.
    ann.click('#salvo-own [data-sq="G2"]')  # the cruiser (selected next) from G2 rightwards: G–J fits
    ann.click('[data-ship="battleship"]')
    ann.click('#salvo-own [data-sq="H5"]')  # the battleship from H5: H–L, off the grid
    expect(error).to_contain_text("does not fit with its bow at H5")
    expect(ann.locator('#salvo-own [data-vessel="battleship"]')).to_have_count(5)
    expect(ann.locator('#salvo-own [data-sq="A1"]')).to_have_attribute("data-vessel", "battleship")

    # The entered placement survives a reload (kept on this device per round).
    ann.reload()
    expect(ann.locator('#salvo-own [data-vessel]')).to_have_count(9)
    ann.click("#random-placement")
    expect(ann.locator('#salvo-own [data-vessel]')).to_have_count(0)
    ann.click("#done")
    expect(ann.locator("#done")).to_have_text("Update orders")
    random_placement(web_server.url, game, "bob")  # both done: the round closes
    expect(ann.locator(".salvo")).to_have_attribute("data-phase", "firing")

    # More shots than allowed: the 8th square is refused and not chosen.
    squares = ["A1", "B2", "C3", "D4", "E5", "F6", "G7"]
    choose(ann, squares)
    ann.click('#salvo-enemy [data-sq="H8"]')
    expect(error).to_have_text("You have only 7 shots this round: click a chosen square to take one back first. "
                               "(rule S4)")
    expect(ann.locator('#salvo-enemy [data-sq="H8"]')).to_have_attribute("aria-pressed", "false")
    expect(ann.locator("#salvo-enemy .cell.aim")).to_have_count(7)
    ann.click('#salvo-enemy [data-sq="G7"]')  # take one back
    expect(error).to_have_count(0)
    expect(ann.locator("#shots-left")).to_have_text("1 shot left this round")

    # No shot at all: refused too.
    for sq in squares[:6]:
        ann.click(f'#salvo-enemy [data-sq="{sq}"]')
    expect(ann.locator("#salvo-enemy .cell.aim")).to_have_count(0)
    ann.click("#done")
    expect(error).to_contain_text("Choose at least one square")
    assert not view_of(web_server.url, game, "ann")["submitted"]

    # Chosen squares survive a reload within the round; sent, then changed: "Update orders".
    choose(ann, ["J10", "J9"])
    ann.reload()
    expect(ann.locator("#salvo-enemy .cell.aim")).to_have_count(2)
    expect(ann.locator("#shots-left")).to_have_attribute("data-left", "5")
    ann.click("#done")
    expect(ann.locator("#done")).to_have_text("Update orders")
    assert view_of(web_server.url, game, "ann")["salvo_pending"]["shots"] == ["J10", "J9"]
    expect(ann.locator("#salvo-unsent")).to_be_hidden()
    ann.click('#salvo-enemy [data-sq="J8"]')
    expect(ann.locator("#salvo-unsent")).to_be_visible()


def test_w12_classic_mode_takes_turns(open_page: OpenPage, web_server: Served) -> None:
    game = api_salvo(web_server.url, mode="classic")
    random_placement(web_server.url, game, "ann")
    random_placement(web_server.url, game, "bob")  # both done; the round closes once a player is connected
    ann = seat_page(open_page(), game["id"], game["ann"], 0)
    bob = seat_page(open_page("phone"), game["id"], game["bob"], 1)
    expect(ann.locator(".salvo")).to_have_attribute("data-round", "1")

    # Ann (the creator) shoots first: one shot; a second click moves it.
    expect(ann.locator("#salvo-status")).to_have_text("Your turn: choose one square of the enemy grid.")
    expect(ann.locator("#shots-left")).to_have_text("1 shot left this round")
    expect(bob.locator("#salvo-status")).to_have_text("ann's turn: wait for their shot.")
    expect(bob.locator("#done")).to_be_hidden()
    bob.click('#salvo-enemy [data-sq="A1"]')
    expect(bob.locator("#done + .error")).to_contain_text("It is not your turn")
    ann.click('#salvo-enemy [data-sq="A1"]')
    ann.click('#salvo-enemy [data-sq="B1"]')
    expect(ann.locator("#salvo-enemy .cell.aim")).to_have_count(1)
    expect(ann.locator('#salvo-enemy [data-sq="B1"]')).to_have_attribute("aria-pressed", "true")
    ann.click("#done")

    # Round 2 is bob's; ann learns at once whether her shot hit (S6, classic).
    for p in (ann, bob):
        expect(p.locator(".salvo")).to_have_attribute("data-round", "2")
    hit = "B1" in [sq for sqs in own_ships(bob).values() for sq in sqs]
    expect(ann.locator('#salvo-enemy [data-sq="B1"]')).to_have_class(re.compile("hit" if hit else "miss"))
    expect(ann.locator("#salvo-reports li")).to_have_text([f"Round 1: B1 — {'hit' if hit else 'miss'}"])
    expect(ann.locator("#done")).to_be_hidden()
    expect(bob.locator("#salvo-status")).to_have_text("Your turn: choose one square of the enemy grid.")
    expect(bob.locator('#salvo-own [data-sq="B1"]')).to_have_class(re.compile("hit" if hit else "miss"))
