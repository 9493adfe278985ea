"""Game-kind helpers for clients.  Convention of the .proto files: in every oneof that varies by game
(`CreateGameRequest.options`, `SubmitOrdersRequest.orders`, `GetViewResponse.view`), the member is
named after the game kind (`salvo`); `GetViewResponse.pending` names it "<kind>_pending"."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import game_pb2


def view_dict(resp: game_pb2.GetViewResponse) -> dict[str, Any]:
    """The game's own view inside a GetViewResponse, as plain data (what the engine's autopilot takes)."""
    which = resp.WhichOneof("view")
    if which is None:
        return {}
    return json_format.MessageToDict(getattr(resp, which), preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


def orders_message(kind: str, orders: dict[str, Any]) -> Message:
    """A game's orders message from plain data (field names as in the .proto)."""
    field = game_pb2.SubmitOrdersRequest.DESCRIPTOR.fields_by_name.get(kind)
    if field is None or field.containing_oneof is None or field.containing_oneof.name != "orders":
        raise ValueError(f"no orders message for game kind {kind!r}")
    msg: Message = getattr(game_pb2.SubmitOrdersRequest(), kind).__class__()
    json_format.ParseDict(orders, msg)
    return msg
