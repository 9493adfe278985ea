"""The alerting rules (deploy/prometheus/alerts.yml) and their PrometheusRule (deploy/k8s), checked offline.

- ``promtool check rules`` accepts the file, and ``promtool test rules`` runs its unit tests
  (deploy/prometheus/alerts_test.yml): every alert fires on synthetic series of its failure and stays
  quiet on the series of a healthy cluster, which hold every metric the alert reads. Those tests can
  fail: rules that never fire, or always fire, fail them for every alert.
- Every metric and label an alert (or a unit test's series) names is one the code exposes, found in the
  code's registries the way tests/deploy/test_dashboard.py finds the dashboard's: a renamed metric fails.
- The thresholds that stand for a bound of the code follow it; every rule has a severity, a summary, a
  description and a runbook_url that is an entry of the README's "Alerts".
- The PrometheusRule of deploy/k8s is what deploy/k8s/build_prometheusrule.py makes of the rule file,
  and validates strictly against the vendored CRD schema.

promtool comes with Debian's ``prometheus`` package (scripts/ensure-test-deps.sh installs it): without it
these tests fail, not skip.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml

from gateway import errors
from gateway.http import MAX_CONNECTIONS
from services.notify.config import NotifyConfig
from tests.deploy.test_dashboard import exposed, grouping_labels, matcher_labels, metric_names
from tests.deploy.test_manifests import K8S, OVERLAYS, find, render, validate_custom

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
RULES = PROMETHEUS / "alerts.yml"
UNIT_TESTS = PROMETHEUS / "alerts_test.yml"
README = ROOT / "README.md"
#: the unit-test group whose series are a healthy cluster's: no alert may fire there
HEALTHY = "a healthy cluster"
SEVERITIES = frozenset({"critical", "warning"})
ANNOTATIONS = frozenset({"summary", "description", "runbook_url"})
#: a Prometheus duration as the rules write it (5m, 1h30m)
DURATION = re.compile(r"(\d+)([smh])")


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not on PATH: it comes with Debian's prometheus package "
                    "(scripts/ensure-test-deps.sh installs it: apt-get install prometheus)")
    return path


def run_promtool(*args: str, cwd: Path = PROMETHEUS) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def rules() -> list[dict[str, Any]]:
    return [rule for group in load(RULES)["groups"] for rule in group["rules"]]


def alerts() -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for rule in rules() if "alert" in rule}


def unit_tests() -> list[dict[str, Any]]:
    tests: list[dict[str, Any]] = load(UNIT_TESTS)["tests"]
    return tests


def series_name_and_labels(series: str) -> tuple[str, dict[str, str]]:
    match = re.fullmatch(r"([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?", series.strip())
    assert match, f"not a series: {series}"
    labels = dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"', match.group(2) or ""))
    return match.group(1), labels


def seconds(duration: str) -> int:
    parts = DURATION.findall(duration)
    assert parts and "".join(n + u for n, u in parts) == duration, f"not a duration: {duration}"
    return sum(int(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in parts)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def readme_alert_entries() -> list[str]:
    """The headings of the README's "Alerts" subsection (one entry per alert)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "### Alerts"]
    assert len(starts) == 1, 'the README has one "### Alerts" subsection'
    entries = []
    for line in lines[starts[0] + 1:]:
        if re.match(r"#{1,3} ", line):
            break
        if line.startswith("#### "):
            entries.append(line[5:].strip())
    return entries


def failures(output: str) -> set[tuple[str, str]]:
    """(unit-test group, alert) of every failure promtool reports."""
    return set(re.findall(r"name: (.+?),\s+alertname: (\w+), time:", output))


