"""``archipelago replay FILE``: a finished game's export (ExportGame, docs/replay-format.md) replayed by
the engine alone, on this machine — no server, no Redis, no Ray — and its final state hash printed.

The file is the ExportGame answer as JSON (``{"format", "records", "state_hash"}``, as the JSON door
answers it) or JSON lines (one record a line, optionally after a ``{"format", "state_hash"}`` line);
``-`` reads standard input. When the file says the state hash the replay must reach, the command says
whether it did (exit 1 when not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "replay a finished game's export with the engine alone and print its final state hash"
DESCRIPTION = ("Replay a finished game from its export (ExportGame: the gRPC or JSON door; the format is "
               "docs/replay-format.md) with the game's engine on this machine, and print what it comes to: the "
               "game, its frames, its outcome and the final state's hash — the same as the server's when the "
               "export is the game's.")
EPILOG = ("FILE is the ExportGame answer as JSON, or JSON lines: one record a line, optionally after a first line "
          "{\"format\": \"archipelago-journal/1\", \"state_hash\": …}. When FILE says the state hash, the command "
          "checks it: exit 0 when the replay reaches it, 1 when not, 2 when the file cannot be replayed.")


def add_parser(sub: Any) -> None:
    """The ``replay`` subcommand on the top parser's subparsers."""
    r = sub.add_parser("replay", help=HELP, description=DESCRIPTION, epilog=EPILOG)
    r.add_argument("file", metavar="FILE", help="the export: a JSON file or JSON lines; - for standard input")
    r.set_defaults(fn=run)


def _outcome_words(outcome: dict[str, Any] | None, players: list[dict[str, Any]]) -> str:
    if not outcome:
        return "not over"
    names = {p["seat"]: p["nickname"] for p in players}
    winners = [f"{names.get(w, w)} (seat {w})" for w in outcome.get("winners") or ()]
    if winners:
        said = f"{' and '.join(winners)} won"
    elif outcome.get("draw"):
        said = "a draw"
    else:
        said = "no winner"
    return f"{said} ({outcome.get('reason', '')})"


def run(args: argparse.Namespace) -> int:
    from services.replay import Replay, ReplayError, parse_export

    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {args.file}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 2
    try:
        records, expected = parse_export(text)
        replay = Replay(records)
    except ReplayError as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    steps = "actions" if any(r["op"] == "action" for r in replay.records) else "rounds closed"
    frames = f"frames 0-{replay.frames} ({replay.frames} {steps})" if replay.frames >= 0 else "never started"
    print(f"game: {replay.kind}, {replay.seats_total} seats, {frames}")
    print(f"outcome: {_outcome_words(replay.outcome, replay.players)}")
    print(f"state hash: {replay.state_hash or '(none: the game never started)'}")
    if expected:
        if expected != replay.state_hash:
            print(f"MISMATCH: the export says the state hash is {expected}", file=sys.stderr)
            return 1
        print("matches the export's state hash")
    return 0
