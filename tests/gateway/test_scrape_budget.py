"""/metrics waits for the shards' samples at most as long as the scraper waits for the answer (issue 25:
a silent shard must show as down, not make the whole scrape time out)."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from gateway.http import SCRAPE_BUDGET_S, build_app, scrape_budget


@pytest.mark.parametrize(("header", "budget"), [
    (None, SCRAPE_BUDGET_S), ("", SCRAPE_BUDGET_S), ("10", SCRAPE_BUDGET_S), ("2", 1.6), ("0.5", 0.4),
    ("0.01", 0.1), ("nonsense", SCRAPE_BUDGET_S), ("-3", SCRAPE_BUDGET_S), ("nan", SCRAPE_BUDGET_S),
    ("inf", SCRAPE_BUDGET_S)])
def test_the_budget_is_the_default_or_80_percent_of_the_scrapers_timeout(header: str | None, budget: float) -> None:
    assert scrape_budget(header) == pytest.approx(budget)


async def test_a_scrape_passes_prometheus_timeout_header_to_the_shard_refresh() -> None:
    asked: list[float] = []

    async def health() -> dict[str, object]:
        return {}

    async def refresh(budget_s: float) -> None:
        asked.append(budget_s)

    app = build_app(health, refresh)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        assert (await c.get("/metrics", headers={"X-Prometheus-Scrape-Timeout-Seconds": "3"})).status_code == 200
        assert (await c.get("/metrics")).status_code == 200
    assert asked == [pytest.approx(2.4), SCRAPE_BUDGET_S]
