"""The Arcmage engine object (:data:`GAME`): config, setup (M4), state, steps, actions, views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import MAX_CHATS, chat_event, check_chat, parse_action
from engine.arcmage import actions as acts
from engine.arcmage import core
from engine.arcmage.autopilot import choose_action
from engine.arcmage.carddb import (
    BUILT_IN_DECKS,
    CITIES_SET_ASIDE,
    DECKS,
    DEFS,
    FACTIONS,
    START_HAND,
    parse_deck,
)
from engine.arcmage.core import G, Json
from engine.arcmage.view import make_spectator_view, make_view, state_from_view
from engine.base import (
    DEADLINES_KEY,
    RESPONSE_DEADLINE,
    TURN_DEADLINE,
    Event,
    Orders,
    Outcome,
    Step,
    player_seat,
)
from engine.errors import IllegalOrder, InvalidOrder, RateLimited
from engine.rng import Rng

IMPLEMENTED = frozenset(k for k, d in DEFS.items() if d["implemented"] and not d["token"])
CONFIG_KEYS = ("players", "decks", "stops", "max_rounds")
#: ArcmageOptions' deadline fields (arcmage.proto) and the deadline kinds they set
WIRE_DEADLINES = {"turn_seconds": TURN_DEADLINE, "response_seconds": RESPONSE_DEADLINE}
MAX_DEADLINE_S = 7 * 24 * 3600.0  # the platform's longest deadline
#: M25: the speeds' deadlines, seconds (``speeds``: the platform reads them for a speed)
SPEEDS = {"fast": {TURN_DEADLINE: 120.0, RESPONSE_DEADLINE: 15.0},
          "slow": {TURN_DEADLINE: 24 * 3600.0, RESPONSE_DEADLINE: 3600.0}}


def _wire_deck(d: Any) -> Any:
    """A deck as ArcmageDeck writes it (``{"built_in"}`` or ``{"cards": [{"card", "count"}]}``), or
    the engine's own form (a name, a list)."""
    if isinstance(d, Mapping) and set(d) <= {"built_in", "cards"}:
        if d.get("built_in"):
            return d["built_in"]
        return list(d.get("cards") or [])
    return d


def _wire_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """ArcmageOptions' JSON (arcmage.proto) in the engine's config form; the engine's own form passes."""
    c = dict(config)
    if "decks" in c and isinstance(c["decks"], list):
        c["decks"] = [_wire_deck(d) for d in c["decks"]]
    if "stops" in c and isinstance(c["stops"], list):
        c["stops"] = [x.get("phases", []) if isinstance(x, Mapping) and set(x) <= {"phases"} else x
                      for x in c["stops"]]
    if c.get("max_rounds") == 0:
        del c["max_rounds"]  # (0: the default)
    deadlines = dict(c.get(DEADLINES_KEY) or {})
    for k, kind in WIRE_DEADLINES.items():
        if k in c:
            v = c.pop(k)
            if v and (isinstance(v, bool) or not isinstance(v, int | float) or not 1 <= v <= MAX_DEADLINE_S):
                raise InvalidOrder(f"{k} is 1 s .. 7 days (0: from the speed), not {str(v)[:20]}", rule="M25",
                                   field=k)
            if v:
                deadlines[kind] = v
    if deadlines:
        c[DEADLINES_KEY] = deadlines
    return c
#: a safety bound on turns (the project's choice, like Salvo's): past it the game is a draw
DEFAULT_MAX_ROUNDS = 500
#: phases of the active player at whose start a seat may ask for a window (M40)
STOP_PHASES = ("build", "draw", "tactics", "play1", "attack", "play2", "discard")


@dataclass
class ArcState:
    """The whole game: ``data`` is plain JSON (see :mod:`engine.arcmage.core`); never changed once
    built (``apply_action`` works on a copy)."""

    data: Json
    version: int = 0
    round: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"game": "arcmage", "version": self.version, "round": self.round, "data": core.copy_data(self.data)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ArcState:
        data = core.copy_data(dict(d["data"]))
        return cls(data=data, version=int(d["version"]), round=int(d["round"]))


