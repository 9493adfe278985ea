"""The terminal client's commands added for issue 22, against a scripted game: standing orders (A70-A74),
dropping one build, `stay` in round 0 (A15) and with standing orders (A70), quitting with the way back,
errors in the player's words (no internal id), completion, the draft kept on this machine and restored
after a restart, the Watch stream resumed from the last seq, and what the autopilot played."""

from __future__ import annotations

import asyncio
import json
import stat

import pytest

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2
from client.draft_store import DraftStore
from client.errors import ApiError
from client.play import play
from client.play_archipelago import (
    ArchipelagoUI,
    Draft,
    DropCmd,
    StandingCmd,
    StayCmd,
    in_player_words,
    parse_command,
)
from tests.client.test_play_archipelago import ArchipelagoGame, a_view, ctx, opened
from tests.client.test_play_loop import GAME, WAIT_S, Keyboard, Transcript


def test_a72_standing_orders_are_parsed_for_one_unit_and_cleared() -> None:
    c = ctx()
    assert parse_command("standing a guard 4 3", c) == StandingCmd(
        unit="aa00000001", order=A.StandingUnitOrder(unit="aa00000001", order="guard", tile=A.Tile(x=4, y=3)))
    assert parse_command("standing a escort b", c) == StandingCmd(
        unit="aa00000001", order=A.StandingUnitOrder(unit="aa00000001", order="escort", target="aa00000002"))
    patrol = parse_command("standing f patrol 1,1 6,4", c)
    assert isinstance(patrol, StandingCmd) and patrol.order is not None
    assert [(t.x, t.y) for t in patrol.order.waypoints] == [(1, 1), (6, 4)]
    assert parse_command("standing a hunt A", c) == StandingCmd(
        unit="aa00000001", order=A.StandingUnitOrder(unit="aa00000001", order="hunt", target="ee00000001"))
    assert parse_command("standing a clear", c) == StandingCmd(unit="aa00000001")
    assert parse_command("posture aggressive", c) == StandingCmd(posture="aggressive")
    with pytest.raises(ValueError, match="2-10 waypoints"):
        parse_command("standing f patrol 1,1", c)
    with pytest.raises(ValueError, match="not a standing order"):
        parse_command("standing a dance", c)


def test_a42_one_build_is_dropped_by_its_number() -> None:
    c = ctx()
    draft = Draft()
    for line in ("build dvora", "build landmine 3 3", "build fighter"):
        cmd = parse_command(line, c)
        assert not isinstance(cmd, StandingCmd)
        draft.apply(cmd, c)
    assert draft.apply(DropCmd(2), c) == "build #2 dropped: Land mine (landmine) at (3,3) (the others are now #1-#2)"
    assert [b.type for b in draft.builds] == ["dvora", "fighter"]
    with pytest.raises(ValueError, match=r"no build #3 \(builds #1-#2"):
        draft.apply(DropCmd(3), c)
    assert parse_command("drop #1", c) == DropCmd(1)


def test_a15_stay_in_round_0_drops_the_deployment() -> None:
    c = ctx(0)
    draft = Draft()
    draft.apply(parse_command("deploy a 4 2", c), c)
    assert len(draft) == 1
    assert draft.apply(StayCmd("aa00000001"), c) == ("a (Private at (3,1)): deployment dropped — it starts where "
                                                     "the default layout puts it (A15)")
    assert len(draft) == 0 and draft.orders() == A.ArchipelagoOrders()
    assert "had no deployment" in draft.apply(StayCmd("aa00000001"), c)


def test_a18_a24_a_land_unit_sent_to_sea_gets_a_plain_reason() -> None:
    c = ctx()
    with pytest.raises(ValueError, match=r"a \(Private at \(3,1\)\) walks on land only, and \(3,0\) is sea"):
        parse_command("move a N", c)
    with pytest.raises(ValueError, match=r"\(0,0\) is unexplored"):
        parse_command("goto a 0 0", c)
    with pytest.raises(ValueError, match="sails on the sea only, and \\(3,2\\) is land"):
        parse_command("goto b 3 2", c)


def test_errors_name_the_players_units_and_tiles_never_an_internal_id() -> None:
    c = ctx()
    sent = A.ArchipelagoOrders(units=[A.UnitOrder(unit="aa00000001", path=["E"]),
                                      A.UnitOrder(unit="aa00000003", to=A.Tile(x=2, y=1))])
    err = ApiError("FAILED_PRECONDITION", "order/illegal", "units[1].to", "A24",
                   "unit aa00000003: boarding aa00000002 needs it to have no move order", 422)
    text = in_player_words(err, sent, c)
    assert text == ("refused: your order for c (Sergeant at (1,2)): go to (2,1): unit c (Sergeant at (1,2)): "
                    "boarding b (Dvora at (1,2)) needs it to have no move order (rule A24: /rules/archipelago#A24)")
    assert "aa0000000" not in text


def test_completion_offers_commands_then_unit_letters_then_what_follows() -> None:
    ui = ArchipelagoUI()
    view = a_view()
    ui.render(view)
    assert {"move", "standing", "drop", "quit", "done"} <= set(ui.words(view, []))
    assert list(ui.words(view, ["move"])) == ["a", "b", "c", "d", "e", "f"]
    assert set(ui.words(view, ["standing", "a"])) >= {"guard", "patrol", "clear"}
    assert list(ui.words(view, ["act", "f", "strike"])) == ["A", "B"]
    assert "dvora" in ui.words(view, ["build"])


