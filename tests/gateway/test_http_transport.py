"""The HTTP port's transport (issue 19): a response leaves in one write and a kept-alive connection
has no delayed-ACK stall. Before, uvicorn's h11 protocol wrote the headers, then the body, on a
socket with Nagle's algorithm on (the listening socket had proto 0, so asyncio never set
TCP_NODELAY): every request after the first on a connection took ~44 ms more than its work."""

from __future__ import annotations

import asyncio
import socket
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.http import build_app, uvicorn_config


class RecordingTransport(asyncio.Transport):
    """A stand-in transport that records each write (what would be one ``send`` each)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.wrote = asyncio.Event()
        self.closed = False
        self.protocol: Any = None

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.wrote.set()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.protocol  # type: ignore[no-any-return]


async def _health() -> dict[str, object]:
    return {}


def _app() -> Any:
    app = build_app(_health)
    app.state.api = None
    return app


async def test_a_response_leaves_in_one_write() -> None:
    from uvicorn.server import ServerState

    config = uvicorn_config(_app())
    config.load()
    protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = RecordingTransport()
    transport.protocol = protocol
    protocol.connection_made(transport)
    for path in (b"/livez", b"/v1/Nope/Nothing"):  # a JSON answer and a JSON error, on one connection
        transport.writes.clear()
        transport.wrote.clear()
        protocol.data_received(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        async with asyncio.timeout(5):
            while not (b"\r\n\r\n{" in (out := b"".join(transport.writes)) and out.endswith(b"}")):
                await transport.wrote.wait()
                transport.wrote.clear()
        sent = [w for w in transport.writes if w]
        assert len(sent) == 1, sent  # status line, headers and body together
        assert sent[0].startswith(b"HTTP/1.1 ")
    protocol.connection_lost(None)


@pytest.fixture
async def server() -> AsyncIterator[tuple[int, Any]]:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, as uvicorn's own and older ours
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    web = uvicorn.Server(uvicorn_config(_app()))
    task = asyncio.get_running_loop().create_task(web.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not web.started:
            await asyncio.sleep(0.01)
    yield sock.getsockname()[1], web
    web.should_exit = True
    await task


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    writer.write(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    return head + await reader.readexactly(length)


async def test_accepted_connections_have_no_delay_and_keep_alive_requests_do_not_stall(
        server: tuple[int, Any]) -> None:
    port, web = server
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    times = []
    for _ in range(7):
        start = time.perf_counter()
        assert b'"status":"alive"' in await _request(reader, writer)
        times.append(time.perf_counter() - start)
    (conn,) = web.server_state.connections
    sock = conn.transport.get_extra_info("socket")
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    # a delayed ACK is ~40 ms: the old code took ~44 ms for each request after the first
    assert statistics.median(times[1:]) < 0.02, times
    writer.close()
