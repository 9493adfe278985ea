"""Arcmage for the MCP door: the table as a language model reads it, and every legal action with a
sentence saying what it does.

Every card appears as its id and name; a hand card carries its face (type, faction, cost, loyalty,
attack/defense, text), a card in play its current attack/defense, damage, marks and keywords, and the
texts of the cards on the table not in hand are listed once by name (``card_texts``). Everything here
is read from the caller's own view (``ArcmageView``, :mod:`engine.arcmage.view`), which holds nothing
the player may not see: other players' hands, decks, piles and unbuilt cities only as counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from gateway.agent_views import Generic

#: the view's own words for the draw options (M9, M44)
DRAWS = {"draw2": "draw 2 cards and put no resource this turn",
         "draw1": "draw 1 card, then you may put one hand card on a resource pile",
         "draw0": "draw no card, then put exactly two hand cards on your resource piles"}
#: what a pass does, by the pending op (the head of the game's agenda) and the decision kind
PASS_AWAIT = "end this phase step (nothing more to do in phase {phase})"
PASS_WINDOW = ("pass: no answer in this window (when everyone has passed, the top of the stack resolves or the "
               "game goes on)")
PASS_DECIDE = "decline / done: no (more) {kind}"
#: a few decision kinds whose options are plain values, in words
CHOICE_WORDS = {"unmark_pay": "pay the unmark conditions", "sacrifice_resource": "sacrifice",
                "discard": "discard", "setup_build": "build as your first city", "resident_to": "move the resident to"}


def _face_of(inner: Mapping[str, Any], cid: str) -> Mapping[str, Any]:
    card = (inner.get("cards") or {}).get(cid) or {}
    face: Mapping[str, Any] = (inner.get("faces") or {}).get(card.get("key", ""), {})
    return face


def label(inner: Mapping[str, Any], cid: Any) -> str:
    """``"Kolibri (c68)"`` for a card the caller can see; the bare id otherwise."""
    if not isinstance(cid, str):
        return str(cid)
    card = (inner.get("cards") or {}).get(cid)
    return f"{card['name']} ({cid})" if card and card.get("name") else cid


def _stats(face: Mapping[str, Any]) -> str:
    """``"creature, Gaian, cost 3 loyalty 2, 1/2"`` — what a card is, in a few words."""
    parts = [str(face.get("type", ""))]
    if face.get("faction"):
        parts.append(str(face["faction"]))
    if face.get("cost"):
        parts.append(f"cost {face['cost']} loyalty {face.get('loyalty', 0)}")
    if face.get("type") == "creature":
        parts.append(f"{face.get('attack', 0)}/{face.get('defense', 0)}")
    elif face.get("type") == "city":
        parts.append(f"defense {face.get('defense', 0)}, loyalty {face.get('loyalty', 0)}")
    return ", ".join(p for p in parts if p)


def hand_card(inner: Mapping[str, Any], cid: str) -> dict[str, Any]:
    """A hand card with its face."""
    face = _face_of(inner, cid)
    out: dict[str, Any] = {"id": cid, "name": face.get("name", label(inner, cid)), "type": face.get("type", "")}
    for k in ("faction", "cost"):
        if face.get(k):
            out[k] = face[k]
    if face.get("cost") or face.get("type") == "city":
        out["loyalty"] = face.get("loyalty", 0)
    if face.get("type") == "creature":
        out["attack"], out["defense"] = face.get("attack", 0), face.get("defense", 0)
    elif face.get("type") == "city":
        out["defense"] = face.get("defense", 0)
    for k in ("subtypes", "keywords"):
        if face.get(k):
            out[k] = list(face[k])
    out["text"] = face.get("text", "")
    return out


def _in_play(inner: Mapping[str, Any], cid: str) -> dict[str, Any]:
    """A creature in play (army or resident): current attack/defense, damage, marked, keywords."""
    card = (inner.get("cards") or {}).get(cid) or {}
    out: dict[str, Any] = {"id": cid, "name": card.get("name", cid), "attack": card.get("attack", 0),
                           "defense": card.get("defense", 0)}
    if card.get("damage"):
        out["damage"] = card["damage"]
    if card.get("marked"):
        out["marked"] = True
    if card.get("keywords"):
        out["keywords"] = list(card["keywords"])
    if card.get("enchantments"):
        out["enchantments"] = [label(inner, e) for e in card["enchantments"]]
    return out


def _city(inner: Mapping[str, Any], cid: str) -> dict[str, Any]:
    card = (inner.get("cards") or {}).get(cid) or {}
    out: dict[str, Any] = {"id": cid, "name": card.get("name", cid), "defense": card.get("city_defense", 0)}
    if card.get("damage"):
        out["damage"] = card["damage"]
    if card.get("marked"):
        out["marked"] = True
    out["residents"] = [_in_play(inner, r) for r in card.get("residents") or ()]
    if card.get("enchantments"):
        out["enchantments"] = [label(inner, e) for e in card["enchantments"]]
    return out


def _seat(inner: Mapping[str, Any], s: Mapping[str, Any]) -> dict[str, Any]:
    counts = s.get("pile_counts") or {}
    marked = s.get("pile_marked") or {}
    out: dict[str, Any] = {"seat": s.get("seat", 0)}
    if s.get("out"):
        out["out"] = True
    out.update({"hand": s.get("hand_count", 0), "deck": s.get("deck_count", 0), "unbuilt": s.get("unbuilt_count", 0),
                "piles": {f: {"cards": int(n), "unmarked": int(n) - int(marked.get(f, 0))}
                          for f, n in counts.items() if n},
                "cities": [_city(inner, c) for c in s.get("cities") or ()],
                "army": [_in_play(inner, c) for c in s.get("army") or ()],
                "graveyard": [label(inner, c) for c in s.get("grave") or ()]})
    if s.get("removed"):
        out["removed"] = [label(inner, c) for c in s["removed"]]
    return out


def _owner_of(inner: Mapping[str, Any], cid: str) -> int | None:
    card = (inner.get("cards") or {}).get(cid)
    return None if card is None else int(card.get("owner", 0))


def _place(inner: Mapping[str, Any], to: Any) -> str:
    if to == "army":
        return "your army"
    owner = _owner_of(inner, str(to))
    whose = "your city" if owner == inner.get("you") else f"seat {owner}'s city" if owner is not None else "city"
    return f"{whose} {label(inner, to)}"


def _value(inner: Mapping[str, Any], v: Any) -> str:
    """A decision's option in words: card ids by name, lists joined, null as none."""
    if v is None:
        return "none"
    if isinstance(v, list):
        return "[" + ", ".join(_value(inner, x) for x in v) + "]"
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {_value(inner, x)}" for k, x in v.items())
    return label(inner, v) if isinstance(v, str) else str(v)


