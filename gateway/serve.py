"""`archipelago serve`, the server's command: its flags, their environment defaults, and the start of
the cluster (:func:`gateway.app.serve`: a private Redis, local Ray, the shards and the gateway).

It lives on the server's side so that the client imports nothing of the server: the ``archipelago``
command (:mod:`client.cli`) hands ``serve`` and everything after it to :func:`main` here — the only
place a client command reaches the server, and only for that subcommand. ``python -m gateway.serve``
runs the same.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

#: the gRPC port `serve` listens on by default (the client's default server address names the same
#: port: client.cli.DEFAULT_GRPC_PORT — the client may not import this module)
DEFAULT_GRPC_PORT = 50051
DEFAULT_HTTP_PORT = 8080
DEFAULT_HOST = "127.0.0.1"
DEFAULT_DATA_DIR = "var"
DEFAULT_SHARDS = 2
DEFAULT_GATEWAYS = 1
DESCRIPTION = ("Run the cluster on this machine: a private Redis, local Ray, the game shards and the gateway (gRPC "
               "and HTTP). With RAY_ADDRESS and REDIS_URL set it joins those instead.")


def add_arguments(s: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` (each defaults to its environment variable, else the built-in default)."""
    s.add_argument("--grpc-port", type=int, default=0, metavar="PORT",
                   help=f"gRPC port (default: env ARCHIPELAGO_GRPC_PORT, else {DEFAULT_GRPC_PORT})")
    s.add_argument("--http-port", type=int, default=0, metavar="PORT",
                   help="HTTP port: JSON API, WebSocket, web client, /metrics (default: env ARCHIPELAGO_HTTP_PORT, "
                   f"else {DEFAULT_HTTP_PORT})")
    s.add_argument("--host", default=None,
                   help=f"the address both ports listen on, e.g. 0.0.0.0 for every interface (default: env "
                   f"ARCHIPELAGO_HOST, else {DEFAULT_HOST})")
    s.add_argument("--shards", type=int, default=0, metavar="N",
                   help=f"GameShard actors (default: env ARCHIPELAGO_SHARDS, else {DEFAULT_SHARDS})")
    s.add_argument("--gateways", type=int, default=0, metavar="N",
                   help="gateway processes sharing the two ports (SO_REUSEPORT; default: env ARCHIPELAGO_GATEWAYS, "
                   f"else {DEFAULT_GATEWAYS})")
    s.add_argument("--data-dir", default=None, metavar="DIR",
                   help="where the private Redis keeps its append-only journal, locked by one server at a time "
                   f"(default: env ARCHIPELAGO_DATA_DIR, else {DEFAULT_DATA_DIR}, relative to the current "
                   "directory)")


def build_parser(prog: str = "archipelago serve") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Serve until stopped (SIGTERM or Ctrl-C); 2 for a flag out of range."""
    from gateway.app import serve

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    grpc_port = args.grpc_port or int(os.environ.get("ARCHIPELAGO_GRPC_PORT") or DEFAULT_GRPC_PORT)
    http_port = args.http_port or int(os.environ.get("ARCHIPELAGO_HTTP_PORT") or DEFAULT_HTTP_PORT)
    shards = args.shards or int(os.environ.get("ARCHIPELAGO_SHARDS") or DEFAULT_SHARDS)
    gateways = args.gateways or int(os.environ.get("ARCHIPELAGO_GATEWAYS") or DEFAULT_GATEWAYS)
    if gateways < 1:
        print("error: --gateways must be at least 1", file=sys.stderr)
        return 2
    host = args.host or os.environ.get("ARCHIPELAGO_HOST") or DEFAULT_HOST
    data_dir = args.data_dir or os.environ.get("ARCHIPELAGO_DATA_DIR") or DEFAULT_DATA_DIR
    asyncio.run(serve(host=host, grpc_port=grpc_port, http_port=http_port, shards=shards,
                      data_dir=Path(data_dir), gateways=gateways))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``archipelago serve ARGS…`` (``argv``: what follows ``serve``)."""
    return run(build_parser().parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
