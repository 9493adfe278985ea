"""The garbage collector tuned for long-lived servers (issue 24: no long collector pauses).

CPython's full collections walk every tracked object of the process: in a gateway holding 10,000 Watch
streams or a shard holding thousands of games they stopped the process 0.1–0.5 s
(``archipelago_gc_pause_seconds``). Two measures, at the end of a process's start-up:

* what start-up made — modules, classes, functions, protobuf descriptors, the Ray and gRPC machinery —
  lives as long as the process: it is collected once (a cycle frozen while garbage would never be freed)
  and moved out of the collector's way with ``gc.freeze()``;
* the young generation's threshold is raised from 700 to ``GEN0`` allocations, so most of a request's
  short-lived objects die before any collection sees them and far fewer survive into the old generations
  whose collections are the long ones. (Reference cycles are still collected: nothing leaks.)

``ARCHIPELAGO_GC_TUNE=0`` keeps CPython's defaults (to compare)."""

from __future__ import annotations

import gc
import os

GEN0 = 20_000
GEN1 = 20
GEN2 = 20


def tune() -> bool:
    """Freeze what start-up made and raise the thresholds (once per process; False if turned off)."""
    if os.environ.get("ARCHIPELAGO_GC_TUNE", "1") == "0":
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0, GEN1, GEN2)
    return True
