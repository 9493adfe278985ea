"""Arcmage's rules core: zones, stats, costs, the continuation queue, phases, stack, combat, dying.

The whole game is one plain dict ``S`` (JSON data).  Control flow is a queue of *ops*
(``S["todo"]``, head first): plain dicts the driver :func:`run` executes until the head is one that
waits for a player — ``await`` (the active player acts in a phase), ``window`` (seats that may answer,
M16/M38/M40) or ``decide`` (one seat makes a pending decision).  Card rules are data plus the small
functions of :mod:`engine.arcmage.cards`, reached through :data:`RULES` by card key; nothing here
branches on a card's name.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.arcmage.carddb import DEFS, FACTIONS, HAND_LIMIT
from engine.base import Event
from engine.errors import IllegalOrder, InvalidOrder
from engine.rng import Rng

Json = dict[str, Any]
IN_PLAY = ("army", "res")  # zones of creatures in play (cities are "city", enchantments "ench")
PLAY_PHASES = ("play1", "play2")


def copy_data(d: Json) -> Json:
    out: Json = marshal.loads(marshal.dumps(d))
    return out


@dataclass
class CardRules:
    """What one card does beyond its printed numbers and keywords (all optional)."""

    variants: Callable[[G, int, str], list[Json]] | None = None  # play fields to enumerate
    check: Callable[[G, int, str, Json], Json] | None = None  # play fields -> stack item extras
    resolve: Callable[[G, Json], None] | None = None  # magic / event / enchantment effect
    etb: Callable[[G, str], None] | None = None  # "when I come into play"
    ability: Json | None = None  # {"timing", "variants", "check", "run"}
    devote: Callable[[G, str, Json], None] | None = None  # "when I mark for devotion"
    devote_check: Callable[[G, int, str, Json], Json] | None = None
    devote_variants: Callable[[G, int, str], list[Json]] | None = None
    discard_start: Callable[[G, str], None] | None = None
    dealt: Callable[[G, str, str, int], None] | None = None  # (source, target, amount) after a step
    self_static: Callable[[Json, str, list[Any]], None] | None = None
    aura: Callable[[Json, str, str, list[Any]], None] | None = None  # (S, source, card, acc)
    levels: dict[int, tuple[str, str]] = field(default_factory=dict)  # N -> ("lasting"|"fx", name)
    on_block: Callable[[G, str, str], None] | None = None  # (attacker, blocker) when assigned
    on_attack: Callable[[G, str], None] | None = None  # "when I attack"
    forces: str | None = None  # M56: unmarked creatures of this subtype in the army must attack
    grants_sudden: str | None = None  # your creatures of this subtype in hand have sudden
    unmark_pays_counters: bool = False  # attached: the creature unmarks only paying 1 per "gr" counter


RULES: dict[str, CardRules] = {}
#: advantage name -> static function (S, adv, card id, acc)
ADVANTAGES: dict[str, Callable[[Json, Json, str, list[Any]], None]] = {}
#: fx name -> function(g, op)
FX: dict[str, Callable[[G, Json], None]] = {}
#: decision kind -> handler(g, op, value)
DECIDE: dict[str, Callable[[G, Json, Any], None]] = {}
#: decision kind -> validator(g, op, value) for decisions whose values are not all listed
DECIDE_CHECK: dict[str, Callable[[G, Json, Any], Any]] = {}


def rules(key: str) -> CardRules:
    return RULES.get(key) or _NO_RULES


_NO_RULES = CardRules()


def cow_copy(d: Json) -> Json:
    """A copy of a state whose card dicts are still shared: a :class:`G` made with ``cow=True``
    copies a card the first time it is reached through :meth:`G.card` (copy on write)."""
    out = dict(d)
    out["cards"] = dict(d["cards"])
    out["seats"] = [{k: (list(v) if type(v) is list else {f: list(x) for f, x in v.items()} if k == "piles"
                         else dict(v) if type(v) is dict else v) for k, v in s.items()} for s in d["seats"]]
    small = copy_data({k: d[k] for k in ("todo", "stack", "combat", "effects", "adv", "delayed", "t", "outcome")})
    out.update(small)
    out["dealt_prev"] = dict(d["dealt_prev"])
    out["auras"] = list(d["auras"])
    return out


class G:
    """A game being changed: the mutable state dict and the events produced so far.

    Every change to a card goes through :meth:`card` (copy on write when ``cow``)."""

    __slots__ = ("S", "ev", "own")

    def __init__(self, S: Json, cow: bool = False) -> None:
        self.S = S
        self.ev: list[Event] = []
        self.own: set[str] | None = set() if cow else None

    def emit(self, kind: str, data: Json, audience: Iterable[int] | None = None) -> None:
        self.ev.append(Event(kind, data, None if audience is None else frozenset(audience)))

    # --- short accessors -------------------------------------------------------------------------
    def card(self, cid: str) -> Json:
        c: Json = self.S["cards"][cid]
        own = self.own
        if own is not None and cid not in own:
            c = {k: (list(v) if type(v) is list else v) for k, v in c.items()}
            self.S["cards"][cid] = c
            own.add(cid)
        return c

    def d(self, cid: str) -> Json:
        return DEFS[self.S["cards"][cid]["k"]]

    def seat(self, p: int) -> Json:
        s: Json = self.S["seats"][p]
        return s

    def rng(self) -> Rng:
        return Rng.from_state(self.S["rng"])

    def save_rng(self, r: Rng) -> None:
        self.S["rng"] = r.state


def fail(msg: str, rule: str, fld: str = "action") -> IllegalOrder:
    return IllegalOrder(msg, rule=rule, field=fld)


# --- turn order ----------------------------------------------------------------------------------

def alive(S: Json) -> list[int]:
    return [p for p in range(S["n"]) if not S["seats"][p]["out"]]


def order_from(S: Json, start: int, include_start: bool = True) -> list[int]:
    n = S["n"]
    seq = [(start + i) % n for i in range(n)]
    if not include_start:
        seq = seq[1:]
    return [p for p in seq if not S["seats"][p]["out"]]


def opponents(S: Json, p: int) -> list[int]:
    return [q for q in order_from(S, p, False)]


# --- zones ---------------------------------------------------------------------------------------

def zone_list(g: G, cid: str) -> list[str] | None:
    c = g.card(cid)
    z = c["z"]
    s = g.seat(c["o"])
    if z in ("deck", "hand", "grave", "removed", "unbuilt", "army"):
        lst: list[str] = s[z]
        return lst
    if z == "city":
        lst = s["cities"]
        return lst
    if z == "res":
        lst = g.card(c["at"])["res"]
        return lst
    if z == "ench":
        lst = g.card(c["at"])["ench"]
        return lst
    if z == "pile":
        lst = s["piles"][c["f"]]
        return lst
    return None  # stack


def in_play(g: G, cid: str) -> bool:
    c = g.S["cards"].get(cid)
    return c is not None and c["z"] in ("army", "res", "city", "ench")


def is_creature_in_play(g: G, cid: str) -> bool:
    c = g.S["cards"].get(cid)
    return c is not None and c["z"] in IN_PLAY


def creatures_in_play(S: Json, p: int | None = None) -> list[str]:
    out: list[str] = []
    for q in range(S["n"]):
        if p is not None and q != p:
            continue
        s = S["seats"][q]
        out.extend(s["army"])
        for city in s["cities"]:
            out.extend(S["cards"][city]["res"])
    return out


def cities_in_play(S: Json, p: int | None = None) -> list[str]:
    out: list[str] = []
    for q in range(S["n"]):
        if p is None or q == p:
            out.extend(S["seats"][q]["cities"])
    return out


def _strip(c: Json) -> None:
    for k in ("m", "dmg", "pa", "pd", "gr", "ivy", "skip", "dev", "atk_decl", "res", "ench", "at", "cdef", "f",
              "tdmg"):
        c.pop(k, None)


def move(g: G, cid: str, zone: str, *, at: str | None = None, faction: str | None = None,
         top: bool = True) -> None:
    """Move a card to ``zone`` of its owner (``res``/``ench`` need ``at``, ``pile`` needs ``faction``).

    A card leaving play loses damage, counters, marks and effects; its enchantments go to their
    owners' graveyards; its residents are handled by the caller (M22, M47).  A token that would go
    anywhere but play ceases to exist (M34)."""
    S = g.S
    c = g.card(cid)
    was_in_play = c["z"] in ("army", "res", "city", "ench")
    lst = zone_list(g, cid)
    if lst is not None and cid in lst:
        lst.remove(cid)
    elif c["z"] == "stack":
        S["stack"] = [it for it in S["stack"] if it["card"] != cid]
    stays_in_play = zone in ("army", "res", "city", "ench")
    if was_in_play and not stays_in_play:
        for e in list(c.get("ench") or ()):
            move(g, e, "grave")
        S["effects"] = [e for e in S["effects"] if e.get("card") != cid]
        comb = S.get("combat")
        if comb:
            _leave_combat(comb, cid)
        _strip(c)
    aura_moved = False
    if was_in_play != stays_in_play:
        r = RULES.get(c["k"])
        aura_moved = r is not None and r.aura is not None
    if c.get("tok") and not stays_in_play:
        del S["cards"][cid]
        return
    c["z"] = zone
    if zone in ("res", "ench"):
        c["at"] = at
        lst2: list[str] = g.card(str(at))["res" if zone == "res" else "ench"]
        lst2.append(cid)
    elif zone == "pile":
        c["f"] = faction
        g.seat(c["o"])["piles"][str(faction)].append(cid)
    elif zone == "city":
        g.seat(c["o"])["cities"].append(cid)
    elif zone != "stack":
        zl: list[str] = g.seat(c["o"])[zone]
        if zone == "deck" and top:
            zl.insert(0, cid)
        else:
            zl.append(cid)
    if zone in ("army", "res", "city", "ench"):
        for k, v in (("m", False), ("dmg", 0)):
            c.setdefault(k, v)
        if zone == "city":
            c.setdefault("res", [])
            c.setdefault("ench", [])
            c.setdefault("cdef", DEFS[c["k"]]["defense"] or 0)
        if zone in IN_PLAY:
            c.setdefault("ench", [])
    if aura_moved:
        refresh_auras(S)


def _leave_combat(comb: Json, cid: str) -> None:
    if cid in comb["attackers"]:
        comb["attackers"].remove(cid)
    for bl in comb["blocks"].values():
        if cid in bl:
            bl.remove(cid)


def relocate(g: G, cid: str, zone: str, at: str | None = None) -> None:
    """Move a creature within play (army <-> residents): keeps marks, damage and effects.  Leaving
    its place takes it out of a combat (M42)."""
    c = g.card(cid)
    lst = zone_list(g, cid)
    if lst is not None and cid in lst:
        lst.remove(cid)
    comb = g.S.get("combat")
    if comb:
        _leave_combat(comb, cid)
    c["z"] = zone
    if zone == "res":
        c["at"] = at
        g.card(str(at))["res"].append(cid)
    else:
        c.pop("at", None)
        g.seat(c["o"])["army"].append(cid)


def new_token(g: G, key: str, owner: int, zone: str, at: str | None = None) -> str:
    S = g.S
    cid = f"t{S['next_id']}"
    S["next_id"] += 1
    S["cards"][cid] = {"k": key, "o": owner, "z": "limbo", "tok": True}
    if g.own is not None:
        g.own.add(cid)
    move(g, cid, zone, at=at)
    return cid


def draw(g: G, p: int, n: int) -> bool:
    """Draw ``n`` cards; a player that must draw from an empty deck is out (M3, M44)."""
    s = g.seat(p)
    drawn = []
    for _ in range(n):
        if not s["deck"]:
            put_out(g, [p], "empty_deck")
            return False
        cid = s["deck"][0]
        move(g, cid, "hand")
        drawn.append(cid)
    g.emit("drew", {"player": p, "count": n}, None)
    g.emit("drew_cards", {"player": p, "cards": [card_public(g.S, c) for c in drawn]}, [p])
    return True


def shuffle_deck(g: G, p: int) -> None:
    r = g.rng()
    r.shuffle(g.seat(p)["deck"])
    g.save_rng(r)


# --- stats ---------------------------------------------------------------------------------------

def stats(S: Json, cid: str) -> tuple[int, int, set[str]]:
    """A creature's attack, defense and keywords now (M35: printed + counters + effects)."""
    c = S["cards"][cid]
    d = DEFS[c["k"]]
    acc: list[Any] = [(d["attack"] or 0) + c.get("pa", 0), (d["defense"] or 0) + c.get("pd", 0),
                      set(d["keywords"])]
    for e in S["effects"]:
        if e.get("card") == cid:
            acc[0] += e.get("a", 0)
            acc[1] += e.get("d", 0)
            acc[2].update(e.get("kw", ()))
    if c["z"] in IN_PLAY:
        for adv in S["adv"]:
            if adv["p"] == c["o"]:
                ADVANTAGES[adv["a"]](S, adv, cid, acc)
        for src in S["auras"]:
            sc = S["cards"].get(src)
            if sc is not None:
                r = RULES.get(sc["k"])
                if r is not None and r.aura is not None:
                    r.aura(S, src, cid, acc)
        r2 = RULES.get(c["k"])
        if r2 is not None and r2.self_static is not None:
            r2.self_static(S, cid, acc)
    return int(acc[0]), int(acc[1]), acc[2]


