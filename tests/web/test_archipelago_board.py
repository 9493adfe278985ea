"""The Archipelago board in the browser (W3, W4, W5, W8, W10, W11, W13): deployment with swaps, moves to
highlighted reachable tiles with the planned path drawn, builds greyed when unaffordable, pan and zoom
(buttons, wheel, drag, pinch), the enemy log centring the board, the last round's events, the final
reveal, and the phone layout in Hebrew.

Games are made over the JSON door with long rounds; the page plays the host ("ann"), the only player
connected, so her "Done" closes a round at once (A17). The server's own view (GetView with ann's
secret) is the reference the page is checked against. Enemies, the enemy log and fights need many
rounds of play to appear; for those tests the page's GetView answers carry a view that the real engine
computed for a random game (converted to JSON exactly as the gateway does), everything else — the
stream, the shell, the rules table — being the served cluster's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from google.protobuf import json_format
from playwright.sync_api import FloatRect, Page, Route, expect

from tests.web.conftest import OpenPage, Served, box_of, post, shot

pytestmark = pytest.mark.e2e

Tile = tuple[int, int]


# ------------------------------------------------------------------------------------------- helpers

def api_game(url: str, seats: int = 2, **options: Any) -> dict[str, Any]:
    """A started game with long rounds: ids and secrets of ann (host, seat 0) and bob."""
    body: dict[str, Any] = {"game": "archipelago", "seats": seats, "nickname": "ann", "deadline_seconds": 600}
    if options:
        body["archipelago"] = options
    made = post(url, "Lobby/CreateGame", body)
    bob = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": "bob"})
    post(url, "Lobby/StartGame", {"game_id": made["game_id"]}, made["secret"])
    return {"id": made["game_id"], "ann": made["secret"], "bob": bob["secret"]}


def view_of(url: str, game: dict[str, Any], who: str = "ann") -> dict[str, Any]:
    view: dict[str, Any] = post(url, "Game/GetView", {"game_id": game["id"]}, game[who])
    return view


def open_game(page: Page, game: dict[str, Any], lang: str = "en", who: str = "ann") -> Page:
    """A player's page on the game (its secret in this browser's storage, as after joining)."""
    seats = {game["id"]: {"secret": game[who], "seat": 0 if who == "ann" else 1, "game": "archipelago"}}
    page.context.add_init_script(f"localStorage.setItem('archipelago.seats', {json.dumps(json.dumps(seats))});"
                                 f"localStorage.setItem('archipelago.lang', '{lang}');")
    page.goto(f"/game/{game['id']}")
    page.wait_for_selector("#arch-board rect.tile")
    return page


def wait_round(page: Page, n: int) -> None:
    expect(page.locator("#round")).to_have_text(re.compile(rf"\b{n}\b"))


def tile(el: Any) -> Tile:
    return int(el.get_attribute("data-x")), int(el.get_attribute("data-y"))


def highlighted(page: Page) -> set[Tile]:
    return {tile(r) for r in page.locator("#arch-board rect.tile.hl").all()}


def at(t: dict[str, int]) -> Tile:
    return t["x"], t["y"]


def scale(page: Page) -> float:
    return float(page.get_attribute("#arch-board", "data-scale") or "0")


def centre(box: FloatRect | None) -> tuple[float, float]:
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def tile_rect(page: Page, t: dict[str, int]) -> Any:
    return page.locator(f"#arch-board rect.tile[data-x='{t['x']}'][data-y='{t['y']}']")


def choose(page: Page, unit_id: str) -> None:
    page.click("#tab-units")
    page.click(f"#unit-list li[data-unit='{unit_id}']")
    expect(page.locator("#unit-panel")).to_be_visible()


@cache
def rules(url: str) -> dict[str, Any]:
    import urllib.request
    with urllib.request.urlopen(f"{url}/client/archipelago.json", timeout=20) as r:
        table: dict[str, Any] = json.load(r)
        return table


@cache
def engine_view_json() -> str:
    """Seat 0's view of a 2-player engine game (random legal play, seed 12345) at the first round
    whose view shows an enemy in sight, an enemy-log entry and a fight, as the JSON door sends it."""
    from archipelago.v1 import archipelago_pb2
    from engine.archipelago.game import GAME

    state = GAME.new_game({"players": 2, "target": 99}, 12345)
    for r in range(80):
        views = [GAME.view(state, p) for p in range(2)]
        orders = {p: GAME.random_orders(views[p], 12345000 + r * 7 + p) for p in range(2)}
        state, events = GAME.resolve(state, orders)
        v = GAME.view(state, 0, events)
        if v["enemies"] and v["enemy_log"] and any(e["kind"] == "fight" for e in v["events"]):
            msg = json_format.ParseDict(v, archipelago_pb2.ArchipelagoView())
            return json.dumps(json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                                        always_print_fields_with_no_presence=True))
    raise AssertionError("the seeded game never showed an enemy")


@pytest.fixture
def engine_page(open_page: OpenPage, web_server: Served) -> Iterator[tuple[Page, dict[str, Any]]]:
    """ann's page of a real game whose GetView answers carry the engine's mid-game view."""
    game = api_game(web_server.url)
    arch = json.loads(engine_view_json())

    def handle(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        body["archipelago"] = arch
        body["round"] = arch["round"]
        route.fulfill(response=response, json=body)

    page = open_page()
    page.context.route("**/v1/Game/GetView", handle)
    open_game(page, game)
    wait_round(page, arch["round"])
    yield page, arch
    # a view read still in flight when the context closes must not fail the next test
    page.context.unroute_all(behavior="ignoreErrors")


# ------------------------------------------------------------------------------------------- W3

def test_w3_deployment_highlights_the_home_island_and_a_placement_on_an_own_unit_swaps_them(
        open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    page = open_game(open_page(), game)
    view = view_of(web_server.url, game)["archipelago"]
    home = {at(t) for isl in view["islands"] if isl["kind"] == "home" and isl.get("owner") == 0 for t in isl["tiles"]}
    units = {u["id"]: u for u in view["units"]}
    land = [u for u in view["units"] if u["type"] in ("rank1", "rank3")]
    first, second = land[0], land[1]

    choose(page, first["id"])
    page.click("#place")
    targets = highlighted(page)
    assert len(targets) >= 2 and targets <= home, "land units go on the home island (A14)"
    assert at(first["tile"]) not in targets
    page.locator(f"#arch-board rect.tile.hl[data-x='{second['tile']['x']}'][data-y='{second['tile']['y']}']").click()

    # the two units swapped on the board
    a = page.locator(f"#arch-board [data-unit='{first['id']}']")
    b = page.locator(f"#arch-board [data-unit='{second['id']}']")
    expect(a).to_have_attribute("data-x", str(second["tile"]["x"]))
    expect(b).to_have_attribute("data-x", str(first["tile"]["x"]))
    assert (tile(a), tile(b)) == (at(second["tile"]), at(first["tile"]))
    expect(page.locator("#arch-board rect.tile.hl")).to_have_count(0)

    # a ship is placed on the sea next to the home island
    ship = next(u for u in view["units"] if u["type"] == "dvora")
    choose(page, ship["id"])
    page.click("#place")
    sea = highlighted(page)
    rows = view["rows"]
    assert sea and all(rows[y][x] == "." for x, y in sea)
    assert all(any((x + dx, y + dy) in home for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0))) for x, y in sea)
    page.keyboard.press("Escape")
    expect(page.locator("#arch-board rect.tile.hl")).to_have_count(0)

    # the placements survive a reload (the draft), then "Done" deploys them
    page.reload()
    page.wait_for_selector("#arch-board rect.tile")
    moved = page.locator(f"#arch-board [data-unit='{first['id']}']")
    expect(moved).to_have_attribute("data-y", str(second["tile"]["y"]))
    assert tile(moved) == at(second["tile"])
    shot(page, "arch-w3-deploy")
    page.click("#done")
    wait_round(page, 1)
    after = {u["id"]: at(u["tile"]) for u in view_of(web_server.url, game)["archipelago"]["units"]}
    assert after[first["id"]] == at(units[second["id"]]["tile"])
    assert after[second["id"]] == at(units[first["id"]]["tile"])


# ------------------------------------------------------------------------------------------- W4

def test_w4_move_highlights_reachable_tiles_draws_the_path_and_the_server_moves_the_unit(
        open_page: OpenPage, web_server: Served) -> None:
    # a land unit: its free land neighbours (A23), no outpost on its home island (A36)
    def free_land_next_to(u: dict[str, Any]) -> list[Tile]:
        x, y = at(u["tile"])
        near = [(x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y)]
        return [(a, b) for a, b in near if 0 <= b < len(rows) and 0 <= a < len(rows[b]) and rows[b][a] == "#"
                and (a, b) not in occupied]

    for _ in range(5):  # (a map whose home island the deployment fills has no land move: another game)
        game = api_game(web_server.url)
        page = open_game(open_page(), game)
        page.click("#done")
        wait_round(page, 1)
        view = view_of(web_server.url, game)["archipelago"]
        rows = view["rows"]
        occupied = {at(u["tile"]) for u in view["units"]}
        if any(u["type"] in ("rank1", "rank3") and free_land_next_to(u) for u in view["units"]):
            break
    moves = {u["id"]: u["move"] for u in rules(web_server.url)["units"]}

    # a ship: every highlighted tile is explored sea within its move
    ship = next(u for u in view["units"] if u["type"] == "dvora")
    choose(page, ship["id"])
    expect(page.locator("#action-bombard")).to_be_visible()
    expect(page.locator("#action-outpost")).to_have_count(0)
    page.click("#move")
    sx, sy = at(ship["tile"])
    reach = highlighted(page)
    assert reach and all(rows[y][x] == "." and abs(x - sx) + abs(y - sy) <= moves["dvora"] for x, y in reach)
    page.click("#move")  # pressing Move again cancels
    expect(page.locator("#arch-board rect.tile.hl")).to_have_count(0)

    samal = next(u for u in view["units"] if u["type"] in ("rank1", "rank3") and free_land_next_to(u))
    choose(page, samal["id"])
    expect(page.locator("#action-outpost")).to_be_disabled()
    page.click("#move")
    x0, y0 = at(samal["tile"])
    reach = highlighted(page)
    land = {(x, y) for x, y in reach if rows[y][x] == "#"}
    assert land and all(abs(x - x0) + abs(y - y0) <= moves[samal["type"]] for x, y in reach)
    assert set(free_land_next_to(samal)) <= land
    assert all(rows[y][x] == "#" or (x, y) == at(ship["tile"]) for x, y in reach), "land, or boarding the ship"
    goal = next(t for t in sorted(land) if t not in occupied)
    page.locator(f"#arch-board rect.tile.hl[data-x='{goal[0]}'][data-y='{goal[1]}']").click()

    # the planned path: from the unit's tile to the goal
    path = page.locator(f"#arch-board [data-path='{samal['id']}']")
    expect(path).to_have_count(1)
    points = [tuple(float(v) for v in p.split(",")) for p in (path.get_attribute("points") or "").split()]
    cell = 40.0
    assert points[0] == ((x0 + 0.5) * cell, (y0 + 0.5) * cell)
    assert points[-1] == ((goal[0] + 0.5) * cell, (goal[1] + 0.5) * cell)
    expect(page.locator(f"#unit-list li[data-unit='{samal['id']}']")).to_contain_text(f"({goal[0]}, {goal[1]})")
    expect(page.locator("#unit-order")).to_contain_text(f"({goal[0]}, {goal[1]})")
    shot(page, "arch-w4-move")

    # "Clear order" removes it, a new move puts it back; "Done" sends it
    page.click("#clear-order")
    expect(path).to_have_count(0)
    page.click("#move")
    page.locator(f"#arch-board rect.tile.hl[data-x='{goal[0]}'][data-y='{goal[1]}']").click()
    expect(path).to_have_count(1)
    page.click("#done")
    wait_round(page, 2)
    moved = next(u for u in view_of(web_server.url, game)["archipelago"]["units"] if u["id"] == samal["id"])
    assert at(moved["tile"]) == goal


def test_w4_orders_sent_with_done_are_shown_again_on_another_device(open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    ann = open_game(open_page(), game)
    bob = open_game(open_page(viewport="phone"), game, who="bob")
    ann.click("#done")
    bob.click("#done")
    wait_round(ann, 1)
    view = view_of(web_server.url, game)["archipelago"]
    ship = next(u for u in view["units"] if u["type"] == "dvora")
    choose(ann, ship["id"])
    ann.click("#move")
    goal = sorted(highlighted(ann))[0]
    ann.locator(f"#arch-board rect.tile.hl[data-x='{goal[0]}'][data-y='{goal[1]}']").click()
    ann.click("#done")
    expect(ann.locator("#done")).to_have_text("Update orders")
    pending = view_of(web_server.url, game)["archipelago_pending"]
    assert pending["units"] == [{"unit": ship["id"], "to": {"x": goal[0], "y": goal[1]}, "path": [], "action": "",
                                 "target": ""}]

    # the same player on a new device (no draft there): the orders come from the server
    again = open_game(open_page(viewport="phone"), game)
    wait_round(again, 1)
    expect(again.locator(f"#arch-board [data-path='{ship['id']}']")).to_have_count(1)
    expect(again.locator(f"#unit-list li[data-unit='{ship['id']}']")).to_contain_text(f"({goal[0]}, {goal[1]})")
    expect(again.locator("#done")).to_have_text("Update orders")


def test_w4_build_tab_greys_out_what_the_stock_cannot_pay(open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    page = open_game(open_page(), game)
    page.click("#tab-build")
    expect(page.locator("#panel-build button[data-build]:not([disabled])")).to_have_count(0)  # round 0: none
    page.click("#done")
    wait_round(page, 1)
    stock = view_of(web_server.url, game)["archipelago"]["stock"]
    table = {u["id"]: u for u in rules(web_server.url)["units"]}

    def affordable(left: dict[str, int], type_id: str) -> bool:
        return all(left.get(r, 0) >= n for r, n in table[type_id]["cost"].items())

    # every plain unit type is enabled exactly when the stock pays for it
    buttons = page.locator("#panel-build button[data-build]")
    expect(buttons).to_have_count(sum(1 for u in table.values() if u["buildable"]))
    for b in buttons.all():
        kind = b.get_attribute("data-build") or ""
        if kind in ("landmine", "seamine", "raft") or table[kind]["limit"]:
            continue
        assert b.is_enabled() == affordable(stock, kind), kind

    # buying the cheapest food unit until the food runs out greys it
    food_only = [u for u in table.values() if u["buildable"] and list(u["cost"]) == ["food"]]
    cheap = min(food_only, key=lambda u: u["cost"]["food"])
    button = page.locator(f"#panel-build button[data-build='{cheap['id']}']")
    left = dict(stock)
    count = 0
    while affordable(left, cheap["id"]):
        button.click()
        count += 1
        left["food"] -= cheap["cost"]["food"]
        expect(page.locator("#build-list li")).to_have_count(count)
    assert count >= 1
    expect(button).to_be_disabled()
    expect(page.locator("#stock [data-res='food']")).to_contain_text(f"→{left['food']}")
    page.locator("#build-list li button.remove").first.click()
    expect(page.locator("#build-list li")).to_have_count(count - 1)
    expect(button).to_be_enabled()
    shot(page, "arch-w4-build")


# ------------------------------------------------------------------------------------------- W5

def test_w5_zoom_buttons_wheel_and_drag_change_the_view_and_a_click_selects_a_tile(
        open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    page = open_game(open_page(), game)
    board = page.locator("#arch-board")

    # the first view frames the own units at a legible size (issue 22; tests/web/test_layout_web.py)
    expect(page.locator("#arch-board .u rect").first).to_be_visible()  # (the units are drawn after the tiles)
    box = board.bounding_box()
    chip = box_of(page.locator("#arch-board .u rect").first, "a unit chip")
    assert box and chip and chip["height"] >= 16
    fitted = scale(page)
    zoom = page.locator("#arch-board .zoom")
    expect(zoom.locator("#zoom-in")).to_be_visible()

    page.click("#zoom-in")
    bigger = scale(page)
    assert bigger > fitted * 1.2
    page.click("#zoom-out")
    assert scale(page) < bigger
    page.click("#zoom-reset")
    assert scale(page) == pytest.approx(fitted, rel=1e-3)

    # the wheel zooms around the pointer
    cx, cy = centre(box)
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"Number(document.querySelector('#arch-board').dataset.scale) > {fitted * 1.1}")
    page.mouse.wheel(0, 400)
    page.wait_for_function(f"Number(document.querySelector('#arch-board').dataset.scale) < {fitted * 1.05}")

    # a click that does not drag selects a tile (one well inside the view, with no unit on it)
    free = page.evaluate("""() => {
      const b = document.querySelector('#arch-board').getBoundingClientRect();
      const band = document.querySelector('#arch-board .zoom').getBoundingClientRect().top;
      const units = new Set([...document.querySelectorAll('#arch-board .u')]
        .map((u) => `${u.dataset.x},${u.dataset.y}`));
      const r = [...document.querySelectorAll('#arch-board rect.tile')].find((t) => {
        const q = t.getBoundingClientRect();
        return q.left > b.left + 80 && q.right < b.right - 80 && q.top > b.top + 50 && q.bottom < band - 50
          && !units.has(`${t.dataset.x},${t.dataset.y}`); });
      return [Number(r.dataset.x), Number(r.dataset.y)]; }""")
    corner = page.locator(f"#arch-board rect.tile[data-x='{free[0]}'][data-y='{free[1]}']")
    corner.click()
    expect(page.locator("#tile-info")).to_be_visible()
    expect(page.locator("#tile-info")).to_contain_text(f"({free[0]}, {free[1]})")

    # a drag pans (the tile under the pointer moves with it) and selects nothing
    before = centre(corner.bounding_box())
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 60, cy + 30, steps=6)
    page.mouse.up()
    after = centre(corner.bounding_box())
    assert after[0] - before[0] == pytest.approx(60, abs=2) and after[1] - before[1] == pytest.approx(30, abs=2)
    expect(page.locator("#tile-info")).to_contain_text(f"({free[0]}, {free[1]})")
    expect(page.locator("#unit-panel")).to_be_hidden()
    shot(page, "arch-w5-pan")


def test_w5_pinch_zooms_on_a_phone(open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    page = open_game(open_page(viewport="phone"), game)
    before = scale(page)
    # two touch pointers moving apart (Playwright has no multi-touch gesture: the page gets the
    # same pointer events a phone sends)
    page.evaluate("""() => {
      const board = document.querySelector('#arch-board');
      const r = board.getBoundingClientRect();
      const y = r.top + r.height / 2, x = r.left + r.width / 2;
      const ev = (type, id, cx) => board.dispatchEvent(new PointerEvent(type, {pointerId: id, pointerType: 'touch',
        clientX: cx, clientY: y, bubbles: true, isPrimary: id === 1}));
      ev('pointerdown', 1, x - 30); ev('pointerdown', 2, x + 30);
      for (let i = 1; i <= 6; i++) { ev('pointermove', 1, x - 30 - 10 * i); ev('pointermove', 2, x + 30 + 10 * i); }
      ev('pointerup', 1, x - 90); ev('pointerup', 2, x + 90);
    }""")
    assert scale(page) == pytest.approx(before * 3, rel=0.05)


# ------------------------------------------------------------------------------------------- W8, W10

def test_w8_enemy_tab_lists_units_seen_and_a_click_centres_the_board_on_one(
        engine_page: tuple[Page, dict[str, Any]]) -> None:
    page, arch = engine_page
    page.click("#tab-enemy")
    rows = page.locator("#enemy-log li[data-enemy]")
    expect(rows).to_have_count(len(arch["enemies"]) + len(arch["enemy_log"]))
    board = page.locator("#arch-board").bounding_box()
    band = (page.locator("#arch-board .zoom").bounding_box() or {"height": 0.0})["height"]  # below the map's view
    for entry in arch["enemy_log"]:
        row = page.locator(f"#enemy-log li[data-enemy='{entry['id']}']")
        n = entry["rounds_ago"]
        expect(row).to_contain_text(f"seen {n} round{'s' if n != 1 else ''} ago")
        expect(row).to_contain_text(f"({entry['tile']['x']}, {entry['tile']['y']})")
        mark = page.locator(f"#arch-board [data-log='{entry['id']}']")
        expect(mark.locator(".badge-n")).to_have_text(str(n))
        assert f"seen {n} round" in (mark.locator("title").text_content() or "")
        page.click("#zoom-in")
        row.click()
        x, y = centre(box_of(tile_rect(page, entry["tile"]), "a tile"))
        bx, by = centre(board)
        by -= band / 2
        assert abs(x - bx) < 2 and abs(y - by) < 2, "the board is centred on the entry"
    for enemy in arch["enemies"]:
        page.locator(f"#enemy-log li[data-enemy='{enemy['id']}']").click()
        mark = page.locator(f"#arch-board [data-enemy='{enemy['id']}']")
        expect(mark).to_have_class(re.compile(r"\bflash\b"))
        x, y = centre(box_of(tile_rect(page, enemy["tile"]), "a tile"))
        bx, by = centre(board)
        by -= band / 2
        assert abs(x - bx) < 2 and abs(y - by) < 2
        assert mark.get_attribute("data-domain") == enemy["domain"]
    shot(page, "arch-w8-enemy")


def test_w10_last_rounds_events_are_listed_and_marked_on_the_board(engine_page: tuple[Page, dict[str, Any]]) -> None:
    page, arch = engine_page
    items = page.locator("#events li[data-kind]")
    expect(items).to_have_count(len(arch["events"]))
    fight = next(e for e in arch["events"] if e["kind"] == "fight")
    fight["tile"] = {k: int(v) for k, v in fight["tile"].items()}  # a Struct's numbers are doubles
    names = {r["id"]: r["name"] for r in rules_of(page)["units"]}
    domains = {"land": "land unit", "sea": "ship", "air": "aircraft"}
    text = page.locator("#events li[data-kind='fight']").first.inner_text()
    assert f"({fight['tile']['x']}, {fight['tile']['y']})" in text
    for unit in fight["units"]:
        # a side of the fight sees both types (A31), a watcher the owners and domains (A85)
        assert (names[unit["type"]] if "type" in unit else domains[unit["domain"]]) in text
        assert ("your " if int(unit["owner"]) == 0 else "bob's ") in text
    marks = page.locator("#arch-board .evmark[data-kind='fight']")
    expect(marks.first).to_be_attached()
    assert "Fight" in (marks.first.locator("title").text_content() or "")
    production = next(e for e in arch["events"] if e["kind"] == "production")
    line = page.locator("#events li[data-kind='production']").inner_text()
    for res, n in production["resources"].items():
        assert f"+{int(n)}" in line and res in line


def rules_of(page: Page) -> dict[str, Any]:
    table: dict[str, Any] = page.evaluate("fetch('/client/archipelago.json').then((r) => r.json())")
    return table


# ------------------------------------------------------------------------------------------- W11

def test_w11_game_over_reveals_the_whole_map_without_order_controls(open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url, max_rounds=1)
    page = open_game(open_page(), game)
    page.click("#done")
    wait_round(page, 1)
    page.click("#done")
    expect(page.locator("#game-over")).to_be_visible()
    final = view_of(web_server.url, game)["archipelago"]
    expect(page.locator("#arch-board rect.tile.unknown")).to_have_count(0)
    expect(page.locator("#arch-board rect.tile.fog")).to_have_count(0)
    assert all("?" not in row for row in final["rows"])
    expect(page.locator("#arch-board [data-enemy]")).to_have_count(len(final["enemies"]))
    assert final["enemies"] and all(e.get("type") for e in final["enemies"]), "types revealed at the end"
    expect(page.locator("#done")).to_be_hidden()
    unit = final["units"][0]["id"]
    choose(page, unit)
    expect(page.locator("#unit-panel button#move, #unit-panel button#place")).to_have_count(0)
    page.click("#tab-build")
    expect(page.locator("#panel-build button[data-build]:not([disabled])")).to_have_count(0)
    shot(page, "arch-w11-over")


# ------------------------------------------------------------------------------------------- W13

def test_w13_phone_in_hebrew_board_fills_the_width_tabs_below_done_always_reachable(
        open_page: OpenPage, web_server: Served) -> None:
    game = api_game(web_server.url)
    page = open_game(open_page(viewport="phone"), game, lang="he")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    board = page.locator("#arch-board").bounding_box()
    assert board and board["width"] >= 390 - 40
    expect(page.locator("#arch-board .u rect").first).to_be_visible()  # (the units are drawn after the tiles)
    chip = box_of(page.locator("#arch-board .u rect").first, "a unit chip")  # legible at the first zoom (issue 22)
    assert chip and chip["height"] >= 16
    tabs = page.locator("[role=tablist]").bounding_box()
    assert tabs and tabs["y"] >= board["y"] + board["height"], "the tabs go below the board"
    expect(page.locator("#tab-units")).to_have_text("כלים")
    expect(page.locator("#tab-enemy")).to_have_text("אויב")
    expect(page.locator("#unit-list")).to_contain_text("טוראי")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_function("window.scrollY > 0")
    done = page.locator("#done")
    expect(done).to_have_text("סיימתי את התור")
    expect(done).to_be_in_viewport()
    first = page.locator("#unit-list li[data-unit]").first
    first.click()
    expect(page.locator("#place")).to_have_text("הצב")
    shot(page, "arch-w13-phone-he")
