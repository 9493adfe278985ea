"""A bare grpc.aio server of the rpc ``archipelago.v1.Game/SubmitOrders``: the ceiling of the path.

It serves the same rpc with the same request and response messages as the gateway (the generated
servicer base, so the request is parsed and the answer serialised exactly as there), and answers
every call with a canned ``SubmitOrdersResponse`` — no authentication, shard, Redis or journal.
``bench.capacity`` drives it with the same load client (``bench.loadgen --echo``) as the real path.

    python -m bench.echo [--host 127.0.0.1] [--port 0]

Prints ``echo listening on HOST:PORT`` once it serves; stops on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Sequence

import grpc

from archipelago.v1 import game_pb2, game_pb2_grpc

CANNED = game_pb2.SubmitOrdersResponse(version=2, round=0, submitted=False, replayed=False)


class EchoGame(game_pb2_grpc.GameServicer):
    """Only SubmitOrders is served; every other rpc of the service is UNIMPLEMENTED (the base's)."""

    def __init__(self) -> None:
        self.calls = 0

    async def SubmitOrders(self, request: game_pb2.SubmitOrdersRequest,
                           context: grpc.aio.ServicerContext) -> game_pb2.SubmitOrdersResponse:
        self.calls += 1
        return CANNED


async def serve(host: str, port: int) -> None:
    server = grpc.aio.server()
    game_pb2_grpc.add_GameServicer_to_server(EchoGame(), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise SystemExit(f"cannot bind {host}:{port}")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"echo listening on {host}:{bound}", flush=True)
    await stop.wait()
    await server.stop(grace=1)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.echo", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    a = ap.parse_args(argv)
    asyncio.run(serve(a.host, a.port))


if __name__ == "__main__":
    main()