def attack_of(S: Json, cid: str) -> int:
    return max(0, stats(S, cid)[0])


def has_kw(S: Json, cid: str, kw: str) -> bool:
    return kw in stats(S, cid)[2]


def subs(S: Json, cid: str) -> frozenset[str]:
    s: frozenset[str] = DEFS[S["cards"][cid]["k"]]["subs"]
    return s


def refresh_auras(S: Json) -> None:
    """The in-play cards with an aura (kept as a list so stats need not scan the board)."""
    out = []
    for cid in creatures_in_play(S):
        r = RULES.get(S["cards"][cid]["k"])
        if r is not None and r.aura is not None:
            out.append(cid)
    S["auras"] = out


def targetable(S: Json, by: int, cid: str) -> bool:
    """M50 sanctuary: an opponent's cards and abilities cannot target it."""
    c = S["cards"].get(cid)
    if c is None:
        return False
    if c["o"] == by or c["z"] not in IN_PLAY:
        return True
    return not has_kw(S, cid, "sanctuary")


# --- marking and resources -----------------------------------------------------------------------

def mark(g: G, cid: str) -> None:
    c = g.card(cid)
    c["m"] = True
    for e in c.get("ench") or ():
        r = RULES.get(g.card(e)["k"])
        if r is not None and r.ability is not None and r.ability.get("on_mark"):
            r.ability["on_mark"](g, e, cid)


