"""`archipelago play` for Archipelago against a live cluster: a human at the terminal (a subprocess, stdin a
pipe) joins a 2-player game, deploys (round 0), then in round 1 chats, trades with the bank if it can
afford it (A52), moves a unit it sees on its screen (A18) and is done; the server has those orders and
the round closes early, as both players are connected and done (A16, A17)."""

from __future__ import annotations

import asyncio
import re

import pytest

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2
from client.grpc_client import Client
from tests.conftest import Cluster
from tests.e2e.helpers import connected, round_closed, wait_update
from tests.e2e.test_play import EXE, Output

pytestmark = pytest.mark.e2e

STEPS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
SHOWN_S = 60.0


def a_step_onto_free_land(view: game_pb2.GetViewResponse) -> tuple[str, str, tuple[int, int]]:
    """An own land unit that can step onto an empty land tile: (its id, the step, the tile)."""
    av = view.archipelago
    taken = {(u.tile.x, u.tile.y) for u in av.units} | {(e.tile.x, e.tile.y) for e in av.enemies}
    for u in av.units:
        if u.type not in ("rank1", "rank3") or u.HasField("carrier"):
            continue
        for d, (dx, dy) in STEPS.items():
            x, y = u.tile.x + dx, u.tile.y + dy
            if 0 <= y < av.height and 0 <= x < av.width and av.rows[y][x] == "#" and (x, y) not in taken:
                return u.id, d, (x, y)
    raise AssertionError(f"no own land unit with a free land tile next to it: {av.units}")


async def test_a16_a18_a52_a53_a_human_plays_a_round_of_archipelago_in_the_terminal(cluster: Cluster) -> None:
    host = Client(cluster.address)
    created = await host.create("archipelago", seats=2, nickname="host", deadline_seconds=300,
                                archipelago=A.ArchipelagoOptions(max_rounds=5))
    gid = created.game_id
    human = await asyncio.create_subprocess_exec(
        EXE, "play", created.code, "--nickname", "human", "--server", cluster.address,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert human.stdin is not None and human.stdout is not None
    out = Output(human.stdout)

    async def type_in(*lines: str) -> None:
        assert human.stdin is not None
        human.stdin.write("".join(f"{line}\n" for line in lines).encode())
        await human.stdin.drain()

    try:
        # the host stays connected (A17): each round waits for both players' orders
        async with connected(host, gid):
            await wait_update(host, gid, 0, lambda u: u.kind == "joined" and u.seat == 1)
            at = await out.expect("secret: ", timeout=SHOWN_S)
            end = await out.expect("\n", at)
            secret = out.data[at:end].decode().strip()
            await host.start(gid)

            # round 0: the human keeps the default layout (A15) and is done
            at = await out.expect("deploy (0 so far)> ", at, timeout=SHOWN_S)
            await type_in("done")
            at = await out.expect("orders in for round 0 (0 orders)", at)
            view = await host.view(gid)
            await host.submit(gid, view.version, archipelago=A.ArchipelagoOrders())
            await wait_update(host, gid, view.seq, round_closed(0))
            title = "Archipelago · round 1 of 5"
            start = await out.expect(title, at, timeout=SHOWN_S) - len(title.encode())
            at = await out.expect("round 0 closed: every connected player had submitted", start)
            at = await out.expect("orders (0 so far)> ", at, timeout=SHOWN_S)
            screen = out.data[start:at].decode()

            async with Client(cluster.address, secret) as me:  # the human's own view (no Watch stream)
                mine = await me.view(gid)
                assert mine.round == 1 and mine.you == 1 and mine.expected and mine.players[1].connected
                # the screen: the map with its coordinates, the legend of own units
                assert "Archipelago · round 1 of 5" in screen
                assert f"    {''.join(str(x % 10) for x in range(mine.archipelago.width))}" in screen
                uid, step, dest = a_step_onto_free_land(mine)
                tile = next(x.tile for x in mine.archipelago.units if x.id == uid)
                shown = re.search(rf"│  ([a-z0-9]) [A-Za-z' .]+ \({tile.x},{tile.y}\)", screen)  # in the legend
                assert shown, screen
                label = shown[1]
                assert uid not in screen  # no internal id on the screen
                assert re.search(rf"^ *{tile.y} .{{{tile.x}}}{label}", screen, re.M), screen  # drawn on its tile
                stock = mine.archipelago.stock
                bank = stock.food >= 4  # A52: 4 for 1 (no port on a home island)
                since = (await host.view(gid)).seq
                await type_in("chat hello", *(["bank food wood"] if bank else []), f"move {label} {step}", "show",
                              "done")
                at = await out.expect("done: chat to everyone: hello", at)
                if bank:
                    at = await out.expect("done: bank: wood ×1 for your food — stock: ", at)
                at = await out.expect(f"{label} (", at)
                at = await out.expect(f"orders for round 1:\n  {label} (", at)
                at = await out.expect("orders in for round 1 (1 order)", at)

                # the server has the orders and the actions
                await wait_update(host, gid, since, lambda u: u.kind == "submitted" and u.seat == 1
                                  and bool(u.data["done"]))
                chat = await wait_update(host, gid, since, lambda u: u.kind == "chat")
                assert (chat.chat.seat, chat.chat.text) == (1, "hello")
                mine = await me.view(gid)
                assert mine.submitted and not mine.expected
                assert list(mine.archipelago_pending.units) == [A.UnitOrder(unit=uid, path=[step])]
                assert [c.text for c in mine.archipelago.chat] == ["hello"]
                if bank:
                    after = mine.archipelago.stock
                    assert (after.food, after.wood) == (stock.food - 4, stock.wood + 1)

                # the host is done too: the round closes early (A17) and the human sees round 2
                view = await host.view(gid)
                await host.submit(gid, view.version, archipelago=A.ArchipelagoOrders())
                await wait_update(host, gid, view.seq, round_closed(1))
                at = await out.expect("Archipelago · round 2 of 5", at, timeout=SHOWN_S)
                at = await out.expect("round 1 closed: every connected player had submitted", at)
                at = await out.expect("orders (0 so far)> ", at)
                moved = next(u for u in (await me.view(gid)).archipelago.units if u.id == uid)
                assert (moved.tile.x, moved.tile.y) == dest
        human.stdin.close()  # the end of input at the round-2 prompt
        async with asyncio.timeout(30):
            rest, _ = await human.communicate()
        assert human.returncode == 1, out.text + rest.decode()
    finally:
        if human.returncode is None:
            human.kill()
            await human.wait()
