"""The Archipelago map generator (rules A6–A9 of shared/spec/archipelago.md).

Every A9 property is checked for every player count 2..8 over a range of seeds, with its own
breadth-first search written here (not the module's ``sea_distance``), so a bug in the generator's
distance code cannot hide itself.  The golden rendering of ``generate_map(1, 2)`` lives in
``golden/map_seed1_p2.txt``; after an intended change to the generator, regenerate it with::

    .venv/bin/python -m tests.engine.archipelago.test_mapgen --regen
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

from engine.archipelago.board import Board, Island, parse_board
from engine.archipelago.mapgen import generate_map, sea_distance

Tile = tuple[int, int]

PLAYERS = range(2, 9)
#: small seeds plus server-style secrets of 128 bits and more
SEEDS = [*range(24), 2**127 + 987654321, (0xC0FFEE << 128) | 0xFEED, 2**64 - 1]
GOLDEN = Path(__file__).parent / "golden" / "map_seed1_p2.txt"

#: A9, typed from the spec: 26×18, 26×26, 28×28, 32×32, 34×34, 38×38, 40×40 for 2…8 players
SPEC_SIZES = {2: (26, 18), 3: (26, 26), 4: (28, 28), 5: (32, 32), 6: (34, 34), 7: (38, 38),
              8: (40, 40)}


@cache
def gen(seed: int, players: int) -> Board:
    return generate_map(seed, players)


def maps(players: int) -> Iterable[tuple[int, Board]]:
    for seed in SEEDS:
        yield seed, gen(seed, players)


# -- an independent toolbox -------------------------------------------------------------------

def orth(t: Tile) -> list[Tile]:
    x, y = t
    return [(x, y - 1), (x + 1, y), (x, y + 1), (x - 1, y)]


def is_sea(m: Board, t: Tile) -> bool:
    return 0 <= t[0] < m.width and 0 <= t[1] < m.height and t not in m.land


def shore(m: Board, tiles: Iterable[Tile]) -> set[Tile]:
    """Sea tiles orthogonally adjacent to ``tiles``."""
    return {n for t in tiles for n in orth(t) if is_sea(m, n)}


def sea_steps(m: Board, sources: Iterable[Tile]) -> dict[Tile, int]:
    """Fewest orthogonal sea steps from any of ``sources`` to every reachable sea tile."""
    dist = {s: 0 for s in sources}
    queue = list(dist)
    for t in queue:
        for n in orth(t):
            if is_sea(m, n) and n not in dist:
                dist[n] = dist[t] + 1
                queue.append(n)
    return dist


def distance(steps: dict[Tile, int], m: Board, island: Island) -> float:
    """A9 sea distance from the sources of ``steps`` to ``island`` (inf when unreachable)."""
    return min((steps[t] for t in shore(m, island.tiles) if t in steps), default=math.inf)


def groups(land: Iterable[Tile]) -> set[frozenset[Tile]]:
    todo = set(land)
    out: set[frozenset[Tile]] = set()
    while todo:
        start = todo.pop()
        group = {start}
        stack = [start]
        while stack:
            for n in orth(stack.pop()):
                if n in todo:
                    todo.remove(n)
                    group.add(n)
                    stack.append(n)
        out.add(frozenset(group))
    return out


def kinds(m: Board, kind: str) -> list[Island]:
    return [i for i in m.islands if i.kind == kind]


def contents(m: Board, island: Island) -> Counter[str]:
    """What an island's tiles carry: a resource, "port", "base" or "plain"."""
    out: Counter[str] = Counter()
    for t in island.tiles:
        if t in m.ports:
            out["port"] += 1
        elif t in m.resources:
            out[m.resources[t]] += 1
        elif t in m.bases:
            out["base"] += 1
        else:
            out["plain"] += 1
    return out


