"""The web client's layout and accessibility (issue 22; W5, W12, W13): on a 320×640 phone (Hebrew), a
390×844 phone (Hebrew and English) and a 1366×768 desktop (English), every screen — home, lobby,
Archipelago, Salvo, Arcmage, game over — keeps the status strip (round, countdown, own state, every
player's submitted / connected / score) in view when the page is scrolled, never grows wider than
the screen with the longest names the server allows (24 characters with no space; emoji and mixed
Hebrew/English), and has no serious or critical accessibility violation by axe-core. The Archipelago
board opens on the player's own units at a legible size, zooms around them, and its zoom buttons
never cover a start area, left to right or right to left. A keyboard alone plays a round of Salvo
(placement and a salvo) and of Archipelago (choose a unit, move it, Done).

Games are made over the JSON door; the pages are the players' devices (their secrets in this
browser's storage, as after joining). Screenshots of each screen on a phone in Hebrew and a desktop
in English go to test-artifacts/layout-*.png (the README's pictures are taken from them)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.web.conftest import OpenPage, Served, post, shot, until

pytestmark = pytest.mark.e2e

HOST = "W" * 24  # the widest 24 characters: one word, no place to break
GUEST = "שלום🙂Hello עולם World 12"  # 24 characters: Hebrew, an emoji and English in one name
assert len(HOST) == len(GUEST) == 24
# (viewport of tests/web/conftest.py, language): phones in Hebrew and English, a desktop in English
CONFIGS = {"320-he": ("phone320", "he"), "390-he": ("phone", "he"), "390-en": ("phone", "en"),
           "1366-en": ("laptop", "en")}
SHOTS = {"390-he": "phone-he", "1366-en": "desktop-en"}  # the configurations photographed
AXE = Axe()
MIN_CHIP_PX = 16.0


# ------------------------------------------------------------------------------------------- helpers

def game(url: str, kind: str, seats: int = 2, start: bool = True, **options: Any) -> dict[str, Any]:
    """A game over the JSON door, hosted by HOST (seat 0) and joined by GUEST (seat 1)."""
    body: dict[str, Any] = {"game": kind, "seats": seats, "nickname": HOST}
    if kind == "arcmage":  # slow: no deadline (M25) acts while the test looks
        body.update(speed="SPEED_SLOW", arcmage={"decks": [{"built_in": "Gaian love for life"}]})
    else:
        body["deadline_seconds"] = 600
    if options:
        body[kind] = options
    made = post(url, "Lobby/CreateGame", body)
    guest = post(url, "Lobby/JoinGame", {"code": made["code"], "nickname": GUEST})
    if start:  # (the seats not taken are filled with the autopilot)
        post(url, "Lobby/StartGame", {"game_id": made["game_id"], "fill_with_autopilot": seats > 2}, made["secret"])
    return {"id": made["game_id"], "kind": kind, "host": made["secret"], "guest": guest["secret"]}


def view_of(url: str, g: dict[str, Any], who: str = "host") -> dict[str, Any]:
    v: dict[str, Any] = post(url, "Game/GetView", {"game_id": g["id"]}, g[who])
    return v


def device(open_page: OpenPage, config: str, g: dict[str, Any] | None = None, who: str = "host") -> Page:
    """A new device in ``config``: the page's language chosen, the seat's secret stored (if any)."""
    viewport, lang = CONFIGS[config]
    page = open_page(viewport=viewport, locale="he-IL" if lang == "he" else "en-US")
    script = f"localStorage.setItem('archipelago.lang', '{lang}');"
    if g:
        seats = {g["id"]: {"secret": g[who], "seat": 0 if who == "host" else 1, "game": g["kind"]}}
        script += f"localStorage.setItem('archipelago.seats', {json.dumps(json.dumps(seats))});"
    page.context.add_init_script(script)
    return page


def no_wider_than_the_screen(page: Page, what: str) -> None:
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sizes[0] <= sizes[1], f"{what}: the page is {sizes[0]} px wide on a {sizes[1]} px screen"


def strip_in_view(page: Page, what: str) -> None:
    """The status strip is on screen at the top, and still after scrolling to the bottom."""
    strip = page.locator("#game-header")
    for where in ("top", "bottom"):
        if where == "bottom":
            page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
            tall = page.evaluate("document.documentElement.scrollHeight > innerHeight + 1")
            if tall:
                page.wait_for_function("window.scrollY > 0")
        box = page.evaluate("""() => { const r = document.querySelector('#game-header').getBoundingClientRect();
                                return [r.top, r.bottom, innerHeight]; }""")
        assert box[0] >= -0.5 and box[1] <= box[2] + 0.5, f"{what}: the status strip is off screen ({where}): {box}"
        expect(strip).to_be_in_viewport(ratio=1)
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function("window.scrollY === 0")


def no_serious_axe_violation(page: Page, what: str) -> None:
    found = AXE.run(page).response["violations"]
    bad = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:4]]}"
           for v in found if v["impact"] in ("serious", "critical")]
    assert not bad, f"{what}: axe-core finds\n" + "\n".join(bad)


def check_screen(page: Page, config: str, screen: str, players: int | None) -> None:
    """The checks every screen passes; ``players``: how many chips the status strip shows (None: no strip)."""
    what = f"{screen} at {config}"
    expect(page.locator("html")).to_have_attribute("lang", CONFIGS[config][1])
    page.evaluate("document.fonts.ready")
    if config in SHOTS:
        shot(page, f"layout-{screen}-{SHOTS[config]}")
    no_wider_than_the_screen(page, what)
    if players is not None:
        expect(page.locator("#strip li")).to_have_count(players)
        expect(page.locator("#strip li.me")).to_have_count(1)
        for name in (HOST, GUEST):  # every chip says its player's name, whether it sent, is connected
            expect(page.locator("#strip li").filter(has_text=name[:4])).to_have_attribute("aria-label", re.compile(
                re.escape(name) + ".*(online|away|מחובר)"))
        strip_in_view(page, what)
    no_serious_axe_violation(page, what)


def board_units(page: Page) -> list[dict[str, float]]:
    """The own unit chips on the Archipelago board: their boxes on the screen."""
    boxes: list[dict[str, float]] = page.eval_on_selector_all(
        "#arch-board .u rect", "rs => rs.map(r => { const b = r.getBoundingClientRect(); "
        "return {x: b.left, y: b.top, w: b.width, h: b.height}; })")
    return boxes


def board_view(page: Page) -> dict[str, float]:
    """The part of the board that shows the map: the board's box minus the zoom band."""
    box: dict[str, float] = page.evaluate("""() => {
        const b = document.querySelector('#arch-board').getBoundingClientRect();
        const z = document.querySelector('#arch-board .zoom').getBoundingClientRect();
        return {x: b.left, y: b.top, r: b.right, b: z.top, zx: z.left, zy: z.top, zr: z.right, zb: z.bottom}; }""")
    return box


