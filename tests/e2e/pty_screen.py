"""A pseudo-terminal of 120×40 for the terminal tests, as tmux gives: a command runs on it, and what it
draws is read back as a screen (``pyte`` emulates the terminal: cursor moves, erases, the cursor
position reports prompt_toolkit asks for).  The test reads the screen and types, as a player does."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import struct
import subprocess
import termios
from collections.abc import Callable, Mapping, Sequence

import pyte

COLS, ROWS = 120, 40
WAIT_S = 60.0


class _Screen(pyte.Screen):
    """pyte's screen, answering the terminal's reports (the cursor position) to the program."""

    def __init__(self, cols: int, rows: int, answer: Callable[[str], None]) -> None:
        super().__init__(cols, rows)
        self._answer = answer

    def write_process_input(self, data: str) -> None:
        self._answer(data)


class PtyProgram:
    """``argv`` on a fresh pty of ``cols``×``rows``; its screen as text."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None, cols: int = COLS,
                 rows: int = ROWS, cwd: str | None = None) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        full_env = dict(os.environ if env is None else env)
        full_env.setdefault("TERM", "xterm")
        full_env["COLUMNS"], full_env["LINES"] = str(cols), str(rows)
        self.proc = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=full_env, cwd=cwd,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.screen = _Screen(cols, rows, self._answer)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()  # everything the program wrote
        self.ended = False
        self.changed = asyncio.Event()
        os.set_blocking(self.master, False)
        asyncio.get_running_loop().add_reader(self.master, self._readable)

    def _answer(self, data: str) -> None:
        try:
            os.write(self.master, data.encode())
        except OSError:
            pass

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return
        except OSError:  # EIO: the program has gone (the pty's other end is closed)
            data = b""
        if not data:
            self.ended = True
            asyncio.get_running_loop().remove_reader(self.master)
        else:
            self.raw += data
            self.stream.feed(data)
        self.changed.set()

    # ------------------------------------------------------------------ reading
    def lines(self) -> list[str]:
        """The screen's rows (right-trimmed)."""
        return [row.rstrip() for row in self.screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines())

    def cursor_line(self) -> str:
        return self.lines()[self.screen.cursor.y]

    async def until(self, pred: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
        """Until ``pred()`` holds on the screen (it is checked at every output)."""
        try:
            async with asyncio.timeout(timeout):
                while not pred():
                    if self.ended:
                        raise AssertionError(f"the program ended before {what}:\n{self.text}")
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise AssertionError(f"not on the screen within {timeout} s: {what}\n{self.text}") from None

    async def shows(self, text: str, timeout: float = WAIT_S) -> None:
        await self.until(lambda: text in self.text, repr(text), timeout)

    # ------------------------------------------------------------------ typing
    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def wait(self, timeout: float = WAIT_S) -> int:
        """The program's exit code."""
        return int(await asyncio.wait_for(asyncio.to_thread(self.proc.wait), timeout))

    def close(self) -> None:
        if not self.ended:
            asyncio.get_running_loop().remove_reader(self.master)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            os.close(self.master)
        except OSError:
            pass
