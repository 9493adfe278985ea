"""Archipelago autopilot benchmark: how well standing orders play, and how fast.

(a) **Strength.**  Seeded 2-player games (a generated map each): one seat is played by the
    autopilot alone with aggressive standing orders and a build queue (:data:`STANDING`: the
    Shaldag first for A66's point, then cheap strong land units and Dvoras to ferry them), the other
    by ``random_orders`` (random legal orders from its view); :data:`STANDING` is what
    ``GAME.default_standing`` gives the seats a host fills with the autopilot (A4).  The autopilot
    takes seat 0 in even games and seat 1 in odd ones; each round its A74 standing actions are
    applied first, its orders are validated, and ``standing_after_round`` keeps its queue, as the
    services do.  Prints the autopilot's wins, losses and shared wins, how the games ended and the
    average scores.
    Target: ≥ 80 % wins.
(b) **Speed.**  One autopilot turn (``GAME.autopilot(view, standing)``) for a player with 40 units
    in contact with the enemy: mid-game states as in :mod:`bench.engine_bench` (40 units a player
    around its base), some enemy units moved within 2 tiles of the player's units, and standing
    orders with the aggressive posture, a full queue, trade rules and per-unit orders (hunt, patrol,
    guard, escort, move) for a third of the units.  Prints p50 and p99 per turn over all states.
    Target: < 2 ms p50.

    .venv/bin/python -m bench.autopilot_bench [--games 100] [--states 20] [--reps 50]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from typing import Any

from bench.engine_bench import mid_game_state
from engine.archipelago import GAME
from engine.archipelago.fog import update_memory, visible_tiles
from engine.archipelago.resolve import compute_control
from engine.archipelago.standing import DEFAULT_STANDING
from engine.archipelago.state import State
from engine.archipelago.units import UNIT_TYPES
from engine.archipelago.viewmap import ViewMap
from engine.errors import GameError

WIN_TARGET = 0.80
TURN_TARGET_MS = 2.0

#: what the autopilot seats of a game play with (``GAME.default_standing``)
STANDING: dict[str, Any] = DEFAULT_STANDING


def _progress(msg: str) -> None:
    sys.stderr.write(f"\r\033[K{msg}")
    sys.stderr.flush()


def play_game(seed: int, seat: int) -> tuple[Any, State]:
    """One game: ``seat`` by the autopilot with :data:`STANDING`, the other by random orders."""
    state: State = GAME.new_game({"players": 2}, seed)
    standing = GAME.check_standing(state, seat, STANDING)
    other = 1 - seat
    while GAME.outcome(state) is None:
        for action in GAME.standing_actions(GAME.view(state, seat), standing):
            try:
                state, _ = GAME.act(state, seat, action)
            except GameError:
                pass
        mine = GAME.autopilot(GAME.view(state, seat), standing)
        GAME.validate(state, seat, mine)
        theirs = GAME.random_orders(GAME.view(state, other), seed * 1000 + state.round)
        state, _ = GAME.resolve(state, {seat: mine, other: theirs})
        standing = GAME.standing_after_round(standing, mine)
    return GAME.outcome(state), state


def bench_strength(games: int) -> float:
    wins = losses = shared = 0
    reasons: dict[str, int] = {}
    rounds: list[int] = []
    mine_scores: list[int] = []
    their_scores: list[int] = []
    t0 = time.perf_counter()
    for g in range(games):
        seat = g % 2
        outcome, state = play_game(g, seat)
        if seat in outcome.winners:
            if len(outcome.winners) == 1:
                wins += 1
            else:
                shared += 1
        else:
            losses += 1
        reasons[outcome.reason] = reasons.get(outcome.reason, 0) + 1
        rounds.append(state.round)
        mine_scores.append(outcome.scores[seat])
        their_scores.append(outcome.scores[1 - seat])
        _progress(f"(a) game {g + 1}/{games}: {wins} won, {losses} lost, {shared} shared")
    _progress("")
    rate = wins / games if games else 0.0
    print(f"(a) aggressive autopilot with a build queue vs random legal orders, {games} seeded 2-player games "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"    won {wins} ({100 * rate:.0f} %), lost {losses}, shared {shared}; target ≥ {100 * WIN_TARGET:.0f} %: "
          f"{'met' if rate >= WIN_TARGET else 'MISSED'}")
    if games:
        print(f"    ended by: {', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))}; "
              f"rounds mean {statistics.mean(rounds):.1f}, median {statistics.median(rounds):.0f}")
        print(f"    mean score: autopilot {statistics.mean(mine_scores):.1f}, "
              f"random {statistics.mean(their_scores):.1f}")
    return rate


def contact_state(seed: int, player: int = 0) -> State:
    """A 40-unit mid-game state where some enemy units stand within 2 tiles of ``player``'s units."""
    s = mid_game_state(2, seed=seed)
    rnd = random.Random(seed)
    b = s.board
    taken = {u.tile for u in s.units.values() if u.carrier is None}
    mine = [u for u in s.units.values() if u.owner == player and u.carrier is None]
    foes = [u for u in s.units.values() if u.owner != player and u.carrier is None
            and u.type not in ("flag", "landmine", "seamine")]
    rnd.shuffle(foes)
    for foe in foes[:12]:
        land = foe.type != "navcommando" and UNIT_TYPES[foe.type].domain == "land"
        near = [t for u in rnd.sample(mine, len(mine)) for t in b.within(u.tile, 2)
                if t not in taken and (t in b.land) == land and (not land or b.home_owner(t) != foe.owner)]
        if near:
            taken.discard(foe.tile)
            foe.tile = near[0]
            taken.add(near[0])
    s.control = compute_control(s)
    update_memory(s, [visible_tiles(s, p) for p in range(s.players)])
    for uid in list(s.pstates[player].log)[:4]:
        s.pstates[player].revealed.add(uid)  # some enemy types are known
    return s


