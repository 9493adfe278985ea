"""The rpcs of the Community service (community.proto), as :mod:`gateway.rpc` does the Lobby's and
the Game's: protobuf message in -> player API -> message out, the same for every door.

The player API's parts behind them: quick play (:mod:`gateway.quickplay`), spectators
(:meth:`gateway.watch.Watch.spectate`), profiles, ratings, leaderboards and history
(:mod:`gateway.profiles`), replays and exports (:mod:`gateway.replays`). ``secret`` is the caller's
``authorization`` bearer: a profile secret (``prf_…``) or a player secret, or "".
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.protobuf.message import Message

from archipelago.v1 import community_pb2 as cp
from archipelago.v1 import game_pb2, lobby_pb2
from gateway import convert
from gateway.api import PlayerAPI

SPEED_ENUM = {"fast": lobby_pb2.SPEED_FAST, "slow": lobby_pb2.SPEED_SLOW}


def _speed(name: str) -> lobby_pb2.Speed:
    return SPEED_ENUM.get(name, lobby_pb2.SPEED_UNSPECIFIED)


def profile_message(p: dict[str, Any]) -> cp.Profile:
    return cp.Profile(handle=p["handle"], created_unix_ms=int(p["created_unix_ms"]), games=int(p.get("games", 0)),
                      ratings=[cp.Rating(**{**r, "speed": _speed(r["speed"])}) for r in p.get("ratings", ())])


def _secret_message(made: dict[str, Any]) -> cp.ProfileSecret:
    return cp.ProfileSecret(profile=profile_message(made["profile"]), secret=made["secret"], link=made["link"])


async def quick_play(api: PlayerAPI, req: cp.QuickPlayRequest, secret: str) -> Message:
    which = req.WhichOneof("options")
    options = {which: convert.to_dict(getattr(req, which))} if which else None
    got = await api.quick.play(game=req.game, speed=convert.speed_name(req.speed), seats=req.seats,
                               nickname=req.nickname, request_id=req.request_id,
                               allow_autopilot=req.allow_autopilot, options=options, profile_secret=secret)
    return cp.QuickPlayResponse(**{**got, "status": convert.STATUS[got["status"]]})


async def list_live_games(api: PlayerAPI, req: cp.ListLiveGamesRequest, _secret: str) -> Message:
    games = await api.live_games(req.game)
    return cp.ListLiveGamesResponse(games=[
        cp.LiveGame(summary=convert.summary_message(g["summary"]), started_unix_ms=g["started_unix_ms"],
                    spectators=g["spectators"], players=[game_pb2.PlayerInfo(**p) for p in g["players"]])
        for g in games])


async def get_spectator_view(api: PlayerAPI, req: cp.GetSpectatorViewRequest, _secret: str) -> Message:
    return convert.view_response(await api.spectator_view(req.game_id))


async def create_profile(api: PlayerAPI, req: cp.CreateProfileRequest, _secret: str) -> Message:
    return _secret_message(await api.profiles.create(req.handle, req.request_id))


async def get_my_profile(api: PlayerAPI, _req: cp.GetMyProfileRequest, secret: str) -> Message:
    return profile_message(await api.profiles.mine(secret))


async def reset_profile_secret(api: PlayerAPI, req: cp.ResetProfileSecretRequest, secret: str) -> Message:
    return _secret_message(await api.profiles.reset(secret, req.request_id))


async def get_profile(api: PlayerAPI, req: cp.GetProfileRequest, _secret: str) -> Message:
    return profile_message(await api.profiles.get(req.handle))


def _change(c: dict[str, Any] | None) -> cp.RatingChange | None:
    return None if not c else cp.RatingChange(**c)


async def list_profile_games(api: PlayerAPI, req: cp.ListProfileGamesRequest, _secret: str) -> Message:
    got = await api.profiles.games(req.handle, req.limit, req.offset)
    return cp.ListProfileGamesResponse(total=got["total"], games=[
        cp.PlayedGame(**{**g, "speed": _speed(g["speed"]), "rating": _change(g.get("rating"))})
        for g in got["games"]])


async def get_leaderboard(api: PlayerAPI, req: cp.GetLeaderboardRequest, _secret: str) -> Message:
    got = await api.profiles.leaderboard(req.game, convert.speed_name(req.speed), req.limit, req.offset)
    return cp.GetLeaderboardResponse(game=got["game"], speed=_speed(got["speed"]), total=got["total"],
                                     entries=[cp.LeaderboardEntry(**e) for e in got["entries"]])


async def get_replay(api: PlayerAPI, req: cp.GetReplayRequest, secret: str) -> Message:
    got = await api.replays.frame(secret, req.game_id, req.frame, req.seat)
    return cp.ReplayFrame(game_id=got["game_id"], game=got["game"], frames=got["frames"], frame=got["frame"],
                          round=got["round"], seat=got["seat"], view=convert.view_response(got["view"]))


async def export_game(api: PlayerAPI, req: cp.ExportGameRequest, secret: str) -> Message:
    got = await api.replays.export(secret, req.game_id)
    return cp.ExportGameResponse(format=got["format"], records=got["records"], state_hash=got["state_hash"])


async def spectate(api: PlayerAPI, req: cp.SpectateRequest, _secret: str) -> AsyncGenerator[game_pb2.Update, None]:
    """Checks the game and ``after_seq`` at once (errors before the first update, as Watch does); the
    iterator must be closed."""
    return convert.update_messages(await api.spectate(req.game_id, req.after_seq))


#: (name, request type, handler) of every unary rpc of the Community service
UNARY_COMMUNITY: tuple[tuple[str, type[Message], Any], ...] = (
    ("QuickPlay", cp.QuickPlayRequest, quick_play),
    ("ListLiveGames", cp.ListLiveGamesRequest, list_live_games),
    ("GetSpectatorView", cp.GetSpectatorViewRequest, get_spectator_view),
    ("CreateProfile", cp.CreateProfileRequest, create_profile),
    ("GetMyProfile", cp.GetMyProfileRequest, get_my_profile),
    ("ResetProfileSecret", cp.ResetProfileSecretRequest, reset_profile_secret),
    ("GetProfile", cp.GetProfileRequest, get_profile),
    ("ListProfileGames", cp.ListProfileGamesRequest, list_profile_games),
    ("GetLeaderboard", cp.GetLeaderboardRequest, get_leaderboard),
    ("GetReplay", cp.GetReplayRequest, get_replay),
    ("ExportGame", cp.ExportGameRequest, export_game),
)
