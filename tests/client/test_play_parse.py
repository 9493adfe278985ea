"""The terminal client's parsers (rule ids: S3 placement, S5 shots) and its deadline label."""

from __future__ import annotations

import time

import pytest

from client.play_base import EmptyLine, deadline_label
from client.play_salvo import parse_placement, parse_shots


def test_S3_random_placement() -> None:
    assert parse_placement("random").random_placement
    assert parse_placement("  R ").random_placement


def test_S3_placement_of_every_ship_with_its_orientation() -> None:
    orders = parse_placement("battleship a1 h, Cruiser C3 V, submarine E5 horizontal,destroyer J1 vertical")
    assert [(p.ship, p.bow, p.vertical) for p in orders.placement] == [
        ("battleship", "A1", False), ("cruiser", "C3", True), ("submarine", "E5", False), ("destroyer", "J1", True)]
    assert not orders.random_placement


@pytest.mark.parametrize("line", ["", "   ", "\t"])
def test_S3_an_empty_placement_line_is_asked_again(line: str) -> None:
    with pytest.raises(EmptyLine):
        parse_placement(line)


def test_S3_an_orientation_other_than_h_or_v_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"got 'x' in 'battleship A1 x'") as err:
        parse_placement("battleship A1 x, cruiser C3 v")
    assert not isinstance(err.value, EmptyLine)


def test_S3_a_placement_part_of_the_wrong_shape_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"'cruiser C3'"):
        parse_placement("battleship A1 h, cruiser C3")


def test_S5_shots_separated_by_spaces_or_commas() -> None:
    assert list(parse_shots("a1 B2,c3 , J10").shots) == ["A1", "B2", "C3", "J10"]


@pytest.mark.parametrize("line", ["", "   ", " , ,", "\t"])
def test_S5_an_empty_shot_line_is_asked_again_not_fired(line: str) -> None:
    with pytest.raises(EmptyLine):
        parse_shots(line)


def test_the_deadline_as_a_clock_time_and_the_seconds_left() -> None:
    deadline = 1_700_000_000_000
    clock = time.strftime("%H:%M:%S %Z", time.localtime(deadline / 1000))  # (local time, its zone named)
    assert deadline_label(3, deadline, now_ms=deadline - 56_500) == f"[round 3 · closes {clock} · 57 s left]"
    assert deadline_label(3, deadline, now_ms=deadline + 5_000) == f"[round 3 · closes {clock} · 0 s left]"
    assert deadline_label(0, 0) == "[round 0]"
