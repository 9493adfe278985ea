"""Engine dicts <-> protobuf messages, through protobuf's own dict mapping and nothing else.

Engine orders, views and events are plain dicts whose keys are the proto field names, so one
``ParseDict`` / ``MessageToDict`` per direction converts them.  Every oneof that varies by game
(options, orders, view, standing) names its member after the game kind, and ``pending`` names it
``<kind>_pending`` (the convention stated in the .proto files): adding a game adds its messages
there and nothing here.

JSON in and out (every JSON door — HTTP, the WebSocket, MCP — uses these two): :func:`parse_json`
checks a request against its message before protobuf reads it, so every malformed input is one
``order/invalid`` naming the field path in the .proto's snake_case names and saying what was
expected; :func:`to_json` writes every field, and the numbers inside ``google.protobuf.Struct``
values (``Update.data``, a view's ``events``) as integers when they are whole — as GetView writes
its typed fields.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
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


def _a(word: str) -> str:
    """``a salvo``, ``an archipelago``, ``an ActRequest``."""
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


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
        raise InvalidOrder(f"options {which!r} do not belong to {_a(req.game)} game", field="options")
    return to_dict(getattr(req, which))


def member_dict(kind: str, req: Message, oneof: str) -> dict[str, Any]:
    """The ``oneof`` member of a request (orders, standing) as a dict; it must be the game's own."""
    which = req.WhichOneof(oneof)
    if which != check_kind(kind):
        raise InvalidOrder(f"this is {_a(kind)} game: send {kind} {oneof}", field=oneof)
    return to_dict(getattr(req, which))


def view_response(v: dict[str, Any]) -> game_pb2.GetViewResponse:
    resp = game_pb2.GetViewResponse(
        game_id=v["game_id"], game=v["game"], version=v["version"], round_version=v["round_version"],
        status=STATUS[v["status"]], round=v["round"], you=v["you"], deadline_unix_ms=v["deadline_unix_ms"],
        deadline_seconds=v["deadline_seconds"], submitted=v["submitted"], code=v["code"],
        seats=v["seats"], expected=v["expected"], seq=v["seq"], autopilot_played=v.get("autopilot_played", False),
        players=[game_pb2.PlayerInfo(**p) for p in v["players"]])
    if v.get("step"):
        json_format.ParseDict(v["step"], resp.step)
    for turn in v.get("autopilot_log", ()):  # {"round", "source", <kind>: orders | {"actions": [...]}}
        json_format.ParseDict(turn, resp.autopilot_log.add())
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
    msg.data.SetInParent()  # present (an empty object) even when the update carries no data
    if u.get("data"):
        msg.data.update(u["data"])
    if u.get("chat"):
        msg.chat.CopyFrom(game_pb2.ChatMessage(**u["chat"]))
    return msg


async def update_messages(stream: AsyncGenerator[dict[str, Any], None]) -> AsyncGenerator[game_pb2.Update, None]:
    """A stream of updates (Watch, Spectate) as Update messages; ``stream`` is closed however this ends."""
    try:
        async for u in stream:
            yield update_message(u)
    finally:
        await stream.aclose()


def summary_message(s: dict[str, Any]) -> lobby_pb2.GameSummary:
    return lobby_pb2.GameSummary(game_id=s["game_id"], game=s["game"], code=s["code"], seats=s["seats"],
                                 taken=s["taken"], status=STATUS[s["status"]],
                                 deadline_seconds=s["deadline_seconds"], host=s["host"], public=s["public"])


def action_dict(req: game_pb2.ActRequest) -> dict[str, Any]:
    which = req.WhichOneof("action")
    if which is None:
        raise InvalidOrder("an action is required (e.g. chat)", field="action")
    member = getattr(req, which)
    out = to_dict(member)
    _whole_numbers(member, out)  # a Value's numbers as the engine checks them: a split [2, 1], not [2.0, 1.0]
    return {which: out}


SPEED_NAMES: dict[int, str] = {lobby_pb2.SPEED_UNSPECIFIED: "fast", lobby_pb2.SPEED_FAST: "fast",
                              lobby_pb2.SPEED_SLOW: "slow"}


def speed_name(value: int) -> str:
    try:
        return SPEED_NAMES[value]
    except KeyError:
        raise InvalidOrder(f"unknown speed {value}", field="speed", rule="A1") from None


# ---------------------------------------------------------------------------------- JSON in and out

_STRUCTS = frozenset({"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"})
#: oneofs whose members are named after the game kind: a field path inside one starts inside the member
#: (``units[0].to``), as the rules' own errors name it
_GAME_ONEOFS = frozenset({"orders", "standing", "options"})
_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1), FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1), FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1), FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_64 = frozenset({FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64,
                 FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64})


