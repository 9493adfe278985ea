"""Rendezvous (highest-random-weight) hashing of game ids over live shards.

Every gateway computes the same owner for a game from the same shard list; the choice is recorded
in Redis when the game is created, so a game moves only when its shard leaves the cluster's active
set, drained or removed (then it is placed again over the active shards: :mod:`gateway.router`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def weight(game_id: str, shard: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{shard}\x00{game_id}".encode(), digest_size=8).digest(), "big")


def rendezvous(game_id: str, shards: Iterable[str]) -> str:
    """The shard with the highest weight for this game (ties by name)."""
    candidates = list(shards)
    if not candidates:
        raise LookupError("no live shard")
    return max(candidates, key=lambda s: (weight(game_id, s), s))
