"""`archipelago play` for Arcmage: the table as text from real views of the engine (M26: what the player
may see), the legal actions in words, and the prompt's loop against the engine (tests/client/
arcmage_table.py): a numbered legal action or pass goes to Act with the view's version; a step that
moves on at the prompt (its deadline, M25) abandons it; a stale action is "too late"."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from archipelago.v1 import game_pb2
from client import feed as feed_mod
from client.play import play
from client.play_arcmage import (
    ArcmageUI,
    Table,
    action_list,
    describe_action,
    face_line,
    legal,
    parse_choice,
    render,
    summary,
)
from client.play_base import clock_parts
from engine.arcmage import GAME, ArcState
from tests.client.arcmage_table import EngineGame, advance, new_state, response
from tests.client.test_play_loop import WAIT_S, Keyboard, Transcript

NOW = 2_000_000_000_000  # the deadline shown: 57 s after "now"


def clock(ms: int) -> str:
    """The deadline's local time as the countdown shows it ('15:42:10 UTC')."""
    return clock_parts(ms)[1]


def view_of(state: ArcState, seat: int) -> dict[str, Any]:
    return GAME.view(state, seat)


def has(pred: Any) -> Any:
    """A state predicate on the view of the seat that acts."""
    def check(state: ArcState) -> bool:
        step = GAME.step(state)
        return step.kind != "over" and bool(pred(view_of(state, step.players[0])))
    return check


@pytest.fixture(scope="module")
def stack_state() -> ArcState:
    """A card on the stack, a city with residents, resources in piles: a window for the other seat."""
    return advance(new_state(seed=3, max_rounds=30), has(lambda v: v["stack"] and any(
        c.get("residents") for c in v["cards"].values() if c["zone"] == "city")))


@pytest.fixture(scope="module")
def intercept_state() -> ArcState:
    return advance(new_state(seed=3, max_rounds=30), has(lambda v: (v["pending"] or {}).get("kind") == "intercept"))


def test_m26_the_table_shows_every_seat_the_hand_with_costs_piles_the_stack_priority_and_the_deadline(
        stack_state: ArcState) -> None:
    seat = GAME.step(stack_state).players[0]
    v = view_of(stack_state, seat)
    text = render(response(stack_state, seat, deadline_unix_ms=NOW), now_ms=NOW - 57_000)
    lines = text.splitlines()
    assert lines[0].startswith(f"Arcmage · turn {v['turn']} · ") and f"phase {v['phase']}" in lines[0]
    for s in v["seats"]:  # every seat: counts, resources, kingdoms (defense, residents), army
        start = "you (seat" if s["seat"] == seat else f"seat {s['seat']}"
        head = next(line for line in lines if line.startswith(start))
        assert f"hand {s['hand_count']} · deck {s['deck_count']} · unbuilt cities {s['unbuilt_count']}" in head
        for faction, n in s["pile_counts"].items():
            if n:
                assert f"{faction} {n}" in head
        for city in s["cities"]:
            c = v["cards"][city]
            line = next(line for line in lines if line.startswith(f"  kingdom {c['name']} ({city}) defense "))
            assert f"defense {c['city_defense']}" in line
            for r in c.get("residents") or []:
                assert f"{v['cards'][r]['name']} ({r}) {v['cards'][r]['attack']}/{v['cards'][r]['defense']}" in line
        army = next(line for line in lines[lines.index(head):] if line.startswith("  army: "))
        for cid in s["army"]:
            assert f"{v['cards'][cid]['name']} ({cid})" in army
    for cid in v["hand"]:  # the player's own hand, each card with its cost and loyalty
        face = v["faces"][v["cards"][cid]["key"]]
        line = next(line for line in lines if line.startswith(f"  {face['name']} ({cid}): "))
        assert face["type"] in line and (not face["cost"] or f"cost {face['cost']}" in line)
        if face["cost"] and face["loyalty"]:
            assert f"(loyalty {face['loyalty']})" in line
    top = v["stack"][-1]
    assert "the stack (the last resolves first):" in lines
    assert any(line.startswith(f"  {len(v['stack'])}. {v['cards'][top['card']]['name']} ({top['card']}) cast by ")
               for line in lines)
    assert f"priority: you (window, response deadline: closes {clock(NOW)} · 57 s left)" in lines
    assert "pending: a window (stack): you may answer or pass" in lines
    assert " ".join(x.strip() for x in lines[-3:]).endswith(v["attribution"])  # (wrapped at 120 columns)
    assert max(len(x) for x in lines) <= 120
    other = next(s for s in range(2) if s != seat)
    theirs = render(response(stack_state, other, deadline_unix_ms=NOW), now_ms=NOW - 57_000)
    for cid in view_of(stack_state, other)["hand"]:  # (each sees its own hand only)
        assert f"({cid}): " in theirs and f"({cid})" not in text


