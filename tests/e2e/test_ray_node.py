"""The Ray node `archipelago serve` starts (issue 25): its own metrics on a fixed port an operator can
scrape, and its logs in Ray's files, never in the gateway's stderr — even with RAY_LOG_TO_STDERR=1,
which container images often set and which sent the raylet's `[state-dump]` blocks to the gateway's log."""

from __future__ import annotations

import asyncio
import re
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from services.cluster import DEFAULT_RAY_METRICS_PORT, RAY_METRICS_PORT_ENV, free_port, port_taken, ray_metrics_port
from tests.e2e.serving import serving, wait_healthy

pytestmark = pytest.mark.e2e

WAIT_S = 90.0  # Ray reports its node's metrics every 10 s and the raylet dumps its state every 10 s


def test_the_ray_metrics_port_is_the_one_asked_for_or_a_clear_error() -> None:
    port = free_port()
    assert ray_metrics_port({RAY_METRICS_PORT_ENV: str(port)}) == (port, "")
    any_port, note = ray_metrics_port({RAY_METRICS_PORT_ENV: "0"})
    assert any_port > 0 and note == ""
    with pytest.raises(SystemExit, match=f"{RAY_METRICS_PORT_ENV}: expected a port number"):
        ray_metrics_port({RAY_METRICS_PORT_ENV: "ninety"})
    with pytest.raises(SystemExit, match=f"{RAY_METRICS_PORT_ENV}: expected a port number"):
        ray_metrics_port({RAY_METRICS_PORT_ENV: "70000"})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert port_taken(taken)
        with pytest.raises(SystemExit, match=f"{RAY_METRICS_PORT_ENV}={taken}: that port is taken"):
            ray_metrics_port({RAY_METRICS_PORT_ENV: str(taken)})


def test_unset_it_is_the_default_port_or_says_which_one_it_took_instead() -> None:
    chosen, note = ray_metrics_port({})
    if port_taken(DEFAULT_RAY_METRICS_PORT):  # (another server of this machine holds it)
        assert chosen != DEFAULT_RAY_METRICS_PORT and f"Ray's metrics on {chosen}" in note, note
    else:
        assert (chosen, note) == (DEFAULT_RAY_METRICS_PORT, "")
        with socket.socket() as busy:
            busy.bind(("0.0.0.0", DEFAULT_RAY_METRICS_PORT))
            busy.listen()
            chosen, note = ray_metrics_port({})
        assert chosen != DEFAULT_RAY_METRICS_PORT and not port_taken(chosen)
        assert f"port {DEFAULT_RAY_METRICS_PORT} is taken" in note and RAY_METRICS_PORT_ENV in note, note


def scrape(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            return str(resp.read().decode())
    except (urllib.error.URLError, OSError):
        return ""


async def test_serve_exports_rays_metrics_on_its_port_and_keeps_rays_logs_out_of_its_own(tmp_path: Path) -> None:
    port = free_port()
    env = {RAY_METRICS_PORT_ENV: str(port), "RAY_LOG_TO_STDERR": "1"}
    with serving(tmp_path, extra_env=env) as (address, _http, proc):
        lines = proc.lines  # (read as serve writes them)
        await asyncio.to_thread(wait_healthy, address, proc)
        said = next((line for line in lines if "Ray's own metrics on" in line), "")
        assert f"http://127.0.0.1:{port}/metrics" in said and RAY_METRICS_PORT_ENV in said, lines
        logs = re.search(r"its logs in (\S+)", said)
        assert logs and Path(logs[1]).is_dir(), said

        deadline = time.monotonic() + WAIT_S
        text = ""
        while not re.search(r"^ray_node_\w+\{", text, re.M):  # the node's own series, reported every 10 s
            assert time.monotonic() < deadline, f"no ray_node_* series on port {port}: {text[-2000:]}"
            await asyncio.sleep(0.5)
            text = await asyncio.to_thread(scrape, port)
        assert re.search(r'^ray_node_\w+\{.*SessionName="session_', text, re.M), text[-2000:]

        raylet = Path(logs[1]) / "raylet.out"
        while "[state-dump]" not in (raylet.read_text() if raylet.exists() else ""):  # (every 10 s)
            assert time.monotonic() < deadline, f"the raylet never dumped its state in {raylet}"
            await asyncio.sleep(0.5)
    out = proc.output()
    assert "RAY_LOG_TO_STDERR ignored" in out, out[-3000:]
    noise = [line for line in lines if "[state-dump]" in line or re.search(r"\((raylet|gcs_server)\)", line)
             or "Heartbeat" in line]
    assert noise == [], f"Ray's own log lines in the gateway's output: {noise[:5]}"
