"""The terminal screens fit a 120×40 terminal (with the toolbar's two lines and the prompt): at most 36
lines of at most 120 characters, the title first and the map's ruler above and below it — for real
engine views of every board size (A6 boards of 2-8 players); the help texts fit too.  Unit labels are
stable across rounds (a letter never moves to another unit)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client import play_archipelago, play_arcmage, play_salvo
from client.play_archipelago import Marks, screen
from engine import get_game
from engine.base import Event

WIDTH, LINES = 120, 36


def engine_view(players: int, rounds: int = 3, seat: int = 0) -> game_pb2.GetViewResponse:
    game = get_game("archipelago")
    state = game.new_game(game.normalize_config({"players": players}), 11)
    events: list[Event] = []
    for r in range(rounds):
        state, events = game.resolve(state, {p: game.random_orders(game.view(state, p), r * 7 + p)
                                             for p in range(players)})
    view = game_pb2.GetViewResponse(game="archipelago", you=seat, seats=players, round=state.round, code="ABCDEF",
                                    status=lobby_pb2.GAME_STATUS_RUNNING)
    view.players.extend(game_pb2.PlayerInfo(seat=s, nickname="n" * 24) for s in range(players))
    json_format.ParseDict(game.view(state, seat, events), view.archipelago)
    return view


@pytest.mark.parametrize("players", [2, 3, 5, 8])
def test_a6_the_archipelago_screen_fits_120x40_with_its_title_and_ruler(players: int) -> None:
    view = engine_view(players)
    text = screen(view, Marks.of(view.archipelago, {}))
    lines = text.split("\n")
    assert len(lines) <= LINES, text
    assert max(len(x) for x in lines) <= WIDTH, text
    assert lines[0].startswith(f"Archipelago · round {view.round} of ")
    width = view.archipelago.width
    ruler = f"    {''.join(str(x % 10) for x in range(width))}"
    assert lines[2].startswith(ruler)
    assert sum(1 for x in lines if x.startswith(ruler)) == 2, text  # the ruler above and below the map
    shown = [x for x in lines[3:] if x[:4].strip().isdigit()]
    assert len(shown) == min(view.archipelago.height, play_archipelago.MAP_ROWS)


def test_a6_the_help_texts_and_the_salvo_screen_fit_120_columns() -> None:
    for text in (play_archipelago.HELP, play_salvo.SALVO_HELP, play_arcmage.HELP, play_archipelago.KEY):
        assert max(len(x) for x in text.split("\n")) <= WIDTH, text
    from engine import get_game as engine

    g = engine("salvo")
    state = g.new_game(g.normalize_config({"players": 2}), 3)
    view = game_pb2.GetViewResponse(game="salvo", you=0, round=0, code="ABCDEF")
    json_format.ParseDict(g.view(state, 0), view.salvo)
    lines = play_salvo.render(view).split("\n")
    assert lines[0] == "Salvo · round 0 · you are seat 0 · game ABCDEF" and len(lines) <= LINES
    assert max(len(x) for x in lines) <= WIDTH


def test_unit_labels_never_move_to_another_unit_across_rounds() -> None:
    book: dict[str, str] = {}
    r1 = A.ArchipelagoView(units=[A.OwnUnit(id=f"u{k}", type="rank1") for k in range(4)])
    first = Marks.of(r1, book)
    assert first.own == {"a": "u0", "b": "u1", "c": "u2", "d": "u3"}
    # round 2: u1 died, two units were built (they come first in the view's order)
    r2 = A.ArchipelagoView(units=[A.OwnUnit(id="n1", type="rank1"), A.OwnUnit(id="u0", type="rank1"),
                                  A.OwnUnit(id="n2", type="rank1"), A.OwnUnit(id="u2", type="rank1"),
                                  A.OwnUnit(id="u3", type="rank1")])
    second = Marks.of(r2, book)
    assert {second.own[k] for k in "acd"} == {"u0", "u2", "u3"} and second.own["a"] == "u0"
    assert "b" not in second.own  # the dead unit's letter is not given to another unit
    assert second.own_label["n1"] == "e" and second.own_label["n2"] == "f"


def test_s6_the_salvo_screen_says_which_of_your_ships_were_hit_or_sunk() -> None:
    from archipelago.v1 import salvo_pb2

    ship, shot = salvo_pb2.SalvoShip, salvo_pb2.SalvoShot
    fleet = [ship(name="battleship", size=5, squares=["A1", "B1", "C1", "D1", "E1"], hits=["A1", "B1"]),
             ship(name="destroyer", size=2, squares=["A3", "A4"], hits=["A3", "A4"], sunk=True)]
    incoming = [shot(square="A1", round=1, hit=True), shot(square="J9", round=1, hit=False),
                shot(square="B1", round=2, hit=True), shot(square="A3", round=2, hit=True),
                shot(square="A4", round=2, hit=True)]
    view = game_pb2.GetViewResponse(game="salvo", you=1, round=3, salvo=salvo_pb2.SalvoView(
        phase="firing", round=3, you=1, fleet=fleet, incoming=incoming))
    text = play_salvo.render(view)
    assert "enemy round 1: hit your battleship\n" in text
    assert "enemy round 2: hit your battleship, destroyer ×2\n" in text
    assert text.endswith("your ships: battleship hit 2/5, destroyer sunk")