async def test_a70_standing_orders_set_and_cleared_at_the_prompt_and_quit_says_how_to_come_back() -> None:
    game = ArchipelagoGame()
    await opened(game, 1)
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen, secret_file="seat.txt"))
    at = await screen.expect("orders (0 so far)> ")
    keys.typed.put_nowait("standing a guard 4 3")
    at = await screen.expect("standing order: a (Private at (3,1)): guard (4,3)", at)
    keys.typed.put_nowait("posture balanced")
    at = await screen.expect("posture: balanced (A71)", at)
    keys.typed.put_nowait("standing")
    at = await screen.expect("standing orders: posture balanced (A71)\n  a (Private at (3,1)): guard (4,3)", at)
    keys.typed.put_nowait("standing a clear")
    at = await screen.expect("standing order of a (Private at (3,1)) cleared", at)
    assert [list(s.units) for s in game.standing] == [
        [A.StandingUnitOrder(unit="aa00000001", order="guard", tile=A.Tile(x=4, y=3))],
        [A.StandingUnitOrder(unit="aa00000001", order="guard", tile=A.Tile(x=4, y=3))], []]
    assert game.standing[-1].posture == "balanced"
    keys.typed.put_nowait("quit")
    async with asyncio.timeout(WAIT_S):
        assert await player == 0
    text = screen.getvalue()[at:]
    assert "you left. Your seat stays yours" in text
    assert "To come back: archipelago play ABCDEF --secret-file seat.txt" in text
    assert game.submitted == [] and game.open_streams == 0


async def test_the_draft_is_kept_on_this_machine_and_restored_after_a_restart(private_state: object) -> None:
    game = ArchipelagoGame()
    await opened(game, 1)
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("orders (0 so far)> ")
    keys.typed.put_nowait("move a S")
    keys.typed.put_nowait("build dvora")
    at = await screen.expect("orders (2 so far)> ", at)
    player.cancel()  # the program dies: nothing was sent
    with pytest.raises(asyncio.CancelledError):
        await player
    assert game.submitted == []
    store = DraftStore(GAME)
    assert store.loaded and store.seq > 0
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600  # readable by its owner only
    assert json.loads(store.path.read_text())["drafts"]["1"]["orders"] == {
        "units": [{"unit": "aa00000001", "path": ["S"]}], "builds": [{"type": "dvora"}]}

    await game.push("chat", 1, seat=1)  # meanwhile
    game.updates[-1].chat.CopyFrom(game_pb2.ChatMessage(seat=1, text="still there?"))
    game.current.seq = len(game.updates)
    watched = len(game.watches)
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("back in the game (round 1 of 60), where you left it; your draft is back (2 orders, "
                             "not sent: done sends it)")
    at = await screen.expect("[chat] seat 1 (bob) → all: still there?", at)  # the stream resumed: missed news
    assert game.watches[watched] == store.seq  # from the last seq seen
    keys.typed.put_nowait("done")
    at = await screen.expect("orders in for round 1 (2 orders)", at)
    assert list(game.submitted[0].archipelago.units) == [A.UnitOrder(unit="aa00000001", path=["S"])]
    assert [b.type for b in game.submitted[0].archipelago.builds] == ["dvora"]
    keys.typed.put_nowait(None)
    player.cancel()
    with pytest.raises(asyncio.CancelledError):
        await player


async def test_what_the_autopilot_played_is_told_once() -> None:
    game = ArchipelagoGame()
    await opened(game, 2)
    game.current.autopilot_log.add(round=1, source="autopilot", archipelago=A.ArchipelagoOrders(
        units=[A.UnitOrder(unit="aa00000001", path=["E"])], bonus="wood"))
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("round 1: the autopilot played for you: a (Private at (3,1)): move E; bonus wood")
    await screen.expect("orders (0 so far)> ", at)
    keys.typed.put_nowait(None)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    assert DraftStore(GAME).reported(1)


async def test_s5_in_salvo_help_and_quit_are_commands_not_shots() -> None:
    from tests.client.test_play_loop import ScriptedGame, start_round_1

    game = ScriptedGame()
    await start_round_1(game)
    game.current.code = "ABCDEF"
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("fire up to 7 shots (e.g. A1 B2): ")
    keys.typed.put_nowait("help")
    at = await screen.expect("Firing: the squares to fire at", at)
    at = await screen.expect("fire up to 7 shots (e.g. A1 B2): ", at)
    keys.typed.put_nowait("quit")
    async with asyncio.timeout(WAIT_S):
        assert await player == 0
    assert game.submitted == []  # neither was fired
    text = screen.getvalue()[at:]
    assert "you left. Your seat stays yours" in text and "archipelago play ABCDEF" in text
    assert "secret" not in text.replace("ARCHIPELAGO_SECRET=<your secret>", "")  # never the secret itself


def test_play_help_documents_the_in_game_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from client.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("quit (or Ctrl-D, Ctrl-C) leaves and says how to come back", "Tab completes",
                  "Salvo: round 0: random", "standing [<unit> stay|guard|patrol|move|escort|hunt|clear]",
                  "drop <n>", "Arcmage: the number of a legal action"):
        assert words in text, words
