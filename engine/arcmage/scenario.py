"""Hand-made Arcmage positions as plain data, for tests and for comparison with other implementations.

Scenario format (every key optional but ``seats``)::

    {
      "players": 2, "active": 0, "turn": 3,
      "phase": "play1",          # where the active player stands: build, draw, resource, tactics,
                                 # play1, attack, play2, discard (the rest of the turn follows)
      "seats": [
        {"cities": [{"card": "armory", "id": "A", "defense": 7, "enchantments": [...],
                     "residents": [{"card": "bearer", "id": "b1", "marked": true, "damage": 1,
                                    "counters": [1, 0], "devoted": true}]}],
         "army": [{"card": "mercenary", "id": "m1"}],
         "hand": ["footsoldier", {"card": "mentor", "id": "h1"}],   # a key, a name, or an object
         "deck": ["bearer", ...],          # top first
         "grave": [...], "unbuilt": [...], "removed": [...],
         "piles": {"The Empire": 5, "Gaian": 2},    # unmarked resource cards per faction
         "marked_piles": {"The Empire": 1}          # of which this many are marked
        }, ...],
      "stack": [{"card": "battering_ram", "id": "r", "p": 0, "targets": [], "mode": null}],  # bottom first
      "priority": [1],           # with a stack: the seats yet to answer its top (default: all but its
                                 # controller, in turn order after it)
      "advantages": [{"p": 0, "city": "A", "a": "armory2"}],   # lasting advantages in force
      "effects": [{"card": "m1", "a": 2, "until": "eot"}],     # raw effects (see core)
      "dealt_prev": {"x1": 2}                                 # damage dealt last turn, by card id
    }

A card object is ``{"card": key-or-name, "id"?, "marked"?, "damage"?, "counters"?: [atk, def],
"devoted"?, "enchantments"?: [card objects]}``; ids default to ``<seat>.<zone>.<n>``.  Resource
cards are filler cards (a Footsoldier face down for The Empire, a Kolibri for the Gaian...).

:func:`state_from_scenario` builds the state; :func:`run_scenario` applies ``[(seat, action), ...]``
and returns :func:`summary`, plain data naming every card by id::

    {"step": {...}, "pending": {...}, "outcome": ...,
     "seats": [{"hand": [ids], "army": [ids], "cities": [ids], "grave": [ids], "removed": [ids],
                "deck": [ids], "unbuilt": [ids], "resources": n, "out": bool}],
     "cards": {id: {"name", "zone", "at"?, "marked", "damage", "attack"?, "defense"?}}, "stack": [ids]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.arcmage import core
from engine.arcmage.carddb import DEFS, FACTIONS, card_key
from engine.arcmage.core import G, Json
from engine.arcmage.game import GAME, ArcState
from engine.base import Event

#: the turn's ops after each phase a scenario may start in
_TURN = [{"op": "await", "phase": "build"}, {"op": "await", "phase": "draw"}, {"op": "tactics_start"},
         {"op": "await", "phase": "tactics"}, {"op": "levels"}, {"op": "await", "phase": "play1"},
         {"op": "await", "phase": "attack"}, {"op": "after_combat"}, {"op": "await", "phase": "play2"},
         {"op": "discard_start"}, {"op": "discard"}, {"op": "end_turn"}]
FILLER = {"The Empire": "footsoldier", "Gaian": "kolibri"}


def _ops_from(phase: str) -> list[Json]:
    if phase == "discard":
        return [dict(o) for o in _TURN[9:]]
    if phase == "resource":
        return [{"op": "await", "phase": "resource"}, *[dict(o) for o in _TURN[2:]]]
    for i, o in enumerate(_TURN):
        if o.get("phase") == phase:
            return [dict(x) for x in _TURN[i:]]
    raise ValueError(f"unknown phase {phase!r}")


def _empty_state(sc: Mapping[str, Any], n: int) -> Json:
    """The engine state of a scenario before any card: its turn, phase, effects and ``n`` empty seats."""
    S: Json = {"n": n, "config": {"players": n, "decks": ["scenario"] * n}, "cards": {}, "seats": [],
               "active": int(sc.get("active", 0)), "first": int(sc.get("first", 0)), "turn": int(sc.get("turn", 3)),
               "phase": sc.get("phase", "play1"), "stack": [], "combat": None,
               "effects": [dict(e) for e in sc.get("effects", ())], "adv": [dict(a) for a in sc.get("advantages", ())],
               "delayed": [], "t": {"moves": [], "combats": 0, "dealt": {}, "second": False, "res_left": 0,
                                    "res_min": 0, "built": False, "revenge": []},
               "dealt_prev": dict(sc.get("dealt_prev", {})), "auras": [], "todo": [], "outcome": None,
               "rng": int(sc.get("seed", 7)), "next_id": 1000}
    for _ in range(n):
        S["seats"].append({"deck": [], "hand": [], "grave": [], "removed": [], "unbuilt": [], "army": [],
                           "cities": [], "piles": {f: [] for f in FACTIONS}, "out": False, "temp": {}})
    return S


class _Cards:
    """Puts a scenario's cards into the state ``S``, numbering those without an id."""

    def __init__(self, S: Json) -> None:
        self.S = S
        self.counter = 0

    def add(self, p: int, ent: Any, zone: str, at: str | None = None) -> str:
        """Seat ``p``'s card ``ent`` (a name, or a dict with its id, marks, damage, residents, …) in
        ``zone`` (``at``: the city a resident lives in); returns its id."""
        S = self.S
        if isinstance(ent, str):
            ent = {"card": ent}
        key = card_key(ent["card"])
        if key is None:
            raise ValueError(f"unknown card {ent['card']!r}")
        self.counter += 1
        cid = str(ent.get("id") or f"{p}.{zone}.{self.counter}")
        if cid in S["cards"]:
            raise ValueError(f"duplicate card id {cid!r}")
        c: Json = {"k": key, "o": p, "z": zone}
        if DEFS[key]["token"]:
            c["tok"] = True
        S["cards"][cid] = c
        if zone in ("army", "res", "city"):
            self._in_play(c, ent)
        self._place(p, cid, c, ent, zone, at)
        for e in ent.get("enchantments", ()) if zone in ("army", "res", "city") else ():
            eid = self.add(p, e, "ench_tmp")
            S["cards"][eid].update({"z": "ench", "at": cid, "m": False, "dmg": 0})
            c["ench"].append(eid)
        return cid

    def _in_play(self, c: Json, ent: Mapping[str, Any]) -> None:
        """A card in play: marked, damage, counters, devotion, and the counts some abilities keep."""
        c.update({"m": bool(ent.get("marked", False)), "dmg": int(ent.get("damage", 0)), "ench": []})
        pa, pd = ent.get("counters", (0, 0))
        if pa:
            c["pa"] = pa
        if pd:
            c["pd"] = pd
        if ent.get("devoted"):
            c["dev"] = self.S["turn"]
        for k in ("gr", "ivy", "skip"):
            if ent.get(k):
                c[k] = int(ent[k])

    def _place(self, p: int, cid: str, c: Json, ent: Mapping[str, Any], zone: str, at: str | None) -> None:
        s = self.S["seats"][p]
        if zone == "city":
            c["res"] = []
            c["cdef"] = int(ent.get("defense", DEFS[c["k"]]["defense"] or 0))
            s["cities"].append(cid)
            for r in ent.get("residents", ()):
                self.add(p, r, "res", cid)
        elif zone == "res":
            c["at"] = at
            self.S["cards"][str(at)]["res"].append(cid)
        elif zone in ("army", "hand", "deck", "grave", "removed", "unbuilt"):
            s[zone].append(cid)

    def seat(self, p: int, s: Mapping[str, Any]) -> None:
        """Seat ``p``'s cities, zones and resource piles (face-down fillers, the first ones marked)."""
        for city in s.get("cities", ()):
            self.add(p, city, "city")
        for zone in ("army", "hand", "deck", "grave", "removed", "unbuilt"):
            for ent in s.get(zone, ()):
                self.add(p, ent, zone)
        marked = dict(s.get("marked_piles", {}))
        for f, k in dict(s.get("piles", {})).items():
            for i in range(int(k)):
                cid = f"r{p}.{f.split()[-1].lower()}.{i + 1}"
                self.S["cards"][cid] = {"k": FILLER.get(f, "footsoldier"), "o": p, "z": "pile", "f": f,
                                        "m": i < int(marked.get(f, 0))}
                self.S["seats"][p]["piles"][f].append(cid)

    def stack(self, sc: Mapping[str, Any]) -> None:
        """The scenario's event stack, and the response window it opens (``priority``, else M-order)."""
        S = self.S
        for it in sc.get("stack", ()):
            p = int(it["p"])
            cid = self.add(p, {"card": it["card"], "id": it.get("id")}, "stack")
            S["cards"][cid]["z"] = "stack"
            item: Json = {"card": cid, "p": p}
            for k in ("targets", "mode", "to", "x"):
                if it.get(k) is not None:
                    item[k] = it[k]
            S["stack"].append(item)
        if S["stack"]:
            top = S["stack"][-1]["p"]
            players = sc.get("priority")
            if players is None:
                players = core.order_from(S, top, False)
            S["todo"].insert(0, {"op": "window", "kind": "stack", "players": [int(q) for q in players]})


