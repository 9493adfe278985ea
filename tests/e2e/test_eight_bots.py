"""The README's recipe, for real: on `archipelago serve`, eight `archipelago bot` processes play an
8-player Archipelago game to the end (A1, A4, A67)."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.e2e.serving import ServeProcess, run, served, wait_healthy

__all__ = ["served"]  # the fixture

pytestmark = pytest.mark.e2e


async def test_a1_eight_bots_play_an_eight_player_game_to_the_end(
        served: tuple[str, str, ServeProcess]) -> None:
    address, _http, proc = served
    await asyncio.to_thread(wait_healthy, address, proc)
    # 30 s rounds: rounds close early once the eight have submitted (A17); on a loaded machine, where a
    # bot can be late, a round's deadline keeps the whole game (5 rounds) well inside run()'s bound
    rc, out = await run("create", "archipelago", "--seats", "8", "--max-rounds", "4", "--speed", "30",
                        "--server", address)
    assert rc == 0, out
    code = re.search(r"^code: (\w{6})$", out, re.M)
    secret = re.search(r"^secret: (\S+)$", out, re.M)
    assert code and secret, out
    guests = [run("bot", code[1], "--server", address) for _ in range(7)]
    got = await asyncio.gather(run("bot", code[1], "--secret", secret[1], "--server", address), *guests,
                               return_exceptions=True)
    failed = [(i, r) for i, r in enumerate(got) if isinstance(r, BaseException)]
    assert not failed, "\n\n".join(  # every bot's own words: the host's (0) and the guests'
        f"bot {i}: {r if isinstance(r, BaseException) else r[1][-2000:]}" for i, r in enumerate(got))
    results = [r for r in got if not isinstance(r, BaseException)]
    for rc, text in results:
        assert rc == 0, text
        assert "game over after round 4" in text, text
    assert len({re.search(r"game over .*", t)[0].split("—")[0] for t in (r[1] for r in results)}) == 1  # type: ignore[index]
