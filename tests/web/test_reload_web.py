"""A page that forgives a reload (issue 22; A16, A17, A70): a reload within the presence grace keeps
the seat connected, the round open and the draft (which also went to the server as a draft), and the
page says so; past the grace the round closes without the player, the autopilot plays it, and the
page, opened again, says what the autopilot did ("What the autopilot did for you", from the view's
autopilot_log), for Archipelago (its orders in words) and Salvo (its shots named and marked).

These tests need a presence grace, which the session's server turns off: this module serves its own
cluster with a short one (GRACE_S), and reuses the session's browser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from engine.archipelago.units import SEA, UNIT_TYPES
from tests.e2e.serving import serving, wait_healthy
from tests.web.conftest import VIEWPORTS, Served, Watched, post, shot, until

pytestmark = pytest.mark.e2e

GRACE_S = 8  # long enough for a page reload on a loaded machine, short enough to wait past


@pytest.fixture(scope="module")
def graced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`archipelago serve` with a presence grace of GRACE_S seconds (the session's has none)."""
    with serving(tmp_path_factory.mktemp("web-grace"), {"ARCHIPELAGO_PRESENCE_GRACE_S": str(GRACE_S)}) as (
        grpc,
        url,
        proc,
    ):
        wait_healthy(grpc, proc, timeout_s=180)  # (a second cluster beside the session's: slower to start)
        yield Served(url, grpc, proc)


@pytest.fixture
def device(browser: Browser, graced: Served, watched: Watched) -> Iterator[Callable[..., BrowserContext]]:
    """device(viewport, locale) → a browser context on the graced server (a device: its own storage)."""

    def make(viewport: str = "desktop", locale: str = "en-US") -> BrowserContext:
        ctx = browser.new_context(
            viewport=VIEWPORTS[viewport],
            locale=locale,
            base_url=graced.url,
            has_touch=viewport == "phone",
            is_mobile=viewport == "phone",
        )
        ctx.set_default_timeout(20_000)
        watched.contexts.append(ctx)
        return ctx

    yield make
    watched.close_all()




def api_game(url: str, game: str, seats: int = 2) -> dict[str, Any]:
    body: dict[str, Any] = {"game": game, "seats": seats, "nickname": "ann", "deadline_seconds": 600}
    made = post(url, "Lobby/CreateGame", body)
    bob = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "ann": made["secret"], "bob": bob["secret"], "kind": game}


def view_of(url: str, game: dict[str, Any], who: str) -> dict[str, Any]:
    view: dict[str, Any] = post(url, "Game/GetView", {"game_id": game["id"]}, game[who])
    return view


def done(url: str, game: dict[str, Any], who: str, orders: dict[str, Any]) -> None:
    v = view_of(url, game, who)
    post(url, "Game/SubmitOrders", {"game_id": game["id"], "version": v["version"], game["kind"]: orders}, game[who])


def seat(ctx: BrowserContext, game: dict[str, Any], who: str = "ann") -> None:
    record = {game["id"]: {"secret": game[who], "seat": 0 if who == "ann" else 1, "game": game["kind"]}}
    ctx.add_init_script(
        f"if (!localStorage.getItem('archipelago.seats')) "
        f"localStorage.setItem('archipelago.seats', {json.dumps(json.dumps(record))});"
    )


def open_game(ctx: BrowserContext, watched: Watched, game: dict[str, Any], ready: str) -> Page:
    page = watched.watch(ctx.new_page())
    page.goto(f"/game/{game['id']}")
    page.wait_for_selector(ready)
    return page


def wait_round(page: Page, n: int) -> None:
    expect(page.locator("#round")).to_have_text(re.compile(rf"\b{n}\b"))


def connected(url: str, game: dict[str, Any], seat_no: int) -> bool:
    players = view_of(url, game, "bob")["players"]
    return bool(next(p for p in players if p["seat"] == seat_no).get("connected"))