def covered(a: dict[str, float], v: dict[str, float]) -> bool:
    """Whether the zoom band of board view ``v`` overlaps box ``a``."""
    return a["x"] < v["zr"] and a["x"] + a["w"] > v["zx"] and a["y"] < v["zb"] and a["y"] + a["h"] > v["zy"]


def in_view(a: dict[str, float], v: dict[str, float], whole: bool = True) -> bool:
    """Whether box ``a`` (``whole``: all of it, else its middle) is in the map's view ``v``."""
    if whole:
        return v["x"] <= a["x"] and a["x"] + a["w"] <= v["r"] and v["y"] <= a["y"] and a["y"] + a["h"] <= v["b"]
    mx, my = a["x"] + a["w"] / 2, a["y"] + a["h"] / 2
    return v["x"] <= mx <= v["r"] and v["y"] <= my <= v["b"]


def tab_to(page: Page, selector: str, limit: int = 250, back: bool = False) -> None:
    """Press Tab (Shift+Tab with ``back``) until the focused element matches ``selector``."""
    for _ in range(limit):
        if page.evaluate("s => Boolean(document.activeElement && document.activeElement.matches(s))", selector):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"{limit} presses of Tab never reached {selector}")




# ------------------------------------------------------------------------------------------ every screen

@pytest.fixture(scope="module")
def games(web_server: Served) -> dict[str, dict[str, Any]]:
    """One game of each screen, shared by the configurations (the pages only look at them)."""
    url = web_server.url
    return {"lobby": game(url, "archipelago", seats=3, start=False), "archipelago": game(url, "archipelago", seats=3),
            "salvo": game(url, "salvo"), "arcmage": game(url, "arcmage")}


