"""The collector's tuning (issue 24: no long collector pauses): survivors of a full collection are frozen,
so the next one walks only what came since; every refresh period a full collection unfreezes and walks
everything first, so a reference cycle among frozen objects is freed at the latest then."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from services import gctune
from services.gctune import Settler


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settler() -> Iterator[tuple[Settler, Clock]]:
    """A Settler in gc.callbacks for one test (this process's frozen set restored after)."""
    clock = Clock()
    s = Settler(refresh_s=60.0, clock=clock)
    gc.callbacks.append(s)
    try:
        yield s, clock
    finally:
        gc.callbacks.remove(s)
        gc.unfreeze()
        gc.collect()


def cycle() -> weakref.ref[Node]:
    """Two objects referring to each other, referred to by nobody: only the collector frees them."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_survivors_of_a_full_collection_are_frozen_and_the_next_walks_only_what_came_since(
        settler: tuple[Settler, Clock]) -> None:
    s, _ = settler
    kept = [Node() for _ in range(20_000)]
    gc.collect()
    assert s.settled >= 1
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept), "what was alive at the full collection is frozen"
    walked = {id(o) for g in range(3) for o in gc.get_objects(g)}  # what a collection would walk
    assert id(kept) not in walked and not any(id(n) in walked for n in kept), "the frozen are not walked"
    young = cycle()
    gc.collect()
    assert young() is None, "garbage made since is still collected"
    assert gc.get_freeze_count() >= frozen


def test_a_cycle_among_frozen_objects_is_freed_by_the_first_full_collection_after_the_refresh_period(
        settler: tuple[Settler, Clock]) -> None:
    s, clock = settler
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    gc.collect()  # alive: frozen
    del a, b
    gc.collect()
    assert gone() is not None, "a cycle frozen while alive waits for the refresh"
    assert s.refreshed == 0
    clock.now += 59.0
    gc.collect()
    assert gone() is not None and s.refreshed == 0
    clock.now += 1.0
    gc.collect()
    assert s.refreshed == 1 and gone() is None, "the refresh's collection walks everything: the cycle is freed"


def test_young_collections_neither_freeze_nor_refresh(settler: tuple[Settler, Clock]) -> None:
    s, clock = settler
    clock.now += 3600.0
    before = (s.settled, s.refreshed)
    gc.collect(0)
    gc.collect(1)
    assert (s.settled, s.refreshed) == before


def test_the_refresh_period_comes_from_the_environment_and_tuning_can_be_turned_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCHIPELAGO_GC_REFRESH_S", "120")
    assert gctune.refresh_seconds() == 120.0
    for bad in ("soon", "0", "-5", "nan"):
        monkeypatch.setenv("ARCHIPELAGO_GC_REFRESH_S", bad)
        with pytest.raises(SystemExit, match="ARCHIPELAGO_GC_REFRESH_S"):
            gctune.refresh_seconds()
    monkeypatch.delenv("ARCHIPELAGO_GC_REFRESH_S")
    assert gctune.refresh_seconds() == gctune.REFRESH_S
    monkeypatch.setenv("ARCHIPELAGO_GC_TUNE", "0")
    assert gctune.tune() is False


@pytest.mark.e2e
def test_a_shard_tunes_its_collector_only_in_its_own_ray_process(ray_local: None) -> None:
    """GameShard tunes the collector (and installs the Settler) in a Ray actor's process; a test's
    in-process shard leaves the test process's collector alone."""
    import ray

    from services.shard import in_ray_actor

    @ray.remote(num_cpus=0)
    class Probe:
        def where(self) -> bool:
            return in_ray_actor()

    probe = Probe.remote()  # type: ignore[attr-defined]
    try:
        assert ray.get(probe.where.remote(), timeout=60) is True
    finally:
        ray.kill(probe)
    assert in_ray_actor() is False
