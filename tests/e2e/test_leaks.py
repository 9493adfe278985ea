"""A leak test: every message, log line, metric label and span of two games, scanned for secrets and
hidden facts — and none is found (A3, A80–A85, A90; Salvo S6, S8).

Every notification the players' webhooks receive (a real HTTPS receiver) is scanned with the messages:
the documented payload only, signed, no secret, no hidden square or card.

One whole Salvo game (the host on the gRPC door, the guest on the JSON + WebSocket door) and a short
Archipelago game (the same two doors) are played with: creation and joining with a ``request_id``
(and a retried create, and the same id reused for another request), an agent token (A90) made by the
Salvo guest and used once on the MCP door (``get_view``) and once on GetView, chat (to all and to
one), a rule refusal (S5), and refused calls: a made-up but well-formed player secret and agent token
(gRPC, JSON, WebSocket, MCP) and real secrets used on the other game.

What is captured, from the first call to the end:
1. every message each client received: each answer and update (JSON and protobuf wire form), each
   error (status, code, field, rule, message), the raw HTTP answers (status, headers, body) of the
   JSON and MCP doors, every gRPC call's initial and trailing metadata and details, and the MCP tool
   results;
2. every log record of this test process (a handler on the root logger, with every logger at DEBUG
   for the time of the test: the gateway's own, uvicorn's access log, the libraries'), and every
   byte the Ray node's log files (under the Ray session directory: the shards' stdout/stderr and
   core-worker logs, raylet, GCS) gained meanwhile. The shards log nothing while games go well, so
   the test makes one shard log a line (a call its method cannot take: "shard call … failed") and
   checks that line is read. One kind of line is left out, the client's own (see OWN_HELLO): the
   `websockets` library logs the JSON client's Watch hello, which carries the client's secret;
3. the gateway's ``/metrics`` text with the shards' samples (a ShardCollector registered as
   ``archipelago serve`` does): every metric name, label name and label value, and the whole text;
4. every span this process ended meanwhile (the gRPC server spans: name, attributes, events,
   status, resource). The shards' own spans (``shard.*``, ``journal.write``, ``engine.resolve``)
   are not exported in the test cluster: tracing is off in the shard processes.

Then none of it may hold a player secret, an agent token, a request id (those issued or sent, the
made-up ones included) or the SHA-256 hex of any, nor any 12-character piece of one — except the
answer that hands a player its own secret or token (CreateGame, JoinGame, CreateAgentToken), in
its one field. And no player received a hidden fact: the Salvo journal is replayed by the engine to
know, at every version, the enemy ship squares each player has not named itself (S8: never sent
before the end), and no message a player received at that version names one; no Salvo view before
the end shows the enemy fleet or which of the player's shots hit, no report names squares (S6);
each Archipelago view equals the engine's view of the replayed state and passes the conformance
suite's independent check (A80–A85), each event went to a player in its audience. The scanners are
shown to find a planted secret, hash, fragment and hidden square first.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc
import httpx2 as httpx
import pytest
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2, notify_pb2, salvo_pb2
from client.base import BaseClient, M
from client.bot import choose_orders
from client.errors import ApiError
from client.grpc_client import Client as GrpcClient
from client.views import orders_message
from client.web_client import WebClient
from engine import get_game
from engine.arcmage import GAME as ARCMAGE
from engine.arcmage.core import head
from gateway.convert import to_json
from gateway.metrics import ShardCollector
from gateway.notify_api import NotifyService
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, replay_journal, rpc_error
from tests.engine.archipelago.randplay import check_view
from tests.notify.receivers import WebhookDelivery, WebhookReceiver

pytestmark = pytest.mark.e2e

SALVO = get_game("salvo")
ARCHIPELAGO = get_game("archipelago")
ARCHIPELAGO_ROUNDS = 3
GRAM = 12  # a leaked piece of a secret this long counts as a leak
SECRETISH = re.compile(rf"[A-Za-z0-9_-]{{{GRAM},}}")  # secrets, tokens, ids and hex hashes are such runs
SQUARE = re.compile(r"(?<![A-Za-z0-9])[A-J](?:10|[1-9])(?![A-Za-z0-9])")
ISSUING = {"CreateGame": "secret", "JoinGame": "secret", "CreateAgentToken": "token",
           "SetNotifications": "webhook_signing_secret"}
# The one kind of log line left out of the scan, and why: the `websockets` library, at DEBUG, logs each
# frame its client sends, clipped to its first 48 and last 24 characters. The JSON + WebSocket client
# (client/web_client.py) sends its Watch hello {"game_id", "after_seq", "authorization": "Bearer …"}
# as its first frame, so that line shows the tail of the client's own secret — in the client's own
# process; the gateway logs no such line. Every other websockets line (the frames received) is scanned.
OWN_HELLO = """websockets.client DEBUG > TEXT '{"game_id": """

# Fleets kept out of column A, whose square names (A1–A10) are also rule ids that errors name.
FLEETS = {0: [("battleship", "B1"), ("cruiser", "B2"), ("submarine", "B3"), ("destroyer", "B4")],
          1: [("battleship", "F7"), ("cruiser", "F8"), ("submarine", "F9"), ("destroyer", "F10")]}
# Per firing round: the host sinks the guest's fleet (7, 4, 2, 1 shots as the guest's ships sink,
# S4); the guest hits a little of the host's (its destroyer, then two battleship squares) and misses.
HOST_SALVOS = [["F7", "G7", "H7", "I7", "J7", "F8", "G8"], ["H8", "I8", "F9", "G9"], ["H9", "F10"], ["G10"]]
GUEST_SALVOS = [["B4", "C4", "A5", "B5", "C5", "D5", "E5"], ["B1", "C1", "F5", "G5"], ["H5", "I5"], ["J5"]]


# ---------------------------------------------------------------------------------------------- capture
@dataclass
class Received:
    """One thing a client received: ``text`` is scanned for secrets and hidden squares, ``wire`` (raw
    bytes as text) for secrets only; ``version`` is the game version it reflects."""

    who: str  # "salvo/0", "archipelago/1", "stranger"
    what: str
    text: str
    wire: str = ""
    version: int = 0
    message: Any = None


