#!/usr/bin/env python3
"""Regenerate the Archipelago golden playthroughs (tests/engine/archipelago/golden/playthroughs/).

Each file records one seeded random game: seed, players, max_rounds, and per round the immediate
operations (bank / offer / accept / chat, in the order they ran) and every seat's orders; then
every seat's view (``engine.archipelago.view.view`` with the round's events) after each round.
``tests/engine/archipelago/test_golden.py`` replays the recorded orders and diffs the views.

Run after an intended change of the rules or of the view, then review the diff::

    .venv/bin/python -m tests.engine.archipelago.regen_golden            # rewrite every file
    .venv/bin/python -m tests.engine.archipelago.regen_golden --check    # exit 1 if a file would change

It lives in the tests' tree: it records games with the conformance suite's checks
(``tests/engine/archipelago/randplay.py``), which the project itself never imports.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tests.engine.archipelago.randplay import play, replay_views

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "engine" / "archipelago" / "golden" / "playthroughs"

#: (name, seed, players, max_rounds): short games whose seeds were picked (among 1000..1039) for
#: the variety of their events: fights, boardings, rafts, crashes, bonuses within the round cap
GAMES: list[tuple[str, int, int, int]] = [
    ("two_players", 1000, 2, 12),
    ("three_players", 1009, 3, 10),
    ("five_players", 1004, 5, 8),
]


def record(seed: int, players: int, max_rounds: int) -> dict[str, Any]:
    g = play(seed, players, max_rounds=max_rounds, checks=True)
    views = replay_views(seed, players, max_rounds, g.rounds)
    return {"seed": seed, "players": players, "max_rounds": max_rounds,
            "rounds": [{"round": i, **rd, "views": views[i]} for i, rd in enumerate(g.rounds)]}


def dump(data: dict[str, Any]) -> str:
    """One JSON document; each round's orders and each view on its own line (readable diffs)."""
    head = {k: data[k] for k in ("seed", "players", "max_rounds")}
    lines = ["{", *[f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()], '  "rounds": [']
    for i, rd in enumerate(data["rounds"]):
        lines.append("    {")
        lines.append(f'      "round": {rd["round"]},')
        lines.append(f'      "ops": {json.dumps(rd["ops"], sort_keys=True)},')
        lines.append(f'      "orders": {json.dumps(rd["orders"], sort_keys=True)},')
        lines.append('      "views": [')
        vs = rd["views"]
        for j, v in enumerate(vs):
            lines.append(f"        {json.dumps(v, sort_keys=True)}{',' if j < len(vs) - 1 else ''}")
        lines.append("      ]")
        lines.append("    }" + ("," if i < len(data["rounds"]) - 1 else ""))
    lines += ["  ]", "}", ""]
    text = "\n".join(lines)
    assert json.loads(text) == json.loads(json.dumps(data))
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if a file would change")
    args = ap.parse_args()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    changed = 0
    for name, seed, players, max_rounds in GAMES:
        text = dump(record(seed, players, max_rounds))
        path = GOLDEN / f"{name}.json"
        old = path.read_text() if path.exists() else None
        if old != text:
            changed += 1
            print(f"{'would change' if args.check else 'wrote'} {path.relative_to(ROOT)}")
            if not args.check:
                path.write_text(text)
        else:
            print(f"unchanged {path.relative_to(ROOT)}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
