"""Arcmage for the clients: 2-4 seats (M1), a deck per seat (``--deck``: a built-in deck's name or a
file with a Rebirth list, one "N Card Name" per line) and ``--max-rounds`` (turns before a draw, M3)
at create; a joining player's own ``--deck`` (JoinGameRequest.arcmage).  The bot acts (Act) only when
its seat is in the step's players, with the engine's autopilot (M53) on its own view; the terminal UI
is :class:`client.play_arcmage.ArcmageUI`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2
from client.games import Arg, GameClient, Move

if TYPE_CHECKING:
    from archipelago.v1 import arcmage_pb2
    from client.play_base import GameUI

DECK_HELP = ("a built-in deck (\"Brothers in Arms\", \"Gaian love for life\") or a file with a Rebirth list, "
             "one \"N Card Name\" a line (M1, M2)")
CREATE_DECK = Arg("--deck", f"your deck: {DECK_HELP}; again for the next seats (autopilot ones)",
                  {"action": "append", "metavar": "NAME|FILE"})
SEAT_DECK = Arg("--deck", f"your deck: {DECK_HELP}", {"metavar": "NAME|FILE"})
MAX_TURNS = Arg("--max-rounds", "turns after which the game is a draw (M3; 500)", {"type": int})
#: "3 Footsoldier", "3x Footsoldier", "3 x Footsoldier"
LINE = re.compile(r"(\d+)\s*[xX×]?\s+(\S.*)")


def built_in_decks() -> tuple[str, ...]:
    from engine.arcmage.carddb import BUILT_IN_DECKS

    return tuple(BUILT_IN_DECKS)


def parse_deck_list(text: str, where: str = "deck") -> list[tuple[str, int]]:
    """A Rebirth list: one "N Card Name" a line (blank lines and ``#`` comments skipped); ValueError
    naming the line that is not one.  The server checks the cards themselves (M1, M2, M24)."""
    out: list[tuple[str, int]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = LINE.fullmatch(line)
        if m is None or int(m[1]) < 1:
            raise ValueError(f"{where}:{n}: expected \"N Card Name\" (e.g. \"3 Footsoldier\"), got {raw.strip()!r}")
        out.append((m[2].strip(), int(m[1])))
    if not out:
        raise ValueError(f"{where}: no cards (one \"N Card Name\" a line)")
    return out


def deck(value: str) -> arcmage_pb2.ArcmageDeck:
    """``--deck``'s value: a built-in deck by name (any case), else a file with a Rebirth list;
    SystemExit naming the flag otherwise."""
    from archipelago.v1 import arcmage_pb2

    names = built_in_decks()
    for name in names:
        if value.strip().lower() == name.lower():
            return arcmage_pb2.ArcmageDeck(built_in=name)
    path = Path(value).expanduser()
    if not path.is_file():
        raise SystemExit(f"--deck: {value!r} is neither a built-in deck ({', '.join(names)}) nor a file")
    try:
        cards = parse_deck_list(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SystemExit(f"--deck: {exc}") from None
    return arcmage_pb2.ArcmageDeck(cards=[arcmage_pb2.ArcmageDeckEntry(card=c, count=k) for c, k in cards])


class ArcmageClient(GameClient):
    kind = "arcmage"
    title = "Arcmage"
    seats = (2, 4)
    seats_rule = "M1"
    commands = "the number of a legal action from the list, pass, card <id> (a card's face), table."
    progress = "turn"
    create_args = (CREATE_DECK, MAX_TURNS)
    seat_args = (SEAT_DECK,)

    def create_options(self, args: argparse.Namespace) -> dict[str, Message]:
        from archipelago.v1 import arcmage_pb2
        from client.games.archipelago import whole

        decks = [deck(v) for v in args.deck or ()]
        if len(decks) > args.seats:
            raise SystemExit(f"--deck: {len(decks)} decks for {args.seats} seats (one per seat at most, M1)")
        return {"arcmage": arcmage_pb2.ArcmageOptions(decks=decks, max_rounds=whole("--max-rounds", args.max_rounds))}

    def seat_options(self, args: argparse.Namespace) -> dict[str, Message]:
        from archipelago.v1 import arcmage_pb2

        if getattr(args, "deck", None) is None:
            return {}
        return {"arcmage": arcmage_pb2.ArcmageSeatOptions(deck=deck(args.deck))}

    def action(self, view: game_pb2.GetViewResponse) -> dict[str, Any]:
        """The bot's action: the engine's autopilot on the player's own view (M53); if it finds
        none, a pass when legal, else the first legal action ({} when the seat may not act)."""
        from client.views import view_dict
        from engine.arcmage import GAME

        plain = view_dict(view)
        chosen = GAME.autopilot_action(plain)
        if chosen:
            return chosen
        legal = [dict(a) for a in plain.get("legal") or ()]
        return {"pass": {}} if {"pass": {}} in legal else (legal[0] if legal else {})

    def bot_move(self, view: game_pb2.GetViewResponse) -> Move | None:
        if view.status != lobby_pb2.GAME_STATUS_RUNNING or view.you not in view.step.players:
            return None
        action = self.action(view)
        if not action:
            return None
        from archipelago.v1 import arcmage_pb2

        req = game_pb2.ActRequest(game_id=view.game_id, idempotency_key=f"bot-{view.version}", version=view.version,
                                  arcmage=json_format.ParseDict(action, arcmage_pb2.ArcmageAction()))
        return Move("Act", req, game_pb2.ActResponse, f"turn {view.round}: {next(iter(action))}")

    def ui(self) -> GameUI:
        from client.play_arcmage import ArcmageUI  # (the UI module: imported when it is asked for)

        return ArcmageUI()

    def load_options(self) -> dict[str, Message]:
        from archipelago.v1 import arcmage_pb2

        return {"arcmage": arcmage_pb2.ArcmageOptions(max_rounds=10)}


CLIENT = ArcmageClient()
