"""Engine dicts <-> protobuf messages, through protobuf's own dict mapping and nothing else.

Engine orders, views and events are plain dicts whose keys are the proto field names, so one
``ParseDict`` / ``MessageToDict`` per direction converts them.  Adding a game adds one row to
:data:`GAMES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import archipelago_pb2, game_pb2, lobby_pb2, salvo_pb2
from engine.errors import InvalidOrder


@dataclass(frozen=True)
class GameMessages:
    options_field: str  # CreateGameRequest.options oneof member
    orders_field: str  # SubmitOrdersRequest.orders oneof member
    view_field: str  # GetViewResponse.view oneof member
    pending_field: str  # GetViewResponse.pending oneof member
    orders_type: type[Message]


GAMES: dict[str, GameMessages] = {
    "salvo": GameMessages("salvo", "salvo", "salvo", "salvo_pending", salvo_pb2.SalvoOrders),
    "archipelago": GameMessages("archipelago", "archipelago", "archipelago", "archipelago_pending",
                                archipelago_pb2.ArchipelagoOrders),
}

STATUS = {"lobby": lobby_pb2.GAME_STATUS_LOBBY, "running": lobby_pb2.GAME_STATUS_RUNNING,
          "over": lobby_pb2.GAME_STATUS_OVER}


def to_dict(msg: Message) -> dict[str, Any]:
    """A message as an engine dict: proto field names, unset fields left out."""
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def messages(kind: str) -> GameMessages:
    try:
        return GAMES[kind]
    except KeyError:
        raise InvalidOrder(f"unknown game kind {kind!r}; known: {', '.join(sorted(GAMES))}",
                           field="game") from None


def options_dict(req: lobby_pb2.CreateGameRequest) -> dict[str, Any]:
    gm = messages(req.game)
    which = req.WhichOneof("options")
    if which is None:
        return {}
    if which != gm.options_field:
        raise InvalidOrder(f"options {which!r} do not belong to a {req.game} game", field="options")
    return to_dict(getattr(req, which))


def orders_dict(kind: str, req: game_pb2.SubmitOrdersRequest) -> dict[str, Any]:
    which = req.WhichOneof("orders")
    expected = messages(kind).orders_field
    if which != expected:
        raise InvalidOrder(f"this is a {kind} game: send {expected} orders", field="orders")
    return to_dict(getattr(req, which))




def standing_dict(kind: str, req: game_pb2.SetStandingOrdersRequest) -> dict[str, Any]:
    which = req.WhichOneof("standing")
    if which != kind:
        raise InvalidOrder(f"this is a {kind} game: send {kind} standing orders", field="standing")
    return to_dict(getattr(req, which))


def view_response(v: dict[str, Any]) -> game_pb2.GetViewResponse:
    resp = game_pb2.GetViewResponse(
        game_id=v["game_id"], game=v["game"], version=v["version"], round_version=v["round_version"],
        status=STATUS[v["status"]], round=v["round"], you=v["you"], deadline_unix_ms=v["deadline_unix_ms"],
        deadline_seconds=v["deadline_seconds"], submitted=v["submitted"], code=v["code"],
        seats=v["seats"], expected=v["expected"], seq=v["seq"],
        players=[game_pb2.PlayerInfo(**p) for p in v["players"]])
    gm = GAMES.get(v["game"])
    if gm is not None:
        if "view" in v:
            json_format.ParseDict(v["view"], getattr(resp, gm.view_field))
        if "pending" in v:
            json_format.ParseDict(v["pending"], getattr(resp, gm.pending_field))
        if "standing" in v:
            json_format.ParseDict(v["standing"], getattr(resp, f"{v['game']}_standing"))
    return resp


def update_message(u: dict[str, Any]) -> game_pb2.Update:
    msg = game_pb2.Update(version=u["version"], kind=u["kind"], round=u.get("round", 0), seq=u.get("seq", 0),
                          seat=u.get("seat", -1), event_kind=u.get("event_kind", ""),
                          status=STATUS.get(u.get("status", "")) or lobby_pb2.GAME_STATUS_UNSPECIFIED)
    if u.get("data"):
        msg.data.update(u["data"])
    if u.get("chat"):
        msg.chat.CopyFrom(game_pb2.ChatMessage(**u["chat"]))
    return msg


def summary_message(s: dict[str, Any]) -> lobby_pb2.GameSummary:
    return lobby_pb2.GameSummary(game_id=s["game_id"], game=s["game"], code=s["code"], seats=s["seats"],
                                 taken=s["taken"], status=STATUS[s["status"]],
                                 deadline_seconds=s["deadline_seconds"], host=s["host"], public=s["public"])


def action_dict(req: game_pb2.ActRequest) -> dict[str, Any]:
    which = req.WhichOneof("action")
    if which is None:
        raise InvalidOrder("an action is required (e.g. chat)", field="action")
    return {which: to_dict(getattr(req, which))}


SPEED_NAMES: dict[int, str] = {lobby_pb2.SPEED_UNSPECIFIED: "fast", lobby_pb2.SPEED_FAST: "fast",
                              lobby_pb2.SPEED_SLOW: "slow"}


def speed_name(value: int) -> str:
    try:
        return SPEED_NAMES[value]
    except KeyError:
        raise InvalidOrder(f"unknown speed {value}", field="speed", rule="A1") from None
