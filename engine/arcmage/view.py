"""Per-player views (M26) and the state rebuilt from a view for legal-action enumeration.

A view shows: the player's hand, resource piles and unbuilt cities; every public zone (kingdoms
with residents and enchantments, armies, graveyards, removed cards, the stack, combat, effects,
advantages); for others only counts of hand, deck, resource piles (and how many are marked) and
unbuilt cities.  Nobody sees a deck's order; a player searching its deck sees the cards a pending
decision offers it (M48).  ``tiebreak`` is a value derived one-way from the game's RNG (M53).
A spectator's view (:func:`make_spectator_view`) is what every player sees, the whole game once
it is over.
"""

from __future__ import annotations

import hashlib
from typing import Any

from engine.arcmage.carddb import ATTRIBUTION, DEFS, FACTIONS
from engine.arcmage.core import IN_PLAY, Json, card_public, copy_data, head, stats
from engine.base import SPECTATOR

PUBLIC_ZONES = ("army", "res", "city", "ench", "grave", "removed", "stack")


def tiebreak(S: Json) -> int:
    h = hashlib.sha256(f"arcmage-tiebreak:{S['rng']}:{S['turn']}".encode()).hexdigest()
    return int(h[:8], 16)


def _visible_ids(S: Json, p: int) -> list[str]:
    cards = S["cards"]
    out: list[str] = []
    for q, s in enumerate(S["seats"]):
        out.extend(s["grave"])
        out.extend(s["removed"])
        for cid in s["army"]:
            out.append(cid)
            out.extend(cards[cid].get("ench") or ())
        for city in s["cities"]:
            out.append(city)
            c = cards[city]
            out.extend(c["ench"])
            for r in c["res"]:
                out.append(r)
                out.extend(cards[r].get("ench") or ())
        if q == p:
            out.extend(s["hand"])
            out.extend(s["unbuilt"])
            for f in FACTIONS:
                out.extend(s["piles"][f])
    out.extend(it["card"] for it in S["stack"])
    h = head(S)
    if h is not None and h["op"] == "decide" and h["seat"] == p:
        for o in h["options"]:
            if isinstance(o, str) and o in cards:
                out.append(o)
            elif isinstance(o, list):
                out.extend(x for x in o if isinstance(x, str) and x in cards)
    return out


def _pending_raw(S: Json, p: int) -> Json | None:
    """The head op as the seat may see it (a decision's options and data only for its own seat)."""
    h = head(S)
    if h is None:
        return None
    if h["op"] == "decide" and h["seat"] != p:
        return {"op": "decide", "seat": h["seat"], "kind": h["kind"]}
    out: Json = h
    return out


#: a card's engine keys and their names in the view (ArcmageCard in arcmage.proto)
CARD_FIELDS = {"k": "key", "z": "zone", "o": "owner", "m": "marked", "f": "pile", "at": "attached_to",
               "res": "residents", "ench": "enchantments", "dmg": "damage", "pa": "attack_counters",
               "pd": "defense_counters", "gr": "growth", "ivy": "ivy", "skip": "skip_unmarks", "dev": "devoted_turn",
               "cdef": "city_defense", "atk_decl": "attacked"}
CARD_KEYS = {v: k for k, v in CARD_FIELDS.items()}
#: view-only card fields (computed, not engine state)
CARD_COMPUTED = ("id", "name", "attack", "defense", "keywords")
FACE_FIELDS = ("key", "name", "type", "subtypes", "faction", "cost", "loyalty", "attack", "defense", "text",
               "keywords", "token", "artist")
PENDING_FIELDS = ("op", "kind", "seat", "players", "phase", "options")
STACK_FIELDS = {"card": "card", "p": "player", "to": "to", "targets": "targets", "x": "x", "mode": "mode"}
COMBAT_FIELDS = ("city", "defender", "attackers", "declared", "blocks", "blocked")
RULES_STATE = ("effects", "adv", "delayed", "t", "dealt_prev", "auras")


def _split(d: Json, known: Any, rename: dict[str, str] | None = None) -> Json:
    """``d``'s known keys (renamed), the rest under ``detail`` (omitted when empty)."""
    out: Json = {}
    rest: Json = {}
    for k, v in d.items():
        if k in known:
            if v is not None:
                out[rename[k] if rename else k] = v
        else:
            rest[k] = v
    if rest:
        out["detail"] = rest
    return out


def _join(d: Json, rename: dict[str, str] | None = None) -> Json:
    """The inverse of :func:`_split`."""
    out: Json = {(rename.get(k, k) if rename else k): v for k, v in d.items() if k != "detail"}
    out.update(d.get("detail") or {})
    return out