READY = {"lobby": "#seats li.taken", "archipelago": "#arch-board .u rect", "salvo": "#salvo-own .cell",
         "arcmage": "#game-area .arc .arc-seat"}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_w13_every_screen_holds_long_names_keeps_the_strip_in_view_and_passes_axe(
        open_page: OpenPage, games: dict[str, dict[str, Any]], config: str) -> None:
    home = device(open_page, config)
    home.goto("/")
    home.wait_for_selector("#public-games li")
    home.fill("#nickname", HOST)
    check_screen(home, config, "home", None)
    for screen in ("lobby", "archipelago", "salvo", "arcmage"):
        g = games[screen]
        page = device(open_page, config, g)
        page.goto(f"/game/{g['id']}")
        page.wait_for_selector(READY[screen])
        check_screen(page, config, screen, 3 if screen == "archipelago" else 2)
        if screen == "lobby" and config == "1366-en":
            # the lobby card fills the main column beside the players: no empty column on a desktop
            lobby = page.locator("#lobby").bounding_box()
            side = page.locator("#side").bounding_box()
            assert lobby and side and side["x"] > lobby["x"] + lobby["width"] - 1, "the players sit beside the lobby"
            assert abs(lobby["y"] - side["y"]) < 2, "the lobby and the players start at the same height"


@pytest.mark.parametrize("config", list(CONFIGS))
def test_w5_the_board_opens_on_the_own_units_legibly_and_zoom_keeps_them_clear_of_the_buttons(
        open_page: OpenPage, web_server: Served, games: dict[str, dict[str, Any]], config: str) -> None:
    g = games["archipelago"]
    page = device(open_page, config, g)
    page.goto(f"/game/{g['id']}")
    page.wait_for_selector("#arch-board .u rect")
    page.evaluate("document.fonts.ready")
    own = [u for u in view_of(web_server.url, g)["archipelago"]["units"] if not u.get("carrier")]
    expect(page.locator("#arch-board .u rect")).to_have_count(len(own))

    def drawn() -> list[dict[str, float]] | None:  # (a clean CI run once measured a chip 0 px tall, the
        units = board_units(page)  # board being drawn again at that moment: measured once it stands)
        return units if units and all(u["h"] > 0 for u in units) else None
    try:
        units = until(drawn, "every unit chip drawn", timeout_s=5)
    except AssertionError:
        units = board_units(page)  # (then the assertions below say which and how)
    view = board_view(page)
    for u in units:
        assert u["h"] >= MIN_CHIP_PX, f"{config}: a unit chip is {u['h']:.1f} px tall at the first zoom"
        assert in_view(u, view), f"{config}: a unit is outside the board's view at the first zoom: {u} / {view}"
        assert not covered(u, view), f"{config}: the zoom buttons cover a unit"
    bases: list[dict[str, float]] = page.eval_on_selector_all(
        "#arch-board .base rect", "rs => rs.map(r => { const b = r.getBoundingClientRect(); "
        "return {x: b.left, y: b.top, w: b.width, h: b.height}; })")
    assert bases, "the player's own base is drawn"
    for b in bases:
        assert not covered(b, view), f"{config}: the zoom buttons cover a start area"

    # two taps on + zoom around the units: their middle stays where it was (in the view, clear of the
    # buttons), and units stay on the board
    def middle(boxes: list[dict[str, float]]) -> tuple[float, float]:
        n = len(boxes)
        return sum(b["x"] + b["w"] / 2 for b in boxes) / n, sum(b["y"] + b["h"] / 2 for b in boxes) / n

    before = middle(units)
    scale = float(page.get_attribute("#arch-board", "data-scale") or "0")
    for n in (1, 2):
        page.click("#zoom-in")
        page.wait_for_function(f"Number(document.querySelector('#arch-board').dataset.scale) > {scale * 1.4 ** n}")
    after = board_units(page)
    now = middle(after)
    assert abs(now[0] - before[0]) < 3 and abs(now[1] - before[1]) < 3, f"{config}: zoom moved them {before} → {now}"
    view = board_view(page)
    assert [u for u in after if in_view(u, view, whole=False)], f"{config}: two taps on + pushed the units away"
    point = {"x": now[0], "y": now[1], "w": 0.0, "h": 0.0}
    assert in_view(point, view) and not covered(point, view), f"{config}: the units' middle left the view: {now}"
    page.click("#zoom-reset")
    page.wait_for_function(f"Math.abs(Number(document.querySelector('#arch-board').dataset.scale) - {scale}) < 1e-3")


# --------------------------------------------------------------------------------------------- game over

