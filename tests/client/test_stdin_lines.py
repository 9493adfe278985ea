"""StdinLines: a plain transcript's lines (`archipelago play` with stdin not a terminal) read inside the
event loop, with no thread (a pipe, as the e2e tests feed stdin, and a regular file, which the loop cannot
watch and which never blocks), cancellable without losing input."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.terminal import StdinLines

WAIT_S = 10.0


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


async def test_lines_from_a_pipe_then_the_end_of_input(pipe: tuple[int, int]) -> None:
    r, w = pipe
    lines = StdinLines(r)
    os.write(w, b"random\nA1 b1")
    async with asyncio.timeout(WAIT_S):
        assert await lines.readline() == "random"
        assert lines._watchable is True  # the loop watched the pipe
        pending = asyncio.ensure_future(lines.readline())  # half a line: waits for the rest
        await asyncio.sleep(0)
        assert not pending.done()
        os.write(w, b" J9\r\n\n")
        assert await pending == "A1 b1 J9"
        assert await lines.readline() == ""  # an empty line is a line (the caller asks again)
        os.write(w, b"tail")
        os.close(w)
        assert await lines.readline() == "tail"
        assert await lines.readline() is None
        assert await lines.readline() is None


async def test_a_cancelled_read_loses_nothing(pipe: tuple[int, int]) -> None:
    r, w = pipe
    lines = StdinLines(r)
    loop = asyncio.get_running_loop()
    pending = asyncio.ensure_future(lines.readline())
    await asyncio.sleep(0)
    pending.cancel()  # the round closed while the player was typing
    with pytest.raises(asyncio.CancelledError):
        await pending
    os.write(w, b"A1 B2\n")
    async with asyncio.timeout(WAIT_S):
        assert await lines.readline() == "A1 B2"
    # nothing stays registered with the loop once no read is pending
    assert not loop.remove_reader(r)
    lines.discard_pending()  # a pipe is not a terminal: typed-ahead input is kept
    os.write(w, b"C3\n")
    async with asyncio.timeout(WAIT_S):
        assert await lines.readline() == "C3"


async def test_a_regular_file_is_read_at_once(tmp_path: Path) -> None:
    path = tmp_path / "answers"
    path.write_bytes(b"random\nA1\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = StdinLines(fd)
        async with asyncio.timeout(WAIT_S):
            assert await lines.readline() == "random"
            assert await lines.readline() == "A1"
            assert await lines.readline() is None
        assert lines._watchable is False  # epoll refused the file: it was read at once
    finally:
        os.close(fd)
