"""``legal_moves(view, unit)`` (A90, the agent's "legal moves" tool) for every game, checked against
the engine's own validation: every option it lists is accepted by ``validate`` on its own, and what
it leaves out is refused (deployment tiles, actions, builds: all of them; moves: every tile within
the unit's move range).  It reads the view alone: two states that give a player the same view give
the same answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.archipelago import GAME as AG
from engine.archipelago.economy import bank_rate
from engine.archipelago.orders import plan_path
from engine.archipelago.state import State
from engine.archipelago.units import BUILDABLE, RESOURCES, UNIT_TYPES
from engine.base import canonical_json
from engine.errors import GameError, InvalidOrder, NotFound, NotYourTurn
from engine.salvo import GAME as SG
from engine.salvo.board import ALL_SQUARES, coords
from engine.salvo.game import SalvoState
from tests.engine.archipelago.boards import TWO_HOMES, U, state
from tests.engine.archipelago.randplay import new_state

Tile = tuple[int, int]


def plain(lm: dict[str, Any]) -> dict[str, Any]:
    """The answer is plain JSON (what the MCP tool sends)."""
    assert json.loads(canonical_json(lm)) == lm
    return lm


def accepted(game: Any, st: Any, p: int, orders: dict[str, Any]) -> bool:
    try:
        game.validate(st, p, orders)
    except GameError:
        return False
    return True


# =================================================================================================
# Archipelago: the generic check against validate
# =================================================================================================

def to(uid: str, t: Tile) -> dict[str, Any]:
    return {"units": [{"unit": uid, "to": {"x": t[0], "y": t[1]}}]}


def full_carrier_at(st: State, p: int, t: Tile) -> bool:
    """An own carrier without room stands on ``t`` (the engine accepts the order, boarding fails)."""
    return any(c.owner == p and c.tile == t and c.carrier is None and UNIT_TYPES[c.type].is_carrier
               and len(c.cargo) >= UNIT_TYPES[c.type].capacity for c in st.units.values())


def check_deployment(st: State, p: int, lm: dict[str, Any]) -> None:
    """A14: a unit's deployment tiles are exactly the tiles validate accepts for it (whole board)."""
    assert lm["phase"] == "deployment" and lm["round"] == 0
    b = st.board
    for ent in lm["units"]:
        u = st.units[ent["unit"]]
        assert ent["type"] == u.type and ent["at"] == list(u.tile)
        listed = {tuple(t) for t in ent["tiles"]}
        for y in range(b.height):
            for x in range(b.width):
                ok = accepted(AG, st, p, {"deploy": [{"unit": u.id, "tile": {"x": x, "y": y}}]})
                assert ok == ((x, y) in listed), (u.type, (x, y), ok)


def check_unit_moves(st: State, p: int, ent: dict[str, Any], omitted: bool) -> int:
    """A18: every listed tile is accepted as ``to`` and reached this round; (``omitted``) every
    other tile within the move range is refused, or is not reached this round, or holds a full own
    carrier.  Returns how many orders were checked."""
    u = st.units[ent["unit"]]
    move = UNIT_TYPES[u.type].move
    assert ent["type"] == u.type and ent["at"] == list(u.tile) and ent["move"] == move
    listed = [tuple(t) for t in ent["moves"]]
    assert len(set(listed)) == len(listed) and u.tile not in listed
    assert listed == sorted(listed, key=lambda t: (t[1], t[0]))
    n = 0
    for t in listed:
        n += 1
        AG.validate(st, p, to(u.id, t))  # raises if refused
        path = plan_path(st, p, u, t)
        assert path is not None and 1 <= len(path) <= move, (u.type, u.tile, t, path)
    if omitted:
        for t in st.board.within(u.tile, move):
            if t == u.tile or t in listed:
                continue
            n += 1
            if accepted(AG, st, p, to(u.id, t)):
                path = plan_path(st, p, u, t)
                assert path is not None
                boards = UNIT_TYPES[u.type].domain == "land" and u.type != "flag"
                assert len(path) > move or (boards and full_carrier_at(st, p, t)), (u.type, u.tile, t, path)
    return n


