"""A TCP proxy between the browser and the gateway that a test can cut and hold: the network drop of
a real world, made on purpose. ``cut()`` closes the open WebSocket connections (HTTP ones stay);
``hold()`` keeps new connections waiting (no error, no answer) until ``release()``."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any


class Proxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="test-proxy", daemon=True)
        self.open = asyncio.Event()
        self.pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter, bool]] = set()
        self.websockets_seen = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    def _run(self, coro: Any) -> Any:
        fut: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout=10)

    def start(self) -> str:
        self.thread.start()

        async def listen() -> int:
            self.open.set()
            self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            return int(self.server.sockets[0].getsockname()[1])

        self.port = self._run(listen())
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        try:
            await self._forward(reader, writer)
        finally:
            self.tasks.discard(task)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.open.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        first = await reader.read(65536)
        is_ws = first.startswith(b"GET /v1/Game/Watch")
        self.websockets_seen += is_ws
        pair = (writer, up_writer, is_ws)
        self.pairs.add(pair)
        up_writer.write(first)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            self.pairs.discard(pair)

    def cut(self) -> int:
        """Close every open WebSocket connection (both sides, as a dropped network does); how many."""
        async def go() -> int:
            victims = [p for p in self.pairs if p[2]]
            for down, up, _ in victims:
                for w in (down, up):
                    with contextlib.suppress(Exception):
                        w.transport.abort()
            return len(victims)
        return int(self._run(go()))

    def hold(self) -> None:
        self.loop.call_soon_threadsafe(self.open.clear)

    def release(self) -> None:
        self.loop.call_soon_threadsafe(self.open.set)

    def stop(self) -> None:
        async def go() -> None:
            self.open.set()
            if self.server is not None:
                self.server.close()
            for down, up, _ in list(self.pairs):
                for w in (down, up):
                    w.transport.abort()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
        self._run(go())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@contextlib.contextmanager
def proxy_to(url: str) -> Iterator[Proxy]:
    host, port = url.removeprefix("http://").split(":")
    p = Proxy(host, int(port))
    p.start()
    try:
        yield p
    finally:
        p.stop()
