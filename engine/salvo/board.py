"""The Salvo grid and fleets: squares, ship specs, placed ships (rules S1, S2, S3).

A square is named by its column letter and row number, ``"A1"`` (top-left) to ``"J10"``.
Internally a square is also a ``(col, row)`` pair, both 0-based.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.errors import IllegalOrder, InvalidOrder
from engine.rng import Rng

COLUMNS = "ABCDEFGHIJ"
GRID_SIZE = 10

_SQUARE_RE = re.compile(r"([A-Za-z])(0|[1-9][0-9]{0,2})")


def square_name(col: int, row: int) -> str:
    """``square_name(1, 6) == "B7"``."""
    return f"{COLUMNS[col]}{row + 1}"


#: every square, row by row: A1, B1, ..., J1, A2, ..., J10
ALL_SQUARES: tuple[str, ...] = tuple(square_name(c, r) for r in range(GRID_SIZE) for c in range(GRID_SIZE))
_COORDS: dict[str, tuple[int, int]] = {
    sq: (i % GRID_SIZE, i // GRID_SIZE) for i, sq in enumerate(ALL_SQUARES)
}


def coords(square: str) -> tuple[int, int]:
    """``(col, row)`` of a valid square name, both 0-based."""
    return _COORDS[square]


def on_grid(col: int, row: int) -> bool:
    return 0 <= col < GRID_SIZE and 0 <= row < GRID_SIZE


def neighbours(square: str) -> list[str]:
    """The orthogonal neighbours of a square that lie on the grid (up, right, down, left)."""
    col, row = coords(square)
    return [square_name(c, r) for c, r in ((col, row - 1), (col + 1, row), (col, row + 1), (col - 1, row))
            if on_grid(c, r)]


def parse_square(value: object, field: str) -> str:
    """The canonical name of a submitted square (``"b7"`` → ``"B7"``).

    Raises :class:`InvalidOrder` when ``value`` is not a square name at all and :class:`IllegalOrder`
    (rule S1) when it names a square off the grid, such as ``"K1"`` or ``"A11"``."""
    if not isinstance(value, str):
        raise InvalidOrder(f"a square must be a string such as 'B7', not {type(value).__name__}",
                           rule="S1", field=field)
    match = _SQUARE_RE.fullmatch(value)
    if match is None:
        raise InvalidOrder(f"{value!r} is not a square name (a column A–J then a row 1–10, e.g. B7)",
                           rule="S1", field=field)
    letter, row = match.group(1).upper(), int(match.group(2))
    if letter not in COLUMNS or not 1 <= row <= GRID_SIZE:
        raise IllegalOrder(f"square {letter}{row} is off the grid (A–J, 1–10)", rule="S1", field=field)
    return f"{letter}{row}"


@dataclass(frozen=True)
class ShipSpec:
    """A kind of ship in a fleet: its name, length and how many shots it is worth afloat (S4)."""

    name: str
    size: int
    shots: int

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "size": self.size}


#: S2: the fleets a game may be created with, largest ship first
FLEETS: dict[str, tuple[ShipSpec, ...]] = {
    "default": (ShipSpec("battleship", 5, 3), ShipSpec("cruiser", 4, 2),
                ShipSpec("submarine", 3, 1), ShipSpec("destroyer", 2, 1)),
    "variant": (ShipSpec("battleship", 5, 3), ShipSpec("cruiser", 3, 2),
                ShipSpec("destroyer1", 2, 1), ShipSpec("destroyer2", 2, 1)),
}


@dataclass(frozen=True)
class Ship:
    """A placed ship: its name and its squares, bow first."""

    name: str
    squares: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.squares)

    def is_sunk(self, shot: Iterable[str]) -> bool:
        """True when every square of the ship is among the ``shot`` squares (S6)."""
        return set(self.squares) <= set(shot)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "squares": list(self.squares)}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Ship:
        squares = d["squares"]
        assert isinstance(squares, list)
        return cls(name=str(d["name"]), squares=tuple(str(s) for s in squares))

    @classmethod
    def from_bow(cls, name: str, size: int, bow: str, vertical: bool) -> Ship | None:
        """The ship whose top/left square is ``bow``, going down or right; None if it leaves the grid."""
        col, row = coords(bow)
        dc, dr = (0, 1) if vertical else (1, 0)
        cells = [(col + i * dc, row + i * dr) for i in range(size)]
        if not all(on_grid(c, r) for c, r in cells):
            return None
        return cls(name, tuple(square_name(c, r) for c, r in cells))


def random_fleet(spec: tuple[ShipSpec, ...], rng: Rng) -> tuple[Ship, ...]:
    """A uniformly chosen legal position for each ship in turn, largest first (S3)."""
    occupied: set[str] = set()
    ships: list[Ship] = []
    for ship_spec in spec:
        options: list[Ship] = []
        for vertical in (False, True):
            for bow in ALL_SQUARES:
                ship = Ship.from_bow(ship_spec.name, ship_spec.size, bow, vertical)
                if ship is not None and occupied.isdisjoint(ship.squares):
                    options.append(ship)
        chosen = rng.choice(options)
        occupied.update(chosen.squares)
        ships.append(chosen)
    return tuple(ships)
