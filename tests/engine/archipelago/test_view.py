"""Rule tests for the fog-of-war view (A80–A85), each on a small board drawn here.

Coordinates: x is the column, y the row (row 0 on top); ``.`` sea, ``#`` land, digits are bases,
``w f i u`` resources, ``W F I U`` ports (see :mod:`engine.archipelago.scenario`).
"""

from __future__ import annotations

import json
from typing import Any

from engine.archipelago import GAME
from engine.archipelago.economy import accept_offer, bank, chat, offer
from engine.archipelago.scenario import state_from_scenario
from engine.archipelago.state import State
from engine.archipelago.view import view
from tests.engine.archipelago.boards import TWO_HOMES, U

Tile = tuple[int, int]


def make(rows: list[str], units: list[dict[str, Any]], **kw: Any) -> State:
    return state_from_scenario({"rows": rows, "units": units, **kw})


def tiles(lst: list[dict[str, int]]) -> set[Tile]:
    return {(t["x"], t["y"]) for t in lst}


def diamond(c: Tile, r: int, w: int, h: int) -> set[Tile]:
    return {(x, y) for x in range(w) for y in range(h) if abs(x - c[0]) + abs(y - c[1]) <= r}


def enemy(v: dict[str, Any], uid: str) -> dict[str, Any] | None:
    return next((e for e in v["enemies"] if e["id"] == uid), None)


def own(v: dict[str, Any], uid: str) -> dict[str, Any] | None:
    return next((u for u in v["units"] if u["id"] == uid), None)