def state_from_scenario(sc: Mapping[str, Any]) -> ArcState:
    seats_in = list(sc["seats"])
    n = int(sc.get("players", len(seats_in)))
    S = _empty_state(sc, n)
    cards = _Cards(S)
    for p, s in enumerate(seats_in):
        cards.seat(p, s)
    S["phase"] = sc.get("phase", "play1")
    S["todo"] = _ops_from(S["phase"])
    cards.stack(sc)
    core.refresh_auras(S)
    g = G(S)
    core.run(g)
    return ArcState(S, 0, S["turn"])


def summary(state: ArcState) -> Json:
    S = state.data
    cards: Json = {}
    for cid, c in S["cards"].items():
        ent: Json = {"name": DEFS[c["k"]]["name"], "zone": c["z"], "marked": bool(c.get("m")),
                     "damage": int(c.get("dmg", 0))}
        if c.get("at"):
            ent["at"] = c["at"]
        if c["z"] in core.IN_PLAY:
            a, d, kw = core.stats(S, cid)
            ent.update({"attack": a, "defense": d, "keywords": sorted(kw)})
        if c["z"] == "city":
            ent["defense"] = c["cdef"]
            ent["residents"] = list(c["res"])
        cards[cid] = ent
    seats = []
    for s in S["seats"]:
        seats.append({"hand": list(s["hand"]), "army": list(s["army"]), "cities": list(s["cities"]),
                      "grave": list(s["grave"]), "removed": list(s["removed"]), "deck": list(s["deck"]),
                      "unbuilt": list(s["unbuilt"]), "resources": sum(len(v) for v in s["piles"].values()),
                      "out": s["out"]})
    h = core.head(S)
    return {"step": GAME.step(state).to_dict(), "pending": core.copy_data(h) if h else None,
            "outcome": S["outcome"], "seats": seats, "cards": cards, "stack": [it["card"] for it in S["stack"]],
            "phase": S["phase"]}


