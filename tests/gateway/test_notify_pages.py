"""The pages behind the links in notification mails (gateway/notify_api.py routes): a GET only shows a
button (a mail scanner that follows links changes nothing), a POST does it — RFC 8058's one-click
unsubscribe is a POST of ``List-Unsubscribe=One-Click``. The service behind them is the real one in
tests/services/test_notify_flow.py; here a recording stand-in."""

from __future__ import annotations

import httpx2 as httpx
from starlette.applications import Starlette

from gateway import notify_api


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def confirm(self, token: str) -> tuple[bool, str]:
        self.calls.append(("confirm", token))
        return token == "good", "he"

    async def unsubscribe(self, token: str) -> tuple[bool, str]:
        self.calls.append(("unsubscribe", token))
        return token == "good", "en"


async def test_notify_pages_get_changes_nothing_post_does_it_in_the_players_language() -> None:
    svc = Recording()
    app = Starlette(routes=notify_api.routes(lambda _r: svc))  # type: ignore[arg-type,return-value]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        page = await http.get("/notify/unsubscribe/good?lang=he")
        assert page.status_code == 200 and svc.calls == [], "a GET changes nothing"
        assert 'dir="rtl"' in page.text and "<form method=\"post\">" in page.text and "הסרה" in page.text
        done = await http.post("/notify/unsubscribe/good", content=b"List-Unsubscribe=One-Click",
                               headers={"content-type": "application/x-www-form-urlencoded"})
        assert done.status_code == 200 and "no more email" in done.text
        bad = await http.post("/notify/unsubscribe/forged")
        assert bad.status_code == 410 and "not valid" in bad.text
        confirmed = await http.post("/notify/confirm/good")
        assert confirmed.status_code == 200 and 'lang="he"' in confirmed.text  # the player's language
        assert svc.calls == [("unsubscribe", "good"), ("unsubscribe", "forged"), ("confirm", "good")]


def test_notify_the_access_log_never_shows_a_mail_links_token() -> None:
    import logging

    from gateway.http import LinkTokens

    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "POST", "/notify/unsubscribe/g1.0.abcdef0123?lang=he", "1.1", 200),
                               None)
    assert LinkTokens().filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "POST /notify/unsubscribe/…?lang=he HTTP/1.1" 200'
