"""A tiny seeded random number generator whose whole state is one integer.

The engine never uses the module-level ``random``: every game state holds an :class:`Rng`, so a
journal of orders replays to the identical state and a state serialises to plain data.
The generator is SplitMix64 (Steele, Lea & Flood 2014): fast, well distributed, 64-bit state.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1


class Rng:
    """SplitMix64. ``Rng(seed)``; ``state`` is the whole state (an int in [0, 2**64))."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        # Fold seeds wider than 64 bits (the server's 128-bit secrets) into the state.
        s = 0
        seed = int(seed)
        while True:
            s ^= seed & _MASK
            seed >>= 64
            if not seed:
                break
            s = (s * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _MASK
        self.state = s

    @classmethod
    def from_state(cls, state: int) -> Rng:
        rng = cls(0)
        rng.state = state & _MASK
        return rng

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def randbelow(self, n: int) -> int:
        """A uniform integer in [0, n) (rejection sampling, no modulo bias)."""
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n

    def randint(self, a: int, b: int) -> int:
        """A uniform integer in [a, b]."""
        return a + self.randbelow(b - a + 1)

    def random(self) -> float:
        """A float in [0, 1)."""
        return (self.next64() >> 11) / float(1 << 53)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.randbelow(len(seq))]

    def shuffle(self, seq: MutableSequence[T]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(seq) - 1, 0, -1):
            j = self.randbelow(i + 1)
            seq[i], seq[j] = seq[j], seq[i]

    def sample(self, seq: Sequence[T], k: int) -> list[T]:
        pool = list(seq)
        self.shuffle(pool)
        return pool[:k]

    def __repr__(self) -> str:
        return f"Rng.from_state({self.state})"
