"""What a game shows: a player's view and updates, who a secret is, and the operators' reads (public
facts only)."""

from __future__ import annotations

import logging
from typing import Any

from engine.base import (
    expected_players,
    public_events,
)
from engine.errors import (
    NotFound,
)
from services.actor_core import (
    OVER,
    RUNNING,
    SPECTATOR,
    ActorCore,
)

log = logging.getLogger(__name__)


class ReadsPart(ActorCore):
    """One part of a game actor: see the module docstring."""

    # ------------------------------------------------------------------ reading
    async def view(self, seat: int) -> dict[str, Any]:
        """``seat``'s view; ``SPECTATOR``: a spectator's (what every player knows; the whole game once
        it is over), with no seat's own orders, standing orders or autopilot log."""
        engine = self._engine()
        if seat == SPECTATOR:
            return await self._spectator_view()
        out, connected, done = await self._view_head(seat)
        out.update({
            "submitted": seat in done, "seats": self.seats_total,
            "expected": self.status == RUNNING and seat in expected_players(engine, self.state)
            and seat not in done,
            "seq": self.seq[seat] if 0 <= seat < len(self.seq) else 0,
            "autopilot_played": seat in self.autoplayed,
            "autopilot_log": [dict(t) for t in self.autolog.get(seat, ())],
            "players": self._players(connected, done),
        })
        if self.state is not None:
            self._view_body(out, engine.view(self.state, seat, self.last_events))
        sub = self.submissions.get(seat)
        if sub is not None:
            out["pending"] = sub.orders
        if self.standing.get(seat):
            out["standing"] = self.standing[seat]
        return out

    async def _view_head(self, you: int) -> tuple[dict[str, Any], set[int], set[int]]:
        """What a player's view and a spectator's begin with, the seats connected and those done."""
        connected = await self.store.connected(self.game_id, range(len(self.seats)))
        out: dict[str, Any] = {
            "game_id": self.game_id, "game": self.kind, "version": self.version,
            "round_version": self.round_version, "status": self.status,
            "round": self.final_round if self.status == OVER else self.state.round if self.state is not None else 0,
            "you": you, "deadline_unix_ms": self.deadline_ms or 0, "deadline_seconds": self.deadline_s,
            "code": self.code,
        }
        return out, connected, self._done()

    def _view_body(self, out: dict[str, Any], shown: dict[str, Any]) -> None:
        """The step (who may act now: kind, players, active, deadline and its time) and the engine's view
        ``shown``, with the outcome of a game an operator ended (the engine's game went on)."""
        out["step"] = self._step_dict()
        out["view"] = shown
        if self.status == OVER and self.outcome is not None and shown.get("outcome") is None:
            shown["outcome"] = dict(self.outcome)

    def _players(self, connected: set[int], done: set[int]) -> list[dict[str, Any]]:
        """Every seat as every player sees it (A84)."""
        return [{"seat": s.seat, "nickname": s.nickname, "submitted": s.seat in done,
                 "connected": s.seat in connected, "host": s.seat == 0, "autopilot": s.bot, "handle": s.handle}
                for s in self.seats]

    async def _spectator_view(self) -> dict[str, Any]:
        engine = self._engine()
        out, connected, done = await self._view_head(SPECTATOR)
        out.update({"submitted": False, "seats": self.seats_total, "expected": False, "seq": self.public_seq,
                    "autopilot_played": False, "autopilot_log": [], "players": self._players(connected, done)})
        if self.state is not None:
            self._view_body(out, engine.spectator_view(self.state, public_events(self.last_events, self.seats_total)))
        return out

    def latest_seq(self, seat: int) -> int:
        """``seat``'s latest update seq (``SPECTATOR``: a spectator's)."""
        if seat == SPECTATOR:
            return self.public_seq
        return self.seq[seat] if 0 <= seat < len(self.seq) else 0

    def updates_since(self, seat: int, after_seq: int) -> list[dict[str, Any]]:
        """``seat``'s updates with seq > ``after_seq``, in order; a "resync" first if some of them are
        no longer kept. ``SPECTATOR``: a spectator's (the updates every seat receives)."""
        latest = self.latest_seq(seat)
        if not (seat == SPECTATOR or 0 <= seat < len(self.seq)) or after_seq >= latest:
            return []
        tail: list[dict[str, Any]] = []
        for u in reversed(self.updates):  # newest first: a live stream asks for the last few
            s = u.seq_for(seat)
            if s:
                if s <= after_seq:
                    break
                tail.append(u.to_dict(seat))
        tail.reverse()
        first = tail[0]["seq"] if tail else latest + 1
        if after_seq < first - 1:  # some are no longer kept
            tail.insert(0, {"version": self.version, "kind": "resync", "round": 0, "seat": -1, "seq": first - 1})
        return tail

    def whoami(self, seat: int) -> dict[str, Any]:
        if not 0 <= seat < len(self.seats):
            raise NotFound("no such seat", field="seat")
        s = self.seats[seat]
        return {"game_id": self.game_id, "seat": seat, "nickname": s.nickname, "game": self.kind,
                "code": self.code, "host": seat == 0, "status": self.status}

    # ------------------------------------------------------------------ for operators (the admin door)
    # Public facts only — what every player of the game may know (the summary, the players' list of
    # the views, the outcome) — never a secret's hash, a fleet, a unit or anything else of the engine's
    # state.
    def brief(self) -> dict[str, Any]:
        """One line of a shard's listing."""
        round_ = self.final_round if self.status == OVER else self.state.round if self.state is not None else 0
        return {"game_id": self.game_id, "game": self.kind, "status": self.status, "round": round_,
                "deadline_unix_ms": self.deadline_ms or 0, "journal_length": self.version,
                "players": sum(1 for s in self.seats if not s.bot), "autopilot": sum(1 for s in self.seats if s.bot),
                "seats": self.seats_total}

    async def inspect(self) -> dict[str, Any]:
        """The game as an operator sees it: its summary, where it stands, its players."""
        self._engine()
        connected = await self.store.connected(self.game_id, range(len(self.seats)))
        now = self.now_ms()
        return {**self.brief(), "summary": self.summary(), "version": self.version,
                "round_version": self.round_version, "created_unix_ms": self.created_ms,
                "time_left_ms": max(0, self.deadline_ms - now) if self.deadline_ms else 0,
                "outcome": self.outcome,
                "players": [{"seat": s.seat, "nickname": s.nickname, "host": s.seat == 0,
                             "connected": s.seat in connected, "autopilot": s.bot,
                             "submitted": s.seat in self.submissions and not self.submissions[s.seat].draft,
                             "draft": s.seat in self.submissions and self.submissions[s.seat].draft}
                            for s in self.seats]}
