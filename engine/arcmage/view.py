"""Per-player views (M26) and the state rebuilt from a view for legal-action enumeration.

A view shows: the player's hand, resource piles and unbuilt cities; every public zone (kingdoms
with residents and enchantments, armies, graveyards, removed cards, the stack, combat, effects,
advantages); for others only counts of hand, deck, resource piles (and how many are marked) and
unbuilt cities.  Nobody sees a deck's order; a player searching its deck sees the cards a pending
decision offers it (M48).  ``tiebreak`` is a value derived one-way from the game's RNG (M53).
"""

from __future__ import annotations

import hashlib
from typing import Any

from engine.arcmage.carddb import ATTRIBUTION, DEFS, FACTIONS
from engine.arcmage.core import Json, card_public, copy_data, head, stats

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


def make_view(S: Json, p: int, step: Json, version: int) -> Json:
    cards = {}
    all_cards = S["cards"]
    for cid in _visible_ids(S, p):
        src = all_cards[cid]
        c = dict(src)
        if "res" in c:
            c["res"] = list(c["res"])
        if "ench" in c:
            c["ench"] = list(c["ench"])
        c["name"] = DEFS[c["k"]]["name"]
        if c["z"] in ("army", "res"):
            a, d, kw = stats(S, cid)
            c["attack"], c["defense"], c["keywords"] = a, d, sorted(kw)
        cards[cid] = c
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
    me = S["seats"][p]
    small = copy_data({"stack": S["stack"], "combat": S["combat"], "effects": S["effects"], "adv": S["adv"],
                       "delayed": S["delayed"], "t": S["t"] or {}, "pending": _pending_raw(S, p)})
    t = small["t"]
    if "dealt" in t:
        t["dealt"] = {c: n for c, n in t["dealt"].items() if c in cards}
    v: Json = {
        "game": "arcmage", "you": p, "players": S["n"], "version": version, "turn": S["turn"],
        "active": S["active"], "first": S["first"], "phase": S["phase"] if S["outcome"] is None else "over",
        "step": step, "pending": small["pending"],
        "seats": seats, "hand": list(me["hand"]), "unbuilt": list(me["unbuilt"]),
        "piles": {f: list(me["piles"][f]) for f in FACTIONS},
        "cards": cards, "stack": small["stack"], "combat": small["combat"], "effects": small["effects"],
        "adv": small["adv"], "delayed": small["delayed"], "t": t,
        "dealt_prev": {c: n for c, n in S["dealt_prev"].items() if c in cards}, "auras": list(S["auras"]),
        "outcome": dict(S["outcome"]) if S["outcome"] else None, "tiebreak": tiebreak(S),
        "attribution": ATTRIBUTION, "stops": S.get("stops") or [[] for _ in range(S["n"])],
    }
    return v


def state_from_view(v: Json) -> Json:
    """A state holding what the view shows, hidden cards as placeholder ids without card entries.

    Only for read-only rule checks of the viewing player's own actions."""
    p = v["you"]
    cards = v["cards"]  # read-only use: the extra view keys (name, attack, ...) are ignored
    seats = []
    for q, s in enumerate(v["seats"]):
        seat: Json = {"out": s["out"], "temp": dict(s["temp"]), "grave": list(s["grave"]),
                      "removed": list(s["removed"]), "army": list(s["army"]), "cities": list(s["cities"]),
                      "deck": ["?"] * s["deck_count"]}
        if q == p:
            seat["hand"] = list(v["hand"])
            seat["unbuilt"] = list(v["unbuilt"])
            seat["piles"] = {f: list(v["piles"][f]) for f in FACTIONS}
        else:
            seat["hand"] = ["?"] * s["hand_count"]  # hidden cards: placeholders without card entries
            seat["unbuilt"] = ["?"] * s["unbuilt_count"]
            seat["piles"] = {f: ["?"] * s["pile_counts"][f] for f in FACTIONS}
        seats.append(seat)
    pend = v["pending"]
    todo: list[Any] = []
    if pend is not None:
        todo = [dict(pend, options=pend.get("options", []))] if pend["op"] == "decide" else [dict(pend)]
    return {"n": v["players"], "cards": cards, "seats": seats, "active": v["active"], "turn": v["turn"],
            "first": v["first"], "phase": v["phase"], "stack": v["stack"], "combat": v["combat"],
            "effects": v["effects"], "adv": v["adv"], "delayed": v["delayed"], "t": v["t"],
            "dealt_prev": v["dealt_prev"], "auras": v["auras"], "todo": todo, "outcome": v["outcome"],
            "rng": 0, "next_id": 0, "stops": v.get("stops")}


def public_card(S: Json, cid: str) -> Json:
    return card_public(S, cid)
