"""The HTTP port's header and idle timeouts (issue 11): slow-header clients are cut off; a WebSocket
is not. A server of its own with short timeouts, on loopback."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import websockets

from gateway.http import build_app, uvicorn_config

HEADER_S, IDLE_S = 0.5, 1.0


@pytest.fixture
async def server() -> AsyncIterator[int]:
    import uvicorn

    async def health() -> dict[str, object]:
        return {}

    app = build_app(health)
    app.state.api = None  # (the Watch endpoint waits for its first frame before it needs the player API)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    web = uvicorn.Server(uvicorn_config(app, header_timeout_s=HEADER_S, idle_timeout_s=IDLE_S))
    task = asyncio.get_running_loop().create_task(web.serve(sockets=[sock]))
    yield sock.getsockname()[1]
    web.should_exit = True
    await task


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sends until it closes the connection (fails if it does not in time)."""
    async with asyncio.timeout(seconds):
        return await reader.read()


async def test_a_connection_that_never_completes_its_headers_is_closed(server: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # ... and the blank line never comes
    await writer.drain()
    loop = asyncio.get_running_loop()
    start = loop.time()
    assert await closed_within(reader, 10) == b""
    assert loop.time() - start >= HEADER_S * 0.9
    writer.close()


async def test_a_silent_connection_is_closed_and_a_kept_alive_one_after_its_idle_time(server: int) -> None:
    _, silent = await asyncio.open_connection("127.0.0.1", server)
    reader, writer = await asyncio.open_connection("127.0.0.1", server)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    answer = await closed_within(reader, 10)  # the answer, then the close when idle
    assert answer.startswith(b"HTTP/1.1 200") and b'"status":"ok"' in answer
    silent_reader = silent.transport.get_protocol()._stream_reader  # type: ignore[attr-defined]
    assert await closed_within(silent_reader, 10) == b""
    writer.close()
    silent.close()


async def test_a_slow_second_request_on_a_kept_alive_connection_is_cut_off(server: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    first = await reader.readuntil(b'"status":"ok"}')
    assert first.startswith(b"HTTP/1.1 200")
    writer.write(b"GET /healthz HTTP/1.1\r\n")  # the next request's headers, never finished
    await writer.drain()
    assert await closed_within(reader, 10) == b""
    writer.close()


async def test_a_websocket_outlives_the_header_timeout(server: int) -> None:
    async with websockets.connect(f"ws://127.0.0.1:{server}/v1/Game/Watch") as ws:
        pong = await ws.ping()
        await asyncio.wait_for(pong, 5)
        await asyncio.sleep(HEADER_S * 3)  # lets the header timer run out: the upgrade must survive it
        pong = await ws.ping()
        await asyncio.wait_for(pong, 5)
