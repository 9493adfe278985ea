"""`archipelago play` in a pseudo-terminal of 120×40 (as tmux gives), against a bot on the other seat,
played from the screen alone: the test reads what the screen shows (pyte emulates the terminal) and
types, as a player does.  A Salvo game, an Archipelago game and an Arcmage game each run to their end;
in each a chat arrives while the player is typing (the typed text stays on the prompt line and is not
run), the countdown of the toolbar moves, and the screen fits: the title on the first row, the grid's
or the map's ruler above and below (Arcmage: the whole table with its numbered actions above the
prompt), the toolbar on the last rows, nothing wrapped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import arcmage_pb2, salvo_pb2
from client.bot import play_seat
from client.errors import ApiError
from client.grpc_client import Client
from tests.conftest import Cluster
from tests.e2e.pty_screen import COLS, ROWS, WAIT_S, PtyProgram
from tests.e2e.test_cli_arcmage import OUTCOME, TURN_LIMIT
from tests.e2e.test_play import EXE

pytestmark = pytest.mark.e2e

LEFT = re.compile(r"(\d+) s left")
GRID_HEAD = "   A B C D E F G H I J      A B C D E F G H I J"


class Seats:
    """A game of two: the host's seat played by the bot (in this process), the human's by `archipelago
    play` on a pty; the human's secret in a file, its local state in its own folder."""

    def __init__(self, cluster: Cluster, tmp: Path) -> None:
        self.cluster = cluster
        self.tmp = tmp
        self.state = tmp / "state"
        self.host = Client(cluster.address)
        self.human = Client(cluster.address)
        self.bot: asyncio.Task[object] | None = None
        self.programs: list[PtyProgram] = []
        self.game_id = self.code = self.secret = ""

    async def open(self, game: str, **options: object) -> None:
        created = await self.host.create(game, seats=2, nickname="host", deadline_seconds=90, **options)
        self.game_id, self.code = created.game_id, created.code
        joined = await self.human.join(created.code, "human")
        self.secret = joined.secret
        (self.tmp / "secret").write_text(joined.secret + "\n", encoding="utf-8")

    async def start(self, p: PtyProgram) -> None:
        """Once the human's terminal is in the lobby with its stream open (connected, A17), the bot takes
        the host's seat and starts the game."""
        await p.shows("waiting in the lobby")
        async with asyncio.timeout(WAIT_S):
            while not (await self.host.view(self.game_id)).players[1].connected:
                await asyncio.sleep(0.05)  # (the gateway's presence has no notice for a lobby's host)
        self.bot = asyncio.get_running_loop().create_task(play_seat(self.host, self.game_id, log=lambda _: None))

    def play(self) -> PtyProgram:
        env = {**os.environ, "XDG_STATE_HOME": str(self.state)}
        env.pop("ARCHIPELAGO_SECRET", None)
        p = PtyProgram([EXE, "play", self.code, "--server", self.cluster.address, "--secret-file",
                        str(self.tmp / "secret")], env=env)
        self.programs.append(p)
        return p

    async def close(self) -> None:
        for p in self.programs:
            p.close()
        if self.bot is not None:
            self.bot.cancel()
            with contextlib.suppress(asyncio.CancelledError, ApiError):  # (cancelled, or the game had ended)
                await self.bot
        await self.host.close()
        await self.human.close()


@pytest.fixture
async def seats(cluster: Cluster, tmp_path: Path) -> AsyncIterator[Seats]:
    s = Seats(cluster, tmp_path)
    yield s
    await s.close()


def seconds_left(p: PtyProgram) -> int | None:
    """The countdown of the toolbar (its first line is the second row from the bottom); None while it
    is not drawn."""
    found = LEFT.search(p.lines()[-2])
    return int(found[1]) if found else None


async def the_countdown_moves(p: PtyProgram) -> None:
    await p.until(lambda: seconds_left(p) is not None, "the countdown")
    first = seconds_left(p)
    assert first is not None

    def moved() -> bool:
        now = seconds_left(p)
        return now is not None and now < first

    await p.until(moved, f"the countdown to move from {first} s", timeout=10)


