"""The JSON door as a client author meets it (issue 19): what it refuses and how it says so, and the
shape of what it sends — plain HTTP and WebSocket frames, no client library in between.

Unit tests of the one parser and renderer (:func:`gateway.convert.parse_json`, :func:`gateway.convert.to_json`,
:func:`gateway.api.bearer`) first, then the same through a real cluster."""

from __future__ import annotations

import contextlib
import json
import secrets
from typing import Any

import httpx2 as httpx
import pytest
import websockets
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archipelago.v1 import game_pb2, lobby_pb2
from engine.errors import InvalidOrder
from gateway import convert, rpc
from gateway.api import bearer
from tests.conftest import Cluster

DIRS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
WAIT_S = 30.0


# ---------------------------------------------------------------------------------- unit: parsing

@pytest.mark.parametrize(("cls", "body", "field", "expected"), [
    (game_pb2.SubmitOrdersRequest, {"archipelago": {"deploy": [{"unit": "a", "tile": "x"}]}},
     "deploy[0].tile", "expected a Tile object (x, y), not the string 'x'"),
    (game_pb2.SubmitOrdersRequest, {"archipelago": {"deploy": [{"unit": "a", "tile": {"x": "q"}}]}},
     "deploy[0].tile.x", "expected a whole number"),
    (game_pb2.SubmitOrdersRequest, {"archipelago": {"units": [{"unit": "a", "pathx": []}]}},
     "units[0].pathx", "unknown field 'pathx': a UnitOrder has unit, path, to, action, target"),
    (game_pb2.SubmitOrdersRequest, {"archipelago": {"units": [{"unit": "a", "path": "NE"}]}},
     "units[0].path", "expected a list of strings, not the string 'NE'"),
    (game_pb2.SubmitOrdersRequest, {"game_id": "g", "version": "abc"}, "version", "expected a whole number"),
    (game_pb2.SubmitOrdersRequest, {"game_id": 5}, "game_id", "expected a string, not the number 5"),
    (game_pb2.SubmitOrdersRequest, {"salvo": {}, "archipelago": {}}, "archipelago",
     "give one of salvo, archipelago, arcmage, not both"),
    (game_pb2.SubmitOrdersRequest, {"salvo": {"placement": [{"ship": "x", "bow": 5}]}}, "placement[0].bow",
     "expected a string"),
    (game_pb2.ActRequest, {"offer": {"give": {"wood": "a"}}}, "offer.give.wood", "expected a whole number"),
    (game_pb2.ActRequest, {"chat": {"text": "hi", "to": 1.5}}, "chat.to", "not the number 1.5"),
    (game_pb2.ActRequest, {"chat": "hi"}, "chat", "expected a ChatAction object (text, to)"),
    (game_pb2.WatchRequest, {"game_id": "g", "afterSeq": "1", "fromVersion": 2}, "fromVersion",
     "a WatchRequest has game_id, after_seq"),
    (lobby_pb2.CreateGameRequest, {"speed": "FASTER"}, "speed",
     "expected one of SPEED_UNSPECIFIED, SPEED_FAST, SPEED_SLOW"),
    (lobby_pb2.CreateGameRequest, {"public": "yes"}, "public", "expected true or false"),
    (lobby_pb2.CreateGameRequest, [1], "body", "the body is a JSON object"),
])
def test_a20_every_parse_error_names_the_snake_case_field_and_what_was_expected(
        cls: Any, body: Any, field: str, expected: str) -> None:
    with pytest.raises(InvalidOrder) as e:
        convert.parse_json(json.dumps(body).encode(), cls)
    assert e.value.field == field
    assert expected in e.value.reason, e.value.reason
    text = str(e.value)
    assert text.startswith(f"{field}: ")
    for raw in ("Failed to parse", "Message type", "Available Fields", "archipelago.v1", "afterSeq"):
        assert raw not in text, text  # none of protobuf's own text, no camelCase