def _targets(inner: Mapping[str, Any], f: Mapping[str, Any]) -> str:
    out = ""
    if f.get("targets"):
        out += " targeting " + ", ".join(label(inner, t) for t in f["targets"])
    if f.get("with"):
        out += " with " + ", ".join(label(inner, t) for t in f["with"])
    return out


def _choice(inner: Mapping[str, Any], pending: Mapping[str, Any], option: Any) -> str:
    kind = str(pending.get("kind", ""))
    if kind == "intercept":
        if option is None:
            return "done assigning interceptors"
        blocker, attacker = option
        return f"intercept: {label(inner, blocker)} blocks the attacker {label(inner, attacker)}"
    if kind == "split" and isinstance(option, list):
        blockers: list[Any] = list((pending.get("detail") or {}).get("blockers") or ())
        if blockers and len(blockers) == len(option):
            return "split the attack's damage: " + ", ".join(
                f"{n} to {label(inner, b)}" for b, n in zip(blockers, option, strict=True))
        return f"split the attack's damage as {option} (amounts per blocker, in order)"
    if option is None:
        return f"{kind}: none"
    words = CHOICE_WORDS.get(kind, kind)
    if kind == "resident_to":
        return f"{words} {_place(inner, option)}"
    if isinstance(option, bool):
        return f"{words}: {'yes' if option else 'no'}"
    return f"{words}: {_value(inner, option)}"


