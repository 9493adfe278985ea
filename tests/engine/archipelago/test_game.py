"""The engine object: new games, deployment, state serialisation, ids, fog memory, events,
bank and trades (A5, A7–A17, A31, A52, A53, A80–A85 memory, A67 outcome)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import get_game
from engine.archipelago import GAME, accept_offer, bank, chat, offer, visible_tiles
from engine.archipelago.fog import is_explored
from engine.archipelago.game import default_layout
from engine.archipelago.state import State
from engine.archipelago.units import UNIT_TYPES
from engine.base import Outcome, canonical_json, state_hash
from engine.errors import GameOver, IllegalOrder, InvalidOrder, NotFound, RateLimited
from tests.engine.archipelago.boards import U, mv, orders, run, state


@pytest.fixture(scope="module")
def g2() -> State:
    return GAME.new_game({"players": 2}, 7)


def play(st: State, rounds: int, per_player: Any = None) -> State:
    for _ in range(rounds):
        o = {p: (per_player(st, p) if per_player else GAME.autopilot(GAME.view(st, p))) for p in range(st.players)}
        for p, x in o.items():
            GAME.validate(st, p, x)
        st, _ = GAME.resolve(st, o)
    return st


# -- the unit table -------------------------------------------------------------------------------

def test_a10_unit_table_has_all_thirty_types() -> None:
    assert len(UNIT_TYPES) == 30
    assert UNIT_TYPES["saar6"].capacity == 4 and UNIT_TYPES["saar6"].limit == 1
    assert UNIT_TYPES["rank13"].cost == {"food": 7, "iron": 7} and UNIT_TYPES["rank13"].limit == 1
    assert UNIT_TYPES["fighter"].move == 5 and UNIT_TYPES["fighter"].domain == "air"
    assert UNIT_TYPES["transport"].capacity == 1
    assert UNIT_TYPES["scout"].sight == 3 and UNIT_TYPES["spy"].strength == 0
    assert not UNIT_TYPES["flag"].buildable


def test_a11_dash_strength_counts_as_minus_one() -> None:
    assert UNIT_TYPES["landmine"].duel_strength == -1 and UNIT_TYPES["fighter"].duel_strength == -1


def test_a10_one_unit_per_tile_cargo_does_not_count() -> None:
    r = run(["0#......", "........", "########", "........", ".......1"],
            [U("s", 0, "dvora", 2, 3, cargo=["a"]), U("a", 0, "rank1"), U("c", 0, "rank1", 3, 2)],
            {0: orders(mv("c", "W"))})
    assert {tuple(u["tile"].values()) for u in r["units"] if "carrier" not in u} == {(2, 3), (2, 2)}


# -- new games --------------------------------------------------------------------------------------

def test_a5_victory_target_by_player_count() -> None:
    expected = {2: 10, 3: 11, 4: 12, 5: 14, 6: 15, 7: 17, 8: 18}
    for n, t in expected.items():
        assert GAME.normalize_config({"players": n})["target"] == t
    assert GAME.normalize_config({"players": 2, "target": 3})["target"] == 3
    with pytest.raises(InvalidOrder):
        GAME.normalize_config({"players": 9})


def test_a7_home_islands_and_bases_come_from_the_map(g2: Any) -> None:
    for p in range(2):
        assert g2.board.is_home_of(g2.board.bases[p], p)
        assert g2.board.home_island(p).owner == p


def test_a8_resources_and_ports_are_kept_on_the_board(g2: Any) -> None:
    assert set(g2.board.resources.values()) <= {"wood", "food", "iron", "fuel"}
    assert g2.board.ports and all(t in g2.board.land for t in g2.board.ports)


def test_a9_same_seed_same_game_different_seed_different_game() -> None:
    a = GAME.new_game({"players": 3}, 99)
    b = GAME.new_game({"players": 3}, 99)
    c = GAME.new_game({"players": 3}, 100)
    assert state_hash(a) == state_hash(b) != state_hash(c)


def test_a13_starting_units_and_stock(g2: Any) -> None:
    for p in range(2):
        types = sorted(u.type for u in g2.units.values() if u.owner == p)
        assert types == sorted(["flag", "rank1", "rank1", "rank3", "landmine", "dvora"])
        assert g2.pstates[p].stock == {"wood": 1, "food": 2, "iron": 0, "fuel": 0}
    assert g2.round == 0


@pytest.mark.parametrize("players", range(2, 9))
def test_a15_default_layout_for_every_player_count(players: int) -> None:
    st = GAME.new_game({"players": players}, 1000 + players)
    tiles = [u.tile for u in st.units.values()]
    assert len(tiles) == len(set(tiles)) == 6 * players
    for u in st.units.values():
        if u.type == "dvora":
            assert st.board.is_sea(u.tile)
        else:
            assert st.board.is_home_of(u.tile, u.owner)
    assert all(st.control.get(t) == p for p in range(players) for t in st.board.home_island(p).tiles)


def test_a15_default_layout(g2: Any) -> None:
    b = g2.board
    for p in range(2):
        lay = dict((t, typ) for typ, t in default_layout(b, p))
        home = b.home_island(p).tiles
        flag = next(t for t, typ in lay.items() if typ == "flag")
        assert flag in home
        mine = next(t for t, typ in lay.items() if typ == "landmine")
        assert abs(mine[0] - flag[0]) + abs(mine[1] - flag[1]) == 1
        dvora = next(t for t, typ in lay.items() if typ == "dvora")
        assert b.is_sea(dvora) and abs(dvora[0] - b.bases[p][0]) + abs(dvora[1] - b.bases[p][1]) == 1


def test_a14_deployment_swaps_with_an_own_unit(g2: Any) -> None:
    units = {u.id: u for u in g2.units.values() if u.owner == 0}
    flag = next(u for u in units.values() if u.type == "flag")
    turai = next(u for u in units.values() if u.type == "rank1")
    o = {"deploy": [{"unit": flag.id, "tile": {"x": turai.tile[0], "y": turai.tile[1]}}]}
    GAME.validate(g2, 0, o)
    new, _ = GAME.resolve(g2, {0: o})
    assert new.units[flag.id].tile == turai.tile and new.units[turai.id].tile == flag.tile
    assert new.round == 1


def test_a50_round_one_opens_with_production(g2: Any) -> None:
    new, _ = GAME.resolve(g2, {})
    for p in range(2):
        stock = new.pstates[p].stock
        assert stock["food"] == 2 + 2 and stock["wood"] == 1 + 2 and stock["iron"] == 2


def test_a17_every_seat_is_expected_until_the_game_ends(g2: Any) -> None:
    assert GAME.expected_players(g2) == [0, 1]
    st = state(["0.", ".1"], [])
    st.outcome = {"winners": [1], "draw": False, "reason": "target", "scores": [0, 10]}
    assert GAME.expected_players(st) == [] and GAME.outcome(st) == Outcome((1,), False, "target", (0, 10))
    assert GAME.outcome(g2) is None


def test_get_game_returns_the_archipelago_engine() -> None:
    assert get_game("archipelago") is GAME and GAME.name == "archipelago"


# -- ids and serialisation --------------------------------------------------------------------------

def test_a12_unit_ids_are_opaque(g2: Any) -> None:
    ids = list(g2.units)
    assert len(set(ids)) == len(ids) and all(len(i) == 10 for i in ids)
    other = GAME.new_game({"players": 2}, 8)
    assert not set(ids) & set(other.units)
    for u in g2.units.values():
        assert u.type not in u.id


def test_state_round_trips_exactly(g2: Any) -> None:
    st = play(g2, 3)
    d = st.to_dict()
    again = GAME.state_from_dict(json.loads(json.dumps(d)))
    assert again.to_dict() == d
    assert canonical_json(again.to_dict()) == canonical_json(d)


def test_replaying_the_same_orders_gives_the_same_state(g2: Any) -> None:
    a = play(g2, 4)
    b = play(g2, 4)
    assert state_hash(a) == state_hash(b) and a.version == 4 and a.round == 4


def test_resolve_does_not_mutate_its_input(g2: Any) -> None:
    before = g2.to_dict()
    GAME.resolve(g2, {0: {"deploy": []}})
    assert g2.to_dict() == before


def test_autopilot_orders_are_valid_and_the_game_runs_to_the_round_cap() -> None:
    st = GAME.new_game({"players": 3, "max_rounds": 5}, 3)
    st = play(st, 6)
    out = GAME.outcome(st)
    assert out is not None and out.reason == "max_rounds"
    assert GAME.expected_players(st) == []


def test_state_of_an_eight_player_game_is_small() -> None:
    st = GAME.new_game({"players": 8}, 11)
    st = play(st, 3)
    assert len(canonical_json(st.to_dict())) < 100_000


# -- fog memory ----------------------------------------------------------------------------------------

SEA = ["0#........", "..........", "..........", "..........", "........#1"]


def test_a80_sight_of_units_outposts_and_base() -> None:
    st = state(SEA, [U("s", 0, "dvora", 5, 2)], outposts=[{"tile": [8, 4], "owner": 0}])
    vis = visible_tiles(st, 0)
    assert (5, 0) in vis and (5, 4) in vis and (3, 2) in vis and (2, 2) not in vis  # dvora sight 2
    assert (0, 2) in vis and (0, 3) not in vis  # base sight 2
    assert (9, 4) in vis and (8, 3) in vis  # outpost sight 1


def test_a80_cargo_sees_nothing() -> None:
    st = state(SEA, [U("s", 0, "dvora", 5, 2, cargo=["a"]), U("a", 0, "scout")])
    vis = visible_tiles(st, 0)
    assert (5, 0) in vis and (8, 2) not in vis  # the dvora's sight 2, not the scout's 3


def test_a82_submarine_seen_only_from_an_adjacent_tile() -> None:
    from engine.archipelago.fog import sees_unit, watch_tiles

    st = state(SEA, [U("s", 0, "saar5", 5, 2), U("x", 1, "submarine", 7, 2), U("y", 1, "submarine", 6, 2)])
    vis, watch = visible_tiles(st, 0), watch_tiles(st, 0)
    assert not sees_unit(st, 0, st.units["x"], vis, watch)
    assert sees_unit(st, 0, st.units["y"], vis, watch)


def test_a81_explored_tiles_stay_explored() -> None:
    st = state(SEA, [U("s", 0, "dvora", 5, 2)], explored="sight")
    assert is_explored(st, 0, (7, 2)) and not is_explored(st, 0, (9, 0))
    new, _ = GAME.resolve(st, {0: orders(mv("s", "WWW"))})
    assert is_explored(new, 0, (7, 2)) and (7, 2) not in visible_tiles(new, 0)


def test_a83_enemy_log_keeps_last_tile_and_round() -> None:
    st = state(SEA, [U("s", 0, "dvora", 5, 2), U("e", 1, "dvora", 7, 2)], round=4)
    assert st.pstates[0].log["e"] == ((7, 2), 4, None, 1)
    new, _ = GAME.resolve(st, {0: orders(mv("s", "WWW"))})
    assert new.pstates[0].log["e"] == ((7, 2), 4, None, 1)


def test_a31_fight_reveals_both_types_to_both_owners() -> None:
    st = state(["0#......", "........", "########", "........", ".......1"],
               [U("a", 0, "rank5", 2, 2), U("b", 1, "rank3", 3, 2), U("c", 1, "rank9", 4, 2)])
    new, _ = GAME.resolve(st, {0: orders(mv("a", "E"))})
    assert "b" not in new.units
    assert "a" in new.pstates[1].revealed  # the survivor's type stays known
    assert "c" not in new.pstates[0].revealed


def test_a85_events_are_cut_to_their_audience() -> None:
    rows = ["0#......", "........", "########", "........", "2......1"]
    st = state(rows, [U("a", 0, "rank5", 2, 2), U("b", 1, "rank3", 3, 2), U("w", 2, "scout", 5, 2)])
    _, events = GAME.resolve(st, {0: orders(mv("a", "E"))})
    fights = [e for e in events if e.kind == "fight"]
    full = [e for e in fights if e.audience == frozenset({0, 1})]
    seen = [e for e in fights if e.audience == frozenset({2})]
    assert len(full) == 1 and len(seen) == 1
    assert all("type" in u for u in full[0].data["units"])
    assert all("type" not in u and "domain" in u for u in seen[0].data["units"])
    assert not any(e.visible_to(2) and e.kind == "bonus" for e in events)


# -- A52 bank, A53 trades and chat ----------------------------------------------------------------------

PORTS = ["0#....", "......", "..#F..", "......", ".....1"]


def test_a52_bank_four_for_one() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 9}})
    new = bank(st, 0, "wood", "iron", times=2)
    assert new.pstates[0].stock["wood"] == 1 and new.pstates[0].stock["iron"] == 2
    assert st.pstates[0].stock["wood"] == 9  # the input is not mutated
    with pytest.raises(IllegalOrder) as e:
        bank(new, 0, "wood", "iron")
    assert e.value.rule == "A52"


def test_a52_bank_two_for_one_at_a_controlled_port() -> None:
    st = state(PORTS, [U("a", 0, "rank1", 3, 2)], stocks={"0": {"food": 2, "wood": 2}})
    new = bank(st, 0, "food", "iron")
    assert new.pstates[0].stock["food"] == 0 and new.pstates[0].stock["iron"] == 1
    with pytest.raises(IllegalOrder):
        bank(st, 0, "wood", "iron")


def test_a53_offer_and_accept_execute_at_once() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st = offer(st, 0, 1, {"wood": 3}, {"iron": 1})
    oid = st.offers[0]["id"]
    new = accept_offer(st, 1, oid)
    assert new.pstates[0].stock["wood"] == 0 and new.pstates[0].stock["iron"] == 1
    assert new.pstates[1].stock["wood"] == 3 and new.pstates[1].stock["iron"] == 1
    assert new.offers == []


def test_a53_offer_no_longer_valid_when_goods_are_gone() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st = offer(st, 0, None, {"wood": 3}, {"iron": 1})
    st.pstates[0].stock["wood"] = 2  # spent elsewhere meanwhile
    with pytest.raises(IllegalOrder) as e:
        accept_offer(st, 1, st.offers[0]["id"])
    assert e.value.reason == "offer no longer valid"


def test_a53_offer_to_all_goes_to_the_first_acceptor() -> None:
    st = state(["0....", ".....", "2...1"], [], stocks={"0": {"wood": 3}, "1": {"iron": 2}, "2": {"iron": 2}})
    st = offer(st, 0, None, {"wood": 3}, {"iron": 1})
    oid = st.offers[0]["id"]
    st = accept_offer(st, 2, oid)
    with pytest.raises(NotFound):  # taken: no longer pending
        accept_offer(st, 1, oid)


def test_a53_at_most_three_offers_and_ten_messages_per_round() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 9}})
    for _ in range(3):
        st = offer(st, 0, 1, {"wood": 1}, {"iron": 1})
    with pytest.raises(RateLimited):
        offer(st, 0, 1, {"wood": 1}, {"iron": 1})
    for i in range(10):
        st = chat(st, 0, f"hello {i}")
    with pytest.raises(RateLimited):
        chat(st, 0, "one too many")
    new, _ = GAME.resolve(st, {})
    assert new.offers == [] and new.pstates[0].offers_made == 0
    chat(new, 0, "a new round")


def test_a53_offers_expire_when_the_round_closes() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st = offer(st, 0, 1, {"wood": 3}, {"iron": 1})
    new, _ = GAME.resolve(st, {})
    with pytest.raises(NotFound):  # expired: no longer pending
        accept_offer(new, 1, st.offers[0]["id"])


def test_a84_public_resource_total_is_the_one_at_round_open() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 8}})
    st, _ = GAME.resolve(st, {})
    assert st.pstates[0].opening_total == 8
    st2 = bank(st, 0, "wood", "iron")
    assert st2.pstates[0].opening_total == 8 and sum(st2.pstates[0].stock.values()) == 5
    assert GAME.view(st2, 1)["seats"][0]["resource_total"] == 8


# -- act: the immediate actions as the services run them (A52, A53, A67, A84) --------------------

THREE = ["0....", ".....", "2...1"]


def test_a52_bank_event_only_to_the_player() -> None:
    st = state(PORTS, [U("a", 0, "rank1", 3, 2)], stocks={"0": {"wood": 9, "food": 2}})
    before = state_hash(st)
    new, events = GAME.act(st, 0, {"bank": {"give": "wood", "get": "iron", "times": 2}})
    assert [e.to_dict() for e in events] == [{
        "kind": "bank", "data": {"player": 0, "give": "wood", "get": "iron", "times": 2, "rate": 4},
        "audience": [0]}]
    assert new.pstates[0].stock["wood"] == 1 and new.pstates[0].stock["iron"] == 2
    assert state_hash(st) == before  # act never mutates its input
    _, events = GAME.act(st, 0, {"bank": {"give": "food", "get": "fuel"}})  # times 1; a port of food
    assert dict(events[0].data) == {"player": 0, "give": "food", "get": "fuel", "times": 1, "rate": 2}
    assert events[0].audience == frozenset({0})


@pytest.mark.parametrize(("fields", "error", "field"), [
    ({"give": "gold", "get": "iron"}, InvalidOrder, "bank.give"),
    ({"get": "iron"}, InvalidOrder, "bank.give"),
    ({"give": "wood", "get": "wood"}, InvalidOrder, "bank.get"),
    ({"give": "wood", "get": "iron", "times": 0}, InvalidOrder, "bank.times"),
    ({"give": "wood", "get": "iron", "times": "2"}, InvalidOrder, "bank.times"),
    ({"give": "wood", "get": "iron", "times": 3}, IllegalOrder, "bank.give"),
    ({"give": "wood", "get": "iron", "rate": 1}, InvalidOrder, "bank.rate"),
])
def test_a52_refused_bank_names_the_field_inside_the_action(fields: Any, error: Any, field: str) -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 9}})
    before = state_hash(st)
    with pytest.raises(error) as e:
        GAME.act(st, 0, {"bank": fields})
    assert type(e.value) is error and e.value.field == field
    assert state_hash(st) == before


def test_a53_offer_event_to_sender_and_addressee() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}})
    new, events = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 2}, "get": {"iron": 1}}})
    assert [e.to_dict() for e in events] == [{
        "kind": "offer", "data": {"id": "o1", "from": 0, "to": 1, "give": {"wood": 2}, "get": {"iron": 1}},
        "audience": [0, 1]}]
    assert new.offers == [{"id": "o1", "from": 0, "to": 1, "give": {"wood": 2}, "get": {"iron": 1}}]
    assert st.offers == []


def test_a53_offer_to_all_event_to_everyone() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}})
    _, events = GAME.act(st, 0, {"offer": {"give": {"wood": 2}, "get": {"iron": 1, "food": 1}}})
    assert [e.to_dict() for e in events] == [{
        "kind": "offer", "data": {"id": "o1", "from": 0, "give": {"wood": 2}, "get": {"food": 1, "iron": 1}},
        "audience": None}]


def test_a53_trade_event_to_both_parties() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 3}, "get": {"iron": 1}}})
    new, events = GAME.act(st, 1, {"accept": {"offer": "o1"}})
    assert [e.to_dict() for e in events] == [{
        "kind": "trade", "data": {"offer": "o1", "from": 0, "to": 1, "give": {"wood": 3}, "get": {"iron": 1}},
        "audience": [0, 1]}]
    assert new.pstates[1].stock["wood"] == 3 and new.pstates[0].stock["iron"] == 1 and new.offers == []


def test_a53_offer_to_all_closed_for_others_without_naming_taker() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}, "2": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 3}, "get": {"iron": 1}}})
    new, events = GAME.act(st, 2, {"accept": {"offer": "o1"}})
    assert [(e.kind, e.audience) for e in events] == [("trade", frozenset({0, 2})),
                                                      ("offer_closed", frozenset({1}))]
    assert dict(events[1].data) == {"offer": "o1"}  # not who took it, nor the goods
    assert GAME.view(new, 1)["offers"] == []
    with pytest.raises(NotFound) as nf:  # taken: no longer pending
        GAME.act(new, 1, {"accept": {"offer": "o1"}})
    assert nf.value.field == "accept.offer" and nf.value.rule == "A53"


def test_a53_offer_to_all_between_two_players_closes_without_another_event() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 3}, "get": {"iron": 1}}})
    _, events = GAME.act(st, 1, {"accept": {"offer": "o1"}})
    assert [e.kind for e in events] == ["trade"]


@pytest.mark.parametrize(("player", "action", "error", "field"), [
    (0, {"offer": {"to": 0, "give": {"wood": 1}, "get": {"iron": 1}}}, InvalidOrder, "offer.to"),  # as chat.to
    (0, {"offer": {"to": 5, "give": {"wood": 1}, "get": {"iron": 1}}}, InvalidOrder, "offer.to"),
    (0, {"offer": {"give": {}, "get": {"iron": 1}}}, InvalidOrder, "offer.give"),
    (0, {"offer": {"give": {"wood": 1}, "get": {"gold": 1}}}, InvalidOrder, "offer.get.gold"),
    (0, {"offer": {"give": {"wood": 9}, "get": {"iron": 1}}}, IllegalOrder, "offer.give"),
    (1, {"accept": {"offer": 1}}, InvalidOrder, "accept.offer"),
    (1, {"accept": {}}, InvalidOrder, "accept.offer"),
    (1, {"accept": {"offer": "o9"}}, NotFound, "accept.offer"),  # never made
    (0, {"accept": {"offer": "o1"}}, IllegalOrder, "accept.offer"),  # its own offer
    (0, {"chat": {"text": " "}}, InvalidOrder, "chat.text"),
    (0, {"chat": {"text": "x" * 501}}, InvalidOrder, "chat.text"),
    (0, {"chat": {"text": "hi", "to": 0}}, InvalidOrder, "chat.to"),
    (0, {"chat": {"text": "hi", "to": True}}, InvalidOrder, "chat.to"),
    (0, {"trade": {"offer": "o1"}}, InvalidOrder, "action"),
    (0, {"chat": {"text": "hi"}, "bank": {"give": "wood", "get": "iron"}}, InvalidOrder, "action"),
    (0, {}, InvalidOrder, "action"),
    (0, "chat", InvalidOrder, "action"),
    (0, {"bank": ["wood", "iron"]}, InvalidOrder, "bank"),
    (7, {"chat": {"text": "hi"}}, InvalidOrder, "player"),
])
def test_a53_refused_actions_name_the_field_and_change_nothing(player: int, action: Any, error: Any,
                                                               field: str) -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 1}, "get": {"iron": 1}}})
    before = state_hash(st)
    with pytest.raises(error) as e:
        GAME.act(st, player, action)
    assert type(e.value) is error and e.value.field == field
    assert state_hash(st) == before


def test_a53_chat_action_to_all_or_to_one_player() -> None:
    st = state(THREE, [])
    new, events = GAME.act(st, 1, {"chat": {"text": "hello all"}})
    assert [e.to_dict() for e in events] == [
        {"kind": "chat", "data": {"from": 1, "text": "hello all"}, "audience": None}]
    new, events = GAME.act(new, 1, {"chat": {"text": "psst", "to": 2}})
    assert [e.to_dict() for e in events] == [
        {"kind": "chat", "data": {"from": 1, "text": "psst", "to": 2}, "audience": [1, 2]}]
    assert [m["text"] for m in GAME.view(new, 0)["chat"]] == ["hello all"]
    assert [m["text"] for m in GAME.view(new, 2)["chat"]] == ["hello all", "psst"]
    assert st.chat == []


def test_a53_fourth_offer_and_eleventh_chat_are_rate_limited_through_act() -> None:
    st = state(PORTS, [], stocks={"0": {"wood": 9}})
    for _ in range(3):
        st, _ = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 1}, "get": {"iron": 1}}})
    for i in range(10):
        st, _ = GAME.act(st, 0, {"chat": {"text": f"hello {i}"}})
    before = state_hash(st)
    with pytest.raises(RateLimited) as e:
        GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 1}, "get": {"iron": 1}}})
    assert e.value.rule == "A53" and e.value.field == "offer"
    with pytest.raises(RateLimited) as e:
        GAME.act(st, 0, {"chat": {"text": "one too many"}})
    assert e.value.rule == "A53" and e.value.field == "chat"
    assert state_hash(st) == before
    new, _ = GAME.resolve(st, {})
    GAME.act(new, 0, {"chat": {"text": "a new round"}})


def test_a67_after_the_game_only_chat_is_allowed() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 9}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 1}, "get": {"iron": 1}}})
    st.outcome = {"winners": [0], "draw": False, "reason": "target", "scores": [10, 0, 0]}
    after_end: list[tuple[int, dict[str, Any]]] = [(0, {"bank": {"give": "wood", "get": "iron"}}),
                                                  (0, {"offer": {"give": {"wood": 1}, "get": {"iron": 1}}}),
                                                  (1, {"accept": {"offer": "o1"}})]
    for p, action in after_end:
        with pytest.raises(GameOver) as e:
            GAME.act(st, p, action)
        assert e.value.rule == "A67" and e.value.code == "game/over"
    with pytest.raises(GameOver):
        GAME.validate(st, 0, {})
    _, events = GAME.act(st, 2, {"chat": {"text": "gg", "to": 0}})
    assert events[0].audience == frozenset({0, 2})
    assert all(GAME.random_orders(GAME.view(st, p), 3) == {} for p in range(3))


def test_a20_random_orders_from_the_view_are_legal_and_deterministic(g2: Any) -> None:
    import random

    from engine.archipelago import randplay
    from tests.engine.archipelago import randplay as test_randplay

    assert test_randplay.random_orders is randplay.random_orders  # written once, in the engine
    st = play(g2, 2)
    for p in range(2):
        v = GAME.view(st, p)
        for seed in range(5):
            o = GAME.random_orders(v, seed)
            assert o == GAME.random_orders(json.loads(json.dumps(v)), seed)
            assert o == randplay.random_orders(v, random.Random(seed))
            GAME.validate(st, p, o)
    v0 = GAME.view(g2, 0)
    assert "deploy" in GAME.random_orders(v0, 1)


def test_a21_resolution_from_a_reloaded_state_is_identical(g2: Any) -> None:
    st = play(g2, 2)
    reloaded = GAME.state_from_dict(json.loads(json.dumps(st.to_dict())))
    o = {p: GAME.autopilot(GAME.view(st, p)) for p in range(2)}
    a, ea = GAME.resolve(st, o)
    b, eb = GAME.resolve(reloaded, o)
    assert state_hash(a) == state_hash(b)
    assert [e.to_dict() for e in ea] == [e.to_dict() for e in eb]


def test_a53_decline_removes_an_offer_made_to_the_player_alone() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 2}, "get": {"iron": 1}}})
    with pytest.raises(IllegalOrder) as e:  # not addressed to seat 2
        GAME.act(st, 2, {"decline": {"offer": "o1"}})
    assert e.value.field == "decline.offer" and e.value.rule == "A53"
    new, events = GAME.act(st, 1, {"decline": {"offer": "o1"}})
    assert [e.to_dict() for e in events] == [{"kind": "offer_declined", "data": {"offer": "o1", "by": 1},
                                              "audience": [0, 1]}]
    assert new.offers == [] and new.pstates[0].offers_made == 1
    with pytest.raises(NotFound) as nf:  # gone: accepting it now is refused (A53)
        GAME.act(new, 1, {"accept": {"offer": "o1"}})
    assert nf.value.rule == "A53"


def test_a53_an_offer_to_all_cannot_be_declined_only_ignored() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 2}, "get": {"iron": 1}}})
    with pytest.raises(IllegalOrder):
        GAME.act(st, 1, {"decline": {"offer": "o1"}})


def test_a53_withdraw_by_its_maker_tells_those_it_was_made_to() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}})
    st, _ = GAME.act(st, 0, {"offer": {"give": {"wood": 2}, "get": {"iron": 1}}})
    with pytest.raises(IllegalOrder) as e:
        GAME.act(st, 1, {"withdraw": {"offer": "o1"}})
    assert e.value.field == "withdraw.offer"
    new, events = GAME.act(st, 0, {"withdraw": {"offer": "o1"}})
    assert [(e.kind, dict(e.data), e.audience) for e in events] == [
        ("offer_withdrawn", {"offer": "o1", "by": 0}, None)]
    assert new.offers == [] and st.offers != []
    with pytest.raises(NotFound) as nf:
        GAME.act(new, 2, {"accept": {"offer": "o1"}})
    assert nf.value.rule == "A53"
