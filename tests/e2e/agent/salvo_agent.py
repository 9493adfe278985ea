"""A scripted MCP agent for Salvo, written from the tool descriptions alone (it imports nothing of this
project: only the `mcp` package and the standard library). It proves a stranger's agent can play.

    MCP_URL=http://127.0.0.1:8080/mcp AGENT_TOKEN=agt_… python salvo_agent.py

It lists the tools and checks the ones it needs, then loops: get_view; when it is expected to submit,
legal_moves and submit_orders for the round get_view shows (random placement in round 0; then shots
that hunt around the salvos that hit something, else a checkerboard sweep); wait_for_next_round;
until the status is "over". Prints one line per round and "game over: …" at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

NEEDED = {"get_view", "legal_moves", "submit_orders", "wait_for_next_round"}


async def tool(client: Client, name: str, **args: Any) -> Any:
    result = await client.call_tool(name, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {text}")
    return json.loads(text)


def neighbours(square: str) -> list[str]:
    col, row = ord(square[0]) - ord("A"), int(square[1:])
    out = []
    for dc, dr in ((0, -1), (1, 0), (0, 1), (-1, 0)):
        c, r = col + dc, row + dr
        if 0 <= c < 10 and 1 <= r <= 10:
            out.append(f"{chr(ord('A') + c)}{r}")
    return out


def choose_shots(view: dict[str, Any], untried: list[str], allowed: int, rng: random.Random) -> list[str]:
    # squares next to the shots of salvos whose report counted hits on ships not yet sunk
    hit_rounds = {r["round"] for r in view.get("reports", []) if r.get("hits", 0) > 0}
    open_set = set(untried)
    near = [n for sq, rnd, *_ in view.get("your_shots", []) if rnd in hit_rounds for n in neighbours(sq)
            if n in open_set]
    rng.shuffle(near)
    sweep = [sq for sq in untried if (ord(sq[0]) + int(sq[1:])) % 2 == 0] or untried
    rng.shuffle(sweep)
    picked: list[str] = []
    for sq in [*near, *sweep, *untried]:
        if sq not in picked:
            picked.append(sq)
        if len(picked) == allowed:
            break
    return picked


async def main() -> int:
    url, token = os.environ["MCP_URL"], os.environ["AGENT_TOKEN"]
    rng = random.Random(7)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(30.0, read=330.0))
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        missing = NEEDED - names
        if missing:
            print(f"the server lacks tools {sorted(missing)}")
            return 2
        while True:
            view = await tool(client, "get_view")
            if view["status"] == "over":
                print(f"game over: {json.dumps(view.get('outcome', {}))}")
                return 0
            if view["status"] == "running" and view["expected_to_submit"] and not view["submitted_this_round"]:
                moves = await tool(client, "legal_moves")
                if moves["phase"] == "placement":
                    orders: dict[str, Any] = {"random_placement": True}
                else:
                    orders = {"shots": choose_shots(view, moves["untried"], moves["shots_allowed"], rng)}
                # (a key per round: a retry after a lost answer would be applied once)
                await tool(client, "submit_orders", round=view["round"], orders=orders,
                           idempotency_key=f"salvo-agent-round-{view['round']}")
                print(f"round {view['round']}: {json.dumps(orders)}", flush=True)
            await tool(client, "wait_for_next_round", after_round=view["round"], timeout_seconds=60)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
