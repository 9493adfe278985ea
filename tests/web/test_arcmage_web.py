"""The Arcmage table in the browser (issue 21; W13; rules M2, M9, M15, M16, M18, M19, M38–M41, M53).

Two devices — a phone in Hebrew and a desktop in English — open an Arcmage game from the home page
(deck chosen at create and at join), then play its first turns. The test is omniscient, the pages
are not: it reads each seat's view over the JSON door and decides with a small policy (below) what
the acting seat does. The moves the issue names — casting a creature, declaring an attack (attackers,
then the city), choosing the interception (blocker, then attacker) and answering a card on the stack
with an event — are clicked in the acting seat's page, on cards the page highlights as legal; every
other action is sent over the JSON door for that seat. Both decks are "Gaian love for life": all its
cards are paid from one faction, it holds 6 events and peaceful blockers, so that the three moves
come within a few turns for any shuffle (the policy was checked against the engine on 200 seeds:
all three, median 7 turns, at most 22). Speed "slow": no deadline (M25) can act for a seat while
the test looks.

A second test lets the autopilot play a seat whose page is closed (M53, a 1 s turn deadline) and
checks that the page, opened again, tells the player what was done for it."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, Watched, post, shot, until

pytestmark = pytest.mark.e2e

DECK = "Gaian love for life"
HEBREW = re.compile("[\u0590-\u05ff]")
GOALS = {"cast", "attack", "intercept", "intercept_done", "event"}  # the moves clicked in a page
MAX_ACTIONS = 400




# ------------------------------------------------------------------------------------------ the policy
# It decides from one seat's ArcmageView JSON, as a player would; it never looks at another hand.

def _face(v: dict[str, Any], cid: str) -> dict[str, Any]:
    face: dict[str, Any] = v["faces"][v["cards"][cid]["key"]]
    return face


def _cost(face: dict[str, Any]) -> int:
    return int(face["cost"]) if str(face["cost"]).isdigit() else 99


def _unmarked(v: dict[str, Any], seat: int) -> int:
    s = v["seats"][seat]
    return int(sum(s["pile_counts"].values()) - sum(s["pile_marked"].values()))


def _fighter(v: dict[str, Any], cid: str) -> bool:
    f = _face(v, cid)
    return "peaceful" not in f["keywords"] and (f.get("attack") or 0) > 0


def choose(v: dict[str, Any], done: set[str], saver: int | None) -> tuple[dict[str, Any], str]:
    """The seat's next action and, for a move to be clicked in its page, its goal's name.

    The ``saver`` (the first seat seen holding an event) keeps enough resources unmarked to answer
    an opponent's card with its cheapest event (M16, M38)."""
    me, legal = v["you"], v["legal"]
    pend = v.get("pending") or {}
    passing: dict[str, Any] | None = {"pass": {}} if {"pass": {}} in legal else None
    fallback = passing or legal[0]
    if pend.get("op") == "decide" and pend.get("seat") == me:
        if pend["kind"] == "intercept":  # M19: pairs [blocker, attacker], null when done
            pairs = [a for a in legal if "choose" in a and a["choose"]["option"]]
            if "intercept" not in done and pairs:
                return pairs[0], "intercept"
            stop = next(a for a in legal if "choose" in a and a["choose"]["option"] is None)
            return stop, "intercept_done" if "intercept" in done and "intercept_done" not in done else ""
        return fallback, ""
    if v["step"]["kind"] == "window" or v["active"] != me:
        if "event" not in done and v["stack"] and v["stack"][-1]["player"] != me:
            events = [a for a in legal if "play" in a and _face(v, a["play"]["card"])["type"] == "event"]
            if events:
                return events[0], "event"
        return fallback, ""
    phase = v["phase"]
    resources = sum(v["seats"][me]["pile_counts"].values())
    if phase == "draw":  # M9
        options = {a["draw"]["option"]: a for a in legal if "draw" in a}
        want = (["draw0", "draw1", "draw2"] if resources < 2 else ["draw1", "draw2", "draw0"] if resources < 6
                else ["draw2", "draw1", "draw0"])
        return next(options[o] for o in want if o in options), ""
    if phase == "resource":
        piles = [a for a in legal if "resource" in a and a["resource"]["faction"] == "Gaian"]
        if piles:  # keep events and cheap creatures, pay with the rest
            def keep(a: dict[str, Any]) -> tuple[bool, bool, int]:
                f = _face(v, a["resource"]["card"])
                return f["type"] == "event", f["type"] == "creature" and _cost(f) <= 3, -_cost(f)
            return min(piles, key=keep), ""
        return fallback, ""
    if phase in ("play1", "play2"):
        if "intercept" not in done:  # creatures that can fight go to the army (M17)
            for a in legal:
                if "move" in a and a["move"]["to"] == "army" and _fighter(v, a["move"]["card"]) \
                        and (v["cards"][a["move"]["card"]].get("attack") or 0) > 0:
                    return a, ""
        events = [c for c in v["hand"] if _face(v, c)["type"] == "event"]
        reserve = min((_cost(_face(v, e)) for e in events), default=0) if "event" not in done and saver == me else 0
        creatures = [a for a in legal if "play" in a and _face(v, a["play"]["card"])["type"] == "creature"
                     and _unmarked(v, me) - _cost(_face(v, a["play"]["card"])) >= reserve]
        if creatures:
            mine = [c["id"] for c in v["cards"].values() if c["owner"] == me and c["zone"] in ("army", "res")]
            need = "intercept" not in done and not any(_fighter(v, c) for c in mine)
            a = min(creatures, key=lambda a: (not (need and _fighter(v, a["play"]["card"])),
                                              _cost(_face(v, a["play"]["card"])), a["play"].get("to") != "army"))
            return a, "cast" if "cast" not in done else ""
        return fallback, ""
    if phase == "attack" and "intercept" not in done:
        if passing is None:  # an attack is required (M41): any one
            a = next((a for a in legal if "attack" in a), fallback)
            return a, "attack" if "attack" in a else ""
        opp = 1 - me
        for a in legal:  # one attacker at a city the opponent can defend (M19)
            if "attack" not in a or len(a["attack"]["attackers"]) != 1:
                continue
            x = a["attack"]["attackers"][0]
            flying = "flying" in (v["cards"][x].get("keywords") or [])
            city = v["cards"][a["attack"]["city"]]
            blockers = list(city.get("residents") or []) + list(v["seats"][opp]["army"])
            if any(_face(v, b)["type"] == "creature"
                   and (not flying or {"flying", "ranged"} & set(v["cards"][b].get("keywords") or []))
                   for b in blockers):
                return a, "attack"
    return fallback, ""


