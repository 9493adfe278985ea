"""A bounded cache: every map the gateway keeps of games and secrets forgets its oldest entries."""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Generic, TypeVar

#: entries of each of the gateway's caches (secrets, game kinds, placements): ~250 bytes each
CACHE_ENTRIES = int(os.environ.get("ARCHIPELAGO_GATEWAY_CACHE", "50000"))

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A dict that forgets its least recently used entries beyond ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def pop(self, key: K) -> V | None:
        return self.data.pop(key, None)

    def put(self, key: K, value: V) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.size:
            self.data.popitem(last=False)