async def assert_fits(p: PtyProgram, title: str) -> None:
    """The round's screen: its title on the first row (nothing scrolled away), the toolbar on the last
    two, nothing wider than the terminal. (The lines printed above the prompt reach the terminal a
    moment after the prompt itself — prompt_toolkit's patched stdout writes from a thread of its own —
    so the screen is waited for, then checked.)"""
    await p.until(lambda: p.lines()[0].startswith(title), f"the screen of {title}, its title at the top")
    lines = p.lines()
    assert len(lines) == ROWS and all(len(x) <= COLS for x in lines)
    assert lines[0].startswith(title), p.text  # the title on the first row: nothing scrolled away
    assert "s left" in lines[-2] and "(you)" in lines[-1], p.text  # the toolbar on the last two rows


def at_prompt(p: PtyProgram, prompt: str) -> bool:
    """The prompt is on the cursor's line and the toolbar drawn under it."""
    return prompt.rstrip() in p.cursor_line() and "(you)" in p.lines()[-1]


def enemy_waters(p: PtyProgram) -> dict[str, str]:
    """The enemy grid as the screen shows it: square -> mark."""
    lines = p.lines()
    top = lines.index(GRID_HEAD)
    marks = {}
    for row in range(1, 11):
        cells = lines[top + row][25:].split()
        assert cells[0] == str(row), lines[top + row]
        for col, mark in zip("ABCDEFGHIJ", cells[1:], strict=True):
            marks[f"{col}{row}"] = mark
    return marks


async def test_s3_s5_a_human_plays_salvo_from_the_screen_of_a_120x40_terminal(seats: Seats) -> None:
    await seats.open("salvo", salvo=salvo_pb2.SalvoOptions(max_rounds=2))
    p = seats.play()
    await seats.start(p)
    await p.until(lambda: at_prompt(p, "place your fleet"), "the placement prompt")
    await assert_fits(p, "Salvo · round 0")
    assert p.lines()[2] == GRID_HEAD
    await the_countdown_moves(p)
    p.type("help\r")  # a command, not a placement
    await p.shows("Placement (round 0): 'random'")
    await p.until(lambda: at_prompt(p, "place your fleet"), "the placement prompt again")
    p.type("random\r")

    await p.until(lambda: at_prompt(p, "fire up to 7 shots"), "the firing prompt of round 1")
    await assert_fits(p, "Salvo · round 1")
    free = [sq for sq, mark in enemy_waters(p).items() if mark == "."]
    aim = free[:7]
    typed = " ".join(aim)[:-1]  # all but the last character: the player is still typing
    p.type(typed)
    await p.until(lambda: p.cursor_line().endswith(typed), "the typed text")
    await seats.host.chat(seats.game_id, "good luck")  # a chat arrives mid-typing
    await p.shows("[chat] host: good luck")
    await p.until(lambda: p.cursor_line().endswith(typed), "the typed text, kept on the prompt line")
    view = await seats.human.view(seats.game_id)
    assert view.round == 1 and not view.submitted, "nothing typed ran without the player's Enter"
    p.type(" ".join(aim)[-1] + "\r")

    await p.until(lambda: at_prompt(p, "fire up to") and p.lines()[0].startswith("Salvo · round 2"),
                  "the firing prompt of round 2")
    await assert_fits(p, "Salvo · round 2")
    shown = enemy_waters(p)
    assert all(shown[sq] == "1" for sq in aim), shown  # the screen marks the round-1 shots
    after = await seats.host.view(seats.game_id)
    assert {s.square for s in after.salvo.incoming if s.round == 1} == set(aim)
    p.type("quit")  # not a shot: typed, then the player thinks again
    await p.until(lambda: p.cursor_line().endswith("quit"), "quit typed")
    p.type("\x7f" * 4 + next(sq for sq, mark in shown.items() if mark == ".") + "\r")  # one shot
    await p.shows("game over after round 2", timeout=60)
    assert await p.wait() == 0
    final = await seats.human.view(seats.game_id)
    assert len([s for s in final.salvo.shots if s.round == 2]) == 1
    assert not list(seats.state.glob("archipelago/*")), "the game is over: nothing of it kept on this machine"


def map_rows(p: PtyProgram, width: int, height: int) -> list[str]:
    """The map as the screen shows it, checking the ruler above and below and each row's place."""
    lines = p.lines()
    units = "".join(str(x % 10) for x in range(width))
    assert lines[2].startswith(f"    {units}"), p.text  # the ruler above
    rows = []
    for y in range(height):
        row = lines[3 + y]
        assert row.startswith(f"{y:>3} ") and row[4 + width:].startswith(f" {y}"), (y, p.text)  # nothing wrapped
        rows.append(row[4:4 + width])
    assert lines[3 + height].startswith(f"    {units}"), p.text  # and below
    assert lines[4 + height].startswith("    0"), p.text
    return rows