def test_w11_w12_game_over_screen_on_phones_and_a_desktop(open_page: OpenPage, web_server: Served) -> None:
    """A Salvo game played to its end over the JSON door while both players' pages are open (so a
    round closes as soon as both have sent, A17): the host sinks the guest's fleet."""
    url = web_server.url
    g = game(url, "salvo")
    pages = {"host": device(open_page, "390-he", g), "guest": device(open_page, "1366-en", g, who="guest")}
    for p in pages.values():
        p.goto(f"/game/{g['id']}")
        p.wait_for_selector("#salvo-own .cell")
    until(lambda: all(p["connected"] for p in view_of(url, g)["players"]), "both pages connected")
    rnd = 0
    while True:
        v = {who: view_of(url, g, who) for who in ("host", "guest")}
        if v["host"]["status"] == "GAME_STATUS_OVER":
            break
        assert rnd < 30, "the game did not end"
        for who in ("host", "guest"):
            s = v[who]["salvo"]
            if v[who]["round"] == 0:
                orders: dict[str, Any] = {"random_placement": True}
            elif who == "host":  # at the guest's fleet, read from the guest's own view
                target = [sq for ship in v["guest"]["salvo"]["fleet"] for sq in ship["squares"]]
                fired = {x["square"] for x in s["shots"]}
                orders = {"shots": [sq for sq in target if sq not in fired][: s["shots_allowed"]]}
            else:  # the guest fires at squares the host's fleet is not on
                ships = {sq for ship in v["host"]["salvo"]["fleet"] for sq in ship["squares"]}
                fired = {x["square"] for x in s["shots"]}
                free = [f"{c}{r}" for r in range(1, 11) for c in "ABCDEFGHIJ" if f"{c}{r}" not in ships | fired]
                orders = {"shots": free[: s["shots_allowed"]]}
            post(url, "Game/SubmitOrders", {"game_id": g["id"], "version": v[who]["version"], "salvo": orders}, g[who])
        rnd += 1

        def closed(n: int = rnd) -> bool:
            now = view_of(url, g)
            return bool(now["round"] >= n or now["status"] == "GAME_STATUS_OVER")
        until(closed, f"round {rnd}")
    for config in CONFIGS:
        page = {"390-he": pages["host"], "1366-en": pages["guest"]}.get(config) or device(open_page, config, g)
        if page.url == "about:blank":
            page.goto(f"/game/{g['id']}")
        expect(page.locator("#game-over")).to_be_visible()
        page.wait_for_selector("#salvo-enemy .cell.enemy-ship")
        check_screen(page, config, "over", 2)


# ------------------------------------------------------------------------------------------- keyboard

def test_w12_a_keyboard_alone_plays_a_salvo_round(open_page: OpenPage, web_server: Served) -> None:
    """Placement (a ship chosen, its bow square chosen with the arrows, Enter), Done, then a salvo
    (squares of the enemy grid with the arrows and Enter), Done: no mouse, no tap."""
    url = web_server.url
    g = game(url, "salvo")
    page = device(open_page, "1366-en", g)
    page.goto(f"/game/{g['id']}")
    page.wait_for_selector("#salvo-own .cell")
    for ship in ("battleship", "cruiser", "submarine", "destroyer"):
        tab_to(page, f'[data-ship="{ship}"]')
        page.keyboard.press("Enter")
        expect(page.locator(f'[data-ship="{ship}"]')).to_have_attribute("aria-pressed", "true")
        tab_to(page, "#salvo-own .cell")
        start = page.evaluate("document.activeElement.dataset.sq")
        # ships lie horizontally from their bow: one row each, A–D, rows 1, 3, 5, 7
        row = {"battleship": 1, "cruiser": 3, "submarine": 5, "destroyer": 7}[ship]
        col, r = ord(start[0]) - ord("A"), int(start[1:])
        for _ in range(col):
            page.keyboard.press("ArrowLeft")
        for _ in range(abs(row - r)):
            page.keyboard.press("ArrowDown" if row > r else "ArrowUp")
        expect(page.locator("#salvo-own .cell:focus")).to_have_attribute("data-sq", f"A{row}")
        page.keyboard.press("Enter")
        expect(page.locator(f'#salvo-own .cell[data-sq="A{row}"]')).to_have_attribute("data-vessel", ship)
    # (the guest's page is closed: its orders go first, and the host's Done closes the round, A17)
    post(url, "Game/SubmitOrders", {"game_id": g["id"], "version": view_of(url, g, "guest")["version"],
                                    "salvo": {"random_placement": True}}, g["guest"])
    tab_to(page, "#done")
    page.keyboard.press("Enter")
    until(lambda: view_of(url, g)["round"] == 1, "round 1")
    fleet = {ship["name"]: ship["squares"] for ship in view_of(url, g)["salvo"]["fleet"]}
    assert fleet["battleship"] == ["A1", "B1", "C1", "D1", "E1"] and fleet["destroyer"] == ["A7", "B7"]

    expect(page.locator("#shots-left")).to_have_attribute("data-left", "7")
    tab_to(page, "#salvo-enemy .cell:not([disabled])")
    chosen = []
    for i in range(7):
        chosen.append(page.evaluate("document.activeElement.dataset.sq"))
        page.keyboard.press("Enter")
        expect(page.locator("#shots-left")).to_have_attribute("data-left", str(6 - i))
        page.keyboard.press("ArrowRight")
    post(url, "Game/SubmitOrders", {"game_id": g["id"], "version": view_of(url, g, "guest")["version"],
                                    "salvo": {"shots": ["J10"]}}, g["guest"])
    tab_to(page, "#done")
    page.keyboard.press("Enter")
    until(lambda: view_of(url, g)["round"] == 2, "round 2")
    shots = {x["square"] for x in view_of(url, g)["salvo"]["shots"]}
    assert shots == set(chosen), (shots, chosen)
    for sq in chosen:
        expect(page.locator(f'#salvo-enemy .cell[data-sq="{sq}"]')).to_have_text("1")


