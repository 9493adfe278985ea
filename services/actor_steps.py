"""Turns and windows of a turn-based game: actions one at a time, each step's deadline (M25), the
autopilot for the seats whose deadline passed and for autopilot seats."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engine.base import (
    SIMULTANEOUS,
    STEP_OVER,
    TURN,
    WINDOW,
    Step,
    TurnGame,
    step_seconds,
    turns_of,
)
from engine.errors import (
    GameError,
    InvalidOrder,
    NotYourTurn,
    RateLimited,
    StaleVersion,
)
from services import journal, metrics
from services.actor_core import (
    AUTOPILOT_ACTIONS,
    OVER,
    RUNNING,
    TURN_ACTIONS_PER_ROUND,
    ActorCore,
    fingerprint,
)

log = logging.getLogger(__name__)


class StepsPart(ActorCore):
    """One part of a game actor: see the module docstring."""

    def _apply_action(self, e: journal.Action) -> None:
        """A turn or window action (:meth:`action`, or the autopilot's: ``auto``), applied by the
        engine; then the step is read again: the game may be over, a new round (turn) may open, a
        new step opens a new deadline, and watchers hear of the step."""
        assert self.engine is not None and self.current_step is not None
        seat = int(e.seat)
        before = self.current_step
        turn = self.state.round
        self.state, events = e.play(self.engine, self.state)
        self.turn_count[seat] = self.turn_count.get(seat, 0) + 1
        if e.auto and before.kind == TURN and before.active == seat:
            self.overdue.add(seat)  # M25: the autopilot finishes this seat's turn, windows and all
        if not self.seats[seat].bot:  # autopilot_played: it acted for this player since its own last action
            self.autoplayed = self.autoplayed | {seat} if e.auto else self.autoplayed - {seat}
            if e.auto:
                self._log_auto(seat, turn, "autopilot", action=dict(e.action))
        for ev in events:
            self._push_event(ev)
        at = int(e.at)
        if not self._game_over(self.state.round):
            step = self.engine.step(self.state)
            if step.active != before.active:
                self.overdue = set()  # another seat's turn
            if self.state.round != self.step_round:
                self._open_round(at)  # (with its step update when the new round is a turn)
                if step.kind == SIMULTANEOUS:
                    self._push_step()  # turns gave way to a round of orders
            else:
                if self._continues(before, step):
                    self.current_step = step
                else:
                    self._open_step(step, at)
                    self._wake_changed()
                self._push_step()  # after every action: whose turn it is now
        # (after a new round's reset: a retry of the action that ended the round is still a replay)
        self._remember_key(seat, e.key, str(e.request), {"version": self.version})

    @staticmethod
    def _continues(before: Step, step: Step) -> bool:
        """``step`` is ``before`` going on (same kind, acting seat and deadline kind; in a window,
        fewer seats left to answer): its deadline stands. Anything else is a new step."""
        return (step.kind == before.kind and step.active == before.active and step.deadline == before.deadline
                and set(step.players) <= set(before.players))

    def _open_step(self, step: Step, at_ms: int) -> None:
        """A new step: its deadline from its kind (:func:`engine.base.step_seconds`); at once for a
        turn the autopilot has taken over."""
        self.current_step = step
        self.step_round = self.state.round
        self.step_version = self.version
        self.step_opened_ms = at_ms
        if step.kind == TURN and step.active in self.overdue:
            self.deadline_ms = at_ms
        else:
            self.deadline_ms = at_ms + int(step_seconds(self.config, self.deadline_s, step.deadline) * 1000)

    def _push_step(self) -> None:
        """Tell watchers the step: its kind, players, acting seat, deadline kind and deadline."""
        assert self.current_step is not None
        self._push("step", data=self._step_dict())

    def _step_dict(self) -> dict[str, Any]:
        step = self.current_step or STEP_OVER
        return {**step.to_dict(), "deadline_unix_ms": self.deadline_ms or 0}

    async def action(self, seat: int, action: dict[str, Any], *, key: str = "", version: int | None = None,
                     kind: str = "") -> dict[str, Any]:
        """A turn or window action (a ``TURN`` / ``WINDOW`` step; a pass is an action too): checked
        by the engine (``apply_action``, which names its own rule), journaled as ``action`` before
        the answer, applied; then the autopilot seats in the new step act. Idempotent by ``key``
        like :meth:`submit`; ``version``, when given, is the version the player saw: older than the
        current step is :class:`StaleVersion`."""
        async with self.lock:
            request = fingerprint({"turn_action": action})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if kind and kind != self.kind:
                raise InvalidOrder(f"this is a {self.kind} game: send {self.kind} actions", field="action")
            step = engine.step(self.state)
            if step.kind not in (TURN, WINDOW):
                raise NotYourTurn("no turn is open: this round is played with orders (submit them)",
                                  field="action", rule="A16")
            if version is not None and not self.step_version <= version <= self.version:
                raise StaleVersion(f"version {version} is not of this step, which opened at version "
                                   f"{self.step_version}; fetch the view and act again", field="version",
                                   rule="A16")
            if self.turn_count.get(seat, 0) >= TURN_ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {TURN_ACTIONS_PER_ROUND} actions per round", rule="A16",
                                  field="action")
            turns_of(engine).apply_action(self.state, seat, action)  # validates; apply recomputes it
            if seat not in step.players:
                raise NotYourTurn("this player may not act now", field="action", rule="A16")
            await self._commit(journal.Action(seat=seat, action=action, key=key, request=request, auto=False,
                                              at=self.now_ms()))
            ack = {"version": self.version, "replayed": False}
            await self._autoplay_bots()
            if self.status == OVER:
                await self._retire()
            return ack

    def _turn_step(self) -> Step | None:
        """The current step if the game is running a turn or a window, else None."""
        if self.status != RUNNING or self.engine is None:
            return None
        step = self.engine.step(self.state)
        return step if step.kind in (TURN, WINDOW) else None

    def _autopilot_action(self, turns: TurnGame, seat: int) -> dict[str, Any] | None:
        """The autopilot's action for ``seat`` from its view (M53), if the engine accepts it; else
        its first legal action; None when it has none."""
        with metrics.AUTOPILOT.time():
            view = turns.view(self.state, seat)
            action = turns.autopilot_action(view)
        if self._accepted(turns, seat, action):
            return action
        # its first legal action, computed only when the autopilot's own choice failed (not on every step)
        for first in turns.legal_actions(view)[:1]:
            if self._accepted(turns, seat, first):
                return first
        return None

    def _accepted(self, turns: TurnGame, seat: int, action: dict[str, Any]) -> bool:
        """The engine takes ``action`` of ``seat`` now (a refusal is logged: the autopilot erred)."""
        if not action:
            return False
        try:
            turns.apply_action(self.state, seat, action)
            return True
        except GameError:
            log.exception("autopilot action %r of seat %d refused in %s", action, seat, self.game_id)
            return False

    async def _autoplay(self, seats: Callable[[Step], list[int]]) -> int:
        """Autopilot actions, each journaled as an ``action`` with ``auto``, one at a time, for the
        first seat of ``seats(step)`` that can act, until none can or :data:`AUTOPILOT_ACTIONS`;
        returns how many."""
        done = 0
        while done < AUTOPILOT_ACTIONS and (step := self._turn_step()) is not None:
            turns = turns_of(self._engine())
            for seat in seats(step):
                action = self._autopilot_action(turns, seat)
                if action is not None:
                    await self._commit(journal.Action(seat=seat, action=action, key="", request="", auto=True,
                                                      at=self.now_ms()))
                    done += 1
                    break
            else:
                break
        return done

    async def _autoplay_bots(self) -> None:
        """The autopilot seats (A4) of a turn or window step act at once."""
        await self._autoplay(lambda step: [s for s in step.players if self.seats[s].bot])

    async def _step_deadline(self, timed_out: Step) -> None:
        """A turn's or window's deadline passed (M25): the autopilot acts for every seat of that
        step until the step changes (a seat that lets a window pass, passes), then the autopilot
        seats of the new step act."""
        round_ = self.state.round

        def late(step: Step) -> list[int]:
            return list(step.players) if self.state.round == round_ and self._continues(timed_out, step) else []

        await self._autoplay(late)
        await self._autoplay_bots()
        if self.status == OVER:
            await self._retire()
            return
        step = self._turn_step()
        if step is not None and self.state.round == round_ and self._continues(timed_out, step):
            # the autopilot could not end the step: try again one step length later (not journaled;
            # a reload fires at once)
            log.error("game %s: the autopilot did not end the %s step of seat(s) %s", self.game_id, step.kind,
                      list(step.players))
            self.deadline_ms = self.now_ms() + int(step_seconds(self.config, self.deadline_s, step.deadline) * 1000)
            self._wake_changed()