def check_unit_actions(st: State, p: int, v: dict[str, Any], ent: dict[str, Any]) -> set[str]:
    """A36–A39: the listed (action, target) pairs are exactly those validate accepts, over every
    enemy the player sees or remembers.  Returns the action kinds listed."""
    uid = ent["unit"]
    listed: set[tuple[str, str | None]] = set()
    for a in ent["actions"]:
        if a["action"] == "outpost":
            assert set(a) == {"action"}
            listed.add(("outpost", None))
        else:
            assert a["targets"] and a["targets"] == sorted(a["targets"])
            listed |= {(a["action"], tg) for tg in a["targets"]}
    ids = [e["id"] for e in v["enemies"]] + [e["id"] for e in v["enemy_log"]]
    cands: list[tuple[str, str | None]] = [("outpost", None)]
    cands += [(k, tg) for k in ("bombard", "strike", "reveal") for tg in ids]
    for kind, tg in cands:
        order: dict[str, Any] = {"unit": uid, "action": kind}
        if tg is not None:
            order["target"] = tg
        assert accepted(AG, st, p, {"units": [order]}) == ((kind, tg) in listed), (ent["type"], kind, tg)
    return {k for k, _ in listed}


def check_builds(st: State, p: int, lm: dict[str, Any]) -> set[str]:
    """A42: a type is listed (with its mine tiles / raft ships) exactly when validate accepts it."""
    by_type = {b["type"]: b for b in lm["builds"]}
    assert [b["type"] for b in lm["builds"]] == [t for t in BUILDABLE if t in by_type]
    b = st.board
    ctl = {t for t, q in st.control.items() if q == p}
    near = sorted({n for t in ctl for n in (t, *b.neighbours(t))})
    for typ in BUILDABLE:
        ut = UNIT_TYPES[typ]
        ent = by_type.get(typ)
        if ent is not None:
            assert ent["cost"] == ut.cost
            assert ent["needs"] == ("tile" if ut.is_mine else "ship" if typ == "raft" else None)
        if ut.is_mine:
            tiles = {(t[0], t[1]) for t in ent["tiles"]} if ent else set()
            assert (ent is None or tiles) and tiles <= set(near)
            for t in near:
                ok = accepted(AG, st, p, {"builds": [{"type": typ, "tile": {"x": t[0], "y": t[1]}}]})
                assert ok == (t in tiles), (typ, t)
        elif typ == "raft":
            ships = set(ent["ships"]) if ent else set()
            assert ent is None or ships
            for sid in sorted(st.units):
                assert accepted(AG, st, p, {"builds": [{"type": "raft", "ship": sid}]}) == (sid in ships)
        else:
            assert accepted(AG, st, p, {"builds": [{"type": typ}]}) == (ent is not None), typ
    return set(by_type)


def check_archipelago(st: State, p: int, omitted: bool = True) -> dict[str, Any]:
    """Every part of ``legal_moves`` for seat ``p`` against ``validate`` (and the A52 bank rates)."""
    v = AG.view(st, p)
    lm = plain(AG.legal_moves(v))
    assert lm == AG.legal_moves(json.loads(json.dumps(v)))
    if v.get("outcome") is not None:
        assert lm == {"phase": "over"}
        return lm
    assert [e["unit"] for e in lm["units"]] == [u["id"] for u in v["units"]]
    if st.round == 0:
        check_deployment(st, p, lm)
        return lm
    assert lm["phase"] == "orders" and lm["round"] == st.round
    for ent in lm["units"]:
        check_unit_moves(st, p, ent, omitted)
        check_unit_actions(st, p, v, ent)
    check_builds(st, p, lm)
    assert lm["bank"] == {"rates": {r: bank_rate(st, p, r) for r in RESOURCES}}
    return lm


