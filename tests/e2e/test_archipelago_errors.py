"""Bad Archipelago input through both doors gets the right status and rule id and changes nothing:
the game's version and the player's view are identical before and after (A13, A14, A18, A20,
A53). A20: a step onto the wrong terrain is not refused at submission — it is found at the
resolution, where the unit stops (A27) — so a ship's path over land is accepted and holds."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from client.base import BaseClient
from client.errors import ApiError
from tests.conftest import Cluster
from tests.e2e.helpers import connected, wait_update

pytestmark = pytest.mark.e2e

DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}


async def unchanged(client: BaseClient, game_id: str, call: Callable[[], Awaitable[Any]],
                    status: str, rule: str, field: str) -> ApiError:
    before = await client.view(game_id)
    try:
        await call()
    except ApiError as err:
        after = await client.view(game_id)
        assert (err.status, err.rule) == (status, rule), err
        assert err.field.startswith(field), err
        assert after.version == before.version
        assert json_format.MessageToDict(after) == json_format.MessageToDict(before)
        return err
    raise AssertionError("accepted; an error was expected")


async def test_a20_bad_archipelago_input_is_refused_and_changes_nothing(cluster: Cluster, door: str) -> None:
    ann = cluster.client(door)
    created = await ann.create("archipelago", seats=2, nickname="ann", deadline_seconds=60)
    gid = created.game_id
    bob = cluster.client(door)
    await bob.join(created.code, "bob")
    await ann.start(gid)
    view = await ann.view(gid)
    mine = {u.id: u for u in view.archipelago.units}
    land_unit = next(u for u in mine.values() if u.type.startswith("rank"))
    theirs = (await bob.view(gid)).archipelago.units[0].id

    async def submit(orders: dict[str, Any]) -> Any:
        v = await ann.view(gid)
        return await ann.submit(gid, v.version, archipelago=json_format.ParseDict(orders, A.ArchipelagoOrders()))

    # round 0: deployment off the home island (A14); moves are not for round 0 (A13)
    await unchanged(ann, gid, lambda: submit({"deploy": [{"unit": land_unit.id, "tile": {"x": 0, "y": 0}}]}),
                    "INVALID_ARGUMENT", "A14", "deploy[0]")
    await unchanged(ann, gid, lambda: submit({"units": [{"unit": land_unit.id, "path": ["N"]}]}),
                    "INVALID_ARGUMENT", "A13", "units")
    async with connected(ann, gid), connected(bob, gid):
        since = (await ann.view(gid)).seq
        for c in (ann, bob):
            v = await c.view(gid)
            await c.submit(gid, v.version, archipelago=A.ArchipelagoOrders())
        await wait_update(ann, gid, since, lambda u: u.kind == "round_opened" and u.round == 1)

    view = await ann.view(gid)
    mine = {u.id: u for u in view.archipelago.units}
    # an unknown unit and another player's unit: the same answer, nothing learnt (A18)
    e1 = await unchanged(ann, gid, lambda: submit({"units": [{"unit": "nope", "path": ["N"]}]}),
                         "INVALID_ARGUMENT", "A18", "units[0].unit")
    e2 = await unchanged(ann, gid, lambda: submit({"units": [{"unit": theirs, "path": ["N"]}]}),
                         "INVALID_ARGUMENT", "A18", "units[0].unit")
    assert e1.message.replace("nope", "X") == e2.message.replace(theirs, "X")
    # a build without the resources (A20: builds must be affordable together from the stock)
    err = await unchanged(ann, gid, lambda: submit({"builds": [{"type": "rank13"}]}),
                          "INVALID_ARGUMENT", "A20", "builds")
    assert err.code == "order/illegal"
    # 11 chat messages: the 11th is refused (A53)
    for i in range(10):
        await ann.chat(gid, f"m{i}")
    await unchanged(ann, gid, lambda: ann.chat(gid, "one too many"), "RESOURCE_EXHAUSTED", "A53", "chat")
    # 3 offers, then the 4th is refused (A53)
    for _ in range(3):
        await ann.act(gid, offer=A.OfferAction(to=1, give={"food": 1}, get={"wood": 1}))
    await unchanged(ann, gid, lambda: ann.act(gid, offer=A.OfferAction(give={"food": 1}, get={"wood": 1})),
                    "RESOURCE_EXHAUSTED", "A53", "offer")
    # accepting an offer its maker withdrew: no pending offer (A53)
    first = (await bob.view(gid)).archipelago.offers[0].id
    await ann.act(gid, withdraw=A.WithdrawAction(offer=first))
    err = await unchanged(bob, gid, lambda: bob.act(gid, accept=A.AcceptAction(offer=first)),
                          "NOT_FOUND", "A53", "accept.offer")
    assert f"no pending offer '{first}'" in err.message
    # A20: a ship's path onto known land is accepted; the ship stops at the resolution (A27)
    ship = next(u for u in mine.values() if u.type == "dvora")
    rows = view.archipelago.rows
    onto_land = next(d for d, (dx, dy) in DIRS.items()
                     if 0 <= ship.tile.y + dy < len(rows) and 0 <= ship.tile.x + dx < len(rows[0])
                     and rows[ship.tile.y + dy][ship.tile.x + dx] == "#")
    await submit({"units": [{"unit": ship.id, "path": [onto_land]}]})
    assert (await ann.view(gid)).archipelago_pending.units[0].path == [onto_land]
