"""What the fuzz tests share: the budget, the arena of real games they attack, the state guard, the
hostile-value strategies (JSON and protobuf wire format) and the checks of an answer.

The property every test checks, per example: the answer is a clear error — a gRPC status other than
UNKNOWN / INTERNAL / UNAVAILABLE with the ``error-*`` trailers of the error table, or an HTTP 4xx with
the JSON error body of the README — or a legitimate success; the gateway still answers its health
check; and a refused call changed nothing (the host's view of every arena game and every arena
game's journal length in Redis are what they were before it).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from archipelago.v1 import community_pb2 as cp
from archipelago.v1 import game_pb2, lobby_pb2, notify_pb2
from client.base import BaseClient
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from gateway import errors, rpc
from gateway.api import MAX_REQUEST_BYTES
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, placement, shots, submit_and_close

# ---------------------------------------------------------------------------------------- budget
#: examples per test (each test is parametrised per rpc where it fuzzes one): fixed and derandomised, so
#: `make test` runs the same inputs every time — 8 × 39 tests, the directory in ~35 s on the 2-core
#: machine (~50 s while it is busy), cluster start included. A longer campaign (200: ~13 min):
#: ARCHIPELAGO_FUZZ_EXAMPLES=200 .venv/bin/pytest -q tests/fuzz --hypothesis-show-statistics
#: (the statistics list the answers each test got: how far its examples reached into the game).
EXAMPLES = int(os.environ.get("ARCHIPELAGO_FUZZ_EXAMPLES", "8"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example, HealthCheck.filter_too_much])
CALL_TIMEOUT_S = 30.0  # no answer within this is a failure (never a wait for synchronisation)
DAY = 86_400.0  # the arena's round deadline: no round closes by itself while the tests run
MAX_MESSAGE = 400  # README: an error message is at most ~400 characters whatever the input

GOOD_STATUSES = {"INVALID_ARGUMENT", "NOT_FOUND", "UNAUTHENTICATED", "PERMISSION_DENIED", "FAILED_PRECONDITION",
                 "RESOURCE_EXHAUSTED", "OUT_OF_RANGE", "ALREADY_EXISTS", "ABORTED"}
UNARY = sorted(rpc.UNARY)
STREAMS = sorted(rpc.STREAMS)  # Watch, Spectate
RPCS = [*UNARY, *STREAMS]
SERVICE = {**{n: r.service for n, r in rpc.UNARY.items()}, **{n: r.service for n, r in rpc.STREAMS.items()}}
REQUEST: dict[str, type[Message]] = {**{n: r.request for n, r in rpc.UNARY.items()},
                                     **{n: r.request for n, r in rpc.STREAMS.items()}}
RESPONSE: dict[str, type[Message]] = {
    "CreateGame": lobby_pb2.CreateGameResponse, "JoinGame": lobby_pb2.JoinGameResponse,
    "StartGame": lobby_pb2.GameSummary, "ListGames": lobby_pb2.ListGamesResponse,
    "Rejoin": lobby_pb2.RejoinResponse, "GetView": game_pb2.GetViewResponse,
    "SubmitOrders": game_pb2.SubmitOrdersResponse, "Act": game_pb2.ActResponse,
    "SetStandingOrders": game_pb2.SetStandingOrdersResponse, "CreateAgentToken": game_pb2.AgentToken,
    "ListAgentTokens": game_pb2.ListAgentTokensResponse, "RevokeAgentToken": game_pb2.RevokeAgentTokenResponse,
    "GetNotifications": notify_pb2.NotificationSettings, "SetNotifications": notify_pb2.NotificationSettings,
    "Watch": game_pb2.Update, "Spectate": game_pb2.Update,
    "QuickPlay": cp.QuickPlayResponse, "ListLiveGames": cp.ListLiveGamesResponse,
    "GetSpectatorView": game_pb2.GetViewResponse, "CreateProfile": cp.ProfileSecret, "GetMyProfile": cp.Profile,
    "ResetProfileSecret": cp.ProfileSecret, "GetProfile": cp.Profile,
    "ListProfileGames": cp.ListProfileGamesResponse, "GetLeaderboard": cp.GetLeaderboardResponse,
    "GetReplay": cp.ReplayFrame, "ExportGame": cp.ExportGameResponse,
}
assert set(RESPONSE) == set(RPCS)


# ---------------------------------------------------------------------------------------- the arena
@dataclass
class Seated:
    game_id: str
    code: str
    host: BaseClient
    secrets: list[str]


@dataclass(repr=False)
class Arena:
    """Real games the fuzzers aim at, created once per session, plus what guards their state."""

    cluster: Cluster
    salvo: Seated  # running Salvo game, placement round (round 0), nobody connected
    arch: Seated  # running 2-seat Archipelago game (seat 1 autopilot), round 0
    lobby: Seated  # 3-seat Archipelago game in its lobby
    over: Seated  # finished Salvo game: a valid Watch on it ends by itself
    agent_token: str  # an agent token (A90) of the salvo game's host
    agent_token_id: str
    over_agent_token: str  # an agent token of the finished game's host
    units: list[str]  # the arch host's unit ids
    redis: Any
    channel: grpc.aio.Channel  # a raw channel for the fuzzers (identity serializers)
    last: tuple[Any, ...] = ()
    clients: list[BaseClient] = field(default_factory=list)
    # game -> its round_version when the arena was made: no round of an arena game closes while the tests
    # run (a day's deadline, nobody connected), so versions below it stay stale (A16). Fixed: a strategy
    # must not depend on what earlier examples changed (hypothesis replays examples).
    versions: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"Arena({', '.join(f'{g.game_id}/{g.code}' for g in self.games)})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def games(self) -> list[Seated]:
        return [self.salvo, self.arch, self.lobby, self.over]

    async def close(self) -> None:
        await self.channel.close()
        for c in self.clients:
            await c.close()
        await self.redis.aclose()

    # ---------------------------------------------------------------- the state guard
    async def snapshot(self) -> tuple[Any, ...]:
        """The host's view of each game that has no stream (the finished game's players may connect
        through a valid Watch) and every arena game's journal length in Redis (and its archive's)."""
        views = await asyncio.gather(*(g.host.view(g.game_id) for g in (self.salvo, self.arch, self.lobby)))
        pipe = self.redis.pipeline(transaction=False)
        for g in self.games:  # a finished game's journal is compacted into its archive (services/store.py)
            pipe.llen(f"{self.cluster.prefix}g:{g.game_id}:journal")
            pipe.strlen(f"{self.cluster.prefix}g:{g.game_id}:archive")
        lengths = await pipe.execute()
        return (*(v.SerializeToString(deterministic=True) for v in views), *lengths)

    async def settle(self, refused: bool, what: str) -> None:
        """After a call: a refused one left every game as it was (A16: refused as a whole, changing
        nothing). The snapshot after becomes the next call's "before" either way."""
        before = self.last or await self.snapshot()
        after = await self.snapshot()
        self.last = after
        if refused:
            assert after == before, f"a refused call changed a game's view or journal: {what}"

    # ---------------------------------------------------------------- who the fuzzers act as
    def targets(self, *, streamable: bool = True) -> list[Target]:
        """Every (game, secret) pair that authenticates: players' secrets and agent tokens.
        ``streamable=False``: only the finished game's, whose valid Watch ends by itself (a Watch must
        never stay open on a running game: its player would count as connected, A17)."""
        over = [Target(self.over.game_id, s, "salvo") for s in (*self.over.secrets, self.over_agent_token)]
        if not streamable:
            return over
        arch = Target(self.arch.game_id, self.arch.secrets[0], "archipelago")
        salvo = [Target(self.salvo.game_id, s, "salvo") for s in (*self.salvo.secrets, self.agent_token)]
        return [*salvo, arch, arch, arch, Target(self.lobby.game_id, self.lobby.secrets[0], "archipelago"), *over]

    def secrets(self, *, streamable: bool = True) -> list[str]:
        """The secrets of :meth:`targets` and near misses (a character short, an unknown agent token)."""
        valid = [t.secret for t in self.targets(streamable=streamable)]
        return [*valid, valid[0][:-1], "agt_" + "x" * 32, "not-a-secret"]