@dataclass
class Capture:
    received: list[Received] = field(default_factory=list)
    raw_http: list[tuple[str, str, int, str, str]] = field(default_factory=list)  # who, path, status, headers, body
    grpc_calls: list[tuple[str, Any]] = field(default_factory=list)  # who, call
    issued: dict[str, set[str]] = field(default_factory=dict)  # who -> secrets and tokens handed to it
    closers: list[Callable[[], Any]] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)  # the Watch streams kept open

    hooks: Any = None  # a WebhookReceiver: every player's notifications, scanned like its messages

    async def notify_me(self, client: Recorder, who: str, game_id: str, needles: Needles | None = None) -> None:
        """The player's notifications go to a webhook of the receiver (its signing secret: a needle)."""
        name = who.replace("/", "-")
        got = await client.call("Game", "SetNotifications", notify_pb2.SetNotificationsRequest(
            game_id=game_id, idempotency_key=f"leak-{name}", webhook=notify_pb2.WebhookSetting(
                url=self.hooks.url(name))), notify_pb2.NotificationSettings)
        if needles is not None:
            needles.add(f"{who}'s webhook signing secret", got.webhook_signing_secret)
        self.hooks.set_secret(name, got.webhook_signing_secret)

    def issue(self, who: str, value: str) -> None:
        self.issued.setdefault(who, set()).add(value)

    def client(self, cluster: Cluster, door: str, who: str, secret: str | None = None) -> Recorder:
        """A client through ``door`` for ``who`` that keeps everything it receives, down to the wire."""
        if door == "grpc":
            calls = self.grpc_calls

            class Unary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
                async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
                    call = await continuation(details, request)
                    calls.append((who, call))
                    return call

            class Stream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
                async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
                    call = await continuation(details, request)
                    calls.append((who, call))
                    return call

            channel = grpc.aio.insecure_channel(cluster.address, interceptors=[Unary(), Stream()])
            self.closers.append(channel.close)
            inner: BaseClient = GrpcClient(cluster.address, secret, channel)
        else:
            http = httpx.AsyncClient(base_url=cluster.http_url, timeout=60.0,
                                     event_hooks={"response": [self.http_hook(who)]})
            self.closers.append(http.aclose)
            inner = WebClient(cluster.http_url, secret, http)
        return Recorder(inner, who, self)

    def http_hook(self, who: str) -> Callable[[httpx.Response], Any]:
        async def hook(r: httpx.Response) -> None:
            await r.aread()
            self.raw_http.append((who, r.request.url.path, r.status_code, repr(list(r.headers.items())), r.text))
        return hook

    async def close(self) -> None:
        for task in self.tasks:  # (ended already, unless the test failed half-way)
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for close in self.closers:
            await close()


class Recorder(BaseClient):
    """A player's client (any door) that keeps every answer, update and error it receives."""

    def __init__(self, inner: BaseClient, who: str, cap: Capture) -> None:
        super().__init__(inner.secret)
        self.inner, self.who, self.cap = inner, who, cap
        self.door = inner.door
        self.as_of = 0  # the newest game version this client has seen

    def keep(self, what: str, msg: Message) -> None:
        version = int(getattr(msg, "version", 0) or 0)
        self.as_of = max(self.as_of, version)
        shown = msg
        if what in ISSUING:  # the answer that hands the player its own secret: scanned without it
            shown = type(msg)()
            shown.CopyFrom(msg)
            self.cap.issue(self.who, getattr(msg, ISSUING[what]))
            shown.ClearField(ISSUING[what])
        self.cap.received.append(Received(self.who, what, json_format.MessageToJson(shown, ensure_ascii=False),
                                          shown.SerializeToString().decode("utf-8", "replace"),
                                          version or self.as_of, msg))

    def keep_error(self, what: str, err: ApiError, version: int) -> None:
        self.cap.received.append(Received(self.who, what, repr(err), version=version, message=err))

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        self.inner.secret = self.secret
        before = self.as_of  # an error is checked against what was hidden when the call was made
        try:
            got = await self.inner.call(service, method, request, response)
        except ApiError as err:
            self.keep_error(method, err, before)
            raise
        self.keep(method, got)
        return got

    async def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        self.inner.secret = self.secret
        before = self.as_of
        try:
            async with contextlib.aclosing(self.inner.watch(game_id, after_seq)) as stream:
                async for u in stream:
                    self.keep("Watch", u)
                    yield u
        except ApiError as err:
            self.keep_error("Watch", err, before)
            raise

    async def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        before = self.as_of
        try:
            async with contextlib.aclosing(self.inner.spectate(game_id, after_seq)) as stream:
                async for u in stream:
                    self.keep("Spectate", u)
                    yield u
        except ApiError as err:
            self.keep_error("Spectate", err, before)
            raise

    def with_secret(self, secret: str) -> Recorder:
        return Recorder(self.inner.with_secret(secret), self.who, self.cap)

    async def close(self) -> None:
        await self.inner.close()


class Follower:
    """A player's Watch stream from the start (it counts as connected, A17), kept until it ends."""

    def __init__(self, client: Recorder, game_id: str, spectator: bool = False) -> None:
        self.updates: list[game_pb2.Update] = []
        self.changed = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._run(client, game_id, spectator))
        client.cap.tasks.append(self.task)

    async def _run(self, client: Recorder, game_id: str, spectator: bool) -> None:
        try:
            stream_of = client.spectate if spectator else client.watch  # (a spectator's Spectate stream)
            async with contextlib.aclosing(stream_of(game_id, 0)) as stream:
                async for u in stream:
                    self.updates.append(u)
                    self.changed.set()
        finally:
            self.changed.set()

    async def wait(self, pred: Callable[[game_pb2.Update], bool]) -> game_pb2.Update:
        async with asyncio.timeout(WAIT_S):
            while True:
                self.changed.clear()
                found = next((u for u in self.updates if pred(u)), None)
                if found is not None:
                    return found
                if self.task.done():
                    self.task.result()
                    raise AssertionError("the stream ended without the expected update")
                await self.changed.wait()

    async def end(self) -> list[game_pb2.Update]:
        async with asyncio.timeout(WAIT_S):
            await self.task  # every stream ends after game_over
        return self.updates


class LogLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception as exc:  # a record that cannot be formatted is scanned as what it holds
            self.lines.append(f"{record.name} {record.msg!r} {record.args!r} ({exc!r})")


@contextlib.contextmanager
def every_log_line() -> Any:
    """Every log record of this process, with the root logger and every logger that has its own
    level at DEBUG meanwhile."""
    handler = LogLines()
    root = logging.getLogger()
    levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items()
              if isinstance(lg, logging.Logger) and lg.level != logging.NOTSET}
    root_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name in levels:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)
        root.setLevel(root_level)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


