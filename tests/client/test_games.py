"""The clients' game registry (client.games): one module per game kind, the `archipelago` command's
per-game options (Arcmage's --deck and --seats, M1, M2), and the bot's moves — an Arcmage bot acts
with the autopilot (M53) only when its seat is in the step, waiting on Watch updates."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from google.protobuf import json_format

import client.grpc_client
from archipelago.v1 import arcmage_pb2 as C
from archipelago.v1 import game_pb2, lobby_pb2
from client import cli
from client.bot import choose_orders, describe_outcome, play_seat
from client.cli import build_parser, game_options, seat_options
from client.games import GAMES, Arg, GameClient, game_client, merged_args
from client.games.arcmage import deck, parse_deck_list
from engine import GAMES as ENGINES
from engine.arcmage import GAME
from engine.arcmage.carddb import DECKS, DEFS
from tests.client.arcmage_table import EngineGame, advance, new_state, response

ROOT = Path(__file__).resolve().parents[2]
SHARED = ["client/cli.py", "client/bot.py", "client/play.py", "client/views.py", "client/base.py",
          "loadtest/locustfile.py"]


# ---------------------------------------------------------------------------------------- the registry
def test_every_game_of_the_engine_has_its_client_module() -> None:
    assert set(GAMES) == set(ENGINES)
    for kind in GAMES:
        game = game_client(kind)
        assert game.kind == kind and game.title and game.seats[0] <= game.seats[1]
        assert game.ui() is not None  # a terminal UI for every game


def test_an_unknown_kind_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(SystemExit, match="unknown game 'chess': one of salvo, archipelago, arcmage"):
        game_client("chess")


def test_the_shared_client_code_names_no_game_kind() -> None:
    """No `if kind == "salvo"` left: the shared modules ask the game's module (client.games)."""
    for path in SHARED:
        text = (ROOT / path).read_text(encoding="utf-8").replace('prog="archipelago"', "")  # (the command's name)
        for kind in GAMES:
            assert not re.search(rf"""["']{kind}["']""", text), (path, kind)


def test_two_games_may_share_a_flag_only_declared_alike() -> None:
    class A(GameClient):
        kind, title = "a", "A"
        create_args = (Arg("--rounds", "a's", {"type": int}),)

    class B(GameClient):
        kind, title = "b", "B"
        create_args = (Arg("--rounds", "b's", {"type": float}),)

    with pytest.raises(TypeError, match="--rounds: a and b declare it differently"):
        merged_args("create_args", [A(), B()])
    flag, takers = merged_args("create_args", [A(), A()])["--rounds"]
    assert flag.dest == "rounds" and len(takers) == 2


# ---------------------------------------------------------------------------------------- the command
def brothers_list() -> str:
    return "".join(f"{n} {DEFS[k]['name']}\n" for k, n in DECKS["Brothers in Arms"].items())


def test_m1_m2_create_arcmage_takes_seats_decks_by_name_or_file_and_max_rounds(tmp_path: Path) -> None:
    listing = tmp_path / "deck.txt"
    listing.write_text("# my deck\n\n" + brothers_list(), encoding="utf-8")
    args = build_parser().parse_args(["create", "arcmage", "--seats", "3", "--deck", "GAIAN LOVE FOR LIFE",
                                      "--deck", str(listing), "--max-rounds", "30"])
    options = game_options(args)
    entries = [C.ArcmageDeckEntry(card=DEFS[k]["name"], count=n) for k, n in DECKS["Brothers in Arms"].items()]
    assert options == {"arcmage": C.ArcmageOptions(
        decks=[C.ArcmageDeck(built_in="Gaian love for life"), C.ArcmageDeck(cards=entries)], max_rounds=30)}
    assert game_options(build_parser().parse_args(["create", "arcmage"])) == {"arcmage": C.ArcmageOptions()}


