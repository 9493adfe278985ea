"""Property-based fuzzing (hypothesis) of Arcmage's messages through both doors (issue 21): every
member of ArcmageAction with random and garbage fields and any ActRequest.version (Act, aimed at a
running Arcmage game), ArcmageOptions (CreateGame) and ArcmageSeatOptions (JoinGame, aimed at a fresh
lobby each time).

The property, per example: the answer is a legitimate success or a clear refusal — a status of the
error table (never UNKNOWN / INTERNAL / UNAVAILABLE, never a 5xx) that names the field it refuses —
and a refused call changed nothing (the game's version, its journal length in Redis, and the lobby's
seats). A legal action (an example may send one) is applied: the version grows by one. A version out
of [round_version, version] is refused, naming ``version``. A game an accepted CreateGame or
JoinGame made starts and shows its view (its options hold at the start, not only at creation).

Budget: ARCHIPELAGO_FUZZ_EXAMPLES examples per test and door (default in common.EXAMPLES), derandomised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import grpc
import httpx2 as httpx
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import event, given
from hypothesis import strategies as st

from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.base import BaseClient
from engine.arcmage.carddb import FACTIONS
from engine.arcmage.game import STOP_PHASES
from tests.conftest import Cluster
from tests.fuzz.common import (
    CALL_TIMEOUT_S,
    DAY,
    EDGE_FLOATS,
    EDGE_INTS,
    FUZZ,
    GOOD_STATUSES,
    Vocab,
    any_json,
    check_error_body,
    check_grpc_error,
    descriptor,
    json_message,
    pick,
)

pytestmark = pytest.mark.e2e

DOORS = ["grpc", "web"]
MEMBERS = [f.name for f in arcmage_pb2.ArcmageAction.DESCRIPTOR.oneofs_by_name["action"].fields]
MEMBER_CLASS: dict[str, type[Message]] = {
    f.name: getattr(arcmage_pb2, f.message_type.name) for f in descriptor(arcmage_pb2.ArcmageAction).fields
    if f.message_type is not None}
DECKS = ["Brothers in Arms", "Gaian love for life", "brothers in arms", "", "Dragons"]
CARD_NAMES = ["Footsoldier", "footsoldier", "Bearer", "Sanctuary", "Borg's Keep", "Dragon", ""]


@dataclass
class ArcTable:
    """A running 2-seat Arcmage game nobody watches, with a day for every deadline."""

    game_id: str
    secrets: dict[int, str]
    host: BaseClient
    cards: list[str]  # every card id of the game (c1..)


@pytest.fixture(scope="module")
async def arc(cluster: Cluster) -> Any:
    host = cluster.client("grpc")
    stops = [arcmage_pb2.ArcmageStops(phases=["draw"]) for _ in range(2)]
    made = await host.create("arcmage", seats=2, nickname="host", deadline_seconds=DAY,
                             arcmage=arcmage_pb2.ArcmageOptions(stops=stops, turn_seconds=DAY, response_seconds=DAY))
    guest = cluster.client("grpc")
    joined = await guest.join(made.code, "guest")
    await host.start(made.game_id)
    view = await host.view(made.game_id)
    n = len(view.arcmage.cards) + sum(s.hand_count + s.deck_count + s.unbuilt_count for s in view.arcmage.seats)
    yield ArcTable(made.game_id, {0: made.secret, joined.seat: joined.secret}, host,
                   [f"c{i}" for i in range(1, n + 1)])
    await guest.close()
    await host.close()


def vocab(arc: ArcTable | None) -> Vocab:
    cards = arc.cards if arc is not None else ["c1", "c12"]
    ids = [*cards[:4], *cards[-3:], *cards[::9], "c0", "c999", "C1", "c-1", "army", ""]
    strings = {
        "card": ids, "target": ids, "targets": ids, "with": ids, "attackers": ids, "city": ids,
        "to": ["army", *ids[:6]], "faction": [*FACTIONS, "gaian", "", "Orcs"],
        "option": ["draw2", "draw1", "draw0", "draw3", ""], "mode": ["creature", "event", "", "x"],
        "built_in": DECKS, "phases": [*STOP_PHASES, "upkeep", "", "DRAW"], "nickname": ["ann", "bob", " ", "x" * 25],
        "game": ["arcmage", "arcmage", "salvo", "", "ARCMAGE"], "code": [""], "request_id": [""],
        "idempotency_key": ["", "", "k", "k" * 65], "game_id": [arc.game_id if arc is not None else "", "", "x"],
    }
    ints = {"x": [0, 1, 3, -1, 99], "count": [0, 1, 3, 4, -1, 45], "max_rounds": [0, 1, 10_000, 10_001],
            "seats": [1, 2, 3, 4, 5], "version": [0, 1, -1]}
    return Vocab(strings, ints, {}, "arcmage")


def choose_option() -> st.SearchStrategy[Any]:
    """ArcmageChoose.option (a google.protobuf.Value): anything JSON."""
    return st.one_of(st.none(), st.sampled_from(["c1", "c12", "c999", ""]), st.lists(st.integers(-2, 9), max_size=4),
                     any_json())


def arcmage_action(v: Vocab, *, typed: bool) -> st.SearchStrategy[dict[str, Any]]:
    """One member of ArcmageAction with random fields; untyped: anything protobuf's JSON may refuse
    (several members, unknown ones, wrong types)."""
    def member(name: str) -> st.SearchStrategy[dict[str, Any]]:
        body = json_message(descriptor(MEMBER_CLASS[name]), v, typed=typed)
        if name == "choose":
            body = st.builds(lambda b, o: {**b, "option": o}, body, choose_option())
        return body.map(lambda b: {name: b})
    one = st.sampled_from(MEMBERS).flatmap(member)
    if typed:
        return one
    return pick(one, json_message(descriptor(arcmage_pb2.ArcmageAction), v, typed=False),
                st.builds(lambda a, b: {**a, **b}, one, one),
                st.builds(lambda a, junk: {**a, junk: {}}, one, st.sampled_from(["cast", "Pass", "", "chat"])),
                st.sampled_from(MEMBERS).flatmap(lambda m: any_json().map(lambda j: {m: j})))


EDGE_VERSIONS = [-(2**63), 2**63 - 1, 2**31, -1, 0]


def draw_version(data: st.DataObject, now: int, opened: int, *, absent: bool = True) -> int | None:
    """ActRequest.version: none, the game's, one of the turn's (from ``opened``, its round_version),
    older, newer, an edge. (What is drawn never depends on the game's state — hypothesis replays
    examples — only what it means.)"""
    kinds = ["none", "now", "now", "turn", "older", "newer", "edge"] if absent else ["now", "turn", "older", "newer",
                                                                                     "edge"]
    kind = data.draw(st.sampled_from(kinds), label="version kind")
    k = data.draw(st.integers(0, 40), label="version offset")
    return {"none": None, "now": now, "turn": opened + k % (now - opened + 1), "older": opened - 1 - k,
            "newer": now + 1 + k, "edge": EDGE_VERSIONS[k % len(EDGE_VERSIONS)]}[kind]


# ---------------------------------------------------------------------------------------- the doors
@dataclass
class Answer:
    status: str  # "OK" or the gRPC status name
    field: str
    body: dict[str, Any]  # the answer (OK) or the error


async def call(cluster: Cluster, http: httpx.AsyncClient, door: str, service: str, method: str,
               body: dict[str, Any] | bytes, secret: str, response: type[Message]) -> Answer:
    """One rpc through ``door``: gRPC gets the body as its request message (it must parse), the JSON
    door gets it as it is. Checks the answer's form (common.check_grpc_error / check_error_body)."""
    if door == "grpc":
        request = json_format.ParseDict(body, REQUESTS[method]()) if isinstance(body, dict) else None
        raw = request.SerializeToString() if request is not None else bytes(body)  # type: ignore[arg-type]
        async with grpc.aio.insecure_channel(cluster.address) as channel:
            try:
                got = await channel.unary_unary(f"/archipelago.v1.{service}/{method}")(
                    raw, metadata=(("authorization", f"Bearer {secret}"),) if secret else (), timeout=CALL_TIMEOUT_S)
            except grpc.aio.AioRpcError as err:
                check_grpc_error(err, len(raw))
                trailers = {k: v for k, v in (err.trailing_metadata() or ()) if isinstance(v, str)}
                return Answer(err.code().name, trailers.get("error-field", ""), trailers)
        return Answer("OK", "", json_format.MessageToDict(response.FromString(got), preserving_proto_field_name=True))
    content = json.dumps(body).encode() if isinstance(body, dict) else body
    headers = {"authorization": f"Bearer {secret}"} if secret else {}
    resp = await http.post(f"/v1/{service}/{method}", content=content,
                           headers={**headers, "content-type": "application/json"})
    assert resp.status_code < 500 and resp.headers.get("content-type", "").startswith("application/json"), \
        (resp.status_code, resp.text[:300])
    if resp.status_code == 200:
        json_format.ParseDict(resp.json(), response())
        return Answer("OK", "", resp.json())
    check_error_body(resp.json(), resp.status_code)
    e = resp.json()["error"]
    return Answer(e["status"], e["field"], e)


