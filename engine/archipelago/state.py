"""The Archipelago game state (plain data, exact ``to_dict``/``from_dict`` round trip).

A :class:`State` is treated as immutable: :func:`engine.archipelago.resolve.resolve_state` and the
immediate operations of :mod:`engine.archipelago.economy` build a new state with
:meth:`State.clone` (the board is shared, never copied) and never touch their input.

Unit ids are opaque (A12): ``blake2b(counter, key=secret)`` where the 128-bit secret comes from the
game seed.  Scenario states (``id_secret == ""``) name new units ``n1``, ``n2``, ... instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import Board, Tile, parse_tile, tile_dict
from engine.archipelago.units import RESOURCES, UNIT_TYPES, UnitType
from engine.rng import Rng


class Unit:
    """One unit.  ``tile`` of cargo (and of a carried flag) is its carrier's tile."""

    __slots__ = ("cargo", "carrier", "flag", "id", "owner", "raft", "tile", "type")

    def __init__(self, id: str, owner: int, type: str, tile: Tile, carrier: str | None = None,
                 cargo: list[str] | None = None, flag: str | None = None, raft: bool = False) -> None:
        self.id = id
        self.owner = owner
        self.type = type
        self.tile = tile
        self.carrier = carrier  # carrier (ship/plane) for cargo, flag bearer for a carried flag
        self.cargo: list[str] = cargo if cargo is not None else []
        self.flag = flag  # id of the enemy flag this unit carries
        self.raft = raft  # a raft travels with this ship (A33)

    @property
    def ut(self) -> UnitType:
        return UNIT_TYPES[self.type]

    def clone(self) -> Unit:
        return Unit(self.id, self.owner, self.type, self.tile, self.carrier, list(self.cargo),
                    self.flag, self.raft)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "owner": self.owner, "type": self.type,
                             "tile": tile_dict(self.tile)}
        if self.carrier is not None:
            d["carrier"] = self.carrier
        if self.cargo:
            d["cargo"] = list(self.cargo)
        if self.flag is not None:
            d["flag"] = self.flag
        if self.raft:
            d["raft"] = True
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Unit:
        return cls(str(d["id"]), int(d["owner"]), str(d["type"]), parse_tile(d["tile"]),
                   d.get("carrier"), [str(c) for c in d.get("cargo") or ()], d.get("flag"),
                   bool(d.get("raft", False)))

    def __repr__(self) -> str:
        return f"Unit.from_dict({self.to_dict()!r})"


class PlayerState:
    """Per-seat data: stock, score, standing bonus choice, fog memory (A81, A83, A31/A37–A39)."""

    __slots__ = ("bonus", "chats", "explored", "flags_captured", "log", "offers_made", "opening_total",
                 "revealed", "score", "stock")

    def __init__(self, stock: dict[str, int] | None = None, score: int = 0, bonus: str | None = None,
                 flags_captured: int = 0, explored: int = 0,
                 log: dict[str, tuple[Tile, int, str | None, int]] | None = None,
                 revealed: set[str] | None = None, offers_made: int = 0, chats: int = 0,
                 opening_total: int | None = None) -> None:
        self.stock = {r: 0 for r in RESOURCES} if stock is None else {r: int(stock.get(r, 0))
                                                                      for r in RESOURCES}
        self.score = score
        self.bonus = bonus
        self.flags_captured = flags_captured
        self.explored = explored  # bit (y * width + x) set = tile explored
        # enemy id -> (last tile, round seen, type if revealed, owner)  (A83)
        self.log = log if log is not None else {}
        self.revealed = revealed if revealed is not None else set()  # enemy ids whose type we know
        self.offers_made = offers_made
        self.chats = chats
        # A84: the total resource count as it stood when the round opened (public)
        self.opening_total = sum(self.stock.values()) if opening_total is None else opening_total

    def clone(self) -> PlayerState:
        return PlayerState(dict(self.stock), self.score, self.bonus, self.flags_captured, self.explored,
                           dict(self.log), set(self.revealed), self.offers_made, self.chats,
                           self.opening_total)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "stock": dict(self.stock), "score": self.score, "flags_captured": self.flags_captured,
            "explored": format(self.explored, "x"),
            "log": {k: ([t[0], t[1], r, o] if ty is None else [t[0], t[1], r, o, ty])
                    for k, (t, r, ty, o) in sorted(self.log.items())},
            "revealed": sorted(self.revealed), "offers_made": self.offers_made, "chats": self.chats,
            "opening_total": self.opening_total,
        }
        if self.bonus is not None:
            d["bonus"] = self.bonus
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlayerState:
        log: dict[str, tuple[Tile, int, str | None, int]] = {}
        for k, v in (d.get("log") or {}).items():
            log[str(k)] = ((int(v[0]), int(v[1])), int(v[2]), str(v[4]) if len(v) > 4 else None, int(v[3]))
        return cls(dict(d.get("stock") or {}), int(d.get("score", 0)), d.get("bonus"),
                   int(d.get("flags_captured", 0)), int(str(d.get("explored", "0")), 16), log,
                   {str(x) for x in d.get("revealed") or ()}, int(d.get("offers_made", 0)),
                   int(d.get("chats", 0)), d.get("opening_total"))