def test_m42_an_interception_decision_shows_the_attack_and_the_choices_in_words(intercept_state: ArcState) -> None:
    seat = GAME.step(intercept_state).players[0]
    v = view_of(intercept_state, seat)
    view = response(intercept_state, seat, deadline_unix_ms=NOW)
    text = render(view, now_ms=NOW - 3_000)
    city = v["combat"]["city"]
    assert f"attack on {v['cards'][city]['name']} ({city}) of you by " in text
    assert f"priority: you (window, response deadline: closes {clock(NOW)} · 3 s left)" in text
    assert "pending: you to decide: intercept" in text
    actions = legal(view)
    assert actions == v["legal"]
    listed = action_list(view, actions)
    assert "   1. intercept: none / done" in listed
    for i, a in enumerate(actions, 1):
        option = a.get("choose", {}).get("option")
        if isinstance(option, list):
            blocker, attacker = option
            assert (f"{i:>4}. intercept: {v['cards'][blocker]['name']} ({blocker}) intercepts "
                    f"{v['cards'][attacker]['name']} ({attacker})") in listed


def test_m25_the_summary_while_the_others_act_names_who_has_priority(stack_state: ArcState) -> None:
    seat = GAME.step(stack_state).players[0]
    other = 1 - seat
    text = summary(response(stack_state, other, deadline_unix_ms=NOW), now_ms=NOW - 10_000)
    assert max(len(x) for x in text.splitlines()) <= 120
    line = " ".join(x.strip() for x in text.splitlines())  # (one line, wrapped when wider than the terminal)
    v = view_of(stack_state, other)
    assert line.startswith(f"[turn {v['turn']} · ") and f" · {v['phase']} · stack {len(v['stack'])}] " in line
    assert line.endswith(f"priority: seat {seat} ({['alice', 'bob'][seat]}) (window, response deadline: closes "
                         f"{clock(NOW)} · 10 s left)")
    ui = ArcmageUI()
    assert ui.render(response(stack_state, other)).startswith("Arcmage · turn")  # the first screen: the table
    assert ui.render(response(stack_state, other)).startswith("[turn ")  # then a line a step while waiting
    assert not ui.expected(response(stack_state, other)) and ui.expected(response(stack_state, seat))


def test_m26_every_legal_action_of_a_game_is_described_in_words_naming_its_cards() -> None:
    state, kinds = new_state(seed=11, max_rounds=14), set()
    for _ in range(3000):
        step = GAME.step(state)
        if step.kind == "over":
            break
        seat = step.players[0]
        view = response(state, seat)
        t = Table.of(view)
        for a in legal(view):
            kind = next(iter(a))
            kinds.add(kind)
            words = describe_action(a, t)
            assert "{" not in words and "'" not in words.replace("'s ", ""), (a, words)
            for cid in re.findall(r"\bc\d+\b", str(a)):
                assert f"{t.cards[cid]['name']} ({cid})" in words, (a, words)
        state, _ = GAME.apply_action(state, seat, GAME.autopilot_action(view_of(state, seat)))
    assert {"pass", "choose", "draw", "resource", "play", "attack", "move"} <= kinds, kinds


