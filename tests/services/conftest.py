"""Fixtures of the services tests."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest

from services.cluster import RedisProcess
from services.shard import ShardCore
from services.store import Store
from tests.fakes import FakeClock


@pytest.fixture
async def shard(redis_server: RedisProcess) -> AsyncIterator[tuple[ShardCore, FakeClock]]:
    """A ShardCore named "shard-t" on a real redis-server (keys under a prefix of its own), with a fake
    clock; not started (a test fires its deadlines itself)."""
    clock = FakeClock()
    core = ShardCore("shard-t", Store(redis_server.url, prefix=f"sh{secrets.token_hex(4)}:"), now_ms=clock)
    yield core, clock
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.store.close()
