"""The notifications an MCP agent is told of (issue 23): the kinds the outbox would send its player
(:mod:`services.notify.kinds`, the same words in the player's language), found in the updates its
wait tools read — no outbox, no channel, nothing stored.

From the updates (the player's own Watch stream, so never anything of another player's): the start
(``game_started``); the opening of a later round than the one waited after (``your_turn``; in a
game of turns: the caller's turn, when its turn's opening is among the updates read); a response
window or choice that waits on the caller (``your_decision``, one per window); a trade offer or a
private chat message addressed to the caller (``trade_offer``, ``private_chat``); the end
(``game_over``). From the view at the answer: ``deadline``, when the caller has not acted in the
step now open and its deadline is within the warning time of :class:`WarnPolicy` for a step that
long. Each (kind, round) once per answer, as the outbox's dedup does (two offers in one round: one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.base import TURN, WINDOW, step_seconds
from services.notify import kinds as nk
from services.notify.config import WarnPolicy
from services.notify.kinds import Notice


def notices_of(updates: Iterable[Mapping[str, Any]], seat: int, view: Mapping[str, Any], *, turns: bool,
               after_round: int | None = None) -> list[Notice]:
    """The notices ``updates`` (the caller's, in order) make for ``seat``. ``view``: the caller's view
    now (nicknames; whether it plays the current round). ``after_round``: a game of rounds' wait after
    that round (``your_turn`` only for a later round; None: any, as for a wait from the lobby)."""
    nickname = {int(p["seat"]): str(p["nickname"]) for p in view.get("players") or ()}
    now_round = int(view.get("round", 0))
    updates = list(updates)
    opened = {int(u.get("round", 0)) for u in updates if u.get("kind") == "round_opened"}
    out: list[Notice] = []
    for u in updates:
        kind, round_ = u.get("kind"), int(u.get("round", 0))
        data = u.get("data") or {}
        if kind == "started":
            out.append(Notice(seat, nk.GAME_STARTED, 0, "0"))
        elif kind == "round_opened" and not turns and (after_round is None or round_ > after_round):
            playing = round_ != now_round or bool(view.get("expected") or view.get("submitted"))
            if playing:  # (a seat out of the game is not expected to play the round now open)
                out.append(Notice(seat, nk.YOUR_TURN, round_, str(round_), int(data.get("deadline_unix_ms") or 0)))
        elif kind == "step" and turns:
            deadline = int(data.get("deadline_unix_ms") or 0)
            if data.get("kind") == TURN and int(data.get("active", -1)) == seat and round_ in opened:
                out.append(Notice(seat, nk.YOUR_TURN, round_, str(round_), deadline))
            elif data.get("kind") == WINDOW and seat in (data.get("players") or ()):
                out.append(Notice(seat, nk.YOUR_DECISION, round_, f"{round_}.{deadline}", deadline))
        elif kind == "event" and u.get("event_kind") == "offer" and data.get("to") is not None:
            if int(data["to"]) == seat:
                out.append(Notice(seat, nk.TRADE_OFFER, round_, str(round_),
                                  who=nickname.get(int(data.get("from", -1)), "")))
        elif kind == "chat" and u.get("chat") and (u["chat"] or {}).get("to") is not None:
            chat = u["chat"]
            if int(chat["to"]) == seat and int(chat.get("seat", -1)) != seat:
                out.append(Notice(seat, nk.PRIVATE_CHAT, round_, str(round_), who=str(chat.get("nickname", ""))))
        elif kind == "game_over":
            out.append(Notice(seat, nk.GAME_OVER, round_, "0"))
    return out


def deadline_notice(view: Mapping[str, Any], warn: WarnPolicy, now_ms: int, *, turns: bool) -> Notice | None:
    """``deadline`` when the step now open waits on the caller, it has not acted in it, and its deadline
    is within the warning time (``warn.before`` the step's length: the game's round deadline, or for a
    game of turns its step's deadline kind — :func:`engine.base.step_seconds`; a game's own config of
    deadlines is not in the view, so the speed's lengths are used)."""
    if view.get("status") != "running":
        return None
    seat, round_ = int(view.get("you", -1)), int(view.get("round", 0))
    speed = float(view.get("deadline_seconds") or 0)
    if turns:
        step = view.get("step") or {}
        deadline = int(step.get("deadline_unix_ms") or 0)
        if seat not in (step.get("players") or ()) or not step.get("deadline"):
            return None
        length, key = step_seconds({}, speed, str(step["deadline"])), f"{round_}.{deadline}"
    else:
        deadline = int(view.get("deadline_unix_ms") or 0)
        if not view.get("expected"):  # (submitted already, or not playing this round)
            return None
        length, key = speed, str(round_)
    before = warn.before(length)
    if not deadline or before is None or now_ms < deadline - int(before * 1000) or now_ms >= deadline:
        return None
    return Notice(seat, nk.DEADLINE, round_, key, deadline)


def worded(notices: Iterable[Notice], *, game: str, game_id: str, language: str, now_ms: int) -> list[dict[str, Any]]:
    """Each notice once per (kind, key), in order, as ``{kind, round, title, body}`` with the words
    of :func:`services.notify.kinds.payload` in ``language``."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n in notices:
        if n.dedup() in seen:
            continue
        seen.add(n.dedup())
        p = nk.payload(delivery_id="", kind=n.kind, game_id=game_id, game=game, round_=n.round, url="",
                       deadline_ms=n.deadline_ms, at_ms=now_ms, language=language, who=n.who)
        out.append({"kind": n.kind, "round": n.round, "title": p["title"], "body": p["body"]})
    return out


__all__ = ["deadline_notice", "notices_of", "worded"]
