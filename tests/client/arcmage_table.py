"""An Arcmage game for client tests without a server: the real engine (engine.arcmage.GAME) behind the
player API's calls — GetView (the GetViewResponse the game actor builds, with the step and its
deadline), Act (the version checked, out of turn refused, the engine's refusals as INVALID_ARGUMENT)
and Watch (an "event" update for every event the player may see, a "step" update after every action,
"game_over" at the end) — seen from one seat; the other seats play the autopilot in a task of their own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.base import BaseClient, M
from client.errors import ApiError
from client.play_arcmage import whole  # (Struct numbers are floats: the client's own reading of them)
from engine.arcmage import GAME, ArcState
from engine.base import Event
from engine.errors import GameError

GAME_ID = "g1"
NICKS = ("alice", "bob", "carol", "dan")
DEADLINE_MS = 15_000


def response(state: ArcState, seat: int, *, events: list[Event] | None = None, seq: int = 0,
             deadline_unix_ms: int | None = None, players: int | None = None) -> game_pb2.GetViewResponse:
    """The GetViewResponse of ``seat`` for ``state`` (as services.game_actor's view builds it)."""
    step = GAME.step(state)
    over = step.kind == "over"
    n = players or state.data["n"]
    return game_pb2.GetViewResponse(
        game_id=GAME_ID, game="arcmage", version=state.version, round_version=state.version,
        status=lobby_pb2.GAME_STATUS_OVER if over else lobby_pb2.GAME_STATUS_RUNNING, round=state.round, you=seat,
        seats=n, seq=seq, expected=not over and seat in step.players, code="ARCMAG",
        players=[game_pb2.PlayerInfo(seat=s, nickname=NICKS[s], host=s == 0) for s in range(n)],
        step=game_pb2.Step(kind=step.kind, players=list(step.players), active=step.active, deadline=step.deadline,
                           deadline_unix_ms=0 if over else (deadline_unix_ms or int(time.time() * 1000) + DEADLINE_MS)),
        arcmage=json_format.ParseDict(GAME.view(state, seat, events), arcmage_pb2.ArcmageView()))


def new_state(players: int = 2, seed: int = 1, max_rounds: int = 8) -> ArcState:
    return GAME.new_game(GAME.normalize_config({"players": players, "max_rounds": max_rounds}), seed)


def advance(state: ArcState, until: Any) -> ArcState:
    """Play the autopilot for every seat until ``until(state)`` holds (or the game ends)."""
    for _ in range(5000):
        if until(state) or GAME.step(state).kind == "over":
            return state
        seat = GAME.step(state).players[0]
        state, _ = GAME.apply_action(state, seat, GAME.autopilot_action(GAME.view(state, seat)))
    raise AssertionError("the game never reached the state wanted")


class EngineGame(BaseClient):
    """Seat ``you`` of an Arcmage game played by the engine; the other seats are the autopilot,
    acting in a task of their own after each of the player's actions."""

    def __init__(self, state: ArcState, you: int = 0) -> None:
        super().__init__("secret")
        self.state = state
        self.you = you
        self.last_events: list[Event] = []
        # (the lobby's updates: the stream has some before the first view, as the server's does)
        self.updates: list[game_pb2.Update] = [
            game_pb2.Update(kind="joined", seat=s, seq=s + 1) for s in range(state.data["n"])]
        self.updates.append(game_pb2.Update(kind="started", seat=-1, seq=len(self.updates) + 1))
        self.new = asyncio.Condition()
        self.views = 0
        self.acts: list[tuple[int, dict[str, Any]]] = []  # (the version acted at, the action)
        self.out_of_turn = 0  # acts while the seat was not in the step's players
        self.chats: list[str] = []
        self.others: asyncio.Task[None] | None = None
        self.others_play = True

    # ------------------------------------------------------------------ the game moving on
    async def push(self, update_kind: str, data: dict[str, Any], *, event_kind: str = "") -> None:
        u = game_pb2.Update(version=self.state.version, kind=update_kind, round=self.state.round, seat=-1,
                            event_kind=event_kind, seq=len(self.updates) + 1)
        u.data.update(data)
        async with self.new:
            self.updates.append(u)
            self.new.notify_all()

    async def apply(self, seat: int, action: dict[str, Any]) -> None:
        self.state, events = GAME.apply_action(self.state, seat, action)
        self.last_events = events
        for e in events:
            if e.visible_to(self.you):
                await self.push("event", whole(dict(e.data)), event_kind=e.kind)
        step = GAME.step(self.state)
        await self.push("step", {"kind": step.kind, "players": list(step.players), "active": step.active,
                                 "deadline": step.deadline})
        if step.kind == "over":
            await self.push("game_over", {"status": lobby_pb2.GAME_STATUS_OVER})

    async def play_others(self) -> None:
        """The other seats' autopilot until the player's seat is in the step (or the game ends)."""
        while True:
            step = GAME.step(self.state)
            if step.kind == "over" or self.you in step.players:
                return
            seat = step.players[0]
            await self.apply(seat, GAME.autopilot_action(GAME.view(self.state, seat)))
            await asyncio.sleep(0)

    def start_others(self) -> None:
        if self.others_play:
            self.others = asyncio.get_running_loop().create_task(self.play_others())

    # ------------------------------------------------------------------ the player API
    async def call(self, service: str, method: str, request: Message, response_type: type[M]) -> M:
        if method == "GetView":
            self.views += 1
            return response(self.state, self.you, events=self.last_events, seq=len(self.updates))  # type: ignore[return-value]
        assert method == "Act" and isinstance(request, game_pb2.ActRequest), method
        if request.WhichOneof("action") == "chat":
            self.chats.append(request.chat.text)
            return game_pb2.ActResponse(version=self.state.version)  # type: ignore[return-value]
        if request.HasField("version") and request.version != self.state.version:
            raise ApiError("ABORTED", "action/stale_state_id", "version", "", "version: the step has moved on", 409)
        if self.you not in GAME.step(self.state).players:
            self.out_of_turn += 1
            raise ApiError("FAILED_PRECONDITION", "order/not_your_turn", "action", "M25", "not your turn", 412)
        action = whole(json_format.MessageToDict(request.arcmage, preserving_proto_field_name=True))
        try:
            version = self.state.version
            await self.apply(self.you, action)
        except GameError as err:
            raise ApiError("INVALID_ARGUMENT", "order/illegal", "arcmage", "", str(err), 422) from None
        self.acts.append((version, action))
        self.start_others()
        return game_pb2.ActResponse(version=self.state.version)  # type: ignore[return-value]

    async def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        sent = after_seq
        while True:
            async with self.new:
                while len(self.updates) <= sent:
                    await self.new.wait()
                batch = self.updates[sent:]
            for u in batch:
                yield u
                sent = u.seq
                if u.kind == "game_over":
                    return

    def with_secret(self, secret: str) -> BaseClient:
        return self

    async def close(self) -> None:
        if self.others is not None:
            self.others.cancel()
