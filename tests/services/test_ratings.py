"""services.ratings: places from an outcome, who a game rates, and the update checked against openskill's
own Plackett–Luce model (pure: no Redis)."""

from __future__ import annotations

import random

import pytest
from openskill.models import PlackettLuce

from services.ratings import (
    DEFAULT_MU,
    DEFAULT_SIGMA,
    SeatRecord,
    Skill,
    places,
    rate,
    rated_seats,
    real_outcome,
)


def test_winners_share_first_place_and_the_others_follow_by_score() -> None:
    assert places({"winners": [2], "draw": False, "scores": [0, 1, 0]}, 3) == [3, 2, 1]
    # equal scores share a place (1, 2, 2, 4)
    assert places({"winners": [0], "draw": False, "scores": [9, 5, 5, 1]}, 4) == [1, 2, 2, 4]
    # a shared win
    assert places({"winners": [1, 3], "draw": False, "scores": [2, 7, 4, 7]}, 4) == [4, 1, 3, 1]
    # a winner by a tiebreak (Archipelago A67: flags, then land) above a seat with its score
    assert places({"winners": [1], "draw": False, "scores": [5, 5, 3]}, 3) == [2, 1, 3]


def test_without_scores_the_losers_share_the_place_after_the_winners() -> None:
    assert places({"winners": [1], "draw": False, "reason": "cities"}, 3) == [2, 1, 2]
    assert places({"winners": [1], "draw": False, "scores": []}, 2) == [2, 1]


def test_a_draw_puts_everyone_first() -> None:
    assert places({"winners": [], "draw": True, "scores": [3, 1]}, 2) == [1, 1]
    assert places({"winners": [], "draw": False, "scores": [2, 2, 2]}, 3) == [1, 1, 1]


def seats(*records: tuple[str, bool, int, int]) -> list[SeatRecord]:
    return [SeatRecord(i, profile, bot, played, auto) for i, (profile, bot, played, auto) in enumerate(records)]


OUTCOME = {"winners": [0], "draw": False, "reason": "target", "scores": [3, 1, 0]}


def test_who_is_rated() -> None:
    three = seats(("p0", False, 4, 0), ("p1", False, 4, 2), ("p2", False, 4, 3))
    # at most half of its rounds played by the autopilot: rated; more: not
    assert rated_seats(three, public=True, outcome=OUTCOME) == [0, 1]
    # a seat without a profile, an autopilot seat
    assert rated_seats(seats(("p0", False, 1, 0), ("", False, 1, 0), ("", True, 1, 1), ("p3", False, 1, 0)),
                       public=True, outcome=OUTCOME) == [0, 3]
    # fewer than two rated seats: nobody
    assert rated_seats(seats(("p0", False, 2, 0), ("p1", False, 2, 2)), public=True, outcome=OUTCOME) == []
    # a private game; no real outcome
    assert rated_seats(three, public=False, outcome=OUTCOME) == []
    for reason in ("expired", "ended"):
        assert not real_outcome({**OUTCOME, "reason": reason})
        assert rated_seats(three, public=True, outcome={**OUTCOME, "reason": reason}) == []
    assert rated_seats(three, public=True, outcome=None) == []
    # a game over before any round: nobody was autoplayed
    assert rated_seats(seats(("p0", False, 0, 0), ("p1", False, 0, 0)), public=True, outcome=OUTCOME) == [0, 1]


def reference(skills: list[Skill], ranks: list[int]) -> list[float]:
    """μ, σ, μ, σ, … after openskill's own Plackett–Luce update."""
    model = PlackettLuce()
    teams = [[model.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    return [x for t in model.rate(teams, ranks=[float(r) for r in ranks]) for x in (t[0].mu, t[0].sigma)]


def flat(skills: list[Skill]) -> list[float]:
    return [x for s in skills for x in (s.mu, s.sigma)]


@pytest.mark.parametrize("players", range(2, 9))
def test_rate_is_openskills_plackett_luce_for_2_to_8_players(players: int) -> None:
    rng = random.Random(players)
    skills = [Skill(rng.uniform(15, 35), rng.uniform(2, DEFAULT_SIGMA)) for _ in range(players)]
    outcome = {"winners": [rng.randrange(players)], "draw": False,
               "scores": [rng.randrange(4) for _ in range(players)]}
    ranks = places(outcome, players)
    new = rate(skills, ranks)
    assert flat(new) == pytest.approx(reference(skills, ranks))
    best = ranks.index(1)
    assert new[best].mu > skills[best].mu  # (the winner gained)


def test_a_new_profile_starts_at_openskills_defaults() -> None:
    assert (DEFAULT_MU, DEFAULT_SIGMA) == (PlackettLuce().mu, PlackettLuce().sigma) == (25.0, 25 / 3)
    assert Skill().ordinal == pytest.approx(0.0)
    assert Skill(30.0, 2.0).ordinal == pytest.approx(24.0)


def test_a_draw_moves_no_mu_between_equals_and_shrinks_sigma() -> None:
    new = rate([Skill()] * 4, places({"winners": [], "draw": True}, 4))
    assert all(s.mu == pytest.approx(DEFAULT_MU) and s.sigma < DEFAULT_SIGMA for s in new)
    assert flat(new) == pytest.approx(reference([Skill()] * 4, [1, 1, 1, 1]))


def test_tied_places_rate_alike() -> None:
    new = rate([Skill()] * 3, [1, 2, 2])
    assert new[1] == new[2] and new[0].mu > new[1].mu


def test_rate_needs_two_players_each_with_a_place() -> None:
    with pytest.raises(ValueError):
        rate([Skill()], [1])
    with pytest.raises(ValueError):
        rate([Skill(), Skill()], [1])
