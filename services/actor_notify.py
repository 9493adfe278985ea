"""Notifications from a game actor: what each journaled entry means to each player (a round opened,
your turn, a decision, a trade offer or private message to you, the start, the end), queued in the
outbox right after the entry is applied; and the deadline warning, at the actor's wake-up time.

At least once: the outbox's mark records the version whose notices are queued; a game loaded from its
journal queues again the notices of the entries after its mark (those of the current round and the
end; the outbox's dedup drops what was queued already). The warning comes from the shard's timer,
which wakes a game at its deadline or, before it, at its warning time (:meth:`wake_ms`); a restarted
shard re-arms that time from its deadline index like a deadline, and a warning due while it was down
fires at once (dedup again makes it once)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from engine.base import SIMULTANEOUS, TURN, WINDOW
from services import metrics
from services.actor_core import OVER, RUNNING, ActorCore, UpdateRecord
from services.notify import kinds as nk
from services.notify.kinds import Notice

log = logging.getLogger(__name__)

PENDING_KEPT = 1000  # notices kept in memory while the outbox cannot be reached
NOTIFIED_KEPT = 2000  # dedup fields remembered in memory (saves the outbox a call per turn action)


class NotifyPart(ActorCore):
    """One part of a game actor: see the module docstring."""

    # ------------------------------------------------------------------ notices from updates
    def _humans(self) -> list[int]:
        return [s.seat for s in self.seats if not s.bot]

    def _notices_of(self, u: UpdateRecord) -> Iterator[Notice]:
        """The notices one update makes (each to one player; never to an autopilot seat)."""
        human = {s.seat for s in self.seats if not s.bot}
        if u.kind == "started":
            for s in sorted(human):
                yield Notice(s, nk.GAME_STARTED, 0, "0")
        elif u.kind == "round_opened" and self.engine is not None and self.state is not None:
            if self.engine.step(self.state).kind == SIMULTANEOUS:  # (a turn game: its step update says)
                deadline = int(u.data.get("deadline_unix_ms") or 0)
                for s in self._expected_now():
                    if s in human:
                        yield Notice(s, nk.YOUR_TURN, u.round, str(u.round), deadline)
        elif u.kind == "step":
            kind, deadline = u.data.get("kind"), int(u.data.get("deadline_unix_ms") or 0)
            if kind == TURN and int(u.data.get("active", -1)) in human and u.data["active"] not in self.overdue:
                yield Notice(int(u.data["active"]), nk.YOUR_TURN, u.round, str(u.round), deadline)
            elif kind == WINDOW:
                for s in u.data.get("players") or []:
                    if int(s) in human:
                        yield Notice(int(s), nk.YOUR_DECISION, u.round, f"{u.round}.{deadline}", deadline)
        elif u.kind == "event" and u.event_kind == "offer" and u.data.get("to") is not None:
            to, sender = int(u.data["to"]), int(u.data.get("from", -1))
            if to in human:
                yield Notice(to, nk.TRADE_OFFER, u.round, str(u.round), who=self._nickname(sender))
        elif u.kind == "chat" and u.chat and u.chat.get("to") is not None:
            to = int(u.chat["to"])
            if to in human and to != int(u.chat["seat"]):
                yield Notice(to, nk.PRIVATE_CHAT, u.round, str(u.round), who=str(u.chat.get("nickname", "")))
        elif u.kind == "game_over" and self.state is not None:  # (a lobby that expired: nobody played)
            for s in sorted(human):
                yield Notice(s, nk.GAME_OVER, u.round, "0")

    def _nickname(self, seat: int) -> str:
        return self.seats[seat].nickname if 0 <= seat < len(self.seats) else ""

    def _expected_now(self) -> list[int]:
        from engine.base import expected_players

        assert self.engine is not None
        return sorted(expected_players(self.engine, self.state))

    def _updates_at(self, version: int) -> list[UpdateRecord]:
        out: list[UpdateRecord] = []
        for u in reversed(self.updates):
            if u.version != version:
                break
            out.append(u)
        out.reverse()
        return out

    async def _notify_entry(self, version: int) -> None:
        """After the entry at ``version`` was applied: queue what it means to each player."""
        notices = [n for u in self._updates_at(version) for n in self._notices_of(u)]
        if notices or self.notices_pending:
            await self._queue(notices, version)

    async def _queue(self, notices: list[Notice], version: int) -> None:
        batch = self.notices_pending + [n for n in notices if n.dedup() not in self.notified]
        if not batch:
            return  # (queued already by this actor: e.g. "your turn" after each action of that turn)
        try:
            queued, dropped = await self.store.notify(self.game_id, self.kind, batch, version=version,
                                                      at_ms=self.now_ms())
        except Exception as exc:  # the outbox is down: keep them for the next entry (the mark stays behind)
            log.warning("notifications of %s not queued yet: %r", self.game_id, exc)
            self.notices_pending = batch[-PENDING_KEPT:]
            return
        self.notices_pending = []
        for i in queued:
            metrics.NOTIFICATIONS_QUEUED.labels(batch[i].kind).inc()
        if len(self.notified) > NOTIFIED_KEPT:
            self.notified.clear()  # (bounded; the outbox's own dedup still holds)
        self.notified.update(n.dedup() for n in batch)
        if dropped:
            metrics.NOTIFICATIONS_DROPPED.inc(dropped)
            log.warning("outbox full: %d notifications of %s dropped", dropped, self.game_id)

    async def _notify_after_load(self) -> None:
        """A game just loaded: the notices of entries after the outbox's mark, again (at least once)."""
        try:
            mark = await self.store.notify_mark(self.game_id)
        except Exception as exc:
            log.warning("notification mark of %s unreadable: %r", self.game_id, exc)
            return
        current = self.state.round if self.state is not None else 0
        notices = [n for u in self.updates if u.version > mark for n in self._notices_of(u)
                   if n.round == current or n.kind in (nk.GAME_STARTED, nk.GAME_OVER)]
        if notices:
            await self._queue(notices, self.version)

    # ------------------------------------------------------------------ the deadline warning
    def _warn_at(self) -> int | None:
        """When this step's deadline warning is due (None: none, or given already)."""
        if self.status != RUNNING or self.deadline_ms is None or self.warned_version == self.step_version:
            return None
        before = self.warn.before((self.deadline_ms - self.step_opened_ms) / 1000.0)
        return None if before is None else self.deadline_ms - int(before * 1000)

    def wake_ms(self) -> int | None:
        """When the shard's timer should call :meth:`deadline_passed`: the deadline, or its warning first."""
        warn = self._warn_at()
        return self.deadline_ms if warn is None or self.deadline_ms is None else min(warn, self.deadline_ms)

    def _wake_changed(self) -> None:
        self.on_deadline(self.game_id, self.wake_ms())

    def _warned_seats(self) -> list[int]:
        """Who the warning is for: the players of this step that have not played in it."""
        assert self.engine is not None and self.current_step is not None
        human = set(self._humans())
        step = self.current_step
        if step.kind == SIMULTANEOUS:
            done = self._done()
            return [s for s in self._expected_now() if s in human and s not in done]
        if step.kind == TURN:
            return [step.active] if step.active in human and step.active not in self.overdue else []
        return [s for s in step.players if s in human]

    async def _maybe_warn(self) -> bool:
        """The warning, if due now (called by the timer before the deadline); True if it was."""
        warn = self._warn_at()
        if warn is None or self.now_ms() < warn or self.status == OVER or self.current_step is None:
            return False
        self.warned_version = self.step_version
        step = self.current_step
        round_ = self.state.round
        key = str(round_) if step.kind == SIMULTANEOUS else f"{round_}.{self.deadline_ms}"
        notices = [Notice(s, nk.DEADLINE, round_, key, int(self.deadline_ms or 0)) for s in self._warned_seats()]
        if notices:
            await self._queue(notices, 0)
        self._wake_changed()
        return True