REQUESTS: dict[str, type[Message]] = {"Act": game_pb2.ActRequest, "CreateGame": lobby_pb2.CreateGameRequest,
                                      "JoinGame": lobby_pb2.JoinGameRequest, "StartGame": lobby_pb2.StartGameRequest,
                                      "GetView": game_pb2.GetViewRequest}


def refused_clearly(answer: Answer, what: str) -> None:
    assert answer.status in GOOD_STATUSES, (answer, what)
    assert answer.field, f"the refusal names no field: {answer} {what}"


async def state_of(cluster: Cluster, arc: ArcTable) -> tuple[int, int, int]:
    """The game's version, round version and journal length in Redis."""
    v = await arc.host.view(arc.game_id)
    return v.version, v.round_version, len(await cluster.api.store.journal_read(arc.game_id))


# ---------------------------------------------------------------------------------------- Act
@pytest.mark.parametrize("door", DOORS)
@FUZZ
@given(data=st.data())
async def test_m25_fuzz_every_arcmage_action_and_version_a16(cluster: Cluster, http: httpx.AsyncClient,
                                                            arc: ArcTable, door: str, data: st.DataObject) -> None:
    before = await state_of(cluster, arc)
    view = await arc.host.view(arc.game_id)
    typed = door == "grpc" or data.draw(st.booleans(), label="typed")
    action = data.draw(arcmage_action(vocab(arc), typed=typed), label="action")
    who = data.draw(st.sampled_from([-1, -1, -1, 0, 1]), label="seat (-1: the acting one)")
    seat = view.step.players[0] if who < 0 else who
    version = draw_version(data, before[0], before[1])
    body: dict[str, Any] = {"game_id": arc.game_id, "arcmage": action}
    if version is not None:
        body["version"] = version
    key = data.draw(st.sampled_from(["", "", "fuzz-key", "k" * 65]), label="key")
    if key:
        body["idempotency_key"] = key
    if door == "grpc" and not typed_ok(body, game_pb2.ActRequest):
        return  # (protobuf itself refuses it before anything is sent: nothing to ask the door)
    answer = await call(cluster, http, door, "Game", "Act", body, arc.secrets[seat], game_pb2.ActResponse)
    after = await state_of(cluster, arc)
    what = f"{door} seat {seat} {json.dumps(body)[:300]} -> {answer}"
    event(f"{answer.status} {answer.field}")
    if answer.status != "OK":
        refused_clearly(answer, what)
        assert after == before, f"a refused action changed the game: {what}"
        return
    assert version is None or before[1] <= version <= before[0], f"an action at a version out of the turn: {what}"
    if answer.body.get("replayed"):
        assert after == before, what
    else:
        assert after[0] == after[2] == before[0] + 1 and int(answer.body["version"]) == after[0], what