# ------------------------------------------------------------------------------------------ the table

class Table:
    """One game as the test drives it: the JSON door per seat, the page per seat."""

    def __init__(self, url: str, game_id: str, secrets: dict[int, str], pages: dict[int, Page]) -> None:
        self.url, self.game_id, self.secrets, self.pages = url, game_id, secrets, pages

    def view(self, seat: int) -> dict[str, Any]:
        return post(self.url, "Game/GetView", {"game_id": self.game_id}, self.secrets[seat])

    def act(self, seat: int, version: str, action: dict[str, Any]) -> None:
        post(self.url, "Game/Act", {"game_id": self.game_id, "idempotency_key": uuid.uuid4().hex,
                                    "version": version, "arcmage": action}, self.secrets[seat])

    def moved_on(self, seat: int, version: str) -> dict[str, Any]:
        def newer() -> dict[str, Any] | None:
            v = self.view(seat)
            return v if int(v["version"]) > int(version) else None
        after: dict[str, Any] = until(newer, "the page's action to reach the server")
        return after

    def in_step(self, page: Page, v: dict[str, Any]) -> None:
        """The page shows the view ``v`` (same version) before the test clicks in it."""
        expect(page.locator(f'.arc[data-version="{v["version"]}"]')).to_have_count(1)


def card_in(page: Page, cid: str) -> Any:
    return page.locator(f'.arc-card[data-card="{cid}"]').first