def all_ids(obj: Any) -> set[str]:
    """Every string value anywhere in a JSON value (keys excluded)."""
    if isinstance(obj, dict):
        return set().union(*(all_ids(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(all_ids(v) for v in obj)) if obj else set()
    return {obj} if isinstance(obj, str) else set()


BOARD = TWO_HOMES
W, H = 12, 7


# -- A80 ----------------------------------------------------------------------------------------

def test_a80_visible_tiles_are_unit_sight_and_base_two() -> None:
    st = make(BOARD, [U("s", 0, "scout", 6, 3),
                      U("a", 1, "rank1", 4, 3),     # distance 2 from the scout: seen
                      U("b", 1, "dvora", 6, 0),     # distance 3: seen (scout sight 3)
                      U("c", 1, "dvora", 2, 3),     # distance 4 from scout, 5 from base: hidden
                      U("d", 1, "dvora", 9, 4),     # distance 4: hidden
                      U("e", 1, "dvora", 2, 0)])    # distance 2 from the base: seen (base sight 2)
    v = view(st, 0)
    want = diamond((6, 3), 3, W, H) | diamond((0, 0), 2, W, H)
    assert tiles(v["visible"]) == want
    assert {e["id"] for e in v["enemies"]} == {"a", "b", "e"}


def test_a80_outpost_sees_one_tile() -> None:
    st = make(BOARD, [U("a", 1, "rank1", 7, 3), U("b", 1, "rank1", 8, 3), U("c", 1, "dvora", 6, 2)],
              outposts=[{"tile": {"x": 6, "y": 3}, "owner": 0}])
    v = view(st, 0)
    assert tiles(v["visible"]) == diamond((6, 3), 1, W, H) | diamond((0, 0), 2, W, H)
    assert {e["id"] for e in v["enemies"]} == {"a", "c"}  # b at distance 2 is hidden
    assert {"tile": {"x": 6, "y": 3}, "owner": 0} in v["outposts"]


def test_a80_sight_per_unit_type() -> None:
    # rank1 sight 1, dvora 2, fighter 2, land mine 0 (sees only its own tile)
    st = make(BOARD, [U("r", 0, "rank1", 5, 3), U("m", 0, "landmine", 8, 3), U("d", 0, "dvora", 10, 1)],
              control=[{"tile": {"x": 8, "y": 3}, "owner": 0}])
    v = view(st, 0)
    want = (diamond((5, 3), 1, W, H) | {(8, 3)} | diamond((10, 1), 2, W, H) | diamond((0, 0), 2, W, H))
    assert tiles(v["visible"]) == want


def test_a80_cargo_sees_nothing() -> None:
    # a scout (sight 3) aboard a Dvora (sight 2) adds nothing: an enemy at distance 3 stays hidden
    st = make(BOARD, [U("d", 0, "dvora", 6, 1, cargo=["s"]), U("s", 0, "scout"),
                      U("e", 1, "dvora", 9, 1),   # distance 3 from the Dvora
                      U("f", 1, "dvora", 8, 1)])  # distance 2: seen
    v = view(st, 0)
    assert tiles(v["visible"]) == diamond((6, 1), 2, W, H) | diamond((0, 0), 2, W, H)
    assert {e["id"] for e in v["enemies"]} == {"f"}
    s = own(v, "s")
    assert s is not None and s["carrier"] == "d" and s["tile"] == {"x": 6, "y": 1}


def test_a80_submarine_seen_only_from_orthogonally_adjacent_tile() -> None:
    st = make(BOARD, [U("d", 0, "dvora", 6, 1),
                      U("s1", 1, "submarine", 8, 1),   # distance 2, in sight: hidden (not adjacent)
                      U("s2", 1, "submarine", 7, 2),   # diagonal: distance 2, hidden
                      U("s3", 1, "submarine", 6, 0),   # orthogonally adjacent: seen
                      U("x", 1, "dvora", 4, 1)])       # a ship at distance 2: seen
    v = view(st, 0)
    assert (8, 1) in tiles(v["visible"]) and (7, 2) in tiles(v["visible"])
    assert {e["id"] for e in v["enemies"]} == {"s3", "x"}
    assert enemy(v, "s3") == {"id": "s3", "owner": 1, "domain": "sea", "tile": {"x": 6, "y": 0}}


def test_a80_submarine_seen_next_to_base_and_outpost() -> None:
    rows = ["0...........",
            "............",
            "............",
            "....#####...",
            "............",
            "..........##",
            "..........#1"]
    st = make(rows, [U("s1", 1, "submarine", 1, 0),    # next to p0's base
                     U("s2", 1, "submarine", 0, 2),    # 2 from the base: hidden
                     U("s3", 1, "submarine", 5, 2)],   # next to p0's outpost at (5, 3)
              outposts=[{"tile": {"x": 5, "y": 3}, "owner": 0}])
    v = view(st, 0)
    assert {e["id"] for e in v["enemies"]} == {"s1", "s3"}


# -- A81 ----------------------------------------------------------------------------------------

def test_a81_explored_terrain_stays_without_units() -> None:
    st = make(BOARD, [U("d", 0, "dvora", 6, 2), U("e", 1, "rank1", 6, 3)], explored="sight")
    v0 = view(st, 0)
    assert enemy(v0, "e") is not None
    assert v0["rows"][3][6] == "#"
    assert v0["rows"][6][0] == "?"  # never seen
    st2, _ = GAME.resolve(st, {0: {"units": [{"unit": "d", "path": ["W", "W", "W"]}]}})
    assert st2.units["d"].tile == (3, 2)
    v = view(st2, 0)
    assert (6, 3) not in tiles(v["visible"])
    assert v["rows"][3][6] == "#" and v["rows"][2][7] == "."  # still on the map as terrain
    assert enemy(v, "e") is None  # ... without its units
    for y in range(H):
        for x in range(W):
            explored = v["rows"][y][x] != "?"
            seen = diamond((6, 2), 2, W, H) | diamond((3, 2), 2, W, H) | diamond((0, 0), 2, W, H)
            assert explored == ((x, y) in seen)
            if explored:
                assert v["rows"][y][x] == ("#" if BOARD[y][x] != "." else ".")


def test_a81_map_features_only_on_explored_tiles() -> None:
    rows = ["0w..........",
            "##..........",
            "............",
            "....#iU#u...",
            "............",
            "..........##",
            "..........#1"]
    st = make(rows, [U("d", 0, "dvora", 5, 2)], explored="sight")
    v = view(st, 0)
    # sight: the Dvora (5,2) r2 reaches (4,3),(5,3),(6,3) but not (8,3); the base reaches (1,0)
    assert v["resource_tiles"] == [{"tile": {"x": 1, "y": 0}, "resource": "wood"},
                                   {"tile": {"x": 5, "y": 3}, "resource": "iron"}]
    assert v["ports"] == [{"tile": {"x": 6, "y": 3}, "resource": "fuel"}]
    assert v["bases"] == [{"seat": 0, "tile": {"x": 0, "y": 0}}]  # p1's base unexplored
    ring = [i for i in v["islands"] if i["kind"] == "ring"]
    assert len(ring) == 1 and tiles(ring[0]["tiles"]) == {(4, 3), (5, 3), (6, 3)}
    assert not any(i.get("owner") == 1 for i in v["islands"])


# -- A82 ----------------------------------------------------------------------------------------

def test_a82_enemy_shows_owner_and_shown_domain_only() -> None:
    st = make(BOARD, [U("s", 0, "scout", 6, 3),
                      U("g", 1, "rank13", 5, 3),         # land unit -> land
                      U("m", 1, "landmine", 7, 3),       # a land mine looks like any land unit
                      U("n", 1, "navcommando", 6, 2),    # naval commando at sea looks like a ship
                      U("k", 1, "seamine", 6, 4),        # a sea mine looks like any ship
                      U("f", 1, "fighter", 8, 3),        # aircraft -> air
                      U("t", 1, "saar6", 4, 2)])
    v = view(st, 0)
    got = {e["id"]: e for e in v["enemies"]}
    assert got == {
        "g": {"id": "g", "owner": 1, "domain": "land", "tile": {"x": 5, "y": 3}},
        "m": {"id": "m", "owner": 1, "domain": "land", "tile": {"x": 7, "y": 3}},
        "n": {"id": "n", "owner": 1, "domain": "sea", "tile": {"x": 6, "y": 2}},
        "k": {"id": "k", "owner": 1, "domain": "sea", "tile": {"x": 6, "y": 4}},
        "f": {"id": "f", "owner": 1, "domain": "air", "tile": {"x": 8, "y": 3}},
        "t": {"id": "t", "owner": 1, "domain": "sea", "tile": {"x": 4, "y": 2}},
    }
    text = json.dumps(v)
    for typ in ("rank13", "landmine", "navcommando", "seamine", "fighter", "saar6"):
        assert typ not in text


def test_a82_revealed_enemy_shows_its_type() -> None:
    st = make(BOARD, [U("s", 0, "scout", 6, 3), U("g", 1, "rank13", 5, 3), U("h", 1, "rank12", 7, 3)],
              revealed={"0": ["g"]})
    v = view(st, 0)
    assert enemy(v, "g") == {"id": "g", "owner": 1, "domain": "land", "tile": {"x": 5, "y": 3},
                             "type": "rank13"}
    assert "type" not in (enemy(v, "h") or {"type": "missing"})
    # p1 revealed nothing of p0: p1 sees the scout (its own units' sight) without type
    v1 = view(st, 1)
    s = enemy(v1, "s")
    assert s == {"id": "s", "owner": 0, "domain": "land", "tile": {"x": 6, "y": 3}}


def test_a82_own_units_in_full_enemy_cargo_hidden() -> None:
    st = make(BOARD, [U("d", 0, "saar5", 6, 2, cargo=["c1", "c2"], raft=True),
                      U("c1", 0, "rank5"), U("c2", 0, "commando"),
                      U("e", 1, "saar45", 7, 2, cargo=["x"]), U("x", 1, "spy")])
    v = view(st, 0)
    assert own(v, "d") == {"id": "d", "owner": 0, "type": "saar5", "tile": {"x": 6, "y": 2},
                           "cargo": ["c1", "c2"], "raft": True}
    assert own(v, "c1") == {"id": "c1", "owner": 0, "type": "rank5", "tile": {"x": 6, "y": 2}, "carrier": "d"}
    assert enemy(v, "e") == {"id": "e", "owner": 1, "domain": "sea", "tile": {"x": 7, "y": 2}}
    assert "x" not in all_ids(v)  # enemy cargo: neither its id nor its existence


def test_a82_own_carried_flag_seen_only_while_carrier_in_sight() -> None:
    # p1's Samal carries p0's flag; p0 sees it from its Dvora at distance 2, then not at all.
    units = [U("d", 0, "dvora", 6, 2), U("fl", 0, "flag"), U("c", 1, "rank3", 6, 3, flag="fl")]
    st = make(BOARD, units)
    v = view(st, 0)
    assert own(v, "fl") == {"id": "fl", "owner": 0, "type": "flag", "tile": {"x": 6, "y": 3}, "carrier": "c"}
    assert enemy(v, "c") == {"id": "c", "owner": 1, "domain": "land", "tile": {"x": 6, "y": 3}}
    st2 = make(BOARD, [U("d", 0, "dvora", 2, 2), U("fl", 0, "flag"), U("c", 1, "rank3", 6, 3, flag="fl")])
    v2 = view(st2, 0)
    assert own(v2, "fl") is None and enemy(v2, "c") is None
    assert "c" not in all_ids(v2)
    # the carrier sees the enemy flag it carries by id (its own unit's field), not as a unit
    v1 = view(st, 1)
    assert own(v1, "c") == {"id": "c", "owner": 1, "type": "rank3", "tile": {"x": 6, "y": 3}, "flag": "fl"}


def test_a82_own_flag_carried_by_enemy_cargo_stays_hidden() -> None:
    # the bearer is cargo of an enemy ship in sight: the bearer is not in sight, so neither is the flag
    st = make(BOARD, [U("d", 0, "dvora", 6, 1), U("fl", 0, "flag"),
                      U("s", 1, "dvora", 7, 2, cargo=["c"]), U("c", 1, "rank3", flag="fl")])
    v = view(st, 0)
    assert enemy(v, "s") is not None
    assert own(v, "fl") is None
    assert "c" not in all_ids(v)


# -- A83 ----------------------------------------------------------------------------------------

def test_a83_enemy_log_last_tile_round_and_age() -> None:
    st = make(BOARD, [U("d", 0, "dvora", 6, 2), U("e", 1, "rank1", 6, 3), U("g", 1, "rank9", 7, 3)],
              revealed={"0": ["g"]}, round=4)
    v = view(st, 0)
    assert v["enemy_log"] == []  # both in sight: shown as enemies, not as memories
    st, _ = GAME.resolve(st, {0: {"units": [{"unit": "d", "path": ["W", "W", "W"]}]}})
    st, _ = GAME.resolve(st, {0: {"units": [{"unit": "d", "path": ["W"]}]}})
    assert st.round == 6
    v = view(st, 0)
    assert enemy(v, "e") is None and enemy(v, "g") is None
    assert v["enemy_log"] == [
        {"id": "e", "owner": 1, "tile": {"x": 6, "y": 3}, "round": 4, "rounds_ago": 2},
        {"id": "g", "owner": 1, "tile": {"x": 7, "y": 3}, "round": 4, "rounds_ago": 2, "type": "rank9"},
    ]


def test_a83_log_keeps_last_tile_after_the_unit_moves_out_of_sight() -> None:
    st = make(BOARD, [U("d", 0, "dvora", 6, 1), U("e", 1, "dvora", 8, 1)], round=2)
    st, _ = GAME.resolve(st, {1: {"units": [{"unit": "e", "path": ["E", "E", "S"]}]}})
    assert st.units["e"].tile == (10, 2)
    v = view(st, 0)
    assert enemy(v, "e") is None
    assert v["enemy_log"] == [{"id": "e", "owner": 1, "tile": {"x": 8, "y": 1}, "round": 2, "rounds_ago": 1}]


# -- A84 ----------------------------------------------------------------------------------------

def test_a84_other_players_public_figures_only() -> None:
    st = make(BOARD, [U("d", 0, "dvora", 6, 1), U("e", 1, "dvora", 9, 1)],
              stocks={"0": {"wood": 8, "food": 1}, "1": {"iron": 5, "fuel": 2}}, scores={"1": 3})
    st = bank(st, 0, "wood", "iron", 1)  # during planning: own stock changes at once
    v = view(st, 0)
    assert v["stock"] == {"wood": 4, "food": 1, "iron": 1, "fuel": 0}
    # the public total is as the round opened (9 for p0, 7 for p1), not the live stock
    assert v["seats"] == [{"seat": 0, "score": 0, "resource_total": 9},
                          {"seat": 1, "score": 3, "resource_total": 7}]
    assert v["score"] == 0
    assert "fuel" not in json.dumps(v["seats"])
    v1 = view(st, 1)
    assert v1["stock"] == {"wood": 0, "food": 0, "iron": 5, "fuel": 2}
    assert v1["seats"] == v["seats"]


def test_a84_offers_to_the_player_and_own_chat_only() -> None:
    rows = ["0#.......2", "##.......#", "..........", "..........", "........##", "........#1"]
    st = make(rows, [], stocks={str(p): {"wood": 3, "food": 3, "iron": 3, "fuel": 3} for p in range(3)})
    st = offer(st, 1, 0, {"wood": 1}, {"iron": 1})      # to p0
    st = offer(st, 1, 2, {"food": 1}, {"iron": 1})      # to p2 only
    st = offer(st, 2, None, {"fuel": 2}, {"wood": 1})   # to all
    st = chat(st, 1, "hi p2", 2)
    st = chat(st, 2, "hello all")
    v = view(st, 0)
    assert v["offers"] == [{"id": "o1", "from_seat": 1, "to_seat": 0, "give": {"wood": 1}, "get": {"iron": 1}},
                           {"id": "o3", "from_seat": 2, "give": {"fuel": 2}, "get": {"wood": 1}}]
    assert [m["text"] for m in v["chat"]] == ["hello all"]
    v1 = view(st, 1)
    assert [o["id"] for o in v1["offers"]] == ["o1", "o2", "o3"]  # own offers and the open one
    st = accept_offer(st, 0, "o3")
    assert [o["id"] for o in view(st, 0)["offers"]] == ["o1"]


# -- A85 ----------------------------------------------------------------------------------------

def test_a85_events_cut_to_participants_and_watchers() -> None:
    rows = ["0#....2#..",
            "##....##..",
            "..........",
            "...###....",
            "..........",
            "........##",
            "........#1"]
    # p0's Sa'ar 5 attacks p1's Dvora at (3,2); p2's Dvora at (2,1)... watches from distance 2;
    # p1's far Dvora cannot see; seat 2 is a watcher, seat 1 and 0 take part.
    st = make(rows, [U("a", 0, "saar5", 2, 2), U("b", 1, "dvora", 4, 2), U("w", 2, "dvora", 3, 0)])
    new, events = GAME.resolve(st, {0: {"units": [{"unit": "a", "path": ["E"]}]},
                                    1: {"units": [{"unit": "b", "path": ["W"]}]}})
    fights = {p: [e for e in view(new, p, events)["events"] if e["kind"] == "fight"] for p in range(3)}
    assert len(fights[0]) == 1 and len(fights[1]) == 1 and len(fights[2]) == 1
    assert {u["type"] for u in fights[0][0]["units"]} == {"saar5", "dvora"}
    assert fights[0][0] == fights[1][0]
    watcher = fights[2][0]
    assert all("type" not in u for u in watcher["units"])
    assert {(u["id"], u["owner"], u["domain"]) for u in watcher["units"]} == {("a", 0, "sea"), ("b", 1, "sea")}
    assert [u["id"] for u in watcher["units"] if u.get("died")] == ["b"]
    # nobody gets another seat's production
    for p in range(3):
        for e in view(new, p, events)["events"]:
            if e["kind"] == "production":
                assert e["player"] == p


def test_a85_fight_out_of_sight_reaches_no_watcher() -> None:
    rows = ["0#........2#",
            "##........##",
            "............",
            "............",
            "............",
            "..........##",
            "..........#1"]
    st = make(rows, [U("a", 0, "saar5", 5, 4), U("b", 1, "dvora", 6, 4), U("w", 2, "dvora", 10, 2)])
    new, events = GAME.resolve(st, {0: {"units": [{"unit": "a", "path": ["E"]}]}})
    assert "b" not in new.units
    v2 = view(new, 2, events)
    assert [e for e in v2["events"] if e["kind"] == "fight"] == []
    assert "a" not in all_ids(v2) and "b" not in all_ids(v2)


def test_a85_strike_does_not_name_a_hidden_fighter() -> None:
    # p0's fighter at (1,1) strikes p1's Sagam at (4,3) (distance 5); p1 never saw the fighter
    st = make(BOARD, [U("f", 0, "fighter", 1, 1), U("s", 0, "scout", 6, 3), U("t", 1, "rank5", 4, 3)],
              stocks={"0": {"fuel": 2}})
    assert enemy(view(st, 1), "f") is None
    order = {"units": [{"unit": "f", "action": "strike", "target": "t"}]}
    GAME.validate(st, 0, order)
    new, events = GAME.resolve(st, {0: order})
    assert "t" not in new.units
    mine = [e for e in view(new, 0, events)["events"] if e["kind"] == "strike"]
    theirs = [e for e in view(new, 1, events)["events"] if e["kind"] == "strike"]
    assert mine[0]["by"] == "f"  # the striker knows its own fighter
    assert len(theirs) == 1 and theirs[0]["units"][0]["id"] == "t" and theirs[0]["units"][0].get("died")
    assert "by" not in theirs[0]
    assert "f" not in all_ids(view(new, 1, events))
    # the events themselves (what a game server forwards to the player) never name it either
    assert all("f" not in all_ids(dict(e.data)) for e in events if e.visible_to(1))


def test_a85_bombardment_names_the_ship_in_sight() -> None:
    # p0's Sa'ar 5 (strength 4) bombards p1's Samal (3) on the adjacent shore: p1's unit saw the ship
    st = make(BOARD, [U("a", 0, "saar5", 5, 2), U("t", 1, "rank3", 5, 3)])
    order = {"units": [{"unit": "a", "action": "bombard", "target": "t"}]}
    GAME.validate(st, 0, order)
    new, events = GAME.resolve(st, {0: order})
    theirs = [e for e in view(new, 1, events)["events"] if e["kind"] == "bombard"]
    assert len(theirs) == 1 and theirs[0]["by"] == "a"


def test_a85_view_is_plain_json_without_none() -> None:
    st = make(BOARD, [U("s", 0, "scout", 6, 3), U("g", 1, "rank13", 5, 3)])
    new, events = GAME.resolve(st, {0: {"units": [{"unit": "s", "path": ["W"]}]}})
    for p in range(2):
        v = view(new, p, events)
        assert json.loads(json.dumps(v)) == v

        def walk(x: Any) -> None:
            assert x is not None
            if isinstance(x, dict):
                if set(x) == {"x", "y"}:
                    assert all(isinstance(x[k], int) for k in "xy")
                for k, val in x.items():
                    assert k == k.lower() and " " not in k
                    walk(val)
            elif isinstance(x, list):
                for val in x:
                    walk(val)
        walk(v)


def test_a67_game_over_reveals_the_whole_map_to_every_player() -> None:
    from tests.engine.archipelago.randplay import check_final_view, play

    played = play(5, 3, max_rounds=3, checks=False, bad_orders=False)
    final = played.final
    assert final.outcome is not None
    for p in range(final.players):
        v = view(final, p)
        check_final_view(final, p, v, f"final player {p}")
        assert all("?" not in row for row in v["rows"])
        assert not {e["id"] for e in v["enemy_log"]} & {u["id"] for u in v["enemies"]}
        before = view(GAME.state_from_dict({**final.to_dict(), "outcome": None}), p)
        assert len(v["enemies"]) >= len(before["enemies"]) and "?" in "".join(before["rows"])
