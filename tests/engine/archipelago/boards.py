"""Helpers for hand-drawn Archipelago boards in tests (scenario data, see engine.archipelago.scenario)."""

from __future__ import annotations

from typing import Any

from engine.archipelago.scenario import resolve_scenario, state_from_scenario
from engine.archipelago.state import State

# A 12x7 board: p0's home island top left (base (0,0)), p1's bottom right (base (11,6)), a ring
# island in the middle (x 4..8, y 3).
TWO_HOMES = [
    "0#..........",  # y0
    "##..........",  # y1
    "............",  # y2
    "....#####...",  # y3
    "............",  # y4
    "..........##",  # y5
    "..........#1",  # y6
]


def U(uid: str, owner: int, typ: str, x: int | None = None, y: int | None = None, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": uid, "owner": owner, "type": typ}
    if x is not None and y is not None:
        d["tile"] = {"x": x, "y": y}
    d.update(kw)
    return d


def scen(rows: list[str], units: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"rows": rows, "units": units}
    d.update(kw)
    return d


def mv(uid: str, path: str) -> dict[str, Any]:
    return {"unit": uid, "path": list(path)}


def orders(*entries: dict[str, Any], **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"units": list(entries)}
    d.update(kw)
    return d


def run(rows: list[str], units: list[dict[str, Any]], o: dict[Any, Any] | None = None,
        **kw: Any) -> dict[str, Any]:
    return resolve_scenario(scen(rows, units, **kw), o or {})


def state(rows: list[str], units: list[dict[str, Any]], **kw: Any) -> State:
    return state_from_scenario(scen(rows, units, **kw))


def at(result: dict[str, Any], uid: str) -> tuple[int, int] | None:
    """The tile of a unit in a resolve_scenario result, None if it is gone."""
    for u in result["units"]:
        if u["id"] == uid:
            return (u["tile"]["x"], u["tile"]["y"])
    return None


def unit(result: dict[str, Any], uid: str) -> dict[str, Any]:
    """A unit of a resolve_scenario result; fails the test if it is gone."""
    for u in result["units"]:
        if u["id"] == uid:
            return dict(u)
    raise AssertionError(f"unit {uid} is gone")


def alive(result: dict[str, Any], uid: str) -> bool:
    return at(result, uid) is not None


def kinds(result: dict[str, Any]) -> list[str]:
    return [e["kind"] for e in result["events"]]


def fights(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in result["events"] if e["kind"] == "fight"]


def resolve_st(rows: list[str], units: list[dict[str, Any]], o: dict[int, Any] | None = None,
               **kw: Any) -> tuple[State, list[dict[str, Any]]]:
    """Resolve one round of a drawn board; the new State and the raw events' data."""
    from engine.archipelago.resolve import resolve_state

    st = state(rows, units, **kw)
    new, raw, _, _ = resolve_state(st, o or {})
    return new, [e["ev"] for e in raw]
