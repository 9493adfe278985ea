"""The MCP door's defects of issue 19, each at its root, against the cluster (local Ray, real
redis-server, the gateway's HTTP port) with the `mcp` package's own client or plain HTTP:

1. the hosts ``/mcp`` answers to: the public URL's, loopback on any port, ``ARCHIPELAGO_ALLOWED_HOSTS``
   (DNS-rebinding protection that no longer refuses the server's own public name);
2. idempotency keys on every mutation of every door (MCP tools, Act on gRPC and JSON, CreateAgentToken);
3. a 6th agent token is not a "retry later" (tests/e2e/test_agent_tokens.py);
4. one coordinate shape, ``{"x", "y"}``, in answers and orders;
5. a submission for a round not open yet is INVALID_ARGUMENT, an earlier one ABORTED;
6. wait_for_next_round reports the round the agent's own submission closed;
7. every request to /mcp is authenticated before the MCP layer; a resource of another game is a clean
   permission error;
8. one round of play costs at most 1,500 tokens of tool output on a 4-player board mid-game.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from archipelago.v1 import archipelago_pb2, game_pb2
from client.base import BaseClient
from gateway.mcp_door import allowed_hosts, host_allowed
from tests.conftest import Cluster
from tests.e2e.helpers import connected, placement, round_closed, rpc_error, shots, wait_update
from tests.e2e.serving import serving, wait_healthy

pytestmark = pytest.mark.e2e

ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
TOKENS_PER_ROUND = 1500
BYTES_PER_TOKEN = 4  # the usual estimate for English and JSON text


@contextlib.asynccontextmanager
async def agent(url: str, token: str, **headers: str) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}", **headers})
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as c:
        yield c


async def answer(c: Client, tool: str, **args: Any) -> tuple[Any, str]:
    """A tool's answer as (JSON, its text); fails on a tool error or on a structured copy."""
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert not result.is_error, f"{tool}{args}: {text}"
    assert result.structured_content is None and len(result.content) == 1, tool
    return json.loads(text), text


async def call(c: Client, tool: str, **args: Any) -> Any:
    return (await answer(c, tool, **args))[0]


async def refused(c: Client, tool: str, **args: Any) -> str:
    result = await c.call_tool(tool, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    assert result.is_error, f"{tool}{args} succeeded: {text}"
    return text


async def archipelago_for_agent(cluster: Cluster) -> tuple[BaseClient, str, str]:
    """A started 2-player Archipelago game; (host client, game id, the guest's agent token). The host
    is not connected: the agent's submission closes each round (A17)."""
    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=2, nickname="host", deadline_seconds=120,
                                archipelago=archipelago_pb2.ArchipelagoOptions(max_rounds=30))
    guest = cluster.client("grpc")
    await guest.join(created.code, "guest")
    token = (await guest.create_agent_token(created.game_id, "agent")).token
    await host.start(created.game_id)
    return host, created.game_id, token


async def next_round(c: Client, round_: int, orders: dict[str, Any] | None = None) -> dict[str, Any]:
    await call(c, "submit_orders", round=round_, orders=orders or {})
    waited: dict[str, Any] = await call(c, "wait_for_next_round", after_round=round_, timeout_seconds=60)
    assert waited["round"] == round_ + 1 and not waited["timed_out"], waited
    return waited


async def until_bank_affordable(c: Client) -> tuple[dict[str, Any], str, int]:
    """Play empty rounds until some resource pays a bank trade; (view, that resource, its rate)."""
    for _ in range(12):
        view = await call(c, "get_view")
        if view["round"] > 0:
            rates = (await call(c, "legal_moves"))["bank"]
            for give, n in sorted(view["stock"].items(), key=lambda kv: -kv[1]):
                if n >= rates[give]:
                    return view, give, rates[give]
        await next_round(c, view["round"])
    raise AssertionError("no resource reached a bank rate in 12 rounds")


