"""The generated parts of ``docs/rules/archipelago.md``: every number a player needs, from the engine.

:func:`blocks` maps each part's name to its content (see :mod:`engine.rules_doc` for the markers):
tables (``units``, ``boards``, ``islands``, ``limits``) and inline numbers (``bank_rate``,
``strike_range``, …).  Island counts per player count are read off maps made by the real generator
(:func:`engine.archipelago.mapgen.generate_map`), so they say what the generator does, not what a
comment claims.  Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

from engine.actions import MAX_CHAT_LEN, MAX_CHATS
from engine.archipelago import autopilot, economy, fog, mapgen, rules, standing
from engine.archipelago.board import CENTRE_SIZE
from engine.archipelago.game import DEFAULT_MAX_ROUNDS, MAX_PLAYERS, MIN_PLAYERS
from engine.archipelago.units import RESOURCES, STARTING_STOCK, STARTING_UNITS, TARGETS, UNIT_TYPES, WARSHIPS, UnitType
from engine.rules_doc import counted, table

__all__ = ["blocks", "unit_label"]

#: the seed of the maps the island counts are read from (any seed gives the same counts)
_SEED = 1


def unit_label(type_id: str) -> str:
    """``"Private (rank1)"``: a unit's name and id."""
    return f"{UNIT_TYPES[type_id].name} ({type_id})"


def _strength(t: UnitType) -> str:
    return "–" if t.strength is None else str(t.strength)


def _units() -> str:
    rows = []
    for t in UNIT_TYPES.values():
        cost = counted(t.cost, RESOURCES) if t.buildable else "not buildable"
        name = f"{t.name} ({t.rank})" if t.rank else t.name  # a rank: its Hebrew rank beside the English name
        rows.append((name, f"`{t.id}`", t.domain, _strength(t), t.move, t.sight, cost,
                     t.capacity or "–", t.limit if t.limit is not None else "–"))
    return table(("unit", "id", "domain", "strength", "move", "sight", "cost", "carries", "at most"), rows)


@cache
def _island_counts(players: int) -> tuple[int, int]:
    """(ring islands, centre islands) of a generated map for ``players``."""
    board = mapgen.generate_map(_SEED, players)
    return len(board.islands_of_kind("ring")), len(board.islands_of_kind("centre"))


def _two_centres() -> str:
    """The player counts whose maps have two centre islands, as ``"6–8"``."""
    two = [n for n in range(MIN_PLAYERS, MAX_PLAYERS + 1) if _island_counts(n)[1] == 2]
    assert two and two == list(range(two[0], MAX_PLAYERS + 1)), two
    return f"{two[0]}–{MAX_PLAYERS}"


def _boards() -> str:
    rows = []
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        w, h = mapgen.BOARD_SIZES[n]
        rings, centres = _island_counts(n)
        rows.append((n, f"{w}×{h}", TARGETS[n], rings, centres))
    return table(("players", "board (columns × rows)", "points to win (A5)", "ring islands", "centre islands"),
                 rows)


def _resources_of(kinds: Counter[str], plain: int) -> str:
    parts = [f"{kinds[r]} {r}" for r in RESOURCES if kinds[r]]
    if plain:
        parts.append(f"{plain} plain")
    return ", ".join(parts)


@cache
def _ring_resources() -> int:
    """Resource tiles per ring island (the same on every ring of every map)."""
    board = mapgen.generate_map(_SEED, 4)
    counts = {sum(1 for t in i.tiles if t in board.resources) for i in board.islands_of_kind("ring")}
    assert len(counts) == 1, counts
    return counts.pop()


def _islands() -> str:
    home = Counter(mapgen.HOME_RESOURCES)
    centre = Counter(mapgen.CENTRE_RESOURCES)
    ring_res = _ring_resources()
    rows = [
        ("home (one per player)", mapgen.HOME_SIZE,
         "the base, " + _resources_of(home, mapgen.HOME_SIZE - 1 - len(mapgen.HOME_RESOURCES)), 0),
        ("ring (one per player, between two neighbouring homes)", mapgen.RING_SIZE,
         f"{ring_res} resources (fuel on every other ring), "
         f"{mapgen.RING_SIZE - ring_res - mapgen.RING_PORTS} plain", mapgen.RING_PORTS),
        ("centre", CENTRE_SIZE,
         _resources_of(centre, CENTRE_SIZE - len(mapgen.CENTRE_RESOURCES) - mapgen.CENTRE_PORTS),
         mapgen.CENTRE_PORTS),
    ]
    return table(("island", "tiles", "what the tiles hold", "ports"), rows)


def _limits() -> str:
    rows = [
        ("trade offers you make", f"{economy.MAX_OFFERS} per round", "A53"),
        ("chat messages you send", f"{MAX_CHATS} per round, 1–{MAX_CHAT_LEN} characters each", "A53"),
        ("standing build queue", f"at most {standing.MAX_QUEUE} entries", "A73"),
        ("patrol waypoints", f"{standing.MIN_WAYPOINTS}–{standing.MAX_WAYPOINTS}", "A72"),
        ("standing bank rules", f"at most {standing.MAX_BANK_RULES}", "A74"),
        ("standing accept rules", f"at most {standing.MAX_ACCEPT_RULES}", "A74"),
    ]
    return table(("what", "limit", "rule"), rows)


def _warships() -> str:
    return ", ".join(t.name for t in UNIT_TYPES.values() if t.id in WARSHIPS)


def blocks() -> dict[str, str]:
    """Every generated part of the Archipelago rules, by name."""
    return {
        "units": _units(),
        "boards": _boards(),
        "islands": _islands(),
        "limits": _limits(),
        "min_players": str(MIN_PLAYERS),
        "max_players": str(MAX_PLAYERS),
        "start_units": ", ".join(unit_label(t) for t in STARTING_UNITS),
        "start_stock": counted(STARTING_STOCK, RESOURCES),
        "ring_distance": f"{mapgen.RING_DISTANCE_MIN}–{mapgen.RING_DISTANCE_MAX}",
        "max_rounds": str(DEFAULT_MAX_ROUNDS),
        "bank_rate": str(economy.BANK_RATE),
        "port_rate": str(economy.PORT_RATE),
        "outpost_cost": counted(rules.OUTPOST_COST, RESOURCES),
        "strike_cost": counted(rules.STRIKE_COST, RESOURCES),
        "strike_range": str(rules.STRIKE_RANGE),
        "reveal_range": str(rules.REVEAL_RANGE),
        "outpost_sight": str(fog.OUTPOST_SIGHT),
        "base_sight": str(fog.BASE_SIGHT),
        "flag_score": str(rules.FLAG_SCORE),
        "score_centre": str(rules.SCORE_CENTRE),
        "score_ring": str(rules.SCORE_RING),
        "score_outpost": str(rules.SCORE_OUTPOST),
        "warships": _warships(),
        "max_queue": str(standing.MAX_QUEUE),
        "min_waypoints": str(standing.MIN_WAYPOINTS),
        "max_waypoints": str(standing.MAX_WAYPOINTS),
        "max_move": str(max(t.move for t in UNIT_TYPES.values())),
        "flag_move": str(UNIT_TYPES["flag"].move),
        "attack_range": str(autopilot.ATTACK_RANGE),
        "two_centres": _two_centres(),
    }
