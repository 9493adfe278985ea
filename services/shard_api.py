"""The interface between the gateway and a shard, imported by both sides.

:class:`ShardApi` lists every call a gateway makes to a shard, with its arguments and answer.
:class:`services.shard.ShardCore` implements it (mypy checks the signatures: a renamed or changed
method there is a type error, and a missing one makes ``ShardCore`` abstract); the gateway calls a
shard through :func:`typed`, an object typed as ``ShardApi`` whose methods send the call to the shard
(``gateway.router.ShardRouter.game`` / ``.shard``: batched on its stream, :mod:`services.hop`, or a Ray
call) — so a call the interface does not have is a type
error on the gateway's side too, and the shard refuses any method name not listed here.

Every argument and answer is plain data (dicts, lists, strings, numbers): it crosses the hop (msgpack)
or a Ray call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast


class ShardApi(Protocol):
    # ---------------------------------------------------------------- the lobby
    async def create_game(self, game_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Create a game (idempotent by game id); ``spec``: kind, config, nickname, secret_hash,
        public, deadline_s, code, request, and optionally profile (``{"id", "handle"}``)."""
        ...

    async def join(self, game_id: str, nickname: str, secret_hash: str,
                   options: dict[str, Any] | None = None, profile: dict[str, str] | None = None) -> dict[str, Any]:
        """Take a seat; ``options``: ``{kind: seat options}`` (JoinGameRequest.options); ``profile``:
        ``{"id", "handle"}`` of the profile the joiner plays under."""
        ...

    async def start_game(self, game_id: str, seat: int, fill: bool) -> dict[str, Any]: ...

    async def whoami(self, game_id: str, seat: int) -> dict[str, Any]: ...

    # ---------------------------------------------------------------- playing
    async def view(self, game_id: str, seat: int) -> dict[str, Any]:
        """``seat``'s view; seat -1 (``services.actor_core.SPECTATOR``): a spectator's."""
        ...

    async def submit(self, game_id: str, seat: int, orders: dict[str, Any], version: int, key: str,
                     draft: bool) -> dict[str, Any]:
        """Orders for a simultaneous round."""
        ...

    async def act(self, game_id: str, seat: int, action: dict[str, Any], key: str) -> dict[str, Any]:
        """An immediate action (chat, trade)."""
        ...

    async def action(self, game_id: str, seat: int, action: dict[str, Any], key: str,
                     version: int | None = None, kind: str = "") -> dict[str, Any]:
        """A turn or window action of a turn-based game (``kind``: the game kind the client meant)."""
        ...

    async def set_standing(self, game_id: str, seat: int, standing: dict[str, Any], key: str) -> dict[str, Any]: ...

    async def updates(self, game_id: str, seat: int, after_seq: int, min_version: int = 0) -> dict[str, Any]: ...

    async def presence_changed(self, game_id: str) -> None: ...

    async def state_hash(self, game_id: str) -> dict[str, Any]: ...

    # ---------------------------------------------------------------- operators and placement
    async def inspect(self, game_id: str) -> dict[str, Any]: ...

    async def end_game(self, game_id: str, reason: str = "") -> dict[str, Any]: ...

    async def list_games(self) -> dict[str, Any]: ...

    async def stats(self) -> dict[str, Any]:
        """The shard's name, pid, games held, deadlines armed and fired, draining."""
        ...

    async def set_draining(self, draining: bool) -> dict[str, Any]: ...

    async def release(self) -> int: ...

    async def adopt(self, game_id: str) -> dict[str, Any]: ...

    # ---------------------------------------------------------------- finished games (community.proto)
    async def replay_frame(self, game_id: str, frame: int, seat: int) -> dict[str, Any]:
        """ReplayFrame's fields (``view`` a view dict, as ``view`` answers): frame ``frame`` of a finished
        game seen by ``seat`` (-1: the whole game). NotOver while it runs; InvalidOrder naming ``frame``
        or ``seat`` out of range."""
        ...

    async def export_game(self, game_id: str) -> dict[str, Any]:
        """ExportGameResponse's fields: ``format``, ``records`` (JSON text each, docs/replay-format.md),
        ``state_hash``. NotOver while the game runs."""
        ...


#: the method names a shard answers (any other is refused)
METHODS: frozenset[str] = frozenset(
    name for name, value in vars(ShardApi).items() if callable(value) and not name.startswith("_"))


class _Calls:
    """Sends each method call through ``send(method, args)``."""

    def __init__(self, send: Callable[[str, tuple[Any, ...]], Awaitable[Any]]) -> None:
        self._send = send

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        if name not in METHODS:
            raise AttributeError(f"ShardApi has no method {name!r}")

        async def call(*args: Any) -> Any:
            return await self._send(name, args)

        call.__name__ = name
        return call


def typed(send: Callable[[str, tuple[Any, ...]], Awaitable[Any]]) -> ShardApi:
    """A ``ShardApi`` whose calls go through ``send`` (positional arguments only)."""
    return cast(ShardApi, _Calls(send))
