"""The protocol as a stranger meets it, through both doors: errors (status, code, field, rule,
message), idempotency-key scope, version bounds, retried joins; and the WebSocket's own rules."""

from __future__ import annotations

import contextlib
import json
import secrets
from pathlib import Path

import httpx2 as httpx
import pytest
import websockets

from client.base import BaseClient
from engine import errors as E
from gateway import errors
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, placement, rpc_error, shots, submit_and_close

pytestmark = pytest.mark.e2e


def check(err: object, status: str, code: str, field: str, rule: str) -> None:
    """Every door fills the four fields the same way; the message is "<field>: rule <rule>: <reason>"."""
    assert (err.status, err.code, err.field, err.rule) == (status, code, field, rule), err  # type: ignore[attr-defined]
    prefix = ": ".join(p for p in (field, f"rule {rule}" if rule else "") if p)
    assert err.message.startswith(prefix + ": "), err.message  # type: ignore[attr-defined]


async def test_defect5_auth_errors_name_field_and_rule(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    anonymous: BaseClient = cluster.client(door)
    check(await rpc_error(anonymous.view(game.game_id)), "UNAUTHENTICATED", "auth/unauthenticated",
          "authorization", "A3")
    stranger = cluster.client(door, "not-a-secret")
    check(await rpc_error(stranger.view(game.game_id)), "UNAUTHENTICATED", "auth/unauthenticated",
          "authorization", "A3")
    other = await new_game(lambda: cluster.client(door))
    check(await rpc_error(other.host.view(game.game_id)), "PERMISSION_DENIED", "auth/permission_denied",
          "game_id", "A3")
    check(await rpc_error(game.guest.start(game.game_id)), "PERMISSION_DENIED", "auth/permission_denied",
          "authorization", "A4")


async def test_defect5_stale_future_and_over_name_field_and_rule(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door), max_rounds=1)
    first = await game.host.view(game.game_id)
    await submit_and_close(game, placement(0), placement(1))
    err = await rpc_error(game.host.submit(game.game_id, first.version, salvo=shots(["A1"])))
    check(err, "ABORTED", "action/stale_state_id", "version", "A16")
    now = await game.host.view(game.game_id)
    for future in (now.version + 1, 2**63 - 1):  # defect 3: a version from the future
        err = await rpc_error(game.host.submit(game.game_id, future, salvo=shots(["A1"])))
        check(err, "INVALID_ARGUMENT", "order/invalid", "version", "A16")
    assert (await game.host.view(game.game_id)).version == now.version
    await submit_and_close(game, shots(["A9"]), shots(["A9"]))  # max_rounds = 1: over
    over = await game.host.view(game.game_id)
    err = await rpc_error(game.host.submit(game.game_id, over.version, salvo=shots(["B9"])))
    check(err, "FAILED_PRECONDITION", "game/over", "game_id", "S7")
    check(await rpc_error(game.host.chat(game.game_id, "gg")), "FAILED_PRECONDITION", "game/over", "game_id", "S7")


async def test_defect5_a_huge_bad_string_is_not_echoed_whole(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    await submit_and_close(game, placement(0), placement(1))
    view = await game.host.view(game.game_id)
    huge = "Z" * 200_000  # under the request size limit (test_request_limits.py): read, refused, clipped
    err = await rpc_error(game.host.submit(game.game_id, view.version, salvo=shots([huge])))
    assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "order/invalid", "shots[0]", "S1")
    assert len(err.message) < 500 and "ZZZZ" in err.message
    assert not (await game.host.view(game.game_id)).submitted


async def test_defect2_idempotency_keys_are_per_player(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    a = await game.host.submit(game.game_id, view.version, key="same", draft=True, salvo=placement(0))
    b = await game.guest.submit(game.game_id, view.version, key="same", draft=True, salvo=placement(1))
    assert not a.replayed and not b.replayed and b.version == a.version + 1
    assert (await game.guest.view(game.game_id)).salvo_pending == placement(1)
    err = await rpc_error(game.host.submit(game.game_id, view.version, key="same", salvo=shots(["A1"])))
    check(err, "INVALID_ARGUMENT", "request/key_reused", "idempotency_key", "A16")


async def test_defect9_a_retried_join_gets_the_same_seat_and_secret(cluster: Cluster, door: str) -> None:
    host = cluster.client(door)
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60,
                                request_id=secrets.token_urlsafe(16))
    rid = secrets.token_urlsafe(16)
    first = await cluster.client(door).join(created.code, "guest", request_id=rid)
    await host.start(created.game_id)
    again = await cluster.client(door).join(created.code, "guest", request_id=rid)
    assert (again.seat, again.secret, again.game_id) == (first.seat, first.secret, first.game_id)
    err = await rpc_error(cluster.client(door).join(created.code, "guest", request_id="short"))
    check(err, "INVALID_ARGUMENT", "order/invalid", "request_id", "")


