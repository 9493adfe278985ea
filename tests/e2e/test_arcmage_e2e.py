"""Arcmage through the whole path: a client over loopback -> gateway -> Ray shard -> real Redis.

Every test runs once per door of the player API — gRPC and JSON + WebSocket — from the same body
(the ``door`` fixture), with clients that share one interface (``client.base.BaseClient``).  Both
players act through the door only, each when its seat is in ``GetViewResponse.step.players``, with
one of its view's ``legal`` actions.  Rule ids in names: M1–M58 (spec/arcmage.md), A16 (actions,
versions, idempotency keys).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.base import BaseClient
from engine.arcmage import GAME, ArcState
from engine.base import state_hash
from gateway import convert
from tests.conftest import Cluster
from tests.e2e.arcmage_helpers import (
    ATTACKER_DECK,
    DEFENDER_DECK,
    GOALS,
    ROLES,
    Goals,
    Json,
    action_message,
    play_through,
    policy,
    update_data,
    view_json,
)
from tests.e2e.helpers import rpc_error

pytestmark = pytest.mark.e2e

Connect = Callable[[], BaseClient]


@pytest.fixture
def connect(cluster: Cluster, door: str) -> Connect:
    return lambda: cluster.client(door)


def deck(d: str | list[Json]) -> arcmage_pb2.ArcmageDeck:
    if isinstance(d, str):
        return arcmage_pb2.ArcmageDeck(built_in=d)
    return arcmage_pb2.ArcmageDeck(cards=[arcmage_pb2.ArcmageDeckEntry(card=e["card"], count=e["count"])
                                          for e in d])


def strings(obj: Any) -> set[str]:
    if isinstance(obj, str):
        return {obj}
    if isinstance(obj, dict):
        return set().union(*(strings(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(strings(v) for v in obj)) if obj else set()
    return set()


def test_m1_m3_the_engineered_decks_reach_every_goal_whatever_the_shuffle() -> None:
    """The decks and policy of the door test, offline: with the engine alone, over many seeds, every
    game has an answer on the stack, a dying-window save and a city destroyed, and the attacker wins."""
    config = {"players": 2, "decks": [ATTACKER_DECK, DEFENDER_DECK]}
    for seed in range(4):
        state = GAME.new_game(config, seed * 7919 + 13)
        goals = Goals()
        for _ in range(3000):
            step = GAME.step(state)
            if not step.players:
                break
            seat = step.players[0]
            state, events = GAME.apply_action(state, seat, policy(GAME.view(state, seat), ROLES[seat], goals.reached))
            for e in events:
                goals.see(e.kind, e.data)
        outcome = GAME.outcome(state)
        assert outcome is not None and goals.reached == set(GOALS), (seed, goals.reached)
        assert outcome.winners == (0,) and not outcome.draw and outcome.reason == "last_player"


def replay(journal: list[dict[str, Any]]) -> tuple[ArcState, dict[int, list[set[str]]]]:
    """The journal replayed by the engine alone (the create entry's config as the joins changed it, its
    seed, then every action), and at every version the ids of each seat's hand and deck."""
    config: dict[str, Any] = {}
    seed = 0
    state: ArcState | None = None
    hidden: dict[int, list[set[str]]] = {}
    for version, e in enumerate(journal, start=1):
        if e["op"] == "create":
            config, seed = dict(e["config"]), int(e["seed"])
        elif e["op"] == "join" and "config" in e:
            config = dict(e["config"])
        elif e["op"] == "start":
            state = GAME.new_game(config, seed)
        elif e["op"] == "action":
            assert state is not None
            state, _ = GAME.apply_action(state, int(e["seat"]), e["action"])
        elif e["op"] != "join":
            raise AssertionError(f"an unexpected journal entry {e['op']}")
        if state is not None:
            hidden[version] = [set(s["hand"]) | set(s["deck"]) for s in state.data["seats"]]
    assert state is not None
    return state, hidden