def to_json(msg: Message) -> dict[str, Any]:
    """A message in protobuf's JSON mapping as every JSON door sends it: proto field names, every
    field present (defaults included; a message-typed field when set), int64 as strings, enums by
    name, and whole numbers inside Struct values as integers (``"player": 1``, not ``1.0``)."""
    out = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                    always_print_fields_with_no_presence=True)
    _whole_numbers(msg, out)
    return out


def _whole_numbers(msg: Message, out: dict[str, Any]) -> None:
    for fd, value in msg.ListFields():
        if fd.message_type is None or fd.name not in out:
            continue
        if fd.message_type.full_name in _STRUCTS:
            out[fd.name] = _intify(out[fd.name])
        elif fd.message_type.GetOptions().map_entry:
            continue  # (no map of this protocol holds messages)
        elif fd.is_repeated:
            for m, d in zip(value, out[fd.name], strict=True):
                _whole_numbers(m, d)
        else:
            _whole_numbers(value, out[fd.name])


def _intify(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer() and abs(v) <= 2**53:
        return int(v)
    if isinstance(v, dict):
        return {k: _intify(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_intify(x) for x in v]
    return v


def parse_json(raw: bytes | str | dict[str, Any], cls: type[Message]) -> Message:
    """A request message from a JSON body (bytes or text) or an already decoded object.

    Anything malformed is :class:`InvalidOrder` naming the field path in the .proto's snake_case
    names (``archipelago`` members are left out: ``deploy[0].tile.x``, as the rules name it; ``body``
    for the body as a whole) and saying in plain words what was expected — never protobuf's own
    text. Field names may also be given in their lowerCamelCase JSON form (protobuf's JSON mapping
    accepts both); errors always use snake_case."""
    name = cls.DESCRIPTOR.name
    if isinstance(raw, dict):
        obj: Any = raw
    else:
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            raise InvalidOrder(f"the body is not UTF-8 text: send {_a(name)} as a JSON object", field="body") from None
        try:
            obj = json.loads(text or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidOrder(f"the body is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}): "
                               f"send {_a(name)} as a JSON object", field="body") from None
        except RecursionError:
            raise InvalidOrder("the body is JSON nested too deeply", field="body") from None
        except ValueError:  # e.g. an integer of more digits than Python converts (4,300)
            raise InvalidOrder(f"the body is not JSON this server reads (a number too long?): send {_a(name)} "
                               "as a JSON object", field="body") from None
    if not isinstance(obj, dict):
        raise InvalidOrder(f"the body is a JSON object ({_a(name)}), not {_describe(obj)}", field="body")
    _check_message(obj, cls.DESCRIPTOR, "")  # type: ignore[arg-type]
    msg = cls()
    try:
        json_format.ParseDict(obj, msg)
    except (json_format.ParseError, ValueError, TypeError, KeyError, AttributeError):  # not expected after the check
        raise InvalidOrder(f"not a valid {name}: check each field's type against the .proto", field="body") from None
    return msg


def _key(key: Any) -> str:
    """A client's key as a part of a field path: clipped, and quoted when not plain printable text."""
    text = str(key)[:40]
    return text if text.isprintable() and text.strip() == text and text else repr(text)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(v: Any) -> str:
    """A JSON value in plain words, clipped."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) or (isinstance(v, int) and abs(v) < 10**30):
        return f"the number {str(v)[:30]}"
    if isinstance(v, int):
        return "a number of more than 30 digits"
    if isinstance(v, str):
        return f"the string {v[:40]!r}" + ("…" if len(v) > 40 else "")
    if isinstance(v, list):
        return "a list"
    return "an object"


def _field_names(desc: Descriptor) -> str:
    return ", ".join(f.name for f in desc.fields)


def _object(desc: Descriptor) -> str:
    """``an ArchipelagoOptions object (max_rounds, target)``."""
    return f"{_a(desc.name)} object ({_field_names(desc)})"


def _check_message(obj: Any, desc: Descriptor, path: str) -> None:
    if desc.full_name in _STRUCTS:
        if desc.full_name == "google.protobuf.Struct" and not isinstance(obj, dict):
            raise InvalidOrder(f"expected a JSON object, not {_describe(obj)}", field=path or "body")
        if desc.full_name == "google.protobuf.ListValue" and not isinstance(obj, list):
            raise InvalidOrder(f"expected a list, not {_describe(obj)}", field=path or "body")
        return
    if not isinstance(obj, dict):
        raise InvalidOrder(f"expected {_object(desc)}, not {_describe(obj)}", field=path or "body")
    by_json = {f.json_name: f for f in desc.fields}
    chosen: dict[str, str] = {}
    for key, value in obj.items():
        fd = desc.fields_by_name.get(key) or by_json.get(key)
        if fd is None:
            raise InvalidOrder(f"unknown field {str(key)[:40]!r}: {_a(desc.name)} has {_field_names(desc)}",
                               field=_join(path, _key(key)))
        oneof = fd.containing_oneof
        if value is None:
            continue  # null: the field is left unset (protobuf's JSON mapping)
        if oneof is not None:
            other = chosen.setdefault(oneof.name, fd.name)
            if other != fd.name:
                members = ", ".join(f.name for f in oneof.fields)
                raise InvalidOrder(f"give one of {members}, not both {other} and {fd.name}",
                                   field=_join(path, fd.name))
        if oneof is not None and oneof.name in _GAME_ONEOFS and not path:
            _check_field(value, fd, "", member=fd.name)  # inside the game's member: paths as the rules name them
        else:
            _check_field(value, fd, _join(path, fd.name))


def _check_field(value: Any, fd: FieldDescriptor, path: str, member: str = "") -> None:
    where = path or member  # a game-kind member that is not an object is named itself
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        if not isinstance(value, dict):
            raise InvalidOrder(f"expected an object mapping each name to "
                               f"{_what(fd.message_type.fields_by_name['value'])}, not {_describe(value)}", field=where)
        vfd = fd.message_type.fields_by_name["value"]
        for k, v in value.items():
            _check_single(v, vfd, _join(path, _key(k)))
        return
    if fd.is_repeated:
        if not isinstance(value, list):
            raise InvalidOrder(f"expected a list of {_what(fd, plural=True)}, not {_describe(value)}", field=where)
        for i, v in enumerate(value):
            _check_single(v, fd, f"{where}[{i}]")
        return
    if member and fd.message_type is not None and not isinstance(value, dict):
        raise InvalidOrder(f"expected {_object(fd.message_type)}, not {_describe(value)}", field=member)
    _check_single(value, fd, path)


def _what(fd: FieldDescriptor, plural: bool = False) -> str:
    s = "s" if plural else ""
    t = fd.type
    if fd.message_type is not None:
        if fd.message_type.full_name in _STRUCTS:
            return f"JSON value{s}"
        return f"{fd.message_type.name} objects ({_field_names(fd.message_type)})" if plural else \
            _object(fd.message_type)
    if t == FieldDescriptor.TYPE_STRING:
        return f"string{s}" if plural else "a string"
    if t == FieldDescriptor.TYPE_BYTES:
        return f"base64 string{s}" if plural else "a base64 string"
    if t == FieldDescriptor.TYPE_BOOL:
        return "true or false (without quotes)"
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        form = ", as a number or a string of digits" if t in _64 else ""
        return f"whole numbers from {lo} to {hi}{form}" if plural else f"a whole number from {lo} to {hi}{form}"
    if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return f"number{s}" if plural else "a number"
    if t == FieldDescriptor.TYPE_ENUM and fd.enum_type is not None:
        return "one of " + ", ".join(v.name for v in fd.enum_type.values)
    return "a value of its type"


def _check_single(value: Any, fd: FieldDescriptor, path: str) -> None:
    """One value (not a list) of the field ``fd``."""
    if fd.message_type is not None:
        if fd.message_type.full_name == "google.protobuf.Value":
            return
        if value is None and fd.is_repeated:
            raise InvalidOrder(f"expected {_what(fd)}, not null", field=path)
        _check_message(value, fd.message_type, path)
        return
    t = fd.type
    ok: bool
    if t in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        ok = isinstance(value, str)
    elif t == FieldDescriptor.TYPE_BOOL:
        ok = isinstance(value, bool)
    elif t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        n: Any = None
        if isinstance(value, bool):
            n = None
        elif isinstance(value, int):
            n = value
        elif isinstance(value, float) and value.is_integer():
            n = int(value)
        elif isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,30}", value):
            n = int(value)
        ok = n is not None and lo <= n <= hi
    elif t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        if isinstance(value, str):
            try:
                ok = value in ("NaN", "Infinity", "-Infinity") or math.isfinite(float(value))
            except ValueError:
                ok = False
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif t == FieldDescriptor.TYPE_ENUM and fd.enum_type is not None:
        ok = (isinstance(value, str) and value in fd.enum_type.values_by_name) or (
            isinstance(value, int) and not isinstance(value, bool) and value in fd.enum_type.values_by_number)
    else:  # (no other scalar type in this protocol)
        ok = True
    if not ok:
        raise InvalidOrder(f"expected {_what(fd)}, not {_describe(value)}", field=path or "body")
