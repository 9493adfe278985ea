"""Arcmage benchmark: autopilot strength and engine speed (spec arcmage.md, M53).

(a) **Strength.**  For each built-in deck: 100 seeded 2-player games, the autopilot with that deck
    against the random legal player (``GAME.random_action``) with the other deck; the autopilot
    takes seat 0 in even games and seat 1 in odd ones.  Target: >= 80 % wins.
(b) **Decision.**  One ``GAME.autopilot_action(view)`` over the decisions of autopilot-vs-autopilot
    games (windows included), p50 and p99.  Target: < 2 ms p50.
(c) **Game.**  A whole 2-player game, autopilot on both sides: the engine's time (``step`` and
    ``apply_action``; the autopilot's own time is (b)), p50 over the games.  Target: < 100 ms p50.
(d) **State size.**  The largest canonical JSON of a hosted game's state (``to_dict``) seen in
    those games.  Target: < 50 KB.

Times are CPU time of this process (``time.process_time``), so other load on the machine counts
less.  ``.venv/bin/python -m bench.arcmage_bench [--games 100] [--speed-games 30]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from engine.arcmage import GAME
from engine.base import canonical_json

DECKS = ("Brothers in Arms", "Gaian love for life")
WIN_TARGET = 0.80
DECISION_TARGET_MS = 2.0
GAME_TARGET_MS = 100.0
SIZE_TARGET_KB = 50.0
MAX_ACTIONS = 5000


def _progress(msg: str) -> None:
    sys.stderr.write(f"\r\033[K{msg}")
    sys.stderr.flush()


def strength(deck: str, games: int) -> dict[str, Any]:
    other = DECKS[1 - DECKS.index(deck)]
    wins = losses = draws = 0
    for i in range(games):
        auto = i % 2
        decks = [deck, other] if auto == 0 else [other, deck]
        state = GAME.new_game({"players": 2, "decks": decks}, 50_000 + i)
        n = 0
        while GAME.outcome(state) is None and n < MAX_ACTIONS:
            p = GAME.step(state).players[0]
            view = GAME.view(state, p)
            a = GAME.autopilot_action(view) if p == auto else GAME.random_action(view, i * 100_003 + n)
            state, _ = GAME.apply_action(state, p, a)
            n += 1
        o = GAME.outcome(state)
        if o is None or o.draw:
            draws += 1
        elif o.winners == (auto,):
            wins += 1
        else:
            losses += 1
        _progress(f"strength {deck}: game {i + 1}/{games}  wins {wins}  losses {losses}  draws {draws}")
    _progress("")
    return {"deck": deck, "games": games, "wins": wins, "losses": losses, "draws": draws,
            "win_rate": wins / games if games else 0.0}


def speed(games: int) -> dict[str, Any]:
    decisions: list[float] = []
    engine: list[float] = []
    sizes: list[int] = []
    for i in range(games):
        decks = [DECKS[i % 2], DECKS[(i + 1) % 2]]
        state = GAME.new_game({"players": 2, "decks": decks}, 90_000 + i)
        eng = 0.0
        n = 0
        while GAME.outcome(state) is None and n < MAX_ACTIONS:
            t0 = time.process_time()
            p = GAME.step(state).players[0]
            t1 = time.process_time()
            view = GAME.view(state, p)
            t2 = time.process_time()
            a = GAME.autopilot_action(view)
            t3 = time.process_time()
            state, _ = GAME.apply_action(state, p, a)
            t4 = time.process_time()
            eng += (t1 - t0) + (t4 - t3)
            decisions.append((t3 - t2) * 1000)
            n += 1
            if n % 25 == 0:
                sizes.append(len(canonical_json(state.to_dict())))
        sizes.append(len(canonical_json(state.to_dict())))
        engine.append(eng * 1000)
        _progress(f"speed: game {i + 1}/{games}  ({n} actions, engine {eng * 1000:.1f} ms)")
    _progress("")
    decisions.sort()
    return {"decision_p50_ms": statistics.median(decisions),
            "decision_p99_ms": decisions[int(len(decisions) * 0.99)],
            "game_p50_ms": statistics.median(engine), "state_max_kb": max(sizes) / 1024,
            "decisions": len(decisions), "games": games}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100, help="strength games per deck")
    ap.add_argument("--speed-games", type=int, default=30, help="autopilot-vs-autopilot games for speed")
    args = ap.parse_args(argv)
    ok = True
    for deck in DECKS:
        r = strength(deck, args.games)
        good = r["win_rate"] >= WIN_TARGET
        ok &= good
        print(f"autopilot ({deck}) vs random: {r['wins']}/{r['games']} wins ({r['win_rate']:.0%}), "
              f"{r['losses']} losses, {r['draws']} draws  [target >= {WIN_TARGET:.0%}: {'ok' if good else 'MISS'}]")
    s = speed(args.speed_games)
    checks = [
        ("autopilot decision p50", s["decision_p50_ms"], DECISION_TARGET_MS, "ms"),
        ("2-player game, engine time p50", s["game_p50_ms"], GAME_TARGET_MS, "ms"),
        ("hosted state size, max", s["state_max_kb"], SIZE_TARGET_KB, "KB"),
    ]
    print(f"autopilot decision p99: {s['decision_p99_ms']:.3f} ms over {s['decisions']} decisions")
    for name, value, target, unit in checks:
        good = value < target
        ok &= good
        print(f"{name}: {value:.3f} {unit}  [target < {target:g} {unit}: {'ok' if good else 'MISS'}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