def resources_available(S: Json, p: int) -> dict[str, int]:
    """Unmarked resource cards per faction plus produced resources (M30)."""
    s = S["seats"][p]
    out = {f: sum(1 for cid in s["piles"][f] if not S["cards"][cid]["m"]) for f in FACTIONS}
    for f, n in s["temp"].items():
        out[f] += n
    return out


def plan_payment(S: Json, p: int, n: int, loyalty: int, faction: str | None,
                 pay: dict[str, int] | None = None) -> dict[str, int] | None:
    """How many resources of each faction pay ``n`` with ``loyalty`` of ``faction`` (M14), or None.

    ``pay`` is the player's own split; without it: the loyalty from ``faction``, the rest from the
    largest other piles first, then ``faction``."""
    avail = resources_available(S, p)
    if pay is not None:
        if sum(pay.values()) != n or any(v < 0 or v > avail.get(f, 0) for f, v in pay.items()):
            return None
        if faction is not None and pay.get(faction, 0) < loyalty:
            return None
        return dict(pay)
    if sum(avail.values()) < n:
        return None
    out = {f: 0 for f in FACTIONS}
    if faction is not None and loyalty > 0:
        if avail[faction] < loyalty:
            return None
        out[faction] = loyalty
    rest = n - out.get(faction, 0) if faction else n
    others = sorted((f for f in FACTIONS if f != faction), key=lambda f: (-avail[f], FACTIONS.index(f)))
    for f in [*others, *([faction] if faction else [])]:
        take = min(rest, avail[f] - out[f])
        out[f] += take
        rest -= take
    if rest > 0:
        return None
    return {f: v for f, v in out.items() if v}


def pay_resources(g: G, p: int, plan: dict[str, int]) -> None:
    s = g.seat(p)
    for f, n in plan.items():
        use_temp = min(n, s["temp"].get(f, 0))
        if use_temp:
            s["temp"][f] -= use_temp
            if not s["temp"][f]:
                del s["temp"][f]
        left = n - use_temp
        for cid in s["piles"][f]:
            if left <= 0:
                break
            if not g.S["cards"][cid]["m"]:
                g.card(cid)["m"] = True
                left -= 1


def produce(g: G, p: int, faction: str, n: int) -> None:
    t = g.seat(p)["temp"]
    t[faction] = t.get(faction, 0) + n
    g.emit("produced", {"player": p, "faction": faction, "count": n})


def resource_cards(S: Json, p: int) -> int:
    return sum(len(v) for v in S["seats"][p]["piles"].values())


def sacrifice_resources(g: G, p: int, n: int) -> int:
    """Sacrifice up to ``n`` resource cards (M31), marked ones first from the largest pile."""
    s = g.seat(p)
    done = 0
    for _ in range(n):
        best: tuple[int, int, str] | None = None
        for f in FACTIONS:
            for cid in s["piles"][f]:
                key = (0 if g.S["cards"][cid]["m"] else 1, -len(s["piles"][f]), cid)
                if best is None or key < best:
                    best = key
        if best is None:
            break
        move(g, best[2], "grave")
        done += 1
    if done:
        g.emit("sacrificed_resources", {"player": p, "count": done})
    return done


def cost_of(g: G, p: int, cid: str, x: int | None) -> tuple[int, int]:
    """(cost, loyalty needed) of playing ``cid`` (M14, M32), reductions applied."""
    d = g.d(cid)
    cost = x if d["cost"] == "X" else int(d["cost"] or 0)
    cost = int(cost or 0)
    red = 0
    for adv in g.S["adv"]:
        if adv["p"] == p and adv.get("reduce") and adv["reduce"] in d["subs"]:
            red += int(adv.get("by", 1))
    if red:
        cost = max(0, cost - red)
        return cost, min(d["loyalty"], cost)
    return cost, d["loyalty"]


# --- ops -----------------------------------------------------------------------------------------

def push(g: G, *ops: Json) -> None:
    g.S["todo"][0:0] = list(ops)


def head(S: Json) -> Json | None:
    todo: list[Json] = S["todo"]
    return todo[0] if todo else None


HALTING = ("await", "window", "decide")