def test_w4_a_keyboard_alone_plays_an_archipelago_round(open_page: OpenPage, web_server: Served) -> None:
    """Round 0 sent as placed (Tab to Done, Enter); round 1: a unit chosen in the Units tab (Enter), Move
    (Enter), a highlighted tile reached with the arrows on the board (Enter), Done (Enter). The host's
    is the only page open, so its Done closes the round (A17); the server's view is the reference."""
    url = web_server.url
    g = game(url, "archipelago")
    page = device(open_page, "390-en", g)
    page.goto(f"/game/{g['id']}")
    page.wait_for_selector("#arch-board .u rect")
    tab_to(page, "#done")
    page.keyboard.press("Enter")
    until(lambda: view_of(url, g)["round"] == 1, "round 1")
    expect(page.locator("#round")).to_contain_text("1")
    page.wait_for_selector("#unit-list li[data-unit]")

    movers = page.eval_on_selector_all("#arch-board .u", "us => us.map(u => u.dataset.unit)")
    tab_to(page, "#tab-units")
    page.keyboard.press("Enter")
    chosen, free, at = None, set(), (-1, -1)
    for unit in movers:  # the first unit that can move to a tile no own unit stands on (the map is random)
        tab_to(page, f"#unit-list li[data-unit='{unit}'] .unit-row")
        page.keyboard.press("Enter")
        expect(page.locator("#unit-panel")).to_be_visible()
        if not page.locator("#unit-panel #move:not([disabled])").count():
            continue
        expect(page.locator("#move")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#arch-board")).to_be_focused()
        reachable = {(int(r.get_attribute("data-x") or -1), int(r.get_attribute("data-y") or -1))
                     for r in page.locator("#arch-board rect.tile.hl").all()}
        assert reachable, "Move highlights the reachable tiles"
        u = page.locator(f"#arch-board .u[data-unit='{unit}']")
        at = (int(u.get_attribute("data-x") or -1), int(u.get_attribute("data-y") or -1))
        occupied = {(int(x.get_attribute("data-x") or -1), int(x.get_attribute("data-y") or -1))
                    for x in page.locator("#arch-board .u").all()}
        free = reachable - occupied  # (a tile with an own ship would be a boarding: the ship may sail on)
        if free:
            chosen = unit
            break
        page.keyboard.press("Escape")  # Move off, then the unit unselected: the next one
        page.keyboard.press("Escape")
        tab_to(page, "#tab-units")
        page.keyboard.press("Enter")
    assert chosen, "a unit that can move to a free tile"
    dest = min(free, key=lambda tl: (abs(tl[0] - at[0]) + abs(tl[1] - at[1]), tl))
    for _ in range(abs(dest[0] - at[0])):
        page.keyboard.press("ArrowRight" if dest[0] > at[0] else "ArrowLeft")
    for _ in range(abs(dest[1] - at[1])):
        page.keyboard.press("ArrowDown" if dest[1] > at[1] else "ArrowUp")
    expect(page.locator("#board-cursor")).to_contain_text(f"({dest[0]}, {dest[1]})")
    page.keyboard.press("Enter")
    expect(page.locator(f"#arch-board [data-path='{chosen}']")).to_have_count(1)
    tab_to(page, "#done")
    page.keyboard.press("Enter")
    until(lambda: view_of(url, g)["round"] == 2, "round 2")
    moved = {x["id"]: x for x in view_of(url, g)["archipelago"]["units"]}[chosen]
    assert (moved["tile"].get("x", 0), moved["tile"].get("y", 0)) == dest, (moved["tile"], dest)
