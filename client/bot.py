"""`archipelago bot`: plays one seat until the game ends, as its game module (:mod:`client.games`)
says — Salvo: the engine's autopilot orders; Archipelago: random legal orders from the engine;
Arcmage: the engine's autopilot action whenever the bot's seat is among the step's players — each
computed from the bot's own view.

It keeps a Watch stream open the whole game (so its seat counts as connected, A17) and reads the
view again when an update may concern it: not for an engine event, a chat or a step update of a
turn game that names other seats (the bot acts when a step names its seat)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from google.protobuf import json_format

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient
from client.errors import ApiError
from client.games import RoundGame, game_client
from client.views import view_dict

RETRY_S = 0.5
#: refusals of a move that lost a race (the step or round moved on, the game ended): read the view again
LATE = frozenset({"ABORTED", "FAILED_PRECONDITION"})
#: updates after which the bot's view has not changed in a way that concerns it
QUIET = frozenset({"event", "chat", "connected", "disconnected"})


async def follow(client: BaseClient, game_id: str, wake: asyncio.Event, after_seq: int = 0,
                 concerns: Callable[[game_pb2.Update], bool] | None = None) -> None:
    """Keep a Watch stream open until the game ends, setting ``wake`` at every update (or those for
    which ``concerns`` holds); reconnects from the last seq after a broken stream."""
    since = after_seq
    try:
        while True:
            try:
                async for update in client.watch(game_id, since):
                    since = max(since, update.seq)
                    if concerns is None or concerns(update):
                        wake.set()
                return  # the stream ended after game_over
            except (ApiError, OSError) as err:
                if isinstance(err, ApiError) and err.status in ("UNAUTHENTICATED", "PERMISSION_DENIED",
                                                                "NOT_FOUND"):
                    raise
                await asyncio.sleep(RETRY_S)
    finally:
        wake.set()  # the player's loop looks again (and sees the end, or this task's error)


def concerns_seat(seat: Callable[[], int]) -> Callable[[game_pb2.Update], bool]:
    """Whether an update may change what the player of ``seat()`` (-1: not known yet) should do."""
    def concerns(update: game_pb2.Update) -> bool:
        if update.kind in QUIET:
            return False
        if update.kind == "step" and seat() >= 0:
            players = json_format.MessageToDict(update.data).get("players") or []
            return seat() in {int(p) for p in players}
        return True

    return concerns


def choose_orders(view: game_pb2.GetViewResponse) -> dict[str, Any]:
    """The bot's orders for this round of a round game, from the player's view only."""
    game = game_client(view.game)
    if not isinstance(game, RoundGame):
        raise ValueError(f"{view.game} has no rounds of orders")
    return game.orders(view)


async def play_seat(client: BaseClient, game_id: str, *, log: Any = print) -> game_pb2.GetViewResponse:
    """Play the client's seat until the game is over; returns the final view."""
    wake = asyncio.Event()
    you = -1
    watcher = asyncio.get_running_loop().create_task(follow(client, game_id, wake, concerns=concerns_seat(lambda: you)))
    refused_at = -1  # the version at which a move was refused as too late: wait for the next update
    try:
        while True:
            wake.clear()
            view = await client.view(game_id)
            you = view.you
            if view.status == lobby_pb2.GAME_STATUS_OVER:
                return view
            if view.status == lobby_pb2.GAME_STATUS_LOBBY:
                if view.you == 0 and len(view.players) == view.seats:
                    with contextlib.suppress(ApiError):
                        await client.start(game_id)
                        continue
            elif view.version != refused_at and (move := game_client(view.game).bot_move(view)) is not None:
                try:
                    await client.call("Game", move.rpc, move.request, move.response)
                    log(move.label)
                except ApiError as err:
                    if err.status not in LATE:  # too late: read the view again (once it has moved on)
                        raise
                    refused_at = view.version
                continue
            if watcher.done():
                watcher.result()  # a fatal stream error surfaces here
            await wake.wait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


#: an outcome's reason (the engines': Salvo, Archipelago, Arcmage; the server's: an operator's end, a lobby
#: that expired) in plain words; "{progress}" is what the game counts ("round", "turn")
REASONS: dict[str, str] = {
    "target": "the target score was reached",
    "max_rounds": "the {progress} limit was reached",
    "fleet_sunk": "every ship of the other fleet was sunk",
    "both_fleets_sunk": "both fleets sank in the same salvo",
    "last_player": "last player standing",
    "all_out_at_once": "every player was out at once",
    "ended": "an operator ended the game",
    "expired": "nobody started the game in time",
}
def reason_words(reason: str, *, progress: str = "round", won: bool = False) -> str:
    """An outcome's reason as a player reads it ("last player standing"); an unknown code with its
    underscores as spaces. A win at the limit went to the best score (Salvo's hits, Archipelago's
    points, S7/A67)."""
    if reason == "max_rounds" and won:
        return f"the best score when the {progress} limit was reached"
    if reason in REASONS:
        return REASONS[reason].format(progress=progress)
    return reason.replace("_", " ")


def names_of(seats: Sequence[int], names: Mapping[int, str]) -> str:
    """'Alice', 'Alice and Bob', 'Alice, Bob and seat 3' (a seat without a known nickname by number)."""
    said = [names.get(s) or f"seat {s}" for s in seats]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def outcome_words(outcome: Mapping[str, Any], names: Mapping[int, str], *, you: int | None = None,
                  progress: str = "round") -> str:
    """The outcome in plain words: "Alice won (last player standing) — you lose", "a draw (the turn
    limit was reached)", "no winner (an operator ended the game)"; ``you`` (a player's seat, None for
    an onlooker) adds whether that player won."""
    winners = [int(w) for w in outcome.get("winners") or []]
    reason = str(outcome.get("reason") or "")
    why = reason_words(reason, progress=progress, won=bool(winners)) if reason else ""
    paren = f" ({why})" if why else ""
    if outcome.get("draw"):
        return f"a draw{paren}"
    if not winners:  # (ended by an operator, or a lobby that expired)
        return f"no winner{paren}"
    won = f"{names_of(winners, names)} {'won' if len(winners) == 1 else 'share the win'}{paren}"
    if you is None or you < 0:
        return won
    return f"{won} — {'you win' if you in winners else 'you lose'}"


def describe_outcome(view: game_pb2.GetViewResponse) -> str:
    """The last line of a finished game: "game over after turn 12: Alice won (last player standing) —
    you lose" (nicknames and reasons in words, never seat lists or reason codes)."""
    out = view_dict(view).get("outcome") or {}
    game = game_client(view.game) if view.game else None
    head = game.game_over_line(view) if game else f"game over after round {view.round}"
    names = {p.seat: p.nickname for p in view.players}
    return f"{head}: " + outcome_words(out, names, you=view.you, progress=game.progress if game else "round")