def home_distances(m: Board) -> list[tuple[float, float, list[float]]]:
    """Per seat: sea distance to the nearest ring, to the nearest centre, and to every ring."""
    out = []
    for seat in range(len(m.bases)):
        steps = sea_steps(m, shore(m, m.home_island(seat).tiles))
        rings = [distance(steps, m, r) for r in kinds(m, "ring")]
        centre = min(distance(steps, m, c) for c in kinds(m, "centre"))
        out.append((min(rings), centre, rings))
    return out


def assert_a9_distances(m: Board, label: str) -> None:
    rows = home_distances(m)
    near_ring = [r for r, _, _ in rows]
    near_centre = [c for _, c, _ in rows]
    assert all(3 <= d <= 5 for d in near_ring), (label, near_ring)
    assert max(near_ring) - min(near_ring) <= 1, (label, near_ring)
    assert max(near_centre) - min(near_centre) <= 1, (label, near_centre)
    assert all(c >= r + 2 for r, c, _ in rows), (label, rows)


# -- A6: the grid --------------------------------------------------------------------------------

SMALL = """
.......
.B#..u.
.#f..W.
.......
..I##..
.......
"""


def test_a6_neighbours_are_orthogonal_in_bounds_in_nesw_order() -> None:
    m = parse_board(SMALL)
    assert (m.width, m.height) == (7, 6)
    assert m.neighbours((3, 2)) == ((3, 1), (4, 2), (3, 3), (2, 2))
    assert m.neighbours((0, 0)) == ((1, 0), (0, 1))  # no N, no W off the board
    assert m.neighbours((6, 5)) == ((6, 4), (5, 5))
    assert m.in_bounds((6, 5)) and not m.in_bounds((7, 5)) and not m.in_bounds((0, -1))


@pytest.mark.parametrize("players", PLAYERS)
def test_a6_board_is_a_rectangle_of_the_a9_size(players: int) -> None:
    for seed, m in maps(players):
        assert (m.width, m.height) == SPEC_SIZES[players], seed
        assert all(m.in_bounds(t) for t in m.land), seed
        rows = m.render().split("\n")
        assert len(rows) == m.height and {len(r) for r in rows} == {m.width}, seed


# -- A7: islands -------------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYERS)
def test_a7_islands_are_distinct_4_connected_groups(players: int) -> None:
    for seed, m in maps(players):
        tiles = [frozenset(i.tiles) for i in m.islands]
        assert groups(m.land) == set(tiles), seed  # each island one group, no two touching
        assert len(set(tiles)) == len(tiles), seed
        assert [i.id for i in m.islands] == list(range(len(m.islands))), seed
        assert all(list(i.tiles) == sorted(i.tiles) for i in m.islands), seed
        for island in m.islands:
            assert all(m.island_of(t) == island for t in island.tiles), seed


@pytest.mark.parametrize("players", PLAYERS)
def test_a7_one_home_and_one_ring_per_player_and_one_or_two_centres(players: int) -> None:
    for seed, m in maps(players):
        homes = kinds(m, "home")
        assert sorted(h.owner or 0 for h in homes) == list(range(players)), seed
        assert all(h.owner is not None for h in homes), seed
        assert all(m.home_island(s).owner == s for s in range(players)), seed
        assert len(kinds(m, "ring")) == players, seed
        assert len(kinds(m, "centre")) == (2 if players >= 6 else 1), seed
        assert all(i.owner is None for i in m.islands if i.kind != "home"), seed
        assert len(m.islands) == len(homes) + len(kinds(m, "ring")) + len(kinds(m, "centre"))


@pytest.mark.parametrize("players", PLAYERS)
def test_a7_every_base_is_a_coastal_tile_of_its_home_island(players: int) -> None:
    for seed, m in maps(players):
        assert len(m.bases) == players, seed
        for seat, base in enumerate(m.bases):
            assert base in m.home_island(seat).tiles, seed
            assert any(is_sea(m, n) for n in orth(base)), seed