def run(g: G) -> None:
    """Execute ops until one waits for a player (or the game ends)."""
    S = g.S
    guard = 0
    while S["outcome"] is None:
        h = head(S)
        if h is None:
            return
        if h["op"] in HALTING:
            if h["op"] == "await":
                S["phase"] = h["phase"]
            if h["op"] == "window":
                _prune_window(S, h)
                if not h["players"]:
                    S["todo"].pop(0)
                    close_window(g, h)
                    continue
            if h["op"] == "decide" and S["seats"][h["seat"]]["out"]:
                S["todo"].pop(0)
                continue
            return
        S["todo"].pop(0)
        OPS[h["op"]](g, h)
        guard += 1
        if guard > 100000:  # pragma: no cover - a bug, never a rule
            raise RuntimeError("arcmage: runaway op loop")


def _prune_window(S: Json, w: Json) -> None:
    w["players"] = [p for p in w["players"] if not S["seats"][p]["out"]]


def decide(g: G, seat: int, kind: str, options: list[Any], **data: Any) -> None:
    """Push a pending decision for ``seat`` (options: JSON values the seat may choose)."""
    push(g, {"op": "decide", "seat": seat, "kind": kind, "options": options, **data})


def window(g: G, kind: str, players: list[int], **data: Any) -> None:
    if players:
        push(g, {"op": "window", "kind": kind, "players": players, **data})


def close_window(g: G, w: Json) -> None:
    if w["kind"] == "stack":
        resolve_top(g)


# --- setup and turn ------------------------------------------------------------------------------

def op_setup_build(g: G, op: Json) -> None:
    p = op["p"]
    decide(g, p, "setup_build", list(g.seat(p)["unbuilt"]))


def _decide_setup_build(g: G, op: Json, v: Any) -> None:
    build(g, op["seat"], str(v))


def build(g: G, p: int, cid: str) -> None:
    move(g, cid, "city")
    g.card(cid)["m"] = False
    g.emit("built", {"player": p, "city": cid, "card": card_public(g.S, cid)})


def op_begin(g: G, op: Json) -> None:
    S = g.S
    p = S["active"]
    if S["turn"] >= S.get("max_rounds", 10_000):  # the safety bound on turns: a draw
        S["outcome"] = {"winners": [], "draw": True, "reason": "max_rounds"}
        S["todo"] = []
        g.emit("game_over", dict(S["outcome"]))
        return
    S["turn"] += 1
    S["t"] = {"moves": [], "combats": 0, "dealt": {}, "second": False, "res_left": 0, "res_min": 0,
              "built": False, "revenge": []}
    S["phase"] = "begin"
    S.pop("chats", None)  # the A53 chat limit is per turn
    g.emit("turn", {"player": p, "turn": S["turn"]})
    for dl in [d for d in S["delayed"] if d["p"] == p and d["when"] == "start"]:
        S["delayed"].remove(dl)
        if dl["kind"] == "remove" and is_creature_in_play(g, dl["card"]):
            move(g, dl["card"], "removed")
            g.emit("removed", {"card": dl["card"]})
    ops: list[Json] = [{"op": "check"}, {"op": "unmark"}, {"op": "await", "phase": "build"},
                       {"op": "await", "phase": "draw"}, {"op": "tactics_start"}, {"op": "await", "phase": "tactics"},
                       {"op": "levels"}, {"op": "await", "phase": "play1"}, {"op": "await", "phase": "attack"},
                       {"op": "after_combat"}, {"op": "await", "phase": "play2"}, {"op": "discard_start"},
                       {"op": "discard"}, {"op": "end_turn"}]
    if any(S.get("stops") or ()):  # M40: stops added at the start of opponents' phases
        with_stops: list[Json] = []
        for o in ops:
            ph = o.get("phase") if o["op"] == "await" else "discard" if o["op"] == "discard_start" else None
            if ph is not None:
                with_stops.append({"op": "stop", "phase": ph})
            with_stops.append(o)
        ops = with_stops
    push(g, *ops)


def op_stop(g: G, op: Json) -> None:
    """A window at the start of the active player's phase for the players who asked for it (M40)."""
    S = g.S
    S["phase"] = op["phase"]
    players = [q for q in order_from(S, S["active"], False) if op["phase"] in S["stops"][q]]
    window(g, "phase", players, phase=op["phase"])


def in_play_cards(S: Json, p: int) -> list[str]:
    s = S["seats"][p]
    out = list(s["army"])
    for city in s["cities"]:
        out.append(city)
        out.extend(S["cards"][city]["res"])
        out.extend(S["cards"][city]["ench"])
    for cid in s["army"]:
        out.extend(S["cards"][cid].get("ench") or ())
    return out


def unmark_conditions(S: Json, cid: str) -> list[str]:
    """M49: ``pay`` (1 per counter, from an attached enchantment such as Grassroots) and one
    ``minus_counter`` per instance of "unmarks only with a -1/-1 counter" (Poison Ivy's ``ivy``)."""
    c = S["cards"][cid]
    conds = []
    if c.get("gr") and any(rules(S["cards"][e]["k"]).unmark_pays_counters for e in c.get("ench") or ()):
        conds.append("pay")
    conds.extend(["minus_counter"] * int(c.get("ivy", 0)))
    return conds


def op_unmark(g: G, op: Json) -> None:
    """M7, M49: resources first, then creatures; skips and conditions."""
    S = g.S
    p = S["active"]
    S["phase"] = "unmark"
    s = g.seat(p)
    cards = S["cards"]
    for f in FACTIONS:
        for cid in s["piles"][f]:
            if cards[cid].get("m"):
                g.card(cid)["m"] = False
    asks = []
    for cid in in_play_cards(S, p):
        raw = cards[cid]
        if not raw.get("skip") and not raw.get("m"):
            continue
        c = g.card(cid)
        if c.get("skip"):
            c["skip"] -= 1
            if not c["skip"]:
                del c["skip"]
            continue
        if not c.get("m"):
            continue
        if c["z"] in IN_PLAY and unmark_conditions(S, cid):
            asks.append(cid)
            continue
        c["m"] = False
    g.emit("unmarked", {"player": p})
    for cid in reversed(asks):
        push(g, {"op": "ask_unmark", "card": cid})


