"""`archipelago create archipelago`: 2-8 seats (A1), --max-rounds (A67) and --target (A5) as ArchipelagoOptions."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import client.grpc_client
from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import lobby_pb2
from client import cli
from client.cli import build_parser, game_options


def test_a1_create_takes_archipelago_with_its_options() -> None:
    args = build_parser().parse_args(["create", "archipelago", "--seats", "4", "--max-rounds", "30", "--target", "12"])
    assert (args.game, args.seats, args.max_rounds, args.target) == ("archipelago", 4, 30, 12)
    assert game_options(args) == {"archipelago": A.ArchipelagoOptions(max_rounds=30, target=12)}
    defaults = build_parser().parse_args(["create", "archipelago"])
    assert game_options(defaults) == {"archipelago": A.ArchipelagoOptions()}  # 0: the server's defaults (60, A5)
    assert game_options(build_parser().parse_args(["create", "salvo"])) == {}


@pytest.mark.parametrize(("argv", "error"), [
    (["create", "archipelago", "--seats", "9"], r"--seats: an Archipelago game has 2-8 seats \(A1\), got 9"),
    (["create", "archipelago", "--seats", "1"], "got 1"),
    (["create", "archipelago", "--max-rounds", "0"], "--max-rounds: expected a whole number ≥ 1"),
    (["create", "archipelago", "--target", "-3"], "--target: expected a whole number ≥ 1"),
    (["create", "salvo", "--target", "5"], "--target: an Archipelago option, not one of salvo"),
])
def test_a1_options_that_do_not_fit_are_refused_naming_them(argv: list[str], error: str) -> None:
    with pytest.raises(SystemExit, match=error):
        game_options(build_parser().parse_args(argv))


class Lobby:
    """A client that records CreateGame's arguments."""

    made: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def __init__(self, address: str, secret: str | None = None) -> None:
        pass

    async def __aenter__(self) -> Lobby:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        pass

    async def create(self, game: str, **kw: Any) -> lobby_pb2.CreateGameResponse:
        self.made.append((game, kw))
        return lobby_pb2.CreateGameResponse(game_id="g1", code="ABCDEF", invite_link="http://x/join/ABCDEF",
                                            secret="s")


def test_a1_create_sends_the_seats_and_archipelago_options(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(client.grpc_client, "Client", Lobby)
    Lobby.made.clear()
    assert cli.main(["create", "archipelago", "--seats", "3", "--target", "11", "--server", "127.0.0.1:1"]) == 0
    [(game, kw)] = Lobby.made
    assert game == "archipelago" and kw["seats"] == 3
    assert kw["archipelago"] == A.ArchipelagoOptions(target=11)
    assert "code: ABCDEF" in capsys.readouterr().out
