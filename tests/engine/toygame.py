"""Toy count: a tiny turn-based game with response windows, for testing the turn part of the engine
contract (:class:`engine.base.Turns`) and the services that host it.  Registered only by the tests
that use it (:func:`registered`), never in :data:`engine.GAMES` for real.

Rules (ids T1–T6):

- T1  2–3 players (``players``); seat 0 plays first, then seat 1, ... in turn order.  Round ``r`` is
      the ``r``-th turn (round 1 first).
- T2  On its turn the active seat adds 1, 2 or 3 to the shared count: ``{"add": {"n": 1..3}}``.
- T3  After an add that leaves the count below ``target``, the other seats that have not answered
      this round, in turn order after the active one, get a response window: each may
      ``{"answer": {}}`` (take 1 off the count, at least 0, and score a point) or ``{"pass": {}}``,
      once, in any order; the window closes when each has answered or passed.  If one answered, the
      active seat's turn goes on (it adds again); else (or with nobody left to answer) the next
      seat's turn begins.  A seat answers at most once per round.
- T4  Only the active seat acts on a turn, only the seats yet to answer in a window (NotYourTurn,
      rule T4, otherwise).
- T5  The seat whose add brings the count to ``target`` (default 10) wins.  After round
      ``max_rounds`` (default 30) the game ends: the most points win, equal points share the win
      (a draw when nobody scored).
- T6  Chat (``act``) at any time, at most 10 messages per seat per round (A53).

Parameters: ``players`` (2), ``target`` (10), ``max_rounds`` (30), ``deadlines`` (optional: the
step deadlines in seconds, ``{"turn"?: s, "response"?: s}``, :data:`engine.base.DEADLINES_KEY`).

Events: ``added`` ``{"seat", "n", "count"}`` and ``answered`` / ``passed`` ``{"seat"}`` to everyone;
``your_turn`` ``{"round"}`` to the next active seat only; ``game_over`` with the outcome.  The
view hides nothing but other seats' ``your_turn`` events (there is nothing secret in this game).
Autopilot: adds what reaches the target, else 1; passes in windows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.actions import MAX_CHATS, chat_event, check_chat, parse_action
from engine.base import (
    DEADLINES_KEY,
    RESPONSE_DEADLINE,
    SPECTATOR,
    STEP_OVER,
    TURN,
    TURN_DEADLINE,
    WINDOW,
    Event,
    Outcome,
    Step,
    player_seat,
)
from engine.errors import GameOver, IllegalOrder, InvalidOrder, NotYourTurn, RateLimited
from engine.rng import Rng

NAME = "toycount"
DEFAULT_CONFIG: dict[str, Any] = {"players": 2, "target": 10, "max_rounds": 30}
TURN_ACTIONS: dict[str, tuple[str, ...]] = {"add": ("n",), "answer": (), "pass": ()}
CHAT: dict[str, tuple[str, ...]] = {"chat": ("text", "to")}


@dataclass(frozen=True)
class CountState:
    players: int
    target: int
    max_rounds: int
    version: int = 0
    round: int = 1
    count: int = 0
    active: int = 0
    window: tuple[int, ...] = ()  # seats yet to answer; empty: the active seat's turn
    answered: tuple[int, ...] = ()  # seats that answered this round
    responded: bool = False  # someone answered in the open window
    scores: tuple[int, ...] = ()
    chats: tuple[int, ...] = ()
    outcome: Outcome | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"game": NAME, "players": self.players, "target": self.target, "max_rounds": self.max_rounds,
                "version": self.version, "round": self.round, "count": self.count, "active": self.active,
                "window": list(self.window), "answered": list(self.answered), "responded": self.responded,
                "scores": list(self.scores),
                "chats": list(self.chats),
                "outcome": None if self.outcome is None else self.outcome.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CountState:
        out = d.get("outcome")
        return cls(players=int(d["players"]), target=int(d["target"]), max_rounds=int(d["max_rounds"]),
                   version=int(d["version"]), round=int(d["round"]), count=int(d["count"]),
                   active=int(d["active"]), window=tuple(int(s) for s in d["window"]),
                   answered=tuple(int(s) for s in d["answered"]), responded=bool(d["responded"]),
                   scores=tuple(int(s) for s in d["scores"]), chats=tuple(int(c) for c in d["chats"]),
                   outcome=None if out is None else Outcome.from_dict(out))


def _positive(config: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidOrder(f"{key} must be {low}..{high}", field=key, rule="T1" if key == "players" else "T5")
    return value


class CountGame:
    """Toy count (module docstring): :class:`engine.base.Core` and :class:`engine.base.Turns`."""

    name = NAME
    over_rule = "T5"
    min_players = 2
    max_players = 3

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(config, Mapping):
            raise InvalidOrder("config must be an object", field="config")
        for key in config:
            if key not in DEFAULT_CONFIG and key != DEADLINES_KEY:
                raise InvalidOrder(f"unknown option {key!r}", field=str(key))
        out = {**DEFAULT_CONFIG, **{k: v for k, v in config.items() if k != DEADLINES_KEY}}
        norm: dict[str, Any] = {"players": _positive(out, "players", 2, 3),
                                "target": _positive(out, "target", 2, 99),
                                "max_rounds": _positive(out, "max_rounds", 1, 999)}
        if DEADLINES_KEY in config:
            given = config[DEADLINES_KEY]
            if not isinstance(given, Mapping) or not set(given) <= {TURN_DEADLINE, RESPONSE_DEADLINE}:
                raise InvalidOrder("deadlines is {turn?: seconds, response?: seconds}", field=DEADLINES_KEY)
            for kind, seconds in given.items():
                if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 1:
                    raise InvalidOrder("a deadline is at least 1 s", field=f"{DEADLINES_KEY}.{kind}")
            norm[DEADLINES_KEY] = dict(given)
        return norm

    def new_game(self, config: Mapping[str, Any], seed: int) -> CountState:
        cfg = self.normalize_config(config)
        n = cfg["players"]
        return CountState(players=n, target=cfg["target"], max_rounds=cfg["max_rounds"],
                          scores=(0,) * n, chats=(0,) * n)

    def state_from_dict(self, d: Mapping[str, Any]) -> CountState:
        return CountState.from_dict(d)

    def step(self, state: CountState) -> Step:
        if state.outcome is not None:
            return STEP_OVER
        if state.window:
            return Step(WINDOW, state.window, RESPONSE_DEADLINE, state.active)
        return Step(TURN, (state.active,), TURN_DEADLINE, state.active)

    def view(self, state: CountState, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        player_seat(player, state.players)
        step = self.step(state)
        v: dict[str, Any] = {"phase": "over" if step.kind == "over" else step.kind, "you": player,
                             "round": state.round, "version": state.version, "count": state.count,
                             "target": state.target, "scores": list(state.scores), "active": state.active,
                             "window": list(state.window)}
        if state.outcome is not None:
            v["outcome"] = state.outcome.to_dict()
        return v

    def spectator_view(self, state: CountState, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """A player's view with ``you`` = -1: nothing in this game is secret."""
        return {**self.view(state, 0), "you": SPECTATOR}

    def outcome(self, state: CountState) -> Outcome | None:
        return state.outcome

    def act(self, state: CountState, player: int, action: Mapping[str, Any]) -> tuple[CountState, list[Event]]:
        player = player_seat(player, state.players)
        _, fields = parse_action(action, CHAT)
        text, to = check_chat(fields.get("text"), fields.get("to"), player, state.players)
        if state.chats[player] >= MAX_CHATS:
            raise RateLimited(f"at most {MAX_CHATS} chat messages per round", rule="A53", field="chat")
        chats = tuple(c + (s == player) for s, c in enumerate(state.chats))
        return replace(state, chats=chats), [chat_event(player, text, to)]

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        if unit is not None:
            raise InvalidOrder("toy count has no units", field="unit")
        if view.get("outcome") is not None:
            return {"phase": "over"}
        return {"phase": str(view["phase"]), "actions": self.legal_actions(view)}

    # -- the turn part --------------------------------------------------------------------------------

    def apply_action(self, state: CountState, player: int, action: Mapping[str, Any]
                     ) -> tuple[CountState, list[Event]]:
        player = player_seat(player, state.players)
        if state.outcome is not None:
            raise GameOver("the game is over", rule="T5")
        kind, fields = parse_action(action, TURN_ACTIONS)
        if kind == "add":
            if state.window or player != state.active:
                raise NotYourTurn(f"it is not seat {player}'s turn", rule="T4", field="action")
            n = fields.get("n")
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 3:
                raise IllegalOrder("add 1, 2 or 3", rule="T2", field="add.n")
            return self._added(state, player, n)
        if player not in state.window:
            raise NotYourTurn(f"seat {player} has no window to answer", rule="T4", field="action")
        window = tuple(s for s in state.window if s != player)
        if kind == "answer":
            scores = tuple(p + (s == player) for s, p in enumerate(state.scores))
            new = replace(state, count=max(0, state.count - 1), scores=scores, window=window,
                          answered=(*state.answered, player), responded=True)
            events = [Event("answered", {"seat": player})]
        else:
            new = replace(state, window=window)
            events = [Event("passed", {"seat": player})]
        new = replace(new, version=state.version + 1)
        if not window:
            if new.responded:  # T3: the active seat's turn goes on
                new = replace(new, responded=False)
            else:
                new, more = self._next_turn(new)
                events += more
        return new, events

    def _added(self, state: CountState, player: int, n: int) -> tuple[CountState, list[Event]]:
        count = state.count + n
        new = replace(state, count=count, version=state.version + 1)
        events = [Event("added", {"seat": player, "n": n, "count": count})]
        if count >= state.target:
            outcome = Outcome(winners=(player,), draw=False, reason="target", scores=state.scores)
            return replace(new, outcome=outcome), [*events, Event("game_over", outcome.to_dict())]
        others = tuple(s for i in range(1, state.players)
                       if (s := (player + i) % state.players) not in state.answered)
        if not others:
            new, more = self._next_turn(new)
            return new, events + more
        return replace(new, window=others), events

    def _next_turn(self, state: CountState) -> tuple[CountState, list[Event]]:
        if state.round >= state.max_rounds:
            best = max(state.scores)
            winners = tuple(s for s, p in enumerate(state.scores) if p == best) if best else ()
            outcome = Outcome(winners=winners, draw=not winners, reason="max_rounds", scores=state.scores)
            return replace(state, outcome=outcome), [Event("game_over", outcome.to_dict())]
        nxt = (state.active + 1) % state.players
        new = replace(state, active=nxt, round=state.round + 1, chats=(0,) * state.players, answered=())
        return new, [Event("your_turn", {"round": new.round}, frozenset({nxt}))]

    def legal_actions(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        you = view["you"]
        if view.get("outcome") is not None:
            return []
        if view["window"]:
            return [{"answer": {}}, {"pass": {}}] if you in view["window"] else []
        return [{"add": {"n": n}} for n in (1, 2, 3)] if you == view["active"] else []

    def random_action(self, view: Mapping[str, Any], seed: int) -> dict[str, Any]:
        legal = self.legal_actions(view)
        return legal[Rng(seed).randbelow(len(legal))] if legal else {}

    def autopilot_action(self, view: Mapping[str, Any]) -> dict[str, Any]:
        legal = self.legal_actions(view)
        if not legal:
            return {}
        if view["window"]:
            return {"pass": {}}
        left = int(view["target"]) - int(view["count"])
        return {"add": {"n": left if left <= 3 else 1}}


GAME = CountGame()


@contextlib.contextmanager
def registered() -> Iterator[str]:
    """Toy count in :data:`engine.GAMES` for the block (its kind name), removed after."""
    from engine import GAMES

    GAMES[NAME] = __name__
    try:
        yield NAME
    finally:
        del GAMES[NAME]
