"""The dashboard and the alerts against a real Prometheus (Debian's, installed by scripts/ensure-test-deps.sh)
scraping a real `archipelago serve` (issue 25).

The module serves its own cluster (two shards; a shard of it is stopped and removed below, which the
session's cluster must not suffer) and starts ``prometheus`` with a scrape and rule evaluation every
two seconds and rules evaluated every second, the job ``archipelago-gateway`` (as the rules expect)
and ``namespace="local"`` on the target, and the shipped rules (deploy/prometheus/alerts.yml), the
shard-down alert's ``for:`` shortened to 3 s (how long each condition must hold is the rules' unit
tests' business: deploy/prometheus/alerts_test.yml) — and a second job, ``archipelago-ray``, scraping the
Ray node's own metrics (``ARCHIPELAGO_RAY_METRICS_PORT``, a free port), as the README's scrape config does.
Then:

- after a scripted game of each kind (played to its end by bots, beside a few refused calls on both
  doors), every query of the dashboard (deploy/grafana/archipelago.json, its variables set to match
  everything) answers with data — a query with none fails the test, naming its panel; the Ray row's too, once
  Ray's exporter shows every series of deploy/grafana/ray_metrics.txt (it starts some seconds after the
  node) — each with the labels recorded there; every rule
  of the alert file is loaded and evaluated without error, none firing on the healthy cluster;
- a shard stopped (SIGSTOP: it holds its port and answers nothing) fires the shard-down alert;
  once it runs again the alert resolves;
- after ``archipelago admin remove`` of a shard, the dashboard's shard panels count the shards left
  within two scrapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import arcmage_pb2, lobby_pb2, salvo_pb2
from client.bot import play_seat
from client.errors import ApiError
from client.grpc_client import Client
from services.cluster import free_port, spawn
from tests.e2e.serving import ServeProcess, run, serving, wait_healthy
from tests.waits import until

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
RAY_METRICS = ROOT / "deploy" / "grafana" / "ray_metrics.txt"
RAY_EXPORT_S = 90.0  # Ray's metrics agent starts with the node and reports every 10 s (seen: ~20 s after start)
DASHBOARD = ROOT / "deploy" / "grafana" / "archipelago.json"
PROMETHEUS = shutil.which("prometheus")
ADMIN_TOKEN = "t" * 32
SCRAPE_S = 2.0  # (and its timeout: a scrape waits for the shards 80 % of it, gateway.http.scrape_budget)
#: Grafana's variables, set to match everything this one target has
VARIABLES = {"namespace": ".*", "job": ".*", "datasource": "prometheus", "__rate_interval": "5s",
             "__interval": "1s", "__range": "5m"}


def get_json(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode())


SHORTENED = {"ArchipelagoShardDown": "3s"}


def fast_rules(src: Path, dst: Path) -> int:
    """The shipped rules, evaluated every second, the shard-down alert's ``for:`` shortened to 3 s (the
    others keep theirs: on a healthy cluster none may even come close to firing); returns how many rules."""
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    n = 0
    for group in doc["groups"]:
        group["interval"] = "1s"
        for rule in group["rules"]:
            n += 1
            if rule.get("alert") in SHORTENED:
                rule["for"] = SHORTENED[rule["alert"]]
    dst.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return n


@dataclass
class Prom:
    url: str
    proc: subprocess.Popen[bytes]
    rules: int

    def query(self, expr: str) -> list[dict[str, Any]]:
        got = get_json(f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")
        assert got["status"] == "success", (expr, got)
        result: list[dict[str, Any]] = got["data"]["result"]
        return result

    def scrapes(self) -> float:
        """How many scrapes of the target Prometheus has made (its own counter)."""
        got = self.query('count_over_time(up{job="archipelago-gateway"}[1h])')
        return sum(float(r["value"][1]) for r in got)

    def wait_scrapes(self, n: int) -> None:
        start = self.scrapes()
        until(lambda: self.scrapes() >= start + n, f"{n} more scrapes")

    def alerts(self) -> list[dict[str, Any]]:
        alerts: list[dict[str, Any]] = get_json(f"{self.url}/api/v1/alerts")["data"]["alerts"]
        return alerts

    def rule_groups(self) -> list[dict[str, Any]]:
        groups: list[dict[str, Any]] = get_json(f"{self.url}/api/v1/rules")["data"]["groups"]
        return groups


def ray_series() -> dict[str, set[str]]:
    """The Ray series the dashboard names (deploy/grafana/ray_metrics.txt) -> their recorded labels."""
    lines = [x.split() for x in RAY_METRICS.read_text(encoding="utf-8").splitlines() if x.strip() and x[0] != "#"]
    return {name: set(labels) for name, _kind, *labels in lines}


@dataclass
class Served:
    grpc: str
    http: str
    proc: ServeProcess
    ray_metrics: int  # the Ray node's metrics port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    ray_port = free_port()
    env = {"ARCHIPELAGO_ADMIN_TOKEN": ADMIN_TOKEN, "ARCHIPELAGO_RAY_METRICS_PORT": str(ray_port)}
    with serving(tmp_path_factory.mktemp("prom-serve"), env, ("--shards", "2")) as (grpc, http, proc):
        wait_healthy(grpc, proc, timeout_s=180)
        yield Served(grpc, http, proc, ray_port)


@pytest.fixture(scope="module")
def prom(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    assert PROMETHEUS, "prometheus is installed by scripts/ensure-test-deps.sh (Debian's package)"
    d = tmp_path_factory.mktemp("prometheus")
    rules = fast_rules(RULES, d / "alerts.yml")
    target = served.http.removeprefix("http://")
    (d / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": f"{SCRAPE_S:g}s", "evaluation_interval": "1s",
                   "scrape_timeout": f"{SCRAPE_S:g}s"},
        "rule_files": [str(d / "alerts.yml")],
        "scrape_configs": [{"job_name": "archipelago-gateway", "metrics_path": "/metrics",
                            "static_configs": [{"targets": [target], "labels": {"namespace": "local"}}]},
                           {"job_name": "archipelago-ray", "metrics_path": "/metrics",
                            "static_configs": [{"targets": [f"127.0.0.1:{served.ray_metrics}"],
                                                "labels": {"namespace": "local"}}]}],
    }), encoding="utf-8")
    port = free_port()
    proc = spawn([PROMETHEUS, f"--config.file={d / 'prometheus.yml'}", f"--storage.tsdb.path={d / 'data'}",
                  f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"])
    p = Prom(f"http://127.0.0.1:{port}", proc, rules)
    try:
        def ready() -> bool:
            assert proc.poll() is None, f"prometheus exited with {proc.returncode}"
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{p.url}/-/ready", timeout=2) as resp:
                    return bool(resp.status == 200)
            return False
        until(ready, "prometheus ready")
        until(lambda: any(t["health"] == "up" and t["labels"]["job"] == "archipelago-gateway"
                          for t in get_json(f"{p.url}/api/v1/targets")["data"]["activeTargets"]),
              "the gateway's /metrics scraped")
        yield p
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def finished_game(address: str, kind: str, **options: Any) -> None:
    """A 2-seat game of ``kind``, the host's seat played by a bot to the end, the other by the autopilot."""
    host = Client(address)
    try:
        created = await host.create(kind, seats=2, nickname="host", deadline_seconds=30, **options)
        await host.start(created.game_id, fill=True)
        final = await asyncio.wait_for(play_seat(host, created.game_id, log=lambda _: None), 120)
        assert final.status == lobby_pb2.GAME_STATUS_OVER, final
    finally:
        await host.close()


