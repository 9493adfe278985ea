"""The `archipelago` command: serve, create, join, bot, play, admin.

Only `serve` imports the server (gateway, services, Ray); the client commands import the client alone."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from archipelago.v1 import lobby_pb2
    from client.base import BaseClient

T = TypeVar("T")
DEFAULT_GRPC_PORT = 50051


def resolve_server(flag: str | None, env: Mapping[str, str] | None = None) -> str:
    """The gateway's gRPC address: ``--server``, else ``ARCHIPELAGO_SERVER``, else
    ``127.0.0.1:${ARCHIPELAGO_GRPC_PORT:-50051}`` (the port `archipelago serve` listens on)."""
    env = os.environ if env is None else env
    if flag:
        return flag
    if env.get("ARCHIPELAGO_SERVER"):
        return env["ARCHIPELAGO_SERVER"]
    port = env.get("ARCHIPELAGO_GRPC_PORT") or str(DEFAULT_GRPC_PORT)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SystemExit(f"ARCHIPELAGO_GRPC_PORT: expected a port number, got {port!r}")
    return f"127.0.0.1:{int(port)}"


def _server(args: argparse.Namespace) -> str:
    return resolve_server(args.server)


def _speed(value: str) -> dict[str, object]:
    from archipelago.v1 import lobby_pb2

    if value == "fast":
        return {"speed": lobby_pb2.SPEED_FAST}
    if value == "slow":
        return {"speed": lobby_pb2.SPEED_SLOW}
    try:
        return {"deadline_seconds": float(value)}
    except ValueError:
        raise SystemExit(f"--speed: expected fast, slow or a number of seconds, got {value!r}") from None


def game_options(args: argparse.Namespace) -> dict[str, object]:
    """The game's options for CreateGame (the game module's, :mod:`client.games`): the seats within the
    game's range, a flag of another game refused; SystemExit naming the option that does not fit."""
    from client.games import a_or_an, game_client, refuse_foreign_args

    game = game_client(args.game)
    lo, hi = game.seats
    if not lo <= args.seats <= hi:
        span = f"{lo}-{hi}" if lo != hi else str(lo)
        raise SystemExit(f"--seats: {a_or_an(game.title)} game has {span} seats ({game.seats_rule}), got {args.seats}")
    refuse_foreign_args(args, "create_args", game)
    return dict(game.create_options(args))


def seat_options(args: argparse.Namespace) -> dict[str, Message]:
    """A joining player's own choices (JoinGameRequest's member named after the game, e.g. Arcmage's
    ``--deck``); the server refuses those of another game than the one joined."""
    from client.games import all_clients

    out: dict[str, Message] = {}
    for game in all_clients():
        out.update(game.seat_options(args))
    return out


async def _create(args: argparse.Namespace) -> int:
    from client.grpc_client import Client

    options = game_options(args)
    async with Client(_server(args)) as c:
        def create() -> Awaitable[lobby_pb2.CreateGameResponse]:
            return c.create(args.game, seats=args.seats, nickname=args.nickname, public=args.public,
                            request_id=args.request_id or "", **_speed(args.speed), **options)

        resp = await (retry_once(create) if args.request_id else create())
    print(f"game: {resp.game_id}")
    print(f"code: {resp.code}")
    print(f"invite: {resp.invite_link}")
    print(f"secret: {resp.secret}")
    return 0


