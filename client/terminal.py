"""The terminal of `archipelago play`: where the player reads and types.

Two kinds, the same calls (:class:`Terminal`):

- :class:`PromptTerminal` (a terminal: stdin and stdout are ttys) is built on ``prompt_toolkit``: an
  async prompt with a live bottom toolbar (the round, a countdown that moves every second, the
  player's own status, the players' strip), completion of commands and of names (Tab), and lines
  printed while the player types (chat, offers, a round closed) appear *above* the line being typed,
  which stays as it was: nothing typed is ever run but by the player's own Enter.  A prompt that is
  abandoned (the round closed meanwhile) keeps what was typed: the next prompt starts with it.
  Ctrl-C and Ctrl-D leave (:class:`Leave`).
- :class:`PlainTerminal` (scripts, pipes, tests) prints a readable transcript: each prompt with its
  status label, and the answers read echoed after it; lines come from a :class:`Lines` source.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TextIO

#: what a pending :meth:`Terminal.ask` returns when it is abandoned (:meth:`Terminal.abandon`)
ABANDONED = "\x00abandoned"


class Leave(Exception):
    """The player left: ``how`` is "quit" (the command), "interrupt" (Ctrl-C) or "eof" (Ctrl-D, the end of input)."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


class Lines(Protocol):
    """Where a :class:`PlainTerminal`'s answers come from."""

    # A terminal echoes what is typed; other input is echoed by the client (a readable transcript).
    interactive: bool

    async def readline(self) -> str | None:
        """The next line without its newline, None at the end of input.  Cancellable: nothing typed
        is lost when a pending call is cancelled."""

    def discard_pending(self) -> None:
        """Forget what was typed but not yet entered (a prompt was abandoned)."""


#: completion candidates for the words typed before the one being completed
Words = Callable[[Sequence[str]], Sequence[str]]


class Terminal:
    """What the game loop and the game UIs use."""

    interactive = False

    def __init__(self) -> None:
        self.status: Callable[[], str] = lambda: ""  # the live status (the toolbar)
        self.label: Callable[[], str] = lambda: ""  # a plain transcript's prompt label
        self.words: Words = lambda before: ()

    def say(self, text: str) -> None:
        """Print ``text`` (above the prompt while one waits)."""
        raise NotImplementedError

    def clear(self) -> None:
        """A fresh screen for a new round (a terminal is cleared; a transcript goes on)."""

    async def ask(self, prompt: str) -> str:
        """The player's next line at ``prompt``; ABANDONED when :meth:`abandon` was called meanwhile;
        raises :class:`Leave` when the player leaves (Ctrl-C, Ctrl-D, the end of input)."""
        raise NotImplementedError

    def abandon(self) -> None:
        """Make a pending :meth:`ask` return ABANDONED (what was typed is kept for the next prompt)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Around the whole game."""
        yield


class PlainTerminal(Terminal):
    """A transcript: prompts with their status label, answers echoed (when the input does not echo)."""

    def __init__(self, lines: Lines | None = None, out: TextIO | None = None) -> None:
        super().__init__()
        self.lines: Lines = lines if lines is not None else StdinLines()
        self.out = out or sys.stdout
        self.at_prompt = False
        self.last_prompt = ""
        self._pending: Any = None

    def say(self, text: str) -> None:
        if self.at_prompt:  # a notice while the prompt waits: shown, then the prompt again
            self.out.write("\n" + text + "\n" + self.last_prompt)
        else:
            self.out.write(text + "\n")
        self.out.flush()

    async def ask(self, prompt: str) -> str:
        import asyncio

        label = self.label()
        if self.at_prompt:
            self.out.write("\n")
        self.last_prompt = f"{label} {prompt}" if label else prompt
        self.out.write(self.last_prompt)
        self.out.flush()
        self.at_prompt = True
        read = asyncio.ensure_future(self.lines.readline())
        self._pending = read
        try:
            text = await read
        except asyncio.CancelledError:
            if read.cancelled() and self._pending is None:  # abandoned
                self.lines.discard_pending()
                self.out.write("\n")
                self.at_prompt = False
                return ABANDONED
            raise
        finally:
            self._pending = None
        if text is None:
            self.at_prompt = False
            self.out.write("\n")
            raise Leave("eof")
        if not self.lines.interactive:
            self.out.write(text + "\n")
        self.out.flush()
        self.at_prompt = False
        return text

    def abandon(self) -> None:
        read, self._pending = self._pending, None
        if read is not None and not read.done():
            read.cancel()


