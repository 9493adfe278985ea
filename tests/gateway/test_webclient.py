"""The web client's routes (gateway/webclient.py): the page on every client path, invite links for
browsers and for everything else, the static files and the rule tables drawn from the engine."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2 as httpx
import pytest

from engine.archipelago import economy
from engine.archipelago.units import UNIT_TYPES
from gateway.http import build_app
from gateway.webclient import STATIC


async def _health() -> dict[str, Any]:
    return {}


@pytest.fixture
async def http() -> Any:
    transport = httpx.ASGITransport(app=build_app(_health))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway.test") as client:
        yield client


@pytest.mark.parametrize(("path", "status"), [("/", 200), ("/rejoin", 200), ("/join/7KQ2ZP", 200),
                                             ("/game/3f2a9c", 404)])  # (no game can have that id)
async def test_every_client_path_serves_the_page(http: Any, path: str, status: int) -> None:
    resp = await http.get(path, headers={"accept": "text/html,application/xhtml+xml"})
    assert resp.status_code == status
    assert resp.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/js/app.js">' in resp.text


class _Store:
    def __init__(self, known: set[str], down: bool = False) -> None:
        self.known, self.down = known, down

    async def summary(self, game_id: str) -> dict[str, Any] | None:
        if self.down:
            raise ConnectionError("redis is down")
        return {"game_id": game_id} if game_id in self.known else None


@pytest.mark.parametrize(("down", "statuses"), [(False, (200, 404)), (True, (200, 200))], ids=["up", "store-down"])
async def test_a_game_page_answers_404_for_a_game_that_does_not_exist(down: bool, statuses: tuple[int, int]) -> None:
    # the page is the same either way (its router shows "no such game" or "no seat on this device");
    # with the store down the gateway cannot tell, and never says "no such game" of a game that may exist
    app = build_app(_health)
    app.state.api = type("Api", (), {"store": _Store({"0123456789abcdef"}, down)})()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway.test") as c:
        got = [await c.head(f"/game/{g}") for g in ("0123456789abcdef", "fedcba9876543210")]
    assert tuple(r.status_code for r in got) == statuses


async def test_invite_link_tells_a_non_browser_how_to_join(http: Any) -> None:
    resp = await http.get("/join/7KQ2ZP", headers={"accept": "*/*"})
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    assert "7KQ2ZP" in resp.text and "/v1/Lobby/JoinGame" in resp.text


async def test_static_files_are_served_and_unknown_ones_are_404(http: Any) -> None:
    ok = await http.get("/static/js/app.js")
    assert ok.status_code == 200 and "javascript" in ok.headers["content-type"]
    assert (await http.get("/static/js/nope.js")).status_code == 404
    assert (await http.get("/static/../pyproject.toml")).status_code == 404


async def test_rules_table_is_the_engines(http: Any) -> None:
    rules = (await http.get("/client/archipelago.json")).json()
    assert [u["id"] for u in rules["units"]] == list(UNIT_TYPES)
    rank13 = next(u for u in rules["units"] if u["id"] == "rank13")
    assert rank13["cost"] == UNIT_TYPES["rank13"].cost and rank13["limit"] == 1
    assert rules["bank_rate"] == economy.BANK_RATE and rules["port_rate"] == economy.PORT_RATE
    assert not next(u for u in rules["units"] if u["id"] == "flag")["buildable"]


def _keys(lang: str) -> dict[str, set[str]]:
    return {f.stem: set(json.loads(f.read_text())) for f in (STATIC / "i18n" / lang).glob("*.json")}


def test_w13_english_and_hebrew_have_the_same_strings() -> None:
    en, he = _keys("en"), _keys("he")
    assert en.keys() == he.keys()
    for ns in en:
        assert en[ns] == he[ns], (ns, sorted(en[ns] ^ he[ns]))
    texts = [v for f in (STATIC / "i18n" / "he").glob("*.json") for v in json.loads(f.read_text()).values()]
    assert all(isinstance(v, str) for v in texts)


def test_w13_every_string_the_code_asks_for_is_translated() -> None:
    known = set().union(*_keys("en").values())
    asked: set[str] = set()
    pairs = 0
    for js in (STATIC / "js").glob("*.js"):
        text = js.read_text()
        asked |= set(re.findall(r"\bt\(\s*'([a-z_]+(?:\.[a-z0-9_/]+)+)'", text))
        labelled = re.findall(r"\[\w+, '([a-z_]+(?:\.[a-z0-9_/]+)+)'\]", text)  # dom.words(t, [[el, key], …])
        asked |= set(labelled)
        pairs += len(labelled)
    html = (STATIC / "index.html").read_text()
    asked |= set(re.findall(r'data-t="([^"]+)"', html))
    assert asked and pairs, "the scan found the t('…') calls and the words(t, …) pairs"
    assert not sorted(asked - known)