def test_bad_json_and_bad_utf8_are_named_as_the_body() -> None:
    for raw in (b'{"game_id": "x",', b"\xff\xfe", b"[", b'"text"', b'{"game_id": ' + b"1" * 5000 + b"}",
                b"[" * 100_000):
        with pytest.raises(InvalidOrder) as e:
            convert.parse_json(raw, game_pb2.GetViewRequest)
        assert e.value.field == "body" and ("JSON" in e.value.reason or "UTF-8" in e.value.reason), e.value


def test_good_requests_parse_as_protobuf_would() -> None:
    """The check refuses nothing protobuf's JSON mapping accepts from a well-behaved client: 64-bit
    integers as numbers or strings, null as "not set", lowerCamelCase names (as the mapping allows)."""
    body = {"game_id": "g", "version": 7, "idempotencyKey": "k", "draft": None,
            "archipelago": {"units": [{"unit": "a", "to": {"x": 0, "y": 3}}], "bonus": "wood"}}
    msg = convert.parse_json(json.dumps(body), game_pb2.SubmitOrdersRequest)
    assert msg == game_pb2.SubmitOrdersRequest(
        game_id="g", version=7, idempotency_key="k",
        archipelago={"units": [{"unit": "a", "to": {"x": 0, "y": 3}}], "bonus": "wood"})
    assert convert.parse_json(b"", lobby_pb2.RejoinRequest) == lobby_pb2.RejoinRequest()
    assert convert.parse_json({"after_seq": "12"}, game_pb2.WatchRequest) == game_pb2.WatchRequest(after_seq=12)


def _field_names() -> list[str]:
    names: set[str] = set()
    seen: set[str] = set()

    def walk(desc: Any) -> None:
        if desc.full_name in seen:
            return
        seen.add(desc.full_name)
        for f in desc.fields:
            names.update((f.name, f.json_name))
            if f.message_type is not None:
                walk(f.message_type)
    for r in REQUESTS:
        walk(r.DESCRIPTOR)
    return sorted(names)


