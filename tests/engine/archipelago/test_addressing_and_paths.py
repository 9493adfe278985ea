"""Issue 19 at the engine: a path and a destination into the sea (A18, A20), tiles with a missing
coordinate, offers never made against offers gone (A53), and an addressee that is oneself (A53)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.archipelago import GAME
from engine.errors import GameError, IllegalOrder, InvalidOrder, NotFound
from tests.engine.archipelago.boards import U, state

B = [
    "0#........",
    "..........",
    "##########",
    "..........",
    "........#1",
]
THREE = ["0#....", "......", "..1#..", "......", "....#2"]


def refuse(st: Any, player: int, orders: dict[str, Any]) -> GameError:
    with pytest.raises(GameError) as e:
        GAME.validate(st, player, orders)
    return e.value


def test_a20_a18_a_step_into_the_sea_is_accepted_and_the_same_tile_as_to_is_refused_saying_why() -> None:
    """As settled (A20): the terrain of a step is found at the resolution, where the unit stops
    (A27); a destination is planned over explored terrain (A18), so one no path reaches is refused."""
    st = state(B, [U("a", 0, "rank1", 2, 2)])
    GAME.validate(st, 0, {"units": [{"unit": "a", "path": ["S"]}]})
    e = refuse(st, 0, {"units": [{"unit": "a", "to": {"x": 2, "y": 3}}]})
    assert isinstance(e, IllegalOrder) and (e.rule, e.field) == ("A18", "units[0].to")
    assert e.reason == "your Private at (2, 2): a land unit cannot go to sea: (2, 3) is sea"  # plain words (A18)
    new, _ = GAME.resolve(st, {0: {"units": [{"unit": "a", "path": ["S"]}]}, 1: {}})
    assert new.units["a"].tile == (2, 2)  # held at the resolution


@pytest.mark.parametrize(("orders", "field"), [
    ({"units": [{"unit": "a", "to": {"y": 2}}]}, "units[0].to.x"),
    ({"units": [{"unit": "a", "to": {"x": 2}}]}, "units[0].to.y"),
    ({"builds": [{"type": "seamine", "tile": {"x": 2}}]}, "builds[0].tile.y"),
])
def test_a18_a_tile_missing_a_coordinate_names_it(orders: Any, field: str) -> None:
    st = state(B, [U("a", 0, "rank1", 2, 2)], stocks={"0": {"iron": 9, "wood": 9, "food": 9, "fuel": 9}})
    e = refuse(st, 0, orders)
    assert isinstance(e, InvalidOrder) and e.field == field
    assert "is missing" in e.reason and not e.reason.startswith("'")  # never a bare KeyError ('x')


def test_a14_a_deployment_tile_missing_a_coordinate_names_it() -> None:
    st = state(B, [U("a", 0, "rank1", 1, 0)], round=0)
    e = refuse(st, 0, {"deploy": [{"unit": "a", "tile": {"x": 0}}]})
    assert isinstance(e, InvalidOrder) and e.field == "deploy[0].tile.y" and "y is missing" in e.reason


@pytest.mark.parametrize("kind", ["accept", "decline", "withdraw"])
def test_a53_an_offer_never_made_is_not_found_one_gone_is_no_longer_valid(kind: str) -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}, "1": {"iron": 2}})
    st, _ = GAME.act(st, 0, {"offer": {"to": 1, "give": {"wood": 1}, "get": {"iron": 1}}})  # o1
    gone, _ = GAME.act(st, 0, {"withdraw": {"offer": "o1"}})
    who = 0 if kind == "withdraw" else 1
    for never in ("o2", "o0", "o01", "x", ""):
        with pytest.raises(NotFound) as e:
            GAME.act(gone, who, {kind: {"offer": never}})
        assert (e.value.code, e.value.field, e.value.rule) == ("lookup/not_found", f"{kind}.offer", "A53")
    with pytest.raises(NotFound) as gone_e:  # made and gone: the same answer, or a player would learn of
        GAME.act(gone, who, {kind: {"offer": "o1"}})  # offers made between others (A84)
    assert (gone_e.value.field, gone_e.value.rule) == (f"{kind}.offer", "A53")
    assert str(gone_e.value).split(": ", 2)[2].startswith("no pending offer 'o1'")


def test_a53_a_chat_message_and_an_offer_to_oneself_are_the_same_error() -> None:
    st = state(THREE, [], stocks={"0": {"wood": 3}})
    got = []
    for action in ({"chat": {"text": "me", "to": 0}}, {"offer": {"to": 0, "give": {"wood": 1}, "get": {"iron": 1}}}):
        with pytest.raises(GameError) as e:
            GAME.act(st, 0, action)
        got.append((e.value.code, e.value.rule, e.value.field))
    assert got == [("order/invalid", "A53", "chat.to"), ("order/invalid", "A53", "offer.to")]
