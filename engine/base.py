"""The game contract every engine implements (see ``shared/design.md``, "Engine contract").

An engine is a module-level object satisfying :class:`Game`.  It is pure: no I/O, no clock, no
logging, no module-level randomness.  States are plain objects that serialise losslessly with
``to_dict`` / ``Game.state_from_dict``; all randomness comes from the seeded :class:`engine.rng.Rng`
held in the state, so replaying a journal of orders and actions from the seed gives the same state
byte for byte.  No method mutates a state it is given: ``resolve`` and ``act`` return new ones.

Players are seat numbers ``0 .. players-1``.  Orders, actions, views and events are
JSON-serialisable dicts whose keys match the field names of the game's protobuf messages
(snake_case), so the gateway converts them with protobuf's dict mapping and nothing else.

Flow of one round, as a game actor drives it::

    state = game.new_game(config, seed)
    while game.outcome(state) is None:
        # between rounds, at once, in arrival order (journaled like submissions):
        state, events = game.act(state, p, {"chat": {"text": "hi"}})   # bank, offers, chat...
        for p in game.expected_players(state):      # who acts this round
            orders[p] = ... game.validate(state, p, orders[p]) ...
        # at the close: game.standing_actions(view, standing[p]) applied with act (refusals skipped);
        # absent players: game.autopilot(game.view(state, p), standing[p]); players who submitted:
        # game.complete_orders(game.view(state, p), standing[p], orders[p])
        state, events = game.resolve(state, orders)  # events carry their audience
        # standing[p] = game.standing_after_round(standing[p], orders[p])

An *action* (``act``) is a dict with exactly one key naming its kind, whose value holds the kind's
fields: ``{"chat": {"text": "hi", "to": 1}}`` in every game (``to`` left out: everyone), plus the
game's own kinds (Archipelago: ``bank``, ``offer``, ``accept``).  Bots and load tests get random
legal orders from ``random_orders(view, seed)``; an agent's "legal moves" tool (A90) lists what the
player may do from ``legal_moves(view, unit)``; both, like ``autopilot``, see only the player's view.

*Standing orders* are per-player plain JSON checked by ``check_standing`` (and stored, normalised,
by the services); ``autopilot``, ``complete_orders`` and ``standing_actions`` read them together
with the player's view, never the state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

JSON = Any
Orders = dict[str, Any]


@dataclass(frozen=True)
class Event:
    """Something that happened while resolving a round.

    ``audience`` is the set of seats that may learn of it; ``None`` means every player.  The engine
    cuts events to their audience when it creates them (one event per distinct audience), so a
    gateway never filters: it sends a player exactly the events whose audience includes it.
    """

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)
    audience: frozenset[int] | None = None

    def visible_to(self, player: int) -> bool:
        return self.audience is None or player in self.audience

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "data": dict(self.data),
            "audience": None if self.audience is None else sorted(self.audience),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        aud = d.get("audience")
        return cls(kind=d["kind"], data=dict(d.get("data") or {}),
                   audience=None if aud is None else frozenset(int(p) for p in aud))


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winning seats (several for a shared win), ``draw`` when nobody won."""

    winners: tuple[int, ...]
    draw: bool
    reason: str
    scores: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "draw": self.draw, "reason": self.reason,
                "scores": list(self.scores)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Outcome:
        return cls(winners=tuple(d["winners"]), draw=bool(d["draw"]), reason=str(d["reason"]),
                   scores=tuple(d.get("scores") or ()))


#: the kinds of :class:`Step`
SIMULTANEOUS, TURN, WINDOW, OVER = "simultaneous", "turn", "window", "over"
#: the deadline kinds a step runs on (the services turn each into seconds by the game's speed)
ROUND_DEADLINE, TURN_DEADLINE, RESPONSE_DEADLINE = "round", "turn", "response"


@dataclass(frozen=True)
class Step:
    """Who may act now, and how this step ends (OpenSpiel's ``current_player()``, boardgame.io's
    active players and stages).

    - ``SIMULTANEOUS``: every seat of ``players`` submits orders (``validate``); the step ends when the
      round closes (``resolve``, all orders at once) — Archipelago's and Salvo's rounds.
    - ``TURN``: one acting seat (``players == (active,)``) applies actions one at a time as they
      arrive (``apply_action``); the step ends when an action ends it (e.g. the turn passes on).
    - ``WINDOW``: several seats (``players``, those yet to answer, in the order they answer) may each
      answer or pass; it ends when every one has passed (Arcmage's stack and response windows).
    - ``OVER``: nobody acts (``players == ()``).

    ``deadline`` is the kind of deadline the step runs on (``ROUND_DEADLINE``, ``TURN_DEADLINE``,
    ``RESPONSE_DEADLINE``; ``""`` when over); ``active`` is whose turn it is (-1 in simultaneous rounds).
    """

    kind: str
    players: tuple[int, ...]
    deadline: str = ROUND_DEADLINE
    active: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "players": list(self.players), "deadline": self.deadline,
                "active": self.active}


@runtime_checkable
class GameState(Protocol):
    """What every game's state offers to the services."""

    version: int  # bumps every time the state changes (each resolved round)
    round: int  # 0 = setup/deployment round, then 1, 2, ...

    def to_dict(self) -> dict[str, Any]: ...


