"""The autopilot (M53): a deterministic choice among the seat's legal actions, from its view only.

Ties are broken by the view's ``tiebreak`` (derived one-way from the game's RNG).  The policy:
draw 1 + one resource while under 6 resources, else draw 2; build when it has no city; devote every
unmarked resident (Borg's Keep only with devotion 3 or more); cast the costliest affordable card
(creatures into the highest-defense city, sudden ones into the army); move residents that can
fight to the army; attack the lowest-defense city with every able creature; intercept to keep a
city from falling or to kill an attacker without losing the blocker; pass in windows except to
save its own dying creatures; decline optional costs it does not need.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.arcmage import actions as acts
from engine.arcmage import core
from engine.arcmage.carddb import DEFS
from engine.arcmage.core import Json
from engine.arcmage.view import state_from_view


def _kind(a: Json) -> str:
    return next(iter(a))


def _pick(options: list[Json], key: Callable[[Json], Any], tb: int) -> Json:
    """The best option by ``key`` (highest); ties broken by the tiebreak value."""
    scored = sorted(range(len(options)), key=lambda i: (key(options[i]), -((i * 2654435761 + tb) % 1000003)),
                    reverse=True)
    return options[scored[0]]


def choose_action(view: Json) -> Json:
    pend = view.get("pending")
    if pend and pend.get("op") == "window" and pend.get("kind") != "dying":
        return {"pass": {}}  # M53: it passes in windows
    S = state_from_view(view)
    p = int(view.get("you", 0))
    h = core.head(S)
    if h is None or S["outcome"] is not None or p not in acts.step_of(S).players:
        return {}
    tb = int(view.get("tiebreak", 0))
    cands = acts.unique_candidates(S, p)
    while cands:
        a = _policy(S, p, h, cands, tb)
        if acts.is_legal(S, p, h, a):
            return a
        if a in cands:
            cands.remove(a)
        else:
            break
    for a in cands:
        if acts.is_legal(S, p, h, a):
            return a
    return {}


def _policy(S: Json, p: int, h: Json, legal: list[Json], tb: int) -> Json:
    """The preferred action among ``legal`` (candidates; the caller checks the choice)."""
    if h["op"] == "decide":
        return _decide(S, p, h, legal, tb)
    if h["op"] == "window":
        saves = [a for a in legal if _kind(a) == "ability" and a["ability"].get("targets")
                 and S["cards"].get(a["ability"]["targets"][0], {}).get("o") == p]
        if saves:
            return saves[0]
        return {"pass": {}}
    phase = h["phase"]
    by: dict[str, list[Json]] = {}
    for a in legal:
        by.setdefault(_kind(a), []).append(a)
    if phase == "build":
        if "build" in by and "pass" not in by:
            return _pick(by["build"], lambda a: _city_def(S, a["build"]["card"]), tb)
        return {"pass": {}}
    if phase == "draw":
        res = sum(len(v) for v in S["seats"][p]["piles"].values())
        prefs = ["draw1", "draw2", "draw0"] if res < 6 else ["draw2", "draw1", "draw0"]
        for o in prefs:
            a = {"draw": {"option": o}}
            if a in legal:
                return a
        return legal[0]
    if phase == "resource":
        if "resource" in by:
            fac = _main_faction(S, p)
            opts = [a for a in by["resource"] if a["resource"]["faction"] == fac] or by["resource"]
            return _pick(opts, lambda a: _resource_value(S, a["resource"]["card"]), tb)
        return legal[0]
    if phase == "tactics":
        devs = [a for a in by.get("devote", []) if _want_devote(S, p, a["devote"]["card"])]
        if devs:
            return _pick(devs, lambda a: _target_value(S, p, a["devote"].get("target")), tb)
        return {"pass": {}}
    if phase in core.PLAY_PHASES:
        budget = sum(core.resources_available(S, p).values())
        plays = [a for a in by.get("play", []) if _card_cost(S, a["play"]["card"]) <= budget + 1
                 and _want_play(S, p, a["play"])]
        if plays:
            plays.sort(key=lambda a: _play_value(S, p, a["play"]), reverse=True)
            for a in plays:
                if acts.is_legal(S, p, h, a):
                    return a
        abil = [a for a in by.get("ability", []) if _want_ability(S, p, a["ability"])]
        if abil:
            return _pick(abil, lambda a: _target_value(S, p, (a["ability"].get("targets") or [None])[0]), tb)
        if phase == "play1":
            mv = [a for a in by.get("move", []) if a["move"]["to"] == "army" and not core.has_kw(
                S, a["move"]["card"], "peaceful") and S["cards"][a["move"]["card"]]["z"] == "res"
                and core.attack_of(S, a["move"]["card"]) > 0]
            if mv:
                return _pick(mv, lambda a: core.attack_of(S, a["move"]["card"]), tb)
        if "pass" in by:
            return {"pass": {}}
        return legal[0]
    if phase == "attack":
        if "attack" in by:
            best = max(len(a["attack"]["attackers"]) for a in by["attack"])
            full = [a for a in by["attack"] if len(a["attack"]["attackers"]) == best]
            total = sum(core.attack_of(S, x) for x in full[0]["attack"]["attackers"])
            if total > 0 or "pass" not in by:
                return _pick(full, lambda a: -_city_def(S, a["attack"]["city"]), tb)
        if "pass" in by:
            return {"pass": {}}
        return legal[0]
    if phase == "blocks":
        evs = [a for a in by.get("play", []) if DEFS[S["cards"][a["play"]["card"]]["k"]]["key"] == "battering_ram"]
        if evs and S.get("combat") and any("soldier" in core.subs(S, x) for x in S["combat"]["attackers"]):
            return evs[0]
        return {"pass": {}}
    return {"pass": {}} if "pass" in by else legal[0]


def _decide(S: Json, p: int, h: Json, legal: list[Json], tb: int) -> Json:
    kind = h["kind"]
    ch = [a for a in legal if _kind(a) == "choose"]
    if not ch:
        return legal[0]

    def opt(a: Json) -> Any:
        return a["choose"]["option"]

    if kind == "intercept":
        return _intercept(S, p, ch, tb)
    if kind in ("unmark_pay", "conscript"):
        pick = [a for a in ch if opt(a) in (False, None)]
        return pick[0] if pick else ch[0]
    if kind == "footsoldier_pay":
        return {"choose": {"option": True}} if {"choose": {"option": True}} in ch else ch[0]
    if kind == "split":
        return _pick(ch, lambda a: _split_value(S, h, opt(a)), tb)
    if kind in ("setup_build", "resident_to"):
        return _pick(ch, lambda a: _city_def(S, opt(a)), tb)
    if kind == "discard":
        return _pick(ch, lambda a: -_card_cost(S, opt(a)), tb)
    if kind == "sacrifice_resource":
        return _pick(ch, lambda a: (bool(opt(a)[1]), 0), tb)
    real = [a for a in ch if opt(a) is not None]
    if not real:
        return ch[0]
    return _pick(real, lambda a: _card_cost(S, opt(a) if isinstance(opt(a), str) else opt(a)[0]), tb)


def _intercept(S: Json, p: int, ch: list[Json], tb: int) -> Json:
    comb = S["combat"]
    none = {"choose": {"option": None}}
    city = comb["city"]
    blocked = set(comb.get("blocked") or ())
    unblocked = [a for a in comb["attackers"] if a not in blocked]
    incoming = sum(core.attack_of(S, a) for a in unblocked)
    cdef = S["cards"][city]["cdef"] if city in S["cards"] else 0
    good = []
    for a in ch:
        o = a["choose"]["option"]
        if o is None:
            continue
        b, att = o
        if att in blocked:
            continue
        kills = core.attack_of(S, b) >= core.lethal(S, att)
        survives = core.attack_of(S, att) < core.lethal(S, b)
        if (kills and survives) or incoming >= cdef:
            good.append((a, (kills and survives, core.attack_of(S, att))))
    if good:
        return _pick([g for g, _ in good], lambda a: dict((id(x), v) for x, v in good).get(id(a), (False, 0)), tb)
    return none if none in ch else ch[0]


def _split_value(S: Json, h: Json, amounts: list[int]) -> tuple[int, int]:
    kills = sum(1 for b, n in zip(h["blockers"], amounts, strict=True) if n >= core.lethal(S, b))
    return kills, -max(amounts)


def _city_def(S: Json, cid: Any) -> int:
    c = S["cards"].get(cid) if isinstance(cid, str) else None
    if c is None:
        return 0
    if c["z"] == "city":
        return int(c["cdef"])
    return int(DEFS[c["k"]]["defense"] or 0)


def _card_cost(S: Json, cid: Any) -> int:
    c = S["cards"].get(cid) if isinstance(cid, str) else None
    if c is None:
        return 0
    cost = DEFS[c["k"]]["cost"]
    return int(cost) if isinstance(cost, int) else 3


def _main_faction(S: Json, p: int) -> str:
    counts: dict[str, int] = {}
    for cid in S["seats"][p]["hand"]:
        f = DEFS[S["cards"][cid]["k"]]["faction"]
        counts[f] = counts.get(f, 0) + 1
    for cid in core.in_play_cards(S, p):
        f = DEFS[S["cards"][cid]["k"]]["faction"]
        counts[f] = counts.get(f, 0) + 2
    return max(sorted(counts), key=lambda f: counts[f]) if counts else "Gaian"


def _resource_value(S: Json, cid: str) -> int:
    d = DEFS[S["cards"][cid]["k"]]
    if d["type"] == "city":
        return 10
    return _card_cost(S, cid) if d["type"] != "creature" else _card_cost(S, cid) - 1


def _want_devote(S: Json, p: int, cid: str) -> bool:
    city = S["cards"][cid]["at"]
    key = S["cards"][city]["k"]
    if key == "borgs_keep":
        total = sum(DEFS[S["cards"][r]["k"]]["loyalty"] for r in S["cards"][city]["res"]
                    if not S["cards"][r].get("m"))
        return bool(total >= 3)
    return bool(core.rules(key).levels) or bool(DEFS[S["cards"][cid]["k"]]["key"] == "nightingale")


def _target_value(S: Json, p: int, t: Any) -> int:
    if not isinstance(t, str) or t not in S["cards"]:
        return 0
    c = S["cards"][t]
    if c["o"] == p:
        return -5
    if c["z"] in core.IN_PLAY:
        return core.attack_of(S, t) + 1
    return 1


def _want_play(S: Json, p: int, f: Json) -> bool:
    d = DEFS[S["cards"][f["card"]]["k"]]
    key = d["key"]
    if key == "seat_of_the_throne":
        return len(S["seats"][p]["cities"]) == 1
    if key in ("battering_ram", "call_to_aid", "natures_outrage"):
        return False
    if key == "revenge":
        return bool(f.get("targets")) and S["dealt_prev"].get(f["targets"][0], 0) > 0
    if key == "early_spring":
        return True
    tg = f.get("targets") or []
    if any(S["cards"].get(t, {}).get("o") == p for t in tg):
        return False
    if d["type"] == "creature":
        if f.get("to") == "army":
            return True
        return not core.has_kw(S, f["card"], "sudden") or "sudden" not in d["keywords"]
    return True


def _play_value(S: Json, p: int, f: Json) -> tuple[int, int, int]:
    cid = f["card"]
    d = DEFS[S["cards"][cid]["k"]]
    cost = _card_cost(S, cid)
    if f.get("x") is not None:
        cost = int(f["x"])
    dest = 0
    to = f.get("to")
    if isinstance(to, str) and to != "army":
        dest = _city_def(S, to)
    elif to == "army":
        dest = 100
    tgt = 0
    for t in f.get("targets") or []:
        c = S["cards"].get(t)
        if c is not None and c["z"] in core.IN_PLAY:
            dmg = 3 if f.get("mode") == "creature" else 1
            tgt += 5 if dmg >= core.lethal(S, t) else 0
            tgt += core.attack_of(S, t)
    return cost + (1 if d["type"] == "creature" else 0), tgt, dest


def _want_ability(S: Json, p: int, f: Json) -> bool:
    key = DEFS[S["cards"][f["card"]]["k"]]["key"]
    ab = core.rules(key).ability or {}
    if ab.get("timing") != "play":
        return False
    tg = f.get("targets") or []
    return bool(tg) and bool(S["cards"].get(tg[0], {}).get("o") != p)
