"""The fuzz tests' session fixtures: the arena of real games (see common.Arena) and an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2 as httpx
import pytest

from tests.conftest import Cluster
from tests.fuzz.common import CALL_TIMEOUT_S, Arena, build_arena


@pytest.fixture(scope="session")
async def arena(cluster: Cluster) -> AsyncIterator[Arena]:
    made = await build_arena(cluster)
    yield made
    await made.close()


@pytest.fixture(scope="session")
async def http(cluster: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=CALL_TIMEOUT_S) as client:
        yield client
