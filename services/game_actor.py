"""A game actor: owns one game — its lobby, engine state, deadlines (their times: the shard's timer fires
them) and autopilot.

Hard state is the game's journal in Redis; everything in memory is derived from it by
:meth:`GameActor.apply_op` — a journal record (:mod:`services.journal`, one type per op) dispatched by
:meth:`GameActor._apply` to its part's apply method — which is the only place state changes, both live
and when a game reloads after its shard restarted (:meth:`GameActor.apply` reads a stored entry).
Every mutation follows the same path::

    validate (nothing changes on error) -> journal record appended to Redis -> apply -> answer

so nothing acknowledged is lost.  Calls may be retried (a shard restarts, a gateway retries):
submissions are idempotent by their idempotency key, creation by game id.

Messages of one game are serialised by the actor's lock.  The clock is injected (``now_ms``) so the
logic can be tested with a fake one; the shard owns the timer that calls :meth:`deadline_passed`.

What is played follows the engine's step (:class:`engine.base.Step`), read again after every entry:

- ``SIMULTANEOUS``: a round of orders — ``submit`` (journal op ``submit``), closed at the deadline
  or early (A17) with the standing orders' actions (``act``) and the autopilot (op ``close``).
- ``TURN`` / ``WINDOW``: actions one at a time — :meth:`action` (op ``action``: seat, action, key,
  request, ``auto`` false, at), refused with NotYourTurn for a seat outside the step.  Each step
  runs on its deadline kind (:func:`engine.base.step_seconds`: a turn the game's deadline, a
  response window an eighth of it, at least 1 s, unless the config's ``deadlines`` say otherwise);
  a new step (another kind, acting seat or deadline kind, or new seats to answer) opens a new
  deadline, a window losing the seats that answered keeps its own.  When it passes, the autopilot
  (``autopilot_action``, from each seat's view) acts for every seat of that step until the step
  changes (op ``action`` with ``auto`` true, at most :data:`AUTOPILOT_ACTIONS`); a seat whose turn
  the autopilot took over gets no new turn deadline in that turn (M25).  Autopilot seats (A4) act
  at once.  Watchers get each action's events and a ``step`` update (kind, players, active,
  deadline, deadline_unix_ms); a new round (turn) also gets ``round_opened``.

``act`` (chat, bank, trades) is allowed whatever the step.
"""

from __future__ import annotations

import logging
from typing import assert_never

from services import journal
from services.actor_core import (
    ACTIONS_PER_ROUND,
    LOBBY,
    MAX_UPDATES,
    OVER,
    RUNNING,
    SUBMISSIONS_PER_ROUND,
    Journal,
    Retention,
    check_creation,
    check_nickname,
    fingerprint,
    wall_ms,
)
from services.actor_end import EndPart
from services.actor_lobby import LobbyPart
from services.actor_notify import NotifyPart
from services.actor_ratings import RatingsPart
from services.actor_reads import ReadsPart
from services.actor_rounds import RoundsPart
from services.actor_steps import StepsPart

log = logging.getLogger(__name__)


class GameActor(RatingsPart, LobbyPart, RoundsPart, StepsPart, ReadsPart, NotifyPart, EndPart):
    """One game. Not a Ray actor: a plain object hosted (thousands at a time) by a GameShard.

    Its parts, one job each: :class:`services.actor_core.ActorCore` (state from the journal, the
    journal write, updates, keys), :class:`~services.actor_lobby.LobbyPart`,
    :class:`~services.actor_rounds.RoundsPart` (simultaneous rounds),
    :class:`~services.actor_steps.StepsPart` (turns and windows), :class:`~services.actor_reads.ReadsPart`
    (views, updates, operator reads), :class:`~services.actor_notify.NotifyPart` (notifications and the
    deadline warning), :class:`~services.actor_ratings.RatingsPart` (a finished game's ratings and its
    profiles' history), :class:`~services.actor_end.EndPart` (the outcome, an expiry, an operator's end,
    the retirement); here what spans them: the journal's dispatch table, presence and the deadline."""

    def _apply(self, op: journal.Op) -> None:
        """The dispatch table of the journal: each op's record (services/journal.py) to its apply method, in
        the part that owns it. Called by :meth:`ActorCore.apply_op`, live and when a game reloads."""
        match op:
            case journal.Create():
                self._apply_create(op)  # services/actor_lobby.py
            case journal.Join():
                self._apply_join(op)  # services/actor_lobby.py
            case journal.Start():
                self._apply_start(op)  # services/actor_lobby.py
            case journal.Submit():
                self._apply_submit(op)  # services/actor_rounds.py
            case journal.Standing():
                self._apply_standing(op)  # services/actor_rounds.py
            case journal.Act():
                self._apply_act(op)  # services/actor_rounds.py
            case journal.Close():
                self._apply_close(op)  # services/actor_rounds.py (and actor_ratings.py)
            case journal.Action():
                self._apply_action(op)  # services/actor_steps.py (and actor_ratings.py)
            case journal.Rated():
                self._apply_rated(op)  # services/actor_ratings.py
            case journal.Expire():
                self._apply_expire(op)  # services/actor_end.py
            case journal.End():
                self._apply_end(op)  # services/actor_end.py
            case _:
                assert_never(op)

    async def presence_changed(self) -> None:
        async with self.lock:
            await self._maybe_close_early()
            if self._turn_step() is not None:  # (a reloaded game whose autopilot seats had not acted yet)
                await self._autoplay_bots()
                if self.status == OVER:
                    await self._retire()

    async def deadline_passed(self) -> bool:
        """Called by the shard's timer; closes the round (or expires the lobby) if its deadline passed (a
        game over: records its result, if a store failure held it back — services.actor_ratings)."""
        async with self.lock:
            if self.status == OVER:  # (woken: a finished game's result a store failure held back)
                await self._record_pending()
                return False
            if self.status == OVER or self.deadline_ms is None:
                return False
            if self.now_ms() < self.deadline_ms:  # woken before it: the deadline warning
                await self._maybe_warn()
                return False
            if self.status == LOBBY:  # it expires (a quick-play lobby may start instead)
                await self._lobby_deadline()
                return True
            step = self._turn_step()
            if step is not None:
                await self._step_deadline(step)
                return True
            await self._close(early=False)
            return True


__all__ = ["ACTIONS_PER_ROUND", "LOBBY", "MAX_UPDATES", "OVER", "RUNNING", "SUBMISSIONS_PER_ROUND", "GameActor",
           "Journal", "Retention", "check_creation", "check_nickname", "fingerprint", "wall_ms"]