def move_to_free_tile(
    page: Page, view: dict[str, Any], unit: dict[str, Any], taken: set[tuple[int, int]]
) -> tuple[int, int]:
    """Select an own unit, press Move and click a highlighted free tile of its own terrain (land for a
    soldier, sea for a ship; never a carrier to board): the tile ordered."""
    page.click("#tab-units")
    page.click(f"#unit-list li[data-unit='{unit['id']}'] button")
    page.click("#move")
    rows = view["rows"]
    terrain = "." if UNIT_TYPES[unit["type"]].domain == SEA else "#"
    tiles = page.locator("#arch-board rect.tile.hl").all()
    reach = [(int(r.get_attribute("data-x") or -1), int(r.get_attribute("data-y") or -1)) for r in tiles]
    goal = next(t for t in sorted(reach) if rows[t[1]][t[0]] == terrain and t not in taken)
    page.locator(f"#arch-board rect.tile.hl[data-x='{goal[0]}'][data-y='{goal[1]}']").click()
    expect(page.locator(f"#unit-list li[data-unit='{unit['id']}']")).to_contain_text(f"({goal[0]}, {goal[1]})")
    return goal


# ----------------------------------------------------------------------------------------- A17, A70


def test_a17_a70_a_reload_with_the_others_done_keeps_the_round_and_the_orders_and_past_the_grace_the_autopilot_plays(
    device: Callable[..., BrowserContext], graced: Served, watched: Watched
) -> None:
    url = graced.url
    game = api_game(url, "archipelago")
    ctx = device()
    seat(ctx, game)
    ann = open_game(ctx, watched, game, "#arch-board rect.tile")
    bob_ctx = device("phone")  # bob's page stays open: with nobody connected a round waits (A17)
    seat(bob_ctx, game, "bob")
    open_game(bob_ctx, watched, game, "#arch-board rect.tile")
    until(lambda: connected(url, game, 0) and connected(url, game, 1), "both pages connected", timeout_s=30.0)
    ann.click("#done")  # round 0: the default layout
    done(url, game, "bob", {})
    wait_round(ann, 1)

    # Round 1: bob is done; ann enters two moves and a build, and reloads before pressing Done.
    done(url, game, "bob", {})
    view = view_of(url, game, "ann")["archipelago"]
    # soldiers first; ships too, since a start can leave no free land in reach of any soldier (~2 % of maps)
    movers = [u for u in view["units"] if u["type"] in ("rank1", "rank3")] + [
        u for u in view["units"] if UNIT_TYPES[u["type"]].domain == SEA and UNIT_TYPES[u["type"]].move > 0]
    taken = {(u["tile"]["x"], u["tile"]["y"]) for u in view["units"]}
    goals: dict[str, tuple[int, int]] = {}
    for u in movers:
        try:
            goals[u["id"]] = move_to_free_tile(ann, view, u, taken | set(goals.values()))
        except StopIteration:  # (no free tile in reach for this one)
            ann.click("#cancel-mode")
        if len(goals) == 2:
            break
    assert len(goals) == 2, "two units with a free tile in reach"
    ann.click("#tab-build")
    ann.click("[data-build='rank1']:not([disabled])")
    expect(ann.locator("#build-list li[data-build='rank1']")).to_have_count(1)
    privates = sum(1 for u in view["units"] if u["type"] == "rank1")

    ann.reload()
    wait_round(ann, 1)
    resumed = ann.locator("#resumed")
    expect(resumed).to_have_attribute("data-kind", "resumed")  # the seat stayed connected (A17 grace)
    expect(resumed).to_contain_text("within the grace")
    for uid, goal in goals.items():  # the draft is back, as entered
        expect(ann.locator(f"#unit-list li[data-unit='{uid}']")).to_contain_text(f"({goal[0]}, {goal[1]})")
    ann.click("#tab-build")
    expect(ann.locator("#build-list li[data-build='rank1']")).to_have_count(1)
    assert view_of(url, game, "ann")["round"] == 1, "the reload did not close the round"
    # the draft went to the server too (not "done"): it would stand even if the page never came back
    pending = until(lambda: view_of(url, game, "ann").get("archipelago_pending"), "the draft on the server",
                    timeout_s=30.0)
    assert {o["unit"] for o in pending.get("units", [])} == set(goals)
    assert not view_of(url, game, "ann")["submitted"]
    shot(ann, "reload-resumed")

    ann.click("#done")
    wait_round(ann, 2)
    after = view_of(url, game, "ann")["archipelago"]
    at = {u["id"]: (u["tile"]["x"], u["tile"]["y"]) for u in after["units"]}
    for uid, goal in goals.items():
        assert at.get(uid) == goal, "the orders entered before the reload were played"
    assert sum(1 for u in after["units"] if u["type"] == "rank1") == privates + 1, "and the build"
    assert not view_of(url, game, "ann").get("autopilot_log"), "nothing was played for ann"

    # Round 2: bob is done, ann leaves and stays away past the grace: the round closes without her
    # and the autopilot plays it; back, the page says so and lists what it played.
    done(url, game, "bob", {})
    ann.close(run_before_unload=True)
    until(lambda: view_of(url, game, "bob")["round"] == 3, "round 2 closed by the autopilot", timeout_s=GRACE_S + 30)
    log = view_of(url, game, "ann").get("autopilot_log") or []
    assert [t["round"] for t in log] == [2] and log[0]["source"] == "autopilot"
    ann = open_game(ctx, watched, game, "#arch-board rect.tile")
    wait_round(ann, 3)
    expect(ann.locator("#resumed")).to_have_attribute("data-kind", "away")
    box = ann.locator("#autopilot-log")
    expect(box).to_be_visible()
    expect(box.locator("h3")).to_have_text("What the autopilot did for you")
    turn = box.locator("li[data-round='2']")
    expect(turn).to_contain_text("Round 2")
    played = log[0].get("archipelago") or {}
    lines = turn.locator(".autopilot-lines li")
    expected = len(played.get("units", [])) + len(played.get("builds", [])) + (1 if played.get("bonus") else 0)
    expect(lines).to_have_count(max(1, expected))
    text = turn.inner_text()
    assert not re.search(r"\b[0-9a-f]{10}\b", text), text  # no unit id, only names and tiles
    shot(ann, "autopilot-played")
    ann.click("#autopilot-ok")
    expect(box).to_be_hidden()
    ann.reload()
    wait_round(ann, 3)
    expect(ann.locator("#autopilot-log")).to_be_hidden()  # read: not shown again


