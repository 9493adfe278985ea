"""The gateway → shard stream (services/hop.py) over real loopback TCP: framing, the token, answers
out of order, a broken stream failing what waits on it, bounded frames."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest

from services.hop import MAX_FRAME, HopClient, HopLost, HopServer, pack, unpack


def internal_error(exc: BaseException) -> dict[str, Any]:
    return {"type": "Internal", "code": "server/internal", "reason": type(exc).__name__}


class Shard:
    """A handler that answers each call with its arguments; a call ``("wait", [name])`` waits for its
    event, so batches can be made to finish in any order."""

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.seen: list[Any] = []
        self.arrived = asyncio.Event()

    async def __call__(self, calls: list[Any]) -> list[dict[str, Any]]:
        out = []
        for method, args, _carrier in calls:
            self.seen.append(method)
            self.arrived.set()
            if method == "reply_unsendable":
                out.append({"ok": object()})
                continue
            if method == "wait":
                await self.gates.setdefault(args[0], asyncio.Event()).wait()
            out.append({"ok": {"method": method, "args": args}})
        return out


async def test_hop_frames_carry_plain_data_both_ways_big_ints_and_int_keys_included() -> None:
    value = {"n": 2**80, "m": -(2**70), 3: "int key", "list": [1, (2, 3)], "none": None, "f": 0.5, "b": b"\x00\xff"}
    back = unpack(pack(value)[4:])
    assert back == {"n": 2**80, "m": -(2**70), 3: "int key", "list": [1, [2, 3]], "none": None, "f": 0.5,
                    "b": b"\x00\xff"}
    with pytest.raises(TypeError):
        pack({"x": object()})


async def test_hop_batches_answered_out_of_order_reach_their_callers() -> None:
    shard = Shard()
    server = HopServer(shard, internal_error)
    host, port, token = await server.start("127.0.0.1")
    client = HopClient(token)
    await client.connect(host, port)
    try:
        slow = asyncio.ensure_future(client.send([["wait", ["a"], {}]]))
        fast = await client.send([["submit", ["g1", 0, {"shots": ["A1"]}], {}], ["view", ["g1", 1], {}]])
        assert [r["ok"]["method"] for r in fast] == ["submit", "view"]
        assert fast[0]["ok"]["args"] == ["g1", 0, {"shots": ["A1"]}]
        assert not slow.done(), "the first batch still runs on the shard"
        shard.gates["a"].set()
        assert (await slow)[0]["ok"]["method"] == "wait"
    finally:
        await client.close()
        await server.stop()


async def test_hop_a_wrong_token_is_refused_and_nothing_runs() -> None:
    shard = Shard()
    server = HopServer(shard, internal_error)
    host, port, _token = await server.start("127.0.0.1")
    client = HopClient("0" * 32)
    await client.connect(host, port)
    try:
        with pytest.raises(HopLost):
            await client.send([["submit", ["g1"], {}]])
        assert shard.seen == []
    finally:
        await client.close()
        await server.stop()


async def test_hop_a_stream_that_breaks_fails_every_batch_waiting_and_refuses_new_ones() -> None:
    shard = Shard()
    server = HopServer(shard, internal_error)
    host, port, token = await server.start("127.0.0.1")
    client = HopClient(token)
    await client.connect(host, port)
    waiting = [asyncio.ensure_future(client.send([["wait", [f"w{i}"], {}]])) for i in range(3)]
    while len(shard.seen) < 3:  # (each batch has reached the shard)
        shard.arrived.clear()
        await shard.arrived.wait()
    await server.stop()  # the shard's process "dies": its connections close
    for fut in waiting:
        with pytest.raises(HopLost):
            await fut
    assert client.broken
    with pytest.raises(HopLost):
        await client.send([["view", ["g1", 0], {}]])
    await client.close()


async def test_hop_no_server_at_the_address_is_hoplost_not_a_hang() -> None:
    server = HopServer(Shard(), internal_error)
    host, port, token = await server.start("127.0.0.1")
    await server.stop()
    client = HopClient(token)
    with pytest.raises(HopLost):
        await client.connect(host, port, timeout_s=5.0)
    await client.close()


async def test_hop_an_oversized_frame_closes_the_stream() -> None:
    shard = Shard()
    server = HopServer(shard, internal_error)
    host, port, token = await server.start("127.0.0.1")
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(token.encode() + struct.pack("!I", MAX_FRAME + 1))
    await writer.drain()
    assert await reader.read() == b"", "the shard closed the connection"
    writer.close()
    await server.stop()
    assert shard.seen == []


async def test_hop_a_batch_whose_answer_cannot_be_sent_is_answered_with_an_internal_error_not_left_waiting() -> None:
    shard = Shard()
    server = HopServer(shard, internal_error)
    host, port, token = await server.start("127.0.0.1")
    client = HopClient(token)
    await client.connect(host, port)
    try:
        replies = await asyncio.wait_for(client.send([["reply_unsendable", [], {}], ["view", ["g1", 0], {}]]), 10)
        assert [r["error"]["code"] for r in replies] == ["server/internal", "server/internal"]
        assert (await client.send([["view", ["g1", 0], {}]]))[0]["ok"]["method"] == "view", "the stream goes on"
    finally:
        await client.close()
        await server.stop()