class RayLogs:
    """What the Ray node's log files (the shards' stdout, stderr and core-worker logs among them)
    gain from now on."""

    def __init__(self) -> None:
        self.dir = Path(os.environ["RAY_TMPDIR"]) / "ray" / "session_latest" / "logs"
        assert self.dir.is_dir(), f"no Ray log directory at {self.dir}"
        self.start = {p: p.stat().st_size for p in self.dir.rglob("*") if p.is_file()}

    def gained(self) -> dict[str, str]:
        """File -> the text it gained; a worker's stdout and stderr are also under "worker-PID.out|err"."""
        out = {}
        for p in sorted(self.dir.rglob("*")):
            if p.is_file():
                with p.open("rb") as f:
                    offset = self.start.get(p, 0)
                    f.seek(offset if offset <= p.stat().st_size else 0)
                    out[str(p.relative_to(self.dir))] = text = f.read().decode("utf-8", "replace")
                if worker := re.fullmatch(r"worker-[0-9a-f]+-[0-9a-f]+-(\d+)\.(out|err)", p.name):
                    out[f"worker-{worker[1]}.{worker[2]}"] = text
        return out


# ---------------------------------------------------------------------------------------------- scanners
class Needles:
    """Every secret of the test (player secrets, agent tokens, request ids, made-up ones) and the
    SHA-256 hex of each: none may be found, nor any GRAM-character piece of one."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}
        self.grams: dict[str, str] = {}

    def add(self, label: str, value: str) -> None:
        assert value and SECRETISH.fullmatch(value), (label, value)
        for v, lab in ((value, label), (hashlib.sha256(value.encode()).hexdigest(), f"sha256({label})")):
            assert v not in self.labels, f"{label} is not unique"
            self.labels[v] = lab
            for i in range(len(v) - GRAM + 1):
                self.grams[v[i:i + GRAM]] = lab

    def find(self, text: str) -> dict[str, int]:
        """The labels of the needles a piece of which is in ``text``, each with where it is."""
        found: dict[str, int] = {}
        for run in SECRETISH.finditer(text):
            for i in range(run.start(), run.end() - GRAM + 1):
                label = self.grams.get(text[i:i + GRAM])
                if label is not None:
                    found.setdefault(label, i)
        return found


def leaks(sources: Iterable[tuple[str, str]], needles: Needles) -> list[str]:
    out = []
    for where, text in sources:
        for label, at in sorted(needles.find(text).items()):
            out.append(f"{label} in {where}: …{text[max(0, at - 150):at + 150]!r}…")
    return out


def hidden_named(text: str, hidden: Iterable[str]) -> set[str]:
    """The hidden squares ``text`` names."""
    return set(SQUARE.findall(text)) & set(hidden)


# ---------------------------------------------------------------------------------------------- the games
def squares(fleet: Any) -> set[str]:
    return {sq for ship in fleet for sq in ship.squares}


@contextlib.asynccontextmanager
async def notified(cluster: Cluster) -> AsyncGenerator[WebhookReceiver, None]:
    """The test cluster's gateway delivers notifications to a real HTTPS receiver of this test (on
    loopback, with its own CA) for the time of the block."""
    api = cluster.api
    plain_notify = api.notify
    with WebhookReceiver() as hooks:
        await plain_notify.stop()
        api.notify = NotifyService(api.store, api.config.public_url,
                                   replace(plain_notify.config, allow_private=True, ca_file=hooks.ca_file))
        await api.notify.start()
        try:
            yield hooks
        finally:
            await api.notify.stop()
            api.notify = plain_notify
            await plain_notify.start()


def salvo_hidden(journal: list[dict[str, Any]]) -> tuple[list[dict[int, frozenset[str]]], Any]:
    """Replaying the journal with the engine alone: per version, per seat, the enemy ship squares the
    seat has not named itself (its submitted shots), nor seen named (its own fleet, the shots at it):
    what no message to it may name before the end (S8). And the final state."""
    state: Any = None
    named: dict[int, set[str]] = {0: set(), 1: set()}
    states: list[Any] = [None]
    named_at: list[dict[int, frozenset[str]]] = [{0: frozenset(), 1: frozenset()}]
    for e in journal:
        if e["op"] == "start":
            state = SALVO.new_game(journal[0]["config"], int(journal[0]["seed"]))
        elif e["op"] == "submit":
            named[int(e["seat"])] |= set(e["orders"].get("shots", []))
        elif e["op"] == "act":
            state, _ = SALVO.act(state, int(e["seat"]), e["action"])
        elif e["op"] == "close":
            state, _ = SALVO.resolve(state, {int(k): o for k, o in e["orders"].items()})
        states.append(state)
        named_at.append({p: frozenset(s) for p, s in named.items()})
    fleet = {p: squares(state.fleets[p]) for p in (0, 1)}
    hidden = []
    for st, nm in zip(states, named_at, strict=True):
        incoming = {p: {s.square for s in st.shots[1 - p]} if st is not None else set() for p in (0, 1)}
        hidden.append({p: frozenset(fleet[1 - p] - nm[p] - fleet[p] - incoming[p]) for p in (0, 1)})
    return hidden, state


def plain(data: Any) -> Any:
    """Data as it travels in an Update (a protobuf Struct: numbers become floats)."""
    s = struct_pb2.Struct()
    s.update({"v": data})
    return json_format.MessageToDict(s)["v"]


@dataclass
class Played:
    salvo_id: str
    archipelago_id: str
    followers: dict[str, list[game_pb2.Update]]


def placement(seat: int) -> salvo_pb2.SalvoOrders:
    return salvo_pb2.SalvoOrders(placement=[salvo_pb2.ShipPlacement(ship=s, bow=b) for s, b in FLEETS[seat]])


async def mcp_call(cluster: Cluster, cap: Capture, who: str, token: str, tool: str, version: int = 0,
                   **args: Any) -> tuple[bool, str]:
    """One MCP tool call with an agent token (A90); what came back is kept as ``who`` received it, at
    game ``version``."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    http.event_hooks["response"].append(cap.http_hook(who))
    async with http, McpClient(streamable_http_client(f"{cluster.http_url}/mcp", http_client=http)) as c:
        result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    cap.received.append(Received(who, f"MCP {tool}", result.model_dump_json(), version=version, message=result))
    return result.is_error, text