@pytest.mark.parametrize("door", DOORS)
@FUZZ
@given(data=st.data())
async def test_m25_a16_fuzz_act_version_of_a_legal_action(cluster: Cluster, http: httpx.AsyncClient, arc: ArcTable,
                                                          door: str, data: st.DataObject) -> None:
    """A legal action (from the acting seat's own view) with any ActRequest.version: applied at the
    current version, refused naming ``version`` (ABORTED or INVALID_ARGUMENT) outside the turn's
    versions, and never applied twice."""
    before = await state_of(cluster, arc)
    hv = await arc.host.view(arc.game_id)
    seat = hv.step.players[0]
    view = hv if seat == 0 else await arc.host.with_secret(arc.secrets[seat]).view(arc.game_id)
    legal = [json_format.MessageToDict(a, preserving_proto_field_name=True) for a in view.arcmage.legal]
    assert legal, "the acting seat has a legal action"
    action = legal[data.draw(st.integers(0, 99), label="legal action") % len(legal)]
    version = draw_version(data, before[0], before[1], absent=False)
    assert version is not None
    body = {"game_id": arc.game_id, "arcmage": action, "version": version}
    answer = await call(cluster, http, door, "Game", "Act", body, arc.secrets[seat], game_pb2.ActResponse)
    after = await state_of(cluster, arc)
    what = f"{door} seat {seat} {json.dumps(body)[:300]} -> {answer}"
    event(f"{answer.status} {answer.field}")
    if version == before[0]:
        assert answer.status == "OK" and after[0] == before[0] + 1, what
    elif not before[1] <= version <= before[0]:
        assert answer.status in ("ABORTED", "INVALID_ARGUMENT") and answer.field == "version", what
        assert after == before, what
    elif answer.status != "OK":  # older than the step now open, though of this turn
        assert answer.status == "ABORTED" and answer.field == "version" and after == before, what