REQUESTS = [r.request for r in rpc.UNARY.values()] + [game_pb2.WatchRequest]
_keys = st.sampled_from([*_field_names(), "zz"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                     st.text(max_size=5), st.sampled_from(["N", "wood", "o1", "SPEED_FAST", "12", "-3", "1.5", "--5"]))
_values = st.recursive(_scalars, lambda ch: st.one_of(st.lists(ch, max_size=3), st.dictionaries(_keys, ch, max_size=4)),
                       max_leaves=12)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(cls=st.sampled_from(REQUESTS), body=st.dictionaries(_keys, _values, max_size=5))
def test_a20_the_check_agrees_with_protobuf_and_raises_nothing_else(cls: Any, body: dict[str, Any]) -> None:
    """Any JSON object: either the same message protobuf's own parser makes, or InvalidOrder —
    never another exception. (Protobuf itself is laxer in places — it takes ``[]`` or ``""`` for a
    message — which the check refuses, naming the field.) What a correct client sends — the JSON
    mapping of any message protobuf made of it — is always accepted as that message."""
    theirs = cls()
    try:
        json_format.ParseDict(body, theirs)
        accepted = True
    except Exception:  # (protobuf's parser raises several kinds)
        accepted = False
    try:
        ours = convert.parse_json(body, cls)
    except InvalidOrder:
        ours = None
    if ours is not None:
        assert accepted and ours == theirs, body
    if accepted:
        for names in (True, False):  # snake_case, and protobuf's lowerCamelCase
            sent = json_format.MessageToDict(theirs, preserving_proto_field_name=names)
            assert convert.parse_json(json.dumps(sent), cls) == theirs, sent


def test_a3_the_bearer_scheme_is_case_insensitive() -> None:
    """RFC 7235: the auth scheme is case-insensitive; anything else is no secret."""
    for good in ("Bearer s3cret", "bearer s3cret", "BEARER s3cret", "  bearer   s3cret "):
        assert bearer(good) == "s3cret", good
    for bad in (None, "", "Basic s3cret", "Bearers3cret", "s3cret"):
        assert bearer(bad) == "", bad


# ---------------------------------------------------------------------------------- unit: rendering

def test_watch_frames_carry_every_field_and_whole_numbers_as_integers() -> None:
    """One shape on every door: an Update in JSON has every field (``data`` an object even when
    empty) and whole numbers inside ``data`` are integers, as GetView's typed fields are."""
    bare = convert.to_json(convert.update_message({"version": 3, "kind": "joined", "seq": 1, "seat": 0}))
    assert set(bare) == {f.name for f in game_pb2.Update.DESCRIPTOR.fields} - {"chat"}
    assert bare["data"] == {} and bare["event_kind"] == "" and bare["round"] == 0
    event = convert.to_json(convert.update_message({
        "version": 4, "kind": "event", "seq": 2, "seat": -1, "event_kind": "bank", "round": 1,
        "data": {"player": 1, "times": 2, "rate": 4, "give": "wood", "nested": [{"n": 3}], "half": 0.5}}))
    text = json.dumps(event)
    assert '"player": 1,' in text or '"player": 1}' in text
    assert ".0" not in text.replace("0.5", "")
    assert event["data"]["nested"] == [{"n": 3}] and event["data"]["half"] == 0.5
    view = game_pb2.GetViewResponse()
    view.archipelago.events.add().update({"kind": "production", "player": 0, "resources": {"wood": 2}})
    rendered = convert.to_json(view)
    assert rendered["archipelago"]["events"] == [{"kind": "production", "player": 0, "resources": {"wood": 2}}]
    assert json.dumps(rendered["archipelago"]["events"]).count(".0") == 0


# ---------------------------------------------------------------------------------- through a cluster

async def post(http: httpx.AsyncClient, rpc: str, body: dict[str, Any], secret: str = "",
               scheme: str = "Bearer") -> tuple[int, dict[str, Any]]:
    headers = {"authorization": f"{scheme} {secret}"} if secret else {}
    r = await http.post(f"/v1/{rpc}", json=body, headers=headers)
    return r.status_code, r.json()


async def ok(http: httpx.AsyncClient, rpc: str, body: dict[str, Any], secret: str = "") -> dict[str, Any]:
    status, answer = await post(http, rpc, body, secret)
    assert status == 200, answer
    return answer


async def archipelago_game(http: httpx.AsyncClient, seats: int = 2) -> tuple[str, list[str], str]:
    """A started Archipelago game of ``seats`` players: (game id, secrets by seat, code)."""
    made = await ok(http, "Lobby/CreateGame", {"game": "archipelago", "seats": seats, "nickname": "ann",
                                               "deadline_seconds": 60})
    players = [made["secret"]]
    for i in range(1, seats):
        players.append((await ok(http, "Lobby/JoinGame", {"code": made["code"], "nickname": f"p{i}"}))["secret"])
    await ok(http, "Lobby/StartGame", {"game_id": made["game_id"]}, players[0])
    return made["game_id"], players, made["code"]


@contextlib.asynccontextmanager
async def watching(cluster: Cluster, game_id: str, secret: str, after_seq: int = 0) -> Any:
    """A WebSocket Watch stream (the player counts as connected, A17), as raw JSON frames."""
    url = cluster.http_url.replace("http", "ws", 1) + "/v1/Game/Watch"
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"authorization": f"Bearer {secret}", "game_id": game_id,
                                  "after_seq": str(after_seq)}))
        yield ws


async def frame_until(ws: Any, pred: Any) -> dict[str, Any]:
    import asyncio

    async with asyncio.timeout(WAIT_S):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            assert "error" not in frame, frame
            if pred(frame):
                return frame