@dataclass(frozen=True)
class Target:
    """A game and a secret that acts in it: most examples aim at one, so that they get past
    authentication and reach the game."""

    game_id: str
    secret: str
    kind: str  # the game's kind: the member of the oneofs that vary by game ("salvo", "archipelago")


async def build_arena(cluster: Cluster) -> Arena:
    import redis.asyncio as aioredis

    def connect() -> BaseClient:
        c: BaseClient = cluster.client("grpc")
        arena_clients.append(c)
        return c

    arena_clients: list[BaseClient] = []
    salvo = await new_game(connect, deadline=DAY)
    over = await new_game(connect, deadline=DAY, max_rounds=1)
    await submit_and_close(over, placement(0), placement(1))
    await submit_and_close(over, shots(["A9"]), shots(["A9"]))
    arch_host, lobby_host = connect(), connect()
    arch = await arch_host.create("archipelago", seats=2, nickname="host", deadline_seconds=DAY)
    await arch_host.start(arch.game_id, fill=True)
    lobby = await lobby_host.create("archipelago", seats=3, nickname="host", deadline_seconds=DAY)
    token = await salvo.host.create_agent_token(salvo.game_id, "fuzz")
    over_token = await over.host.create_agent_token(over.game_id, "fuzz")
    units = [u.id for u in (await arch_host.view(arch.game_id)).archipelago.units]
    assert units and salvo.host.secret and salvo.guest.secret and over.host.secret and over.guest.secret
    arena = Arena(
        cluster=cluster,
        salvo=Seated(salvo.game_id, salvo.code, salvo.host, [salvo.host.secret, salvo.guest.secret]),
        arch=Seated(arch.game_id, arch.code, arch_host, [arch.secret]),
        lobby=Seated(lobby.game_id, lobby.code, lobby_host, [lobby.secret]),
        over=Seated(over.game_id, over.code, over.host, [over.host.secret, over.guest.secret]),
        agent_token=token.token, agent_token_id=token.token_id, over_agent_token=over_token.token,
        units=units, redis=aioredis.Redis.from_url(cluster.redis_url, decode_responses=True),
        channel=grpc.aio.insecure_channel(cluster.address), clients=arena_clients)
    for g in (arena.salvo, arena.arch, arena.lobby):
        arena.versions[g.game_id] = (await g.host.view(g.game_id)).round_version
    arena.last = await arena.snapshot()
    return arena