class State:
    """The whole game.  ``version`` bumps with each resolved round; ``round`` 0 is deployment."""

    __slots__ = (
        "a66_done",
        "board",
        "chat",
        "control",
        "id_counter",
        "id_secret",
        "max_rounds",
        "offer_counter",
        "offers",
        "outcome",
        "outposts",
        "players",
        "pstates",
        "rng",
        "round",
        "target",
        "units",
        "version",
    )

    def __init__(self, board: Board, players: int, *, round: int = 0, version: int = 0,
                 units: dict[str, Unit] | None = None, outposts: dict[Tile, int] | None = None,
                 control: dict[Tile, int] | None = None, pstates: list[PlayerState] | None = None,
                 rng: Rng | None = None, id_secret: str = "", id_counter: int = 0,
                 a66_done: bool = False, offers: list[dict[str, Any]] | None = None,
                 offer_counter: int = 0, chat: list[dict[str, Any]] | None = None,
                 target: int = 10, max_rounds: int = 60, outcome: dict[str, Any] | None = None) -> None:
        self.board = board
        self.players = players
        self.round = round
        self.version = version
        self.units: dict[str, Unit] = units if units is not None else {}
        self.outposts: dict[Tile, int] = outposts if outposts is not None else {}
        self.control: dict[Tile, int] = control if control is not None else {}
        self.pstates: list[PlayerState] = (pstates if pstates is not None
                                           else [PlayerState() for _ in range(players)])
        self.rng = rng if rng is not None else Rng(0)
        self.id_secret = id_secret
        self.id_counter = id_counter
        self.a66_done = a66_done
        self.offers: list[dict[str, Any]] = offers if offers is not None else []
        self.offer_counter = offer_counter
        self.chat: list[dict[str, Any]] = chat if chat is not None else []
        self.target = target
        self.max_rounds = max_rounds
        self.outcome = outcome  # Outcome.to_dict() once the game is over

    # -- copying ------------------------------------------------------------------------------
    def clone(self, units: dict[str, Unit] | None = None) -> State:
        """A copy to change (the board shared); ``units``: the copy's units when already copied."""
        return State(self.board, self.players, round=self.round, version=self.version,
                     units={k: u.clone() for k, u in self.units.items()} if units is None else units,
                     outposts=dict(self.outposts), control=dict(self.control),
                     pstates=[p.clone() for p in self.pstates], rng=Rng.from_state(self.rng.state),
                     id_secret=self.id_secret, id_counter=self.id_counter, a66_done=self.a66_done,
                     offers=[dict(o) for o in self.offers], offer_counter=self.offer_counter,
                     chat=list(self.chat), target=self.target, max_rounds=self.max_rounds,
                     outcome=self.outcome)

    def light_clone(self) -> State:
        """A copy sharing units (for immediate operations that touch only stocks, offers, chat)."""
        s = State(self.board, self.players, round=self.round, version=self.version, units=self.units,
                  outposts=self.outposts, control=self.control,
                  pstates=[p.clone() for p in self.pstates], rng=self.rng, id_secret=self.id_secret,
                  id_counter=self.id_counter, a66_done=self.a66_done,
                  offers=[dict(o) for o in self.offers], offer_counter=self.offer_counter,
                  chat=list(self.chat), target=self.target, max_rounds=self.max_rounds,
                  outcome=self.outcome)
        return s

    # -- ids (A12) ----------------------------------------------------------------------------
    def new_id(self) -> str:
        """A fresh opaque unit id (mutates this state's counter: call on a clone)."""
        while True:
            self.id_counter += 1
            if self.id_secret:
                h = hashlib.blake2b(self.id_counter.to_bytes(8, "big"), digest_size=5,
                                    key=bytes.fromhex(self.id_secret))
                uid = h.hexdigest()
            else:
                uid = f"n{self.id_counter}"
            if uid not in self.units:
                return uid

    # -- queries ------------------------------------------------------------------------------
    def units_of(self, player: int) -> list[Unit]:
        return [u for u in self.units.values() if u.owner == player]

    def occupancy(self) -> dict[Tile, list[str]]:
        """Tile -> ids of the units standing on it (cargo and carried flags excluded)."""
        occ: dict[Tile, list[str]] = {}
        for u in self.units.values():
            if u.carrier is None:
                occ.setdefault(u.tile, []).append(u.id)
        return occ

    def scores(self) -> list[int]:
        return [p.score for p in self.pstates]

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "game": "archipelago", "board": self.board.to_dict(), "players": self.players,
            "round": self.round, "version": self.version,
            "units": [self.units[k].to_dict() for k in sorted(self.units)],
            "outposts": [[t[0], t[1], p] for t, p in sorted(self.outposts.items(), key=_yx)],
            "control": [[t[0], t[1], p] for t, p in sorted(self.control.items(), key=_yx)],
            "pstates": [p.to_dict() for p in self.pstates], "rng": self.rng.state,
            "id_secret": self.id_secret, "id_counter": self.id_counter, "a66_done": self.a66_done,
            "offers": [dict(o) for o in self.offers], "offer_counter": self.offer_counter,
            "chat": list(self.chat), "target": self.target, "max_rounds": self.max_rounds,
        }
        if self.outcome is not None:
            d["outcome"] = dict(self.outcome)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> State:
        units = {str(u["id"]): Unit.from_dict(u) for u in d["units"]}
        return cls(Board.from_dict(d["board"]), int(d["players"]), round=int(d["round"]),
                   version=int(d["version"]), units=units,
                   outposts={(int(x), int(y)): int(p) for x, y, p in d.get("outposts") or ()},
                   control={(int(x), int(y)): int(p) for x, y, p in d.get("control") or ()},
                   pstates=[PlayerState.from_dict(p) for p in d["pstates"]],
                   rng=Rng.from_state(int(d.get("rng", 0))), id_secret=str(d.get("id_secret", "")),
                   id_counter=int(d.get("id_counter", 0)), a66_done=bool(d.get("a66_done", False)),
                   offers=[dict(o) for o in d.get("offers") or ()],
                   offer_counter=int(d.get("offer_counter", 0)), chat=list(d.get("chat") or ()),
                   target=int(d.get("target", 10)), max_rounds=int(d.get("max_rounds", 60)),
                   outcome=d.get("outcome"))

    def __repr__(self) -> str:
        return f"<archipelago.State round={self.round} version={self.version} units={len(self.units)}>"


def _yx(item: tuple[Tile, int]) -> tuple[int, int]:
    return (item[0][1], item[0][0])
