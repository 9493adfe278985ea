"""The garbage collector tuned for long-lived servers (issue 24: no long collector pauses).

CPython's full collections walk every tracked object of the process: in a gateway holding 10,000 Watch
streams or a shard holding thousands of games they stopped the process 0.1–0.5 s
(``archipelago_gc_pause_seconds``). Three measures, from the end of a process's start-up:

* what start-up made — modules, classes, functions, protobuf descriptors, the Ray and gRPC machinery —
  lives as long as the process: it is collected once (a cycle frozen while garbage would never be freed)
  and moved out of the collector's way with ``gc.freeze()``;
* the young generation's threshold is raised from 700 to ``GEN0`` allocations, so most of a request's
  short-lived objects die before any collection sees them and far fewer survive into the old generations
  whose collections are the long ones;
* **what survives a full collection is frozen too** (:class:`Settler`): an object still alive after a
  full collection is most likely long-lived (a held stream, a loaded game, a module imported late), so
  the next full collection walks only what came since — its pause grows with what the process made
  lately, not with all it holds. Frozen objects are still freed by their reference counts when let go;
  only a reference *cycle* among them waits: so every ``REFRESH_S`` (``ARCHIPELAGO_GC_REFRESH_S``,
  900 s) the next full collection unfreezes everything first and walks it all (one long pause, after
  which its survivors are frozen again) — a cycle is held at most that long.

``ARCHIPELAGO_GC_TUNE=0`` keeps CPython's defaults (to compare)."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from typing import Any

GEN0 = 20_000
GEN1 = 20
GEN2 = 20
REFRESH_S = 900.0


class Settler:
    """A ``gc.callbacks`` entry: freezes the survivors of every full collection; before a full collection
    that comes ``refresh_s`` or more after the last whole one, unfreezes everything (so that one walks
    it all). ``settled`` / ``refreshed`` count both."""

    def __init__(self, refresh_s: float = REFRESH_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.refresh_s = refresh_s
        self.clock = clock
        self.last_whole = clock()
        self.settled = 0
        self.refreshed = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            # (called before the collection touches its lists: what is unfrozen here joins the oldest
            # generation, and this very collection walks it)
            if self.clock() - self.last_whole >= self.refresh_s:
                gc.unfreeze()
                self.last_whole = self.clock()
                self.refreshed += 1
        elif phase == "stop":
            gc.freeze()  # (after the collection: every generation holds only what is alive)
            self.settled += 1


_SETTLER: Settler | None = None


def refresh_seconds() -> float:
    """``ARCHIPELAGO_GC_REFRESH_S`` (seconds, > 0), else :data:`REFRESH_S`."""
    raw = os.environ.get("ARCHIPELAGO_GC_REFRESH_S", "").strip()
    try:
        value = float(raw) if raw else REFRESH_S
    except ValueError:
        raise SystemExit(f"error: ARCHIPELAGO_GC_REFRESH_S: expected seconds, got {raw[:20]!r}") from None
    if not value > 0:
        raise SystemExit(f"error: ARCHIPELAGO_GC_REFRESH_S: expected seconds > 0, got {raw[:20]!r}")
    return value


def tune() -> bool:
    """Freeze what start-up made, raise the thresholds and, from now on, freeze each full collection's
    survivors (once per process; False if turned off)."""
    global _SETTLER
    if os.environ.get("ARCHIPELAGO_GC_TUNE", "1") == "0":
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0, GEN1, GEN2)
    if _SETTLER is None:
        _SETTLER = Settler(refresh_seconds())
        gc.callbacks.append(_SETTLER)
    return True
