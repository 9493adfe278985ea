"""Watch: a player's updates after a ``seq``, then new ones as pub/sub notices announce new versions; and
the same for a spectator of a public game (Spectate, community.proto), with the list of games to watch.

A notice can arrive before the shard has applied the version it announces (it leaves with the journal
write), so the read names the announced version and the shard waits for it: a stream never goes silent
on an update it was told of. A player's stream is its presence (:mod:`gateway.presence`); a spectator's
never is.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from engine.errors import NotFound, Unauthenticated, Unavailable
from gateway.auth import Caller
from gateway.limits import PEER
from gateway.metrics import fanned_out
from gateway.presence import DOOR
from services.actor_core import SPECTATOR

if TYPE_CHECKING:
    from gateway.api import PlayerAPI


class Watch:
    """The update streams of a player API: players' (:meth:`watch`) and spectators' (:meth:`spectate`)."""

    def __init__(self, api: PlayerAPI) -> None:
        self.api = api

    async def watch(self, secret: str, game_id: str, after_seq: int = 0) -> AsyncGenerator[dict[str, Any], None]:
        """The caller's updates with seq > ``after_seq``, then live ones, until the game is over.

        Authentication fails before the first update.  However the consumer leaves (closes the
        iterator, is cancelled, the client goes away), the stream is unregistered, its presence
        removed and the others told."""
        who = await self.api.auth(secret, game_id)
        return self._stream(who, max(0, after_seq), DOOR.get())

    async def _stream(self, who: Caller, after_seq: int, door: str) -> AsyncGenerator[dict[str, Any], None]:
        notices, presence = self.api.notices, self.api.presence
        box = notices.subscribe_now(who.game_id)  # no await before the try: nothing can leak
        sid = presence.open(who, door)
        try:
            await notices.ready(who.game_id)  # subscribed before the first read: no notice missed
            await presence.arrived(who, sid)
            presence.later(presence.changed(who.game_id))  # may close the round (A17); not waited for
            async for u in self._updates(who, after_seq, door, box):
                yield u
        finally:
            notices.unsubscribe_now(who.game_id, box)
            presence.close(sid)
            presence.later(presence.gone(who.game_id, who.seat, sid))

    async def _updates(self, who: Caller, after_seq: int, door: str, box: Any) -> AsyncGenerator[dict[str, Any], None]:
        """The updates of ``who`` (a seat, or ``SPECTATOR``) after ``after_seq``, then live ones as
        ``box`` (subscribed) hears of new versions, until the game is over."""
        game_id, seat = who.game_id, who.seat
        since, target = after_seq, 0
        while True:
            got = await self.api.router.game(game_id).updates(game_id, seat, since, target)
            version = int(got["version"])
            updates = got["updates"]
            for i, u in enumerate(updates):
                if door == "mcp" and i == len(updates) - 1:  # an agent's wait reads the stream in this
                    fanned_out(door, box.sent(version))  # process and may stop at it: handed over = sent
                yield u
                since = max(since, int(u["seq"]))
            # (resumed after the last one: the door has written them; notices that made no update
            # for this seat are forgotten unmeasured)
            sent = box.sent(version)
            if updates and door != "mcp":
                fanned_out(door, sent)
            if got["over"]:
                return  # game_over was the last update
            target = max(target, version)  # a version not applied after the wait is not waited for again
            while box.version <= target and not box.stale:
                await box.wait()
                if self.api.closing:
                    raise Unavailable("this gateway is stopping: watch again (another gateway) from your last "
                                      "seq", field="game_id")
                if who.agent and who.agent in box.revoked:
                    raise Unauthenticated("this agent token was revoked", field="authorization", rule="A90")
                while box.presence:
                    other, connected = box.presence.popleft()
                    if other != seat:
                        yield {"version": version, "seq": 0, "round": 0, "seat": other,
                               "kind": "connected" if connected else "disconnected"}
            box.stale = False  # (nudged: notices may be lost; read again, waiting for nothing new)
            target = max(target, box.version)

    # ------------------------------------------------------------------ spectators (community.proto)
    async def _public_game(self, game_id: str) -> dict[str, Any]:
        """The summary of a public game; NotFound for an unknown or private one (alike: a private game's
        existence is not told)."""
        summary = await self.api.store.summary(game_id) if 0 < len(game_id) <= 64 else None
        if summary is None or not summary.get("public"):
            raise NotFound(f"no public game {game_id[:40]!r}", field="game_id")
        return summary

    async def spectator_view(self, game_id: str) -> dict[str, Any]:
        """What a spectator sees of a public game (what every player knows; everything once over)."""
        self.api.limiter.read_call()
        await self._public_game(game_id)
        result: dict[str, Any] = await self.api.router.game(game_id).view(game_id, SPECTATOR)
        return result

    async def spectate(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[dict[str, Any], None]:
        """A spectator's updates of a public game after ``after_seq``, then live ones, until the game is
        over. Refused before the first update: an unknown or private game, a bad ``after_seq``, a game
        with ``spectators_per_game`` spectator streams here, an address with ``spectate_per_address``."""
        from gateway.rpc import check_after_seq

        api = self.api
        check_after_seq(after_seq)
        api.limiter.read_call()
        await self._public_game(game_id)
        if after_seq > 0:
            latest = await api.router.game(game_id).view(game_id, SPECTATOR)
            check_after_seq(after_seq, int(latest["seq"]))
        limits, peer = api.config.limits, PEER.get()
        if limits.enabled:
            if api.presence.spectators_of(game_id) >= limits.spectators_per_game:
                raise api.limiter.spectators_full(f"this game has {limits.spectators_per_game} spectators on this "
                                                  "gateway, the most it takes")
            if peer and api.presence.spectators_of(peer=peer) >= limits.spectate_per_address:
                raise api.limiter.spectators_full(f"at most {limits.spectate_per_address} spectator streams per "
                                                  "client address")
        return self._spectator_stream(game_id, after_seq, peer, DOOR.get())

    async def _spectator_stream(self, game_id: str, after_seq: int, peer: str, door: str
                                ) -> AsyncGenerator[dict[str, Any], None]:
        notices, presence = self.api.notices, self.api.presence
        box = notices.subscribe_now(game_id)  # no await before the try: nothing can leak
        sid = presence.open_spectator(game_id, peer)
        try:
            await notices.ready(game_id)
            async for u in self._updates(Caller(game_id, SPECTATOR), after_seq, door, box):
                yield u
        finally:
            notices.unsubscribe_now(game_id, box)
            presence.close_spectator(sid)

    async def live_games(self, game: str = "") -> list[dict[str, Any]]:
        """Public games being played (and finished within the last hour), newest first, with their
        players and this gateway's spectators."""
        self.api.limiter.read_call()
        out = []
        for s in await self.api.store.live_games():
            if game and s["game"] != game:
                continue
            out.append({"summary": s, "started_unix_ms": int(s.get("started_ms", 0)),
                        "spectators": self.api.presence.spectators_of(s["game_id"]),
                        "players": [{"seat": p["seat"], "nickname": p["nickname"], "handle": p.get("handle", ""),
                                     "autopilot": bool(p.get("autopilot")), "host": p["seat"] == 0}
                                    for p in s.get("players", ())]})
        return out


__all__ = ["Watch"]