LEGEND = re.compile(r"│  ([a-z0-9]) (Private|Sergeant) \((\d+),(\d+)\)")


def a_step(p: PtyProgram, rows: list[str]) -> tuple[str, str, tuple[int, int]]:
    """From the screen: an own Private or Sergeant next to free land (its letter, the step, the tile)."""
    steps = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
    for line in p.lines():
        found = LEGEND.search(line)
        if not found:
            continue
        x, y = int(found[3]), int(found[4])
        for d, (dx, dy) in steps.items():
            nx, ny = x + dx, y + dy
            if 0 <= ny < len(rows) and 0 <= nx < len(rows[ny]) and rows[ny][nx] == "#":
                return found[1], d, (nx, ny)
    raise AssertionError(f"no unit with free land next to it on the screen:\n{p.text}")


async def test_a13_a18_a53_a_human_plays_archipelago_from_the_screen_of_a_120x40_terminal(seats: Seats) -> None:
    await seats.open("archipelago", archipelago=A.ArchipelagoOptions(max_rounds=2))
    p = seats.play()
    await seats.start(p)
    await p.until(lambda: at_prompt(p, "deploy (0 so far)> "), "the deployment prompt")
    view = await seats.human.view(seats.game_id)
    width, height = view.archipelago.width, view.archipelago.height
    await p.until(lambda: at_prompt(p, "deploy (0 so far)> "), "the deployment prompt, drawn")
    await assert_fits(p, "Archipelago · round 0 of 2")
    map_rows(p, width, height)
    await the_countdown_moves(p)
    p.type("stay a\r")  # round 0: a unit without a deployment keeps the default layout
    await p.shows("a (")
    await p.shows("it starts where the default layout puts it (A15)")
    p.type("done\r")

    await p.until(lambda: at_prompt(p, "orders (0 so far)> ") and p.lines()[0].startswith(
        "Archipelago · round 1 of 2"), "the orders prompt of round 1")
    await assert_fits(p, "Archipelago · round 1 of 2")
    rows = map_rows(p, width, height)
    label, step, dest = a_step(p, rows)
    typed = f"move {label}"
    p.type(typed)
    await p.until(lambda: p.cursor_line().endswith(typed), "the typed text")
    await seats.host.chat(seats.game_id, "ahoy")  # a chat arrives mid-typing
    await p.shows("[chat] seat 0 (host) → all: ahoy")
    await p.until(lambda: p.cursor_line().endswith(typed), "the typed text, kept on the prompt line")
    p.type(f" {step}\r")
    await p.shows(f"{label} (")
    await p.until(lambda: at_prompt(p, "orders (1 so far)> "), "one order")
    p.type("sh\t")  # Tab completes the command
    await p.until(lambda: p.cursor_line().endswith("> show"), "show completed")
    p.type("\r")
    await p.shows("orders for round 1:")
    p.type("done\r")

    await p.until(lambda: at_prompt(p, "orders (0 so far)> ") and p.lines()[0].startswith(
        "Archipelago · round 2 of 2"), "the orders prompt of round 2")
    await assert_fits(p, "Archipelago · round 2 of 2")
    map_rows(p, width, height)
    moved = [LEGEND.search(x) for x in p.lines()]
    assert any(m and m[1] == label and (int(m[3]), int(m[4])) == dest for m in moved), p.text  # same letter, moved
    p.type("done\r")
    await p.shows("game over after round 2", timeout=60)
    assert await p.wait() == 0
    assert not list(seats.state.glob("archipelago/*")), "the game is over: nothing of it kept on this machine"


ACTION_PROMPT = re.compile(r"action \(1-(\d+), pass, help\)>")
NUMBERED = re.compile(r" {2,3}(\d+)\. (\S.*)")
TABLE_TITLE = re.compile(r"Arcmage · turn (\d+) · (.+?) turn · phase (\w+) · you are seat \d")
ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[@-_])")


def action_prompt(p: PtyProgram) -> int | None:
    """How many actions the prompt on the cursor's line offers (nothing typed on it yet, the toolbar
    drawn under it); None while there is no such prompt."""
    found = ACTION_PROMPT.fullmatch(p.cursor_line())
    return int(found[1]) if found and "(you)" in p.lines()[-1] else None