def seeded_states(seed: int, players: int, rounds: int, autopilot: bool = False) -> Iterator[State]:
    """A seeded game, state by state from round 0: every seat plays ``random_orders``, or with
    ``autopilot`` the even seats play the autopilot's default standing orders (A4; they found
    outposts and fight)."""
    st = new_state(seed, players, 60)
    standing = [AG.default_standing(st, p) for p in range(players)]
    yield st
    while st.round < rounds and AG.outcome(st) is None:
        orders = {}
        for p in AG.expected_players(st):
            v = AG.view(st, p)
            if autopilot and p % 2 == 0:
                orders[p] = AG.autopilot(v, standing[p])
            else:
                orders[p] = AG.random_orders(v, seed * 1000 + st.round * 10 + p)
        st, _ = AG.resolve(st, orders)
        yield st


# =================================================================================================
# Archipelago: seeded games
# =================================================================================================

@pytest.mark.parametrize(("seed", "players"), [(1, 2), (2, 2), (3, 3)])
def test_a14_deployment_tiles_are_exactly_the_accepted_ones(seed: int, players: int) -> None:
    st = new_state(seed, players, 60)
    for p in range(players):
        lm = check_archipelago(st, p)
        land = [e for e in lm["units"] if UNIT_TYPES[e["type"]].domain == "land"]
        ships = [e for e in lm["units"] if UNIT_TYPES[e["type"]].domain == "sea"]
        assert len(land) == 5 and len(ships) == 1  # A13: flag, 2 Turai, Samal, land mine; a Dvora
        assert all(len(e["tiles"]) == 10 for e in land)  # A9: home islands have 10 tiles
        assert all(e["at"] in e["tiles"] for e in lm["units"])  # the default layout (A15) is legal


def test_a14_deployment_of_every_domain_on_a_drawn_board() -> None:
    units = [U("f", 0, "flag", 0, 1), U("a", 0, "rank1", 1, 1), U("j", 0, "fighter", 1, 0),
             U("d", 0, "dvora", 2, 1), U("z", 1, "rank1", 11, 6)]
    st = state(TWO_HOMES, units, round=0)
    lm = check_archipelago(st, 0)
    home = [[0, 0], [1, 0], [0, 1], [1, 1]]
    assert {e["unit"]: e["tiles"] for e in lm["units"]} == {
        "a": home, "f": home, "j": home,  # land units and aircraft on the home island
        "d": [[2, 0], [2, 1], [0, 2], [1, 2]]}  # ships on the sea next to it


@pytest.mark.parametrize(("seed", "players", "autopilot", "want"), [
    (4, 2, False, "bombard"), (5, 3, True, "outpost"), (6, 4, True, "outpost"), (9, 2, True, "outpost")])
def test_a18_a36_a42_seeded_games_list_exactly_what_validate_accepts(seed: int, players: int, autopilot: bool,
                                                                       want: str) -> None:
    seen_actions: set[str] = set()
    for st in seeded_states(seed, players, 30, autopilot):
        for p in range(players):
            lm = check_archipelago(st, p)
            for ent in lm.get("units", ()):
                seen_actions |= {a["action"] for a in ent.get("actions", ())}
    assert want in seen_actions  # the games get somewhere


def test_a90_a_unit_alone_and_unknown_units() -> None:
    st = next(s for s in seeded_states(7, 2, 3) if s.round == 3)
    v = AG.view(st, 0)
    whole = AG.legal_moves(v)
    for ent in whole["units"]:
        one = plain(AG.legal_moves(v, ent["unit"]))
        assert one["units"] == [ent]
        assert one["builds"] == whole["builds"] and one["bank"] == whole["bank"]
    enemy = next(u.id for u in st.units.values() if u.owner == 1)
    for bad in ("no-such-unit", enemy):  # an enemy's id is refused like an unknown one (A12)
        with pytest.raises(NotFound) as e:
            AG.legal_moves(v, bad)
        assert e.value.field == "unit"
        assert bad[:3] in e.value.reason
    with pytest.raises(NotFound) as e:
        AG.legal_moves(AG.view(new_state(7, 2, 60), 0), "no-such-unit")  # round 0 too
    assert e.value.field == "unit"