def op_ask_unmark(g: G, op: Json) -> None:
    S = g.S
    cid = op["card"]
    if not is_creature_in_play(g, cid):
        return
    p = g.card(cid)["o"]
    opts: list[Any] = [False]
    if can_meet_conditions(S, p, cid):
        opts.append(True)
    if len(opts) > 1:
        decide(g, p, "unmark_pay", opts, card=cid)


def can_meet_conditions(S: Json, p: int, cid: str) -> bool:
    conds = unmark_conditions(S, cid)
    n = int(S["cards"][cid].get("gr", 0)) if "pay" in conds else 0
    return n == 0 or plan_payment(S, p, n, 0, None) is not None


def _decide_unmark_pay(g: G, op: Json, v: Any) -> None:
    if not v:
        return
    S = g.S
    cid = op["card"]
    c = g.card(cid)
    p = c["o"]
    conds = unmark_conditions(S, cid)
    if "pay" in conds:
        plan = plan_payment(S, p, int(c.get("gr", 0)), 0, None)
        if plan is None:
            return
        pay_resources(g, p, plan)
    for cnd in conds:
        if cnd == "minus_counter":
            c["pa"] = c.get("pa", 0) - 1
            c["pd"] = c.get("pd", 0) - 1
    c["m"] = False
    g.emit("unmarked_paid", {"card": cid})
    push(g, {"op": "check"})


def op_tactics_start(g: G, op: Json) -> None:
    """M28: the player's lasting advantages end at the start of its Tactics phase."""
    p = g.S["active"]
    g.S["adv"] = [a for a in g.S["adv"] if a["p"] != p]


def op_levels(g: G, op: Json) -> None:
    """M27: every level N <= devotion of each city, lowest first, city by city (kingdom order)."""
    S = g.S
    p = S["active"]
    ops: list[Json] = []
    for city in g.seat(p)["cities"]:
        c = g.card(city)
        dev = sum(DEFS[g.card(r)["k"]]["loyalty"] for r in c["res"]
                  if g.card(r).get("dev") == S["turn"] and not g.card(r).get("tok"))
        if dev <= 0:
            continue
        g.emit("devotion", {"player": p, "city": city, "devotion": dev})
        for lvl, (kind, name) in sorted(rules(c["k"]).levels.items()):
            if lvl > dev:
                break
            if kind == "lasting":
                S["adv"].append({"p": p, "city": city, "a": name, **LASTING.get(name, {})})
                g.emit("advantage", {"player": p, "city": city, "level": lvl, "advantage": name})
            else:
                ops.append({"op": "fx", "fn": name, "p": p, "city": city, "level": lvl})
    push(g, *[x for op_ in ops for x in (op_, {"op": "check"})])


#: extra data of lasting advantages (cost reductions)
LASTING: dict[str, Json] = {}


def op_fx(g: G, op: Json) -> None:
    FX[op["fn"]](g, op)


def op_after_combat(g: G, op: Json) -> None:
    S = g.S
    if S["t"].get("second"):
        S["t"]["second"] = False
        p = S["active"]
        for cid in g.seat(p)["army"]:
            c = g.card(cid)
            if c.get("m") and not c.get("skip") and not unmark_conditions(S, cid):
                c["m"] = False
        g.emit("second_combat", {"player": p})
        push(g, {"op": "await", "phase": "attack"}, {"op": "after_combat"})


def op_discard_start(g: G, op: Json) -> None:
    S = g.S
    S["phase"] = "discard"
    p = S["active"]
    for cid in list(in_play_cards(S, p)):
        if cid in S["cards"]:
            r = RULES.get(g.card(cid)["k"])
            if r is not None and r.discard_start is not None and in_play(g, cid):
                r.discard_start(g, cid)
    push(g, {"op": "check"})


def op_discard(g: G, op: Json) -> None:
    p = g.S["active"]
    hand = g.seat(p)["hand"]
    if len(hand) > HAND_LIMIT:
        decide(g, p, "discard", list(hand))


def _decide_discard(g: G, op: Json, v: Any) -> None:
    p = op["seat"]
    move(g, str(v), "grave")
    g.emit("discarded", {"player": p, "card": card_public(g.S, str(v))})
    push(g, {"op": "discard"})


def op_end_turn(g: G, op: Json) -> None:
    """M37: heal, end "until end of turn" effects, produced resources vanish; next player."""
    S = g.S
    for cid in creatures_in_play(S):
        if S["cards"][cid].get("dmg"):
            g.card(cid)["dmg"] = 0
    S["effects"] = [e for e in S["effects"] if e.get("until") != "eot"]
    for q in range(S["n"]):
        S["seats"][q]["temp"] = {}
    S["dealt_prev"] = dict(S["t"]["dealt"])
    for cid in list(S["cards"]):
        if "atk_decl" in S["cards"][cid]:
            g.card(cid).pop("atk_decl", None)
    start_next_turn(g)


def start_next_turn(g: G) -> None:
    S = g.S
    nxt = order_from(S, S["active"], False)
    if not nxt:
        return
    S["active"] = nxt[0]
    S["todo"] = [{"op": "begin"}]


# --- priority: awaits ----------------------------------------------------------------------------

def op_await_enter(S: Json, h: Json) -> None:
    S["phase"] = h["phase"]


# --- the stack -----------------------------------------------------------------------------------

def put_on_stack(g: G, p: int, cid: str, item: Json) -> None:
    S = g.S
    c = g.card(cid)
    lst = zone_list(g, cid)
    if lst is not None and cid in lst:
        lst.remove(cid)
    c["z"] = "stack"
    S["stack"].append({"card": cid, "p": p, **item})
    g.emit("cast", {"player": p, "card": card_public(S, cid), "item": {k: v for k, v in item.items()}})
    # "each time you play a Gaian card" and the like
    for src in creatures_in_play(S, p):
        r = RULES.get(g.card(src)["k"])
        if r is not None and r.ability is not None and r.ability.get("on_play") and src != cid:
            r.ability["on_play"](g, src, cid)
    h = head(S)
    if h is not None and h["op"] == "window" and h["kind"] == "stack":
        S["todo"].pop(0)  # a response restarts the round (M38)
    window(g, "stack", order_from(S, p, False))