async def play(cluster: Cluster, cap: Capture, needles: Needles) -> Played:
    followers: dict[str, Follower] = {}

    # ---- Salvo: the host on gRPC, the guest on JSON + WebSocket; both created/joined with a request id
    host = cap.client(cluster, "grpc", "salvo/0")
    create_id, join_id = secrets.token_hex(16), secrets.token_urlsafe(24)
    needles.add("Salvo host's request id", create_id)
    needles.add("Salvo guest's request id", join_id)
    options = {"seats": 2, "nickname": "host", "deadline_seconds": 600, "request_id": create_id, "public": True}
    created = await host.create("salvo", **options)
    sid = created.game_id
    needles.add("Salvo host's secret", created.secret)
    again = await host.create("salvo", **options)  # a retried create: the same game and secret
    assert (again.game_id, again.secret) == (sid, created.secret)
    err = await rpc_error(host.create("salvo", **{**options, "nickname": "other"}))
    assert err.code == "request/key_reused", err
    guest = cap.client(cluster, "web", "salvo/1")
    joined = await guest.join(created.code, "guest", request_id=join_id)
    needles.add("Salvo guest's secret", joined.secret)
    token = (await guest.create_agent_token(sid, "leak test")).token
    needles.add("Salvo guest's agent token", token)
    followers["salvo/0"], followers["salvo/1"] = Follower(host, sid), Follower(guest, sid)
    # a spectator of this public game (community.proto): checked as the players are, against what is
    # hidden from either player
    spectator = cap.client(cluster, "web", "salvo/spectator")
    followers["salvo/spectator"] = Follower(spectator, sid, spectator=True)
    await cap.notify_me(host, "salvo/0", sid, needles)
    await cap.notify_me(guest, "salvo/1", sid, needles)
    await host.start(sid)

    # ---- Archipelago: two players, the same doors; a few rounds (max_rounds) to its end
    p0 = cap.client(cluster, "grpc", "archipelago/0")
    a_create_id, a_join_id = secrets.token_urlsafe(32), secrets.token_hex(20)
    needles.add("Archipelago host's request id", a_create_id)
    needles.add("Archipelago guest's request id", a_join_id)
    made = await p0.create("archipelago", seats=2, nickname="p0", deadline_seconds=600, request_id=a_create_id,
                           archipelago=A.ArchipelagoOptions(max_rounds=ARCHIPELAGO_ROUNDS))
    aid = made.game_id
    needles.add("Archipelago host's secret", made.secret)
    p1 = cap.client(cluster, "web", "archipelago/1")
    needles.add("Archipelago guest's secret", (await p1.join(made.code, "p1", request_id=a_join_id)).secret)
    followers["archipelago/0"], followers["archipelago/1"] = Follower(p0, aid), Follower(p1, aid)
    await cap.notify_me(p0, "archipelago/0", aid, needles)
    await cap.notify_me(p1, "archipelago/1", aid, needles)
    await p0.start(aid)

    # ---- refused calls: made-up but well-formed secrets, and real ones used on the other game
    fake_secret, fake_token = secrets.token_urlsafe(24), "agt_" + secrets.token_urlsafe(24)
    needles.add("a made-up player secret", fake_secret)
    needles.add("a made-up agent token", fake_token)
    for door in ("grpc", "web"):
        stranger = cap.client(cluster, door, "stranger", fake_secret)
        assert (await rpc_error(stranger.view(sid))).status == "UNAUTHENTICATED"
        assert (await rpc_error(stranger.with_secret(fake_token).view(aid))).rule == "A90"
        with pytest.raises(ApiError) as refused:
            async with contextlib.aclosing(stranger.watch(sid, 0)) as stream:
                await anext(stream)
        assert refused.value.status == "UNAUTHENTICATED"
    assert (await rpc_error(host.view(aid))).status == "PERMISSION_DENIED"  # a Salvo secret on Archipelago
    assert (await rpc_error(p1.view(sid))).status == "PERMISSION_DENIED"  # and the other way
    with pytest.raises(ApiError) as refused:
        async with contextlib.aclosing(p1.watch(sid, 0)) as stream:
            await anext(stream)
    assert refused.value.status == "PERMISSION_DENIED"
    agent = cap.client(cluster, "grpc", "salvo/1", token)
    assert (await rpc_error(agent.view(aid))).rule == "A90"  # the token only reaches its own game
    # an MCP request with a token that opens nothing is refused before the MCP layer (401, rule A90)
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {fake_token}"})
    http.event_hooks["response"].append(cap.http_hook("stranger"))
    async with http:
        resp = await http.post(f"{cluster.http_url}/mcp", headers={"accept": "application/json, text/event-stream"},
                               json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {"name": "get_view", "arguments": {}}})
    assert resp.status_code == 401 and resp.json()["error"]["rule"] == "A90", resp.text

    # ---- the Salvo game to its end
    async def salvo_round(host_orders: salvo_pb2.SalvoOrders, guest_orders: salvo_pb2.SalvoOrders,
                          between: Callable[[int], Any] | None = None) -> None:
        view = await host.view(sid)
        await guest.view(sid)
        await host.submit(sid, view.version, salvo=host_orders)
        if between is not None:
            await between(view.round)
        await guest.submit(sid, view.version, salvo=guest_orders)
        await followers["salvo/0"].wait(lambda u: u.kind == "round_closed" and u.round == view.round)

    async def extras(round_: int) -> None:
        if round_ == 1:  # the agent plays once for the guest: MCP get_view, then GetView with the token
            is_error, text = await mcp_call(cluster, cap, "salvo/1", token, "get_view", guest.as_of)
            assert not is_error and json.loads(text)["you"] == 1, text
            assert (await agent.view(sid)).you == 1
            await host.chat(sid, "good luck")
            await guest.chat(sid, "you too, host", to=0)
            assert (await spectator.spectator_view(sid)).you == -1
        if round_ == 2:  # S5: a square shot before is refused, naming it
            err = await rpc_error(guest.submit(sid, (await guest.view(sid)).version, salvo=salvo_pb2.SalvoOrders(
                shots=["B4"])))
            assert err.rule == "S5" and "B4" in err.message, err

    await salvo_round(placement(0), placement(1))
    for mine, theirs in zip(HOST_SALVOS, GUEST_SALVOS, strict=True):
        await salvo_round(salvo_pb2.SalvoOrders(shots=mine), salvo_pb2.SalvoOrders(shots=theirs), extras)
    for client in (host, guest):
        assert (await client.view(sid)).status == lobby_pb2.GAME_STATUS_OVER
    assert (await spectator.spectator_view(sid)).status == lobby_pb2.GAME_STATUS_OVER  # (the whole game: S8)

    # ---- the Archipelago game to its end (chat to one and to all between the orders)
    seats = [p0, p1]
    async with asyncio.timeout(120):
        while True:
            views = [await s.view(aid) for s in seats]
            if views[0].status == lobby_pb2.GAME_STATUS_OVER:
                break
            since = views[0].seq

            def next_round(u: game_pb2.Update, since: int = since) -> bool:
                return u.seq > since and u.kind in ("round_opened", "game_over")
            if views[0].round >= 1:
                await p0.chat(aid, "psst", to=1)
                await p1.chat(aid, "hello all")
            for s in seats:
                fresh = await s.view(aid)
                await s.submit_message(aid, fresh.version, "archipelago", orders_message("archipelago",
                                                                                      choose_orders(fresh)))
            await followers["archipelago/0"].wait(next_round)
    return Played(sid, aid, {who: await f.end() for who, f in followers.items()})


