"""What the MCP door (A90) answers, shaped for a language model's context: one compact JSON text per
answer (:func:`dumps`), the view's header every game shares (:func:`compact_view`, :func:`compact_step`),
a game of rounds' updates one record per round (:func:`happened`), errors as tool errors naming the code,
field, rule and whether a retry helps (:func:`tool_error`, :func:`resource_error`), and the rules text.
Each game's own part comes from its shaper (:mod:`gateway.agent_views`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from gateway import errors
from gateway.agent_views import shaper

RULES = Path(__file__).with_name("agent_rules")
STATUS = {"lobby": "lobby", "running": "running", "over": "over"}


def dumps(obj: Any) -> str:
    """The one JSON form of every answer: compact, UTF-8 as is."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def seconds_left(deadline_unix_ms: Any) -> float | None:
    """Seconds until a deadline in Unix ms (None: no deadline)."""
    deadline = int(deadline_unix_ms or 0)
    return round(max(0.0, deadline / 1000 - time.time()), 1) if deadline else None


def compact_step(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The step now (who may act): kind ("turn", "window", "simultaneous", "over"), players (the seats
    that may act now), active (whose turn), deadline (its kind) and seconds_left, and your_decision:
    whether you are one of the players."""
    step = view.get("step")
    if not step:
        return None
    return {"kind": step.get("kind", ""), "players": list(step.get("players") or ()),
            "active": step.get("active", -1), "deadline": step.get("deadline", ""),
            "seconds_left": seconds_left(step.get("deadline_unix_ms")),
            "your_decision": view.get("status") == "running" and view.get("you") in (step.get("players") or ())}


def compact_view(view: dict[str, Any]) -> dict[str, Any]:
    """The player API's view, shaped for a language model: the header every game shares, then the
    game's own part from its shaper (:mod:`gateway.agent_views`). The last round's events are not
    here: the wait tools report them."""
    inner = view.get("view")
    game = shaper(view["game"])
    figures = game.figures(inner) if inner is not None else {}

    def player(p: dict[str, Any]) -> dict[str, Any]:
        return {"seat": p["seat"], "nickname": p["nickname"], **figures.get(p["seat"], {})}

    out: dict[str, Any] = {
        "game": view["game"], "game_id": view["game_id"],
        "status": STATUS.get(str(view["status"]), str(view["status"])),
        "round": view["round"], "you": view["you"],
    }
    if game.turns:
        out.update(version=view["version"], seq=view["seq"], step=compact_step(view))
    else:
        out.update(submitted_this_round=view["submitted"], expected_to_submit=view["expected"],
                   seconds_left=seconds_left(view.get("deadline_unix_ms")))
    out["players"] = [player(p) for p in view["players"]]
    if not game.turns:
        out["submitted"] = [p["seat"] for p in view["players"] if p["submitted"]]
    out["connected"] = [p["seat"] for p in view["players"] if p["connected"]]
    if "pending" in view:
        out["your_orders_this_round"] = view["pending"]
    if inner is not None:
        out.update(game.view(inner))
    if "standing" in view:
        out["standing_orders"] = view["standing"]
    if view.get("autopilot_log"):  # what the autopilot / standing orders played for you (your own only)
        out["autopilot_played_for_you"] = view["autopilot_log"]
    return out


def happened(updates: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A player's updates as one record per round: who submitted (done, not drafts), chat, the events
    (the round's own trades and, once it closed, its resolution, each ``{"kind", ...}`` as the view's
    events are), whether it closed, the outcome when the game ended."""
    rounds: dict[int, dict[str, Any]] = {}

    def record(u: Mapping[str, Any]) -> dict[str, Any]:
        r = int(u.get("round", 0))
        return rounds.setdefault(r, {"round": r})

    for u in updates:
        kind = u.get("kind")
        data = u.get("data") or {}
        if kind == "submitted" and data.get("done", True):
            done = record(u).setdefault("submitted", [])
            if u["seat"] not in done:
                done.append(u["seat"])
        elif kind == "chat" and u.get("chat"):
            c = u["chat"]
            record(u).setdefault("chat", []).append({"from": c["seat"], "text": c["text"],
                                                     **({"to": c["to"]} if c.get("to") is not None else {})})
        elif kind == "event":
            record(u).setdefault("events", []).append({"kind": u.get("event_kind"), **data})
        elif kind == "round_closed":
            record(u)["closed"] = True
        elif kind == "started":
            record(u)["started"] = True
        elif kind == "game_over":
            record(u)["game_over"] = data.get("outcome", {})
    return [rounds[r] for r in sorted(rounds)]


def tool_error(exc: BaseException) -> ToolError:
    err = errors.as_game_error(exc)
    kind = errors.kind_of(err)
    where = ", ".join(p for p in (f"field {err.field}" if err.field else "",
                                  f"rule {err.rule}" if err.rule else "") if p)
    wait = errors.retry_after_s(err)  # (client/throttled: the wait the other doors send as Retry-After)
    retry = f"yes, in {wait} s" if wait else "yes, later" if kind.retry else "no: change the request"
    return ToolError(f"{kind.code} ({kind.grpc.name}){' — ' + where if where else ''}: {err.reason}. "
                     f"Retry: {retry}.")


def resource_error(exc: BaseException) -> MCPError:
    """A failed resource read as a JSON-RPC error: invalid params (-32602) for anything the request
    can change (another game's id, an unknown game), internal (-32603) only for the server's own
    trouble; ``data`` holds the error table's fields. Never a traceback."""
    err = errors.as_game_error(exc)
    code = INTERNAL_ERROR if errors.kind_of(err).retry else INVALID_PARAMS
    return MCPError(code=code, message=str(tool_error(err)), data={"error": errors.to_dict(err)})


def rules_text(kind: str) -> str:
    """The rules tool's text: ``agent_rules/<kind>.md`` and what the game's shaper adds."""
    return (RULES / f"{kind}.md").read_text(encoding="utf-8") + shaper(kind).rules_extra()


__all__ = ["RULES", "STATUS", "compact_step", "compact_view", "dumps", "happened", "resource_error", "rules_text",
           "seconds_left", "tool_error"]