def click_action(page: Page, a: dict[str, Any], text: str, snap: str = "") -> None:
    """Open the card's actions (a click on it) and press the one that is ``a`` (its targets apart),
    then click the targets on the table, one after the other. ``text``: the card's printed text, which
    the card's face (opened by the click) shows."""
    kind = next(iter(a))
    body = a[kind]
    tile = card_in(page, body["card"])
    expect(tile).to_have_class(re.compile(r"\blegal\b"))  # highlighted: it has a legal action
    tile.click()
    buttons = page.locator("#arc-card-actions button")
    expect(buttons.first).to_be_visible()
    expect(page.locator("#arc-detail .arc-face-text")).to_have_text(text)
    if snap:
        shot(page, snap)
    offered = [json.loads(x) for x in buttons.evaluate_all("bs => bs.map(b => b.dataset.action)")]
    def strip(x: dict[str, Any]) -> dict[str, Any]:
        return {k: {f: w for f, w in x[k].items() if f != "targets"} for k in x}
    index = next(i for i, o in enumerate(offered) if strip(o) == strip(a))
    buttons.nth(index).click()
    for target in body.get("targets") or []:
        spot = card_in(page, target)
        expect(spot).to_have_class(re.compile(r"\btarget\b"))
        spot.click()


def drive(table: Table, pages_seen: Callable[[str, int, dict[str, Any]], None]) -> dict[str, tuple[int, int]]:
    """Play until every goal was reached: the goals' moves clicked in the pages, the rest over the JSON
    door. Returns each goal's (seat, turn)."""
    done: dict[str, tuple[int, int]] = {}
    saver: int | None = None
    for _ in range(MAX_ACTIONS):
        host = table.view(0)
        assert host["status"] == "GAME_STATUS_RUNNING", f"the game ended before the goals: {sorted(done)}"
        seat = host["step"]["players"][0]
        v = table.view(seat) if seat else host
        av = v["arcmage"]
        deciding = (av.get("pending") or {}).get("kind") == "intercept"  # (then its "done" is clicked too)
        if {"cast", "attack", "intercept", "event"} <= set(done) and not deciding:
            return done
        if saver is None and any(_face(av, c)["type"] == "event" for c in av["hand"]):
            saver = seat
        action, goal = choose(av, set(done), saver)
        if not goal:
            table.act(seat, v["version"], action)
            continue
        page = table.pages[seat]
        table.in_step(page, v)
        if goal in ("cast", "event"):
            click_action(page, action, _face(av, action["play"]["card"])["text"],
                         snap=f"arcmage-{goal}-{'desktop-en' if seat == 0 else 'phone-he'}")
        elif goal == "attack":  # M18: the attackers, then the city, clicked on the table
            for x in action["attack"]["attackers"]:
                expect(card_in(page, x)).to_have_class(re.compile(r"\blegal\b"))
                card_in(page, x).click()
                expect(card_in(page, x)).to_have_class(re.compile(r"\bselected\b"))
            city = card_in(page, action["attack"]["city"])
            expect(city).to_have_class(re.compile(r"\btarget\b"))
            city.click()
        elif goal == "intercept":  # M19: the blocker, then the attacker it blocks
            blocker, attacker = action["choose"]["option"]
            expect(card_in(page, blocker)).to_have_class(re.compile(r"\blegal\b"))
            card_in(page, blocker).click()
            expect(card_in(page, attacker)).to_have_class(re.compile(r"\btarget\b"))
            page.evaluate("window.scrollTo(0, 0)")
            shot(page, f"arcmage-intercept-{'desktop-en' if seat == 0 else 'phone-he'}")
            card_in(page, attacker).click()
        elif goal == "intercept_done":
            page.click("#arc-intercept-done")
        after = table.moved_on(seat, v["version"])
        done[goal] = (seat, av["turn"])
        pages_seen(goal, seat, after)
    raise AssertionError(f"goals not reached in {MAX_ACTIONS} actions: {sorted(done)}")


def log_kinds(page: Page) -> list[str]:
    kinds: list[str] = page.locator("#arc-log li").evaluate_all("ls => ls.map(l => l.dataset.kind)")
    return kinds


# ------------------------------------------------------------------------------------------ the tests

