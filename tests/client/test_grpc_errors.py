"""A gRPC refusal reads as the same ApiError the JSON door gives (issue 27: one error table, one shape on
every door): its code's own HTTP status from engine/errors.py's WIRE — order/illegal 422, too large 413 —
and, for a status with no known code (a transport's), the status's general one."""

from __future__ import annotations

import grpc
import pytest
from grpc.aio import AioRpcError, Metadata

from client.grpc_client import api_error
from engine.errors import WIRE, GameError, IllegalOrder, InvalidOrder, NotFound, TooLarge


def refusal(status: grpc.StatusCode, code: str = "") -> AioRpcError:
    trailers = Metadata(("error-code", code), ("error-field", "f"), ("error-rule", "S1")) if code else Metadata()
    return AioRpcError(status, Metadata(), trailers, details="f: rule S1: why")


@pytest.mark.parametrize("cls", [InvalidOrder, IllegalOrder, TooLarge, NotFound])
def test_a_known_code_has_its_own_http_status(cls: type[GameError]) -> None:
    wire = WIRE[cls]
    err = api_error(refusal(getattr(grpc.StatusCode, wire.status), cls.code))
    assert (err.status, err.code, err.field, err.rule, err.http_status) == (wire.status, cls.code, "f", "S1", wire.http)


def test_an_unknown_code_has_its_status_general_http_status() -> None:
    assert api_error(refusal(grpc.StatusCode.UNAVAILABLE)).http_status == 503
    assert api_error(refusal(grpc.StatusCode.INVALID_ARGUMENT)).http_status == 400
    assert api_error(refusal(grpc.StatusCode.DATA_LOSS)).http_status == 500
