"""A scripted MCP agent for Arcmage, written from the tool descriptions alone (it imports nothing of
this project: only the `mcp` package and the standard library). It proves a stranger's agent can play
a card game of turns with what the tools say.

    MCP_URL=http://127.0.0.1:8080/mcp AGENT_TOKEN=agt_… python arcmage_agent.py

It lists the tools and stops (exit 2) unless the ones it needs are there and their descriptions name
what it relies on (the fields it reads, the action it sends). Then it reads the rules once and loops,
as the descriptions say: wait_for_my_decision (since the seq of its last answer) until its seat may
act or the game is over; legal_moves; act with the version legal_moves gave and a new idempotency
key; again while act's step says your_decision, else back to waiting. Its choice, from what the
answers say: not a pass, not an action whose `does` says it skips the rest of the turn, a resource
only onto the pile of the card's own faction (get_view's hand); first what `does` calls "cast", then
"attack", "draw1", "put" (a resource), "devote", anything else; a pass when nothing else is left.
Prints one line per turn in which it acted and "game over: …" at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

#: each tool it calls, and the words its description must hold (what this agent relies on)
NEEDED = {
    "rules": ["rules"],
    "wait_for_my_decision": ["since_seq", "seq", "your_decision", "status", "over", "happened"],
    "legal_moves": ["actions", "action", "does", "act"],
    "get_view": ["hand", "faction", "id"],
    "act": ['{"pass": {}}', "version", "your_decision", "step", "idempotency_key"],
}


async def tool(client: Client, name: str, **args: Any) -> Any:
    result = await client.call_tool(name, args)
    text = "".join(getattr(part, "text", "") for part in result.content)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {text}")
    return json.loads(text) if text[:1] in "{[" else text


#: what to do first, by the first word of an action's `does`
PREFERRED = ("cast ", "attack ", "draw1:", "put ", "devote ")


def choose(actions: list[dict[str, Any]], factions: dict[str, str]) -> dict[str, Any]:
    """An action that does something, by :data:`PREFERRED`; a pass when none is left."""
    def useful(a: dict[str, Any]) -> bool:
        if "pass" in a["action"] or "skip the rest of your turn" in a["does"]:
            return False
        resource = a["action"].get("resource")
        return not resource or resource.get("faction") == factions.get(resource.get("card", ""))

    def rank(a: dict[str, Any]) -> int:
        return next((i for i, word in enumerate(PREFERRED) if a["does"].startswith(word)), len(PREFERRED))

    doing = sorted((a for a in actions if useful(a)), key=rank)
    passing = [a for a in actions if "pass" in a["action"]]
    return (doing or passing or actions)[0]


async def main() -> int:
    url, token = os.environ["MCP_URL"], os.environ["AGENT_TOKEN"]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(30.0, read=330.0))
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        described = {t.name: t.description or "" for t in (await client.list_tools()).tools}
        for name, words in NEEDED.items():
            missing = [w for w in words if w not in described.get(name, "")]
            if name not in described or missing:
                print(f"the server's {name} tool does not say {missing or 'anything'}")
                return 2
        rules = await tool(client, "rules")
        print(f"rules: {len(rules)} characters", flush=True)
        seq: int | None = None
        acted = 0
        while True:
            waited = await tool(client, "wait_for_my_decision", since_seq=seq, timeout_seconds=60)
            seq = waited["seq"]
            if waited["status"] == "over":
                print(f"game over: {json.dumps(waited.get('outcome', {}))}; actions: {acted}", flush=True)
                return 0
            if not waited["your_decision"]:
                continue  # timed out, or the game only started: wait again
            done: list[str] = []
            while True:
                moves = await tool(client, "legal_moves")
                if not moves.get("actions"):
                    break
                factions: dict[str, str] = {}
                if any("resource" in a["action"] for a in moves["actions"]):
                    view = await tool(client, "get_view")
                    factions = {c["id"]: c.get("faction", "") for c in view["hand"]}
                pick = choose(moves["actions"], factions)
                acted += 1
                answer = await tool(client, "act", action=pick["action"], version=moves["version"],
                                    idempotency_key=f"arcmage-agent-{acted}")
                done.append(pick["does"])
                if answer["status"] == "over" or not answer["step"]["your_decision"]:
                    break
            print(f"turn {moves.get('turn')}: {'; '.join(done)}"[:300], flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
