"""Salvo for the clients: two seats (S1), no options; the bot submits the engine's autopilot orders
(it hunts ships); the terminal UI is :class:`client.play_salvo.SalvoUI`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from archipelago.v1 import game_pb2
from client.games import RoundGame

if TYPE_CHECKING:
    from client.play_base import GameUI


class SalvoClient(RoundGame):
    kind = "salvo"
    title = "Salvo"
    seats = (2, 2)
    seats_rule = "S1"
    commands = ("round 0: random, or <ship> <bow square> h|v for each ship (battleship A1 h, cruiser C3 v, …); "
                "then the squares to fire at (A1 B2 J10).")

    def orders(self, view: game_pb2.GetViewResponse) -> dict[str, Any]:
        from client.views import view_dict
        from engine import get_game

        return get_game(self.kind).autopilot(view_dict(view), None)

    def ui(self) -> GameUI:
        from client.play_salvo import SalvoUI

        return SalvoUI()


CLIENT = SalvoClient()