async def test_m3_m16_m22_m35_lobby_to_victory_equals_the_replay_and_leaks_no_hand(
        cluster: Cluster, connect: Connect) -> None:
    host, guest = connect(), connect()
    created = await host.create("arcmage", seats=2, nickname="host",
                                arcmage=arcmage_pb2.ArcmageOptions(decks=[deck(ATTACKER_DECK)]))
    await guest.join(created.code, "guest", arcmage=arcmage_pb2.ArcmageSeatOptions(deck=deck(DEFENDER_DECK)))
    summary = await host.start(created.game_id)
    assert summary.status == lobby_pb2.GAME_STATUS_RUNNING
    gid = created.game_id
    watchers, actions = await play_through([host, guest], gid, list(ROLES))  # the host attacks, the guest defends
    assert actions > 20
    # every goal, in the updates each player received (M16/M38 an event answering the other player's
    # card on the stack, M35 a save in a dying window, M22 a city destroyed)
    for w in watchers:
        assert w.goals.reached == set(GOALS), w.goals.reached
        assert w.updates[-1].kind == "game_over" and w.updates[-1].status == lobby_pb2.GAME_STATUS_OVER
    # M3: the last player in wins — the attacker, who destroyed every city of the defender
    for client in (host, guest):
        final = await client.view(gid)
        assert final.status == lobby_pb2.GAME_STATUS_OVER and final.step.kind == "over"
        outcome = final.arcmage.outcome
        assert list(outcome.winners) == [0] and not outcome.draw and outcome.reason == "last_player"
        assert final.arcmage.seats[1].out and not final.arcmage.seats[0].out
    # the final state equals the engine's replay of the journal
    journal = await cluster.api.store.journal_read(gid)
    assert [e["op"] for e in journal[:3]] == ["create", "join", "start"]
    assert all(e["op"] == "action" for e in journal[3:]) and len(journal) - 3 >= actions
    state, hidden = replay(journal)
    shard = await cluster.api.router.game(gid).state_hash(gid)
    assert shard["version"] == len(journal) and shard["hash"] == state_hash(state)
    assert GAME.outcome(state) is not None and GAME.outcome(state).winners == (0,)  # type: ignore[union-attr]
    # M26: no update a player received names a card that was in the opponent's hand or deck both
    # before and after the action it tells of (a card drawn stays unnamed; one that is cast, or that
    # was public and went back to its owner's hand, M22, was seen), and an opponent's draw shows
    # only a count
    for seat, w in enumerate(watchers):
        other = 1 - seat
        drew = 0
        for u in w.updates:
            data = update_data(u)
            if u.version in hidden:
                before = hidden.get(u.version - 1, hidden[u.version])[other]
                leaked = strings(data) & hidden[u.version][other] & before
                assert not leaked, f"seat {seat} saw {leaked} of the opponent's hand/deck in {u.event_kind}"
            if u.event_kind in ("drew", "drew_cards") and int(data["player"]) == other:
                assert u.event_kind == "drew" and set(data) == {"player", "count"} and data["count"] >= 1
                drew += 1
        draws = [e for e in journal if e["op"] == "action" and e["seat"] == other and "draw" in e["action"]
                 and e["action"]["draw"]["option"] != "draw0"]
        assert drew == len(draws) > 0, "each draw of the opponent is shown, as a count"
        assert any(u.event_kind == "drew_cards" for u in w.updates), "a player sees its own cards drawn"


async def arcmage_game(connect: Connect) -> tuple[str, list[BaseClient]]:
    host, guest = connect(), connect()
    created = await host.create("arcmage", seats=2, nickname="host",
                                arcmage=arcmage_pb2.ArcmageOptions(max_rounds=4))
    await guest.join(created.code, "guest")
    await host.start(created.game_id)
    return created.game_id, [host, guest]


async def act_until(clients: list[BaseClient], gid: str, done: Callable[[Json], bool]
                    ) -> tuple[int, game_pb2.GetViewResponse]:
    """Play (the acting seat's autopilot choice, through the door) until the acting seat's view
    satisfies ``done``; returns that seat and its view."""
    for _ in range(200):
        view = await clients[0].view(gid)
        seat = next(iter(view.step.players))
        view = await clients[seat].view(gid)
        v = view_json(view)
        if done(v):
            return seat, view
        await clients[seat].act(gid, arcmage=action_message(GAME.autopilot_action(v)), version=view.version)
    raise AssertionError("the wanted step did not come")


