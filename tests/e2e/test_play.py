"""`archipelago play`: a human at the terminal places a fleet and fires a salvo against a live server."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from archipelago.v1 import salvo_pb2
from client.grpc_client import Client
from tests.conftest import Cluster
from tests.e2e.helpers import FLEET_SQUARES, connected, placement, round_closed, wait_update

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
    # the host stays connected (A17): each round waits for both players' orders
    async with connected(host, created.game_id):
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
    assert "your fleet" in text and "enemy waters" in text
    assert re.search(r"\[round 1 · closes \d\d:\d\d:\d\d \S+ · \d+ s left\] fire up to 7 shots", text), text
    after = await host.view(created.game_id)
    assert {s.square for s in after.salvo.incoming} == {"A1", "B1", "J9"}
    assert {"A1", "B1"} <= FLEET_SQUARES[0] and "J9" not in FLEET_SQUARES[0]
    assert "round 1: 2 hit(s) — battleship ×2" in text  # the S6 report, as the human sees it


class Output:
    """A subprocess's output as it comes; ``expect`` waits (with a timeout) until a text has appeared."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream
        self.data = b""

    @property
    def text(self) -> str:
        return self.data.decode(errors="replace")

    async def expect(self, text: str, start: int = 0, timeout: float = 30) -> int:
        """The position after ``text``'s first appearance at or after byte ``start``."""
        want = text.encode()
        try:
            async with asyncio.timeout(timeout):
                while (at := self.data.find(want, start)) < 0:
                    chunk = await self.stream.read(4096)
                    if not chunk:
                        raise AssertionError(f"the output ended without {text!r}:\n{self.text}")
                    self.data += chunk
        except TimeoutError:
            raise AssertionError(f"{text!r} not shown within {timeout} s:\n{self.text}") from None
        return at + len(want)


async def test_the_round_waits_for_the_human_at_the_prompt_until_its_deadline(cluster: Cluster) -> None:
    """Defect 7: the human at the prompt keeps its Watch stream open, so it counts as connected (A17): the
    host's submission does not close the round early; at the deadline the autopilot plays the human's
    seat, and the human's terminal says so and moves on to the next round."""
    host = Client(cluster.address)
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=5)
    human = await asyncio.create_subprocess_exec(
        EXE, "play", created.code, "--nickname", "human", "--server", cluster.address,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert human.stdin is not None and human.stdout is not None
    out = Output(human.stdout)
    try:
        human.stdin.write(b"random\n")  # the placement; nothing for round 1: stdin stays open
        await human.stdin.drain()
        async with connected(host, created.game_id):
            await wait_update(host, created.game_id, 0, lambda u: u.kind == "joined" and u.seat == 1)
            await host.start(created.game_id)
            view = await host.view(created.game_id)
            await host.submit(created.game_id, view.version, salvo=placement(0))
            await wait_update(host, created.game_id, view.seq, round_closed(0))
            at = await out.expect("[round 1 · closes ")  # the human thinks at the round-1 prompt
            at = await out.expect("fire up to 7 shots", at)
            view = await host.view(created.game_id)
            assert view.round == 1 and view.players[1].connected, view
            await host.submit(created.game_id, view.version, salvo=salvo_pb2.SalvoOrders(shots=["J10"]))
            closed = await wait_update(host, created.game_id, view.seq, round_closed(1))
        assert json_format.MessageToDict(closed.data) == {"early": False}  # it waited for the deadline
        at = await out.expect("round 1 closed — your orders were not in: the autopilot played for you", at)
        at = await out.expect("[round 2 · closes ", at)
        after = await host.view(created.game_id)
        assert len([s for s in after.salvo.incoming if s.round == 1]) == 7  # the autopilot's salvo for seat 1
        human.stdin.close()  # the end of input at the round-2 prompt
        async with asyncio.timeout(30):
            rest, _ = await human.communicate()
        assert human.returncode == 1, out.text + rest.decode()
    finally:
        if human.returncode is None:
            human.kill()
            await human.wait()