def test_a67_a_finished_game_has_nothing_left_to_do() -> None:
    st = state(TWO_HOMES, [U("a", 0, "rank5", 5, 3), U("f", 1, "flag", 11, 6)], scores={"0": 12}, target=10)
    st, _ = AG.resolve(st, {})
    assert AG.outcome(st) is not None
    for p in range(2):
        assert AG.legal_moves(AG.view(st, p)) == {"phase": "over"}


# =================================================================================================
# Archipelago: drawn boards (TWO_HOMES: p0's home island (0..1, 0..1), base (0, 0); a ring island
# at x 4..8, y 3; p1's home island (10..11, 5..6), base (11, 6))
# =================================================================================================

def entry(lm: dict[str, Any], uid: str) -> dict[str, Any]:
    return next(e for e in lm["units"] if e["unit"] == uid)


def moves(lm: dict[str, Any], uid: str) -> set[Tile]:
    return {(t[0], t[1]) for t in entry(lm, uid)["moves"]}


def test_a23_a60_moves_follow_the_unit_domain() -> None:
    units = [U("f", 0, "flag", 1, 0), U("a", 0, "rank1", 0, 1), U("n", 0, "navcommando", 1, 1),
             U("d", 0, "dvora", 3, 1), U("j", 0, "fighter", 0, 0), U("m", 0, "landmine", 5, 3),
             U("s", 0, "scout", 6, 3), U("z", 1, "rank1", 11, 6)]
    st = state(TWO_HOMES, units)
    lm = check_archipelago(st, 0)
    assert moves(lm, "f") == {(0, 0), (1, 1)}  # A60: the flag stays on its home island
    assert moves(lm, "a") == {(0, 0), (1, 1)}  # land only
    assert moves(lm, "n") == set(st.board.within((1, 1), 2)) - {(1, 1)}  # land and sea (A23)
    assert moves(lm, "m") == set() and entry(lm, "m")["move"] == 0  # mines never move
    assert moves(lm, "s") == {(4, 3), (5, 3), (7, 3), (8, 3)}  # a scout: 3 steps along the ring
    assert all(st.board.is_sea(t) for t in moves(lm, "d")) and len(moves(lm, "d")) > 10
    assert len(moves(lm, "j")) == len(st.board.within((0, 0), 5)) - 1  # aircraft fly over anything


def test_a18_a20_unexplored_tiles_are_never_listed() -> None:
    st = state(TWO_HOMES, [U("s", 0, "scout", 4, 3), U("d", 0, "dvora", 4, 4)], explored="sight")
    lm = check_archipelago(st, 0)
    v = AG.view(st, 0)
    for uid in ("s", "d"):
        assert moves(lm, uid)
        assert all(v["rows"][y][x] != "?" for x, y in moves(lm, uid))
    # sea three steps away over explored sea, but not seen itself: not a destination
    assert v["rows"][4][1] == "?" and v["rows"][4][2] == "." and v["rows"][4][3] == "."
    assert (1, 4) not in moves(lm, "d") and (7, 4) not in moves(lm, "d") and (2, 4) in moves(lm, "d")


def test_a24_boarding_an_own_carrier_with_room_cargo_steps_off_and_takes_no_action() -> None:
    units = [U("a", 0, "rank1", 1, 1), U("d", 0, "dvora", 2, 1), U("e", 0, "dvora", 1, 2, cargo=["c"]),
             U("c", 0, "rank1"), U("t", 0, "saar45", 4, 2, cargo=["k"]), U("k", 0, "scout"),
             U("g", 0, "dvora", 3, 2), U("z", 1, "rank1", 5, 3)]
    st = state(TWO_HOMES, units, stocks={"0": {"food": 3, "wood": 3}})
    lm = check_archipelago(st, 0)
    # a Dvora with room, not a full one (the engine accepts that order; the boarding would fail)
    assert moves(lm, "a") == {(1, 0), (0, 1), (2, 1)}
    assert moves(lm, "c") == {(1, 1)}  # cargo steps onto adjacent land
    # cargo of the Sa'ar 4.5 at (4, 2): onto the ring island and along it, or onto the Dvora at (3, 2)
    assert moves(lm, "k") == {(4, 3), (5, 3), (6, 3), (3, 2)}
    assert entry(lm, "k")["actions"] == [] and entry(lm, "c")["actions"] == []  # A24: cargo takes no action


