"""The Salvo autopilot (S9): orders for a player who did not submit, from that player's view alone.

- Round 0: ``{"random_placement": True}`` (the server places the fleet from the game's RNG, S3).
- Firing rounds: as many shots as allowed, all at untried squares, best score first:
  * classic mode: squares next to known hits (more for extending a line of two hits), while some
    hit does not yet belong to a sunk ship;
  * salvo mode: each earlier shot square carries the chance that it hit — the hits of its round's
    report on ships still afloat, over the shots of that round — and an untried square scores the
    sum over its neighbours, so neighbours of shots from rounds whose report had hits come first;
  * a small bonus for the checkerboard squares (every ship covers one), then a random tie-break.
- Deterministic: the only randomness is an :class:`Rng` seeded by a hash of the view.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine.base import canonical_json
from engine.rng import Rng
from engine.salvo.board import ALL_SQUARES, coords, neighbours, on_grid, square_name

PARITY_BONUS = 0.01
_DIRECTIONS = ((0, -1), (1, 0), (0, 1), (-1, 0))


def view_rng(view: Mapping[str, Any]) -> Rng:
    """An RNG seeded by the SHA-256 of the view's canonical encoding."""
    digest = hashlib.sha256(canonical_json(dict(view))).digest()
    return Rng(int.from_bytes(digest[:8], "big"))


def _classic_scores(view: Mapping[str, Any], untried: list[str]) -> dict[str, float]:
    hits = {shot["square"] for shot in view["shots"] if shot.get("hit")}
    sizes = {spec["name"]: int(spec["size"]) for spec in view["fleet_spec"]}
    if len(hits) <= sum(sizes[name] for name in view["enemy_sunk"]):
        return {}  # every hit belongs to a sunk ship: hunt
    scores: dict[str, float] = {}
    for square in untried:
        col, row = coords(square)
        score = 0.0
        for dc, dr in _DIRECTIONS:
            if not on_grid(col + dc, row + dr) or square_name(col + dc, row + dr) not in hits:
                continue
            score += 1.0
            if on_grid(col + 2 * dc, row + 2 * dr) and square_name(col + 2 * dc, row + 2 * dr) in hits:
                score += 2.0  # extends a line of hits
        scores[square] = score
    return scores


def _salvo_scores(view: Mapping[str, Any], untried: list[str]) -> dict[str, float]:
    sunk = set(view["enemy_sunk"])
    fired = Counter(shot["round"] for shot in view["shots"])
    chance: dict[int, float] = {}
    for report in view["reports"]:
        open_hits = sum(entry["count"] for entry in report["ships"] if entry["ship"] not in sunk)
        if open_hits and fired[report["round"]]:
            chance[report["round"]] = open_hits / fired[report["round"]]
    by_square = {shot["square"]: chance.get(shot["round"], 0.0) for shot in view["shots"]}
    return {sq: sum(by_square.get(n, 0.0) for n in neighbours(sq)) for sq in untried}


def firing(view: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """(shots allowed, untried squares) when the viewing player may fire now, else None."""
    allowed = int(view.get("shots_allowed", 0))
    if view.get("phase") != "firing" or allowed <= 0:
        return None
    tried = {shot["square"] for shot in view["shots"]}
    return allowed, [sq for sq in ALL_SQUARES if sq not in tried]


def autopilot_orders(view: Mapping[str, Any]) -> dict[str, Any]:
    """Orders that always pass ``validate`` for the viewing player in the viewed state."""
    if view.get("phase") == "placement":
        return {"random_placement": True}
    can = firing(view)
    if can is None:
        return {}
    allowed, untried = can
    if view.get("mode") == "classic":
        scores = _classic_scores(view, untried)
    else:
        scores = _salvo_scores(view, untried)
    rng = view_rng(view)
    ranked = []
    for square in untried:
        col, row = coords(square)
        bonus = PARITY_BONUS if (col + row) % 2 == 0 else 0.0
        ranked.append((-(scores.get(square, 0.0) + bonus), rng.random(), square))
    ranked.sort()
    return {"shots": [square for _, _, square in ranked[:allowed]]}