# ---------------------------------------------------------------------------------------------- the checks
def check_salvo(received: list[Received], game_id: str, journal: list[dict[str, Any]]) -> int:
    """No Salvo player received an enemy ship square it had not named, before the end (S8); no view
    showed the enemy fleet or which own shot hit, no update named squares that hit (S6). Returns how
    many messages were checked."""
    hidden, final = salvo_hidden(journal)
    assert final.outcome is not None and final.outcome.winners == (0,)
    everything = squares(final.fleets[0]) | squares(final.fleets[1])
    started = next(v for v, e in enumerate(journal, start=1) if e["op"] == "start")
    assert len(hidden[started][0]) == 14 and len(hidden[-1][1]) == 10, "the hidden sets are what the game makes"
    checked = 0
    for r in received:
        if r.who == "stranger":
            assert not hidden_named(r.text, everything), r
            continue
        if not r.who.startswith("salvo/"):
            continue
        spectator = r.who == "salvo/spectator"  # no seat: nothing hidden from either player may reach it
        seat = -1 if spectator else int(r.who[-1])
        msg = r.message
        if isinstance(msg, game_pb2.GetViewResponse) and msg.game_id == game_id:
            if msg.status == lobby_pb2.GAME_STATUS_OVER:  # S8: at the end both fleets are shown
                shown = everything if spectator else squares(final.fleets[1 - seat])
                assert hidden_named(r.text, shown) == shown
                continue
            assert not msg.salvo.enemy_fleet and not any(s.HasField("hit") for s in msg.salvo.shots), r
            assert not (spectator and any(s.squares for s in msg.salvo.fleet)), r
        if isinstance(msg, game_pb2.Update):
            data = json_format.MessageToDict(msg.data)
            assert msg.event_kind != "shot", "salvo mode reports no single shot (S6)"
            if msg.event_kind == "salvo_report":
                assert set(data) <= {"round", "hits", "ships", "sunk"}, data
                assert all(set(s) == {"ship", "count"} for s in data.get("ships", [])), data
        if r.what == "MCP get_view":
            view = json.loads(msg.content[0].text)
            assert "enemy_fleet" not in view and all(len(s) == 2 for s in view["your_shots"]), view
        now = hidden[min(r.version, len(journal))]
        named = hidden_named(r.text, now[0] | now[1] if spectator else now[seat])
        assert not named, f"{r.who} received hidden enemy squares {named} at v{r.version}: {r.text[:400]}"
        checked += 1
    return checked


def check_archipelago(cap: Capture, played: Played, journal: list[dict[str, Any]]) -> int:
    """A80–A85, as test_archipelago_secrets checks them, on this shorter game."""
    states, produced = replay_journal(ARCHIPELAGO, journal)
    checked = 0
    for seat in (0, 1):
        who = f"archipelago/{seat}"
        for r in cap.received:
            v = r.message
            if r.who != who or not isinstance(v, game_pb2.GetViewResponse) or v.game_id != played.archipelago_id:
                continue
            st, events = states[v.version]
            if st is None:
                continue
            engine_view = ARCHIPELAGO.view(st, seat, events)
            check_view(st, seat, engine_view, events, f"v{v.version}")
            assert v.archipelago == json_format.ParseDict(engine_view, A.ArchipelagoView()), f"v{v.version}"
            checked += 1
        got = [u for u in played.followers[who] if u.seq]
        assert [u.seq for u in got] == list(range(1, len(got) + 1)) and got[-1].kind == "game_over"
        for u in got:
            if u.kind == "event":
                allowed = [plain({"kind": ev.kind, "data": dict(ev.data)}) for ev in produced[u.version]
                           if ev.visible_to(seat)]
                assert plain({"kind": u.event_kind, "data": json_format.MessageToDict(u.data)}) in allowed
            elif u.kind == "chat":
                assert not u.chat.HasField("to") or seat in (u.chat.to, u.chat.seat)
            elif u.kind == "submitted":
                assert set(json_format.MessageToDict(u.data)) == {"done"}
            checked += 1
    return checked


async def metrics_text(cluster: Cluster) -> str:
    """The gateway's /metrics with every shard's samples, as `archipelago serve` exposes them."""
    collector = ShardCollector(cluster.api.router)
    REGISTRY.register(collector)
    try:
        await collector.refresh()
        async with httpx.AsyncClient(timeout=30.0) as http:
            r = await http.get(f"{cluster.http_url}/metrics")
        assert r.status_code == 200
        return r.text
    finally:
        REGISTRY.unregister(collector)


