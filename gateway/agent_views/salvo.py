"""Salvo for the MCP door: the view as fleet, shots and reports; legal moves and events as the engine
gives them."""

from __future__ import annotations

from typing import Any

from gateway.agent_views import Generic


class Salvo(Generic):
    title = "Salvo"
    view_doc = ("phase, shots_allowed, your fleet with hits, your shots [square, round], the reports of your "
                "salvos, enemy ships sunk.")
    moves_doc = "the fleet to place in round 0; then shots_allowed and the untried squares."

    def __init__(self) -> None:
        super().__init__("salvo")

    def view(self, inner: dict[str, Any]) -> dict[str, Any]:
        v = inner
        shots = v.get("shots", [])
        return {
            "phase": v.get("phase"), "mode": v.get("mode"), "shots_allowed": v.get("shots_allowed", 0),
            **({"active_player": v["active_player"]} if "active_player" in v else {}),
            "fleet_spec": v.get("fleet_spec", []), "your_fleet": v.get("fleet", []),
            "enemy_shots_at_you": [[s["square"], s.get("round", 0), s.get("hit")] for s in v.get("incoming", [])],
            "your_shots": [[s["square"], s.get("round", 0)] + ([s["hit"]] if "hit" in s else []) for s in shots],
            "reports": v.get("reports", []), "enemy_ships_sunk": v.get("enemy_sunk", []),
            "untried_squares_left": 100 - len(shots),
            **({"enemy_fleet": v["enemy_fleet"]} if v.get("enemy_fleet") else {}),
            **({"outcome": v["outcome"]} if v.get("outcome") else {}),
        }


SHAPER = Salvo()
