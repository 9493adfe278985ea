"""The web door's defences and pages (gateway/security.py, gateway/rules_page.py): the security headers
on every kind of answer, the not-found page for browsers (JSON for the API), and the rules pages with
an anchor per rule id."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import httpx2 as httpx
import pytest

from gateway import rules_page
from gateway.http import build_app
from gateway.security import content_security_policy

HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


async def _health() -> dict[str, Any]:
    return {}


@pytest.fixture
async def http() -> Any:
    app = build_app(_health)
    app.state.api = None  # the requests below are refused before any rpc reaches the API
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway.test:8080") as client:
        yield client


def _policy(resp: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in resp.headers["content-security-policy"].split(";"):
        name, *values = part.split()
        out[name] = values
    return out


def _assert_defended(resp: Any) -> None:
    csp = _policy(resp)
    assert csp["default-src"] == ["'self'"] and csp["script-src"] == ["'self'"]
    assert csp["style-src"] == ["'self'"] and csp["img-src"] == ["'self'", "data:"]
    assert csp["connect-src"] == ["'self'", "ws://gateway.test:8080", "wss://gateway.test:8080"]
    assert csp["frame-ancestors"] == ["'none'"] and csp["base-uri"] == ["'none'"]
    assert csp["form-action"] == ["'self'"] and csp["object-src"] == ["'none'"]
    assert "'unsafe-inline'" not in resp.headers["content-security-policy"]
    assert "'unsafe-eval'" not in resp.headers["content-security-policy"]
    assert resp.headers["x-content-type-options"] == "nosniff"
    assert resp.headers["x-frame-options"] == "DENY"
    assert resp.headers["referrer-policy"] == "no-referrer"


async def test_security_headers_on_the_page_static_files_api_rules_and_not_found(http: Any) -> None:
    answers = {
        "home": await http.get("/", headers=HTML),
        "game page": await http.get("/game/3f2a9c", headers=HTML),
        "static js": await http.get("/static/js/app.js"),
        "static css": await http.get("/static/css/app.css"),
        "agent js": await http.get("/static/js/agent.js"),
        "rules json": await http.get("/client/archipelago.json"),
        "api error": await http.post("/v1/Lobby/JoinGame", content=b"{not json"),
        "api unknown rpc": await http.post("/v1/Lobby/Nope", content=b"{}"),
        "not found": await http.get("/no/such/page", headers=HTML),
        "rules page": await http.get("/rules/archipelago", headers=HTML),
        "liveness": await http.get("/livez"),
    }
    assert answers["api error"].status_code == 400 and answers["api error"].json()["error"]["code"] == "order/invalid"
    assert answers["static js"].status_code == 200 and answers["rules page"].status_code == 200
    for name, resp in answers.items():
        try:
            _assert_defended(resp)
        except (AssertionError, KeyError) as exc:
            raise AssertionError(f"{name}: {resp.status_code} {dict(resp.headers)}") from exc


def test_a_host_header_that_is_not_a_plain_host_never_reaches_the_policy() -> None:
    evil = "gateway.test; script-src *"
    assert "script-src *" not in content_security_policy(evil)
    assert "connect-src 'self';" in content_security_policy(evil)
    assert "connect-src 'self' ws://[::1]:80 wss://[::1]:80;" in content_security_policy("[::1]:80")


async def test_the_page_has_no_inline_script_or_style(http: Any) -> None:
    page = (await http.get("/", headers=HTML)).text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S)
    assert scripts and all('src="/static/' in attrs and not body.strip() for attrs, body in scripts)
    assert "<style" not in page and " style=" not in page and not re.search(r"\son[a-z]+=", page)


async def test_an_unknown_path_is_an_html_page_for_a_browser_with_a_link_home(http: Any) -> None:
    resp = await http.get("/no/such/<b>page</b>", headers=HTML)
    assert resp.status_code == 404 and resp.headers["content-type"].startswith("text/html")
    assert '<html lang="en" dir="ltr">' in resp.text and 'href="/"' in resp.text
    assert "Page not found" in resp.text and "<b>page</b>" not in resp.text  # the path is escaped
    missing_static = await http.get("/static/js/nope.js", headers=HTML)
    assert missing_static.status_code == 404 and 'href="/"' in missing_static.text


async def test_an_unknown_path_is_json_for_a_program_and_the_api_keeps_its_error_shape(http: Any) -> None:
    resp = await http.get("/no/such/page", headers={"accept": "application/json"})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "lookup/not_found"
    api = await http.get("/v1/Lobby/Nope", headers=HTML)  # even a browser: the API answers JSON
    assert api.status_code == 404 and api.json()["error"]["code"] == "lookup/not_found"
    assert (await http.get("/static/js/nope.js")).json()["error"]["code"] == "lookup/not_found"


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.stack: list[str] = []
        self.html_attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        d = dict(attrs)
        if tag == "html":
            self.html_attrs = d
        if d.get("id"):
            self.ids.append(str(d["id"]))


def _spec_ids(game: str) -> set[str]:
    letter = rules_page.GAMES[game]
    text = (rules_page.DOCS / f"{game}.md").read_text()
    return {f"{letter}{n}" for n in re.findall(rf"\b{letter}(\d+)\b", text)}


@pytest.mark.parametrize("game", ["archipelago", "salvo", "arcmage"])
async def test_rules_page_renders_the_markdown_with_an_anchor_per_rule_id(http: Any, game: str) -> None:
    resp = await http.get(f"/rules/{game}", headers=HTML)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    parser = _Ids()
    parser.feed(resp.text)
    assert parser.html_attrs == {"lang": "en", "dir": "ltr"}
    assert '<meta name="viewport"' in resp.text and 'href="/static/css/rules.css"' in resp.text
    assert len(parser.ids) == len(set(parser.ids)), "ids are unique"
    assert _spec_ids(game) <= set(parser.ids), sorted(_spec_ids(game) - set(parser.ids))
    assert "<!--" not in resp.text  # the generated-part markers are left out
    has_table = any(ln.startswith("|") for ln in (rules_page.DOCS / f"{game}.md").read_text().splitlines())
    assert ("<table>" in resp.text) == has_table
    assert "<script" not in resp.text and " style=" not in resp.text


async def test_a24_lands_on_the_boarding_rule_and_headings_keep_the_contents_links(http: Any) -> None:
    page = (await http.get("/rules/archipelago", headers=HTML)).text
    at = page.index('id="A24"')
    item = page[page.rindex("<li>", 0, at):page.index("</li>", at)]
    assert "<strong>Boarding</strong> (A24)" in item
    for target in re.findall(r'href="#([^"]+)"', page):  # the Markdown's contents links
        assert f'id="{target}"' in page, target
    assert '<a href="/rules/salvo">' in page  # the other games' pages


async def test_an_unknown_game_is_the_not_found_page(http: Any) -> None:
    resp = await http.get("/rules/chess", headers=HTML)
    assert resp.status_code == 404 and "Page not found" in resp.text


def test_markdown_text_never_becomes_markup() -> None:
    out = rules_page.render("## Hi (A1)\n\n- a <script>x</script> **b** `<i>` [l](javascript:alert(1))\n", "A")
    assert "<script>" not in out and "&lt;script&gt;" in out and "<strong>b</strong>" in out
    assert "<code>&lt;i&gt;</code>" in out and 'href="#"' in out and "javascript:" not in out.split("href=")[1]
