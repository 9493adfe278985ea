"""Hand-made boards as plain JSON data, for tests and for comparison with other implementations.

Scenario format (every key but ``rows`` optional)::

    {
      "rows": ["..0#..", ".#w#..", ...],   # one string per row, row 0 on top, x = column
      "legend": {"x": {"resource": "wood", "port": "fuel"}},   # extra land characters
      "players": 2,                          # default: number of bases
      "bases": [[1, 0], [4, 4]],             # bases[seat]; or mark bases with digits in rows
      "islands": [{"tile": [3, 3], "kind": "centre"}],   # kind of the island holding that tile
      "units": [{"id": "a", "owner": 0, "type": "rank5", "tile": {"x": 1, "y": 2},
                 "cargo": ["b"], "flag": "f1", "raft": true}],
      "stocks": {"0": {"wood": 3, "food": 1}},
      "scores": {"0": 2},
      "outposts": [{"tile": {"x": 3, "y": 3}, "owner": 1}],
      "control": [{"tile": {"x": 3, "y": 3}, "owner": 1}],   # default: A47 on the board as given
      "round": 3, "target": 10, "max_rounds": 60, "a66_done": false,
      "revealed": {"0": ["b"]},              # enemy ids whose type a seat knows
      "explored": "all"                       # or "sight": only current sight (default "all")
    }

Rows are read by :func:`engine.archipelago.board.parse_board` (its lenient ``"scenario"``
dialect of the board drawing): ``.`` sea; ``#`` plain land; ``w f i u`` land with wood, food,
iron, fuel; ``W F I U`` a port of that resource (land); ``0``–``7`` the base of that seat (land);
any other character is plain land (``B`` is handy for bases placed by ``bases``); anything in
``legend`` is land with the given resource and/or port.  Islands are the 4-connected groups of
land, numbered in the reading order of their first tile: the one holding seat p's base is p's
home island, the others are ring islands unless ``islands`` says otherwise.

Units: tiles are ``{"x", "y"}`` or ``[x, y]``.  A unit listed in another's ``cargo`` is inside
it (its tile may be omitted); ``flag`` names the enemy flag a unit carries (the flag's tile may be
omitted); ``raft`` gives a ship a raft (A33).  Ids are the scenario's strings and sort as strings
(A28); units created during resolution are named ``n1``, ``n2``, ...

:func:`resolve_scenario` resolves one regular round and returns plain data::

    {"units": [{"id", "owner", "type", "tile": {"x", "y"}, "cargo"?: [...], "carrier"?: id,
                "flag"?: id, "raft"?: true}, ...],           # sorted by id
     "events": [{"kind", "tile"?: {"x", "y"}, "units"?: [...], ...}, ...],   # in resolution order
     "stocks": {"0": {"wood": .., ...}, ...}, "scores": {"0": .., ...}}

Orders are validated leniently there (malformed entries skipped, rule questions settled by the
resolution itself); keys of ``orders`` may be ints or digit strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.archipelago.board import parse_board, parse_tile
from engine.archipelago.fog import tiles_mask, update_memory, visible_tiles
from engine.archipelago.resolve import compute_control, resolve_state
from engine.archipelago.state import PlayerState, State, Unit
from engine.archipelago.units import RESOURCES, TARGETS, UNIT_TYPES


def _seat_map(d: Any) -> dict[int, Any]:
    return {int(k): v for k, v in (d or {}).items()}


def state_from_scenario(scenario: Mapping[str, Any]) -> State:
    """A State from a scenario (see the module docstring)."""
    bases = [parse_tile(t) for t in scenario["bases"]] if scenario.get("bases") else None
    kinds = {}
    for ent in scenario.get("islands") or ():
        kinds[parse_tile(ent["tile"])] = str(ent["kind"])
    board = parse_board(list(scenario["rows"]), dialect="scenario", bases=bases, legend=scenario.get("legend"),
                        kinds=kinds)
    players = int(scenario.get("players") or len(board.bases))
    units: dict[str, Unit] = {}
    raw = list(scenario.get("units") or ())
    for ent in raw:
        tile = parse_tile(ent["tile"]) if ent.get("tile") is not None else (-1, -1)
        typ = str(ent["type"])
        if typ not in UNIT_TYPES:
            raise ValueError(f"unknown unit type {typ!r}")
        uid = str(ent["id"])
        if uid in units:
            raise ValueError(f"duplicate unit id {uid!r}")
        units[uid] = Unit(uid, int(ent["owner"]), typ, tile, raft=bool(ent.get("raft", False)))
    for ent in raw:
        u = units[str(ent["id"])]
        for cid in ent.get("cargo") or ():
            c = units[str(cid)]
            c.carrier = u.id
            u.cargo.append(c.id)
        if ent.get("flag"):
            f = units[str(ent["flag"])]
            f.carrier = u.id
            u.flag = f.id
    for u in units.values():  # cargo and carried flags take their carrier's tile
        if u.carrier is not None:
            c = units[u.carrier]
            while c.carrier is not None:
                c = units[c.carrier]
            u.tile = c.tile
    stocks = _seat_map(scenario.get("stocks"))
    scores = _seat_map(scenario.get("scores"))
    revealed = _seat_map(scenario.get("revealed"))
    pstates = [PlayerState(stock={r: int((stocks.get(p) or {}).get(r, 0)) for r in RESOURCES},
                           score=int(scores.get(p, 0)), revealed={str(x) for x in revealed.get(p) or ()})
               for p in range(players)]
    outposts = {parse_tile(o["tile"]): int(o["owner"]) for o in scenario.get("outposts") or ()}
    state = State(board, players, round=int(scenario.get("round", 1)), units=units, outposts=outposts,
                  pstates=pstates, target=int(scenario.get("target") or TARGETS.get(players, 10)),
                  max_rounds=int(scenario.get("max_rounds", 60)),
                  a66_done=bool(scenario.get("a66_done", False)))
    if scenario.get("control") is not None:
        state.control = {parse_tile(c["tile"]): int(c["owner"]) for c in scenario["control"]}
    else:
        state.control = compute_control(state)
    if scenario.get("explored", "all") == "all":
        everything = tiles_mask(state, {(x, y) for x in range(board.width) for y in range(board.height)})
        for ps in state.pstates:
            ps.explored = everything
    update_memory(state, [visible_tiles(state, p) for p in range(players)])
    return state


def state_summary(state: State) -> dict[str, Any]:
    """The plain-data summary :func:`resolve_scenario` returns (without events)."""
    return {
        "units": [state.units[k].to_dict() for k in sorted(state.units)],
        "stocks": {str(p): dict(ps.stock) for p, ps in enumerate(state.pstates)},
        "scores": {str(p): ps.score for p, ps in enumerate(state.pstates)},
    }


def resolve_scenario(scenario: Mapping[str, Any], orders: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any]:
    """Resolve one round of a scenario; plain JSON-serialisable result (module docstring)."""
    state = state_from_scenario(scenario)
    by_player = {int(k): v for k, v in orders.items()}
    new, raw, _, _ = resolve_state(state, by_player)
    out = state_summary(new)
    out["events"] = [dict(e["ev"]) for e in raw]
    return out