# -- A8: resources and ports ------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYERS)
def test_a8_resources_and_ports_sit_on_land_and_ports_on_coasts_of_neutral_islands(players: int) -> None:
    for seed, m in maps(players):
        assert set(m.resources.values()) <= {"wood", "food", "iron", "fuel"}, seed
        assert set(m.ports.values()) <= {"wood", "food", "iron", "fuel"}, seed
        assert set(m.resources) <= m.land and set(m.ports) <= m.land, seed
        assert not set(m.resources) & set(m.ports), seed
        assert not set(m.bases) & (set(m.resources) | set(m.ports)), seed
        for port in m.ports:
            island = m.island_of(port)
            assert island is not None and island.kind in ("ring", "centre"), seed
            assert any(is_sea(m, n) for n in orth(port)), seed


def test_a8_rendering_alphabet_reads_resources_ports_and_bases() -> None:
    m = parse_board(SMALL)
    assert m.bases == ((1, 1),)
    assert m.resources == {(2, 2): "food", (5, 1): "fuel"}
    assert m.ports == {(5, 2): "wood", (2, 4): "iron"}
    assert m.land == {(1, 1), (2, 1), (1, 2), (2, 2), (5, 1), (5, 2), (2, 4), (3, 4), (4, 4)}
    assert [(i.kind, i.owner, len(i.tiles)) for i in m.islands] == [
        ("home", 0, 4), ("ring", None, 3), ("ring", None, 2)]
    assert m.render() == SMALL.strip()


# -- A9: fairness and shape ---------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYERS)
def test_a9_home_islands_have_equal_resources(players: int) -> None:
    expected = Counter({"base": 1, "food": 2, "wood": 2, "iron": 2, "plain": 3})
    for seed, m in maps(players):
        for seat in range(players):
            home = m.home_island(seat)
            assert len(home.tiles) == 10, seed
            assert contents(m, home) == expected, (seed, seat)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_ring_islands_have_five_tiles_two_resources_one_port(players: int) -> None:
    for seed, m in maps(players):
        fuel_rings = 0
        for ring in kinds(m, "ring"):
            assert len(ring.tiles) == 5, seed
            c = contents(m, ring)
            assert c["port"] == 1 and c["base"] == 0, seed
            assert sum(c[r] for r in ("wood", "food", "iron", "fuel")) == 2, seed
            assert c["fuel"] <= 1, seed
            fuel_rings += c["fuel"] > 0
        assert fuel_rings == math.ceil(players / 2), seed  # fuel on every other ring


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_centre_islands_have_nine_tiles_and_the_spec_resources(players: int) -> None:
    expected = Counter({"fuel": 2, "iron": 1, "food": 1, "wood": 1, "port": 2, "plain": 2})
    for seed, m in maps(players):
        for centre in kinds(m, "centre"):
            assert len(centre.tiles) == 9, seed
            assert contents(m, centre) == expected, seed
            assert len({m.ports[t] for t in centre.tiles if t in m.ports}) == 2, seed


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_nearest_ring_is_3_to_5_away_and_equal_for_all_players(players: int) -> None:
    for seed, m in maps(players):
        near_ring = [r for r, _, _ in home_distances(m)]
        assert all(3 <= d <= 5 for d in near_ring), (seed, near_ring)
        assert max(near_ring) - min(near_ring) <= 1, (seed, near_ring)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_nearest_centre_is_equal_for_all_and_2_farther_than_the_ring(players: int) -> None:
    for seed, m in maps(players):
        rows = home_distances(m)
        near_centre = [c for _, c, _ in rows]
        assert max(near_centre) - min(near_centre) <= 1, (seed, near_centre)
        assert all(c >= r + 2 for r, c, _ in rows), (seed, rows)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_each_ring_is_shared_by_two_neighbouring_homes(players: int) -> None:
    """Every ring lies 3–5 from (at least) two homes, every home has two such rings, and these
    ring–home links form one cycle through all homes (rings between neighbours)."""
    for seed, m in maps(players):
        rows = home_distances(m)
        rings = kinds(m, "ring")
        near = {r.id: {s for s in range(players) if 3 <= rows[s][2][k] <= 5}
                for k, r in enumerate(rings)}
        assert all(len(homes) >= 2 for homes in near.values()), (seed, near)
        for seat in range(players):
            mine = [rid for rid, homes in near.items() if seat in homes]
            assert len(mine) >= 2, (seed, seat, near)
            # A9 "fuel on every other ring island": a fuel ring is always among them
            assert any(m.resources.get(t) == "fuel" for rid in mine for t in m.islands[rid].tiles)
        # the links connect all homes (a cycle of neighbours, not separate pairs)
        reached, todo = {0}, [0]
        while todo:
            s = todo.pop()
            for homes in near.values():
                if s in homes:
                    for o in homes - reached:
                        reached.add(o)
                        todo.append(o)
        assert reached == set(range(players)), (seed, near)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_homes_are_farther_from_each_other_than_from_their_rings(players: int) -> None:
    """Beyond A9's letter (the module's HOME_GAP): two homes are at least 6 apart by sea, so a
    ring "between two neighbouring homes" (3–5 from each) is nearer to both than they are."""
    for seed, m in maps(players):
        for seat in range(players):
            steps = sea_steps(m, shore(m, m.home_island(seat).tiles))
            for other in range(seat + 1, players):
                assert distance(steps, m, m.home_island(other)) >= 6, (seed, seat, other)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_every_base_has_two_sea_neighbours(players: int) -> None:
    for seed, m in maps(players):
        for base in m.bases:
            assert sum(is_sea(m, n) for n in orth(base)) >= 2, (seed, base)
            assert len(m.sea_neighbours(base)) >= 2, (seed, base)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_every_island_is_reachable_by_sea_from_every_base(players: int) -> None:
    for seed, m in maps(players):
        for base in m.bases:
            steps = sea_steps(m, [n for n in orth(base) if is_sea(m, n)])
            for island in m.islands:
                assert distance(steps, m, island) < math.inf, (seed, base, island.id)


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_same_seed_and_players_give_the_same_map(players: int) -> None:
    for seed in (SEEDS[0], SEEDS[-3]):
        a, b = generate_map(seed, players), generate_map(seed, players)
        assert a.to_dict() == b.to_dict()
        assert a.render() == b.render() and a.render_islands() == b.render_islands()