def _card_view(S: Json, cid: str) -> Json:
    src = S["cards"][cid]
    c: Json = {"id": cid}
    rest: Json = {}
    for k, v in src.items():
        name = CARD_FIELDS.get(k)
        if name is None:
            rest[k] = v
        elif v is not None and v is not False:
            c[name] = list(v) if isinstance(v, list) and k in ("res", "ench") else v
    if rest:
        c["detail"] = copy_data(rest)
    c["name"] = DEFS[src["k"]]["name"]
    if src["z"] in ("army", "res"):
        a, d, kw = stats(S, cid)
        c["attack"], c["defense"], c["keywords"] = a, d, sorted(kw)
    return c


def _face(key: str) -> Json:
    d = DEFS[key]
    f: Json = {k: d[k] for k in FACE_FIELDS if d.get(k) is not None}
    f["subtypes"] = list(d["subtypes"])
    f["keywords"] = list(d["keywords"])
    f["cost"] = "" if d.get("cost") is None else str(d["cost"])
    return f


def make_view(S: Json, p: int, step: Json, version: int) -> Json:
    """The view in the shape of ``ArcmageView`` (arcmage.proto): readable names, every engine-only
    key of a card, decision or stack item under ``detail``."""
    return _build(S, p, step, version, _visible_ids(S, p))


def make_spectator_view(S: Json, step: Json, version: int, whole: bool = False) -> Json:
    """A spectator's view (``you`` = -1) in the same shape: while the game runs, what every player
    sees — the public zones' cards (kingdoms, residents, enchantments, armies, graveyards, removed
    cards, the stack), every seat's counts (hand, deck, resource piles and how many are marked,
    unbuilt cities), combat, the rules' public state, a pending decision as its non-deciding seats
    see it (op, seat, kind) — with no hand, unbuilt city or pile of its own; never a hand's content
    or a deck's order.  Once the game is over, or at once with ``whole`` (a replay's view of the whole
    game): every card of the game (``cards``: each with its zone and owner, so every hand, pile,
    unbuilt city and deck is open; no deck order)."""
    ids = list(S["cards"]) if whole or S["outcome"] is not None else _visible_ids(S, SPECTATOR)
    return _build(S, SPECTATOR, step, version, ids)


def _build(S: Json, p: int, step: Json, version: int, ids: list[str]) -> Json:
    """The view of seat ``p`` (``SPECTATOR``: nobody's own zones) showing the cards ``ids``."""
    cards = {cid: _card_view(S, cid) for cid in ids}
    faces = {c["key"]: _face(c["key"]) for c in cards.values()}
    all_cards = S["cards"]
    seats = []
    for q, s in enumerate(S["seats"]):
        piles = {}
        marked = {}
        for f in FACTIONS:
            pile = s["piles"][f]
            piles[f] = len(pile)
            k = 0
            for c in pile:
                if all_cards[c]["m"]:
                    k += 1
            marked[f] = k
        seats.append({
            "seat": q, "out": s["out"], "hand_count": len(s["hand"]), "deck_count": len(s["deck"]),
            "unbuilt_count": len(s["unbuilt"]), "pile_counts": piles, "pile_marked": marked,
            "temp": dict(s["temp"]), "grave": list(s["grave"]), "removed": list(s["removed"]),
            "army": list(s["army"]), "cities": list(s["cities"]),
        })
    me: Json = S["seats"][p] if p >= 0 else {"hand": [], "unbuilt": [], "piles": {f: [] for f in FACTIONS}}
    small = copy_data({"stack": S["stack"], "combat": S["combat"], "effects": S["effects"], "adv": S["adv"],
                       "delayed": S["delayed"], "t": S["t"] or {}, "pending": _pending_raw(S, p)})
    t = small["t"]
    if "dealt" in t:
        t["dealt"] = {c: n for c, n in t["dealt"].items() if c in cards}
    pend = small["pending"]
    v: Json = {
        "game": "arcmage", "you": p, "players": S["n"], "version": version, "turn": S["turn"],
        "active": S["active"], "first": S["first"], "phase": S["phase"] if S["outcome"] is None else "over",
        "step": step, "seats": seats, "hand": list(me["hand"]), "unbuilt": list(me["unbuilt"]),
        "piles": {f: {"cards": list(me["piles"][f])} for f in FACTIONS},
        "cards": cards, "faces": faces, "stack": [_split(it, STACK_FIELDS, STACK_FIELDS) for it in small["stack"]],
        "tiebreak": tiebreak(S), "attribution": ATTRIBUTION,
        "stops": [{"phases": list(x)} for x in (S.get("stops") or [[] for _ in range(S["n"])])],
        "rules_state": {"effects": small["effects"], "adv": small["adv"], "delayed": small["delayed"], "t": t,
                        "dealt_prev": {c: n for c, n in S["dealt_prev"].items() if c in cards},
                        "auras": list(S["auras"])},
    }
    v["pending"] = _split(pend, PENDING_FIELDS) if pend is not None else None
    comb = small["combat"]
    if comb is not None:
        comb = _split(dict(comb, blocks={a: {"cards": list(b)} for a, b in comb["blocks"].items()}), COMBAT_FIELDS)
    v["combat"] = comb
    v["outcome"] = dict(S["outcome"]) if S["outcome"] else None
    return v


