"""`archipelago play --quick GAME`: "Play now" (community.proto QuickPlay) from the terminal — a seat in
the public quick-play lobby of the game, speed and size that is closest to full, or a new one the player
opens (and hosts); then the game is played as `play CODE` plays it."""

from __future__ import annotations

import argparse
import secrets
import time
from collections.abc import Mapping

from google.protobuf.message import Message

from archipelago.v1 import community_pb2 as cp
from archipelago.v1 import lobby_pb2
from client.base import BaseClient
from client.seating import retry_once

SPEEDS = {"fast": lobby_pb2.SPEED_FAST, "slow": lobby_pb2.SPEED_SLOW}
PROFILE_PREFIX = "prf_"  # a profile secret (community.proto): the seat is played under that profile


def check_args(args: argparse.Namespace, secret: str | None) -> None:
    """``--quick`` takes a new seat: no CODE, no seat's secret (a profile secret is fine); SystemExit
    naming what does not fit."""
    if args.code:
        raise SystemExit(f"play: give a CODE or --quick {args.quick}, not both")
    if secret and not secret.startswith(PROFILE_PREFIX):
        raise SystemExit("play --quick takes a new seat: no seat's secret (--secret, --secret-file, env "
                         "ARCHIPELAGO_SECRET); a profile secret (prf_…) is fine: the seat is played under it")
    if args.speed not in SPEEDS:
        raise SystemExit(f"--speed: fast or slow for --quick, got {args.speed!r}")


def describe(resp: cp.QuickPlayResponse) -> list[str]:
    """What the player reads once seated: where, and when the game starts."""
    where = f"seat {resp.seat} of {resp.game} game {resp.code}"
    lines = [f"opened a quick-play lobby: {where}" if resp.opened else f"joined {where}"]
    if resp.status == lobby_pb2.GAME_STATUS_RUNNING:
        lines.append("the game has started")
    elif resp.starts_unix_ms:
        at = time.strftime("%H:%M:%S %Z", time.localtime(resp.starts_unix_ms / 1000))
        lines.append(f"it starts when every seat is taken, or at {at} with the autopilot in the seats still empty")
    else:
        lines.append("it starts when every seat is taken")
    return lines


async def quick_seat(c: BaseClient, args: argparse.Namespace, nickname: str,
                     options: Mapping[str, Message] | None = None) -> cp.QuickPlayResponse:
    """Play now (a random request id, retried once with it: the same seat and secret); the client then
    acts as the new player."""
    rid = secrets.token_urlsafe(24)
    resp = await retry_once(lambda: c.quick_play(args.quick, speed=SPEEDS[args.speed], seats=args.seats or 0,
                                                 nickname=nickname, request_id=rid,
                                                 allow_autopilot=bool(args.autopilot), **dict(options or {})))
    c.secret = resp.secret
    return resp
