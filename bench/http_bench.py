"""Sequential requests on one kept-alive HTTP connection, against a fresh connection each (issue 19).

Starts ``archipelago serve`` (a private redis-server, a local Ray, shards, the gateway) on free
loopback ports, makes a game, then for each path below sends ``--requests`` requests one after the
other on ONE kept-alive connection, and as many on a NEW connection each (timed from the connection
being open: the handshake is left out). A fresh connection is the baseline for the server's own
time: it is the same work on the same server, and a new TCP connection is in quick-ACK mode, so a
response written in two pieces is not held by Nagle's algorithm there. The difference of the
medians (p50) is what a kept-alive connection adds; the target is at most 2 ms (before the fix it
was ~44 ms: headers and body in two writes, Nagle, the client's delayed ACK).

Paths: ``GET /livez``, ``POST /v1/Lobby/ListGames``, ``POST /v1/Game/GetView`` (JSON rpcs), an MCP
``tools/call`` of ``get_view`` (``POST /mcp``), a static file (``GET /static/js/api.js``), and
WebSocket frames: chat messages sent through ``/v1/Game/Act`` while the same player has a
``/v1/Game/Watch`` WebSocket and a gRPC Watch stream open; the WebSocket frame's arrival is compared
with the same update's on gRPC (which sets TCP_NODELAY itself): each frame is a separate write, the
case Nagle's algorithm held longest.

    python -m bench.http_bench [--requests 200]

Live progress on stderr; the figures on stdout; exit status 1 when a path misses the target.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from services.cluster import free_port

TARGET_MS = 2.0
EXE = str(Path(sys.executable).with_name("archipelago"))


@dataclass(frozen=True)
class Call:
    name: str
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]


def _progress(text: str) -> None:
    print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)


def _exchange(conn: http.client.HTTPConnection, call: Call) -> float:
    """One request on ``conn``: seconds from sending it to having read the whole answer."""
    start = time.perf_counter()
    conn.request(call.method, call.path, body=call.body, headers=call.headers)  # (headers + body: one send)
    resp = conn.getresponse()
    body = resp.read()
    took = time.perf_counter() - start
    if resp.status != 200:
        raise SystemExit(f"{call.name}: HTTP {resp.status}: {body[:300]!r}")
    return took


def measure(host: str, port: int, call: Call, n: int) -> tuple[list[float], list[float]]:
    """(kept-alive times, fresh-connection times) in seconds, ``n`` each after a warm-up, taken in
    turn (one on the kept-alive connection, one on a new one) so that a change of load meanwhile
    weighs on both alike."""
    kept: list[float] = []
    fresh: list[float] = []
    conn = http.client.HTTPConnection(host, port, timeout=30)
    for _ in range(5):
        _exchange(conn, call)
    for i in range(n):
        kept.append(_exchange(conn, call))
        one = http.client.HTTPConnection(host, port, timeout=30)
        one.connect()
        fresh.append(_exchange(one, call))
        one.close()
        if i % 10 == 0:
            _progress(f"{call.name}: {i + 1}/{n}  (p50 so far: kept-alive {statistics.median(kept) * 1e3:.2f} ms, "
                      f"fresh {statistics.median(fresh) * 1e3:.2f} ms)")
    conn.close()
    return kept, fresh


def rpc(host: str, port: int, path: str, body: dict[str, object], secret: str = "") -> dict[str, object]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    headers = {"content-type": "application/json"} | ({"authorization": f"Bearer {secret}"} if secret else {})
    conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
    resp = conn.getresponse()
    data = json.loads(resp.read() or b"{}")
    conn.close()
    if resp.status != 200:
        raise SystemExit(f"{path}: HTTP {resp.status}: {data}")
    return data  # type: ignore[no-any-return]


def websocket_frames(host: str, port: int, grpc_port: int, game_id: str, secret: str, n: int) -> list[float]:
    """Seconds by which each chat's frame on a Watch WebSocket follows the same update on a gRPC
    Watch stream of the same player (gRPC sets TCP_NODELAY itself: the baseline for the fan-out)."""
    import threading

    import grpc
    from websockets.sync.client import connect

    from archipelago.v1 import game_pb2, game_pb2_grpc

    view = rpc(host, port, "/v1/Game/GetView", {"game_id": game_id}, secret)
    on_grpc: dict[str, float] = {}
    channel = grpc.insecure_channel(f"{host}:{grpc_port}")
    stream = game_pb2_grpc.GameStub(channel).Watch(
        game_pb2.WatchRequest(game_id=game_id, after_seq=int(str(view["seq"]))),
        metadata=[("authorization", f"Bearer {secret}")])

    def read_grpc() -> None:
        try:
            for update in stream:
                if update.kind == "chat":
                    on_grpc[update.chat.text] = time.perf_counter()
        except grpc.RpcError:
            pass  # cancelled at the end

    reader = threading.Thread(target=read_grpc, daemon=True)
    reader.start()
    gaps: list[float] = []
    with connect(f"ws://{host}:{port}/v1/Game/Watch", max_size=2**22) as ws:
        ws.send(json.dumps({"authorization": f"Bearer {secret}", "game_id": game_id, "after_seq": view["seq"]}))
        for i in range(n):
            text = f"frame {i}"
            rpc(host, port, "/v1/Game/Act", {"game_id": game_id, "chat": {"text": text}}, secret)
            while True:
                frame = json.loads(ws.recv(timeout=10))
                if "error" in frame:
                    raise SystemExit(f"Watch: {frame['error']}")
                if frame.get("kind") == "chat" and frame.get("chat", {}).get("text") == text:
                    break
            arrived = time.perf_counter()
            deadline = time.monotonic() + 10
            while text not in on_grpc and time.monotonic() < deadline:
                time.sleep(0.0005)  # (the other stream's thread: it stamps the arrival itself)
            if text not in on_grpc:
                raise SystemExit("the gRPC Watch stream did not deliver the chat")
            gaps.append(arrived - on_grpc[text])
            _progress(f"websocket frames: {i + 1}/{n}")
    stream.cancel()
    channel.close()
    return gaps


def start_serve(workdir: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    grpc_port, http_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
    env |= {"ARCHIPELAGO_RATE_LIMITS": "off", "ARCHIPELAGO_DRAIN_S": "0",
            "RAY_TMPDIR": tempfile.mkdtemp(prefix="ray-", dir="/tmp")}
    proc = subprocess.Popen([EXE, "serve", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
                             "--data-dir", str(workdir / "var")], env=env, cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"archipelago serve exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=1)
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                conn.close()
                return proc, http_port, grpc_port
        except OSError:
            pass
        _progress(f"starting archipelago serve … {120 - (deadline - time.monotonic()):.0f} s")
        time.sleep(0.25)  # (polling a subprocess's port: nothing else tells us it listens)
    proc.kill()
    raise SystemExit("archipelago serve did not become ready within 120 s")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.http_bench", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=200, help="requests per path and connection kind")
    ap.add_argument("--frames", type=int, default=9, help="WebSocket frames (chats: at most 10 a round, A53)")
    args = ap.parse_args()
    host = "127.0.0.1"
    with tempfile.TemporaryDirectory(prefix="http-bench-") as tmp:
        proc, port, grpc_port = start_serve(Path(tmp))
        try:
            made = rpc(host, port, "/v1/Lobby/CreateGame", {"game": "salvo", "seats": 2, "nickname": "host",
                                                            "request_id": uuid.uuid4().hex})
            game_id, secret = str(made["game_id"]), str(made["secret"])
            rpc(host, port, "/v1/Lobby/JoinGame", {"code": made["code"], "nickname": "guest"})
            rpc(host, port, "/v1/Lobby/StartGame", {"game_id": game_id}, secret)
            token = str(rpc(host, port, "/v1/Game/CreateAgentToken", {"game_id": game_id, "label": "bench"},
                            secret)["token"])
            json_h = {"content-type": "application/json"}
            mcp_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                        "params": {"name": "get_view", "arguments": {}}}
            calls = [
                Call("GET /livez", "GET", "/livez", None, {}),
                Call("POST /v1/Lobby/ListGames", "POST", "/v1/Lobby/ListGames", b'{"game": "salvo"}', json_h),
                Call("POST /v1/Game/GetView", "POST", "/v1/Game/GetView", json.dumps({"game_id": game_id}).encode(),
                     json_h | {"authorization": f"Bearer {secret}"}),
                Call("MCP tools/call get_view", "POST", "/mcp", json.dumps(mcp_call).encode(),
                     json_h | {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token}",
                               "mcp-protocol-version": "2025-06-18"}),
                Call("GET /static/js/api.js", "GET", "/static/js/api.js", None, {}),
            ]
            rows: list[tuple[str, float, float]] = []
            for call in calls:
                kept, fresh = measure(host, port, call, args.requests)
                rows.append((call.name, statistics.median(kept) * 1e3, statistics.median(fresh) * 1e3))
            frames = websocket_frames(host, port, grpc_port, game_id, secret, args.frames)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    _progress("")
    print(f"{'path':<28} {'kept-alive p50':>15} {'fresh conn p50':>15} {'added':>9}  (target <= {TARGET_MS:g} ms)")
    missed = False
    for name, kept_ms, fresh_ms in rows:
        added = kept_ms - fresh_ms
        missed |= added > TARGET_MS
        print(f"{name:<28} {kept_ms:>12.2f} ms {fresh_ms:>12.2f} ms {added:>6.2f} ms  "
              f"{'ok' if added <= TARGET_MS else 'MISSED'}")
    frame_ms = statistics.median(frames) * 1e3
    missed |= frame_ms > TARGET_MS
    print(f"{'WebSocket frame vs gRPC':<28} {'':>15} {'':>15} {frame_ms:>6.2f} ms  "
          f"{'ok' if frame_ms <= TARGET_MS else 'MISSED'} (a chat's frame after the same update on gRPC Watch, "
          f"p50 of {len(frames)})")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