def test_a61_an_own_flag_carried_by_an_enemy_takes_no_order() -> None:
    units = [U("f", 0, "flag"), U("b", 1, "rank5", 1, 1, flag="f"), U("a", 0, "rank3", 0, 1)]
    st = state(TWO_HOMES, units)
    lm = check_archipelago(st, 0)
    assert entry(lm, "f")["moves"] == [] and entry(lm, "f")["actions"] == []


def test_a36_outposts_outside_the_home_island_on_a_free_tile_when_affordable() -> None:
    units = [U("a", 0, "rank1", 4, 3), U("b", 0, "rank1", 6, 3), U("h", 0, "rank1", 1, 1),
             U("m", 0, "landmine", 8, 3), U("z", 1, "rank1", 11, 6)]
    outposts = [{"tile": {"x": 6, "y": 3}, "owner": 1}]
    rich = state(TWO_HOMES, units, stocks={"0": {"food": 1, "wood": 1}}, outposts=outposts)
    lm = check_archipelago(rich, 0)
    assert entry(lm, "a")["actions"] == [{"action": "outpost"}]
    for uid in ("b", "h", "m"):  # a tile with an outpost; the own home island; a mine
        assert entry(lm, uid)["actions"] == []
    poor = state(TWO_HOMES, units, stocks={"0": {"food": 1}}, outposts=outposts)
    assert entry(check_archipelago(poor, 0), "a")["actions"] == []  # 1 food, 1 wood (A36)


def test_a37_bombardment_of_enemy_land_units_on_adjacent_land() -> None:
    units = [U("d", 0, "dvora", 5, 2), U("e", 0, "saar45", 6, 4), U("r", 0, "raft", 7, 2),
             U("x", 1, "rank9", 5, 3), U("y", 1, "transport", 6, 3), U("w", 1, "dvora", 4, 2),
             U("q", 1, "rank1", 4, 3), U("o", 1, "rank1", 7, 3)]
    st = state(TWO_HOMES, units)
    lm = check_archipelago(st, 0)
    assert entry(lm, "d")["actions"] == [{"action": "bombard", "targets": ["x"]}]  # not a ship, not 2 away
    assert entry(lm, "e")["actions"] == []  # an aircraft is not a land unit
    assert entry(lm, "r")["actions"] == []  # a raft is no warship


def test_a38_air_strikes_within_5_cost_a_fuel() -> None:
    units = [U("j", 0, "fighter", 1, 1), U("s", 0, "scout", 5, 3), U("x", 1, "rank1", 4, 3),
             U("y", 1, "dvora", 5, 2), U("z", 1, "rank1", 6, 3)]
    st = state(TWO_HOMES, units, stocks={"0": {"fuel": 1}})
    lm = check_archipelago(st, 0)
    assert entry(lm, "j")["actions"] == [{"action": "strike", "targets": ["x", "y"]}]  # z is 7 away
    dry = state(TWO_HOMES, units)
    assert entry(check_archipelago(dry, 0), "j")["actions"] == []


def test_a39_a_spy_reveals_within_2() -> None:
    units = [U("s", 0, "spy", 5, 3), U("v", 0, "dvora", 8, 2), U("x", 1, "rank1", 7, 3),
             U("y", 1, "rank1", 8, 3), U("w", 1, "dvora", 5, 2)]
    st = state(TWO_HOMES, units, stocks={"0": {"food": 1, "wood": 1}})
    assert {e["id"] for e in AG.view(st, 0)["enemies"]} == {"w", "x", "y"}  # y in sight, 3 away
    lm = check_archipelago(st, 0)
    assert entry(lm, "s")["actions"] == [{"action": "outpost"}, {"action": "reveal", "targets": ["w", "x"]}]