async def to_round_one(cluster: Cluster, http: httpx.AsyncClient, game_id: str, players: list[str]) -> None:
    """Everyone submits round 0 (the default layout) while connected: the round closes early (A17)."""
    async with contextlib.AsyncExitStack() as stack:
        streams = [await stack.enter_async_context(watching(cluster, game_id, s)) for s in players]
        await frame_until(streams[0], lambda f: f["kind"] == "round_opened")
        for s in players:
            v = await ok(http, "Game/GetView", {"game_id": game_id}, s)
            await ok(http, "Game/SubmitOrders", {"game_id": game_id, "version": v["version"], "archipelago": {}}, s)
        await frame_until(streams[0], lambda f: f["kind"] == "round_opened" and f["round"] == 1)


@pytest.mark.e2e
async def test_a20_a18_a_land_units_path_into_the_sea_is_held_while_to_is_refused(cluster: Cluster) -> None:
    """Settled by the spec (A20): a step onto the wrong terrain is not refused at submission — it is
    found at the resolution, where the unit stops (`held`); a destination (`to`) must be reachable over
    explored terrain to be planned at all (A18), so the same tile as `to` is refused, saying so."""
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        game_id, players, _ = await archipelago_game(http)
        await to_round_one(cluster, http, game_id, players)
        view = (await ok(http, "Game/GetView", {"game_id": game_id}, players[0]))["archipelago"]
        rows = view["rows"]
        mine = {(u["tile"]["x"], u["tile"]["y"]) for u in view["units"]}
        unit, step, sea = next(
            (u, d, (u["tile"]["x"] + dx, u["tile"]["y"] + dy)) for u in view["units"] if u["type"].startswith("rank")
            and "carrier" not in u for d, (dx, dy) in DIRS.items()
            if 0 <= u["tile"]["y"] + dy < len(rows) and 0 <= u["tile"]["x"] + dx < len(rows[0])
            and rows[u["tile"]["y"] + dy][u["tile"]["x"] + dx] == "."
            and (u["tile"]["x"] + dx, u["tile"]["y"] + dy) not in mine)
        v = await ok(http, "Game/GetView", {"game_id": game_id}, players[0])
        to = {"units": [{"unit": unit["id"], "to": {"x": sea[0], "y": sea[1]}}]}
        status, err = await post(http, "Game/SubmitOrders", {"game_id": game_id, "version": v["version"],
                                                              "archipelago": to}, players[0])
        assert status == 422 and (err["error"]["code"], err["error"]["rule"], err["error"]["field"]) == (
            "order/illegal", "A18", "units[0].to")
        # in plain words (issue 22), naming the unit by its type and tile, never its id
        assert err["error"]["message"].endswith(f"a land unit cannot go to sea: ({sea[0]}, {sea[1]}) is sea")
        assert unit["id"] not in err["error"]["message"]
        ack = await ok(http, "Game/SubmitOrders", {"game_id": game_id, "version": v["version"], "archipelago": {
            "units": [{"unit": unit["id"], "path": [step]}]}}, players[0])
        assert ack["submitted"] is True
        async with watching(cluster, game_id, players[0], v["seq"]) as a, watching(cluster, game_id, players[1]):
            v1 = await ok(http, "Game/GetView", {"game_id": game_id}, players[1])
            await ok(http, "Game/SubmitOrders", {"game_id": game_id, "version": v1["version"], "archipelago": {}},
                     players[1])
            held = await frame_until(a, lambda f: f["kind"] == "event" and f["event_kind"] == "held"
                                     and unit["id"] in json.dumps(f["data"]))
        assert held["round"] == 1
        after = (await ok(http, "Game/GetView", {"game_id": game_id}, players[0]))["archipelago"]
        assert next(u for u in after["units"] if u["id"] == unit["id"])["tile"] == unit["tile"]


