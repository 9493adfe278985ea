"""A finished game's ratings and its profiles' history (community.proto): the game actor's part.

- **Who the autopilot played** (:mod:`services.ratings`, "a rated seat"): counted per seat from the
  journal as it is applied, live and on a reload alike — each closed round a seat was expected in,
  and whether it was autoplayed (it had not submitted "done": the autopilot or its standing orders
  played it, as ``autoplayed`` says); in a turn-based game each of the seat's own turns, and whether
  the autopilot acted in it (M25).
- **A rated game's end**: :meth:`_game_over` (services/actor_end.py) does not push ``game_over`` for
  a rated game (:meth:`_holds_game_over`); once the end is journaled, :meth:`_record_result` (from
  ``_retire``, which every end calls, and ``load`` for a game over) applies the result to the
  profiles in one Redis transaction (:meth:`services.community_store.CommunityStore.record_game`,
  exactly once: a marker per game) and journals ``{"op": "rated", "ratings": [RatingChange], "at"}``,
  whose apply pushes ``game_over`` with the outcome and ``ratings``. A shard that stopped between the
  two finishes it when the game loads; the marker makes the second application answer the first's
  changes. Until then the game is over but its streams go on (the shard reports "over" only once the
  ``game_over`` update exists: :attr:`rating_due`).
- **An unrated game** pushes ``game_over`` at once, as ever; if it was played (it started) with
  profile seats, their history entries are written in ``_retire`` too (same transaction and marker,
  no journal entry).
- **A store failure** (Redis not answering) leaves the game unretired, with a retry armed on the
  shard's timer (:data:`RETRY_MS`; :meth:`services.game_actor.GameActor.deadline_passed`).
"""

from __future__ import annotations

import logging
from typing import Any, cast

from engine.base import TURN
from services import journal
from services.actor_core import OVER
from services.actor_rounds import RoundsPart
from services.actor_steps import StepsPart
from services.community_store import CommunityStore, GameResult, PlayerResult
from services.ratings import SeatRecord, places, rated_seats, real_outcome
from services.store import JournalConflict, is_outage

log = logging.getLogger(__name__)

RETRY_MS = 5000  # a failed recording of a finished game is tried again this much later


