"""The autopilot's builds (A73): the standing build queue's entries taken from the front while
affordable, after this round's outposts and strikes; an entry that cannot be built this round as
far as the view shows is passed over (:mod:`engine.archipelago.standing`: the queue's design)."""

from __future__ import annotations

from typing import Any

from engine.archipelago.autopilot_plan import Plan
from engine.archipelago.units import UNIT_TYPES
from engine.archipelago.viewmap import SEA_GLYPH

__all__ = ["queue_builds"]


def queue_builds(p: Plan) -> list[dict[str, Any]]:
    """The builds the standing queue gives this round (module docstring), paid from ``p``'s budget."""
    queue = p.s["build_queue"]
    if not queue:
        return []
    vm = p.map
    have = dict(vm.type_counts)
    # occupied after this round's moves (or before them, should a move be held): A42 placement
    ends = {p.end_tile(k) for k, u in p.own.items() if "carrier" not in u or p.paths.get(k)}
    busy = ends | set(p.enemy_at) | set(p.own_at)
    free_home = len([i for i in p.home if i not in busy])
    free_sea = len([j for _, j in p.nb[p.base] if p.terr[j] == SEA_GLYPH and j not in busy])
    rafts: list[str] | None = None  # the ships that may still get a raft, once asked
    mine_tiles: set[int] = set()
    out: list[dict[str, Any]] = []
    for b in queue:
        typ = b["type"]
        ut = UNIT_TYPES[typ]
        if ut.limit is not None and have.get(typ, 0) >= ut.limit:
            continue
        t = p.tix(b["tile"]) if ut.is_mine else None
        if ut.is_mine:
            if t is None or t in busy or t in mine_tiles or p.xy(t) not in vm.mine_sites(typ):
                continue
        elif typ == "raft":
            if rafts is None:
                rafts = vm.raft_ships()
            if b["ship"] not in rafts:
                continue
        elif ut.domain == "sea":
            if free_sea <= 0:
                continue
        elif free_home <= 0:
            continue
        if not p.afford(ut.cost):
            break  # in order: the queue waits for this one
        have[typ] = have.get(typ, 0) + 1
        if t is not None:
            mine_tiles.add(t)
        elif rafts is not None and typ == "raft":
            rafts.remove(b["ship"])  # one raft a ship
        elif ut.domain == "sea":
            free_sea -= 1
        else:
            free_home -= 1
        out.append(dict(b))
    return out