def bench_standing(view: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """Aggressive standing orders with per-unit orders for a third of the units."""
    vm = ViewMap(view)
    own = sorted(vm.own)
    known = sorted({e["id"] for e in view["enemies"]} | {e["id"] for e in view["enemy_log"]})
    units: list[dict[str, Any]] = []
    for uid in own:
        u = vm.own[uid]
        typ = u["type"]
        if UNIT_TYPES[typ].move == 0 or typ == "flag" or "carrier" in u or rnd.random() > 0.35:
            continue
        start = (u["tile"]["x"], u["tile"]["y"])
        reach = [t for t in vm.reachable(typ, start, 8) if t != start]
        kind = rnd.choice(["hunt", "patrol", "guard", "escort", "move"])
        if kind in ("patrol", "move", "guard") and len(reach) < 2:
            kind = "hunt"
        e: dict[str, Any] = {"unit": uid, "order": kind}
        if kind == "hunt" and known:
            e["target"] = rnd.choice(known)
        elif kind in ("move", "guard"):
            t = rnd.choice(reach)
            e["tile"] = {"x": t[0], "y": t[1]}
        elif kind == "patrol":
            e["waypoints"] = [{"x": x, "y": y} for x, y in [start, *rnd.sample(reach, 2)]]
        elif kind == "escort":
            e["target"] = rnd.choice([x for x in own if x != uid])
        units.append(e)
    return dict(STANDING, units=units, build_queue=[{"type": "rank5"}] * 20)


def bench_speed(states: int, reps: int) -> float:
    times: list[float] = []
    entries = 0
    for k in range(states):
        s = contact_state(100 + k)
        view = GAME.view(s, 0)
        standing = GAME.check_standing(s, 0, bench_standing(view, random.Random(k)))
        orders = GAME.autopilot(view, standing)
        GAME.validate(s, 0, orders)
        entries += len(orders["units"])
        for _ in range(reps):
            t0 = time.perf_counter()
            GAME.autopilot(view, standing)
            times.append(time.perf_counter() - t0)
        _progress(f"(b) state {k + 1}/{states}")
    _progress("")
    times.sort()
    p50 = times[len(times) // 2] * 1000
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))] * 1000
    print(f"(b) one autopilot turn, 40 units in contact, aggressive + per-unit orders + queue, "
          f"{states} states × {reps} runs ({entries / max(1, states):.1f} unit orders a turn)")
    print(f"    p50 {p50:.3f} ms, p99 {p99:.3f} ms; target p50 < {TURN_TARGET_MS} ms: "
          f"{'met' if p50 < TURN_TARGET_MS else 'MISSED'}")
    return p50


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=100, help="games for (a) (default 100)")
    ap.add_argument("--states", type=int, default=20, help="40-unit states for (b) (default 20)")
    ap.add_argument("--reps", type=int, default=50, help="timed turns per state for (b) (default 50)")
    args = ap.parse_args(argv)
    bench_strength(args.games)
    bench_speed(args.states, args.reps)


if __name__ == "__main__":
    main()
