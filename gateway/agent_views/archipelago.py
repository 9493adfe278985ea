"""Archipelago for the MCP door: the explored map cropped to one string per row, tiles everywhere as
``{"x", "y"}`` (the shape orders take), units with nothing to do left out of the legal moves, and the
engine's unit table after the rules."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.archipelago.units import UNIT_TYPES
from gateway.agent_views import Generic

# The map's characters: in sight now, explored but out of sight now, unexplored.
IN_SIGHT = {".": ".", "#": "#"}
OUT_OF_SIGHT = {".": "~", "#": "+"}


def xy(t: Mapping[str, Any]) -> dict[str, int]:
    """A tile in the one shape every door uses, in answers and in orders (the proto's ``Tile``)."""
    return {"x": int(t.get("x", 0)), "y": int(t.get("y", 0))}


def _pair(t: Any) -> dict[str, int]:
    """An engine pair ``[x, y]`` (legal moves) as a tile ``{"x", "y"}``."""
    return {"x": int(t[0]), "y": int(t[1])}


def _map(v: Mapping[str, Any]) -> dict[str, Any]:
    """The explored part of the board: the smallest box holding every explored tile, one string per
    row from ``y0``, character i of a row the tile ``x0 + i``; in sight "." sea, "#" land; explored
    but out of sight "~" sea, "+" land; "?" unexplored."""
    rows: list[str] = list(v.get("rows", []))
    seen = [(x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c != "?"]
    out: dict[str, Any] = {"width": v.get("width"), "height": v.get("height")}
    if not seen:
        return {**out, "x0": 0, "y0": 0, "rows": []}
    x0, x1 = min(x for x, _ in seen), max(x for x, _ in seen)
    y0, y1 = min(y for _, y in seen), max(y for _, y in seen)
    sight = {(int(t["x"]), int(t["y"])) for t in v.get("visible", [])}
    cropped = ["".join((IN_SIGHT if (x, y) in sight else OUT_OF_SIGHT).get(rows[y][x], rows[y][x])
                       for x in range(x0, x1 + 1)) for y in range(y0, y1 + 1)]
    return {**out, "x0": x0, "y0": y0, "rows": cropped}


def _by_resource(entries: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, int]]]:
    out: dict[str, list[dict[str, int]]] = {}
    for r in entries:
        out.setdefault(str(r["resource"]), []).append(xy(r["tile"]))
    return out


def unit_table() -> str:
    """The unit table of the Archipelago rules text, from the engine's own (costs, moves, sight)."""
    lines = ["## Unit table (from the engine)",
             "type | domain | strength | move | sight | cost | carries | limit", "---|---|---|---|---|---|---|---"]
    for t in UNIT_TYPES.values():
        cost = " ".join(f"{n} {r}" for r, n in t.cost.items()) if t.buildable else "not buildable"
        lines.append(f"{t.id} ({t.name}) | {t.domain} | {'–' if t.strength is None else t.strength} | {t.move} | "
                     f"{t.sight} | {cost} | {t.capacity or ''} | {t.limit or ''}")
    return "\n".join(lines) + "\n"


def compact_moves(moves: dict[str, Any]) -> dict[str, Any]:
    """The engine's legal moves (:meth:`engine.base.Game.legal_moves`) in the door's shapes: tiles
    ``{"x", "y"}``; units with nothing to do left out, builds as the build orders they are; what
    get_view or the rules tool already say (a unit's tile and type, notes, costs, moves per unit
    type) left out."""
    out = {k: v for k, v in moves.items() if k != "note"}
    if out.get("phase") not in ("orders", "deployment"):
        return out
    if out["phase"] == "deployment":
        where: dict[str, list[dict[str, int]]] = {}
        units = []
        for u in out["units"]:
            on = "sea" if UNIT_TYPES[u["type"]].domain == "sea" else "land"
            where.setdefault(on, [_pair(t) for t in u["tiles"]])
            units.append({"unit": u["unit"], "type": u["type"], "at": _pair(u["at"]), "goes_on": on})
        return {**out, "units": units, **where}
    units = []
    for u in out["units"]:
        if not u["moves"] and not u["actions"]:
            continue
        entry: dict[str, Any] = {"unit": u["unit"], "moves": [_pair(t) for t in u["moves"]]}
        if u["actions"]:
            entry["actions"] = u["actions"]
        units.append(entry)
    builds = []
    for b in out.get("builds", []):
        entry = {"type": b["type"]}
        if b.get("tiles"):
            entry["tiles"] = [_pair(t) for t in b["tiles"]]
        if b.get("ships"):
            entry["ships"] = b["ships"]
        builds.append(entry)
    return {**out, "units": units, "builds": builds, "bank": out.get("bank", {}).get("rates", {})}