# ------------------------------------------------------------------------------------------ 1. hosts
def test_a90_the_hosts_the_mcp_door_answers_to() -> None:
    hosts = allowed_hosts("http://game.example.com", "extra.example:9999, Other.Example ,")
    for ok in ("game.example.com", "game.example.com:80", "GAME.example.com:8443", "localhost", "localhost:5555",
               "127.0.0.1:8080", "[::1]:8080", "[::1]", "extra.example:9999", "other.example", "other.example:1"):
        assert host_allowed(ok, hosts), ok
    for bad in (None, "", "evil.example", "game.example.com.evil.example", "extra.example", "extra.example:1",
                "127.0.0.2:8080", "localhost.evil.example"):
        assert not host_allowed(bad, hosts), bad
    assert host_allowed("anything.example:1", allowed_hosts("http://127.0.0.1:8080", "*"))
    assert host_allowed("[2001:db8::1]:8080", allowed_hosts("http://[2001:db8::1]:8080"))


async def test_a90_mcp_behind_a_public_address_answers_its_host(tmp_path: Path) -> None:
    """`archipelago serve` with ARCHIPELAGO_PUBLIC_URL: the agent token's URL names the public host,
    and /mcp answers a request with that Host (it was 421 "Invalid Host header")."""
    env = {"ARCHIPELAGO_PUBLIC_URL": "http://game.example.com", "ARCHIPELAGO_ALLOWED_HOSTS": "extra.example:9999"}
    with serving(tmp_path, env) as (address, url, proc):
        wait_healthy(address, proc)
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            made = (await http.post("/v1/Lobby/CreateGame", json={"game": "salvo", "seats": 2,
                                                                   "nickname": "host"})).json()
            token = (await http.post("/v1/Game/CreateAgentToken", json={"game_id": made["game_id"]},
                                     headers={"authorization": f"Bearer {made['secret']}"})).json()
            assert token["mcp_url"] == "http://game.example.com/mcp", token
            auth = {**ACCEPT, "authorization": f"Bearer {token['token']}"}
            for host, status in (("game.example.com", 200), ("extra.example:9999", 200),
                                 ("evil.example", 403), ("extra.example:1", 403)):
                resp = await http.post("/mcp", json=TOOLS_LIST, headers={**auth, "host": host})
                assert resp.status_code == status, (host, resp.status_code, resp.text)
                if status == 403:
                    err = resp.json()["error"]
                    assert (err["code"], err["field"]) == ("auth/permission_denied", "host"), err
                    assert "ARCHIPELAGO_ALLOWED_HOSTS" in err["message"], err
                else:
                    assert "submit_orders" in {t["name"] for t in resp.json()["result"]["tools"]}
        async with agent(url, token["token"], Host="game.example.com") as c:  # the mcp client itself
            assert (await call(c, "get_view"))["game_id"] == made["game_id"]