async def test_a3_a80_a85_a90_s6_s8_no_secret_or_hidden_fact_in_any_message_log_metric_or_span(
        cluster: Cluster, spans: Any) -> None:
    needles = Needles()
    cap = Capture()
    ray_logs = RayLogs()
    shard_pids = [s["pid"] for s in await cluster.api.router.ping_all()]
    spans_before = {s.context.span_id for s in spans.get_finished_spans()}
    try:
        async with notified(cluster) as hooks:
            with every_log_line() as log_lines:
                cap.hooks = hooks
                played = await play(cluster, cap, needles)

                def all_over(ds: list[WebhookDelivery]) -> bool:  # (the last notification of each player)
                    return {d.name for d in ds if d.body["kind"] == "game_over"} == {
                        "salvo-0", "salvo-1", "archipelago-0", "archipelago-1"}
                await asyncio.to_thread(hooks.received.wait_until, all_over, WAIT_S)
                notifications = hooks.received.items()
                metrics = await metrics_text(cluster)
                # The shards log nothing while games go well: make one log a line, to prove its log is read
                # (a call its method cannot take is logged there as "shard call … failed").
                probe_pid, probe = await shard_log_probe(cluster)
                grpc_meta = []
                for who, call in cap.grpc_calls:
                    async with asyncio.timeout(WAIT_S):
                        grpc_meta.append((f"{who} gRPC metadata", repr((await call.initial_metadata(),
                                                                         await call.trailing_metadata(),
                                                                         await call.details()))))
    finally:
        await cap.close()
    new_spans = [s for s in spans.get_finished_spans() if s.context.span_id not in spans_before]
    ray_text = ray_logs.gained()

    # ---- every source, as text
    sources: list[tuple[str, str]] = []
    for r in cap.received:
        sources += [(f"{r.who} {r.what}", r.text), (f"{r.who} {r.what} (wire)", r.wire)]
    for who, path, status, headers, body in cap.raw_http:
        method = path.rsplit("/", 1)[-1]
        if method in ISSUING and status == 200:  # the one field that hands a player its own secret
            data = json.loads(body)
            assert data.pop(ISSUING[method]) in cap.issued[who], (who, path)
            body = json.dumps(data)
        sources.append((f"{who} HTTP {path} {status} {headers}", body))
    sources += grpc_meta
    hellos = [line for line in log_lines if line.startswith(OWN_HELLO)]
    sources += [(f"log line {i}", line) for i, line in enumerate(log_lines) if not line.startswith(OWN_HELLO)]
    sources += [(f"Ray log {name}", text) for name, text in ray_text.items()]
    sources.append(("/metrics", metrics))
    for fam in text_string_to_metric_families(metrics):
        for s in fam.samples:
            sources.append((f"metric {s.name}", " ".join([fam.name, s.name, *s.labels, *s.labels.values()])))
    sources += [(f"span {s.name}", s.to_json()) for s in new_spans]
    sources += [(f"notification to {d.name}", f"{d.headers} {d.raw.decode()}") for d in notifications]

    # ---- the scanners can fail: a planted secret, hash, piece and hidden square are found
    a_secret = next(v for v, label in needles.labels.items() if label == "Salvo guest's secret")
    assert needles.find(f"planted: Bearer {a_secret}") == {"Salvo guest's secret": 16}
    assert needles.find(hashlib.sha256(a_secret.encode()).hexdigest()) == {"sha256(Salvo guest's secret)": 0}
    assert needles.find(f"token={a_secret[5:5 + GRAM]}…") == {"Salvo guest's secret": 6}
    assert len(leaks([("a synthetic log line", f'{{"id": "{a_secret}"}}')], needles)) == 1
    assert hidden_named('{"square": "G10"}', {"G10"}) == {"G10"}
    assert hidden_named("A10x G100 (B4)", {"G10", "B4"}) == {"B4"}

    # ---- what was captured is what the test says it is
    assert len(needles.labels) == 2 * 15
    assert len(log_lines) > 50, "the log capture sees the process's records"
    assert 0 < len(hellos) <= 8, hellos  # one per WebSocket Watch of the JSON door, nothing else
    assert all(f"worker-{pid}.err" in ray_text for pid in shard_pids), sorted(ray_text)  # the shards' stderr
    assert probe in ray_text[f"worker-{probe_pid}.err"]
    assert 'shard="shard-0"' in metrics and "archipelago_requests_total" in metrics
    names = {s.name for s in new_spans}
    assert "/archipelago.v1.Game/GetView" in names and "/archipelago.v1.Lobby/CreateGame" in names, names
    # refused calls are traced too (a client's error is no server error: OpenTelemetry's gRPC server
    # spans keep their status unset and carry the code)
    assert any((s.attributes or {}).get("rpc.grpc.status_code") == grpc.StatusCode.UNAUTHENTICATED.value[0]
               for s in new_spans), "refused calls are traced too"
    assert {r.who for r in cap.received} == {"salvo/0", "salvo/1", "salvo/spectator", "archipelago/0",
                                             "archipelago/1", "stranger"}
    spectated = [r for r in cap.received if r.who == "salvo/spectator"]
    assert sum(r.what == "Spectate" for r in spectated) > 20, [r.what for r in spectated]
    assert sum(r.what == "GetSpectatorView" for r in spectated) == 2, [r.what for r in spectated]

    # ---- no secret anywhere, no hidden fact to any player
    found = leaks(sources, needles)
    assert not found, f"{len(found)} leaks:\n" + "\n".join(found[:20])
    salvo_journal = await cluster.api.store.journal_read(played.salvo_id)
    hidden_at_end = salvo_hidden(salvo_journal)[0][-1][1]  # what the guest never named of the host's fleet
    planted = Received("salvo/1", "synthetic", f'{{"square": "{min(hidden_at_end)}"}}', version=len(salvo_journal))
    with pytest.raises(AssertionError, match="hidden enemy squares"):  # the hidden-fact scan can fail too
        check_salvo([planted], played.salvo_id, salvo_journal)
    # ... and for a spectator: the host's own square, hidden from the guest only, is hidden from it too
    planted = Received("salvo/spectator", "synthetic", f'{{"square": "{min(hidden_at_end)}"}}',
                       version=len(salvo_journal))
    with pytest.raises(AssertionError, match="hidden enemy squares"):
        check_salvo([planted], played.salvo_id, salvo_journal)
    checked = check_salvo(cap.received, played.salvo_id, salvo_journal)
    archipelago_journal = await cluster.api.store.journal_read(played.archipelago_id)
    assert 3 <= sum(e["op"] == "close" for e in archipelago_journal) <= ARCHIPELAGO_ROUNDS + 1  # a few rounds
    checked += check_archipelago(cap, played, archipelago_journal)
    assert checked > 150, checked
    # ---- every notification: the documented payload, signed, about the player's own game, and no
    # square of the enemy fleet the player had not found (the payload says what happened, not where)
    hidden_before_end = salvo_hidden(salvo_journal)[0][-2]
    kinds = set()
    for d in notifications:
        game_id = played.salvo_id if d.name.startswith("salvo") else played.archipelago_id
        assert d.signature_ok and set(d.body) == NOTIFY_PAYLOAD and d.body["game_id"] == game_id, d.body
        kinds.add(d.body["kind"])
        if d.name.startswith("salvo"):
            assert not hidden_named(d.raw.decode(), hidden_before_end[int(d.name[-1])]), d.body
    assert {"game_started", "your_turn", "private_chat", "game_over"} <= kinds, kinds



NOTIFY_PAYLOAD = {"v", "id", "kind", "game_id", "game", "round", "title", "body", "content", "text", "url",
                  "deadline_unix_ms", "at_unix_ms", "language"}  # notify.proto