def test_m25_a_summary_wider_than_the_terminal_is_wrapped_under_itself(stack_state: ArcState) -> None:
    """The line a step while the others act fits 120 columns whatever the nicknames (and the clock's
    zone): wider, the terminal would wrap it itself (tests/e2e/test_play_pty.py found one of 121)."""
    seat = GAME.step(stack_state).players[0]
    view = response(stack_state, 1 - seat, deadline_unix_ms=NOW)
    view.players[seat].nickname = "a-rather-long-nickname-too"
    text = summary(view, now_ms=NOW - 10_000)
    lines = text.splitlines()
    assert len(lines) == 2 and max(map(len, lines)) <= 120 and lines[1].startswith("  "), lines
    assert " ".join(x.strip() for x in lines).endswith(
        f"priority: seat {seat} (a-rather-long-nickname-too) (window, response deadline: closes {clock(NOW)} · 10 s "
        "left)")


def test_m26_a_notice_wider_than_the_terminal_is_wrapped_under_itself(stack_state: ArcState) -> None:
    """An event naming many cards (an attack by a whole army) and a long chat fit 120 columns: the
    terminal would wrap them itself, breaking the screen's rows (tests/e2e/test_play_pty.py)."""
    ui = ArcmageUI()
    ui.render(response(stack_state, 0))
    cards = sorted(view_of(stack_state, 0)["cards"])[:8]
    event = game_pb2.Update(kind="event", event_kind="attack", seq=1)
    event.data.update({"player": 1, "city": cards[0], "attackers": cards[1:]})
    chat = game_pb2.Update(kind="chat", seq=2, chat=game_pb2.ChatMessage(seat=1, text="well played " * 20))
    for update, start in ((event, "[attack: "), (chat, "[chat] seat 1 (bob): well played")):
        text = ui.notice(update)
        assert text is not None and text.startswith(start), text
        lines = text.splitlines()
        assert len(lines) > 1 and max(map(len, lines)) <= 120, lines
        assert all(x.startswith("  ") for x in lines[1:]), lines  # under itself
    said = " ".join(x.strip() for x in ui.notice(event).splitlines())  # type: ignore[union-attr]
    assert "player seat 1 (bob)" in said and all(f"({c})" in said for c in cards), said


@pytest.mark.parametrize(("line", "wanted"), [
    ("2", {"play": {"card": "c2"}}), ("pass", {"pass": {}}), ("P", {"pass": {}}), ("table", ("table", "")),
    ("card c12", ("card", "c12")), ("chat hello there", ("chat", "hello there")), ("help", ("help", "")),
])
def test_the_prompt_takes_a_number_pass_or_a_command(line: str, wanted: Any) -> None:
    assert parse_choice(line, [{"pass": {}}, {"play": {"card": "c2"}}]) == wanted


@pytest.mark.parametrize(("line", "error"), [
    ("3", "no action 3: choose 1-2"), ("card", "card <id>"), ("attack!", "unknown command 'attack!'"), ("chat", "chat"),
])
def test_a_bad_answer_is_explained(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_choice(line, [{"pass": {}}, {"play": {"card": "c2"}}])


# ---------------------------------------------------------------------------------------- the loop
@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> EngineGame:
    monkeypatch.setattr(feed_mod, "RETRY_S", 0.0)
    state = advance(new_state(seed=5, max_rounds=12), lambda s: s.data["turn"] >= 2 and 0 in GAME.step(s).players
                    and len(GAME.view(s, 0)["legal"]) > 1)
    return EngineGame(state, you=0)


async def test_m25_the_player_picks_a_numbered_legal_action_and_it_is_acted_at_the_views_version(
        table: EngineGame) -> None:
    before = table.state
    actions = GAME.view(before, 0)["legal"]
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(table, "g1", lines=keys, out=screen))
    at = await screen.expect("your actions:")
    at = await screen.expect(f"action (1-{len(actions)}, pass, help)> ", at)
    keys.typed.put_nowait(str(len(actions) + 1))
    at = await screen.expect(f"error: no action {len(actions) + 1}: choose 1-{len(actions)}", at)
    hand = GAME.view(before, 0)["hand"][0]
    keys.typed.put_nowait(f"card {hand}")
    at = await screen.expect(f"{GAME.view(before, 0)['cards'][hand]['name']} ({hand}): ", at)
    keys.typed.put_nowait("2")
    at = await screen.expect(f"done: {describe_action(actions[1], Table.of(response(before, 0)))}", at)
    assert table.acts[0] == (before.version, actions[1])
    # the others play (the autopilot); the player's next step shows the table and the actions again
    at = await screen.expect("your actions:", at)
    keys.typed.put_nowait(None)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    text = screen.getvalue()
    assert "end of input" in text[at:] and table.out_of_turn == 0
    assert re.search(r"\[(cast|drew|passed|turn|draw option)[^\]]*\]", text), text  # the game's events as they came