class Archipelago(Generic):
    title = "Archipelago"
    view_doc = (
        'players also carry score and resource_total; map {width, height, x0, y0, rows} — the explored box '
        'only: rows[j][i] is the tile {"x": x0 + i, "y": y0 + j}: "." sea and "#" land in sight now, "~" sea '
        'and "+" land explored but out of sight, "?" unexplored; your_units [{id, type, at}], '
        'enemies_in_sight [{id, owner, domain, at, type if revealed}], enemy_log [{id, owner, at, round_seen, '
        'type?}], bases, islands {id, kind, owner?, tiles}, resource_tiles and ports {resource: [tiles]}, '
        'outposts, you_control [tiles], stock, score, target, offers, chat. Every tile is {"x": column, "y": '
        'row}, as orders take it. The last round\'s events are in wait_for_next_round\'s answer.')
    moves_doc = (
        'round 0 (phase "deployment"): your units {unit, type, at, goes_on: "land"|"sea"} and the tiles each '
        'kind may be placed on ("land", "sea"). Later rounds (phase "orders"): for each of your units that can '
        'do something (or only `unit`, a unit id): {unit, moves: [tiles it can reach this round], actions?: '
        '[{action, targets?}]}; builds: the build orders you can afford now ({"type"}; a mine also lists the '
        '"tiles" it may go on — send one as "tile"; a raft the "ships" — send one as "ship"); bank: what the '
        'bank takes for 1 of anything, by resource given. Each option is legal on its own; tiles are {"x", '
        '"y"} exactly as submit_orders takes them.')

    def __init__(self) -> None:
        super().__init__("archipelago")

    def figures(self, inner: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
        return {int(s["seat"]): {"score": s.get("score", 0), "resource_total": s.get("resource_total", 0)}
                for s in inner.get("seats", [])}

    def view(self, inner: dict[str, Any]) -> dict[str, Any]:
        v = inner

        def unit(u: dict[str, Any]) -> dict[str, Any]:
            out = {"id": u["id"], "type": u["type"], "at": xy(u["tile"])}
            for k in ("carrier", "flag", "raft", "cargo"):
                if u.get(k):
                    out[k] = u[k]
            return out

        def enemy(e: dict[str, Any], log: bool = False) -> dict[str, Any]:
            out = {"id": e["id"], "owner": e["owner"], "at": xy(e["tile"])}
            out.update({"round_seen": e["round"]} if log else {"domain": e.get("domain")})
            if e.get("type"):
                out["type"] = e["type"]
            return out

        def island(i: dict[str, Any]) -> dict[str, Any]:
            out: dict[str, Any] = {"id": i.get("id", 0), "kind": i.get("kind")}
            if i.get("owner") is not None:
                out["owner"] = i["owner"]
            out["tiles"] = [xy(t) for t in i.get("tiles", [])]
            return out

        return {
            "target": v.get("target"), "max_rounds": v.get("max_rounds"), "score": v.get("score", 0),
            "stock": v.get("stock", {}), **({"bonus": v["bonus"]} if v.get("bonus") else {}),
            "flags_captured": v.get("flags_captured", 0), "map": _map(v),
            "bases": [{"seat": b["seat"], "at": xy(b["tile"])} for b in v.get("bases", [])],
            "islands": [island(i) for i in v.get("islands", [])],
            "resource_tiles": _by_resource(v.get("resource_tiles", [])), "ports": _by_resource(v.get("ports", [])),
            "your_units": [unit(u) for u in v.get("units", [])],
            "enemies_in_sight": [enemy(e) for e in v.get("enemies", [])],
            "enemy_log": [enemy(e, log=True) for e in v.get("enemy_log", [])],
            "outposts": [{"at": xy(o["tile"]), "owner": o["owner"]} for o in v.get("outposts", [])],
            "you_control": [xy(t) for t in v.get("control", [])],
            "offers": v.get("offers", []), "chat": v.get("chat", []),
            **({"outcome": v["outcome"]} if v.get("outcome") else {}),
        }

    def moves(self, inner: dict[str, Any], unit: str | None) -> dict[str, Any]:
        return compact_moves(super().moves(inner, unit))

    def rules_extra(self) -> str:
        return "\n" + unit_table()


SHAPER = Archipelago()
