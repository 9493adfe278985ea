"""The Grafana dashboard (deploy/grafana/archipelago.json) names only metrics and labels the code exposes.

The names come from the code itself: every module of gateway/ and services/ is imported, and the
metric families of the gateway's registry (prometheus_client's default one, served on /metrics) and of
the shards' (services.metrics.REGISTRY, re-exposed by the gateway with a ``shard`` label) give the
names a scrape shows: a Counter ``x`` as ``x_total``, a Histogram as ``x_bucket`` / ``x_sum`` /
``x_count``, and so on. A metric added to the code is usable in the dashboard at once.

Ray's own series (``ray_*``, scraped from Ray's metrics port, not the gateway's) come from no code of
ours: a panel may name one, and its labels, only as listed in deploy/grafana/ray_metrics.txt, recorded
from a real scrape of Ray (tests/e2e/test_prometheus_e2e.py checks the list against a running Ray).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import pkgutil
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import CollectorRegistry

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "deploy" / "grafana"
RAY_METRICS = GRAFANA / "ray_metrics.txt"
#: the prefix of Ray's own series (never one of ours)
RAY_PREFIX = "ray_"
#: labels Prometheus adds to every series it scrapes through a PodMonitor
TARGET_LABELS = frozenset({"job", "instance", "namespace", "pod", "container", "endpoint", "service"})
#: series Prometheus makes itself for each target
PROMETHEUS_SERIES = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped",
                               "scrape_samples_post_metric_relabeling", "scrape_series_added"})
#: words of PromQL that look like names
KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
                      "unless", "offset", "inf", "nan"})
#: the suffixes a scrape shows for each family type (prometheus_client's text format)
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gaugehistogram": ("_bucket", "_gsum", "_gcount"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
    "gauge": ("",),
    "stateset": ("",),
    "unknown": ("",),
}


def _families(registry: CollectorRegistry) -> list[tuple[Metric, set[str]]]:
    """Every family of a registry with the label names its metric declares (labelled metrics with no
    child yet have no samples to show them). prometheus_client has no public accessor for the
    collectors of a registry or their label names: this reads ``_names_to_collectors`` and
    ``_labelnames``."""
    out = []
    for collector in set(registry._names_to_collectors.values()):
        declared = set(getattr(collector, "_labelnames", ()))
        for family in collector.collect():
            out.append((family, declared | {k for s in family.samples for k in s.labels}))
    return out


def ray_metrics() -> dict[str, tuple[str, frozenset[str]]]:
    """Ray's series the dashboard may name (deploy/grafana/ray_metrics.txt) -> (type, their labels)."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for line in RAY_METRICS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, kind, *labels = line.split()
        out[name] = (kind, frozenset(labels))
    return out


@functools.cache
def exposed() -> dict[str, frozenset[str]]:
    """Every series name a Prometheus scraping the cluster holds that a panel may name -> the labels it
    can carry: the gateway's /metrics (:func:`code_exposed`) and Ray's own (:func:`ray_metrics`)."""
    names = dict(code_exposed())
    for name, (_kind, labels) in ray_metrics().items():
        names[name] = labels | TARGET_LABELS
    return names


@functools.cache
def code_exposed() -> dict[str, frozenset[str]]:
    """Every series name the gateway's /metrics shows -> the labels it can carry."""
    for package in ("gateway", "services"):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            importlib.import_module(info.name)
    from prometheus_client import REGISTRY

    from services import metrics as shard_metrics

    names: dict[str, frozenset[str]] = {}
    shard: set[str] = {"shard"}  # gateway.metrics.ShardCollector labels every shard sample
    for registry, extra in ((REGISTRY, set()), (shard_metrics.REGISTRY, shard)):
        for family, labels in _families(registry):
            for suffix in SUFFIXES[family.type]:
                special = {"le"} if suffix == "_bucket" else set()
                if family.type == "summary" and not suffix:
                    special = {"quantile"}
                names[family.name + suffix] = frozenset(labels | extra | special | TARGET_LABELS)
            for sample in family.samples:
                names.setdefault(sample.name, frozenset(labels | extra | TARGET_LABELS))
    for family in _collector_families():
        names.setdefault(family.name, frozenset({k for s in family.samples for k in s.labels} | TARGET_LABELS))
    for name in PROMETHEUS_SERIES:
        names[name] = TARGET_LABELS
    return names


