"""Games started / finished by kind and outcome, game duration and lobby wait (services.metrics.count_game,
counted by the game actor for each journal entry it writes): each moves when its thing happens, by the
journal's times, and a game reloaded from its journal (a shard restart) counts neither its start nor its
end again. A game actor on an in-memory journal with a fake clock (GameActor.load is the reload a
restarted shard does)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine import GAMES
from services import metrics
from services.game_actor import LOBBY, OVER, RUNNING, GameActor
from tests.engine import toygame
from tests.fakes import FakeClock, MemoryJournal

GID = "gm1"


def started(kind: str) -> float:
    return metrics.REGISTRY.get_sample_value("archipelago_games_started_total", {"kind": kind}) or 0.0


def finished(kind: str, outcome: str) -> float:
    return metrics.REGISTRY.get_sample_value("archipelago_games_finished_total",
                                             {"kind": kind, "outcome": outcome}) or 0.0


def observed(name: str, kind: str) -> tuple[float, float]:
    """(count, sum) of a histogram's series for ``kind``."""
    get = metrics.REGISTRY.get_sample_value
    return (get(f"{name}_count", {"kind": kind}) or 0.0), (get(f"{name}_sum", {"kind": kind}) or 0.0)


class Counts:
    """Every game figure of one kind, read now; ``delta`` gives how each moved since."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.values = self.read()

    def read(self) -> dict[str, float]:
        out = {"started": started(self.kind)}
        for outcome in metrics.OUTCOMES:
            out[outcome] = finished(self.kind, outcome)
        for name, short in (("archipelago_game_duration_seconds", "duration"),
                            ("archipelago_lobby_wait_seconds", "wait")):
            out[f"{short}_count"], out[f"{short}_sum"] = observed(name, self.kind)
        return out

    def delta(self) -> dict[str, float]:
        now = self.read()
        return {k: round(now[k] - self.values[k], 6) for k in now if now[k] != self.values[k]}


async def created(clock: FakeClock, store: MemoryJournal, kind: str = "salvo", **cfg: object) -> GameActor:
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind=kind, config={"players": 2, **cfg}, nickname="ann", secret_hash="h0", public=False,
                       deadline_s=30, code="ABCDEF")
    return actor


@pytest.fixture
def toy() -> Iterator[None]:
    with toygame.registered():
        yield


def test_every_kind_and_outcome_is_exported_from_0() -> None:
    for kind in GAMES:
        assert started(kind) >= 0 and metrics.REGISTRY.get_sample_value(
            "archipelago_games_started_total", {"kind": kind}) is not None
        for outcome in metrics.OUTCOMES:
            assert metrics.REGISTRY.get_sample_value("archipelago_games_finished_total",
                                                     {"kind": kind, "outcome": outcome}) is not None
        for name in ("archipelago_game_duration_seconds", "archipelago_lobby_wait_seconds"):
            assert metrics.REGISTRY.get_sample_value(f"{name}_count", {"kind": kind}) is not None


async def test_a_start_counts_once_with_its_lobby_wait_and_the_end_with_its_outcome_and_duration() -> None:
    store, clock = MemoryJournal(), FakeClock()
    counts = Counts("salvo")
    actor = await created(clock, store, max_rounds=1)
    await actor.join("bob", "h1")
    assert counts.delta() == {}, "a created lobby has not started"
    clock.advance(42)
    await actor.start(0, False)
    assert counts.delta() == {"started": 1, "wait_count": 1, "wait_sum": 42.0}
    await actor.start(0, False)  # a retried start (a lost reply): nothing happens, nothing counts
    assert counts.delta() == {"started": 1, "wait_count": 1, "wait_sum": 42.0}

    clock.advance(31)
    await actor.deadline_passed()  # the placement round
    clock.advance(31)
    await actor.deadline_passed()  # round 1: the cap of max_rounds
    assert actor.status == OVER and actor.outcome is not None
    outcome = "draw" if actor.outcome["draw"] else "won"
    assert counts.delta() == {"started": 1, "wait_count": 1, "wait_sum": 42.0, outcome: 1, "duration_count": 1,
                              "duration_sum": 62.0}


async def test_a_reloaded_game_counts_neither_its_start_nor_its_end_again() -> None:
    store, clock = MemoryJournal(), FakeClock()
    actor = await created(clock, store, max_rounds=1)
    clock.advance(5)
    await actor.start(0, True)
    counts = Counts("salvo")

    clock.advance(20)
    again = await GameActor.load(GID, store, now_ms=clock)  # a restarted shard reloads it: running
    assert again.status == RUNNING and counts.delta() == {}
    assert again.started_ms == actor.started_ms, "the start's time comes back from the journal"
    for _ in range(2):
        clock.ms = max(clock.ms, again.deadline_ms or 0)
        await again.deadline_passed()
    assert again.status == OVER and again.outcome is not None
    outcome = "draw" if again.outcome["draw"] else "won"
    assert counts.delta() == {outcome: 1, "duration_count": 1,
                              "duration_sum": (again.now_ms() - actor.started_ms) / 1000}, \
        "its end counts once, its duration from the start journaled before the restart"

    counts = Counts("salvo")
    over = await GameActor.load(GID, store, now_ms=clock)  # and once more, over
    assert over.status == OVER and counts.delta() == {}


async def test_an_operator_end_counts_as_ended_and_an_unstarted_game_has_no_duration() -> None:
    store, clock = MemoryJournal(), FakeClock()
    counts = Counts("salvo")
    actor = await created(clock, store)
    await actor.end("test")
    assert counts.delta() == {"ended": 1}, "a lobby ended by an operator: no start, no duration"
    await actor.end("again")  # idempotent: already over
    assert counts.delta() == {"ended": 1}

    store, clock = MemoryJournal(), FakeClock()
    actor = await created(clock, store)
    await actor.start(0, True)
    clock.advance(90)
    counts = Counts("salvo")
    await actor.end("test")
    assert counts.delta() == {"ended": 1, "duration_count": 1, "duration_sum": 90.0}


async def test_an_expired_lobby_counts_as_abandoned() -> None:
    store, clock = MemoryJournal(), FakeClock()
    counts = Counts("salvo")
    actor = await created(clock, store)
    assert actor.status == LOBBY and actor.deadline_ms is not None
    clock.ms = actor.deadline_ms
    assert await actor.deadline_passed()
    assert actor.status == OVER and counts.delta() == {"abandoned": 1}


async def test_a_turn_game_won_by_its_actions_counts_as_won(toy: None) -> None:
    store, clock = MemoryJournal(), FakeClock()
    counts = Counts(toygame.NAME)
    actor = GameActor(GID, store, now_ms=clock)
    await actor.create(kind=toygame.NAME, config={"players": 2, "target": 4}, nickname="ann", secret_hash="h0",
                       public=False, deadline_s=30, code="ABCDEF")
    await actor.join("bob", "h1")
    await actor.start(0, False)
    clock.advance(3)
    await actor.action(0, {"add": {"n": 3}})
    await actor.action(1, {"pass": {}})
    await actor.action(1, {"add": {"n": 1}})
    assert actor.status == OVER and actor.outcome is not None and actor.outcome["winners"] == [1]
    assert counts.delta() == {"started": 1, "wait_count": 1, "won": 1, "duration_count": 1, "duration_sum": 3.0}


@pytest.mark.parametrize(("outcome", "label"), [
    ({"winners": [0], "draw": False, "reason": "fleet_sunk"}, "won"),
    ({"winners": [0, 2], "draw": False, "reason": "rounds"}, "won"),  # Archipelago's shared win (A67)
    ({"winners": [], "draw": True, "reason": "both_sunk"}, "draw"),
    ({"winners": [], "draw": True, "reason": "all_out_at_once"}, "draw"),
    ({"winners": [], "draw": False, "reason": "ended"}, "ended"),
    ({"winners": [], "draw": False, "reason": "expired"}, "abandoned"),
])
def test_outcome_labels_are_the_bounded_set(outcome: dict[str, object], label: str) -> None:
    assert metrics.outcome_label(outcome) == label and label in metrics.OUTCOMES
