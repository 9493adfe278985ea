"""The README's path, for real: `archipelago serve`, then `create` and two `bot`s play Salvo to the end."""

from __future__ import annotations

import asyncio
import re
import urllib.request

import pytest

from tests.e2e.serving import ServeProcess, run, served, wait_healthy

__all__ = ["served"]  # the fixture

pytestmark = pytest.mark.e2e


def read(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return str(resp.read().decode())


async def test_serve_create_and_two_bots_play_salvo_to_the_end(
        served: tuple[str, str, ServeProcess]) -> None:
    address, http, proc = served
    await asyncio.to_thread(wait_healthy, address, proc)
    code_, out = await run("create", "salvo", "--speed", "20", "--server", address)
    assert code_ == 0, out
    code = re.search(r"^code: (\w{6})$", out, re.M)
    secret = re.search(r"^secret: (\S+)$", out, re.M)
    assert code and secret and re.search(r"^invite: \S+/join/" + code[1], out, re.M), out
    host, guest = await asyncio.gather(run("bot", code[1], "--secret", secret[1], "--server", address),
                                       run("bot", code[1], "--server", address))
    assert host[0] == 0 and guest[0] == 0, (host, guest)
    assert secret[1] not in host[1] + guest[1] and not re.search(r"^secret:", host[1] + guest[1], re.M)  # (logs)
    # the last line in words: a nickname that won and why, each bot saying whether it won (S7), or a draw
    line = re.compile(r"^game over after round \d+: (?:a draw \((?:both fleets sank in the same salvo|the round "
                      r"limit was reached)\)|(\S+) won \((?:every ship of the other fleet was sunk|the best score "
                      r"when the round limit was reached)\) — you (win|lose))$", re.M)
    ends = [line.search(text) for _, text in (host, guest)]
    assert ends[0] and ends[1], (host, guest)
    assert ends[0][1] == ends[1][1] and (ends[0][1] is None or {ends[0][2], ends[1][2]} == {"win", "lose"}), ends
    # the operator's view: one scrape shows the gateway's and every shard's metrics
    text = await asyncio.to_thread(read, f"{http}/metrics")
    closed = [line for line in text.splitlines() if line.startswith("archipelago_rounds_closed_total{")]
    assert closed and all('shard="shard-' in line for line in closed)
    assert sum(float(line.rsplit(" ", 1)[1]) for line in closed) >= 2  # placement and at least one salvo
    assert 'archipelago_requests_total{code="ok",door="grpc",method="SubmitOrders",status="OK"}' in text
    health = await asyncio.to_thread(read, f"{http}/healthz")
    assert '"status":"ok"' in health