async def refusals(served: Served) -> None:
    """A few refused calls on both doors: an unknown game (NOT_FOUND), a bad request (INVALID_ARGUMENT)."""
    c = Client(served.grpc)
    try:
        with contextlib.suppress(ApiError):
            await c.view("0000000000000000")
        with contextlib.suppress(ApiError):
            await c.create("no-such-game", seats=2, nickname="x")
    finally:
        await c.close()
    for body in (b'{"game_id": "0000000000000000"}', b"{not json"):
        req = urllib.request.Request(f"{served.http}/v1/Game/GetView", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer nobody"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
        except urllib.error.HTTPError as err:
            err.close()  # (refused, as it should be: the server counts it)


@pytest.fixture(scope="module")
def played(served: Served, prom: Prom) -> Served:
    async def go() -> None:
        await asyncio.gather(
            finished_game(served.grpc, "salvo", salvo=salvo_pb2.SalvoOptions(max_rounds=3)),
            finished_game(served.grpc, "archipelago", archipelago=A.ArchipelagoOptions(max_rounds=3)),
            finished_game(served.grpc, "arcmage", arcmage=arcmage_pb2.ArcmageOptions(max_rounds=4)),
            refusals(served))
    asyncio.run(go())
    prom.wait_scrapes(3)
    until(lambda: all(prom.query(f'{name}{{job="archipelago-ray"}}') for name in ray_series()),
          "every series of deploy/grafana/ray_metrics.txt scraped from Ray", timeout_s=RAY_EXPORT_S)
    return served


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, query with Grafana's variables set) of every query of the dashboard."""
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            expr = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: VARIABLES[m.group(1) or m.group(2)], target["expr"])
            out.append((panel["title"], expr))
    return out