def test_a42_builds_limits_costs_mine_tiles_and_raft_ships() -> None:
    units = [U("g", 0, "rank13", 0, 1), U("d", 0, "dvora", 2, 1, raft=True), U("e", 0, "shaldag", 2, 0),
             U("r", 0, "raft", 1, 2), U("a", 0, "rank1", 1, 1), U("z", 1, "rank1", 11, 6)]
    st = state(TWO_HOMES, units, stocks={"0": {"wood": 9, "food": 9, "iron": 9, "fuel": 9}})
    lm = check_archipelago(st, 0)
    got = {b["type"]: b for b in lm["builds"]}
    assert "rank13" not in got and "saar6" in got  # A42: one Rav-Aluf per player
    assert "flag" not in got
    assert got["raft"]["ships"] == ["e"]  # the Dvora has a raft already; a raft takes none
    assert got["landmine"]["tiles"] == [[0, 0], [1, 0]]  # the free controlled land tiles
    assert got["seamine"]["tiles"] == [[0, 2]]  # the free sea next to them
    poor = state(TWO_HOMES, units, stocks={"0": {"food": 1}})
    assert [b["type"] for b in check_archipelago(poor, 0)["builds"]] == ["rank1", "scout"]


def test_a52_bank_rates_halve_for_a_controlled_port() -> None:
    rows = list(TWO_HOMES)
    rows[3] = "....W####..."  # a wood port at (4, 3)
    st = state(rows, [U("a", 0, "rank1", 4, 3), U("z", 1, "rank1", 11, 6)])
    assert check_archipelago(st, 0)["bank"] == {"rates": {"wood": 2, "food": 4, "iron": 4, "fuel": 4}}
    assert check_archipelago(st, 1)["bank"] == {"rates": {"wood": 4, "food": 4, "iron": 4, "fuel": 4}}


def test_a90_a85_the_answer_depends_on_the_view_alone() -> None:
    mine = [U("a", 0, "rank1", 0, 1), U("d", 0, "dvora", 3, 2), U("j", 0, "fighter", 1, 1)]
    one = state(TWO_HOMES, [*mine, U("x", 1, "rank9", 7, 3), U("f", 1, "flag", 11, 6)],
                stocks={"0": {"fuel": 2}, "1": {"iron": 3}})
    two = state(TWO_HOMES, [*mine, U("y", 1, "submarine", 3, 0), U("x", 1, "rank1", 8, 3)],
                stocks={"0": {"fuel": 2}, "1": {"wood": 3}})
    # hidden from p0: where and what p1's units are (a submarine not adjacent to a watcher), its stock
    assert AG.view(one, 0) == AG.view(two, 0)
    assert AG.legal_moves(AG.view(one, 0)) == AG.legal_moves(AG.view(two, 0))
    check_archipelago(one, 0)
    check_archipelago(two, 0)
    near = state(TWO_HOMES, [*mine, U("x", 1, "rank9", 4, 3), U("f", 1, "flag", 11, 6)],
                 stocks={"0": {"fuel": 2}, "1": {"iron": 3}})
    assert AG.view(near, 0) != AG.view(one, 0)  # a unit in sight shows: the fighter may strike it
    assert entry(AG.legal_moves(AG.view(near, 0)), "j")["actions"] == [{"action": "strike", "targets": ["x"]}]


# =================================================================================================
# Salvo
# =================================================================================================

def salvo_round(config: dict[str, Any], seed: int, rounds: int) -> SalvoState:
    st = SG.new_game(config, seed)
    while st.round < rounds and st.outcome is None:
        st, _ = SG.resolve(st, {p: SG.random_orders(SG.view(st, p), seed * 100 + st.round * 10 + p)
                                for p in SG.expected_players(st)})
    return st


@pytest.mark.parametrize("fleet", ["default", "variant"])
def test_s3_placement_lists_the_fleet_and_the_grid(fleet: str) -> None:
    st = SG.new_game({"players": 2, "fleet": fleet}, 1)
    for p in range(2):
        v = SG.view(st, p)
        lm = plain(SG.legal_moves(v))
        assert set(lm) == {"phase", "fleet", "grid", "note"}
        assert lm["phase"] == "placement" and lm["grid"] == "A1..J10" and "S3" in lm["note"]
        assert lm["fleet"] == [{"ship": s["name"], "size": s["size"]} for s in v["fleet_spec"]]
        SG.validate(st, p, {"random_placement": True})
        row = [{"ship": s["ship"], "bow": f"A{i + 1}"} for i, s in enumerate(lm["fleet"])]
        SG.validate(st, p, {"placement": row})  # one ship per row, from column A