@pytest.mark.e2e
async def test_a20_parse_and_rule_errors_on_the_door_name_the_same_field_path(cluster: Cluster) -> None:
    """A wrong type (the parser) and a missing coordinate (the rules) of the same order both name
    ``deploy[0].tile…`` in snake_case with a plain reason — never a bare KeyError (``'y'``)."""
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        game_id, players, _ = await archipelago_game(http)
        v = await ok(http, "Game/GetView", {"game_id": game_id}, players[0])
        unit = v["archipelago"]["units"][0]["id"]
        for tile, field, reason in (("x", "deploy[0].tile", "expected a Tile object (x, y), not the string 'x'"),
                                    ({"x": 1}, "deploy[0].tile.y", "y is missing")):
            status, err = await post(http, "Game/SubmitOrders", {"game_id": game_id, "version": v["version"],
                                     "archipelago": {"deploy": [{"unit": unit, "tile": tile}]}}, players[0])
            assert status == 400 and err["error"]["code"] == "order/invalid", err
            assert err["error"]["field"] == field and reason in err["error"]["message"], err
        status, err = await post(http, "Game/GetView", {"gameId": game_id, "after_seq": 1}, players[0])
        assert status == 400 and err["error"]["field"] == "after_seq"
        assert "a GetViewRequest has game_id" in err["error"]["message"]


@pytest.mark.e2e
async def test_a3_lower_case_bearer_is_accepted_on_http_and_the_websocket(cluster: Cluster) -> None:
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        game_id, players, _ = await archipelago_game(http)
        for scheme in ("bearer", "BEARER", "Bearer"):
            status, view = await post(http, "Game/GetView", {"game_id": game_id}, players[0], scheme=scheme)
            assert status == 200 and view["you"] == 0, view
        status, err = await post(http, "Game/GetView", {"game_id": game_id}, players[0], scheme="Basic")
        assert status == 401 and err["error"]["code"] == "auth/unauthenticated"
        url = cluster.http_url.replace("http", "ws", 1) + "/v1/Game/Watch"
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps({"authorization": f"bearer {players[1]}", "game_id": game_id}))
            assert json.loads(await ws.recv())["kind"] == "joined"


@pytest.mark.e2e
async def test_a53_offer_ids_unknown_offers_and_offers_to_oneself(cluster: Cluster) -> None:
    """An offer's answer carries its id (also when replayed); accepting an id never made is
    ``lookup/not_found``, and so is one made and gone (withdrawn): the two are one answer (A53);
    an offer or a chat message to oneself is the same ``order/invalid`` (field ``<kind>.to``, A53)."""
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        game_id, (ann, bob), _ = await archipelago_game(http)
        await to_round_one(cluster, http, game_id, [ann, bob])
        offer = {"to": 1, "give": {"food": 1}, "get": {"wood": 1}}
        first = await ok(http, "Game/Act", {"game_id": game_id, "idempotency_key": "o-1", "offer": offer}, ann)
        assert first["offer_id"] and first["replayed"] is False
        again = await ok(http, "Game/Act", {"game_id": game_id, "idempotency_key": "o-1", "offer": offer}, ann)
        assert again == {**first, "replayed": True}
        bob_view = (await ok(http, "Game/GetView", {"game_id": game_id}, bob))["archipelago"]
        assert [o["id"] for o in bob_view["offers"]] == [first["offer_id"]]
        chat = await ok(http, "Game/Act", {"game_id": game_id, "chat": {"text": "hi"}}, ann)
        assert chat["offer_id"] == ""
        status, err = await post(http, "Game/Act", {"game_id": game_id, "accept": {"offer": "o999"}}, bob)
        assert status == 404 and (err["error"]["code"], err["error"]["field"], err["error"]["rule"]) == (
            "lookup/not_found", "accept.offer", "A53"), err
        await ok(http, "Game/Act", {"game_id": game_id, "withdraw": {"offer": first["offer_id"]}}, ann)
        status, err = await post(http, "Game/Act", {"game_id": game_id, "accept": {"offer": first["offer_id"]}}, bob)
        assert status == 404 and err["error"]["code"] == "lookup/not_found", err
        assert err["error"]["message"].startswith(f"accept.offer: rule A53: no pending offer '{first['offer_id']}'")
        answers = []
        for action in ({"chat": {"text": "me", "to": 0}}, {"offer": {**offer, "to": 0}}):
            status, err = await post(http, "Game/Act", {"game_id": game_id, **action}, ann)
            answers.append((status, err["error"]["code"], err["error"]["rule"], err["error"]["field"]))
        assert answers == [(400, "order/invalid", "A53", "chat.to"), (400, "order/invalid", "A53", "offer.to")]


