"""A bound on a stretch of async test code that says, when it is exceeded, where every task waited.

pytest-timeout's dump shows the threads only: an awaited call that never ends shows as the event
loop's ``select``. ``bounded`` fails first, with the stacks of the loop's tasks (the test's own await
shows in the TimeoutError's traceback)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator


def tasks_text() -> str:
    """Every task of the running loop with where it waits."""
    out = io.StringIO()
    for task in asyncio.all_tasks():
        task.print_stack(limit=12, file=out)
    return out.getvalue()


@contextlib.asynccontextmanager
async def bounded(seconds: float, what: str) -> AsyncIterator[None]:
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        raise AssertionError(f"{what}: not done within {seconds:g} s; the loop's tasks:\n{tasks_text()}") from None
