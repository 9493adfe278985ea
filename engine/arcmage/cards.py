"""The rules of every card of the two built-in decks (M23, M52): small functions keyed by card key.

Each entry of :data:`engine.arcmage.core.RULES` is a :class:`~engine.arcmage.core.CardRules` made of
the hooks its printed text needs; city levels map to lasting advantages (:data:`core.ADVANTAGES`)
or one-time effects (:data:`core.FX`); choices are pending decisions (:data:`core.DECIDE`).
Card texts are CC BY-SA 4.0 by the Arcmage project (see ``data/README.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

from engine.arcmage import core
from engine.arcmage.carddb import DEFS
from engine.arcmage.core import ADVANTAGES, DECIDE, FX, IN_PLAY, LASTING, RULES, CardRules, G, Json, fail
from engine.errors import InvalidOrder

R = RULES


# --- helpers -------------------------------------------------------------------------------------

def _targets(g: G, p: int, f: Json, lo: int, hi: int, ok: Callable[[str], bool], what: str, rule: str = "M39"
             ) -> list[str]:
    t = f.get("targets") if f.get("targets") is not None else []
    if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
        raise InvalidOrder("targets must be a list of card ids", field="play.targets")
    if len(set(t)) != len(t):
        raise fail("targets must be different cards", rule, "play.targets")
    if f.get("_resolving"):
        keep = [x for x in t if ok(x) and core.targetable(g.S, p, x)]
        if t and not keep:
            raise fail("no target left", rule, "play.targets")
        return keep
    if not lo <= len(t) <= hi:
        raise fail(f"name {lo}..{hi} target(s): {what}", rule, "play.targets")
    for i, x in enumerate(t):
        if not ok(x):
            raise fail(f"not a legal target: {what}", rule, f"play.targets[{i}]")
        if not core.targetable(g.S, p, x):
            raise fail("a creature with sanctuary cannot be targeted by an opponent", "M50", f"play.targets[{i}]")
    return list(t)


def _is_creature(g: G) -> Callable[[str], bool]:
    return lambda x: core.is_creature_in_play(g, x)


def _is_city(g: G, owner: int | None = None) -> Callable[[str], bool]:
    def ok(x: str) -> bool:
        c = g.S["cards"].get(x)
        return c is not None and c["z"] == "city" and (owner is None or c["o"] == owner)
    return ok


def _creature_targets(g: G, p: int, opposing: bool = False) -> list[str]:
    return [c for c in core.creatures_in_play(g.S) if core.targetable(g.S, p, c)
            and (not opposing or g.card(c)["o"] != p)]


def _no_fields(f: Json, *names: str) -> None:
    for n in names:
        if f.get(n) not in (None, []):
            raise InvalidOrder(f"this card takes no {n}", field=f"play.{n}")


def _eot(g: G, cid: str, a: int = 0, d: int = 0, kw: tuple[str, ...] = (), until: str = "eot",
         p: int | None = None) -> None:
    e: Json = {"card": cid, "until": until}
    if a:
        e["a"] = a
    if d:
        e["d"] = d
    if kw:
        e["kw"] = list(kw)
    if p is not None:
        e["p"] = p
    g.S["effects"].append(e)


def _soldiers_in(g: G, ids: list[str]) -> list[str]:
    return [c for c in ids if c in g.S["cards"] and "soldier" in DEFS[g.card(c)["k"]]["subs"]]


def _put_into_play(g: G, cid: str, zone: str, at: str | None = None) -> None:
    """Put a card into play by an effect (M33): pays nothing, enters unmarked, comes into play."""
    core.move(g, cid, zone, at=at)
    g.card(cid)["m"] = False
    core.came_into_play(g, cid)


def _key(g: G, cid: str) -> str:
    k: str = g.card(cid)["k"]
    return k


# --- city advantages -----------------------------------------------------------------------------

def _adv_armory2(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    if "soldier" in DEFS[S["cards"][cid]["k"]]["subs"]:
        acc[0] += 1
        acc[1] += 1


def _adv_armory4(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    if "soldier" in DEFS[S["cards"][cid]["k"]]["subs"]:
        acc[2].add("first_strike")


def _adv_none(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    return


def _adv_farmland4(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    if DEFS[S["cards"][cid]["k"]]["subs"] & {"flower", "tree"}:
        acc[0] += 1
        acc[1] += 3


def _adv_sanctuary3(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    c = S["cards"][cid]
    if c["z"] == "res" and c.get("at") == adv["city"]:
        acc[2].add("sanctuary")


def _adv_sanctuary5(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    if S["cards"][cid]["z"] == "res":
        acc[2].add("sanctuary")


def _adv_sanctuary7(S: Json, adv: Json, cid: str, acc: list[Any]) -> None:
    if S["cards"][cid]["z"] == "army":
        acc[2].add("sanctuary")


ADVANTAGES.update({"armory2": _adv_armory2, "armory4": _adv_armory4, "barracks3": _adv_none,
                   "farmland4": _adv_farmland4, "sanctuary3": _adv_sanctuary3, "sanctuary5": _adv_sanctuary5,
                   "sanctuary7": _adv_sanctuary7})
LASTING["barracks3"] = {"reduce": "soldier", "by": 1}


def _fx_barracks5(g: G, op: Json) -> None:
    p = op["p"]
    opts = _soldiers_in(g, g.seat(p)["hand"])
    if opts:
        core.decide(g, p, "barracks5", list(opts))


def _dec_barracks5(g: G, op: Json, v: Any) -> None:
    if v is not None and v in g.seat(op["seat"])["hand"]:
        _put_into_play(g, str(v), "army")


def _fx_borg1(g: G, op: Json) -> None:
    p = op["p"]
    n = len(core.creatures_in_play(g.S, p))
    if n:
        core.push(g, {"op": "fx", "fn": "borg1_each", "p": p, "left": n})


def _sac_options(g: G, p: int) -> list[list[Any]]:
    out: list[list[Any]] = []
    for f, pile in g.seat(p)["piles"].items():
        for marked in (True, False):
            if any(bool(g.S["cards"][c]["m"]) == marked for c in pile):
                out.append([f, marked])
    return out


def _fx_borg1_each(g: G, op: Json) -> None:
    p = op["p"]
    opts = _sac_options(g, p)
    if not opts or op["left"] <= 0:
        return
    if len(opts) == 1:
        _sacrifice_choice(g, p, opts[0])
        core.push(g, {"op": "fx", "fn": "borg1_each", "p": p, "left": op["left"] - 1})
        return
    core.decide(g, p, "sacrifice_resource", opts, left=op["left"])


def _sacrifice_choice(g: G, p: int, v: list[Any]) -> None:
    f, marked = v
    for c in g.seat(p)["piles"][f]:
        if bool(g.S["cards"][c]["m"]) == bool(marked):
            core.move(g, c, "grave")
            g.emit("sacrificed_resources", {"player": p, "count": 1, "faction": f})
            return


def _dec_sacrifice(g: G, op: Json, v: Any) -> None:
    p = op["seat"]
    _sacrifice_choice(g, p, v)
    core.push(g, {"op": "fx", "fn": "borg1_each", "p": p, "left": op["left"] - 1})


def _fx_borg3(g: G, op: Json) -> None:
    g.S["t"]["second"] = True


def _fx_farmland2(g: G, op: Json) -> None:
    cid = core.new_token(g, "crop_token", op["p"], "res", at=op["city"])
    g.card(cid)["m"] = False
    core.came_into_play(g, cid)


def _graveyard_creatures(g: G, p: int) -> list[str]:
    return [c for c in g.seat(p)["grave"] if DEFS[g.card(c)["k"]]["type"] == "creature"]


def _fx_spirit3(g: G, op: Json) -> None:
    opts: list[Any] = [None, *_graveyard_creatures(g, op["p"])]
    if len(opts) > 1:
        core.decide(g, op["p"], "spirit3", opts)


def _dec_spirit3(g: G, op: Json, v: Any) -> None:
    if v is None:
        return
    p = op["seat"]
    _put_into_play(g, str(v), "army")
    g.S["delayed"].append({"kind": "remove", "card": str(v), "p": p, "when": "start"})


def _fx_spirit7(g: G, op: Json) -> None:
    opts: list[Any] = [None, *_graveyard_creatures(g, op["p"])]
    if len(opts) > 1:
        core.decide(g, op["p"], "spirit7", opts, city=op["city"])


def _dec_spirit7(g: G, op: Json, v: Any) -> None:
    if v is None:
        return
    city = op["city"]
    if city in g.S["cards"] and g.card(city)["z"] == "city":
        _put_into_play(g, str(v), "res", at=city)


FX.update({"barracks5": _fx_barracks5, "borg1": _fx_borg1, "borg1_each": _fx_borg1_each, "borg3": _fx_borg3,
           "farmland2": _fx_farmland2, "spirit3": _fx_spirit3, "spirit7": _fx_spirit7})
DECIDE.update({"barracks5": _dec_barracks5, "sacrifice_resource": _dec_sacrifice, "spirit3": _dec_spirit3,
               "spirit7": _dec_spirit7})

R["armory"] = CardRules(levels={2: ("lasting", "armory2"), 4: ("lasting", "armory4")})
R["barracks"] = CardRules(levels={3: ("lasting", "barracks3"), 5: ("fx", "barracks5")})
R["borgs_keep"] = CardRules(levels={1: ("fx", "borg1"), 3: ("fx", "borg3")})
R["farmland"] = CardRules(levels={2: ("fx", "farmland2"), 4: ("lasting", "farmland4")})
R["sanctuary"] = CardRules(levels={3: ("lasting", "sanctuary3"), 5: ("lasting", "sanctuary5"),
                                   7: ("lasting", "sanctuary7")})
R["spirit_tree"] = CardRules(levels={3: ("fx", "spirit3"), 7: ("fx", "spirit7")})


# --- The Empire ----------------------------------------------------------------------------------

def _assemble(g: G, item: Json) -> None:
    p = item["p"]
    for city in list(g.seat(p)["cities"]):
        for r in _soldiers_in(g, list(g.card(city)["res"])):
            if not g.card(r).get("m"):
                core.relocate(g, r, "army")
    g.emit("assembled", {"player": p})


R["assemble_the_army"] = CardRules(resolve=_assemble)


def _battering(g: G, item: Json) -> None:
    for c in _soldiers_in(g, core.creatures_in_play(g.S, item["p"])):
        _eot(g, c, a=2, kw=("overrun",))


R["battering_ram"] = CardRules(resolve=_battering)


def _bearer_dealt(g: G, src: str, tgt: str, n: int) -> None:
    if n <= 0 or src not in g.S["cards"] or tgt not in g.S["cards"] or DEFS[g.S["cards"][tgt]["k"]]["type"] != "city":
        return
    p = g.card(src)["o"]
    opts: list[Any] = [None]
    for s in _soldiers_in(g, g.seat(p)["hand"]):
        for city in g.seat(p)["cities"]:
            opts.append([s, city])
    if len(opts) > 1:
        core.decide(g, p, "bearer", opts)


def _dec_bearer(g: G, op: Json, v: Any) -> None:
    if v is None:
        return
    s, city = v
    if s in g.seat(op["seat"])["hand"] and city in g.S["cards"] and g.card(city)["z"] == "city":
        _put_into_play(g, s, "res", at=city)


R["bearer"] = CardRules(dealt=_bearer_dealt)
DECIDE["bearer"] = _dec_bearer


def _conscript_etb(g: G, cid: str) -> None:
    p = g.card(cid)["o"]
    opts: list[Any] = [None, *_soldiers_in(g, g.seat(p)["deck"])]
    if len(opts) > 1:
        core.decide(g, p, "conscript", opts, chosen=[])
    else:
        core.shuffle_deck(g, p)


def _dec_conscript(g: G, op: Json, v: Any) -> None:
    p = op["seat"]
    chosen = list(op["chosen"])
    if v is not None:
        chosen.append(str(v))
        opts: list[Any] = [None, *[c for c in _soldiers_in(g, g.seat(p)["deck"]) if c not in chosen]]
        if len(opts) > 1:
            core.decide(g, p, "conscript", opts, chosen=chosen)
            return
    deck = g.seat(p)["deck"]
    rest = [c for c in deck if c not in chosen]
    r = g.rng()
    r.shuffle(rest)
    g.save_rng(r)
    deck[:] = chosen + rest
    g.emit("revealed", {"player": p, "cards": sorted(DEFS[g.card(c)["k"]]["name"] for c in chosen),
                        "to": "top of deck"})


R["conscript"] = CardRules(etb=_conscript_etb)
DECIDE["conscript"] = _dec_conscript

POCKET_MODES = ("city", "creature", "creatures")


def _pocket_check(g: G, p: int, cid: str, f: Json) -> Json:
    mode = f.get("mode")
    if mode not in POCKET_MODES:
        raise InvalidOrder("mode is city (1 damage), creature (3 damage) or creatures (1 damage to 1-3)",
                           rule="M52", field="play.mode")
    if mode == "city":
        t = _targets(g, p, f, 1, 1, _is_city(g), "a city")
    elif mode == "creature":
        t = _targets(g, p, f, 1, 1, _is_creature(g), "a creature")
    else:
        t = _targets(g, p, f, 1, 3, _is_creature(g), "1-3 different creatures")
    return {"mode": mode, "targets": t}


def _pocket_variants(g: G, p: int, cid: str) -> list[Json]:
    out: list[Json] = [{"mode": "city", "targets": [c]} for c in core.cities_in_play(g.S) if g.card(c)["o"] != p]
    cr = _creature_targets(g, p)
    out.extend({"mode": "creature", "targets": [c]} for c in cr)
    for k in (2, 3):
        for combo in list(combinations(cr, k))[:10]:
            out.append({"mode": "creatures", "targets": list(combo)})
    return out


def _pocket_resolve(g: G, item: Json) -> None:
    n = {"city": 1, "creature": 3, "creatures": 1}[item["mode"]]
    core.deal_damage(g, [(item["card"], t, n) for t in item["targets"]])


R["dimensional_pocket"] = CardRules(check=_pocket_check, variants=_pocket_variants, resolve=_pocket_resolve)


def _footsoldiers_in_play(g: G) -> int:
    return sum(1 for c in core.creatures_in_play(g.S) if g.card(c)["k"] == "footsoldier")


def _foot_etb(g: G, cid: str) -> None:
    p = g.card(cid)["o"]
    n = _footsoldiers_in_play(g)
    if core.plan_payment(g.S, p, n, 0, None) is not None:
        core.decide(g, p, "footsoldier_pay", [False, True], n=n)


def _dec_foot_pay(g: G, op: Json, v: Any) -> None:
    if not v:
        return
    p = op["seat"]
    plan = core.plan_payment(g.S, p, op["n"], 0, None)
    if plan is None:
        return
    core.pay_resources(g, p, plan)
    found = [c for c in g.seat(p)["deck"] if g.card(c)["k"] == "footsoldier"]
    if found:
        core.decide(g, p, "footsoldier_pick", found[:1])
    else:
        core.shuffle_deck(g, p)


def _dec_foot_pick(g: G, op: Json, v: Any) -> None:
    p = op["seat"]
    g.emit("revealed", {"player": p, "cards": [DEFS[g.card(str(v))["k"]]["name"]], "to": "army"})
    core.shuffle_deck(g, p)
    _put_into_play(g, str(v), "army")


R["footsoldier"] = CardRules(etb=_foot_etb)
DECIDE.update({"footsoldier_pay": _dec_foot_pay, "footsoldier_pick": _dec_foot_pick})


def _mentor_etb(g: G, cid: str) -> None:
    p = g.card(cid)["o"]
    opts: list[Any] = [None, *_soldiers_in(g, g.seat(p)["deck"])]
    if len(opts) > 1:
        core.decide(g, p, "mentor", opts)
    else:
        core.shuffle_deck(g, p)


def _dec_mentor(g: G, op: Json, v: Any) -> None:
    p = op["seat"]
    if v is not None:
        g.emit("revealed", {"player": p, "cards": [DEFS[g.card(str(v))["k"]]["name"]], "to": "hand"})
        core.move(g, str(v), "hand")
    core.shuffle_deck(g, p)


R["mentor"] = CardRules(etb=_mentor_etb)
DECIDE["mentor"] = _dec_mentor


def _merc_discard(g: G, cid: str) -> None:
    if g.card(cid).get("atk_decl") and g.card(cid)["z"] in IN_PLAY:
        g.emit("put_in_graveyard", {"card": cid, "name": "Mercenary"})
        core.move(g, cid, "grave")


R["mercenary"] = CardRules(discard_start=_merc_discard)


def _eagle_static(S: Json, cid: str, acc: list[Any]) -> None:
    comb = S.get("combat")
    if not comb:
        return
    for a, bl in comb["blocks"].items():
        if cid in bl and a in S["cards"] and not core.has_kw(S, a, "flying"):
            acc[0] += 2
            acc[1] += 1
            return


R["mounted_eagle"] = CardRules(self_static=_eagle_static)


def _revenge_check(g: G, p: int, cid: str, f: Json) -> Json:
    t = _targets(g, p, f, 0, 1, lambda x: core.is_creature_in_play(g, x) and g.card(x)["o"] != p,
                 "an opposing creature (or none)")
    return {"targets": t}


def _revenge_variants(g: G, p: int, cid: str) -> list[Json]:
    return [{"targets": []}, *({"targets": [c]} for c in _creature_targets(g, p, opposing=True))]


def _revenge_resolve(g: G, item: Json) -> None:
    t = item.get("targets") or []
    bonus = int(g.S["dealt_prev"].get(t[0], 0)) if t else 0
    g.S["t"]["revenge"].append(bonus)
    g.emit("blood_vengeance", {"player": item["p"], "bonus": bonus})


R["revenge"] = CardRules(check=_revenge_check, variants=_revenge_variants, resolve=_revenge_resolve)


def _seat_check(g: G, p: int, cid: str, f: Json) -> Json:
    return {"targets": _targets(g, p, f, 1, 1, _is_city(g, p), "a city you control")}


def _seat_variants(g: G, p: int, cid: str) -> list[Json]:
    return [{"targets": [c]} for c in g.seat(p)["cities"]]


def _seat_resolve(g: G, item: Json) -> None:
    city = item["targets"][0]
    g.card(city)["cdef"] += 3
    for other in [c for c in g.seat(item["p"])["cities"] if c != city]:
        core.destroy_city(g, other)


R["seat_of_the_throne"] = CardRules(check=_seat_check, variants=_seat_variants, resolve=_seat_resolve,
                                    ability={"city_cap": 1})


def _spearman_attack(g: G, cid: str) -> None:
    comb = g.S["combat"]
    for a in comb["attackers"]:
        if a != cid:
            _eot(g, a, a=1)


R["spearman"] = CardRules(forces="soldier", on_attack=_spearman_attack)


def _squad_etb(g: G, cid: str) -> None:
    p = g.card(cid)["o"]
    deck = g.seat(p)["deck"]
    top = deck[:4]
    g.emit("revealed", {"player": p, "cards": [DEFS[g.card(c)["k"]]["name"] for c in top], "to": "top 4"})
    for c in top:
        if "soldier" in DEFS[g.card(c)["k"]]["subs"]:
            core.move(g, c, "hand")
        else:
            deck.remove(c)
            deck.append(c)


R["squad_leader"] = CardRules(etb=_squad_etb)


def _trebuchet_check(g: G, p: int, cid: str, f: Json) -> Json:
    w = f.get("with")
    if not isinstance(w, list) or len(w) != 2 or not all(isinstance(x, str) for x in w) or len(set(w)) != 2:
        raise InvalidOrder("with names two other Soldiers you control", rule="M29", field="ability.with")
    for i, x in enumerate(w):
        c = g.S["cards"].get(x)
        if c is None or x == cid or c["o"] != p or c["z"] not in IN_PLAY or c.get("m") \
                or "soldier" not in DEFS[c["k"]]["subs"]:
            raise fail("mark two other unmarked Soldiers you control", "M29", f"ability.with[{i}]")
    t = _targets(g, p, f, 1, 1, _is_creature(g), "a creature")
    return {"with": list(w), "targets": t}


def _trebuchet_variants(g: G, p: int, cid: str) -> list[Json]:
    sol = [c for c in _soldiers_in(g, core.creatures_in_play(g.S, p)) if c != cid and not g.card(c).get("m")]
    if len(sol) < 2:
        return []
    pair = sol[:2]
    return [{"with": pair, "targets": [t]} for t in _creature_targets(g, p) if t not in pair and t != cid]


def _trebuchet_run(g: G, p: int, cid: str, plan: Json) -> None:
    for x in plan["with"]:
        core.mark(g, x)
    for x in [cid, *plan["with"]]:
        g.card(x)["skip"] = 2
    core.deal_damage(g, [(cid, plan["targets"][0], 5)])


R["trebuchet"] = CardRules(ability={"timing": "play", "check": _trebuchet_check, "variants": _trebuchet_variants,
                                    "run": _trebuchet_run})


# --- Gaian ---------------------------------------------------------------------------------------

def _saver_check(g: G, p: int, cid: str, f: Json) -> Json:
    h = core.head(g.S)
    assert h is not None
    t = f.get("targets")
    if not isinstance(t, list) or len(t) != 1 or not isinstance(t[0], str):
        raise InvalidOrder("targets names the one dying creature to save", rule="M35", field="ability.targets")
    ab = R[_key(g, cid)].ability
    assert ab is not None
    x = t[0]
    if x not in h.get("cards", []) or not core.is_creature_in_play(g, x) or x not in core.dying_now(g.S):
        raise fail("not a dying creature", "M35", "ability.targets[0]")
    if not ab["saves"] & core.subs(g.S, x):
        raise fail(f"this ability saves only {'/'.join(sorted(ab['saves']))} creatures", "M52",
                   "ability.targets[0]")
    if not core.targetable(g.S, p, x):
        raise fail("a creature with sanctuary cannot be targeted by an opponent", "M50", "ability.targets[0]")
    if core.resource_cards(g.S, p) < 2:
        raise fail("the cost is two resource cards to sacrifice", "M29", "ability")
    return {"targets": [x]}


def _saver_variants(g: G, p: int, cid: str) -> list[Json]:
    h = core.head(g.S)
    if h is None or h["op"] != "window" or h["kind"] != "dying":
        return []
    return [{"targets": [x]} for x in h.get("cards", [])]


def _saver_run(g: G, p: int, cid: str, plan: Json) -> None:
    core.sacrifice_resources(g, p, 2)
    x = plan["targets"][0]
    g.card(x)["dmg"] = 0
    core.mark(g, x)
    g.emit("saved", {"card": x, "by": cid})


def _saver(kinds: frozenset[str]) -> Json:
    return {"timing": "dying", "saves": kinds, "check": _saver_check, "variants": _saver_variants,
            "run": _saver_run}


R["botanist"] = CardRules(ability=_saver(frozenset({"tree", "flower"})))
R["falconer"] = CardRules(ability=_saver(frozenset({"bird"})), grants_sudden="bird")


def _call_check(g: G, p: int, cid: str, f: Json) -> Json:
    return {"targets": _targets(g, p, f, 1, 1, _is_city(g, p), "a city you control")}


def _call_resolve(g: G, item: Json) -> None:
    g.S["effects"].append({"kind": "call_to_aid", "p": item["p"], "city": item["targets"][0], "until": "eot"})


R["call_to_aid"] = CardRules(check=_call_check, variants=_seat_variants, resolve=_call_resolve)


def _crop_check(g: G, p: int, cid: str, f: Json) -> Json:
    _no_fields(f, "targets", "with")
    return {}


def _crop_run(g: G, p: int, cid: str, plan: Json) -> None:
    core.move(g, cid, "grave")  # sacrificed: a token ceases to exist (M34)
    core.produce(g, p, "Gaian", 1)


R["crop_token"] = CardRules(ability={"timing": "resource", "check": _crop_check, "run": _crop_run})


def _spring_resolve(g: G, item: Json) -> None:
    for c in core.creatures_in_play(g.S):
        if core.subs(g.S, c) & {"tree", "flower"}:
            _eot(g, c, a=2, d=2)
    for city in core.cities_in_play(g.S):
        if DEFS[g.card(city)["k"]]["faction"] == "Gaian":
            g.card(city)["cdef"] += 2


R["early_spring"] = CardRules(resolve=_spring_resolve)


def _ambush_block(g: G, attacker: str, blocker: str) -> None:
    _eot(g, blocker, a=-1, d=-1)


def _ambush_check(g: G, p: int, cid: str, f: Json) -> Json:
    _no_fields(f, "with")
    t = _targets(g, p, f, 1, 1, lambda x: core.is_creature_in_play(g, x) or _is_city(g)(x),
                 "a creature or a city", "M52")
    return {"targets": t}


def _ambush_variants(g: G, p: int, cid: str) -> list[Json]:
    out = [{"targets": [c]} for c in _creature_targets(g, p) if g.card(c)["o"] != p]
    out.extend({"targets": [c]} for c in core.cities_in_play(g.S) if g.card(c)["o"] != p)
    return out


def _ambush_run(g: G, p: int, cid: str, plan: Json) -> None:
    core.deal_damage(g, [(cid, plan["targets"][0], 1)])


R["elvish_ambush"] = CardRules(on_block=_ambush_block, ability={
    "timing": "play", "check": _ambush_check, "variants": _ambush_variants, "run": _ambush_run})


def _archer_etb(g: G, cid: str) -> None:
    c = g.card(cid)
    if c["z"] == "res":
        g.card(c["at"])["cdef"] += 2


def _archer_aura(S: Json, src: str, cid: str, acc: list[Any]) -> None:
    if "elf" in DEFS[S["cards"][cid]["k"]]["subs"]:
        acc[2].add("ranged")


R["elvish_archer"] = CardRules(etb=_archer_etb, aura=_archer_aura)


def _grass_check(g: G, p: int, cid: str, f: Json) -> Json:
    return {"targets": _targets(g, p, f, 1, 1, _is_creature(g), "a creature")}


def _grass_variants(g: G, p: int, cid: str) -> list[Json]:
    n = sum(core.resources_available(g.S, p).values())
    xs = sorted({2, max(2, n)})
    return [{"x": x, "targets": [c]} for c in _creature_targets(g, p, opposing=True) for x in xs]


def _grass_resolve(g: G, item: Json) -> None:
    t = item["targets"][0]
    c = g.card(t)
    c["gr"] = c.get("gr", 0) + int(item.get("x", 0))
    c["m"] = True  # the mark of Grassroots itself adds no counter


def _grass_on_mark(g: G, ench: str, creature: str) -> None:
    c = g.card(creature)
    c["gr"] = c.get("gr", 0) + 1


R["grassroots"] = CardRules(check=_grass_check, variants=_grass_variants, resolve=_grass_resolve,
                            ability={"on_mark": _grass_on_mark}, unmark_pays_counters=True)


def _kolibri_run(g: G, p: int, cid: str, plan: Json) -> None:
    flower = any("flower" in core.subs(g.S, c) for c in core.creatures_in_play(g.S, p))
    core.produce(g, p, "Gaian", 2 if flower else 1)


R["kolibri"] = CardRules(ability={"timing": "resource", "check": _crop_check, "run": _kolibri_run})


def _outrage_resolve(g: G, item: Json) -> None:
    g.S["effects"].append({"kind": "outrage", "p": item["p"], "until": "eot"})


R["natures_outrage"] = CardRules(resolve=_outrage_resolve)


def _night_targets(g: G, p: int, cid: str) -> list[str]:
    return [c for c in _creature_targets(g, p) if c != cid]


def _night_check(g: G, p: int, cid: str, f: Json) -> Json:
    opts = _night_targets(g, p, cid)
    t = f.get("target")
    if not opts:
        if t is not None:
            raise fail("no creature can be targeted", "M52", "devote.target")
        return {}
    if t not in opts:
        raise fail("Nightingale must mark a target creature (not itself; sanctuary protects)", "M52",
                   "devote.target")
    return {"target": t}


def _night_variants(g: G, p: int, cid: str) -> list[Json]:
    opts = _night_targets(g, p, cid)
    return [{"target": t} for t in opts] if opts else [{}]


def _night_devote(g: G, cid: str, plan: Json) -> None:
    t = plan.get("target")
    if t and core.is_creature_in_play(g, t):
        core.mark(g, t)
        g.card(t)["skip"] = g.card(t).get("skip", 0) + 1
        g.emit("marked", {"card": t, "by": cid})


R["nightingale"] = CardRules(devote=_night_devote, devote_check=_night_check, devote_variants=_night_variants)


def _flower_on_play(g: G, src: str, played: str) -> None:
    if DEFS[g.card(played)["k"]]["faction"] == "Gaian":
        c = g.card(src)
        c["pa"] = c.get("pa", 0) + 1
        c["pd"] = c.get("pd", 0) + 1


R["nourished_flower"] = CardRules(ability={"on_play": _flower_on_play})


def _ivy_dealt(g: G, src: str, tgt: str, n: int) -> None:
    if n > 0 and core.is_creature_in_play(g, tgt):
        c = g.card(tgt)
        c["ivy"] = c.get("ivy", 0) + 1


R["poison_ivy"] = CardRules(dealt=_ivy_dealt)


def _sequoia_static(S: Json, cid: str, acc: list[Any]) -> None:
    c = S["cards"][cid]
    if c["z"] == "res":
        group = S["cards"][c["at"]]["res"]
    else:
        group = S["seats"][c["o"]]["army"]
    acc[1] += sum(1 for x in group if x != cid and DEFS[S["cards"][x]["k"]]["faction"] == "Gaian")
    if acc[1] >= 5:
        acc[2].add("ranged")


R["sequoia_saplings"] = CardRules(self_static=_sequoia_static)