# ---------------------------------------------------------------------------------------------- Arcmage (M26)
# A card id names one physical card for the whole game ("c12"). In a player's messages: as a word; in
# log records, metric labels and spans: quoted, as any structured dump of a card would show it.
CARD_ID = re.compile(r"(?<![A-Za-z0-9_-])c\d+(?![A-Za-z0-9_-])")
QUOTED_CARD_ID = re.compile(r"""(?<=["'])c\d+(?=["'])""")
ARCMAGE_TURNS = 6
# The websockets library's DEBUG lines of the JSON client's own frames (in this, the client's, process):
# the frames of the player's own stream, clipped — what that player received, scanned as its messages.
OWN_FRAMES = ("websockets.client DEBUG < TEXT", "websockets.client DEBUG > TEXT")


def arcmage_hidden(S: dict[str, Any], p: int) -> set[str]:
    """The cards seat ``p`` may not see in engine state ``S`` (M26), from the zones themselves: every
    other seat's hand, deck, resource piles (face down) and unbuilt cities, and its own deck (nobody
    sees a deck's order) — but the cards its own pending decision offers it (a search, M48)."""
    out = set(S["seats"][p]["deck"])
    for q, s in enumerate(S["seats"]):
        if q != p:
            out |= {*s["hand"], *s["deck"], *s["unbuilt"], *(c for pile in s["piles"].values() for c in pile)}
    h = head(S)
    if h is not None and h["op"] == "decide" and h["seat"] == p:
        offered = [x for o in h["options"] for x in (o if isinstance(o, list) else [o])]
        out -= {x for x in offered if isinstance(x, str)}
    return out


def arcmage_replay(journal: list[dict[str, Any]]) -> tuple[list[Any], dict[int, list[Any]]]:
    """The journal replayed by the engine alone: the state after each version (index 0: before any)
    and the events each entry produced."""
    config: dict[str, Any] = {}
    seed = 0
    state: Any = None
    states: list[Any] = [None]
    produced: dict[int, list[Any]] = {}
    for version, e in enumerate(journal, start=1):
        if e["op"] == "create":
            config, seed = dict(e["config"]), int(e["seed"])
        elif e["op"] == "join" and "config" in e:
            config = dict(e["config"])
        elif e["op"] == "start":
            state = ARCMAGE.new_game(config, seed)
        elif e["op"] == "action":
            state, produced[version] = ARCMAGE.apply_action(state, int(e["seat"]), e["action"])
        elif e["op"] == "act":
            state, produced[version] = ARCMAGE.act(state, int(e["seat"]), e["action"])
        states.append(state)
    return states, produced


def check_arcmage(received: list[Received], game_id: str, journal: list[dict[str, Any]]) -> int:
    """No Arcmage player received a card id hidden from it (M26): no view names one and equals the
    engine's view of the replayed state; no update names one that was hidden before and after the
    entry it reports (a card going from a public zone to a hand is named as it goes), and each event
    went to a player in its audience. Returns how many messages were checked."""
    states, produced = arcmage_replay(journal)
    hidden = [{p: arcmage_hidden(st.data, p) if st is not None else set() for p in (0, 1)} for st in states]
    checked = 0
    for r in received:
        if not r.who.startswith("arcmage/"):
            continue
        spectator = r.who == "arcmage/spectator"  # no seat: every card hidden from any seat is hidden from it
        seat, v = -1 if spectator else int(r.who[-1]), min(r.version, len(journal))
        msg = r.message

        def hidden_then(at: int, seat: int = seat) -> set[str]:
            return hidden[at][0] | hidden[at][1] if seat < 0 else hidden[at][seat]
        secret = hidden_then(v)
        if isinstance(msg, game_pb2.Update):
            secret = secret & hidden_then(v - 1)
            if msg.kind == "event":
                allowed = [plain({"kind": ev.kind, "data": dict(ev.data)}) for ev in produced.get(msg.version, [])
                           if (ev.is_public(2) if spectator else ev.visible_to(seat))]
                assert plain({"kind": msg.event_kind, "data": json_format.MessageToDict(msg.data)}) in allowed, r
        if isinstance(msg, game_pb2.GetViewResponse) and msg.game_id == game_id and states[v] is not None:
            if spectator and msg.status == lobby_pb2.GAME_STATUS_OVER:
                checked += 1  # the whole game is open once over
                continue
            engine_view = ARCMAGE.spectator_view(states[v]) if spectator else ARCMAGE.view(states[v], seat)
            assert msg.arcmage == json_format.ParseDict(engine_view, arcmage_pb2.ArcmageView()), f"{r.who} v{v}"
            assert set(msg.arcmage.cards) and not set(msg.arcmage.cards) & secret
        named = set(CARD_ID.findall(r.text)) & secret
        assert not named, f"{r.who} received hidden cards {sorted(named)} at v{v}: {r.text[:400]}"
        checked += 1
    return checked