async def test_m38_a16_refused_actions_name_code_field_and_rule(connect: Connect) -> None:
    gid, clients = await arcmage_game(connect)
    first = await clients[0].view(gid)
    seat = next(iter(first.step.players))
    other = 1 - seat
    # out of turn (M38): the engine's rule, nothing changes
    err = await rpc_error(clients[other].act(gid, arcmage=action_message({"pass": {}}), version=first.version))
    assert (err.status, err.code, err.field, err.rule) == (
        "FAILED_PRECONDITION", "order/not_your_turn", "action", "M38")
    assert (await clients[0].view(gid)).version == first.version
    # a stale version: the step that version belonged to is over (A16)
    mine = await clients[seat].view(gid)
    await clients[seat].act(gid, arcmage=action_message(GAME.autopilot_action(view_json(mine))), version=mine.version)
    now = await clients[0].view(gid)
    actor = next(iter(now.step.players))
    stale = await rpc_error(clients[actor].act(gid, arcmage=action_message(
        GAME.autopilot_action(view_json(await clients[actor].view(gid)))), version=first.version))
    assert (stale.status, stale.code, stale.field) == ("ABORTED", "action/stale_state_id", "version")
    assert (await clients[0].view(gid)).version == now.version
    # an illegal play (M15: a creature is cast in its player's Play phase), naming the field and the rule
    seat, view = await act_until(clients, gid, lambda v: (v.get("pending") or {}).get("phase") == "draw")
    v = view_json(view)
    creatures = [c for c in v["hand"] if v["faces"][v["cards"][c]["key"]]["type"] == "creature"]
    assert creatures, "a built-in deck's opening hand holds a creature"
    err = await rpc_error(clients[seat].act(gid, arcmage=action_message({"play": {"card": creatures[0]}}),
                                            version=view.version))
    assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "order/illegal", "play.card", "M15")
    assert err.message.startswith("play.card: rule M15: "), err.message
    err = await rpc_error(clients[seat].act(gid, arcmage=action_message({"pass": {}}), version=view.version))
    assert (err.code, err.field, err.rule) == ("order/illegal", "pass", "M9")
    assert (await clients[seat].view(gid)).version == view.version
    # M25: Arcmage is played by actions, not rounds of orders
    err = await rpc_error(clients[seat].submit(gid, view.version, arcmage=game_pb2.ArcmageNoOrders()))
    assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "order/illegal", "orders", "M25"), err
    # the same idempotency key twice: applied once, the second answer is the first's (A16)
    draw = action_message({"draw": {"option": "draw1"}})
    a = await clients[seat].act(gid, key="draw-once", arcmage=draw, version=view.version)
    after = await clients[seat].view(gid)
    b = await clients[seat].act(gid, key="draw-once", arcmage=draw, version=view.version)
    assert not a.replayed and b.replayed and a.version == b.version == after.version
    again = await clients[seat].view(gid)
    assert again.version == after.version and list(again.arcmage.hand) == list(after.arcmage.hand)
    assert len(after.arcmage.hand) == len(view.arcmage.hand) + 1


BAD_DECK = [{"card": "Kolibri", "count": 4}, {"card": "Abduction", "count": 1}, {"card": "Falconer", "count": 3}]


async def test_m1_m2_m24_a_bad_deck_is_refused_at_create_and_join_naming_every_problem(connect: Connect) -> None:
    c = connect()
    err = await rpc_error(c.create("arcmage", seats=2, nickname="deckbuilder",
                                   arcmage=arcmage_pb2.ArcmageOptions(decks=[deck(BAD_DECK)])))
    assert (err.status, err.field, err.rule) == ("INVALID_ARGUMENT", "decks[0]", "M1"), err
    for problem in ("Kolibri: 4 copies, at most 3", "Abduction is not implemented yet (M24)",
                    "8 cards, a deck has exactly 45", "0 cities"):
        assert problem in err.message, err.message
    err = await rpc_error(c.create("arcmage", seats=2, nickname="deckbuilder",
                                   arcmage=arcmage_pb2.ArcmageOptions(decks=[deck("No such deck")])))
    assert (err.field, err.rule) == ("decks[0]", "M2") and "Brothers in Arms" in err.message
    created = await c.create("arcmage", seats=2, nickname="host")
    err = await rpc_error(connect().join(created.code, "guest",
                                         arcmage=arcmage_pb2.ArcmageSeatOptions(deck=deck(BAD_DECK))))
    assert (err.status, err.field, err.rule) == ("INVALID_ARGUMENT", "deck", "M1"), err
    assert "Kolibri: 4 copies" in err.message and "not implemented" in err.message
    # the refused join took no seat: a good one does, with its own deck
    joined = await connect().join(created.code, "guest", arcmage=arcmage_pb2.ArcmageSeatOptions(
        deck=deck(DEFENDER_DECK)))
    assert joined.seat == 1
    salvo = await c.create("salvo", seats=2, nickname="admiral", deadline_seconds=60)
    err = await rpc_error(connect().join(salvo.code, "sailor", arcmage=arcmage_pb2.ArcmageSeatOptions(
        deck=deck("Brothers in Arms"))))
    assert (err.status, err.code, err.field) == ("INVALID_ARGUMENT", "order/invalid", "options"), err


def test_m43_a_split_given_as_numbers_reaches_the_engine_as_integers() -> None:
    """A damage split (ArcmageChoose.option, a google.protobuf.Value) goes to the engine as the
    integers it checks (M43), not protobuf's doubles: both doors convert ActRequest this way."""
    req = game_pb2.ActRequest(game_id="g", arcmage=action_message({"choose": {"option": [2, 1]}}))
    action = convert.action_dict(req)
    assert action == {"arcmage": {"choose": {"option": [2, 1]}}}
    assert all(type(x) is int for x in action["arcmage"]["choose"]["option"])