def _card_state(c: Json) -> Json:
    """A view's card as the engine keeps it; what protobuf leaves out at its default (a false mark,
    no damage, empty lists) restored as the engine's moves make it (``core.move``)."""
    out: Json = {CARD_KEYS[k]: v for k, v in c.items() if k in CARD_KEYS}
    out.setdefault("m", False)
    out.setdefault("o", 0)
    z = out.get("z", "")
    if z in ("army", "res", "city", "ench"):
        out.setdefault("dmg", 0)
        if z == "city":
            out.setdefault("res", [])
            out.setdefault("ench", [])
            out.setdefault("cdef", 0)
        if z in IN_PLAY:
            out.setdefault("ench", [])
    for k in ("dmg", "pa", "pd", "gr", "ivy", "skip", "dev", "cdef", "o"):
        if k in out:
            out[k] = int(out[k])
    out.update(c.get("detail") or {})
    return out


def _combat_state(comb: Json) -> Json:
    out = _join(comb)
    out["blocks"] = {a: list((b or {}).get("cards") or ()) for a, b in (comb.get("blocks") or {}).items()}
    out["defender"] = int(out.get("defender", 0))
    for k in ("attackers", "declared", "blocked"):
        out[k] = list(out.get(k) or ())
    return out


def state_from_view(v: Json) -> Json:
    """A state holding what the view shows, hidden cards as placeholder ids without card entries.

    Only for read-only rule checks of the viewing player's own actions. Reads the view as the
    engine makes it and as protobuf's JSON mapping writes it (fields at their defaults left out)."""
    p = int(v.get("you", 0))
    cards = {cid: _card_state(c) for cid, c in (v.get("cards") or {}).items()}
    seats = []
    for q, s in enumerate(v["seats"]):
        seat: Json = {"out": bool(s.get("out")), "temp": dict(s.get("temp") or {}), "grave": list(s.get("grave") or ()),
                      "removed": list(s.get("removed") or ()), "army": list(s.get("army") or ()),
                      "cities": list(s.get("cities") or ()), "deck": ["?"] * int(s.get("deck_count", 0))}
        if q == p:
            seat["hand"] = list(v.get("hand") or ())
            seat["unbuilt"] = list(v.get("unbuilt") or ())
            piles = v.get("piles") or {}
            seat["piles"] = {f: list((piles.get(f) or {}).get("cards") or ()) for f in FACTIONS}
        else:
            counts = s.get("pile_counts") or {}
            seat["hand"] = ["?"] * int(s.get("hand_count", 0))  # hidden cards: placeholders without card entries
            seat["unbuilt"] = ["?"] * int(s.get("unbuilt_count", 0))
            seat["piles"] = {f: ["?"] * int(counts.get(f, 0)) for f in FACTIONS}
        seats.append(seat)
    pend = v.get("pending")
    todo: list[Any] = []
    if pend:
        raw = _join(pend)
        if "seat" in raw:
            raw["seat"] = int(raw["seat"])
        if "players" in raw:
            raw["players"] = [int(x) for x in raw["players"]]
        todo = [dict(raw, options=raw.get("options", []))] if raw["op"] == "decide" else [raw]
    combat = v.get("combat")
    rs = v.get("rules_state") or {}
    stops = v.get("stops")
    return {"n": int(v.get("players", len(seats))), "cards": cards, "seats": seats, "active": int(v.get("active", 0)),
            "turn": int(v.get("turn", 0)), "first": int(v.get("first", 0)), "phase": v.get("phase", ""),
            "stack": [dict(_join(it, {"player": "p"}), p=int(it.get("player", 0))) for it in v.get("stack") or ()],
            "combat": _combat_state(combat) if combat else None,
            "effects": rs.get("effects") or [], "adv": rs.get("adv") or [], "delayed": rs.get("delayed") or [],
            "t": rs.get("t") or {}, "dealt_prev": rs.get("dealt_prev") or {}, "auras": rs.get("auras") or [],
            "todo": todo, "outcome": v.get("outcome"), "rng": 0, "next_id": 0,
            "stops": [list(x.get("phases") or ()) for x in stops] if stops else None}


def public_card(S: Json, cid: str) -> Json:
    return card_public(S, cid)
