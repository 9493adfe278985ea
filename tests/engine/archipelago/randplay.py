"""Seeded random Archipelago games with random LEGAL orders, and the checks the conformance suite,
the golden playthroughs and the bench share.

Orders and immediate operations are generated from each player's own view only (what a client or
an agent has), never from the full state.  The orders come from the engine's own generator,
:func:`engine.archipelago.randplay.random_orders` (re-exported here: moves, actions, builds, the
bonus choice, deployment in round 0); the bank / offer / accept / chat operations during planning
are generated here and run through ``GAME.act``, whose events are checked against their audience.

A played game is recorded as plain data (seed, players, max_rounds, and per round the immediate
operations in the order they ran plus each seat's orders), so it replays exactly (:func:`replay`).

The checks compare the state and every view against an *independent* statement of the rules
(A10, A24, A34, A41, A61–A64, A80–A85) written here, not against the engine's own helpers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.archipelago import GAME
from engine.archipelago.randplay import random_orders
from engine.archipelago.state import State, Unit
from engine.archipelago.units import RESOURCES, UNIT_TYPES
from engine.archipelago.view import view as make_view
from engine.base import Event, canonical_json, state_hash
from engine.errors import GameError

__all__ = ["ConformanceError", "Played", "check_event_ids", "check_state", "check_view", "new_state",
           "play", "random_ops", "random_orders", "replay", "replay_views"]

Tile = tuple[int, int]
MAX_CARGO = max(t.capacity for t in UNIT_TYPES.values())
OUTPOST_SIGHT, BASE_SIGHT = 1, 2


class ConformanceError(AssertionError):
    """A broken invariant, a leaking view or an illegal generated order (names game and round)."""


def _fail(ctx: str, msg: str) -> None:
    raise ConformanceError(f"{ctx}: {msg}")


def _tile(d: Mapping[str, Any]) -> Tile:
    return (int(d["x"]), int(d["y"]))


def _td(t: Tile) -> dict[str, int]:
    return {"x": t[0], "y": t[1]}


# ================================================================================================
# Immediate operations (bank, offers, accept, chat) during planning
# ================================================================================================

#: recorded operation -> the fields of its ``GAME.act`` action
_OP_FIELDS = {"bank": ("give", "get", "times"), "offer": ("to", "give", "get"), "accept": ("offer",),
              "chat": ("text", "to")}


def _action(op: Mapping[str, Any]) -> dict[str, Any]:
    """The ``GAME.act`` action of a recorded operation (``{"op": "bank", "player": 0, ...}``)."""
    kind = op["op"]
    if kind not in _OP_FIELDS:
        raise ValueError(f"unknown op {kind!r}")
    return {kind: {k: op[k] for k in _OP_FIELDS[kind] if k in op}}


def _apply_op(state: State, op: Mapping[str, Any]) -> State:
    new, _ = GAME.act(state, int(op["player"]), _action(op))
    return new


def check_act_events(state: State, op: Mapping[str, Any], events: list[Event], ctx: str) -> None:
    """A52/A53/A84 restated: who may learn of an immediate operation.  A bank trade reaches only its
    player; an offer its maker and addressee (everyone when it is to all); a trade both parties;
    the others learn that an offer to all closed, never who took it; chat goes where it is sent."""
    p = int(op["player"])
    everyone = frozenset(range(state.players))
    kind = op["op"]
    if kind == "accept":
        o = next(x for x in state.offers if x["id"] == op["offer"])
        parties = frozenset({o["from"], p})
        want: list[tuple[str, frozenset[int]]] = [("trade", parties)]
        if "to" not in o and everyone - parties:
            want.append(("offer_closed", everyone - parties))
    elif kind == "bank":
        want = [("bank", frozenset({p}))]
    else:  # offer, chat
        want = [(kind, everyone if op.get("to") is None else frozenset({p, op["to"]}))]
    got = [(e.kind, everyone if e.audience is None else e.audience) for e in events]
    if got != want:
        _fail(ctx, f"operation {op}: events {got}, want {want}")
    for e in events:
        strings: set[str] = set()
        _walk(e.data, ctx, strings)
        if e.kind == "offer_closed" and set(e.data) != {"offer"}:
            _fail(ctx, f"offer_closed tells more than the offer id: {e.data}")
        if "stock" in json.dumps(e.data):
            _fail(ctx, f"event {e.kind} shows a stock (A84): {e.data}")


def random_ops(state: State, rnd: random.Random, ctx: str, check: bool = True) -> tuple[State, list[dict[str, Any]]]:
    """A few random planning operations for every seat, generated from each seat's view.

    Legal ones must succeed; an accept may be refused ("offer no longer valid", A53) and a
    deliberately bad request must be refused — a refusal must leave the state unchanged."""
    ops: list[dict[str, Any]] = []
    for p in range(state.players):
        v = make_view(state, p)
        stock = v["stock"]
        ports = {pt["resource"] for pt in v["ports"] if _td(_tile(pt["tile"])) in v["control"]}
        r = rnd.random()
        cands: list[tuple[dict[str, Any], bool]] = []  # (op, must succeed)
        if r < 0.35:
            give = max(RESOURCES, key=lambda x: (stock[x], x)) if rnd.random() < 0.5 else rnd.choice(RESOURCES)
            rate = 2 if give in ports else 4
            if stock[give] >= rate:
                # fuel is rare on the map: ask for it half the time (fighters, spies, commandos)
                get = "fuel" if give != "fuel" and rnd.random() < 0.5 else rnd.choice(
                    [x for x in RESOURCES if x != give])
                cands.append(({"op": "bank", "player": p, "give": give, "get": get, "times": 1}, True))
        elif r < 0.48:
            held = [x for x in RESOURCES if stock[x] > 0]
            if held:
                give = rnd.choice(held)
                get = rnd.choice([x for x in RESOURCES if x != give])
                others = [q for q in range(state.players) if q != p]
                to = rnd.choice([*others, None])
                sent = sum(1 for o in v["offers"] if o["from_seat"] == p)
                op: dict[str, Any] = {"op": "offer", "player": p, "give": {give: 1}, "get": {get: 1}}
                if to is not None:
                    op["to"] = to
                cands.append((op, sent < 3 and state.pstates[p].offers_made < 3))
        elif r < 0.60:
            mine = [o for o in v["offers"] if o["from_seat"] != p]
            if mine:
                o = rnd.choice(mine)
                cands.append(({"op": "accept", "player": p, "offer": o["id"]}, False))
        elif r < 0.66:
            to = rnd.choice([None, *[q for q in range(state.players) if q != p]])
            op = {"op": "chat", "player": p, "text": f"hello {rnd.randrange(1000)}"}
            if to is not None:
                op["to"] = to
            cands.append((op, state.pstates[p].chats < 10))
        elif r < 0.71:  # deliberately refused: the bank wants more than anyone holds
            cands.append(({"op": "bank", "player": p, "give": "wood", "get": "iron", "times": 10_000}, False))
        for op, must in cands:
            before = state_hash(state) if check and not must else ""
            try:
                new, events = GAME.act(state, p, _action(op))
            except GameError as e:
                if must:
                    _fail(ctx, f"legal operation {op} refused: {e}")
                if check and not must and state_hash(state) != before:
                    _fail(ctx, f"refused operation {op} changed the state")
                op = {**op, "refused": True}
            else:
                if op["op"] == "bank" and op["times"] == 10_000:
                    _fail(ctx, f"impossible bank trade accepted: {op}")
                if check:
                    check_act_events(state, op, events, ctx)
                state = new
            ops.append(op)
    return state, ops


# ================================================================================================
# Independent checks
# ================================================================================================

def oracle_sight(state: State, p: int) -> tuple[set[Tile], set[Tile]]:
    """A80 restated: tiles in sight; tiles from which a submarine is seen (next to a sighted unit,
    an outpost or the base)."""
    b = state.board
    src: list[tuple[Tile, int]] = []
    for u in state.units.values():
        if u.owner == p and u.carrier is None:
            src.append((u.tile, UNIT_TYPES[u.type].sight))
    src += [(t, OUTPOST_SIGHT) for t, o in state.outposts.items() if o == p]
    src.append((b.bases[p], BASE_SIGHT))
    vis = {(x, y) for (cx, cy), r in src for x in range(cx - r, cx + r + 1) for y in range(cy - r, cy + r + 1)
           if abs(x - cx) + abs(y - cy) <= r and 0 <= x < b.width and 0 <= y < b.height}
    watch = {(cx + dx, cy + dy) for (cx, cy), r in src if r > 0
             for dx, dy in ((0, 0), (0, -1), (1, 0), (0, 1), (-1, 0))}
    return vis, watch


def _enemy_seen(u: Unit, vis: set[Tile], watch: set[Tile]) -> bool:
    if u.carrier is not None or u.tile not in vis:
        return False
    return u.type != "submarine" or u.tile in watch


_SNAKE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def _walk(obj: Any, ctx: str, strings: set[str]) -> None:
    """Collect every string value; fail on anything that is not plain JSON (dict with str keys,
    list, str, int, bool), on ``None`` values and on keys that are not snake_case."""
    stack = [obj]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is str:
            strings.add(x)
        elif tx is dict:
            for k, val in x.items():
                if val is None:
                    _fail(ctx, f"key {k!r} is None (unset keys must be omitted)")
                if type(k) is not str or not _SNAKE.issuperset(k):
                    _fail(ctx, f"key {k!r} is not snake_case")
                stack.append(val)
        elif tx is list:
            stack.extend(x)
        elif tx is not int and tx is not bool:
            _fail(ctx, f"{x!r} ({tx.__name__}) is not plain JSON")


def check_final_view(state: State, p: int, v: Mapping[str, Any], ctx: str) -> None:
    """A67, the game over: every tile explored and in sight, every unit on the board shown with its
    type (cargo inside its carrier), nothing missing."""
    b = state.board
    every = {(x, y) for y in range(b.height) for x in range(b.width)}
    if {_tile(t) for t in v["visible"]} != every:
        _fail(ctx, "the final view does not show every tile")
    for y, row in enumerate(v["rows"]):
        for x, c in enumerate(row):
            if c != ("#" if (x, y) in b.land else "."):
                _fail(ctx, f"the final view's terrain at ({x}, {y}) is {c!r}")
    shown = {e["id"]: e for e in v["enemies"]}
    for uid, u in state.units.items():
        if u.owner == p:
            continue
        if u.carrier is None:
            if uid not in shown or shown[uid].get("type") != u.type or _tile(shown[uid]["tile"]) != u.tile:
                _fail(ctx, f"the final view does not show enemy unit {uid} with its type and tile")
        elif uid in shown:
            _fail(ctx, f"the final view shows cargo {uid} outside its carrier")


def check_view(state: State, p: int, v: Mapping[str, Any], events: list[Event] | None, ctx: str) -> None:
    """The view holds what ``p`` may know (A80–A85) and nothing else; once the game is over, the
    whole map (:func:`check_final_view`)."""
    ctx = f"{ctx} player {p}"
    if state.outcome is not None:
        check_final_view(state, p, v, ctx)
        return
    b = state.board
    ps = state.pstates[p]
    vis, watch = oracle_sight(state, p)
    strings: set[str] = set()
    _walk({k: val for k, val in v.items() if k not in ("rows", "events")}, ctx, strings)
    _walk(v["events"], ctx, set())
    if {_tile(t) for t in v["visible"]} != vis:
        _fail(ctx, f"visible tiles differ from A80 sight: extra {sorted({_tile(t) for t in v['visible']} - vis)[:5]}"
                   f" missing {sorted(vis - {_tile(t) for t in v['visible']})[:5]}")
    # A81: explored terrain only
    for y, row in enumerate(v["rows"]):
        for x, c in enumerate(row):
            explored = bool(ps.explored >> (y * b.width + x) & 1)
            want = ("#" if (x, y) in b.land else ".") if explored else "?"
            if c != want:
                _fail(ctx, f"rows[{y}][{x}] is {c!r}, expected {want!r}")
    for key in ("resource_tiles", "ports"):
        for feat in v[key]:
            t = _tile(feat["tile"])
            if not ps.explored >> (t[1] * b.width + t[0]) & 1:
                _fail(ctx, f"{key} shows unexplored tile {t}")
    for isl in v["islands"]:
        for t in isl["tiles"]:
            if not ps.explored >> (t["y"] * b.width + t["x"]) & 1:
                _fail(ctx, f"island {isl['id']} shows unexplored tile {t}")
    # A82 own units in full (an own flag borne by an enemy only while the bearer is in sight)
    want_own: dict[str, dict[str, Any]] = {}
    for u in state.units.values():
        if u.owner != p:
            continue
        if u.type == "flag" and u.carrier is not None:
            bearer = state.units[u.carrier]
            if bearer.owner != p and not _enemy_seen(bearer, vis, watch):
                continue
        want_own[u.id] = u.to_dict()
    got_own = {u["id"]: u for u in v["units"]}
    if got_own != want_own:
        diff = sorted(set(got_own) ^ set(want_own)) or sorted(k for k in got_own if got_own[k] != want_own.get(k))
        _fail(ctx, f"own units differ from the state: {diff[:5]}")
    # A82 enemies in sight: owner + shown domain (+ type once revealed)
    want_en: dict[str, dict[str, Any]] = {}
    for u in state.units.values():
        if u.owner == p or not _enemy_seen(u, vis, watch):
            continue
        dom = "air" if UNIT_TYPES[u.type].domain == "air" else ("land" if u.tile in b.land else "sea")
        e: dict[str, Any] = {"id": u.id, "owner": u.owner, "domain": dom, "tile": _td(u.tile)}
        if u.id in ps.revealed:
            e["type"] = u.type
        want_en[u.id] = e
    got_en = {e["id"]: e for e in v["enemies"]}
    if got_en != want_en:
        bad = sorted(set(got_en) ^ set(want_en)) or sorted(k for k in got_en if got_en[k] != want_en[k])
        _fail(ctx, f"enemies differ from what A80/A82 allow: {bad[:5]} "
                   f"got {[got_en.get(k) for k in bad[:2]]} want {[want_en.get(k) for k in bad[:2]]}")
    # A83 enemy log: memory only
    want_log = []
    for uid in sorted(ps.log):
        if uid in want_en:
            continue
        t, rnd_seen, typ, owner = ps.log[uid]
        ent: dict[str, Any] = {"id": uid, "owner": owner, "tile": _td(t), "round": rnd_seen,
                               "rounds_ago": state.round - rnd_seen}
        if typ is not None:
            ent["type"] = typ
        want_log.append(ent)
    if v["enemy_log"] != want_log:
        _fail(ctx, "enemy_log differs from the player's memory")
    # outposts: own, or on tiles in sight; control: own
    for o in v["outposts"]:
        t = _tile(o["tile"])
        if state.outposts.get(t) != o["owner"] or (o["owner"] != p and t not in vis):
            _fail(ctx, f"outpost {o} may not be known")
    for t in v["control"]:
        if state.control.get(_tile(t)) != p:
            _fail(ctx, f"control shows {t} not controlled by the player")
    # A84: public figures only
    for s in v["seats"]:
        if set(s) != {"seat", "score", "resource_total"}:
            _fail(ctx, f"seat entry {s} carries more than A84 allows")
        q = state.pstates[s["seat"]]
        if s["score"] != q.score or s["resource_total"] != q.opening_total:
            _fail(ctx, f"seat {s['seat']} figures differ")
    if v["stock"] != ps.stock:
        _fail(ctx, "own stock differs")
    for o in v["offers"]:
        if o["from_seat"] != p and o.get("to_seat", p) != p:
            _fail(ctx, f"offer {o['id']} is not addressed to the player")
    # no enemy unit id anywhere outside what the player legitimately knows
    allowed = set(want_en) | set(ps.log)
    for u in state.units.values():
        if u.owner == p and u.flag is not None:
            allowed.add(u.flag)
        if u.owner == p and u.type == "flag" and u.carrier is not None and u.id in want_own:
            allowed.add(u.carrier)
    enemy_ids = {u.id for u in state.units.values() if u.owner != p}
    leaked = (strings & enemy_ids) - allowed
    if leaked:
        _fail(ctx, f"view names hidden enemy units {sorted(leaked)[:5]}")
    # A85: events name an enemy's type only once the player knows it
    for ev in v["events"]:
        for eu in ev.get("units") or ():
            uid = eu.get("id")
            if ("type" in eu and eu.get("owner") != p and uid in state.units
                    and uid not in ps.revealed and eu.get("type") != "flag"):
                _fail(ctx, f"event {ev['kind']} shows the type of unrevealed enemy {uid}")
    if events is not None:
        want_n = sum(1 for e in events if e.visible_to(p))
        if len(v["events"]) != want_n:
            _fail(ctx, f"{len(v['events'])} events in the view, {want_n} addressed to the player")


def check_event_ids(prev: State, state: State, p: int, events: list[dict[str, Any]], raw: list[Event],
                    ctx: str) -> None:
    """A85 (with A31): an event reaches a player that took part in it (one of its units, or the
    player itself, is named) or that saw its tile at the start or at the end of the round, unless
    it is public; a watcher's copy lists units without their types (checked by
    :func:`check_view`).  Any other field (``by``, ``carrier``, ``ship``, ...) names an enemy unit
    only if the player knew it: in sight at the start of the round, in its memory, or revealed."""
    enemy_ids = {u.id for st in (prev, state) for u in st.units.values() if u.owner != p}
    own_ids = {u.id for st in (prev, state) for u in st.units.values() if u.owner == p}
    known = set(prev.pstates[p].log) | set(state.pstates[p].log) | prev.pstates[p].revealed \
        | state.pstates[p].revealed
    vis0, watch0 = oracle_sight(prev, p)
    vis1, _ = oracle_sight(state, p)
    known |= {u.id for u in prev.units.values() if u.owner != p and _enemy_seen(u, vis0, watch0)}
    mine = [e for e in raw if e.visible_to(p)]
    if len(mine) != len(events):
        _fail(ctx, f"{len(events)} events in the view, {len(mine)} addressed to the player")
    for ev, e in zip(events, mine, strict=True):
        names: set[str] = set()
        _walk(ev, ctx, names)
        listed = [eu for eu in ev.get("units") or () if isinstance(eu, dict)]
        took_part = (any(eu.get("owner") == p for eu in listed) or bool(names & own_ids)
                     or p in (ev.get("owner"), ev.get("from"), ev.get("player")))
        tile = ev.get("tile")
        saw = tile is not None and (_tile(tile) in vis0 or _tile(tile) in vis1)
        if e.audience is not None and tile is not None and not took_part and not saw:
            _fail(ctx, f"event {ev['kind']} at {tile} reached a player that neither took part nor saw it")
        if not names & enemy_ids:
            continue
        # the units listed in an event the player took part in (or saw) are known to it
        known_here = known | {str(eu.get("id")) for eu in listed} if (took_part or saw) else known
        for key, val in ev.items():
            names = set()
            _walk(val, ctx, names)
            for uid in sorted((names & enemy_ids) - known_here):
                _fail(ctx, f"event {ev['kind']} names hidden enemy unit {uid} (field {key!r}): {ev}")


def check_state(prev: State | None, state: State, ctx: str) -> None:
    """Invariants after a round: A10, A24/A35 cargo, A34 landing, A41 stocks, A61–A64 flags, scores."""
    b = state.board
    units = state.units
    # serialisation round trip (exact, through JSON)
    d = state.to_dict()
    raw = canonical_json(d)
    back = GAME.state_from_dict(json.loads(raw))
    if back.to_dict() != d or state_hash(back) != state_hash(state):
        _fail(ctx, "to_dict/from_dict round trip is not exact")
    standing: dict[Tile, str] = {}
    flags_of = [0] * state.players
    for u in units.values():
        ut = UNIT_TYPES[u.type]
        if not 0 <= u.owner < state.players:
            _fail(ctx, f"unit {u.id} has owner {u.owner}")
        if not b.in_bounds(u.tile):
            _fail(ctx, f"unit {u.id} off the board at {u.tile}")
        if u.type == "flag":
            flags_of[u.owner] += 1
        if u.carrier is None:
            if u.tile in standing:  # A10
                _fail(ctx, f"two units on {u.tile}: {standing[u.tile]} and {u.id}")
            standing[u.tile] = u.id
            if ut.domain == "sea" and u.tile in b.land:
                _fail(ctx, f"ship {u.id} ({u.type}) on land {u.tile}")
            if ut.domain == "land" and u.type != "navcommando" and u.tile not in b.land:
                _fail(ctx, f"land unit {u.id} ({u.type}) at sea {u.tile}")
        else:
            c = units.get(u.carrier)
            if c is None:
                _fail(ctx, f"unit {u.id} carried by missing {u.carrier}")
                return
            if u.type == "flag":  # A61: borne by an enemy land unit
                if c.flag != u.id or c.owner == u.owner or UNIT_TYPES[c.type].domain != "land":
                    _fail(ctx, f"flag {u.id} borne by {c.id} inconsistently")
            elif u.id not in c.cargo:
                _fail(ctx, f"cargo {u.id} not listed by its carrier {c.id}")
            if u.tile != c.tile:
                _fail(ctx, f"carried {u.id} at {u.tile}, its carrier at {c.tile}")
        if u.cargo:
            cap = MAX_CARGO if u.type == "raft" else ut.capacity  # a raft keeps a sunk ship's cargo
            if len(u.cargo) > cap:
                _fail(ctx, f"{u.id} ({u.type}) carries {len(u.cargo)} > {cap}")
            for cid in u.cargo:
                if cid not in units or units[cid].carrier != u.id:
                    _fail(ctx, f"{u.id} lists cargo {cid} that is not aboard")
                elif UNIT_TYPES[units[cid].type].domain != "land":
                    _fail(ctx, f"{u.id} carries non-land unit {cid}")
        if u.flag is not None:
            f = units.get(u.flag)
            if f is None or f.carrier != u.id or f.type != "flag":
                _fail(ctx, f"{u.id} bears {u.flag} inconsistently")
        if u.type == "flag" and u.carrier is None and u.tile not in b.land:
            _fail(ctx, f"flag {u.id} lies at sea")
        if ut.domain == "air" and prev is not None and state.round > 1:
            # A34: after movement an aircraft stands on land its owner controlled at round start
            # (an aircraft built this round appears on its home island, A42)
            if u.tile not in b.land or (u.id in prev.units and prev.control.get(u.tile) != u.owner):
                _fail(ctx, f"aircraft {u.id} at {u.tile} not on land its owner controlled")
    if any(n > 1 for n in flags_of):
        _fail(ctx, f"a player has several flags: {flags_of}")
    for p, ps in enumerate(state.pstates):
        if any(ps.stock[r] < 0 for r in RESOURCES):
            _fail(ctx, f"player {p} stock below 0: {ps.stock}")
        if ps.score < 0:
            _fail(ctx, f"player {p} score {ps.score}")
    if prev is not None and state.round != prev.round + 1:
        _fail(ctx, f"round went {prev.round} -> {state.round}")
    if prev is not None and state.version != prev.version + 1:
        _fail(ctx, f"version went {prev.version} -> {state.version}")


# ================================================================================================
# Playing and replaying
# ================================================================================================

@dataclass
class Played:
    seed: int
    players: int
    max_rounds: int
    rounds: list[dict[str, Any]]  # {"ops": [...], "orders": {"0": {...}, ...}}
    hashes: list[str]             # state hash after each round
    final: State
    views: list[list[dict[str, Any]]] = field(default_factory=list)  # per round, per seat (optional)


def new_state(seed: int, players: int, max_rounds: int) -> State:
    state: State = GAME.new_game({"players": players, "max_rounds": max_rounds}, seed)
    return state


def _rnd(seed: int, rnd_no: int, salt: int) -> random.Random:
    return random.Random((seed * 1_000_003 + rnd_no) * 17 + salt)


def play(seed: int, players: int, *, max_rounds: int = 60, checks: bool = True, record_views: bool = False,
         bad_orders: bool = True) -> Played:
    """Play a seeded random game to its end (or ``max_rounds``), checking every round."""
    state = new_state(seed, players, max_rounds)
    rounds: list[dict[str, Any]] = []
    hashes: list[str] = []
    views: list[list[dict[str, Any]]] = []
    events: list[Event] | None = None
    if checks:
        check_state(None, state, f"game {seed}/{players}p start")
    while GAME.outcome(state) is None and state.round <= max_rounds:
        ctx = f"game seed={seed} players={players} round {state.round}"
        state, ops = random_ops(state, _rnd(seed, state.round, 1), ctx, checks) if state.round else (state, [])
        orders: dict[int, dict[str, Any]] = {}
        for p in GAME.expected_players(state):
            v = make_view(state, p)
            rnd = _rnd(seed, state.round, 100 + p)
            o = random_orders(v, rnd)
            try:
                GAME.validate(state, p, o)
            except GameError as e:
                _fail(ctx, f"player {p}: generated orders refused: {e}\n{json.dumps(o)}")
            if bad_orders and checks and rnd.random() < 0.08:
                _check_refused(state, p, _mutate(o, rnd), ctx)
            orders[p] = o
        prev = state
        state, events = GAME.resolve(state, orders)
        rounds.append({"ops": ops, "orders": {str(p): o for p, o in orders.items()}})
        hashes.append(state_hash(state))
        if checks:
            check_state(prev, state, f"{ctx} (after)")
        if checks or record_views:
            vs = [make_view(state, p, events) for p in range(state.players)]
            if checks:
                for p, v in enumerate(vs):
                    check_view(state, p, v, events, f"{ctx} (after)")
                    check_event_ids(prev, state, p, v["events"], events, f"{ctx} (after) player {p}")
            if record_views:
                views.append(vs)
            if checks and state_hash(state) != hashes[-1]:
                _fail(ctx, "computing the views changed the state")
    return Played(seed, players, max_rounds, rounds, hashes, state, views)


def _mutate(o: Mapping[str, Any], rnd: random.Random) -> dict[str, Any]:
    """An order set made invalid on purpose."""
    bad = json.loads(json.dumps(o))
    choice = rnd.randrange(4)
    if choice == 0:
        bad.setdefault("units", []).append({"unit": "no-such-unit", "path": ["N"]})
    elif choice == 1:
        bad["bonus"] = "gold"
    elif choice == 2:
        bad.setdefault("builds", []).append({"type": "flag"})
    else:
        bad["surprise"] = 1
    return bad  # type: ignore[no-any-return]


def _check_refused(state: State, p: int, o: Mapping[str, Any], ctx: str) -> None:
    before = state_hash(state)
    try:
        GAME.validate(state, p, o)
    except GameError:
        pass
    else:
        _fail(ctx, f"player {p}: invalid orders accepted: {json.dumps(o)}")
    if state_hash(state) != before:
        _fail(ctx, f"player {p}: refused orders changed the state")


def _replayed(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]
              ) -> Iterator[tuple[State, list[Event]]]:
    """Replay recorded operations and orders from the seed: the state and events of each round."""
    state = new_state(seed, players, max_rounds)
    for rd in rounds:
        for op in rd["ops"]:
            try:
                state = _apply_op(state, op)
            except GameError:
                if not op.get("refused"):
                    raise
        state, events = GAME.resolve(state, {int(p): o for p, o in rd["orders"].items()})
        yield state, events


def replay(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]) -> list[str]:
    """The state hash after each replayed round."""
    return [state_hash(state) for state, _ in _replayed(seed, players, max_rounds, rounds)]


def replay_views(seed: int, players: int, max_rounds: int, rounds: list[dict[str, Any]]
                 ) -> list[list[dict[str, Any]]]:
    """Every seat's view after each replayed round (for the golden files)."""
    return [[make_view(state, p, events) for p in range(players)]
            for state, events in _replayed(seed, players, max_rounds, rounds)]