def resolve_top(g: G) -> None:
    """M38/M39: the top of the stack resolves; then a new round if the stack is not empty."""
    S = g.S
    item = S["stack"].pop()
    cid = item["card"]
    c = g.card(cid)
    d = DEFS[c["k"]]
    p = item["p"]
    push(g, {"op": "after_resolve"})
    r = rules(c["k"])
    g.emit("resolves", {"player": p, "card": card_public(S, cid)})
    if d["type"] == "creature":
        to = item.get("to", "army")
        if to != "army" and (to not in S["cards"] or g.card(to)["z"] != "city" or g.card(to)["o"] != p):
            owned = g.seat(p)["cities"]
            to = owned[0] if owned else "army"
        c["z"] = "limbo"
        if to == "army":
            move(g, cid, "army")
        else:
            move(g, cid, "res", at=to)
        c["m"] = False
        came_into_play(g, cid, cast=True)
        push(g, {"op": "check"})
        return
    if r.check is not None:
        try:
            item = {**item, **r.check(g, p, cid, {**item, "_resolving": True})}
        except IllegalOrder:
            item = {**item, "fizzle": True}
    c["z"] = "limbo"
    if item.get("fizzle"):
        g.emit("fizzled", {"card": cid})
        move(g, cid, "grave")
        return
    if d["type"] == "enchantment":
        tgt = item["targets"][0]
        move(g, cid, "ench", at=tgt)
        if r.resolve is not None:
            r.resolve(g, item)
    else:
        if r.resolve is not None:
            r.resolve(g, item)
        if cid in S["cards"] and g.card(cid)["z"] == "limbo":
            move(g, cid, "grave")
    push(g, {"op": "check"})


def came_into_play(g: G, cid: str, cast: bool = False) -> None:
    """A creature came into play (M33): blood vengeance counters, then its own trigger."""
    S = g.S
    c = g.card(cid)
    p = c["o"]
    if cast:
        bonus = sum(int(b) for b in S["t"].get("revenge", ()))
        if bonus:
            c["pa"] = c.get("pa", 0) + bonus
    refresh_auras(S)
    r = RULES.get(c["k"])
    if r is not None and r.etb is not None:
        r.etb(g, cid)
    g.emit("entered", {"player": p, "card": cid, "zone": c["z"], "at": c.get("at")})


def op_after_resolve(g: G, op: Json) -> None:
    S = g.S
    if S["stack"]:
        top = S["stack"][-1]
        window(g, "stack", [q for q in order_from(S, S["active"]) if q != top["p"]])


# --- dying and destruction -----------------------------------------------------------------------

def dying_now(S: Json) -> list[str]:
    out = []
    weakened = {e.get("card") for e in S["effects"] if e.get("d", 0) < 0}
    cards = S["cards"]
    for cid in creatures_in_play(S):
        c = cards[cid]
        if not c.get("dmg") and c.get("pd", 0) >= 0 and cid not in weakened:
            continue  # printed defense >= 1 and statics only add: not dying
        _, dfn, _ = stats(S, cid)
        if S["cards"][cid].get("dmg", 0) >= dfn or dfn <= 0:
            out.append(cid)
    return out


def savers(S: Json, p: int, dying: list[str]) -> list[tuple[str, str]]:
    """(saver, dying creature) pairs ``p`` could use now (M35 dying window, M40 stop)."""
    out: list[tuple[str, str]] = []
    if resource_cards(S, p) < 2:
        return out
    for src in creatures_in_play(S, p):
        c = S["cards"][src]
        r = RULES.get(c["k"])
        if r is None or r.ability is None or r.ability.get("timing") != "dying" or c.get("m"):
            continue
        for t in dying:
            if r.ability["saves"] & subs(S, t):
                out.append((src, t))
    return out


def op_check(g: G, op: Json) -> None:
    """M35/M36/M3: dying creatures, destroyed cities, players out."""
    S = g.S
    dying = dying_now(S)
    if dying:
        players = [q for q in order_from(S, S["active"]) if savers(S, q, dying)]
        push(g, {"op": "finish_dying", "cards": dying}, {"op": "check"})
        if players:
            window(g, "dying", players, cards=dying)
        return
    comb = S.get("combat")
    if not (comb and comb.get("damage")):
        for city in cities_in_play(S):
            if city in S["cards"] and g.card(city)["z"] == "city" and g.card(city)["cdef"] <= 0:
                destroy_city(g, city)
                push(g, {"op": "check"})
                return
    check_out(g)


def op_finish_dying(g: G, op: Json) -> None:
    S = g.S
    still = [cid for cid in op["cards"] if is_creature_in_play(g, cid) and cid in dying_now(S)]
    for cid in still:
        g.emit("died", {"card": cid, "name": g.d(cid)["name"], "owner": g.card(cid)["o"]})
        move(g, cid, "grave")
    refresh_auras(S)


def destroy_city(g: G, city: str) -> None:
    """M22: to the graveyard with its enchantments; unmarked residents move, marked ones go home."""
    S = g.S
    c = g.card(city)
    p = c["o"]
    g.emit("city_destroyed", {"city": city, "owner": p, "name": g.d(city)["name"]})
    residents = list(c["res"])
    S["adv"] = [a for a in S["adv"] if a["city"] != city]
    comb = S.get("combat")
    for r in residents:
        rc = g.card(r)
        if rc.get("m"):
            move(g, r, "hand")
        else:
            rc["z"] = "limbo"
            c["res"].remove(r)
            if comb:
                _leave_combat(comb, r)
    move(g, city, "grave")
    others = list(g.seat(p)["cities"])
    for r in residents:
        if r not in S["cards"] or g.card(r)["z"] != "limbo":
            continue
        if len(others) >= 2:
            push(g, {"op": "decide", "seat": p, "kind": "resident_to", "options": others, "card": r})
            g.card(r)["z"] = "army"
            g.seat(p)["army"].append(r)
        elif others:
            g.card(r)["z"] = "res"
            g.card(r)["at"] = others[0]
            g.card(others[0])["res"].append(r)
        else:
            g.card(r)["z"] = "army"
            g.card(r).pop("at", None)
            g.seat(p)["army"].append(r)


def _decide_resident_to(g: G, op: Json, v: Any) -> None:
    cid = op["card"]
    if is_creature_in_play(g, cid) and v in g.S["cards"] and g.card(v)["z"] == "city":
        relocate(g, cid, "res", str(v))


def check_out(g: G) -> None:
    S = g.S
    gone = [p for p in alive(S) if not S["seats"][p]["cities"] and not S["seats"][p]["unbuilt"]
            and S["turn"] > 0]
    if gone:
        put_out(g, gone, "no_city")


