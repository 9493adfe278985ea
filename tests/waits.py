"""A bounded wait on a condition, for tests that run outside an event loop (the browser tests, the
tests that drive a server and a Prometheus from the outside): never a sleep as synchronisation."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def until(check: Callable[[], Any], what: str, timeout_s: float = 20.0, every_s: float = 0.05) -> Any:
    """Call ``check()`` every ``every_s`` until it is truthy and return what it returned; fail the test
    naming ``what`` after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(every_s)


async def until_async(check: Callable[[], Any], what: str, timeout_s: float = 20.0, every_s: float = 0.05) -> Any:
    """:func:`until` inside an event loop: the loop runs on while it waits (the condition is polled,
    never slept on blindly)."""
    import asyncio

    end = time.monotonic() + timeout_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(every_s)