@pytest.mark.parametrize("players", PLAYERS)
def test_a9_different_seeds_give_different_maps(players: int) -> None:
    renders = {gen(seed, players).render() for seed in SEEDS}
    assert len(renders) == len(SEEDS)


def test_a9_seed_bits_above_64_matter() -> None:
    low = 0x1234_5678_9ABC_DEF0
    assert generate_map(low, 4).render() != generate_map(low | (1 << 100), 4).render()


@pytest.mark.parametrize("players", [0, 1, 9, True, 2.0, "4"])
def test_a1_player_count_outside_2_to_8_is_refused(players: int) -> None:
    with pytest.raises(ValueError):
        generate_map(1, players)


# -- sea distance, by hand -------------------------------------------------------------------------

DISTANCES = """
............
.B#.........
.##...#####.
......#.....
......#..ww.
......#.....
............
"""


def test_a9_sea_distance_counts_sea_steps_between_shores_around_land() -> None:
    m = parse_board(DISTANCES)
    home, wall, ring = m.islands  # ids: the home, then the rings by smallest tile
    assert home.kind == "home" and set(ring.tiles) == {(9, 4), (10, 4)}
    # the home's shore tile (3, 2) to the wall's shore tile (5, 2)
    assert sea_distance(m, home, wall) == 2
    # to the ring, the wall is in the way (7 steps as the crow flies, (3, 2) to (8, 4)); both ways
    # round take 11: over it (3, 1) -> (11, 1) -> (11, 4), under it (3, 2) -> (6, 6) -> (9, 5)
    assert sea_distance(m, home, ring) == 11
    assert sea_distance(m, ring, home) == 11
    assert sea_distance(m, home, home) == 0