def test_s9_salvo_past_the_grace_the_page_names_the_shots_the_autopilot_fired(
    device: Callable[..., BrowserContext], graced: Served, watched: Watched
) -> None:
    url = graced.url
    game = api_game(url, "salvo")
    done(url, game, "ann", {"random_placement": True})
    done(url, game, "bob", {"random_placement": True})
    ctx = device("phone", "he-IL")
    seat(ctx, game)
    ann = open_game(ctx, watched, game, "#salvo-own .cell")
    bob_ctx = device()  # bob's page stays open: with nobody connected a round waits (A17)
    seat(bob_ctx, game, "bob")
    open_game(bob_ctx, watched, game, "#salvo-own .cell")
    until(lambda: connected(url, game, 0) and connected(url, game, 1), "both pages connected", timeout_s=30.0)
    expect(ann.locator(".salvo")).to_have_attribute("data-phase", "firing")
    done(url, game, "bob", {"shots": ["A1"]})
    ann.close(run_before_unload=True)  # away past the grace: round 1 closes and the autopilot fires ann's salvo
    until(lambda: view_of(url, game, "bob")["round"] == 2, "round 1 closed by the autopilot", timeout_s=GRACE_S + 30)
    log = view_of(url, game, "ann").get("autopilot_log") or []
    assert [t["round"] for t in log] == [1]
    fired = log[0]["salvo"]["shots"]
    ann = open_game(ctx, watched, game, "#salvo-own .cell")
    box = ann.locator("#autopilot-log")
    expect(box).to_be_visible()
    expect(box.locator("h3")).to_have_text("מה הטייס האוטומטי עשה בשבילך")
    line = box.locator("li[data-round='1'] .autopilot-lines li")
    for sq in fired:
        expect(line).to_contain_text(sq)
        expect(ann.locator(f'#salvo-enemy [data-sq="{sq}"]')).to_have_class(re.compile(r"\bauto\b"))
        assert "הטייס האוטומטי" in (ann.get_attribute(f'#salvo-enemy [data-sq="{sq}"]', "aria-label") or "")
    shot(ann, "salvo-autopilot-he")