def describe(inner: Mapping[str, Any], action: Mapping[str, Any]) -> str:
    """One legal action (an ArcmageAction dict) in a sentence: what it does, cards by name."""
    (kind, f), = action.items()
    f = f or {}
    pending = inner.get("pending") or {}
    if kind == "pass":
        if pending.get("op") == "decide":
            return PASS_DECIDE.format(kind=pending.get("kind", "choice"))
        if pending.get("op") == "window":
            return PASS_WINDOW
        return PASS_AWAIT.format(phase=pending.get("phase") or inner.get("phase", ""))
    if kind == "choose":
        return _choice(inner, pending, f.get("option"))
    card = str(f.get("card", ""))
    name = label(inner, card)
    if kind == "build":
        return (f"build {name} ({_stats(_face_of(inner, card))})" if pending.get("phase") != "build" else
                f"Build instead: build {name} ({_stats(_face_of(inner, card))}) and skip the rest of your turn "
                "but Discard")
    if kind == "draw":
        option = str(f.get("option", ""))
        return f"{option}: {DRAWS.get(option, option)}"
    if kind == "resource":
        return f"put {name} face down on your {f.get('faction', '')} resource pile"
    if kind == "devote":
        face = _face_of(inner, card)
        city = ((inner.get("cards") or {}).get(card) or {}).get("attached_to", "")
        target = _targets(inner, {"targets": [f["target"]]}) if f.get("target") else ""
        return (f"devote {name} (marks it; its loyalty {face.get('loyalty', 0)} counts toward "
                f"{label(inner, city)}'s devotion){target}")
    if kind == "play":
        where = f" into {_place(inner, f['to'])}" if f.get("to") else ""
        extra = "".join(f", {k} {f[k]}" for k in ("x", "mode") if f.get(k) is not None)
        pay = f", paying {_value(inner, f['pay'])}" if f.get("pay") else ""
        return f"cast {name} ({_stats(_face_of(inner, card))}){where}{extra}{_targets(inner, f)}{pay}"
    if kind == "ability":
        return f"use the ability of {name}{_targets(inner, f)}"
    if kind == "move":
        return f"move {name} to {_place(inner, f.get('to'))} (marks it)"
    if kind == "salvage":
        return f"salvage {name} from your graveyard"
    if kind == "attack":
        city = str(f.get("city", ""))
        cards = inner.get("cards") or {}
        attackers = ", ".join(f"{label(inner, a)} {cards.get(a, {}).get('attack', 0)}/"
                              f"{cards.get(a, {}).get('defense', 0)}" for a in f.get("attackers") or ())
        return (f"attack {_place(inner, city)} (defense {cards.get(city, {}).get('city_defense', 0)}) "
                f"with {attackers}")
    return f"{kind} {_value(inner, f)}"


def _card_refs(inner: Mapping[str, Any], v: Any) -> Any:
    """An event's data with every card object as its label (``"Kolibri (c68)"``)."""
    if isinstance(v, Mapping):
        if "id" in v and "name" in v:
            return f"{v['name']} ({v['id']})"
        return {k: _card_refs(inner, x) for k, x in v.items()}
    if isinstance(v, list):
        return [_card_refs(inner, x) for x in v]
    return v