def test_every_dashboard_query_has_data_after_a_game_of_each_kind(played: Served, prom: Prom) -> None:
    queries = dashboard_queries()
    assert len(queries) >= 40, "the dashboard's queries"
    empty = [(title, expr) for title, expr in queries if not prom.query(expr)]
    assert not empty, "queries with no data after a game of each kind:\n" + "\n".join(f"  {t}: {e}" for t, e in empty)
    nan = [(title, expr) for title, expr in queries
           if any(r["value"][1] in ("NaN", "+Inf", "-Inf") for r in prom.query(expr))]
    assert not nan, "queries answering NaN:\n" + "\n".join(f"  {t}: {e}" for t, e in nan)


def test_rays_series_of_the_dashboard_have_the_labels_recorded(played: Served, prom: Prom) -> None:
    for name, labels in ray_series().items():
        seen = {k for r in prom.query(f'{name}{{job="archipelago-ray"}}') for k in r["metric"]}
        assert labels <= seen, f"{name}: Ray no longer gives it the labels {labels - seen} (ray_metrics.txt)"


def test_every_alert_rule_is_loaded_and_evaluated_and_none_fires_on_a_healthy_cluster(played: Served,
                                                                                      prom: Prom) -> None:
    prom.wait_scrapes(2)
    rules = [r for g in prom.rule_groups() for r in g["rules"]]
    assert len(rules) == prom.rules, "every rule of deploy/prometheus/alerts.yml loaded"
    bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert not bad, f"rules that failed to evaluate: {bad}"
    assert all(r.get("lastEvaluation", "").startswith("20") for r in rules), "every rule evaluated"
    firing = [a["labels"]["alertname"] for a in prom.alerts() if a["state"] == "firing"]
    assert not firing, f"alerts firing on a healthy cluster: {firing}"


def shard_pids(served: Served) -> dict[str, int]:
    health = get_json(f"{served.http}/healthz")
    return {s["name"]: int(s["pid"]) for s in health["shards"] if s.get("pid")}


def test_a_stopped_shard_fires_the_shard_down_alert_and_it_resolves_when_it_runs_again(played: Served,
                                                                                       prom: Prom) -> None:
    name, pid = sorted(shard_pids(played).items())[-1]
    os.kill(pid, signal.SIGSTOP)
    try:
        fired = until(lambda: [a for a in prom.alerts() if a["state"] == "firing"
                               and a["labels"].get("shard") == name], f"an alert firing for {name}", timeout_s=90)
        assert {a["labels"]["alertname"] for a in fired} >= {"ArchipelagoShardDown"}, fired
    finally:
        os.kill(pid, signal.SIGCONT)
    until(lambda: not [a for a in prom.alerts() if a["labels"].get("shard") == name
                       and a["labels"]["alertname"] == "ArchipelagoShardDown"], "the shard-down alert resolved",
          timeout_s=90)


def shard_panels() -> list[tuple[str, str]]:
    """The dashboard's queries that count or list shards."""
    return [(t, e) for t, e in dashboard_queries() if "shard" in t.lower()]


def test_after_admin_remove_the_shard_panels_count_the_shards_left_within_two_scrapes(
        played: Served, prom: Prom, tmp_path: Path) -> None:
    panels = shard_panels()
    assert panels, "the dashboard has shard panels"
    counting = next(e for t, e in panels if t == "Shards up")
    assert float(prom.query(counting)[0]["value"][1]) == 2
    names = sorted(shard_pids(played))
    token = tmp_path / "admin-token"
    token.write_text(ADMIN_TOKEN, encoding="utf-8")
    rc, out = asyncio.run(run("admin", "remove", names[-1], "--server", played.http.removeprefix("http://"),
                              "--token-file", str(token)))
    assert rc == 0, out
    prom.wait_scrapes(2)
    assert float(prom.query(counting)[0]["value"][1]) == 1
    for title, expr in panels:
        shards = {r["metric"].get("shard") for r in prom.query(expr)} - {None}
        assert names[-1] not in shards, (title, expr, shards)

