"""The README's path for Arcmage, for real: `archipelago create arcmage` and `archipelago bot` processes
play a game to its end over the gRPC door (M1, M3, M53) — two bots with the decks they chose (a
built-in one by name at create, a Rebirth list from a file at join), and four bots a 4-player game.
Each bot ends with the outcome in words ("game over after turn 12: lister won (last player standing) —
you lose") and never prints a secret."""

from __future__ import annotations

import asyncio
import re
import stat
from pathlib import Path

import pytest

from archipelago.v1 import lobby_pb2
from client.grpc_client import Client
from engine.arcmage.carddb import DECKS, DEFS
from tests.conftest import Cluster
from tests.e2e.serving import run

pytestmark = pytest.mark.e2e

BOUND_S = 150  # a bound, for a loaded machine: each game takes some 20-25 s
#: a bot's last line: the turn, then a win ("lister won (last player standing) — you lose") or a draw
#: ("a draw (the turn limit was reached)"), the reason in words
OUTCOME = re.compile(r"^game over after turn (?P<turn>\d+): (?:(?P<draw>a draw)|(?P<winner>.+?) won) "
                     r"\((?P<reason>[^()]+)\)(?: — you (?P<you>win|lose))?$", re.M)
LAST_PLAYER = "last player standing"  # M3: the last player in wins
TURN_LIMIT = "the turn limit was reached"  # past max_rounds turns: a draw
ALL_OUT = "every player was out at once"  # M3: players going out together with no one left share a draw


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


def finished(results: list[tuple[int, str]], max_turns: int) -> tuple[tuple[int, str | None, str], list[str | None]]:
    """Every bot exited 0 having seen the same legal end (M3), and printed no ``secret:`` line (a bot's
    output is a log): ((the turn, the winner's nickname or None for a draw, the reason in words), each
    bot's "win" or "lose" — exactly one "win" after a win, None after a draw)."""
    ends = set()
    says = []
    for rc, text in results:
        assert rc == 0, text
        assert not re.search(r"^secret:", text, re.M), text
        found = OUTCOME.search(text)
        assert found, text
        turn, winner, reason = int(found["turn"]), found["winner"], found["reason"]
        assert 1 <= turn <= max_turns + 1, text
        if winner is None:  # a draw: at the bound, or everyone out at once
            assert reason in (TURN_LIMIT, ALL_OUT) and found["you"] is None, text
        else:
            assert reason == LAST_PLAYER and found["you"] in ("win", "lose"), text
        says.append(found["you"])
        ends.add((turn, winner, reason))
    assert len(ends) == 1, ends
    if next(iter(ends))[1] is not None:
        assert says.count("win") == 1, says
    return next(iter(ends)), says


async def test_m1_m53_two_bots_finish_a_game_with_a_built_in_deck_and_a_rebirth_list(
        cluster: Cluster, tmp_path: Path) -> None:
    listing = tmp_path / "brothers.txt"  # "Brothers in Arms" as a Rebirth list, one "N Card Name" a line
    cards = DECKS["Brothers in Arms"].items()
    listing.write_text("# a deck list\n" + "".join(f"{n} {DEFS[k]['name']}\n" for k, n in cards), encoding="utf-8")
    # the decks the other way round from the defaults (seat 0 Brothers in Arms, seat 1 Gaian)
    code, secret = await created(cluster, tmp_path, "--max-rounds", "20", "--deck", "gaian love for life")
    saved = tmp_path / "lister-secret"  # the guest bot keeps its seat's secret only in this file
    results = await asyncio.wait_for(asyncio.gather(
        run("bot", code, "--secret-file", str(secret), "--server", cluster.address, timeout=BOUND_S),
        run("bot", code, "--deck", str(listing), "--nickname", "lister", "--save-secret", str(saved),
            "--server", cluster.address, timeout=BOUND_S)),
        BOUND_S)
    (turn, winner, reason), says = finished(list(results), 20)
    host_secret, guest_secret = secret.read_text().strip(), saved.read_text().strip()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    for _, text in results:
        assert host_secret not in text and guest_secret not in text, text
    assert f"secret saved in {saved} (mode 0600)" in results[1][1]
    async with Client(cluster.address, host_secret) as host, Client(cluster.address, guest_secret) as guest:
        who = await host.rejoin()
        final = await host.view(who.game_id)
        assert (await guest.rejoin()).nickname == "lister"  # the saved secret is the guest's seat
    assert final.status == lobby_pb2.GAME_STATUS_OVER and final.round == turn
    # the line said what the game's outcome is: the winner by nickname, the reason in words (M3)
    names = {p.seat: p.nickname for p in final.players}
    outcome = final.arcmage.outcome
    assert [names[w] for w in outcome.winners] == ([] if winner is None else [winner]), (outcome, winner)
    assert outcome.reason == {LAST_PLAYER: "last_player", TURN_LIMIT: "max_rounds", ALL_OUT: "all_out_at_once"}[reason]
    if winner is not None:  # the host's bot is seat 0, the lister seat 1
        assert says == [("win" if seat in outcome.winners else "lose") for seat in (0, 1)], (says, outcome)
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
    host_secret = secret.read_text().strip()
    assert all(host_secret not in text for _, text in results)
