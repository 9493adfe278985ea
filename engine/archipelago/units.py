"""The Archipelago unit table (spec table after A10, plus A11).

Every unit type is a frozen :class:`UnitType`.  ``strength`` is ``None`` for the "–" entries
(mines, flag, aircraft), which count as −1 in a duel (A11); mines follow A43 and aircraft A34.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RESOURCES: tuple[str, ...] = ("wood", "food", "iron", "fuel")

LAND = "land"
SEA = "sea"
AIR = "air"


@dataclass(frozen=True)
class UnitType:
    """One row of the unit table.  ``name`` is the English name players read ("Sergeant"); a rank unit
    also has its Hebrew ``rank`` ("Samal"), shown beside the name where the guide uses it."""

    id: str
    name: str
    domain: str  # "land" | "sea" | "air"
    strength: int | None  # None for "–"
    move: int
    sight: int
    cost: dict[str, int] = field(default_factory=dict)
    capacity: int = 0
    limit: int | None = None  # at most this many per player (living and pending)
    buildable: bool = True
    #: the Hebrew rank the guide names a rank unit by (transliterated: "Samal"); None for the others
    rank: str | None = None

    @property
    def duel_strength(self) -> int:
        """Strength in a duel: "–" counts as −1 (A11)."""
        return -1 if self.strength is None else self.strength

    @property
    def is_rank(self) -> bool:
        return self.id.startswith("rank")

    @property
    def is_mine(self) -> bool:
        return self.id in ("landmine", "seamine")

    @property
    def is_flag(self) -> bool:
        return self.id == "flag"

    @property
    def is_air(self) -> bool:
        return self.domain == AIR

    @property
    def is_ship(self) -> bool:
        """A sea unit that is not a mine (rafts and submarines are ships)."""
        return self.domain == SEA and not self.is_mine

    @property
    def is_warship(self) -> bool:
        """May bombard a shore (A37)."""
        return self.id in WARSHIPS

    @property
    def is_carrier(self) -> bool:
        """May take cargo (ships with capacity, the transport plane)."""
        return self.capacity > 0

    @property
    def is_land_unit(self) -> bool:
        """A land-domain unit (includes mines, flags, the naval commando)."""
        return self.domain == LAND


def _c(**kw: int) -> dict[str, int]:
    return {r: kw[r] for r in RESOURCES if kw.get(r)}


_TABLE: tuple[UnitType, ...] = (
    UnitType("rank13", "General", LAND, 13, 1, 1, _c(food=7, iron=7), limit=1, rank="Rav-Aluf"),
    UnitType("rank12", "Major general", LAND, 12, 1, 1, _c(food=6, iron=6), rank="Aluf"),
    UnitType("rank11", "Brigadier general", LAND, 11, 1, 1, _c(food=5, iron=5), rank="Tat-Aluf"),
    UnitType("rank10", "Colonel", LAND, 10, 1, 1, _c(food=5, iron=4), rank="Aluf Mishne"),
    UnitType("rank9", "Lieutenant colonel", LAND, 9, 1, 1, _c(food=4, iron=4), rank="Sgan Aluf"),
    UnitType("rank8", "Major", LAND, 8, 1, 1, _c(food=4, iron=3), rank="Rav Seren"),
    UnitType("rank7", "Captain", LAND, 7, 1, 1, _c(food=3, iron=3), rank="Seren"),
    UnitType("rank6", "Lieutenant", LAND, 6, 1, 1, _c(food=3, iron=2), rank="Segen"),
    UnitType("rank5", "Second lieutenant", LAND, 5, 1, 1, _c(food=2, iron=2), rank="Sagam"),
    UnitType("rank4", "Staff sergeant", LAND, 4, 1, 1, _c(food=2, iron=1), rank="Samar"),
    UnitType("rank3", "Sergeant", LAND, 3, 1, 1, _c(food=1, iron=1), rank="Samal"),
    UnitType("rank2", "Corporal", LAND, 2, 1, 1, _c(food=2), rank="Rabat"),
    UnitType("rank1", "Private", LAND, 1, 1, 1, _c(food=1), rank="Turai"),
    UnitType("commando", "Commando", LAND, 3, 2, 1, _c(food=1, iron=1, fuel=1)),
    UnitType("engineer", "Engineer", LAND, 2, 1, 1, _c(food=1, wood=1)),
    UnitType("scout", "Scout", LAND, 1, 3, 3, _c(food=1)),
    UnitType("spy", "Spy", LAND, 0, 2, 2, _c(food=1, fuel=1)),
    UnitType("navcommando", "Naval commando", LAND, 1, 2, 1, _c(food=1, iron=1, fuel=1)),
    UnitType("landmine", "Land mine", LAND, None, 0, 0, _c(iron=2)),
    UnitType("seamine", "Sea mine", SEA, None, 0, 0, _c(wood=1, iron=2)),
    UnitType("flag", "Flag", LAND, None, 1, 0, {}, limit=1, buildable=False),
    UnitType("saar6", "Sa'ar 6", SEA, 5, 2, 2, _c(wood=4, iron=5, fuel=2), capacity=4, limit=1),
    UnitType("saar5", "Sa'ar 5", SEA, 4, 2, 2, _c(wood=3, iron=4, fuel=1), capacity=3),
    UnitType("saar45", "Sa'ar 4.5", SEA, 3, 2, 2, _c(wood=3, iron=3), capacity=2),
    UnitType("shaldag", "Shaldag", SEA, 2, 3, 2, _c(wood=2, iron=2), capacity=1),
    UnitType("dvora", "Dvora", SEA, 1, 3, 2, _c(wood=2, iron=1), capacity=1),
    UnitType("submarine", "Submarine", SEA, 2, 2, 1, _c(wood=1, iron=2, fuel=1)),
    UnitType("raft", "Raft", SEA, 0, 1, 1, _c(wood=1)),
    UnitType("fighter", "Fighter", AIR, None, 5, 2, _c(iron=2, fuel=2)),
    UnitType("transport", "Transport plane", AIR, None, 4, 2, _c(iron=1, fuel=2), capacity=1),
)

#: unit type id -> UnitType, in table order
UNIT_TYPES: dict[str, UnitType] = {t.id: t for t in _TABLE}

WARSHIPS: frozenset[str] = frozenset({"saar6", "saar5", "saar45", "shaldag", "dvora"})

#: the unit types that take cargo (ships with a capacity, the transport plane: A24, A35)
CARRIERS: frozenset[str] = frozenset(t.id for t in _TABLE if t.is_carrier)

#: the unit types a player may build (A42), in table order
BUILDABLE: tuple[str, ...] = tuple(t.id for t in _TABLE if t.buildable)

#: builds that earn the one-time +1 of A66 (ships bigger than a Dvora, any aircraft)
A66_TYPES: frozenset[str] = frozenset({"shaldag", "saar45", "saar5", "saar6", "submarine",
                                       "fighter", "transport"})

#: the starting units of A13, in order
STARTING_UNITS: tuple[str, ...] = ("flag", "rank1", "rank1", "rank3", "landmine", "dvora")
STARTING_STOCK: dict[str, int] = {"wood": 1, "food": 2, "iron": 0, "fuel": 0}

#: A5 victory targets by player count
TARGETS: dict[int, int] = {2: 10, 3: 11, 4: 12, 5: 14, 6: 15, 7: 17, 8: 18}

MAX_MOVE = max(t.move for t in _TABLE)


def unit_type(type_id: str) -> UnitType:
    """The UnitType of an id; raises KeyError for an unknown one."""
    return UNIT_TYPES[type_id]