# ---------------------------------------------------------------------------------------- CreateGame, JoinGame
def options_json(v: Vocab, *, typed: bool) -> st.SearchStrategy[Any]:
    opts = json_message(descriptor(arcmage_pb2.ArcmageOptions), v, typed=typed)
    seconds = st.one_of(st.sampled_from([x for x in EDGE_FLOATS if x == x and abs(x) != float("inf")]),
                        st.sampled_from(["Infinity", "-Infinity", "NaN", 1.0, 0.5, 30.0]))
    with_seconds = st.builds(lambda o, t, r: {**o, "turn_seconds": t, "response_seconds": r}, opts, seconds, seconds)
    return pick(opts, with_seconds) if typed else pick(opts, with_seconds, any_json())


async def started_view(cluster: Cluster, http: httpx.AsyncClient, door: str, game_id: str, secret: str,
                       what: str) -> None:
    """A game an accepted request made: it starts (filled with the autopilot) and shows a view."""
    started = await call(cluster, http, door, "Lobby", "StartGame", {"game_id": game_id, "fill_with_autopilot": True},
                         secret, lobby_pb2.GameSummary)
    assert started.status == "OK", f"an accepted game does not start: {started} {what}"
    view = await call(cluster, http, door, "Game", "GetView", {"game_id": game_id}, secret, game_pb2.GetViewResponse)
    assert view.status == "OK" and view.body["game"] == "arcmage", f"{view} {what}"


@pytest.mark.parametrize("door", DOORS)
@FUZZ
@given(data=st.data())
async def test_m1_m25_m40_fuzz_arcmage_options_at_create(cluster: Cluster, http: httpx.AsyncClient, door: str,
                                                        data: st.DataObject) -> None:
    typed = door == "grpc" or data.draw(st.booleans(), label="typed")
    options = data.draw(options_json(vocab(None), typed=typed), label="options")
    seats = data.draw(st.one_of(st.integers(1, 5), st.sampled_from(EDGE_INTS[:6])), label="seats")
    body = {"game": "arcmage", "seats": seats, "nickname": "fuzz", "arcmage": options,
            "deadline_seconds": data.draw(st.sampled_from([0, 0, 60, DAY]), label="deadline")}
    if door == "grpc" and not typed_ok(body, lobby_pb2.CreateGameRequest):
        return  # (protobuf itself refuses it before anything is sent: nothing to ask the door)
    answer = await call(cluster, http, door, "Lobby", "CreateGame", body, "", lobby_pb2.CreateGameResponse)
    what = f"{door} {json.dumps(body)[:400]} -> {answer}"
    event(f"{answer.status} {answer.field}")
    if answer.status != "OK":
        refused_clearly(answer, what)
        return
    await started_view(cluster, http, door, answer.body["game_id"], answer.body["secret"], what)


