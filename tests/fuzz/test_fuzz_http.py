"""Property-based fuzzing (hypothesis) of the HTTP port: every rpc of the JSON API (``POST /v1/…``), the
first frame of the WebSocket ``/v1/Game/Watch``, and the pages ``/join/CODE``,
``/client/archipelago.json`` and ``/healthz``.

JSON API bodies are raw bytes (invalid UTF-8, UTF-16, a BOM, truncated JSON, ``NaN`` and ``1e400``,
numbers of 5,000 digits, duplicate keys, JSON nested 10,000 and 100,000 deep, at the top or inside a
field, non-objects, more than the 256 KiB limit) or request messages in protobuf's JSON mapping with
hostile contents (oversized strings and lists, unknown enums, edge and huge numbers, lone surrogates,
wrong types, missing, unknown and camelCase fields: see :func:`tests.fuzz.common.json_message`), with
any ``Authorization`` and ``Content-Type`` header. Each example must get a 200 carrying the rpc's
response message or a 4xx JSON error body as the README documents it — never a 5xx, never a body
that is not JSON — the gateway answers ``/healthz`` after it, and a refused call changes no arena
game (view and journal, A16). A WebSocket refusal is that body in one text frame, then the close code
4000 + its HTTP status; a valid first frame (only the finished game's secrets are valid: its stream
ends by itself) gets Updates, then the close code 1000.

Budget: ARCHIPELAGO_FUZZ_EXAMPLES examples per test and rpc (default in common.EXAMPLES), derandomised.
A longer campaign: ``ARCHIPELAGO_FUZZ_EXAMPLES=200 .venv/bin/pytest -q tests/fuzz --hypothesis-show-statistics``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote, unquote

import httpx2 as httpx
import pytest
import websockets
from google.protobuf import json_format
from hypothesis import event, given
from hypothesis import strategies as st

from archipelago.v1 import game_pb2
from gateway.api import MAX_REQUEST_BYTES
from gateway.webclient import archipelago_rules
from tests.conftest import Cluster
from tests.fuzz.common import (
    BAD_UTF8,
    CALL_TIMEOUT_S,
    FUZZ,
    REQUEST,
    SERVICE,
    UNARY,
    Arena,
    Target,
    Vocab,
    any_json,
    check_error_body,
    check_http_answer,
    descriptor,
    json_message,
    nasty_text,
    pick,
    vocabulary,
)

pytestmark = pytest.mark.e2e

SPECIAL_BODIES = [b"", b" ", b"null", b"[]", b'"x"', b"1", b"true", b"{", b"}", b'{"a":1,"a":2}',
                  b"\xef\xbb\xbf{}", "{}".encode("utf-16"), b'{"game_id": "x"}\x00', b"{}{}", b"{}garbage",
                  b'{"deadline_seconds": NaN}', b'{"seats": Infinity}', b'{"version": 1e400}',
                  b'{"version": -Infinity}', b'{"version": ' + b"9" * 5000 + b"}", b'{"seats": 1.5}',
                  b'{"game_id": "\\ud800"}', b'{"game_id": "\\u0000"}', b'{"game_id": "\\x41"}',
                  b'{"game_id": \'x\'}', b"{game_id: 1}", b'{"salvo": {"shots": "A1"}}']


def _nested(opener: str, depth: int, field: str | None) -> bytes:
    closer = "]" if opener == "[" else "}"
    inner = opener * depth + ("" if opener == "[" else "1") + closer * depth
    return (f'{{"{field}": {inner}}}' if field else inner).encode()


def raw_body(name: str) -> st.SearchStrategy[bytes]:
    """Bodies that are not (quite) a request message in JSON."""
    fields = [f.name for f in descriptor(REQUEST[name]).fields] or ["game_id"]
    field_names = st.sampled_from(fields)
    return st.one_of(
        st.binary(max_size=200),
        st.sampled_from(SPECIAL_BODIES),
        st.builds(_nested, st.sampled_from(["[", '{"a":', '{"game_id":']),
                  st.sampled_from([101, 1_000, 10_000, 100_000]), st.one_of(st.none(), field_names)),
        st.builds(lambda f, bad: b'{"' + f.encode() + b'": "' + bad + b'"}', field_names, st.sampled_from(BAD_UTF8)),
        st.builds(lambda f: json.dumps({f: "\ud800"}, ensure_ascii=False).encode("utf-8", "surrogatepass"),
                  field_names),
        any_json().map(lambda v: json.dumps(v).encode()),
        field_names.map(lambda f: b'{"' + f.encode() + b'": "' + b"x" * (MAX_REQUEST_BYTES + 1) + b'"}'),
    )


def json_body(name: str, vocab: Vocab) -> st.SearchStrategy[bytes]:
    """A request message in JSON with hostile contents (well-typed two times in three); non-ASCII raw
    or escaped; lone surrogates raw (then the body is not UTF-8) or escaped."""
    desc = descriptor(REQUEST[name])
    return st.builds(lambda d, ascii_only: json.dumps(d, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"),
                     st.sampled_from([True, True, False]).flatmap(lambda typed: json_message(desc, vocab, typed=typed)),
                     st.booleans())


HEADER_BYTES = [*range(0x21, 0x7F), *range(0x80, 0x100)]


def http_headers(target: Target, secrets: list[str]) -> st.SearchStrategy[dict[bytes, bytes]]:
    """Half the time the target's secret, else none, another, a near miss or junk (bytes up to 0xFF);
    any Content-Type."""
    junk = st.lists(st.sampled_from(HEADER_BYTES), min_size=1, max_size=40).map(bytes)  # h11 sends no trailing space
    auth = pick(st.just(b"Bearer " + target.secret.encode()), st.one_of(
        st.none(), st.sampled_from(secrets).map(lambda s: b"Bearer " + s.encode()),
        st.sampled_from(secrets).map(str.encode), st.sampled_from(secrets).map(lambda s: b"Bearer " + s[:-1].encode()),
        st.sampled_from([b"Bearer", b"Bearer agt_", b"Basic Zm9vOmJhcg==", b"Bearer \xff\xfe",
                         b"Bearer " + b"a" * 4000]),
        junk.map(lambda j: b"Bearer " + j), junk))
    ctype = st.sampled_from([None, b"application/json", b"text/plain", b"application/x-www-form-urlencoded",
                             b"multipart/form-data; boundary=x", b"application/json; charset=utf-16",
                             b"application/grpc", b"\xff"])

    def headers(a: bytes | None, c: bytes | None) -> dict[bytes, bytes]:
        out = {}
        if a is not None:
            out[b"authorization"] = a
        if c is not None:
            out[b"content-type"] = c
        return out

    return st.builds(headers, auth, ctype)


async def http_alive(http: httpx.AsyncClient) -> None:
    """The gateway still answers: /healthz pings every shard."""
    resp = await http.get("/healthz")
    assert resp.status_code == 200 and resp.json()["status"] == "ok", resp.text


async def post(arena: Arena, http: httpx.AsyncClient, name: str, body: bytes, headers: dict[bytes, bytes]) -> None:
    """POST ``body`` to rpc ``name``; check the answer, that a refusal changed nothing, and health."""
    resp = await http.post(f"/v1/{SERVICE[name]}/{name}", content=body, headers=headers)
    what = f"{name} {body[:120]!r} ({len(body)} bytes) {headers!r:.200} -> {resp.status_code} {resp.text[:300]}"
    event(f"{resp.status_code} {resp.text[:60] if resp.status_code != 200 else ''}")
    try:
        check_http_answer(resp.status_code, resp.headers.get("content-type", ""), resp.text, name)
    finally:
        await arena.settle(resp.status_code != 200, what)
    await http_alive(http)


@pytest.mark.parametrize("name", UNARY)
@FUZZ
@given(data=st.data())
async def test_http_raw_bodies_every_rpc_A16(cluster: Cluster, arena: Arena, http: httpx.AsyncClient, name: str,
                                             data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(arena.targets()), label="target")
    body = data.draw(raw_body(name), label="body")
    await post(arena, http, name, body, data.draw(http_headers(target, arena.secrets()), label="headers"))


@pytest.mark.parametrize("name", UNARY)
@FUZZ
@given(data=st.data())
async def test_http_json_messages_every_rpc_A3_A16_A53_A70(cluster: Cluster, arena: Arena, http: httpx.AsyncClient,
                                                          name: str, data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(arena.targets()), label="target")
    body = data.draw(json_body(name, vocabulary(arena, target)), label="body")
    await post(arena, http, name, body, data.draw(http_headers(target, arena.secrets()), label="headers"))


# ---------------------------------------------------------------------------------------- the WebSocket
_ABSENT = object()


def first_frames(arena: Arena, target: Target) -> st.SearchStrategy[str | bytes]:
    """The Watch WebSocket's first frame: a WatchRequest in JSON (typed or not) with an
    ``authorization`` (half the time the target's secret; else none, another, of any JSON type); other
    text; a binary frame."""
    vocab = vocabulary(arena, target)
    secrets = arena.secrets(streamable=False)
    auth = pick(st.just(f"Bearer {target.secret}"), st.one_of(
        st.just(_ABSENT), st.sampled_from(secrets).map(lambda s: f"Bearer {s}"), st.sampled_from(secrets),
        any_json(), nasty_text(big=False).map(lambda s: f"Bearer {s}")))

    def hello(request: dict[str, Any], authorization: Any) -> dict[str, Any]:
        return request if authorization is _ABSENT else {**request, "authorization": authorization}

    hellos = st.builds(hello, st.sampled_from([True, True, False]).flatmap(
        lambda typed: json_message(descriptor(game_pb2.WatchRequest), vocab, typed=typed)), auth)
    hello_text = hellos.map(lambda d: json.dumps(d))  # ASCII: a lone surrogate travels escaped
    text = st.one_of(
        st.text(max_size=50), st.sampled_from([b.decode("utf-8", "replace") for b in SPECIAL_BODIES]),
        st.builds(lambda o, n: _nested(o, n, None).decode(), st.sampled_from(["[", '{"a":']),
                  st.sampled_from([1_000, 10_000, 100_000])),
        st.just('{"game_id": "' + "x" * (MAX_REQUEST_BYTES + 1) + '"}'))
    binary = st.one_of(st.binary(max_size=100), hellos.map(lambda d: json.dumps(d).encode()))
    return pick(hello_text, hello_text, text, binary)


async def ws_exchange(url: str, frame: str | bytes) -> tuple[list[str | bytes], int | None]:
    """Send the first frame; every frame the server sends until it closes, and its close code."""
    got: list[str | bytes] = []
    async with asyncio.timeout(CALL_TIMEOUT_S), websockets.connect(url, max_size=None, proxy=None) as ws:
        await ws.send(frame)
        try:
            async for message in ws:
                got.append(message)
        except websockets.ConnectionClosedError:
            pass
    return got, ws.close_code


@FUZZ
@given(data=st.data())
async def test_websocket_watch_first_frame_A3(cluster: Cluster, arena: Arena, http: httpx.AsyncClient,
                                              data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(arena.targets(streamable=False)), label="target")
    frame = data.draw(first_frames(arena, target), label="first frame")
    url = cluster.http_url.replace("http", "ws", 1) + "/v1/Game/Watch"
    got, code = await ws_exchange(url, frame)
    what = f"Watch {frame[:120]!r} ({len(frame)}) -> {code} {got[:2]!r:.300}"
    first = json.loads(got[0]) if got and isinstance(got[0], str) else None
    refused = isinstance(first, dict) and "error" in first
    error: dict[str, Any] = first["error"] if refused else {}  # type: ignore[index]
    event(f"{code} {error.get('code', '')}")
    try:
        assert all(isinstance(m, str) for m in got), what
        if refused:
            assert len(got) == 1, what
            check_error_body(first, (code or 0) - 4000)
            assert code == 4000 + error["http_status"], what
        else:
            updates = [json_format.ParseDict(json.loads(m), game_pb2.Update()) for m in got]
            assert code == 1000, what  # only the finished game's secrets are valid: its stream ends
            assert not updates or updates[-1].kind == "game_over", what
    finally:
        await arena.settle(refused, what)
    await http_alive(http)


# ---------------------------------------------------------------------------------------- the pages
ACCEPTS = [None, b"text/html", b"application/json", b"*/*", b"text/html;q=0.1, */*", b"\xff\xfe", b"text/*"]


@FUZZ
@given(data=st.data())
async def test_http_join_page_rules_and_healthz(cluster: Cluster, arena: Arena, http: httpx.AsyncClient,
                                                data: st.DataObject) -> None:
    """``/join/CODE`` (any code: percent-encoded text, raw escapes such as %FF, %00, %2F), the rule tables and
    /healthz, with any Accept header and query string: never a 5xx; each answers what it documents."""
    page = data.draw(st.sampled_from(["join", "rules", "healthz"]), label="page")
    accept = data.draw(st.sampled_from(ACCEPTS), label="accept")
    query = data.draw(st.one_of(st.just(""), st.text(max_size=20).map(lambda q: "?" + quote(q, safe="=&"))),
                      label="query")
    headers = {b"accept": accept} if accept is not None else {}
    code = ""
    if page == "join":
        codes = [g.code for g in arena.games]
        code = data.draw(st.one_of(st.sampled_from(codes).map(lambda c: quote(c)), nasty_text(big=False).map(
            lambda t: quote(t[:200], safe="")), st.sampled_from(["%FF%FE", "%00", "a%2Fb", "%", "%zz", "..", "%20"])),
            label="code")
        path = f"/join/{code}"
    else:
        path = {"rules": "/client/archipelago.json", "healthz": "/healthz"}[page]
    resp = await http.get(path + query, headers=headers)
    sent = resp.request.url.raw_path.decode("ascii").partition("?")[0]  # the client resolves "." and ".."
    what = f"GET {path + query} (sent {sent}) {headers!r} -> {resp.status_code} {resp.text[:200]}"
    assert resp.status_code < 500, what
    if page == "join" and not sent.startswith("/join/"):
        assert resp.status_code in (200, 404), what  # "/join/.." is "/", the home page
    elif page == "join":
        decoded = unquote(sent.removeprefix("/join/"), errors="replace")
        if not decoded or "/" in decoded:
            assert resp.status_code == 404, what  # no code: not the join route
        else:
            assert resp.status_code == 200, what
            html = accept is not None and b"text/html" in accept
            assert resp.headers["content-type"].startswith("text/html" if html else "text/plain"), what
    elif page == "rules":
        assert resp.status_code == 200 and resp.json() == json.loads(json.dumps(archipelago_rules())), what
    else:
        assert resp.status_code == 200 and resp.json()["status"] == "ok", what
    await arena.settle(True, what)  # pages change nothing