async def test_m26_m40_arcmage_no_hidden_card_in_any_message_log_metric_or_span(cluster: Cluster, spans: Any) -> None:
    """An Arcmage game of two (gRPC and JSON + WebSocket; every seat stops at the opponents' draw phase,
    M40, so windows open each turn besides the stack's) played to its end by each seat's autopilot
    choice, both seats reading their view at every step; then no hand card, deck card (its order) or
    face-down card of another player is in any message a player received (views, updates, answers,
    errors), and no card id at all in any log record of this process or the Ray node, in /metrics or
    in a span. A player naming the other's hand card gets the refusal a card that does not exist gets."""
    cap = Capture()
    ray_logs = RayLogs()
    spans_before = {s.context.span_id for s in spans.get_finished_spans()}
    probes: list[str] = []
    try:
        async with notified(cluster) as hooks, contextlib.AsyncExitStack() as stack:
            log_lines = stack.enter_context(every_log_line())
            cap.hooks = hooks
            p0 = cap.client(cluster, "grpc", "arcmage/0")
            stops = [arcmage_pb2.ArcmageStops(phases=["draw"]) for _ in range(2)]
            made = await p0.create("arcmage", seats=2, nickname="p0", deadline_seconds=600, public=True,
                                   arcmage=arcmage_pb2.ArcmageOptions(stops=stops, max_rounds=ARCMAGE_TURNS))
            gid = made.game_id
            p1 = cap.client(cluster, "web", "arcmage/1")
            await p1.join(made.code, "p1")
            players = [p0, p1]
            spectator = cap.client(cluster, "grpc", "arcmage/spectator")  # a spectator of this public game
            followers = [Follower(p0, gid), Follower(p1, gid), Follower(spectator, gid, spectator=True)]
            for i, p in enumerate(players):
                await cap.notify_me(p, f"arcmage/{i}", gid)
            await p0.start(gid)
            async with asyncio.timeout(120):
                while True:
                    views = [await p.view(gid) for p in players]
                    if views[0].status == lobby_pb2.GAME_STATUS_OVER:
                        break
                    seat = views[0].step.players[0]
                    v = views[seat]
                    if not probes and v.step.kind == "turn" and v.arcmage.pending.phase == "play1":
                        state = (await arcmage_state(cluster, gid, v.version)).data
                        theirs = state["seats"][1 - seat]["hand"][0]  # the other's hand card
                        assert theirs in arcmage_hidden(state, seat)
                        prober = Recorder(players[seat].inner, f"probe/{seat}", cap)  # (it names the card itself)
                        for card in (theirs, "c999"):
                            play = arcmage_pb2.ArcmageAction(play=arcmage_pb2.ArcmagePlay(card=card))
                            err = await rpc_error(prober.act(gid, arcmage=play, version=v.version))
                            assert err.status == "INVALID_ARGUMENT" and err.field == "play.card", err
                            probes.append(f"{err.code} {err.field} {err.rule} {err.message.replace(card, '<card>')}")
                        await p0.chat(gid, "well played")
                    if v.version % 4 == 0:
                        await spectator.spectator_view(gid)
                    action = ARCMAGE.autopilot_action(to_json(v.arcmage))
                    await players[seat].act(gid, arcmage=json_format.ParseDict(action, arcmage_pb2.ArcmageAction()),
                                            version=v.version)
            for f in followers:
                await f.end()
            assert (await spectator.spectator_view(gid)).status == lobby_pb2.GAME_STATUS_OVER

            def all_over(ds: list[WebhookDelivery]) -> bool:
                return {d.name for d in ds if d.body["kind"] == "game_over"} == {"arcmage-0", "arcmage-1"}
            await asyncio.to_thread(hooks.received.wait_until, all_over, WAIT_S)
            notifications = hooks.received.items()
            metrics = await metrics_text(cluster)
            probe_pid, probe = await shard_log_probe(cluster)
    finally:
        await cap.close()
    new_spans = [s for s in spans.get_finished_spans() if s.context.span_id not in spans_before]
    ray_text = ray_logs.gained()
    journal = await cluster.api.store.journal_read(gid)
    final = arcmage_replay(journal)[0][-1]
    every_card = set(final.data["cards"])

    assert len(probes) == 2 and probes[0] == probes[1], probes  # the refusal tells nothing of where it is
    # ---- the scanners can fail
    theirs_at_end = sorted(arcmage_hidden(final.data, 0))[0]
    planted = Received("arcmage/0", "synthetic", f'{{"hand": ["{theirs_at_end}"]}}', version=len(journal))
    with pytest.raises(AssertionError, match="hidden cards"):
        check_arcmage([planted], gid, journal)
    assert QUOTED_CARD_ID.findall(f"shard DEBUG action {{'play': {{'card': '{theirs_at_end}'}}}}") == [theirs_at_end]

    # ---- no card id in any log record, metric or span
    sources = [(f"log line {i}", line) for i, line in enumerate(log_lines) if not line.startswith(OWN_FRAMES)]
    sources += [(f"Ray log {name}", text) for name, text in ray_text.items()]
    sources.append(("/metrics", metrics))
    for fam in text_string_to_metric_families(metrics):
        for s in fam.samples:
            sources.append((f"metric {s.name}", " ".join(f'"{x}"' for x in (fam.name, s.name, *s.labels,
                                                                             *s.labels.values()))))
    sources += [(f"span {s.name}", s.to_json()) for s in new_spans]
    assert probe in ray_text[f"worker-{probe_pid}.err"] and len(log_lines) > 50 and new_spans
    def around(text: str) -> str:  # (the text about the first card id found)
        m = next(m for m in QUOTED_CARD_ID.finditer(text) if m.group(0) in every_card)
        return text[max(0, m.start() - 600):m.end() + 300]
    found = [f"{sorted(set(QUOTED_CARD_ID.findall(text)) & every_card)[:5]} in {where}: {around(text)!r}"
             for where, text in sources if set(QUOTED_CARD_ID.findall(text)) & every_card]
    assert not found, f"{len(found)} card ids outside the players' messages:\n" + "\n".join(found[:10])

    # ---- no hidden card to any player
    assert ARCMAGE.outcome(final) is not None and sum(e["op"] == "action" for e in journal) > 30
    assert {r.who for r in cap.received} - {"probe/0", "probe/1"} == {"arcmage/0", "arcmage/1", "arcmage/spectator"}
    spectated = [r.what for r in cap.received if r.who == "arcmage/spectator"]
    assert spectated.count("Spectate") > 30 and spectated.count("GetSpectatorView") > 3, spectated
    planted = Received("arcmage/spectator", "synthetic", f'{{"hand": ["{sorted(arcmage_hidden(final.data, 1))[0]}"]}}',
                       version=len(journal))  # a card seat 0 may see (its hand) but not every seat: hidden
    with pytest.raises(AssertionError, match="hidden cards"):
        check_arcmage([planted], gid, journal)
    checked = check_arcmage(cap.received, gid, journal)
    assert checked > 200, checked
    # ---- every notification: the documented payload, signed, and no card at all (what happened, not what)
    kinds = set()
    for d in notifications:
        assert d.signature_ok and set(d.body) == NOTIFY_PAYLOAD and d.body["game_id"] == gid, d.body
        assert not CARD_ID.findall(d.raw.decode()), d.body
        kinds.add(d.body["kind"])
    assert {"game_started", "your_turn", "your_decision", "game_over"} <= kinds, kinds


async def arcmage_state(cluster: Cluster, game_id: str, version: int) -> Any:
    """The engine state at ``version``, replayed from the journal (the test's own knowledge, never a
    player's)."""
    journal = await cluster.api.store.journal_read(game_id)
    return arcmage_replay(journal[:version])[0][-1]


async def shard_log_probe(cluster: Cluster) -> tuple[int, str]:
    """Make a shard log a line, to prove its log is read: a call its method cannot take (an unknown
    keyword argument, named by the probe) fails inside the shard, which logs "shard call … failed"
    with the error. Returns the shard's pid and the probe."""
    probe = f"leak_probe_{secrets.token_hex(4)}"
    pid = (await cluster.handles[0].ping.remote())["pid"]
    got = await cluster.handles[0].call.remote("whoami", "no-such-game", 0, **{probe: 1})
    assert got["error"]["code"] == "server/internal", got
    return int(pid), probe
