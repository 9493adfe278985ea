"""What the MCP door (:mod:`gateway.mcp_door`) says about each game: one module per game kind, all
registered in :data:`SHAPERS`; the door itself holds no game's shapes and dispatches by kind.

A shaper (:class:`AgentGame`) turns the player API's answers into a language model's compact JSON:

- ``figures(inner)``: extra fields of each player of the view's header (by seat);
- ``view(inner)``: the game's own part of ``get_view`` (``inner`` is the engine's view of the caller);
- ``moves(inner, unit)``: the ``legal_moves`` answer;
- ``event(kind, data)``: one of the caller's engine events (a Watch ``event`` update) in the form
  ``wait_*`` tools report it;
- ``rules_extra()``: text the ``rules`` tool adds after ``gateway/agent_rules/<kind>.md``;
- ``turns``: the game is played by turn and window actions (``act``), not by rounds of orders: the
  view's header then carries the step (who may act now) instead of the round-submission fields;
- ``pass_action``: the action the ``pass_priority`` tool sends (None: the game has none);
- ``title``, ``view_doc``, ``moves_doc``: the game's paragraph in the descriptions of ``get_view`` and
  ``legal_moves`` (a tool's description is all an agent is told about its answer).

A game with no module here gets :class:`Generic` (the engine's own view and legal moves, unshaped),
so a new game is playable through MCP before it has a shaper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from engine import get_game


class AgentGame(Protocol):
    kind: str
    title: str
    turns: bool
    pass_action: ClassVar[dict[str, Any] | None]
    view_doc: str
    moves_doc: str

    def figures(self, inner: Mapping[str, Any]) -> dict[int, dict[str, Any]]: ...

    def view(self, inner: dict[str, Any]) -> dict[str, Any]: ...

    def moves(self, inner: dict[str, Any], unit: str | None) -> dict[str, Any]: ...

    def event(self, kind: str, data: Mapping[str, Any]) -> dict[str, Any]: ...

    def rules_extra(self) -> str: ...


class Generic:
    """Any game: the engine's view and legal moves as they are (its ``note`` left out)."""

    turns = False
    title = ""
    pass_action: ClassVar[dict[str, Any] | None] = None
    view_doc = ""
    moves_doc = ""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.title = type(self).title or kind.capitalize()

    def figures(self, inner: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
        return {}

    def view(self, inner: dict[str, Any]) -> dict[str, Any]:
        return dict(inner)

    def moves(self, inner: dict[str, Any], unit: str | None) -> dict[str, Any]:
        return {k: v for k, v in get_game(self.kind).legal_moves(inner, unit).items() if k != "note"}

    def event(self, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"kind": kind, **data}

    def rules_extra(self) -> str:
        return ""


def _table() -> dict[str, AgentGame]:
    from gateway.agent_views import archipelago, arcmage, salvo

    return {m.SHAPER.kind: m.SHAPER for m in (salvo, archipelago, arcmage)}


#: the shaper of each game kind that has one
SHAPERS: dict[str, AgentGame] = _table()


def shaper(kind: str) -> AgentGame:
    """The shaper of game ``kind`` (:class:`Generic` when it has none of its own)."""
    found = SHAPERS.get(kind)
    return found if found is not None else Generic(kind)


__all__ = ["SHAPERS", "AgentGame", "Generic", "shaper"]