def put_out(g: G, players: list[int], reason: str) -> None:
    """M3, M46: players out at the same moment; their cards leave the game."""
    S = g.S
    for p in players:
        if S["seats"][p]["out"]:
            continue
        S["seats"][p]["out"] = True
        S["seats"][p]["out_turn"] = S["turn"]
        g.emit("player_out", {"player": p, "reason": reason})
        for cid in list(in_play_cards(S, p)):
            if cid in S["cards"] and in_play(g, cid):
                if g.card(cid)["z"] == "city":
                    for r in list(g.card(cid)["res"]):
                        move(g, r, "removed")
                move(g, cid, "removed")
        S["stack"] = [it for it in S["stack"] if it["p"] != p]
        for cid, c in list(S["cards"].items()):
            if c["o"] == p and c["z"] == "stack":
                move(g, cid, "removed")
        S["adv"] = [a for a in S["adv"] if a["p"] != p]
        S["effects"] = [e for e in S["effects"] if e.get("p") != p]
        comb = S.get("combat")
        if comb and comb["defender"] == p:
            S["combat"] = None
    left = alive(S)
    if len(left) <= 1:
        S["outcome"] = {"winners": left, "draw": not left,
                        "reason": "last_player" if left else "all_out_at_once"}
        S["todo"] = []
        g.emit("game_over", dict(S["outcome"]))
        return
    if S["seats"][S["active"]]["out"]:
        start_next_turn(g)
        S["combat"] = None


# --- combat --------------------------------------------------------------------------------------

def can_block(S: Json, blocker: str, attacker: str) -> bool:
    if has_kw(S, attacker, "flying"):
        kws = stats(S, blocker)[2]
        return "flying" in kws or "ranged" in kws
    return True


def eligible_blockers(S: Json) -> list[str]:
    comb = S["combat"]
    p = comb["defender"]
    city = comb["city"]
    out = list(S["seats"][p]["army"])
    if city in S["cards"] and S["cards"][city]["z"] == "city":
        out.extend(S["cards"][city]["res"])
    for e in S["effects"]:
        if e.get("kind") == "call_to_aid" and e["p"] == p and e["city"] != city and e["city"] in S["cards"] \
                and S["cards"][e["city"]]["z"] == "city":
            out.extend(S["cards"][e["city"]]["res"])
    used = {b for bl in comb["blocks"].values() for b in bl} | set(comb.get("blockers_used", ()))
    return [b for b in out if b not in used]


def intercept_options(S: Json) -> list[list[str]]:
    comb = S["combat"]
    out = []
    for b in eligible_blockers(S):
        for a in comb["attackers"]:
            if can_block(S, b, a):
                out.append([b, a])
    return out


def op_intercepts(g: G, op: Json) -> None:
    S = g.S
    comb = S.get("combat")
    if not comb:
        return
    opts: list[Any] = [None, *intercept_options(S)]
    if len(opts) > 1:
        decide(g, comb["defender"], "intercept", opts)


def _decide_intercept(g: G, op: Json, v: Any) -> None:
    S = g.S
    comb = S.get("combat")
    if v is None or not comb:
        if comb:
            comb["blocks_done"] = True
            g.emit("interceptors", {"blocks": {a: list(b) for a, b in comb["blocks"].items()}})
        return
    b, a = str(v[0]), str(v[1])
    comb["blocks"].setdefault(a, []).append(b)
    comb.setdefault("blocked", [])
    if a not in comb["blocked"]:
        comb["blocked"].append(a)
    comb.setdefault("blockers_used", []).append(b)
    g.emit("intercept", {"blocker": b, "attacker": a})
    r = RULES.get(g.card(a)["k"])
    if r is not None and r.on_block is not None:
        r.on_block(g, a, b)
    push(g, {"op": "check"}, {"op": "intercepts"})


def lethal(S: Json, cid: str) -> int:
    _, dfn, _ = stats(S, cid)
    return max(0, dfn - int(S["cards"][cid].get("dmg", 0)))


def _blockers_of(S: Json, a: str) -> list[str]:
    return [b for b in S["combat"]["blocks"].get(a, []) if b in S["cards"] and S["cards"][b]["z"] in IN_PLAY]


def split_needed(S: Json, a: str) -> tuple[bool, list[str]]:
    """Whether attacker ``a`` must choose a split now (M43), and its blockers."""
    bl = _blockers_of(S, a)
    if len(bl) < 2:
        return False, bl
    atk = attack_of(S, a)
    if has_kw(S, a, "overrun") and atk >= sum(lethal(S, b) for b in bl):
        return False, bl
    return True, bl


def split_options(S: Json, a: str, bl: list[str]) -> list[list[int]]:
    atk = attack_of(S, a)
    k = len(bl)
    out: list[list[int]] = []

    def rec(i: int, left: int, cur: list[int]) -> None:
        if len(out) > 64:
            return
        if i == k - 1:
            out.append([*cur, left])
            return
        for v in range(left, -1, -1):
            rec(i + 1, left - v, [*cur, v])

    rec(0, atk, [])
    if len(out) > 64:  # canonical splits: lethal first, in each rotation of the blockers
        out = []
        for s in range(k):
            amounts = [0] * k
            left = atk
            for j in range(k):
                i = (s + j) % k
                take = min(left, lethal(S, bl[i]))
                amounts[i] = take
                left -= take
            amounts[s] += left
            if amounts not in out:
                out.append(amounts)
    return out


def check_split(g: G, op: Json, v: Any) -> list[int]:
    bl = op["blockers"]
    if not isinstance(v, list) or len(v) != len(bl) or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                 and x >= 0 for x in v):
        raise InvalidOrder(f"a split is a list of {len(bl)} non-negative integers (one per blocker)",
                           rule="M43", field="choose.option")
    if sum(v) != attack_of(g.S, op["attacker"]):
        raise fail("the split totals the attacker's attack exactly", "M43", "choose.option")
    return list(v)


def _decide_split(g: G, op: Json, v: Any) -> None:
    comb = g.S.get("combat")
    if comb:
        comb.setdefault("splits", {})[op["attacker"]] = {"blockers": op["blockers"], "amounts": v}


