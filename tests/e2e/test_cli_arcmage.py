"""The README's path for Arcmage, for real: `archipelago create arcmage` and `archipelago bot` processes
play a game to its end over the gRPC door (M1, M3, M53) — two bots with the decks they chose (a
built-in one by name at create, a Rebirth list from a file at join), and four bots a 4-player game."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from archipelago.v1 import lobby_pb2
from client.grpc_client import Client
from engine.arcmage.carddb import DECKS, DEFS
from tests.conftest import Cluster
from tests.e2e.serving import run

pytestmark = pytest.mark.e2e

BOUND_S = 150  # a bound, for a loaded machine: each game takes some 20-25 s
OUTCOME = re.compile(r"^game over after turn (\d+): (.*)$", re.M)


async def created(cluster: Cluster, tmp_path: Path, *args: str) -> tuple[str, Path]:
    """`archipelago create arcmage ARGS`: (the code, a file holding the host's secret)."""
    rc, out = await run("create", "arcmage", *args, "--server", cluster.address, timeout=BOUND_S)
    assert rc == 0, out
    code = re.search(r"^code: (\w{6})$", out, re.M)
    secret = re.search(r"^secret: (\S+)$", out, re.M)
    assert code and secret, out
    path = tmp_path / "host-secret"
    path.write_text(secret[1] + "\n", encoding="utf-8")
    return code[1], path


def finished(results: list[tuple[int, str]], max_turns: int) -> str:
    """Every bot exited 0 having seen the same end; returns that end."""
    ends = set()
    for rc, text in results:
        assert rc == 0, text
        found = OUTCOME.search(text)
        assert found, text
        assert 1 <= int(found[1]) <= max_turns + 1, text
        ends.add((found[1], found[2].split(" — ")[0]))
    assert len(ends) == 1, ends
    return next(iter(ends))[1]


async def test_m1_m53_two_bots_finish_a_game_with_a_built_in_deck_and_a_rebirth_list(
        cluster: Cluster, tmp_path: Path) -> None:
    listing = tmp_path / "brothers.txt"  # "Brothers in Arms" as a Rebirth list, one "N Card Name" a line
    cards = DECKS["Brothers in Arms"].items()
    listing.write_text("# a deck list\n" + "".join(f"{n} {DEFS[k]['name']}\n" for k, n in cards), encoding="utf-8")
    # the decks the other way round from the defaults (seat 0 Brothers in Arms, seat 1 Gaian)
    code, secret = await created(cluster, tmp_path, "--max-rounds", "20", "--deck", "gaian love for life")
    results = await asyncio.wait_for(asyncio.gather(
        run("bot", code, "--secret-file", str(secret), "--server", cluster.address, timeout=BOUND_S),
        run("bot", code, "--deck", str(listing), "--nickname", "lister", "--server", cluster.address, timeout=BOUND_S)),
        BOUND_S)
    end = finished(list(results), 20)
    assert end.startswith("draw (max_rounds)") or "(last_player)" in end, end
    async with Client(cluster.address, secret.read_text().strip()) as host:
        who = await host.rejoin()
        final = await host.view(who.game_id)
    assert final.status == lobby_pb2.GAME_STATUS_OVER
    factions: dict[int, set[str]] = {0: set(), 1: set()}
    for card in final.arcmage.cards.values():  # every card seat 0 may see: its own, and both players' public ones
        factions[card.owner].add(final.arcmage.faces[card.key].faction)
    assert factions == {0: {"Gaian"}, 1: {"The Empire"}}, factions


async def test_m1_four_bots_finish_a_four_player_game(cluster: Cluster, tmp_path: Path) -> None:
    code, secret = await created(cluster, tmp_path, "--seats", "4", "--max-rounds", "16")
    guests = [run("bot", code, "--server", cluster.address, timeout=BOUND_S) for _ in range(3)]
    results = await asyncio.wait_for(asyncio.gather(
        run("bot", code, "--secret-file", str(secret), "--server", cluster.address, timeout=BOUND_S), *guests), BOUND_S)
    finished(list(results), 16)