LAKE = """
.........
.B.#####.
...#...#.
...#.#.#.
...#...#.
...#####.
.........
"""


def test_a9_sea_distance_is_zero_for_a_shared_shore_and_none_without_a_sea_path() -> None:
    m = parse_board(LAKE)
    home, pebble, wall = m.islands  # the 1-tile ring, then the 16-tile "centre"
    assert pebble.tiles == ((5, 3),) and len(wall.tiles) == 16 and wall.kind == "centre"
    assert sea_distance(m, home, wall) == 0  # (2, 1) touches both
    assert sea_distance(m, home, pebble) is None  # the pebble lies in a lake
    assert sea_distance(m, pebble, wall) == 0


# -- plain data and text ----------------------------------------------------------------------------

@pytest.mark.parametrize("players", PLAYERS)
def test_map_dict_round_trip_is_exact_and_json(players: int) -> None:
    for seed, m in maps(players):
        d = m.to_dict()
        again = Board.from_dict(json.loads(json.dumps(d)))
        again.validate()
        assert again.to_dict() == d, seed
        assert again.render_islands() == m.render_islands(), seed


@pytest.mark.parametrize("players", PLAYERS)
def test_render_parse_round_trip(players: int) -> None:
    for seed, m in maps(players):
        again = parse_board(m.render())
        assert again.to_dict() == m.to_dict(), seed
        assert again.render_islands() == m.render_islands(), seed


def test_parse_board_takes_seat_order_and_centres_from_arguments() -> None:
    text = """
        ..........
        .#B....B#.
        ..........
        ....##....
        ..........
    """
    m = parse_board(text, bases=[(7, 1), (2, 1)], centres=[(4, 3)])
    assert m.bases == ((7, 1), (2, 1))
    assert m.home_island(0).tiles == ((7, 1), (8, 1))
    assert [i.kind for i in m.islands] == ["home", "home", "centre"]
    assert parse_board(text).bases == ((2, 1), (7, 1))
    assert [i.kind for i in parse_board(text).islands] == ["home", "home", "ring"]


@pytest.mark.parametrize("text, message", [
    ("..\n...", "row 1"),
    ("..\n.x", "row 1, column 1"),
    ("", "empty"),
    (".BB.", "bases"),
])
def test_parse_board_rejects_bad_drawings(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_board(text)


def test_board_validate_rejects_inconsistent_data() -> None:
    d = generate_map(3, 2).to_dict()
    d["bases"][0] = d["bases"][1]
    with pytest.raises(ValueError, match="not on its home island"):
        Board.from_dict(d).validate()
    d = generate_map(3, 2).to_dict()
    d["bases"].pop()
    with pytest.raises(ValueError, match="need home islands of seats"):
        Board.from_dict(d).validate()
    d = generate_map(3, 2).to_dict()
    d["ports"].append(d["resources"][0])
    with pytest.raises(ValueError, match="both a resource and a port"):
        Board.from_dict(d).validate()
    d = generate_map(3, 2).to_dict()
    d["rows"][0] = "#" + d["rows"][0][1:]
    with pytest.raises(ValueError, match="union of the islands"):
        Board.from_dict(d).validate()


def test_golden_map_seed1_p2() -> None:
    m = generate_map(1, 2)
    golden = GOLDEN.read_text()
    assert m.render() + "\n" == golden, "regenerate with: python -m tests.engine.archipelago.test_mapgen --regen"
    # the checked-in drawing is itself an A9 map, judged by this module's own searches
    drawn = parse_board(golden)
    assert drawn.to_dict() == m.to_dict()
    assert_a9_distances(drawn, "golden")


def regenerate() -> None:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(generate_map(1, 2).render() + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    if "--regen" in sys.argv[1:]:
        regenerate()
    else:
        print(__doc__)