def listed(p: PtyProgram) -> tuple[re.Match[str], list[str]]:
    """The table and the numbered actions the screen shows above the prompt: (the table's title, the
    actions in words).  The whole table is on the screen — its title, then "your actions:" and the
    list — and only the game's notices ("[…]", wrapped under themselves) come between the list and the
    prompt."""
    lines = p.lines()[:p.screen.cursor.y]
    heads = [i for i, x in enumerate(lines) if x == "your actions:"]
    assert heads, f"no list of actions above the prompt:\n{p.text}"
    titles = [m for m in map(TABLE_TITLE.match, lines[:heads[-1]]) if m]
    assert titles, f"the table's title is not on the screen (the table is taller than the screen):\n{p.text}"
    actions: list[str] = []
    rest = lines[heads[-1] + 1:]
    while rest:
        entry = NUMBERED.fullmatch(rest[0])
        if entry:
            assert int(entry[1]) == len(actions) + 1, p.text
            actions.append(entry[2])
        elif actions and rest[0].startswith("    ") and not rest[0].strip().startswith("("):
            actions[-1] += " " + rest[0].strip()  # (a long action wrapped under itself)
        elif rest[0] != "      (pass is not legal now)":
            break
        rest.pop(0)
    assert not rest or (rest[0].startswith("[") and all(x.startswith(("[", "  ")) for x in rest)), \
        f"not only notices between the list and the prompt:\n{p.text}"
    return titles[-1], actions


def printed(p: PtyProgram) -> list[str]:
    """The lines the program printed: of each, its text after the last escape sequence (a line of the
    table or a notice is written whole; a redrawn prompt or toolbar in pieces)."""
    text = bytes(p.raw).decode(errors="replace")
    return [ESCAPE.split(line)[-1] for line in re.split(r"\r?\n", text)]


async def typed(p: PtyProgram, text: str) -> None:
    """Until ``text`` is on the prompt line, as typed (then Enter sends it)."""
    await p.until(lambda: p.cursor_line().endswith(f"> {text}"), f"{text!r} typed")


def fits(p: PtyProgram) -> None:
    lines = p.lines()
    assert len(lines) == ROWS and all(len(x) <= COLS for x in lines), p.text
    assert "s left" in lines[-2] and "(you)" in lines[-1], p.text  # the toolbar on the last two rows


async def test_m3_m25_m53_a_human_plays_arcmage_from_the_screen_of_a_120x40_terminal(seats: Seats) -> None:
    """The human acts at every step the screen asks it to (its own turns' phases and decisions, the
    windows of the bot's turns: M25's sequential turns), choosing from the numbered list on the screen:
    pass when it is listed, else the first action by its number.  The bot plays the autopilot (M53);
    after 4 turns the game is a draw (M3)."""
    turns = 4
    # (windows of 120 s, as long as a turn: on a loaded machine the autopilot never answers for the human)
    await seats.open("arcmage", arcmage=arcmage_pb2.ArcmageOptions(max_rounds=turns, response_seconds=120))
    p = seats.play()
    await seats.start(p)
    prompts, by_number, chatted, own_turns = 0, 0, False, set()
    while True:
        await p.until(lambda: action_prompt(p) is not None or OUTCOME.search(p.text) is not None,
                      "the next action prompt, or the game's end")
        if OUTCOME.search(p.text):
            break
        prompts += 1
        title, actions = listed(p)
        assert len(actions) == action_prompt(p), p.text
        fits(p)
        turn, whose, phase = int(title[1]), title[2], title[3]
        if whose == "your" and turn >= 1 and turn not in own_turns:  # a turn of the player's: a fresh screen
            own_turns.add(turn)
            assert phase == "build" and "pass" in actions, p.text
            await assert_fits(p, f"Arcmage · turn {turn} · your turn · phase build")
        if prompts == 1:
            await the_countdown_moves(p)
        choice = "pass" if "pass" in actions else "1"
        if choice == "pass" and not chatted:  # a chat arrives while the player types
            chatted = True
            before = await seats.human.view(seats.game_id)
            p.type("pas")
            await p.until(lambda: p.cursor_line().endswith("> pas"), "the typed text")
            await seats.host.chat(seats.game_id, "good luck")
            await p.shows("[chat] seat 0 (host): good luck")
            await p.until(lambda: p.cursor_line().endswith("> pas") and "(you)" in p.lines()[-1],
                          "the typed text, kept on the prompt line, and the toolbar redrawn")
            fits(p)
            view = await seats.human.view(seats.game_id)
            assert (view.round_version, view.step) == (before.round_version, before.step), \
                "nothing typed ran without Enter: the step is still open (only the chat was journaled)"
            p.type("s")
        else:
            p.type(choice)
        by_number += choice != "pass"
        await typed(p, choice)
        p.type("\r")
    found = OUTCOME.search(p.text)
    assert found and found["draw"] and found["reason"] == TURN_LIMIT and int(found["turn"]) == turns, p.text
    assert await p.wait() == 0
    assert all(len(x) <= COLS for x in p.lines()), p.text
    assert max(map(len, printed(p))) <= COLS, max(printed(p), key=len)  # (the terminal wraps what is wider)
    final = await seats.human.view(seats.game_id)
    assert final.arcmage.outcome.draw and final.arcmage.outcome.reason == "max_rounds" and final.round == turns
    assert len(own_turns) == turns // 2 and chatted and by_number, (own_turns, chatted, by_number)
    output = bytes(p.raw).decode(errors="replace")
    assert "refused:" not in output and "too late" not in output, "every action typed was taken"
    assert not final.autopilot_log, "the autopilot never played for the human"
    assert not list(seats.state.glob("archipelago/*")), "the game is over: nothing of it kept on this machine"


