"""Simultaneous rounds: submissions, standing orders, immediate actions, the close (early, A17, or at
the deadline) with the standing orders' actions and the autopilot."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from engine.base import (
    SIMULTANEOUS,
    Core,
    expected_players,
    rounds_of,
    standing_of,
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
    ACTIONS_PER_ROUND,
    OVER,
    RUNNING,
    SUBMISSIONS_PER_ROUND,
    ActorCore,
    Submission,
    fingerprint,
)

log = logging.getLogger(__name__)


def _filled(orders: Mapping[str, Any]) -> dict[str, Any]:
    """``orders`` without its empty members: what a completion by standing orders added shows as a
    difference, a member it merely spelled out empty (``"units": []``) does not."""
    return {k: v for k, v in orders.items() if v not in (None, "", [], {})}


class RoundsPart(ActorCore):
    """One part of a game actor: see the module docstring."""

    def _apply_submit(self, e: journal.Submit) -> None:
        seat = int(e.seat)
        self.submissions[seat] = Submission(dict(e.orders), bool(e.draft), e.key)
        self.submit_count[seat] = self.submit_count.get(seat, 0) + 1
        ack = {"version": self.version, "round": self.state.round, "submitted": not e.draft}
        self._remember_key(seat, e.key, str(e.request), ack)
        self._push("submitted", seat=seat, data={"done": not e.draft})

    def _apply_standing(self, e: journal.Standing) -> None:
        seat = int(e.seat)
        self.standing[seat] = dict(e.standing)
        self.act_count[seat] = self.act_count.get(seat, 0) + 1
        self._remember_key(seat, e.key, str(e.request), {"version": self.version})

    def _apply_act(self, e: journal.Act) -> None:
        assert self.engine is not None
        seat = int(e.seat)
        self.state, events = e.play(self.engine, self.state)
        self.act_count[seat] = self.act_count.get(seat, 0) + 1
        # the answer: an offer's id (A53) is in it
        self.act_answer = {"version": self.version,
                           "offer_id": next((str(ev.data["id"]) for ev in events if ev.kind == "offer"), "")}
        self._remember_key(seat, e.key, str(e.request), self.act_answer)
        for ev in events:
            self._push_event(ev)

    def _apply_close(self, e: journal.Close) -> None:
        assert self.engine is not None
        orders = e.seat_orders()
        closed = self.state.round
        done = self._done()
        self.autoplayed = frozenset(s for s in orders if s not in done)
        for seat, played in orders.items():
            if seat not in done:
                self._log_auto(seat, closed, "autopilot", orders=played)
            elif self.standing.get(seat) and _filled(played) != _filled(self.submissions[seat].orders):
                self._log_auto(seat, closed, "standing_orders", orders=played)
        self.state, events = e.play(self.engine, self.state)
        self.last_events = events
        standing = standing_of(self.engine)
        for seat, used in orders.items():  # A73: builds the round used leave the standing queue
            if self.standing.get(seat):
                self.standing[seat] = standing.standing_after_round(self.standing[seat], used)
        self._push("round_closed", round_=closed, data={"early": bool(e.early)})
        for ev in events:
            self._push_event(ev, closed)
        if not self._game_over(closed):
            self._open_round(int(e.at))

    async def submit(self, seat: int, orders: dict[str, Any], *, version: int, key: str = "",
                     draft: bool = False) -> dict[str, Any]:
        """Validate, journal and apply a player's orders for the current round (A16, A20)."""
        async with self.lock:
            request = fingerprint({"orders": orders, "draft": bool(draft)})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                if not draft:  # (the first try may have been journaled by a shard that died before closing)
                    await self._maybe_close_early()
                return replayed
            engine = self._check_playing(seat)
            if version < self.round_version:
                raise StaleVersion(f"version {version} is older than this round, which opened at version "
                                   f"{self.round_version}; fetch the view and resubmit", field="version",
                                   rule="A16")
            if version > self.version:
                raise InvalidOrder(f"version {version} is newer than the game's version {self.version}",
                                   field="version", rule="A16")
            if self.submit_count.get(seat, 0) >= SUBMISSIONS_PER_ROUND:
                raise RateLimited(f"at most {SUBMISSIONS_PER_ROUND} submissions per round", rule="A16",
                                  field="orders")
            if engine.step(self.state).kind != SIMULTANEOUS:
                # a game played only by actions refuses orders under its own rule (Arcmage: M25,
                # INVALID_ARGUMENT order/illegal, as SubmitOrdersRequest.arcmage documents)
                if hasattr(engine, "validate"):
                    engine.validate(self.state, seat, orders)
                raise NotYourTurn("this step is a turn, not a round of orders: send an action", field="orders",
                                  rule="A16")
            engine.validate(self.state, seat, orders)  # names its own rule for "not your turn"
            if seat not in expected_players(engine, self.state):
                raise NotYourTurn("this player is not expected to act now", field="orders", rule="A16")
            await self._commit(journal.Submit(seat=seat, round=self.state.round, orders=orders, draft=bool(draft),
                                              key=key, request=request, at=self.now_ms()))
            ack = {"version": self.version, "round": self.state.round, "submitted": not draft,
                   "replayed": False}
            if not draft:
                await self._maybe_close_early()
            return ack

    async def set_standing(self, seat: int, standing: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        """Replace the player's standing orders (A70–A74): checked by the engine against the state
        as the player knows it, journaled, applied."""
        async with self.lock:
            request = fingerprint({"standing": standing})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if self.act_count.get(seat, 0) >= ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {ACTIONS_PER_ROUND} changes and actions per round", rule="A70",
                                  field="standing")
            normalised = standing_of(engine).check_standing(self.state, seat, standing)
            await self._commit(journal.Standing(seat=seat, standing=normalised, key=key, request=request,
                                                at=self.now_ms()))
            return {"version": self.version, "replayed": False}

    async def act(self, seat: int, action: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        """An immediate action (chat, bank, trade): checked by the engine, journaled, applied."""
        async with self.lock:
            request = fingerprint({"action": action})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if self.act_count.get(seat, 0) >= ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {ACTIONS_PER_ROUND} actions per round", rule="A53", field="action")
            engine.act(self.state, seat, action)  # validates; the result is recomputed by apply
            await self._commit(journal.Act(seat=seat, action=action, key=key, request=request, at=self.now_ms()))
            return {**self.act_answer, "replayed": False}  # (what apply made of it)

    def _humans_expected(self) -> list[int]:
        engine = self._engine()
        return [s for s in expected_players(engine, self.state) if not self.seats[s].bot]

    async def _maybe_close_early(self) -> None:
        """A17: close once every connected expected player is done; with nobody connected, wait.
        (A turn or window ends by the actions themselves.)"""
        if self.status != RUNNING or self._engine().step(self.state).kind != SIMULTANEOUS:
            return
        humans = self._humans_expected()
        connected = await self.store.connected(self.game_id, humans)
        if not connected:
            return
        if connected <= self._done():
            await self._close(early=True)

    def _done(self) -> set[int]:
        """The seats that submitted "done" (not a draft) this round."""
        return {s for s, sub in self.submissions.items() if not sub.draft}

    async def _standing_actions(self, engine: Core) -> None:
        """A74: the automatic trades of players who did not submit, each journaled as an action."""
        orders = standing_of(engine)
        for seat in expected_players(engine, self.state):
            standing = self.standing.get(seat)
            if not standing or seat in self.submissions:
                continue
            for action in orders.standing_actions(engine.view(self.state, seat), standing):
                try:
                    engine.act(self.state, seat, action)
                except GameError as exc:  # e.g. the offer was taken meanwhile: skip it
                    log.info("standing action of seat %d in %s skipped: %s", seat, self.game_id, exc)
                    continue
                await self._commit(journal.Act(seat=seat, action=action, key="", request="", at=self.now_ms()))

    async def _close(self, *, early: bool) -> None:
        """Close the round: submitted orders stand, completed by the standing orders for units
        without one; the standing orders play everyone else (A70, S9)."""
        engine = rounds_of(self._engine())
        standing_orders = standing_of(engine)
        await self._standing_actions(engine)
        orders: dict[str, Any] = {}
        for seat in expected_players(engine, self.state):
            sub = self.submissions.get(seat)
            standing = self.standing.get(seat) or {}
            if sub is not None and not standing:
                orders[str(seat)] = sub.orders
                continue
            with metrics.AUTOPILOT.time():
                view = engine.view(self.state, seat)
                proposal = (standing_orders.complete_orders(view, standing, sub.orders) if sub is not None
                            else standing_orders.autopilot(view, standing or None))
            try:
                engine.validate(self.state, seat, proposal)
            except GameError:
                log.exception("autopilot produced invalid orders in %s; seat %d plays its own or nothing",
                              self.game_id, seat)
                proposal = sub.orders if sub is not None else {}
            orders[str(seat)] = proposal
        await self._commit(journal.Close(round=self.state.round, orders=orders, early=early, at=self.now_ms()))
        metrics.ROUNDS_CLOSED.labels("early" if early else "deadline").inc()
        if self.status == OVER:
            await self._retire()