def test_m15_m16_m19_arcmage_first_turns_on_a_phone_in_hebrew_and_a_desktop(open_page: OpenPage,
                                                                             web_server: Served) -> None:
    ann = open_page("desktop", locale="en-US")
    ann.set_viewport_size({"width": 1280, "height": 800})
    bob = open_page("phone", locale="he-IL")

    # W1 / M2: Arcmage is offered at create, with a deck; joining lets the player choose its deck.
    ann.goto("/")
    ann.fill("#nickname", "ann")
    expect(ann.locator("#arcmage-deck")).to_be_hidden()  # another game's fields stay out of sight
    ann.select_option("#game-kind", "arcmage")
    assert ann.locator("#players option").all_inner_texts() == ["2", "3", "4"]  # M1
    expect(ann.locator("#arcmage-deck option")).to_have_count(2)
    ann.select_option("#arcmage-deck", DECK)
    ann.select_option("#speed", "SPEED_SLOW")
    expect(ann.locator("#speed option:checked")).to_contain_text("1 h to answer")  # M25: turn and window
    shot(ann, "arcmage-create-desktop-en")
    with ann.expect_request("**/v1/Lobby/CreateGame") as made:
        ann.click("#open")
    create_body: dict[str, Any] = made.value.post_data_json or {}
    assert create_body["arcmage"] == {"decks": [{"built_in": DECK}]}, create_body
    ann.wait_for_selector("#game-code")
    invite = ann.input_value("#invite-link")

    bob.goto(invite)
    expect(bob.locator("html")).to_have_attribute("dir", "rtl")
    bob.fill("#nickname", "bob")
    bob.select_option("#arcmage-join-deck", DECK)
    shot(bob, "arcmage-join-phone-he")
    with bob.expect_request("**/v1/Lobby/JoinGame") as joined:
        bob.click("#join")
    join_body: dict[str, Any] = joined.value.post_data_json or {}
    assert join_body["arcmage"] == {"deck": {"built_in": DECK}}, join_body
    bob.wait_for_selector("#seats")
    ann.click("#start:not([disabled])")
    for p in (ann, bob):
        p.wait_for_selector(".arc .arc-seat")

    secrets: dict[int, str] = {}
    for p in (ann, bob):  # each device's own seat and secret, as the page keeps them
        record: dict[str, Any] = p.evaluate("JSON.parse(localStorage.getItem('archipelago.seats'))")
        ((game_id, rec),) = record.items()
        secrets[int(rec["seat"])] = rec["secret"]
    assert sorted(secrets) == [0, 1]
    by_seat = {0: ann, 1: bob}
    table = Table(web_server.url, game_id, secrets, by_seat)

    # The table: faces from the card data, the licence line, Hebrew words around English card texts.
    for p in (ann, bob):
        expect(p.locator("#arc-attribution")).to_contain_text("CC BY-SA 4.0")
        expect(p.locator("#arc-hand .arc-card")).to_have_count(7)  # M4: 7 cards, 3 cities set aside
        expect(p.locator("#arc-hand .arc-card .arc-artist").first).to_contain_text(re.compile(r"\w"))
    expect(bob.locator("#arc-status")).to_contain_text(HEBREW)
    expect(bob.locator("#arc-prompt")).to_contain_text(HEBREW)
    assert ann.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert bob.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"

    def seen(goal: str, seat: int, after: dict[str, Any]) -> None:
        """What both pages show right after a goal's move."""
        av = after["arcmage"]
        other = by_seat[1 - seat]
        if goal == "cast":  # M39: the creature goes on the stack (or straight into play)
            cid = av["stack"][-1]["card"] if av["stack"] else None
            for p in (ann, bob):
                expect(p.locator("#arc-log li[data-kind=cast]").first).to_be_visible()
                if cid:
                    expect(p.locator(f'#arc-stack .arc-card[data-card="{cid}"]')).to_have_count(1)
        elif goal == "event":  # M16, M38: two cards on the stack, the first player has priority
            assert len(av["stack"]) >= 2, av["stack"]
            for p in (ann, bob):
                expect(p.locator("#arc-stack .arc-stack-item")).to_have_count(len(av["stack"]))
                expect(p.locator("#arc-priority")).to_be_visible()
                expect(p.locator("#arc-countdown")).to_have_text(re.compile(r"\d+:\d\d"))
            expect(other.locator("#arc-pass")).to_be_visible()  # the caster may answer or pass
            for p, name in ((ann, "arcmage-desktop-en"), (bob, "arcmage-phone-he")):
                p.evaluate("window.scrollTo(0, 0)")
                shot(p, name)
        elif goal == "attack":
            for p in (ann, bob):
                expect(p.locator("#arc-combat")).to_be_visible()
                expect(p.locator("#arc-log li[data-kind=attack]").first).to_be_visible()
        elif goal == "intercept":  # M19: both sides learn who blocks whom (the log; the combat, while it lasts)
            combat = av.get("combat") or {}
            blockers = [b for blocks in (combat.get("blocks") or {}).values() for b in blocks["cards"]]
            for p in (ann, bob):
                expect(p.locator("#arc-log li[data-kind=intercept]").first).to_be_visible()
                for b in blockers:
                    expect(p.locator(f'#arc-combat .arc-card[data-card="{b}"]')).to_have_count(1)

    done = drive(table, seen)
    assert done["intercept"][1] == done["attack"][1], "the interception answers the attack clicked"

    # The log: an opponent's draw is a count (M26), one's own draw names the cards.
    for p in (ann, bob):
        expect(p.locator("#arc-log li[data-kind=drew]").first).to_be_visible()
        expect(p.locator("#arc-log li[data-kind=drew_cards]").first).to_be_visible()
        assert "autopilot" not in " ".join(p.locator("#arc-log li.auto").all_inner_texts()), \
            "nothing the player did is called the autopilot's"
        expect(p.locator("#arc-autopilot")).to_be_hidden()
    expect(bob.locator("#arc-log")).to_contain_text(HEBREW)
    # (attack and intercept were seen in the log as they happened: it keeps its last 80 entries, and a
    # game that takes longer to reach its goals may have pushed them out by now)
    assert {"cast", "turn"} <= set(log_kinds(ann)), log_kinds(ann)