async def test_every_error_class_has_one_row_and_the_readme_lists_it() -> None:
    classes = {c for c in vars(E).values() if isinstance(c, type) and issubclass(c, E.GameError)}
    assert classes == set(errors.TABLE)
    assert len({k.code for k in errors.TABLE.values()}) == len(errors.TABLE)
    readme = Path("README.md").read_text(encoding="utf-8")
    for kind in errors.TABLE.values():
        if kind.code != E.GameError.code:
            assert f"`{kind.code}`" in readme, kind.code


async def test_http_errors_are_json_with_the_status_of_the_table(cluster: Cluster) -> None:
    async with httpx.AsyncClient(base_url=cluster.http_url) as http:
        r = await http.post("/v1/Lobby/JoinGame", content=b'{"code": "ZZZZZZ", "nick": "x"}')
        assert r.status_code == 400
        assert r.json()["error"]["code"] == "order/invalid" and r.json()["error"]["field"] == "nick"  # its name
        assert "a JoinGameRequest has code, nickname, request_id" in r.json()["error"]["message"]
        r = await http.post("/v1/Lobby/JoinGame", json={"code": "ZZZZZZ", "nickname": "x"})
        assert r.status_code == 404 and r.json()["error"] == {
            "code": "lookup/not_found", "field": "code", "rule": "A2", "status": "NOT_FOUND", "http_status": 404,
            "retry": False, "message": "code: rule A2: no game with code 'ZZZZZZ'"}
        r = await http.post("/v1/Game/GetView", json={"game_id": "x"})
        assert r.status_code == 401 and r.json()["error"]["field"] == "authorization"
        r = await http.get("/v1/Game/GetView")
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert (r.json()["error"]["code"], r.json()["error"]["field"]) == ("order/invalid", "method")
        r = await http.post("/v1/Game/Nope", json={})
        assert r.status_code == 404 and r.json()["error"]["code"] == "lookup/not_found"
        assert r.json()["error"]["field"] == "rpc"
        r = await http.post("/v1/Game/Watch", json={})
        assert r.status_code == 400 and r.json()["error"]["field"] == "method"


async def test_websocket_takes_the_secret_in_its_first_frame_never_the_url(cluster: Cluster) -> None:
    game = await new_game(lambda: cluster.client("web"))
    url = cluster.http_url.replace("http", "ws", 1) + "/v1/Game/Watch"
    async with websockets.connect(url) as ws:  # no secret: an error frame, then close 4401
        await ws.send(json.dumps({"game_id": game.game_id}))
        frame = json.loads(await ws.recv())
        assert frame["error"]["code"] == "auth/unauthenticated"
        with contextlib.suppress(websockets.ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 4401
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"authorization": f"Bearer {game.host.secret}", "game_id": game.game_id,
                                  "after_seq": "0"}))
        first = json.loads(await ws.recv())
        assert first["kind"] == "joined" and first["seq"] == "1" and first["seat"] == 0


def test_every_update_kind_and_salvo_event_is_documented() -> None:
    """The .proto and the README name every Update kind the server sends and every Salvo event kind."""
    import re
    from pathlib import Path

    actor = "".join(p.read_text() for p in sorted(Path("services").glob("*actor*.py")))  # the actor and its parts
    api = Path("gateway/watch.py").read_text()  # (the Watch streams: gateway/watch.py)
    sent = set(re.findall(r'_push\(\s*"(\w+)"', actor)) | set(re.findall(r'"kind": "(\w+)"', actor))
    sent |= {"connected", "disconnected"} if '"connected" if connected else "disconnected"' in api else set()
    assert {"joined", "started", "round_opened", "submitted", "chat", "round_closed", "event", "game_over",
            "resync", "connected", "disconnected", "step"} == sent
    proto = Path("proto/archipelago/v1/game.proto").read_text()
    readme = Path("README.md").read_text()
    for kind in sent:
        assert f'"{kind}"' in proto, kind
        assert f"`{kind}`" in readme, kind
    salvo_events = set(re.findall(r'Event\("(\w+)"', Path("engine/salvo/game.py").read_text())) - {"game_over"}
    assert salvo_events
    for kind in salvo_events:
        assert f"| `{kind}` |" in readme, kind
