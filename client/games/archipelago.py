"""Archipelago for the clients: 2-8 seats (A1), ``--max-rounds`` (A67) and ``--target`` (A5) at
create; the bot submits random legal orders from the engine (the autopilot only holds: random
orders explore, fight and build); the terminal UI is :class:`client.play_archipelago.ArchipelagoUI`."""

from __future__ import annotations

import argparse
import secrets
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from archipelago.v1 import game_pb2
from client.games import Arg, RoundGame

if TYPE_CHECKING:
    from client.play_base import GameUI

MAX_ROUNDS = Arg("--max-rounds", "the game ends after this many rounds (A67; 60)", {"type": int})
TARGET = Arg("--target", "the points that win (A5; 10-18 by players)", {"type": int})


def whole(flag: str, value: int | None) -> int:
    """A flag's whole number ≥ 1, or 0 when not given (the server's default)."""
    if value is not None and value < 1:
        raise SystemExit(f"{flag}: expected a whole number ≥ 1, got {value}")
    return value or 0


class ArchipelagoClient(RoundGame):
    kind = "archipelago"
    title = "Archipelago"
    seats = (2, 8)
    seats_rule = "A1"
    commands = ("orders build up until done: move <unit> N E, goto <unit> <x> <y>, act <unit> outpost|bombard|"
                "strike|reveal, stay <unit>, build <type>, drop <n>, bonus <resource>, deploy <unit> <x> <y> "
                "(round 0); show, clear, draft, done; standing orders: standing [<unit> stay|guard|patrol|move|"
                "escort|hunt|clear], "
                "posture <hold|defensive|balanced|aggressive>; at once: bank, offer, accept, decline, withdraw; "
                "map, info, types. A unit is named by its letter on the map, which never moves to another unit.")
    create_args = (MAX_ROUNDS, TARGET)

    def create_options(self, args: argparse.Namespace) -> dict[str, Message]:
        from archipelago.v1 import archipelago_pb2

        return {"archipelago": archipelago_pb2.ArchipelagoOptions(max_rounds=whole("--max-rounds", args.max_rounds),
                                                                  target=whole("--target", args.target))}

    def orders(self, view: game_pb2.GetViewResponse) -> dict[str, Any]:
        from client.views import view_dict
        from engine import get_game

        return get_game(self.kind).random_orders(view_dict(view), secrets.randbits(32))

    def ui(self) -> GameUI:
        from client.play_archipelago import ArchipelagoUI  # (the UI module: imported when it is asked for)

        return ArchipelagoUI()

    def load_options(self) -> dict[str, Message]:
        from archipelago.v1 import archipelago_pb2

        return {"archipelago": archipelago_pb2.ArchipelagoOptions(max_rounds=6)}


CLIENT = ArchipelagoClient()