@pytest.mark.parametrize(("argv", "error"), [
    (["create", "arcmage", "--seats", "5"], r"--seats: an Arcmage game has 2-4 seats \(M1\), got 5"),
    (["create", "salvo", "--seats", "3"], r"--seats: a Salvo game has 2 seats \(S1\), got 3"),
    (["create", "arcmage", "--target", "5"], "--target: an Archipelago option, not one of arcmage"),
    (["create", "salvo", "--max-rounds", "5"], "--max-rounds: an Archipelago or Arcmage option, not one of salvo"),
    (["create", "archipelago", "--deck", "Brothers in Arms"], "--deck: an Arcmage option, not one of archipelago"),
    (["create", "arcmage", "--max-rounds", "0"], "--max-rounds: expected a whole number ≥ 1"),
    (["create", "arcmage", "--deck", "Brothers in Arms", "--deck", "Brothers in Arms", "--deck",
      "Brothers in Arms"], r"--deck: 3 decks for 2 seats \(one per seat at most, M1\)"),
    (["create", "arcmage", "--deck", "No Such Deck"],
     "--deck: 'No Such Deck' is neither a built-in deck \\(Brothers in Arms, Gaian love for life\\) nor a file"),
])
def test_m1_options_that_do_not_fit_are_refused_naming_them(argv: list[str], error: str) -> None:
    with pytest.raises(SystemExit, match=error):
        game_options(build_parser().parse_args(argv))


def test_m2_a_rebirth_list_line_that_is_not_n_card_name_is_named_with_its_line(tmp_path: Path) -> None:
    assert parse_deck_list("3 Footsoldier\n2x Mentor  # the teachers\n1 × Borg's Keep\n") == [
        ("Footsoldier", 3), ("Mentor", 2), ("Borg's Keep", 1)]
    bad = tmp_path / "bad.txt"
    bad.write_text("3 Footsoldier\nFootsoldier\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"--deck: .*bad.txt:2: expected \"N Card Name\".*got 'Footsoldier'"):
        deck(str(bad))
    with pytest.raises(ValueError, match="no cards"):
        parse_deck_list("# nothing\n")
    with pytest.raises(ValueError, match=":1: expected"):
        parse_deck_list("0 Footsoldier")


def test_m2_join_bot_and_play_take_the_players_own_deck(tmp_path: Path) -> None:
    listing = tmp_path / "deck.txt"
    listing.write_text(brothers_list(), encoding="utf-8")
    for command in ("join", "bot", "play"):
        args = build_parser().parse_args([command, "ABCDEF", "--deck", str(listing)])
        [(member, options)] = seat_options(args).items()
        assert member == "arcmage" and isinstance(options, C.ArcmageSeatOptions)
        assert sum(e.count for e in options.deck.cards) == 45
        assert seat_options(build_parser().parse_args([command, "ABCDEF"])) == {}
    args = build_parser().parse_args(["bot", "ABCDEF", "--deck", "brothers in arms"])
    assert seat_options(args) == {"arcmage": C.ArcmageSeatOptions(deck=C.ArcmageDeck(built_in="Brothers in Arms"))}


class Lobby:
    """A client that records CreateGame's and JoinGame's arguments."""

    calls: ClassVar[list[tuple[str, Any]]] = []

    def __init__(self, address: str, secret: str | None = None) -> None:
        pass

    async def __aenter__(self) -> Lobby:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        pass

    async def create(self, game: str, **kw: Any) -> lobby_pb2.CreateGameResponse:
        self.calls.append(("create", (game, kw)))
        return lobby_pb2.CreateGameResponse(game_id="g1", code="ABCDEF", invite_link="http://x/join/ABCDEF", secret="s")

    async def join(self, code: str, nickname: str, request_id: str = "", **options: Any) -> lobby_pb2.JoinGameResponse:
        self.calls.append(("join", (code, nickname, options)))
        return lobby_pb2.JoinGameResponse(game_id="g1", seat=1, secret="s" * 32)


