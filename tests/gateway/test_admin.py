"""The operators' door (issue 13): ``/admin/…`` of the gateway's HTTP app over the real cluster (shards
on a local Ray, a real redis-server), players on both doors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any

import httpx2 as httpx
import pytest
from google.protobuf import json_format
from prometheus_client import REGISTRY

from archipelago.v1 import lobby_pb2
from client.errors import ApiError
from gateway.admin import ACTIONS, OUTCOMES
from gateway.api import ApiConfig, PlayerAPI, hash_secret
from gateway.http import build_app
from gateway.limits import Limits
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, connected, new_game, placement

pytestmark = pytest.mark.e2e

TOKEN = "op-" + secrets.token_urlsafe(24)
ENDED = {"winners": [], "draw": False, "reason": "ended", "scores": []}


async def no_health() -> dict[str, Any]:
    return {}


@contextlib.asynccontextmanager
async def door(api: PlayerAPI, token: str | None = TOKEN, auth: str | None = TOKEN
               ) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the gateway's app (built as `archipelago serve` builds it) over ``api``;
    ``auth``: the token its requests carry (None: no Authorization header)."""
    app = build_app(no_health, admin_token=token)
    app.state.api = api
    headers = {} if auth is None else {"authorization": f"Bearer {auth}"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway.test",
                                 headers=headers, timeout=60) as client:
        yield client


def refusal(resp: httpx.Response, http: int, code: str) -> dict[str, Any]:
    assert resp.status_code == http, resp.text
    err: dict[str, Any] = resp.json()["error"]
    assert err["code"] == code and err["http_status"] == http, err
    assert set(err) == {"code", "field", "rule", "message", "status", "http_status", "retry"}
    return err