def _collector_families() -> list[Metric]:
    """The families gateway.metrics.ShardCollector makes itself (``archipelago_shard_up``), for one shard
    that answered (the collector is registered on the gateway's registry only while it serves)."""
    from gateway.metrics import ShardCollector
    from gateway.router import ShardRouter
    from services.store import Store

    collector = ShardCollector(ShardRouter(Store("redis://127.0.0.1:1"), ["shard-0"], "unused"), local=())
    collector.up["shard-0"] = True
    return list(collector.collect())


def _strip(expr: str) -> str:
    """An expression without strings, label matchers, ranges and grouping clauses."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    return re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not its functions, keywords or numbers)."""
    text = _strip(expr)
    names = set()
    for match in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", text):
        if text[match.end():].lstrip().startswith("(") or match.group().lower() in KEYWORDS:
            continue
        names.add(match.group())
    return names


def matcher_labels(expr: str) -> dict[str, set[str]]:
    """metric -> the labels its matchers name (``x{code!="OK"}`` -> {x: {code}})."""
    out: dict[str, set[str]] = {}
    for metric, body in re.findall(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}", expr):
        body = re.sub(r'"(?:[^"\\]|\\.)*"', '""', body)
        out.setdefault(metric, set()).update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", body))
    return out


def grouping_labels(expr: str) -> set[str]:
    return {label.strip() for group in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr)
            for label in group.split(",") if label.strip()}


def load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_dashboard", GRAFANA / "build_dashboard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GRAFANA / "archipelago.json").read_text(encoding="utf-8"))
    return data


def panels() -> list[dict[str, Any]]:
    return [p for p in dashboard()["panels"] if p["type"] != "row"]


def expressions() -> list[tuple[str, str, str]]:
    """(panel title, legend, expression) of every query."""
    return [(p["title"], t.get("legendFormat", ""), t["expr"]) for p in panels() for t in p["targets"]]


def variable_queries() -> list[tuple[str, str]]:
    return [(v["name"], v["query"]["query"]) for v in dashboard()["templating"]["list"] if v["type"] == "query"]


def test_the_parser_finds_metric_names() -> None:
    expr = ('histogram_quantile(0.99, sum by (le, door) (rate(archipelago_request_latency_seconds_bucket'
            '{namespace=~"$namespace", code!="OK"}[$__rate_interval]))) / clamp_min(sum(up{job="x"}), 1e-9)')
    assert metric_names(expr) == {"archipelago_request_latency_seconds_bucket", "up"}
    assert grouping_labels(expr) == {"le", "door"}
    assert matcher_labels(expr) == {"archipelago_request_latency_seconds_bucket": {"namespace", "code"},
                                    "up": {"job"}}


def test_the_names_are_the_ones_a_scrape_shows() -> None:
    names = exposed()
    assert {"archipelago_requests_total", "archipelago_request_latency_seconds_bucket",
            "archipelago_watch_streams", "archipelago_shard_games", "archipelago_rounds_closed_total",
            "archipelago_round_resolution_seconds_count"} <= set(names)
    assert "archipelago_rounds_closed" not in names  # a counter shows as _total only
    assert "archipelago_shard_games_total" not in names
    assert "shard" in names["archipelago_rounds_closed_total"] and "how" in names["archipelago_rounds_closed_total"]
    assert "shard" not in names["archipelago_requests_total"]
    assert "shard" in names["archipelago_shard_up"], "gateway.metrics.ShardCollector's liveness gauge"
    # issue 13: the gateway's own
    assert {"door"} <= names["archipelago_watch_streams"] and "shard" not in names["archipelago_watch_streams"]
    for name, labels in (("archipelago_connected_players", set()), ("archipelago_placements_total", set()),
                         ("archipelago_placement_moves_total", set()), ("archipelago_throttled_total", {"limit"})):
        assert labels <= names[name] and "shard" not in names[name], name
    # ... the shards' (the Redis families also hold the gateway's series, without a shard label)
    for name, labels in (("archipelago_games", {"kind", "phase"}), ("archipelago_actions_total", {"kind"}),
                         ("archipelago_redis_command_seconds_bucket", {"command", "le"}),
                         ("archipelago_redis_errors_total", {"kind"})):
        assert labels | {"shard"} <= names[name], name


