"""Multiplayer ratings (community.proto): who a finished game rates, the places its outcome gives, and
OpenSkill's Plackett–Luce update. Pure: no I/O (the actor's part :mod:`services.actor_ratings` and the
store :mod:`services.community_store` call it).

- **A rated game** ended with a real outcome (not ``expired``, a lobby nobody started, nor ``ended``,
  an operator's end), is public, and has at least :data:`MIN_RATED` rated seats.
- **A rated seat** plays under a profile, is not an autopilot seat (A4), and was not played by the
  autopilot for more than half of the rounds it was expected in (a turn-based game: of its own turns;
  see :class:`SeatRecord`). Only rated seats take part in the update.
- **Places** (:func:`places`, 1 = first): the winners share place 1; the others follow by their score
  (descending) when the outcome has scores, equal scores sharing a place (standard competition
  ranking: 1, 2, 2, 4), else all share the place after the winners; a draw puts everyone first.
- **The update** (:func:`rate`): OpenSkill's Plackett–Luce model with its defaults (μ 25, σ 25/3, a
  free-for-all of one-player teams, lower place better, equal places a tie); the leaderboards sort
  by the ordinal μ − 3σ (0 for a new profile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

#: the outcome reasons that are no result of play: never rated (services.actor_core)
UNRATED_REASONS = frozenset({"expired", "ended"})
MIN_RATED = 2  # rated seats a game needs to be rated
SPEEDS = ("fast", "slow")

_MODEL = PlackettLuce()
DEFAULT_MU: float = float(_MODEL.mu)  # 25
DEFAULT_SIGMA: float = float(_MODEL.sigma)  # 25 / 3


@dataclass(frozen=True)
class Skill:
    """One rating: OpenSkill's μ and σ."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def ordinal(self) -> float:
        """μ − 3σ: what a leaderboard sorts by."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class SeatRecord:
    """What decides whether a seat is rated. ``played``: the rounds it was expected in (a turn-based
    game: its own turns); ``auto``: how many of them the autopilot played for it."""

    seat: int
    profile: str = ""
    bot: bool = False
    played: int = 0
    auto: int = 0

    @property
    def mostly_autopilot(self) -> bool:
        return self.auto * 2 > self.played


def real_outcome(outcome: Mapping[str, Any] | None) -> bool:
    """The game was played to an end of its own (not an expired lobby, not ended by an operator)."""
    return outcome is not None and str(outcome.get("reason", "")) not in UNRATED_REASONS


def rated_seats(seats: Sequence[SeatRecord], *, public: bool, outcome: Mapping[str, Any] | None) -> list[int]:
    """The seats a finished game rates, in seat order; [] when the game is not rated (private, no real
    outcome, fewer than :data:`MIN_RATED` rated seats)."""
    if not public or not real_outcome(outcome):
        return []
    rated = [s.seat for s in seats if s.profile and not s.bot and not s.mostly_autopilot]
    return rated if len(rated) >= MIN_RATED else []


def places(outcome: Mapping[str, Any], seats: int) -> list[int]:
    """Each seat's place (1 = first) in ``outcome`` ({winners, draw, scores}), by seat."""
    if outcome.get("draw"):
        return [1] * seats
    winners = {int(w) for w in outcome.get("winners") or () if 0 <= int(w) < seats}
    raw = list(outcome.get("scores") or ())
    scores = [float(raw[s]) if s < len(raw) else 0.0 for s in range(seats)] if raw else [0.0] * seats
    out = []
    for s in range(seats):
        if s in winners:
            out.append(1)
        else:  # 1 + every seat strictly better: the winners, the others with a higher score
            better = sum(1 for o in range(seats) if o not in winners and scores[o] > scores[s])
            out.append(1 + len(winners) + better)
    return out


def rate(skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
    """The skills after a free-for-all where ``skills[i]`` finished at place ``ranks[i]`` (lower is
    better, equal is a tie): OpenSkill's Plackett–Luce update. Two players at least."""
    if len(skills) != len(ranks) or len(skills) < MIN_RATED:
        raise ValueError(f"a rated result needs {MIN_RATED} or more players, each with a place")
    teams = [[_MODEL.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    new = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [Skill(float(team[0].mu), float(team[0].sigma)) for team in new]


__all__ = ["DEFAULT_MU", "DEFAULT_SIGMA", "MIN_RATED", "SPEEDS", "UNRATED_REASONS", "SeatRecord", "Skill",
           "places", "rate", "rated_seats", "real_outcome"]