def mutated_rules(tmp_path: Path, expr: str) -> Path:
    """A copy of the rule file and its unit tests in ``tmp_path``, every alert's expression ``expr``."""
    data = load(RULES)
    for group in data["groups"]:
        for rule in group["rules"]:
            rule["expr"] = expr
    (tmp_path / RULES.name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    shutil.copy(UNIT_TESTS, tmp_path / UNIT_TESTS.name)
    return tmp_path


# --- promtool ----------------------------------------------------------------------------------------


def test_promtool_check_rules_accepts_the_file() -> None:
    proc = run_promtool("check", "rules", RULES.name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(rules())} rules found" in proc.stdout


def test_promtool_unit_tests_pass() -> None:
    proc = run_promtool("test", "rules", UNIT_TESTS.name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


def test_every_alert_fires_in_a_unit_test_and_stays_quiet_on_a_healthy_cluster() -> None:
    tests = unit_tests()
    assert load(UNIT_TESTS)["rule_files"] == [RULES.name]
    healthy = [t for t in tests if t["name"] == HEALTHY]
    assert len(healthy) == 1
    healthy_metrics = {series_name_and_labels(s["series"])[0] for s in healthy[0]["input_series"]}
    quiet = {c["alertname"] for c in healthy[0]["alert_rule_test"] if c["exp_alerts"] == []}
    fired = {c["alertname"] for t in tests if t["name"] != HEALTHY for c in t["alert_rule_test"] if c["exp_alerts"]}
    for name, rule in alerts().items():
        assert name in fired, f"{name}: no unit test makes it fire"
        assert name in quiet, f"{name}: not evaluated on {HEALTHY!r}"
        missing = metric_names(rule["expr"]) - healthy_metrics
        assert not missing, f"{name}: {HEALTHY!r} has no series of {missing}, so its quiet proves nothing"
    named = {c["alertname"] for t in tests for c in t["alert_rule_test"]}
    assert named <= set(alerts()), f"unit tests of no alert: {named - set(alerts())}"


def test_the_unit_tests_fail_for_rules_that_never_or_always_fire(tmp_path: Path) -> None:
    never = tmp_path / "never"
    never.mkdir()
    proc = run_promtool("test", "rules", UNIT_TESTS.name, cwd=mutated_rules(never, "vector(0) > 0"))
    assert proc.returncode != 0
    missed = {alert for group, alert in failures(proc.stdout + proc.stderr) if group != HEALTHY}
    assert missed == set(alerts()), f"no unit test notices that these never fire: {set(alerts()) - missed}"

    always = tmp_path / "always"
    always.mkdir()
    proc = run_promtool("test", "rules", UNIT_TESTS.name, cwd=mutated_rules(always, "vector(1)"))
    assert proc.returncode != 0
    noisy = {alert for group, alert in failures(proc.stdout + proc.stderr) if group == HEALTHY}
    assert noisy == set(alerts()), f"{HEALTHY!r} does not notice that these always fire: {set(alerts()) - noisy}"


# --- names the code exposes ------------------------------------------------------------------------------


def test_every_metric_and_label_an_alert_uses_is_exposed() -> None:
    names = exposed()
    for name, rule in alerts().items():
        expr = rule["expr"]
        metrics = metric_names(expr)
        assert metrics, f"{name}: no metric in {expr!r}"
        for metric in metrics:
            assert metric in names, f"{name}: {metric} is exposed by no code (gateway/, services/)"
        for metric, labels in matcher_labels(expr).items():
            assert labels <= names[metric], f"{name}: {metric} has no label {labels - names[metric]}"
        known = set().union(*(names[m] for m in metrics))
        grouped = grouping_labels(expr)
        assert grouped <= known, f"{name}: grouping by {grouped - known}, which no metric of it has"
        shown = set(re.findall(r"\$labels\.(\w+)", " ".join(rule["annotations"].values())))
        assert shown <= known, f"{name}: the annotations show {shown - known}, which no metric of it has"


def test_the_unit_tests_series_are_series_the_code_exposes() -> None:
    names = exposed()
    for test in unit_tests():
        for series in test["input_series"]:
            metric, labels = series_name_and_labels(series["series"])
            assert metric in names, f"{test['name']!r}: {metric} is exposed by no code"
            extra = set(labels) - names[metric]
            assert not extra, f"{test['name']!r}: {metric} has no label {extra}"


def test_the_name_check_catches_a_renamed_metric() -> None:
    names = exposed()
    assert "archipelago_journal_write_seconds_bucket" in names
    assert "archipelago_journal_write_second_bucket" not in names
    renamed = alerts()["ArchipelagoJournalWritesSlow"]["expr"].replace("write_seconds", "write_second")
    assert metric_names(renamed) - set(names) == {"archipelago_journal_write_second_bucket"}


# --- what the rules say ---------------------------------------------------------------------------------


def threshold(expr: str) -> float:
    match = re.search(r">\s*([0-9.]+)\s*$", expr.strip())
    assert match, f"no threshold at the end of {expr!r}"
    return float(match.group(1))


def test_thresholds_follow_the_bounds_of_the_code() -> None:
    rules_by_name = alerts()
    # 80 % of the Watch streams a gateway process holds: the HTTP door's connection bound
    assert threshold(rules_by_name["ArchipelagoWatchStreamsNearLimit"]["expr"]) == 0.8 * MAX_CONNECTIONS
    # 10 % of the outbox's bound
    assert threshold(rules_by_name["ArchipelagoNotificationBacklog"]["expr"]) == NotifyConfig().max_queue / 10
    # every status of the error table that is the server's fault (HTTP 5xx) counts as a server error
    expr = rules_by_name["ArchipelagoServerErrors"]["expr"]
    statuses = re.search(r'status=~"([^"]+)"', expr)
    assert statuses, expr
    server = {kind.grpc.name for kind in errors.TABLE.values() if kind.http >= 500}
    assert server and server <= set(statuses.group(1).split("|"))
    assert "OK" not in statuses.group(1) and "INVALID_ARGUMENT" not in statuses.group(1)


def test_every_rule_has_a_severity_a_summary_a_description_and_a_runbook() -> None:
    entries = readme_alert_entries()
    assert all("alert" in rule for rule in rules()), "only alerting rules (a recording rule would need its own checks)"
    names = [str(rule["alert"]) for rule in rules()]
    assert len(names) == len(set(names)), "alert names are unique"
    for rule in rules():
        name = rule["alert"]
        assert re.fullmatch(r"Archipelago[A-Z][A-Za-z]+", name), name
        assert rule["labels"]["severity"] in SEVERITIES, name
        assert set(rule["annotations"]) == ANNOTATIONS, name
        assert 60 <= seconds(rule["for"]) <= 1800, f"{name}: for {rule['for']}"
        assert rule["annotations"]["runbook_url"] == f"README.md#{github_slug(name)}", name
        assert name in entries, f"{name}: no runbook entry '#### {name}' under the README's '### Alerts'"
    assert sorted(entries) == sorted(names), f"runbook entries of no alert: {set(entries) - set(names)}"
    slugs = [github_slug(line.lstrip("#")) for line in README.read_text(encoding="utf-8").splitlines()
             if line.startswith("#")]
    for name in names:
        assert slugs.count(github_slug(name)) == 1, f"{name}: its anchor is not unique in the README"


# --- the PrometheusRule ----------------------------------------------------------------------------------


@functools.cache
def builder() -> ModuleType:
    path = K8S / "build_prometheusrule.py"
    spec = importlib.util.spec_from_file_location("build_prometheusrule", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_prometheusrule_is_what_the_generator_makes_of_the_rule_file() -> None:
    committed = (K8S / "base" / "prometheusrule.yaml").read_text(encoding="utf-8")
    assert committed == builder().render(), (
        "deploy/k8s/base/prometheusrule.yaml is stale: run python deploy/k8s/build_prometheusrule.py")
    assert yaml.safe_load(committed)["spec"] == load(RULES)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_overlay_ships_the_rules_as_a_valid_prometheusrule(overlay: str) -> None:
    rule = find(render(K8S / "overlays" / overlay), "PrometheusRule")
    validate_custom(rule)
    assert rule["spec"] == load(RULES)
    assert rule["metadata"]["namespace"]


def test_a_typo_in_the_prometheusrule_fails() -> None:
    rule = find(render(K8S / "overlays" / "dev"), "PrometheusRule")
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda r: r["spec"]["groups"][0].__setitem__("rule", []),
        lambda r: r["spec"]["groups"][0]["rules"][0].__setitem__("expression", "up == 0"),
        lambda r: r["spec"]["groups"][0]["rules"][0].__setitem__("for", "two minutes"),
    )
    for mutate in mutations:
        doc = copy.deepcopy(rule)
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError):
            validate_custom(doc)


def test_the_generator_refuses_what_is_not_a_rule_file() -> None:
    for text in ("- groups\n", "groups: {}\n", "groups: []\nrules: []\n"):
        with pytest.raises(ValueError, match="one key, groups"):
            builder().render(text)