def op_damage(g: G, op: Json) -> None:
    """M41 steps 5/6: every creature in the combat of this step deals its damage at once."""
    S = g.S
    comb = S.get("combat")
    if not comb:
        return
    first = op["step"] == "first"
    dealt = comb.setdefault("dealt", [])

    def in_step(cid: str) -> bool:
        return cid not in dealt and (has_kw(S, cid, "first_strike") == first)

    attackers = [a for a in comb["attackers"] if in_step(a)]
    splits = comb.setdefault("splits", {})
    for a in attackers:
        need, bl = split_needed(S, a)
        if need and a not in splits:
            push(g, op)
            decide(g, S["active"], "split", split_options(S, a, bl), attacker=a, blockers=bl)
            return
    comb["damage"] = True
    hits: list[tuple[str, str, int]] = []  # (source, target, amount)
    city = comb["city"]
    for a in attackers:
        atk = attack_of(S, a)
        bl = _blockers_of(S, a)
        if a not in comb.get("blocked", []):
            hits.append((a, city, atk))
        elif not bl:
            if has_kw(S, a, "overrun"):
                hits.append((a, city, atk))
        elif len(bl) == 1 and not (has_kw(S, a, "overrun") and atk > lethal(S, bl[0])):
            hits.append((a, bl[0], atk))
        elif has_kw(S, a, "overrun") and atk >= sum(lethal(S, b) for b in bl):
            rest = atk
            for b in bl:
                hits.append((a, b, lethal(S, b)))
                rest -= lethal(S, b)
            hits.append((a, city, rest))
        else:
            sp = splits.get(a)
            if sp and sp["blockers"] == bl:
                hits.extend((a, b, n) for b, n in zip(bl, sp["amounts"], strict=True))
            else:
                hits.append((a, bl[0], atk))
        dealt.append(a)
    for a in list(comb["blocks"]):
        if a not in comb["attackers"]:
            continue
        for b in _blockers_of(S, a):
            if in_step(b) and b not in dealt:
                hits.append((b, a, attack_of(S, b)))
                dealt.append(b)
    comb["splits"] = {}
    done = deal_damage(g, hits)
    trig: list[Json] = []
    for src, tgt, n in done:
        if src in S["cards"]:
            r = RULES.get(S["cards"][src]["k"])
            if r is not None and r.dealt is not None:
                trig.append({"op": "dealt", "src": src, "tgt": tgt, "n": n})
    push(g, {"op": "check"}, *trig)


def op_dealt(g: G, op: Json) -> None:
    src = op["src"]
    c = g.S["cards"].get(src)
    if c is None:
        c = {"k": op.get("k", "")}
    r = RULES.get(c["k"]) if c else None
    if r is not None and r.dealt is not None:
        r.dealt(g, src, op["tgt"], op["n"])


def deal_damage(g: G, hits: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """Damage all at once; cities lose defense (M21, M36 Seat of the Throne cap, M58)."""
    S = g.S
    done = []
    for src, tgt, n in hits:
        if n <= 0 or tgt not in S["cards"]:
            continue
        t = g.card(tgt)
        if t["z"] == "city":
            cap = city_cap(S, tgt)
            if cap is not None:
                used = t.get("tdmg", [0, 0])
                taken = used[1] if used[0] == S["turn"] else 0
                n = max(0, min(n, cap - taken))
                t["tdmg"] = [S["turn"], taken + n]
                if n <= 0:
                    continue
            t["cdef"] -= n
        elif t["z"] in IN_PLAY:
            t["dmg"] = t.get("dmg", 0) + n
        else:
            continue
        if src in S["cards"]:
            S["t"]["dealt"][src] = S["t"]["dealt"].get(src, 0) + n
        done.append((src, tgt, n))
        g.emit("damage", {"source": src, "target": tgt, "amount": n})
    return done


def city_cap(S: Json, city: str) -> int | None:
    for e in S["cards"][city].get("ench") or ():
        r = RULES.get(S["cards"][e]["k"])
        if r is not None and r.ability is not None and "city_cap" in r.ability:
            cap: int = r.ability["city_cap"]
            return cap
    return None


def op_combat_end(g: G, op: Json) -> None:
    S = g.S
    if S.get("combat"):
        g.emit("combat_end", {"city": S["combat"]["city"]})
    S["combat"] = None
    S["effects"] = [e for e in S["effects"] if e.get("until") != "combat"]
    push(g, {"op": "check"})


OPS: dict[str, Callable[[G, Json], None]] = {
    "setup_build": op_setup_build, "begin": op_begin, "stop": op_stop, "unmark": op_unmark, "ask_unmark": op_ask_unmark,
    "tactics_start": op_tactics_start, "levels": op_levels, "fx": op_fx, "after_combat": op_after_combat,
    "discard_start": op_discard_start, "discard": op_discard, "end_turn": op_end_turn,
    "after_resolve": op_after_resolve, "check": op_check, "finish_dying": op_finish_dying,
    "intercepts": op_intercepts, "damage": op_damage, "dealt": op_dealt, "combat_end": op_combat_end,
}
DECIDE.update({"setup_build": _decide_setup_build, "unmark_pay": _decide_unmark_pay, "discard": _decide_discard,
               "resident_to": _decide_resident_to, "intercept": _decide_intercept, "split": _decide_split})
DECIDE_CHECK["split"] = check_split


# --- public card data ----------------------------------------------------------------------------

def card_public(S: Json, cid: str) -> Json:
    """A visible card as views and events show it."""
    c = S["cards"][cid]
    d = DEFS[c["k"]]
    out: Json = {"id": cid, "key": d["key"], "name": d["name"], "type": d["type"], "faction": d["faction"],
                 "owner": c["o"]}
    if c.get("m"):
        out["marked"] = True
    if d["type"] == "creature" and c["z"] in IN_PLAY:
        a, df, kw = stats(S, cid)
        out.update({"attack": a, "defense": df, "damage": c.get("dmg", 0), "keywords": sorted(kw)})
        for k in ("pa", "pd", "gr", "ivy", "skip"):
            if c.get(k):
                out[k] = c[k]
        if c.get("ench"):
            out["enchantments"] = [card_public(S, e) for e in c["ench"]]
    elif d["type"] == "city" and c["z"] == "city":
        out["defense"] = c["cdef"]
        out["residents"] = [card_public(S, r) for r in c["res"]]
        out["enchantments"] = [card_public(S, e) for e in c["ench"]]
    return out