# ------------------------------------------------------------------------------------------ 7. auth
async def test_a90_every_mcp_request_is_authenticated_before_the_mcp_layer(cluster: Cluster) -> None:
    host = cluster.client("grpc")
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    token = (await host.create_agent_token(created.game_id)).token
    async with httpx.AsyncClient(base_url=cluster.http_url, timeout=30) as http:
        for authorization, challenge in ((None, 'Bearer realm="archipelago"'),
                                         (f"Bearer {created.secret}", 'error="invalid_token"'),
                                         ("Bearer agt_nonsense", 'error="invalid_token"'),
                                         ("Basic dXNlcjpwYXNz", 'Bearer realm="archipelago"')):
            headers = {**ACCEPT, **({"authorization": authorization} if authorization else {})}
            for resp in (await http.post("/mcp", json=TOOLS_LIST, headers=headers),
                         await http.get("/mcp", headers=headers)):
                assert resp.status_code == 401, (authorization, resp.status_code, resp.text)
                assert resp.headers["www-authenticate"].startswith("Bearer"), resp.headers
                assert challenge in resp.headers["www-authenticate"], resp.headers
                err = resp.json()["error"]
                assert (err["code"], err["field"], err["rule"], err["http_status"]) == (
                    "auth/unauthenticated", "authorization", "A90", 401), err
                assert "tools" not in resp.text
        ok = await http.post("/mcp", json=TOOLS_LIST, headers={**ACCEPT, "authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and len(ok.json()["result"]["tools"]) == 13, ok.text
        for header, value in (("host", "evil.example"), ("origin", "http://evil.example")):
            resp = await http.post("/mcp", json=TOOLS_LIST, headers={**ACCEPT, "authorization": f"Bearer {token}",
                                                                      header: value})
            assert resp.status_code == 403, resp.text
            assert resp.json()["error"]["field"] == header, resp.text


async def test_a90_another_games_view_resource_is_a_clean_permission_error(
        cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    host = cluster.client("grpc")
    mine = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    other = await cluster.client("grpc").create("salvo", seats=2, nickname="other", deadline_seconds=60)
    token = (await host.create_agent_token(mine.game_id)).token
    caplog.set_level(logging.INFO)
    async with agent(cluster.http_url, token) as c:
        read = await c.read_resource(f"game://{mine.game_id}/view")
        assert json.loads(read.contents[0].text)["game_id"] == mine.game_id  # type: ignore[union-attr]
        for game_id, code in ((other.game_id, "auth/permission_denied"), ("no-such-game", "auth/permission_denied")):
            with pytest.raises(MCPError) as caught:
                await c.read_resource(f"game://{game_id}/view")
            assert caught.value.code == INVALID_PARAMS, caught.value
            assert caught.value.data["error"]["code"] == code, caught.value.data
            assert caught.value.data["error"]["rule"] == "A90", caught.value.data
            assert "another game" in caught.value.message, caught.value.message
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], \
        [(r.name, r.getMessage()) for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# ------------------------------------------------------------------------------------------ 2. idempotency
async def test_a16_retried_mcp_mutations_are_applied_once(cluster: Cluster) -> None:
    host, game_id, token = await archipelago_for_agent(cluster)
    async with agent(cluster.http_url, token) as c:
        view, give, rate = await until_bank_affordable(c)
        get = next(r for r in view["stock"] if r != give)
        first = await call(c, "bank_trade", give=give, get=get, idempotency_key="bank-1")
        again = await call(c, "bank_trade", give=give, get=get, idempotency_key="bank-1")
        assert (first, again) == ({"ok": True, "replayed": False}, {"ok": True, "replayed": True})
        stock = (await call(c, "get_view"))["stock"]
        assert (stock[give], stock[get]) == (view["stock"][give] - rate, view["stock"][get] + 1), (view, stock)
        text = await refused(c, "bank_trade", give=give, get=get, times=2, idempotency_key="bank-1")
        assert "request/key_reused" in text and "field idempotency_key" in text and "rule A16" in text, text

        for _ in range(2):
            await call(c, "chat", text="hello once", idempotency_key="chat-1")
        assert [m.text for m in (await host.view(game_id)).archipelago.chat] == ["hello once"]

        offer = {"give": {get: 1}, "get": {give: 1}, "to": 0}
        replies = [await call(c, "offer_trade", **offer, idempotency_key="offer-1") for _ in range(2)]
        assert [r["replayed"] for r in replies] == [False, True]
        offers = (await call(c, "get_view"))["offers"]
        assert len(offers) == 1 and offers[0]["give"] == {get: 1}, offers
        replies = [await call(c, "answer_offer", offer=offers[0]["id"], answer="withdraw", idempotency_key="ans-1")
                   for _ in range(2)]
        assert [r["replayed"] for r in replies] == [False, True]
        assert (await call(c, "get_view"))["offers"] == []

        replies = [await call(c, "set_standing_orders", standing={"posture": "defensive"}, idempotency_key="st-1")
                   for _ in range(2)]
        assert [r["replayed"] for r in replies] == [False, True]
        text = await refused(c, "set_standing_orders", standing={"posture": "hold"}, idempotency_key="st-1")
        assert "request/key_reused" in text, text

        before = await host.view(game_id)
        replies = [await call(c, "submit_orders", round=view["round"], orders={}, done=False, idempotency_key="sub-1")
                   for _ in range(2)]
        assert [r["replayed"] for r in replies] == [False, True]
        assert (await host.view(game_id)).version == before.version + 1  # one submission journaled
        text = await refused(c, "chat", text="x" * 2, idempotency_key="k" * 65)
        assert "field idempotency_key" in text, text


def stock_of(view: game_pb2.GetViewResponse) -> dict[str, int]:
    return {r: int(getattr(view.archipelago.stock, r)) for r in ("wood", "food", "iron", "fuel")}


async def test_a16_a_retried_chat_and_bank_trade_apply_once_on_the_message_doors(cluster: Cluster, door: str) -> None:
    host, guest = cluster.client(door), cluster.client(door)
    created = await host.create("archipelago", seats=2, nickname="host", deadline_seconds=120)
    await guest.join(created.code, "guest")
    await host.start(created.game_id)
    gid = created.game_id
    async with connected(host, gid):  # the host's submission closes each round (A17)
        for _ in range(12):
            view = await host.view(gid)
            stock = stock_of(view)
            give = next((r for r, n in sorted(stock.items(), key=lambda kv: -kv[1]) if n >= 4), None)
            if view.round > 0 and give:
                break
            await host.submit(gid, view.version, archipelago=archipelago_pb2.ArchipelagoOrders())
            await wait_update(host, gid, view.seq, round_closed(view.round))
        else:
            raise AssertionError("no resource reached 4 in 12 rounds")
        a = await host.chat(gid, "hi once", key="chat-1")
        b = await host.chat(gid, "hi once", key="chat-1")
        assert (a.replayed, b.replayed, b.version) == (False, True, a.version)
        assert [m.text for m in (await guest.view(gid)).archipelago.chat] == ["hi once"]
        get = next(r for r in stock if r != give)
        bank = archipelago_pb2.BankAction(give=give, get=get, times=1)
        a = await host.act(gid, key="bank-1", bank=bank)
        b = await host.act(gid, key="bank-1", bank=bank)
        assert (a.replayed, b.replayed, b.version) == (False, True, a.version)
        after = stock_of(await host.view(gid))
        assert after[get] == stock[get] + 1 and stock[give] - after[give] in (2, 4), (stock, after)  # one trade
        err = await rpc_error(host.act(gid, key="bank-1", bank=archipelago_pb2.BankAction(give=give, get=get, times=2)))
        assert (err.code, err.field, err.rule) == ("request/key_reused", "idempotency_key", "A16")


async def create_token(client: BaseClient, game_id: str, label: str = "", key: str = "") -> game_pb2.AgentToken:
    return await client.call("Game", "CreateAgentToken", game_pb2.CreateAgentTokenRequest(
        game_id=game_id, label=label, idempotency_key=key), game_pb2.AgentToken)


async def test_a16_a_retried_create_agent_token_returns_the_same_token_once(cluster: Cluster, door: str) -> None:
    host = cluster.client(door)
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    gid = created.game_id
    first = await create_token(host, gid, "laptop", key="make-token-1")
    again = await create_token(host, gid, "laptop", key="make-token-1")
    assert first.token.startswith("agt_") and first == again
    listed = (await host.list_agent_tokens(gid)).tokens
    assert [(t.token_id, t.label, t.created_unix_ms) for t in listed] == [
        (first.token_id, "laptop", first.created_unix_ms)]
    assert (await host.with_secret(first.token).view(gid)).you == 0  # the token works
    err = await rpc_error(create_token(host, gid, "phone", key="make-token-1"))
    assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "request/key_reused",
                                                           "idempotency_key", "A16")
    other = await create_token(host, gid, "laptop", key="make-token-2")
    plain = [await create_token(host, gid, "laptop") for _ in range(2)]
    assert len({first.token, other.token, *(t.token for t in plain)}) == 4
    await host.revoke_agent_token(gid, first.token_id)
    err = await rpc_error(create_token(host, gid, "laptop", key="make-token-1"))
    assert (err.code, err.field) == ("request/key_reused", "idempotency_key") and "revoked" in err.message
    err = await rpc_error(host.with_secret(first.token).view(gid))
    assert (err.status, err.rule) == ("UNAUTHENTICATED", "A90")  # a revoked token never comes back
    err = await rpc_error(create_token(host, gid, "x", key="k" * 65))
    assert (err.status, err.field) == ("INVALID_ARGUMENT", "idempotency_key")
    assert len((await host.list_agent_tokens(gid)).tokens) == 3


# ------------------------------------------------------------------------------------------ 4, 5, 6
async def test_a16_mcp_rounds_coordinates_and_what_a_closed_round_reports(cluster: Cluster) -> None:
    _host, _game_id, token = await archipelago_for_agent(cluster)
    async with agent(cluster.http_url, token) as c:
        moves = await call(c, "legal_moves")
        assert moves["phase"] == "deployment"
        assert all(set(t) == {"x", "y"} for t in [*moves["land"], *moves["sea"], *(u["at"] for u in moves["units"])])
        text = await refused(c, "submit_orders", round=1, orders={})
        assert "order/invalid (INVALID_ARGUMENT) — field round, rule A16" in text, text
        # 6: the agent's own submission closes round 0 (the host is not connected): reported all the same
        waited = await next_round(c, 0)
        assert waited["happened"][0]["round"] == 0 and waited["happened"][0]["closed"], waited
        assert waited["happened"][0]["submitted"] == [1], waited
        moves = await call(c, "legal_moves")
        unit = next(u for u in moves["units"] if u["moves"])
        text = await refused(c, "submit_orders", round=1, orders={"units": [
            {"unit": unit["unit"], "to": [unit["moves"][0]["x"], unit["moves"][0]["y"]]}]})
        assert "field units[0].to" in text and "Tile object (x, y)" in text, text  # 4: field + expected shape
        text = await refused(c, "submit_orders", round=0, orders={})
        assert "action/stale_state_id (ABORTED)" in text, text
        waited = await next_round(c, 1, {"units": [{"unit": unit["unit"], "to": unit["moves"][0]}]})
        closed = next(r for r in waited["happened"] if r["round"] == 1)
        assert closed["closed"] and closed["events"], waited
        assert "production" in {e["kind"] for e in closed["events"]}, closed
        # asked again (a reconnected agent): the same record, at once
        again = await call(c, "wait_for_next_round", after_round=1, timeout_seconds=1)
        assert not again["timed_out"] and again["happened"][0] == waited["happened"][0], (again, waited)


async def test_a90_wait_reports_the_salvo_round_the_agents_submission_closed(cluster: Cluster) -> None:
    host = cluster.client("grpc")
    created = await host.create("salvo", seats=2, nickname="host", deadline_seconds=60)
    guest = cluster.client("grpc")
    await guest.join(created.code, "guest")
    token = (await guest.create_agent_token(created.game_id)).token
    await host.start(created.game_id)
    gid = created.game_id
    async with agent(cluster.http_url, token) as c:
        await host.submit(gid, (await host.view(gid)).version, salvo=placement(0))
        waited = await next_round(c, 0, {"random_placement": True})
        record = waited["happened"][0]
        assert (len(waited["happened"]), record["round"], record["submitted"], record["closed"]) == (1, 0, [0, 1], True)
        await host.submit(gid, (await host.view(gid)).version, salvo=shots(["A5"]))
        waited = await next_round(c, 1, {"shots": ["A1", "B1"]})
        record = waited["happened"][0]
        assert (record["round"], record["submitted"], record["closed"]) == (1, [0, 1], True), waited
        events = {e["kind"]: e for e in record["events"]}
        assert set(events) == {"shots_received", "salvo_report"}, record  # S6: what the agent may know
        assert events["shots_received"]["squares"] == ["A5"] and events["salvo_report"]["round"] == 1, record


# ------------------------------------------------------------------------------------------ 8. tokens
def tiles_are_objects(view: dict[str, Any], moves: dict[str, Any]) -> None:
    """Every tile of an Archipelago answer is {"x", "y"} (issue 19: one shape)."""
    def check(t: Any) -> None:
        assert isinstance(t, dict) and set(t) == {"x", "y"}, t
    for u in [*view["your_units"], *view["enemies_in_sight"], *view["enemy_log"], *view["bases"],
              *view["outposts"]]:
        check(u["at"])
    for t in [*view["you_control"], *(t for i in view["islands"] for t in i["tiles"]),
              *(t for ts in view["resource_tiles"].values() for t in ts),
              *(t for u in moves["units"] for t in u["moves"]),
              *(t for b in moves["builds"] for t in b.get("tiles", []))]:
        check(t)


async def test_a90_one_round_of_play_costs_at_most_1500_tokens_on_a_4_player_board(cluster: Cluster) -> None:
    """get_view + legal_moves + submit_orders + wait_for_next_round, rounds 3-6 of a 4-player game in
    which the agent moves every unit and builds one unit a round (land and sea by turns): bytes of tool
    output / 4 <= 1,500 (the rules tool, read once, is not a round's)."""
    host = cluster.client("grpc")
    created = await host.create("archipelago", seats=4, nickname="host", deadline_seconds=120)
    token = (await host.create_agent_token(created.game_id)).token
    await host.start(created.game_id, fill=True)
    rng = random.Random(19)
    measured: list[tuple[int, dict[str, int]]] = []
    async with agent(cluster.http_url, token) as c:
        for round_ in range(7):
            sizes: dict[str, int] = {}
            view, text = await answer(c, "get_view")
            sizes["get_view"] = len(text.encode())
            assert view["round"] == round_ and view["status"] == "running", view
            moves, text = await answer(c, "legal_moves")
            sizes["legal_moves"] = len(text.encode())
            orders: dict[str, Any] = {}
            if round_ > 0:
                tiles_are_objects(view, moves)
                taken = {(u["at"]["x"], u["at"]["y"]) for u in view["your_units"]}  # (no boarding, A24)
                units = []
                for u in moves["units"]:
                    free = [t for t in u["moves"] if (t["x"], t["y"]) not in taken]
                    if free:
                        t = rng.choice(free)
                        taken.add((t["x"], t["y"]))
                        units.append({"unit": u["unit"], "to": t})
                plain = [b for b in moves["builds"] if set(b) == {"type"}]  # strongest first: land, then sea, air
                orders = {"units": units, "builds": (plain[:1] if round_ % 2 else plain[-1:])}  # a mix
            ack, text = await answer(c, "submit_orders", round=round_, orders=orders)
            sizes["submit_orders"] = len(text.encode())
            assert ack["submitted"], ack
            waited, text = await answer(c, "wait_for_next_round", after_round=round_, timeout_seconds=60)
            sizes["wait_for_next_round"] = len(text.encode())
            assert waited["round"] == round_ + 1 and waited["happened"][0]["closed"], waited
            assert text == json.dumps(waited, separators=(",", ":"), ensure_ascii=False)  # compact JSON
            if round_ >= 3:
                measured.append((round_, sizes))
    report = "; ".join(f"round {r}: {sum(s.values())} bytes ≈ {sum(s.values()) // BYTES_PER_TOKEN} tokens {s}"
                       for r, s in measured)
    print(f"\nMCP tool output per round of play (4 players): {report}")
    for r, s in measured:
        assert sum(s.values()) <= TOKENS_PER_ROUND * BYTES_PER_TOKEN, (r, s, report)
