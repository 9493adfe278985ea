"""The MCP door's long polls (A90): what ``wait_for_next_round`` and ``wait_for_my_decision`` answer, read from
the player's own Watch stream (the same updates, and the same presence, as a player with the game open),
with the notifications its player would have had meanwhile (:mod:`gateway.agent_notify`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.agent_notify import deadline_notice, notices_of, worded
from gateway.agent_views import shaper
from gateway.api import Caller, PlayerAPI
from gateway.mcp_answers import STATUS, compact_step, happened
from services.notify.kinds import Notice

MAX_WAIT_S = 300.0
MAX_WAIT_UPDATES = 200  # what wait_for_next_round reports at most (the newest)


async def next_round(api: PlayerAPI, token: str, who: Caller, after_round: int | None,
                     timeout_s: float) -> dict[str, Any]:
    """What ``wait_for_next_round`` answers. The updates are the player's own stream read from
    before round ``after_round`` (the newest :data:`MAX_WAIT_UPDATES` of them at most), not from
    the call on: the close an agent's own submission made happened before this call, and is
    reported all the same. Reading stops at the opening of a later round (in the lobby: at the
    start) or the game's end, or at the timeout."""
    view = await api.view(token, who.game_id)
    lobby = view["status"] == "lobby"
    since = int(view["round"]) if after_round is None else after_round
    got: list[dict[str, Any]] = []
    opening: list[dict[str, Any]] = []  # the update that ended the wait: a later round's opening
    timed_out = False
    stream = await api.watch(token, who.game_id, max(0, int(view["seq"]) - MAX_WAIT_UPDATES))
    try:
        async with asyncio.timeout(timeout_s):
            async for u in stream:
                if not u.get("seq"):
                    continue  # presence notices
                r = int(u.get("round", 0))
                if u["kind"] == "round_opened" and (lobby or r > since):
                    opening.append(u)
                    break
                if lobby or r >= since or u["kind"] == "game_over":
                    got.append(u)
                    del got[:-MAX_WAIT_UPDATES]
                if u["kind"] == "game_over":
                    break
    except TimeoutError:
        timed_out = True
    finally:
        await stream.aclose()
    now = await api.view(token, who.game_id)
    told = notices_of([*got, *opening], who.seat, now, turns=shaper(now["game"]).turns,
                      after_round=None if lobby else since)
    return {"round": now["round"], "status": now["status"], "timed_out": timed_out, "happened": happened(got),
            "notifications": await notifications(api, token, who, now, told)}


async def notifications(api: PlayerAPI, token: str, who: Caller, view: Mapping[str, Any],
                        told: list[Notice]) -> list[dict[str, Any]]:
    """The ``notifications`` of a wait's answer (:mod:`gateway.agent_notify`): the notices found in
    its updates and the deadline warning now due, in the words of the player's language."""
    now_ms = int(time.time() * 1000)
    warning = deadline_notice(view, api.notify.config.warn, now_ms, turns=shaper(view["game"]).turns)
    told = [*told, *([warning] if warning else [])]
    if not told:
        return []
    language = str((await api.get_notifications(token, who.game_id)).get("language") or "en")
    return worded(told, game=str(view["game"]), game_id=who.game_id, language=language, now_ms=now_ms)


def report(kind: str, updates: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What a player was told, for an agent: games of rounds one record per round
    (:func:`happened`); games of turns one entry per event, chat and game end, in order, each
    with its seq, the events in the game's shaper's form."""
    game = shaper(kind)
    if not game.turns:
        return happened(updates)
    out: list[dict[str, Any]] = []
    for u in updates:
        data = u.get("data") or {}
        if u.get("kind") == "event":
            out.append({"seq": u["seq"], **game.event(str(u.get("event_kind", "")), data)})
        elif u.get("kind") == "chat" and u.get("chat"):
            c = u["chat"]
            out.append({"seq": u["seq"], "kind": "chat", "from": c["seat"], "text": c["text"],
                        **({"to": c["to"]} if c.get("to") is not None else {})})
        elif u.get("kind") in ("started", "game_over"):
            out.append({"seq": u["seq"], "kind": u["kind"], **({"outcome": data["outcome"]}
                                                                if "outcome" in data else {})})
    return out


async def read_since(api: PlayerAPI, token: str, who: Caller, since: int, upto: int,
                     stop: Callable[[Mapping[str, Any]], bool] | None = None
                     ) -> tuple[list[dict[str, Any]], int]:
    """The player's own updates after seq ``since`` (the newest :data:`MAX_WAIT_UPDATES`), read
    from its Watch stream: through seq ``upto`` (what it has been sent already: no wait), then,
    with ``stop``, live ones until one satisfies ``stop`` (the caller bounds the wait). Answers
    (updates, the last seq read)."""
    since = max(0, min(since, upto))
    last = since
    got: list[dict[str, Any]] = []
    if since >= upto and stop is None:
        return got, last
    stream = await api.watch(token, who.game_id, since)
    try:
        async for u in stream:
            seq = int(u.get("seq") or 0)
            if not seq:
                continue  # presence notices
            if u.get("kind") != "resync":
                got.append(u)
                del got[:-MAX_WAIT_UPDATES]
            last = max(last, seq)
            if seq >= upto and (stop is None or (seq > upto and stop(u))):
                break
    finally:
        await stream.aclose()
    return got, last


async def my_decision(api: PlayerAPI, token: str, who: Caller, since_seq: int | None,
                      timeout_s: float) -> dict[str, Any]:
    """What ``wait_for_my_decision`` answers: at once when the caller may act now (or the game is
    over), else when a later update says so — a step with the caller among its players, the
    start, the game's end — or at the timeout. ``happened`` is what the caller was told after
    ``since_seq`` (default: the call's start)."""
    view = await api.view(token, who.game_id)
    now = int(view["seq"])
    since = now if since_seq is None else since_seq

    def mine(v: Mapping[str, Any]) -> bool:
        step = v.get("step") or {}
        return v["status"] == "over" or (v["status"] == "running" and v["you"] in (step.get("players") or ()))

    def decides(u: Mapping[str, Any]) -> bool:
        if u.get("kind") in ("game_over", "started"):
            return True
        return u.get("kind") == "step" and who.seat in ((u.get("data") or {}).get("players") or ())

    timed_out = False
    got: list[dict[str, Any]] = []
    last = since
    try:
        async with asyncio.timeout(timeout_s):
            got, last = await read_since(api, token, who, since, now, None if mine(view) else decides)
    except TimeoutError:
        timed_out = True
    view = await api.view(token, who.game_id)
    if timed_out:  # what was read before the timeout is read again, without waiting
        got, last = await read_since(api, token, who, since, int(view["seq"]))
    step = compact_step(view)
    told = notices_of(got, who.seat, view, turns=shaper(view["game"]).turns)
    out: dict[str, Any] = {"status": STATUS.get(str(view["status"]), str(view["status"])), "seq": last,
                           "your_decision": bool(step and step["your_decision"]), "timed_out": timed_out,
                           "step": step, "happened": report(view["game"], got),
                           "notifications": await notifications(api, token, who, view, told)}
    outcome = (view.get("view") or {}).get("outcome")
    if view["status"] == "over" and outcome:
        out["outcome"] = outcome
    return out


__all__ = ["MAX_WAIT_S", "MAX_WAIT_UPDATES", "my_decision", "next_round", "notifications", "read_since", "report"]
