"""Salvo state, order checking, resolution and per-player views (rules S1–S8).

The state holds only hard facts: the configuration, the two placed fleets, every shot fired
(square and round) and the RNG. Everything else — hits, sunk ships, reports, shots allowed — is
computed from them, and a player's view is computed from the state by :meth:`SalvoGame.view`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.actions import MAX_CHATS, chat_event, check_chat, check_keys, parse_action
from engine.base import (
    ROUND_DEADLINE,
    SIMULTANEOUS,
    SPECTATOR,
    STEP_OVER,
    Event,
    Orders,
    Outcome,
    Step,
    expected_players,
    player_seat,
)
from engine.errors import GameOver, IllegalOrder, InvalidOrder, NotYourTurn, RateLimited
from engine.rng import Rng
from engine.salvo.autopilot import autopilot_orders, firing
from engine.salvo.board import ALL_SQUARES, FLEETS, Ship, ShipSpec, coords, parse_square, random_fleet

PLAYERS = 2
MODES = ("salvo", "classic")
FIRST_PLAYER_RULES = ("creator", "random")
DEFAULT_CONFIG: dict[str, Any] = {"players": 2, "mode": "salvo", "fleet": "default",
                                  "first_player": "creator", "max_rounds": 100}
ORDER_KEYS = ("placement", "random_placement", "shots")
#: action kind -> its fields (``act``): chat only
ACTION_KINDS: dict[str, tuple[str, ...]] = {"chat": ("text", "to")}
PLACEMENT_KEYS = ("ship", "bow", "vertical")

REASON_FLEET_SUNK = "fleet_sunk"
REASON_BOTH_SUNK = "both_fleets_sunk"
REASON_MAX_ROUNDS = "max_rounds"
CLASSIC_MAX_ROUNDS = 200


@dataclass(frozen=True)
class Shot:
    """One shot: the square it named and the round it was fired in."""

    square: str
    round: int

    def to_dict(self) -> dict[str, Any]:
        return {"square": self.square, "round": self.round}


Fleets = tuple[tuple[Ship, ...], tuple[Ship, ...]]
ShotLists = tuple[tuple[Shot, ...], tuple[Shot, ...]]


@dataclass
class SalvoState:
    """The full, secret state of one game. Never changed once built: ``resolve`` makes a new one.

    ``fleets[p]`` is player p's own fleet (empty until placement is resolved), ``shots[p]`` the
    shots player p fired at its enemy, in order. ``rng`` is the state of the game's :class:`Rng`.
    ``chats[p]`` counts player p's chat messages this round (A53 limit, reset when a round resolves;
    serialised only when not zero, so states without chat keep their hashes).
    (A plain dataclass, because :class:`engine.base.GameState` declares ``version`` and ``round`` as
    plain attributes; every field holds immutable values, so sharing them between states is safe.)
    """

    mode: str
    fleet: str
    first_player_rule: str
    max_rounds: int
    first_player: int
    rng: int
    version: int = 0
    round: int = 0
    fleets: Fleets = ((), ())
    shots: ShotLists = ((), ())
    outcome: Outcome | None = None
    chats: tuple[int, int] = (0, 0)

    @property
    def config(self) -> dict[str, Any]:
        return {"players": PLAYERS, "mode": self.mode, "fleet": self.fleet,
                "first_player": self.first_player_rule, "max_rounds": self.max_rounds}

    @property
    def fleet_spec(self) -> tuple[ShipSpec, ...]:
        return FLEETS[self.fleet]

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def active_player(self) -> int:
        """Classic mode: whose turn it is (the first player in rounds 0 and 1, then alternating)."""
        return (self.first_player + max(self.round - 1, 0)) % PLAYERS

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "game": "salvo",
            "config": self.config,
            "first_player": self.first_player,
            "rng": self.rng,
            "version": self.version,
            "round": self.round,
            "fleets": [[ship.to_dict() for ship in fleet] for fleet in self.fleets],
            "shots": [[shot.to_dict() for shot in shots] for shots in self.shots],
        }
        if self.outcome is not None:
            d["outcome"] = self.outcome.to_dict()
        if any(self.chats):
            d["chats"] = list(self.chats)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SalvoState:
        config = d["config"]
        fleets = [tuple(Ship.from_dict(s) for s in fleet) for fleet in d["fleets"]]
        shots = [tuple(Shot(str(s["square"]), int(s["round"])) for s in lst) for lst in d["shots"]]
        outcome = d.get("outcome")
        chats = [int(n) for n in d.get("chats") or (0, 0)]
        return cls(mode=str(config["mode"]), fleet=str(config["fleet"]),
                   first_player_rule=str(config["first_player"]), max_rounds=int(config["max_rounds"]),
                   first_player=int(d["first_player"]), rng=int(d["rng"]), version=int(d["version"]),
                   round=int(d["round"]), fleets=(fleets[0], fleets[1]), shots=(shots[0], shots[1]),
                   outcome=None if outcome is None else Outcome.from_dict(outcome),
                   chats=(chats[0], chats[1]))


# --- facts computed from the state ----------------------------------------------------------------

def shot_rounds(state: SalvoState, shooter: int) -> dict[str, int]:
    """Square → round it was fired in, for every shot of ``shooter``."""
    return {shot.square: shot.round for shot in state.shots[shooter]}


def sunk_round(ship: Ship, rounds: Mapping[str, int]) -> int | None:
    """The round in which ``ship`` was sunk by shots fired at ``rounds``, or None if afloat (S6)."""
    if not all(sq in rounds for sq in ship.squares):
        return None
    return max(rounds[sq] for sq in ship.squares)


def ships_afloat(state: SalvoState, owner: int) -> list[Ship]:
    rounds = shot_rounds(state, 1 - owner)
    return [ship for ship in state.fleets[owner] if sunk_round(ship, rounds) is None]


def squares_hit(state: SalvoState, shooter: int) -> int:
    """How many enemy ship squares ``shooter`` has hit (the score, and the tie-break at max_rounds)."""
    target = {sq for ship in state.fleets[1 - shooter] for sq in ship.squares}
    return sum(1 for shot in state.shots[shooter] if shot.square in target)


def shots_allowed(state: SalvoState, player: int) -> int:
    """S4: how many shots ``player`` may fire this round (0 when it may not shoot)."""
    if state.is_over or state.round == 0:
        return 0
    if state.mode == "classic":
        return 1 if player == state.active_player else 0
    worth = {spec.name: spec.shots for spec in state.fleet_spec}
    return sum(worth[ship.name] for ship in ships_afloat(state, player))


def salvo_report(state: SalvoState, shooter: int, rnd: int) -> dict[str, Any]:
    """S6: what ``shooter`` learns of its salvo of round ``rnd``: hits, ships hit how often, ships sunk."""
    target = state.fleets[1 - shooter]
    fired = {shot.square for shot in state.shots[shooter] if shot.round == rnd}
    rounds = shot_rounds(state, shooter)
    ships = []
    for ship in target:
        count = len(fired.intersection(ship.squares))
        if count:
            ships.append({"ship": ship.name, "count": count})
    return {"round": rnd, "hits": sum(s["count"] for s in ships), "ships": ships,
            "sunk": [ship.name for ship in target if sunk_round(ship, rounds) == rnd]}


def _ship_view(ship: Ship, enemy_rounds: Mapping[str, int]) -> dict[str, Any]:
    return {"name": ship.name, "size": ship.size, "squares": list(ship.squares),
            "hits": [sq for sq in ship.squares if sq in enemy_rounds],
            "sunk": sunk_round(ship, enemy_rounds) is not None}


def _outcome_view(outcome: Outcome) -> dict[str, Any]:
    """The outcome as views and the game_over event show it (SalvoOutcome: winners, draw, reason,
    scores — enemy squares hit per seat)."""
    return outcome.to_dict()


def _phase(state: SalvoState) -> str:
    if state.is_over:
        return "over"
    return "placement" if state.round == 0 else "firing"


# --- checking orders ------------------------------------------------------------------------------

def _parse_placement(state: SalvoState, value: object) -> tuple[Ship, ...]:
    """S2/S3: one entry per ship of the fleet, straight, on the grid, no overlap (touching is fine)."""
    if not isinstance(value, list):
        raise InvalidOrder("placement must be a list of {ship, bow, vertical}", rule="S3", field="placement")
    by_name = {spec.name: spec for spec in state.fleet_spec}
    names = ", ".join(by_name)
    placed: dict[str, Ship] = {}
    for i, entry in enumerate(value):
        where = f"placement[{i}]"
        if not isinstance(entry, Mapping):
            raise InvalidOrder("each placement entry must be an object {ship, bow, vertical}",
                               rule="S3", field=where)
        for key in entry:
            if key not in PLACEMENT_KEYS:
                raise InvalidOrder(f"unknown field {key!r} (expected ship, bow, vertical)",
                                   rule="S3", field=f"{where}.{key}")
        name = entry.get("ship")
        if not isinstance(name, str):
            raise InvalidOrder("ship must be a ship name", rule="S3", field=f"{where}.ship")
        spec = by_name.get(name)
        if spec is None:
            raise IllegalOrder(f"there is no ship {name!r} in the {state.fleet} fleet ({names})",
                               rule="S2", field=f"{where}.ship")
        if name in placed:
            raise IllegalOrder(f"{name} is placed twice", rule="S3", field=f"{where}.ship")
        if "bow" not in entry:
            raise InvalidOrder(f"{name} needs a bow square", rule="S3", field=f"{where}.bow")
        bow = parse_square(entry["bow"], f"{where}.bow")
        vertical = entry.get("vertical", False)
        if not isinstance(vertical, bool):
            raise InvalidOrder(f"vertical must be true or false for {name}", rule="S3",
                               field=f"{where}.vertical")
        ship = Ship.from_bow(name, spec.size, bow, vertical)
        if ship is None:
            going = "down" if vertical else "right"
            raise IllegalOrder(f"{name} at {bow} ({spec.size} squares going {going}) runs off the grid "
                               "(A–J, 1–10)", rule="S3", field=f"{where}.bow")
        for other in placed.values():
            common = [sq for sq in ship.squares if sq in other.squares]
            if common:
                raise IllegalOrder(f"{name} at {bow} overlaps {other.name} (square {common[0]})",
                                   rule="S3", field=where)
        placed[name] = ship
    missing = [name for name in by_name if name not in placed]
    if missing:
        raise IllegalOrder(f"{', '.join(missing)} not placed: the {state.fleet} fleet is {names}",
                           rule="S3", field="placement")
    return tuple(placed[name] for name in by_name)


def _parse_shots(state: SalvoState, player: int, value: object) -> tuple[str, ...]:
    """S4/S5: untried squares, each named once, no more than allowed (exactly one in classic mode)."""
    if not isinstance(value, list):
        raise InvalidOrder("shots must be a list of squares such as ['B7', 'C3']", rule="S5", field="shots")
    allowed = shots_allowed(state, player)
    if state.mode == "classic" and len(value) != 1:
        raise IllegalOrder(f"classic mode: exactly one shot per turn, {len(value)} given", rule="S4",
                           field="shots")
    if len(value) > allowed:
        raise IllegalOrder(f"{allowed} shots allowed, {len(value)} given", rule="S4", field="shots")
    earlier = shot_rounds(state, player)
    named: dict[str, int] = {}
    for i, item in enumerate(value):
        where = f"shots[{i}]"
        square = parse_square(item, where)
        if square in named:
            raise IllegalOrder(f"square {square} is named twice in this salvo "
                               f"(shots[{named[square]}] and {where})", rule="S5", field=where)
        if square in earlier:
            raise IllegalOrder(f"square {square} was already shot in round {earlier[square]}", rule="S5",
                               field=where)
        named[square] = i
    return tuple(named)


def _check_turn(state: SalvoState, player: int, orders: Mapping[str, Any]) -> None:
    """The checks every submission passes first: seat, game over, turn (classic), known keys."""
    player_seat(player, PLAYERS)
    if state.is_over:
        raise GameOver("the game is over", rule="S7")
    if state.round > 0 and state.mode == "classic" and player != state.active_player:
        raise NotYourTurn(f"it is seat {state.active_player}'s turn, not yours", rule="S4")
    check_keys(orders, ORDER_KEYS, "", "orders")


def _check_placement_orders(state: SalvoState, player: int, orders: Mapping[str, Any]
                            ) -> tuple[Ship, ...] | None:
    """Round 0: the fleet as placed, or None when the server is to place it at random (S3)."""
    _check_turn(state, player, orders)
    if "shots" in orders:
        raise InvalidOrder("no shots during placement (round 0)", rule="S3", field="shots")
    random = orders.get("random_placement", False)
    if not isinstance(random, bool):
        raise InvalidOrder("random_placement must be true or false", rule="S3", field="random_placement")
    if "placement" not in orders:
        return None  # S3: no placement at all (or random_placement) means a random one
    if random:
        raise InvalidOrder("give either placement or random_placement, not both", rule="S3",
                           field="random_placement")
    return _parse_placement(state, orders["placement"])


def _check_shot_orders(state: SalvoState, player: int, orders: Mapping[str, Any]) -> tuple[str, ...]:
    """Rounds >= 1: the squares shot (S4, S5)."""
    _check_turn(state, player, orders)
    for key in ("placement", "random_placement"):
        if key in orders:
            raise InvalidOrder(f"{key} is only allowed in round 0; this is round {state.round}", rule="S3",
                               field=key)
    return _parse_shots(state, player, orders.get("shots", []))


# --- the game -------------------------------------------------------------------------------------

def _spectator_running(state: SalvoState) -> dict[str, Any]:
    """:meth:`SalvoGame.spectator_view` while the game runs (its docstring says what it holds)."""
    classic = state.mode == "classic"
    v: dict[str, Any] = {"phase": _phase(state), "round": state.round, "version": state.version,
                         "mode": state.mode, "you": SPECTATOR}
    if classic:
        v["active_player"] = state.active_player
    enemy_squares = [{sq for ship in state.fleets[1 - p] for sq in ship.squares} for p in range(PLAYERS)]
    sides: list[list[dict[str, Any]]] = []
    for p in range(PLAYERS):
        fired = []
        for shot in state.shots[p]:
            entry: dict[str, Any] = shot.to_dict()
            if classic:
                entry["hit"] = shot.square in enemy_squares[p]
            fired.append(entry)
        sides.append(fired)
    rounds_at_1 = shot_rounds(state, 0)
    rounds_at_0 = shot_rounds(state, 1)
    sunk_1 = sorted((r, i, ship.name) for i, ship in enumerate(state.fleets[1])
                    if (r := sunk_round(ship, rounds_at_1)) is not None)
    v.update({
        "fleet_spec": [spec.to_dict() for spec in state.fleet_spec],
        "fleet": [{"name": ship.name, "size": ship.size, "sunk": True} for ship in state.fleets[0]
                  if sunk_round(ship, rounds_at_0) is not None],
        "incoming": sides[1],
        "shots": sides[0],
        "enemy_sunk": [name for _, _, name in sunk_1],
    })
    return v


class SalvoGame:
    """The Salvo engine: stateless; every method is a pure function of its arguments."""

    name = "salvo"
    over_rule = "S7"
    min_players = PLAYERS
    max_players = PLAYERS

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        check_keys(config, tuple(DEFAULT_CONFIG), "", "config", noun="option")
        out = {**DEFAULT_CONFIG, **config}
        if "max_rounds" not in config and out["mode"] == "classic":
            out["max_rounds"] = CLASSIC_MAX_ROUNDS  # one shot per round: give both players 100 shots
        if out["players"] != PLAYERS or isinstance(out["players"], bool):
            raise InvalidOrder(f"Salvo is for exactly 2 players, not {out['players']!r}", rule="S1",
                               field="players")
        if out["mode"] not in MODES:
            raise InvalidOrder(f"mode must be salvo or classic, not {out['mode']!r}", rule="S4", field="mode")
        if out["fleet"] not in FLEETS:
            raise InvalidOrder(f"fleet must be default or variant, not {out['fleet']!r}", rule="S2",
                               field="fleet")
        if out["first_player"] not in FIRST_PLAYER_RULES:
            raise InvalidOrder(f"first_player must be creator or random, not {out['first_player']!r}",
                               rule="S4", field="first_player")
        rounds = out["max_rounds"]
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise InvalidOrder(f"max_rounds must be a whole number >= 1, not {rounds!r}", field="max_rounds")
        return out

    def new_game(self, config: Mapping[str, Any], seed: int) -> SalvoState:
        cfg = self.normalize_config(config)
        rng = Rng(seed)
        first = rng.randbelow(PLAYERS) if cfg["first_player"] == "random" else 0
        return SalvoState(mode=cfg["mode"], fleet=cfg["fleet"], first_player_rule=cfg["first_player"],
                          max_rounds=cfg["max_rounds"], first_player=first, rng=rng.state)

    def state_from_dict(self, d: Mapping[str, Any]) -> SalvoState:
        return SalvoState.from_dict(d)

    def step(self, state: SalvoState) -> Step:
        """Every step is a simultaneous round on the round deadline (S9): both players in round 0
        and in salvo mode; in classic mode's firing rounds the active player alone (S4: a one-seat
        round that closes on its shot); ``OVER`` once the game is over."""
        if state.is_over:
            return STEP_OVER
        if state.round > 0 and state.mode == "classic":
            return Step(SIMULTANEOUS, (state.active_player,), ROUND_DEADLINE)
        return Step(SIMULTANEOUS, tuple(range(PLAYERS)), ROUND_DEADLINE)

    def expected_players(self, state: SalvoState) -> list[int]:
        """``step(state).players`` (:func:`engine.base.expected_players`)."""
        return expected_players(self, state)

    def validate(self, state: SalvoState, player: int, orders: Mapping[str, Any]) -> None:
        if state.round == 0:
            _check_placement_orders(state, player, orders)
        else:
            _check_shot_orders(state, player, orders)

    def outcome(self, state: SalvoState) -> Outcome | None:
        return state.outcome

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None
                  ) -> Orders:
        """S9: orders computed from the player's view alone.  Salvo has no standing orders (the
        services use :class:`engine.base.NoStanding`): ``standing_orders`` is ignored."""
        return autopilot_orders(view)

    def act(self, state: SalvoState, player: int, action: Mapping[str, Any]
            ) -> tuple[SalvoState, list[Event]]:
        """Chat, the one immediate action of Salvo, allowed in every phase (also once the game is
        over): ``{"chat": {"text": str, "to"?: seat}}``; 1..500 characters, not blank; ``to`` the
        other seat (left out: everyone); at most 10 messages per player per round (A53 via S9)."""
        player = player_seat(player, PLAYERS)
        _, fields = parse_action(action, ACTION_KINDS)
        text, to = check_chat(fields.get("text"), fields.get("to"), player, PLAYERS)
        if state.chats[player] >= MAX_CHATS:
            raise RateLimited(f"at most {MAX_CHATS} chat messages per round", rule="A53", field="chat")
        chats = (state.chats[0] + (player == 0), state.chats[1] + (player == 1))
        return replace(state, chats=chats), [chat_event(player, text, to)]

    def random_orders(self, view: Mapping[str, Any], seed: int) -> Orders:
        """Random legal orders from the player's view: in round 0 a random explicit placement (or,
        one time in four, ``random_placement``); then up to ``shots_allowed`` distinct untried
        squares (one in classic mode, for the active player only). ``{}`` when it may not act."""
        rng = Rng(seed)
        phase = view.get("phase")
        if phase == "placement":
            if rng.randbelow(4) == 0:
                return {"random_placement": True}
            spec = tuple(ShipSpec(str(s["name"]), int(s["size"]), 0) for s in view["fleet_spec"])
            placement = []
            for ship in random_fleet(spec, rng):
                vertical = len(ship.squares) > 1 and coords(ship.squares[0])[0] == coords(ship.squares[1])[0]
                placement.append({"ship": ship.name, "bow": ship.squares[0], "vertical": vertical})
            rng.shuffle(placement)
            return {"placement": placement}
        can = firing(view)
        if can is None:
            return {}
        allowed, untried = can
        if view.get("mode") == "classic":
            count = 1
        else:
            count = allowed if rng.randbelow(4) else rng.randint(1, allowed)
        return {"shots": rng.sample(untried, min(count, len(untried)))}

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        """A90 for Salvo, from the player's view alone.  Round 0: ``{"phase": "placement", "fleet":
        [{"ship", "size"}], "grid": "A1..J10", "note"}`` (S2/S3; ``random_placement`` allowed);
        firing rounds: ``{"phase": "firing", "shots_allowed": n, "untried": [squares never shot,
        A1, A2, …, A10, B1, …], "your_turn": bool}`` (S4/S5; ``your_turn`` in classic mode only);
        ``{"phase": "over"}`` once the game is over.  Salvo has no units: any ``unit`` is refused
        (InvalidOrder naming ``unit``)."""
        if unit is not None:
            raise InvalidOrder("Salvo has no units: ask without one", field="unit")
        phase = view.get("phase")
        if phase == "over" or view.get("outcome") is not None:
            return {"phase": "over"}
        if phase == "placement":
            return {"phase": "placement",
                    "fleet": [{"ship": str(s["name"]), "size": int(s["size"])} for s in view["fleet_spec"]],
                    "grid": f"{ALL_SQUARES[0]}..{ALL_SQUARES[-1]}",
                    "note": "S3: place every ship in a straight horizontal or vertical line inside the grid, "
                            "no overlap (touching is allowed): {\"placement\": [{\"ship\", \"bow\", "
                            "\"vertical\"}]}, the bow its top or left end, vertical true going down "
                            "(default false: right); or {\"random_placement\": true} to be placed at random."}
        tried = {shot["square"] for shot in view["shots"]}
        out: dict[str, Any] = {"phase": "firing", "shots_allowed": int(view.get("shots_allowed", 0)),
                               "untried": sorted((sq for sq in ALL_SQUARES if sq not in tried), key=coords)}
        if view.get("mode") == "classic":
            out["your_turn"] = view.get("active_player") == view.get("you")
        return out

    def view(self, state: SalvoState, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """S8: the player's own fleet and the shots at it; its own shots with round numbers and the S6
        reports; enemy squares and (salvo mode) which own shots hit only once the game is over.
        (The reports are the round's events: ``events`` adds nothing.)"""
        player_seat(player, PLAYERS)
        enemy = 1 - player
        over = state.is_over
        mine = shot_rounds(state, player)
        theirs = shot_rounds(state, enemy)
        own_squares = {sq for ship in state.fleets[player] for sq in ship.squares}
        enemy_squares = {sq for ship in state.fleets[enemy] for sq in ship.squares}
        show_hits = over or state.mode == "classic"
        shots = []
        for shot in state.shots[player]:
            entry: dict[str, Any] = shot.to_dict()
            if show_hits:
                entry["hit"] = shot.square in enemy_squares
            shots.append(entry)
        sunk = sorted((r, i, ship.name) for i, ship in enumerate(state.fleets[enemy])
                      if (r := sunk_round(ship, mine)) is not None)
        fired_rounds = sorted({shot.round for shot in state.shots[player]}) if state.mode == "salvo" else []
        v: dict[str, Any] = {
            "phase": _phase(state),
            "round": state.round,
            "version": state.version,
            "mode": state.mode,
            "you": player,
        }
        if state.mode == "classic":
            v["active_player"] = state.active_player
        v.update({
            "shots_allowed": shots_allowed(state, player),
            "fleet_spec": [spec.to_dict() for spec in state.fleet_spec],
            "fleet": [_ship_view(ship, theirs) for ship in state.fleets[player]],
            "incoming": [{**shot.to_dict(), "hit": shot.square in own_squares}
                         for shot in state.shots[enemy]],
            "shots": shots,
            "reports": [salvo_report(state, player, r) for r in fired_rounds],
            "enemy_sunk": [name for _, _, name in sunk],
        })
        if state.outcome is not None:
            v["enemy_fleet"] = [_ship_view(ship, mine) for ship in state.fleets[enemy]]
            v["outcome"] = _outcome_view(state.outcome)
        return v

    def full_view(self, state: SalvoState, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """The whole game at this moment (a finished game's replay, seat -1: ``services.replay``): what
        :meth:`spectator_view` shows once the game is over — seat 0's view with seat 1's fleet
        (``enemy_fleet``) and a hit flag on every shot, ``you`` = -1 — at any round."""
        v = {**self.view(state, 0), "you": SPECTATOR}
        if not state.is_over:
            enemy_squares = {sq for ship in state.fleets[1] for sq in ship.squares}
            v["shots"] = [{**shot, "hit": shot["square"] in enemy_squares} for shot in v["shots"]]
            v["enemy_fleet"] = [_ship_view(ship, shot_rounds(state, 0)) for ship in state.fleets[1]]
        return v

    def spectator_view(self, state: SalvoState, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """What every player knows (S6, S8), in the shape of :meth:`view` seen from seat 0's side of
        the table, ``you`` = -1 (:data:`engine.base.SPECTATOR`):

        - ``shots``: seat 0's shots, ``incoming``: seat 1's, each with its round — a ``hit`` flag
          only in classic mode, where both players learn it (S6); in salvo mode only the target
          learns which squares hit;
        - ``enemy_sunk``: seat 1's ships sunk (by round), ``fleet``: seat 0's ships sunk, each as
          ``{"name", "size", "sunk": true}`` — every sinking is announced to both (S6), where the
          ship lay is not;
        - phase, round, version, mode, ``active_player`` (classic), ``fleet_spec``; no
          ``shots_allowed`` (a seat's own), no ``reports`` (each the shooter's own, S6), no ship
          squares.

        Once the game is over, the whole game: seat 0's view (both fleets with their hits, every
        shot with its hit flag, seat 0's reports, the outcome) with ``you`` = -1.  ``events`` add
        nothing (the view holds every public fact of the last round)."""
        if state.is_over:
            return {**self.view(state, 0), "you": SPECTATOR}
        return _spectator_running(state)

    def resolve(self, state: SalvoState, orders_by_player: Mapping[int, Mapping[str, Any]]
                ) -> tuple[SalvoState, list[Event]]:
        """Close the round. A player expected but absent from ``orders_by_player`` gets the autopilot's
        orders (a random placement in round 0, S3/S9). Raises a GameError for any refused orders."""
        if state.is_over:
            raise GameOver("the game is over", rule="S7")
        orders = dict(orders_by_player)
        for player in self.expected_players(state):
            if player not in orders:
                orders[player] = self.autopilot(self.view(state, player))
        if state.round == 0:
            placed = {p: _check_placement_orders(state, p, o) for p, o in orders.items()}
            return self._resolve_placement(state, placed)
        return self._resolve_shots(state, {p: _check_shot_orders(state, p, o) for p, o in orders.items()})

    # -- resolution helpers --

    def _resolve_placement(self, state: SalvoState, parsed: Mapping[int, tuple[Ship, ...] | None]
                           ) -> tuple[SalvoState, list[Event]]:
        rng = Rng.from_state(state.rng)
        fleets: list[tuple[Ship, ...]] = []
        for player in range(PLAYERS):
            fleet = parsed.get(player)
            fleets.append(fleet if fleet is not None else random_fleet(state.fleet_spec, rng))
        new = replace(state, fleets=(fleets[0], fleets[1]), rng=rng.state,
                      round=state.round + 1, version=state.version + 1, chats=(0, 0))
        return new, [Event("placement_done", {"round": state.round})]

    def _resolve_shots(self, state: SalvoState, squares: Mapping[int, tuple[str, ...]]
                       ) -> tuple[SalvoState, list[Event]]:
        rnd = state.round
        fired = [tuple(Shot(sq, rnd) for sq in squares.get(p, ())) for p in range(PLAYERS)]
        new = replace(state, shots=(state.shots[0] + fired[0], state.shots[1] + fired[1]),
                      round=rnd + 1, version=state.version + 1, chats=(0, 0))
        events: list[Event] = []
        for shooter in range(PLAYERS):
            target = 1 - shooter
            if state.mode == "classic":
                for shot in fired[shooter]:
                    hit = any(shot.square in ship.squares for ship in state.fleets[target])
                    events.append(Event("shot", {"round": rnd, "shooter": shooter, "square": shot.square,
                                                 "hit": hit}))
            else:
                events.append(Event("salvo_report", salvo_report(new, shooter, rnd), frozenset({shooter})))
                received = {"round": rnd, "squares": [shot.square for shot in fired[shooter]]}
                events.append(Event("shots_received", received, frozenset({target})))
        fleet_sunk = []
        for owner in range(PLAYERS):
            rounds = shot_rounds(new, 1 - owner)
            for ship in new.fleets[owner]:
                if sunk_round(ship, rounds) == rnd:
                    events.append(Event("ship_sunk", {"round": rnd, "owner": owner, "ship": ship.name}))
            fleet_sunk.append(all(sunk_round(ship, rounds) is not None for ship in new.fleets[owner]))
        outcome = self._decide(new, fleet_sunk, rnd)
        if outcome is not None:
            new = replace(new, outcome=outcome)
            events.append(Event("game_over", _outcome_view(outcome)))
        return new, events

    @staticmethod
    def _decide(state: SalvoState, fleet_sunk: list[bool], rnd: int) -> Outcome | None:
        """S7, and the max_rounds limit: more enemy squares hit wins, equal is a draw."""
        scores = tuple(squares_hit(state, p) for p in range(PLAYERS))
        if all(fleet_sunk):
            return Outcome(winners=(), draw=True, reason=REASON_BOTH_SUNK, scores=scores)
        for owner in range(PLAYERS):
            if fleet_sunk[owner]:
                return Outcome(winners=(1 - owner,), draw=False, reason=REASON_FLEET_SUNK, scores=scores)
        if rnd >= state.max_rounds:
            if scores[0] == scores[1]:
                return Outcome(winners=(), draw=True, reason=REASON_MAX_ROUNDS, scores=scores)
            return Outcome(winners=(0 if scores[0] > scores[1] else 1,), draw=False, reason=REASON_MAX_ROUNDS,
                           scores=scores)
        return None


GAME = SalvoGame()