@pytest.mark.parametrize("rounds", [1, 4, 9])
def test_s4_s5_salvo_mode_untried_squares_and_shots_allowed(rounds: int) -> None:
    st = salvo_round({"players": 2}, rounds, rounds)
    assert st.round == rounds and st.outcome is None
    for p in range(2):
        v = SG.view(st, p)
        lm = plain(SG.legal_moves(v))
        assert set(lm) == {"phase", "shots_allowed", "untried"}  # no turns in salvo mode
        tried = {s["square"] for s in v["shots"]}
        assert lm["phase"] == "firing" and lm["shots_allowed"] == v["shots_allowed"] > 0
        assert lm["untried"] == sorted(lm["untried"], key=coords)
        assert set(lm["untried"]) == set(ALL_SQUARES) - tried and len(lm["untried"]) == 100 - len(tried)
        for sq in lm["untried"]:
            SG.validate(st, p, {"shots": [sq]})
        for sq in tried:
            assert not accepted(SG, st, p, {"shots": [sq]})  # S5
        n = lm["shots_allowed"]
        SG.validate(st, p, {"shots": lm["untried"][:n]})
        assert not accepted(SG, st, p, {"shots": lm["untried"][:n + 1]})  # S4


def test_s4_untried_squares_run_a1_a2_and_so_on() -> None:
    lm = SG.legal_moves(SG.view(salvo_round({"players": 2}, 3, 1), 0))
    assert lm["untried"][:11] == ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10", "B1"]
    assert lm["untried"][-1] == "J10" and len(lm["untried"]) == 100


def test_s4_classic_mode_says_whose_turn_it_is() -> None:
    st = salvo_round({"players": 2, "mode": "classic"}, 2, 3)
    active = st.active_player
    for p in range(2):
        lm = plain(SG.legal_moves(SG.view(st, p)))
        assert lm["your_turn"] == (p == active)
        assert lm["shots_allowed"] == (1 if p == active else 0)
        if p == active:
            for sq in lm["untried"]:
                SG.validate(st, p, {"shots": [sq]})
        else:
            with pytest.raises(NotYourTurn):
                SG.validate(st, p, {"shots": [lm["untried"][0]]})


def test_s7_over_once_the_game_has_ended() -> None:
    st = salvo_round({"players": 2}, 5, 200)
    assert st.outcome is not None
    for p in range(2):
        assert SG.legal_moves(SG.view(st, p)) == {"phase": "over"}


def test_s8_salvo_has_no_units_and_the_answer_depends_on_the_view_alone() -> None:
    st = SG.new_game({"players": 2}, 1)
    mine = [{"ship": "battleship", "bow": "A1"}, {"ship": "cruiser", "bow": "A2"},
            {"ship": "submarine", "bow": "A3"}, {"ship": "destroyer", "bow": "A4"}]
    theirs = [{"ship": "battleship", "bow": "F10"}, {"ship": "cruiser", "bow": "A7", "vertical": True},
              {"ship": "submarine", "bow": "G5"}, {"ship": "destroyer", "bow": "J1", "vertical": True}]
    one, _ = SG.resolve(st, {0: {"placement": mine}, 1: {"placement": mine}})
    two, _ = SG.resolve(st, {0: {"placement": mine}, 1: {"placement": theirs}})
    shots = {0: {"shots": ["E5", "E6"]}, 1: {"shots": ["J10"]}}  # misses in both games
    one, _ = SG.resolve(one, shots)
    two, _ = SG.resolve(two, shots)
    assert SG.view(one, 0) == SG.view(two, 0) and one.fleets[1] != two.fleets[1]
    assert SG.legal_moves(SG.view(one, 0)) == SG.legal_moves(SG.view(two, 0))
    with pytest.raises(InvalidOrder) as e:
        SG.legal_moves(SG.view(one, 0), "battleship")
    assert e.value.field == "unit"