@pytest.mark.parametrize("door", DOORS)
@FUZZ
@given(data=st.data())
async def test_m1_fuzz_arcmage_seat_options_at_join(cluster: Cluster, http: httpx.AsyncClient, door: str,
                                                    data: st.DataObject) -> None:
    v = vocab(None)
    typed = door == "grpc" or data.draw(st.booleans(), label="typed")
    seat_options = data.draw(pick(json_message(descriptor(arcmage_pb2.ArcmageSeatOptions), v, typed=typed),
                                  st.builds(lambda d: {"deck": d}, json_message(descriptor(arcmage_pb2.ArcmageDeck),
                                                                                v, typed=typed))),
                             label="seat options")
    host = cluster.client("grpc")
    try:
        lobby = await host.create("arcmage", seats=3, nickname="host", deadline_seconds=DAY)
        body = {"code": lobby.code, "nickname": data.draw(st.sampled_from(["ann", "ann", "host", ""]), label="nick"),
                "arcmage": seat_options}
        if door == "grpc" and not typed_ok(body, lobby_pb2.JoinGameRequest):
            return
        seats_before = (await host.view(lobby.game_id)).players
        answer = await call(cluster, http, door, "Lobby", "JoinGame", body, "", lobby_pb2.JoinGameResponse)
        what = f"{door} {json.dumps(body)[:400]} -> {answer}"
        event(f"{answer.status} {answer.field}")
        if answer.status != "OK":
            refused_clearly(answer, what)
            assert (await host.view(lobby.game_id)).players == seats_before, what
            return
        assert len((await host.view(lobby.game_id)).players) == len(seats_before) + 1, what
        await started_view(cluster, http, door, lobby.game_id, lobby.secret, what)
    finally:
        await host.close()


def typed_ok(body: dict[str, Any], cls: type[Message]) -> bool:
    """Whether protobuf's JSON parser takes ``body`` as a ``cls`` (a gRPC client can send only that)."""
    try:
        json_format.ParseDict(body, cls())
    except (json_format.ParseError, ValueError, TypeError):
        return False
    return True


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("field,seconds", [("turn_seconds", "Infinity"), ("turn_seconds", 1e300),
                                           ("response_seconds", 604_801.0)])
async def test_a1_m25_a_step_deadline_beyond_7_days_is_refused_at_create(cluster: Cluster, http: httpx.AsyncClient,
                                                                        door: str, field: str, seconds: Any) -> None:
    """A turn or response deadline is 1 s .. 7 days, as a round's is (A1), refused naming the field sent
    (M25): an infinite one was taken, and the game's start then failed for good (no time is an
    infinite deadline's); a huge one gave views a deadline beyond int64."""
    body = {"game": "arcmage", "seats": 2, "nickname": "fuzz", "arcmage": {field: seconds}}
    answer = await call(cluster, http, door, "Lobby", "CreateGame", body, "", lobby_pb2.CreateGameResponse)
    assert (answer.status, answer.field) == ("INVALID_ARGUMENT", field), answer
    ok = {**body, "arcmage": {field: 604_800.0}}  # 7 days: taken, and the game starts
    made = await call(cluster, http, door, "Lobby", "CreateGame", ok, "", lobby_pb2.CreateGameResponse)
    assert made.status == "OK", made
    await started_view(cluster, http, door, made.body["game_id"], made.body["secret"], repr(ok))
