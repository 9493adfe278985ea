"""Golden playthroughs: recorded games replayed from their seed and orders; every seat's view after
every round must equal the recorded one (A80–A85 as the view shows them, and the whole resolution
behind them).  Regenerate with ``python -m tests.engine.archipelago.regen_golden`` after an intended change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .randplay import replay_views

GOLDEN = Path(__file__).parent / "golden" / "playthroughs"
FILES = sorted(GOLDEN.glob("*.json"))


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path of the first differing key (``units[3].tile.x``), or None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return f"{path}.{k} (only in the recorded view)"
            if k not in b:
                return f"{path}.{k} (only in the replayed view)"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d is not None:
                return d
        if len(a) != len(b):
            return f"{path} (length {len(a)} replayed, {len(b)} recorded)"
        return None
    if a != b:
        return f"{path}: replayed {json.dumps(a)[:80]}, recorded {json.dumps(b)[:80]}"
    return None


def test_golden_files_exist() -> None:
    assert len(FILES) >= 3, f"no golden playthroughs in {GOLDEN}: run python -m tests.engine.archipelago.regen_golden"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a85_golden_playthrough_views(path: Path) -> None:
    data = json.loads(path.read_text())
    rounds = data["rounds"]
    got = replay_views(data["seed"], data["players"], data["max_rounds"], rounds)
    assert len(got) == len(rounds)
    for r, (views, rd) in enumerate(zip(got, rounds, strict=True)):
        for p, (v, want) in enumerate(zip(views, rd["views"], strict=True)):
            diff = first_difference(json.loads(json.dumps(v)), want)
            assert diff is None, (f"{path.name}: round {r}, player {p}: first difference at view{diff}\n"
                                  "(if the change is intended: python -m tests.engine.archipelago.regen_golden)")


def test_first_difference_names_the_key() -> None:
    a = {"units": [{"id": "a", "tile": {"x": 1, "y": 2}}], "round": 3}
    b = {"units": [{"id": "a", "tile": {"x": 1, "y": 3}}], "round": 3}
    assert first_difference(a, a) is None
    assert first_difference(a, b) == ".units[0].tile.y: replayed 2, recorded 3"