def run_scenario(sc: Mapping[str, Any] | ArcState, actions: Sequence[tuple[int, Mapping[str, Any]]]
                 ) -> tuple[ArcState, Json, list[Event]]:
    """Apply ``actions`` (each validated by the engine) and return the state, summary and events."""
    state = sc if isinstance(sc, ArcState) else state_from_scenario(sc)
    events: list[Event] = []
    for seat, action in actions:
        state, ev = GAME.apply_action(state, seat, action)
        events.extend(ev)
    return state, summary(state), events


def pass_until(state: ArcState, stop: Any, limit: int = 200) -> tuple[ArcState, list[Event]]:
    """Let every seat pass (or make its first offered choice) until ``stop(state)`` holds."""
    events: list[Event] = []
    for _ in range(limit):
        if stop(state) or GAME.outcome(state) is not None:
            return state, events
        st = GAME.step(state)
        p = st.players[0]
        h = core.head(state.data)
        assert h is not None
        if h["op"] == "decide":
            opts = h["options"]
            action: Json = {"choose": {"option": None if None in opts else opts[0]}}
        elif h["op"] == "await" and h["phase"] == "draw":
            action = {"draw": {"option": "draw1"}}
        else:
            action = {"pass": {}}
        state, ev = GAME.apply_action(state, p, action)
        events.extend(ev)
    raise AssertionError("pass_until: condition never reached")
