"""A game actor: owns one game — its lobby, engine state, round deadline and autopilot.

Hard state is the game's journal in Redis; everything in memory is derived from it by
:meth:`GameActor.apply`, which is the only place state changes, both live and when a game reloads
after its shard restarted.  Every mutation follows the same path::

    validate (nothing changes on error) -> journal entry appended to Redis -> apply -> answer

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
from services.actor_lobby import LobbyPart
from services.actor_notify import NotifyPart
from services.actor_ratings import RatingsPart
from services.actor_reads import ReadsPart
from services.actor_rounds import RoundsPart
from services.actor_steps import StepsPart

log = logging.getLogger(__name__)


class GameActor(RatingsPart, LobbyPart, RoundsPart, StepsPart, ReadsPart, NotifyPart):
    """One game. Not a Ray actor: a plain object hosted (thousands at a time) by a GameShard.

    Its parts, one job each: :class:`services.actor_core.ActorCore` (state from the journal, the
    journal write, updates, keys, the end), :class:`~services.actor_lobby.LobbyPart`,
    :class:`~services.actor_rounds.RoundsPart` (simultaneous rounds),
    :class:`~services.actor_steps.StepsPart` (turns and windows), :class:`~services.actor_reads.ReadsPart`
    (views, updates, operator reads), :class:`~services.actor_notify.NotifyPart` (notifications and the
    deadline warning), :class:`~services.actor_ratings.RatingsPart` (a finished game's ratings and its
    profiles' history); here what spans them: presence and the deadline."""

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
