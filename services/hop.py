"""The gateway → shard hop: a long-lived TCP stream per (gateway process, shard) carrying batches of calls.

Ray still places, restarts and schedules the shard actors; a gateway asks a shard actor for its stream's
address once, with a Ray call (:meth:`services.shard.GameShard.hop_address`), connects, and from then on
sends its batches of shard calls on that connection. Measured side by side (``python -m bench.hop_bench``,
README "Performance"), a call alone costs the gateway ~70 µs of CPU on this stream against ~700 µs as an
asyncio Ray actor call, and the round trip ~0.16 ms against ~1.5 ms.

The protocol (both ends are in this repository; nothing else speaks it):

* the client opens the connection and sends the shard's token (32 ASCII hex characters, handed out with the
  address by the Ray call; the shard closes a connection that presents another);
* then each frame, either way, is a 4-byte big-endian length and that many bytes of msgpack:
  ``[seq, [[method, args, trace_carrier], ...]]`` from the gateway, ``[seq, [reply, ...]]`` back, the replies
  in the order of the calls, each ``{"ok": ...}``, ``{"error": {...}}`` or ``{"moved": true}`` exactly as
  the Ray call answered. Batches run concurrently on the shard (at most ``MAX_BATCHES`` per connection);
  their answers may come back in any order, matched by ``seq``.

Arguments and answers are plain data (:mod:`services.shard_api`); msgpack carries tuples as lists, and an
integer beyond 64 bits as an extension. The failure semantics are the Ray call's: a connection that breaks
fails every batch waiting on it with :class:`HopLost`; the router then finds the shard again through Ray
(restarted: a new process, a new address) and sends those batches again — safe, since every shard mutation
is idempotent and every journal append fenced.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack

log = logging.getLogger(__name__)

HEADER = "!I"
TOKEN_BYTES = 32
MAX_FRAME = 64 << 20  # a frame larger than this is a broken peer, not a batch
MAX_BATCHES = 64  # batches a connection may have running on the shard at once
_BIG_INT = 1


def _default(obj: Any) -> Any:
    if isinstance(obj, int):  # (beyond msgpack's 64 bits)
        return msgpack.ExtType(_BIG_INT, str(obj).encode())
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"a shard call carries plain data, not {type(obj).__name__}")


def _ext(code: int, data: bytes) -> Any:
    if code == _BIG_INT:
        return int(data.decode())
    return msgpack.ExtType(code, data)


def pack(obj: Any) -> bytes:
    body: bytes = msgpack.packb(obj, default=_default, use_bin_type=True)
    return struct.pack(HEADER, len(body)) + body


def unpack(body: bytes) -> Any:
    return msgpack.unpackb(body, strict_map_key=False, ext_hook=_ext, raw=False)


async def read_frame(reader: asyncio.StreamReader) -> Any:
    n = struct.unpack(HEADER, await reader.readexactly(4))[0]
    if n > MAX_FRAME:
        raise ConnectionError(f"a frame of {n} bytes (at most {MAX_FRAME})")
    return unpack(await reader.readexactly(n))


class HopLost(ConnectionError):
    """The stream to a shard broke (or could not be opened): the batch may or may not have run."""


Handler = Callable[[list[Any]], Awaitable[list[dict[str, Any]]]]


class HopServer:
    """The shard's end: serves every gateway's connection on the actor's own event loop."""

    def __init__(self, handler: Handler, error: Callable[[BaseException], dict[str, Any]]) -> None:
        """``handler``: a batch's calls → their replies; ``error``: the reply each call of a batch gets when
        the batch itself failed (its answer could not be made or encoded) — a caller is always answered."""
        self.handler = handler
        self.error = error
        self.token = secrets.token_hex(TOKEN_BYTES // 2)
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[None]] = set()
        self.address: tuple[str, int] = ("", 0)

    async def start(self, host: str) -> tuple[str, int, str]:
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, host, 0)
            self.address = (host, int(self._server.sockets[0].getsockname()[1]))
        return self.address[0], self.address[1], self.token

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for t in list(self._conns):
                t.cancel()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        running: set[asyncio.Task[None]] = set()
        room = asyncio.Semaphore(MAX_BATCHES)
        try:
            hello = await reader.readexactly(TOKEN_BYTES)
            if not hmac.compare_digest(hello, self.token.encode()):
                log.warning("hop: a connection presented a wrong token; closed")
                return
            while True:
                seq, calls = await read_frame(reader)
                await room.acquire()
                t = asyncio.get_running_loop().create_task(self._one(writer, int(seq), calls, room))
                running.add(t)
                t.add_done_callback(running.discard)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, msgpack.UnpackException):
            pass  # the gateway went away (or sent garbage): its batches' answers have nowhere to go
        finally:
            for t in running:
                t.cancel()
            self._conns.discard(task)
            writer.close()

    async def _one(self, writer: asyncio.StreamWriter, seq: int, calls: list[Any], room: asyncio.Semaphore) -> None:
        try:
            try:
                frame = pack([seq, await self.handler(calls)])
            except Exception as exc:  # (not a call's refusal — those are replies — but a bug: said, and answered)
                log.exception("hop: a batch of %d call(s) failed", len(calls))
                frame = pack([seq, [{"error": self.error(exc)} for _ in calls]])
            writer.write(frame)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            room.release()


class HopClient:
    """The gateway's end of one shard's stream: batches matched to answers by sequence number."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._waiting: dict[int, asyncio.Future[list[dict[str, Any]]]] = {}
        self._seq = 0
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self.broken = False

    async def connect(self, host: str, port: int, timeout_s: float = 5.0) -> None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
        except (OSError, TimeoutError) as exc:
            self.broken = True
            raise HopLost(f"cannot open the stream to {host}:{port} ({type(exc).__name__})") from exc
        self._reader, self._writer = reader, writer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            import socket

            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.write(self.token.encode())
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while True:
                seq, replies = await read_frame(self._reader)
                fut = self._waiting.pop(int(seq), None)
                if fut is not None and not fut.done():
                    fut.set_result(replies)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # (closed, reset, garbage): every batch waiting fails, to be sent again
            self._fail(HopLost(f"the stream to the shard broke ({type(exc).__name__})"))

    def _fail(self, exc: HopLost) -> None:
        self.broken = True
        waiting, self._waiting = self._waiting, {}
        for fut in waiting.values():
            if not fut.done():
                fut.set_exception(exc)
        if self._writer is not None:
            self._writer.close()

    async def send(self, calls: list[Any]) -> list[dict[str, Any]]:
        if self.broken or self._writer is None:
            raise HopLost("the stream to the shard is closed")
        self._seq += 1
        seq = self._seq
        fut: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        self._waiting[seq] = fut
        try:
            self._writer.write(pack([seq, calls]))
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._fail(HopLost(f"the stream to the shard broke ({type(exc).__name__})"))
        try:
            return await fut
        finally:
            self._waiting.pop(seq, None)

    async def close(self) -> None:
        self.broken = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._fail(HopLost("the stream to the shard was closed"))


__all__ = ["HopClient", "HopLost", "HopServer", "pack", "read_frame", "unpack"]
