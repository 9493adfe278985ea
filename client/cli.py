"""The `archipelago` command: serve, create, join, bot, play, notify, replay, admin.

`serve` is the server's command (:mod:`gateway.serve`): :func:`main` hands it over, and nothing else here
imports the server (gateway, services, Ray); the client commands import the client alone (`replay`:
the engine and the pure services.replay, no Redis or Ray)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from client.seating import join, player_secret, retry_once, secret_sink, show_secret, take_seat

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from archipelago.v1 import lobby_pb2
DEFAULT_GRPC_PORT = 50051  # where `archipelago serve` listens by default (gateway.serve's DEFAULT_GRPC_PORT)
DIST_NAME = "archipelago-cluster"  # pyproject's [project] name
NICKNAME_MAX = 24  # A2: 1-24 printable characters (services/actor_core.py check_nickname)


def package_version() -> str:
    """The installed package's version, else pyproject.toml's (a source tree run without install)."""
    from importlib import metadata

    try:
        return metadata.version(DIST_NAME)
    except metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
        return str(pyproject["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def nickname(value: str) -> str:
    """An argparse type: the nickname rule A2 checked before any call (the server checks it again)."""
    if not 1 <= len(value) <= NICKNAME_MAX or not value.isprintable() or not value.strip():
        raise argparse.ArgumentTypeError(
            f"a nickname is 1-{NICKNAME_MAX} printable characters, not only spaces (rule A2); got {value!r} "
            f"({len(value)} characters)")
    return value


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
    with secret_sink(args) as sink:
        async with Client(_server(args)) as c:
            def create() -> Awaitable[lobby_pb2.CreateGameResponse]:
                return c.create(args.game, seats=args.seats, nickname=args.nickname, public=args.public,
                                request_id=args.request_id or "", **_speed(args.speed), **options)

            resp = await (retry_once(create) if args.request_id else create())
        print(f"game: {resp.game_id}")
        print(f"code: {resp.code}")
        print(f"invite: {resp.invite_link}", flush=True)
        show_secret(resp.secret, sink, resp.code)
    return 0


async def _join(args: argparse.Namespace) -> int:
    from client.grpc_client import Client

    options = seat_options(args)
    with secret_sink(args) as sink:
        async with Client(_server(args)) as c:
            joined = await join(c, args.code, args.nickname or os.environ.get("USER", "player"), args.request_id,
                                options)
        print(f"game: {joined.game_id}")
        print(f"seat: {joined.seat}", flush=True)
        show_secret(joined.secret, sink, args.code.upper())
    return 0


async def _bot(args: argparse.Namespace) -> int:
    from client.bot import describe_outcome, play_seat
    from client.grpc_client import Client

    secret = player_secret(args)
    with secret_sink(args) as sink:  # (the bot never prints its secret: logs keep what it prints)
        async with Client(_server(args), secret) as c:
            game_id = await take_seat(c, args.code, secret, args.nickname, seat_options(args), sink=sink)
            final = await play_seat(c, game_id, log=lambda m: print(m, flush=True))
            print(describe_outcome(final), flush=True)
    return 0


async def _play(args: argparse.Namespace) -> int:
    from client.grpc_client import Client
    from client.play import play

    secret = player_secret(args)
    if args.quick:  # "Play now": a seat in a quick-play lobby (client.quick)
        from client.quick import check_args, describe, quick_seat

        check_args(args, secret)
    elif not args.code:
        raise SystemExit("play: give the game's CODE, or --quick GAME to play now")
    elif args.seats or args.autopilot or args.speed != "fast":
        raise SystemExit("play: --seats, --speed and --autopilot go with --quick GAME (a game's CODE has its own)")
    with secret_sink(args) as sink:
        async with Client(_server(args), secret) as c:
            if args.quick:
                quick = await quick_seat(c, args, args.nickname or os.environ.get("USER", "player"),
                                         seat_options(args))
                print("\n".join(describe(quick)), flush=True)
                show_secret(quick.secret, sink, quick.code)
                return await play(c, quick.game_id, secret_file=args.save_secret)
            game_id = await take_seat(c, args.code, secret, args.nickname or os.environ.get("USER", "player"),
                                  seat_options(args), sink=sink, keep=show_secret)
            return await play(c, game_id, secret_file=args.secret_file or args.save_secret)


async def _notify(args: argparse.Namespace) -> int:
    from client.grpc_client import Client
    from client.notify_cmd import run

    secret = player_secret(args)
    if not secret:
        raise SystemExit("notify: give your seat's secret (--secret-file FILE, env ARCHIPELAGO_SECRET or --secret): "
                         "only the player changes where its notifications go")
    async with Client(_server(args), secret) as c:
        return await run(c, args)


def _serve(argv: list[str]) -> int:
    """``archipelago serve ARGS…``: the server's own command (:mod:`gateway.serve`, its flags included),
    imported here only: no other command of the client imports the server."""
    from gateway.serve import main as serve_main

    return serve_main(argv)


SERVE_HELP = "run the cluster (local Ray, Redis, shards, gateway)"
SERVER_HELP = ("the gateway's gRPC address (default: env ARCHIPELAGO_SERVER, else "
               "127.0.0.1:$ARCHIPELAGO_GRPC_PORT, i.e. 127.0.0.1:50051)")
CODE_HELP = "the game's 6-character code (create prints it; an invite link ends with it: …/join/CODE)"
NICKNAME_RULE = f"1-{NICKNAME_MAX} printable characters, unique in the game (A2)"
SAVE_SECRET_HELP = ("write the new seat's secret to FILE (created with mode 0600; refused if FILE exists) "
                    "instead of printing it; come back later with --secret-file FILE")
SECRET_HELP = ("play this existing seat (its secret, printed or saved when the seat was taken); visible to "
               "every user of the machine in ps — prefer env ARCHIPELAGO_SECRET or --secret-file")
SECRET_FILE_HELP = "play the existing seat whose secret is the first line of FILE (as --save-secret wrote it)"
PLAY_EPILOG = ("In the game, type `help` for its commands. Leaving (quit, Ctrl-D or Ctrl-C) keeps your seat: "
               "run play again with your secret (--secret-file FILE or env ARCHIPELAGO_SECRET) and you are back; "
               "within the presence grace (20 s by default, A17) the round still waits for you, past it the "
               "autopilot plays for you meanwhile.")
TOP_EPILOG = ("A player's secret is the only way back to its seat and whoever holds it plays as that player: "
              "create and join print it once (or --save-secret FILE keeps it in a file); bot never prints it. "
              "Give it to play or bot with env ARCHIPELAGO_SECRET or --secret-file FILE.")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="archipelago", epilog=TOP_EPILOG,
                                description="Archipelago game cluster: run it (serve), create and join games of "
                                "Salvo, Archipelago and Arcmage, play them in the terminal or with a bot, "
                                "and operate the cluster (admin).")
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # `serve` is the server's command: main() hands it and its flags to gateway.serve (listed here for --help)
    sub.add_parser("serve", help=SERVE_HELP, add_help=False).set_defaults(fn=lambda a: _serve([]))
    for add in (_add_create, _add_join, _add_bot, _add_play, _add_notify):
        add(sub)

    from client.replay_cmd import add_parser as add_replay

    add_replay(sub)  # archipelago replay FILE (a finished game's export, replayed here)

    from client.admin import add_parser as add_admin

    add_admin(sub)  # archipelago admin shards|games|game|end|drain|activate|remove
    return p


def _add_seat_flags(p: argparse.ArgumentParser, *, nickname_help: str, save_secret_help: str) -> None:
    """The flags of a command that plays a seat (bot, play): the seat's secret (or a free seat under a
    nickname, with the game's own seat choices), where a new seat's secret goes, the server."""
    from client.games import add_args

    p.add_argument("--secret", help=SECRET_HELP)
    p.add_argument("--secret-file", metavar="FILE", help=SECRET_FILE_HELP)
    p.add_argument("--nickname", type=nickname, help=nickname_help)
    add_args(p, "seat_args")
    p.add_argument("--save-secret", metavar="FILE", help=save_secret_help)
    p.add_argument("--server", metavar="HOST:PORT", help=SERVER_HELP)


def _add_create(sub: Any) -> None:
    """`archipelago create GAME`."""
    from client.games import GAMES, add_args, all_clients

    c = sub.add_parser("create", help="create a game; prints its code, invite link and your secret",
                       description="Create a game and take its first seat (the host's: start it once every seat is "
                       "filled, e.g. with `bot CODE --secret-file FILE`).")
    c.add_argument("game", choices=list(GAMES), metavar="GAME", help=f"the game: {', '.join(GAMES)}")
    c.add_argument("--seats", type=int, default=2,
                   help="how many players (default 2): " + "; ".join(
                       f"{g.title}: {g.seats[0]}" + (f"-{g.seats[1]}" if g.seats[1] != g.seats[0] else "")
                       + (f" ({g.seats_rule})" if g.seats_rule else "") for g in all_clients()))
    add_args(c, "create_args")
    c.add_argument("--speed", default="fast", help="fast (default), slow or seconds: rounds of 60 s or 8 h; Arcmage's "
                   "turns and windows 120 s and 15 s, or 24 h and 1 h (M25)")
    c.add_argument("--nickname", type=nickname, default="host", help=f"your name in the game: {NICKNAME_RULE}; "
                   "default host")
    c.add_argument("--public", action="store_true", help="list the game for anyone to join")
    c.add_argument("--request-id", help="16-64 random characters, kept secret: running the same create again "
                   "with the same id returns the same game and secret (a lost reply loses nothing)")
    c.add_argument("--save-secret", metavar="FILE", help=SAVE_SECRET_HELP)
    c.add_argument("--server", metavar="HOST:PORT", help=SERVER_HELP)
    c.set_defaults(fn=lambda a: asyncio.run(_create(a)))


def _add_join(sub: Any) -> None:
    """`archipelago join CODE`."""
    from client.games import add_args

    j = sub.add_parser("join", help="take a free seat of a game; prints your seat and secret (then play or bot "
                       "with ARCHIPELAGO_SECRET)",
                       description="Take a free seat of a game (before it starts) and print the seat and its "
                       "secret; then `play` or `bot` the seat with that secret.")
    j.add_argument("code", metavar="CODE", help=CODE_HELP)
    j.add_argument("--nickname", type=nickname, help=f"your name in the game: {NICKNAME_RULE}; default $USER")
    j.add_argument("--request-id", help="as create's: the same id again returns the same seat and secret")
    add_args(j, "seat_args")
    j.add_argument("--save-secret", metavar="FILE", help=SAVE_SECRET_HELP)
    j.add_argument("--server", metavar="HOST:PORT", help=SERVER_HELP)
    j.set_defaults(fn=lambda a: asyncio.run(_join(a)))


def _add_bot(sub: Any) -> None:
    """`archipelago bot CODE`."""
    b = sub.add_parser("bot", help="play a seat with the autopilot until the game ends",
                       description="Play a seat with the autopilot until the game ends: a free seat it joins, or "
                       "your own seat given by its secret (the host's starts the game once every seat is filled). "
                       "It prints its moves and the outcome, never its secret.")
    b.add_argument("code", metavar="CODE", help=CODE_HELP)
    _add_seat_flags(b, nickname_help=f"the bot's name when it joins a free seat: {NICKNAME_RULE}; default "
                    "bot-XXXX (random)", save_secret_help="when it joins a free seat, write that seat's secret to FILE "
                    "(mode 0600; refused if FILE exists); without it the secret is kept nowhere")
    b.set_defaults(fn=lambda a: asyncio.run(_bot(a)))


def _add_play(sub: Any) -> None:
    """`archipelago play CODE` or `play --quick GAME`."""
    from client.games import GAMES, all_clients, in_game_help

    pl = sub.add_parser("play", help=f"play {', '.join(g.title for g in all_clients())} in the terminal",
                        description="Play a game in the terminal: a free seat you join, or your own seat given by its "
                        "secret, or (--quick GAME) a seat in a public quick-play lobby.",
                        epilog=f"{PLAY_EPILOG} {in_game_help()}")
    pl.add_argument("code", metavar="CODE", nargs="?", help=CODE_HELP + "; or --quick GAME")
    pl.add_argument("--quick", metavar="GAME", choices=list(GAMES),
                    help=f"play now: a seat in the public quick-play lobby of GAME ({', '.join(GAMES)}) closest to "
                    "full, or a new one you open; it starts once every seat is taken")
    pl.add_argument("--seats", type=int, default=0,
                    help="with --quick: the game's size (default: Archipelago 4, Salvo 2, Arcmage 2)")
    pl.add_argument("--speed", default="fast", choices=["fast", "slow"], help="with --quick: fast (default) or slow")
    pl.add_argument("--autopilot", action="store_true",
                    help="with --quick, when you open the lobby: if it has not filled after its wait (5 minutes "
                    "for fast, by default), it starts with the autopilot in the seats still empty")
    _add_seat_flags(pl, nickname_help=f"your name when you join a free seat: {NICKNAME_RULE}; default $USER",
                    save_secret_help=SAVE_SECRET_HELP)
    pl.set_defaults(fn=lambda a: asyncio.run(_play(a)))


def _add_notify(sub: Any) -> None:
    """`archipelago notify GAME_ID`."""
    n = sub.add_parser("notify", help="show or change where your game's notifications go (webhook, email, web push)",
                       description="Show your notification settings of a game in words (each channel's state, kinds, "
                       "masked target, why it is disabled; whether the server sends email), or change them. Kinds: "
                       "game_started, your_turn, your_decision, deadline, trade_offer, private_chat, game_over "
                       "(those the game has). Setting a channel replaces its kinds too (the defaults unless --kinds "
                       "says).", epilog="A webhook receives signed JSON POSTs (notify.proto): the signing secret "
                       "is printed once, when the URL is set. Web push devices are added from a browser (the web "
                       "client's Notifications panel).")
    n.add_argument("game", metavar="GAME_ID", help="the game's id (create and join print it as `game: …`), or its "
                   "6-character code")
    n.add_argument("--secret", help="your seat's secret; visible to every user of the machine in ps — prefer env "
                   "ARCHIPELAGO_SECRET or --secret-file")
    n.add_argument("--secret-file", metavar="FILE", help="your seat's secret is the first line of FILE (as "
                   "--save-secret wrote it)")
    n.add_argument("--webhook", metavar="URL", help="POST notifications to this https URL (a Discord or Slack "
                   "incoming hook works as is); a new URL prints its signing secret once")
    n.add_argument("--webhook-off", action="store_true", help="turn the webhook off (and forget its URL and secret)")
    n.add_argument("--email", metavar="ADDRESS", help="mail notifications to this address, once you follow the "
                   "link of the confirmation mail sent to it (when the server sends email)")
    n.add_argument("--email-off", action="store_true", help="turn email off (and forget the address)")
    n.add_argument("--kinds", action="append", metavar="CHANNEL=KIND,KIND",
                   help="which kinds a channel (web_push, webhook, email) sends, e.g. webhook=your_turn,deadline; "
                   "repeatable; webhook= and email= go with --webhook and --email")
    n.add_argument("--language", choices=["en", "he"], help="the language of the notifications' words")
    n.add_argument("--json", action="store_true", help="print the settings as the NotificationSettings message in JSON "
                   "(proto field names) instead of words")
    n.add_argument("--server", metavar="HOST:PORT", help=SERVER_HELP)
    n.set_defaults(fn=lambda a: asyncio.run(_notify(a)))


#: options whose value is a secret: a seat's secret is URL-safe base64 and may begin with "-", which
#: argparse takes for an option of its own ("--secret -xY…": "expected one argument")
SECRET_OPTIONS = ("--secret",)


def join_secret_values(argv: list[str]) -> list[str]:
    """``--secret VALUE`` as ``--secret=VALUE``, so that a value beginning with "-" is read as the value."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] in SECRET_OPTIONS and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["serve"]:  # the server's command, flags and all (the top parser has no option that
            return _serve(argv[1:])  # takes a value: a first word "serve" is always the subcommand)
        args = build_parser().parse_args(join_secret_values(argv))
        return int(args.fn(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from client.errors import ApiError

        if isinstance(exc, ApiError):
            print(f"error: {exc.said()}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
