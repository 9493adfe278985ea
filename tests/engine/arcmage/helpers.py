"""Shortcuts for Arcmage rule tests built on the plain-data scenario format."""

from __future__ import annotations

from typing import Any

from engine.arcmage import GAME, ArcState, core
from engine.arcmage.scenario import state_from_scenario, summary
from engine.base import Event


def seats(p0: dict[str, Any] | None = None, p1: dict[str, Any] | None = None,
          more: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    s0: dict[str, Any] = {"cities": [{"card": "armory", "id": "A"}], "piles": {"The Empire": 8},
                          "deck": ["bearer"] * 6}
    s1: dict[str, Any] = {"cities": [{"card": "farmland", "id": "F"}], "piles": {"Gaian": 8},
                          "deck": ["kolibri"] * 6}
    s0.update(p0 or {})
    s1.update(p1 or {})
    return [s0, s1, *(more or [])]


def make(p0: dict[str, Any] | None = None, p1: dict[str, Any] | None = None, phase: str = "play1",
         more: list[dict[str, Any]] | None = None, **kw: Any) -> ArcState:
    return state_from_scenario({"seats": seats(p0, p1, more), "phase": phase, **kw})


EVENTS: list[Event] = []


def do(state: ArcState, seat: int, action: dict[str, Any]) -> ArcState:
    new, ev = GAME.apply_action(state, seat, action)
    EVENTS.extend(ev)
    return new


def head(state: ArcState) -> Any:
    """The pending op (``None`` when the game is over); typed Any for terse tests."""
    return core.head(state.data)


def settle(state: ArcState, limit: int = 50, kinds: tuple[str, ...] = ("stack", "attack", "blocks", "dying")
           ) -> ArcState:
    """Everyone in an open window (of ``kinds``) passes until the head is not such a window."""
    for _ in range(limit):
        h = head(state)
        if h is None or h["op"] != "window" or h["kind"] not in kinds:
            return state
        state = do(state, h["players"][0], {"pass": {}})
    raise AssertionError("windows never closed")


def cast(state: ArcState, seat: int, **play: Any) -> ArcState:
    """Play a card and let every window pass until it has resolved."""
    return settle(do(state, seat, {"play": play}))


def choose(state: ArcState, option: Any) -> ArcState:
    h = head(state)
    assert h is not None and h["op"] == "decide", h
    return do(state, h["seat"], {"choose": {"option": option}})


def pending_kind(state: ArcState) -> str | None:
    h = head(state)
    if h is None:
        return None
    return str(h.get("kind") or h.get("phase"))


def card(state: ArcState, cid: str) -> dict[str, Any]:
    out: dict[str, Any] = summary(state)["cards"][cid]
    return out


def zone(state: ArcState, cid: str) -> str | None:
    c = state.data["cards"].get(cid)
    return None if c is None else str(c["z"])


def attack(state: ArcState, attackers: list[str], city: str, seat: int = 0) -> ArcState:
    """Declare an attack and let the attack window pass: the defender's intercept decision is next
    (or the blocks window when it has nothing to intercept with)."""
    return settle(do(state, seat, {"attack": {"attackers": attackers, "city": city}}))


def block(state: ArcState, pairs: list[tuple[str, str]]) -> ArcState:
    """Assign interceptors, finish, let the blocks window pass; the active player's ``blocks`` step is next."""
    for b, a in pairs:
        state = choose(state, [b, a])
    h = head(state)
    if h is not None and h["op"] == "decide" and h["kind"] == "intercept":
        state = choose(state, None)
    return settle(state)


def fight(state: ArcState) -> ArcState:
    """From the active player's blocks step: pass it and let the damage steps run."""
    state = do(state, state.data["active"], {"pass": {}})
    return settle(state)


def raises(fn: Any, exc: type[BaseException], rule: str | None = None) -> BaseException:
    try:
        fn()
    except exc as e:
        if rule is not None:
            assert getattr(e, "rule", None) == rule, (getattr(e, "rule", None), str(e))
        return e
    raise AssertionError(f"{exc.__name__} not raised")
