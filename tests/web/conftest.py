"""Browser tests: Debian's Chromium driven by Playwright (sync API) against `archipelago serve`.

One served cluster and one browser per session; each test opens its own browser contexts (one per
player: separate storage, like separate devices). Every page is watched: a console error, an
uncaught exception or a failed request fails the test that opened it. Screenshots go to
``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    FloatRect,
    Locator,
    Page,
    Playwright,
    Request,
    Response,
    ViewportSize,
    sync_playwright,
)

from tests.e2e.serving import ServeProcess, serving, wait_healthy
from tests.waits import until as until  # (re-exported: the browser tests import it from here)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("ARCHIPELAGO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORTS: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844},
                                     "phone320": {"width": 320, "height": 640},
                                     "laptop": {"width": 1366, "height": 768}}


@dataclass
class Served:
    url: str  # http://127.0.0.1:<port>
    grpc: str  # 127.0.0.1:<port>
    proc: ServeProcess


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`archipelago serve` as a user runs it, on free ports, for the whole session."""
    with serving(tmp_path_factory.mktemp("web-serve")) as (grpc, url, proc):
        wait_healthy(grpc, proc)
        yield Served(url, grpc, proc)


# Per module, not per session: while Playwright's sync API is open it holds an event loop in this
# thread, and pytest-asyncio's tests elsewhere in the same run must not find one.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


@dataclass
class Watched:
    """The pages a test opened and every problem they reported."""

    contexts: list[BrowserContext] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)  # substrings of problems a test causes on purpose
    closing: bool = False  # the test is over: requests its own closing aborts are not the page's problems

    def report(self, problem: str) -> None:
        # a seatless game page asks the gateway with a HEAD whether the game exists; the test's next
        # navigation may cut it (the page left: nothing of the page's own went wrong)
        if problem.startswith("request failed: HEAD ") and "/game/" in problem and "ERR_ABORTED" in problem:
            return
        if not self.closing:
            self.problems.append(problem)

    def watch(self, page: Page) -> Page:
        def console(m: ConsoleMessage) -> None:
            if m.type in ("error", "warning"):
                self.report(f"console {m.type}: {m.text}")

        def response(r: Response) -> None:
            if r.status >= 400:
                self.report(f"HTTP {r.status}: {r.request.method} {r.url}")

        page.on("console", console)
        page.on("pageerror", lambda e: self.report(f"page error: {e}"))
        def failed(r: Request) -> None:
            # a draft (sent a second after each change and as the page is left) that a navigation or
            # reload cut is the page leaving, not a fault: the next draft, or Done, carries the orders
            if "ERR_ABORTED" in str(r.failure) and r.url.endswith("/Game/SubmitOrders") \
                    and '"draft":true' in (r.post_data or "").replace(" ", ""):
                return
            if "ERR_ABORTED" in str(r.failure) and (r.url.endswith("/Game/GetView")
                                                    or (r.method == "GET" and "/static/" in r.url)):
                return  # a read (a view, an icon) a reload or navigation cut: the page left, the next reads again
            self.report(f"request failed: {r.method} {r.url} {r.failure}")

        page.on("requestfailed", failed)
        page.on("response", response)
        return page

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(a in p for a in self.allowed)]

    def close_all(self) -> None:
        """The end of a test: its problems taken first (closing aborts what the pages still had in
        flight), every context closed, then none may be left."""
        problems = self.unexpected()
        self.closing = True
        for ctx in self.contexts:
            ctx.close()
        assert not problems, "\n".join(problems)


I18N = ROOT / "gateway" / "static" / "i18n"


@cache
def words(lang: str) -> dict[str, str]:
    """The web client's words in ``lang`` (every i18n file), as the page has them."""
    table: dict[str, str] = {}
    for f in sorted((I18N / lang).glob("*.json")):
        table.update(json.loads(f.read_text(encoding="utf-8")))
    return table


OpenPage = Callable[..., Page]


@pytest.fixture
def watched() -> Watched:
    return Watched()


@pytest.fixture
def open_page(browser: Browser, web_server: Served, watched: Watched) -> Iterator[OpenPage]:
    """open_page(viewport="desktop"|"phone", locale="en-US", base_url=…) → a Page in a new context (a
    new device); relative URLs go to the served gateway unless ``base_url`` says otherwise."""

    def make(viewport: str = "desktop", locale: str = "en-US", base_url: str = "") -> Page:
        ctx = browser.new_context(viewport=VIEWPORTS[viewport], locale=locale, base_url=base_url or web_server.url,
                                  has_touch=viewport.startswith("phone"), is_mobile=viewport.startswith("phone"))
        ctx.set_default_timeout(20_000)
        watched.contexts.append(ctx)
        return watched.watch(ctx.new_page())

    yield make
    watched.close_all()


def post(base_url: str, rpc: str, body: dict[str, Any], secret: str = "") -> dict[str, Any]:
    """One call of the JSON door, as any HTTP client makes it (``rpc`` like "Lobby/CreateGame")."""
    headers = {"content-type": "application/json"}
    if secret:
        headers["authorization"] = f"Bearer {secret}"
    req = urllib.request.Request(f"{base_url}/v1/{rpc}", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=20) as resp:
        answer: dict[str, Any] = json.load(resp)
        return answer


def box_of(locator: Locator, what: str) -> FloatRect:
    """The element's box once it stands drawn: a board drawn again (a new view, the language set) has
    no box for a moment between two of Playwright's calls, the old element gone, the new one not yet."""
    got: FloatRect = until(locator.bounding_box, f"{what} drawn", timeout_s=5)
    return got


def shot(page: Page, name: str) -> Path:
    """Save a screenshot as test-artifacts/<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def create_game(page: Page, nickname: str, game: str = "archipelago", players: int = 2) -> str:
    """From the home page: open a game; returns its invite link (the page is in the lobby)."""
    page.goto("/")
    page.fill("#nickname", nickname)
    page.select_option("#game-kind", game)
    if game != "salvo":
        page.select_option("#players", str(players))
    page.click("#open")
    page.wait_for_selector("#game-code")
    return page.input_value("#invite-link")


def join_by_link(page: Page, invite: str, nickname: str) -> None:
    """Open an invite link, write a nickname, join: the page is in the lobby."""
    page.goto(invite)
    assert page.input_value("#code"), "the invite link fills in the code"
    page.fill("#nickname", nickname)
    page.click("#join")
    page.wait_for_selector("#seats")


def start(host: Page, *others: Page) -> None:
    """The host starts the game once every seat is taken; every page shows the game."""
    host.click("#start:not([disabled])")
    for p in (host, *others):
        p.wait_for_selector("#game-area:not([hidden])")


