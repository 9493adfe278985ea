"""Rendezvous hashing of games over shards (services/placement.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from services.placement import rendezvous

GAMES = [f"game-{i}" for i in range(3000)]


def test_placement_is_deterministic_and_spreads_games_evenly() -> None:
    shards = [f"shard-{i}" for i in range(4)]
    owners = [rendezvous(g, shards) for g in GAMES]
    assert owners == [rendezvous(g, list(reversed(shards))) for g in GAMES]  # order of the list is irrelevant
    counts = Counter(owners)
    assert set(counts) == set(shards)
    assert max(counts.values()) < 1.2 * len(GAMES) / len(shards)


def test_losing_a_shard_moves_only_its_games() -> None:
    shards = [f"shard-{i}" for i in range(5)]
    before = {g: rendezvous(g, shards) for g in GAMES}
    after = {g: rendezvous(g, shards[:-1]) for g in GAMES}
    moved = {g for g in GAMES if before[g] != after[g]}
    assert moved == {g for g in GAMES if before[g] == "shard-4"}


def test_no_shard_is_an_error() -> None:
    with pytest.raises(LookupError):
        rendezvous("g", [])


def test_gateway_caches_are_bounded() -> None:
    from gateway.cache import LRU

    cache: LRU[str, int] = LRU(3)
    for i in range(5):
        cache.put(f"k{i}", i)
    assert cache.get("k0") is None and cache.get("k1") is None
    assert cache.get("k2") == 2  # now the most recent
    cache.put("k5", 5)
    assert cache.get("k3") is None and [cache.get(k) for k in ("k2", "k4", "k5")] == [2, 4, 5]
