"""`archipelago play`: a human at the terminal places a fleet and fires a salvo against a live server."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from client.grpc_client import Client

from archipelago.v1 import salvo_pb2
from tests.conftest import Cluster
from tests.e2e.helpers import FLEET_SQUARES, placement, round_closed, wait_update

pytestmark = pytest.mark.e2e

EXE = str(Path(sys.executable).with_name("archipelago"))


async def test_a_human_plays_salvo_in_the_terminal(cluster: Cluster) -> None:
    host = Client(cluster.address)
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    human = await asyncio.create_subprocess_exec(
        EXE, "play", created.code, "--nickname", "human", "--server", cluster.address,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert human.stdin is not None
    human.stdin.write(b"random\nA1 b1 J9\n")  # answers to the placement and the first firing prompt
    await human.stdin.drain()
    human.stdin.close()
    await wait_update(host, created.game_id, 0, lambda u: u.kind == "joined" and u.seat == 1)
    await host.start(created.game_id)
    view = await host.view(created.game_id)
    await host.submit(created.game_id, view.version, salvo=placement(0))
    await wait_update(host, created.game_id, view.seq, round_closed(0))
    view = await host.view(created.game_id)
    await host.submit(created.game_id, view.version, salvo=salvo_pb2.SalvoOrders(shots=["J10"]))
    await wait_update(host, created.game_id, view.seq, round_closed(1))
    out, _ = await asyncio.wait_for(human.communicate(), 60)
    text = out.decode()
    assert human.returncode == 1, text  # the prompts ran out of input (EOF) in round 2
    assert "your fleet" in text and "enemy waters" in text and "round 1: up to 7 shots" in text
    after = await host.view(created.game_id)
    assert {s.square for s in after.salvo.incoming} == {"A1", "B1", "J9"}
    assert {"A1", "B1"} <= FLEET_SQUARES[0] and "J9" not in FLEET_SQUARES[0]
    assert "round 1: 2 hit(s) — battleship ×2" in text  # the S6 report, as the human sees it