def test_m53_the_page_shows_what_the_autopilot_played_while_the_player_was_away(
        open_page: OpenPage, web_server: Served, watched: Watched) -> None:
    watched.allowed.append("ListAgentTokens net::ERR_ABORTED")  # leaving the page aborts the agent panel's read
    watched.allowed.append("GetView net::ERR_ABORTED")  # … and a view read the 1 s steps set off just then
    made = post(web_server.url, "Lobby/CreateGame", {
        "game": "arcmage", "seats": 2, "nickname": "ann",
        "arcmage": {"decks": [{"built_in": DECK}, {"built_in": DECK}], "turn_seconds": 1, "response_seconds": 1}})
    joined = post(web_server.url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    game = made["game_id"]
    secrets = {0: made["secret"], 1: joined["secret"]}

    def open_seat(seat: int) -> Page:
        page = open_page("desktop")
        record = json.dumps({game: {"secret": secrets[seat], "seat": seat, "game": "arcmage"}})
        page.context.add_init_script(f"localStorage.setItem('archipelago.seats', {json.dumps(record)})")
        page.goto(f"/game/{game}")
        return page

    page = open_seat(0)  # ann's device follows the game from before it started …
    page.wait_for_selector("#lobby:not([hidden])")
    post(web_server.url, "Lobby/StartGame", {"game_id": game}, secrets[0])
    page.wait_for_selector(".arc .arc-seat")
    page.goto("/")  # … and leaves it; the 1 s deadlines make the autopilot play both seats (M25)
    page.wait_for_selector("#open-card")

    def autopilot_built() -> bool:
        v = post(web_server.url, "Game/GetView", {"game_id": game}, secrets[0])["arcmage"]
        return bool(v["seats"][0]["cities"]) and v["turn"] >= 2

    until(autopilot_built, "the autopilot to build ann's city and play a turn", timeout_s=30)
    page.goto(f"/game/{game}")  # the same device comes back
    back = page
    box = back.locator("#arc-autopilot")
    expect(box).to_be_visible()
    expect(box.locator("li[data-kind=built]")).to_have_count(1)  # M4: the city the autopilot built
    expect(back.locator("#arc-log li.auto").first).to_be_visible()
    back.click("#arc-autopilot-ok")
    expect(box).to_be_hidden()
