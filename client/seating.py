"""Taking a seat and keeping its secret, for every command that plays one (create, join, bot, play,
play --quick, notify): the request sent again when its reply may have been lost (:func:`retry_once`),
joining with a request id, taking a seat by its secret or a free one (:func:`take_seat`), where a new
seat's secret goes (the ``--save-secret`` file, else said once) and the line that tells a player how
to come back (:func:`come_back_line`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from client.errors import ApiError

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from archipelago.v1 import lobby_pb2
    from client.base import BaseClient

T = TypeVar("T")


def come_back_line(code: str, *, secret_file: str | None = None, server: str | None = None) -> str:
    """What a player leaving ``archipelago play`` reads on how to take its seat back, never the secret
    itself: "to come back: archipelago play 7KQ2ZP --secret-file seat.txt" (or, without a file,
    "ARCHIPELAGO_SECRET=<your secret> archipelago play 7KQ2ZP")."""
    argv = ["play", code, *(["--server", server] if server else [])]
    if secret_file:
        return f"to come back: archipelago {shlex.join([*argv, '--secret-file', secret_file])}"
    return f"to come back: ARCHIPELAGO_SECRET=<your secret> archipelago {shlex.join(argv)}"


class SecretFile:
    """``--save-secret FILE``: the file a new seat's secret goes to instead of the terminal. It is
    created (mode 0600, refused if it exists: it may hold another seat's secret) before the seat is
    taken, so that a seat is never taken whose secret cannot be kept."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise SystemExit(f"--save-secret {path}: the file exists (it may hold another seat's secret); "
                             "give a new path") from None
        except OSError as exc:
            raise SystemExit(f"--save-secret {path}: {exc.strerror or exc}") from None
        os.fchmod(self.fd, 0o600)

    def write(self, secret: str) -> None:
        assert self.fd is not None
        os.write(self.fd, (secret + "\n").encode())
        os.close(self.fd)
        self.fd = None

    def discard(self) -> None:
        """No seat was taken: the empty file goes."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)


@contextlib.contextmanager
def secret_sink(args: argparse.Namespace) -> Iterator[SecretFile | None]:
    """The ``--save-secret`` file of a command that takes a new seat (None without the flag); removed
    again when no seat was taken."""
    path = getattr(args, "save_secret", None)
    sink = SecretFile(path) if path else None
    try:
        yield sink
    finally:
        if sink is not None:
            sink.discard()


def show_secret(secret: str, sink: SecretFile | None, code: str) -> None:
    """A new seat's secret, said once: into the ``--save-secret`` file, else as the ``secret:`` line
    (the line scripts read), with a word on stderr on what it is for."""
    if sink is not None:
        sink.write(secret)
        print(f"secret saved in {sink.path} (mode 0600): {come_back_line(code, secret_file=sink.path)}", flush=True)
        return
    print(f"secret: {secret}", flush=True)
    print("(the secret above is the only way back to your seat, and whoever holds it plays as you: keep it; "
          f"{come_back_line(code)})", file=sys.stderr, flush=True)


async def retry_once(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, once more when the reply may have been lost (UNAVAILABLE, a broken connection).
    Only for requests that carry a request id: the server answers a repeat as it did the first."""
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


async def take_seat(c: BaseClient, code: str, secret: str | None, nickname: str | None,
                options: Mapping[str, Message] | None = None, *, sink: SecretFile | None = None,
                keep: Callable[[str, SecretFile | None, str], None] | None = None) -> str:
    """Become a player of the game with this code; returns the game id. A new seat's secret goes to
    ``keep`` (None: nowhere — the bot's, unless ``--save-secret``)."""
    if secret:
        if sink is not None:
            raise SystemExit("--save-secret: only for a new seat (this one's secret is already given)")
        who = await c.rejoin()
        if who.code != code.upper():
            raise SystemExit(f"this secret belongs to game {who.code}, not {code}")
        if options:
            print(f"warning: {', '.join(options)} seat options ignored: the seat is already taken", file=sys.stderr,
                  flush=True)
        print(f"playing seat {who.seat} ({who.nickname}) of game {who.code}", flush=True)
        return who.game_id
    joined = await join(c, code, nickname or f"bot-{secrets.token_hex(2)}", options=options)
    print(f"joined seat {joined.seat} of game {code.upper()}", flush=True)
    if sink is not None:
        sink.write(joined.secret)
        print(f"secret saved in {sink.path} (mode 0600)", flush=True)
    elif keep is not None:
        keep(joined.secret, sink, code.upper())
    else:
        print("(its secret is not kept: --save-secret FILE keeps it)", flush=True)
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