def test_rays_names_are_only_the_recorded_ones_and_the_code_has_none() -> None:
    recorded = ray_metrics()
    assert recorded, "deploy/grafana/ray_metrics.txt lists Ray's series"
    for name, (kind, labels) in recorded.items():
        assert name.startswith(RAY_PREFIX) and re.fullmatch(r"[a-z_:][a-z0-9_:]*", name), name
        assert kind in SUFFIXES and labels, name
    ours = [n for n in code_exposed() if n.startswith(RAY_PREFIX)]
    assert not ours, f"ray_ names are Ray's: no metric of ours may take one ({ours})"
    used = {m for _t, _l, expr in expressions() for m in metric_names(expr) if m.startswith(RAY_PREFIX)}
    assert used == set(recorded), "ray_metrics.txt lists the Ray series the dashboard names, no more"


def test_the_json_is_what_the_builder_writes() -> None:
    builder = load_builder()
    assert (GRAFANA / "archipelago.json").read_text(encoding="utf-8") == builder.render(), (
        "deploy/grafana/archipelago.json is stale: run python deploy/grafana/build_dashboard.py")


def test_every_metric_in_the_dashboard_exists() -> None:
    names = exposed()
    used = set()
    for title, _legend, expr in expressions():
        for metric in metric_names(expr):
            assert metric in names, (f"{title!r}: {metric} is exposed by no code (gateway/, services/)"
                                     + (" and not recorded in deploy/grafana/ray_metrics.txt"
                                        if metric.startswith(RAY_PREFIX) else ""))
            used.add(metric)
    for variable, query in variable_queries():
        match = re.fullmatch(r"label_values\(([A-Za-z_:][A-Za-z0-9_:]*)(?:\{[^}]*\})?,\s*(\w+)\)", query)
        assert match, f"variable {variable}: {query}"
        assert match.group(1) in names, f"variable {variable}: {match.group(1)} is exposed by no code"
        assert match.group(2) in names[match.group(1)], f"variable {variable}: no label {match.group(2)}"
    assert len(used) >= 8


def test_every_label_in_the_dashboard_exists() -> None:
    names = exposed()
    for title, legend, expr in expressions():
        metrics = metric_names(expr)
        known = set().union(*(names[m] for m in metrics))
        for metric, labels in matcher_labels(expr).items():
            assert labels <= names[metric], f"{title!r}: {metric} has no label {labels - names[metric]}"
        grouped = grouping_labels(expr)
        assert grouped <= known, f"{title!r}: grouping by {grouped - known}, which no metric has"
        shown = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", legend))
        assert shown <= (grouped or known), f"{title!r}: the legend shows {shown - grouped}, lost by the aggregation"


def test_every_panel_has_a_title_and_the_datasource_variable() -> None:
    board = dashboard()
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in board["panels"]:
        assert panel["title"].strip(), panel["id"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"], panel["title"]
            assert target["expr"].strip(), panel["title"]
            for var in re.findall(r"\$(\w+)", target["expr"]):
                assert var in variables or var.startswith("__"), f"{panel['title']!r}: no variable ${var}"


def test_ids_are_unique_and_panels_do_not_overlap() -> None:
    board = dashboard()
    assert board["uid"] and len(board["uid"]) <= 40
    assert board["schemaVersion"] >= 39
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    titles = [p["title"] for p in board["panels"]]
    assert len(titles) == len(set(titles)), "panel titles are unique (links and alerts name them)"
    cells: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        refs = [t["refId"] for t in panel.get("targets", [])]
        assert len(refs) == len(set(refs)), panel["title"]
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        mine = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
        assert not cells & mine, f"{panel['title']!r} overlaps another panel"
        cells |= mine


def test_the_rows_cover_the_cluster() -> None:
    rows = [p["title"] for p in dashboard()["panels"] if p["type"] == "row"]
    assert rows[:7] == ["Health", "Load", "Latency", "Games", "Players", "Errors", "Shard balance"]
    text = json.dumps(dashboard())
    assert "histogram_quantile(0.5," in text and "histogram_quantile(0.99," in text
