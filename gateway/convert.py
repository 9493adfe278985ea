"""Engine dicts <-> protobuf messages, through protobuf's own dict mapping and nothing else.

Engine orders, views and events are plain dicts whose keys are the proto field names, so one
``ParseDict`` / ``MessageToDict`` per direction converts them.  Every oneof that varies by game
(options, orders, view, standing) names its member after the game kind, and ``pending`` names it
``<kind>_pending`` (the convention stated in the .proto files): adding a game adds its messages
there and nothing here.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2
from engine.errors import InvalidOrder

#: the game kinds the protocol knows: the members of SubmitOrdersRequest's ``orders`` oneof
GAMES: frozenset[str] = frozenset(
    f.name for f in game_pb2.SubmitOrdersRequest.DESCRIPTOR.oneofs_by_name["orders"].fields)

STATUS = {"lobby": lobby_pb2.GAME_STATUS_LOBBY, "running": lobby_pb2.GAME_STATUS_RUNNING,
          "over": lobby_pb2.GAME_STATUS_OVER}


def to_dict(msg: Message) -> dict[str, Any]:
    """A message as an engine dict: proto field names, unset fields left out."""
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def check_kind(kind: str) -> str:
    if kind not in GAMES:
        raise InvalidOrder(f"unknown game kind {kind[:20]!r}; known: {', '.join(sorted(GAMES))}",
                           field="game")
    return kind


def options_dict(req: lobby_pb2.CreateGameRequest) -> dict[str, Any]:
    check_kind(req.game)
    which = req.WhichOneof("options")
    if which is None:
        return {}
    if which != req.game:
        raise InvalidOrder(f"options {which!r} do not belong to a {req.game} game", field="options")
    return to_dict(getattr(req, which))


def member_dict(kind: str, req: Message, oneof: str) -> dict[str, Any]:
    """The ``oneof`` member of a request (orders, standing) as a dict; it must be the game's own."""
    which = req.WhichOneof(oneof)
    if which != check_kind(kind):
        raise InvalidOrder(f"this is a {kind} game: send {kind} {oneof}", field=oneof)
    return to_dict(getattr(req, which))


def view_response(v: dict[str, Any]) -> game_pb2.GetViewResponse:
    resp = game_pb2.GetViewResponse(
        game_id=v["game_id"], game=v["game"], version=v["version"], round_version=v["round_version"],
        status=STATUS[v["status"]], round=v["round"], you=v["you"], deadline_unix_ms=v["deadline_unix_ms"],
        deadline_seconds=v["deadline_seconds"], submitted=v["submitted"], code=v["code"],
        seats=v["seats"], expected=v["expected"], seq=v["seq"],
        players=[game_pb2.PlayerInfo(**p) for p in v["players"]])
    kind = v["game"]
    if kind in GAMES:
        for key, field in (("view", kind), ("pending", f"{kind}_pending"), ("standing", f"{kind}_standing")):
            if key in v:
                json_format.ParseDict(v[key], getattr(resp, field))
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
