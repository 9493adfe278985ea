"""The game contract every engine implements (see ``shared/design.md``, "Engine contract").

An engine is a module-level object.  It is pure: no I/O, no clock, no logging, no module-level
randomness.  States are plain objects that serialise losslessly with ``to_dict`` /
``state_from_dict``; all randomness comes from the seeded :class:`engine.rng.Rng` held in the state,
so replaying a journal of orders and actions from the seed gives the same state byte for byte.  No
method mutates a state it is given: ``resolve``, ``act`` and ``apply_action`` return new ones.

Players are seat numbers ``0 .. players-1``.  Orders, actions, views and events are
JSON-serialisable dicts whose keys match the field names of the game's protobuf messages
(snake_case), so the gateway converts them with protobuf's dict mapping and nothing else.

The parts of the contract:

- :class:`Core` — every game: ``normalize_config``, ``new_game``, ``state_from_dict``, ``view``,
  ``spectator_view``, ``step``, ``act``, ``legal_moves``, ``outcome``.
- :class:`Rounds` — a game with simultaneous steps: ``validate``, ``resolve``, ``random_orders``,
  ``autopilot`` (Archipelago, Salvo).
- :class:`Turns` — a game with turn or window steps: ``apply_action``, ``legal_actions``,
  ``random_action``, ``autopilot_action`` (Arcmage).
- :class:`Standing` — optional standing orders: ``check_standing``, ``default_standing``,
  ``complete_orders``, ``standing_actions``, ``standing_after_round``, ``autopilot``
  (Archipelago).  :func:`standing_of` gives a game's own, or :class:`NoStanding` (only ``{}``).

:class:`Game`, what ``engine.get_game`` is typed as, is :class:`Core` and :class:`Rounds` plus the
``expected_players`` method that the round games registered so far keep; a turn-only game is
:class:`Core` and :class:`Turns` (:class:`TurnGame`).

One description says who may act now and how the current step ends: ``step(state)`` returns a
:class:`Step` — ``SIMULTANEOUS`` (every seat of ``players`` submits orders; the round closes with
``resolve``), ``TURN`` (one acting seat applies actions one at a time), ``WINDOW`` (several seats
may each answer or pass), ``OVER`` — with the kind of deadline it runs on.  Every other "who may
act" derives from it: :func:`expected_players` is ``step(state).players`` (the games' own
``expected_players`` methods, kept for their callers, return exactly that).  Each method of a part
is required of a game only if its steps need the part: :func:`rounds_of` / :func:`turns_of` give a
game typed as that part, or raise ``TypeError`` naming what it lacks.

Flow of a simultaneous round, as a game actor drives it (``SIMULTANEOUS``, ``ROUND_DEADLINE``)::

    state = game.new_game(config, seed)
    standing = standing_of(game)
    while (step := game.step(state)).kind != OVER:
        # at any time, at once, in arrival order (journaled like submissions):
        state, events = game.act(state, p, {"chat": {"text": "hi"}})   # bank, offers, chat...
        for p in step.players:                      # who submits this round
            orders[p] = ... game.validate(state, p, orders[p]) ...     # resubmitting replaces
        # at the close (deadline, or every connected player done): standing.standing_actions(view,
        # standing[p]) applied with act (refusals skipped); absent players: standing.autopilot(
        # game.view(state, p), standing[p]); players who submitted: standing.complete_orders(
        # game.view(state, p), standing[p], orders[p])
        state, events = game.resolve(state, orders)  # all at once; events carry their audience
        # standing[p] = standing.standing_after_round(standing[p], orders[p])

Flow of a turn-based game (``TURN`` with ``TURN_DEADLINE``, ``WINDOW`` with
``RESPONSE_DEADLINE``): actions are applied one at a time, as they arrive::

    while (step := game.step(state)).kind != OVER:
        # a seat of step.players acts (TURN: step.active alone; WINDOW: those yet to answer):
        state, events = game.apply_action(state, p, action)   # refused: NotYourTurn naming the rule
        # each action may end the step (the turn passes on, a window opens, everyone passed):
        # the services read game.step(state) again after every action.
        # when the step's deadline passes: for each seat of the step, until the step changes,
        #     action = game.autopilot_action(game.view(state, seat)); apply_action(...)

A step lasts :func:`step_seconds` ``(config, deadline_s, step.deadline)``: the game's deadline for
a round or a turn, an eighth of it (at least 1 s) for a response window, unless the normalised
config gives seconds per deadline kind under :data:`DEADLINES_KEY` (``{"turn": 120, "response":
15}``).

A game may mix both (a simultaneous setup round, then turns): the step decides which flow applies.

An *action* of ``act`` is a dict with exactly one key naming its kind, whose value holds the kind's
fields: ``{"chat": {"text": "hi", "to": 1}}`` in every game (``to`` left out: everyone), plus the
game's own kinds (Archipelago: ``bank``, ``offer``, ``accept``).  ``act`` is allowed whatever the
step (chat never waits for a turn); ``apply_action`` takes the step's actions, in the same one-key
shape (a pass in a window is an action too, e.g. ``{"pass": {}}``).  Bots and load tests get random
legal orders from ``random_orders(view, seed)`` and random legal actions from ``random_action(view,
seed)``; an agent's "legal moves" tool (A90) lists what the player may do from ``legal_moves(view,
unit)``; all of them, like both autopilots, see only the player's view.

*Standing orders* are per-player plain JSON checked by ``check_standing`` (and stored, normalised,
by the services); ``autopilot``, ``complete_orders`` and ``standing_actions`` read them together
with the player's view, never the state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
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

    def is_public(self, players: int) -> bool:
        """Whether a spectator may see it: every seat ``0 .. players-1`` receives it, and it is not
        a chat addressed to one seat (private even when sender and addressee are all the seats)."""
        if self.kind == "chat" and self.data.get("to") is not None:
            return False
        return self.audience is None or all(p in self.audience for p in range(players))

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

    version: int  # bumps every time the state changes (each resolved round, each applied action)
    round: int  # 0 = setup/deployment round, then 1, 2, ... (a turn-based game: its turn count)

    def to_dict(self) -> dict[str, Any]: ...


class Core(Protocol):
    """What every game implements, whatever its steps.  Implementations are stateless objects."""

    name: str
    over_rule: str  # the rule that ends a game: a call after the end names it (GameOver)
    min_players: int
    max_players: int

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a creation config (``players`` plus game options), fill defaults.

        Raises :class:`engine.errors.InvalidOrder` naming the bad field.  A game whose steps run on
        turn or response deadlines may give their lengths under :data:`DEADLINES_KEY` (see
        :func:`step_seconds`)."""
        ...

    def new_game(self, config: Mapping[str, Any], seed: int) -> Any: ...

    def state_from_dict(self, d: Mapping[str, Any]) -> Any: ...

    def view(self, state: Any, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """Everything ``player`` may know, nothing else.  ``events`` are the last round's, as
        ``resolve`` returned them; a game whose view shows them keeps those addressed to ``player``."""
        ...

    def spectator_view(self, state: Any, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """What a spectator (no seat) sees: what every player knows now, nothing else; once the game
        is over (``outcome(state)`` is not None) the whole game — every hidden card, ship or unit
        revealed (never the seed, A9).

        The same shape as :meth:`view` (its keys are a subset of a player view's keys, each with the
        same type), so the services convert it with the same code; the viewer's seat field
        (``you`` / ``player``) is :data:`SPECTATOR` and the keys private to a seat (own stock, units,
        hand, fleet, pending offers, private chat, legal actions ...) are absent or empty while the
        game runs.  ``events`` are the last round's or action's; the caller passes those a spectator
        may see (:func:`public_events`: every seat receives them, and no chat to one seat), and the
        game keeps only those anyway.  Every fact it holds while the game runs is in every player's
        view at that moment (each game's module says how its facts map onto the shape, e.g. Salvo's
        two sides)."""
        ...

    def step(self, state: Any) -> Step:
        """Who may act now and how this step ends (:class:`Step`); ``OVER`` (no players, deadline
        ``""``) exactly when ``outcome(state)`` is not None.  The one source of "who may act":
        :func:`expected_players` and the services read it."""
        ...

    def act(self, state: Any, player: int, action: Mapping[str, Any]) -> tuple[Any, list[Event]]:
        """An immediate action, whatever the step (bank, trade offers and answers, chat).

        ``action`` has exactly one key naming its kind, e.g. ``{"chat": {"text": "hi", "to": 1}}``.
        Validated first: raises an :class:`engine.errors.GameError` naming the field (``action``,
        ``chat.text``, ...) and the rule, and then nothing changed (:class:`InvalidOrder` for an
        unknown kind, zero or several keys, wrong types; :class:`RateLimited` past a per-round
        limit; :class:`GameOver` for an action that would change a finished game — chat stays
        allowed).  Does not mutate ``state``; returns the new state and the events, each carrying
        its audience."""
        ...

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        """What the viewing player may do now (A90, the agent's "legal moves" tool), computed from
        its view only, so the answer reveals nothing the view does not.

        Plain JSON with a ``"phase"`` key (``"over"`` once the game has ended, then nothing else);
        the other keys are the game's own (its module says which), each option one that ``validate``
        (or ``apply_action``) accepts on its own.  ``unit`` asks about one of the player's units
        only; a game without units, or an id that is not one of the player's units in the view,
        raises an :class:`engine.errors.GameError` naming the field ``unit``."""
        ...

    def outcome(self, state: Any) -> Outcome | None: ...


class Rounds(Protocol):
    """The part of a game with ``SIMULTANEOUS`` steps: orders collected, then resolved together."""

    def validate(self, state: Any, player: int, orders: Mapping[str, Any]) -> None:
        """Raise an :class:`engine.errors.GameError` if ``orders`` may not be submitted now (a seat
        not in ``step(state).players``: :class:`NotYourTurn` naming the game's rule)."""
        ...

    def resolve(self, state: Any, orders_by_player: Mapping[int, Mapping[str, Any]]
                ) -> tuple[Any, list[Event]]:
        """Close the round.  Does not mutate ``state``; returns the next state and the events."""
        ...

    def random_orders(self, view: Mapping[str, Any], seed: int) -> Orders:
        """Random orders that pass ``validate`` for the viewing player, computed from its view only.

        Deterministic for a given ``(view, seed)`` (a local seeded generator, never the module-level
        one).  Empty orders (``{}``) when the player may not act (game over, not its turn)."""
        ...

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None
                  ) -> Orders:
        """Orders for a player who did not submit, computed from that player's view only (and its
        standing orders, in a game that has them — then this is :meth:`Standing.autopilot`)."""
        ...


class Turns(Protocol):
    """The part of a game with ``TURN`` / ``WINDOW`` steps: actions applied one at a time."""

    def apply_action(self, state: Any, player: int, action: Mapping[str, Any]) -> tuple[Any, list[Event]]:
        """Apply one action of a seat of ``step(state).players`` (a pass in a window is an action).

        Validated first: raises an :class:`engine.errors.GameError` naming the field and the rule,
        and then nothing changed — :class:`NotYourTurn` naming the game's rule for a seat that may
        not act now, :class:`GameOver` once the game is over, :class:`InvalidOrder` /
        :class:`IllegalOrder` for a malformed or illegal action.  Does not mutate ``state``;
        returns the new state (``version`` bumped) and the events, each carrying its audience.  The
        step may end with it: callers read ``step`` again."""
        ...

    def legal_actions(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every action the viewing player may take now, each accepted by ``apply_action``; from
        its view only (a JSON copy gives the same list).  ``[]`` when it may not act (not in the
        step's players, game over)."""
        ...

    def random_action(self, view: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """One of ``legal_actions(view)``, deterministic for ``(view, seed)`` (a local seeded
        generator); ``{}`` when there is none."""
        ...

    def autopilot_action(self, view: Mapping[str, Any]) -> dict[str, Any]:
        """The autopilot's action for the viewing seat, from its view only (deterministic for a
        view), accepted by ``apply_action``; ``{}`` when it may not act.  Repeated, it ends the step
        within a bounded number of actions (e.g. passes in windows, finishes a turn)."""
        ...


@runtime_checkable
class Standing(Protocol):
    """Standing orders (A70–A74): optional; :func:`standing_of` gives a game's own or
    :class:`NoStanding`.  Only games with ``SIMULTANEOUS`` steps use them today."""

    def check_standing(self, state: Any, player: int, standing: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``player``'s standing orders (the autopilot's instructions for its absent rounds and
        its units without orders) and return them normalised (defaults filled, canonical order).

        Raises an :class:`engine.errors.GameError` naming the field and the rule, and then nothing
        changed (:class:`InvalidOrder` for unknown keys, kinds and wrong types)."""
        ...

    def default_standing(self, state: Any, player: int) -> dict[str, Any]:
        """Standing orders for a seat the autopilot plays alone (a seat the host filled); normalised,
        ``check_standing`` accepts them."""
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

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None
                  ) -> Orders:
        """Orders for a player who did not submit, from its view and its standing orders."""
        ...


class RoundGame(Core, Rounds, Protocol):
    """A game with simultaneous steps (what :func:`rounds_of` returns)."""


class TurnGame(Core, Turns, Protocol):
    """A game with turn or window steps (what :func:`turns_of` returns)."""


class Game(Core, Rounds, Protocol):
    """What :func:`engine.get_game` is typed as: the core and the round part, which every game
    registered so far (Archipelago, Salvo) implements, with ``expected_players``, which they keep
    for their callers (``step(state).players``: :func:`expected_players`).  A turn-based game
    implements :class:`Core` and :class:`Turns` only; code that may meet one reads the step and goes
    through :func:`rounds_of` / :func:`turns_of` / :func:`standing_of` (the services do)."""

    def expected_players(self, state: Any) -> list[int]:
        """``list(step(state).players)``."""
        ...


#: the methods of each part, as :func:`rounds_of`, :func:`turns_of` and the conformance test check them
CORE_METHODS = ("normalize_config", "new_game", "state_from_dict", "view", "spectator_view", "step", "act",
                "legal_moves", "outcome")
ROUND_METHODS = ("validate", "resolve", "random_orders", "autopilot")
TURN_METHODS = ("apply_action", "legal_actions", "random_action", "autopilot_action")
STANDING_METHODS = ("check_standing", "default_standing", "complete_orders", "standing_actions",
                    "standing_after_round", "autopilot")
#: the viewer's seat in a spectator's view (:meth:`Core.spectator_view`)
SPECTATOR = -1
#: the one step of a finished game
STEP_OVER = Step(OVER, (), deadline="")
#: an optional key of a normalised config: deadline kind (``TURN_DEADLINE``, ``RESPONSE_DEADLINE``,
#: ``ROUND_DEADLINE``) -> seconds, overriding :func:`step_seconds`'s defaults
DEADLINES_KEY = "deadlines"
#: a response window's default length: the game's deadline divided by this (at least 1 s)
RESPONSE_FRACTION = 8


def _lacking(game: Any, methods: Sequence[str]) -> list[str]:
    return [m for m in methods if not callable(getattr(game, m, None))]


def _require(game: Any, methods: Sequence[str], lacks: str) -> None:
    missing = _lacking(game, methods)
    if missing:
        raise TypeError(f"{getattr(game, 'name', game)!r} has no {lacks}: no {', '.join(missing)}")


def rounds_of(game: Any) -> RoundGame:
    """``game`` as a game with simultaneous rounds; ``TypeError`` naming what it lacks otherwise."""
    _require(game, ROUND_METHODS, "simultaneous rounds")
    rounds: RoundGame = game
    return rounds


def turns_of(game: Any) -> TurnGame:
    """``game`` as a game with turns and windows; ``TypeError`` naming what it lacks otherwise."""
    _require(game, TURN_METHODS, "turns")
    turns: TurnGame = game
    return turns


def has_standing(game: Any) -> bool:
    """Whether ``game`` has standing orders of its own (all of :data:`STANDING_METHODS`)."""
    return not _lacking(game, STANDING_METHODS)


class NoStanding:
    """The standing orders of a game that has none: only ``{}`` is accepted, nothing is automatic,
    a submission stands as it is, and the autopilot is the game's own (:meth:`Rounds.autopilot`)."""

    def __init__(self, game: Any) -> None:
        self.game = game

    def check_standing(self, state: Any, player: int, standing: Mapping[str, Any]) -> dict[str, Any]:
        """``{}``; anything else is :class:`engine.errors.InvalidOrder` naming the first key."""
        from engine.errors import InvalidOrder

        player_seat(player, self.game.max_players)
        if not isinstance(standing, Mapping):
            raise InvalidOrder("standing orders are an object", field="standing")
        for key in standing:
            raise InvalidOrder(f"{str(self.game.name).capitalize()} has no standing orders", field=str(key)[:80])
        return {}

    def default_standing(self, state: Any, player: int) -> dict[str, Any]:
        return {}

    def complete_orders(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None,
                        orders: Mapping[str, Any]) -> Orders:
        return dict(orders)

    def standing_actions(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None
                         ) -> list[dict[str, Any]]:
        return []

    def standing_after_round(self, standing: Mapping[str, Any] | None, orders_used: Mapping[str, Any]
                             ) -> dict[str, Any]:
        return {}

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None
                  ) -> Orders:
        orders: Orders = rounds_of(self.game).autopilot(view)
        return orders


def standing_of(game: Any) -> Standing:
    """The game's standing orders: its own when it has all of :data:`STANDING_METHODS`, else
    :class:`NoStanding` (a game with only some of them is an error the conformance test reports)."""
    if has_standing(game):
        own: Standing = game
        return own
    return NoStanding(game)


def expected_players(game: Core, state: Any) -> list[int]:
    """The seats that may act now: ``step(state).players`` (those to submit in a simultaneous
    round, the acting seat of a turn, those yet to answer in a window; none once over)."""
    return list(game.step(state).players)


def public_events(events: Iterable[Event] | None, players: int) -> list[Event]:
    """The events of ``events`` a spectator may see (:meth:`Event.is_public`), in order."""
    return [e for e in events or () if e.is_public(players)]


def step_seconds(config: Mapping[str, Any], deadline_s: float, kind: str) -> float:
    """How long a step with deadline kind ``kind`` lasts, for a game created with ``deadline_s``
    (its speed): ``config[DEADLINES_KEY][kind]`` when the game's config gives it; else
    ``ROUND_DEADLINE`` and ``TURN_DEADLINE``: ``deadline_s``; ``RESPONSE_DEADLINE``:
    ``deadline_s / RESPONSE_FRACTION``, at least 1 s and at most ``deadline_s``."""
    given = config.get(DEADLINES_KEY)
    if isinstance(given, Mapping):
        seconds = given.get(kind)
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            return float(seconds)
    if kind == RESPONSE_DEADLINE:
        return min(deadline_s, max(1.0, deadline_s / RESPONSE_FRACTION))
    return deadline_s


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