async def retry_once(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, once more when the reply may have been lost (UNAVAILABLE, a broken connection).
    Only for requests that carry a request id: the server answers a repeat as it did the first."""
    from client.errors import ApiError

    try:
        return await call()
    except (ApiError, OSError) as err:
        if isinstance(err, ApiError) and err.status != "UNAVAILABLE":
            raise
    return await call()


async def join(c: BaseClient, code: str, nickname: str, request_id: str | None = None,
               options: Mapping[str, Message] | None = None) -> lobby_pb2.JoinGameResponse:
    """JoinGame with a random request id (retried once with the same id: the same seat and secret);
    ``options``: the seat's own choices (by game kind, e.g. Arcmage's ArcmageSeatOptions)."""
    rid = request_id or secrets.token_urlsafe(24)
    return await retry_once(lambda: c.join(code, nickname, request_id=rid, **dict(options or {})))


async def _seat(c: BaseClient, code: str, secret: str | None, nickname: str | None,
                options: Mapping[str, Message] | None = None) -> str:
    """Become a player of the game with this code; returns the game id."""
    if secret:
        who = await c.rejoin()
        if who.code != code.upper():
            raise SystemExit(f"this secret belongs to game {who.code}, not {code}")
        if options:
            print(f"warning: {', '.join(options)} seat options ignored: the seat is already taken", file=sys.stderr,
                  flush=True)
        print(f"playing seat {who.seat} ({who.nickname}) of game {who.code}", flush=True)
        return who.game_id
    joined = await join(c, code, nickname or f"bot-{secrets.token_hex(2)}", options=options)
    print(f"joined seat {joined.seat} of game {code}", flush=True)
    print(f"secret: {joined.secret}", flush=True)
    return joined.game_id


def player_secret(args: argparse.Namespace) -> str | None:
    """The seat's secret: ``--secret-file`` (first line), else env ``ARCHIPELAGO_SECRET``, else
    ``--secret`` (which every user of the machine can read in ``ps``: warned)."""
    if getattr(args, "secret_file", None):
        return Path(args.secret_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
    if os.environ.get("ARCHIPELAGO_SECRET"):
        return os.environ["ARCHIPELAGO_SECRET"].strip()
    if args.secret:
        print("warning: --secret shows your secret to every user of this machine (ps); prefer "
              "ARCHIPELAGO_SECRET=… or --secret-file", file=sys.stderr, flush=True)
    secret: str | None = args.secret
    return secret


async def _join(args: argparse.Namespace) -> int:
    from client.grpc_client import Client

    options = seat_options(args)
    async with Client(_server(args)) as c:
        joined = await join(c, args.code, args.nickname or os.environ.get("USER", "player"), args.request_id,
                            options)
    print(f"game: {joined.game_id}")
    print(f"seat: {joined.seat}")
    print(f"secret: {joined.secret}")
    return 0


async def _bot(args: argparse.Namespace) -> int:
    from client.bot import describe_outcome, play_seat
    from client.grpc_client import Client

    secret = player_secret(args)
    async with Client(_server(args), secret) as c:
        game_id = await _seat(c, args.code, secret, args.nickname, seat_options(args))
        final = await play_seat(c, game_id, log=lambda m: print(m, flush=True))
        print(describe_outcome(final), flush=True)
    return 0


async def _play(args: argparse.Namespace) -> int:
    from client.grpc_client import Client
    from client.play import play

    secret = player_secret(args)
    async with Client(_server(args), secret) as c:
        game_id = await _seat(c, args.code, secret, args.nickname or os.environ.get("USER", "player"),
                              seat_options(args))
        return await play(c, game_id)


def _serve(args: argparse.Namespace) -> int:
    from gateway.app import serve

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    grpc_port = args.grpc_port or int(os.environ.get("ARCHIPELAGO_GRPC_PORT") or DEFAULT_GRPC_PORT)
    http_port = args.http_port or int(os.environ.get("ARCHIPELAGO_HTTP_PORT") or "8080")
    shards = args.shards or int(os.environ.get("ARCHIPELAGO_SHARDS") or "2")
    gateways = args.gateways or int(os.environ.get("ARCHIPELAGO_GATEWAYS") or "1")
    if gateways < 1:
        print("error: --gateways must be at least 1", file=sys.stderr)
        return 2
    asyncio.run(serve(host=args.host, grpc_port=grpc_port, http_port=http_port, shards=shards,
                      data_dir=Path(args.data_dir), gateways=gateways))
    return 0


SERVER_HELP = ("the gateway's gRPC address HOST:PORT (env ARCHIPELAGO_SERVER; default "
               "127.0.0.1:$ARCHIPELAGO_GRPC_PORT, 50051)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="archipelago", description="Archipelago game cluster")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the cluster (local Ray, Redis, shards, gateway)")
    s.add_argument("--grpc-port", type=int, default=0, help="gRPC port (env ARCHIPELAGO_GRPC_PORT, 50051)")
    s.add_argument("--http-port", type=int, default=0, help="HTTP port (env ARCHIPELAGO_HTTP_PORT, 8080)")
    s.add_argument("--host", default=os.environ.get("ARCHIPELAGO_HOST", "127.0.0.1"))
    s.add_argument("--shards", type=int, default=0, help="GameShard actors (env ARCHIPELAGO_SHARDS, 2)")
    s.add_argument("--gateways", type=int, default=0,
                   help="gateway processes sharing the two ports (SO_REUSEPORT; env ARCHIPELAGO_GATEWAYS, 1)")
    s.add_argument("--data-dir", default=os.environ.get("ARCHIPELAGO_DATA_DIR", "var"))
    s.set_defaults(fn=_serve)

    from client.games import GAMES, add_args, all_clients

    c = sub.add_parser("create", help="create a game; prints its code, invite link and your secret")
    c.add_argument("game", choices=list(GAMES))
    c.add_argument("--seats", type=int, default=2,
                   help="; ".join(f"{g.title}: {g.seats[0]}" + (f"-{g.seats[1]}" if g.seats[1] != g.seats[0] else "")
                                  + (f" ({g.seats_rule})" if g.seats_rule else "") for g in all_clients()))
    add_args(c, "create_args")
    c.add_argument("--speed", default="fast", help="fast, slow or seconds: rounds of 60 s or 8 h; Arcmage's turns "
                   "and windows 120 s and 15 s, or 24 h and 1 h (M25)")
    c.add_argument("--nickname", default="host")
    c.add_argument("--public", action="store_true", help="list the game for anyone to join")
    c.add_argument("--request-id", help="16-64 random characters, kept secret: running the same create again "
                   "with the same id returns the same game and secret (a lost reply loses nothing)")
    c.add_argument("--server", help=SERVER_HELP)
    c.set_defaults(fn=lambda a: asyncio.run(_create(a)))

    j = sub.add_parser("join", help="take a free seat of a game; prints your seat and secret (then play or bot "
                       "with ARCHIPELAGO_SECRET)")
    j.add_argument("code")
    j.add_argument("--nickname")
    j.add_argument("--request-id", help="as create's: the same id again returns the same seat and secret")
    add_args(j, "seat_args")
    j.add_argument("--server", help=SERVER_HELP)
    j.set_defaults(fn=lambda a: asyncio.run(_join(a)))

    b = sub.add_parser("bot", help="play a seat with the autopilot until the game ends")
    b.add_argument("code")
    b.add_argument("--secret", help="play this existing seat (as host: start once every seat is filled); "
                   "visible in ps — prefer env ARCHIPELAGO_SECRET or --secret-file")
    b.add_argument("--secret-file", help="read the seat's secret from this file (its first line)")
    b.add_argument("--nickname")
    add_args(b, "seat_args")
    b.add_argument("--server", help=SERVER_HELP)
    b.set_defaults(fn=lambda a: asyncio.run(_bot(a)))

    pl = sub.add_parser("play", help=f"play {', '.join(g.title for g in all_clients())} in the terminal")
    pl.add_argument("code")
    pl.add_argument("--secret", help="play this existing seat; visible in ps — prefer env ARCHIPELAGO_SECRET "
                    "or --secret-file")
    pl.add_argument("--secret-file", help="read the seat's secret from this file (its first line)")
    pl.add_argument("--nickname")
    add_args(pl, "seat_args")
    pl.add_argument("--server", help=SERVER_HELP)
    pl.set_defaults(fn=lambda a: asyncio.run(_play(a)))

    from client.admin import add_parser as add_admin

    add_admin(sub)  # archipelago admin shards|games|game|end|drain|activate
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from client.errors import ApiError

        if isinstance(exc, ApiError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
