"""Property-based fuzzing (hypothesis) of every rpc of the gRPC door: raw bytes through a generic
channel (identity serializers), so the requests may be well-typed messages with hostile contents or
malformed protobuf — see :func:`tests.fuzz.common.wire_payload` — with any ``authorization`` metadata.

Each example must get a clear answer (a gRPC status other than UNKNOWN / INTERNAL / UNAVAILABLE, with
the error table's trailers) or a legitimate success; the gateway answers its health check after it;
and a refused call changes no arena game (view and journal, A16). Watch calls only hold the finished
game's secrets, so a valid one ends by itself (its stream closes after ``game_over``). Most examples
aim at one game with one of its secrets (:class:`tests.fuzz.common.Target`), to get past
authentication into the game. No request message holds a ``google.protobuf.Struct`` (``Update.data``
and ``ArchipelagoView.events`` are in answers only): deep nesting goes in as groups nested 10,000 deep
and as a field holding itself 10,000 times (and, on the JSON door, as JSON nested 10,000 and 100,000
deep, at the top or inside an order field).

Budget: ARCHIPELAGO_FUZZ_EXAMPLES examples per rpc (default in common.EXAMPLES), derandomised. A longer
campaign: ``ARCHIPELAGO_FUZZ_EXAMPLES=200 .venv/bin/pytest -q tests/fuzz --hypothesis-show-statistics``.
"""

from __future__ import annotations

import grpc
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from archipelago.v1 import game_pb2
from tests.conftest import Cluster
from tests.fuzz.common import (
    CALL_TIMEOUT_S,
    FUZZ,
    RESPONSE,
    RPCS,
    SERVICE,
    STREAMS,
    Arena,
    check_grpc_error,
    grpc_alive,
    grpc_metadata,
    vocabulary,
    wire_payload,
)

pytestmark = pytest.mark.e2e


async def grpc_call(arena: Arena, name: str, raw: bytes, metadata: tuple[tuple[str, str], ...]) -> None:
    """Send ``raw`` as rpc ``name``'s request; check the answer and that a refusal changed nothing."""
    method = f"/archipelago.v1.{SERVICE[name]}/{name}"
    what = f"{name} {raw[:120]!r} ({len(raw)} bytes) {metadata!r:.200}"
    refused = False
    try:
        if name in STREAMS:  # Watch, Spectate: only finished games stream (a spectator of a running game none)
            stream = arena.channel.unary_stream(method)(raw, metadata=metadata, timeout=CALL_TIMEOUT_S)
            last = None
            async for frame in stream:
                last = game_pb2.Update.FromString(frame)
            assert last is None or last.kind == "game_over", last  # only finished games stream
        else:
            answer = await arena.channel.unary_unary(method)(raw, metadata=metadata, timeout=CALL_TIMEOUT_S)
            RESPONSE[name].FromString(answer)
        event("OK")
    except grpc.aio.AioRpcError as err:
        refused = True
        trailers = dict(err.trailing_metadata() or ())
        event(f"{err.code().name} {trailers.get('error-code', '')} {trailers.get('error-field', '')}")
        check_grpc_error(err, len(raw))
    finally:
        await arena.settle(refused, what)


@pytest.mark.parametrize("name", RPCS)
@FUZZ
@given(data=st.data())
async def test_grpc_fuzz_every_rpc_A3_A16(cluster: Cluster, arena: Arena, name: str, data: st.DataObject) -> None:
    streamable = name not in STREAMS
    target = data.draw(st.sampled_from(arena.targets(streamable=streamable)), label="target")
    raw = data.draw(wire_payload(name, vocabulary(arena, target)), label="request")
    metadata = data.draw(grpc_metadata(target, arena.secrets(streamable=streamable)), label="metadata")
    await grpc_call(arena, name, raw, metadata)
    await grpc_alive(arena)
