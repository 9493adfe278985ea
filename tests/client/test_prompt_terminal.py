"""The prompt_toolkit terminal (client.terminal.PromptTerminal) fed by a pipe of keys: a prompt that is
abandoned (the round closed while the player typed) runs nothing and keeps what was typed for the next
prompt; completion offers the UI's words; Ctrl-D and Ctrl-C leave."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from client.terminal import ABANDONED, Leave, PromptTerminal

WAIT_S = 10.0


@pytest.fixture
def keys() -> Iterator[Any]:
    with create_pipe_input() as pipe:
        yield pipe


async def typed(term: PromptTerminal, text: str) -> None:
    """Until the line being typed reads ``text`` (the buffer tells every change)."""
    buffer = term._session.default_buffer
    changed = asyncio.Event()

    def on_change(_: object) -> None:
        changed.set()

    buffer.on_text_changed += on_change
    try:
        async with asyncio.timeout(WAIT_S):
            while buffer.text != text:
                changed.clear()
                await changed.wait()
    finally:
        buffer.on_text_changed -= on_change


async def test_an_abandoned_prompt_runs_nothing_and_keeps_the_typed_text(keys: Any) -> None:
    term = PromptTerminal(input=keys, output=DummyOutput())
    ask = asyncio.ensure_future(term.ask("orders> "))
    keys.send_text("build rank")
    await typed(term, "build rank")
    term.abandon()  # the round closed: a notice, a new prompt
    async with asyncio.timeout(WAIT_S):
        assert await ask == ABANDONED
    again = asyncio.ensure_future(term.ask("orders> "))
    await typed(term, "build rank")  # the new prompt starts with it, not run
    keys.send_text("1\r")
    async with asyncio.timeout(WAIT_S):
        assert await again == "build rank1"  # only the player's own Enter sent it


async def test_an_abandon_before_the_prompt_runs_is_not_lost(keys: Any) -> None:
    term = PromptTerminal(input=keys, output=DummyOutput())
    ask = asyncio.ensure_future(term.ask("orders> "))
    await asyncio.sleep(0)  # the task started: the prompt's application is not running yet
    term.abandon()
    async with asyncio.timeout(WAIT_S):
        assert await ask == ABANDONED


async def test_completion_offers_the_uis_words(keys: Any) -> None:
    term = PromptTerminal(input=keys, output=DummyOutput())
    term.words = lambda before: ["move", "show"] if not before else (["a", "b"] if before == ["move"] else [])
    ask = asyncio.ensure_future(term.ask("orders> "))
    keys.send_text("sh\t")
    await typed(term, "show")
    keys.send_text(" \x7f\x7f\x7f\x7f\x7fmove b\r")
    async with asyncio.timeout(WAIT_S):
        assert await ask == "move b"


@pytest.mark.parametrize(("key", "how"), [("\x04", "eof"), ("\x03", "interrupt")])
async def test_ctrl_d_and_ctrl_c_leave(keys: Any, key: str, how: str) -> None:
    term = PromptTerminal(input=keys, output=DummyOutput())
    ask = asyncio.ensure_future(term.ask("orders> "))
    keys.send_text(key)
    with pytest.raises(Leave) as left:
        async with asyncio.timeout(WAIT_S):
            await ask
    assert left.value.how == how