@pytest.mark.e2e
async def test_a4_start_with_autopilot_takes_every_seat_and_a_retried_start_answers_the_same(
        cluster: Cluster) -> None:
    """``GameSummary.taken`` counts filled seats, autopilot seats included (3 of 3 after a start that
    filled two); the host's StartGame sent again answers the same summary and changes nothing."""
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        made = await ok(http, "Lobby/CreateGame", {"game": "archipelago", "seats": 3, "nickname": "ann",
                                                   "deadline_seconds": 60})
        summary = await ok(http, "Lobby/StartGame", {"game_id": made["game_id"], "fill_with_autopilot": True},
                           made["secret"])
        assert (summary["seats"], summary["taken"], summary["status"]) == (3, 3, "GAME_STATUS_RUNNING")
        before = await ok(http, "Game/GetView", {"game_id": made["game_id"]}, made["secret"])
        retried = await ok(http, "Lobby/StartGame", {"game_id": made["game_id"], "fill_with_autopilot": True},
                           made["secret"])
        assert retried == summary
        after = await ok(http, "Game/GetView", {"game_id": made["game_id"]}, made["secret"])
        assert after["version"] == before["version"]
        joined = await ok(http, "Lobby/CreateGame", {"game": "salvo", "seats": 2, "nickname": "h",
                                                     "request_id": secrets.token_urlsafe(16)})
        guest = await ok(http, "Lobby/JoinGame", {"code": joined["code"], "nickname": "g"})
        status, err = await post(http, "Lobby/StartGame", {"game_id": joined["game_id"]}, guest["secret"])
        assert status == 403 and err["error"]["code"] == "auth/permission_denied"  # still the host's only
        first = await ok(http, "Lobby/StartGame", {"game_id": joined["game_id"]}, joined["secret"])
        assert first["taken"] == 2 and await ok(http, "Lobby/StartGame", {"game_id": joined["game_id"]},
                                                joined["secret"]) == first


@pytest.mark.e2e
async def test_watch_frames_have_the_shape_of_getview(cluster: Cluster) -> None:
    """The WebSocket's frames: every Update field, ``data`` an object, integers as integers (an
    ``offer`` event's seats and counts), as GetView sends its own fields."""
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=60) as http:
        game_id, (ann, bob), _ = await archipelago_game(http)
        await to_round_one(cluster, http, game_id, [ann, bob])
        await ok(http, "Game/Act", {"game_id": game_id, "offer": {"to": 1, "give": {"food": 1}, "get": {"wood": 2}}},
                 ann)
        async with watching(cluster, game_id, bob) as ws:
            joined = await frame_until(ws, lambda f: f["kind"] == "joined")
            event = await frame_until(ws, lambda f: f["kind"] == "event" and f["event_kind"] == "offer")
    fields = {f.name for f in game_pb2.Update.DESCRIPTOR.fields} - {"chat"}
    assert set(joined) == fields and joined["data"] == {}
    assert set(event) == fields
    assert event["data"]["from"] == 0 and isinstance(event["data"]["from"], int)
    assert event["data"]["to"] == 1 and event["data"]["get"] == {"wood": 2}
