"""What the clients (the `archipelago` command, the bot, the terminal player, the load test) know of
each game kind, one module per game, registered in :data:`GAMES`: the shared code asks the game's
:class:`GameClient` (``game_client(view.game)``) and has no branch on the kind.

A game module offers: its options at create (command-line flags -> the ``CreateGameRequest`` member
named after the kind) and a joining player's own choices (-> ``JoinGameRequest``'s member), the bot's
next request from a view (:meth:`GameClient.bot_move`: SubmitOrders for a round game, Act for a
turn game), its terminal UI, and the short games a load test creates."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2

if TYPE_CHECKING:
    from client.play_base import GameUI

#: game kind -> the module whose ``CLIENT`` is its :class:`GameClient`
GAMES: dict[str, str] = {
    "salvo": "client.games.salvo",
    "archipelago": "client.games.archipelago",
    "arcmage": "client.games.arcmage",
}


@dataclass(frozen=True)
class Arg:
    """A command-line flag of a game (``create`` or the commands that join: join, bot, play).  Two
    games may share a flag (``--max-rounds``): the same ``kwargs``, each with its own help."""

    flag: str
    help: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Move:
    """One request of the bot: ``rpc`` ("SubmitOrders" or "Act", of the Game service) with its
    ``request`` (game id, version and idempotency key filled in) and ``response`` type; ``label``
    says what it is for a log line ("round 3: submitted")."""

    rpc: str
    request: Message
    response: type[Message]
    label: str

    def json(self) -> dict[str, Any]:
        """The request as the JSON door takes it."""
        return json_format.MessageToDict(self.request, preserving_proto_field_name=True)


class GameClient:
    """One game kind as the clients see it; a game module subclasses it and sets ``CLIENT``."""

    kind = ""
    title = ""  # the game's name in messages ("Archipelago")
    seats = (2, 2)  # the fewest and most seats of a game
    seats_rule = ""  # the rule that says so ("A1")
    progress = "round"  # what GetViewResponse.round counts ("round", "turn")
    commands = ""  # the in-game commands of `archipelago play`, in one sentence (for `play --help`)
    create_args: tuple[Arg, ...] = ()  # flags of `archipelago create <kind>`
    seat_args: tuple[Arg, ...] = ()  # a joining player's own choices (join, bot, play)

    def create_options(self, args: argparse.Namespace) -> dict[str, Message]:
        """CreateGameRequest's members for the parsed ``create_args`` (SystemExit naming a bad flag)."""
        return {}

    def seat_options(self, args: argparse.Namespace) -> dict[str, Message]:
        """JoinGameRequest's members for the parsed ``seat_args`` ({} when none is given)."""
        return {}

    def bot_move(self, view: game_pb2.GetViewResponse) -> Move | None:
        """The bot's next request from its own view of a running game; None: nothing to do now (it
        waits for the next update)."""
        return None

    def ui(self) -> GameUI:
        """The terminal UI (`archipelago play`)."""
        raise SystemExit(f"archipelago play: no terminal client for {self.title or self.kind} games")

    def load_options(self) -> dict[str, Message]:
        """CreateGameRequest's members of a load test's games (short ones)."""
        return {}

    def game_over_line(self, view: game_pb2.GetViewResponse) -> str:
        """'game over after round 12' (or turn)."""
        return f"game over after {self.progress} {view.round}"


class RoundGame(GameClient):
    """A game of simultaneous rounds: every expected player submits orders (SubmitOrders)."""

    def orders(self, view: game_pb2.GetViewResponse) -> dict[str, Any]:
        """The bot's orders for this round (plain data, the orders message's fields)."""
        return {}

    def bot_move(self, view: game_pb2.GetViewResponse) -> Move | None:
        if view.status != lobby_pb2.GAME_STATUS_RUNNING or not view.expected:
            return None
        from client.views import orders_message

        req = game_pb2.SubmitOrdersRequest(game_id=view.game_id, version=view.version,
                                           idempotency_key=f"bot-{view.round}")
        getattr(req, self.kind).CopyFrom(orders_message(self.kind, self.orders(view)))
        return Move("SubmitOrders", req, game_pb2.SubmitOrdersResponse, f"{self.progress} {view.round}: submitted")


def in_game_help() -> str:
    """The in-game commands of `archipelago play`, every game's (for ``play --help``)."""
    games = " ".join(f"{g.title}: {g.commands}" for g in all_clients() if g.commands)
    return ("In the game (every game): help lists the commands; quit (or Ctrl-D, Ctrl-C) leaves and says how to "
            f"come back; chat <text> talks to everyone; Tab completes commands and names. {games}")


def a_or_an(word: str) -> str:
    """'an Archipelago', 'a Salvo'."""
    return f"{'an' if word[:1].upper() in 'AEIOU' else 'a'} {word}"


def game_client(kind: str) -> GameClient:
    """The client side of a game kind; SystemExit naming the kinds for an unknown one."""
    if kind not in GAMES:
        raise SystemExit(f"unknown game {kind or '(none)'!r}: one of {', '.join(GAMES)}")
    client: GameClient = importlib.import_module(GAMES[kind]).CLIENT
    return client


def all_clients() -> list[GameClient]:
    return [game_client(k) for k in GAMES]


def merged_args(which: str, games: Iterable[GameClient] | None = None) -> dict[str, tuple[Arg, list[GameClient]]]:
    """Every game's flags of ``which`` ("create_args" or "seat_args") by flag: (the first
    declaration, the games that take it)."""
    out: dict[str, tuple[Arg, list[GameClient]]] = {}
    for g in all_clients() if games is None else games:
        for a in getattr(g, which):
            if a.flag in out:
                first, takers = out[a.flag]
                if dict(first.kwargs) != dict(a.kwargs):
                    raise TypeError(f"{a.flag}: {takers[0].kind} and {g.kind} declare it differently")
                takers.append(g)
            else:
                out[a.flag] = (a, [g])
    return out


def add_args(parser: argparse.ArgumentParser, which: str) -> None:
    """Add every game's flags of ``which`` to ``parser`` (default None: "not given"), each help
    naming the games that take it."""
    for flag, (arg, takers) in merged_args(which).items():
        helps = {g.title: next(a.help for a in getattr(g, which) if a.flag == flag) for g in takers}
        parser.add_argument(flag, default=None, help="; ".join(f"{t}: {h}" for t, h in helps.items()),
                            **dict(arg.kwargs))


def refuse_foreign_args(args: argparse.Namespace, which: str, game: GameClient) -> None:
    """SystemExit for a flag given that ``game`` does not take ("--target: an Archipelago option,
    not one of salvo")."""
    for flag, (arg, takers) in merged_args(which).items():
        if game in takers or getattr(args, arg.dest, None) is None:
            continue
        raise SystemExit(f"{flag}: {a_or_an(' or '.join(g.title for g in takers))} option, not one of {game.kind}")


__all__ = ["GAMES", "Arg", "GameClient", "Move", "RoundGame", "a_or_an", "add_args", "all_clients", "game_client",
           "in_game_help", "merged_args", "refuse_foreign_args"]
