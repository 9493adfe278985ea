"""Player actions: who may act (the step), validation (read-only) and execution, candidates.

:func:`check` never changes the state it reads and reads only what the acting player may know, so
the same code validates an action on the real state and enumerates legal actions on the state
rebuilt from a player's view (:func:`engine.arcmage.view.state_from_view`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.actions import parse_action
from engine.arcmage import core
from engine.arcmage.carddb import DEFS, FACTIONS
from engine.arcmage.core import IN_PLAY, PLAY_PHASES, G, Json, fail, head, rules
from engine.base import RESPONSE_DEADLINE, STEP_OVER, TURN, TURN_DEADLINE, WINDOW, Step
from engine.errors import GameOver, IllegalOrder, InvalidOrder, NotYourTurn

#: action kind -> its fields
KINDS: dict[str, tuple[str, ...]] = {
    "pass": (),
    "choose": ("option",),
    "build": ("card",),
    "draw": ("option",),
    "resource": ("card", "faction"),
    "devote": ("card", "target"),
    "play": ("card", "to", "x", "mode", "targets", "pay"),
    "ability": ("card", "targets", "with"),
    "move": ("card", "to"),
    "salvage": ("card",),
    "attack": ("attackers", "city"),
}
DRAW_OPTIONS = {"draw2": (2, 0, 0), "draw1": (1, 1, 0), "draw0": (0, 2, 2)}


def step_of(S: Json) -> Step:
    if S["outcome"] is not None:
        return STEP_OVER
    h = head(S)
    if h is None:
        return STEP_OVER
    a = S["active"]
    if h["op"] == "await":
        return Step(TURN, (a,), TURN_DEADLINE, a)
    if h["op"] == "decide":
        seat = h["seat"]
        if seat == a:
            return Step(TURN, (seat,), TURN_DEADLINE, a)
        return Step(WINDOW, (seat,), RESPONSE_DEADLINE, a)
    return Step(WINDOW, tuple(h["players"]), RESPONSE_DEADLINE, a)


def _str(f: Json, key: str, kind: str) -> str:
    v = f.get(key)
    if not isinstance(v, str):
        raise InvalidOrder(f"{key} must be a card id (a string)", field=f"{kind}.{key}")
    return v


def _ids(f: Json, key: str, kind: str) -> list[str]:
    v = f.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise InvalidOrder(f"{key} must be a list of card ids", field=f"{kind}.{key}")
    if len(set(v)) != len(v):
        raise IllegalOrder(f"{key} names a card twice", rule="M39", field=f"{kind}.{key}")
    return list(v)


def own(S: Json, p: int, cid: str, zones: tuple[str, ...], fld: str, rule: str) -> Json:
    c = S["cards"].get(cid)
    if c is None or c["o"] != p or c["z"] not in zones:
        raise fail(f"no card of yours in your {' or '.join(zones)} is called {cid[:20]!r}", rule, fld)
    out: Json = c
    return out


def phase_of(S: Json) -> str | None:
    h = head(S)
    return h["phase"] if h is not None and h["op"] == "await" else None


def holds_priority(S: Json, p: int) -> bool:
    st = step_of(S)
    return p in st.players


_PARSE_KINDS: dict[str, tuple[str, ...]] = {**KINDS, "chat": ("text", "to")}


def parse(action: Any) -> tuple[str, Json]:
    kind, f = parse_action(action, _PARSE_KINDS)
    if kind == "chat":
        raise InvalidOrder("chat goes through act, not apply_action", field="action")
    return kind, f


def check(S: Json, p: int, action: Any) -> tuple[str, Json]:
    """Validate ``action`` of seat ``p``; returns ``(kind, plan)`` for :func:`execute`."""
    kind, f = parse(action)
    if S["outcome"] is not None:
        raise GameOver("the game is over", field="action")
    st = step_of(S)
    if p not in st.players:
        waiting = " and ".join(f"seat {s}" for s in st.players) or "no one"
        raise NotYourTurn(f"it is not your turn to act: waiting for {waiting}", rule="M38",
                          field="action")
    h = head(S)
    assert h is not None
    plan = CHECKS[kind](S, p, f, h)
    return kind, plan


def execute(g: G, p: int, kind: str, plan: Json) -> None:
    EXECS[kind](g, p, plan)
    core.push(g, {"op": "check"}) if kind not in ("pass", "choose") else None
    core.run(g)


# --- pass and choose -----------------------------------------------------------------------------

def _check_pass(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] == "window":
        return {}
    if h["op"] == "decide":
        if None in h["options"]:
            return {"decline": True}
        raise fail("this decision must be made (choose one of its options)", "M53", "pass")
    ph = h["phase"]
    if ph == "build" and must_build(S, p):
        raise fail("a player with no built city must take Build instead", "M45", "pass")
    if ph == "draw":
        raise fail("choose a Draw & resource option", "M9", "pass")
    if ph == "resource" and S["t"]["res_min"] > 0 and S["seats"][p]["hand"]:
        raise fail("draw 0 means playing 2 resources", "M9", "pass")
    if ph == "attack" and forced_attackers(S, p) and attackable_cities(S, p):
        raise fail("creatures that must attack can attack: declare an attack", "M56", "pass")
    return {}


def _exec_pass(g: G, p: int, plan: Json) -> None:
    S = g.S
    h = head(S)
    assert h is not None
    if h["op"] == "window":
        h["players"] = [q for q in h["players"] if q != p]
        g.emit("passed", {"player": p, "window": h["kind"]})
        return
    if h["op"] == "decide":
        S["todo"].pop(0)
        core.DECIDE[h["kind"]](g, h, None)
        return
    S["todo"].pop(0)


def _check_choose(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "decide":
        raise fail("there is no pending decision", "M53", "choose")
    v = f.get("option")
    chk = core.DECIDE_CHECK.get(h["kind"])
    if chk is not None:
        return {"v": chk(G(S), h, v)}
    if v not in h["options"]:
        raise fail(f"not one of the options of this {h['kind']} decision", "M53", "choose.option")
    return {"v": v}


def _exec_choose(g: G, p: int, plan: Json) -> None:
    h = g.S["todo"].pop(0)
    core.DECIDE[h["kind"]](g, h, plan["v"])
    core.push(g, {"op": "check"})


# --- build, draw, resource, devote ---------------------------------------------------------------

def must_build(S: Json, p: int) -> bool:
    s = S["seats"][p]
    return not s["cities"] and bool(buildable(S, p))


def buildable(S: Json, p: int) -> list[str]:
    s = S["seats"][p]
    return list(s["unbuilt"]) + [c for c in s["hand"] if S["cards"].get(c, {}).get("k") and
                                 DEFS[S["cards"][c]["k"]]["type"] == "city"]


def _check_build(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] != "build":
        raise fail("Build instead is taken right after Unmark", "M8", "build")
    cid = _str(f, "card", "build")
    if cid not in buildable(S, p):
        raise fail("build one of your unbuilt cities or a city from your hand", "M8", "build.card")
    return {"card": cid}


def _exec_build(g: G, p: int, plan: Json) -> None:
    S = g.S
    core.build(g, p, plan["card"])
    S["adv"] = [a for a in S["adv"] if a["p"] != p]
    while S["todo"] and S["todo"][0]["op"] != "discard_start":
        S["todo"].pop(0)
    S["phase"] = "discard"


def draw_options(S: Json, p: int) -> list[str]:
    s = S["seats"][p]
    deck, hand = len(s["deck"]), len(s["hand"])
    opts = []
    for name, (n, _, need) in DRAW_OPTIONS.items():
        if hand == 0 and n == 0:
            continue
        if need and hand < need:
            continue
        opts.append(name)
    ok = [o for o in opts if DRAW_OPTIONS[o][0] <= deck]
    return ok if ok else opts  # M44: only when no option draws within the deck may one overdraw


def _check_draw(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] != "draw":
        raise fail("not your Draw & resource phase", "M9", "draw")
    opt = f.get("option")
    if not isinstance(opt, str) or opt not in DRAW_OPTIONS:
        raise InvalidOrder("option is draw2, draw1 or draw0", rule="M9", field="draw.option")
    if opt not in draw_options(S, p):
        raise fail(f"{opt} is not possible now (hand, deck)", "M44" if opt != "draw0" else "M9", "draw.option")
    return {"option": opt}


def _exec_draw(g: G, p: int, plan: Json) -> None:
    S = g.S
    n, left, need = DRAW_OPTIONS[plan["option"]]
    S["todo"].pop(0)
    g.emit("draw_option", {"player": p, "option": plan["option"]})
    if n and not core.draw(g, p, n):
        return
    S["t"]["res_left"], S["t"]["res_min"] = left, need
    if left:
        core.push(g, {"op": "await", "phase": "resource"})


def _check_resource(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] != "resource":
        raise fail("resources are played in the Draw & resource phase", "M9", "resource")
    cid = _str(f, "card", "resource")
    own(S, p, cid, ("hand",), "resource.card", "M9")
    fac = f.get("faction")
    if fac not in FACTIONS:
        raise InvalidOrder(f"faction is one of {', '.join(FACTIONS)}", rule="M9", field="resource.faction")
    return {"card": cid, "faction": fac}


def _exec_resource(g: G, p: int, plan: Json) -> None:
    S = g.S
    core.move(g, plan["card"], "pile", faction=plan["faction"])
    g.card(plan["card"])["m"] = False
    g.emit("resource", {"player": p, "faction": plan["faction"]})
    g.emit("resource_card", {"player": p, "card": plan["card"], "name": g.d(plan["card"])["name"]}, [p])
    S["t"]["res_left"] -= 1
    S["t"]["res_min"] = max(0, S["t"]["res_min"] - 1)
    if S["t"]["res_left"] <= 0:
        S["todo"].pop(0)


def _check_devote(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] != "tactics":
        raise fail("devotion is marked in the Tactics phase", "M10", "devote")
    cid = _str(f, "card", "devote")
    c = own(S, p, cid, ("res",), "devote.card", "M27")
    if c.get("m"):
        raise fail("only unmarked residents can devote", "M27", "devote.card")
    plan: Json = {"card": cid}
    r = rules(c["k"])
    if r.devote_check is not None:
        plan.update(r.devote_check(G(S), p, cid, f))
    elif f.get("target") is not None:
        raise InvalidOrder("this card takes no target when devoting", field="devote.target")
    return plan


def _exec_devote(g: G, p: int, plan: Json) -> None:
    cid = plan["card"]
    core.mark(g, cid)
    g.card(cid)["dev"] = g.S["turn"]
    g.emit("devoted", {"player": p, "card": cid})
    r = rules(g.card(cid)["k"])
    if r.devote is not None:
        r.devote(g, cid, plan)


# --- playing cards -------------------------------------------------------------------------------

def has_sudden_in_hand(S: Json, p: int, cid: str) -> bool:
    d = DEFS[S["cards"][cid]["k"]]
    if "sudden" in d["keywords"]:
        return True
    for src in core.creatures_in_play(S, p):
        r = core.RULES.get(S["cards"][src]["k"])
        if r is not None and r.grants_sudden and r.grants_sudden in d["subs"]:
            return True
    return False


def _check_play(S: Json, p: int, f: Json, h: Json) -> Json:
    cid = _str(f, "card", "play")
    c = own(S, p, cid, ("hand",), "play.card", "M33")
    d = DEFS[c["k"]]
    if d["type"] == "city":
        raise fail("cities are built, not played", "M8", "play.card")
    if d["type"] != "event":
        if h["op"] != "await" or h["phase"] not in PLAY_PHASES or S["stack"]:
            raise fail(f"a {d['type']} is played only in your own Play phase with an empty stack", "M15",
                       "play.card")
    plan: Json = {"card": cid}
    g = G(S)
    if d["type"] == "creature":
        to = f.get("to")
        if not isinstance(to, str):
            raise InvalidOrder('to is one of your cities or "army"', rule="M15", field="play.to")
        if to == "army":
            if not has_sudden_in_hand(S, p, cid):
                raise fail("only a creature with sudden may go straight into the army", "M15", "play.to")
        else:
            own(S, p, to, ("city",), "play.to", "M15")
        plan["to"] = to
    elif f.get("to") is not None:
        raise InvalidOrder("only creatures take a destination", field="play.to")
    x = f.get("x")
    if d["cost"] == "X":
        if isinstance(x, bool) or not isinstance(x, int):
            raise InvalidOrder("this card costs X: name x", rule="M32", field="play.x")
        if x < d["loyalty"]:
            raise fail(f"X must be at least the card's loyalty {d['loyalty']}", "M32", "play.x")
        plan["x"] = x
    elif x is not None:
        raise InvalidOrder("only X costs take x", field="play.x")
    pay = f.get("pay")
    if pay is not None:
        if not isinstance(pay, Mapping) or not all(k in FACTIONS and isinstance(v, int) and not isinstance(v, bool)
                                                   for k, v in pay.items()):
            raise InvalidOrder("pay maps factions to counts", field="play.pay")
        pay = {k: int(v) for k, v in pay.items() if v}
    cost, loy = core.cost_of(g, p, cid, x)
    payment = core.plan_payment(S, p, cost, loy, d["faction"], pay)
    if payment is None:
        raise fail(f"cannot pay {cost} with {loy} {d['faction']} loyalty", "M14", "play")
    plan["payment"] = payment
    r = rules(c["k"])
    if r.check is not None:
        plan["item"] = r.check(g, p, cid, f)
    else:
        for k in ("targets", "mode"):
            if f.get(k) not in (None, []):
                raise InvalidOrder(f"this card takes no {k}", field=f"play.{k}")
        plan["item"] = {}
    return plan


def _exec_play(g: G, p: int, plan: Json) -> None:
    cid = plan["card"]
    core.pay_resources(g, p, plan["payment"])
    item: Json = dict(plan["item"])
    if "to" in plan:
        item["to"] = plan["to"]
    if "x" in plan:
        item["x"] = plan["x"]
    core.put_on_stack(g, p, cid, item)


# --- abilities -----------------------------------------------------------------------------------

def _check_ability(S: Json, p: int, f: Json, h: Json) -> Json:
    cid = _str(f, "card", "ability")
    c = own(S, p, cid, ("army", "res", "city", "ench"), "ability.card", "M29")
    ab = rules(c["k"]).ability
    if ab is None or "timing" not in ab:
        raise fail(f"{DEFS[c['k']]['name']} has no ability to use", "M29", "ability.card")
    timing = ab["timing"]
    if timing == "play":
        if h["op"] != "await" or h["phase"] not in PLAY_PHASES or S["stack"]:
            raise fail("this ability is used in your own Play phase", "M29", "ability")
    elif timing == "dying":
        if h["op"] != "window" or h["kind"] != "dying":
            raise fail("prevention abilities are used in a dying window", "M35", "ability")
    if ab.get("mark", True) and c.get("m"):
        raise fail("a marked card cannot be marked to pay for its ability", "M29", "ability.card")
    plan: Json = {"card": cid}
    plan.update(ab["check"](G(S), p, cid, f))
    return plan


def _exec_ability(g: G, p: int, plan: Json) -> None:
    cid = plan["card"]
    ab = rules(g.card(cid)["k"]).ability
    assert ab is not None
    if ab.get("mark", True):
        core.mark(g, cid)
    g.emit("ability", {"player": p, "card": cid, "name": g.d(cid)["name"]})
    ab["run"](g, p, cid, plan)


# --- moving, salvage ---------------------------------------------------------------------------

def _check_move(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] not in PLAY_PHASES or S["stack"]:
        raise fail("creatures move in your Play phase", "M17", "move")
    cid = _str(f, "card", "move")
    c = own(S, p, cid, IN_PLAY, "move.card", "M17")
    if c.get("m"):
        raise fail("moving needs an unmarked creature", "M47", "move.card")
    to = _str(f, "to", "move")
    src = c.get("at") if c["z"] == "res" else "army"
    if to == src:
        raise fail("move it to another of your cities or your army", "M17", "move.to")
    if to != "army":
        own(S, p, to, ("city",), "move.to", "M17")
    travel = core.has_kw(S, cid, "travel")
    used = S["t"]["moves"]
    if not travel:
        for city in (src, to):
            if city != "army" and city in used:
                raise fail("a city may be the source or destination of one move per turn", "M17", "move")
    return {"card": cid, "to": to, "src": src, "travel": travel}


def _exec_move(g: G, p: int, plan: Json) -> None:
    cid, to = plan["card"], plan["to"]
    core.mark(g, cid)
    if not plan["travel"]:
        for city in (plan["src"], to):
            if city != "army":
                g.S["t"]["moves"].append(city)
    core.relocate(g, cid, "army" if to == "army" else "res", None if to == "army" else to)
    g.emit("moved", {"player": p, "card": cid, "to": to})


def _check_salvage(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] not in PLAY_PHASES or S["stack"]:
        raise fail("salvage is used in your Play phase", "M50", "salvage")
    cid = _str(f, "card", "salvage")
    c = own(S, p, cid, ("grave",), "salvage.card", "M50")
    n = DEFS[c["k"]].get("salvage")
    if not n:
        raise fail("this card has no salvage", "M50", "salvage.card")
    pay = core.plan_payment(S, p, int(n), 0, None)
    if pay is None:
        raise fail(f"salvage needs {n} resources", "M50", "salvage")
    return {"card": cid, "payment": pay}


def _exec_salvage(g: G, p: int, plan: Json) -> None:
    core.pay_resources(g, p, plan["payment"])
    core.move(g, plan["card"], "hand")
    g.emit("salvaged", {"player": p, "card": core.card_public(g.S, plan["card"])})


# --- attack --------------------------------------------------------------------------------------

def can_attack(S: Json, p: int, cid: str) -> bool:
    c = S["cards"][cid]
    if c["o"] != p or c["z"] != "army" or c.get("m"):
        return False
    if core.has_kw(S, cid, "peaceful"):
        sb = core.subs(S, cid)
        return any(e.get("kind") == "outrage" and e["p"] == p for e in S["effects"]) and bool(sb & {"tree", "flower"})
    return True


def attackable_cities(S: Json, p: int) -> list[str]:
    out: list[str] = []
    for q in core.opponents(S, p):
        out.extend(S["seats"][q]["cities"])
    return out


def forced_attackers(S: Json, p: int) -> list[str]:
    kinds = set()
    for cid in core.in_play_cards(S, p):
        r = core.RULES.get(S["cards"][cid]["k"])
        if r is not None and r.forces:
            kinds.add(r.forces)
    if not kinds:
        return []
    return [a for a in S["seats"][p]["army"] if can_attack(S, p, a) and core.subs(S, a) & kinds]


def _check_attack(S: Json, p: int, f: Json, h: Json) -> Json:
    if h["op"] != "await" or h["phase"] != "attack":
        raise fail("attacks are declared in your Attack phase", "M12", "attack")
    atts = _ids(f, "attackers", "attack")
    if not atts:
        raise fail("an attack needs at least one attacker (or pass)", "M18", "attack.attackers")
    for i, a in enumerate(atts):
        if a not in S["cards"] or not can_attack(S, p, a):
            raise fail("attackers are unmarked, non-peaceful creatures of your army", "M18",
                       f"attack.attackers[{i}]")
    city = _str(f, "city", "attack")
    if city not in attackable_cities(S, p):
        raise fail("name a built city of an opponent", "M18", "attack.city")
    missing = [a for a in forced_attackers(S, p) if a not in atts]
    if missing:
        names = ", ".join(DEFS[S["cards"][a]["k"]]["name"] for a in missing)
        raise fail(f"{names} must attack", "M56", "attack.attackers")
    return {"attackers": atts, "city": city}


def _exec_attack(g: G, p: int, plan: Json) -> None:
    S = g.S
    city = plan["city"]
    S["todo"].pop(0)
    S["t"]["combats"] += 1
    S["combat"] = {"city": city, "defender": g.card(city)["o"], "attackers": list(plan["attackers"]),
                   "declared": list(plan["attackers"]), "blocks": {}, "blocked": []}
    for a in plan["attackers"]:
        if not core.has_kw(S, a, "veteran"):
            core.mark(g, a)
        g.card(a)["atk_decl"] = True
    g.emit("attack", {"player": p, "city": city, "attackers": list(plan["attackers"])})
    trig = []
    for a in plan["attackers"]:
        r = core.RULES.get(g.card(a)["k"])
        if r is not None and r.on_attack is not None:
            trig.append(a)
    for a in trig:
        r2 = core.RULES[g.card(a)["k"]]
        assert r2.on_attack is not None
        r2.on_attack(g, a)
    d = S["combat"]["defender"]
    core.push(g, {"op": "check"}, {"op": "window", "kind": "attack", "players": [d]}, {"op": "intercepts"},
              {"op": "check"}, {"op": "window", "kind": "blocks", "players": [d]}, {"op": "await", "phase": "blocks"},
              {"op": "damage", "step": "first"}, {"op": "damage", "step": "regular"}, {"op": "combat_end"})


CHECKS = {"pass": _check_pass, "choose": _check_choose, "build": _check_build, "draw": _check_draw,
          "resource": _check_resource, "devote": _check_devote, "play": _check_play, "ability": _check_ability,
          "move": _check_move, "salvage": _check_salvage, "attack": _check_attack}
EXECS = {"pass": _exec_pass, "choose": _exec_choose, "build": _exec_build, "draw": _exec_draw,
         "resource": _exec_resource, "devote": _exec_devote, "play": _exec_play, "ability": _exec_ability,
         "move": _exec_move, "salvage": _exec_salvage, "attack": _exec_attack}


# --- candidates (legal action enumeration) -------------------------------------------------------

def candidates(S: Json, p: int) -> list[Json]:
    """Every action worth checking for seat ``p`` (then filtered by :func:`check`)."""
    st = step_of(S)
    if p not in st.players:
        return []
    h = head(S)
    assert h is not None
    out: list[Json] = []
    g = G(S)
    if h["op"] == "decide":
        for o in h["options"]:
            out.append({"choose": {"option": o}})
        if None in h["options"]:
            out.append({"pass": {}})
        out.extend(_ability_cands(g, p, ("resource",)))
        return out
    out.append({"pass": {}})
    s = S["seats"][p]
    hand = list(s.get("hand", []))
    ph = h.get("phase") if h["op"] == "await" else None
    if ph == "build":
        out.extend({"build": {"card": c}} for c in buildable(S, p))
    elif ph == "draw":
        out.extend({"draw": {"option": o}} for o in draw_options(S, p))
    elif ph == "resource":
        for c in hand:
            for fac in FACTIONS:
                out.append({"resource": {"card": c, "faction": fac}})
    elif ph == "tactics":
        for city in s["cities"]:
            for r in S["cards"][city]["res"]:
                rr = rules(S["cards"][r]["k"])
                if rr.devote_variants is not None:
                    out.extend({"devote": {"card": r, **v}} for v in rr.devote_variants(g, p, r))
                else:
                    out.append({"devote": {"card": r}})
    elif ph == "attack":
        out.extend(_attack_cands(S, p))
    if ph in PLAY_PHASES:
        for cid in core.creatures_in_play(S, p):
            for to in ["army", *s["cities"]]:
                out.append({"move": {"card": cid, "to": to}})
        for cid in s["grave"]:
            if DEFS[S["cards"][cid]["k"]].get("salvage"):
                out.append({"salvage": {"card": cid}})
    timings = ("resource", "play", "dying") if h["op"] == "await" else ("resource", "dying")
    out.extend(_ability_cands(g, p, timings))
    for cid in hand:
        c = S["cards"].get(cid)
        if c is None:
            continue
        d = DEFS[c["k"]]
        if d["type"] == "city":
            continue
        if d["type"] != "event" and (ph not in PLAY_PHASES):
            continue
        base: list[Json] = [{}]
        if d["type"] == "creature":
            base = [{"to": t} for t in [*s["cities"], "army"]]
        r = rules(c["k"])
        variants = r.variants(g, p, cid) if r.variants is not None else [{}]
        for b in base:
            for v in variants:
                out.append({"play": {"card": cid, **b, **v}})
    return out


def _ability_cands(g: G, p: int, timings: tuple[str, ...]) -> list[Json]:
    S = g.S
    out: list[Json] = []
    for cid in core.in_play_cards(S, p):
        ab = rules(S["cards"][cid]["k"]).ability
        if ab is None or ab.get("timing") not in timings:
            continue
        if ab.get("mark", True) and S["cards"][cid].get("m"):
            continue
        vs = ab["variants"](g, p, cid) if "variants" in ab else [{}]
        out.extend({"ability": {"card": cid, **v}} for v in vs)
    return out


def _attack_cands(S: Json, p: int) -> list[Json]:
    elig = [a for a in S["seats"][p]["army"] if can_attack(S, p, a)]
    if not elig:
        return []
    forced = forced_attackers(S, p)
    groups: list[list[str]] = [elig]
    for a in elig:
        grp = sorted({a, *forced}, key=elig.index)
        if grp not in groups:
            groups.append(grp)
    if len(elig) <= 4:
        for mask in range(1, 1 << len(elig)):
            grp = [a for i, a in enumerate(elig) if mask >> i & 1]
            if grp not in groups:
                groups.append(grp)
    out = []
    for city in attackable_cities(S, p):
        for grp in groups:
            out.append({"attack": {"attackers": grp, "city": city}})
    return out


def is_legal(S: Json, p: int, h: Json, a: Json) -> bool:
    if not isinstance(a, dict) or len(a) != 1:
        return False
    kind, f = next(iter(a.items()))
    if kind not in CHECKS:
        return False
    try:
        CHECKS[kind](S, p, f, h)
    except (IllegalOrder, InvalidOrder, NotYourTurn):
        return False
    return True


def unique_candidates(S: Json, p: int) -> list[Json]:
    out = []
    seen: set[str] = set()
    for a in candidates(S, p):
        key = repr(a)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def legal(S: Json, p: int) -> list[Json]:
    """Every legal action of seat ``p`` (candidates that :func:`check` accepts), without repeats."""
    out = []
    seen: set[str] = set()
    if S["outcome"] is not None or p not in step_of(S).players:
        return []
    h = head(S)
    assert h is not None
    for a in candidates(S, p):
        kind, f = next(iter(a.items()))
        try:
            CHECKS[kind](S, p, f, h)
        except (IllegalOrder, InvalidOrder, NotYourTurn):
            continue
        key = repr(a)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out