def _seat(player: Any, n: int) -> None:
    if type(player) is not int or not 0 <= player < n:
        player_seat(player, n)


def _deck_label(v: Any) -> Any:
    return v if isinstance(v, str) else [dict(e) if isinstance(e, Mapping) else e for e in v]


class ArcmageGame:
    name = "arcmage"
    over_rule = "M3"
    min_players = 2
    max_players = 4

    # --- config and setup ----------------------------------------------------------------------
    speeds = SPEEDS

    def normalize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(config, Mapping):
            raise InvalidOrder("config must be an object", field="config")
        config = _wire_config(config)
        for k in config:
            if k not in CONFIG_KEYS and k != DEADLINES_KEY:
                raise InvalidOrder(f"unknown config field {str(k)[:40]!r} (players, decks, stops, deadlines)",
                                   field=str(k)[:40])
        n = config.get("players", 2)
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 4:
            raise InvalidOrder("players must be 2..4", rule="M1", field="players")
        decks = config.get("decks")
        if decks is None:
            decks = []
        if isinstance(decks, list) and len(decks) < n:  # the seats not given play the built-in decks
            decks = list(decks) + [BUILT_IN_DECKS[i % 2] for i in range(len(decks), n)]
        if not isinstance(decks, list) or len(decks) != n:
            raise InvalidOrder(f"decks is a list of {n} decks (one per seat)", rule="M2", field="decks")
        out = []
        for i, d in enumerate(decks):
            parse_deck(d, IMPLEMENTED, f"decks[{i}]")
            out.append(_deck_label(d))
        mr = config.get("max_rounds", DEFAULT_MAX_ROUNDS)
        if isinstance(mr, bool) or not isinstance(mr, int) or not 1 <= mr <= 10_000:
            raise InvalidOrder("max_rounds (turns before a draw) is 1..10000", rule="M3", field="max_rounds")
        norm: dict[str, Any] = {"players": n, "decks": out, "max_rounds": mr}
        if DEADLINES_KEY in config:  # seconds per deadline kind (M25; engine.base.step_seconds)
            given = config[DEADLINES_KEY]
            if not isinstance(given, Mapping) or not set(given) <= {TURN_DEADLINE, RESPONSE_DEADLINE}:
                raise InvalidOrder("deadlines is {turn?: seconds, response?: seconds}", rule="M25",
                                   field=DEADLINES_KEY)
            for kind, seconds in given.items():
                if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 1:
                    raise InvalidOrder("a deadline is at least 1 s", rule="M25", field=f"{DEADLINES_KEY}.{kind}")
            norm[DEADLINES_KEY] = dict(given)
        stops = config.get("stops")
        if stops is None or stops == []:
            return norm
        if isinstance(stops, list) and len(stops) < n:
            stops = list(stops) + [[] for _ in range(len(stops), n)]
        if not isinstance(stops, list) or len(stops) != n:
            raise InvalidOrder(f"stops is a list of {n} lists of phases (one per seat)", rule="M40", field="stops")
        stops_norm = []
        for i, lst in enumerate(stops):
            if not isinstance(lst, list) or any(ph not in STOP_PHASES for ph in lst):
                raise InvalidOrder(f"stops[{i}] lists phases among {', '.join(STOP_PHASES)}", rule="M40",
                                   field=f"stops[{i}]")
            stops_norm.append(sorted(set(lst), key=STOP_PHASES.index))
        norm["stops"] = stops_norm
        return norm

    def seat_config(self, config: Mapping[str, Any], seat: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """The config with a joining player's own choices for its seat (ArcmageSeatOptions: its deck),
        checked (M1, M2)."""
        if not isinstance(options, Mapping) or not set(options) <= {"deck"}:
            raise InvalidOrder("seat options are {deck}", field="options")
        cfg = self.normalize_config(config)
        if "deck" in options:
            decks = list(cfg["decks"])
            decks[seat] = _wire_deck(options["deck"])
            parse_deck(decks[seat], IMPLEMENTED, "deck")
            cfg["decks"] = [_deck_label(d) for d in decks]
        return cfg

    def new_game(self, config: Mapping[str, Any], seed: int) -> ArcState:
        cfg = self.normalize_config(config)
        n = cfg["players"]
        rng = Rng(seed)
        first = rng.randbelow(n)
        S: Json = {"n": n, "config": cfg, "cards": {}, "seats": [], "active": first, "first": first, "turn": 0,
                   "phase": "setup", "stack": [], "combat": None, "effects": [], "adv": [], "delayed": [],
                   "t": {}, "dealt_prev": {}, "auras": [], "todo": [], "outcome": None, "rng": 0, "next_id": 1}
        nid = 1
        for p in range(n):
            counts = parse_deck(cfg["decks"][p], IMPLEMENTED, f"decks[{p}]")
            seat: Json = {"deck": [], "hand": [], "grave": [], "removed": [], "unbuilt": [], "army": [],
                          "cities": [], "piles": {f: [] for f in FACTIONS}, "out": False, "temp": {}}
            ids = []
            for key in sorted(counts):
                for _ in range(counts[key]):
                    cid = f"c{nid}"
                    nid += 1
                    S["cards"][cid] = {"k": key, "o": p, "z": "deck"}
                    ids.append(cid)
            cities = sorted((c for c in ids if DEFS[S["cards"][c]["k"]]["type"] == "city"),
                            key=lambda c: (-(DEFS[S["cards"][c]["k"]]["defense"] or 0), S["cards"][c]["k"], c))
            aside = cities[:CITIES_SET_ASIDE]
            for c in aside:
                S["cards"][c]["z"] = "unbuilt"
            seat["unbuilt"] = aside
            seat["deck"] = [c for c in ids if c not in aside]
            rng.shuffle(seat["deck"])
            S["seats"].append(seat)
        S["next_id"] = nid
        S["rng"] = rng.state
        if any(cfg.get("stops") or ()):
            S["stops"] = cfg["stops"]
        S["max_rounds"] = cfg["max_rounds"]
        g = G(S)
        for p in range(n):
            core.draw(g, p, START_HAND)
        S["todo"] = [{"op": "setup_build", "p": p} for p in core.order_from(S, first)] + [{"op": "begin"}]
        core.run(g)
        return ArcState(S, 0, 0)

    def state_from_dict(self, d: Mapping[str, Any]) -> ArcState:
        return ArcState.from_dict(d)

    # --- steps and actions ---------------------------------------------------------------------
    def step(self, state: ArcState) -> Step:
        return acts.step_of(state.data)

    def apply_action(self, state: ArcState, player: int, action: Mapping[str, Any]
                     ) -> tuple[ArcState, list[Event]]:
        _seat(player, state.data["n"])
        kind, plan = acts.check(state.data, player, action)
        S = core.cow_copy(state.data)
        g = G(S, cow=True)
        acts.execute(g, player, kind, plan)
        return ArcState(S, state.version + 1, S["turn"]), g.ev

    def legal_actions(self, view: Mapping[str, Any]) -> list[dict[str, Any]]:
        if view.get("outcome") is not None:
            return []
        S = state_from_view(dict(view))
        return acts.legal(S, int(view.get("you", 0)))

    def legal_moves(self, view: Mapping[str, Any], unit: str | None = None) -> dict[str, Any]:
        if unit is not None:
            raise InvalidOrder("Arcmage has no units", field="unit")
        if view.get("outcome") is not None:
            return {"phase": "over"}
        return {"phase": view.get("phase", ""), "actions": self.legal_actions(view)}

    def random_action(self, view: Mapping[str, Any], seed: int) -> dict[str, Any]:
        if view.get("outcome") is not None:
            return {}
        S = state_from_view(dict(view))
        p = int(view.get("you", 0))
        h = core.head(S)
        if h is None or p not in acts.step_of(S).players:
            return {}
        cands = acts.unique_candidates(S, p)
        r = Rng(seed)
        r.shuffle(cands)
        # a random player that passes a little more often keeps games short
        if r.randbelow(4) == 0:
            cands.sort(key=lambda a: "pass" not in a)
        for a in cands:
            if acts.is_legal(S, p, h, a):
                return a
        return {}

    def autopilot_action(self, view: Mapping[str, Any]) -> dict[str, Any]:
        step = view.get("step") or {}
        if view.get("outcome") is not None or int(view.get("you", 0)) not in step.get("players", ()):
            return {}
        return choose_action(dict(view))

    # --- the rest of the contract --------------------------------------------------------------
    def view(self, state: ArcState, player: int, events: Sequence[Event] | None = None) -> dict[str, Any]:
        _seat(player, state.data["n"])
        step = self.step(state)
        v = make_view(state.data, player, step.to_dict(), state.version)
        # every action the player may take now (ArcmageView.legal): clients need no rules engine
        v["legal"] = self.legal_actions(v) if player in step.players else []
        if events is not None:
            v["events"] = [e.to_dict() for e in events if e.visible_to(player)]
        return v

    def spectator_view(self, state: ArcState, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """What every player sees (M26's public zones and counts; ``you`` = -1, no hand, no legal
        actions), the events a spectator may see (``Event.is_public``); every card once the game is over
        (:func:`engine.arcmage.view.make_spectator_view`)."""
        n = state.data["n"]
        v = make_spectator_view(state.data, self.step(state).to_dict(), state.version)
        v["legal"] = []
        if events is not None:
            v["events"] = [e.to_dict() for e in events if e.is_public(n)]
        return v

    def full_view(self, state: ArcState, events: Sequence[Event] | None = None) -> dict[str, Any]:
        """The whole game at this moment (a finished game's replay, seat -1: ``services.replay``): what
        :meth:`spectator_view` shows once the game is over — every card with its zone and owner — at any
        step, in the same shape."""
        n = state.data["n"]
        v = make_spectator_view(state.data, self.step(state).to_dict(), state.version, whole=True)
        v["legal"] = []
        if events is not None:
            v["events"] = [e.to_dict() for e in events if e.is_public(n)]
        return v

    def outcome(self, state: ArcState) -> Outcome | None:
        o = state.data["outcome"]
        if o is None:
            return None
        return Outcome(winners=tuple(o["winners"]), draw=bool(o["draw"]), reason=str(o["reason"]))

    def expected_players(self, state: ArcState) -> list[int]:
        """``list(step(state).players)`` (engine.base.expected_players)."""
        return list(self.step(state).players)

    def validate(self, state: ArcState, player: int, orders: Mapping[str, Any]) -> None:
        raise IllegalOrder("Arcmage is played by actions (apply_action), not rounds of orders", rule="M25",
                           field="orders")

    def resolve(self, state: ArcState, orders_by_player: Mapping[int, Mapping[str, Any]]
                ) -> tuple[ArcState, list[Event]]:
        raise IllegalOrder("Arcmage has no simultaneous rounds", rule="M25", field="orders")

    def autopilot(self, view: Mapping[str, Any], standing_orders: Mapping[str, Any] | None = None) -> Orders:
        return {}

    def random_orders(self, view: Mapping[str, Any], seed: int) -> Orders:
        return {}

    def act(self, state: ArcState, player: int, action: Mapping[str, Any]) -> tuple[ArcState, list[Event]]:
        """Chat only (``{"chat": {"text", "to"?}}``); game actions go through :meth:`apply_action`."""
        n = state.data["n"]
        player_seat(player, n)
        parse_action(action, {"chat": ("text", "to")})
        f = action["chat"]
        text, to = check_chat(f.get("text"), f.get("to"), player, n)
        chats = list(state.data.get("chats") or [0] * n)
        if chats[player] >= MAX_CHATS:
            raise RateLimited(f"at most {MAX_CHATS} chat messages per turn", rule="A53", field="chat")
        chats[player] += 1
        data = dict(state.data)  # shallow: only the chat counters change
        data["chats"] = chats
        return ArcState(data, state.version, state.round), [chat_event(player, text, to)]


GAME = ArcmageGame()
__all__ = ["DECKS", "GAME", "ArcState", "ArcmageGame"]