class RatingsPart(RoundsPart, StepsPart):
    """One part of a game actor: see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # --- derived from the journal ---
        self.played: dict[int, int] = {}  # seat -> rounds it was expected in (a turn game: its turns)
        self.autoplayed_count: dict[int, int] = {}  # seat -> how many of them the autopilot played
        self._turn_counted: dict[int, tuple[int, bool]] = {}  # seat -> (its last turn counted, auto counted)
        self.rating_due = False  # a rated game is over, its "rated" entry not journaled yet: no game_over yet
        self.rating_changes: list[dict[str, Any]] = []  # the rated game's changes (its game_over's "ratings")
        self.ended_ms = 0  # when the game ended (the time of the entry that ended it)
        self._recorded = False  # the result is in the profiles (this actor's life, or a "rated" entry)
        self._community: CommunityStore | None = None

    # ------------------------------------------------------------------ from the journal
    def apply_op(self, op: journal.Op) -> None:
        was = self.status
        super().apply_op(op)
        if was != OVER and self.status == OVER:
            self.ended_ms = int(op.at or 0)

    def _apply_close(self, e: journal.Close) -> None:
        done = self._done()  # (before the close: who submitted "done" this round)
        for s in e.orders:
            self._count(int(s), auto=int(s) not in done)
        super()._apply_close(e)

    def _apply_action(self, e: journal.Action) -> None:
        step, seat = self.current_step, int(e.seat)
        if step is not None and step.kind == TURN and step.active == seat and self.state is not None:
            turn = int(self.state.round)
            last, auto = self._turn_counted.get(seat, (-1, False))
            if last != turn:
                self._count(seat, auto=bool(e.auto))
                self._turn_counted[seat] = (turn, bool(e.auto))
            elif e.auto and not auto:  # the autopilot took over a turn the seat had begun
                self.autoplayed_count[seat] = self.autoplayed_count.get(seat, 0) + 1
                self._turn_counted[seat] = (turn, True)
        super()._apply_action(e)

    def _count(self, seat: int, *, auto: bool) -> None:
        self.played[seat] = self.played.get(seat, 0) + 1
        if auto:
            self.autoplayed_count[seat] = self.autoplayed_count.get(seat, 0) + 1

    def _apply_rated(self, e: journal.Rated) -> None:
        """The rated game's result is in the profiles: ``game_over`` with the outcome and the changes."""
        self.rating_due = False
        self._recorded = True
        self.rating_changes = [dict(c) for c in e.ratings]
        self._push("game_over", round_=self.final_round, status=OVER,
                   data={"outcome": self.outcome, "ratings": self.rating_changes})

    # ------------------------------------------------------------------ who is rated
    def seat_records(self) -> list[SeatRecord]:
        return [SeatRecord(s.seat, s.profile, s.bot, self.played.get(s.seat, 0), self.autoplayed_count.get(s.seat, 0))
                for s in self.seats]

    def rated(self) -> list[int]:
        """The seats this game rates ([] for an unrated game; meaningful once it is over)."""
        return rated_seats(self.seat_records(), public=self.public, outcome=self.outcome)

    def _holds_game_over(self) -> bool:
        """(From ``_game_over``, the outcome set.) A rated game's ``game_over`` waits for its ratings."""
        self.rating_due = bool(self.rated())
        return self.rating_due

    def _result_due(self) -> bool:
        """The game is over and its result is not in its profiles yet (a played game with profile seats)."""
        return self.status == OVER and (self.rating_due or (
            not self._recorded and self.state is not None and any(s.profile and not s.bot for s in self.seats)))

    def _result(self) -> GameResult:
        outcome = self.outcome or {}
        place = places(outcome, len(self.seats)) if real_outcome(outcome) else [0] * len(self.seats)
        rated, winners = set(self.rated()), {int(w) for w in outcome.get("winners") or ()}
        return GameResult(
            game_id=self.game_id, game=self.kind, speed=self.speed or "fast", ended_ms=self.ended_ms or self.now_ms(),
            reason=str(outcome.get("reason", "")), seats=self.seats_total,
            players=tuple(PlayerResult(s.seat, s.profile, s.handle, s.nickname, place[s.seat], s.seat in winners,
                                       s.seat in rated) for s in self.seats if s.profile and not s.bot))

    def _community_store(self) -> CommunityStore | None:
        if self._community is None and hasattr(self.store, "redis") and hasattr(self.store, "key"):
            self._community = CommunityStore(cast(Any, self.store))
        return self._community

    async def _record_pending(self) -> None:
        """The shard's timer woke a game over: record its result if a store failure held it back (then
        retire it); else nothing is armed for it any more."""
        if self._result_due():
            await self._retire()
        else:
            self.on_deadline(self.game_id, None)

    async def _record_result(self) -> bool:
        """(From ``_retire``.) Put a finished game's result in its profiles — ratings, leaderboards,
        history, exactly once — and, for a rated game, journal ``rated`` (its ``game_over``). True when
        done or nothing to do; False after a store failure (logged; tried again at :data:`RETRY_MS`)."""
        if not self._result_due():
            return True
        community = self._community_store()
        try:
            if community is None:  # (a journal with no Redis behind it: an in-memory test store)
                log.warning("game %s: no store for ratings and history; recorded as unrated", self.game_id)
                changes: list[dict[str, Any]] = []
            else:
                changes = await community.record_game(self._result(), self.retention.retention_s)
            self._recorded = True
            if self.rating_due:
                await self._commit(journal.Rated(ratings=changes, at=self.now_ms()))
        except JournalConflict:
            raise  # another writer: the shard drops this actor and reloads the game
        except Exception as exc:
            log.log(logging.WARNING if is_outage(exc) else logging.ERROR,
                    "game %s: its result is not in its profiles yet, again in %d ms: %r", self.game_id, RETRY_MS,
                    exc, exc_info=not is_outage(exc))
            self.deadline_ms = self.now_ms() + RETRY_MS
            self._wake_changed()
            return False
        if self.deadline_ms is not None:  # (a retry armed by a failure)
            self.deadline_ms = None
            self._wake_changed()
        return True
