"""What an MCP agent's wait calls notifications (gateway/agent_notify.py), from updates and a view
alone: games of turns (your turn when the turn began, a window's decision once), the deadline warning
(WarnPolicy's times, only to a seat that has not acted), dedup per (kind, round), the player's language."""

from __future__ import annotations

from typing import Any

from gateway.agent_notify import deadline_notice, notices_of, worded
from services.notify import kinds as nk
from services.notify.config import WarnPolicy

NOW = 1_780_000_000_000
PLAYERS = [{"seat": 0, "nickname": "ann"}, {"seat": 1, "nickname": "bob"}]


def view(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"game": "arcmage", "status": "running", "you": 1, "round": 4, "players": PLAYERS,
                            "deadline_seconds": 120.0, "expected": True, "submitted": False}
    base.update(over)
    return base


def step(round_: int, kind: str, players: list[int], active: int, deadline: int = NOW + 60_000) -> dict[str, Any]:
    return {"kind": "step", "round": round_, "data": {"kind": kind, "players": players, "active": active,
                                                      "deadline": "turn", "deadline_unix_ms": deadline}}


def kinds(notices: list[Any]) -> list[tuple[str, int]]:
    return [(n.kind, n.round) for n in notices]


def test_m40_a_turn_is_told_when_it_began_and_each_window_on_the_seat_once() -> None:
    updates = [
        step(3, "turn", [1], 1),  # (a turn that began before the updates read: told already)
        {"kind": "round_opened", "round": 4, "data": {"deadline_unix_ms": NOW}},
        step(4, "turn", [1], 1), step(4, "turn", [1], 1),  # (a step update after each action of the turn)
        step(4, "window", [0, 1], 0, NOW + 15_000), step(4, "window", [1], 0, NOW + 15_000),  # one window
        step(4, "window", [0], 0, NOW + 30_000),  # (not on seat 1)
        step(4, "window", [1], 1, NOW + 45_000),  # another window
        {"kind": "round_opened", "round": 5, "data": {}}, step(5, "turn", [0], 0),  # the other seat's turn
    ]
    got = notices_of(updates, 1, view(), turns=True)
    assert kinds(got) == [("your_turn", 4), ("your_turn", 4), ("your_decision", 4), ("your_decision", 4),
                          ("your_decision", 4)]
    told = worded(got, game="arcmage", game_id="g", language="en", now_ms=NOW)
    assert [(t["kind"], t["round"]) for t in told] == [("your_turn", 4), ("your_decision", 4), ("your_decision", 4)]
    assert told[0]["title"] == "Your turn" and "Arcmage" in told[0]["body"]


def test_a53_only_what_is_addressed_to_the_seat_and_the_words_in_its_language() -> None:
    updates = [
        {"kind": "event", "round": 2, "event_kind": "offer", "data": {"from": 0, "to": 1}},
        {"kind": "event", "round": 2, "event_kind": "offer", "data": {"from": 0}},  # (to everyone)
        {"kind": "event", "round": 2, "event_kind": "offer", "data": {"from": 1, "to": 0}},  # (its own)
        {"kind": "chat", "round": 2, "seat": 0, "chat": {"seat": 0, "nickname": "ann", "text": "hi", "to": 1}},
        {"kind": "chat", "round": 2, "seat": 0, "chat": {"seat": 0, "nickname": "ann", "text": "all"}},
        {"kind": "chat", "round": 2, "seat": 1, "chat": {"seat": 1, "nickname": "bob", "text": "x", "to": 0}},
    ]
    got = notices_of(updates, 1, view(game="archipelago"), turns=False)
    assert [(n.kind, n.who) for n in got] == [("trade_offer", "ann"), ("private_chat", "ann")]
    told = worded(got, game="archipelago", game_id="g", language="he", now_ms=NOW)
    assert [t["title"] for t in told] == [nk.WORDS["he"][nk.TRADE_OFFER][0], nk.WORDS["he"][nk.PRIVATE_CHAT][0]]
    assert told[0]["body"].startswith("ann ") and "ארכיפלג" in told[0]["body"]


def test_a_round_opening_before_the_round_waited_after_or_for_a_seat_out_of_play_is_not_told() -> None:
    opened: list[dict[str, Any]] = [{"kind": "round_opened", "round": r, "data": {}} for r in (3, 4)]
    rounds = view(game="archipelago")
    assert kinds(notices_of(opened, 1, rounds, turns=False, after_round=3)) == [("your_turn", 4)]
    assert kinds(notices_of(opened, 1, rounds, turns=False)) == [("your_turn", 3), ("your_turn", 4)]
    out_of_play = view(game="archipelago", expected=False, submitted=False)
    assert kinds(notices_of(opened, 1, out_of_play, turns=False, after_round=3)) == []


def test_the_deadline_warning_comes_within_warn_policys_time_to_a_seat_that_has_not_acted() -> None:
    warn = WarnPolicy()  # a 120 s round is "fast": 15 s before; a step under 30 s gets none
    rounds = view(game="salvo", deadline_unix_ms=NOW + 10_000)
    got = deadline_notice(rounds, warn, NOW, turns=False)
    assert got is not None and (got.kind, got.round, got.deadline_ms) == (nk.DEADLINE, 4, NOW + 10_000)
    assert deadline_notice({**rounds, "deadline_unix_ms": NOW + 16_000}, warn, NOW, turns=False) is None
    assert deadline_notice({**rounds, "expected": False}, warn, NOW, turns=False) is None  # (submitted)
    assert deadline_notice({**rounds, "deadline_seconds": 20.0}, warn, NOW, turns=False) is None
    assert deadline_notice({**rounds, "status": "over"}, warn, NOW, turns=False) is None
    slow = {**rounds, "deadline_seconds": 8 * 3600.0, "deadline_unix_ms": NOW + 3_500_000}
    assert deadline_notice(slow, warn, NOW, turns=False) is not None, "1 h before a slow round's end"
    turn = view(step={"kind": "turn", "players": [1], "active": 1, "deadline": "turn",
                      "deadline_unix_ms": NOW + 14_000})
    got = deadline_notice(turn, warn, NOW, turns=True)
    assert got is not None and got.key == f"4.{NOW + 14_000}"
    theirs = view(step={"kind": "turn", "players": [0], "active": 0, "deadline": "turn",
                        "deadline_unix_ms": NOW + 14_000})
    assert deadline_notice(theirs, warn, NOW, turns=True) is None
    told = worded([got], game="arcmage", game_id="g", language="en", now_ms=NOW)
    assert told[0]["title"] == "Deadline soon" and nk.hhmm_utc(NOW + 14_000) in told[0]["body"]