# ---------------------------------------------------------------------------------------- hostile values
EDGE_INTS = [0, 1, -1, 2, 3, 7, 100, 2**31 - 1, -2**31, 2**31, 2**32 + 1, 2**53 + 1, 2**63 - 1, -2**63, 2**63,
             2**64, -2**64 - 1, 10**30]
EDGE_FLOATS = [0.0, -0.0, 0.5, 1.0, 59.5, 60.0, DAY, 604_800.0, 604_801.0, 1e-300, 1e300, -1.0,
               float("inf"), float("-inf"), float("nan")]
NASTY = ["", " ", "\x00", "\x00\x01\x7f", "\n\r\t", "\u202e\u2066", "שלום", "🚢" * 10, "\ufeff", "a" * 64,
         "a" * 65, "é" * 25, "\U0010ffff", "${jndi:ldap://x}", "'; DROP TABLE games; --", "../../etc/passwd",
         "%s%n", "null", "NaN", "Bearer ", "agt_", "ß" * 3]
BIG = [1_000, 70_000, 200_000]  # lengths of oversized strings (under the 256 KiB request limit)
SURROGATES = ["\ud800", "a\udfffb"]  # valid JSON escapes, invalid in a protobuf string

SQUARES = ["A1", "J10", "E5", "K1", "A0", "A11", "a1", "Z99", "1A", "", " A1", "A-1", "AA1", "A01"]
SHIPS = ["battleship", "cruiser", "submarine", "destroyer", "destroyer1", "destroyer2", "BATTLESHIP", "raft", ""]
RESOURCE_NAMES = [*RESOURCES, "gold", "", "WOOD"]
DIRECTIONS = ["N", "E", "S", "W", "n", "X", "", "NE"]
ACTIONS = ["outpost", "bombard", "strike", "reveal", "dance", ""]
UNIT_TYPE_NAMES = [*UNIT_TYPES, "dragon", ""]
POSTURES = ["hold", "defensive", "balanced", "aggressive", "berserk", ""]
STANDING = ["stay", "guard", "patrol", "move", "escort", "hunt", "fly", ""]
KINDS = ["salvo", "archipelago", "arcmage", "", "SALVO", "chess"]
INT_HINTS: dict[str, list[int]] = {
    "x": [0, 1, 5, 20, 39, 40, -1], "y": [0, 1, 5, 20, 39, 40, -1], "seats": [0, 1, 2, 3, 8, 9],
    "to": [0, 1, 2, 7, 8], "times": [1, 2, 1000], "keep": [0, 5], "max_rounds": [1, 60, 101],
    "target": [1, 10], "version": [1, 5, 10, 20], "after_seq": [0, 1, 5, 1000],
}
REQUEST_IDS = ["fuzz-request-id-0001", "fuzz-request-id-0002", "short", "r" * 64, "r" * 65, "\x00" * 16]


