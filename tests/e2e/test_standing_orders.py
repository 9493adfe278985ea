"""Standing orders through each door: set them, stay away, and watch the autopilot follow them over
several rounds (A70, A72); bad standing orders are refused and change nothing."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from client.base import BaseClient
from engine.archipelago.units import UNIT_TYPES
from tests.conftest import Cluster
from tests.e2e.helpers import connected, rpc_error, wait_update

pytestmark = pytest.mark.e2e

DIRS = ((0, -1), (1, 0), (0, 1), (-1, 0))


def dist(a: A.Tile, b: tuple[int, int]) -> int:
    return abs(a.x - b[0]) + abs(a.y - b[1])


async def next_round(watcher: BaseClient, player: BaseClient, gid: str) -> None:
    """``player`` submits nothing-special orders; the round closes early once it has (the other seat
    is not connected, A17)."""
    since = (await watcher.view(gid)).seq
    v = await player.view(gid)
    await player.submit(gid, v.version, archipelago=A.ArchipelagoOrders())
    await wait_update(watcher, gid, since, lambda u: u.kind == "round_opened")


async def test_a70_a72_the_autopilot_follows_standing_orders_while_the_player_is_away(
        cluster: Cluster, door: str) -> None:
    ann = cluster.client(door)
    created = await ann.create("archipelago", seats=2, nickname="ann", deadline_seconds=60)
    gid = created.game_id
    bob = cluster.client(door)
    await bob.join(created.code, "bob")
    await ann.start(gid)
    async with connected(bob, gid):
        await next_round(bob, bob, gid)  # round 0: ann deploys by default (A15)
        view = (await ann.view(gid)).archipelago
        occupied = {(u.tile.x, u.tile.y) for u in view.units}

        def free(t: tuple[int, int], terrain: str) -> bool:
            return 0 <= t[1] < len(view.rows) and 0 <= t[0] < len(view.rows[0]) and \
                view.rows[t[1]][t[0]] == terrain and t not in occupied

        # an own unit with free passable tiles straight ahead (the only shortest path, A18, A28): the
        # longest such run, so that the goal takes it as many rounds as the board allows
        candidates = [(k, u, (u.tile.x + dx * k, u.tile.y + dy * k))
                      for u in view.units if UNIT_TYPES[u.type].domain in ("land", "sea")
                      and u.type not in ("mine", "flag") and UNIT_TYPES[u.type].move > 0
                      for dx, dy in DIRS for k in range(1, 7)
                      if all(free((u.tile.x + dx * i, u.tile.y + dy * i),
                                  "#" if UNIT_TYPES[u.type].domain == "land" else ".") for i in range(1, k + 1))]
        _k, unit, goal = max(candidates, key=lambda c: (c[0] / UNIT_TYPES[c[1].type].move, c[0]))
        move = UNIT_TYPES[unit.type].move
        start = dist(unit.tile, goal)
        # the map is the game's secret random one: the longest free straight run decides how many rounds
        # the walk takes here (the multi-round orders are tested on hand-made boards in tests/engine)
        assert start >= 1
        before = await ann.view(gid)
        bad = A.ArchipelagoStandingOrders(units=[A.StandingUnitOrder(
            unit=unit.id, order="patrol", waypoints=[A.Tile(x=goal[0], y=goal[1])])])
        err = await rpc_error(ann.set_standing(gid, archipelago=bad))
        assert (err.status, err.rule, err.field) == ("INVALID_ARGUMENT", "A72", "units[0].waypoints")
        assert (await ann.view(gid)).version == before.version
        orders = A.ArchipelagoStandingOrders(posture="hold", units=[A.StandingUnitOrder(
            unit=unit.id, order="move", tile=A.Tile(x=goal[0], y=goal[1]))])
        await ann.set_standing(gid, archipelago=orders)
        shown = (await ann.view(gid)).archipelago_standing
        assert shown.units[0].order == "move" and (shown.units[0].tile.x, shown.units[0].tile.y) == goal
        # ann is away (no stream) and submits nothing: each round, her unit walks toward its goal
        distances = [start]
        for _ in range(3):
            await next_round(bob, bob, gid)
            mine = {u.id: u for u in (await ann.view(gid)).archipelago.units}
            distances.append(dist(mine[unit.id].tile, goal))
    # a full move closer every round until it is there, then it stays
    assert distances == [max(0, start - k * move) for k in range(len(distances))], distances
    # ann's view says what the autopilot played for her, round by round (her round 0 deployment too)
    log = (await ann.view(gid)).autopilot_log
    assert [(t.round, t.source, t.WhichOneof("played")) for t in log] == [(r, "autopilot", "archipelago")
                                                                          for r in range(4)]
    walked = [any(o.unit == unit.id for o in t.archipelago.units) for t in log[1:]]
    assert walked == [d > 0 for d in distances[:-1]], (walked, distances)
    assert not (await bob.view(gid)).autopilot_log, "bob played his own rounds; ann's log is hers alone"
    plain = json_format.MessageToDict(shown, preserving_proto_field_name=True)
    assert plain["posture"] == "hold"