@pytest.fixture
def grace(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[float]:
    """The server's presence grace as in production (A17: 20 s)."""
    monkeypatch.setattr(cluster.api.config, "presence_grace_s", 20.0)
    yield 20.0


async def test_a17_play_killed_and_restarted_within_the_grace_finds_its_round_and_its_draft(
        seats: Seats, grace: float) -> None:
    await seats.open("archipelago", archipelago=A.ArchipelagoOptions(max_rounds=3))
    first = seats.play()
    await seats.start(first)
    await first.until(lambda: at_prompt(first, "deploy (0 so far)> "), "the deployment prompt")
    first.type("done\r")
    await first.until(lambda: at_prompt(first, "orders (0 so far)> ") and first.lines()[0].startswith(
        "Archipelago · round 1 of 3"), "the orders prompt of round 1")
    soldier = next(m for m in map(LEGEND.search, first.lines()) if m)[1]  # a Private or Sergeant, from the screen
    first.type(f"stay {soldier}\r")
    await first.until(lambda: at_prompt(first, "orders (1 so far)> "), "one order")
    first.type("bonus food\r")
    await first.until(lambda: at_prompt(first, "orders (2 so far)> "), "two orders")
    first.proc.kill()  # SIGKILL: no goodbye, the draft never sent
    assert await first.wait() == -9

    again = seats.play()  # back within the grace
    await again.shows("back in the game (round 1 of 3), where you left it; your draft is back (2 orders, not sent: "
                      "done sends it)")
    await again.until(lambda: at_prompt(again, "orders (2 so far)> "), "the prompt with the draft")
    assert again.lines()[0].startswith("Archipelago · round 1 of 3"), again.text
    view = await seats.human.view(seats.game_id)
    assert view.round == 1 and view.players[1].connected and not view.autopilot_played, "the round waited"
    again.type("show\r")
    await again.shows("bonus choice: food")
    await again.shows(f"  {soldier} (")
    await again.shows("): stays")
    again.type("done\r")
    await again.until(lambda: again.lines()[0].startswith("Archipelago · round 2 of 3"), "round 2")
    after = await seats.human.view(seats.game_id)
    assert after.round == 2 and not after.autopilot_played and not list(after.autopilot_log)
    assert after.archipelago.bonus == "food", "the restored draft's orders were the ones played (A51)"
    await again.until(lambda: at_prompt(again, "orders (0 so far)> "), "round 2's prompt")
    again.type("\x03")  # Ctrl-C: leaving, with the way back
    await again.shows("To come back: archipelago play")
    assert await again.wait() == 130
    assert f"--secret-file {seats.tmp / 'secret'}" in again.text.replace("\n", "")  # the way back
    assert seats.secret not in bytes(first.raw + again.raw).decode(errors="replace")  # and never the secret
