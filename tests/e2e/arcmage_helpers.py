"""Helpers of the Arcmage end-to-end tests: engineered decks, a goal-seeking policy and the watchers'
bookkeeping (spec/arcmage.md, M1–M58).

The decks and the policy are built so that, whatever the (secret, random) shuffle of a game, a game
between an attacker (seat 0, :data:`ATTACKER_DECK`) and a defender (seat 1, :data:`DEFENDER_DECK`)
who both follow :func:`policy` reaches, before the attacker wins (M3): an event cast in answer to the
opponent's card on the stack (M16, M38, M39), a creature saved in a dying window (M35) and a city
destroyed (M22).  The attacker spares the defender's last city until all three happened.  Checked
offline with the engine alone over 250 seeds (all three goals and the attacker's victory every time,
about 225 actions a game on average); ``tests/e2e/test_arcmage_e2e.py`` repeats a few of them, then
plays such a game through each door.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import json_format

from archipelago.v1 import arcmage_pb2, game_pb2, lobby_pb2
from client.base import BaseClient
from engine.arcmage import GAME
from engine.arcmage.carddb import DECKS
from gateway.convert import to_json
from tests.e2e.helpers import WAIT_S

Json = dict[str, Any]

#: the attacker's deck: the built-in Empire deck "Brothers in Arms" (M2) with its three Spearmen
#: (which force every Soldier to attack, M56) and Borg's Keep (whose level 1 sacrifices resources)
#: replaced by Armories and Barracks: Soldiers that cast a creature most turns and attack when their
#: player chooses
ATTACKER_DECK: list[Json] = [{"card": k, "count": n} for k, n in sorted(
    {**DECKS["Brothers in Arms"], "spearman": 0, "borgs_keep": 0, "armory": 3, "barracks": 3}.items()) if n]
#: the defender's deck, a Rebirth list (M1: 45 cards, 3 cities, at most 3 copies), all Gaian: cheap
#: events to answer with (Call to Aid, Early Spring), Birds and Falconers to save them in a dying
#: window, Flowers and Botanists likewise, and three low cities (Spirit Tree, defense 6).
DEFENDER_DECK: list[Json] = [{"card": name, "count": 3} for name in (
    "Spirit Tree", "Call to Aid", "Early Spring",
    "Falconer", "Kolibri", "Nightingale", "Majestic Griffin",
    "Botanist", "Nourished Flower", "Poison Ivy", "Sequoia Saplings",
    "Elvish Archer", "Elvish Ambush", "Grassroots", "Nature's Outrage",
)]
#: what the defender casts in its own turns, savers first (all else is kept or put down as resources)
DEFENDER_CASTS = ("falconer", "botanist", "kolibri", "nightingale", "nourished_flower", "poison_ivy")

GOALS = ("answered", "saved", "city_destroyed")
SAVERS = ("falconer", "botanist")  # "prevent a Bird / a Tree or Flower from dying" (M35)
ROLES = ("attacker", "defender")


def _kind(a: Mapping[str, Any]) -> str:
    return next(iter(a))


def _card(view: Mapping[str, Any], cid: Any) -> Mapping[str, Any]:
    cards: Mapping[str, Any] = view.get("cards") or {}
    c = cards.get(cid) if isinstance(cid, str) else None
    return c or {}


def _face(view: Mapping[str, Any], cid: Any) -> Mapping[str, Any]:
    faces: Mapping[str, Any] = view.get("faces") or {}
    return faces.get(_card(view, cid).get("key", "")) or {}


def _unmarked_resources(view: Mapping[str, Any]) -> int:
    me = (view.get("seats") or [])[int(view.get("you", 0))]
    counts = me.get("pile_counts") or {}
    marked = me.get("pile_marked") or {}
    return sum(int(counts.get(f, 0)) - int(marked.get(f, 0)) for f in counts)


def _resource_cards(view: Mapping[str, Any]) -> int:
    me = (view.get("seats") or [])[int(view.get("you", 0))]
    return sum(int(n) for n in (me.get("pile_counts") or {}).values())


def _events_in_hand(view: Mapping[str, Any]) -> list[str]:
    return [c for c in view.get("hand") or () if _face(view, c).get("type") == "event"]


def _ready_saver(view: Mapping[str, Any], kind: str) -> bool:
    """An unmarked saver of ``kind`` ("bird": Falconer, "flower": Botanist) of mine in play, with the 2
    resource cards its ability sacrifices (M35, M40)."""
    me = int(view.get("you", 0))
    saver = {"bird": "falconer", "flower": "botanist"}[kind]
    for c in (view.get("cards") or {}).values():
        if (c.get("key") == saver and int(c.get("owner", 0)) == me and c.get("zone") in ("army", "res")
                and not c.get("marked")):
            return _resource_cards(view) >= 2
    return False


def _in_play(view: Mapping[str, Any], key: str) -> int:
    me = int(view.get("you", 0))
    return sum(1 for c in (view.get("cards") or {}).values()
               if c.get("key") == key and int(c.get("owner", 0)) == me and c.get("zone") in ("army", "res"))


def _savable(view: Mapping[str, Any], cid: str) -> bool:
    subs = set(_face(view, cid).get("subtypes") or ())
    return bool(("bird" in subs and _ready_saver(view, "bird"))
                or (subs & {"flower", "tree"} and _ready_saver(view, "flower")))



def _cost(view: Mapping[str, Any], cid: str) -> int:
    cost = str(_face(view, cid).get("cost", "0"))
    return int(cost) if cost.isdigit() else 3


def policy(view: Mapping[str, Any], role: str, done: Iterable[str] = ()) -> Json:
    """The action of the viewing seat, a legal one of ``view["legal"]``.

    Both roles answer the opponent's card on the stack with an event when they can (M16) and save a
    dying creature when offered (M35).  The ``"attacker"`` plays the engine's autopilot (M53) but
    chooses its attacks (:func:`_attack`).  The ``"defender"`` never attacks, blocks only with a
    creature its own saver can save (to bring a dying window), never devotes (a devoted saver is
    marked), casts only savers, Birds and Flowers, keeps its events for answers and what an answer
    costs until one was made.  ``done``: the goals already reached (of :data:`GOALS`)."""
    legal: list[Json] = list(view.get("legal") or ())
    if not legal:
        return {}
    reached = set(done)
    me = int(view.get("you", 0))
    pend = view.get("pending") or {}
    stack = view.get("stack") or []
    by: dict[str, list[Json]] = {}
    for a in legal:
        by.setdefault(_kind(a), []).append(a)
    if stack and int(stack[-1].get("player", 0)) != me and "play" in by:
        events = [a for a in by["play"] if _face(view, a["play"]["card"]).get("type") == "event"]
        if events:
            return events[0]  # M16: an event answers the opponent's card on the stack
    if pend.get("kind") == "dying":
        saves = [a for a in by.get("ability", []) if a["ability"].get("targets")]
        if saves:
            return saves[0]  # M35: save the dying creature
    phase = _phase(view)
    if role == "attacker":
        if phase == "attack" and "attack" in by:
            chosen = _attack(view, by["attack"], reached)
            if chosen is not None:
                return chosen
            if "pass" in by:
                return {"pass": {}}
            return min(by["attack"], key=lambda a: (len(a["attack"]["attackers"]),  # M56: forced to attack
                                                    int(_card(view, a["attack"]["city"]).get("city_defense", 0))))
        return GAME.autopilot_action(dict(view))
    none: Json = {"choose": {"option": None}}
    if pend.get("kind") == "intercept":
        if "saved" not in reached:
            for a in by.get("choose", []):
                o = a["choose"]["option"]
                if isinstance(o, list) and _savable(view, o[0]):
                    return a  # a blocker that dies and is saved
        return none if none in legal else legal[0]  # else the city takes the damage (M21)
    if phase == "draw":
        res = _resource_cards(view)
        hand = len(view.get("hand") or ())
        junk = sum(1 for c in view.get("hand") or () if _keep_value(view, c) == 0)
        prefs = ("draw0", "draw1", "draw2") if res < 4 and junk >= 2 and hand >= 2 else (
            ("draw1", "draw2", "draw0") if res < 6 and (hand > 2 or res < 3) else ("draw2", "draw1", "draw0"))
        for option in prefs:
            if {"draw": {"option": option}} in legal:
                return {"draw": {"option": option}}
    if phase == "resource" and "resource" in by:
        opts = [a for a in by["resource"] if a["resource"]["faction"] == "Gaian"] or by["resource"]
        best = min(opts, key=lambda a: _keep_value(view, a["resource"]["card"]))
        if _keep_value(view, best["resource"]["card"]) >= 2 and _resource_cards(view) >= 3 and "pass" in by:
            return {"pass": {}}  # M9: up to 1 resource — not an event or a saver it will want
        return best
    if phase in ("tactics", "attack", "play1", "play2", "blocks") and "pass" in by:
        if phase in ("play1", "play2"):
            reserve = 0 if "answered" in reached else min((_cost(view, e) for e in _events_in_hand(view)), default=0)
            budget = _unmarked_resources(view) - reserve
            for key in DEFENDER_CASTS:
                if _in_play(view, key) >= (1 if key in SAVERS else 2):
                    continue  # enough of these
                for a in by.get("play", []):
                    f = a["play"]
                    if (_card(view, f["card"]).get("key") == key and f.get("to") != "army"
                            and _cost(view, f["card"]) <= budget):
                        return a
        return {"pass": {}}
    return GAME.autopilot_action(dict(view))


def _attack(view: Mapping[str, Any], attacks: list[Json], reached: set[str]) -> Json | None:
    """The attacker's attack: with everything on the lowest city while the defender has a city left
    to build, or once every goal was reached; before that, against its last city, only a single
    weak attacker when the defender can block it with a creature it can save (its dying window),
    else none (the defender's last city stands until the goals are reached)."""
    me = int(view.get("you", 0))
    other = 1 - me
    def total(a: Json) -> int:
        return sum(int(_card(view, x).get("attack", 0)) for x in a["attack"]["attackers"])
    def city_def(a: Json) -> int:
        return int(_card(view, a["attack"]["city"]).get("city_defense", 0))
    seats = view.get("seats") or []
    if "saved" not in reached and _trick_set(view, other):
        singles = [a for a in attacks if total(a) >= 1 and total(a) < city_def(a)]
        if singles:
            return min(singles, key=lambda a: (len(a["attack"]["attackers"]), total(a),
                                               any("flying" in (_card(view, x).get("keywords") or ())
                                                   for x in a["attack"]["attackers"])))
    if int(seats[other].get("unbuilt_count", 0)) > 0 or set(GOALS) <= reached:
        return max(attacks, key=lambda a: (len(a["attack"]["attackers"]), -city_def(a)))
    return None


def _trick_set(view: Mapping[str, Any], seat: int) -> bool:
    """``seat`` has an unmarked saver at home, 2 resource cards, and a creature that saver saves."""
    cards = (view.get("cards") or {}).values()
    res = sum(int(n) for n in ((view.get("seats") or [])[seat].get("pile_counts") or {}).values())
    if res < 2:
        return False
    mine = [c for c in cards if int(c.get("owner", 0)) == seat and c.get("zone") in ("army", "res")]
    ready = {c.get("key") for c in mine if c.get("key") in SAVERS and not c.get("marked")}
    for c in mine:
        subs = set(_face(view, c.get("id")).get("subtypes") or ())
        if ("bird" in subs and "falconer" in ready) or (subs & {"flower", "tree"} and "botanist" in ready):
            return True
    return False


def _phase(view: Mapping[str, Any]) -> str:
    pend = view.get("pending") or {}
    return str(pend.get("phase") or "") if pend.get("op") == "await" else ""


def _keep_value(view: Mapping[str, Any], cid: str) -> int:
    """0: a card the defender puts down as a resource; higher: one it keeps (savers, what they save,
    events while it holds fewer than three)."""
    f = _face(view, cid)
    key = _card(view, cid).get("key")
    twin = _in_play(view, str(key)) + sum(1 for c in view.get("hand") or () if _card(view, c).get("key") == key) > 1
    if key in SAVERS:
        return 2 if twin else 4
    if key in DEFENDER_CASTS:
        return 1 if twin else 3
    if f.get("type") == "event":
        return 2 if len(_events_in_hand(view)) <= 2 else 0
    return 0


class Goals:
    """What a player's Watch updates (or the engine's events) showed: an event answering the other
    player's card on the stack, a save in a dying window, a city destroyed — the stack followed by the
    ``cast`` and ``resolves`` events."""

    def __init__(self) -> None:
        self.stack: list[int] = []
        self.reached: set[str] = set()

    def see(self, kind: str, data: Mapping[str, Any]) -> None:
        if kind == "cast":
            p = int(data["player"])
            if any(q != p for q in self.stack):
                self.reached.add("answered")
            self.stack.append(p)
        elif kind == "resolves" and self.stack:
            self.stack.pop()
        elif kind == "saved":
            self.reached.add("saved")
        elif kind == "city_destroyed":
            self.reached.add("city_destroyed")


# ---------------------------------------------------------------------------------- through a door

def view_json(view: game_pb2.GetViewResponse) -> Json:
    """A GetViewResponse's ArcmageView as every JSON door writes it (the engine's view shape)."""
    return to_json(view.arcmage)


def action_message(action: Mapping[str, Any]) -> arcmage_pb2.ArcmageAction:
    return json_format.ParseDict(dict(action), arcmage_pb2.ArcmageAction())


class Watcher:
    """A player's Watch stream, read in the background from the start of the game to its
    ``game_over`` update: every update kept, the goals its events show followed as they come."""

    def __init__(self, client: BaseClient, game_id: str) -> None:
        self.client, self.game_id = client, game_id
        self.updates: list[game_pb2.Update] = []
        self.goals = Goals()
        self.version = 0
        self._changed = asyncio.Condition()
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> list[game_pb2.Update]:
        async with contextlib.aclosing(self.client.watch(self.game_id, 0)) as stream:
            async for u in stream:
                self.updates.append(u)
                if u.kind == "event":
                    self.goals.see(u.event_kind, update_data(u))
                async with self._changed:
                    self.version = max(self.version, u.version)
                    self._changed.notify_all()
                if u.kind == "game_over":
                    break
        return self.updates

    async def reached(self, version: int) -> None:
        """Return once this player has the updates of ``version`` (fails after WAIT_S)."""
        async with asyncio.timeout(WAIT_S), self._changed:
            await self._changed.wait_for(lambda: self.version >= version or self.task.done())
        if self.task.done():
            self.task.result()  # (a failed stream raises here)

    async def finish(self) -> list[game_pb2.Update]:
        async with asyncio.timeout(WAIT_S):
            return await self.task


def update_data(u: game_pb2.Update) -> Json:
    return json_format.MessageToDict(u.data)


async def play_through(clients: list[BaseClient], game_id: str, roles: list[str],
                       max_actions: int = 3000) -> tuple[list[Watcher], int]:
    """Both seats play through the door only: the seat named in ``step.players`` fetches its view and
    acts with :func:`policy` (one of its view's ``legal`` actions) at the view's version, until the
    game is over.  Each player watches the game meanwhile; the goals the policy aims at are those the
    host's updates showed, read after the host has the updates of the last action.  Returns the
    watchers (finished) and the number of actions."""
    watchers = [Watcher(c, game_id) for c in clients]
    try:
        actions = await _drive(clients, game_id, roles, watchers[0], max_actions)
        for w in watchers:
            await w.finish()
    finally:
        for w in watchers:
            w.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await w.task
    return watchers, actions


async def _drive(clients: list[BaseClient], game_id: str, roles: list[str], host: Watcher,
                 max_actions: int) -> int:
    actions = 0
    seat = 0
    view = await clients[seat].view(game_id)
    while view.status != lobby_pb2.GAME_STATUS_OVER:
        players = list(view.step.players)
        assert players, f"no one may act in a running game: {view.step}"
        if seat not in players:
            seat = players[0]
            view = await clients[seat].view(game_id)
            continue
        v = view_json(view)
        action = policy(v, roles[seat], host.goals.reached)
        assert action, f"seat {seat} has no action in {v.get('pending')}"
        ack = await clients[seat].act(game_id, arcmage=action_message(action), version=view.version)
        actions += 1
        assert actions <= max_actions, "the game did not end"
        await host.reached(ack.version)
        view = await clients[seat].view(game_id)
    return actions
