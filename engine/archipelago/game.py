"""The Archipelago engine object (``engine.archipelago.GAME``) behind :class:`engine.base.Game`.

Parameters (``normalize_config``): ``players`` 2..8 (A1), ``max_rounds`` (default 60, A67),
``target`` (default by player count, A5).

Immediate actions (``act``, A52/A53), one key naming the kind; ``to`` left out means everyone::

    {"bank": {"give": "wood", "get": "iron", "times"?: 1}}
    {"offer": {"to"?: seat, "give": {res: n}, "get": {res: n}}}
    {"accept": {"offer": "o3"}}
    {"decline": {"offer": "o3"}}        # an offer made to the caller alone
    {"withdraw": {"offer": "o3"}}       # the caller's own offer
    {"chat": {"text": str, "to"?: seat}}

Their events leak nothing (A84: the others see only totals, at round open):

- ``bank`` ``{"player", "give", "get", "times", "rate"}`` to the player only;
- ``offer`` ``{"id", "from", "to"?, "give", "get"}`` to its maker and addressee (everyone for an
  offer to all);
- ``trade`` ``{"offer", "from", "to", "give", "get"}`` (``from`` made the offer and gave ``give``,
  ``to`` accepted it) to both parties, and, for an offer to all, ``offer_closed`` ``{"offer"}`` to
  every other seat — not who took it;
- ``offer_declined`` / ``offer_withdrawn`` ``{"offer", "by"}`` to the offer's maker and addressee
  (everyone for a withdrawn offer to all);
- ``chat`` ``{"from", "text", "to"?}`` to the sender and addressee (everyone without ``to``).

Standing orders (A70–A74): ``check_standing``, ``standing_actions`` and ``standing_after_round``
(:mod:`engine.archipelago.standing`: the shape, the checks, the A74 trades, how the build queue is
consumed), ``autopilot`` and ``complete_orders`` (:mod:`engine.archipelago.autopilot`: what each
posture and per-unit order does, from the player's view alone).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.actions import chat_event, parse_action
from engine.archipelago import economy
from engine.archipelago.autopilot import autopilot as standing_autopilot
from engine.archipelago.autopilot import complete_orders as standing_complete
from engine.archipelago.board import Board, Tile, tie_key
from engine.archipelago.fog import in_sight, tiles_mask, update_memory
from engine.archipelago.legal import legal_moves
from engine.archipelago.mapgen import generate_map
from engine.archipelago.orders import parse_orders
from engine.archipelago.randplay import random_orders
from engine.archipelago.resolve import compute_control, production, resolve_state
from engine.archipelago.standing import check_standing, default_standing, standing_actions, standing_after_round
from engine.archipelago.state import PlayerState, State, Unit
from engine.archipelago.units import STARTING_STOCK, STARTING_UNITS, TARGETS, UNIT_TYPES
from engine.archipelago.view import spectator_view as public_view
from engine.archipelago.view import view as player_view
from engine.base import (
    ROUND_DEADLINE,
    SIMULTANEOUS,
    STEP_OVER,
    Event,
    Orders,
    Outcome,
    Step,
    expected_players,
    player_seat,
)
from engine.errors import GameError, InvalidOrder, RateLimited
from engine.rng import Rng

MIN_PLAYERS = 2
MAX_PLAYERS = 8
DEFAULT_MAX_ROUNDS = 60
#: action kind -> its fields (``act``)
ACTION_KINDS: dict[str, tuple[str, ...]] = {
    "bank": ("give", "get", "times"),
    "offer": ("to", "give", "get"),
    "accept": ("offer",),
    "decline": ("offer",),
    "withdraw": ("offer",),
    "chat": ("text", "to"),
}


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(config, Mapping):
        raise InvalidOrder("config must be an object", field="config")
    unknown = sorted(set(config) - {"players", "max_rounds", "target"})
    if unknown:
        raise InvalidOrder(f"unknown option {unknown[0]!r} (expected players, max_rounds, target)",
                           field=str(unknown[0]))
    out = dict(config)
    players = config.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidOrder(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}", field="players", rule="A1")
    mr = config.get("max_rounds", DEFAULT_MAX_ROUNDS)
    if isinstance(mr, bool) or not isinstance(mr, int) or mr < 1:
        raise InvalidOrder("max_rounds must be a positive integer", field="max_rounds")
    target = config.get("target")
    if target is None:
        target = TARGETS[players]
    elif isinstance(target, bool) or not isinstance(target, int) or target < 1:
        raise InvalidOrder("target must be a positive integer", field="target")
    out.update(players=players, max_rounds=mr, target=target)
    return out


def _sea_distance(board: Board, t: Tile) -> int:
    r = 1
    while r < board.width + board.height:
        x, y = t
        for dx in range(-r, r + 1):
            dy = r - abs(dx)
            for n in ((x + dx, y + dy), (x + dx, y - dy)):
                if board.is_sea(n):
                    return r
        r += 1
    return r


def default_layout(board: Board, seat: int) -> list[tuple[str, Tile]]:
    """A15: (type, tile) for the starting units of A13 in a deterministic default layout.

    Flag on the home tile farthest from the sea (ties: A28 order from the base), the land mine on
    the first free neighbour of the flag (N, E, S, W), the Sergeant then the Privates on the free tiles
    nearest the base (A28), the Dvora on the first sea neighbour of the base."""
    base = board.bases[seat]
    home = list(board.home_island(seat).tiles)
    flag = min(home, key=lambda t: (-_sea_distance(board, t), tie_key(base, t)))
    used = {flag}
    free_nb = [n for n in board.neighbours(flag) if board.is_home_of(n, seat) and n != base]
    mine = free_nb[0] if free_nb else min((t for t in home if t not in used), key=lambda t: tie_key(flag, t))
    used.add(mine)
    rest = sorted((t for t in home if t not in used), key=lambda t: tie_key(base, t))
    sea = [n for n in board.neighbours(base) if board.is_sea(n)]
    if not sea:
        sea = sorted({n for t in home for n in board.neighbours(t) if board.is_sea(n)},
                     key=lambda t: tie_key(base, t))
    out: list[tuple[str, Tile]] = [("flag", flag), ("landmine", mine)]
    land_units = [t for t in STARTING_UNITS if UNIT_TYPES[t].domain == "land" and t not in ("flag", "landmine")]
    land_units.sort(key=lambda t: -UNIT_TYPES[t].duel_strength)
    for typ, t in zip(land_units, rest, strict=False):
        out.append((typ, t))
    out.append(("dvora", sea[0]))
    return out


def new_game(config: Mapping[str, Any], seed: int) -> State:
    cfg = normalize_config(config)
    players = int(cfg["players"])
    board = generate_map(seed, players)
    return initial_state(board, players, seed, target=int(cfg["target"]), max_rounds=int(cfg["max_rounds"]))


def _derive(seed: int, label: bytes) -> int:
    """A 128-bit value from the seed, independent of the map's random stream."""
    raw = seed.to_bytes((seed.bit_length() + 8) // 8 + 1, "big", signed=True)
    return int.from_bytes(hashlib.blake2b(raw, key=label, digest_size=16).digest(), "big")


def initial_state(board: Board, players: int, seed: int, *, target: int | None = None,
                  max_rounds: int = DEFAULT_MAX_ROUNDS) -> State:
    """Round 0 on a given board: A13 units in the A15 default layout, A13 stocks."""
    # The map is drawn from Rng(seed) and every player eventually sees it whole: derive the game's
    # own stream and the unit-id secret (A12) from labelled hashes of the seed, never from Rng(seed).
    rng = Rng(_derive(seed, b"state"))
    secret = format(_derive(seed, b"unit-ids"), "032x")
    state = State(board, players, rng=rng, id_secret=secret,
                  pstates=[PlayerState(stock=dict(STARTING_STOCK)) for _ in range(players)],
                  target=target if target is not None else TARGETS.get(players, 10), max_rounds=max_rounds)
    for p in range(players):
        for typ, t in default_layout(board, p):
            uid = state.new_id()
            state.units[uid] = Unit(uid, p, typ, t)
    state.control = compute_control(state)
    # A14: a player deploys on its home island and the sea around it, so it knows that terrain.
    for p in range(players):
        home = board.home_island(p).tiles
        around = {n for t in home for n in board.neighbours(t)}
        state.pstates[p].explored |= tiles_mask(state, set(home) | around)
    update_memory(state)
    return state


def _events(state: State, raw: list[dict[str, Any]], start_vis: list[int], end_vis: list[int]) -> list[Event]:
    """Cut raw events to their audiences (A85): participants in full, watchers what they saw
    (``start_vis``/``end_vis``: each seat's sight as tile bits, at the start and end of the round)."""
    out: list[Event] = []
    players = len(start_vis)
    seen: list[int] = []  # each seat's sight over the round (start or end), once needed
    for e in raw:
        parts = e["parts"]
        if parts is None:
            out.append(Event(e["ev"]["kind"], e["ev"], None))
            continue
        out.append(Event(e["ev"]["kind"], e["ev"], frozenset(parts)))
        obs = e["observed"]
        t = e["tile"]
        if obs is None or t is None:
            continue
        if not seen:
            seen = [start_vis[p] | end_vis[p] for p in range(players)]
        others = e["others"]
        watchers = frozenset(p for p in range(players) if p not in parts and p not in others
                             and in_sight(state, seen[p], t))
        if watchers:
            data = {"kind": e["ev"]["kind"], **obs, "tile": e["ev"]["tile"]}
            out.append(Event(e["ev"]["kind"], data, watchers))
    return out


class ArchipelagoGame:
    """Stateless engine object; see :mod:`engine.archipelago`."""

    name = "archipelago"
    over_rule = "A67"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return normalize_config(config)

    def new_game(self, config: Mapping[str, Any], seed: int) -> State:
        return new_game(config, seed)

    def state_from_dict(self, d: Mapping[str, Any]) -> State:
        return State.from_dict(d)

    def view(self, state: State, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """Everything ``player`` may know (A80–A85): :func:`engine.archipelago.view.view`, with the
        last round's ``events`` addressed to it."""
        return player_view(state, player, list(events) if events is not None else None)

    def spectator_view(self, state: State, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """What every player knows (the whole game once over):
        :func:`engine.archipelago.view.spectator_view`."""
        return public_view(state, events)

    def full_view(self, state: State, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """The whole game at this moment (a finished game's replay, seat -1: ``services.replay``): what
        :meth:`spectator_view` shows once the game is over — the whole map, every unit and outpost —
        at any round, in the same shape."""
        return public_view(state, events, whole=True)

    def step(self, state: State) -> Step:
        """Every round is simultaneous (A16): all seats submit on the round deadline; ``OVER`` once
        the game is over."""
        if state.outcome is not None:
            return STEP_OVER
        return Step(SIMULTANEOUS, tuple(range(state.players)), ROUND_DEADLINE)

    def expected_players(self, state: State) -> list[int]:
        """``step(state).players`` (:func:`engine.base.expected_players`)."""
        return expected_players(self, state)

    def validate(self, state: State, player: int, orders: Mapping[str, Any]) -> None:
        parse_orders(state, player, orders, strict=True)

    def resolve(self, state: State, orders_by_player: Mapping[int, Mapping[str, Any]]
                ) -> tuple[State, list[Event]]:
        by = {int(k): v for k, v in orders_by_player.items()}
        new, raw, start_vis, end_vis = resolve_state(state, by)
        return new, _events(new, raw, start_vis, end_vis)

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None) -> Orders:
        """A70–A73 for a player who submitted nothing (:mod:`engine.archipelago.autopilot`): the
        default deployment in round 0; then its standing orders — with none (``None``, ``{}``) it
        holds (A71): ``{"units": []}``, plus the standing bonus."""
        return standing_autopilot(view, standing_orders)

    def check_standing(self, state: State, player: int, standing: Mapping[str, Any]) -> dict[str, Any]:
        """Check standing orders (A70–A74) against ``player``'s view; return them normalised
        (:mod:`engine.archipelago.standing`: shape, refusals and their fields and rules)."""
        return check_standing(state, player, standing)

    def default_standing(self, state: State, player: int) -> dict[str, Any]:
        """Standing orders for a seat the autopilot plays alone (A4):
        :data:`engine.archipelago.standing.DEFAULT_STANDING` (aggressive, with a build queue)."""
        return default_standing(state, player)

    def complete_orders(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None,
                        orders: Mapping[str, Any]) -> Orders:
        """A70 for a player who submitted: ``orders`` plus standing orders for the units it leaves
        without one, the queue's builds if it has no builds, the standing bonus if it has none."""
        return standing_complete(view, standing, orders)

    def standing_actions(self, view: Mapping[str, Any], standing: Mapping[str, Any] | None
                         ) -> list[dict[str, Any]]:
        """A74: the ``act`` actions (``{"accept": ...}``, ``{"bank": ...}``) the player's trade
        rules take at the close of a round, before its orders; from its view alone."""
        return standing_actions(view, standing)

    def standing_after_round(self, standing: Mapping[str, Any] | None, orders_used: Mapping[str, Any]
                             ) -> dict[str, Any]:
        """A73: the standing orders with the queue entries that ``orders_used`` built crossed off."""
        return standing_after_round(standing, orders_used)

    def act(self, state: State, player: int, action: Mapping[str, Any]) -> tuple[State, list[Event]]:
        """A52/A53 at once: bank, offer, accept, chat (module docstring: shapes and events).

        Errors name the field inside the action (``bank.give``, ``offer.to``, ``accept.offer``,
        ``chat.text``; ``offer`` / ``chat`` for a per-round limit); bank, offer and accept raise
        :class:`engine.errors.GameOver` (A67) once the game is over, chat stays allowed."""
        player = player_seat(player, state.players)
        kind, f = parse_action(action, ACTION_KINDS)
        try:
            return self._act(state, player, kind, f)
        except GameError as e:
            fld = kind if isinstance(e, RateLimited) else f"{kind}.{e.field}" if e.field else None
            raise type(e)(e.reason, rule=e.rule, field=fld) from None

    @staticmethod
    def _act(state: State, p: int, kind: str, fields: Mapping[str, Any]) -> tuple[State, list[Event]]:
        def f(key: str) -> Any:
            return fields.get(key)  # None when left out: the economy names the missing field

        if kind == "bank":
            times = fields.get("times", 1)
            new = economy.bank(state, p, f("give"), f("get"), times)
            rate = economy.bank_rate(state, p, f("give"))
            data = {"player": p, "give": f("give"), "get": f("get"), "times": times, "rate": rate}
            return new, [Event("bank", data, frozenset({p}))]
        if kind == "offer":
            new = economy.offer(state, p, f("to"), f("give"), f("get"))
            o = new.offers[-1]
            data = {"id": o["id"], "from": p, **({"to": o["to"]} if "to" in o else {}),
                    "give": dict(o["give"]), "get": dict(o["get"])}
            audience = frozenset({p, o["to"]}) if "to" in o else None
            return new, [Event("offer", data, audience)]
        if kind == "accept":
            oid = f("offer")
            if not isinstance(oid, str):
                raise InvalidOrder("an offer id is a string such as 'o3'", rule="A53", field="offer")
            new = economy.accept_offer(state, p, oid)
            o = next(x for x in state.offers if x["id"] == oid)
            parties = frozenset({o["from"], p})
            trade = {"offer": oid, "from": o["from"], "to": p, "give": dict(o["give"]), "get": dict(o["get"])}
            events = [Event("trade", trade, parties)]
            others = frozenset(range(state.players)) - parties
            if "to" not in o and others:
                events.append(Event("offer_closed", {"offer": oid}, others))
            return new, events
        if kind in ("decline", "withdraw"):
            oid = f("offer")
            if kind == "decline":
                new = economy.decline_offer(state, p, oid)
            else:
                new = economy.withdraw_offer(state, p, oid)
            o = next(x for x in state.offers if x["id"] == oid)
            told = frozenset({o["from"], o["to"]}) if "to" in o else None
            name = "offer_declined" if kind == "decline" else "offer_withdrawn"
            return new, [Event(name, {"offer": oid, "by": p}, told)]
        new = economy.chat(state, p, f("text"), f("to"))
        m = new.chat[-1]
        return new, [chat_event(p, m["text"], m.get("to"))]

    def random_orders(self, view: Mapping[str, Any], seed: int) -> Orders:
        """Random legal orders from the view alone (:mod:`engine.archipelago.randplay`); ``{}`` once
        the game is over."""
        if view.get("outcome") is not None:
            return {}
        return random_orders(view, random.Random(seed))

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        """A90: what the player may do now, from its view alone (:mod:`engine.archipelago.legal`):
        deployment tiles in round 0; then per own unit (or only ``unit``) the tiles it may move to
        this round and the actions with their targets, the builds it can afford, the bank rates;
        ``{"phase": "over"}`` once the game is over.  An unknown ``unit`` raises NotFound."""
        return legal_moves(view, unit)

    def outcome(self, state: State) -> Outcome | None:
        return None if state.outcome is None else Outcome.from_dict(state.outcome)


GAME = ArchipelagoGame()

__all__ = ["GAME", "ArchipelagoGame", "default_layout", "initial_state", "new_game", "normalize_config",
           "production"]