async def test_without_a_usable_token_the_door_is_off(cluster: Cluster, caplog: pytest.LogCaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for path in ("/admin/shards", "/admin/games/x", "/admin"):
        async with door(cluster.api, token="") as client:
            err = refusal(await client.get(path), 404, "lookup/not_found")
            assert err["message"].startswith("admin door off: set ARCHIPELAGO_ADMIN_TOKEN"), err
    short = "tooshort-" + secrets.token_hex(3)  # 15 characters
    with caplog.at_level(logging.WARNING, logger="gateway.admin"):
        async with door(cluster.api, token=short, auth=short) as client:
            err = refusal(await client.get("/admin/shards"), 404, "lookup/not_found")
    assert "shorter than 16 characters" in err["message"] and "shorter than 16" in caplog.text
    assert short not in caplog.text and short not in err["message"], "the token is never logged nor shown"
    monkeypatch.delenv("ARCHIPELAGO_ADMIN_TOKEN", raising=False)
    async with door(cluster.api, token=None) as client:  # read from the environment: unset
        refusal(await client.get("/admin/shards"), 404, "lookup/not_found")
    monkeypatch.setenv("ARCHIPELAGO_ADMIN_TOKEN", TOKEN)
    async with door(cluster.api, token=None) as client:  # set
        assert (await client.get("/admin/shards")).status_code == 200


async def test_only_the_operator_token_opens_it(cluster: Cluster) -> None:
    made = await cluster.api.create(game="salvo", seats=2, nickname="eve")
    agent = await cluster.api.create_agent_token(made["secret"], made["game_id"], "bot")
    async with door(cluster.api, auth=None) as client:
        err = refusal(await client.get("/admin/shards"), 401, "auth/unauthenticated")
        assert err["field"] == "authorization" and "missing operator token" in err["message"]
        for wrong in (made["secret"], agent["token"], TOKEN[:-1], TOKEN + "x", "", hash_secret(TOKEN)):
            err = refusal(await client.get("/admin/shards", headers={"authorization": f"Bearer {wrong}"}),
                          401, "auth/unauthenticated")
            assert "not the operator token" in err["message"] and "player secrets" in err["message"]
        for path in (f"/admin/games/{made['game_id']}", f"/admin/games?shard={cluster.shards[0]}"):  # reads too
            refusal(await client.get(path, headers={"authorization": f"Bearer {made['secret']}"}),
                    401, "auth/unauthenticated")
        refusal(await client.post(f"/admin/games/{made['game_id']}/end",
                                  headers={"authorization": f"Bearer {made['secret']}"}), 401, "auth/unauthenticated")
        for action in ("drain", "activate"):
            refusal(await client.post(f"/admin/shards/{cluster.shards[0]}/{action}"), 401, "auth/unauthenticated")
            refusal(await client.post(f"/admin/shards/{cluster.shards[0]}/{action}",
                                      headers={"authorization": f"Bearer {made['secret']}"}),
                    401, "auth/unauthenticated")
    assert (await cluster.api.view(made["secret"], made["game_id"]))["status"] == "lobby", "nothing changed"


async def test_refused_tokens_count_toward_the_per_address_limit(cluster: Cluster) -> None:
    limited = PlayerAPI(cluster.api.store, cluster.api.router,
                        ApiConfig(limits=Limits(auth_failures_per_min=0.01, auth_failures_burst=2)))
    async with door(limited, auth="not-the-token-" + secrets.token_hex(8)) as client:
        for _ in range(2):
            refusal(await client.get("/admin/shards"), 401, "auth/unauthenticated")
        err = refusal(await client.get("/admin/shards"), 429, "client/throttled")
        assert err["field"] == "authorization"
    async with door(limited) as client:  # the same address: even the right token waits now
        resp = await client.get("/admin/shards")
        refusal(resp, 429, "client/throttled")
        assert int(resp.headers["retry-after"]) >= 1, "the wait is machine-readable, as on the other doors"


async def test_lists_the_shards(cluster: Cluster) -> None:
    async with door(cluster.api) as client:
        resp = await client.get("/admin/shards")
    assert resp.status_code == 200, resp.text
    shards = resp.json()["shards"]
    assert [s["name"] for s in shards] == cluster.shards
    for s in shards:
        assert s["state"] == "active" and s["pid"] > 0
        assert {"games", "armed", "deadlines_fired"} <= set(s) and s["games"] >= 0


async def test_lists_a_shards_games(cluster: Cluster) -> None:
    game = await new_game(lambda: cluster.client("web"))
    shard = await cluster.api.router.shard_of(game.game_id)
    async with door(cluster.api) as client:
        resp = await client.get("/admin/games", params={"shard": shard})
        refusal(await client.get("/admin/games", params={"shard": "shard-99"}), 404, "lookup/not_found")
        err = refusal(await client.get("/admin/games"), 400, "order/invalid")
        assert err["field"] == "shard"
    assert resp.status_code == 200, resp.text
    listing = resp.json()
    row = next(g for g in listing["games"] if g["game_id"] == game.game_id)
    assert row["game"] == "salvo" and row["status"] == "running" and row["round"] == 0
    assert row["players"] == 2 and row["seats"] == 2 and row["journal_length"] == 3
    assert row["in_memory"] and row["indexed"] and row["deadline_unix_ms"] > 0 and 0 < row["time_left_ms"] <= 60_000
    assert listing["shard"] == shard and listing["in_memory"] >= 1 and listing["indexed"] >= 1
    await game.host.close()
    await game.guest.close()


async def test_inspects_a_game_without_anything_hidden(cluster: Cluster) -> None:
    host = cluster.client("grpc")
    made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    guest = cluster.client("web")
    joined = await guest.join(made.code, "guest")
    await host.start(made.game_id)
    view = await host.view(made.game_id)
    await host.submit(made.game_id, view.version, salvo=placement(0))
    async with connected(guest, made.game_id), door(cluster.api) as client:
        resp = await client.get(f"/admin/games/{made.game_id}")
        refusal(await client.get("/admin/games/no-such-game"), 404, "lookup/not_found")
    assert resp.status_code == 200, resp.text
    seen = resp.json()
    assert seen["game_id"] == made.game_id and seen["shard"] == await cluster.api.router.shard_of(made.game_id)
    assert (seen["status"], seen["round"], seen["journal_length"]) == ("running", 0, 4)
    assert seen["summary"]["code"] == made.code and seen["deadline_unix_ms"] > 0 and seen["time_left_ms"] > 0
    assert [(p["seat"], p["nickname"], p["connected"], p["submitted"], p["autopilot"]) for p in seen["players"]] == \
        [(0, "host", False, True, False), (1, "guest", True, False, False)]
    for hidden in (made.secret, joined.secret, hash_secret(made.secret), hash_secret(joined.secret),
                   "battleship", "A1", "fleet"):
        assert hidden not in resp.text, f"{hidden!r} is shown to an operator"
    await host.close()
    await guest.close()


async def test_ending_a_game_ends_it_for_everyone(cluster: Cluster) -> None:
    host, guest = cluster.client("grpc"), cluster.client("web")  # a player on each door
    made = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    await guest.join(made.code, "guest")
    await host.start(made.game_id)
    reason = "reported for abuse, ticket " + secrets.token_hex(4)
    async with connected(host, made.game_id) as host_stream, connected(guest, made.game_id) as guest_stream, \
            door(cluster.api) as client:
        resp = await client.post(f"/admin/games/{made.game_id}/end", json={"reason": reason})
        assert resp.status_code == 200, resp.text
        async with asyncio.timeout(WAIT_S):  # each stream ends by itself after game_over
            streams = [await host_stream, await guest_stream]
        again = await client.post(f"/admin/games/{made.game_id}/end")
        seen = (await client.get(f"/admin/games/{made.game_id}")).json()
        err = refusal(await client.post(f"/admin/games/{made.game_id}/end", json={"why": "x"}), 400, "order/invalid")
        assert err["field"] == "body"
        err = refusal(await client.post(f"/admin/games/{made.game_id}/end", json={"reason": "a\nb"}),
                      400, "order/invalid")
        assert err["field"] == "reason"
    ended = resp.json()
    assert ended["ended"] and ended["reason"] == reason and ended["outcome"] == ENDED and ended["status"] == "over"
    for updates in streams:
        last = updates[-1]
        assert last.kind == "game_over" and last.status == lobby_pb2.GAME_STATUS_OVER
        assert json_format.MessageToDict(last.data)["outcome"]["reason"] == "ended"
        assert all(reason not in str(u) for u in updates), "players never see the operator's words"
    view = await guest.view(made.game_id)
    assert view.status == lobby_pb2.GAME_STATUS_OVER and view.salvo.outcome.reason == "ended"
    for player, seat in ((host, 0), (guest, 1)):
        with pytest.raises(ApiError) as refused:
            await player.submit(made.game_id, view.version, salvo=placement(seat))
        assert refused.value.code == "game/over"
    journal = await cluster.api.store.journal_read(made.game_id)
    assert journal[-1]["op"] == "end" and len(journal) == ended["version"]
    assert reason not in json.dumps(journal)
    assert again.status_code == 200 and again.json() == {**ended, "ended": False, "reason": ""}
    assert seen["status"] == "over" and seen["outcome"] == ENDED and seen["deadline_unix_ms"] == 0
    shard = await cluster.api.router.shard_of(made.game_id)
    assert made.game_id not in [g for g, _ in await cluster.api.store.deadlines(shard)]
    await host.close()
    await guest.close()


async def test_drain_and_activate_refuse_an_unknown_shard(cluster: Cluster) -> None:
    async with door(cluster.api) as client:
        for action in ("drain", "activate"):  # (activate of a new name shard-N would add a shard)
            err = refusal(await client.post(f"/admin/shards/no-such-shard/{action}"), 404, "lookup/not_found")
            assert "no-such-shard" in err["message"] and err["field"] == "shard"
        resp = await client.get(f"/admin/shards/{cluster.shards[0]}/drain")
        assert resp.status_code == 405 and resp.headers["allow"] == "POST"
        refusal(await client.get("/admin/nothing-here"), 404, "lookup/not_found")
        shards = (await client.get("/admin/shards")).json()["shards"]
    assert all(s["state"] == "active" for s in shards), "nothing was drained"


def actions(action: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("archipelago_admin_actions_total", {"action": action, "outcome": outcome})
    assert value is not None, f"archipelago_admin_actions_total{{{action}, {outcome}}} exists from 0"
    return value


async def test_each_admin_action_is_counted_by_outcome_and_a_finished_game_is_not_live(cluster: Cluster) -> None:
    for action in ACTIONS:
        for outcome in OUTCOMES:
            actions(action, outcome)  # every series exists before any action
    game = await new_game(lambda: cluster.client("web"))
    shard = await cluster.api.router.shard_of(game.game_id)
    before = {(a, o): actions(a, o) for a in ACTIONS for o in OUTCOMES}
    async with door(cluster.api) as client:
        listed = {s["name"]: s for s in (await client.get("/admin/shards")).json()["shards"]}
        assert (await client.post(f"/admin/games/{game.game_id}/end")).status_code == 200
        assert (await client.post(f"/admin/games/{game.game_id}/end")).status_code == 200  # (already over: done)
        refusal(await client.post("/admin/games/no-such-game/end"), 404, "lookup/not_found")
        refusal(await client.post("/admin/shards/no-such-shard/drain"), 404, "lookup/not_found")
        refusal(await client.post("/admin/shards/shard-x/activate"), 404, "lookup/not_found")
        refusal(await client.post(f"/admin/shards/{shard}/remove", headers={"authorization": "Bearer nope"}),
                401, "auth/unauthenticated")  # not an action: the door refused the caller
        after = {s["name"]: s for s in (await client.get("/admin/shards")).json()["shards"]}
    gained = {k: actions(*k) - v for k, v in before.items() if actions(*k) != v}
    assert gained == {("end", "done"): 2, ("end", "refused"): 1, ("drain", "refused"): 1,
                      ("activate", "refused"): 1}, gained
    # the game is over but still in its shard's memory: counted there as finished, not live
    for row in (listed[shard], after[shard]):
        assert row["games"] == row["live"] + row["finished"], row
    # (other tests' games may end meanwhile: at least ours moved from live to finished)
    assert after[shard]["finished"] >= listed[shard]["finished"] + 1, (listed, after)
    assert after[shard]["live"] <= listed[shard]["live"] - 1, (listed, after)
    await game.host.close()
    await game.guest.close()
