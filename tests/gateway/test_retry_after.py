"""The wait of ``client/throttled``, machine-readable (issue 19): HTTP ``Retry-After`` and the gRPC
trailer ``retry-after``, whole seconds rounded up, on every refusal of the per-address limits.
Before, the wait was only in the message's prose ("retry in 10 s")."""

from __future__ import annotations

import grpc
import httpx2 as httpx
import pytest

from archipelago.v1 import lobby_pb2
from engine.errors import Throttled
from gateway import errors
from gateway.limits import PEER, Limiter, Limits, Wait
from tests.gateway.test_limits import TIGHT, Clock, Doors, doors, tight  # noqa: F401  (fixtures)


def test_a_refusal_carries_its_wait_in_whole_seconds_rounded_up() -> None:
    clock = Clock()
    limiter = Limiter(Limits(lobby_per_min=60, lobby_burst=1, auth_failures_per_min=7, auth_failures_burst=1),
                      clock=clock)
    PEER.set("10.0.0.1")
    limiter.lobby_call()
    clock.t += 0.25  # 0.75 s to go: 1
    with pytest.raises(Wait) as lobby:
        limiter.lobby_call()
    assert lobby.value.retry_after_s == 1 and "retry in 1 s" in str(lobby.value)
    assert errors.trailers(lobby.value)[-1] == ("retry-after", "1")
    assert errors.http_headers(lobby.value) == {"retry-after": "1"}
    limiter.auth_failed()
    with pytest.raises(Wait) as auth:  # 60/7 = 8.57 s to go: 9
        limiter.before_auth()
    assert auth.value.retry_after_s == 9 and errors.http_headers(auth.value) == {"retry-after": "9"}
    capped = limiter.too_many_lobbies(24 * 3600)
    assert isinstance(capped, Throttled) and errors.http_headers(capped) == {"retry-after": "86400"}
    assert errors.to_dict(capped)["code"] == "client/throttled"


def test_other_errors_have_no_retry_after() -> None:
    err = Throttled("some other refusal", field="client")
    assert errors.http_headers(err) == {} and [k for k, _ in errors.trailers(err)] == [
        "error-code", "error-field", "error-rule"]


async def test_a_throttled_http_answer_has_retry_after(doors: Doors) -> None:  # noqa: F811
    async with httpx.AsyncClient(base_url=doors.http) as http:
        for _ in range(TIGHT.lobby_burst):
            assert (await http.post("/v1/Lobby/ListGames", json={})).status_code == 200
        resp = await http.post("/v1/Lobby/ListGames", json={})
    assert resp.status_code == 429 and resp.json()["error"]["code"] == "client/throttled"
    assert resp.headers.get("retry-after") == "10", resp.headers  # TIGHT: one call every 10 s


async def test_a_throttled_grpc_answer_has_the_retry_after_trailer(doors: Doors) -> None:  # noqa: F811
    async with grpc.aio.insecure_channel(doors.grpc) as channel:
        call = channel.unary_unary("/archipelago.v1.Lobby/ListGames",
                                   request_serializer=lobby_pb2.ListGamesRequest.SerializeToString,
                                   response_deserializer=lobby_pb2.ListGamesResponse.FromString)
        for _ in range(TIGHT.lobby_burst):
            await call(lobby_pb2.ListGamesRequest())
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(lobby_pb2.ListGamesRequest())
    trailers = dict(caught.value.trailing_metadata() or ())
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert trailers.get("error-code") == "client/throttled" and trailers.get("retry-after") == "10", trailers


def test_an_mcp_tool_error_names_the_wait_of_a_throttled_call() -> None:
    from gateway.mcp_door import tool_error

    text = str(tool_error(Wait("too many lobby calls from your address: retry in {s} s", wait_s=2.5, field="client")))
    assert text.startswith("client/throttled (RESOURCE_EXHAUSTED)") and text.endswith("Retry: yes, in 3 s."), text
    assert str(tool_error(Throttled("busy", field="client"))).endswith("Retry: yes, later.")