async def test_m25_a_step_that_moves_on_at_the_prompt_abandons_it_and_a_stale_action_is_too_late(
        table: EngineGame) -> None:
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(table, "g1", lines=keys, out=screen))
    at = await screen.expect("action (1-")
    # the deadline passes: the autopilot acts for the player (a step update), then the others play
    await table.apply(0, GAME.autopilot_action(GAME.view(table.state, 0)))
    table.start_others()
    assert table.others is not None
    await table.others
    at = await screen.expect("your actions:", at)
    assert keys.discarded == 1 and table.acts == []
    at = await screen.expect("action (1-", at)
    # the game moves on without the player hearing of it yet: the action it picks now is stale
    stale = table.state
    table.state, _ = GAME.apply_action(stale, 0, GAME.autopilot_action(GAME.view(stale, 0)))
    keys.typed.put_nowait("1")
    at = await screen.expect("too late: version: the step has moved on", at)
    keys.typed.put_nowait(None)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    assert table.acts == []


async def test_m26_a_cards_whole_face_and_the_action_done_fit_the_terminals_width(table: EngineGame) -> None:
    """``card <id>`` shows a card's whole text, wrapped under itself at 120 columns (unwrapped, the
    terminal would wrap it); so is the "done:" line of a long action."""
    view = response(table.state, 0)
    t = Table.of(view)
    cid = max(GAME.view(table.state, 0)["hand"], key=lambda c: len(str(t.face(c).get("text") or "")))
    actions = legal(view)
    longest = max(range(len(actions)), key=lambda i: len(describe_action(actions[i], t)))
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(table, "g1", lines=keys, out=screen))
    at = await screen.expect("action (1-")
    keys.typed.put_nowait(f"card {cid}")
    start = await screen.expect(f"\n{t.name(cid)}: ", at)
    end = await screen.expect("\n[turn", start)  # (the next prompt)
    face = screen.getvalue()[start - len(f"{t.name(cid)}: "):end - len("[turn")].splitlines()
    assert len(face) > 1 and max(map(len, face)) <= 120 and all(x.startswith("  ") for x in face[1:]), face
    assert " ".join(x.strip() for x in face).startswith(f"{t.name(cid)}: {face_line(t.face(cid), None)}"[:200])
    keys.typed.put_nowait(str(longest + 1))
    at = await screen.expect("\ndone: ", end)
    done = screen.getvalue()[at - len("done: "):].split("\n[", 1)[0].splitlines()
    assert max(map(len, done)) <= 120 and " ".join(x.strip() for x in done) == \
        f"done: {describe_action(actions[longest], t)}", done
    keys.typed.put_nowait(None)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1


async def test_chat_from_the_prompt(table: EngineGame) -> None:
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(table, "g1", lines=keys, out=screen))
    await screen.expect("action (1-")
    keys.typed.put_nowait("chat good game")
    await screen.expect("chat sent: good game")
    keys.typed.put_nowait(None)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    assert table.chats == ["good game"]