class Arcmage(Generic):
    title = "Arcmage"
    turns = True
    pass_action: ClassVar[dict[str, Any]] = {"pass": {}}
    view_doc = (
        "(played by turns: act, pass_priority and wait_for_my_decision, never submit_orders; round is the "
        "turn number) turn, active (whose turn), phase, pending (what the game waits for: {op: \"await\" — "
        "the active player's phase step, \"decide\" — a choice of `seat` of kind `kind` among `options`, "
        "\"window\" — `players` may answer on the stack or pass}), hand [{id, name, type, faction, cost, "
        "loyalty, attack, defense, subtypes, keywords, text}], your_unbuilt_cities (same shape), seats [{seat, "
        "out?, hand, deck, unbuilt (counts), piles {faction: {cards, unmarked}} (resources: an unmarked one "
        "can pay), cities [{id, name, defense, damage?, marked?, residents [creatures], enchantments?}], "
        "army [creatures], graveyard, removed?}] where a creature is {id, name, attack, defense, damage?, "
        "marked?, keywords?, enchantments?}; stack (bottom first; the top resolves first) [{card, player, to?, "
        "targets?, x?, mode?}], combat {city, defender, attackers, blocks {attacker: [blockers]}, blocked?}, "
        "card_texts {name: \"type, faction, cost, text\"} for cards on the table not in your hand, outcome "
        "once over ({winners, draw, reason}), attribution (card texts CC BY-SA 4.0, arcmage.org). Cards "
        "elsewhere are written \"Name (id)\"; the id is what actions take.")
    moves_doc = (
        "{turn, phase, pending, actions: [{action, does}]}: every action the rules allow you now, each an "
        "`action` object to send to the act tool exactly as it is, and `does`, what it would do in words "
        "(cards by name). Empty (with a note) when it is not your decision: call wait_for_my_decision.")

    def __init__(self) -> None:
        super().__init__("arcmage")

    def view(self, inner: dict[str, Any]) -> dict[str, Any]:
        v = inner
        cards = v.get("cards") or {}
        hand = list(v.get("hand") or ())
        pending = v.get("pending")
        out: dict[str, Any] = {
            "turn": v.get("turn", 0), "active": v.get("active", 0), "phase": v.get("phase", ""),
            "pending": pending,
            "hand": [hand_card(v, c) for c in hand],
            "your_unbuilt_cities": [hand_card(v, c) for c in v.get("unbuilt") or ()],
            "seats": [_seat(v, s) for s in v.get("seats") or ()],
            "stack": [{"card": label(v, it.get("card")), "player": it.get("player", 0),
                       **({"to": _place(v, it["to"])} if it.get("to") else {}),
                       **({"targets": [label(v, t) for t in it["targets"]]} if it.get("targets") else {}),
                       **{k: it[k] for k in ("x", "mode") if it.get(k) is not None}}
                      for it in v.get("stack") or ()],
        }
        combat = v.get("combat")
        if combat:
            out["combat"] = {
                "city": label(v, combat.get("city")), "defender": combat.get("defender", 0),
                "attackers": [label(v, a) for a in combat.get("attackers") or ()],
                "blocks": {label(v, a): [label(v, b) for b in (bl or {}).get("cards") or ()]
                           for a, bl in (combat.get("blocks") or {}).items()},
                **({"blocked": [label(v, a) for a in combat["blocked"]]} if combat.get("blocked") else {}),
            }
        in_hand = {cards[c]["key"] for c in hand if c in cards}
        on_table = {c.get("key") for c in cards.values() if c.get("zone") not in ("hand", "pile", "unbuilt")}
        out["card_texts"] = {f["name"]: f"{_stats(f)}. {f.get('text', '')}".strip()
                             for k, f in sorted((v.get("faces") or {}).items())
                             if k in on_table and k not in in_hand}
        if v.get("outcome"):
            out["outcome"] = v["outcome"]
        out["attribution"] = v.get("attribution", "")
        return out

    def moves(self, inner: dict[str, Any], unit: str | None) -> dict[str, Any]:
        if unit is not None:
            super().moves(inner, unit)  # the engine's own refusal (Arcmage has no units)
        if inner.get("outcome"):
            return {"phase": "over", "actions": []}
        legal = list(inner.get("legal") or ())
        return {"turn": inner.get("turn", 0), "phase": inner.get("phase", ""), "pending": inner.get("pending"),
                "actions": [{"action": a, "does": describe(inner, a)} for a in legal]}

    def event(self, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"kind": kind, **_card_refs({}, dict(data))}


SHAPER = Arcmage()
