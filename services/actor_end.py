"""The end of a game: the engine's outcome (``_game_over``), a lobby that expired, an operator's end (the
admin door), the retirement of a finished game, and the public summary every change publishes."""

from __future__ import annotations

import logging
from typing import Any

from engine.base import STEP_OVER
from services import journal
from services.actor_core import ENDED, LOBBY, OVER, ActorCore

log = logging.getLogger(__name__)


class EndPart(ActorCore):
    """One part of a game actor: see the module docstring."""

    def _game_over(self, final_round: int) -> bool:
        """If the engine's game has ended: status OVER, the outcome, no deadline, ``game_over``."""
        assert self.engine is not None
        outcome = self.engine.outcome(self.state)
        if outcome is None:
            return False
        self.status = OVER
        self.final_round = final_round
        self.outcome = outcome.to_dict()
        self.deadline_ms = None
        self.current_step = STEP_OVER
        self.submissions = {}
        self.keys = {}
        if not self._holds_game_over():  # a rated game's game_over waits for its ratings (actor_ratings)
            self._push("game_over", round_=final_round, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)
        return True

    def _apply_expire(self, e: journal.Expire) -> None:
        """A lobby nobody started in time ends with no winner (reason "expired")."""
        self.status = OVER
        self.outcome = {"winners": [], "draw": False, "reason": "expired", "scores": []}
        self.deadline_ms = None
        self._push("game_over", round_=0, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)

    def _apply_end(self, e: journal.End) -> None:
        """An operator ended the game (the admin door, :meth:`end`): no winner, reason "ended". The
        operator's own words are not journaled: no player ever sees them."""
        self.status = OVER
        self.final_round = self.state.round if self.state is not None else 0
        self.outcome = {"winners": [], "draw": False, "reason": ENDED, "scores": []}
        self.deadline_ms = None
        self.current_step = STEP_OVER
        self.submissions = {}
        self.keys = {}
        self._push("game_over", round_=self.final_round, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)

    async def _retire(self) -> None:
        """The game is over: its result goes to its profiles (ratings, history; a rated game's game_over
        then), and its keys leave Redis after the retention time (idempotent)."""
        if not await self._record_result():  # (a store failure: retried later, the game not retired yet)
            return
        await self._publish_summary()  # the public summary says so (ListGames, Rejoin, operators)
        await self.store.retire(self.game_id, code=self.code, secret_hashes=[s.secret_hash for s in self.seats],
                                retention_s=self.retention.retention_s)

    def summary(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "game": self.kind, "code": self.code,
                "seats": self.seats_total, "taken": len(self.seats),  # players and autopilot seats
                "status": self.status, "deadline_seconds": self.deadline_s,
                "host": self.seats[0].nickname if self.seats else "", "public": self.public}

    async def _publish_summary(self) -> None:
        listed = self.public and self.status == LOBBY and len(self.seats) < self.seats_total
        live = self.status if self.public and self.status != LOBBY and self.state is not None else ""
        summary = self.summary()
        if live:  # ListLiveGames shows who plays (public: every player knows it, A84)
            summary["started_ms"] = self.started_ms
            summary["players"] = [{"seat": s.seat, "nickname": s.nickname, "handle": s.handle, "autopilot": s.bot}
                                  for s in self.seats]
        await self.store.put_summary(self.game_id, summary, listed, self.created_ms, live)

    async def end(self, reason: str = "") -> dict[str, Any]:
        """An operator ends the game now (the admin door), in its lobby or running: journaled as
        ``end`` before the answer, applied (status OVER, no winner, reason "ended", the deadline
        cleared, ``game_over`` to every player, whose streams then end), then retired like any
        finished game. Idempotent: a game already over answers its outcome again (``ended`` False).
        ``reason``, the operator's words, goes to the log and the answer only."""
        async with self.lock:
            self._engine()  # (NotFound for a game not created)
            ended = self.status != OVER
            if ended:
                await self._commit(journal.End(at=self.now_ms()))
                log.info("game %s ended by an operator: %r", self.game_id, reason[:200])
                await self._retire()
            return {"game_id": self.game_id, "ended": ended, "status": self.status, "round": self.final_round,
                    "version": self.version, "outcome": self.outcome}