def pick(*options: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """One of ``options``, each as likely (repeat one to weigh it more). Unlike ``st.one_of``, which
    flattens nested one_ofs into one uniform choice, the weights stay as written."""
    return st.sampled_from(options).flatmap(lambda s: s)


def nasty_text(*, big: bool = True) -> st.SearchStrategy[str]:
    options = [st.sampled_from(NASTY), st.text(max_size=30)] * 2
    if big:
        options.append(st.sampled_from(BIG).map(lambda n: "Z" * n))
    return st.one_of(*options)


@dataclass(frozen=True)
class Vocab:
    """What the generators draw from besides hostile values: per field name, strings and numbers that
    mean something to the server (and near misses; repeated entries weigh more), and ``pins``: values
    a top-level field takes five times in six (the target's game id, a version in the window of A16,
    a game kind, a nickname), so that most examples get past the first checks into the game."""

    strings: dict[str, list[str]]
    ints: dict[str, list[int]]
    pins: dict[str, st.SearchStrategy[Any]]
    member: str  # the oneof member most typed messages choose: the target game's kind


def vocabulary(arena: Arena, target: Target) -> Vocab:
    ids = [g.game_id for g in arena.games]
    codes = [g.code for g in arena.games]
    low = arena.versions.get(target.game_id, 0)
    strings = {
        "game_id": [*[target.game_id] * 4, *ids, "", "x", "0" * 16, ids[0].upper(), ids[0] + " ", "f" * 16],
        "code": [*codes, *(c.lower() for c in codes), f" {codes[2]} ", "ZZZZZZ", "", "abc", "2345678"],
        "nickname": ["ann", "bob", "host", "guest", "autopilot-2", " ", "x" * 24, "x" * 25, "\x00", "שלום"],
        "request_id": REQUEST_IDS, "idempotency_key": ["", "", "k", "r0", "k" * 64, "k" * 65],
        "label": ["", "laptop", "x" * 40, "x" * 41, "\n"],
        "token_id": [arena.agent_token_id, "", "0" * 12, arena.agent_token_id.upper()],
        "game": KINDS, "mode": ["salvo", "classic", "", "blitz"],
        "fleet": ["default", "variant", "", "armada"], "first_player": ["creator", "random", "", "me"],
        "ship": [*SHIPS, *arena.units[:2]], "bow": SQUARES, "shots": SQUARES, "unit": [*arena.units, "u0", ""],
        "target": [*arena.units[:3], "e1", ""], "path": DIRECTIONS, "action": ACTIONS, "type": UNIT_TYPE_NAMES,
        "bonus": RESOURCE_NAMES, "give": RESOURCE_NAMES, "get": RESOURCE_NAMES, "posture": POSTURES,
        "order": STANDING, "offer": ["", "o1", "o0", "o999"], "text": ["hi", "", "x" * 500, "x" * 501, "  "],
    }
    ints = {**INT_HINTS, "version": [*INT_HINTS["version"], low - 1, low]}
    pins: dict[str, st.SearchStrategy[Any]] = {  # versions: in the window of A16, or newer than the game's
        "game_id": st.just(target.game_id),
        "version": pick(st.integers(low, low + 3), st.integers(low, low + 3), st.integers(low + 4, low + 40)),
        "game": st.sampled_from(["salvo", "archipelago"]), "nickname": st.sampled_from(["ann", "bob", "carol"]),
        "code": st.sampled_from(codes)}
    return Vocab(strings, ints, pins, target.kind)


RANGES = {FieldDescriptor.TYPE_INT32: (-2**31, 2**31 - 1), FieldDescriptor.TYPE_INT64: (-2**63, 2**63 - 1),
          FieldDescriptor.TYPE_ENUM: (-2**31, 2**31 - 1)}


def _clamp(value: int, kind: int) -> int:
    lo, hi = RANGES.get(kind, (-2**31, 2**31 - 1))
    return max(lo, min(hi, value))


def any_json(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (the wrong type wherever the schema wants another)."""
    leaves = st.one_of(st.none(), st.booleans(), st.sampled_from(EDGE_INTS), st.integers(-5, 5),
                       st.floats(allow_nan=False, allow_infinity=False), nasty_text(big=False))
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                        max_leaves=max_leaves)


def descriptor(cls: type[Message]) -> Descriptor:
    """A message class's descriptor (typed as the pure-Python one; the upb one has the same API)."""
    return cast(Descriptor, cls.DESCRIPTOR)


def json_message(desc: Descriptor, vocab: Vocab, *, typed: bool, depth: int = 0,
                 small: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """A request message in protobuf's JSON mapping, fields left out at random (missing fields).

    ``typed``: every value has the type protobuf's JSON parser wants (hostile only in content: huge and
    odd strings, edge numbers, unknown enum numbers, long lists); otherwise also wrong types, unknown
    and camelCase keys, several members of a oneof. ``small``: no oversized values (an element of a
    long list)."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {}
        # typed: at most one member of each oneof, most often the target game's kind
        chosen = {}
        for o in desc.oneofs:
            names = [f.name for f in o.fields]
            anyone = st.sampled_from([None, *names])
            chosen[o.name] = draw(pick(st.just(vocab.member), st.just(vocab.member), anyone)
                                  if vocab.member in names else anyone)
        for f in desc.fields:
            if depth == 0 and f.name in vocab.pins and draw(st.integers(0, 5)) != 0:
                if f.containing_oneof is None or not typed or chosen[f.containing_oneof.name] == f.name:
                    out[f.name] = draw(vocab.pins[f.name])
                    continue
            if f.containing_oneof is not None and typed:
                if chosen[f.containing_oneof.name] != f.name:  # (None: the oneof is missing)
                    continue
            elif draw(st.integers(0, 3)) == 0:  # a missing field
                continue
            key = f.json_name if not typed and draw(st.integers(0, 7)) == 0 else f.name
            if not typed and draw(st.integers(0, 5)) == 0:
                out[key] = draw(any_json())
            else:
                out[key] = draw(_field_value(f, vocab, typed=typed, depth=depth, small=small))
        if not typed and draw(st.integers(0, 4)) == 0:
            out[draw(st.sampled_from(["extra", "secret", "authorization", "__proto__", "", "game_id ",
                                      "from_version"]))] = draw(any_json())
        return out

    return build()


def _field_value(f: FieldDescriptor, vocab: Vocab, *, typed: bool, depth: int,
                 small: bool) -> st.SearchStrategy[Any]:
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        keys = st.one_of(st.sampled_from(RESOURCE_NAMES), st.text(max_size=8))
        return st.dictionaries(keys, _scalar(f.message_type.fields_by_name["value"], vocab, typed=typed, small=True),
                               max_size=5)
    one = _single(f, vocab, typed=typed, depth=depth, small=small)
    if not f.is_repeated:
        return one
    if small:  # inside a long list: no long list again (4,000 × 4,000)
        return st.lists(one, max_size=4)
    long_list = st.builds(lambda x, n: [x] * n, _single(f, vocab, typed=typed, depth=depth, small=True),
                          st.sampled_from([50, 1_000, 4_000]))
    return st.one_of(st.lists(one, max_size=4), long_list)


def _single(f: FieldDescriptor, vocab: Vocab, *, typed: bool, depth: int,
            small: bool) -> st.SearchStrategy[Any]:
    if f.message_type is not None:
        if depth >= 4:
            return st.just({})
        return json_message(f.message_type, vocab, typed=typed, depth=depth + 1, small=small)
    return _scalar(f, vocab, typed=typed, small=small)


def _scalar(f: FieldDescriptor, vocab: Vocab, *, typed: bool, small: bool) -> st.SearchStrategy[Any]:
    t = f.type
    if t == FieldDescriptor.TYPE_STRING:
        options = [st.sampled_from(vocab.strings[f.name])] * 2 if f.name in vocab.strings else []
        options.append(nasty_text(big=not small))
        if not typed:
            options.append(st.sampled_from(SURROGATES))
        return pick(*options)
    if t == FieldDescriptor.TYPE_BOOL:
        return st.booleans() if typed else st.one_of(st.booleans(), st.sampled_from([0, 1, "true", "yes"]))
    if t == FieldDescriptor.TYPE_DOUBLE:
        specials = st.sampled_from(["NaN", "Infinity", "-Infinity"])
        finite = st.sampled_from([x for x in EDGE_FLOATS if x == x and abs(x) != float("inf")])
        return st.one_of(finite, specials, st.floats(allow_nan=False, allow_infinity=False))
    ints = st.one_of(st.integers(-3, 12), st.sampled_from(EDGE_INTS + vocab.ints.get(f.name, [])))
    if t == FieldDescriptor.TYPE_ENUM:
        assert f.enum_type is not None
        names = [v.name for v in f.enum_type.values]
        if typed:
            return st.one_of(st.sampled_from(names), ints.map(lambda v: _clamp(v, t)))
        return st.one_of(st.sampled_from([*names, "SPEED_LUDICROUS", names[0].lower(), ""]), ints)
    if typed:
        clamped = ints.map(lambda v: _clamp(v, t))
        if t == FieldDescriptor.TYPE_INT64:
            return st.one_of(clamped, clamped.map(str))  # 64-bit integers may travel as JSON strings
        return clamped
    return st.one_of(ints, ints.map(str), st.sampled_from(["1e3", "0x10", "1.5", "-0", " 1", "", "NaN"]),
                     st.floats(allow_nan=False))


# ---------------------------------------------------------------------------------------- protobuf wire format
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative numbers as protobuf sends them: ten bytes
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint((number << 3) | wire_type)


def length_delimited(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


@functools.cache
def nested_fields(number: int, depth: int) -> bytes:
    """Field ``number`` holding itself ``depth`` times (length-delimited)."""
    nested = b""
    for _ in range(depth):
        nested = length_delimited(number, nested)
    return nested


BAD_UTF8 = [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"ok\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
VARINT_TYPES = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_BOOL,
                FieldDescriptor.TYPE_ENUM}


def wire_payload(name: str, vocab: Vocab) -> st.SearchStrategy[bytes]:
    """Bytes for the request of rpc ``name``: a well-typed message with hostile contents (see
    :func:`json_message`), then 0–3 wire-level mutations — extra (unknown) fields, a known field with
    the wrong wire type, invalid UTF-8 in a string field, out-of-range and overlong varints, groups
    nested 10,000 deep, nested length-delimited fields, truncation, flipped bytes, lying lengths,
    field number 0, invalid wire types, more than the size limit — or plain random bytes."""
    cls = REQUEST[name]
    desc = descriptor(cls)
    fields = list(desc.fields)

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        if draw(st.integers(0, 9)) == 0:
            return draw(st.binary(max_size=300))
        msg = cls()
        json_format.ParseDict(draw(json_message(desc, vocab, typed=True)), msg)
        raw = msg.SerializeToString()
        for _ in range(draw(st.sampled_from([0, 0, 1, 2, 3]))):
            how = draw(st.sampled_from(["unknown", "wrong_type", "bad_utf8", "big_varint", "overlong", "groups",
                                        "deep_ld", "truncate", "flip", "bad_length", "end_group", "field_zero",
                                        "bad_wire_type", "oversize"]))
            f = draw(st.sampled_from(fields)) if fields else None
            number = f.number if f is not None else 1
            if how == "unknown":
                unknown = draw(st.integers(100, 2**29 - 1))
                raw += draw(st.sampled_from([tag(unknown, 0) + varint(2**63), length_delimited(unknown, b"junk"),
                                             tag(unknown, 5) + b"\0\0\0\0", tag(unknown, 1) + b"\0" * 8]))
            elif how == "wrong_type":
                is_varint = f is not None and f.type in VARINT_TYPES
                raw += length_delimited(number, b"\x01\x02") if is_varint else tag(number, 0) + varint(7)
            elif how == "bad_utf8":
                strings = [x for x in fields if x.type == FieldDescriptor.TYPE_STRING]
                if strings:
                    raw += length_delimited(draw(st.sampled_from(strings)).number, draw(st.sampled_from(BAD_UTF8)))
            elif how == "big_varint":
                raw += tag(number, 0) + varint(draw(st.sampled_from([2**32 + 5, 2**63, 2**64 - 1, -1, -2**31 - 1])))
            elif how == "overlong":
                raw += tag(number, 0) + b"\xff" * 10 + b"\x01"
            elif how == "groups":
                deep = draw(st.sampled_from([50, 101, 1_000, 10_000]))
                raw += tag(15, 3) * deep + tag(15, 4) * deep
            elif how == "deep_ld":
                inner = number if f is not None and f.message_type is not None else 15
                raw += nested_fields(inner, draw(st.sampled_from([100, 10_000])))
            elif how == "truncate" and raw:
                raw = raw[:draw(st.integers(0, len(raw) - 1))]
            elif how == "flip" and raw:
                at = draw(st.integers(0, len(raw) - 1))
                raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1:]
            elif how == "bad_length":
                raw += tag(number, 2) + varint(draw(st.sampled_from([2**31, 2**40, 5]))) + b"x"
            elif how == "end_group":
                raw += tag(number, 4)
            elif how == "field_zero":
                raw += b"\x00\x00"
            elif how == "bad_wire_type":
                raw += tag(number, draw(st.sampled_from([6, 7])))
            elif how == "oversize":
                raw += length_delimited(99_999, b"\0" * (MAX_REQUEST_BYTES + 10))
        return raw

    return build()


def grpc_metadata(target: Target, secrets: list[str]) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    """The ``authorization`` metadata: half the time the target's secret, else none, another secret or
    agent token, a near miss, junk (ASCII: what gRPC metadata may carry), or the header twice."""
    printable = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=60)
    value = st.one_of(
        st.sampled_from(secrets).map(lambda s: f"Bearer {s}"),
        st.sampled_from(secrets).map(lambda s: s),
        st.sampled_from(secrets).map(lambda s: f"bearer {s}"),
        st.sampled_from(["Bearer", "Bearer agt_", "Basic Zm9vOmJhcg==", "Bearer x", "Bearer " + "a" * 4000]),
        printable.map(lambda s: f"Bearer {s}"), printable)
    hostile = st.one_of(st.just(()), value.map(lambda v: (("authorization", v),)),
                        st.tuples(value, value).map(lambda vs: tuple(("authorization", v) for v in vs)))
    return pick(st.just((("authorization", f"Bearer {target.secret}"),)), hostile)


# ---------------------------------------------------------------------------------------- checking answers
async def grpc_alive(arena: Arena) -> None:
    """The gateway still answers: gRPC health SERVING."""
    stub = health_pb2_grpc.HealthStub(arena.channel)
    got = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=CALL_TIMEOUT_S)
    assert got.status == health_pb2.HealthCheckResponse.SERVING


def check_grpc_error(err: grpc.aio.AioRpcError, sent: int) -> None:
    """A refused gRPC call: a clear status; the door's own errors carry the table's trailers and a short
    message; only gRPC's size limit answers without them."""
    status = err.code().name
    assert status in GOOD_STATUSES, f"{status}: {err.details()}"
    trailers = {k: v for k, v in (err.trailing_metadata() or ()) if isinstance(v, str)}
    code = trailers.get("error-code")
    if code is None:
        assert status == "RESOURCE_EXHAUSTED" and sent > MAX_REQUEST_BYTES, (status, err.details())
        return
    kind = errors.TABLE[errors.BY_CODE[code]]
    assert kind.grpc.name == status, (code, status)
    assert len(err.details() or "") <= MAX_MESSAGE, err.details()
    assert {"error-field", "error-rule"} <= set(trailers), trailers


ERROR_KEYS = {"code", "field", "rule", "message", "status", "http_status", "retry"}


def check_error_body(body: Any, http_status: int) -> None:
    """The README's error body: the four fields, the table's statuses and retry, a short message that
    reads "<field>: rule <rule>: <reason>"."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    e = body["error"]
    assert isinstance(e, dict) and set(e) == ERROR_KEYS, e
    assert e["code"] in errors.BY_CODE, e
    kind = errors.TABLE[errors.BY_CODE[e["code"]]]
    assert (e["status"], e["http_status"], e["retry"]) == (kind.grpc.name, kind.http, kind.retry), e
    assert e["http_status"] == http_status, (e, http_status)
    assert 400 <= http_status < 500 and e["status"] in GOOD_STATUSES, e
    assert isinstance(e["field"], str) and isinstance(e["rule"], str) and isinstance(e["message"], str), e
    assert len(e["message"]) <= MAX_MESSAGE, e["message"]
    prefix = ": ".join(p for p in (e["field"], f"rule {e['rule']}" if e["rule"] else "") if p)
    assert e["message"].startswith(prefix), e


def check_http_answer(status: int, content_type: str, text: str, name: str) -> bool:
    """A JSON-API answer: 200 with the rpc's response message in JSON, or a 4xx error body. Returns
    whether the call was refused."""
    assert content_type.startswith("application/json"), (status, content_type, text[:200])
    body = json.loads(text)
    if status == 200:
        json_format.ParseDict(body, RESPONSE[name]())  # the rpc's response message, every field known
        return False
    check_error_body(body, status)
    return True


