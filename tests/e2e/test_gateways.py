"""`archipelago serve --gateways N`: N gateway processes share the gRPC and HTTP ports (SO_REUSEPORT),
one game is played through two of them, and they all stop with the server."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import grpc
import httpx2 as httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from archipelago.v1 import lobby_pb2, salvo_pb2
from client.errors import ApiError
from client.grpc_client import Client
from client.web_client import WebClient
from services.cluster import free_port
from tests.e2e.serving import EXE, serving, wait_healthy

pytestmark = pytest.mark.e2e


async def pinned(url: str) -> tuple[int, WebClient]:
    """A JSON-door client on one HTTP connection, and the pid of the gateway process that serves it."""
    http = httpx.AsyncClient(base_url=url, timeout=60.0,
                             limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
    health = (await http.get("/healthz")).json()
    return int(health["gateway"]["pid"]), WebClient(url, http=http)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_two_gateway_processes_share_the_ports_and_one_game(tmp_path: Path) -> None:
    with serving(tmp_path, args=("--gateways", "2")) as (address, url, proc):
        wait_healthy(address, proc)
        by_pid: dict[int, WebClient] = {}
        others: list[WebClient] = []
        for _ in range(200):  # new connections until both processes answered one (the kernel spreads them)
            pid, client = await pinned(url)
            if pid in by_pid:
                others.append(client)
            else:
                by_pid[pid] = client
            if len(by_pid) == 2:
                break
        assert len(by_pid) == 2, f"one process answered 200 connections: {list(by_pid)}"
        assert proc.pid in by_pid, "the serve process is one of the gateways"
        (extra,) = set(by_pid) - {proc.pid}
        one, two = by_pid[proc.pid], by_pid[extra]
        created = await one.create("salvo", seats=2, nickname="ann", deadline_seconds=600)
        host = one.with_secret(created.secret)
        joined = await two.join(created.code, "bob")
        guest = two.with_secret(joined.secret)
        await host.start(created.game_id)
        version = (await guest.view(created.game_id)).version
        await guest.submit(created.game_id, version, key="g0", salvo=salvo_pb2.SalvoOrders(random_placement=True))
        version = (await host.view(created.game_id)).version  # through the other process
        await host.submit(created.game_id, version, key="h0", salvo=salvo_pb2.SalvoOrders(random_placement=True))
        seen = await guest.view(created.game_id)
        assert seen.status == lobby_pb2.GAME_STATUS_RUNNING
        assert [p.submitted for p in seen.players] == [True, True], \
            "each process sees the submission made through the other"
        async with Client(address, created.secret) as grpc_host:  # gRPC on the shared port too
            assert (await grpc_host.view(created.game_id)).version == seen.version
        # A second server on a taken port: a clear error before anything starts, not a shared port.
        second = subprocess.run([EXE, "serve", "--grpc-port", address.rsplit(":", 1)[1], "--http-port",
                                 str(free_port()), "--data-dir", str(tmp_path / "other")],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "cannot be used (Address already in use)" in second.stderr, second
        assert not (tmp_path / "other").exists(), "nothing was started"
        for c in [*by_pid.values(), *others]:
            await c.http.aclose()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert not alive(extra), "the extra gateway process stopped with the server"


async def test_sigterm_drains_not_serving_but_serving_then_a_second_signal_stops(tmp_path: Path) -> None:
    """A gateway told to stop first turns NOT_SERVING (gRPC health, /readyz) while every call still
    works and liveness stays SERVING, so load balancers move players away; a second signal ends it."""
    with serving(tmp_path, extra_env={"ARCHIPELAGO_DRAIN_S": "120"}) as (address, url, proc):
        wait_healthy(address, proc)
        async with httpx.AsyncClient(base_url=url, timeout=30.0) as http:
            assert (await http.get("/readyz")).status_code == 200
            proc.send_signal(signal.SIGTERM)
            async with grpc.aio.insecure_channel(address) as channel:
                health = health_pb2_grpc.HealthStub(channel)
                for _ in range(600):  # until the drain shows (each check is a round trip, bounded)
                    status = (await health.Check(health_pb2.HealthCheckRequest(service=""))).status
                    if status == health_pb2.HealthCheckResponse.NOT_SERVING:
                        break
                assert status == health_pb2.HealthCheckResponse.NOT_SERVING
                live = await health.Check(health_pb2.HealthCheckRequest(service="liveness"))
                assert live.status == health_pb2.HealthCheckResponse.SERVING
                async with Client(address) as client:  # still serving while draining
                    created = await client.create("salvo", seats=2, nickname="late")
                    assert created.code
            assert (await http.get("/readyz")).status_code == 503
            assert (await http.get("/livez")).status_code == 200
        assert proc.poll() is None, "still draining (120 s)"
        async with Client(address, created.secret) as player:
            stream = player.watch(created.game_id)
            first = await anext(stream)  # the stream is open (its first update)
            assert first.seq >= 1
            proc.send_signal(signal.SIGTERM)
            with pytest.raises(ApiError) as ended:
                async for _ in stream:
                    pass
            assert ended.value.status == "UNAVAILABLE" and "stopping" in ended.value.message, \
                "the stream is ended and told to resume elsewhere, not cut"
        assert proc.wait(timeout=60) == 0, "the second signal stopped it well before the drain's end"