class Game(Protocol):
    """The engine contract.  Implementations are stateless module-level objects."""

    name: str
    min_players: int
    max_players: int

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a creation config (``players`` plus game options), fill defaults.

        Raises :class:`engine.errors.InvalidOrder` naming the bad field."""
        ...

    def new_game(self, config: Mapping[str, Any], seed: int) -> Any: ...

    def state_from_dict(self, d: Mapping[str, Any]) -> Any: ...

    def view(self, state: Any, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """Everything ``player`` may know, nothing else.  ``events`` are the last round's, as
        ``resolve`` returned them; a game whose view shows them keeps those addressed to ``player``."""
        ...

    def expected_players(self, state: Any) -> list[int]:
        """Seats expected to submit orders in the current round (empty once the game is over)."""
        ...

    def validate(self, state: Any, player: int, orders: Mapping[str, Any]) -> None:
        """Raise an :class:`engine.errors.GameError` if ``orders`` may not be submitted now."""
        ...

    def resolve(self, state: Any, orders_by_player: Mapping[int, Mapping[str, Any]]
                ) -> tuple[Any, list[Event]]:
        """Close the round.  Does not mutate ``state``; returns the next state and the events."""
        ...

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None
                  ) -> Orders:
        """Orders for a player who did not submit, computed from that player's view only."""
        ...

    def check_standing(self, state: Any, player: int, standing: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``player``'s standing orders (the autopilot's instructions for its absent rounds and
        its units without orders) and return them normalised (defaults filled, canonical order).

        Raises an :class:`engine.errors.GameError` naming the field and the rule, and then nothing
        changed (:class:`InvalidOrder` for unknown keys, kinds and wrong types).  A game without
        standing orders accepts only ``{}``."""
        ...

    def default_standing(self, state: Any, player: int) -> dict[str, Any]:
        """Standing orders for a seat the autopilot plays alone (a seat the host filled); normalised,
        ``check_standing`` accepts them (``{}`` in a game without standing orders)."""
        ...

    def complete_orders(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None,
                        orders: Mapping[str, Any]) -> Orders:
        """A submission (that passed ``validate``) completed by the standing orders where it leaves
        something undecided; from the player's view only.  The result passes ``validate``."""
        ...

    def standing_actions(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None
                         ) -> list[dict[str, Any]]:
        """The immediate actions (``act`` shapes) the standing orders take for the player at the
        close of a round, before its orders are completed; from its view only.  The services apply
        them in order and skip any that ``act`` refuses."""
        ...

    def standing_after_round(self, standing: Mapping[str, Any] | None, orders_used: Mapping[str, Any]
                             ) -> dict[str, Any]:
        """The standing orders to keep after a round whose orders for the player were
        ``orders_used`` (e.g. built entries leave a build queue)."""
        ...

    def act(self, state: Any, player: int, action: Mapping[str, Any]) -> tuple[Any, list[Event]]:
        """An immediate action between rounds (bank, trade offers and answers, chat).

        ``action`` has exactly one key naming its kind, e.g. ``{"chat": {"text": "hi", "to": 1}}``.
        Validated first: raises an :class:`engine.errors.GameError` naming the field (``action``,
        ``chat.text``, ...) and the rule, and then nothing changed (:class:`InvalidOrder` for an
        unknown kind, zero or several keys, wrong types; :class:`RateLimited` past a per-round
        limit; :class:`GameOver` for an action that would change a finished game — chat stays
        allowed).  Does not mutate ``state``; returns the new state and the events, each carrying
        its audience."""
        ...

    def random_orders(self, view: Mapping[str, Any], seed: int) -> Orders:
        """Random orders that pass ``validate`` for the viewing player, computed from its view only.

        Deterministic for a given ``(view, seed)`` (a local seeded generator, never the module-level
        one).  Empty orders (``{}``) when the player may not act (game over, not its turn)."""
        ...

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        """What the viewing player may do now (A90, the agent's "legal moves" tool), computed from
        its view only, so the answer reveals nothing the view does not.

        Plain JSON with a ``"phase"`` key (``"over"`` once the game has ended, then nothing else);
        the other keys are the game's own (its module says which), each option one that ``validate``
        accepts on its own.  ``unit`` asks about one of the player's units only; a game without
        units, or an id that is not one of the player's units in the view, raises an
        :class:`engine.errors.GameError` naming the field ``unit``."""
        ...

    def outcome(self, state: Any) -> Outcome | None: ...


def canonical_json(obj: Any) -> bytes:
    """The one byte encoding of plain data used for hashing and journaling."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def state_hash(state: GameState) -> str:
    """SHA-256 of the canonical encoding of a state: equal hashes, equal games."""
    return hashlib.sha256(canonical_json(state.to_dict())).hexdigest()


def player_seat(value: Any, players: int, field_name: str = "player") -> int:
    """Parse a seat number, raising InvalidOrder naming ``field_name``."""
    from engine.errors import InvalidOrder

    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
        raise InvalidOrder(f"must be a seat number 0..{players - 1}", field=field_name)
    return value