class StdinLines:
    """Lines from a file descriptor (a pipe or a regular file) read inside the event loop: readiness
    from ``loop.add_reader``; a descriptor the loop cannot watch (a regular file, /dev/null) never
    blocks and is read at once.  Bytes read go to a buffer owned by this object, so cancelling
    :meth:`readline` never loses input."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.interactive = os.isatty(self.fd)
        self._buf = bytearray()
        self._eof = False
        self._watchable: bool | None = None  # None: not tried yet

    async def readline(self) -> str | None:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[:nl + 1]
                return line.decode(errors="replace").rstrip("\r")
            if self._eof:
                if not self._buf:
                    return None
                rest = bytes(self._buf)
                self._buf.clear()
                return rest.decode(errors="replace").rstrip("\r")
            await self._fill()

    def discard_pending(self) -> None:
        if not self.interactive:
            return  # piped input was written in advance on purpose: keep it
        self._buf.clear()

    def _take(self, data: bytes) -> None:
        if data:
            self._buf += data
        else:
            self._eof = True

    def _read(self) -> bytes:
        try:
            return os.read(self.fd, 65536)
        except BlockingIOError:
            raise
        except OSError:  # e.g. EIO once the terminal hung up: the end of input
            return b""

    async def _fill(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._watchable is False:
            self._take(self._read())  # a regular file: a read never waits
            return
        ready: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if ready.done():
                return
            try:
                self._take(self._read())
            except BlockingIOError:
                return
            ready.set_result(None)

        try:
            loop.add_reader(self.fd, readable)
        except (OSError, ValueError, NotImplementedError):
            self._watchable = False  # epoll refuses regular files and /dev/null
            self._take(self._read())
            return
        self._watchable = True
        try:
            await ready
        finally:
            loop.remove_reader(self.fd)


class PromptTerminal(Terminal):
    """prompt_toolkit: the prompt with its live toolbar; lines printed above it."""

    interactive = True

    def __init__(self, input: Any = None, output: Any = None) -> None:
        """``input``/``output``: prompt_toolkit's (tests); default the terminal."""
        super().__init__()
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.document import Document

        term = self

        class Names(Completer):
            def get_completions(self, document: Document, complete_event: Any) -> Any:
                before = document.text_before_cursor
                words = before.split()
                current = "" if before.endswith(" ") or not words else words[-1]
                done = words if current == "" else words[:-1]
                for w in term.words(done):
                    if w.lower().startswith(current.lower()) and w != current:
                        yield Completion(w, start_position=-len(current))

        self._session: Any = PromptSession(bottom_toolbar=self._toolbar, refresh_interval=1.0, completer=Names(),
                                           complete_while_typing=False, reserve_space_for_menu=4, input=input,
                                           output=output)
        self._asking = False
        self._abandon_pending = False  # abandoned before the prompt's application ran: exit at its start
        self._carry = ""

    def _toolbar(self) -> str:
        return self.status()

    def say(self, text: str) -> None:
        self._write(text + "\n")

    def clear(self) -> None:
        self._write("\x1b[2J\x1b[H")

    def _write(self, text: str) -> None:
        """In order, from the event loop's thread: above a running prompt (prompt_toolkit erases it,
        the text is written, the prompt redrawn; such writes queue behind each other and the prompt's end
        waits for them), else at once. (Not through patch_stdout's thread: between two prompts that
        thread writes on its own schedule, so a new screen's clear and lines could land after the next
        prompt had drawn itself, and the screen scrolled its title away.)"""
        from prompt_toolkit.application import run_in_terminal

        out = self._session.output

        def put() -> None:
            out.write_raw(text)
            out.flush()

        if self._session.app.is_running:
            run_in_terminal(put, in_executor=False)
        else:
            put()

    async def ask(self, prompt: str) -> str:
        default, self._carry = self._carry, ""
        self._asking = True
        self._abandon_pending = False
        try:
            text: str = await self._session.prompt_async(prompt, default=default, pre_run=self._pre_run)
        except KeyboardInterrupt:
            raise Leave("interrupt") from None
        except EOFError:
            raise Leave("eof") from None
        finally:
            self._asking = False
        return text

    def abandon(self) -> None:
        if not self._asking:
            return
        if self._session.app.is_running:
            self._exit()
        else:
            self._abandon_pending = True

    def _pre_run(self) -> None:
        if self._abandon_pending:
            self._abandon_pending = False
            self._exit()

    def _exit(self) -> None:
        self._carry = self._session.default_buffer.text  # kept, never run: the next prompt shows it
        with contextlib.suppress(Exception):  # (already exiting: the line was entered meanwhile)
            self._session.app.exit(result=ABANDONED)

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        from prompt_toolkit.patch_stdout import patch_stdout

        with patch_stdout(raw=True):
            yield


def default_terminal() -> Terminal:
    """A PromptTerminal at a terminal, else a PlainTerminal reading stdin."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        return PromptTerminal()
    return PlainTerminal()


__all__ = ["ABANDONED", "Leave", "Lines", "PlainTerminal", "PromptTerminal", "StdinLines", "Terminal", "Words",
           "default_terminal"]