def test_m1_create_and_join_send_the_arcmage_options(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(client.grpc_client, "Client", Lobby)
    Lobby.calls.clear()
    assert cli.main(["create", "arcmage", "--seats", "4", "--deck", "Brothers in Arms", "--server", "x:1"]) == 0
    assert cli.main(["join", "abcdef", "--nickname", "guest", "--deck", "Gaian love for life", "--server", "x:1"]) == 0
    (_, (game, kw)), (_, (code, nick, options)) = Lobby.calls
    assert game == "arcmage" and kw["seats"] == 4
    assert kw["arcmage"] == C.ArcmageOptions(decks=[C.ArcmageDeck(built_in="Brothers in Arms")])
    assert (code, nick) == ("abcdef", "guest")
    assert options == {"arcmage": C.ArcmageSeatOptions(deck=C.ArcmageDeck(built_in="Gaian love for life"))}
    out = capsys.readouterr().out
    assert "code: ABCDEF" in out and "seat: 1" in out and f"secret: {'s' * 32}" in out


# ---------------------------------------------------------------------------------------- the bot's moves
def test_m53_the_arcmage_bot_acts_with_the_autopilot_only_when_its_seat_is_in_the_step() -> None:
    state = advance(new_state(seed=4), lambda s: s.data["turn"] >= 2)
    seat = GAME.step(state).players[0]
    move = game_client("arcmage").bot_move(response(state, seat))
    assert move is not None and move.rpc == "Act" and move.response is game_pb2.ActResponse
    assert isinstance(move.request, game_pb2.ActRequest)
    assert move.request.version == state.version and move.request.idempotency_key == f"bot-{state.version}"
    wanted = GAME.autopilot_action(GAME.view(state, seat))
    assert move.request.arcmage == json_format.ParseDict(wanted, C.ArcmageAction())
    assert move.json()["arcmage"] == json_format.MessageToDict(move.request.arcmage, preserving_proto_field_name=True)
    other = 1 - seat
    assert other not in GAME.step(state).players
    assert game_client("arcmage").bot_move(response(state, other)) is None
    over = advance(state, lambda s: False)
    assert game_client("arcmage").bot_move(response(over, 0)) is None


def test_round_games_submit_their_orders_when_expected() -> None:
    view = game_pb2.GetViewResponse(game_id="g1", game="salvo", version=7, status=lobby_pb2.GAME_STATUS_RUNNING,
                                    round=0, expected=True)
    view.salvo.phase = "placement"
    move = game_client("salvo").bot_move(view)
    assert move is not None and move.rpc == "SubmitOrders"
    assert isinstance(move.request, game_pb2.SubmitOrdersRequest)
    assert move.request.WhichOneof("orders") == "salvo" and move.request.version == 7
    assert json_format.MessageToDict(move.request.salvo, preserving_proto_field_name=True) == choose_orders(view)
    view.expected = False
    assert game_client("salvo").bot_move(view) is None
    with pytest.raises(ValueError, match="arcmage has no rounds of orders"):
        choose_orders(game_pb2.GetViewResponse(game="arcmage"))


@pytest.mark.parametrize("players", [2, 4])
async def test_m53_a_bot_plays_an_arcmage_game_to_its_end_acting_only_in_its_steps(players: int) -> None:
    table = EngineGame(new_state(players, seed=players, max_rounds=10), you=0)
    async with asyncio.timeout(60):
        table.start_others()  # (seat 0 may not be first)
        final = await play_seat(table, "g1", log=lambda m: None)
    assert final.status == lobby_pb2.GAME_STATUS_OVER and final.arcmage.outcome.reason
    assert table.out_of_turn == 0 and len(table.acts) > 10
    steps = [u for u in table.updates if u.kind == "step"]
    mine = [u for u in steps if 0 in json_format.MessageToDict(u.data).get("players", [])]
    assert len(steps) > len(mine)  # the others' steps: the bot did not read the view for them
    assert table.views <= 2 * len(mine) + 3, (table.views, len(mine), len(steps))
    line = describe_outcome(final)
    assert line.startswith(f"game over after turn {final.round}: ")
